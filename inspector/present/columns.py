"""The session list's columns and sort keys, without Qt: the child process that reads the catalogue
sorts its rows as the list shows them (:func:`sorted_rows`), so the window's own thread does not."""

from __future__ import annotations

from typing import Any

from inspector.present.rows import ListRow

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
