"""The garbage collector in the window's process: the start-up heap frozen once, the quick look's
listing built with the collector paused (issue 18: a full collection in a worker thread held the GIL
26-104 ms on a first open of the 10,000-session bench home)."""

from __future__ import annotations

import gc

from inspector import gcpause
from inspector.gui import load_controller
from tests.gui.conftest import open_home, wait_settled


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


def test_the_quick_look_starts_in_a_turn_after_the_one_that_opens_the_home(
    qtbot, window, demo_home, monkeypatch
):
    """Its listing of every sidecar runs Python in a worker thread of the window: started in the
    turn that opens the home, it made that turn's paint wait for the GIL (issue 18)."""
    started = []
    real = load_controller.LoadController._start_quick

    def start_quick(self, home, limit):
        started.append(limit)
        return real(self, home, limit)

    monkeypatch.setattr(load_controller.LoadController, "_start_quick", start_quick)
    window.open_home(demo_home, remember=False)
    assert started == [] and window.runner.is_busy("catalogue")
    qtbot.waitUntil(lambda: bool(started), timeout=30_000)
    assert started[0] == load_controller.FIRST_ROWS
    wait_settled(qtbot, window)


def test_no_quick_look_when_the_catalogue_is_in_before_its_turn(qtbot, window, demo_home, monkeypatch):
    started = []
    monkeypatch.setattr(load_controller.LoadController, "_start_quick", lambda self, h, n: started.append(n))
    window.open_home(demo_home, remember=False)
    window.runner.cancel("catalogue")  # as if it were in (or failed) before the quick look's turn
    qtbot.wait(50)
    assert started == []
