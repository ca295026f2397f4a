"""``statedb.probe`` and ``statedb.read_schema`` on hand-made databases: the words name the very file, and the
caller's lock timeout reaches the connection.

Rules pinned: ``probe(None)`` says there is no path; a database without a sessions table is named in the
words; a foreign schema (a view where hermes makes a table) is refused naming the file by its name and its
path; the ``timeout`` given to ``probe`` or ``read_schema`` is the one the read-only connection is opened with.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.store import statedb


def test_probe_of_no_path_and_of_a_database_without_sessions(tmp_path: Path) -> None:
    assert statedb.probe(None) == "no state.db path"
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (x)")
    assert statedb.probe(db) == f"{db} has no sessions table: not a Hermes agent state.db (or an empty one)"


def test_a_view_where_hermes_makes_a_table_is_refused_naming_the_file(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
        conn.execute("CREATE VIEW messages AS SELECT 1 AS id")
    words = (
        "agent.db: messages is a view (a query), not a table as hermes makes it; nothing is read from this "
        f"database ({db}: a hostile or foreign schema can make any query endless)"
    )
    with pytest.raises(statedb.StateDbError) as info:
        statedb.read_schema(db)
    assert str(info.value) == words
    assert statedb.probe(db) == words


def test_the_timeout_given_is_the_connections(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "state.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    real = statedb.open_readonly
    asked: list = []

    def spy(path, timeout=None):
        asked.append(timeout)
        return real(path, timeout)

    monkeypatch.setattr(statedb, "open_readonly", spy)
    assert statedb.probe(db, 0.25) is None
    statedb.read_schema(db, 0.5)
    assert asked == [0.25, 0.5]
