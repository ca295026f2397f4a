"""The query deadline of the read-only state.db connection (``GuardedConnection._past_deadline``).

Rules found by mutation testing (tests/MUTATION.md, third session). SQLite calls the progress
handler every few virtual-machine steps; a non-zero answer interrupts the statement
(sqlite3_progress_handler), zero lets it go on.
"""

from __future__ import annotations

import sqlite3

import pytest

import inspector.store.statedb as statedb
from inspector.store.statedb import GuardedConnection


@pytest.fixture
def conn():
    connection = sqlite3.connect(":memory:", factory=GuardedConnection)
    yield connection
    connection.close()


def test_before_and_at_the_deadline_a_query_goes_on(conn, monkeypatch):
    """Rule: the handler answers 0 (go on) until the clock is strictly past the deadline."""
    monkeypatch.setattr(statedb.time, "monotonic", lambda: 100.0)
    conn.deadline = 130.0
    assert conn._past_deadline() == 0
    conn.deadline = 100.0  # exactly at the deadline: not past it yet
    assert conn._past_deadline() == 0


def test_past_the_deadline_the_query_is_interrupted(conn, monkeypatch):
    """Rule: past the deadline the handler answers non-zero and SQLite interrupts the statement."""
    monkeypatch.setattr(statedb.time, "monotonic", lambda: 100.0)
    conn.deadline = 99.5
    assert conn._past_deadline() != 0
    monkeypatch.undo()
    conn.guard()
    conn.deadline = 0.0  # long past
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        conn.execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000000) SELECT count(*) FROM c"
        ).fetchall()


def test_a_query_within_its_deadline_completes(conn):
    """Rule: a guarded query with time left runs to its end."""
    conn.guard()
    rows = conn.execute(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) SELECT count(*) FROM c"
    ).fetchall()
    assert rows == [(5000,)]
