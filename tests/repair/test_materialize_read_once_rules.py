"""materialize reads state.db's rows with less work per row, with the same answers.

Rules pinned here:

* the durable tombstone is parsed once per plan, not once per state.db row without a sidecar, and
  each id gets :func:`is_durably_tombstoned`'s own answer (an empty id, an id whose sidecar exists,
  a tombstoned id, one that is not, a missing or invalid tombstone file);
* hermes' message reader (``statedb._hermes_messages``) reads plain tuples, and gives what the
  ``sqlite3.Row`` reading gave on hostile rows (NULL, numeric and BLOB content, NULL timestamps,
  a ``messages`` table without a ``timestamp`` column).
"""

from __future__ import annotations

import sqlite3

import pytest

from inspector.repair import materialize
from inspector.store import statedb, tombstone
from inspector.store.files import FileSnapshot
from inspector.store.tombstone import is_durably_tombstoned
from tests.recovery_helpers import home_dirs, make_ctx, seed_state_db, sidecar, write_json

IDS = ["", "has_sidecar", "gone_1", "gone_2", "kept", "other"]


@pytest.mark.parametrize(
    "tombstone_text",
    [
        None,  # no tombstone file
        '{"version": 1, "ids": ["has_sidecar", "gone_1", " gone_2 ", 7, null, ""]}',
        '{"version": 2, "ids": ["gone_1"]}',  # a version hermes does not read
        '{"version": 1, "ids": "gone_1"}',  # ids not a list
        "not json",
        "[]",
    ],
)
def test_the_tombstone_check_answers_as_is_durably_tombstoned(tmp_path, tombstone_text):
    home, sessions, _db = home_dirs(tmp_path)
    write_json(sessions / "has_sidecar.json", sidecar("has_sidecar", 1))
    if tombstone_text is not None:
        (sessions / "_deleted_webui_sessions.json").write_text(tombstone_text, encoding="utf-8")
    ctx = make_ctx(home)
    check = tombstone.durable_tombstone_check(ctx.session_dir, ctx.snapshot)
    got = [check(sid) for sid in IDS]
    expected = [is_durably_tombstoned(sessions, sid, FileSnapshot()) for sid in IDS]
    assert got == expected
    if tombstone_text is not None and tombstone_text.startswith('{"version": 1, "ids": ['):
        assert got == [False, False, True, True, False, False]  # the check is not vacuous


def test_the_tombstone_is_parsed_once_per_plan(tmp_path, monkeypatch):
    home, sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="row_a")
    for sid in ("row_b", "row_c", "gone_1"):
        seed_state_db(db, sid=sid, create=False)
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["gone_1"]})
    parsed = []
    real = tombstone.parse_tombstone

    def counted(data):
        parsed.append(data)
        return real(data)

    monkeypatch.setattr(tombstone, "parse_tombstone", counted)
    plan = materialize.plan(make_ctx(home))
    assert len(parsed) == 1
    assert sorted(d["session_id"] for d in plan.result["details"]) == ["row_a", "row_b", "row_c"]
    assert "leave 'gone_1' alone: deleted by the user (durable tombstone)" in plan.summary


def _row_reference(conn: sqlite3.Connection, message_cols: set[str], sid: str) -> list[dict]:
    """The reader as it was: ``sqlite3.Row`` per message, read by column name."""
    order = "timestamp, id" if {"timestamp", "id"} <= message_cols else "rowid"
    ts_expr = "timestamp" if "timestamp" in message_cols else "NULL AS timestamp"
    conn.row_factory = sqlite3.Row
    out = []
    sql = f"SELECT role, content, {ts_expr} FROM messages WHERE session_id = ? ORDER BY {order}"
    for msg in conn.execute(sql, (sid,)).fetchall():
        message = {"role": msg["role"], "content": msg["content"] or ""}
        if msg["timestamp"] is not None:
            message["timestamp"] = msg["timestamp"]
        out.append(message)
    return out


HOSTILE = [
    ("user", "plain", 1.5),
    ("assistant", None, 2.0),
    ("assistant", "", None),
    ("tool", 0, 3),
    ("user", 7.25, "text time"),
    (None, b"\x00blob", 4.0),
    ("assistant", b"", 4.0),
    (3, "numeric role", -1),
]


@pytest.mark.parametrize("with_timestamp", [True, False])
def test_hermes_messages_read_as_tuples_equal_the_row_reading(tmp_path, with_timestamp):
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    ts_col = ", timestamp" if with_timestamp else ""
    conn.execute(f"CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role, content{ts_col})")
    for role, content, ts in HOSTILE:
        cols, vals = ["session_id", "role", "content"], ["s1", role, content]
        if with_timestamp:
            cols.append("timestamp")
            vals.append(ts)
        conn.execute(f"INSERT INTO messages ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", vals)
    conn.commit()
    cols = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
    conn.row_factory = sqlite3.Row  # as _hermes_rows leaves the connection
    got = statedb._hermes_messages(conn, cols, "s1")
    expected = _row_reference(conn, cols, "s1")
    assert len(got) == len(HOSTILE)
    assert [(m, [type(v) for v in m.values()]) for m in got] == [
        (m, [type(v) for v in m.values()]) for m in expected
    ]
    assert conn.row_factory is sqlite3.Row  # the connection's own factory is left alone
    conn.close()


def test_the_plan_pauses_the_collector_and_gives_it_back(tmp_path, monkeypatch):
    """Rule: a materialize plan runs with the cyclic GC paused (its ~100,000 objects are acyclic) and
    leaves the collector as it found it, on or off."""
    import gc

    home, _sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="row_a")
    seen = []
    real = materialize._rows_for

    def spying(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(materialize, "_rows_for", spying)
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            plan = materialize.plan(make_ctx(home))
            assert gc.isenabled() is enabled
            assert [d["session_id"] for d in plan.result["details"]] == ["row_a"]
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False, False]
