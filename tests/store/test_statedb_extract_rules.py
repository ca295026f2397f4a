"""The support bundle's extract of a ``state.db`` (``inspector.store.statedb_extract``), rule by rule on
small databases made here (tests/MUTATION.md, fourth session): which tables are copied, filtered or left
empty; the schema objects re-created, rebuilt or left out and the words that name them; the counts; the
refusals, each leaving no file behind. Expected values are written by hand from the module's contract
(its docstring) and SQLite's documented behaviour."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from inspector.store import statedb_extract
from inspector.store.statedb import StateDbError
from inspector.store.statedb_extract import Extract, extract_sessions


def _make(path: Path, *statements: str, rows: dict[str, list[tuple]] | None = None) -> Path:
    with closing(sqlite3.connect(path)) as conn:
        for sql in statements:
            conn.execute(sql)
        for table, values in (rows or {}).items():
            marks = ", ".join("?" * len(values[0]))
            conn.executemany(f'INSERT INTO "{table}" VALUES ({marks})', values)
        conn.commit()
    return path


def _read(path: Path, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return conn.execute(sql).fetchall()


def _names(path: Path, kind: str) -> list[str]:
    """The named objects of a kind (``sqlite_`` ones, such as a primary key's own index, left out)."""
    sql = f"SELECT name FROM sqlite_master WHERE type = '{kind}' AND name NOT LIKE 'sqlite%' ORDER BY name"
    return [r[0] for r in _read(path, sql)]


SESSIONS = "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT)"
MESSAGES = "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT)"


def test_chosen_sessions_rows_are_copied_and_counted(tmp_path):
    """Rule: ``sessions`` rows by ``id``, every table with ``session_id`` by it, the two metadata tables
    whole, any other table left empty and named; the counts per table and of sessions; user_version and
    application_id carried over (each to its own pragma)."""
    src = _make(
        tmp_path / "state.db",
        SESSIONS,
        MESSAGES,
        "CREATE TABLE schema_version (version INTEGER)",
        "CREATE TABLE state_meta (key TEXT, value TEXT)",
        "CREATE TABLE settings (name TEXT, value TEXT)",
        "CREATE INDEX idx_messages_session ON messages(session_id)",
        "PRAGMA user_version=7",
        "PRAGMA application_id=12345",
        rows={
            "sessions": [("a", "A"), ("b", "B"), ("c", "C")],
            "messages": [(1, "a", "hi"), (2, "b", "x"), (3, "a", "there"), (4, "c", "y")],
            "schema_version": [(6,)],
            "state_meta": [("k1", "v1"), ("k2", "v2")],
            "settings": [("theme", "dark")],
        },
    )
    dest = tmp_path / "extract.db"
    got = extract_sessions(src, dest, ["c", "a", "a"])
    assert got.sessions == 2
    assert got.rows == {"sessions": 2, "messages": 3, "schema_version": 1, "state_meta": 2}
    assert got.empty_tables == ["settings"]
    assert got.left_out == []
    assert _read(dest, "SELECT * FROM sessions ORDER BY id") == [("a", "A"), ("c", "C")]
    assert _read(dest, "SELECT * FROM messages ORDER BY id") == [
        (1, "a", "hi"),
        (3, "a", "there"),
        (4, "c", "y"),
    ]
    assert _read(dest, "SELECT * FROM state_meta") == [("k1", "v1"), ("k2", "v2")]
    assert _read(dest, "SELECT count(*) FROM settings") == [(0,)]
    assert _names(dest, "index") == ["idx_messages_session"]
    assert _read(dest, "PRAGMA user_version") == [(7,)]
    assert _read(dest, "PRAGMA application_id") == [(12345,)]


def test_the_extract_is_written_at_the_path_given(tmp_path, monkeypatch):
    """Rule: the destination is opened as a ``file:`` URI (so a path is a path, not a name made of
    ``file:...?mode=rwc``) and created there."""
    src = _make(tmp_path / "state.db", SESSIONS, rows={"sessions": [("a", "A")]})
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    dest = tmp_path / "out" / "extract.db"
    dest.parent.mkdir()
    extract_sessions(src, dest, ["a"])
    assert _read(dest, "SELECT * FROM sessions") == [("a", "A")]
    assert list(work.iterdir()) == []


def test_without_a_sessions_table_no_session_is_counted(tmp_path):
    """Rule: ``sessions`` counts the copied rows of the ``sessions`` table, 0 when there is none."""
    src = _make(tmp_path / "state.db", MESSAGES, rows={"messages": [(1, "a", "hi")]})
    got = extract_sessions(src, tmp_path / "x.db", ["a"])
    assert got.sessions == 0
    assert got.rows == {"messages": 1}
    assert got.to_json() == {"sessions": 0, "rows": {"messages": 1}, "tables_left_empty": [], "left_out": []}


def test_more_ids_than_one_in_list_are_copied_in_chunks_and_all_counted(tmp_path):
    """Rule: ids go 500 to an IN list; the rows of every chunk are copied and added up."""
    ids = [f"s{i:04d}" for i in range(1203)]
    src = _make(tmp_path / "state.db", SESSIONS, rows={"sessions": [(i, "t") for i in ids]})
    dest = tmp_path / "x.db"
    got = extract_sessions(src, dest, ids[:1201])
    assert got.rows == {"sessions": 1201} and got.sessions == 1201
    assert _read(dest, "SELECT count(*), min(id), max(id) FROM sessions") == [(1201, "s0000", "s1200")]


def test_names_holding_a_double_quote_are_quoted(tmp_path):
    """Rule: a table or column name holding ``"`` is written ``"..."`` with the quote doubled."""
    src = _make(
        tmp_path / "state.db",
        'CREATE TABLE "odd""table" (session_id TEXT, "say ""hi""" TEXT)',
        rows={'odd""table': [("a", "yes"), ("b", "no")]},
    )
    dest = tmp_path / "x.db"
    got = extract_sessions(src, dest, ["a"])
    assert got.rows == {'odd"table': 1}
    assert _read(dest, 'SELECT "say ""hi""" FROM "odd""table"') == [("yes",)]


def test_a_plain_table_named_like_a_virtual_tables_prefix_is_no_shadow(tmp_path):
    """Rule: a shadow table is the virtual table's name plus one of FTS's suffixes; a plain table that
    only begins with that name (``docs_fts_notes``) is copied as any other."""
    src = _make(
        tmp_path / "state.db",
        "CREATE VIRTUAL TABLE docs_fts USING fts5(body)",
        "CREATE TABLE docs_fts_notes (session_id TEXT, note TEXT)",
        rows={"docs_fts_notes": [("a", "kept"), ("b", "not chosen")]},
    )
    dest = tmp_path / "x.db"
    got = extract_sessions(src, dest, ["a"])
    assert got.rows == {"docs_fts_notes": 1}
    assert _read(dest, "SELECT note FROM docs_fts_notes") == [("kept",)]
    assert "docs_fts" in _names(dest, "table")


def test_a_virtual_table_written_in_lower_case_is_still_virtual(tmp_path):
    """Rule: SQLite upper-cases ``CREATE VIRTUAL TABLE`` when it stores a schema, but a file may hold it
    as written by other means; the keywords are matched in any case, so its shadow tables are still
    SQLite's own and the table is re-created, not copied as a plain table."""
    src = _make(
        tmp_path / "state.db",
        "CREATE VIRTUAL TABLE notes_fts USING fts5(body)",
        "INSERT INTO notes_fts(body) VALUES ('never copied')",
    )
    with closing(sqlite3.connect(src)) as conn:
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = 'create  virtual table notes_fts using fts5(body)' "
            "WHERE name = 'notes_fts'"
        )
        conn.commit()
    dest = tmp_path / "x.db"
    got = extract_sessions(src, dest, ["a"])
    assert got.rows == {} and got.empty_tables == [] and got.left_out == []
    assert _read(dest, "SELECT count(*) FROM notes_fts") == [(0,)]


def test_triggers_are_created_in_order_even_after_other_objects(tmp_path):
    """Rule: every trigger is created (after the rows: they are the live ones), also when the source
    lists a table or index after it."""
    src = _make(
        tmp_path / "state.db",
        SESSIONS,
        "CREATE TABLE log (session_id TEXT, what TEXT)",
        "CREATE TRIGGER t_first AFTER INSERT ON sessions BEGIN INSERT INTO log VALUES (new.id, 'new'); END",
        MESSAGES,
        "CREATE INDEX idx_late ON messages(session_id)",
        "CREATE TRIGGER t_second AFTER DELETE ON sessions BEGIN DELETE FROM messages WHERE session_id = old.id; END",
        rows={"sessions": [("a", "A")], "log": [("a", "by hand")]},
    )
    dest = tmp_path / "x.db"
    got = extract_sessions(src, dest, ["a"])
    assert got.left_out == []
    assert _names(dest, "trigger") == ["t_first", "t_second"]
    assert _names(dest, "index") == ["idx_late"]
    # the source's two rows (t_first wrote the first there), copied; t_first did not fire on the copy
    assert _read(dest, "SELECT * FROM log") == [("a", "new"), ("a", "by hand")]


def _with_unknown_tokenizer(path: Path) -> Path:
    """A source like the agent's: an FTS5 table over ``messages`` whose tokenizer (``cjk_unicode61``) this
    SQLite lacks, written into the schema as the agent's own SQLite wrote it, and the triggers that keep
    it filled."""
    _make(
        path,
        MESSAGES,
        "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id')",
        "CREATE TABLE audit (session_id TEXT, what TEXT)",
        "CREATE TRIGGER fts_ins AFTER INSERT ON messages BEGIN "
        "INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END",
        "CREATE TRIGGER audit_ins AFTER INSERT ON messages BEGIN "
        "INSERT INTO audit VALUES (new.session_id, 'messages_fts_x'); END",
        "CREATE TRIGGER fts_del AFTER DELETE ON messages BEGIN "
        "INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content); END",
        rows={"messages": [(1, "a", "hello"), (2, "b", "other")]},
    )
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, 'content_rowid=''id''', "
            "'content_rowid=''id'', tokenize=''cjk_unicode61''') WHERE name = 'messages_fts'"
        )
        conn.commit()
    return path


def test_a_virtual_table_this_sqlite_cannot_make_is_left_out_with_its_triggers(tmp_path):
    """Rule: a virtual table whose tokenizer is missing is left out and named with SQLite's reason;
    every trigger whose text names it (as a whole name) is left out and named; the other triggers and
    the rows stay."""
    src = _with_unknown_tokenizer(tmp_path / "state.db")
    dest = tmp_path / "x.db"
    got = extract_sessions(src, dest, ["a"])
    assert got.left_out == [
        "table messages_fts: no such tokenizer: cjk_unicode61",
        "trigger fts_ins: it writes to a table left out",
        "trigger fts_del: it writes to a table left out",
    ]
    assert got.rows == {"messages": 1, "audit": 1}  # audit_ins wrote one row per message in the source
    assert _names(dest, "trigger") == ["audit_ins"]
    assert "messages_fts" not in _names(dest, "table")
    assert _read(dest, "SELECT * FROM messages") == [(1, "a", "hello")]


def test_an_external_content_index_is_rebuilt_over_the_copied_rows(tmp_path):
    """Rule: an FTS5 table over external content is rebuilt after the copy, so it indexes only the
    chosen sessions' rows."""
    src = _make(
        tmp_path / "state.db",
        MESSAGES,
        "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id')",
        rows={"messages": [(1, "a", "apple pie"), (2, "b", "apple tart")]},
    )
    with closing(sqlite3.connect(src)) as conn:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        conn.commit()
    dest = tmp_path / "x.db"
    got = extract_sessions(src, dest, ["a"])
    assert got.left_out == []
    assert _read(dest, "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'apple'") == [(1,)]


def test_an_index_that_cannot_be_rebuilt_is_named(tmp_path):
    """Rule: when the rebuild of an external-content index fails, the extract goes on and names it:
    ``index of <name> not rebuilt: <SQLite's reason>``."""
    src = _make(
        tmp_path / "state.db",
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, session_id TEXT, body TEXT)",
        "CREATE VIRTUAL TABLE docs_fts USING fts5(missing_column, content='docs', content_rowid='id')",
        rows={"docs": [(1, "a", "x")]},
    )
    got = extract_sessions(src, tmp_path / "x.db", ["a"])
    assert len(got.left_out) == 1
    assert got.left_out[0].startswith("index of docs_fts not rebuilt: ")
    assert got.rows == {"docs": 1}


def test_a_source_that_is_no_database_is_refused_and_leaves_no_file(tmp_path):
    """Rule: an SQLite error is refused with its sentence for the user (naming the source) and no
    extract is left; a source that is missing is refused as such."""
    src = tmp_path / "state.db"
    src.write_bytes(b"this is not a database, only some text long enough to be read" * 20)
    dest = tmp_path / "x.db"
    with pytest.raises(StateDbError) as caught:
        extract_sessions(src, dest, ["a"])
    assert (
        str(caught.value)
        == f"{src} is not an SQLite database (it looks encrypted or is not a state.db at all)"
    )
    assert not dest.exists()
    with pytest.raises(StateDbError) as caught:
        extract_sessions(tmp_path / "missing.db", dest, ["a"])
    assert str(caught.value) == f"{tmp_path / 'missing.db'} does not exist"
    assert not dest.exists()


def test_an_extract_failing_its_integrity_check_is_refused_and_removed(tmp_path, monkeypatch):
    """Rule: ``PRAGMA integrity_check`` must answer ``ok``; otherwise the extract is removed and refused,
    naming the source and the first three problems."""
    src = _make(tmp_path / "state.db", SESSIONS, rows={"sessions": [("a", "A")]})
    dest = tmp_path / "x.db"
    problems = [("row 1 missing from index a",), ("row 2 missing from index a",), ("b",), ("c",)]
    real_connect = sqlite3.connect

    class Checked:
        def __init__(self, conn):
            self._conn = conn

        def __getattr__(self, name):
            return getattr(self._conn, name)

        def execute(self, sql, *args):
            if sql.strip().lower() == "pragma integrity_check":

                class Answer:
                    def fetchall(self):
                        return problems

                return Answer()
            return self._conn.execute(sql, *args)

    def connect(database, *args, **kwargs):
        conn = real_connect(database, *args, **kwargs)
        return Checked(conn) if "mode=rwc" in str(database) else conn

    monkeypatch.setattr(statedb_extract.sqlite3, "connect", connect)
    with pytest.raises(StateDbError) as caught:
        extract_sessions(src, dest, ["a"])
    assert str(caught.value) == (
        f"the extract of {src} failed its integrity check: "
        "[('row 1 missing from index a',), ('row 2 missing from index a',), ('b',)]"
    )
    assert not dest.exists()


def test_the_summary_names_its_four_parts():
    """Rule: the bundle's summary of an extract: sessions, rows per table, tables left empty, left out."""
    got = Extract(sessions=2, rows={"sessions": 2}, empty_tables=["x"], left_out=["trigger t: ..."])
    assert got.to_json() == {
        "sessions": 2,
        "rows": {"sessions": 2},
        "tables_left_empty": ["x"],
        "left_out": ["trigger t: ..."],
    }


def test_an_sqlite_error_before_the_extract_is_begun_is_refused_in_words(tmp_path, monkeypatch):
    """Rule: an SQLite error while the source is still being read (here a damaged page met when a
    table is looked at), before the extract file exists, is refused with its sentence for the
    user; there is no file to remove, and that is no second error."""
    src = _make(tmp_path / "state.db", SESSIONS, rows={"sessions": [("a", "A")]})
    dest = tmp_path / "x.db"

    def damaged(conn, table):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(statedb_extract, "_table_filter", damaged)
    with pytest.raises(StateDbError) as caught:
        extract_sessions(src, dest, ["a"])
    assert str(caught.value) == (
        f"{src} is damaged (database disk image is malformed); the inspector does not read "
        "a damaged database and will not try to repair it"
    )
    assert not dest.exists()


def test_the_extract_is_created_through_a_uri_whatever_sqlite_was_built_with(tmp_path, monkeypatch):
    """Rule: ``mode=rwc`` is a URI parameter, read only when the name is opened as a URI
    (``uri=True``); without it a SQLite built without SQLITE_USE_URI (this machine's is built with
    it) would make a file named ``file:...?mode=rwc`` in the working folder instead of the extract."""
    src = _make(tmp_path / "state.db", SESSIONS, rows={"sessions": [("a", "A")]})
    dest = tmp_path / "x.db"
    opened = []
    real_connect = sqlite3.connect

    def connect(database, *args, **kwargs):
        opened.append((database, kwargs.get("uri")))
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(statedb_extract.sqlite3, "connect", connect)
    extract_sessions(src, dest, ["a"])
    assert opened[0] == (src.resolve().as_uri() + "?mode=ro", True)  # the source, by open_readonly
    assert opened[1] == (f"file:{dest.as_posix()}?mode=rwc", True)
    assert len(opened) == 2
