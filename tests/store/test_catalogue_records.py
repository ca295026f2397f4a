"""The catalogue's state.db records (``list_catalogue_records``): what the list and the fact cache keep
of each ``sessions`` row, read with the columns they come from only. Rule pinned: on every database,
they are ``list_sessions``' records cut down to ``CATALOGUE_RECORD_KEYS``, in the same order (ties of
``started_at`` included, whatever the size of the rows SQLite sorts), and the same errors."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from inspector.store import statedb
from inspector.store.statedb import CATALOGUE_RECORD_KEYS, StateDbError, list_catalogue_records, list_sessions
from tests.conftest import FIXTURES
from tests.recovery_helpers import agent_state_db, custom_state_db, seed_state_db

EXTENDED_DB = FIXTURES / "recovery" / "extended_schema" / "state.db"


def _cut(db: Path) -> list[dict]:
    return [{k: rec[k] for k in CATALOGUE_RECORD_KEYS} for rec in list_sessions(db)]


def _same(db: Path) -> list[dict]:
    got = list_catalogue_records(db)
    assert got == _cut(db)
    assert [list(r) for r in got] == [list(CATALOGUE_RECORD_KEYS)] * len(got)  # the keys, in this order
    return got


def test_hermes_stores_give_the_cut_down_records(tmp_path):
    agent_state_db(tmp_path / "agent.db")
    assert len(_same(tmp_path / "agent.db")) > 1
    assert _same(EXTENDED_DB)
    seed_state_db(tmp_path / "seed.db", messages=3)
    [record] = _same(tmp_path / "seed.db")
    assert (record["id"], record["source"], record["messages"]) == ("state_only_001", "webui", 3)


SCHEMAS = {
    "hermes_like": (
        "CREATE TABLE sessions (id TEXT, source TEXT, title TEXT, model TEXT, started_at REAL,"
        " parent_session_id TEXT, message_count INTEGER, profile_name TEXT, last_activity_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT,"
        " timestamp REAL, active INTEGER)",
    ),
    "few_columns": (
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT)",
    ),
    "no_messages_table": ("CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL, title TEXT)", None),
    "messages_without_session_id": (
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, role TEXT)",
    ),
    "ids_untyped": (  # the counts join in SQL (list_sessions' slow path)
        "CREATE TABLE sessions (id, source TEXT, started_at REAL, title TEXT, last_activity_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role TEXT, timestamp REAL)",
    ),
    "collated": (
        "CREATE TABLE sessions (id TEXT COLLATE NOCASE, source TEXT, started_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, timestamp REAL)",
    ),
    "collated_messages": (  # SQL's = takes the left side's collation: 'A' = 'a' here
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT COLLATE NOCASE, role TEXT, timestamp REAL)",
    ),
    "integer_session_ids": (  # SQL's = compares '7' and 7 as numbers here, Python's == does not
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id INTEGER, role TEXT, timestamp REAL)",
    ),
}


def _value(rng: random.Random, kind: str):
    return rng.choice(
        {
            "id": ["a", "b", "A", "7", 7, 7.0, None, "", " a", "é"],
            "time": [None, 1.0, 2.0, 2, "3", b"4", 5.5, -1.0],
            "text": [None, "t", "", "title é", 3, b"\xff"],
        }[kind]
    )


@pytest.mark.parametrize("schema", sorted(SCHEMAS))
def test_every_schema_and_odd_value_gives_the_cut_down_records(tmp_path, schema):
    sessions_ddl, messages_ddl = SCHEMAS[schema]
    rng = random.Random(schema)
    for n in range(40):
        columns = [c.split()[0] for c in sessions_ddl[sessions_ddl.index("(") + 1 : -1].split(",")]
        sessions = []
        for _ in range(rng.randint(0, 8)):
            row = {}
            for column in columns:
                kind = "id" if column == "id" else "time" if column.endswith("_at") else "text"
                row[column] = _value(rng, kind)
            sessions.append(row)
        messages = []
        if messages_ddl is not None:
            names = [c.split()[0] for c in messages_ddl[messages_ddl.index("(") + 1 : -1].split(",")][1:]
            for _ in range(rng.randint(0, 12)):
                messages.append(
                    {
                        c: _value(rng, "id")
                        if c == "session_id"
                        else rng.choice([None, 0, 1, 2])
                        if c == "active"
                        else _value(rng, "time")
                        if c == "timestamp"
                        else "user"
                        for c in names
                    }
                )
        db = custom_state_db(tmp_path / f"{n}.db", sessions_ddl, messages_ddl, sessions, messages)
        _same(db)


def test_a_title_that_is_not_utf8_reads_leniently_as_in_list_sessions(tmp_path):
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, title TEXT, model TEXT, started_at REAL)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT)",
        [{"id": "a", "source": "webui", "title": "ok", "model": "m", "started_at": 1.0}],
    )
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO sessions VALUES ('b', 'webui', CAST(x'ff41' AS TEXT), 'm', 2.0)")
        conn.execute("INSERT INTO sessions VALUES ('c', 'webui', 'fine', CAST(x'fe' AS TEXT), 3.0)")
    got = _same(db)
    assert [r["id"] for r in got] == ["c", "b", "a"]


def test_ties_keep_the_order_of_the_full_query_whatever_the_rows_weigh(tmp_path):
    """30,000 sessions with four start times between them, and columns the cut-down query does not
    ask for that weigh a hundred times more: SQLite's sorter spills to its temporary runs at other
    rows in the two queries, and the ties still come out in the same order."""
    db = tmp_path / "big.db"
    rng = random.Random(30)
    ids = [f"s{i:05d}" for i in range(30_000)]
    rng.shuffle(ids)  # written out of the ids' order: ties in the order of the rows, not of the ids
    with sqlite3.connect(db) as conn:
        conn.executescript(SCHEMAS["hermes_like"][0] + ";" + SCHEMAS["hermes_like"][1])
        conn.executemany(
            "INSERT INTO sessions VALUES (?, 'webui', ?, ?, ?, ?, 0, ?, ?)",
            [
                (
                    sid,
                    f"title {rng.randrange(10**6)}",
                    "m" * rng.randint(100, 400),
                    rng.choice([1.0, 2.0, None, 3.0]),
                    "p" * rng.randint(100, 400),
                    "default",
                    rng.choice([None, None, 5.0]),
                )
                for sid in ids
            ],
        )
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, timestamp, active) VALUES (?, 'user', 'x', ?, 1)",
            [(f"s{rng.randrange(30_000):05d}", rng.choice([1.0, 9.0])) for _ in range(20_000)],
        )
    got = _same(db)
    starts = [r["id"] for r in got[:50]]
    assert starts != sorted(starts)  # the table was not written in the order of its ties


def test_the_same_errors_as_list_sessions(tmp_path):
    not_a_db = tmp_path / "not.db"
    not_a_db.write_bytes(b"this is no database" * 100)
    no_sessions = custom_state_db(tmp_path / "other.db", "CREATE TABLE other (id TEXT)", None, [])
    a_view = custom_state_db(tmp_path / "view.db", "CREATE TABLE base (id TEXT, source TEXT)", None, [])
    with sqlite3.connect(a_view) as conn:
        conn.execute("CREATE VIEW sessions AS SELECT * FROM base")
    for db in (not_a_db, no_sessions, a_view):
        with pytest.raises(StateDbError) as want:
            list_sessions(db)
        with pytest.raises(StateDbError) as got:
            list_catalogue_records(db)
        assert str(got.value) == str(want.value)
        if db is not not_a_db:
            assert str(db) in str(got.value)  # the message names the database


def test_the_lock_timeout_asked_for_is_the_one_used(tmp_path, monkeypatch):
    seed_state_db(tmp_path / "seed.db")
    asked = []
    real = statedb.open_readonly
    monkeypatch.setattr(
        statedb, "open_readonly", lambda path, timeout=None: asked.append(timeout) or real(path, timeout)
    )
    list_catalogue_records(tmp_path / "seed.db", timeout=0.25)
    list_catalogue_records(tmp_path / "seed.db")
    assert asked == [0.25, None]


def test_ids_that_sql_and_python_compare_differently_join_as_sql_joins_them(tmp_path):
    integer = custom_state_db(
        tmp_path / "integer.db",
        SCHEMAS["integer_session_ids"][0],
        SCHEMAS["integer_session_ids"][1],
        [{"id": "7", "source": "cli", "started_at": 1.0}],
        [{"session_id": "7", "role": "user", "timestamp": 2.0}],  # stored as the integer 7
    )
    collated = custom_state_db(
        tmp_path / "collated.db",
        SCHEMAS["collated_messages"][0],
        SCHEMAS["collated_messages"][1],
        [{"id": "a", "source": "cli", "started_at": 1.0}],
        [{"session_id": "A", "role": "user", "timestamp": 2.0}],
    )
    for db in (integer, collated):
        [record] = _same(db)
        assert (record["messages"], record["last_activity"]) == (1, 2.0)


def test_hermes_schema_reads_five_columns_and_counts_in_one_grouped_query(tmp_path, monkeypatch):
    asked = []
    real = statedb._fetchall
    monkeypatch.setattr(statedb, "_fetchall", lambda conn, sql, *a: asked.append(sql) or real(conn, sql, *a))
    seed_state_db(tmp_path / "seed.db", messages=2)
    list_catalogue_records(tmp_path / "seed.db")
    counts, sessions = asked
    assert "GROUP BY session_id" in counts
    assert sessions.startswith(
        "SELECT s.id AS id, s.source AS source, s.title AS title, s.started_at AS started_at, "
        "NULL AS last_activity_at FROM sessions s ORDER BY"  # (hermes' test store has no such column)
    )
