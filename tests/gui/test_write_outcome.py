"""The window says what a failed write left on disk (issue 14 class 11), like the command line.

"Nothing was written" only when nothing was; a write whose files are all in place but whose log
line could not be finished says so, and a refused write shows hermes' reason.
"""

from __future__ import annotations

import errno
import os

import pytest
from PySide6.QtCore import Qt

import inspector.plan as planmod
from inspector.jobs import pool
from inspector.plan import WriteLog
from tests.gui.conftest import kept_plan, open_home, wait_settled


@pytest.fixture(autouse=True)
def _writes_in_this_process(monkeypatch):
    """The faults below are injected into this process's write path, so the write runs here (the
    pool's in-process mode) instead of in the worker that keeps the plan."""
    monkeypatch.setenv(pool.IN_PROCESS_ENV, "1")


def _press_write(qtbot, window):
    """Preview recover-journal and press Write; returns the plan shown."""
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    plan = kept_plan(window.preview.plan)
    qtbot.mouseClick(window.preview.write_button, Qt.MouseButton.LeftButton)
    return plan


def test_a_write_whose_log_could_not_be_finished_is_not_called_nothing_written(
    qtbot, window, demo, demo_home, monkeypatch
):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    sidecar = demo.session_dir / f"{sid}.json"
    real_append = WriteLog.append

    def append(self, record, state="done"):
        if state == "done":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_append(self, record, state)

    monkeypatch.setattr(WriteLog, "append", append)
    plan = _press_write(qtbot, window)
    qtbot.waitUntil(
        lambda: (
            window.statusBar()
            .currentMessage()
            .startswith("Written: every file was written, but the write log could not be marked complete")
        ),
        timeout=60_000,
    )
    message = window.statusBar().currentMessage()
    assert "Nothing was written" not in message and "hermes-inspector undo" in message
    wait_settled(qtbot, window)
    assert [c.path for c in plan.changes] == [sidecar] and sidecar.read_bytes() == plan.changes[0].after
    (rec,) = WriteLog.default().records()
    assert not rec.complete
    assert (
        window.last_write == rec.write_id and window.undo_button.isVisible()
    )  # the undo it names is one click


def test_a_save_by_hermes_during_the_write_is_reported_and_kept(qtbot, window, demo, demo_home, monkeypatch):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    sidecar = demo.session_dir / f"{sid}.json"
    saved = sidecar.read_bytes().replace(b'"title": "', b'"title": "saved by hermes ', 1)
    real_swap = planmod._swap

    def swap(slot):
        if slot.change.path == sidecar:
            tmp = sidecar.with_name(f"{sid}.tmp.1.2")
            tmp.write_bytes(saved)
            os.replace(tmp, sidecar)  # hermes saves just before the swap
        return real_swap(slot)

    monkeypatch.setattr(planmod, "_swap", swap)
    _press_write(qtbot, window)
    qtbot.waitUntil(
        lambda: "hermes-webui saved this session during the write" in window.statusBar().currentMessage(),
        timeout=60_000,
    )
    assert window.statusBar().currentMessage().startswith("Nothing was written:")
    wait_settled(qtbot, window)
    assert sidecar.read_bytes() == saved
    assert window.last_write is None
