"""The state.db warnings of a materialize's preview, asked by a forked copy (``materialize._db_warnings``,
``_db_warnings_elsewhere``, ``_with_db_warnings``).

Rules pinned (the docstrings in ``inspector/repair/materialize.py``):

* ``_db_warnings(db, sid, reader)`` is the pair (the dropped-fields note, the hermes-defect warnings)
  of that row, the same with a shared reader or without;
* from 64 rows (``PARALLEL_WARNINGS_MIN``) on, on a system that may fork, a forked copy asks them for
  every row with a safe id, None for the others, in row order; below 64 rows no copy is made;
* the preview made with the copy's answers is the one made asking them here, every other line kept
  in its place;
* a row whose warning facts the rows' read could not find is asked by the path of state.db (one such
  row: no shared connection), to the same words.

The copy is the fallback of a materialize whose rows' warning facts could not be found while the rows
were read (``statedb._messages_with_facts`` failing for every row): the tests of the whole plan make it
fail, so that the copy is used.

The test process has Qt loaded (pytest-qt), where ``portable.can_fork`` says no: the tests say yes
for themselves (no Qt application is running), so the forked path is exercised at all.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.repair import materialize
from inspector.store import statedb
from tests.recovery_helpers import make_ctx

DEFECT = "d0defect"
PLAIN = [f"s{i:02d}" for i in range(62)]
UNSAFE = "../evil"

DROPPED = f"{DEFECT}: the sidecar includes 1 rewound/compacted row(s) (no active filter)"
DEFECTS = [
    f"{DEFECT}: hermes defect, superseded messages come back: row(s) 1 (user, taken back) have "
    "active = 0 in state.db (hermes-webui's own transcript reader leaves them out); hermes' "
    "materializer has no active filter and puts them back in the chat"
]


def _home(tmp_path: Path, sids: list[str]) -> Path:
    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    with sqlite3.connect(home / "state.db") as conn:
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT, started_at REAL)")
        conn.execute(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, "
            "timestamp REAL, active INTEGER, compacted INTEGER)"
        )
        for i, sid in enumerate(sids):
            conn.execute("INSERT INTO sessions VALUES (?, 'webui', ?, ?)", (sid, f"chat {i}", 1.0 + i))
            conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp, active, compacted) "
                "VALUES (?, 'user', 'hello', ?, 1, 0)",
                (sid, 10.0 + i),
            )
            if sid == DEFECT:
                conn.execute(
                    "INSERT INTO messages (session_id, role, content, timestamp, active, compacted) "
                    "VALUES (?, 'user', 'taken back', 11.5, 0, 0)",
                    (sid,),
                )
    return home


@pytest.fixture
def may_fork(monkeypatch):
    monkeypatch.setattr(materialize.portable, "can_fork", lambda: True)


def test_db_warnings_are_the_rows_dropped_note_and_its_defects(tmp_path: Path) -> None:
    db = _home(tmp_path, [DEFECT, "s00"]) / "state.db"
    assert materialize._db_warnings(db, DEFECT, None) == (DROPPED, DEFECTS)
    assert materialize._db_warnings(db, "s00", None) == (None, [])
    with materialize._rows_reader(db, 2) as reader:
        assert reader is not None
        assert materialize._db_warnings(db, DEFECT, reader) == (DROPPED, DEFECTS)


def test_a_forked_copy_asks_every_safe_row_and_answers_none_for_the_others(tmp_path: Path, may_fork) -> None:
    db = _home(tmp_path, [DEFECT, *PLAIN]) / "state.db"
    rows = [{"id": DEFECT}, *({"id": s} for s in PLAIN), {"id": UNSAFE}]
    assert len(rows) == 64
    pending = materialize._db_warnings_elsewhere(db, rows)
    assert pending is not None
    assert pending.result() == [(DROPPED, DEFECTS)] + [(None, [])] * 62 + [None]


def test_below_sixty_four_rows_no_copy_is_made(tmp_path: Path, may_fork) -> None:
    db = _home(tmp_path, [DEFECT]) / "state.db"
    assert materialize._db_warnings_elsewhere(db, [{"id": s} for s in [DEFECT, *PLAIN]]) is None  # 63


def test_a_preview_with_the_copys_answers_is_the_one_asked_here(tmp_path: Path, monkeypatch) -> None:
    home = _home(tmp_path, [DEFECT, *PLAIN, "s62", UNSAFE])  # 65 rows, one skipped with a warning
    monkeypatch.setattr(statedb, "_messages_with_facts", lambda *args: None)  # no facts: the copy asks
    monkeypatch.setattr(materialize.portable, "can_fork", lambda: False)
    alone = materialize.plan(make_ctx(home), None).to_json()
    assert DROPPED in alone["warnings"] and DEFECTS[0] in alone["warnings"]
    assert any(
        w.startswith("skipped state.db row '../evil': not a safe file name") for w in alone["warnings"]
    )
    made = []
    real = materialize.Forked

    def spied(job):
        made.append(job)
        return real(job)

    monkeypatch.setattr(materialize, "Forked", spied)
    monkeypatch.setattr(materialize.portable, "can_fork", lambda: True)
    forked = materialize.plan(make_ctx(home), None).to_json()
    assert len(made) == 1  # the copy was used
    assert forked == alone
    assert all(isinstance(w, str) for w in forked["warnings"])


def test_the_index_lines_come_after_the_rows_warnings_with_or_without_the_copy(
    tmp_path: Path, monkeypatch
) -> None:
    """The copy's answers are taken in before the index is rebuilt; the lines of the files the rebuild
    leaves out still end the preview's warnings, after every row's, as when asked here."""
    home = _home(tmp_path, [DEFECT, *PLAIN, "s62"])  # 64 rows: the copy is made
    monkeypatch.setattr(statedb, "_messages_with_facts", lambda *args: None)  # no facts: the copy asks
    (home / "webui" / "sessions" / "broken.json").write_bytes(b"{")
    plans = []
    for fork in (False, True):
        monkeypatch.setattr(materialize.portable, "can_fork", lambda fork=fork: fork)
        plans.append(materialize.plan(make_ctx(home), None).to_json())
    alone, forked = plans
    assert forked == alone
    warnings = forked["warnings"]
    assert warnings[-1].startswith("broken.json cannot be loaded")
    assert warnings.index(DROPPED) < warnings.index(DEFECTS[0]) < len(warnings) - 1


def test_the_reason_nothing_is_done_reads_the_tombstone_the_plan_read(tmp_path: Path) -> None:
    """Rule: a plan is made from one snapshot of the files (what apply checks by fingerprint); the
    reason a deleted chat is not brought back is read from that snapshot's tombstone, not the disk's."""
    home = _home(tmp_path, ["gone1"])
    tombstone = home / "webui" / "sessions" / "_deleted_webui_sessions.json"
    tombstone.write_bytes(b'{"version": 1, "ids": ["gone1"]}')
    ctx = make_ctx(home)
    assert ctx.snapshot.data(tombstone) == b'{"version": 1, "ids": ["gone1"]}'  # read once for the plan
    tombstone.write_bytes(b'{"version": 1, "ids": []}')  # changed on disk afterwards
    plan = materialize.plan(ctx, "gone1")
    assert not plan.changes
    assert (
        "nothing to do: gone1 was deleted by the user (durable tombstone): hermes never brings it back"
        in plan.summary
    )


def test_a_row_whose_facts_were_not_found_is_asked_over_its_own_connection(tmp_path: Path) -> None:
    """A ``tool_calls`` value that is TEXT but not UTF-8 fails the query that finds a row's warning facts
    (it selects that column; hermes' own query of the messages does not): that row alone is asked here, by
    the path of state.db (one unknown row: no shared reader), and its warnings are the same words."""
    home = _home(tmp_path, [DEFECT, "s00", "s01"])
    with sqlite3.connect(home / "state.db") as conn:
        conn.execute("ALTER TABLE messages ADD COLUMN tool_calls TEXT")
        conn.execute(
            "UPDATE messages SET tool_calls = CAST(X'FF' AS TEXT) WHERE session_id = ? AND active = 1",
            (DEFECT,),
        )
    facts: dict[str, statedb.WarningFacts] = {}
    statedb.read_missing_sidecar_rows(home / "webui" / "sessions", home / "state.db", facts=facts)
    assert sorted(facts) == ["s00", "s01"]  # the defect row's facts could not be had
    warnings = materialize.plan(make_ctx(home), None).to_json()["warnings"]
    assert warnings[-2:] == [
        f"{DEFECT}: the sidecar drops tool_calls (1 row) (hermes' minimal mapper keeps only role, content, "
        "timestamp); includes 1 rewound/compacted row(s) (no active filter)",
        DEFECTS[0],
    ]
