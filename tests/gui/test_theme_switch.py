"""Switching between light and dark while the window runs repaints everything that carries the
inspector's own colours: transcript blocks, the journal's dropped lines, the raw JSON, the Compare
tab's rows, and an open preview's diff and messages (issue 16)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from inspector.gui.compare_view import Column as CompareColumn
from inspector.gui.compare_view import kind_colour
from inspector.gui.journal_view import EventColumn
from inspector.gui.resources import colours, is_dark
from inspector.transcript_align import ONLY_RIGHT
from tests.gui.conftest import open_home, wait_settled


@pytest.fixture
def restore_palette(qapp):
    original = QPalette(QGuiApplication.palette())
    yield
    QApplication.setPalette(original)
    QApplication.processEvents()


def _switch(dark: bool) -> None:
    QApplication.setPalette(QPalette(QColor("#202124" if dark else "#efefef")))
    QApplication.processEvents()
    assert is_dark() is dark


def _foregrounds(document) -> set[str]:
    """The foreground colours the document's text is written in (its own formats, not the highlighter's)."""
    out = set()
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.hasProperty(fmt.Property.ForegroundBrush):
                out.add(fmt.foreground().color().name())
            it += 1
        block = block.next()
    return out


def _highlighted(document) -> set[str]:
    """The colours a syntax highlighter gave the document's lines."""
    out = set()
    block = document.begin()
    while block.isValid():
        for r in block.layout().formats():
            if r.format.hasProperty(r.format.Property.ForegroundBrush):
                out.add(r.format.foreground().color().name())
        block = block.next()
    return out


def test_light_dark_switch_repaints_transcript_journal_raw_and_compare(
    qtbot, window, demo, demo_home, restore_palette
):
    _switch(dark=False)
    light = colours()
    open_home(qtbot, window, demo_home, select=demo.sessions["stale_pending"])  # dropped journal lines
    view = window.view
    qtbot.waitUntil(lambda: view.journal.model.rowCount() > 0, timeout=60_000)
    view.tabs.setCurrentWidget(view.raw)
    qtbot.waitUntil(lambda: view.raw._highlighter is not None, timeout=60_000)
    view.tabs.setCurrentWidget(view.compare)
    qtbot.waitUntil(lambda: view.compare.alignment() is not None, timeout=60_000)
    view.tabs.setCurrentIndex(0)
    assert light.role_user.name() in _foregrounds(view.transcript.browser.document())
    light_muted = view.transcript._muted().name()  # the message numbers and times
    dropped = next(r for r in range(view.journal.model.rowCount()) if view.journal.model.line(r).dropped)

    _switch(dark=True)
    dark = colours()
    assert dark.role_user != light.role_user
    qtbot.waitUntil(
        lambda: dark.role_user.name() in _foregrounds(view.transcript.browser.document()), timeout=60_000
    )
    assert light.role_user.name() not in _foregrounds(view.transcript.browser.document())
    dark_muted = view.transcript._muted().name()
    assert dark_muted != light_muted and dark_muted in _foregrounds(view.transcript.browser.document())
    assert light_muted not in _foregrounds(view.transcript.browser.document())
    cell = view.journal.model.index(dropped, EventColumn.PAYLOAD)
    assert cell.data(Qt.ItemDataRole.BackgroundRole).color() == dark.dropped_background
    raw_colours = _highlighted(view.raw.json.document())
    assert dark.json_key.name() in raw_colours and light.json_key.name() not in raw_colours
    only = next(
        r for r in range(view.compare.model.rowCount()) if view.compare.model.row(r).kind == ONLY_RIGHT
    )
    wash = view.compare.model.index(only, CompareColumn.RIGHT).data(Qt.ItemDataRole.BackgroundRole).color()
    assert wash == kind_colour(ONLY_RIGHT) and wash.rgb() == dark.added.rgb()


def test_light_dark_switch_repaints_an_open_preview(qtbot, window, demo, demo_home, restore_palette):
    _switch(dark=False)
    light = colours()
    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    preview = window.preview
    assert preview is not None and preview.diffs and preview.message_views
    assert light.added.name() in _foregrounds(preview.message_views[0].text.document())
    # a highlighter colours its document a turn after it is set on it
    qtbot.waitUntil(lambda: light.added.name() in _highlighted(preview.diffs[0].document()), timeout=60_000)

    _switch(dark=True)
    dark = colours()
    messages = _foregrounds(preview.message_views[0].text.document())
    assert dark.added.name() in messages and light.added.name() not in messages
    qtbot.waitUntil(lambda: dark.added.name() in _highlighted(preview.diffs[0].document()), timeout=60_000)
    assert light.added.name() not in _highlighted(preview.diffs[0].document())
    preview.reject()
    wait_settled(qtbot, window)
