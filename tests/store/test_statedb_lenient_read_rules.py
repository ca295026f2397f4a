"""``statedb._fetchall``: a TEXT value that is not UTF-8 does not fail the query (it is read
again leniently, bad bytes as lone surrogates), and the connection then reads as before: plain
``str`` values, and the next bad value is read leniently again. Expected values by hand."""

from __future__ import annotations

import sqlite3

from inspector.store.statedb import _fetchall


def _conn() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER, x TEXT)")
    conn.execute("INSERT INTO t VALUES (1, 'héllo')")
    conn.execute("INSERT INTO t VALUES (2, CAST(X'ff41' AS TEXT))")
    return conn


def test_a_value_that_is_not_utf8_is_read_leniently() -> None:
    conn = _conn()
    assert _fetchall(conn, "SELECT x FROM t ORDER BY id") == [("héllo",), ("\udcffA",)]


def test_after_a_lenient_read_the_connection_reads_as_before() -> None:
    conn = _conn()
    _fetchall(conn, "SELECT x FROM t ORDER BY id")
    assert conn.text_factory is str
    assert _fetchall(conn, "SELECT x FROM t WHERE id = ?", (1,)) == [("héllo",)]
    assert _fetchall(conn, "SELECT x FROM t WHERE id = ?", (2,)) == [("\udcffA",)]
    assert conn.text_factory is str
