"""The state.db warnings' facts found while hermes' recovery reader reads the messages
(``read_missing_sidecar_rows(facts=...)``, ``statedb._messages_with_facts``).

Rules:

* the rows are exactly the ones the reader gives without ``facts`` (hermes' own query's);
* each session's facts are what ``dropped_field_counts`` and ``materialization_defects`` answer for
  it, on any schema (columns missing, no ``timestamp``/``id`` order, odd values: '' and NULL, 0 and
  '0', BLOBs, ``\\x00json:`` content, ties);
* a session whose messages the combined query cannot read (a TEXT value that is not UTF-8 in a
  column hermes does not read) gets no facts and its rows are still hermes'; a read that fails as
  a whole leaves no facts.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.store import statedb
from inspector.store.statedb import (
    dropped_field_counts,
    materialization_defects,
    read_missing_sidecar_rows,
)

FULL = (
    "id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content, timestamp REAL, tool_calls TEXT, "
    "tool_call_id TEXT, tool_name TEXT, reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, "
    "codex_reasoning_items TEXT, codex_message_items TEXT, active INTEGER, compacted INTEGER"
)
BARE = "session_id TEXT, role TEXT, content"
NO_AFFINITY = "id, session_id, role, content, timestamp, tool_calls, active, compacted, reasoning"

CALL = '[{"function": {"name": "search_files"}}]'
FULL_ROWS = [
    # (session, role, content, timestamp, tool_calls, tool_call_id, reasoning, active, compacted)
    ("a", "user", "hi", 1.0, None, None, None, 1, 0),
    ("a", "assistant", "", 2.0, CALL, "", "", 1, 0),
    ("a", "assistant", None, 2.0, '"' + CALL.replace('"', '\\"') + '"', None, "why", 0, 1),
    ("a", "tool", "out", 3.0, "", "call-1", None, 0, 0),
    ("a", "user", "\x00json:[1, 2]", 4.0, "not json", None, "", None, None),
    ("a", "assistant", 0, 5.0, "[]", None, None, 1, None),
    ("b", "user", b"\x00json:blob", 1.0, None, None, None, 1, 0),
    ("b", "assistant", "", None, CALL, None, None, 1, 0),
    ("c", "user", "plain", 1.0, None, None, None, 1, 0),
]


def _db(tmp_path: Path, columns: str, rows: list[tuple], insert_columns: str) -> Path:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT, source TEXT, title TEXT, started_at REAL)")
    at = [c.strip() for c in insert_columns.split(",")].index("session_id")
    for i, sid in enumerate(sorted({r[at] for r in rows} | {"empty"})):
        conn.execute("INSERT INTO sessions VALUES (?, 'webui', ?, ?)", (sid, f"t{sid}", float(i)))
    conn.execute(f"CREATE TABLE messages ({columns})")
    marks = ", ".join("?" * len(rows[0]))
    conn.executemany(f"INSERT INTO messages ({insert_columns}) VALUES ({marks})", rows)
    conn.commit()
    conn.close()
    return path


def _check(tmp_path: Path, db: Path, expect_facts: set[str]) -> dict:
    sessions = tmp_path / "sessions"
    sessions.mkdir(exist_ok=True)
    plain = read_missing_sidecar_rows(sessions, db, include_empty=True)
    facts: dict = {}
    rows = read_missing_sidecar_rows(sessions, db, include_empty=True, facts=facts)
    assert rows == plain and plain
    assert set(facts) == expect_facts
    for sid, found in facts.items():
        assert found.counts == dropped_field_counts(db, sid)
        assert found.defects == materialization_defects(db, sid)
    return facts


def test_facts_are_the_two_warning_queries_answers_on_the_agent_schema(tmp_path: Path) -> None:
    cols = "session_id, role, content, timestamp, tool_calls, tool_call_id, reasoning, active, compacted"
    db = _db(tmp_path, FULL, FULL_ROWS, cols)
    facts = _check(tmp_path, db, {"a", "b", "c", "empty"})
    assert facts["a"].counts["tool_calls"] == 4 and facts["a"].counts["inactive"] == 2
    assert {d["index"] for d in facts["a"].defects} == {1, 2, 3, 4}
    assert facts["empty"].counts == dropped_field_counts(db, "empty") and facts["empty"].defects == []


@pytest.mark.parametrize(
    ("columns", "insert_columns", "rows"),
    [
        (
            BARE,
            "session_id, role, content",
            [("a", "user", "x"), ("a", "assistant", "\x00json:{}"), ("b", "u", "")],
        ),
        (
            NO_AFFINITY,
            "id, session_id, role, content, timestamp, tool_calls, active, compacted, reasoning",
            [
                (1, "a", "assistant", "", 1, CALL, "0", 1, 0),
                (2, "a", "assistant", "", 1, CALL, 0.0, None, ""),
                (3, "a", "user", b"", 1, b"x", b"\x00", 0, b"r"),
                (1, "b", "user", "\x00jso", 2, None, 0, 1, "0"),
            ],
        ),
    ],
    ids=["bare", "no-affinity"],
)
def test_facts_on_odd_schemas_and_values(tmp_path: Path, columns: str, insert_columns: str, rows) -> None:
    db = _db(tmp_path, columns, rows, insert_columns)
    _check(tmp_path, db, {"a", "b", "empty"})


def test_a_session_the_combined_query_cannot_read_gets_no_facts(tmp_path: Path) -> None:
    cols = "session_id, role, content, timestamp, tool_calls, tool_call_id, reasoning, active, compacted"
    db = _db(tmp_path, FULL, FULL_ROWS, cols)
    conn = sqlite3.connect(db)  # a tool_calls text that is not UTF-8: hermes does not read that column
    conn.execute("UPDATE messages SET tool_calls = CAST(X'FF2A' AS TEXT) WHERE session_id = 'b'")
    conn.commit()
    conn.close()
    _check(tmp_path, db, {"a", "c", "empty"})
    assert materialization_defects(db, "b")  # asked the old way, leniently


def test_a_read_that_fails_leaves_no_facts(tmp_path: Path, monkeypatch) -> None:
    cols = "session_id, role, content, timestamp, tool_calls, tool_call_id, reasoning, active, compacted"
    db = _db(tmp_path, FULL, FULL_ROWS, cols)
    real = statedb._hermes_messages
    calls = []

    def failing_late(conn, message_cols, sid, facts=None):
        calls.append(sid)
        if len(calls) == 3:
            raise sqlite3.OperationalError("disk I/O error")
        return real(conn, message_cols, sid, facts)

    monkeypatch.setattr(statedb, "_hermes_messages", failing_late)
    facts: dict = {}
    assert read_missing_sidecar_rows(tmp_path, db, include_empty=True, facts=facts) == []
    assert facts == {} and len(calls) == 3
