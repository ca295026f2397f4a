"""The sentence for each SQLite error met reading state.db (``statedb.describe_sqlite_error``).

Rules found by mutation testing (tests/MUTATION.md, third session). The error texts are SQLite's own
(``sqlite3_errstr``: SQLITE_BUSY "database is locked", SQLITE_CORRUPT "database disk image is
malformed", SQLITE_NOTADB "file is not a database", SQLITE_CANTOPEN "unable to open database file",
SQLITE_READONLY "attempt to write a readonly database", SQLITE_IOERR "disk I/O error", SQLITE_INTERRUPT
"interrupted", SQLITE_TOOBIG "string or blob too big", and the prepare errors "no such table: X" /
"no such column: X"); every sentence is written out by hand, for a path ``/h/state.db``.
"""

from __future__ import annotations

import sqlite3

import pytest

from inspector.store.statedb import describe_sqlite_error

P = "/h/state.db"
LOCKED = f"{P} is locked by another process (the agent is probably writing to it); try again in a moment"
DAMAGED = (
    f"{P} is damaged (database disk image is malformed); the inspector does not read a damaged database "
    "and will not try to repair it"
)
NOT_SQLITE = f"{P} is not an SQLite database (it looks encrypted or is not a state.db at all)"
READONLY = (
    f"{P} cannot be read read-only: SQLite needs its -wal/-shm side files and the folder is not writable"
)


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("database is locked", LOCKED),
        ("database table is locked", LOCKED),
        ("database is busy", LOCKED),
        ("Database Busy", LOCKED),  # the test is on the lower-cased text
        ("database disk image is malformed", DAMAGED),
        ("file is not a database", NOT_SQLITE),
        ("file is encrypted or is not a database", NOT_SQLITE),
        ("Encrypted", NOT_SQLITE),
        ("unable to open database file", f"{P} cannot be opened (missing, a folder, or permission denied)"),
        ("attempt to write a readonly database", READONLY),
        ("database is read-only", READONLY),
        ("disk I/O error", f"{P}: transient disk I/O error (the agent may be resetting its WAL); try again"),
        (
            "interrupted",
            f"{P}: a query ran longer than 20 s and was stopped (a damaged or hostile state.db, e.g. a view "
            "where a table belongs); nothing was read from it",
        ),
        (
            "string or blob too big",
            f"{P} holds a value larger than 64 MB: too large to load safely; nothing was read from it",
        ),
        (
            "no such table: messages",
            f"{P} does not have the expected tables/columns (no such table: messages): an older or foreign schema",
        ),
        (
            "no such column: session_id",
            f"{P} does not have the expected tables/columns (no such column: session_id): an older or foreign "
            "schema",
        ),
        ("out of memory", f"{P} could not be read: out of memory"),
        ("no such function: x", f"{P} could not be read: no such function: x"),
    ],
)
def test_each_sqlite_error_has_its_sentence(text, sentence):
    """Rule: the SQLite error's text picks the sentence (case-insensitively); anything else is quoted."""
    assert describe_sqlite_error(sqlite3.OperationalError(text), P) == sentence
