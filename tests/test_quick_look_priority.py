"""The window's quick look at every sidecar runs at idle priority in its child (issue 18): it is
asked for while the complete catalogue is still being worked out, and must not take the cores
that catalogue needs. The rule: in a child of the pool the work runs in a thread of Linux's
``SCHED_IDLE`` policy and the child keeps its own; its result and its errors come back as they
would; outside a child (the window's own process, a test) it runs as it is."""

from __future__ import annotations

import os
import threading
import time

import pytest

from inspector import portable
from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.jobs import pool
from inspector.jobs.offload import at_idle_priority, quick_rows_job

linux_only = pytest.mark.skipif(
    not (portable.system() == portable.LINUX and hasattr(os, "SCHED_IDLE")), reason="SCHED_IDLE is Linux's"
)


# ---------------------------------------------------------------- jobs (module level: the child imports them)


def _policies(check):
    """(the policy the work ran under, the child's own policy after it)."""
    return at_idle_priority(lambda: os.sched_getscheduler(0)), os.sched_getscheduler(0)


def _fails(check):
    def boom():
        raise ValueError("boom at idle priority")

    return at_idle_priority(boom)


@linux_only
def test_in_a_child_the_work_runs_at_idle_priority_and_the_child_keeps_its_own():
    during, after = pool.run_job(_policies)
    assert during == os.SCHED_IDLE
    assert after == os.SCHED_OTHER


@linux_only
def test_an_error_at_idle_priority_is_raised_as_the_jobs_own():
    with pytest.raises(ValueError, match="boom at idle priority"):
        pool.run_job(_fails)


@linux_only
def test_outside_a_child_the_work_runs_as_it_is():
    mine = os.sched_getscheduler(0)
    assert at_idle_priority(lambda: os.sched_getscheduler(0)) == mine
    assert not pool.in_child()


def test_on_the_portable_paths_the_work_runs_as_it_is(monkeypatch):
    """macOS and Windows (and the forced-portable run of the CI) have no SCHED_IDLE: no thread."""
    monkeypatch.setattr(pool, "in_child", lambda: True)
    monkeypatch.setattr(portable, "system", lambda: portable.WINDOWS)
    assert at_idle_priority(lambda: threading.current_thread()) is threading.current_thread()


def test_the_quick_look_from_a_child_lists_what_it_lists_here(tmp_path):
    home = locate_home(build_demo_home(tmp_path / "demo-home", now=time.time()).home)
    here = quick_rows_job(home.session_dir)
    assert here and pool.run_job(quick_rows_job, home.session_dir) == here
