"""Message content is untrusted: HTML and script are shown as the characters they are."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument

from inspector.gui.transcript_view import SafeTextBrowser
from tests.gui.conftest import open_home


def test_html_and_script_in_a_message_are_literal_text(qtbot, window, demo, demo_home):
    sid = demo.sessions["healthy_work"]
    open_home(qtbot, window, demo_home, select=sid)
    browser = window.view.transcript.browser
    text = browser.toPlainText()
    assert "<script>alert(1)</script> <b>bold?</b> <img src=http://example.com/x.png>" in text
    html = browser.document().toHtml()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html and "<img" not in html and "<b>bold" not in html
    # Nothing in the document is an image or a link to anything but the reasoning toggles.
    doc = browser.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            assert not fmt.isImageFormat()
            if fmt.isAnchor():
                assert fmt.anchorHref().startswith(("reasoning:", "earlier:"))
            it += 1
        block = block.next()


def test_the_transcript_browser_never_loads_resources(qtbot):
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    assert (
        browser.loadResource(QTextDocument.ResourceType.ImageResource.value, QUrl("http://example.com/x.png"))
        is None
    )
    assert not browser.openExternalLinks() and not browser.openLinks()
    browser.setSource(QUrl("http://example.com/"))
    assert browser.source().isEmpty()


def test_html_in_a_title_is_shown_as_text(qtbot, window, demo, demo_home):
    import json

    sid = demo.sessions["healthy"]
    path = demo.session_dir / f"{sid}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"] = "<b>bold</b><img src=x>"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    open_home(qtbot, window, demo_home, select=sid)
    assert window.view.header.title.text() == "<b>bold</b><img src=x>"
    assert window.view.header.title.textFormat().name == "PlainText"
