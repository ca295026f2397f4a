"""The window's catalogue (and ``list``) reads the run journals only for the open-run facts.

Rule pinned: ``load_catalogue`` derives, for every run journal, only what the list's health needs
(whether a run may have output no terminal record ended: the finding "journal output not shown"),
never the audit command's dropped-line facts (every line checked); a session's detail reads its
own journals for those, and ``audit`` derives them, the same whether a window opened the home
first or not.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector import load
from inspector.home import locate_home
from inspector.session_detail import load_detail
from inspector.store import scan as scan_mod
from tests.conftest import GOLDEN, copy_tree
from tests.read_log import note_scan_reads

S08 = "518fa3e90ec7"
NOW = 1_779_427_000.0  # golden 08's clock: its marker armed more than 24 hours before
BAD_RUN = "0" * 32  # a second run journal of S08: no output, one line hermes drops


def _home(tmp_path: Path) -> Path:
    root = copy_tree(GOLDEN / "08-giveup-after-24h" / "before", tmp_path / "home")
    folder = root / "webui" / "sessions" / "_run_journal" / S08
    (folder / f"{BAD_RUN}.jsonl").write_text('{"event": "meta", "seq": 1}\nnot json\n', encoding="utf-8")
    return root


def _with_copy(monkeypatch, forks: list) -> None:
    """Small folders and a process with Qt loaded normally skip the forked copy: force it."""
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    real = load.Forked
    monkeypatch.setattr(load, "Forked", lambda fn: forks.append(1) or real(fn))


def _cache() -> dict:
    (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
    return json.loads(cache_file.read_text(encoding="utf-8"))


def _row_kinds(cat) -> dict[str, list[str]]:
    return {sid: sorted(f.kind for f in row.findings) for sid, row in cat.rows.items()}


def _journal_kinds(audit: dict) -> list[tuple[str, str]]:
    return sorted(
        (f["kind"], f["message"]) for f in audit["inspector"]["findings"] if f["kind"].startswith("journal_")
    )


def test_journals_aside_without_findings_caches_only_open_run_facts(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    home = locate_home(_home(tmp_path))
    scan = load._scan(home)
    assert load._journals_aside(home.session_dir, scan.cache, with_findings=False) is None
    journals = sorted(str(p) for p in (home.session_dir / "_run_journal").rglob("*.jsonl"))
    assert len(journals) == 2
    assert sorted(scan.cache.seen(scan_mod.OPEN_RUN)) == journals
    assert scan.cache.seen(scan_mod.JOURNAL) == set()
    # with the findings (the audit command): both kinds, and the dropped line is reported
    findings = load._journals_aside(home.session_dir, scan.cache, with_findings=True)
    assert [(f.kind, f.session_id) for f in findings] == [("journal_lines_dropped", S08)]
    assert sorted(scan.cache.seen(scan_mod.JOURNAL)) == journals


@pytest.mark.parametrize("forked", [False, True])
def test_window_catalogue_keeps_the_unshown_output_finding_and_derives_no_dropped_lines(
    tmp_path, monkeypatch, forked
):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    forks: list = []
    if forked:
        _with_copy(monkeypatch, forks)
    home = locate_home(_home(tmp_path))
    cat = load.load_catalogue(home, now=NOW)
    assert len(forks) == (load.FIRST_OPEN_COPIES if forked else 0)
    assert "journal_output_not_shown" in [f.kind for f in cat.rows[S08].findings]
    assert cat.rows[S08].health == "warning"
    cached = _cache()
    assert len(cached["open_run"]) == 2 and cached["journal"] == {}
    # the session's detail still shows the dropped line, read from the journal itself
    detail = load_detail(home, S08)
    assert "journal_lines_dropped" in [f.kind for f in detail.findings]


def test_audit_after_a_window_open_reports_the_journals_as_on_a_first_open(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    forks: list = []
    _with_copy(monkeypatch, forks)
    home = locate_home(_home(tmp_path))
    first_open = load.full_audit(home, now=NOW)
    kinds = _journal_kinds(first_open)
    assert ("journal_lines_dropped", f"run {BAD_RUN}: hermes drops 1 line(s) (first at line 2)") in kinds
    assert any(k == "journal_output_not_shown" for k, _ in kinds)
    for f in scan_mod.cache_dir().glob("scan-*.json"):
        f.unlink()
    with_copy = load.load_catalogue(home, now=NOW)  # a window's first open, then the audit
    assert load.full_audit(home, now=NOW) == first_open
    # an audit's journal facts survive a later window open (the window uses no such facts)
    assert len(_cache()["journal"]) == 2
    again = load.load_catalogue(home, now=NOW)
    assert len(_cache()["journal"]) == 2
    assert _row_kinds(again) == _row_kinds(with_copy)


def _as_json(cat) -> tuple:
    return [row.to_json() for row in cat.sorted_rows()], [f.to_json() for f in cat.home_findings]


def test_window_first_open_reads_each_journal_once_in_the_copies_and_lists_the_same(tmp_path, monkeypatch):
    """Rule: on a window's first open the copies derive the run journals' open-run facts beside
    the sidecars (each journal read once, none here); the list is the one of reading them here."""
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    home = locate_home(_home(tmp_path))
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _as_json(load.load_catalogue(home, now=NOW))  # no copy: this test process has Qt loaded
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    forks: list = []
    _with_copy(monkeypatch, forks)
    log = tmp_path / "reads.log"
    note_scan_reads(monkeypatch, log, lambda path: "_run_journal" in path)
    aside = load.load_catalogue(home, now=NOW)
    assert len(forks) == load.FIRST_OPEN_COPIES
    assert _as_json(aside) == here
    assert "journal_output_not_shown" in [f.kind for f in aside.rows[S08].findings]
    reads = [line.split() for line in log.read_text().splitlines()]
    journals = sorted(str(p) for p in (home.session_dir / "_run_journal").rglob("*.jsonl"))
    assert sorted(p for _, p in reads) == journals  # each once
    assert os.getpid() not in {int(pid) for pid, _ in reads}  # in the copies
    assert len(_cache()["open_run"]) == 2 and _cache()["journal"] == {}
