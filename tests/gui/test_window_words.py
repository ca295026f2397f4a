"""No jargon and no command-line advice anywhere in the window (issue 16, "dead ends and guidance"):
every label, button, list cell and journal reason the demo home shows, and the previews of its
repairs, are read for hermes' internals ("branch A", ``str.splitlines()``), raw Unix times,
exception class names, status codes and commands to run."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QWidget

from inspector.gui.journal_view import EventColumn
from inspector.gui.session_model import SESSION_ID_ROLE
from inspector.repair.rebuild_from_state import NAME as REBUILD
from tests.gui.conftest import open_home, wait_settled

FORBIDDEN = {
    "hermes internals": re.compile(r"branch [AB]\b|splitlines|\b\w+='\w*'"),
    "a raw Unix time": re.compile(r"(?<![\w.])1[0-9]{9}(\.[0-9]+)?(?![\w.])"),
    "an exception class name": re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b"),
    "a status code": re.compile(r"\((not_found|timeout|failed|refused|different|identical)\)"),
    "command-line advice": re.compile(r"hermes-inspector\b|--action\b|--json\b|\brun `"),
}


def _texts(root: QWidget) -> list[str]:
    """What the user reads in ``root``: visible labels, buttons and combo box entries."""
    out = []
    for w in root.findChildren(QLabel):
        if w.isVisibleTo(root) and w.objectName() not in (
            "HeaderTitle",
            "PendingBanner",
        ):  # the chat's own words
            out.append(w.text())
    out += [b.text() for b in root.findChildren(QAbstractButton) if b.isVisibleTo(root)]
    for box in root.findChildren(QComboBox):
        out += [box.itemText(i) for i in range(box.count())]
    return out


def _check(texts: list[str], where: str) -> None:
    for text in texts:
        for what, pattern in FORBIDDEN.items():
            assert not pattern.search(text), f"{what} in {where}: {text!r}"


def test_no_jargon_or_command_line_advice_in_any_state_of_the_demo(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home)
    _check(_texts(window) + [window.statusBar().currentMessage()], "the window")
    all_reasons = []
    for r in range(window.model.rowCount()):
        sid = window.model.index(r, 0).data(SESSION_ID_ROLE)
        window.select_session(sid)
        wait_settled(qtbot, window)
        qtbot.waitUntil(
            lambda: window.plans is not None and not window.runner.is_busy("plans"), timeout=60_000
        )
        cells = [window.model.index(r, c).data() or "" for c in range(window.model.columnCount())]
        journal = window.view.journal.model
        reasons = [
            journal.index(j, EventColumn.PAYLOAD).data() or ""
            for j in range(journal.rowCount())
            if journal.line(j) is not None and journal.line(j).dropped
        ]
        _check(_texts(window) + cells + reasons + [w.sentence() for w in window.view.findings.words], sid)
        all_reasons += reasons
    assert any("invisible line-break character" in r for r in all_reasons)  # the demo's torn record was read


def test_the_previews_of_the_demos_repairs_are_in_words(qtbot, window, demo, demo_home):
    for name, action in (("lost_response", "recover-journal"), ("corrupt", REBUILD), ("stale_pending", None)):
        open_home(qtbot, window, demo_home, select=demo.sessions[name])
        qtbot.waitUntil(
            lambda: window.plans is not None and not window.runner.is_busy("plans"), timeout=60_000
        )
        if action is None:
            action = next(a for a, b in window.view.findings.buttons.items() if b.isEnabled())
        dialog = window.preview_action(action)
        qtbot.waitUntil(dialog.isVisible, timeout=60_000)
        if dialog.crosscheck is not None:  # its line says how the check with hermes-webui went
            qtbot.waitUntil(
                lambda d=dialog: not d.crosscheck.status.text().startswith("Checking"), timeout=60_000
            )
        _check(_texts(dialog), f"the preview of {action}")
        dialog.reject()
        wait_settled(qtbot, window)
