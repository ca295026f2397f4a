"""Which join ``list_sessions`` counts messages with, on small hand-built databases.

Only hermes' own schema (``sessions.id`` and ``messages.session_id`` both declared ``TEXT``, no
collation anywhere in the two tables) is counted by the dict join, whose ``==`` equals SQL's ``=``
there; any other declared type or a collation is joined by SQL itself. These databases are the
ones where the two joins would count differently, so the count shows which one ran.
"""

from __future__ import annotations

from inspector.store.statedb import list_sessions
from tests.recovery_helpers import custom_state_db


def _counts(tmp_path, sessions_ddl, messages_ddl, sessions, messages):
    db = custom_state_db(tmp_path / "state.db", sessions_ddl, messages_ddl, sessions, messages)
    return {r["id"]: r["messages"] for r in list_sessions(db)}


def test_the_declared_type_is_the_id_columns_own_not_a_neighbours(tmp_path):
    """Rule: the types looked at are those of ``sessions.id`` and ``messages.session_id``: an INTEGER
    id beside a TEXT column is still joined by SQL, where the TEXT ``'7'`` equals the INTEGER ``7``."""
    counts = _counts(
        tmp_path,
        "CREATE TABLE sessions (id INTEGER, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, content TEXT)",
        [{"id": 7, "source": "webui"}],
        [{"session_id": "7", "content": "x"}, {"session_id": "7", "content": "y"}],
    )
    assert counts == {7: 2}


def test_a_collation_on_session_id_joins_in_sql(tmp_path):
    """Rule: ``messages.session_id`` declared ``COLLATE NOCASE`` makes SQL's join ignore case: the
    messages of ``'a'`` count for the session ``'A'``."""
    counts = _counts(
        tmp_path,
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT COLLATE NOCASE, content TEXT)",
        [{"id": "A", "source": "webui"}, {"id": "b", "source": "webui"}],
        [{"session_id": "a", "content": "x"}, {"session_id": "b", "content": "y"}],
    )
    assert counts == {"A": 1, "b": 1}


def test_a_lower_case_collate_word_is_a_collation_too(tmp_path):
    """Rule: the ``collate`` word is found whatever its case in the tables' SQL."""
    counts = _counts(
        tmp_path,
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT collate nocase, content TEXT)",
        [{"id": "A", "source": "webui"}],
        [{"session_id": "a", "content": "x"}],
    )
    assert counts == {"A": 1}


def test_collations_in_both_tables_join_in_sql(tmp_path):
    """Rule: a collation in both tables' SQL (not only in one) still makes SQL join the ids."""
    counts = _counts(
        tmp_path,
        "CREATE TABLE sessions (id TEXT COLLATE NOCASE, source TEXT)",
        "CREATE TABLE messages (session_id TEXT COLLATE NOCASE, content TEXT)",
        [{"id": "A", "source": "webui"}],
        [{"session_id": "a", "content": "x"}, {"session_id": "A", "content": "y"}],
    )
    assert counts == {"A": 2}


def test_hermes_text_ids_count_exact_matches_only(tmp_path):
    """Rule: with hermes' TEXT/TEXT ids and no collation, only an id spelled the same counts."""
    counts = _counts(
        tmp_path,
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, content TEXT)",
        [{"id": "A", "source": "webui"}, {"id": "7", "source": "webui"}],
        [
            {"session_id": "a", "content": "x"},
            {"session_id": "A", "content": "y"},
            {"session_id": 7, "content": "z"},
        ],
    )
    assert counts == {"A": 1, "7": 1}
