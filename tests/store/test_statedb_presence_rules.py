"""hermes' fail-open ``_state_db_has_session`` and its many-ids form ``SessionPresence``; the reader
of many per-session queries; small helpers of ``statedb`` (tests/MUTATION.md, fourth session). The
answers are hermes' (session-recovery §3.3): True unless a readable plain ``sessions`` table lacks the
id; the time hermes waits for a lock is ``sqlite3.connect``'s documented default, 5 s."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from inspector.store import statedb
from inspector.store.statedb import (
    SessionPresence,
    SessionRowsReader,
    StateDbError,
    _like_pattern,
    _tool_name,
    state_db_has_session,
)


def _db(path: Path, *statements: str) -> Path:
    with closing(sqlite3.connect(path)) as conn:
        for sql in statements:
            conn.execute(sql)
        conn.commit()
    return path


PLAIN = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT)",
    "INSERT INTO sessions VALUES ('here', 't')",
)
# a table whose column is computed on each read: hermes' query may be slow, so it is its error path
COMPUTED = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, shout TEXT GENERATED ALWAYS AS (upper(title)))",
    "INSERT INTO sessions (id, title) VALUES ('here', 't')",
)


@pytest.fixture
def timeouts(monkeypatch):
    """The lock timeout each ``open_readonly`` of statedb is given."""
    seen: list = []
    real = statedb.open_readonly

    def spy(path, timeout=None):
        seen.append(timeout)
        return real(path, timeout)

    monkeypatch.setattr(statedb, "open_readonly", spy)
    return seen


def test_a_plain_table_answers_whether_the_id_is_there(tmp_path):
    """Rule: False only when a readable plain ``sessions`` table has no row with the id."""
    db = _db(tmp_path / "state.db", *PLAIN)
    assert state_db_has_session(db, "here") is True
    assert state_db_has_session(db, "gone") is False
    with SessionPresence(db) as present:
        assert present("here") is True
        assert present("gone") is False


def test_a_sessions_table_with_computed_columns_answers_true(tmp_path):
    """Rule: a ``sessions`` table with computed columns is treated as unreadable (fail open): every id
    is present, also one the table lacks."""
    db = _db(tmp_path / "state.db", *COMPUTED)
    assert state_db_has_session(db, "gone") is True
    with SessionPresence(db) as present:
        assert present("gone") is True
        assert present("here") is True


def test_no_file_or_no_table_answers_true(tmp_path):
    """Rule: no path, a missing file, no ``sessions`` table: True."""
    db = _db(tmp_path / "state.db", "CREATE TABLE other (x)")
    for path in (None, tmp_path / "missing.db", db):
        assert state_db_has_session(path, "gone") is True
        with SessionPresence(path) as present:
            assert present("gone") is True


def test_hermes_waits_five_seconds_for_a_lock_unless_told(tmp_path, timeouts):
    """Rule: hermes opens with ``sqlite3.connect``'s default timeout, 5 s; a given timeout is used as
    it is."""
    db = _db(tmp_path / "state.db", *PLAIN)
    state_db_has_session(db, "here")
    state_db_has_session(db, "here", timeout=0.25)
    SessionPresence(db).close()
    SessionPresence(db, timeout=0.5).close()
    assert timeouts == [5.0, 0.25, 5.0, 0.5]


def test_a_locked_database_answers_true_while_locked(tmp_path):
    """Rule: a lock (or any error) answers True, at the start or for one query; once the lock is gone
    a presence opened meanwhile still reads, and one opened while locked stays fail-open."""
    db = _db(tmp_path / "state.db", *PLAIN)
    present = SessionPresence(db, timeout=0)
    with closing(sqlite3.connect(db, isolation_level=None)) as writer:
        writer.execute("BEGIN EXCLUSIVE")
        assert present("gone") is True  # the query is refused: fail open
        assert state_db_has_session(db, "gone", timeout=0) is True
        blocked = SessionPresence(db, timeout=0)
        writer.execute("ROLLBACK")
    assert present("gone") is False
    assert blocked("gone") is True  # it could not read the table when it was opened
    present.close()
    blocked.close()


def test_closing_twice_is_harmless_and_a_closed_presence_answers_true(tmp_path):
    """Rule: ``close`` may be called again (the context manager's exit after an explicit close); a
    closed presence answers True."""
    db = _db(tmp_path / "state.db", *PLAIN)
    with SessionPresence(db) as present:
        present.close()
        assert present("gone") is True
    present.close()


def test_the_rows_reader_keeps_its_path_and_timeout(tmp_path, timeouts):
    """Rule: the reader names the database it reads and opens it with the timeout it is given."""
    db = _db(tmp_path / "state.db", *PLAIN)
    with SessionRowsReader(db, timeout=0.75) as reader:
        assert reader.path == db
        with reader.reading() as (_conn, schema):
            assert schema.has_sessions
    assert timeouts == [0.75]


def test_the_rows_reader_refuses_a_database_it_cannot_read_in_words_naming_it(tmp_path):
    """Rule: an SQLite error while reading the schema becomes the sentence for the user, naming the
    path; a ``sessions`` view is refused, naming the file."""
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all, only text that is long enough" * 20)
    with pytest.raises(StateDbError) as caught:
        SessionRowsReader(junk)
    assert (
        str(caught.value)
        == f"{junk} is not an SQLite database (it looks encrypted or is not a state.db at all)"
    )
    view = _db(tmp_path / "view.db", "CREATE TABLE t (id TEXT)", "CREATE VIEW sessions AS SELECT id FROM t")
    with pytest.raises(StateDbError) as caught:
        SessionRowsReader(view)
    assert str(caught.value) == (
        "view.db: sessions is a view (a query), not a table as hermes makes it; nothing is read from this "
        f"database ({view}: a hostile or foreign schema can make any query endless)"
    )


@pytest.mark.parametrize(
    ("call", "name"),
    [
        ({"function": {"name": "terminal"}, "name": "not this"}, "terminal"),
        ({"function": "terminal", "name": "read_file"}, "read_file"),
        ({"name": "read_file"}, "read_file"),
        ({"function": {"name": ""}}, "?"),
        ({"name": 5}, "?"),
        ({"function": {}}, "?"),
        ("terminal", "?"),
        (None, "?"),
    ],
)
def test_a_tool_calls_name_is_the_functions_else_its_own_else_a_question_mark(call, name):
    """Rule: the OpenAI form's ``function.name``, else (no function object) the call's own ``name``; a
    name that is not a non-empty string, or a call that is not an object, is ``?``."""
    assert _tool_name(call) == name


def test_like_patterns_escape_the_backslash_percent_and_underscore():
    """Rule: the text is matched literally: ``\\``, ``%`` and ``_`` are escaped with ``\\`` (the
    ``ESCAPE '\\'`` of the query), and the text may sit anywhere."""
    assert _like_pattern("a\\b%c_d") == "%a\\\\b\\%c\\_d%"
    assert _like_pattern("") == "%%"


def test_the_missing_sidecar_reader_waits_hermes_time_for_a_lock_unless_told(tmp_path, timeouts):
    """Rule: the reader of state.db rows without a sidecar waits for a lock as long as hermes does
    (5 s) when no timeout is given, and the given one otherwise (seventeenth session)."""
    db = _db(tmp_path / "state.db", *PLAIN)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    statedb.read_missing_sidecar_rows(sessions, db)
    statedb.read_missing_sidecar_rows(sessions, db, timeout=0.25)
    assert timeouts == [5.0, 0.25]
