"""Helpers of the write path's tests: a pid no process has, what a write kept in ``rescued/``, and a
stand-in for Windows' ``msvcrt`` byte lock."""

from __future__ import annotations

import subprocess
import sys

from inspector.plan import WriteLog


def dead_pid() -> int:
    """A pid no process has: past Linux's highest (PID_MAX_LIMIT, 2**22), elsewhere a child that ended."""
    if sys.platform.startswith("linux"):
        return 2**22 + 1
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def rescued(log: WriteLog) -> dict[str, bytes]:
    """The files in the log's ``rescued/`` folder, name -> bytes (none when the folder was never made)."""
    folder = log.root / "rescued"
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}


class FakeMsvcrt:
    """msvcrt's byte lock: held by another the first ``held`` times (with ``code``), then taken."""

    LK_NBLCK = 2

    def __init__(self, held: int, code: int) -> None:
        self.calls: list[tuple[int, int]] = []
        self.held, self.code = held, code

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.calls.append((mode, nbytes))
        if len(self.calls) <= self.held:
            raise OSError(self.code, "held by another")
