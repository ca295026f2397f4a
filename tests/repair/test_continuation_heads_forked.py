"""The interrupted-turn plan searches the sidecars' heads for a compression continuation (spec
run-journal-and-promotion §3.1) in a forked copy while it reads the journal and repairs, where forking
is safe and the folder holds at least ``PARALLEL_HEADS_MIN`` sidecars (issue 18: on the 10,000-sidecar
bench home the 9,922 heads are 0.1 s the second core can take).

Rules: the plan's warnings are the same, word for word and in the same place (after the session's own
guard warnings, before the repair's), whether the heads were read by a copy or here; a copy that fails
is redone here; a plan that refuses leaves no copy behind to reap.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector.forked import ForkedError
from inspector.repair import interrupted
from tests.repair.test_interrupted_rules import SID, plan_for, write_sidecar

HISTORY = [
    {"role": "user", "content": "Earlier", "timestamp": 10},
    {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
]
NO_STREAM = (
    "hermes' get_session runs this repair only while active_stream_id is set; "
    "it is empty here, so hermes would not run it on its own"
)
SOURCES = (
    "a compression continuation of this session exists (_index.json, child1.json, child3.json); "
    "hermes' get_session skips the repair for its parent"
)


def _home(home: Path) -> None:
    """The session (no active stream: a guard warning of its own), an index row and two sidecars
    naming it as parent, two sidecars that do not (one names it only past hermes' 4,096-character head)."""
    write_sidecar(home, list(HISTORY), active_stream_id=None)
    sessions = home / "webui" / "sessions"
    (sessions / "_index.json").write_text(
        json.dumps([{"session_id": "kid", "parent_session_id": SID}], indent=2), encoding="utf-8"
    )
    for name, parent, pad in [
        ("child1", SID, ""),
        ("child2", "other", ""),
        ("child3", SID, ""),
        ("late", SID, "x" * 5000),
    ]:
        raw = {"session_id": name, "title": pad, "parent_session_id": parent, "messages": []}
        (sessions / f"{name}.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    _home(home)
    return home


def _forking(monkeypatch) -> list[int]:
    """A copy for any number of sidecars; ``can_fork`` forced (pytest-qt loads Qt into this process,
    where it says no; the copy runs no Qt)."""
    if not hasattr(os, "fork") or interrupted.portable.FORCED:
        pytest.skip("this system does not fork: the heads are always read here")
    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 1)
    monkeypatch.setattr(interrupted.portable, "can_fork", lambda: True)
    started: list[int] = []
    real = interrupted.Forked

    def counting(fn):
        copy = real(fn)
        started.append(copy._pid)
        return copy

    monkeypatch.setattr(interrupted, "Forked", counting)
    return started


class _FailingCopy:
    """A forked copy that failed: its result raises ForkedError (nothing is forked)."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def result(self):
        raise ForkedError("the forked process ended without a result")


def _reaped(pid: int) -> bool:
    """Whether the copy ``pid`` was waited for already (other tests' children may still run: only
    this one is looked at)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("how", ["forked", "here"])
def test_the_warnings_are_the_same_and_in_the_same_place(home: Path, monkeypatch, how: str) -> None:
    """Rule: the session's own guard warning first, then the continuation's (the index, then the
    sidecars in name order; the one naming it past the head is not one), whoever read the heads."""
    started: list = []
    if how == "forked":
        started = _forking(monkeypatch)
    else:
        monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 1)
        monkeypatch.setattr(interrupted.portable, "can_fork", lambda: False)
        monkeypatch.setattr(interrupted, "Forked", started.append)  # never called: forking not safe
    result = plan_for(home)
    assert result.refusal is None
    assert result.warnings[:2] == [NO_STREAM, SOURCES]
    if how == "forked":
        (pid,) = started  # one copy read the heads
        assert _reaped(pid)
    else:
        assert started == []


def test_the_copys_names_are_used_not_searched_again(home: Path, monkeypatch) -> None:
    """Rule: with a copy started, this process searches no head itself (the copy's own search runs in
    the copy, where this list is not seen)."""
    started = _forking(monkeypatch)
    here: list[str] = []
    search = interrupted._sidecar_sources

    def recorded(session_dir, sid, names=None):
        here.append(sid)
        return search(session_dir, sid, names)

    monkeypatch.setattr(interrupted, "_sidecar_sources", recorded)
    assert plan_for(home).warnings[:2] == [NO_STREAM, SOURCES]
    assert len(started) == 1 and here == []


def test_exactly_parallel_heads_min_sidecars_start_a_copy(home: Path, monkeypatch) -> None:
    """Rule: a folder of exactly ``PARALLEL_HEADS_MIN`` sidecars (here the session's and four others)
    has its heads searched by a copy; one fewer, here."""
    started = _forking(monkeypatch)
    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 5)
    assert plan_for(home).warnings[:2] == [NO_STREAM, SOURCES]
    assert len(started) == 1
    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 6)
    assert plan_for(home).warnings[:2] == [NO_STREAM, SOURCES]
    assert len(started) == 1


def test_a_copy_that_fails_is_redone_here(home: Path, monkeypatch) -> None:
    """Rule: the copy's failure (ForkedError) costs time, never the warning."""

    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 1)
    monkeypatch.setattr(interrupted.portable, "can_fork", lambda: True)
    monkeypatch.setattr(interrupted, "Forked", _FailingCopy)
    result = plan_for(home)
    assert result.warnings[:2] == [NO_STREAM, SOURCES]


def test_a_fork_that_fails_reads_the_heads_here(home: Path, monkeypatch) -> None:
    """Rule: ``fork`` refused (OSError): the heads are read here, the same warning."""

    def no_fork(fn):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 1)
    monkeypatch.setattr(interrupted.portable, "can_fork", lambda: True)
    monkeypatch.setattr(interrupted, "Forked", no_fork)
    assert plan_for(home).warnings[:2] == [NO_STREAM, SOURCES]


def test_a_plan_that_refuses_reaps_its_copy(home: Path, monkeypatch) -> None:
    """Rule: the repair fails (an ``_index.json`` that is a folder makes hermes' save fail): the plan
    refuses, and the copy it started is waited for before it returns."""
    started = _forking(monkeypatch)
    index = home / "webui" / "sessions" / "_index.json"
    index.unlink()
    index.mkdir()
    result = plan_for(home)
    assert result.refusal is not None and result.refusal.startswith("hermes' repair fails on this session")
    (pid,) = started
    assert _reaped(pid)


def test_a_plan_that_refuses_with_a_failed_copy_still_refuses(home: Path, monkeypatch) -> None:
    """Rule: a copy whose result is not wanted (the plan refuses) and that failed is reaped quietly:
    the refusal is the plan's answer, not the copy's error."""

    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 1)
    monkeypatch.setattr(interrupted.portable, "can_fork", lambda: True)
    monkeypatch.setattr(interrupted, "Forked", _FailingCopy)
    index = home / "webui" / "sessions" / "_index.json"
    index.unlink()
    index.mkdir()
    result = plan_for(home)
    assert result.refusal is not None and result.refusal.startswith("hermes' repair fails on this session")


def test_few_sidecars_are_read_here_without_a_copy(home: Path, monkeypatch) -> None:
    """Rule: below ``PARALLEL_HEADS_MIN`` sidecars no copy is started (forking costs more than it saves)."""
    started: list[object] = []
    monkeypatch.setattr(interrupted, "Forked", lambda fn: started.append(fn))
    assert len(os.listdir(home / "webui" / "sessions")) < interrupted.PARALLEL_HEADS_MIN
    assert plan_for(home).warnings[:2] == [NO_STREAM, SOURCES]
    assert started == []


def test_a_plan_that_refuses_before_its_save_with_a_failed_copy_still_refuses(
    home: Path, monkeypatch
) -> None:
    """Rule: the repair itself fails (before the save asks the copy for anything), and the copy failed
    too: :meth:`SidecarSources.close` reaps it quietly, the refusal is the repair's."""

    def fails(self):
        raise RuntimeError("the repair broke")

    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 1)
    monkeypatch.setattr(interrupted.portable, "can_fork", lambda: True)
    monkeypatch.setattr(interrupted, "Forked", _FailingCopy)
    monkeypatch.setattr(interrupted._Repair, "run", fails)
    result = plan_for(home)
    assert (
        result.refusal
        == "hermes' repair fails on this session (RuntimeError: the repair broke); it writes nothing"
    )
