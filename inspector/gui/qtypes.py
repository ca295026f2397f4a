"""Qt type aliases and helpers shared by the window's item models."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invalid parent index of a flat table


class OneCallPerCell:
    """Mix into a Python item model (before the Qt base class): a painted cell asks for all its
    roles (display, font, alignment, colours, check state, icon) in one ``multiData`` call into
    Python, answered from the model's own ``data``, instead of one call from Qt per role, each
    waiting for the GIL and wrapping the index anew. Every role of the span is set or cleared:
    the delegate hands the same span in for every cell."""

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
