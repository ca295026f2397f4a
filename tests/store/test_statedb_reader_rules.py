"""The inspector's state.db readers on small hand-built databases: ``read_transcript``,
``list_sessions``, ``session_record`` and the JSON column decoding, each field written out by hand.

Rules found by mutation testing (tests/MUTATION.md, seventh session): the tests that read the
realistic agent store (``agent_state_db``) take over 0.3 s and are left out of the mutation run,
so these rules are pinned here on databases of a few rows (a few ms each).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from inspector.store import statedb
from inspector.store.statedb import (
    StateDbError,
    decode_content,
    decode_json_column,
    list_sessions,
    read_schema,
    read_transcript,
    session_record,
)
from tests.recovery_helpers import custom_state_db

SESSIONS_FULL = (
    "CREATE TABLE sessions (id TEXT, source TEXT, title TEXT, model TEXT, started_at REAL, "
    "parent_session_id TEXT, message_count INTEGER, profile_name TEXT, last_activity_at REAL)"
)
# ``id`` is a plain column here (not the rowid), so "id order" and "stored order" differ.
MESSAGES_FULL = (
    "CREATE TABLE messages (id INTEGER, session_id TEXT, role TEXT, content TEXT, timestamp REAL, "
    "tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, reasoning TEXT, reasoning_content TEXT, "
    "reasoning_details TEXT, finish_reason TEXT, display_kind TEXT, active INTEGER, compacted INTEGER, "
    "_compressed_summary INTEGER)"
)
FLAGS = ("active", "compacted", "compressed_summary")


def _full_db(tmp_path):
    sessions = [
        {"id": "a", "source": "webui", "title": "T", "model": "m", "started_at": 100.0, "message_count": 7,
         "profile_name": "p", "last_activity_at": 105.0},
        {"id": "b", "source": "cli"},
        {"id": "c", "source": "webui", "started_at": 50.0, "last_activity_at": 200.0},
        {"id": "d", "source": "webui", "started_at": 70.0, "last_activity_at": 60.0},
        {"id": "e", "source": "webui", "started_at": 30},
        {"id": "f", "source": "webui", "started_at": 40.0, "last_activity_at": "soon"},
    ]  # fmt: skip
    messages = [
        {"id": 2, "session_id": "a", "role": "assistant", "content": "ok", "timestamp": 11.5,
         "tool_calls": json.dumps(json.dumps([{"id": "c1"}])), "reasoning": "think", "reasoning_content": "[1, 2]",
         "finish_reason": "stop", "active": 1, "compacted": 0, "_compressed_summary": 0},
        {"id": 1, "session_id": "a", "role": "user", "content": '\x00json:[{"type": "text", "text": "hi"}]',
         "timestamp": 10.0},
        {"id": 3, "session_id": "a", "role": "tool", "content": "out", "timestamp": 300.0, "tool_call_id": "c1",
         "tool_name": "terminal", "reasoning_details": '{"type": "x"}', "display_kind": "hidden", "active": 0,
         "compacted": 1, "_compressed_summary": 1},
        {"id": 4, "session_id": "b", "role": "user", "content": "b's", "timestamp": 20.0, "active": 1},
        {"id": 5, "session_id": "d", "role": "user", "content": "d's", "timestamp": 80.0, "active": 2},
    ]  # fmt: skip
    return custom_state_db(tmp_path / "state.db", SESSIONS_FULL, MESSAGES_FULL, sessions, messages)


TRANSCRIPT_A = [
    {"id": 1, "role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 10.0,
     "active": True, "compacted": False, "compressed_summary": False},
    {"id": 2, "role": "assistant", "content": "ok", "timestamp": 11.5, "tool_calls": [{"id": "c1"}],
     "reasoning": "think", "reasoning_content": "[1, 2]", "finish_reason": "stop",
     "active": True, "compacted": False, "compressed_summary": False},
    {"id": 3, "role": "tool", "content": "out", "timestamp": 300.0, "tool_call_id": "c1", "tool_name": "terminal",
     "reasoning_details": {"type": "x"}, "display_kind": "hidden",
     "active": False, "compacted": True, "compressed_summary": True},
]  # fmt: skip


def test_transcript_rows_in_id_order_with_every_present_column_and_the_flags(tmp_path):
    """Rule: one session's rows by ``id`` (not stored order), each with id/role/content (the
    ``\\x00json:`` sentinel decoded), the optional columns that are not NULL (``tool_calls`` and
    ``reasoning_details`` decoded, double encoding unwrapped; any other text column kept as text
    even when it looks like JSON), and three bools: ``active`` (NULL
    counts as active, 0 does not), ``compacted``, ``compressed_summary`` (NULL reads False)."""
    rows = read_transcript(_full_db(tmp_path), "a")
    assert rows == TRANSCRIPT_A
    assert [list(m) for m in rows] == [list(m) for m in TRANSCRIPT_A]
    assert all(m[flag].__class__ is bool for m in rows for flag in FLAGS)


def test_transcript_active_only_drops_rows_whose_active_is_zero(tmp_path):
    """Rule: ``active_only`` keeps NULL and non-zero ``active`` and drops 0, still in id order."""
    db = _full_db(tmp_path)
    assert read_transcript(db, "a", active_only=True) == TRANSCRIPT_A[:2]
    assert read_transcript(db, "d", active_only=True) == [
        {"id": 5, "role": "user", "content": "d's", "timestamp": 80.0,
         "active": True, "compacted": False, "compressed_summary": False},
    ]  # fmt: skip
    assert read_transcript(db, "c") == []


def test_transcript_of_the_minimal_schema_uses_the_rowid_and_reads_every_row_active(tmp_path):
    """Rule: without ``id``/``active``/``compacted``/``_compressed_summary`` columns the row id is
    SQLite's rowid, every row is active (``active_only`` keeps all) and not compacted."""
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": "a", "source": "webui"}],
        [
            {"session_id": "b", "role": "user", "content": "other"},
            {"session_id": "a", "role": "user", "content": "q"},
            {"session_id": "a", "role": "assistant", "content": "r"},
        ],
    )
    expected = [
        {"id": 2, "role": "user", "content": "q", "active": True, "compacted": False, "compressed_summary": False},
        {"id": 3, "role": "assistant", "content": "r", "active": True, "compacted": False,
         "compressed_summary": False},
    ]  # fmt: skip
    assert read_transcript(db, "a") == expected
    assert read_transcript(db, "a", active_only=True) == expected


def test_transcript_without_a_messages_table_is_an_older_or_foreign_schema(tmp_path):
    """Rule: no ``messages`` table is refused with the path and the words "older or foreign schema"."""
    db = custom_state_db(tmp_path / "state.db", "CREATE TABLE sessions (id TEXT)", None, [{"id": "a"}])
    with pytest.raises(StateDbError) as err:
        read_transcript(db, "a")
    assert str(err.value) == (
        f"{db}: no usable messages table (needs session_id, role and content): an older or foreign schema"
    )


def _record(sid, **kw):
    """A catalogue record in the documented key order, None for each field not given."""
    keys = ("id", "source", "title", "model", "started_at", "parent_session_id", "message_count", "profile_name",
            "last_activity_at", "messages", "last_message_at", "last_activity")  # fmt: skip
    rec = dict.fromkeys(keys)
    rec.update(id=sid, messages=0)
    rec.update(kw)
    return rec


CATALOGUE = [
    _record("a", source="webui", title="T", model="m", started_at=100.0, message_count=7, profile_name="p",
            last_activity_at=105.0, messages=2, last_message_at=11.5, last_activity=105.0),
    _record("d", source="webui", started_at=70.0, last_activity_at=60.0, messages=1, last_message_at=80.0,
            last_activity=80.0),
    _record("c", source="webui", started_at=50.0, last_activity_at=200.0, last_activity=200.0),
    _record("f", source="webui", started_at=40.0, last_activity_at="soon", last_activity=40.0),
    _record("e", source="webui", started_at=30.0, last_activity=30.0),
    _record("b", source="cli", messages=1, last_message_at=20.0, last_activity=20.0),
]  # fmt: skip


def test_catalogue_counts_active_messages_and_takes_the_newest_activity(tmp_path):
    """Rule: newest ``started_at`` first (NULL as 0); ``messages`` counts active rows (0 without
    any), ``last_message_at`` is the newest active row's timestamp, ``last_activity`` the newer
    of ``last_activity_at`` and it, else ``started_at``, always a float (a text value is no time)."""
    records = list_sessions(_full_db(tmp_path))
    assert records == CATALOGUE
    assert [list(r) for r in records] == [list(r) for r in CATALOGUE]
    assert all(r["last_activity"].__class__ is float for r in records)


def test_session_record_is_the_catalogue_record_of_one_session(tmp_path):
    """Rule: ``session_record`` gives the same record ``list_sessions`` gives for that id (its
    counts limited to that session), or None for an id state.db does not have."""
    db = _full_db(tmp_path)
    for expected in CATALOGUE:
        assert session_record(db, expected["id"]) == expected
    assert session_record(db, "zz") is None


def test_catalogue_without_active_or_timestamp_counts_every_row(tmp_path):
    """Rule: with no ``active`` column every message counts; with no ``timestamp`` column there is
    no ``last_message_at``; a message or session whose id is NULL is counted for no session."""
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": "a", "source": "webui", "started_at": 1.0}, {"source": "webui", "started_at": 2.0}],
        [
            {"session_id": "a", "role": "user", "content": "q"},
            {"session_id": "a", "role": "assistant", "content": "r"},
            {"session_id": None, "role": "user", "content": "lost"},
        ],
    )
    expected = [
        _record(None, source="webui", started_at=2.0, last_activity=2.0),
        _record("a", source="webui", started_at=1.0, messages=2, last_activity=1.0),
    ]
    assert list_sessions(db) == expected
    assert session_record(db, "a") == expected[1]


def test_a_double_encoded_json_object_column_is_unwrapped(tmp_path):
    """Rule: a JSON column holding the JSON text of an object (``"{...}"``) is decoded twice, as a
    list's is; a JSON string that is not an object or list stays a string."""
    assert decode_json_column(json.dumps(json.dumps({"type": "x"}))) == {"type": "x"}
    assert decode_json_column(json.dumps(" {broken")) == " {broken"
    assert decode_json_column(json.dumps("words")) == "words"


READERS = (
    lambda db, **kw: read_transcript(db, "a", **kw),
    lambda db, **kw: session_record(db, "a", **kw),
    lambda db, **kw: list_sessions(db, **kw),
)


@pytest.mark.parametrize("reader", READERS, ids=["read_transcript", "session_record", "list_sessions"])
def test_a_file_that_is_not_a_database_is_named_in_the_error(tmp_path, reader):
    """Rule: an SQLite error while reading becomes StateDbError in the reader's words, naming the path."""
    db = tmp_path / "state.db"
    db.write_bytes(b"this is not an sqlite database at all\x00\x01\x02" * 200)
    with pytest.raises(StateDbError) as err:
        reader(db)
    assert (
        str(err.value) == f"{db} is not an SQLite database (it looks encrypted or is not a state.db at all)"
    )


@pytest.mark.parametrize("reader", READERS, ids=["read_transcript", "session_record", "list_sessions"])
def test_a_messages_view_is_refused_naming_the_file(tmp_path, reader):
    """Rule: a ``messages`` that is a VIEW is refused before any query, the file named twice."""
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE VIEW messages AS SELECT id AS session_id, 'user' AS role, source AS content FROM sessions",
        [{"id": "a", "source": "webui"}],
    )
    with pytest.raises(StateDbError) as err:
        reader(db)
    assert str(err.value) == (
        "state.db: messages is a view (a query), not a table as hermes makes it; nothing is read from "
        f"this database ({db}: a hostile or foreign schema can make any query endless)"
    )


@pytest.mark.parametrize("reader", READERS, ids=["read_transcript", "session_record", "list_sessions"])
def test_the_callers_timeout_is_the_connections(tmp_path, reader, monkeypatch):
    """Rule: the ``timeout`` a caller gives is the lock wait of the connection the reader opens."""
    db = _full_db(tmp_path)
    seen = []
    real = statedb.open_readonly

    def spy(path, timeout=None):
        seen.append(timeout)
        return real(path, timeout)

    monkeypatch.setattr(statedb, "open_readonly", spy)
    reader(db, timeout=0.25)
    assert seen == [0.25]


def test_catalogue_of_a_messages_table_without_session_id_counts_nothing(tmp_path):
    """Rule: a ``messages`` table without ``session_id`` cannot be counted: ``messages`` and
    ``last_message_at`` are None, in the catalogue (still newest ``started_at`` first, NULL as 0)
    and in one session's record alike."""
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL, last_activity_at REAL)",
        "CREATE TABLE messages (body TEXT, timestamp REAL)",
        [
            {"id": "a", "source": "webui", "started_at": 1.0, "last_activity_at": 3.0},
            {"id": "b", "source": "webui"},
            {"id": "c", "source": "webui", "started_at": 5.0},
        ],
        [{"body": "x", "timestamp": 9.0}],
    )
    expected = [
        _record("c", source="webui", started_at=5.0, messages=None, last_activity=5.0),
        _record("a", source="webui", started_at=1.0, last_activity_at=3.0, messages=None, last_activity=3.0),
        _record("b", source="webui", messages=None),
    ]
    assert list_sessions(db) == expected
    assert [session_record(db, sid) for sid in "cab"] == expected


def test_catalogue_without_messages_or_started_at_keeps_the_stored_order(tmp_path):
    """Rule: with neither a ``messages`` table nor a ``started_at`` column the sessions come in the
    order they were stored, none counted."""
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        None,
        [{"id": "z", "source": "webui"}, {"id": "a", "source": "cli"}],
    )
    assert list_sessions(db) == [
        _record("z", source="webui", messages=None),
        _record("a", source="cli", messages=None),
    ]


def test_catalogue_without_started_at_keeps_the_stored_order_and_counts(tmp_path):
    """Rule: sessions without a ``started_at`` column come in stored order, their messages counted."""
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT, active INTEGER)",
        [{"id": "z", "source": "webui"}, {"id": "a", "source": "cli"}],
        [
            {"session_id": "a", "role": "user", "content": "q", "active": 1},
            {"session_id": "a", "role": "user", "content": "taken back", "active": 0},
        ],
    )
    assert list_sessions(db) == [_record("z", source="webui"), _record("a", source="cli", messages=1)]


def test_content_without_the_sentinel_is_returned_as_it_is():
    """Rule: ``decode_content`` decodes only text that starts with ``\\x00json:``; other text (even
    JSON after seven characters) and values that are not text come back unchanged."""
    assert decode_content(None) is None
    assert decode_content(7) == 7
    assert decode_content("abcdefg[1, 2]") == "abcdefg[1, 2]"
    assert decode_content("\x00json:[1, 2]") == [1, 2]


@pytest.mark.parametrize("reader", READERS[1:], ids=["session_record", "list_sessions"])
def test_a_database_without_sessions_is_named_in_the_error(tmp_path, reader):
    """Rule: the catalogue readers refuse a database without a ``sessions`` table, naming it."""
    db = custom_state_db(tmp_path / "state.db", "CREATE TABLE other (x TEXT)", None, [])
    with pytest.raises(StateDbError) as err:
        reader(db)
    assert str(err.value) == f"{db} has no sessions table: not a Hermes agent state.db (or an empty one)"


@pytest.mark.parametrize(
    ("sessions_id", "session_id"),
    [
        ("TEXT", "INTEGER"),
        ("INTEGER", "TEXT"),
        ("", "INTEGER"),
        ("TEXT", "REAL"),
        ("TEXT COLLATE NOCASE", "TEXT"),
    ],
)
def test_messages_are_counted_as_sqls_join_compares_the_ids(tmp_path, sessions_id, session_id):
    """Rule (a bug the mutants of ``_message_counts_sql`` showed): a session's messages are those
    whose ``session_id`` SQL finds equal to its ``id`` under the columns' declared types: a TEXT
    ``'7'`` and an INTEGER ``7`` are equal, as are ``'a'`` and ``'A'`` when ``session_id`` is ``COLLATE NOCASE``.
    (Only hermes' own TEXT/TEXT schema is counted by the faster dict join, which equals SQL's there.)"""
    db = custom_state_db(
        tmp_path / "state.db",
        f"CREATE TABLE sessions (id {sessions_id}, source TEXT)",
        f"CREATE TABLE messages (session_id {session_id}, role TEXT, content TEXT)",
        [{"id": "7", "source": "webui"}, {"id": "A", "source": "webui"}],
        [
            {"session_id": 7, "role": "user", "content": "x"},
            {"session_id": "7", "role": "user", "content": "y"},
            {"session_id": "a", "role": "user", "content": "z"},
        ],
    )
    by_id = {r["id"]: r["messages"] for r in list_sessions(db)}
    assert by_id == {7 if sessions_id == "INTEGER" else "7": 2, "A": 1 if "NOCASE" in session_id else 0}
    assert {sid: session_record(db, sid)["messages"] for sid in by_id} == by_id


def test_both_core_tables_refused_are_named_in_one_message(tmp_path: Path) -> None:
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE base (id TEXT, source TEXT)",
        "CREATE VIEW messages AS SELECT id AS session_id, 'user' AS role, source AS content FROM base",
        [],
    )
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("CREATE VIEW sessions AS SELECT id, source FROM base")
        conn.commit()
    with pytest.raises(StateDbError) as err:
        read_schema(db)
    assert str(err.value) == (
        "state.db: messages is a view (a query), not a table; sessions is a view (a query), not a table "
        "as hermes makes it; nothing is read from this database "
        f"({db}: a hostile or foreign schema can make any query endless)"
    )


@pytest.mark.parametrize(
    "stored",
    [
        "CREATE VIRTUAL TABLE sessions USING fts5(id, title)",
        "create  virtual table sessions using fts5(id, title)",
        "create virtual/**/table sessions using fts5(id, title)",
    ],
    ids=["as SQLite stores it", "two spaces, lower case", "a comment for the space"],
)
def test_a_virtual_sessions_table_is_refused_however_its_statement_is_written(tmp_path: Path, stored) -> None:
    """Rule: a ``sessions`` that is a virtual table is refused before any query, also when the file
    holds its statement in another case or spacing (written by other means than SQLite's)."""
    db = tmp_path / "state.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("CREATE VIRTUAL TABLE sessions USING fts5(id, title)")
        conn.execute("CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)")
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'sessions'", (stored,))
        conn.commit()
    with pytest.raises(StateDbError) as err:
        read_schema(db)
    assert str(err.value) == (
        "state.db: sessions is a virtual table, not a table as hermes makes it; nothing is read from "
        f"this database ({db}: a hostile or foreign schema can make any query endless)"
    )


def test_a_table_with_computed_columns_is_refused_with_their_names(tmp_path: Path) -> None:
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, body TEXT, "
        "content TEXT AS (upper(body)) VIRTUAL, size INTEGER AS (length(body)) VIRTUAL)",
        [{"id": "a", "source": "webui"}],
    )
    with pytest.raises(StateDbError) as err:
        read_schema(db)
    assert str(err.value) == (
        "state.db: messages is a table with computed columns (content, size) as hermes makes it; nothing is "
        f"read from this database ({db}: a hostile or foreign schema can make any query endless)"
    )
