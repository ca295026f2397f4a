"""Read-only state.db access: the inspector's readers and hermes' own recovery readers."""

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
    open_readonly,
    read_missing_sidecar_rows,
    read_schema,
    read_transcript,
    session_record,
    state_db_has_session,
)
from tests.conftest import FIXTURES
from tests.recovery_helpers import agent_state_db, custom_state_db, seed_state_db

EXTENDED_DB = FIXTURES / "recovery" / "extended_schema" / "state.db"


def _never_exists(sid: str) -> bool:
    return False


def _rows(db: Path, tmp_path: Path, **kw) -> list[dict]:
    kw.setdefault("is_tombstoned", _never_exists)
    return read_missing_sidecar_rows(tmp_path, db, **kw)


def _garbage(path: Path) -> Path:
    path.write_bytes(b"this is not an sqlite database at all\x00\x01\x02" * 200)
    return path


def _malformed(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT)")
    conn.executemany(
        "INSERT INTO sessions VALUES (?, 'webui', ?)", [(f"s{i:04d}", "x" * 200) for i in range(300)]
    )
    conn.commit()
    conn.close()
    data = bytearray(path.read_bytes())
    page = 4096 if len(data) > 8192 else 1024
    data[page : page * 3] = b"\xde\xad\xbe\xef" * (page // 2)
    path.write_bytes(bytes(data))
    return path


# ---------------------------------------------------------------- opening


def test_open_readonly_refuses_missing_path_and_never_creates_it(tmp_path):
    db = tmp_path / "state.db"
    with pytest.raises(StateDbError, match="does not exist"):
        open_readonly(db)
    with pytest.raises(StateDbError):
        list_sessions(db)
    assert not db.exists()
    assert list(tmp_path.iterdir()) == []


def test_open_readonly_percent_encodes_question_mark_hash_and_percent(tmp_path):
    folder = tmp_path / "we?ird #dir %20"
    folder.mkdir()
    seed_state_db(folder / "state.db")
    assert [r["id"] for r in list_sessions(folder / "state.db")] == ["state_only_001"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["we?ird #dir %20"]


def test_connection_is_query_only_and_read_only(tmp_path):
    db = tmp_path / "state.db"
    seed_state_db(db)
    before = db.read_bytes()
    with closing(open_readonly(db)) as conn:
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
        with pytest.raises(sqlite3.Error):
            conn.execute("INSERT INTO sessions (id, source) VALUES ('x', 'webui')")
        # read-only below the pragma too: the file is opened with mode=ro
        conn.execute("PRAGMA query_only=OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("INSERT INTO sessions (id, source) VALUES ('x', 'webui')")
    assert db.read_bytes() == before


def test_the_read_only_mode_is_asked_as_a_uri_whatever_sqlite_was_built_with(tmp_path, monkeypatch):
    """Rule: ``mode=ro`` is a URI parameter, read only when the name is opened as a URI. Python's
    sqlite3 asks for that with ``uri=True``; without it, a SQLite built without SQLITE_USE_URI
    (this machine's is built with it, so the read-only test above cannot tell) would open, and
    create, a file named ``file:...?mode=ro`` for writing."""
    db = tmp_path / "state.db"
    seed_state_db(db)
    calls = []
    real = sqlite3.connect

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", spy)
    with closing(open_readonly(db)):
        pass
    [(args, kwargs)] = calls
    assert args == (db.resolve().as_uri() + "?mode=ro",)
    assert kwargs["uri"] is True


def test_open_readonly_refuses_a_directory(tmp_path):
    (tmp_path / "state.db").mkdir()
    with pytest.raises(StateDbError, match="not a file"):
        open_readonly(tmp_path / "state.db")


# ---------------------------------------------------------------- bad databases


@pytest.fixture
def locked_db(tmp_path):
    """A rollback-journal state.db on which another connection holds an EXCLUSIVE write lock."""
    db = tmp_path / "state.db"
    seed_state_db(db)
    writer = sqlite3.connect(db, isolation_level=None, timeout=0)
    assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("INSERT INTO sessions (id, source) VALUES ('in_flight', 'webui')")
    yield db
    writer.execute("ROLLBACK")
    writer.close()


def test_locked_database_gives_a_readable_error(locked_db):
    with pytest.raises(StateDbError, match="locked by another process"):
        list_sessions(locked_db, timeout=0.05)
    with pytest.raises(StateDbError, match="locked"):
        read_transcript(locked_db, "state_only_001", timeout=0.05)


def test_locked_database_keeps_hermes_swallow_and_fail_open_semantics(locked_db, tmp_path):
    assert _rows(locked_db, tmp_path, timeout=0.05) == []
    assert state_db_has_session(locked_db, "nope", timeout=0.05) is True


def test_malformed_database_is_reported_not_repaired(tmp_path):
    db = _malformed(tmp_path / "state.db")
    before = db.read_bytes()
    with pytest.raises(StateDbError, match="damaged|malformed"):
        list_sessions(db)
    assert db.read_bytes() == before


def test_garbage_file_is_not_a_database(tmp_path):
    db = _garbage(tmp_path / "state.db")
    with pytest.raises(StateDbError, match="not an SQLite database"):
        list_sessions(db)
    with pytest.raises(StateDbError, match="not an SQLite database"):
        read_schema(db)
    assert statedb.probe(db) is not None


def test_garbage_file_keeps_hermes_reader_semantics(tmp_path):
    db = _garbage(tmp_path / "state.db")
    assert _rows(db, tmp_path, include_empty=True) == []
    assert state_db_has_session(db, "x") is True


def test_empty_file_and_foreign_database_have_no_sessions_table(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(StateDbError, match="no sessions table"):
        list_sessions(empty)
    other = tmp_path / "other.db"
    custom_state_db(other, "CREATE TABLE notes (id TEXT)", None, [])
    with pytest.raises(StateDbError, match="no sessions table"):
        list_sessions(other)
    assert state_db_has_session(other, "x") is True


def test_sessions_without_id_column_is_unsupported(tmp_path):
    db = custom_state_db(tmp_path / "s.db", "CREATE TABLE sessions (sid TEXT, source TEXT)", None, [])
    with pytest.raises(StateDbError, match="no id column"):
        list_sessions(db)


def test_missing_messages_columns_make_transcripts_unreadable(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, body TEXT)",
        [{"id": "a", "source": "webui"}],
    )
    with pytest.raises(StateDbError, match="older or foreign schema"):
        read_transcript(db, "a")


# ---------------------------------------------------------------- schema and catalogue


def test_read_schema_reports_tables_columns_and_versions(tmp_path):
    db = tmp_path / "state.db"
    agent_state_db(db)
    schema = read_schema(db)
    assert {"sessions", "messages", "schema_version"} <= schema.tables
    assert schema.schema_version == 31
    assert schema.user_version == 0
    assert "active" in schema.message_columns and "profile_name" in schema.session_columns
    assert schema.has_sessions and schema.has_transcripts


def test_old_schema_reads_missing_columns_as_none(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": "a", "source": "cli"}],
        [{"session_id": "a", "role": "user", "content": "hi"}],
    )
    (rec,) = list_sessions(db)
    assert rec["id"] == "a" and rec["source"] == "cli"
    assert rec["title"] is None and rec["started_at"] is None and rec["profile_name"] is None
    assert rec["messages"] == 1 and rec["last_message_at"] is None and rec["last_activity"] is None
    assert read_schema(db).schema_version is None


def test_list_sessions_counts_active_rows_in_one_grouped_query(tmp_path):
    db = tmp_path / "state.db"
    ids = agent_state_db(db)
    records = {r["id"]: r for r in list_sessions(db)}
    web = records[ids["webui"]]
    assert web["source"] == "webui" and web["title"] == "Plan a weekend trip"
    assert web["message_count"] == 5  # the column counts every insert
    assert web["messages"] == 4  # the rewound row is not active
    assert web["profile_name"] == "default"
    assert web["last_message_at"] == web["started_at"] + 140
    assert records[ids["telegram"]]["messages"] == 3  # two compacted rows left out
    assert records[ids["webui_empty"]]["messages"] == 0
    started = [r["started_at"] for r in list_sessions(db)]
    assert started == sorted(started, reverse=True)


def test_list_sessions_without_messages_table(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        None,
        [{"id": "a", "source": "webui", "started_at": 5.0}],
    )
    (rec,) = list_sessions(db)
    assert rec["messages"] is None and rec["last_activity"] == 5.0


def test_session_record_returns_one_record_or_none(tmp_path):
    db = tmp_path / "state.db"
    ids = agent_state_db(db)
    rec = session_record(db, ids["webui"])
    assert rec["id"] == ids["webui"] and rec["messages"] == 4
    assert session_record(db, "nope") is None


def test_wal_database_with_uncheckpointed_writes_is_read(tmp_path):
    db = tmp_path / "state.db"
    ids = agent_state_db(db, journal="wal")
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'late', 1.0)",
            (ids["webui"],),
        )
        assert (tmp_path / "state.db-wal").stat().st_size > 0
        assert session_record(db, ids["webui"])["messages"] == 5
    finally:
        writer.close()


# ---------------------------------------------------------------- transcripts and decoding


def test_read_transcript_decodes_sentinel_and_flags_rows(tmp_path):
    db = tmp_path / "state.db"
    ids = agent_state_db(db)
    rows = read_transcript(db, ids["webui"])
    assert [m["role"] for m in rows] == ["user", "assistant", "user", "user", "assistant"]
    assert rows[0]["content"][0] == {"type": "text", "text": "What can I do near this place?"}
    assert [m["active"] for m in rows] == [True, True, False, True, True]
    assert all(m["compacted"] is False for m in rows)
    assert [m["content"] for m in read_transcript(db, ids["webui"], active_only=True)][1:] == [
        "Hiking on Saturday, the old town on Sunday.",
        "Add a restaurant suggestion.",
        "Try the harbour fish place.",
    ]


def test_read_transcript_keeps_tool_calls_tool_names_and_reasoning(tmp_path):
    db = tmp_path / "state.db"
    ids = agent_state_db(db)
    rows = read_transcript(db, ids["cli_root"])
    call = rows[1]
    assert call["tool_calls"][0]["function"]["name"] == "terminal"
    assert call["reasoning"] == "Run the build to see the failing step."
    assert rows[2]["tool_call_id"] == "call_01" and rows[2]["tool_name"] == "terminal"
    assert rows[3]["reasoning_details"] == [{"type": "reasoning.text", "text": "pin mismatch"}]
    summary = read_transcript(db, ids["compression_child"])[0]
    assert summary["compressed_summary"] is True and summary["display_kind"] == "hidden"
    compacted = read_transcript(db, ids["telegram"])[:2]
    assert [(m["active"], m["compacted"]) for m in compacted] == [(False, True), (False, True)]


def test_decode_content_sentinel_variants():
    parts = [{"type": "text", "text": "hi"}]
    assert decode_content("\x00json:" + json.dumps(parts)) == parts
    assert decode_content("\x00json:" + json.dumps(json.dumps(parts))) == parts  # double-encoded
    assert decode_content("\x00json:{not json") == "\x00json:{not json"
    assert decode_content("\x00json:" + json.dumps("plain words")) == "plain words"
    assert decode_content("plain") == "plain"
    assert decode_content(None) is None


def test_decode_json_column_tolerates_double_encoding_and_garbage():
    calls = [{"id": "c1"}]
    assert decode_json_column(json.dumps(calls)) == calls
    assert decode_json_column(json.dumps(json.dumps(calls))) == calls
    assert decode_json_column("[broken") == "[broken"
    assert decode_json_column(None) is None


# ---------------------------------------------------------------- hermes' recovery reader


def test_recovery_reader_substitutes_null_and_integer_zero(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)",
        [{"id": "a", "source": "webui"}],
        [{"session_id": "a", "role": "user", "content": "hi", "timestamp": 3.0}],
    )
    (row,) = _rows(db, tmp_path)
    assert row["started_at"] == 0 and row["message_count"] == 0
    assert isinstance(row["message_count"], int)
    for key in (
        "title",
        "model",
        "parent_session_id",
        "workspace",
        "worktree_path",
        "worktree_branch",
        "worktree_repo_root",
        "worktree_created_at",
    ):
        assert row[key] is None
    assert row["messages"] == [{"role": "user", "content": "hi", "timestamp": 3.0}]
    assert row["_state_db_empty_messages"] is False and "_state_db_deleted_webui_tombstone" not in row


def test_recovery_reader_source_match_is_exact_and_case_sensitive(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        None,
        [
            {"id": i, "source": s, "started_at": 1.0}
            for i, s in (("a", "WebUI"), ("b", " webui"), ("c", "webui "), ("d", "webui"), ("e", "cli"))
        ],
    )
    assert [r["id"] for r in _rows(db, tmp_path, include_empty=True)] == ["d"]


def test_recovery_reader_orders_by_started_at_desc_with_null_as_zero(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        None,
        [
            {"id": "old", "source": "webui", "started_at": 1.0},
            {"id": "null", "source": "webui", "started_at": None},
            {"id": "new", "source": "webui", "started_at": 9.0},
        ],
    )
    assert [r["id"] for r in _rows(db, tmp_path, include_empty=True)] == ["new", "old", "null"]


def test_recovery_reader_strips_ids_and_skips_rows_with_a_sidecar(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [
            {"id": "  spaced  ", "source": "webui"},
            {"id": "present", "source": "webui"},
            {"id": "   ", "source": "webui"},
        ],
        [
            {"session_id": "spaced", "role": "user", "content": "x"},
            {"session_id": "present", "role": "user", "content": "y"},
        ],
    )
    (tmp_path / "present.json").write_text("{}", encoding="utf-8")
    rows = read_missing_sidecar_rows(tmp_path, db, include_empty=True)
    assert [r["id"] for r in rows] == ["  spaced  "]  # raw id kept, messages looked up by the stripped id
    assert rows[0]["messages"] == [{"role": "user", "content": "x"}]


def test_recovery_reader_messages_keep_inactive_rows_raw_content_and_null_timestamps_first(tmp_path):
    (row,) = _rows(EXTENDED_DB, tmp_path)
    assert row["id"] == "20260510_101500_wtree1"
    assert row["messages"][0] == {
        "role": "assistant",
        "content": "All 12 tests pass.",
    }  # NULL timestamp first
    assert row["messages"][2] == {"role": "assistant", "content": "", "timestamp": 1778408102.0}
    assert row["messages"][-1]["content"].startswith("[CONTEXT COMPACTION]")  # active = 0, still included
    assert row["worktree_branch"] == "hermes/wtree1"


def test_recovery_reader_never_decodes_json_content(tmp_path):
    db = tmp_path / "state.db"
    ids = agent_state_db(db)
    row = next(r for r in _rows(db, tmp_path) if r["id"] == ids["webui"])
    assert row["messages"][0]["content"].startswith("\x00json:[")
    assert len(row["messages"]) == 5


def test_recovery_reader_uses_rowid_order_without_timestamp_or_id(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": "a", "source": "webui"}],
        [
            {"session_id": "a", "role": "user", "content": "first"},
            {"session_id": "a", "role": None, "content": None},
        ],
    )
    (row,) = _rows(db, tmp_path)
    assert row["messages"] == [{"role": "user", "content": "first"}, {"role": None, "content": ""}]


def test_recovery_reader_include_empty_and_tombstones(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [
            {"id": "full", "source": "webui", "started_at": 3.0},
            {"id": "empty", "source": "webui", "started_at": 2.0},
            {"id": "gone", "source": "webui", "started_at": 1.0},
        ],
        [
            {"session_id": "full", "role": "user", "content": "x"},
            {"session_id": "gone", "role": "user", "content": "y"},
        ],
    )
    gone = {"gone"}.__contains__
    assert [r["id"] for r in _rows(db, tmp_path, is_tombstoned=gone)] == ["full"]
    rows = _rows(db, tmp_path, include_empty=True, is_tombstoned=gone)
    assert [
        (r["id"], r["_state_db_empty_messages"], r.get("_state_db_deleted_webui_tombstone")) for r in rows
    ] == [("full", False, None), ("empty", True, None), ("gone", False, True)]


def test_recovery_reader_returns_nothing_without_id_or_source_or_db(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db", "CREATE TABLE sessions (id TEXT, title TEXT)", None, [{"id": "a", "title": "t"}]
    )
    assert _rows(db, tmp_path, include_empty=True) == []
    assert read_missing_sidecar_rows(tmp_path, None) == []
    assert read_missing_sidecar_rows(tmp_path, tmp_path / "missing.db") == []
    assert not (tmp_path / "missing.db").exists()


def test_recovery_reader_without_messages_table_gives_empty_rows(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        None,
        [{"id": "a", "source": "webui"}],
    )
    assert _rows(db, tmp_path) == []
    (row,) = _rows(db, tmp_path, include_empty=True)
    assert row["messages"] == [] and row["_state_db_empty_messages"] is True


# ---------------------------------------------------------------- "state.db still has this session"


def test_state_db_has_session_fails_open(tmp_path):
    assert state_db_has_session(None, "x") is True
    assert state_db_has_session(tmp_path / "missing.db", "x") is True
    no_table = custom_state_db(tmp_path / "n.db", "CREATE TABLE other (id TEXT)", None, [])
    assert state_db_has_session(no_table, "x") is True


def test_state_db_has_session_ignores_source(tmp_path):
    db = tmp_path / "state.db"
    seed_state_db(db, sid="cli_one", source="cli")
    assert state_db_has_session(db, "cli_one") is True
    assert state_db_has_session(db, "absent") is False


def _one_query_records(db: Path) -> list[dict]:
    """list_sessions as one LEFT JOIN query (what it computed before the join moved to Python)."""
    with closing(open_readonly(db)) as conn:
        schema = statedb._read_schema(conn)
        return [statedb._record(r) for r in conn.execute(statedb._catalogue_sql(schema, one_id=False))]


def test_list_sessions_equals_the_single_join_query(tmp_path):
    db = tmp_path / "state.db"
    agent_state_db(db)
    by_id = {r["id"]: r for r in _one_query_records(db)}
    got = list_sessions(db)
    assert len(got) == len(by_id) and {r["id"]: r for r in got} == by_id
    assert EXTENDED_DB.exists()
    assert {r["id"]: r for r in list_sessions(EXTENDED_DB)} == {
        r["id"]: r for r in _one_query_records(EXTENDED_DB)
    }


def test_list_sessions_join_keeps_sql_equality(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id, source TEXT, started_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role TEXT, content TEXT, timestamp REAL)",
        [
            {"id": "a", "source": "webui", "started_at": 1.0},
            {"id": None, "source": "webui", "started_at": 2.0},
            {"id": 7, "source": "cli", "started_at": 3.0},
        ],
        [
            {"session_id": "a", "role": "user", "content": "x", "timestamp": 4.0},
            {"session_id": None, "role": "user", "content": "y", "timestamp": 9.0},
            {"session_id": 7.0, "role": "user", "content": "z", "timestamp": 5.0},
            {"session_id": "7", "role": "user", "content": "w", "timestamp": 6.0},
        ],
    )
    assert list_sessions(db) == _one_query_records(db)


def test_hermes_ids_join_their_counts_in_a_dict_other_declared_types_join_in_sql(tmp_path, monkeypatch):
    """Rule (list_sessions' fast path): with hermes' schema (both ids declared TEXT, no collation)
    the messages are counted in one GROUP BY and joined to the sessions in a dict, not by the
    one-query SQL join (which makes SQLite build an index over the counts: twice the time); ids
    declared otherwise, or a messages table without session_id, join in SQL. The records are the
    same either way (the two tests above)."""
    joined_in_sql = []
    real = statedb._catalogue_sql
    monkeypatch.setattr(
        statedb, "_catalogue_sql", lambda schema, **kw: joined_in_sql.append(kw) or real(schema, **kw)
    )
    hermes = tmp_path / "hermes.db"
    seed_state_db(hermes, messages=3)
    [record] = list_sessions(hermes)
    assert (record["id"], record["messages"]) == ("state_only_001", 3)
    spelled = custom_state_db(
        tmp_path / "spelled.db",
        "CREATE TABLE sessions (id text, source TEXT)",
        "CREATE TABLE messages (session_id  Text , role TEXT)",
        [{"id": "b", "source": "cli"}],
        [{"session_id": "b", "role": "user"}] * 2,
    )
    # TEXT in any case and spacing is the same type (SQLite 3.37 and later already report it as TEXT)
    [record] = list_sessions(spelled)
    assert (record["id"], record["messages"]) == ("b", 2)
    assert joined_in_sql == []

    integer = custom_state_db(
        tmp_path / "integer.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id INTEGER, role TEXT)",
        [{"id": "7", "source": "cli"}],
        [{"session_id": "7", "role": "user"}],  # stored as the integer 7
    )
    [record] = list_sessions(integer)
    assert (record["id"], record["messages"]) == ("7", 1)  # SQL's = compares '7' as a number
    no_session_id = custom_state_db(
        tmp_path / "no_session_id.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (role TEXT)",
        [{"id": "a", "source": "cli"}],
        [{"role": "user"}],
    )
    [record] = list_sessions(no_session_id)
    assert (record["id"], record["messages"]) == ("a", None)
    assert joined_in_sql == [{"one_id": False}, {"one_id": False}]


def test_session_presence_answers_as_state_db_has_session(tmp_path):
    db = tmp_path / "state.db"
    ids = agent_state_db(db)
    no_table = custom_state_db(tmp_path / "other.db", "CREATE TABLE other (id TEXT)", None, [])
    cases = [db, no_table, _garbage(tmp_path / "garbage.db"), tmp_path / "missing.db", None]
    for path in cases:
        with statedb.SessionPresence(path) as has:
            for sid in [*ids.values(), "nope", ""]:
                assert has(sid) == state_db_has_session(path, sid), (path, sid)


def test_recovery_reader_skips_rows_without_an_id_and_goes_on_past_a_tombstoned_one(tmp_path):
    """Rule: a webui row whose id is NULL or empty is skipped (never read as some other id), and a
    row whose session was deleted in the WebUI (a tombstone) is skipped without ending the read:
    the rows after it are still there, in the reader's order (newest ``started_at`` first)."""
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [
            {"id": None, "source": "webui", "started_at": 5.0},
            {"id": "", "source": "webui", "started_at": 4.0},
            {"id": "gone", "source": "webui", "started_at": 3.0},
            {"id": "kept", "source": "webui", "started_at": 2.0},
        ],
        [
            {"session_id": "gone", "role": "user", "content": "a"},
            {"session_id": "kept", "role": "user", "content": "b"},
            {"session_id": "XXXX", "role": "user", "content": "c"},
        ],
    )
    rows = read_missing_sidecar_rows(tmp_path, db, is_tombstoned=lambda sid: sid == "gone")
    assert [r["id"] for r in rows] == ["kept"]
    assert rows[0]["messages"] == [{"role": "user", "content": "b"}]


@pytest.mark.parametrize(
    ("ddl", "expected"),
    [
        ("CREATE TABLE schema_version (v INTEGER); INSERT INTO schema_version VALUES (31)", None),
        ("CREATE TABLE schema_version (version INTEGER); INSERT INTO schema_version VALUES (7), (31)", 31),
        ("CREATE TABLE schema_version (version TEXT); INSERT INTO schema_version VALUES ('31')", None),
        ("CREATE VIEW schema_version AS SELECT 31 AS version", None),
    ],
    ids=["no version column", "the highest version", "a version that is not an integer", "a view"],
)
def test_the_schema_version_is_the_highest_integer_of_a_real_table(tmp_path, ddl, expected):
    db = tmp_path / "state.db"
    agent_state_db(db)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("DROP TABLE schema_version")
        conn.executescript(ddl)
    assert read_schema(db).schema_version == expected


def test_the_lock_wait_is_the_callers_or_the_default(tmp_path):
    db = tmp_path / "state.db"
    seed_state_db(db)
    for timeout, ms in ((1.5, 1500), (0, 0), (-3, 0)):
        with closing(open_readonly(db, timeout=timeout)) as conn:
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == ms, timeout
    with closing(open_readonly(db)) as conn:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == int(statedb.DEFAULT_TIMEOUT * 1000)


def test_an_open_that_sqlite_refuses_is_said_in_words(tmp_path, monkeypatch):
    """Rule: an existing file SQLite cannot open (as a user, a file it may not read; root always
    may, so SQLite's refusal is played here) is a StateDbError naming the file, never sqlite3's."""
    db = tmp_path / "state.db"
    seed_state_db(db)

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    with pytest.raises(StateDbError) as err:
        open_readonly(db)
    assert str(err.value) == f"{db} cannot be opened (missing, a folder, or permission denied)"
    assert isinstance(err.value.__cause__, sqlite3.OperationalError)


def test_a_database_sqlite_opens_but_cannot_set_up_is_said_in_words(tmp_path, monkeypatch):
    db = tmp_path / "state.db"
    seed_state_db(db)

    def refuse(self):
        raise sqlite3.DatabaseError("file is not a database")

    monkeypatch.setattr(statedb.GuardedConnection, "guard", refuse)
    with pytest.raises(StateDbError) as err:
        open_readonly(db)
    assert (
        str(err.value) == f"{db} is not an SQLite database (it looks encrypted or is not a state.db at all)"
    )
