"""The run list of a session (``journal_raw.list_session_runs``): one row per ``<run>.jsonl``, however it reads.

Rules found by mutation testing (tests/MUTATION.md, third session). Every row is written out by hand:
hermes' ``latest_run_summary`` fields for one run (``api/run_journal.py``: ``event_count`` counts the
events read, ``last_seq``/``last_event_id``/``last_event`` come from the last one, ``terminal_state``
from the terminal event), the lines it skips, and why a file cannot be read at all. A file that is
too large to load whole is summarised piece by piece, and gives the same row as a small one.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

import inspector.store.journal_raw as journal_raw
from inspector.store.files import TooLargeToLoad
from inspector.store.journal_raw import RunListing, list_session_runs

SID = "a1b2c3d4e5f6"


def _line(run: str, seq: int, event: str, terminal_state: str | None = None) -> bytes:
    obj = {
        "version": 1,
        "event_id": f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": SID,
        "event": event,
        "type": event,
        "created_at": 1.0,
        "terminal": terminal_state is not None,
        "terminal_state": terminal_state,
        "payload": {"text": "t"},
    }
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _journal(run: str) -> bytes:
    """Two events, a line hermes skips between them, the run ended with "completed"."""
    return _line(run, 1, "token") + b"not json\n" + _line(run, 2, "done", "completed")


def _summary(run: str) -> dict:
    return {
        "session_id": SID,
        "run_id": run,
        "stream_id": run,
        "event_count": 2,
        "last_seq": 2,
        "last_event_id": f"{run}:2",
        "terminal": True,
        "terminal_state": "completed",
        "last_event": "done",
    }


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "_run_journal" / SID
    folder.mkdir(parents=True)
    return folder


def _read_regular_refusing(monkeypatch, refusals: dict[str, BaseException]) -> None:
    """``read_regular`` raises the given error for the named files, reads the others."""
    real = journal_raw.read_regular

    def read_regular(path, *args, **kwargs):
        if Path(path).name in refusals:
            raise refusals[Path(path).name]
        return real(path, *args, **kwargs)

    monkeypatch.setattr(journal_raw, "read_regular", read_regular)


def test_every_run_gets_a_row_whatever_happens_to_the_ones_before_it(tmp_path, monkeypatch):
    """Rule: a run that cannot be read, cannot be decoded or is too large gives its own row and the
    listing goes on to the next run (sorted by run id); each row carries its run id, path and size."""
    folder = _folder(tmp_path)
    paths = {name: folder / f"{name}.jsonl" for name in ("r1", "r2", "r3", "r4", "r5")}
    paths["r1"].write_bytes(b"\xff\n")  # invalid UTF-8: hermes reads nothing of it
    paths["r2"].write_bytes(_journal("r2"))  # cannot be opened
    paths["r3"].write_bytes(_journal("r3"))  # too large to load: read piece by piece
    paths["r4"].write_bytes(b"\xfe\n" * 3)  # too large and invalid UTF-8
    paths["r5"].write_bytes(_journal("r5"))
    size3, size4 = len(_journal("r3")), 6
    _read_regular_refusing(
        monkeypatch,
        {
            "r2.jsonl": PermissionError(errno.EACCES, "Permission denied", str(paths["r2"])),
            "r3.jsonl": TooLargeToLoad(paths["r3"], size3, 10),
            "r4.jsonl": TooLargeToLoad(paths["r4"], size4, 3),
        },
    )
    runs = list_session_runs(tmp_path, SID)
    assert [r.run_id for r in runs] == ["r1", "r2", "r3", "r4", "r5"]
    r1, r2, r3, r4, r5 = runs
    assert (r1.run_id, r1.path, r1.size, r1.summary, r1.malformed, r1.valid_id) == (
        "r1",
        paths["r1"],
        2,
        None,
        0,
        True,
    )
    assert r1.error == "not valid UTF-8 at byte 0: the whole journal is unreadable"
    assert r2 == RunListing(
        "r2", paths["r2"], 0, None, 0, f"[Errno 13] Permission denied: '{paths['r2']}'", True
    )
    assert r3 == RunListing("r3", paths["r3"], size3, _summary("r3"), 1, None, True)
    assert (r4.run_id, r4.path, r4.size, r4.summary, r4.malformed, r4.valid_id) == (
        "r4",
        paths["r4"],
        6,
        None,
        0,
        True,
    )
    assert r4.error == "not valid UTF-8 at byte 0: the whole journal is unreadable"
    assert r5 == RunListing("r5", paths["r5"], len(_journal("r5")), _summary("r5"), 1, None, True)


@pytest.mark.parametrize("too_large", [False, True])
def test_a_runs_row_names_its_session_and_run_in_the_summary(tmp_path, monkeypatch, too_large):
    """Rule: the summary's session_id, run_id and stream_id are the session's and the file's run id,
    whether the journal was loaded whole or read piece by piece."""
    folder = _folder(tmp_path)
    path = folder / "run.7.jsonl"
    path.write_bytes(_line("run.7", 1, "token") + _line("run.7", 2, "token"))
    if too_large:
        _read_regular_refusing(monkeypatch, {"run.7.jsonl": TooLargeToLoad(path, path.stat().st_size, 1)})
    (row,) = list_session_runs(tmp_path, SID)
    assert row.summary == {
        "session_id": SID,
        "run_id": "run.7",
        "stream_id": "run.7",
        "event_count": 2,
        "last_seq": 2,
        "last_event_id": "run.7:2",
        "terminal": False,
        "terminal_state": "running",
        "last_event": "token",
    }
    assert (row.malformed, row.error, row.valid_id, row.size) == (0, None, True, path.stat().st_size)


@pytest.mark.parametrize("too_large", [False, True])
def test_a_run_id_hermes_refuses_is_listed_as_invalid(tmp_path, monkeypatch, too_large):
    """Rule: hermes' run ids are ``[A-Za-z0-9_.-]+``; a file named otherwise is listed with valid_id False."""
    folder = _folder(tmp_path)
    path = folder / "run 1.jsonl"
    path.write_bytes(_line("run 1", 1, "token"))
    if too_large:
        _read_regular_refusing(monkeypatch, {"run 1.jsonl": TooLargeToLoad(path, path.stat().st_size, 1)})
    (row,) = list_session_runs(tmp_path, SID)
    assert (row.run_id, row.valid_id, row.error) == ("run 1", False, None)
