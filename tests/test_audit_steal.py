"""The audit command's first open takes its sidecars by chunks, whoever is free (``load._Steal``,
``load.AUDIT_STEALING``), as the window's does: its report is the one of reading everything in
this process and the one of the deal by cost it replaced, each sidecar and each run journal is
read once across the processes (the journals in the copies, every line checked there), hermes'
audit still reads exactly the files it reads, and a copy that fails loses nothing.

Every test that forks forces ``can_fork`` (pytest-qt loads Qt into this process, which makes it
False here): without that the "forked" report would be the plain one compared with itself."""

from __future__ import annotations

import json
import os

import pytest

from inspector import load, portable
from inspector.home import locate_home
from inspector.store import scan as scan_mod

needs_fork = pytest.mark.skipif(portable.FORCED or not hasattr(os, "fork"), reason="no fork here")
NOW = 1_800_000_000.0


def _home(tmp_path):
    sessions = tmp_path / "webui" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(31):
        msgs = [{"role": "user", "content": f"m{j}"} for j in range(i % 6)]
        meta = {"session_id": f"s{i:02}", "title": f"t{i}", "messages": msgs, "updated_at": 1000.0 + i}
        if i == 4:  # a turn still marked running: a finding on its row, and an item of hermes'
            meta.update(pending_user_message="hi", active_stream_id="st", pending_started_at=5.0)
        (sessions / f"s{i:02}.json").write_text(json.dumps(meta))
    (sessions / "s07.json").write_text('{"session_id": "s07", "messages": [')  # torn
    (sessions / "s05.json.bak").write_text(json.dumps({"session_id": "s05", "messages": [{}] * 9}))
    (sessions / "s12.json.bak").write_text(json.dumps({"session_id": "s12", "messages": [{}]}))
    (sessions / "gone.json.bak").write_text(json.dumps({"session_id": "gone", "messages": [{}]}))
    # every live sidecar listed (hermes' audit counts the messages of one it does not list, and
    # its copy reads such a file again for that)
    listed = [{"session_id": f"s{i:02}"} for i in range(31)] + [{"session_id": "ghost"}]
    (sessions / "_index.json").write_text(json.dumps(listed))
    turns = sessions / "_turn_journal"
    turns.mkdir()
    (turns / "s02~1.jsonl").write_text(
        json.dumps({"turn_id": "t", "event": "submitted", "content": "new text", "created_at": 5}) + "\n"
    )
    runs = sessions / "_run_journal"
    for sid, lines in (
        ("s01", ['{"seq": 1}', "not json", '{"seq": 3}']),
        ("s03", ['{"event": "token", "seq": 1, "payload": {"text": "x"}}']),
        ("s09", ['{"a": 1}', "[1]"]),
        ("s11", ['{"event": "meta", "seq": 1}']),
    ):
        (runs / sid).mkdir(parents=True)
        (runs / sid / "r1.jsonl").write_text("\n".join(lines) + "\n")
        (runs / sid / "r2.jsonl").write_text('{"seq": 1}\n')
    (runs / "bad name!").mkdir()
    return locate_home(tmp_path)


def _plain(home, monkeypatch) -> dict:
    """The audit read in this process alone (no copy), as a system that cannot fork does."""
    monkeypatch.setattr(load, "can_fork", lambda: False)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    report = load.full_audit(home, now=NOW)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    return report


def _forking(monkeypatch, chunk: int = 2) -> list:
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)  # (False in this Qt-loaded process)
    monkeypatch.setattr(load, "STEAL_CHUNK", chunk)
    stolen: list = []
    real = load._start_stealing
    monkeypatch.setattr(load, "_start_stealing", lambda *a: stolen.append(1) or real(*a))
    return stolen


def _noting_reads(monkeypatch, log) -> None:
    """Every file read through ``read_regular`` (the scan's sidecars, ``_index.json``, the run
    journals), noted with the reading process."""
    for module in (scan_mod, load):
        real = module.read_regular

        def noting(path, *a, _real=real, **k):
            with open(log, "a") as fh:  # appended from every process
                fh.write(f"{os.getpid()} {path}\n")
            return _real(path, *a, **k)

        monkeypatch.setattr(module, "read_regular", noting)


def _clear_cache() -> None:
    for f in scan_mod.cache_dir().glob("scan-*.json"):
        f.unlink()


@needs_fork
@pytest.mark.parametrize("chunk", [1, 2, 48])
def test_a_stealing_audit_reports_what_reading_everything_here_reports(tmp_path, monkeypatch, chunk):
    home = _home(tmp_path)
    here = _plain(home, monkeypatch)
    kinds = [f["kind"] for f in here["inspector"]["findings"]]
    assert kinds.count("journal_lines_dropped") == 2 and "unsafe_journal_id" in kinds
    assert here["items"]  # hermes' own items are in the report compared
    stolen = _forking(monkeypatch, chunk)
    assert load.full_audit(home, now=NOW) == here
    assert stolen == [1]


@needs_fork
def test_a_stealing_audit_reports_what_the_deal_by_cost_reports(tmp_path, monkeypatch):
    home = _home(tmp_path)
    stolen = _forking(monkeypatch)
    monkeypatch.setattr(load, "AUDIT_STEALING", False)
    dealt = load.full_audit(home, now=NOW)
    assert stolen == []
    _clear_cache()
    monkeypatch.setattr(load, "AUDIT_STEALING", True)
    assert load.full_audit(home, now=NOW) == dealt
    assert stolen == [1]


@needs_fork
def test_a_stealing_audit_without_a_fact_cache_reports_the_same(tmp_path, monkeypatch):
    # (no cache to hand journal facts over in: the copy running hermes' audit reads them all)
    home = _home(tmp_path)
    here = _plain(home, monkeypatch)
    stolen = _forking(monkeypatch)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    assert load.full_audit(home, now=NOW) == here
    assert stolen == [1]


@needs_fork
def test_each_sidecar_and_journal_is_read_once_and_hermes_files_by_its_copy(tmp_path, monkeypatch):
    home = _home(tmp_path)
    here = _plain(home, monkeypatch)
    _forking(monkeypatch)
    # the files hermes' audit reads (every .bak and its live sidecar, the sessions with a turn
    # journal): the copy running it must have read each of them itself
    scan = scan_mod.SessionDirScan(home.session_dir, None)
    hermes_files = set(load._hermes_files(home, scan)[0])
    assert {"s05.json", "s05.json.bak", "s12.json.bak", "gone.json.bak", "s02.json"} <= hermes_files
    log = tmp_path / "reads.log"
    _noting_reads(monkeypatch, log)
    assert load.full_audit(home, now=NOW) == here
    reads = [line.split(" ", 1) for line in log.read_text().splitlines()]
    folder = f"{home.session_dir}/"
    sidecars = [(pid, p[len(folder) :]) for pid, p in reads if p.startswith(folder) and "/_" not in p]
    names = [n for _, n in sidecars]
    assert sorted(names) == sorted(set(names))  # once each
    assert len(names) == 34  # 31 live sidecars and 3 .bak files
    assert [p for _, p in reads].count(f"{folder}_index.json") == 1  # parsed in hermes' copy
    journals = [(pid, p) for pid, p in reads if "/_run_journal/" in p]
    assert sorted(p for _, p in journals) == sorted({p for _, p in journals}) and len(journals) == 8
    assert str(os.getpid()) not in {pid for pid, _ in journals}  # every line checked in the copies
    # hermes' copy: the one that read _index.json
    (hermes_pid,) = {pid for pid, p in reads if p == f"{folder}_index.json"}
    assert hermes_pid != str(os.getpid())
    assert hermes_files <= {n for pid, n in sidecars if pid == hermes_pid}


@needs_fork
def test_journals_too_recent_to_keep_are_still_read_once_in_the_copies(tmp_path, monkeypatch):
    """A run journal written in the last seconds (or given a new hard link: its ctime moves) is
    never stored in the fact cache; its facts still come back from the copy that read it, for
    this run only: the journals are read once, none in this process, the report is the same,
    and the cache saved afterwards holds no entry for them."""
    home = _home(tmp_path)
    here = _plain(home, monkeypatch)
    _forking(monkeypatch)
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 10**18)  # every file too recent to keep
    log = tmp_path / "reads.log"
    _noting_reads(monkeypatch, log)
    assert load.full_audit(home, now=NOW) == here
    reads = [line.split(" ", 1) for line in log.read_text().splitlines()]
    journals = [(pid, p) for pid, p in reads if "/_run_journal/" in p]
    assert sorted(p for _, p in journals) == sorted({p for _, p in journals}) and len(journals) == 8
    assert str(os.getpid()) not in {pid for pid, _ in journals}
    saved = scan_mod.FactCache.for_session_dir(home.session_dir)  # (no file when nothing was kept)
    assert saved.entries[scan_mod.JOURNAL] == {} and saved.entries[scan_mod.OPEN_RUN] == {}
    log.unlink()
    assert load.full_audit(home, now=NOW) == here  # the next look reads them again
    again = [p for _, p in (line.split(" ", 1) for line in log.read_text().splitlines())]
    assert len([p for p in again if "/_run_journal/" in p]) == 8


@needs_fork
@pytest.mark.parametrize("which", [1, 2])
def test_a_copy_that_fails_after_taking_chunks_loses_nothing(tmp_path, monkeypatch, which):
    home = _home(tmp_path)
    here = _plain(home, monkeypatch)
    _forking(monkeypatch)
    real = load._aside_job

    def failing(home, scan, share, stage, others, journals, with_hermes_audit, *rest):
        if with_hermes_audit == (which == 1):
            rest[-1].sidecars(scan)  # takes every chunk it can, then dies without handing them over
            raise RuntimeError("the copy fails")
        return real(home, scan, share, stage, others, journals, with_hermes_audit, *rest)

    monkeypatch.setattr(load, "_aside_job", failing)
    monkeypatch.setattr("inspector.forked._log_failure", lambda *a: None)
    assert load.full_audit(home, now=NOW) == here


@needs_fork
def test_a_copy_dying_among_the_journals_leaves_their_findings_whole(tmp_path, monkeypatch):
    home = _home(tmp_path)
    here = _plain(home, monkeypatch)
    _forking(monkeypatch)
    real_paths = load._Steal.journal_paths
    main = os.getpid()

    def dying(self):
        for path in real_paths(self):
            if os.getpid() != main:
                raise RuntimeError("dies while reading the journals")
            yield path

    monkeypatch.setattr(load._Steal, "journal_paths", dying)
    monkeypatch.setattr("inspector.forked._log_failure", lambda *a: None)
    assert load.full_audit(home, now=NOW) == here


@needs_fork
def test_a_second_look_after_a_stealing_audit_says_the_same_without_a_copy(tmp_path, monkeypatch):
    home = _home(tmp_path)
    here = _plain(home, monkeypatch)
    stolen = _forking(monkeypatch)
    forked: list = []
    real = load.Forked
    monkeypatch.setattr(load, "Forked", lambda fn: forked.append(1) or real(fn))
    assert load.full_audit(home, now=NOW) == here
    assert stolen == [1] and len(forked) == load.AUDIT_COPIES
    assert load.full_audit(home, now=NOW) == here  # every journal's facts came back to the cache
    assert len(forked) == load.AUDIT_COPIES
