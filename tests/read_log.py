"""Which process reads which file: the reads of the scan's module noted in a log file, appended from
every process (the forked copies of a first open included), one ``<pid> <path>`` line a read."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from inspector.store import scan as scan_mod


def note_scan_reads(monkeypatch, log: Path, keep: Callable[[str], bool] = lambda path: True) -> None:
    """Every whole read (``read_regular``) and every read from a file's end (``derive_from_tail``: a run
    journal's open-run facts) the scan's module makes, of the paths ``keep`` accepts, noted in ``log``."""

    def noting(real):
        def read(path, *a, **k):
            if keep(str(path)):
                with open(log, "a") as fh:
                    fh.write(f"{os.getpid()} {path}\n")
            return real(path, *a, **k)

        return read

    monkeypatch.setattr(scan_mod, "read_regular", noting(scan_mod.read_regular))
    monkeypatch.setattr(scan_mod, "derive_from_tail", noting(scan_mod.derive_from_tail))
