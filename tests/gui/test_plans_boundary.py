"""The window holds plan summaries, the worker the plans (issue 15): no plan's bytes reach the
window, a Write the worker can no longer match to its kept plan plans again with the preview's
clock, and plans no longer shown are let go of."""

from __future__ import annotations

import pickle
import pickletools
from pathlib import Path

from PySide6.QtCore import Qt

from inspector.jobs import plans as kept
from inspector.present.plans import PlanSummary
from tests.gui.conftest import kept_plan, open_home, wait_settled

BYTES_OPS = {"BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"}


def _planned(qtbot, window) -> dict:
    qtbot.waitUntil(lambda: window.plans is not None and not window.runner.is_busy("plans"), timeout=60_000)
    return window.plans


def test_the_window_holds_summaries_without_bytes(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["shrunken"])
    plans = _planned(qtbot, window)
    summaries = [p for p in plans.values() if isinstance(p, PlanSummary)]
    assert summaries and all(p.local is None and p.handle for p in summaries)
    ops = {op.name for op, _, _ in pickletools.genops(pickle.dumps(plans, protocol=5))}
    assert not ops & BYTES_OPS
    assert window.view.findings.buttons["restore-backup"].isEnabled()


def test_a_write_after_the_worker_lost_the_plan_writes_the_previewed_bytes(qtbot, window, demo, demo_home):
    sid = demo.sessions["shrunken"]
    open_home(qtbot, window, demo_home, select=sid)
    _planned(qtbot, window)
    qtbot.mouseClick(window.view.findings.buttons["restore-backup"], Qt.MouseButton.LeftButton)
    dialog = window.preview
    previewed = kept_plan(dialog.plan)
    kept.drop([dialog.plan.handle])  # as if the pool had restarted meanwhile
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    (change,) = previewed.changes
    assert change.path.read_bytes() == change.after


def test_plans_of_a_session_no_longer_shown_are_let_go_of(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["shrunken"])
    first = [p.handle for p in _planned(qtbot, window).values() if isinstance(p, PlanSummary)]
    assert first and all(Path(h).exists() for h in first)
    window.select_session(demo.sessions["lost_response"])
    wait_settled(qtbot, window)
    _planned(qtbot, window)
    qtbot.waitUntil(
        lambda: not any(Path(h).exists() for h in first), timeout=60_000
    )  # (unlinked in a thread)


def test_a_cancelled_plannings_kept_plans_are_dropped(qtbot, window, demo, demo_home):
    """The child keeps a planning's plans before the window knows their handles; a planning the
    window cancelled (a newer one replaced it) is dropped by its batch."""
    open_home(qtbot, window, demo_home, select=demo.sessions["shrunken"])
    _planned(qtbot, window)
    window.repairs.start_planning()
    first = window.repairs._batches[-1]
    window.repairs.start_planning()  # cancels the first on the "plans" channel
    _planned(qtbot, window)
    qtbot.waitUntil(lambda: not kept._kept(first), timeout=60_000)
    assert all(
        kept.batch_of(p.handle) == window.repairs._batches[-1]
        for p in window.plans.values()
        if isinstance(p, PlanSummary)
    )
