"""The write path while hermes-webui writes too (issue 14: classes 1, 2, 7, 9, 10, 11; issue 21: class 5).

* **A save by hermes-webui at any moment of a write is never lost.** A hermes-style atomic save
  (temp file, fsync, ``os.replace``) is injected before every disk call of ``apply_plan`` and of
  ``undo_write``, on every file of the write, with the atomic exchange and with the fallback
  without it: afterwards the file holds exactly hermes' bytes, and a write that saw the save
  says "hermes-webui saved this session during the write; nothing was changed" and changed
  nothing. A real second process saving in a loop is checked the same way.
* **One writer per home**: a second writer (another process) waits briefly, then is refused
  with a clear message; it never writes while the first one is writing.
* **Permissions**: ACL entries and extended attributes survive a write and its undo; what
  cannot be kept is named in the preview.
* **The state folder**: never inside the home or the sessions folder; a shared folder named
  by the user is never chmod-ed (a private folder of our own is made inside it).
* **Long names**: a 255-byte sidecar name is written, backed up and undone.
* **Wording**: a write that wrote some files, or all of them but not the end of its log, says
  exactly that and how to undo it (never "NOT WRITTEN").
* **Durability order** (issue 21 class 5): every staged file is fsynced before it replaces its
  target, and its folder is fsynced after.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector import portable
from inspector.actions import make_context, plan_action
from inspector.plan import ApplyError, FileChange, Plan, WriteLog, apply_plan, undo_write
from inspector.store.files import Fingerprint
from tests.safety.helpers import CLOCK, HOOKED, demo, run_cli, tree_diff, tree_state


def _repair_interrupted_write(home: Path, sid: str, *extra: str) -> tuple[int, str, str]:
    """`repair SID --action repair-interrupted --write` on ``home`` at the tests' clock."""
    return run_cli(
        "repair",
        sid,
        "--action",
        "repair-interrupted",
        "--home",
        str(home),
        "--write",
        *extra,
        "--now",
        str(CLOCK.now),
        "--server-started-at",
        str(CLOCK.server_started_at),
    )


def _done_entry_fails(code: int):
    """A WriteLog.append that raises OSError(code) for the write's "done" entry and appends the rest."""
    real_append = WriteLog.append

    def append(self, record, state="done"):
        if state == "done":
            raise OSError(code, os.strerror(code))
        return real_append(self, record, state)

    return append


ROOT = Path(__file__).resolve().parents[2]
REAL = {name: getattr(os, name) for name in HOOKED}
TEMP_MARK = ".inspector.tmp."
SAVED_MESSAGE = "hermes-webui saved this session during the write"


def hermes_save(path: Path, data: bytes, durable: bool = True) -> None:
    """What hermes-webui's Session.save does to a file: temp file beside it, fsync, os.replace."""
    tmp = path.with_name(f"{path.stem}.tmp.{os.getpid()}.{threading.get_ident()}")
    with open(tmp, "wb") as fh:  # builtin open: not one of the hooked os calls
        fh.write(data)
        fh.flush()
        if durable:
            REAL["fsync"](fh.fileno())
    REAL["replace"](tmp, path)


class Steps:
    """Run ``action`` before disk call number ``at`` made inside a write (0 = only count the calls).

    Every os call that changes the disk is counted, and so is the atomic exchange the write
    uses to swap a file in (``inspector.plan._exchange``, when the code has one).
    """

    def __init__(self, monkeypatch, at: int = 0, action=None):
        self.at, self.action, self.count, self.fired, self.names = at, action, 0, None, []
        for name in HOOKED:
            # fsync is still a step, but a no-op: it changes nothing anyone can see before a power
            # loss, and real ones would make these thousand writes take minutes
            real = (lambda fd: None) if name == "fsync" else REAL[name]
            monkeypatch.setattr(planmod.os, name, self._wrap(name, real))
        if hasattr(planmod, "_exchange"):
            monkeypatch.setattr(planmod, "_exchange", self._wrap("exchange", planmod._exchange))

    def _wrap(self, name, real):
        def wrapper(*args, **kwargs):
            self.count += 1
            self.names.append(name)
            if self.count == self.at and self.action is not None:
                self.fired = name
                self.action()
            return real(*args, **kwargs)

        return wrapper


# ---------------------------------------------------------------- class 1: no save is ever lost


def _sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / "webui" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


FILES = {  # name -> (before, after): a modify, the index, a create and a delete in one write
    "s1.json": (b'{"session_id": "s1", "title": "old"}', b'{"session_id": "s1", "title": "repaired"}'),
    "_index.json": (
        b'[{"session_id": "s1", "title": "old"}]',
        b'[{"session_id": "s1", "title": "repaired"}]',
    ),
    "s2.json": (None, b'{"session_id": "s2", "title": "materialized"}'),
    "s3.json": (b'{"session_id": "s3", "title": "to remove"}', None),
}


def _reset(folder: Path) -> Plan:
    """The folder as the preview saw it (fresh inodes, no leftovers) and the plan of the write."""
    for entry in folder.iterdir():
        entry.unlink()
    changes = []
    for name, (before, after) in FILES.items():
        path = folder / name
        if before is not None:
            path.write_bytes(before)
            path.chmod(0o640)
        changes.append(
            FileChange(path, before, after, Fingerprint.of_bytes(before) if before is not None else None)
        )
    return Plan("test-write", "s1", changes)


def _undo_start(folder: Path, log: WriteLog) -> str:
    """Apply the write (no save injected): undo of it is what is measured."""
    return apply_plan(_reset(folder), log).write_id


def _run_with_a_save(tmp_path: Path, monkeypatch, *, undo: bool, exchange: bool, name: str, at: int) -> dict:
    folder = _sessions(tmp_path)
    log = WriteLog(tmp_path / f"state-{undo}-{exchange}-{name}-{at}")
    with monkeypatch.context() as m:
        m.setattr(planmod.os, "fsync", lambda fd: None)  # see Steps: durability is not what is measured
        if not exchange:
            m.setattr(planmod, "_EXCHANGE", None, raising=False)  # the fallback without renameat2
        write_id = _undo_start(folder, log) if undo else None
        plan = None if undo else _reset(folder)
        before = tree_state(folder)
        saved = b'{"session_id": "%s", "title": "saved by hermes at step %d"}' % (name.encode(), at)
        target = folder / name
        steps = Steps(m, at, lambda: hermes_save(target, saved, durable=False))
        try:
            if undo:
                undo_write(write_id, log)
            else:
                apply_plan(plan, log)
            outcome = None
        except ApplyError as exc:
            outcome = exc
    return {
        "target": target,
        "saved": saved,
        "before": before,
        "outcome": outcome,
        "fired": steps.fired,
        "count": steps.count,
        "log": log,
        "folder": folder,
    }


def _count_steps(tmp_path: Path, monkeypatch, undo: bool, exchange: bool) -> int:
    folder = _sessions(tmp_path)
    log = WriteLog(tmp_path / f"count-{undo}-{exchange}")
    with monkeypatch.context() as m:
        m.setattr(planmod.os, "fsync", lambda fd: None)
        if not exchange:
            m.setattr(planmod, "_EXCHANGE", None, raising=False)
        write_id = _undo_start(folder, log) if undo else None
        plan = None if undo else _reset(folder)
        steps = Steps(m)
        undo_write(write_id, log) if undo else apply_plan(plan, log)
    return steps.count


MODES = [(False, True), (False, False), (True, True), (True, False)]


@pytest.mark.parametrize(
    ("undo", "exchange"), MODES, ids=["apply-exchange", "apply-fallback", "undo-exchange", "undo-fallback"]
)
def test_a_hermes_save_at_any_step_of_a_write_is_never_lost(tmp_path, monkeypatch, undo, exchange) -> None:
    """Rule: no byte hermes-webui writes at any moment of a write (or an undo) is ever lost."""
    if exchange and not planmod.__dict__.get("_EXCHANGE"):
        pytest.skip("this system has no atomic exchange")
    total = _count_steps(tmp_path, monkeypatch, undo, exchange)
    assert total > 20
    lost, wrong, seen = [], [], {"refused": 0, "raced": 0, "written": 0}
    for name in FILES:
        for at in range(1, total + 1):
            r = _run_with_a_save(tmp_path, monkeypatch, undo=undo, exchange=exchange, name=name, at=at)
            where = f"save of {name} before call {at} ({r['fired']})"
            assert r["fired"], f"{where}: never reached"
            if not r["target"].exists() or r["target"].read_bytes() != r["saved"]:
                lost.append(where)
                continue
            wrong += [f"{where}: {x}" for x in _what_else_went_wrong(r, name, undo, seen)]
    print(
        f"\n{'undo' if undo else 'apply'} ({'exchange' if exchange else 'fallback'}): {total} steps x "
        f"{len(FILES)} files: {seen}, saves lost: {len(lost)}"
    )
    assert lost == [], f"{len(lost)} hermes saves lost: " + "; ".join(lost[:10])
    assert wrong == [], "\n".join(wrong[:10])
    assert seen["raced"] > 0 and seen["refused"] > 0 and seen["written"] > 0


def _what_else_went_wrong(r: dict, name: str, undo: bool, seen: dict) -> list[str]:
    """Besides keeping hermes' save: no temp file left, a refusal changed nothing else and logged nothing."""
    folder, exc = r["folder"], r["outcome"]
    out = []
    if [p.name for p in folder.iterdir() if TEMP_MARK in p.name]:
        out.append("temp files left")
    if exc is None:
        seen["written"] += 1
        return out
    message = str(exc)
    if getattr(exc, "outcome", "nothing") != "nothing" or not (
        "nothing was written" in message or "nothing was changed" in message
    ):
        return [*out, f"not refused cleanly: {message}"]
    if SAVED_MESSAGE in message:
        seen["raced"] += 1
        if str(r["target"]) not in message:
            out.append(f"the message does not name the file: {message}")
    else:
        seen["refused"] += 1
    diff = [d for d in tree_diff(r["before"], tree_state(folder)) if not d.endswith(f" {name}")]
    if diff:
        out.append(f"said nothing was changed, but {diff}")
    if len(r["log"].records()) != (1 if undo else 0):
        out.append("the refused write is in the history")
    return out


def test_a_real_hermes_process_saving_in_a_loop_loses_no_save(tmp_path: Path) -> None:
    """A second process saves the sidecar as hermes does, as fast as it can, while the inspector repairs it.

    After every save the process looks at the file again just before its next save: if the
    inspector replaced its save, that save's bytes must be in the backup of a completed write
    (the write displaced exactly what its preview read). Measured: saves replaced by a write,
    and of those, saves not in any backup (lost).
    """
    d, home = demo(tmp_path / "home")
    sid = d.sessions["shrunken"]
    live = d.session_dir / f"{sid}.json"
    (tmp_path / "hermes-data").write_bytes(live.read_bytes())
    report = tmp_path / "hermes.json"
    hermes = subprocess.Popen(
        [
            sys.executable,
            "-c",
            r"""
import hashlib, json, os, sys, time
try:
    import fcntl
except ImportError:
    fcntl = None
path, stop, source, report, held = sys.argv[1:6]
data = open(source, "rb").read()


def write_in_progress():
    # An inspector write holds the home from before its exchange until after any put-back: with
    # flock on the sessions folder, or (no flock: the portable paths) with the O_EXCL file "held".
    if os.path.exists(held):
        return True
    if fcntl is None:
        return False
    fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the shared lock


def after_the_write():
    # Wait until that write is over: then the file is what it left. Event-driven, not a time
    # window a busy machine overruns (the 60 s only stops a hang).
    give_up = time.monotonic() + 60
    while write_in_progress():
        if time.monotonic() > give_up:
            raise SystemExit("an inspector write held the home for 60 s")
        time.sleep(0.001)


def read():
    while True:
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except FileNotFoundError:  # without an exchange the name is absent for microseconds
            time.sleep(0.0002)


replaced, saves, last, put_back = [], 0, None, 0
open(stop + ".ready", "w").close()
while not os.path.exists(stop):
    if last is not None:
        now = read()
        if now != last:
            # A raced write exchanges its bytes in and then puts this save back: once that write is
            # over, the save is either back or replaced.
            after_the_write()
            now = read()
            if now == last:
                put_back += 1
            else:
                replaced.append(hashlib.sha256(last).hexdigest())
    saves += 1
    body = data.replace(b'"title": "', f'"title": "{saves} '.encode(), 1)
    tmp = path[:-5] + f".tmp.{os.getpid()}.{saves}"
    with open(tmp, "wb") as fh:
        fh.write(body)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    last = body
    with open(stop + ".count", "w") as fh:
        fh.write(str(saves))
    time.sleep(0.002)
json.dump({"saves": saves, "replaced": replaced, "put_back": put_back}, open(report, "w"))
""",
            str(live),
            str(tmp_path / "stop"),
            str(tmp_path / "hermes-data"),
            str(report),
            str(planmod._shared_lock_file(d.session_dir)) + ".held",  # the lock where there is no flock
        ]
    )
    outcomes = {"written": 0, "refused": 0, "raced": 0}
    log = WriteLog(tmp_path / "state")
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "stop.ready").exists():
            assert hermes.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        end, cap = time.monotonic() + 2.0, time.monotonic() + 120.0

        def saved() -> int:
            try:
                return int((tmp_path / "stop.count").read_text() or 0)
            except (OSError, ValueError):
                return 0

        # at least 2 s, and until hermes has saved often enough to count (a loaded machine is slower;
        # the 120 s cap only stops a hang)
        while time.monotonic() < end or (saved() <= 60 and time.monotonic() < cap):
            (plan,) = plan_action(make_context(home, CLOCK), "restore-backup", sid)
            if not plan.changes:
                continue
            try:
                apply_plan(plan, log)
                outcomes["written"] += 1
            except ApplyError as exc:
                outcomes["raced" if SAVED_MESSAGE in str(exc) else "refused"] += 1
                assert getattr(exc, "outcome", "nothing") == "nothing", str(exc)
    finally:
        (tmp_path / "stop").touch()
        hermes.wait(timeout=30)
    r = json.loads(report.read_text())
    backed_up = {f["sha256_before"] for rec in log.records() if rec.complete for f in rec.files}
    rescued = log.root / "rescued"
    kept = (
        {hashlib.sha256(p.read_bytes()).hexdigest() for p in rescued.iterdir()} if rescued.is_dir() else set()
    )
    lost = [h for h in r["replaced"] if h not in backed_up | kept]
    print(
        f"\nhermes saved {r['saves']} times; the inspector: {outcomes}; saves replaced by a write: "
        f"{len(r['replaced'])}, displaced and put back: {r['put_back']}, lost: {len(lost)}"
    )
    assert sum(outcomes.values()) > 0 and r["saves"] > 50
    assert lost == [], f"{len(lost)} of hermes' saves were overwritten and are in no backup"
    assert not [p for p in d.session_dir.iterdir() if TEMP_MARK in p.name]


def test_a_save_displaced_by_a_killed_write_is_rescued_not_swept(tmp_path: Path) -> None:
    """A write killed between the exchange and its check leaves hermes' save at its temp name:
    the next write's sweep keeps those bytes in the state folder instead of deleting them."""
    folder = _sessions(tmp_path)
    plan = _reset(folder)
    log = WriteLog(tmp_path / "state")
    target = folder / "s1.json"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)  # a process that has ended
    orphan = target.with_name(f"{planmod._temp_prefix(target)}{pid}.1")
    orphan.write_bytes(b'{"session_id": "s1", "title": "hermes save the killed write displaced"}')
    known = target.with_name(f"{planmod._temp_prefix(target)}{pid}.2")
    known.write_bytes(FILES["s1.json"][1])  # the killed write's own staged bytes
    elsewhere = tmp_path / "elsewhere"  # not the sessions folder: that write's sweep leaves s1's files
    elsewhere.mkdir()
    apply_plan(
        Plan("first", "s1", [FileChange(elsewhere / "other.json", None, b"{}")]), log
    )  # logs nothing of s1
    apply_plan(plan, log)
    assert not orphan.exists() and not known.exists()
    rescued = list((log.root / "rescued").iterdir())
    assert [p.read_bytes() for p in rescued] == [
        b'{"session_id": "s1", "title": "hermes save the killed write displaced"}'
    ]
    assert stat.S_IMODE(rescued[0].stat().st_mode) == 0o600


# ---------------------------------------------------------------- class 2: one writer per home

HOLDER = r"""
import os, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import inspector.plan as planmod
from inspector.plan import FileChange, Plan, WriteLog, apply_plan
from inspector.store.files import Fingerprint
target, state, inside, release = map(Path, sys.argv[2:6])
real = planmod._fsync_dir
def slow_fsync_dir(path):  # the write is in the middle of its work: files swapped, log not done
    inside.touch()
    deadline = time.monotonic() + 60  # only stops a hang: the test releases it
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return real(path)
planmod._fsync_dir = slow_fsync_dir
old = target.read_bytes()
apply_plan(Plan("holder", "a", [FileChange(target, old, b'{"by": "first writer"}', Fingerprint.of_bytes(old))]),
           WriteLog(state))
"""


def _start_first_writer(tmp_path: Path, folder: Path) -> tuple[subprocess.Popen, Path, Path]:
    (folder / "a.json").write_bytes(b'{"a": 1}')
    inside, release = tmp_path / "inside", tmp_path / "release"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOLDER,
            str(ROOT),
            str(folder / "a.json"),
            str(tmp_path / "state"),
            str(inside),
            str(release),
        ]
    )
    deadline = time.monotonic() + 30
    while not inside.exists():
        assert proc.poll() is None, "the first writer ended early"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc, inside, release


def test_a_second_writer_on_the_same_home_waits_then_is_refused(tmp_path: Path, monkeypatch) -> None:
    """Rule: two writers never write the same home at once; the second waits briefly, then is refused."""
    folder = _sessions(tmp_path)
    (folder / "b.json").write_bytes(b'{"b": 1}')
    proc, _, release = _start_first_writer(tmp_path, folder)
    try:
        monkeypatch.setattr(planmod, "LOCK_WAIT", 0.5, raising=False)
        log = WriteLog(tmp_path / "state")
        before = (folder / "b.json").read_bytes()
        plan = Plan(
            "second",
            "b",
            [FileChange(folder / "b.json", before, b'{"by": "second"}', Fingerprint.of_bytes(before))],
        )
        slept: list[float] = []  # what the lock asks to sleep: not how long a busy machine takes

        def sleep(seconds: float) -> None:
            slept.append(seconds)
            time.sleep(seconds)

        clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
        monkeypatch.setattr(planmod, "time", types.SimpleNamespace(**{**clock, "sleep": sleep}))
        t0 = time.monotonic()
        with pytest.raises(ApplyError) as exc:
            apply_plan(plan, log)
        waited = time.monotonic() - t0
        monkeypatch.setattr(planmod, "time", time)
        assert "another hermes-inspector" in str(exc.value) and "nothing was written" in str(exc.value)
        assert str(folder) in str(exc.value)
        # it waited LOCK_WAIT (a wall clock only runs longer on a busy machine) in 50 ms steps and then
        # refused: it never asked to sleep past LOCK_WAIT (the 60 s only stops a hung test)
        assert 0.4 <= waited < 60
        assert slept and set(slept) == {0.05} and sum(slept) <= 0.5 + 0.05 + 1e-9, slept
        assert (folder / "b.json").read_bytes() == before
        code, out, _ = run_cli("list", "--home", str(tmp_path / "home"))  # reading is never blocked
        assert code == 0
        cli_folder = tmp_path / "cli-home" / "webui" / "sessions"  # a command on another home is not blocked
        shutil.copytree(folder, cli_folder)
        cli_before = (cli_folder / "b.json").read_bytes()
        apply_plan(Plan("other home", "b", [FileChange(cli_folder / "b.json", cli_before, b"{}")]), log)
    finally:
        release.touch()
        assert proc.wait(timeout=30) == 0
    # the first writer is done: the second one goes through
    apply_plan(plan, log)
    assert (folder / "b.json").read_bytes() == b'{"by": "second"}'
    assert (folder / "a.json").read_bytes() == b'{"by": "first writer"}'
    assert sorted(p.name for p in folder.iterdir()) == ["a.json", "b.json"]  # the lock made no file


def test_a_second_writer_waits_for_the_first_and_never_interleaves(tmp_path: Path) -> None:
    folder = _sessions(tmp_path)
    (folder / "b.json").write_bytes(b'{"b": 1}')
    proc, _, release = _start_first_writer(tmp_path, folder)
    log = WriteLog(tmp_path / "state")
    threading.Timer(0.4, release.touch).start()
    before = (folder / "b.json").read_bytes()
    apply_plan(
        Plan("second", "b", [FileChange(folder / "b.json", before, b"{}", Fingerprint.of_bytes(before))]), log
    )
    assert proc.wait(timeout=30) == 0
    states = [
        (json.loads(line)["action"], json.loads(line)["state"])
        for line in log.log_path.read_text().splitlines()
    ]
    assert states == [("holder", "started"), ("holder", "done"), ("second", "started"), ("second", "done")]


def test_repair_write_from_the_command_line_refuses_while_another_writer_works(
    tmp_path: Path, monkeypatch
) -> None:
    d, _ = demo(tmp_path / "home")
    sid = d.sessions["shrunken"]
    live = d.session_dir / f"{sid}.json"
    before = live.read_bytes()
    proc, _, release = _start_first_writer(tmp_path, d.session_dir)
    try:
        monkeypatch.setattr(planmod, "LOCK_WAIT", 0.3, raising=False)
        code, out, _ = run_cli("repair", sid, "--action", "restore-backup", "--home", str(d.home), "--write")
        assert code == 1 and f"NOT WRITTEN ({sid}): another hermes-inspector" in out, out
        assert live.read_bytes() == before
    finally:
        release.touch()
        assert proc.wait(timeout=30) == 0


def test_a_folder_that_cannot_be_flocked_is_locked_with_a_file_in_the_state_folder(
    tmp_path: Path, monkeypatch
) -> None:
    """Some network filesystems cannot flock a folder: the lock falls back to a private lock file."""
    if planmod.fcntl is None:
        pytest.skip(
            "no flock here (Windows, or HERMES_INSPECTOR_FORCE_PORTABLE): tests/test_portable_fallbacks.py"
        )
    folder = _sessions(tmp_path)
    (folder / "b.json").write_bytes(b"{}")
    real = planmod.fcntl.flock

    def flock(fd, op):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP))
        return real(fd, op)

    monkeypatch.setattr(planmod.fcntl, "flock", flock)
    log = WriteLog(tmp_path / "state")
    apply_plan(Plan("w", "b", [FileChange(folder / "b.json", b"{}", b"[]")]), log)
    (lock,) = (log.root / "locks").iterdir()
    assert (
        stat.S_IMODE((log.root / "locks").stat().st_mode) == 0o700
        and stat.S_IMODE(lock.stat().st_mode) == 0o600
    )
    with open(lock, "rb") as fh:  # released when the write ended
        real(fh.fileno(), planmod.fcntl.LOCK_EX | planmod.fcntl.LOCK_NB)
    assert sorted(p.name for p in folder.iterdir()) == ["b.json"]


def test_undo_takes_the_same_lock(tmp_path: Path, monkeypatch) -> None:
    folder = _sessions(tmp_path)
    (folder / "b.json").write_bytes(b'{"b": 1}')
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(Plan("w", "b", [FileChange(folder / "b.json", b'{"b": 1}', b'{"b": 2}')]), log)
    proc, _, release = _start_first_writer(tmp_path, folder)
    try:
        monkeypatch.setattr(planmod, "LOCK_WAIT", 0.3, raising=False)
        with pytest.raises(ApplyError, match="another hermes-inspector"):
            undo_write(rec.write_id, log)
        assert (folder / "b.json").read_bytes() == b'{"b": 2}'
    finally:
        release.touch()
        assert proc.wait(timeout=30) == 0
    undo_write(rec.write_id, log)
    assert (folder / "b.json").read_bytes() == b'{"b": 1}'


# ---------------------------------------------------------------- class 7: ACLs and xattrs kept

ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
ACL_UNDEFINED = 0xFFFFFFFF


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL as Linux stores it in ``system.posix_acl_access`` (version 2, tag/perm/id entries)."""
    return struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", tag, perm, ident) for tag, perm, ident in entries
    )


SERVICE_ACL = _acl(
    (ACL_USER_OBJ, 6, ACL_UNDEFINED),
    (ACL_USER, 6, 65534),
    (ACL_GROUP_OBJ, 4, ACL_UNDEFINED),
    (ACL_MASK, 6, ACL_UNDEFINED),
    (ACL_OTHER, 0, ACL_UNDEFINED),
)


def _xattr_file(folder: Path, name: str = "s1.json") -> Path:
    path = folder / name
    path.write_bytes(b'{"a": 1}')
    path.chmod(0o640)
    try:
        os.setxattr(path, "user.hermes.note", b"kept")
        os.setxattr(path, "system.posix_acl_access", SERVICE_ACL)
    except OSError as exc:
        pytest.skip(f"this filesystem has no ACLs or user xattrs ({exc})")
    return path


def _attrs(path: Path) -> dict[str, bytes]:
    return {n: os.getxattr(path, n) for n in os.listxattr(path)}


def test_a_rewritten_file_keeps_its_acl_and_xattrs_and_undo_too(tmp_path: Path) -> None:
    """Rule: a service account given access by an ACL can still save the chat after a repair or an undo."""
    folder = _sessions(tmp_path)
    path = _xattr_file(folder)
    attrs, mode = _attrs(path), stat.S_IMODE(path.stat().st_mode)
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(Plan("w", "s1", [FileChange(path, b'{"a": 1}', b'{"a": 2}')]), log)
    assert path.read_bytes() == b'{"a": 2}'
    assert _attrs(path) == attrs and stat.S_IMODE(path.stat().st_mode) == mode
    undo_write(rec.write_id, log)
    assert path.read_bytes() == b'{"a": 1}'
    assert _attrs(path) == attrs and stat.S_IMODE(path.stat().st_mode) == mode


def test_undo_of_a_delete_gives_the_file_back_its_acl_and_xattrs(tmp_path: Path) -> None:
    folder = _sessions(tmp_path)
    path = _xattr_file(folder)
    attrs, mode = _attrs(path), stat.S_IMODE(path.stat().st_mode)  # 0660: the ACL mask gives the group rw
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(Plan("delete", "s1", [FileChange(path, b'{"a": 1}', None)]), log)
    assert not path.exists()
    undo_write(rec.write_id, log)
    assert path.read_bytes() == b'{"a": 1}' and _attrs(path) == attrs
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_an_attribute_that_cannot_be_kept_is_named_in_the_preview(tmp_path: Path, monkeypatch) -> None:
    """Not root: a ``trusted.*`` attribute cannot be set, another user's file cannot stay theirs."""
    folder = _sessions(tmp_path)
    path = _xattr_file(folder)
    plan = Plan("w", "s1", [FileChange(path, b'{"a": 1}', b'{"a": 2}')])
    assert planmod.attribute_warnings(plan) == []  # everything can be kept
    other_uid = path.stat().st_uid + 1000
    monkeypatch.setattr(planmod.os, "geteuid", lambda: other_uid)
    monkeypatch.setattr(planmod, "read_xattrs", lambda p: {**_attrs(p), "trusted.overlay.x": b"1"})
    warnings = planmod.attribute_warnings(plan)
    assert any(f"{path} belongs to user" in w and "will belong to you" in w for w in warnings), warnings
    assert any("trusted.overlay.x (only root may set it)" in w for w in warnings), warnings
    assert not any("posix_acl" in w or "user.hermes" in w for w in warnings)


def test_the_cli_preview_warns_when_a_sidecar_has_hard_links(tmp_path: Path) -> None:
    d, _ = demo(tmp_path / "home")
    sid = d.sessions["shrunken"]
    live = d.session_dir / f"{sid}.json"
    os.link(live, tmp_path / "second-name.json")
    code, out, _ = run_cli("repair", sid, "--action", "restore-backup", "--home", str(d.home))
    assert code == 0 and f"! {live} has 2 hard links" in out


def test_a_write_that_cannot_copy_an_attribute_it_promised_writes_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    folder = _sessions(tmp_path)
    path = _xattr_file(folder)
    before = tree_state(folder)

    def refuse(*args, **kwargs):
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(planmod.os, "setxattr", refuse)
    log = WriteLog(tmp_path / "state")
    with pytest.raises(ApplyError, match="could not keep the extended attribute .* nothing was written"):
        apply_plan(Plan("w", "s1", [FileChange(path, b'{"a": 1}', b'{"a": 2}')]), log)
    assert tree_diff(before, tree_state(folder)) == [] and log.records() == []


# ---------------------------------------------------------------- class 9: where the state folder is


def test_a_state_folder_inside_the_sessions_folder_or_the_home_is_refused(
    tmp_path: Path, monkeypatch
) -> None:
    d, _ = demo(tmp_path / "home")
    sid = d.sessions["shrunken"]
    for env, value in (
        ("XDG_STATE_HOME", d.session_dir / "state"),
        ("HERMES_INSPECTOR_STATE_DIR", d.home / "inspector-state"),
    ):
        if env.startswith("XDG") and portable.system() != portable.LINUX:
            continue  # XDG_STATE_HOME is Linux's rule (HERMES_INSPECTOR_FORCE_PORTABLE: Windows')
        monkeypatch.delenv("HERMES_INSPECTOR_STATE_DIR", raising=False)
        monkeypatch.setenv(env, str(value))
        before = tree_state(d.home)
        code, out, _ = run_cli("repair", sid, "--action", "restore-backup", "--home", str(d.home), "--write")
        assert code == 1 and "NOT WRITTEN" in out, out
        assert "state folder" in out and "must be kept outside the Hermes home" in out
        assert tree_diff(before, tree_state(d.home)) == [], f"{env}: something was written in the home"


def test_a_shared_state_folder_is_not_chmodded_a_private_one_is_made_inside(
    tmp_path: Path, monkeypatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(shared))
    d, _ = demo(tmp_path / "home")
    sid = d.sessions["shrunken"]
    code, out, _ = run_cli("repair", sid, "--action", "restore-backup", "--home", str(d.home), "--write")
    assert code == 0, out
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777, "the shared folder was chmod-ed"
    (own,) = shared.iterdir()
    assert own.name == f"hermes-inspector-{os.geteuid()}" and stat.S_IMODE(own.stat().st_mode) == 0o700
    assert (own / "writes.jsonl").is_file() and f"Backups: {own}/backups/" in out
    # a folder the user made for it (theirs, not writable by others) is used as it is, not chmod-ed
    mine = tmp_path / "mine"
    mine.mkdir()
    mine.chmod(0o755)
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(mine))
    code, out, _ = run_cli("undo", WriteLog(own).records()[0].write_id)
    assert code == 1 and "no write with id" in out  # a different log
    d2, _ = demo(tmp_path / "home2")
    code, out, _ = run_cli(
        "repair", d2.sessions["shrunken"], "--action", "restore-backup", "--home", str(d2.home), "--write"
    )
    assert code == 0 and (mine / "writes.jsonl").is_file()
    assert stat.S_IMODE(mine.stat().st_mode) == 0o755
    assert stat.S_IMODE((mine / "backups").stat().st_mode) == 0o700
    assert stat.S_IMODE((mine / "writes.jsonl").stat().st_mode) == 0o600


# ---------------------------------------------------------------- class 10: names that always fit


def test_a_session_with_the_longest_possible_name_can_be_repaired_and_undone(tmp_path: Path) -> None:
    folder = _sessions(tmp_path)
    name = "s" * 250 + ".json"  # 255 bytes: the longest name the filesystem allows
    path = folder / name
    path.write_bytes(b'{"a": 1}')
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(Plan("w", "s" * 250, [FileChange(path, b'{"a": 1}', b'{"a": 2}')]), log)
    backup = Path(rec.files[0]["backup"])
    assert backup.read_bytes() == b'{"a": 1}' and len(backup.name.encode()) <= 255
    undo_write(rec.write_id, log)
    assert path.read_bytes() == b'{"a": 1}'
    long_other = folder / ("t" * 250 + ".json")  # two long names never share a backup name
    assert planmod.backup_name(0, path.name) != planmod.backup_name(0, long_other.name)
    multibyte = "\u00e9" * 125 + ".json"  # 255 bytes of two-byte characters
    assert len(planmod.backup_name(120, multibyte).encode()) <= 255 - len(".part")


# ---------------------------------------------------------------- class 11: say what was written


def _two_file_home(tmp_path: Path):
    d, _ = demo(tmp_path / "home")
    sid = d.sessions["stale_pending"]  # repair-interrupted writes the sidecar and the index
    return d, sid


def test_a_partial_write_says_which_files_were_written_and_how_to_undo(tmp_path: Path, monkeypatch) -> None:
    """Rule: "NOT WRITTEN" only when nothing was written; otherwise the files and the undo command."""
    d, sid = _two_file_home(tmp_path)
    pristine = tree_state(d.home)
    swaps = {"n": 0}

    def failing_after_the_first(real):
        def swap(*args):
            target = Path(args[1])
            if target.parent == d.session_dir and TEMP_MARK not in target.name:
                swaps["n"] += 1
                if swaps["n"] > 1:
                    raise OSError(errno.EIO, os.strerror(errno.EIO))
            return real(*args)

        return swap

    with monkeypatch.context() as m:
        if hasattr(planmod, "_exchange"):
            m.setattr(planmod, "_exchange", failing_after_the_first(planmod._exchange))
        m.setattr(planmod.os, "replace", failing_after_the_first(os.replace))
        if (
            planmod.__dict__.get("_EXCHANGE") is None
        ):  # the fallback links the staged file in (not a put-back)
            real_link = os.link
            staged_link = failing_after_the_first(real_link)
            m.setattr(
                planmod.os,
                "link",
                lambda src, dst: (staged_link if not str(src).endswith(".old") else real_link)(src, dst),
            )
        code, out, _ = _repair_interrupted_write(d.home, sid)
    assert code == 1
    if planmod.__dict__.get("_EXCHANGE") is None:
        # without an exchange nothing is final until every file is placed: the first is put back
        assert f"NOT WRITTEN ({sid})" in out and "no file was changed" in out, out
        assert [x for x in tree_diff(pristine, tree_state(d.home)) if TEMP_MARK not in x] == []
        return
    assert "NOT WRITTEN" not in out, out
    assert f"PARTLY WRITTEN ({sid})" in out and "1 of 2 files hold their new bytes" in out
    (rec,) = WriteLog.default().records()
    assert f"hermes-inspector undo {rec.write_id}" in out
    code, out, _ = run_cli("undo", rec.write_id)
    assert code == 0, out
    leftovers = [x for x in tree_diff(pristine, tree_state(d.home)) if TEMP_MARK not in x]
    assert leftovers == []


def test_a_write_whose_log_could_not_be_finished_says_every_file_was_written(
    tmp_path: Path, monkeypatch
) -> None:
    d, sid = _two_file_home(tmp_path)
    append = _done_entry_fails(errno.ENOSPC)

    with monkeypatch.context() as m:
        m.setattr(WriteLog, "append", append)
        code, out, _ = _repair_interrupted_write(d.home, sid)
    assert code == 1 and "NOT WRITTEN" not in out, out
    assert f"WRITTEN, BUT THE WRITE LOG IS INCOMPLETE ({sid})" in out and "every file was written" in out
    (rec,) = WriteLog.default().records()
    assert not rec.complete and f"hermes-inspector undo {rec.write_id}" in out
    code, out, _ = run_cli("undo", rec.write_id)
    assert code == 0, out


def test_an_undo_that_could_not_finish_its_log_says_it_was_done(tmp_path: Path, monkeypatch) -> None:
    d, sid = _two_file_home(tmp_path)
    code, out, _ = _repair_interrupted_write(d.home, sid)
    assert code == 0, out
    (rec,) = WriteLog.default().records()
    append = _done_entry_fails(errno.ENOSPC)

    with monkeypatch.context() as m:
        m.setattr(WriteLog, "append", append)
        code, out, _ = run_cli("undo", rec.write_id)
    assert code == 1 and "Undo refused" not in out, out
    assert out.startswith("UNDONE, BUT THE WRITE LOG IS INCOMPLETE: every file was written")


def test_json_output_says_what_was_written(tmp_path: Path, monkeypatch) -> None:
    d, sid = _two_file_home(tmp_path)
    append = _done_entry_fails(errno.EROFS)

    with monkeypatch.context() as m:
        m.setattr(WriteLog, "append", append)
        code, out, _ = _repair_interrupted_write(d.home, sid, "--json")
    (written,) = json.loads(out)["written"]
    assert code == 1 and written["outcome"] == "all"
    assert sorted(written["written_files"]) == sorted(
        [str(d.session_dir / f"{sid}.json"), str(d.session_dir / "_index.json")]
    )
    assert written["write_id"] == WriteLog.default().records()[0].write_id


# ---------------------------------------------------------------- issue 21 class 5: fsync order


class Syscalls:
    """Spy on the calls that make a write durable: which path each fsync, exchange, link and rename touched."""

    def __init__(self, monkeypatch):
        self.calls: list[tuple[str, str, str | None]] = []
        self.fds: dict[int, str] = {}

        def spy_open(path, flags, mode=0o777, **kw):
            fd = REAL["open"](path, flags, mode, **kw)
            self.fds[fd] = os.fspath(path) if not isinstance(path, int) else f"fd:{path}"
            return fd

        def spy_fsync(fd):
            self.calls.append(("fsync", self.fds.get(fd, f"fd:{fd}"), None))
            return REAL["fsync"](fd)

        def two(name, real):
            def spy(a, b, *args, **kw):
                self.calls.append((name, os.fspath(a), os.fspath(b)))
                return real(a, b, *args, **kw)

            return spy

        monkeypatch.setattr(planmod.os, "open", spy_open)
        monkeypatch.setattr(planmod.os, "fsync", spy_fsync)
        for name in ("link", "rename", "replace"):
            monkeypatch.setattr(planmod.os, name, two(name, REAL[name]))
        if hasattr(planmod, "_exchange"):
            monkeypatch.setattr(planmod, "_exchange", two("exchange", planmod._exchange))

    def index(self, kind: str, a: str | None = None, b: str | None = None) -> list[int]:
        return [
            i
            for i, c in enumerate(self.calls)
            if c[0] == kind and (a is None or c[1] == a) and (b is None or c[2] == b)
        ]


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "fallback"])
def test_each_staged_file_is_fsynced_before_it_replaces_its_target_and_the_folder_after(
    tmp_path: Path, monkeypatch, exchange: bool
) -> None:
    """Rule (durability): the new bytes are on disk before any name points at them; the renames are
    on disk (folder fsync) before the write is logged done; the "started" line is on disk before
    the first file is swapped in."""
    if not exchange:
        monkeypatch.setattr(planmod, "_EXCHANGE", None, raising=False)
    folder = _sessions(tmp_path)
    plan = _reset(folder)
    log = WriteLog(tmp_path / "state")
    with monkeypatch.context() as m:
        spy = Syscalls(m)
        apply_plan(plan, log)
    calls = spy.calls
    puts = [
        i
        for i, (kind, a, b) in enumerate(calls)
        if (
            kind in ("exchange", "link", "replace")
            and b is not None
            and Path(b).parent == folder
            and TEMP_MARK not in Path(b).name
        )
    ]
    placed = {Path(calls[i][2]).name for i in puts}
    assert placed == {"s1.json", "_index.json", "s2.json"}, calls
    for i in puts:
        staged = calls[i][1]
        synced = spy.index("fsync", staged)
        assert synced and synced[0] < i, f"{staged} was not fsynced before it replaced {calls[i][2]}"
    removes = [
        i for i, (kind, a, b) in enumerate(calls) if kind == "rename" and Path(a) == folder / "s3.json"
    ]
    assert removes, "the delete did not go through a rename aside"
    folder_syncs = spy.index("fsync", str(folder))
    assert folder_syncs and folder_syncs[-1] > max(puts + removes), (
        "the folder was not fsynced after the renames"
    )
    log_syncs = spy.index("fsync", str(log.log_path))
    assert len(log_syncs) == 2 and log_syncs[0] < min(puts + removes) and log_syncs[1] > folder_syncs[-1], (
        "the write log's started/done lines are not on disk before/after the swaps"
    )
    backups = [i for i, (kind, a, b) in enumerate(calls) if kind == "replace" and b and "/backups/" in b]
    for i in backups:
        assert spy.index("fsync", calls[i][1])[0] < i, (
            "a backup was renamed into place before its bytes were on disk"
        )
    assert max(backups) < min(puts), "a file was swapped in before every backup was kept"


# ---------------------------------------------------------------- the next holes of the same kind


def test_a_filesystem_that_refuses_the_exchange_gets_the_fallback(tmp_path: Path, monkeypatch) -> None:
    """renameat2 exists but this filesystem says EINVAL (no RENAME_EXCHANGE): the write still goes through
    the fallback, and a save landing at the exchange is still kept."""
    if not planmod.__dict__.get("_EXCHANGE"):
        pytest.skip("this system has no atomic exchange")
    folder = _sessions(tmp_path)
    calls = []

    def refuse(a, b):
        calls.append(b)
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), str(b))

    monkeypatch.setattr(planmod, "_exchange", refuse)
    plan = _reset(folder)
    apply_plan(plan, WriteLog(tmp_path / "state"))
    assert calls, "the exchange was not tried"
    for c in plan.changes:
        assert (c.path.read_bytes() == c.after) if c.after is not None else not c.path.exists()
    plan = _reset(folder)
    saved = b'{"saved": "at the refused exchange"}'

    def refuse_after_a_save(a, b):
        if Path(b).name == "s1.json":
            hermes_save(Path(b), saved)
        return refuse(a, b)

    monkeypatch.setattr(planmod, "_exchange", refuse_after_a_save)
    with pytest.raises(ApplyError, match=SAVED_MESSAGE):
        apply_plan(plan, WriteLog(tmp_path / "state"))
    assert (folder / "s1.json").read_bytes() == saved


def test_hermes_removing_the_session_during_the_write_is_not_undone(tmp_path: Path, monkeypatch) -> None:
    """A delete by hermes-webui (its session delete) between the last check and the swap stays a delete."""
    folder = _sessions(tmp_path)
    plan = _reset(folder)
    before = tree_state(folder)
    real = planmod._swap

    def swap(slot):
        if slot.change.path.name == "_index.json":
            (folder / "s1.json").unlink()  # hermes deletes the session just before its index is swapped
        return real(slot)

    monkeypatch.setattr(planmod, "_swap", swap)
    with pytest.raises(ApplyError, match="was removed meanwhile, and stays removed"):
        # the index is swapped first, then s1.json is found gone: the index is put back, s1 stays gone
        apply_plan(
            Plan(plan.action, plan.session_id, [plan.changes[1], plan.changes[0]]), WriteLog(tmp_path / "s")
        )
    assert tree_diff(before, tree_state(folder)) == ["removed s1.json"]


def test_a_target_swapped_for_a_fifo_after_it_was_checked_does_not_hang_the_write(
    tmp_path: Path, monkeypatch
) -> None:
    """The fingerprint check reads without following links or opening FIFOs, whatever lstat said just before."""
    folder = _sessions(tmp_path)
    target = folder / "s1.json"
    os.mkfifo(target)
    monkeypatch.setattr(planmod, "_target_problem", lambda path: None)  # as if it was a file when looked at
    result: list = []

    def write():
        try:
            apply_plan(
                Plan("w", "s1", [FileChange(target, b"{}", b'{"a": 1}')]), WriteLog(tmp_path / "state")
            )
            result.append("written")
        except ApplyError as exc:
            result.append(str(exc))

    t = threading.Thread(target=write, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the reader so the test process can end
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail("the write blocked on a FIFO")
    assert result and "not a regular file" in result[0] and "nothing was written" in result[0]
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
