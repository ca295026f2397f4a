"""Qt type aliases shared by the window's item models."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invalid parent index of a flat table
