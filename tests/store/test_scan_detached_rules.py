"""The scan cache's background write (tests/MUTATION.md, fifth session): ``_detached(fn)`` runs
``fn`` in a detached copy of the process, forked twice, so

- the caller gets True and goes on at once (it does not wait for ``fn``),
- nothing is left for the caller to reap (the intermediate copy is waited for),
- the worker's standard streams are ``/dev/null`` and every other inherited descriptor is closed (a
  reader of the caller's output sees its end when the caller ends),
- the caller alone goes on past the call (no copy runs the caller's code twice);
- where forking is not safe, or ``fork`` fails, it says False and ``fn`` is not run (the cache is
  then written in the foreground).

The forking cases run in a child Python (never fork the test runner), which reports as JSON.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import inspector
from inspector import portable
from inspector.store import scan

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
forks = pytest.mark.skipif(portable.FORCED, reason="forced portable: the cache is written in the foreground")

_CHILD = textwrap.dedent(
    """
    import json, os, stat, sys, time
    from inspector.store import scan

    out = sys.argv[1]
    go = os.path.join(out, "go")
    res = os.path.join(out, "result.json")
    # an inherited descriptor beyond the standard streams, at the first such number
    os.dup2(os.open(os.devnull, os.O_RDONLY), 3, inheritable=True)

    def fn():
        deadline = time.monotonic() + 10
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.01)
        went_on = os.path.exists(go)
        null = os.stat(os.devnull)

        def what(fd):
            try:
                st = os.fstat(fd)
            except OSError:
                return "closed"
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev:
                return "null"
            return "other"

        info = {"pid": os.getpid(), "caller_went_on": went_on,
                "fds": {str(fd): what(fd) for fd in (0, 1, 2, 3)}}
        with open(res + ".tmp", "w") as fh:
            json.dump(info, fh)
        os.replace(res + ".tmp", res)

    said = scan._detached(fn)
    open(go, "w").close()
    try:
        os.waitpid(-1, os.WNOHANG)
        left = True
    except ChildProcessError:
        left = False
    print(json.dumps({"said": said, "pid": os.getpid(), "left_to_reap": left}))
    """
)


def _refused_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rule in this process, where forking is said to be unsafe (this also links the test to
    ``_detached`` for mutmut, which only counts calls made in the test's own process)."""
    ran: list[int] = []
    with monkeypatch.context() as m:
        m.setattr(scan.portable, "can_fork", lambda: False)
        assert scan._detached(lambda: ran.append(1)) is False
    assert ran == []


def _run_child(tmp_path: Path) -> tuple[dict, dict | None, subprocess.CompletedProcess]:
    root = str(Path(inspector.__file__).resolve().parent.parent)  # the copy under test
    env = dict(os.environ, PYTHONPATH=root)
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=root,
        text=True,
    )
    out, err = proc.communicate(timeout=60)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    lines = out.splitlines()
    said = json.loads(lines[0]) if len(lines) == 1 else {"lines": lines}
    said["child_pid"] = proc.pid
    result = tmp_path / "result.json"
    deadline = time.monotonic() + 15
    while not result.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return said, (json.loads(result.read_text()) if result.exists() else None), done


@forks
def test_detached_runs_fn_in_another_process_and_the_caller_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: True, one caller going on (one line of output, from the caller's own pid, no error),
    nothing left to reap, and ``fn`` ran in another process after the caller went on."""
    _refused_here(monkeypatch)
    said, worker, done = _run_child(tmp_path)
    assert done.returncode == 0
    assert done.stderr == ""
    pid = said["child_pid"]
    assert said == {"said": True, "pid": pid, "left_to_reap": False, "child_pid": pid}
    assert worker is not None, "fn never ran"
    assert worker["pid"] != said["child_pid"]
    assert worker["caller_went_on"] is True


@forks
def test_detached_worker_holds_only_dev_null(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: the worker's fds 0, 1 and 2 are /dev/null and the inherited fd 3 is closed."""
    _refused_here(monkeypatch)
    _, worker, _ = _run_child(tmp_path)
    assert worker is not None, "fn never ran"
    assert worker["fds"] == {"0": "null", "1": "null", "2": "null", "3": "closed"}


def test_detached_says_false_where_forking_is_not_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: not safe to fork here (portable.can_fork() False): False, and fn is not run."""
    ran: list[int] = []
    monkeypatch.setattr(scan.portable, "can_fork", lambda: False)
    assert scan._detached(lambda: ran.append(1)) is False
    assert ran == []


def test_detached_says_false_when_fork_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: fork raising OSError (no processes left): False, and fn is not run."""
    ran: list[int] = []

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(scan.portable, "can_fork", lambda: True)
    monkeypatch.setattr(scan.os, "fork", no_fork)
    assert scan._detached(lambda: ran.append(1)) is False
    assert ran == []


@forks
def test_detached_reaps_the_intermediate_copy_before_it_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: nothing is left for the caller to reap: ``_detached`` waits for the intermediate copy
    (which forks the worker and leaves) before it returns True, also when that copy is slow to leave.

    Run in this process (a few milliseconds; the child-Python tests above take seconds): every copy
    here runs only ``os.fork``, descriptor calls, an empty ``fn`` and ``os._exit``. Each copy pauses
    20 ms right after it is forked, so a caller that did not wait would find its intermediate copy
    still running."""
    real_fork = os.fork
    forked: list[int] = []

    def slow_copies() -> int:
        pid = real_fork()
        if pid == 0:
            time.sleep(0.02)
        else:
            forked.append(pid)
        return pid

    monkeypatch.setattr(scan.portable, "can_fork", lambda: True)
    monkeypatch.setattr(scan.os, "fork", slow_copies)
    assert scan._detached(lambda: None) is True
    monkeypatch.setattr(scan.os, "fork", real_fork)
    (intermediate,) = forked
    try:
        left = os.waitpid(intermediate, os.WNOHANG)
    except ChildProcessError:
        left = None  # already reaped by _detached
    if left is not None and left[0] == 0:
        os.waitpid(intermediate, 0)  # reap it here, so that the failure leaves nothing behind
    assert left is None


def test_the_caller_waits_for_the_intermediate_copy_and_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule, in the test's own process with ``fork`` answering as in the caller (a child's pid): the
    caller forks once, waits for that copy, says True and goes on; it never leaves through
    ``os._exit`` and never runs ``fn`` (nothing is really forked: the calls are recorded)."""
    calls: list = []

    def no_exit(code: int) -> None:
        calls.append(("_exit", code))
        raise AssertionError("the caller left through os._exit")

    monkeypatch.setattr(scan.portable, "can_fork", lambda: True)
    monkeypatch.setattr(scan.os, "fork", lambda: calls.append("fork") or 4242)
    monkeypatch.setattr(
        scan.os, "waitpid", lambda pid, flags: calls.append(("waitpid", pid, flags)) or (pid, 0)
    )
    monkeypatch.setattr(scan.os, "_exit", no_exit)
    ran: list[int] = []
    assert scan._detached(lambda: ran.append(1)) is True
    assert calls == ["fork", ("waitpid", 4242, 0)]
    assert ran == []


def test_a_scan_closes_its_folder_descriptor_when_it_is_collected(tmp_path: Path) -> None:
    """Rule: the descriptor a scan opens on its folder is closed once the scan is gone."""
    import gc

    found = scan.SessionDirScan(tmp_path)
    fd = found._dir_fd
    assert fd is not None
    os.fstat(fd)  # open while the scan lives
    del found
    gc.collect()
    with pytest.raises(OSError) as info:
        os.fstat(fd)
    assert info.value.errno == errno.EBADF


class _Left(BaseException):
    """``os._exit`` in a copy: the recorded copy leaves here (nothing is really forked)."""


class _RecordedOs:
    """The ``os`` calls ``_detached`` makes, recorded in the test's own process: ``fork`` answers from
    ``pids`` in turn (0: "you are the copy"), ``open`` gives descriptor 77, ``_exit`` raises
    :class:`_Left`. Only ``scan``'s name ``os`` is replaced, so pytest's own descriptor work is untouched."""

    devnull = os.devnull
    O_RDWR = os.O_RDWR

    def __init__(self, *pids: int) -> None:
        self.pids = list(pids)
        self.calls: list = []

    def fork(self) -> int:
        self.calls.append("fork")
        return self.pids.pop(0)

    def open(self, path, flags):
        self.calls.append(("open", path, flags))
        return 77

    def dup2(self, fd, fd2):
        self.calls.append(("dup2", fd, fd2))

    def closerange(self, lo, hi):
        self.calls.append(("closerange", lo, hi))

    def waitpid(self, pid, flags):
        self.calls.append(("waitpid", pid, flags))
        return pid, 0

    def _exit(self, code):
        self.calls.append(("_exit", code))
        raise _Left(code)


def _recorded(monkeypatch: pytest.MonkeyPatch, *pids: int) -> _RecordedOs:
    fake = _RecordedOs(*pids)
    monkeypatch.setattr(scan.portable, "can_fork", lambda: True)
    monkeypatch.setattr(scan, "os", fake)
    return fake


def test_the_intermediate_copy_forks_the_worker_and_leaves_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule, as the intermediate copy (the first fork says 0, the second a worker's pid): it forks once
    more and leaves with status 0; it neither runs ``fn`` nor touches a descriptor nor waits."""
    fake = _recorded(monkeypatch, 0, 5151)
    ran: list[int] = []
    with pytest.raises(_Left):
        scan._detached(lambda: ran.append(1))
    assert fake.calls == ["fork", "fork", ("_exit", 0)]
    assert ran == []


def test_the_worker_holds_dev_null_closes_the_rest_runs_fn_and_leaves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule, as the worker (both forks say 0): /dev/null opened read-write, made fds 0, 1 and 2, every
    descriptor from 3 to 4095 closed, then ``fn``, then it leaves with status 0."""
    fake = _recorded(monkeypatch, 0, 0)
    with pytest.raises(_Left):
        scan._detached(lambda: fake.calls.append("fn"))
    assert fake.calls[:9] == [
        "fork",
        "fork",
        ("open", os.devnull, os.O_RDWR),
        ("dup2", 77, 0),
        ("dup2", 77, 1),
        ("dup2", 77, 2),
        ("closerange", 3, 4096),
        "fn",
        ("_exit", 0),
    ]


def test_a_worker_whose_fn_raises_still_leaves_with_status_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: an error in ``fn`` never reaches the copy of the caller's code: the worker leaves first."""
    fake = _recorded(monkeypatch, 0, 0)

    def boom() -> None:
        raise RuntimeError("fn failed")

    with pytest.raises(_Left):
        scan._detached(boom)
    assert fake.calls[6:8] == [("closerange", 3, 4096), ("_exit", 0)]  # no "fn" entry: it raised
