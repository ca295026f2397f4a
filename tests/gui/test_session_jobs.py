"""The session view's work in child processes: results, errors, cancelling, and the journal
read in two stages (a glance at its head, then every line checked in a child). No Qt needed."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import pickle
import tempfile
import threading
import time
from pathlib import Path

import pytest

from inspector.gui import session_data, session_jobs
from inspector.gui.session_data import (
    JournalChanged,
    glance_journal,
    index_glance,
    load_session_data,
    load_session_data_offloaded,
)
from inspector.gui.workers import Cancelled
from inspector.home import locate_home
from inspector.store.journal_raw import RawJournal

# ---------------------------------------------------------------- jobs (module level: the child imports them)


def _echo(value, check):
    return value, os.getpid()


def _boom(check):
    raise ValueError("boom in the child")


def _big(n, check):
    return {"blob": b"x" * n, "n": n}


def _spin(marker, check):
    Path(marker).write_text("started")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        check()
        time.sleep(0.01)
    return "never cancelled"


def _job_files() -> set[str]:
    return {name for folder in (session_jobs.SHM, tempfile.gettempdir())
            for name in glob.glob(os.path.join(folder, "hermes-inspector-job-*"))}


def test_a_job_runs_in_a_child_and_hands_back_its_result() -> None:
    value, pid = session_jobs.run_job(_echo, {"a": [1, 2.5, "é", None]})
    assert value == {"a": [1, 2.5, "é", None]}
    assert pid != os.getpid()


def test_a_big_result_comes_back_whole_and_leaves_no_file() -> None:
    before = _job_files()
    n = session_jobs.INLINE_MAX + 12345
    result = session_jobs.run_job(_big, n)
    assert result["n"] == n and result["blob"] == b"x" * n
    assert _job_files() == before


def test_an_error_in_the_child_is_raised_here() -> None:
    with pytest.raises(ValueError, match="boom in the child"):
        session_jobs.run_job(_boom)


def test_cancelling_stops_the_job_in_the_child(tmp_path) -> None:
    marker = tmp_path / "started"
    stop = threading.Event()

    def check():
        if stop.is_set():
            raise Cancelled()

    job = session_jobs.start_job(_spin, str(marker))
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    with pytest.raises(Cancelled):
        job.wait(check)
    # the child saw its flag and stopped: the pool runs the next job at once
    assert session_jobs.run_job(_echo, 1)[0] == 1
    with pytest.raises(session_jobs.JobCancelled):
        job._future.result(timeout=10)


def test_in_process_mode_runs_in_the_calling_thread(monkeypatch) -> None:
    monkeypatch.setenv(session_jobs.IN_PROCESS_ENV, "1")
    assert session_jobs.run_job(_echo, 7) == (7, os.getpid())


def test_gentle_loads_is_pickle_loads() -> None:
    value = {"rows": [{"i": i, "text": "t" * (i % 50)} for i in range(20_000)], "blob": os.urandom(3 << 20),
             "nested": [[[]]], "float": 1e-300}
    assert session_jobs.gentle_loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)) == value
    assert session_jobs.gentle_loads(pickle.dumps(value, protocol=0)) == value


# ---------------------------------------------------------------- a session's data, from a child


def _journal(path: Path, sid: str, run: str, events: int) -> bytes:
    lines = []
    for seq in range(1, events + 1):
        rec = {"version": 1, "event_id": f"{run}:{seq}", "seq": seq, "run_id": run, "session_id": sid,
               "event": "token", "type": "token", "created_at": 1_700_000_000 + seq / 1000, "terminal": False,
               "terminal_state": None, "payload": {"text": f"word{seq} "}}
        lines.append(json.dumps(rec, separators=(",", ":")))
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    return data


def _same(a, b) -> None:
    assert [r.run_id for r in a.runs] == [r.run_id for r in b.runs]
    for x, y in zip(a.runs, b.runs, strict=True):
        assert (x.dropped_lines, x.odd_lines, x.last_time, x.raw_error) == \
               (y.dropped_lines, y.odd_lines, y.last_time, y.raw_error)
        assert x.links == y.links
        assert (x.raw is None) == (y.raw is None)
        if x.raw is not None:
            assert x.raw.data == y.raw.data and x.raw.stats() == y.raw.stats()
            for i in range(len(x.raw)):
                assert x.raw.line(i) == y.raw.line(i)
    assert a.detail.messages == b.detail.messages


def test_the_offloaded_session_is_the_same_as_the_one_read_here(demo, demo_home) -> None:
    for sid in demo.sessions.values():
        _same(load_session_data_offloaded(demo_home, sid), load_session_data(demo_home, sid))


def test_a_big_journal_is_indexed_once_for_the_glance_and_the_session(demo, demo_home, monkeypatch) -> None:
    sid = demo.sessions["lost_response"]
    run = "0123456789abcdef0123456789abcdef"
    folder = demo.session_dir / "_run_journal" / sid
    _journal(folder / f"{run}.jsonl", sid, run, 5_000)
    monkeypatch.setattr(session_data, "APART_MIN_BYTES", 100_000)
    glance = glance_journal(demo.session_dir, sid, [run], rows=100, min_bytes=0)
    assert glance.run.run_id == run and not glance.complete and glance.ready_rows == 100
    # as in the window: the session's read has joined the journal's index when the glance asks for it
    holder = session_data._SharedIndex.join(glance.run.info.path)
    whole = index_glance(glance)
    assert whole.complete and len(whole.run.raw) == 5_000 and whole.run.raw.stats()["events"] == 5_000
    data = load_session_data_offloaded(demo_home, sid)
    holder.leave()
    big = next(r for r in data.runs if r.run_id == run)
    assert big.raw is whole.run.raw  # one index and one copy of the bytes, shared
    assert big.last_time == pytest.approx(1_700_000_005.0)
    assert not session_data._SharedIndex._entries  # nobody needs it any more: nothing kept alive
    _same(data, load_session_data(demo_home, sid))


def test_a_journal_rewritten_between_two_reads_is_not_shown_with_the_wrong_index(demo, demo_home) -> None:
    sid = demo.sessions["lost_response"]
    path = demo.session_dir / "_run_journal" / sid / "0123456789abcdef0123456789abcdef.jsonl"
    data = _journal(path, sid, path.stem, 5_000)
    index = session_data.index_journal(data, digest=True)
    path.write_bytes(data.replace(b"word1 ", b"WORD1 "))  # same size, other bytes
    with pytest.raises(JournalChanged):
        session_data._bytes_indexed(path, index, lambda: None)
    path.write_bytes(data + data[:100])  # grew since: its first bytes are still the indexed ones
    assert session_data._bytes_indexed(path, index, lambda: None) == data


def test_a_glance_reads_only_the_head(demo, demo_home) -> None:
    sid = demo.sessions["lost_response"]
    run = "0123456789abcdef0123456789abcdef"
    data = _journal(demo.session_dir / "_run_journal" / sid / f"{run}.jsonl", sid, run, 20_000)
    glance = glance_journal(demo.session_dir, sid, [run], rows=300, min_bytes=0)
    head = glance.run.raw.data
    assert data.startswith(head) and head.count(b"\n") == 300 and head.endswith(b"\n")
    assert glance.run.info.size == len(data)
    assert all(glance.run.raw.line(i).is_event and not glance.run.raw.line(i).anomalies for i in range(300))


def test_the_home_folder_stays_untouched(demo, demo_home) -> None:
    before = {p: p.read_bytes() for p in Path(demo.home).rglob("*") if p.is_file()}
    for sid in demo.sessions.values():
        load_session_data_offloaded(locate_home(demo.home), sid)
    assert {p: p.read_bytes() for p in Path(demo.home).rglob("*") if p.is_file()} == before


# ---------------------------------------------------------------- hand-over without collections


def test_no_collections_pauses_the_collector_and_freezes_what_was_made():
    import gc

    assert gc.isenabled()
    before = gc.get_freeze_count()
    try:
        with session_jobs.no_collections():
            assert not gc.isenabled()
            made = [[i] for i in range(5000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(made)  # no later collection walks them
        with pytest.raises(KeyError), session_jobs.no_collections():
            raise KeyError("a failing hand-over")
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_gentle_loads_gives_what_pickle_gives():
    value = {"rows": [{"id": f"s{i}", "n": i, "text": "x" * (i % 300)} for i in range(20_000)], "b": b"\0" * 300_000}
    blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    import gc

    try:
        assert session_jobs.gentle_loads(blob) == value
    finally:
        gc.unfreeze()


def test_the_quick_look_in_a_child_reads_what_the_thread_reads(demo_home):
    from inspector.gui.offload import quick_rows_job
    from inspector.quickscan import quick_rows

    here = quick_rows(demo_home.session_dir)
    there = quick_rows_job(demo_home.session_dir)
    assert [(r.session_id, r.title, r.profile, r.sidecar.meta) for r in there] == [
        (r.session_id, r.title, r.profile, r.sidecar.meta) for r in here]
    assert len(there) > 5


# ---------------------------------------------------------------- a big journal's bytes, read when shown


def test_a_file_prefix_behaves_as_the_bytes_it_stands_for(tmp_path):
    data = b'{"seq": 1}\n{"seq": 2}\r\n\xff not utf-8\nlast line without newline'
    path = tmp_path / "j.jsonl"
    path.write_bytes(data + b" and more written later")
    prefix = session_data.FilePrefix(path, len(data))
    assert len(prefix) == len(data)
    for key in (slice(0, 5), slice(3, None), slice(None, -4), slice(-10, -2), slice(5, 2), slice(0, 10_000),
                slice(None, None, 2), slice(None, None, -1)):
        assert prefix[key] == data[key], key
    assert [prefix[i] for i in (0, 5, -1, -len(data))] == [data[i] for i in (0, 5, -1, -len(data))]
    with pytest.raises(IndexError):
        prefix[len(data)]
    assert prefix.endswith(b"newline") and not prefix.endswith(b"\n") and not prefix.endswith(b"x" * 1000)
    assert prefix == data and prefix == session_data.FilePrefix(path, len(data)) and prefix != data + b"!"
    assert prefix.decode("utf-8", errors="replace") == data.decode("utf-8", errors="replace")  # whole, once
    assert prefix.count(b"\n") == data.count(b"\n")
    assert pickle.loads(pickle.dumps(prefix)) == data and type(pickle.loads(pickle.dumps(prefix))) is bytes
    assert prefix.digest() == hashlib.sha1(data).digest()
    short = session_data.FilePrefix(path, 10 ** 9)  # never past the end of the file
    assert len(short) == path.stat().st_size
    with pytest.raises(OSError):
        session_data.FilePrefix(tmp_path, 10)  # a folder is not a journal


def test_a_big_journal_read_line_by_line_keeps_its_bytes_when_appended_or_replaced(tmp_path):
    sid, run = "s1", "0123456789abcdef0123456789abcdef"
    path = tmp_path / "_run_journal" / sid / f"{run}.jsonl"
    path.parent.mkdir(parents=True)
    data = _journal(path, sid, run, 3_000)
    raw = session_data.index_whole_journal(path)
    assert isinstance(raw.data, session_data.FilePrefix) and raw.data == data
    expected = RawJournal(data, session_id=sid, run_id=run, path=path)
    lines = [expected.line(i) for i in range(len(expected))]
    assert [raw.line(i) for i in range(len(raw))] == lines and raw.stats() == expected.stats()
    with path.open("ab") as fh:  # hermes appends: the indexed prefix is the same
        fh.write(b'{"seq": 99999}\n')
    assert raw.line(len(raw) - 1) == lines[-1] and len(raw) == len(lines)
    path.with_suffix(".new").write_bytes(b"x" * len(data))
    os.replace(path.with_suffix(".new"), path)  # replaced: the open file keeps the old bytes
    assert [raw.line(i) for i in (0, 1500, len(raw) - 1)] == [lines[0], lines[1500], lines[-1]]


def test_a_big_journal_cut_short_under_the_window_shows_what_is_left(tmp_path):
    sid, run = "s1", "0123456789abcdef0123456789abcdef"
    path = tmp_path / "_run_journal" / sid / f"{run}.jsonl"
    path.parent.mkdir(parents=True)
    _journal(path, sid, run, 1_000)
    raw = session_data.index_whole_journal(path)
    with path.open("r+b") as fh:  # truncated in place (hermes never does this)
        fh.truncate(path.stat().st_size // 2)
    assert raw.line(0).dropped is None  # the first half is still there
    last = raw.line(len(raw) - 1)  # past the end now: no exception, shown as a line hermes cannot read
    assert last.data == b"" and last.dropped is not None


def test_an_unchanged_settled_journal_is_not_hashed_again_in_the_window(tmp_path, monkeypatch):
    sid, run = "s1", "0123456789abcdef0123456789abcdef"
    path = tmp_path / "_run_journal" / sid / f"{run}.jsonl"
    path.parent.mkdir(parents=True)
    data = _journal(path, sid, run, 2_000)
    hashed = []
    real = session_data.FilePrefix.digest
    monkeypatch.setattr(session_data.FilePrefix, "digest", lambda self: hashed.append(1) or real(self))
    raw = session_data.index_whole_journal(path)  # written a moment ago: could hide a rewrite, so hashed
    assert raw.data == data and hashed == [1]
    monkeypatch.setattr(session_data, "RACY_WINDOW_NS", -10**18)  # as if written long ago
    raw = session_data.index_whole_journal(path)
    assert raw.data == data and hashed == [1]  # same device, inode, size and times: not hashed again
    assert raw.line(len(raw) - 1).value["seq"] == 2_000


def test_a_journal_appended_while_it_is_indexed_is_hashed_and_kept(tmp_path, monkeypatch):
    sid, run = "s1", "0123456789abcdef0123456789abcdef"
    path = tmp_path / "_run_journal" / sid / f"{run}.jsonl"
    path.parent.mkdir(parents=True)
    data = _journal(path, sid, run, 2_000)
    monkeypatch.setattr(session_data, "RACY_WINDOW_NS", -10**18)
    real_start = session_jobs.start_job

    def start_then_append(*args, **kwargs):
        job = real_start(*args, **kwargs)
        with path.open("ab") as fh:  # hermes appends meanwhile: the times change, the prefix does not
            fh.write(b'{"seq": 2001}\n')
        return job

    monkeypatch.setattr(session_jobs, "start_job", start_then_append)
    raw = session_data.index_whole_journal(path)
    assert raw.data == data and len(raw) == 2_000
