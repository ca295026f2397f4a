"""The garbage collector in the window's process: the start-up heap frozen once, the quick look's
listing built with the collector paused (issue 18: a full collection in a worker thread held the GIL
26-104 ms on a first open of the 10,000-session bench home)."""

from __future__ import annotations

import gc

from inspector import gcpause
from inspector.gui import load_controller
from tests.gui.conftest import open_home


def test_the_start_up_heap_is_frozen_once_per_process(monkeypatch):
    froze = []
    monkeypatch.setattr(gcpause, "_frozen_startup", False)
    monkeypatch.setattr(gcpause.gc, "freeze", lambda: froze.append(gc.get_count()))
    assert gcpause.freeze_startup() is True
    assert gcpause.freeze_startup() is False
    assert gcpause.freeze_startup() is False
    assert len(froze) == 1


def test_opening_a_home_freezes_the_start_up_heap_and_lists_without_collections(
    qtbot, window, demo_home, monkeypatch
):
    calls = []
    monkeypatch.setattr(load_controller, "freeze_startup", lambda: calls.append("freeze"))
    real = load_controller.quick_rows

    def quick_rows(session_dir, limit=None):
        calls.append(("quick rows", gc.isenabled()))
        return real(session_dir, limit)

    monkeypatch.setattr(load_controller, "quick_rows", quick_rows)
    open_home(qtbot, window, demo_home)
    assert calls[0] == "freeze"  # before anything of the home is made
    assert ("quick rows", False) in calls and ("quick rows", True) not in calls
    assert gc.isenabled()
    open_home(qtbot, window, demo_home)  # every open asks; gcpause freezes only the first time
    assert calls.count("freeze") == 2
