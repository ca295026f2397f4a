"""A window's first open takes the sidecars (and the copies the run journals) by chunks, whoever
is free (``load._Steal``): the list is the one of reading everything here, each file is read
once across the processes, and a copy that fails or dies loses nothing."""

from __future__ import annotations

import json
import os
import time

import pytest

from inspector import load, portable
from inspector.home import locate_home
from inspector.store import scan as scan_mod
from tests.read_log import note_scan_reads

needs_fork = pytest.mark.skipif(portable.FORCED or not hasattr(os, "fork"), reason="no fork here")
NOW = 1_800_000_000.0


def _home(tmp_path):
    sessions = tmp_path / "webui" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(23):
        msgs = [{"role": "user", "content": f"m{j}"} for j in range(i % 5)]
        meta = {"session_id": f"s{i:02}", "title": f"t{i}", "messages": msgs, "updated_at": 1000.0 + i}
        if i == 4:  # a turn still marked running: a finding on its row
            meta.update(pending_user_message="hi", active_stream_id="st", pending_started_at=5.0)
        (sessions / f"s{i:02}.json").write_text(json.dumps(meta))
    (sessions / "s07.json").write_text('{"session_id": "s07", "messages": [')  # torn
    (sessions / "s05.json.bak").write_text(json.dumps({"session_id": "s05", "messages": [{}] * 9}))
    (sessions / "gone.json.bak").write_text(json.dumps({"session_id": "gone", "messages": [{}]}))
    # (every live sidecar listed: hermes' audit counts the messages of one it does not list, and
    # its copy reads such a file again for that)
    listed = [{"session_id": f"s{i:02}"} for i in range(23)] + [{"session_id": "ghost"}]
    (sessions / "_index.json").write_text(json.dumps(listed))
    turns = sessions / "_turn_journal"
    turns.mkdir()
    (turns / "s02~1.jsonl").write_text(
        json.dumps({"turn_id": "t", "event": "submitted", "content": "new text", "created_at": 5}) + "\n"
    )
    runs = sessions / "_run_journal"
    for sid in ("s03", "s09", "s11"):
        (runs / sid).mkdir(parents=True)
        (runs / sid / "r1.jsonl").write_text('{"event": "token", "seq": 1, "payload": {"text": "x"}}\n')
        (runs / sid / "r2.jsonl").write_text('{"event": "meta", "seq": 1}\n')
    return locate_home(tmp_path)


def _as_json(cat) -> tuple:
    return [row.to_json() for row in cat.sorted_rows()], [f.to_json() for f in cat.home_findings]


def _here(home) -> tuple:
    """The catalogue read in this process alone (no copy: this test process has Qt loaded)."""
    return _as_json(load.load_catalogue(home, now=NOW))


def _forking(monkeypatch, chunk: int = 2) -> list:
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    monkeypatch.setattr(load, "STEAL_CHUNK", chunk)
    stolen: list = []
    real = load._start_stealing
    monkeypatch.setattr(load, "_start_stealing", lambda *a: stolen.append(1) or real(*a))
    return stolen


@needs_fork
@pytest.mark.parametrize("chunk", [1, 2, 48])
def test_the_list_is_the_one_of_reading_everything_here_and_each_file_is_read_once(
    tmp_path, monkeypatch, chunk
):
    home = _home(tmp_path)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _here(home)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    stolen = _forking(monkeypatch, chunk)
    log = tmp_path / "reads.log"
    note_scan_reads(monkeypatch, log)
    assert _as_json(load.load_catalogue(home, now=NOW)) == here
    assert stolen == [1]
    reads = [line.split(" ", 1) for line in log.read_text().splitlines()]
    folder = f"{home.session_dir}/"
    sidecars = [p[len(folder) :] for _, p in reads if p.startswith(folder) and "/_" not in p]
    assert sorted(sidecars) == sorted(set(sidecars))  # once each
    assert len(sidecars) == 25
    journals = [p for _, p in reads if "/_run_journal/" in p]
    assert sorted(journals) == sorted(set(journals)) and len(journals) == 6
    assert str(os.getpid()) not in {pid for pid, p in reads if "/_run_journal/" in p}  # in the copies
    # the cache a second look starts from: every sidecar, every journal's open-run facts
    (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
    cached = json.loads(cache_file.read_text())
    assert len(cached["sidecar"]) == 25 and len(cached["open_run"]) == 6


@needs_fork
@pytest.mark.parametrize("slow", ["copies", "this process"])
def test_whoever_takes_most_chunks_each_file_is_read_once(tmp_path, monkeypatch, slow):
    """The list's file is read once whichever process is slower at taking chunks: the test above
    mostly sees the copies take every chunk before this process starts its own reading, so here
    one side waits before each chunk it takes (a chunk this process took must not be read again
    as one no copy handed over)."""
    home = _home(tmp_path)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _here(home)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    _forking(monkeypatch, 1)
    main = os.getpid()
    real_take = load._Steal._take

    def take(fd):
        if (os.getpid() == main) == (slow == "this process"):
            time.sleep(0.05)
        return real_take(fd)

    monkeypatch.setattr(load._Steal, "_take", staticmethod(take))
    log = tmp_path / "reads.log"
    note_scan_reads(monkeypatch, log)
    assert _as_json(load.load_catalogue(home, now=NOW)) == here
    reads = [line.split(" ", 1) for line in log.read_text().splitlines()]
    folder = f"{home.session_dir}/"
    sidecars = [(pid, p[len(folder) :]) for pid, p in reads if p.startswith(folder) and "/_" not in p]
    names = [name for _, name in sidecars]
    assert sorted(names) == sorted(set(names)) and len(names) == 25  # once each
    here_read = sum(1 for pid, _ in sidecars if pid == str(main))
    assert here_read >= 10 if slow == "copies" else here_read < 10


@needs_fork
def test_the_audit_command_steals_on_a_first_open_and_a_second_look_does_not_steal(tmp_path, monkeypatch):
    home = _home(tmp_path)
    stolen = _forking(monkeypatch)
    load.full_audit(home, now=NOW)
    assert stolen == [1]  # (load.AUDIT_STEALING; tests/test_audit_steal.py pins its report)
    load.full_audit(home, now=NOW)
    assert stolen == [1]  # the cache knows every sidecar: no copy
    monkeypatch.setattr(load, "AUDIT_STEALING", False)
    for f in scan_mod.cache_dir().glob("scan-*.json"):
        f.unlink()
    load.full_audit(home, now=NOW)
    assert stolen == [1]  # the switch off: the audit's deal
    for f in scan_mod.cache_dir().glob("scan-*.json"):
        f.unlink()
    first = _as_json(load.load_catalogue(home, now=NOW))
    assert stolen == [1, 1]
    assert _as_json(load.load_catalogue(home, now=NOW)) == first  # the cache knows them: no copy
    assert stolen == [1, 1]


@needs_fork
@pytest.mark.parametrize("which", [1, 2])
def test_a_copy_that_fails_before_handing_over_loses_nothing(tmp_path, monkeypatch, which):
    home = _home(tmp_path)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _here(home)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    _forking(monkeypatch)
    real = load._aside_job

    def failing(home, scan, share, stage, others, journals, with_hermes_audit, *rest):
        if with_hermes_audit == (which == 1):
            steal = rest[-1]
            steal.sidecars(scan)  # takes every chunk it can, then dies without handing them over
            raise RuntimeError("the copy fails")
        return real(home, scan, share, stage, others, journals, with_hermes_audit, *rest)

    monkeypatch.setattr(load, "_aside_job", failing)
    monkeypatch.setattr("inspector.forked._log_failure", lambda *a: None)
    one_by_one: list[str] = []  # the catalogue's own read of a file no one handed over
    real_one = scan_mod.SessionDirScan._read_sidecar
    monkeypatch.setattr(
        scan_mod.SessionDirScan,
        "_read_sidecar",
        lambda self, n, w: one_by_one.append(n) or real_one(self, n, w),
    )
    assert _as_json(load.load_catalogue(home, now=NOW)) == here
    assert one_by_one == []  # the chunks it took are read here in one pass, with the rest


@needs_fork
def test_a_copy_that_fails_after_handing_over_still_gets_every_journal_looked_at(tmp_path, monkeypatch):
    home = _home(tmp_path)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _here(home)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    _forking(monkeypatch)
    real_paths = load._Steal.journal_paths

    def dying(self):
        for path in real_paths(self):
            if os.getpid() != main:
                raise RuntimeError("dies while reading the journals")
            yield path

    main = os.getpid()
    monkeypatch.setattr(load._Steal, "journal_paths", dying)
    monkeypatch.setattr("inspector.forked._log_failure", lambda *a: None)
    cat = load.load_catalogue(home, now=NOW)
    assert _as_json(cat) == here
    unshown = sorted(
        sid for sid, row in cat.rows.items() if "journal_output_not_shown" in [f.kind for f in row.findings]
    )
    assert unshown == ["s03", "s09", "s11"]


def test_chunk_numbers_reach_one_reader_each_and_the_pipe_end_says_there_are_no_more():
    todo = [(f"s{i}.json", False) for i in range(10)]
    steal = load._Steal(todo, ["/j/a", "/j/b", "/j/c"])
    try:
        assert steal.size == load.STEAL_CHUNK and steal.count == 1
        assert steal.chunk(0) == todo
        assert list(steal.journal_paths()) == ["/j/a", "/j/b", "/j/c"]
        assert list(steal.journal_paths()) == []
    finally:
        steal.close()


def test_more_chunks_than_a_pipe_holds_make_bigger_chunks(monkeypatch):
    monkeypatch.setattr(load, "STEAL_CHUNK", 1)
    todo = [(f"s{i}.json", False) for i in range(3 * load.MAX_TOKENS + 1)]
    steal = load._Steal(todo, [])
    try:
        assert steal.count <= load.MAX_TOKENS and steal.size == 4
        assert [pair for i in range(steal.count) for pair in steal.chunk(i)] == todo
    finally:
        steal.close()
