"""Help ▸ Keyboard Shortcuts (F1), Help ▸ Using the Window (the README's guide) and Help ▸ About.

The shortcut list is read from the window's own actions, so it cannot drift from what the keys
do; a few keys that belong to one widget (the search box, the preview) are added in words.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from inspector.about import about_lines

# Keys that are not a menu action: (keys, what they do).
WIDGET_KEYS: list[tuple[str, str]] = [
    ("Down / Return (in the search box)", "Move into the session list"),
    ("Tab / Shift+Tab", "Move between the search box, filters, session list, repair buttons and views"),
    ("Up / Down (in the session list)", "Show the previous / next session"),
    ("Alt+W (in a preview)", "Write the previewed change (Return and Esc cancel: Return never writes)"),
    ("Esc (in a preview)", "Cancel: nothing is written"),
]


def _menu_path(action: QAction) -> str:
    text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    return text.rstrip("…").strip()


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what) for every action of ``window`` with a shortcut, then the widget keys."""
    rows: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for action in window.findChildren(QAction):
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = [k for k in keys if k]
        if not keys or not action.text():
            continue
        row = (" / ".join(keys), _menu_path(action))
        if row not in seen:
            seen.add(row)
            rows.append(row)
    return rows + WIDGET_KEYS


class ShortcutsDialog(QDialog):
    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.setObjectName("ShortcutsDialog")
        self.resize(640, 560)
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Keys", "What they do"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setTabKeyNavigation(False)
        for r, (keys, what) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(keys))
            self.table.setItem(r, 1, QTableWidgetItem(what))
        self.table.resizeColumnToContents(0)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)

    def rows(self) -> list[tuple[str, str]]:
        return [
            (self.table.item(r, 0).text(), self.table.item(r, 1).text()) for r in range(self.table.rowCount())
        ]


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("About Hermes Session Inspector")
        self.setObjectName("AboutDialog")
        self.text = QLabel("\n\n".join(about_lines()))
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setMinimumWidth(420)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)


GUIDE_HEADING = "### Using the window"
_IMAGE = re.compile(r"^!\[[^\]]*\]\([^)]*\)\s*$", re.MULTILINE)


def guide_text(readme: str | None = None) -> str:
    """The README's "Using the window" section as Markdown, without its screenshots (the window is
    right there); a sentence when the README cannot be found. The README is read from the checkout
    when the inspector runs from one, else from the installed package's description."""
    if readme is None:
        readme = _readme()
    if readme is None or GUIDE_HEADING not in readme:
        return "The guide is not installed with this copy of the inspector; the README of the project has it."
    section = readme.split(GUIDE_HEADING, 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    return "## Using the window\n" + _IMAGE.sub("", section).strip() + "\n"


def _readme() -> str | None:
    beside = Path(__file__).resolve().parents[2] / "README.md"
    try:
        return beside.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    try:
        meta = metadata.metadata("hermes-session-inspector")
    except metadata.PackageNotFoundError:
        return None
    return meta.get_payload() or meta.get("Description")  # type: ignore[attr-defined]


class GuideDialog(QDialog):
    """Help ▸ Using the Window: what each part of the window does, and the keys."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Using the window")
        self.setObjectName("GuideDialog")
        self.resize(760, 600)
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)  # nothing is fetched or followed
        self.text.setMarkdown(guide_text())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
