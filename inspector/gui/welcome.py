"""The window with no home open: Open Home…, the demo, and the recent homes (issue 16)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.about import about_lines
from inspector.textsafe import safe_text

RECENT_ROLE = Qt.ItemDataRole.UserRole


class WelcomePage(QWidget):
    open_home_requested = Signal()
    open_demo_requested = Signal()
    recent_requested = Signal(dict)  # an entry of MainWindow.recent_homes()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("WelcomePage")
        title = QLabel("Hermes Session Inspector")
        title.setObjectName("HeaderTitle")
        intro = QLabel(
            "Open a Hermes home (the folder that holds webui/ and state.db, usually ~/.hermes) to "
            "see its chats, what is wrong with them and how to fix it. Nothing is written until you "
            "preview a repair and press Write; every write can be undone."
        )
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        self.open_button = QPushButton("&Open Home…")
        self.open_button.setObjectName("WelcomeOpen")
        self.open_button.clicked.connect(self.open_home_requested)
        self.demo_button = QPushButton("Open the &Demo")
        self.demo_button.setObjectName("WelcomeDemo")
        self.demo_button.setToolTip(
            "A made-up home with one chat of each problem, in a temporary folder; "
            "its write log and backups stay with it"
        )
        self.demo_button.clicked.connect(self.open_demo_requested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.demo_button)
        buttons.addStretch(1)
        self.recent_label = QLabel("Recent homes")
        self.recent = QListWidget()
        self.recent.setObjectName("WelcomeRecent")
        self.recent.setMaximumHeight(8 * (self.fontMetrics().height() + 10))
        self.recent.itemActivated.connect(lambda item: self.recent_requested.emit(item.data(RECENT_ROLE)))
        self.note = QLabel()
        self.note.setObjectName("Warnings")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.hide()
        version = QLabel(about_lines()[0] + " · " + about_lines()[1])
        version.setObjectName("HeaderDetails")
        version.setWordWrap(True)
        box = QWidget()
        box.setMaximumWidth(760)
        inner = QVBoxLayout(box)
        inner.setContentsMargins(0, 48, 0, 12)
        inner.setSpacing(10)
        inner.addWidget(title)
        inner.addWidget(intro)
        inner.addLayout(buttons)
        inner.addWidget(self.note)
        inner.addSpacing(12)
        inner.addWidget(self.recent_label)
        inner.addWidget(self.recent)
        inner.addStretch(1)
        inner.addWidget(version)
        outer = QHBoxLayout(self)
        outer.addStretch(1)
        outer.addWidget(box, 4)
        outer.addStretch(1)

    def set_recent(self, items: list[dict]) -> None:
        self.recent.clear()
        for item in items:
            label = (
                item["home"]
                if not item.get("state_dir")
                else f"{item['home']}  (state folder {item['state_dir']})"
            )
            entry = QListWidgetItem(safe_text(label))
            entry.setData(RECENT_ROLE, item)
            self.recent.addItem(entry)
        self.recent.setVisible(bool(items))
        self.recent_label.setText("Recent homes" if items else "No recent homes yet.")
        if items:
            self.recent.setCurrentRow(0)

    def set_note(self, text: str | None) -> None:
        """A line above the recent homes (a home that could not be opened, and why)."""
        self.note.setText(safe_text(text or ""))
        self.note.setVisible(bool(text))
