"""The window's two repeated patterns, each one helper (issue 15): asking for a file
(``support.choose_file``: from the user's home folder, nothing happens when cancelled) and running
a bundle/kit step on the TaskRunner with its failure said in the status bar (``SupportActions._run``)."""

from __future__ import annotations

from pathlib import Path

from inspector.gui import support
from inspector.gui.support import choose_file
from tests.gui.conftest import open_home


class _Dialogs:
    """Stands in for QFileDialog's two static calls: records what was asked, answers ``answer``."""

    def __init__(self, answer: str):
        self.answer = answer
        self.asked: list[tuple[str, str, str, str]] = []

    def open(self, parent, title, start, file_filter):
        self.asked.append(("open", title, start, file_filter))
        return self.answer, file_filter

    def save(self, parent, title, start, file_filter):
        self.asked.append(("save", title, start, file_filter))
        return self.answer, file_filter


def _patch(monkeypatch, answer: str) -> _Dialogs:
    dialogs = _Dialogs(answer)
    monkeypatch.setattr(support.QFileDialog, "getOpenFileName", dialogs.open)
    monkeypatch.setattr(support.QFileDialog, "getSaveFileName", dialogs.save)
    return dialogs


def test_choose_file_opens_from_the_home_folder_and_hands_on_the_path(qtbot, monkeypatch, tmp_path):
    dialogs = _patch(monkeypatch, str(tmp_path / "kit.json"))
    got = []
    assert choose_file(None, "Apply Repair Kit", "Repair kits (*.json)", got.append) == tmp_path / "kit.json"
    assert got == [tmp_path / "kit.json"]
    assert dialogs.asked == [("open", "Apply Repair Kit", str(Path.home()), "Repair kits (*.json)")]


def test_choose_file_saves_under_the_suggested_name_in_the_home_folder(qtbot, monkeypatch, tmp_path):
    dialogs = _patch(monkeypatch, str(tmp_path / "out.tar.gz"))
    got = []
    choose_file(
        None,
        "Save Support Bundle",
        "Support bundles (*.tar.gz)",
        got.append,
        save_as="hermes-support-x.tar.gz",
    )
    assert got == [tmp_path / "out.tar.gz"]
    assert dialogs.asked == [
        (
            "save",
            "Save Support Bundle",
            str(Path.home() / "hermes-support-x.tar.gz"),
            "Support bundles (*.tar.gz)",
        )
    ]


def test_a_cancelled_file_dialog_does_nothing(qtbot, monkeypatch):
    _patch(monkeypatch, "")
    got = []
    assert choose_file(None, "Open Support Bundle", "*", got.append) is None
    assert choose_file(None, "Save Repair Kit", "*", got.append, save_as="kit.json") is None
    assert got == []


def test_a_failing_support_step_is_said_in_the_status_bar_with_its_prefix(qtbot, window):
    def broken():
        raise OSError("the disk is full")

    window.support._run("kit", broken, lambda _value: None, "Saving the repair kit…", "No kit saved", 20000)
    qtbot.waitUntil(lambda: not window.runner.is_busy("kit"), timeout=60_000)
    message = window.statusBar().currentMessage()
    assert message.startswith("No kit saved: ") and "the disk is full" in message


def test_a_support_step_hands_its_result_on(qtbot, window):
    got = []
    window.support._run("kit", lambda: 42, got.append, "Checking the repair kit…", "Kit refused")
    qtbot.waitUntil(lambda: got == [42], timeout=60_000)


def test_a_kit_that_cannot_be_read_is_refused_in_the_status_bar(qtbot, window, demo_home, tmp_path):
    """Through the refactored path: File ▸ Apply Repair Kit… with a file that is no kit."""
    open_home(qtbot, window, demo_home)
    bad = tmp_path / "kit.json"
    bad.write_text("not json at all")
    window.support.apply_kit_file(bad)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("Kit refused: "), timeout=60_000)
