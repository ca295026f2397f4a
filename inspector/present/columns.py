"""The session list's columns and sort keys, without Qt: the child process that reads the catalogue
sorts its rows as the list shows them (:func:`sorted_rows`), so the window's own thread does not."""

from __future__ import annotations

from operator import itemgetter, ne
from typing import Any

from inspector.present.rows import ROW_FIELDS, FlatRow, ListRow

_HEALTH_RANK = {"ok": 0, "info": 1, "warning": 2, "error": 3}


class Column:
    HEALTH, TITLE, SESSION_ID, WHERE, PROFILE, MESSAGES, LAST_ACTIVITY, PROBLEM = range(8)
    HEADERS = ("", "Title", "Session id", "Where", "Profile", "Messages", "Last activity", "Problem")
    TOOLTIPS = (
        "Health: the worst finding of the session",
        "The chat title",
        "The session id (the sidecar file name)",
        "Where the session lives: sidecar, state.db, both, or only a .bak",
        "The Hermes profile the session belongs to",
        "Messages: in the chat's own file (sidecar) / in the agent's database (state.db); – where there is none",
        "Newest activity (sidecar update, pending turn or state.db message)",
        "What is wrong, in words: the worst finding of the session",
    )


def sort_key(row: ListRow, col: int) -> Any:
    """What the list sorts a row by in column ``col`` (ties: by session id)."""
    if col == Column.HEALTH:
        return _HEALTH_RANK.get(row.health, 0) * 1e11 + (row.last_activity or 0.0)
    if col == Column.TITLE:
        return (row.title or "").casefold()
    if col == Column.SESSION_ID:
        return row.session_id
    if col == Column.WHERE:
        return row.where
    if col == Column.PROFILE:
        return row.profile.casefold()
    if col == Column.MESSAGES:
        return max(row.sidecar_messages or 0, row.state_db_messages or 0)
    if col == Column.LAST_ACTIVITY:
        return float(row.last_activity or 0.0)
    if col == Column.PROBLEM:
        return (_HEALTH_RANK.get(row.health, 0), row.problem)
    return 0


def sorted_rows(rows: list[ListRow], column: int, descending: bool) -> list[ListRow]:
    """``rows`` in the order the list shows them when sorted by ``column``."""
    return sorted(rows, key=lambda r: (sort_key(r, column), r.session_id), reverse=descending)


_ID, _TITLE, _PROFILE, _WHERE, _SIDECAR_MSGS, _STATE_DB_MSGS, _ACTIVITY, _HEALTH, _PROBLEM = (
    ROW_FIELDS.index(name)
    for name in (
        "session_id",
        "title",
        "profile",
        "where",
        "sidecar_messages",
        "state_db_messages",
        "last_activity",
        "health",
        "problem",
    )
)

_ID_OF, _WHERE_OF = itemgetter(_ID), itemgetter(_WHERE)


def _value_key(column: int):
    """:func:`sort_key` of a flat record (:data:`inspector.present.rows.ROW_FIELDS`): the value
    :func:`sorted_rows` sorts a row by in ``column``, without making it a ListRow first."""
    if column == Column.HEALTH:
        return lambda f: _HEALTH_RANK.get(f[_HEALTH], 0) * 1e11 + (f[_ACTIVITY] or 0.0)
    if column == Column.TITLE:
        return lambda f: (f[_TITLE] or "").casefold()
    if column == Column.SESSION_ID:
        return _ID_OF
    if column == Column.WHERE:
        return _WHERE_OF
    if column == Column.PROFILE:
        return lambda f: f[_PROFILE].casefold()
    if column == Column.MESSAGES:
        return lambda f: max(f[_SIDECAR_MSGS] or 0, f[_STATE_DB_MSGS] or 0)
    if column == Column.LAST_ACTIVITY:
        return lambda f: float(f[_ACTIVITY] or 0.0)
    if column == Column.PROBLEM:
        return lambda f: (_HEALTH_RANK.get(f[_HEALTH], 0), f[_PROBLEM])
    return lambda f: 0


def _record_key(column: int):
    """What :func:`sorted_rows` sorts a flat record by: its :func:`_value_key`, ties by session id."""
    value = _value_key(column)
    return lambda f: (value(f), f[_ID])


def sorted_records(records: list[FlatRow], column: int, descending: bool) -> list[FlatRow]:
    """Flat records in the order :func:`sorted_rows` gives their rows (the child sorts the
    catalogue's records as the list shows them: 57,500 rows at 50,000 sessions, no ListRow made).

    That order is :func:`_record_key`'s: a column's value, ties by session id. Where no value is
    unequal to itself (a NaN time is: its order in a tuple is not a plain one), the records are
    sorted by session id and then, stably, by the value alone: the same order (stable sorts,
    ``reverse`` included, keep the order of equal keys; the ids of equal values stay in the first
    sort's order), with no tuple made or compared per row.
    Sorting 57,500 records by their last activity took 36-72 ms with the tuples (in a fresh
    process, as the list's first complete paint waits for it), 29-31 ms so."""
    if column == Column.SESSION_ID:
        return sorted(records, key=_ID_OF, reverse=descending)
    by_id = sorted(records, key=_ID_OF, reverse=descending)
    keys = list(map(_value_key(column), by_id))
    if not any(map(ne, keys, keys)):  # no NaN (nor anything else unequal to itself)
        order = sorted(range(len(keys)), key=keys.__getitem__, reverse=descending)
        return [by_id[i] for i in order]
    return sorted(records, key=_record_key(column), reverse=descending)
