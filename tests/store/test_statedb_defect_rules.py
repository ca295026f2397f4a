"""What hermes' recovery materializer loses or shows wrongly, as ``statedb.dropped_field_counts`` and
``statedb.materialization_defects`` count it, on hand-built databases of a few rows.

Rules found by mutation testing (tests/MUTATION.md, seventh session): the tests that reach these
readers through a whole home are slower than the mutation run's fast-test cap; these call them
directly, every expected count and row written out by hand.
"""

from __future__ import annotations

import json

import pytest

from inspector.store import statedb
from inspector.store.statedb import (
    SessionRowsReader,
    StateDbError,
    dropped_field_counts,
    materialization_defects,
)
from tests.recovery_helpers import custom_state_db

SESSIONS = "CREATE TABLE sessions (id TEXT, source TEXT)"
MESSAGES = (
    "CREATE TABLE messages (id INTEGER, session_id TEXT, role TEXT, content TEXT, timestamp REAL, "
    "tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, reasoning TEXT, reasoning_content TEXT, "
    "reasoning_details TEXT, codex_reasoning_items TEXT, active INTEGER, compacted INTEGER)"
)
CALLS = json.dumps([{"function": {"name": "terminal"}}, {"name": "web"}, {"function": {"name": ""}}, 5])


def _db(tmp_path):
    # Stored out of order: the materializer's order is (timestamp, id).
    messages = [
        {"id": 4, "session_id": "a", "role": "user", "content": "\x00json:[1]", "timestamp": 30.0,
         "reasoning": "", "reasoning_content": "rc", "active": 0, "compacted": 1},
        {"id": 1, "session_id": "a", "role": "assistant", "content": "", "timestamp": 10.0, "tool_calls": CALLS,
         "reasoning": "r", "reasoning_details": "[]", "codex_reasoning_items": "x", "active": 1},
        {"id": 2, "session_id": "a", "role": "tool", "content": "plain \x00json:", "timestamp": 10.0,
         "tool_call_id": "c1", "tool_name": "terminal", "tool_calls": "", "active": None},
        {"id": 3, "session_id": "a", "role": "assistant", "content": None, "timestamp": 20.0,
         "tool_calls": json.dumps(json.dumps({"name": "x"})), "reasoning": "r2", "active": 0, "compacted": 0},
        {"id": 5, "session_id": "b", "role": "assistant", "content": "", "timestamp": 1.0, "tool_calls": CALLS,
         "active": 0},
    ]  # fmt: skip
    return custom_state_db(tmp_path / "state.db", SESSIONS, MESSAGES, [{"id": "a"}, {"id": "b"}], messages)


DROPPED_A = {
    "tool_calls": 2,  # ids 1 and 3 ("" is none)
    "tool_call_id": 1,
    "tool_name": 1,
    "reasoning": 2,  # ids 1 and 3 ("" is none)
    "reasoning_content": 1,
    "reasoning_details": 1,
    "codex_reasoning_items": 1,
    "inactive": 2,  # ids 3 and 4 (NULL is active)
    "json_content": 1,  # id 4 only: the sentinel must start the content
}


@pytest.mark.parametrize("shared", [False, True], ids=["own connection", "a SessionRowsReader"])
def test_dropped_field_counts_counts_each_present_column_inactive_and_json_rows(tmp_path, shared):
    """Rule: per column of DROPPED_BY_MATERIALIZER that exists (in that order), the session's rows
    where it is neither NULL nor ""; then ``inactive`` (active = 0) and ``json_content`` (content
    starting with the ``\\x00json:`` sentinel). A session without rows counts 0 of each."""
    db = _db(tmp_path)
    if shared:
        with SessionRowsReader(db) as reader:
            got = dropped_field_counts(db, "a", reader=reader)
            none = dropped_field_counts(db, "zz", reader=reader)
    else:
        got, none = dropped_field_counts(db, "a"), dropped_field_counts(db, "zz")
    assert got == DROPPED_A
    assert list(got) == list(DROPPED_A)
    assert none == dict.fromkeys(DROPPED_A, 0)


def test_dropped_field_counts_of_the_minimal_schema(tmp_path):
    """Rule: no dropped columns and no ``active`` column: only ``json_content`` is counted; no
    messages table: nothing."""
    db = custom_state_db(
        tmp_path / "state.db",
        SESSIONS,
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": "a"}],
        [{"session_id": "a", "role": "user", "content": "\x00json:{}"}],
    )
    assert dropped_field_counts(db, "a") == {"json_content": 1}
    bare = custom_state_db(tmp_path / "bare.db", SESSIONS, None, [{"id": "a"}])
    assert dropped_field_counts(bare, "a") == {}


DEFECTS_A = [
    {"index": 0, "role": "assistant", "tools": ["terminal", "web", "?", "?"], "defects": ["empty_tool_call"]},
    {
        "index": 2,
        "role": "assistant",
        "tools": [],
        "defects": ["empty_tool_call", "inactive"],
        "compacted": False,
    },
    {"index": 3, "role": "user", "compacted": True, "defects": ["inactive", "json_content"]},
]


@pytest.mark.parametrize("shared", [False, True], ids=["own connection", "a SessionRowsReader"])
def test_materialization_defects_name_each_row_in_the_materializers_order(tmp_path, shared):
    """Rule: rows in (timestamp, id) order, their index counted over every row; an assistant row
    with no content but tool calls is an ``empty_tool_call`` with the calls' names ("?" for a
    call without one; none for calls that are not a list); ``active = 0`` is ``inactive`` with
    ``compacted`` as a bool; content starting with the sentinel is ``json_content``."""
    db = _db(tmp_path)
    if shared:
        with SessionRowsReader(db) as reader:
            got = materialization_defects(db, "a", reader=reader)
    else:
        got = materialization_defects(db, "a")
    assert got == DEFECTS_A
    assert [list(d) for d in got] == [
        ["index", "role", "tools", "defects"],
        ["index", "role", "tools", "compacted", "defects"],
        ["index", "role", "compacted", "defects"],
    ]
    assert materialization_defects(db, "zz") == []


def test_materialization_defects_without_timestamp_use_the_stored_order(tmp_path):
    """Rule: without a ``timestamp`` column the order is SQLite's rowid (the stored order); without
    ``tool_calls``/``active`` columns only ``json_content`` can be found; no messages table: []."""
    db = custom_state_db(
        tmp_path / "state.db",
        SESSIONS,
        "CREATE TABLE messages (id INTEGER, session_id TEXT, role TEXT, content TEXT)",
        [{"id": "a"}],
        [
            {"id": 9, "session_id": "a", "role": "user", "content": "q"},
            {"id": 1, "session_id": "a", "role": "assistant", "content": "\x00json:[]"},
        ],
    )
    assert materialization_defects(db, "a") == [
        {"index": 1, "role": "assistant", "defects": ["json_content"]}
    ]
    bare = custom_state_db(tmp_path / "bare.db", SESSIONS, None, [{"id": "a"}])
    assert materialization_defects(bare, "a") == []


@pytest.mark.parametrize("count", [dropped_field_counts, materialization_defects])
def test_a_reader_is_asked_instead_of_opening_and_a_timeout_reaches_the_connection(
    tmp_path, count, monkeypatch
):
    """Rule: with a SessionRowsReader no connection is opened (one per row was the cost it saves);
    without one, the caller's ``timeout`` is the lock wait of the connection opened."""
    db = _db(tmp_path)
    reader = SessionRowsReader(db)
    seen = []
    real = statedb.open_readonly

    def spy(path, timeout=None):
        seen.append(timeout)
        return real(path, timeout)

    monkeypatch.setattr(statedb, "open_readonly", spy)
    try:
        count(db, "a", reader=reader)
        assert seen == []
        count(db, "a", timeout=0.25)
        assert seen == [0.25]
    finally:
        reader.close()


def test_tool_calls_on_a_row_with_content_or_of_another_role_are_no_defect(tmp_path):
    """Rule: only an *assistant* row with *no content* and tool calls is an ``empty_tool_call``: an
    assistant row that also said something, and a tool or user row with calls, are shown right."""
    db = custom_state_db(
        tmp_path / "state.db",
        SESSIONS,
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT, tool_calls TEXT)",
        [{"id": "a"}],
        [
            {"session_id": "a", "role": "assistant", "content": "running it", "tool_calls": CALLS},
            {"session_id": "a", "role": "tool", "content": "", "tool_calls": CALLS},
            {"session_id": "a", "role": "user", "content": None, "tool_calls": CALLS},
        ],
    )
    assert materialization_defects(db, "a") == []


@pytest.mark.parametrize("count", [dropped_field_counts, materialization_defects])
def test_a_file_that_is_not_a_database_is_named_in_the_error(tmp_path, count):
    """Rule: an SQLite error becomes StateDbError in the reader's words, naming the path."""
    db = tmp_path / "state.db"
    db.write_bytes(b"this is not an sqlite database at all\x00\x01\x02" * 200)
    with pytest.raises(StateDbError) as err:
        count(db, "a")
    assert (
        str(err.value) == f"{db} is not an SQLite database (it looks encrypted or is not a state.db at all)"
    )
