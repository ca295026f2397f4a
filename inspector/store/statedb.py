"""Strictly read-only access to an agent ``state.db`` (spec state-db §7-9, session-recovery §3.3/§3.4).

Two kinds of readers live here:

* **inspector readers** (:func:`read_schema`, :func:`list_sessions`, :func:`read_transcript`,
  :func:`dropped_field_counts`): they raise :class:`StateDbError` with a message a user can
  read (locked, malformed, not a database, missing tables, old schema) and never a traceback;
* **hermes' own readers** (:func:`read_missing_sidecar_rows`, :func:`state_db_has_session`):
  they keep hermes-webui's semantics exactly, including swallowing every error (the reader
  returns ``[]``, the "still has this session" check fails open and returns True), because
  the recovery audit must equal hermes'.

Every connection is opened by :func:`open_readonly`: the path must exist (never created),
the URI is the percent-encoded ``Path.resolve().as_uri()`` plus ``?mode=ro`` (so ``?``, ``#``
and ``%`` in a path work, unlike hermes' raw ``file:{path}``), ``PRAGMA query_only=ON``, a
modest busy timeout, never ``immutable=1`` and never a writable fallback. Statements are
short, results are fetched with ``fetchall()`` and connections are closed at once.

The file is untrusted. A ``sessions`` or ``messages`` that is a VIEW (which can be an endless
recursive query), a virtual table or a table with virtual generated columns (values computed
on every read) is not what hermes made: the inspector readers refuse it with a message and
hermes' readers take their error path. Every connection's queries run under a deadline
(:data:`QUERY_DEADLINE`, SQLite's progress handler) and no single value may be larger than
:data:`MAX_VALUE_BYTES` (``SQLITE_LIMIT_LENGTH``); either failure is a message, never a hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.store.tombstone import is_durably_tombstoned

CONTENT_JSON_PREFIX = "\x00json:"
DEFAULT_TIMEOUT = 2.0
HERMES_TIMEOUT = 5.0  # sqlite3.connect's default, which hermes-webui's recovery code uses
# Seconds the queries of one connection (one :class:`SessionPresence` lookup) may run in all; a
# catalogue of 10,000 sessions takes well under one. Past it SQLite interrupts the statement.
QUERY_DEADLINE = 20.0
# The largest single text or blob a query may produce (a message of a long tool output is a
# few MB); a bigger value - stored, or computed by a hostile schema - fails the query.
MAX_VALUE_BYTES = 64 << 20
_PROGRESS_STEPS = 20_000  # SQLite virtual-machine steps between two looks at the clock (~1 ms)
# The tables the readers expect, which must be plain tables (see the module docstring).
CORE_TABLES = ("sessions", "messages")

# The hermes recovery reader's optional session columns, in SELECT order, with their
# substitute when the column is missing (session-recovery §3.4).
_RECOVERY_SESSION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("title", "NULL"),
    ("model", "NULL"),
    ("started_at", "0"),
    ("parent_session_id", "NULL"),
    ("message_count", "0"),
    ("workspace", "NULL"),
    ("worktree_path", "NULL"),
    ("worktree_branch", "NULL"),
    ("worktree_repo_root", "NULL"),
    ("worktree_created_at", "NULL"),
)
_TRANSCRIPT_OPTIONAL = (
    "timestamp",
    "tool_calls",
    "tool_call_id",
    "tool_name",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "finish_reason",
    "display_kind",
)
_JSON_COLUMNS = frozenset({"tool_calls", "reasoning_details"})
# Columns the recovery materializer ignores; counted so a preview can say what is lost.
DROPPED_BY_MATERIALIZER = (
    "tool_calls",
    "tool_call_id",
    "tool_name",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
)


class StateDbError(Exception):
    """state.db cannot be read; ``str(exc)`` is a message to show the user."""


# ---------------------------------------------------------------- connections and errors


def describe_sqlite_error(exc: BaseException, path: Path | str) -> str:
    """A readable sentence for an sqlite3 error raised while reading ``path``."""
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return (
            f"{path} is locked by another process (the agent is probably writing to it); "
            "try again in a moment"
        )
    if "malformed" in low:
        return (
            f"{path} is damaged (database disk image is malformed); the inspector does not read "
            "a damaged database and will not try to repair it"
        )
    if "not a database" in low or "encrypted" in low:
        return f"{path} is not an SQLite database (it looks encrypted or is not a state.db at all)"
    if "unable to open" in low:
        return f"{path} cannot be opened (missing, a folder, or permission denied)"
    if "readonly" in low or "read-only" in low:
        return (
            f"{path} cannot be read read-only: SQLite needs its -wal/-shm side files and the "
            "folder is not writable"
        )
    if "disk i/o" in low:
        return f"{path}: transient disk I/O error (the agent may be resetting its WAL); try again"
    if "interrupted" in low:
        return (
            f"{path}: a query ran longer than {QUERY_DEADLINE:g} s and was stopped (a damaged or hostile "
            "state.db, e.g. a view where a table belongs); nothing was read from it"
        )
    if "too big" in low:
        return (
            f"{path} holds a value larger than {MAX_VALUE_BYTES >> 20} MB: too large to load safely; "
            "nothing was read from it"
        )
    if "no such table" in low or "no such column" in low:
        return f"{path} does not have the expected tables/columns ({text}): an older or foreign schema"
    return f"{path} could not be read: {text}"


SIDE_FILE_SUFFIXES = ("-journal", "-wal", "-shm")


def _check_side_files(path: Path) -> None:
    """SQLite opens ``-journal``/``-wal``/``-shm`` beside the database itself (a FIFO there would
    block the open for ever, a link to a device would be read): each that exists must be a
    regular file. One ``stat`` each, before SQLite touches them."""
    for suffix in SIDE_FILE_SUFFIXES:
        side = Path(f"{path}{suffix}")
        try:
            st = os.stat(side)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StateDbError(
                f"{side} cannot be examined ({exc.strerror or exc}); the database is not opened"
            ) from exc
        if not stat.S_ISREG(st.st_mode):
            raise StateDbError(
                f"{side} is not a regular file (a FIFO, device or folder): SQLite would block or "
                "read it, so the database is not opened"
            )


def open_readonly(path: Path | str, timeout: float | None = None) -> GuardedConnection:
    """Open ``path`` read-only; raise StateDbError when it is missing or cannot be opened.

    ``timeout`` (seconds to wait for a lock) defaults to :data:`DEFAULT_TIMEOUT`. The caller
    owns the connection and must close it (use ``contextlib.closing``).
    """
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    p = Path(path)
    if not p.exists():
        raise StateDbError(f"{p} does not exist")
    if not p.is_file():
        raise StateDbError(f"{p} is not a file")
    _check_side_files(p)
    uri = p.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, factory=GuardedConnection)
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, p)) from exc
    try:
        conn.guard()
        conn.execute("PRAGMA query_only=ON")
        conn.execute(f"PRAGMA busy_timeout={max(0, int(timeout * 1000))}")
    except sqlite3.Error as exc:
        conn.close()
        raise StateDbError(describe_sqlite_error(exc, p)) from exc
    return conn


class GuardedConnection(sqlite3.Connection):
    """A connection whose statements stop at a deadline and whose values have a size limit."""

    deadline = 0.0

    def guard(self) -> None:
        self.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        self.restart_deadline()
        self.set_progress_handler(self._past_deadline, _PROGRESS_STEPS)

    def restart_deadline(self) -> None:
        """Give the next queries :data:`QUERY_DEADLINE` seconds from now."""
        self.deadline = time.monotonic() + QUERY_DEADLINE

    def _past_deadline(self) -> int:
        return 1 if time.monotonic() > self.deadline else 0  # non-zero: SQLite interrupts the statement


_VIRTUAL_TABLE = re.compile(r"\s*CREATE\s+VIRTUAL\s+TABLE", re.IGNORECASE)


def is_virtual_table_sql(sql: str) -> bool:
    """Whether a stored ``CREATE`` statement makes a virtual table, in any case and spacing."""
    return _VIRTUAL_TABLE.match(sql) is not None


def not_plain_tables(conn: sqlite3.Connection) -> dict[str, str]:
    """``{name: what it is}`` for each of :data:`CORE_TABLES` that exists but is not a plain table:
    a view, a virtual table, or a table with virtual generated columns (computed on each read).

    A virtual table is known by its root page 0 (it has no b-tree of its own), and by its stored
    statement too, in any case and spacing: SQLite stores ``CREATE VIRTUAL TABLE`` in capitals with
    single spaces, but a file edited by other means may hold ``create  virtual table`` (which the
    first check of the statement's text alone let through)."""
    out: dict[str, str] = {}
    rows = conn.execute(
        "SELECT name, type, sql, rootpage FROM sqlite_master WHERE name IN (?, ?)", CORE_TABLES
    ).fetchall()
    for name, kind, sql, rootpage in rows:
        if kind == "view":
            out[name] = "a view (a query), not a table"
        elif kind == "table" and (rootpage == 0 or (isinstance(sql, str) and is_virtual_table_sql(sql))):
            out[name] = "a virtual table, not a table"
        elif kind == "table":
            hidden = [r[1] for r in conn.execute(f"PRAGMA table_xinfo({name})").fetchall() if r[6] == 2]
            if hidden:
                out[name] = f"a table with computed columns ({', '.join(map(str, hidden))})"
    return out


def _require_plain_tables(conn: sqlite3.Connection, path: Path | str) -> None:
    odd = not_plain_tables(conn)
    if odd:
        what = "; ".join(f"{name} is {kind}" for name, kind in sorted(odd.items()))
        raise StateDbError(
            f"{Path(path).name}: {what} as hermes makes it; nothing is read from this database "
            f"({path}: a hostile or foreign schema can make any query endless)"
        )


def lenient_text(data: bytes) -> str:
    """A TEXT value as a string even when it is not UTF-8: bad bytes become lone surrogates
    (``\\udcff``), which every output shows escaped."""
    return data.decode("utf-8", "surrogateescape")


def _fetchall(conn: sqlite3.Connection, sql: str, params: tuple = ()) -> list:
    """``conn.execute(sql, params).fetchall()`` for the inspector's readers: one TEXT value that
    is not UTF-8 (a title written by a foreign tool) does not fail the whole query; the rows are
    read again with :func:`lenient_text` (only then: the plain decoder is the fast path)."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "decode" not in str(exc).lower():
            raise
    conn.text_factory = lenient_text
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.text_factory = str


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()]


# ---------------------------------------------------------------- schema


@dataclass(frozen=True)
class StateDbSchema:
    """What a state.db contains: tables/views, the columns of the two core tables, versions."""

    tables: frozenset[str]
    session_columns: tuple[str, ...]
    message_columns: tuple[str, ...]
    schema_version: int | None
    user_version: int

    @property
    def has_sessions(self) -> bool:
        return "sessions" in self.tables and "id" in self.session_columns

    @property
    def has_transcripts(self) -> bool:
        return "messages" in self.tables and {"session_id", "role", "content"} <= set(self.message_columns)


def _schema_version(conn: sqlite3.Connection, tables: frozenset[str]) -> int | None:
    if "schema_version" not in tables or "version" not in _columns(conn, "schema_version"):
        return None
    kind = conn.execute("SELECT type FROM sqlite_master WHERE name = 'schema_version'").fetchone()
    if kind is None or kind[0] != "table":
        return None  # a view could be any query
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    value = row[0] if row else None
    return value if isinstance(value, int) else None


def _read_schema(conn: sqlite3.Connection, path: Path | str = "state.db") -> StateDbSchema:
    """The schema; StateDbError when ``sessions``/``messages`` is not a plain table."""
    _require_plain_tables(conn, path)
    sql = "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
    tables = frozenset(r[0] for r in conn.execute(sql).fetchall())
    return StateDbSchema(
        tables=tables,
        session_columns=tuple(_columns(conn, "sessions")) if "sessions" in tables else (),
        message_columns=tuple(_columns(conn, "messages")) if "messages" in tables else (),
        schema_version=_schema_version(conn, tables),
        user_version=int(conn.execute("PRAGMA user_version").fetchone()[0]),
    )


def read_schema(path: Path | str, timeout: float | None = None) -> StateDbSchema:
    """Introspect the database (PRAGMA table_info, sqlite_master, versions); StateDbError on failure."""
    try:
        with closing(open_readonly(path, timeout)) as conn:
            return _read_schema(conn, path)
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, path)) from exc


def _require_sessions(schema: StateDbSchema, path: Path | str) -> None:
    if "sessions" not in schema.tables:
        raise StateDbError(f"{path} has no sessions table: not a Hermes agent state.db (or an empty one)")
    if "id" not in schema.session_columns:
        raise StateDbError(f"{path}: the sessions table has no id column (unsupported schema)")


# ---------------------------------------------------------------- decoding


def _loads_maybe_twice(text: str) -> Any:
    value = json.loads(text)
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def decode_content(value: Any) -> Any:
    """Decode the agent's ``"\\x00json:"`` content sentinel defensively.

    A list/dict stored as ``\\x00json:<json>`` comes back as that list/dict (a value encoded
    twice is unwrapped once more); bad JSON is returned as the original text. Anything else
    is returned unchanged. (hermes-webui itself never decodes the sentinel.)
    """
    if not isinstance(value, str) or not value.startswith(CONTENT_JSON_PREFIX):
        return value
    try:
        return _loads_maybe_twice(value[len(CONTENT_JSON_PREFIX) :])
    except (ValueError, RecursionError):
        return value


def decode_json_column(value: Any) -> Any:
    """A JSON text column (``tool_calls``, ``reasoning_details``...), tolerating double encoding."""
    if not isinstance(value, str):
        return value
    try:
        return _loads_maybe_twice(value)
    except (ValueError, RecursionError):
        return value


# ---------------------------------------------------------------- catalogue


_CATALOGUE_FIELDS = (
    "id",
    "source",
    "title",
    "model",
    "started_at",
    "parent_session_id",
    "message_count",
    "profile_name",
    "last_activity_at",
)


def _col(columns: tuple[str, ...], name: str, prefix: str = "s.") -> str:
    return f"{prefix}{name}" if name in columns else "NULL"


def _catalogue_sql(schema: StateDbSchema, one_id: bool) -> str:
    sc, mc = schema.session_columns, schema.message_columns
    fields = ", ".join(f"{_col(sc, name)} AS {name}" for name in _CATALOGUE_FIELDS)
    if "messages" in schema.tables and "session_id" in mc:
        where = "WHERE (active IS NULL OR active != 0)" if "active" in mc else ""
        if one_id:
            where = (where + " AND" if where else "WHERE") + " session_id = ?"
        last = "MAX(timestamp)" if "timestamp" in mc else "NULL"
        join = (
            f"LEFT JOIN (SELECT session_id, COUNT(*) AS n, {last} AS last_ts FROM messages {where} "
            "GROUP BY session_id) m ON m.session_id = s.id"
        )
        counts = "COALESCE(m.n, 0) AS n, m.last_ts AS last_ts"
    else:
        join, counts = "", "NULL AS n, NULL AS last_ts"
    sql = f"SELECT {fields}, {counts} FROM sessions s {join}"
    if one_id:
        return sql + " WHERE s.id = ?"
    return sql + (" ORDER BY COALESCE(s.started_at, 0) DESC" if "started_at" in sc else "")


def _number(value: Any) -> float | None:
    """An SQLite number as a float (SQLite gives int or float, never bool)."""
    cls = value.__class__
    return float(value) if cls is float or cls is int else None


_RECORD_KEYS = (*_CATALOGUE_FIELDS, "messages", "last_message_at")


def _record(row: tuple) -> dict:
    rec = dict(zip(_RECORD_KEYS, row, strict=True))
    rec["last_activity"] = _last_activity(rec["last_activity_at"], rec["last_message_at"], rec["started_at"])
    return rec


def _last_activity(last_activity_at: Any, last_message_at: Any, started_at: Any) -> float | None:
    """The newer of the two activity times (numbers only), else ``started_at`` (a number), else None."""
    a, b = _number(last_activity_at), _number(last_message_at)
    if a is None:
        return b if b is not None else _number(started_at)
    return b if b is not None and b > a else a


def list_sessions(path: Path | str, timeout: float | None = None) -> list[dict]:
    """One record per ``sessions`` row (newest ``started_at`` first), for the catalogue.

    Keys: ``id``, ``source``, ``title``, ``model``, ``started_at``, ``parent_session_id``,
    ``message_count`` (the column), ``profile_name``, ``last_activity_at`` (the column),
    ``messages`` (number of active ``messages`` rows: ``active IS NULL OR active != 0`` when
    the column exists; None when messages cannot be counted), ``last_message_at`` (newest
    message timestamp) and ``last_activity`` (the newest of those two times, else
    ``started_at``). Missing optional columns read as None. One query (a GROUP BY join).
    """
    joined, counts, rows = _sessions_and_counts(path, timeout, _CATALOGUE_FIELDS)
    if joined is not None:
        return [_record(row) for row in joined]
    out = []
    for row in rows:
        sid = row[0]
        n, last = counts.get(sid, (0, None)) if sid is not None else (0, None)
        out.append(_record((*row, n, last)))
    return out


# What the catalogue reads of a record (SessionRow; the list and the fact cache keep them: the
# rest of list_sessions' keys would only be cached, pickled to the window and kept, 57,500 times)
CATALOGUE_RECORD_KEYS = ("id", "source", "title", "messages", "last_activity")
# the columns they come from (the counts aside)
_CATALOGUE_RECORD_FIELDS = ("id", "source", "title", "started_at", "last_activity_at")


def list_catalogue_records(path: Path | str, timeout: float | None = None) -> list[dict]:
    """:func:`list_sessions`' records with only :data:`CATALOGUE_RECORD_KEYS`, in its order: each
    ``{k: record[k] for k in CATALOGUE_RECORD_KEYS}``, from a query of the columns they come from
    (and the same GROUP BY of the messages) instead of every record's nine. At 50,000 sessions
    0.63 s of the first open's CPU went to list_sessions and its records cut down after."""
    joined, counts, rows = _sessions_and_counts(path, timeout, _CATALOGUE_RECORD_FIELDS)
    if joined is not None:
        records = [_record(row) for row in joined]
        return [{k: rec[k] for k in CATALOGUE_RECORD_KEYS} for rec in records]
    out = []
    no_messages = (0, None)
    for sid, source, title, started_at, last_activity_at in rows:
        n, last = counts.get(sid, no_messages) if sid is not None else no_messages
        out.append(
            {
                "id": sid,
                "source": source,
                "title": title,
                "messages": n,
                "last_activity": _last_activity(last_activity_at, last, started_at),
            }
        )
    return out


def _sessions_and_counts(
    path: Path | str, timeout: float | None, fields: tuple[str, ...]
) -> tuple[list | None, dict, list]:
    """(the one-query join's rows, else None; the active messages' counts and newest times by
    session id; the ``sessions`` rows of ``fields``) for :func:`list_sessions` and
    :func:`list_catalogue_records`: with hermes' ids (see :func:`_ids_compare_as_text`) the
    GROUP BY and the sessions apart, to be joined in Python (SQLite would otherwise build an
    automatic index over the grouped counts for the LEFT JOIN: twice the time), else the rows of
    the join in SQL (:func:`_catalogue_sql`: every record's columns). StateDbError on failure."""
    try:
        with closing(open_readonly(path, timeout)) as conn:
            schema = _read_schema(conn, path)
            _require_sessions(schema, path)
            counts_sql = _message_counts_sql(schema)
            if counts_sql is None or not _ids_compare_as_text(conn):
                return _fetchall(conn, _catalogue_sql(schema, one_id=False)), {}, []
            counts = {sid: (n, last) for sid, n, last in _fetchall(conn, counts_sql) if sid is not None}
            return None, counts, _fetchall(conn, _sessions_sql(schema, fields))
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, path)) from exc


def _ids_compare_as_text(conn: sqlite3.Connection) -> bool:
    """Whether ``sessions.id`` and ``messages.session_id`` are both declared ``TEXT`` with no
    collation (hermes' schema): then SQL's ``=`` between them is Python's ``==`` of the values
    (text stays text, blobs stay blobs) and the counts can be joined in a dict. Other declared
    types convert values as they are compared (a TEXT ``'7'`` equals an INTEGER ``7``) and a
    collation may ignore case: those join in SQL (:func:`_catalogue_sql`)."""
    for table, column in (("sessions", "id"), ("messages", "session_id")):
        declared = [r[2] for r in conn.execute(f"PRAGMA table_info({table})").fetchall() if r[1] == column]
        if declared != ["TEXT"] and [d.strip().upper() for d in declared] != ["TEXT"]:
            return False
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name IN (?, ?)", CORE_TABLES).fetchall()
    return not any("COLLATE" in str(row[0]).upper() for row in sql)


def _message_counts_sql(schema: StateDbSchema) -> str | None:
    """``session_id, COUNT(*), MAX(timestamp)`` of active messages per session (None: no messages)."""
    mc = schema.message_columns
    if "messages" not in schema.tables or "session_id" not in mc:
        return None
    where = "WHERE (active IS NULL OR active != 0)" if "active" in mc else ""
    last = "MAX(timestamp)" if "timestamp" in mc else "NULL"
    return f"SELECT session_id, COUNT(*), {last} FROM messages {where} GROUP BY session_id"


def _sessions_sql(schema: StateDbSchema, names: tuple[str, ...]) -> str:
    sc = schema.session_columns
    fields = ", ".join(f"{_col(sc, name)} AS {name}" for name in names)
    order = " ORDER BY COALESCE(s.started_at, 0) DESC" if "started_at" in sc else ""
    return f"SELECT {fields} FROM sessions s{order}"


def session_record(path: Path | str, session_id: str, timeout: float | None = None) -> dict | None:
    """The :func:`list_sessions` record of one session, or None when state.db has no such row."""
    try:
        with closing(open_readonly(path, timeout)) as conn:
            schema = _read_schema(conn, path)
            _require_sessions(schema, path)
            sql = _catalogue_sql(schema, one_id=True)
            found = _fetchall(conn, sql, (session_id,) * sql.count("?"))
            row = found[0] if found else None
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, path)) from exc
    return _record(row) if row is not None else None


# ---------------------------------------------------------------- transcripts


def _transcript_sql(schema: StateDbSchema, active_only: bool) -> str:
    mc = schema.message_columns
    fields = ["role", "content"] + [c for c in _TRANSCRIPT_OPTIONAL if c in mc]
    for flag in ("active", "compacted", "_compressed_summary"):
        fields.append(flag if flag in mc else f"NULL AS {flag}")
    fields.append("id" if "id" in mc else "rowid AS id")
    where = "session_id = ?"
    if active_only and "active" in mc:
        where += " AND (active IS NULL OR active != 0)"
    order = "id" if "id" in mc else "rowid"
    return f"SELECT {', '.join(fields)} FROM messages WHERE {where} ORDER BY {order}"


def _display_message(row: sqlite3.Row) -> dict:
    keys = row.keys()
    msg: dict[str, Any] = {"id": row["id"], "role": row["role"], "content": decode_content(row["content"])}
    for key in _TRANSCRIPT_OPTIONAL:
        if key in keys and row[key] is not None:
            msg[key] = decode_json_column(row[key]) if key in _JSON_COLUMNS else row[key]
    msg["active"] = row["active"] is None or row["active"] != 0
    msg["compacted"] = bool(row["compacted"])
    msg["compressed_summary"] = bool(row["_compressed_summary"])
    return msg


def read_transcript(
    path: Path | str, session_id: str, *, active_only: bool = False, timeout: float | None = None
) -> list[dict]:
    """The messages of one session for display, in canonical (``id``) order.

    Each dict has ``id``, ``role``, ``content`` (the ``\\x00json:`` sentinel decoded), the
    optional columns that are present and not NULL (``timestamp``, ``tool_calls`` decoded,
    ``tool_call_id``, ``tool_name``, ``reasoning``...), and the flags ``active`` (NULL counts
    as active), ``compacted`` and ``compressed_summary``. ``active_only`` drops rewound and
    compaction-archived rows.
    """
    try:
        with closing(open_readonly(path, timeout)) as conn:
            conn.row_factory = sqlite3.Row
            schema = _read_schema(conn, path)
            if not schema.has_transcripts:
                raise StateDbError(
                    f"{path}: no usable messages table (needs session_id, role and content): "
                    "an older or foreign schema"
                )
            rows = _fetchall(conn, _transcript_sql(schema, active_only), (session_id,))
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, path)) from exc
    return [_display_message(r) for r in rows]


def _like_pattern(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search_text(
    path: Path | str, text: str, *, limit: int = 500, timeout: float | None = None
) -> tuple[list[dict], list[dict]]:
    """Sessions titles and messages of one state.db that contain ``text`` (SQLite's ``LIKE``:
    case-insensitive for ASCII), read-only. Returns ``(titles, messages)``: ``{"session_id",
    "title"}`` and ``{"session_id", "id", "role", "content"}`` (the sentinel decoded), each at
    most ``limit`` rows. StateDbError when the database cannot be read."""
    pattern = _like_pattern(text)
    try:
        with closing(open_readonly(path, timeout)) as conn:
            schema = _read_schema(conn, path)
            titles: list[dict] = []
            if schema.has_sessions and "title" in schema.session_columns:
                rows = _fetchall(
                    conn,
                    "SELECT id, title FROM sessions WHERE title LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
                    (pattern, limit),
                )
                titles = [{"session_id": r[0], "title": r[1]} for r in rows]
            messages: list[dict] = []
            if schema.has_transcripts:
                order = "id" if "id" in schema.message_columns else "rowid"
                rows = _fetchall(
                    conn,
                    f"SELECT session_id, {order}, role, content FROM messages "
                    f"WHERE content LIKE ? ESCAPE '\\' ORDER BY {order} LIMIT ?",
                    (pattern, limit),
                )
                messages = [
                    {"session_id": r[0], "id": r[1], "role": r[2], "content": decode_content(r[3])}
                    for r in rows
                ]
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, path)) from exc
    return titles, messages


class SessionRowsReader:
    """One read-only connection and its checked schema (:func:`_read_schema`: a view or virtual
    table is refused, as by every reader) for many per-session queries: the materializer's
    warnings ask two questions of each of up to thousands of rows, and opening the database and
    checking its schema each time cost more than the questions. Each query gets the full
    :data:`QUERY_DEADLINE`. Raises StateDbError like the functions it serves."""

    def __init__(self, path: Path | str, timeout: float | None = None) -> None:
        self.path = path
        self.conn = open_readonly(path, timeout)
        try:
            self.schema = _read_schema(self.conn, path)
        except sqlite3.Error as exc:
            self.conn.close()
            raise StateDbError(describe_sqlite_error(exc, path)) from exc
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> SessionRowsReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def reading(self) -> Iterator[tuple[sqlite3.Connection, StateDbSchema]]:
        self.conn.restart_deadline()
        yield self.conn, self.schema


@contextlib.contextmanager
def _session_reader(
    path: Path | str, timeout: float | None, reader: SessionRowsReader | None
) -> Iterator[tuple[sqlite3.Connection, StateDbSchema]]:
    """(connection, schema): ``reader``'s, or of a connection opened (and closed) for one query."""
    if reader is not None:
        with reader.reading() as got:
            yield got
        return
    with closing(open_readonly(path, timeout)) as conn:
        yield conn, _read_schema(conn, path)


def _dropped_cases(mc: set[str]) -> dict[str, str]:
    """:func:`dropped_field_counts`' keys, each with the SQL ``CASE`` (1 or 0) it sums over a
    session's messages."""
    cases = {
        c: f"CASE WHEN {c} IS NOT NULL AND {c} != '' THEN 1 ELSE 0 END"
        for c in DROPPED_BY_MATERIALIZER
        if c in mc
    }
    if "active" in mc:
        cases["inactive"] = "CASE WHEN active = 0 THEN 1 ELSE 0 END"
    cases["json_content"] = (
        "CASE WHEN hex(substr(CAST(content AS BLOB), 1, 6)) = '006A736F6E3A' THEN 1 ELSE 0 END"
    )
    return cases


def dropped_field_counts(
    path: Path | str, session_id: str, timeout: float | None = None, reader: SessionRowsReader | None = None
) -> dict[str, int]:
    """How many of a session's rows carry data hermes' recovery materializer drops.

    Keys: each column of :data:`DROPPED_BY_MATERIALIZER` that exists, plus ``inactive`` (rows
    with ``active = 0``, which the materializer includes anyway) and ``json_content`` (rows
    whose content is the raw ``\\x00json:`` sentinel). Raises StateDbError. ``reader``: an open
    connection of ``path`` to ask instead of opening one.
    """
    try:
        with _session_reader(path, timeout, reader) as (conn, schema):
            mc = schema.message_columns
            if not schema.has_transcripts:
                return {}
            parts = {key: f"SUM({case})" for key, case in _dropped_cases(set(mc)).items()}
            sql = f"SELECT {', '.join(parts.values())} FROM messages WHERE session_id = ?"
            row = conn.execute(sql, (session_id,)).fetchone()
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, path)) from exc
    return {key: int(value or 0) for key, value in zip(parts, row, strict=True)}


def materialization_defects(
    path: Path | str, session_id: str, timeout: float | None = None, reader: SessionRowsReader | None = None
) -> list[dict]:
    """Rows of a session that hermes' recovery materializer shows wrongly, in its row order.

    One dict per affected row: ``index`` (its position in the materialized ``messages``, the
    materializer's own ``ORDER BY``), ``role`` and ``defects``, a list of
    ``"empty_tool_call"`` (an assistant row whose only output was tool calls: written as an
    empty row, its ``tool_calls`` dropped; the names are in ``tools``), ``"inactive"`` (``active
    = 0``: taken back, or archived by compaction when ``compacted = 1``, in ``compacted``) and
    ``"json_content"`` (content in the agent's ``\\x00json:`` encoding, copied raw). Raises
    StateDbError. ``reader``: as for :func:`dropped_field_counts`.
    """
    try:
        with _session_reader(path, timeout, reader) as (conn, schema):
            mc = set(schema.message_columns)
            if not schema.has_transcripts:  # messages with session_id, role and content
                return []
            order = "timestamp, id" if {"timestamp", "id"} <= mc else "rowid"
            sql = (
                f"SELECT role, content, {_defect_columns(mc)} FROM messages WHERE session_id = ? "
                f"ORDER BY {order}"
            )
            rows = _fetchall(conn, sql, (session_id,))  # a non-UTF-8 text value does not fail the query
    except sqlite3.Error as exc:
        raise StateDbError(describe_sqlite_error(exc, path)) from exc
    out: list[dict] = []
    for index, (role, content, tool_calls, active, compacted) in enumerate(rows):
        _add_defects(out, index, role, content, tool_calls, active, compacted)
    return out


def _defect_columns(message_cols: set[str]) -> str:
    """The columns :func:`_add_defects` reads besides role and content, as a select list (NULL for
    one the table lacks): the one list of :func:`materialization_defects` and
    :func:`_messages_with_facts`."""
    return ", ".join(
        c if c in message_cols else f"NULL AS {c}" for c in ("tool_calls", "active", "compacted")
    )


def _add_defects(
    out: list[dict], index: int, role: Any, content: Any, tool_calls: Any, active: Any, compacted: Any
) -> None:
    """Append to ``out`` the :func:`materialization_defects` entry of the message at ``index`` (its
    columns as read), if it has a defect."""
    defects: list[str] = []
    entry: dict[str, Any] = {"index": index, "role": role}
    calls = decode_json_column(tool_calls) if tool_calls not in (None, "") else None
    if role == "assistant" and not content and calls:
        defects.append("empty_tool_call")
        entry["tools"] = [_tool_name(c) for c in calls] if isinstance(calls, list) else []
    if active is not None and active == 0:
        defects.append("inactive")
        entry["compacted"] = bool(compacted)
    if isinstance(content, str) and content.startswith(CONTENT_JSON_PREFIX):
        defects.append("json_content")
    if defects:
        entry["defects"] = defects
        out.append(entry)


def _tool_name(call: Any) -> str:
    if isinstance(call, dict):
        fn = call.get("function")
        name = fn.get("name") if isinstance(fn, dict) else call.get("name")
        if isinstance(name, str) and name:
            return name
    return "?"


# ---------------------------------------------------------------- hermes' recovery readers


def _hermes_sessions_sql(session_cols: set[str]) -> str:
    exprs = [
        name if name in session_cols else f"{fallback} AS {name}"
        for name, fallback in _RECOVERY_SESSION_COLUMNS
    ]
    return (
        f"SELECT id, source, {', '.join(exprs)} FROM sessions WHERE source = 'webui' "
        "ORDER BY COALESCE(started_at, 0) DESC"
    )


@dataclass(frozen=True)
class WarningFacts:
    """What :func:`dropped_field_counts` (``counts``) and :func:`materialization_defects`
    (``defects``) answer for one session, found in the very query that read its messages for
    :func:`read_missing_sidecar_rows` (so a materialize's warnings need no second read of them)."""

    counts: dict[str, int]
    defects: list[dict]


def _messages_with_facts(
    conn: sqlite3.Connection, message_cols: set[str], sid: str, order: str, ts_expr: str
) -> tuple[list[dict], WarningFacts] | None:
    """hermes' messages of ``sid`` (as :func:`_hermes_messages` makes them: the same rows, in
    the same order) and their :class:`WarningFacts`, from one query that also selects what the
    two warning queries select: each of :func:`dropped_field_counts`' ``CASE`` s (one bit each
    of a number per message, summed here) and ``tool_calls``, ``active`` and ``compacted``
    (walked by :func:`materialization_defects`' own rule). None when that query fails (a TEXT
    value that is not UTF-8 in a column hermes does not read, a value too large...): the caller
    then reads the messages with hermes' own query, and the warnings are asked as before."""
    cases = _dropped_cases(message_cols)
    flags = " | ".join(f"(({case}) << {bit})" for bit, case in enumerate(cases.values()))
    sql = (
        f"SELECT role, content, {ts_expr}, {flags}, {_defect_columns(message_cols)} FROM messages "
        f"WHERE session_id = ? ORDER BY {order}"
    )
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        rows = cursor.execute(sql, (sid,)).fetchall()
    except Exception:  # noqa: BLE001 - hermes' own query decides (and raises what it raises)
        return None
    totals = [0] * len(cases)
    out: list[dict] = []
    defects: list[dict] = []
    for index, (role, content, timestamp, bits, tool_calls, active, compacted) in enumerate(rows):
        message = {"role": role, "content": content or ""}
        if timestamp is not None:
            message["timestamp"] = timestamp
        out.append(message)
        if bits:
            for bit in range(len(totals)):
                if bits >> bit & 1:
                    totals[bit] += 1
        if (
            (active is not None and active == 0)  # what each of the three defects needs, at least
            or (tool_calls is not None and not content)
            or (isinstance(content, str) and content.startswith(CONTENT_JSON_PREFIX))
        ):
            _add_defects(defects, index, role, content, tool_calls, active, compacted)
    return out, WarningFacts(dict(zip(cases, totals, strict=True)), defects)


def _hermes_messages(
    conn: sqlite3.Connection, message_cols: set[str], sid: str, facts: dict[str, WarningFacts] | None = None
) -> list[dict]:
    if not {"session_id", "role", "content"} <= message_cols:
        return []
    order = "timestamp, id" if {"timestamp", "id"} <= message_cols else "rowid"
    ts_expr = "timestamp" if "timestamp" in message_cols else "NULL AS timestamp"
    if facts is not None:
        got = _messages_with_facts(conn, message_cols, sid, order, ts_expr)
        if got is not None:
            facts[sid] = got[1]
            return got[0]
    out = []
    sql = f"SELECT role, content, {ts_expr} FROM messages WHERE session_id = ? ORDER BY {order}"
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples (role, content, timestamp): no sqlite3.Row per message
    for role, content, timestamp in cursor.execute(sql, (sid,)).fetchall():
        message = {"role": role, "content": content or ""}
        if timestamp is not None:
            message["timestamp"] = timestamp
        out.append(message)
    return out


def _hermes_rows(
    conn: sqlite3.Connection,
    include_empty: bool,
    sidecar_exists: Callable[[str], bool],
    is_tombstoned: Callable[[str], bool],
    facts: dict[str, WarningFacts] | None = None,
) -> list[dict]:
    conn.row_factory = sqlite3.Row
    if not_plain_tables(conn):
        raise StateDbError("not a plain sessions/messages table")  # hermes' error path: no rows
    session_cols = set(_columns(conn, "sessions"))
    message_cols = set(_columns(conn, "messages"))
    if not {"id", "source"} <= session_cols:
        return []
    rows = []
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: most rows have a sidecar and are dropped unread
    cursor.execute(_hermes_sessions_sql(session_cols))
    names = [d[0] for d in cursor.description]
    for row in cursor.fetchall():
        sid = str(row[0] or "").strip()  # the first column is id
        if not sid or sidecar_exists(sid):
            continue
        data = {}
        for name, value in zip(names, row, strict=True):
            data.setdefault(name, value)  # dict(sqlite3.Row): the first column of a repeated name
        tombstoned = is_tombstoned(sid)
        if tombstoned and not include_empty:
            continue
        messages = _hermes_messages(conn, message_cols, sid, facts)
        if not messages and not include_empty:
            continue
        data["messages"] = messages
        data["_state_db_empty_messages"] = not messages
        if tombstoned:
            data["_state_db_deleted_webui_tombstone"] = True
        rows.append(data)
    return rows


def read_missing_sidecar_rows(
    session_dir: Path,
    state_db_path: Path | None,
    *,
    include_empty: bool = False,
    sidecar_exists: Callable[[str], bool] | None = None,
    is_tombstoned: Callable[[str], bool] | None = None,
    timeout: float | None = None,
    facts: dict[str, WarningFacts] | None = None,
) -> list[dict]:
    """hermes' ``_read_state_db_missing_sidecar_rows``: ``source='webui'`` rows without a sidecar.

    Exactly hermes' semantics (session-recovery §3.4): ``[]`` when the db is None/missing,
    when ``sessions`` lacks ``id``/``source``, or on *any* error; the fixed column list with
    NULL (``0`` for ``started_at``/``message_count``) substitutes; ``source = 'webui'`` exact;
    ``ORDER BY COALESCE(started_at, 0) DESC``; the stripped id skipped when empty or when
    ``<sid>.json`` exists; tombstoned ids skipped unless ``include_empty``; messages only when
    ``messages`` has session_id/role/content, ordered ``timestamp, id`` (else rowid), no
    ``active`` filter, content raw (never decoded). Each row gains ``messages``,
    ``_state_db_empty_messages`` and, when tombstoned, ``_state_db_deleted_webui_tombstone``.

    ``sidecar_exists(sid)`` and ``is_tombstoned(sid)`` default to the on-disk checks;
    ``timeout`` defaults to :data:`HERMES_TIMEOUT` (hermes' 5 s). ``facts``, when given, gets the
    :class:`WarningFacts` of each session whose messages were read (keyed by the stripped id),
    from the same query (a session whose facts could not be had that way is left out of it).
    """
    if state_db_path is None or not Path(state_db_path).exists():
        return []
    if sidecar_exists is None:

        def sidecar_exists(sid: str) -> bool:
            return (Path(session_dir) / f"{sid}.json").exists()

    if is_tombstoned is None:

        def is_tombstoned(sid: str) -> bool:
            return is_durably_tombstoned(Path(session_dir), sid)

    try:
        with closing(open_readonly(state_db_path, HERMES_TIMEOUT if timeout is None else timeout)) as conn:
            return _hermes_rows(conn, include_empty, sidecar_exists, is_tombstoned, facts)
    except Exception:  # hermes swallows every error here and reports nothing
        if facts is not None:
            facts.clear()
        return []


def state_db_has_session(
    state_db_path: Path | None, session_id: str, *, timeout: float | None = None
) -> bool:
    """hermes' fail-open ``_state_db_has_session`` (session-recovery §3.3).

    True when the path is None or missing, when there is no ``sessions`` table, or on any
    error (locked, corrupt...). False only when a readable ``sessions`` table has no row with
    ``id = session_id``. ``source`` is not looked at.
    """
    if state_db_path is None or not Path(state_db_path).exists():
        return True
    try:
        with closing(open_readonly(state_db_path, HERMES_TIMEOUT if timeout is None else timeout)) as conn:
            found = conn.execute(
                "select 1 from sqlite_master where type='table' and name='sessions'"
            ).fetchone()
            if found is None or "sessions" in not_plain_tables(conn):
                return True  # computed columns: treated as an unreadable table (hermes' error path)
            row = conn.execute("select 1 from sessions where id = ? limit 1", (session_id,)).fetchone()
            return row is not None
    except Exception:  # fail open, as hermes does
        return True


class SessionPresence:
    """:func:`state_db_has_session` for many ids over one connection, with the same answers
    (fail-open: True when the file is missing, has no ``sessions`` table, or on any error).
    Each query runs on its own (autocommit), as hermes' fresh connection per call would see it.
    Use as a context manager."""

    def __init__(self, state_db_path: Path | None, *, timeout: float | None = None) -> None:
        self._conn: GuardedConnection | None = None
        self._open = False  # False: every answer is True (missing file, no table, cannot open)
        if state_db_path is None or not Path(state_db_path).exists():
            return
        try:
            self._conn = open_readonly(state_db_path, HERMES_TIMEOUT if timeout is None else timeout)
            found = self._conn.execute(
                "select 1 from sqlite_master where type='table' and name='sessions'"
            ).fetchone()
            # a table with computed columns could make every lookup slow: hermes' error path
            self._open = found is not None and "sessions" not in not_plain_tables(self._conn)
        except Exception:  # fail open, as hermes does
            self._open = False

    def __call__(self, session_id: str) -> bool:
        if not self._open or self._conn is None:
            return True
        try:
            self._conn.restart_deadline()
            return (
                self._conn.execute("select 1 from sessions where id = ? limit 1", (session_id,)).fetchone()
                is not None
            )
        except Exception:  # fail open, as hermes does
            return True

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> SessionPresence:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def probe(path: Path | str | None, timeout: float | None = None) -> str | None:
    """None when ``path`` reads as a database with a sessions table, else why not (for warnings)."""
    if path is None:
        return "no state.db path"
    try:
        schema = read_schema(path, timeout)
        _require_sessions(schema, path)
    except StateDbError as exc:
        return str(exc)
    return None
