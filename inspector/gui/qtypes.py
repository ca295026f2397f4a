"""Qt type aliases and helpers shared by the window's item models."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invalid parent index of a flat table


class OneCallPerCell:
    """Mix into a Python item model (before the Qt base class): a painted cell asks for all its
    roles (display, font, alignment, colours, check state, icon) in one ``multiData`` call into
    Python, answered from the model's own ``data``, instead of one call from Qt per role, each
    waiting for the GIL and wrapping the index anew. Every role of the span is set or cleared:
    the delegate hands the same span in for every cell. Such a model leaves ``flags`` to Qt
    (enabled, selectable, no children: ``QAbstractTableModel``'s own), one call per painted cell
    fewer into Python."""

    def multiData(self, index: QModelIndex, span) -> None:  # noqa: N802 - Qt's name
        value_of = self.role_values(index)
        for item in span:
            value = value_of(item.role())
            if value is None:
                item.clearData()
            else:
                item.setData(value)

    def role_values(self, index: QModelIndex):
        """``role -> value`` for one cell: what ``data(index, role)`` gives (a model with a faster
        way to answer many roles of one cell overrides this)."""
        data = self.data
        return lambda role: data(index, role)


def unshaped_text(widget: QWidget) -> None:
    """Draw a table's cells without the typographic shaping Latin text does not need (kerning,
    ligatures; scripts that need shaping still get it: ``QFont.PreferNoShaping``). Shaping each
    cell's text anew was a sixth of every paint of the session list (10,000 rows: 12 ms a paint)."""
    font = QFont(widget.font())
    font.setStyleStrategy(font.styleStrategy() | QFont.StyleStrategy.PreferNoShaping)
    widget.setFont(font)


def single_shot(parent: QObject, interval_ms: int, slot: Callable[[], object]) -> QTimer:
    """A single-shot timer owned by ``parent`` that calls ``slot`` when it fires; ``start()`` it
    (again) to have it fire ``interval_ms`` later, once."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer
