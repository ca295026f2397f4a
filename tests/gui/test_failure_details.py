"""A task that fails keeps its traceback: logged (``logger.exception``), and one click away in the
status bar's "Details…"; a child process's traceback is chained to it. Qt's own messages go into
the log as records of ``inspector.qt``."""

from __future__ import annotations

import logging
import os
import pickle

import pytest
from PySide6.QtCore import QtMsgType

from inspector.gui import app as gui_app
from inspector.gui.failure_details import FailureDetails
from inspector.gui.workers import TaskRunner
from inspector.jobs import pool
from tests.gui.test_session_jobs import _boom


@pytest.fixture
def runner(qtbot):
    r = TaskRunner()
    yield r
    r.cancel_all()
    r.wait(10_000)


def _fails_in_a_helper(token, progress):
    return _helper_that_raises()


def _helper_that_raises():
    raise OSError(5, "the disk said no")


def test_a_failed_task_is_logged_with_its_traceback_and_its_details_kept(qtbot, runner, caplog) -> None:
    caplog.set_level(logging.ERROR, logger="inspector")
    errors, failures = [], []
    runner.failure.connect(lambda *a: failures.append(a))
    runner.start("detail", _fails_in_a_helper, lambda v: None, label="Loading…", on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=60_000)
    assert errors == ["the disk said no"]  # in words: no exception class name (issue 16)
    ((label, message, details),) = failures
    assert label == "Loading…" and message == errors[0]
    assert "Traceback" in details and "_helper_that_raises" in details
    (record,) = [r for r in caplog.records if r.name == "inspector.gui.workers"]
    assert record.exc_info is not None and "'detail'" in record.getMessage()


def test_a_child_process_traceback_reaches_the_details(qtbot, runner, caplog) -> None:
    if pool.in_process():
        pytest.skip("jobs run in-process here")
    caplog.set_level(logging.ERROR, logger="inspector")
    failures = []
    runner.failure.connect(lambda *a: failures.append(a))
    runner.start(
        "catalogue",
        lambda token, progress: pool.run_job(_boom, check=token.check),
        lambda v: None,
        on_error=lambda m: None,
    )
    qtbot.waitUntil(lambda: bool(failures), timeout=60_000)
    (_, message, details) = failures[0]
    assert message == "boom in the child"
    assert "_boom" in details and 'raise ValueError("boom in the child")' in details  # the child's own frame
    assert any("_boom" in (r.exc_text or "") for r in caplog.records)


def test_a_stale_failure_is_logged_but_not_shown(qtbot, runner, caplog) -> None:
    import threading

    gate = threading.Event()
    failures = []
    runner.failure.connect(lambda *a: failures.append(a))

    def old(token, progress):
        gate.wait(5)
        raise RuntimeError("too late to matter")

    caplog.set_level(logging.ERROR, logger="inspector")
    runner.start("a", old, lambda v: None)
    runner.start("a", lambda token, progress: "new", lambda v: None)
    gate.set()
    runner.wait(5000)
    qtbot.wait(50)
    assert failures == []
    assert any("too late to matter" in (r.exc_text or "") for r in caplog.records)


def test_details_button_appears_on_failure_and_shows_the_traceback(qtbot, runner) -> None:
    button = FailureDetails(runner)
    qtbot.addWidget(button)
    assert button.isHidden()
    runner.start("write", _fails_in_a_helper, lambda v: None, label="Writing…", on_error=lambda m: None)
    qtbot.waitUntil(lambda: not button.isHidden(), timeout=60_000)
    box = button.show_details()
    assert box is not None
    assert box.text() == "Writing failed"
    assert "the disk said no" in box.informativeText() and "inspector.log" in box.informativeText()
    assert "Traceback" in box.detailedText() and "_helper_that_raises" in box.detailedText()
    box.done(0)
    assert button.isHidden()


def test_a_home_that_cannot_be_read_offers_the_details_in_the_window(qtbot, window, tmp_path, caplog) -> None:
    from inspector.home import locate_home

    caplog.set_level(logging.ERROR, logger="inspector")
    assert window.failure_details.isHidden()
    (tmp_path / "home" / "webui").mkdir(parents=True)
    (tmp_path / "home" / "webui" / "sessions").write_text("a file where the sessions folder belongs")
    window.open_home(locate_home(tmp_path / "home", None, None), remember=False)
    # the quick look fails first, then the health check (in a child process): the latest is kept
    qtbot.waitUntil(lambda: (window.failure_details.last or ("",))[0] == "Checking health…", timeout=60_000)
    assert not window.failure_details.isHidden()
    label, message, details = window.failure_details.last
    assert "cannot be read" in message and message in details and "Traceback" in details
    assert any(r.name == "inspector.gui.workers" and r.exc_info for r in caplog.records)


def test_qt_messages_become_log_records(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="inspector")
    handler = gui_app.qt_message_handler(offscreen=True)

    class Context:
        category = "qt.text.font"

    handler(QtMsgType.QtWarningMsg, Context(), "a font is missing")
    handler(QtMsgType.QtDebugMsg, None, "a debug line")
    handler(QtMsgType.QtWarningMsg, None, "This plugin does not support propagateSizeHints()")
    got = [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.name == "inspector.qt"]
    assert got == [
        ("inspector.qt", logging.WARNING, "[qt.text.font] a font is missing"),
        ("inspector.qt", logging.DEBUG, "a debug line"),
    ]


def _logs_a_failure_in_the_child(check):
    from inspector.log import get_logger

    try:
        raise KeyError("the child's own failure")
    except KeyError:
        get_logger("inspector.tests.child").exception("a job failed in the child")
    return os.getpid()


def test_a_failure_logged_in_a_child_process_reaches_the_windows_log(qtbot, caplog) -> None:
    """The children send their log records to the window (one log file, written by the window):
    a job's ``logger.exception`` in a child keeps its traceback."""
    if pool.in_process():
        pytest.skip("jobs run in-process here")
    caplog.set_level(logging.ERROR, logger="inspector")
    pid = pool.run_job(_logs_a_failure_in_the_child)
    assert pid != os.getpid()
    qtbot.waitUntil(lambda: any(r.name == "inspector.tests.child" for r in caplog.records), timeout=60_000)
    (record,) = [r for r in caplog.records if r.name == "inspector.tests.child"]
    text = record.getMessage()  # (a QueueHandler puts the formatted traceback into the message)
    assert record.process == pid and "Traceback" in text and "the child's own failure" in text


def _planner_that_raises(*args, **kwargs):
    raise RuntimeError("the planner broke")


def test_a_planner_failure_keeps_its_traceback_for_the_details(qtbot, window, demo, demo_home, monkeypatch):
    from inspector.present import session_data

    monkeypatch.setattr(session_data, "plan_action", _planner_that_raises)
    plans = session_data.plan_session_actions(demo_home, demo.sessions["shrunken"], set())
    failure = plans["restore-backup"]
    assert isinstance(failure, session_data.PlanFailure) and failure == "the planner broke"
    assert "_planner_that_raises" in failure.details and "Traceback" in failure.details
    back = pickle.loads(pickle.dumps(failure))  # as it comes back from the child
    assert back == failure and back.details == failure.details
    window.repairs._on_plans({"restore-backup": back})
    label, message, details = window.failure_details.last
    assert (
        message == "the planner broke"
        and details == failure.details
        and not window.failure_details.isHidden()
    )
