"""A structural guard (issue 15): the window stays split into parts a reader can hold in mind.

``main_window.py`` once grew to 1,500 lines doing ten jobs (three widgets, menus, settings, recent
homes, load orchestration, selection, search, clipboard, planning, repairs, export, file watching),
and a change to any of them meant reading all of it. It is now the window (list, menus, status,
layout, search, selection) plus a session view, a load controller and a repair controller. The
limit below is where a module stops being "a few hundred lines with one job": a module that grows
past it should give a job to a module of its own (as the list panel and the status area did)
rather than have the limit raised.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import inspector.gui

MAX_LINES = 600
GUI = Path(inspector.gui.__file__).parent
SPLIT_MODULES = ("main_window.py", "session_view.py", "load_controller.py", "repair_controller.py")


@pytest.mark.parametrize("name", SPLIT_MODULES)
def test_each_part_of_the_window_stays_under_the_limit(name):
    lines = (GUI / name).read_text(encoding="utf-8").count("\n")
    assert 50 < lines <= MAX_LINES, (  # (more than 50: a real part, not an empty shell)
        f"gui/{name} has {lines} lines (limit {MAX_LINES}): move one of its jobs to a module of its own"
    )
