"""The session list: one row per session id of the home, sorted and filtered by the model itself.

The model holds :class:`inspector.present.rows.ListRow` values (the flat records a child process
sends; a :class:`inspector.catalogue.SessionRow` handed to it is flattened first). It sorts on plain sort keys and
filters on the search text, the "needs attention" switch and the profile, with no proxy model
in between: a ``QSortFilterProxyModel`` called back into Python for every one of 10,000 rows on
each reset and several times for every painted cell, which made each repaint of the list cost
the window 25-50 ms. The view now asks Python for the cells on screen only, once per cell
(:meth:`SessionTableModel.role_values`, through ``qtypes.OneCallPerCell``).
"""

from __future__ import annotations

import time
from operator import itemgetter
from typing import Any

from PySide6.QtCore import QAbstractTableModel, Qt

from inspector.export import format_time
from inspector.gui.qtypes import ROOT, Index, OneCallPerCell
from inspector.gui.resources import health_icon
from inspector.gui.tooltip import plain_tooltip
from inspector.jobs.pool import run_steps
from inspector.present.columns import Column, sort_key
from inspector.present.rows import FlatRow, ListRow
from inspector.textsafe import one_line

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
SESSION_ID_ROLE = Qt.ItemDataRole.UserRole + 2
ROW_ROLE = Qt.ItemDataRole.UserRole + 3
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 4

CHECKING_TOOLTIP = "Checking health…"
FIXED_WORDS = "✓ Fixed"  # the Problem cell of a session just repaired (see keep_fixed)
_HEALTH_WORDS = {"ok": "healthy", "info": "note", "warning": "needs attention", "error": "broken"}

# Roles as plain values (looked up once, not on each of the thousands of calls a paint makes)
_DISPLAY, _DECORATION, _TOOLTIP = (
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.DecorationRole,
    Qt.ItemDataRole.ToolTipRole,
)
_ACCESSIBLE, _ALIGNMENT = Qt.ItemDataRole.AccessibleTextRole, Qt.ItemDataRole.TextAlignmentRole
# Roles this model never answers: a painted cell asks for each of them
_NO_DATA_ROLES = frozenset(
    int(r)
    for r in (
        Qt.ItemDataRole.FontRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.BackgroundRole,
        Qt.ItemDataRole.CheckStateRole,
        Qt.ItemDataRole.SizeHintRole,
        Qt.ItemDataRole.StatusTipRole,
        Qt.ItemDataRole.WhatsThisRole,
        Qt.ItemDataRole.EditRole,
    )
)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
PREPARE_BATCH = 1000  # rows per step of prepare_steps (about a millisecond)
POSITIONS_BATCH = 8000  # ids per step of their positions (flat records: about a millisecond)
_FIRST = itemgetter(0)  # a flat record's session id


def _no_value(_role: int) -> None:
    return None


def findings_tooltip(row: ListRow) -> str:
    """Plain-text tooltip listing the row's findings."""
    if not row.findings:
        return "Healthy: no findings"
    lines = [f"{_HEALTH_WORDS.get(row.health, row.health).capitalize()}:"]
    for f in row.findings:
        action = f"  → {f.action}" if f.action else ""
        lines.append(f"• {f.severity}: {one_line(f.message, 160)}{action}")
    return "\n".join(lines)


def short_time(value: float | None, now: float | None = None) -> str:
    """``Nov 30 06:14`` this year, ``2025-11-30`` before; the tooltip has the full time."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        return "–"
    try:
        when = time.localtime(value)
        this_year = time.localtime(now if now is not None else time.time()).tm_year
        return time.strftime("%b %d %H:%M" if when.tm_year == this_year else "%Y-%m-%d", when)
    except (OverflowError, OSError, ValueError):
        return str(value)


def _count(value: int | None) -> str:
    return "–" if value is None else str(value)


class PreparedRows(list):
    """Rows from :meth:`SessionTableModel.prepare`: entries in order, and each id's position."""

    positions: dict[str, int] | None = None


class _Entry:
    """One row; its cells and sort keys are worked out on first use and then kept (the view asks
    for the same cells many times, but only for the rows on screen: a 10,000-row fill stays cheap).

    Given a flat record (the catalogue's rows as the child sends them), it makes the
    :class:`ListRow` when the row is first asked for: the first complete paint asks for the rows
    on screen only (at 50,000 sessions, preparing the 57,500 rows took 52-65 ms making them
    all, 40-49 ms without)."""

    __slots__ = ("_row", "_flat", "_display", "keys", "_haystack")

    def __init__(self, row: ListRow | FlatRow | Any):
        if row.__class__ is tuple:
            self._row: ListRow | None = None
            self._flat: FlatRow | None = row
        else:
            self._row = ListRow.of(row)
            self._flat = None
        self._display: tuple[str | None, ...] | None = None
        self.keys: dict[int, Any] | None = None  # (made at the first key: 57,500 rows at 50,000 sessions)
        self._haystack: str | None = None

    @property
    def row(self) -> ListRow:
        row = self._row
        if row is None:
            row = self._row = ListRow(self._flat)
            self._flat = None
        return row

    @property
    def session_id(self) -> str:
        row = self._row
        return self._flat[0] if row is None else row.session_id

    @property
    def display(self) -> tuple[str | None, ...]:
        if self._display is None:
            self._display = tuple(
                SessionTableModel.cell_text(self.row, c) for c in range(len(Column.HEADERS))
            )
        return self._display

    def key(self, col: int) -> Any:
        keys = self.keys
        if keys is None:
            keys = self.keys = {}
        try:
            return keys[col]
        except KeyError:
            value = keys[col] = sort_key(self.row, col)
            return value

    @property
    def haystack(self) -> str:
        """What the search box matches: title and id, case-folded."""
        if self._haystack is None:
            self._haystack = f"{self.row.session_id}\n{self.row.title or ''}".casefold()
        return self._haystack


_entry = _Entry


class SessionTableModel(OneCallPerCell, QAbstractTableModel):
    """Rows of the catalogue, one per session id. It sorts (see :meth:`sort`) and filters
    (:meth:`set_query`, :meth:`set_attention_only`, :meth:`set_profile`) itself."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._all: list[_Entry] = []  # every row, in the sort order
        self._rows: list[_Entry] = []  # the rows the filters let through, in the same order
        self._listed: dict[str, tuple[ListRow, list]] = {}  # update_findings: the row, its catalogue findings
        self._pos: dict[str, int] = {}  # position among the shown rows, by session id
        self._all_pos: dict[
            str, int
        ] = {}  # position among all rows (the same dict when none is filtered out)
        self._sort: tuple[int, Qt.SortOrder] | None = None
        self._checking = False
        self._query = ""
        self._attention_only = False
        self._profile: str | None = None
        self._text_matches: frozenset[str] = frozenset()
        self._match_notes: dict[str, str] = {}
        self._fixed: str | None = None  # a session just repaired: shown (marked fixed) whatever the filters

    # ------------------------------------------------------------ Qt interface

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(Column.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(Column.HEADERS):
            return None
        if role == _DISPLAY:
            return Column.HEADERS[section]
        if role == _TOOLTIP:
            return Column.TOOLTIPS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        return self._value(index.row(), index.column(), role)

    def role_values(self, index: Index):
        """A painted cell's roles (see :class:`OneCallPerCell`), with what a paint asks for
        answered here without a call."""
        row, col = index.row(), index.column()
        if not (index.isValid() and 0 <= row < len(self._rows) and 0 <= col < len(Column.HEADERS)):
            return _no_value
        entry = self._rows[row]

        def value_of(role: int) -> Any:
            if role == _DISPLAY:
                return (
                    self._fixed_words(entry) if col == Column.PROBLEM and self._fixed else entry.display[col]
                )
            if role in _NO_DATA_ROLES:
                return None
            if role == _ALIGNMENT:
                return _RIGHT if col == Column.MESSAGES else None
            return self._value(row, col, role)

        return value_of

    def _value(self, pos: int, col: int, role: int) -> Any:
        if not 0 <= pos < len(self._rows) or not 0 <= col < len(Column.HEADERS):
            return None
        entry = self._rows[pos]
        if role == _DISPLAY:
            return self._fixed_words(entry) if col == Column.PROBLEM and self._fixed else entry.display[col]
        row = entry.row
        if role == _DECORATION:
            if col != Column.HEALTH:
                return None
            return None if self._checking and not row.findings else health_icon(row.health)
        if role == _ALIGNMENT:
            return _RIGHT if col == Column.MESSAGES else None
        if role == _TOOLTIP:
            if self._checking and col == Column.HEALTH and not row.findings:
                return CHECKING_TOOLTIP
            note = (
                self._match_notes.get(row.session_id) if col == Column.TITLE and self._match_notes else None
            )
            if note is not None:
                return plain_tooltip(f"{one_line(row.title, 400) or '(untitled)'}\n\nFound in {note}")
            return plain_tooltip(self._tooltip(row, col))
        if role == _ACCESSIBLE and col == Column.HEALTH:
            if self._checking and not row.findings:
                return "checking health"
            return _HEALTH_WORDS.get(row.health, row.health)
        if role == SORT_ROLE:
            return entry.key(col)
        if role == SESSION_ID_ROLE:
            return row.session_id
        if role == ROW_ROLE:
            return row
        if role == SEARCH_ROLE:
            return entry.haystack
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows in Python with precomputed keys (one C-level sort instead of a Qt
        comparison calling back into Python for every pair: 10,000 sessions stay instant)."""
        if not 0 <= column < len(Column.HEADERS):
            return
        self._sort = (column, order)
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        ids = [self._rows[i.row()].session_id for i in old]
        _sort_entries(self._all, column, order)
        self._all_pos = {e.session_id: i for i, e in enumerate(self._all)}
        self._rows = self._filtered()
        self._pos = (
            self._all_pos if self._rows is self._all else {e.session_id: i for i, e in enumerate(self._rows)}
        )
        self.changePersistentIndexList(
            old, [self.index(self._pos[sid], i.column()) for sid, i in zip(ids, old, strict=True)]
        )
        self.layoutChanged.emit()

    # ------------------------------------------------------------ cells

    @staticmethod
    def cell_text(row: ListRow, col: int) -> str | None:
        if col == Column.HEALTH:
            return None
        if col == Column.TITLE:
            return one_line(row.title, 200) or "(untitled)"
        if col == Column.SESSION_ID:
            return one_line(row.session_id, 80)
        if col == Column.WHERE:
            return row.where
        if col == Column.PROFILE:
            return one_line(row.profile, 40)
        if col == Column.MESSAGES:
            return f"{_count(row.sidecar_messages)} / {_count(row.state_db_messages)}"
        if col == Column.LAST_ACTIVITY:
            return short_time(row.last_activity)
        if col == Column.PROBLEM:
            return row.problem
        return None

    @staticmethod
    def _tooltip(row: ListRow, col: int) -> str | None:
        if col == Column.HEALTH:
            return findings_tooltip(row)
        if col == Column.TITLE:
            return one_line(row.title, 400) or None
        if col == Column.SESSION_ID:
            path = row.sidecar_path
            return f"{row.session_id}\n{path}" if path else row.session_id
        if col == Column.LAST_ACTIVITY:  # local time in the cell; here the full time and the raw value
            if not row.last_activity:
                return None
            return f"{format_time(row.last_activity)} local time (Unix time {row.last_activity})"
        if col == Column.PROBLEM:
            return findings_tooltip(row)
        if col == Column.MESSAGES:
            return (
                f"{_count(row.sidecar_messages)} message(s) in the sidecar, "
                f"{_count(row.state_db_messages)} in state.db"
            )
        if col == Column.WHERE:
            parts = [
                f"sidecar: {'yes' if row.sidecar_path else 'no'}",
                f".bak: {'yes' if row.has_bak else 'no'}",
                f"_index.json row: {'yes' if row.in_index else 'no'}",
                f"state.db: {row.state_db_profile or 'no'}",
            ]
            return "\n".join(parts)
        return None

    # ------------------------------------------------------------ updates

    def rows(self) -> list[ListRow]:
        """Every row, shown or filtered out, in the sort order."""
        return [e.row for e in self._all]

    def shown_rows(self) -> list[ListRow]:
        """The rows the filters let through, as the view shows them."""
        return [e.row for e in self._rows]

    def row_for(self, session_id: str) -> ListRow | None:
        pos = self._all_pos.get(session_id)
        return None if pos is None else self._all[pos].row

    def update_findings(self, session_id: str, findings: list) -> bool:
        """The row's findings become ``findings`` (what the session view found reading the whole
        session), so the list's health agrees with the view. True when something changed."""
        pos = self._all_pos.get(session_id)
        if pos is None:
            return False
        entry = self._all[pos]
        if list(entry.row.findings) == list(findings):
            return False
        self._listed[session_id] = (entry.row, self.catalogue_findings(session_id))
        entry.row.findings = list(findings)
        entry._display = None
        entry.keys = None
        shown = self._pos.get(session_id)
        if shown is not None:
            self.dataChanged.emit(self.index(shown, 0), self.index(shown, len(Column.HEADERS) - 1))
        return True

    def catalogue_findings(self, session_id: str) -> list:
        """The row's findings as the catalogue found them, before :meth:`update_findings` (the
        view merges its own with these; merging with an earlier merge would keep stale ones)."""
        row = self.row_for(session_id)
        if row is None:
            return []
        kept = self._listed.get(session_id)
        return list(kept[1]) if kept is not None and kept[0] is row else list(row.findings)

    def position(self, session_id: str) -> int | None:
        """The row's position in the view; None when it is unknown or filtered out."""
        return self._pos.get(session_id)

    def sort_state(self) -> tuple[int, Qt.SortOrder] | None:
        """The (column, order) the rows are sorted by, None before the first sort."""
        return self._sort

    @staticmethod
    def prepare(
        rows: list[ListRow], sort: tuple[int, Qt.SortOrder] | None = None, check=lambda: None
    ) -> list[_Entry]:
        """Rows as the model keeps them, with the sort key of ``sort``'s column worked out and
        sorted by it, so :meth:`set_rows` has less to do (:meth:`prepare_steps`, all at once)."""
        return run_steps(SessionTableModel.prepare_steps(rows, sort, check))

    @staticmethod
    def prepare_steps(
        rows: list[ListRow],
        sort: tuple[int, Qt.SortOrder] | None = None,
        check=lambda: None,
        *,
        presorted: bool = False,
    ):
        """:meth:`prepare` as steps of :data:`PREPARE_BATCH` rows (a generator returning the
        entries), for the GUI thread to run between paints (``jobs.pool.Resume``).
        ``presorted``: the rows are in ``sort``'s order already (``present.columns.sorted_rows``)."""
        entries = PreparedRows()
        for start in range(0, len(rows), PREPARE_BATCH):
            check()
            entries.extend(map(_Entry, rows[start : start + PREPARE_BATCH]))
            yield
        resorted = not presorted and sort is not None and 0 <= sort[0] < len(Column.HEADERS)
        if resorted:
            column, order = sort
            for start in range(0, len(entries), PREPARE_BATCH):
                for e in entries[start : start + PREPARE_BATCH]:
                    e.key(column)  # worked out and kept a batch per step; the sort only looks them up
                yield
            _sort_entries(entries, column, order)
            yield
        positions: dict[str, int] = {}
        # in the rows' order, flat records give their ids by position (one C call per batch
        # instead of a property call per entry: 57,500 rows 14-18 -> 6-7 ms)
        flat = not resorted and all(r.__class__ is tuple for r in rows)
        for start in range(0, len(entries), POSITIONS_BATCH):
            end = min(start + POSITIONS_BATCH, len(entries))
            if flat:
                positions.update(zip(map(_FIRST, rows[start:end]), range(start, end), strict=True))
            else:
                positions.update((entries[i].session_id, i) for i in range(start, end))
            yield
        entries.positions = positions
        return entries

    @property
    def checking(self) -> bool:
        """True while the rows come from the quick scan and their health is not known yet."""
        return self._checking

    def set_rows(
        self,
        rows: list[ListRow] | list[_Entry],
        *,
        checking: bool = False,
        sorted_by: tuple[int, Qt.SortOrder] | None | bool = False,
    ) -> None:
        """Replace the rows, in one model reset (10,000 rows: well under a millisecond here; the
        view then asks only for the rows on screen). The current sort and filters hold.
        ``checking``: the rows' health is not known yet (the quick first look at a home).
        ``rows`` may be :meth:`prepare`-d entries; ``sorted_by`` names the sort they were
        prepared with (``prepare``'s ``sort``): when that is still the model's sort, they are
        not sorted again. Views lose their current row in a reset: the window puts it back
        (``modelAboutToBeReset``/``modelReset``)."""
        entries = (
            rows
            if isinstance(rows, PreparedRows)
            else [r if isinstance(r, _Entry) else _Entry(r) for r in rows]
        )
        resort = self._sort is not None and sorted_by != self._sort
        positions = getattr(rows, "positions", None)
        if resort or positions is None or len(positions) != len(entries):
            entries = list(entries)
            if resort:
                _sort_entries(entries, *self._sort)
            positions = {e.session_id: i for i, e in enumerate(entries)}
        # (prepare()d rows in the model's sort come with their positions, worked out off the GUI thread)
        self.beginResetModel()
        self._checking = checking
        self._all = entries
        self._all_pos = positions
        self._rows = self._filtered()
        if self.filtering():
            self._reindex()
        else:
            self._pos = positions
        self.endResetModel()

    def clear(self) -> None:
        self.set_rows([])

    def _reindex(self) -> None:
        self._pos = {e.session_id: i for i, e in enumerate(self._rows)}

    # ------------------------------------------------------------ filters

    @property
    def query(self) -> str:
        return self._query

    def set_query(self, text: str) -> None:
        """Show the rows whose title or id contains ``text`` (case-insensitive, spaces folded)."""
        query = " ".join(text.split()).casefold()
        if query != self._query:
            self._query = query
            self._text_matches = frozenset()
            self._match_notes = {}
            self._refilter()

    def set_text_matches(
        self, query: str, session_ids: set[str] | frozenset[str], notes: dict[str, str] | None = None
    ) -> None:
        """Sessions whose text contains ``query`` (found by a background search where lost chats
        live) are shown too; ``notes``: where each matched, in words, for the title's tooltip."""
        if " ".join(query.split()).casefold() != self._query:
            return  # an answer to an older query
        self._text_matches = frozenset(session_ids)
        self._match_notes = dict(notes or {})
        self._refilter()

    def match_note(self, session_id: str) -> str | None:
        """Where the last search matched this session, in words (None: its title or id matched)."""
        return self._match_notes.get(session_id) if self._query else None

    def set_attention_only(self, on: bool) -> None:
        if on != self._attention_only:
            self._attention_only = on
            self._refilter()

    def set_profile(self, profile: str | None) -> None:
        if profile != self._profile:
            self._profile = profile
            self._refilter()

    def filtering(self) -> bool:
        return bool(self._query or self._attention_only or self._profile is not None)

    def _filtered(self) -> list[_Entry]:
        if not self.filtering():
            return self._all
        return [e for e in self._all if self._accepts(e)]

    def keep_fixed(self, session_id: str | None) -> None:
        """Keep a session just repaired in the list, whatever the filters, its Problem cell marked
        fixed when it no longer needs attention, until the user moves on (``None``: the filters
        apply to it again)."""
        if session_id == self._fixed:
            return
        self._fixed = session_id
        self._refilter()

    def kept_fixed(self) -> str | None:
        return self._fixed

    def _fixed_words(self, entry: _Entry) -> str | None:
        text = entry.display[Column.PROBLEM]
        if entry.row.session_id != self._fixed or entry.row.needs_attention:
            return text
        return FIXED_WORDS + (f" · {text}" if text else "")

    def _accepts(self, entry: _Entry) -> bool:
        row = entry.row
        if row.session_id == self._fixed:
            return True
        if self._attention_only and not row.needs_attention:
            return False
        if self._profile is not None and row.profile != self._profile:
            return False
        if self._query and self._query not in entry.haystack and row.session_id not in self._text_matches:
            return False
        return True

    def _refilter(self) -> None:
        self.beginResetModel()
        self._rows = self._filtered()
        if self.filtering():
            self._reindex()
        else:
            self._pos = self._all_pos
        self.endResetModel()


def _sort_entries(entries: list[_Entry], column: int, order: Qt.SortOrder) -> None:
    entries.sort(key=lambda e: (e.key(column), e.session_id), reverse=order == Qt.SortOrder.DescendingOrder)
