"""A new SQLite file holding only some sessions' rows of an agent ``state.db``, same schema.

For support bundles (issue 17): never a raw copy of a live database (spec state-db §8.7: a copy
of the main file loses what is still in ``-wal`` and may be torn) and never the other sessions'
rows. The live file is only read, through :func:`~inspector.store.statedb.open_readonly`, with
short statements; everything is written into a fresh file:

1. the schema is re-created from ``sqlite_master`` in its own order: plain tables first, then
   views and virtual tables (whose shadow tables SQLite makes itself);
2. rows are copied: ``sessions`` where ``id`` is chosen, every table with a ``session_id``
   column where ``session_id`` is chosen, and the two metadata tables ``schema_version`` and
   ``state_meta`` whole. Every other table is left empty (named in the result);
3. indexes, then FTS5 tables over external content are rebuilt (so they index only the copied
   rows), then triggers are created: no trigger fires while rows are copied, so every value
   is the live one;
4. ``user_version`` and ``application_id`` are carried over; ``PRAGMA integrity_check`` must
   answer ``ok`` or the extract is refused.

A virtual table whose module or tokenizer this SQLite lacks (the agent's ``cjk_unicode61``)
cannot be created; it is left out with the triggers that write to it, and named.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from inspector.store.statedb import StateDbError, describe_sqlite_error, is_virtual_table_sql, open_readonly

WHOLE_TABLES = frozenset({"schema_version", "state_meta"})
_SHADOW_SUFFIXES = ("_data", "_idx", "_content", "_docsize", "_config", "_segments", "_segdir", "_stat")
_CHUNK = 500  # ids per IN list (SQLite builds limited to 999 variables)


@dataclass
class Extract:
    """What went into an extract: rows per table and what had to be left out."""

    sessions: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    empty_tables: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "sessions": self.sessions,
            "rows": self.rows,
            "tables_left_empty": self.empty_tables,
            "left_out": self.left_out,
        }


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _is_shadow(name: str, virtual: set[str]) -> bool:
    return any(name.startswith(v) and name[len(v) :] in _SHADOW_SUFFIXES for v in virtual)


def _mentions(sql: str, names: set[str]) -> bool:
    return any(re.search(r"(?<![\w$])" + re.escape(n) + r"(?![\w$])", sql) for n in names)


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(table)})").fetchall()]


def _copy_rows(
    src: sqlite3.Connection, dst: sqlite3.Connection, table: str, where: str | None, ids: list[str]
) -> int:
    cols = _columns(src, table)
    if not cols:
        return 0
    col_list = ", ".join(_quote(c) for c in cols)
    insert = f"INSERT INTO {_quote(table)} ({col_list}) VALUES ({', '.join('?' * len(cols))})"
    select = f"SELECT {col_list} FROM {_quote(table)}"
    copied = 0
    if where is None:
        rows = src.execute(select + " ORDER BY rowid").fetchall()
        dst.executemany(insert, rows)
        return len(rows)
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        rows = src.execute(
            f"{select} WHERE {_quote(where)} IN ({', '.join('?' * len(chunk))}) ORDER BY rowid", chunk
        ).fetchall()
        dst.executemany(insert, rows)
        copied += len(rows)
    return copied


def _table_filter(src: sqlite3.Connection, table: str) -> str | None | bool:
    """The column that ties a table's rows to a session; None = copy whole; False = leave empty."""
    if table in WHOLE_TABLES:
        return None
    cols = _columns(src, table)
    if table == "sessions" and "id" in cols:
        return "id"
    if "session_id" in cols:
        return "session_id"
    return False


def extract_sessions(source: Path, dest: Path, session_ids: list[str]) -> Extract:
    """Write ``dest`` (must not exist) with the schema of ``source`` and only ``session_ids``' rows.

    Raises StateDbError (a sentence for the user) when the source cannot be read or the extract
    does not pass ``PRAGMA integrity_check``; ``dest`` is then removed.
    """
    ids = sorted(set(session_ids))
    result = Extract()
    try:
        with closing(open_readonly(source)) as src:
            master = src.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
            ).fetchall()
            versions = (
                src.execute("PRAGMA user_version").fetchone()[0],
                src.execute("PRAGMA application_id").fetchone()[0],
            )
            virtual = {
                name for kind, name, _t, sql in master if kind == "table" and is_virtual_table_sql(sql)
            }
            tables = [
                name
                for kind, name, _t, sql in master
                if kind == "table"
                and name not in virtual
                and not name.startswith("sqlite_")
                and not _is_shadow(name, virtual)
            ]
            filters = {t: _table_filter(src, t) for t in tables}
            with closing(sqlite3.connect(f"file:{dest.as_posix()}?mode=rwc", uri=True)) as dst:
                _build(src, dst, master, virtual, tables, filters, ids, result)
                dst.execute(f"PRAGMA user_version={int(versions[0])}")
                dst.execute(f"PRAGMA application_id={int(versions[1])}")
                dst.commit()
                check = dst.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.Error as exc:
        dest.unlink(missing_ok=True)
        raise StateDbError(describe_sqlite_error(exc, source)) from exc
    except StateDbError:
        dest.unlink(missing_ok=True)
        raise
    if check != [("ok",)]:
        dest.unlink(missing_ok=True)
        raise StateDbError(f"the extract of {source} failed its integrity check: {check[:3]}")
    return result


def _build(src, dst, master, virtual, tables, filters, ids, result: Extract) -> None:
    dst.execute("PRAGMA foreign_keys=OFF")
    by_name = {name: (kind, sql) for kind, name, _t, sql in master}
    for t in tables:
        dst.execute(by_name[t][1])
    missing: set[str] = set()
    for kind, name, _t, sql in master:  # views and virtual tables, in their order
        if kind == "view" or name in virtual:
            try:
                dst.execute(sql)
            except sqlite3.OperationalError as exc:
                missing.add(name)
                result.left_out.append(f"{kind} {name}: {exc}")
    for t in tables:
        where = filters[t]
        if where is False:
            result.empty_tables.append(t)
            continue
        result.rows[t] = _copy_rows(src, dst, t, where, ids)
    result.sessions = result.rows.get("sessions", 0)
    for kind, _name, tbl, sql in master:
        if kind == "index" and tbl in tables:
            dst.execute(sql)
    for name in sorted(virtual - missing):
        if re.search(r"content\s*=\s*'[^']+'", by_name[name][1]):  # external content: index the copy
            try:
                dst.execute(f"INSERT INTO {_quote(name)}({_quote(name)}) VALUES ('rebuild')")
            except sqlite3.OperationalError as exc:
                result.left_out.append(f"index of {name} not rebuilt: {exc}")
    for kind, name, tbl, sql in master:
        if kind != "trigger":
            continue
        if tbl in missing or _mentions(sql, missing):
            result.left_out.append(f"trigger {name}: it writes to a table left out")
            continue
        dst.execute(sql)
