"""Work a job leaves for after its reply (``pool.after_reply``) runs in the child once the result
is pickled and handed over, never before; elsewhere at once. The window's catalogue job leaves
the fact cache's write there, and it is still written."""

from __future__ import annotations

import gc
import threading
import time

import pytest

from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.jobs import offload, pool
from inspector.store import scan as scan_mod


def _as_in_a_child(monkeypatch) -> None:
    monkeypatch.setattr(pool, "_child_flags", [0] * pool.SLOTS)
    monkeypatch.setattr(pool, "AFTER_REPLY_DELAY_S", 0.0)


def _wait_for(done: threading.Event) -> None:
    assert done.wait(10), "the work left for after the reply never ran"


def test_in_a_child_it_runs_after_the_result_is_pickled_in_another_thread(monkeypatch):
    _as_in_a_child(monkeypatch)
    events: list[str] = []
    done = threading.Event()
    real = pool.pickle_pieces

    def pickling(value):
        events.append("pickled")
        return real(value)

    monkeypatch.setattr(pool, "pickle_pieces", pickling)

    def after() -> None:
        events.append("after" if threading.current_thread() is not threading.main_thread() else "after-here")
        done.set()

    def job(check):
        pool.after_reply(after)
        events.append("job")
        return {"a": 1}

    kind, payload = pool._run_in_child(0, job, ())
    _wait_for(done)
    assert events == ["job", "pickled", "after"]
    assert kind == "inline" and pool._after_reply == []


def test_a_job_that_fails_still_runs_what_it_left(monkeypatch):
    _as_in_a_child(monkeypatch)
    done = threading.Event()

    def job(check):
        pool.after_reply(done.set)
        raise ValueError("the job fails")

    with pytest.raises(ValueError):
        pool._run_in_child(0, job, ())
    _wait_for(done)


def test_a_failure_after_the_reply_is_logged_and_the_rest_still_runs(monkeypatch):
    _as_in_a_child(monkeypatch)
    done = threading.Event()

    def broken() -> None:
        raise OSError("disk full")

    def job(check):
        pool.after_reply(broken)
        pool.after_reply(done.set)
        return 1

    pool._run_in_child(0, job, ())
    _wait_for(done)


def test_outside_a_child_it_runs_at_once():
    assert not pool.in_child()
    ran: list[int] = []
    pool.after_reply(lambda: ran.append(1))
    assert ran == [1]


def test_the_catalogue_job_writes_the_fact_cache_after_its_reply(tmp_path, monkeypatch):
    home = locate_home(build_demo_home(tmp_path / "demo-home", now=time.time()).home)
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    _as_in_a_child(monkeypatch)
    gate = threading.Event()
    real_later = pool._run_later
    monkeypatch.setattr(pool, "_run_later", lambda todo: (gate.wait(10), real_later(todo)))
    kind, payload = pool._run_in_child(0, offload.catalogue_job, (home, 1_800_000_000.0))
    assert list(scan_mod.cache_dir().glob("scan-*.json")) == []  # not before the reply
    gate.set()
    for _ in range(200):
        if list(scan_mod.cache_dir().glob("scan-*.json")):
            break
        time.sleep(0.05)
    (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
    assert cache_file.stat().st_size > 0
    assert pool.run_steps(pool.handed_back(kind, payload).steps).rows


def test_the_collector_is_paused_until_the_catalogue_is_let_go_of(tmp_path, monkeypatch):
    """Rule: the child's collector stays off from the catalogue's start until after its reply (a
    collection while the catalogue is alive walks every object of it), and is on again after,
    also when the job is cancelled."""
    home = locate_home(build_demo_home(tmp_path / "demo-home", now=time.time()).home)
    _as_in_a_child(monkeypatch)
    assert gc.isenabled()
    gate = threading.Event()
    ran = threading.Event()
    real_later = pool._run_later

    def later(todo):
        gate.wait(10)
        real_later(todo)
        ran.set()

    monkeypatch.setattr(pool, "_run_later", later)
    seen: list[bool] = []
    real_flat = offload.flat_row
    monkeypatch.setattr(offload, "flat_row", lambda row: seen.append(gc.isenabled()) or real_flat(row))
    try:
        pool._run_in_child(0, offload.catalogue_job, (home, 1_800_000_000.0))
        assert seen and not any(seen)
        assert not gc.isenabled()  # the reply is out, the after-work not yet done
    finally:
        gate.set()
    _wait_for(ran)
    assert gc.isenabled()

    ran.clear()
    pool._child_flags[3] = 1  # the window cancels the job in slot 3: its check() raises
    with pytest.raises(pool.JobCancelled):
        pool._run_in_child(3, offload.catalogue_job, (home, 1_800_000_000.0))
    _wait_for(ran)
    assert gc.isenabled()
