"""A process forked from one that has a job pool runs its jobs in a pool of its own.

The pool's children and the thread that feeds them belong to the process that started them (a fork
copies no thread): a job a forked copy sent to the inherited pool waited for ever. mutmut runs each
mutant in a process forked from one whose tests had started the pool, and every test sending a job
then hung until mutmut's time limit, counted as a "timeout" it never earned."""

from __future__ import annotations

import os
import signal
import time

import pytest

from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.jobs import pool
from inspector.jobs.offload import quick_rows_job

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")


def test_a_forked_process_sends_its_jobs_to_a_pool_of_its_own(tmp_path, monkeypatch):
    monkeypatch.delenv(pool.IN_PROCESS_ENV, raising=False)
    home = locate_home(build_demo_home(tmp_path / "demo-home", now=time.time()).home)
    here = quick_rows_job(home.session_dir)
    assert here and pool.run_job(quick_rows_job, home.session_dir) == here  # the pool is started here
    parents_pool = pool._pool
    assert parents_pool is not None
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked copy reports through its exit status
        try:
            os.close(read_end)
            signal.alarm(120)  # a hang ends the copy (SIGALRM) instead of the test run
            same = pool.run_job(quick_rows_job, home.session_dir) == here
            own = pool._pool is not None and pool._pool is not parents_pool
            os.write(write_end, b"same" if same else b"different")
            os.write(write_end, b" own" if own else b" inherited")
            pool._shutdown()  # this copy's own pool and log relay
        finally:
            os._exit(0)
    os.close(write_end)
    _, status = os.waitpid(child, 0)
    with os.fdopen(read_end, "rb") as fh:
        said = fh.read().decode()
    assert os.WIFEXITED(status), "the forked copy's job never came back (it was stopped by its alarm)"
    assert said == "same own"
    assert pool._pool is parents_pool, "the fork changed this process's pool"
