"""In the window, untrusted text is text: no label, document or tooltip renders it as HTML.

A home whose titles, messages, tool output and journal lines carry markup (an ``<img>`` of a
local file, ``<b>``, ``<script>``, a link) is opened and every session shown on every tab. Then
every widget is inspected the way Qt decides: a QLabel whose text holds the markup must be plain
text (or not look like rich text to ``Qt.mightBeRichText``, which is what AutoText uses); no text
document may hold an image or a link to anything outside the app; and every tooltip (item
models' and widgets') holding the markup must not look like rich text either, since QToolTip
renders rich text, images included.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # headless, even when run on its own
pytest.importorskip("PySide6")

from PySide6.QtCore import QModelIndex, QSettings, Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTabWidget, QTextEdit, QWidget

from inspector.home import locate_home
from tests.safety.helpers import demo

MARK = "EVILMARK"
MARKUP = f"<img src='file:///etc/hostname'><b>{MARK}</b><script>alert(1)</script><a href='http://x/'>x</a>"
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints"
pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _hostile(root: Path):
    d, home = demo(root)
    for scenario in ("healthy", "stale_pending", "lost_response"):
        path = d.session_dir / f"{d.sessions[scenario]}.json"
        obj = json.loads(path.read_bytes())
        obj["title"] = MARKUP
        obj["model"] = MARKUP
        for msg in obj["messages"]:
            if isinstance(msg, dict) and isinstance(msg.get("content"), str):
                msg["content"] = MARKUP
        path.write_bytes(json.dumps(obj, ensure_ascii=False, indent=2).encode())
    journal = next((d.session_dir / "_run_journal" / d.sessions["stale_pending"]).iterdir())
    with open(journal, "ab") as fh:
        run, sid = journal.stem, d.sessions["stale_pending"]
        fh.write(
            json.dumps(
                {
                    "version": 1,
                    "event_id": f"{run}:50",
                    "seq": 50,
                    "run_id": run,
                    "session_id": sid,
                    "event": "tool",
                    "type": "tool",
                    "created_at": 1,
                    "terminal": False,
                    "terminal_state": None,
                    "payload": {"name": MARKUP, "text": MARKUP},
                }
            ).encode()
            + b"\n"
        )
        fh.write(MARKUP.encode() + b"\n")
    return d, locate_home(d.home, None, None)


@pytest.fixture
def shown(qtbot, tmp_path):
    """(window, [every widget state seen]) after showing each hostile session on each tab."""
    from inspector.gui.main_window import MainWindow

    d, home = _hostile(tmp_path / "home")
    window = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    seen: list[tuple[str, str, str]] = []  # (kind, where, text)
    try:
        for scenario in ("healthy", "stale_pending", "lost_response"):
            window.open_home(home, select=d.sessions[scenario], remember=False)
            qtbot.waitUntil(window.is_settled, timeout=30_000)
            for tabs in window.findChildren(QTabWidget):
                for i in range(tabs.count()):
                    tabs.setCurrentIndex(i)
                    qtbot.wait(20)
                    qtbot.waitUntil(window.is_settled, timeout=30_000)
                    seen += _collect(window)
            seen += _collect(window)
    finally:
        window.runner.cancel_all()
        window.runner.wait(10_000)
    assert any(MARK in text for _, _, text in seen), "the hostile text was never shown"
    return seen


def _collect(window: QWidget) -> list[tuple[str, str, str]]:
    out = []
    for w in window.findChildren(QWidget):
        name = f"{type(w).__name__} {w.objectName()}"
        if w.toolTip():
            out.append(("tooltip", name, w.toolTip()))
        if isinstance(w, QLabel):
            kind = (
                "plainlabel"
                if w.textFormat() == Qt.TextFormat.PlainText
                else ("richlabel" if w.textFormat() == Qt.TextFormat.RichText else "autolabel")
            )
            out.append((kind, name, w.text()))
        if isinstance(w, QTextEdit):
            out.append(("document", name, w.document().toHtml()))
            out += _document_objects(w, name)
    for view in window.findChildren(QAbstractItemView):
        model = view.model()
        if model is None:
            continue
        stack = [QModelIndex()]
        while stack:
            parent = stack.pop()
            for r in range(min(model.rowCount(parent), 500)):
                for c in range(model.columnCount(parent)):
                    ix = model.index(r, c, parent)
                    for role, kind in (
                        (Qt.ItemDataRole.ToolTipRole, "tooltip"),
                        (Qt.ItemDataRole.DisplayRole, "cell"),
                    ):
                        value = model.data(ix, role)
                        if isinstance(value, str):
                            out.append((kind, f"{type(model).__name__}[{r},{c}]", value))
                    if c == 0 and model.rowCount(ix):
                        stack.append(ix)
    return out


def _document_objects(edit: QTextEdit, name: str) -> list[tuple[str, str, str]]:
    out = []
    block = edit.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                out.append(("image", name, fmt.toImageFormat().name()))
            if fmt.isAnchor():
                out.append(("anchor", name, fmt.anchorHref()))
            it += 1
        block = block.next()
    return out


def test_labels_and_documents_show_untrusted_markup_as_text(shown) -> None:
    rich = [
        (k, where, text[:90])
        for k, where, text in shown
        if MARK in text and (k == "richlabel" or (k == "autolabel" and GuiQt.mightBeRichText(text)))
    ]
    assert rich == [], f"labels that render untrusted text as HTML: {rich}"
    objects = [(k, where, text) for k, where, text in shown if k in ("image", "anchor")]
    assert not [o for o in objects if o[0] == "image"], f"images in a document: {objects}"
    assert all(
        not text.startswith(("http", "file", "ftp", "//")) and MARK not in text
        for k, _, text in objects
        if k == "anchor"
    ), objects
    docs = [text for k, _, text in shown if k == "document" and MARK in text]
    assert docs and all("<img" not in t and "<script" not in t for t in docs)


def test_tooltips_never_render_untrusted_markup(shown) -> None:
    # A tooltip Qt renders as HTML must carry the untrusted text escaped, never as live markup.
    rich = sorted(
        {
            (where, text[:90])
            for k, where, text in shown
            if k == "tooltip"
            and MARK in text
            and GuiQt.mightBeRichText(text)
            and any(tag in text.lower() for tag in ("<img", "<script", "<a ", "<iframe", "<b>"))
        }
    )
    assert rich == [], f"tooltips that render untrusted markup: {rich}"
