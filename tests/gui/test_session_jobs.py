"""The session view's work in child processes: results, errors, cancelling, and the journal
read in two stages (a glance at its head, then every line checked in a child). No Qt needed."""

from __future__ import annotations

import dataclasses
import gc
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

from inspector.gui.workers import Cancelled
from inspector.home import locate_home
from inspector.jobs import pool
from inspector.jobs import session as job_session
from inspector.jobs.pool import finish
from inspector.jobs.session import JournalChanged, index_glance, load_session_data_offloaded
from inspector.present.session_data import glance_journal, load_session_data
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
    return {
        name
        for folder in (pool.SHM, tempfile.gettempdir())
        for name in glob.glob(os.path.join(folder, "hermes-inspector-job-*"))
    }


def test_a_job_runs_in_a_child_and_hands_back_its_result() -> None:
    value, pid = pool.run_job(_echo, {"a": [1, 2.5, "é", None]})
    assert value == {"a": [1, 2.5, "é", None]}
    assert pid != os.getpid()


def test_a_big_result_comes_back_whole_and_leaves_no_file() -> None:
    before = _job_files()
    n = pool.INLINE_MAX + 12345
    result = pool.run_job(_big, n)
    assert result["n"] == n and result["blob"] == b"x" * n
    assert _job_files() == before


def test_an_error_in_the_child_is_raised_here() -> None:
    with pytest.raises(ValueError, match="boom in the child"):
        pool.run_job(_boom)


def test_cancelling_stops_the_job_in_the_child(tmp_path) -> None:
    marker = tmp_path / "started"
    stop = threading.Event()

    def check():
        if stop.is_set():
            raise Cancelled()

    job = pool.start_job(_spin, str(marker))
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    with pytest.raises(Cancelled):
        job.wait(check)
    # the child saw its flag and stopped: the pool runs the next job at once
    assert pool.run_job(_echo, 1)[0] == 1
    with pytest.raises(pool.JobCancelled):
        job._future.result(timeout=60)


def test_in_process_mode_runs_in_the_calling_thread(monkeypatch) -> None:
    monkeypatch.setenv(pool.IN_PROCESS_ENV, "1")
    assert pool.run_job(_echo, 7) == (7, os.getpid())


@dataclasses.dataclass
class _Node:
    name: str
    children: list
    meta: dict


class _Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return isinstance(other, _Slotted) and (self.a, self.b) == (other.a, other.b)


class _Custom:
    """Pickled through __reduce__ with values it makes anew: the walk must not look inside."""

    def __init__(self, items):
        self.items = items

    def __reduce__(self):
        return _Custom, ([dict(x) for x in self.items],)

    def __eq__(self, other):
        return isinstance(other, _Custom) and self.items == other.items


class _Rows(list):
    """A list with an attribute (as the session list's prepared rows)."""

    positions = None


def _piecewise_value():
    shared = {"shared": list(range(50))}
    rows = [{"i": i, "text": "t" * (i % 50), "shared": shared, "f": i / 3} for i in range(20_000)]
    sub = _Rows(rows[:5000])
    sub.positions = {r["i"]: n for n, r in enumerate(sub)}
    return {
        "rows": rows,
        "blob": os.urandom(3 << 20),
        "nested": [[[]]],
        "float": 1e-300,
        "node": _Node("root", [_Node(f"c{i}", [], {"k": rows[i]}) for i in range(3000)], {"s": shared}),
        "slotted": _Slotted(rows[:10], "b" * 5000),
        "custom": _Custom(rows[:4000]),
        "sub": sub,
        "tuple": tuple(rows[100:4100]),
        "set": frozenset(range(10_000)),
        "big_text": "é" * 3_000_000,
    }


def test_a_result_pickled_in_pieces_loads_as_pickle_loads_it() -> None:
    value = _piecewise_value()
    pickled = pool.pickle_pieces(value)
    assert pickled.bulk == [value["blob"]]  # the 3 MB of bytes travel beside the pickles
    try:
        back = pool.loads_pieces(pickled)
    finally:
        gc.unfreeze()
    assert back == pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)) == value
    # what one object held stays one object, across pieces
    assert back["node"].meta["s"] is back["rows"][0]["shared"] is back["rows"][-1]["shared"]
    assert back["node"].children[7].meta["k"] is back["rows"][7]
    assert back["slotted"].a[3] is back["rows"][3] and back["sub"][10] is back["rows"][10]
    assert back["tuple"][0] is back["rows"][100]
    assert isinstance(back["sub"], _Rows) and back["sub"].positions == value["sub"].positions
    # and one plain pickle loads the same way (a single piece)
    assert pool.loads_pieces(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)) == value


def test_a_result_in_pieces_loads_in_small_steps() -> None:
    value = _piecewise_value()
    pickled = pool.pickle_pieces(value)
    blob = pickled.stream
    steps = pool.load_steps(pickled)
    sizes = []
    at = 0
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            result = stop.value
            sizes.append(len(blob) - at)
            break
        now = steps.gi_frame.f_locals["reader"].tell()  # where the step stopped reading
        sizes.append(now - at)
        at = now
    assert result == value
    assert len(sizes) > 20
    # only the step with the big text (6 MB) is big: a single value cannot be split (the 3 MB of
    # bytes are not unpickled at all)
    assert sum(1 for size in sizes if size > 200_000) <= 1, sorted(sizes)[-5:]


def test_a_value_nested_deeper_than_the_walk_goes_is_one_pickle() -> None:
    import sys

    nested: list = []
    node = nested
    for _ in range(400):
        child = ["x" * 3000]
        node.append(child)
        node = child
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        assert pool._pieces(nested) == []  # the walk gives up: no pieces, one pickle
    finally:
        sys.setrecursionlimit(limit)
    assert pool.loads_pieces(pool.pickle_pieces(nested)) == nested


def test_big_bytes_travel_beside_the_pickle_and_come_back_as_the_bytes_read() -> None:
    big = os.urandom(pool.BULK_BYTES)
    other = b"\0" * (3 * pool.BULK_BYTES)
    small = b"s" * 1000
    value = {"a": [big, small, big], "b": (other, {"again": other}), "c": [small] * 3, "n": list(range(5000))}
    pickled = pool.pickle_pieces(value)
    assert [len(b) for b in pickled.bulk] == [len(big), len(other)]
    assert len(pickled.stream) < 100_000  # neither big value is in the pickles
    fresh = [bytes(bytearray(b)) for b in pickled.bulk]  # as read from a file: other objects, same bytes
    back = pool.loads_pieces(pool.Pickled(pickled.stream, fresh))
    assert back == value
    assert back["a"][0] is fresh[0] and back["a"][2] is fresh[0]  # not copied, still shared
    assert back["b"][0] is fresh[1] and back["b"][1]["again"] is fresh[1]


def test_a_big_result_comes_back_through_a_private_file(tmp_path) -> None:
    value = {"plan": b"p" * (2 * pool.BULK_BYTES), "rows": [{"i": i} for i in range(50_000)]}
    kind, name = pool._run_in_child(0, _echo, (value,))
    assert kind == "file" and os.stat(name).st_mode & 0o077 == 0
    back, pid = pool.loads_pieces(pool._take_file(name))
    assert back == value and pid == os.getpid()
    assert not os.path.exists(name)
    Path(name).write_bytes(b"something else")
    with pytest.raises(OSError):
        pool._take_file(name)
    assert not os.path.exists(name)


def test_the_job_pool_hands_back_big_bytes_intact() -> None:
    n = 5 * pool.BULK_BYTES + 7
    result = pool.run_job(_big, n)
    assert result == {"blob": b"x" * n, "n": n}
    assert not _job_files()


class _Holder:
    guard = threading.Lock()  # a class attribute pickle could not take: the class goes by name

    def __init__(self, kinds):
        self.kinds = kinds


def test_classes_and_functions_in_a_result_are_pickled_by_name() -> None:
    value = {"kinds": [_Node, _Holder, os.path.join, len] * 40, "holder": _Holder({"node": _Holder})}
    back = pool.loads_pieces(pool.pickle_pieces(value))
    assert back["kinds"][:4] == [_Node, _Holder, os.path.join, len] and back["holder"].kinds == {
        "node": _Holder
    }


def test_finish_runs_every_step_and_resume_chains() -> None:
    def double(value):
        yield
        return value * 2

    resume = pool.Resume.done(21).then(double)
    assert pool.finish(resume) == 42
    assert pool.finish("plain") == "plain"


# ---------------------------------------------------------------- a session's data, from a child


def _journal(path: Path, sid: str, run: str, events: int) -> bytes:
    lines = []
    for seq in range(1, events + 1):
        rec = {
            "version": 1,
            "event_id": f"{run}:{seq}",
            "seq": seq,
            "run_id": run,
            "session_id": sid,
            "event": "token",
            "type": "token",
            "created_at": 1_700_000_000 + seq / 1000,
            "terminal": False,
            "terminal_state": None,
            "payload": {"text": f"word{seq} "},
        }
        lines.append(json.dumps(rec, separators=(",", ":")))
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    return data


def _same(a, b) -> None:
    assert [r.run_id for r in a.runs] == [r.run_id for r in b.runs]
    for x, y in zip(a.runs, b.runs, strict=True):
        assert (x.dropped_lines, x.odd_lines, x.last_time, x.raw_error) == (
            y.dropped_lines,
            y.odd_lines,
            y.last_time,
            y.raw_error,
        )
        assert x.links == y.links
        assert (x.raw is None) == (y.raw is None)
        if x.raw is not None:
            assert x.raw.data == y.raw.data and x.raw.stats() == y.raw.stats()
            for i in range(len(x.raw)):
                assert x.raw.line(i) == y.raw.line(i)
    assert a.detail.messages == b.detail.messages


def test_the_offloaded_session_is_the_same_as_the_one_read_here(demo, demo_home) -> None:
    for sid in demo.sessions.values():
        _same(finish(load_session_data_offloaded(demo_home, sid)), load_session_data(demo_home, sid))


def test_a_big_journal_is_indexed_once_for_the_glance_and_the_session(demo, demo_home, monkeypatch) -> None:
    sid = demo.sessions["lost_response"]
    run = "0123456789abcdef0123456789abcdef"
    folder = demo.session_dir / "_run_journal" / sid
    _journal(folder / f"{run}.jsonl", sid, run, 5_000)
    monkeypatch.setattr(job_session, "APART_MIN_BYTES", 100_000)
    glance = glance_journal(demo.session_dir, sid, [run], rows=100, min_bytes=0)
    assert glance.run.run_id == run and not glance.complete and glance.ready_rows == 100
    # as in the window: the session's read has joined the journal's index when the glance asks for it
    holder = job_session._SharedIndex.join(glance.run.info.path)
    whole = index_glance(glance)
    assert whole.complete and len(whole.run.raw) == 5_000 and whole.run.raw.stats()["events"] == 5_000
    data = finish(load_session_data_offloaded(demo_home, sid))
    holder.leave()
    big = next(r for r in data.runs if r.run_id == run)
    assert big.raw is whole.run.raw  # one index and one copy of the bytes, shared
    assert big.last_time == pytest.approx(1_700_000_005.0)
    assert not job_session._SharedIndex._entries  # nobody needs it any more: nothing kept alive
    _same(data, load_session_data(demo_home, sid))


def test_a_journal_rewritten_between_two_reads_is_not_shown_with_the_wrong_index(demo, demo_home) -> None:
    sid = demo.sessions["lost_response"]
    path = demo.session_dir / "_run_journal" / sid / "0123456789abcdef0123456789abcdef.jsonl"
    data = _journal(path, sid, path.stem, 5_000)
    index = job_session.index_journal(data, digest=True)
    path.write_bytes(data.replace(b"word1 ", b"WORD1 "))  # same size, other bytes
    with pytest.raises(JournalChanged):
        job_session._bytes_indexed(path, index, lambda: None)
    path.write_bytes(data + data[:100])  # grew since: its first bytes are still the indexed ones
    assert job_session._bytes_indexed(path, index, lambda: None) == data


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
        finish(load_session_data_offloaded(locate_home(demo.home), sid))
    assert {p: p.read_bytes() for p in Path(demo.home).rglob("*") if p.is_file()} == before


# ---------------------------------------------------------------- hand-over without collections


def test_no_collections_pauses_the_collector_and_freezes_nothing():
    """The hand-over pauses the collector; what it made is not frozen (issue 15: with flat rows a
    full collection over them costs ~2 ms, and freezing after each turn of steps stalled more)."""
    import gc

    assert gc.isenabled()
    before = gc.get_freeze_count()
    with pool.no_collections():
        assert not gc.isenabled()
        made = [[i] for i in range(5000)]
    assert gc.isenabled() and len(made) == 5000
    assert gc.get_freeze_count() == before
    with pytest.raises(KeyError), pool.no_collections():
        raise KeyError("a failing hand-over")
    assert gc.isenabled()


def test_the_quick_look_in_a_child_reads_what_the_thread_reads(demo_home):
    from inspector.jobs.offload import quick_rows_job
    from inspector.present.rows import flat_row
    from inspector.quickscan import quick_rows

    here = quick_rows(demo_home.session_dir)
    there = quick_rows_job(demo_home.session_dir)  # flat records, as they cross to the window
    assert there == [flat_row(r) for r in here]
    assert len(there) > 5


# ---------------------------------------------------------------- a big journal's bytes, read when shown


def test_a_file_prefix_behaves_as_the_bytes_it_stands_for(tmp_path):
    data = b'{"seq": 1}\n{"seq": 2}\r\n\xff not utf-8\nlast line without newline'
    path = tmp_path / "j.jsonl"
    path.write_bytes(data + b" and more written later")
    prefix = job_session.FilePrefix(path, len(data))
    assert len(prefix) == len(data)
    for key in (
        slice(0, 5),
        slice(3, None),
        slice(None, -4),
        slice(-10, -2),
        slice(5, 2),
        slice(0, 10_000),
        slice(None, None, 2),
        slice(None, None, -1),
    ):
        assert prefix[key] == data[key], key
    assert [prefix[i] for i in (0, 5, -1, -len(data))] == [data[i] for i in (0, 5, -1, -len(data))]
    with pytest.raises(IndexError):
        prefix[len(data)]
    assert prefix.endswith(b"newline") and not prefix.endswith(b"\n") and not prefix.endswith(b"x" * 1000)
    assert prefix == data and prefix == job_session.FilePrefix(path, len(data)) and prefix != data + b"!"
    assert prefix.decode("utf-8", errors="replace") == data.decode("utf-8", errors="replace")  # whole, once
    assert prefix.count(b"\n") == data.count(b"\n")
    assert pickle.loads(pickle.dumps(prefix)) == data and type(pickle.loads(pickle.dumps(prefix))) is bytes
    assert prefix.digest() == hashlib.sha1(data).digest()
    short = job_session.FilePrefix(path, 10**9)  # never past the end of the file
    assert len(short) == path.stat().st_size
    with pytest.raises(OSError):
        job_session.FilePrefix(tmp_path, 10)  # a folder is not a journal


def test_a_big_journal_read_line_by_line_keeps_its_bytes_when_appended_or_replaced(tmp_path):
    sid, run = "s1", "0123456789abcdef0123456789abcdef"
    path = tmp_path / "_run_journal" / sid / f"{run}.jsonl"
    path.parent.mkdir(parents=True)
    data = _journal(path, sid, run, 3_000)
    raw = job_session.index_whole_journal(path)
    assert isinstance(raw.data, job_session.FilePrefix) and raw.data == data
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
    raw = job_session.index_whole_journal(path)
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
    real = job_session.FilePrefix.digest
    monkeypatch.setattr(job_session.FilePrefix, "digest", lambda self: hashed.append(1) or real(self))
    raw = job_session.index_whole_journal(path)  # written a moment ago: could hide a rewrite, so hashed
    assert raw.data == data and hashed == [1]
    monkeypatch.setattr(job_session, "RACY_WINDOW_NS", -(10**18))  # as if written long ago
    raw = job_session.index_whole_journal(path)
    assert raw.data == data and hashed == [1]  # same device, inode, size and times: not hashed again
    assert raw.line(len(raw) - 1).value["seq"] == 2_000


def test_a_journal_appended_while_it_is_indexed_is_hashed_and_kept(tmp_path, monkeypatch):
    sid, run = "s1", "0123456789abcdef0123456789abcdef"
    path = tmp_path / "_run_journal" / sid / f"{run}.jsonl"
    path.parent.mkdir(parents=True)
    data = _journal(path, sid, run, 2_000)
    monkeypatch.setattr(job_session, "RACY_WINDOW_NS", -(10**18))
    real_start = pool.start_job

    def start_then_append(*args, **kwargs):
        job = real_start(*args, **kwargs)
        with path.open("ab") as fh:  # hermes appends meanwhile: the times change, the prefix does not
            fh.write(b'{"seq": 2001}\n')
        return job

    monkeypatch.setattr(pool, "start_job", start_then_append)
    raw = job_session.index_whole_journal(path)
    assert raw.data == data and len(raw) == 2_000
