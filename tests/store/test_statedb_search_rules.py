"""Searching state.db's titles and messages (``statedb.search_text``): what each hit holds, in what order.

Rules found by mutation testing (tests/MUTATION.md, third session); the databases are built here and
every expected hit is written out by hand.
"""

from __future__ import annotations

import pytest

from inspector.store.statedb import StateDbError, search_text
from tests.recovery_helpers import custom_state_db

SESSIONS = "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT)"


def test_titles_and_messages_in_id_order_with_each_field_in_its_place(tmp_path):
    """Rule: title hits ``{"session_id", "title"}`` by session id; message hits ``{"session_id", "id",
    "role", "content"}`` by message id (not by the order rows were stored)."""
    db = custom_state_db(
        tmp_path / "state.db",
        SESSIONS,
        "CREATE TABLE messages (id INTEGER, session_id TEXT, role TEXT, content TEXT)",  # id is not the rowid
        [
            {"id": "s2", "source": "webui", "title": "Kiwi B"},
            {"id": "s1", "source": "webui", "title": "kiwi A"},
        ],
        [
            {"id": 9, "session_id": "s1", "role": "assistant", "content": "a KIWI"},
            {"id": 3, "session_id": "s2", "role": "user", "content": "kiwi?"},
            {"id": 5, "session_id": "s2", "role": "user", "content": "no fruit"},
        ],
    )
    titles, messages = search_text(db, "kiwi")
    assert titles == [{"session_id": "s1", "title": "kiwi A"}, {"session_id": "s2", "title": "Kiwi B"}]
    assert messages == [
        {"session_id": "s2", "id": 3, "role": "user", "content": "kiwi?"},
        {"session_id": "s1", "id": 9, "role": "assistant", "content": "a KIWI"},
    ]


def test_messages_without_an_id_column_are_in_rowid_order(tmp_path):
    """Rule: a messages table with no ``id`` column gives the rowid as the hit's id, in rowid order."""
    db = custom_state_db(
        tmp_path / "state.db",
        SESSIONS,
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": "s1", "source": "webui", "title": "t"}],
        [
            {"session_id": "s1", "role": "user", "content": "kiwi one"},
            {"session_id": "s1", "role": "assistant", "content": "kiwi two"},
        ],
    )
    assert search_text(db, "kiwi")[1] == [
        {"session_id": "s1", "id": 1, "role": "user", "content": "kiwi one"},
        {"session_id": "s1", "id": 2, "role": "assistant", "content": "kiwi two"},
    ]


def test_a_database_without_messages_gives_no_message_hits(tmp_path):
    """Rule: no messages table: the message hits are an empty list (the titles are still searched)."""
    db = custom_state_db(
        tmp_path / "state.db", SESSIONS, None, [{"id": "s1", "source": "webui", "title": "kiwi"}]
    )
    assert search_text(db, "kiwi") == ([{"session_id": "s1", "title": "kiwi"}], [])


def test_sessions_without_a_title_column_give_no_title_hits(tmp_path):
    """Rule: a sessions table without ``title`` gives no title hits (and the messages are still searched)."""
    db = custom_state_db(
        tmp_path / "state.db",
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT)",
        [{"id": "s1", "source": "webui"}],
        [{"id": 1, "session_id": "s1", "role": "user", "content": "kiwi"}],
    )
    assert search_text(db, "kiwi") == ([], [{"session_id": "s1", "id": 1, "role": "user", "content": "kiwi"}])


def test_at_most_500_hits_of_each_kind_by_default(tmp_path):
    """Rule: the default limit is 500 rows of each kind."""
    db = custom_state_db(
        tmp_path / "state.db",
        SESSIONS,
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT)",
        [{"id": f"s{i:04}", "source": "webui", "title": "kiwi"} for i in range(501)],
        [{"id": i, "session_id": "s0000", "role": "user", "content": "kiwi"} for i in range(1, 502)],
    )
    titles, messages = search_text(db, "kiwi")
    assert (len(titles), len(messages)) == (500, 500)
    assert titles[-1]["session_id"] == "s0499" and messages[-1]["id"] == 500


def test_a_database_that_cannot_be_read_is_said_in_words(tmp_path):
    """Rule: an SQLite error becomes StateDbError with describe_sqlite_error's sentence for the path."""
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not a database at all, just text" * 100)
    with pytest.raises(StateDbError) as caught:
        search_text(path, "kiwi")
    assert (
        str(caught.value)
        == f"{path} is not an SQLite database (it looks encrypted or is not a state.db at all)"
    )


def test_a_view_where_messages_belongs_is_refused_naming_the_database(tmp_path):
    """Rule: the schema check before the search names the database it refuses (a view is not searched)."""
    path = custom_state_db(
        tmp_path / "state.db", SESSIONS, None, [{"id": "s1", "source": "webui", "title": "kiwi"}]
    )
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE VIEW messages AS SELECT id AS session_id, 'user' AS role, title AS content FROM sessions"
    )
    conn.commit()
    conn.close()
    with pytest.raises(StateDbError) as caught:
        search_text(path, "kiwi")
    assert str(caught.value) == (
        "state.db: messages is a view (a query), not a table as hermes makes it; nothing is read from this "
        f"database ({path}: a hostile or foreign schema can make any query endless)"
    )


def test_the_callers_timeout_reaches_the_connection(tmp_path, monkeypatch):
    """Rule: ``timeout`` (how long to wait for a locked database) is the one the database is opened with."""
    import inspector.store.statedb as statedb

    db = custom_state_db(
        tmp_path / "state.db", SESSIONS, None, [{"id": "s1", "source": "webui", "title": "kiwi"}]
    )
    opened = []
    real = statedb.open_readonly

    def open_readonly(path, timeout=None):
        opened.append(timeout)
        return real(path, timeout)

    monkeypatch.setattr(statedb, "open_readonly", open_readonly)
    search_text(db, "kiwi", timeout=2.5)
    assert opened == [2.5]
