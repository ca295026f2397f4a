"""Plans stay in the worker (issue 15): the window gets a summary and a handle, never the plan's
bytes; Write hands the handle back and the worker writes the kept plan, or makes it again with
the preview's clock and writes it only when it is byte for byte the previewed one."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import pickletools
import time
from pathlib import Path

import pytest

from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.jobs import plans as kept
from inspector.plan import ApplyError, WriteLog, WriteRecord
from inspector.present.plans import PlanSummary, same_plan, summarize
from inspector.present.session_data import plan_session_actions

BYTES_OPS = {"BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"}


@pytest.fixture
def demo(tmp_path):
    d = build_demo_home(tmp_path / "demo-home", now=time.time())
    return d, locate_home(d.home)


@pytest.fixture
def log(tmp_path) -> WriteLog:
    return WriteLog(tmp_path / "state")


def _summaries(home, sid):
    return kept.plan_session_job(home, sid, set(), kept.new_batch())


def test_the_window_gets_no_bytes_of_a_plan(demo):
    d, home = demo
    out = _summaries(home, d.sessions["shrunken"])
    summary = out["restore-backup"]
    assert isinstance(summary, PlanSummary) and summary.applies and summary.handle
    ops = {op.name for op, _, _ in pickletools.genops(pickle.dumps(out, protocol=5))}
    assert not ops & BYTES_OPS  # what crosses to the window holds no bytes value at all
    plan = kept.load(summary.handle)  # the worker's copy has them
    (change,) = plan.changes
    (touched,) = summary.changes
    assert touched.path == change.path and touched.size_before == len(change.before)
    assert touched.sha256_after == hashlib.sha256(change.after).hexdigest()
    assert "@@" in touched.diff and touched.messages is not None


def test_write_takes_the_kept_plan(demo, log):
    d, home = demo
    summary = _summaries(home, d.sessions["shrunken"])["restore-backup"]
    after = kept.load(summary.handle).changes[0].after
    record = kept.apply_job(home, summary, log)
    assert isinstance(record, WriteRecord)
    assert summary.changes[0].path.read_bytes() == after


def test_a_plan_no_longer_kept_is_made_again_with_the_previews_clock(demo, log):
    d, home = demo
    summary = _summaries(home, d.sessions["shrunken"])["restore-backup"]
    after = kept.load(summary.handle).changes[0].after
    kept.drop([summary.handle])  # as if the pool had restarted
    assert kept.load(summary.handle) is None
    time.sleep(0.01)  # another clock now: the preview's is used
    record = kept.apply_job(home, summary, log)
    assert isinstance(record, WriteRecord)
    assert summary.changes[0].path.read_bytes() == after


def test_a_plan_made_again_on_changed_files_is_refused_and_nothing_is_written(demo, log):
    d, home = demo
    summary = _summaries(home, d.sessions["shrunken"])["restore-backup"]
    kept.drop([summary.handle])
    target = summary.changes[0].path
    changed = target.read_bytes().replace(b'"title"', b'"title" ', 1)
    target.write_bytes(changed)
    result = kept.apply_job(home, summary, log)
    assert isinstance(result, ApplyError) and "changed since the preview" in str(result)
    assert target.read_bytes() == changed and log.records() == []


def test_same_plan_names_what_differs(demo):
    d, home = demo
    plan = plan_session_actions(home, d.sessions["shrunken"], set())["restore-backup"]
    summary = summarize(plan)
    assert same_plan(plan, summary) == []
    change = plan.changes[0]
    plan.changes[0] = dataclasses.replace(change, after=change.after + b"\n")
    assert same_plan(plan, summary) == [f"{change.path} changed since the preview"]
    plan.changes.clear()
    assert same_plan(plan, summary) == [f"{change.path} is no longer part of the repair"]


def test_a_handle_that_is_not_a_kept_plan_is_never_read(tmp_path):
    stranger = tmp_path / "hermes-inspector-plan-x.pickle"
    stranger.write_bytes(pickle.dumps("not a plan"))
    assert kept.load(str(stranger)) is None  # not in the hand-over folder: not opened at all
    assert kept.load(None) is None and kept.load("") is None


def test_a_summary_never_carries_its_local_plan(demo):
    d, home = demo
    plan = plan_session_actions(home, d.sessions["shrunken"], set())["restore-backup"]
    local = summarize(plan, keep_local=True)
    assert local.local is plan
    back = pickle.loads(pickle.dumps(local))
    assert back.local is None and back.changes == local.changes


def test_dropped_plans_leave_no_file(demo):
    d, home = demo
    out = _summaries(home, d.sessions["shrunken"])
    handles = [s.handle for s in out.values() if isinstance(s, PlanSummary)]
    assert handles and all(Path(h).exists() for h in handles)
    assert all(os.stat(h).st_mode & 0o077 == 0 for h in handles)  # private to the user
    kept.drop_all()
    assert not any(Path(h).exists() for h in handles)


def test_without_a_shared_memory_folder_plans_are_kept_in_the_temp_folder(demo, monkeypatch, tmp_path):
    """macOS, Windows, the forced-portable mode: no /dev/shm; tempfile's folder keeps the plans."""
    from inspector import portable

    monkeypatch.setattr(portable, "handover_dir", lambda: None)
    monkeypatch.setattr(kept.tempfile, "tempdir", str(tmp_path))
    d, home = demo
    plan = plan_session_actions(home, d.sessions["shrunken"], set())["restore-backup"]
    handle = kept.keep(plan)
    assert Path(handle).parent == tmp_path
    assert kept.load(handle).changes == plan.changes
    kept.drop([handle])
    assert not Path(handle).exists()


def test_a_batch_is_dropped_whole_even_unseen(demo):
    """A planning cancelled after the child kept its plans: the window never saw their handles,
    but it knows the batch it asked for, and drops every file of it."""
    d, home = demo
    batch = kept.new_batch()
    out = kept.plan_session_job(home, d.sessions["shrunken"], set(), batch)
    handles = [s.handle for s in out.values() if isinstance(s, PlanSummary)]
    assert handles and all(kept.batch_of(h) == batch for h in handles)
    other = kept.keep(kept.load(handles[0]))  # another batch: left alone
    kept.drop_batches([batch])
    assert not any(Path(h).exists() for h in handles) and Path(other).exists()
    kept.drop([other])


def test_plans_of_a_window_that_is_gone_are_swept(demo, monkeypatch):
    d, home = demo
    plan = plan_session_actions(home, d.sessions["shrunken"], set())["restore-backup"]
    gone = kept.keep(plan, "999999999-1")  # no such process
    alive = kept.keep(plan, f"{os.getppid()}-1")  # another window that still runs
    mine = kept.keep(plan)
    also_gone = kept.keep(plan, "999999999-2")
    asked = []
    real = kept.portable.pid_alive
    monkeypatch.setattr(kept.portable, "pid_alive", lambda pid: asked.append(pid) or real(pid))
    assert kept.sweep_gone() >= 2
    assert not Path(gone).exists() and not Path(also_gone).exists()
    assert Path(alive).exists() and Path(mine).exists()
    assert len(asked) == len(set(asked))  # each process asked after once, however many plans it kept
    kept.drop([alive, mine])


@pytest.mark.parametrize("cancelled_after", [0, 1, 2, None])
def test_a_planning_cancelled_while_it_keeps_its_plans_keeps_none(demo, monkeypatch, cancelled_after):
    """A planning cancelled while the child keeps its plans (``None``: after the last one): on a
    busy machine the window may have let go of that batch already (a newer planning's plans came
    first), so the child drops what it kept itself, and the cancel goes through."""
    d, home = demo
    batch = kept.new_batch()
    out = kept.plan_session_job(home, d.sessions["shrunken"], set(), batch)  # not cancelled: all kept
    handles = [s.handle for s in out.values() if isinstance(s, PlanSummary)]
    assert len(handles) > 2 and sorted(kept._kept(batch)) == sorted(handles)
    kept.drop(handles)
    after = len(handles) if cancelled_after is None else cancelled_after
    kept_so_far: list[str] = []
    real_keep = kept.keep

    class Cancelled(Exception):
        pass

    def keeping(plan, b=None):
        kept_so_far.append(real_keep(plan, b))
        return kept_so_far[-1]

    def check():
        if len(kept_so_far) >= after:
            raise Cancelled()

    monkeypatch.setattr(kept, "keep", keeping)
    with pytest.raises(Cancelled):
        kept.plan_session_job(home, d.sessions["shrunken"], set(), batch, check)
    assert len(kept_so_far) == after and kept._kept(batch) == []
