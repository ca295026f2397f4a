"""One listing of the run journals per look (``load.RunJournals``).

Rules pinned: the audit's two readers of the run journals (the open-run facts of
``add_unshown_output_findings``, the dropped-line facts of ``_journal_findings``) share one
listing: each journal folder is listed once and each journal's ``stat`` taken once per look, and
the report is the one each reader gave with its own listing, including where the two readers
answered differently (an entry whose kind cannot be asked: a symlink loop).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from inspector import load
from inspector.home import locate_home
from inspector.store import scan as scan_mod
from tests.test_catalogue_journals import NOW, S08, _home  # golden 08 with a second, bad journal
from tests.test_load_steal import _forking, needs_fork


def _journal_kinds(audit: dict) -> list[tuple[str, str | None]]:
    return sorted(
        (f["kind"], f["session_id"])
        for f in audit["inspector"]["findings"]
        if f["kind"].startswith("journal_") or f["kind"] == "unsafe_journal_id"
    )


# the readers of a look (a repair module asked for one session's finding reads its own journals)
_READERS = ("inspector.load", "inspector.store.scan")


def _counting(monkeypatch, root: Path) -> tuple[list[str], list[str]]:
    """The folders under ``root`` listed and the journals stat'ed from now on by the look's readers."""
    listed: list[str] = []
    stated: list[str] = []
    real_scandir, real_stat = os.scandir, os.stat

    def scandir(path=".", *a, **k):
        if str(path).startswith(str(root)) and sys._getframe(1).f_globals["__name__"] in _READERS:
            listed.append(str(path))
        return real_scandir(path, *a, **k)

    def stat(path, *a, **k):
        caller = sys._getframe(1).f_globals["__name__"]
        if isinstance(path, (str, os.PathLike)) and str(path).endswith(".jsonl") and caller in _READERS:
            stated.append(str(path))
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "stat", stat)
    return listed, stated


def test_a_warm_audit_lists_each_journal_folder_once_and_stats_each_journal_once(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    home = locate_home(_home(tmp_path))
    first = load.full_audit(home, now=NOW)  # fills the fact cache
    root = home.session_dir / "_run_journal"
    journals = sorted(str(p) for p in root.rglob("*.jsonl"))
    assert len(journals) == 2
    listed, stated = _counting(monkeypatch, root)
    again = load.full_audit(home, now=NOW)
    assert again == first
    assert sorted(listed) == sorted([str(root), str(root / S08)])
    assert sorted(stated) == journals
    assert ("journal_lines_dropped", S08) in _journal_kinds(again)


def test_the_listing_answers_each_reader_as_its_own_listing_did(tmp_path):
    """A symlink loop in ``_run_journal``: the open-run reader (``os.scandir``'s ``is_dir``, which
    raises) gives up on the whole folder, the dropped-line reader (pathlib's ``is_dir``: False)
    goes on with the other folders; an unlistable folder has no names."""
    root = tmp_path / "_run_journal"
    (root / "b").mkdir(parents=True)
    (root / "a").mkdir()
    (root / "a" / "r2.jsonl").write_text("{}\n")
    (root / "a" / "r1.jsonl").write_text("{}\n")
    (root / "a" / "notes.txt").write_text("x")
    (root / "a" / ".hidden.jsonl").write_text("{}\n")
    (root / "plain.jsonl").write_text("{}\n")  # a file, not a folder
    listing = load.RunJournals(tmp_path)
    assert listing.folders(strict=True) == ["a", "b"]
    assert listing.folders(strict=False) == ["a", "b"]
    assert listing.names("a") == [".hidden.jsonl", "r1.jsonl", "r2.jsonl"]  # as glob("*.jsonl")
    assert listing.names("b") == []
    assert listing.names("missing") is None
    os.symlink("loop", root / "loop")  # a link to itself: asking its kind raises ELOOP
    looped = load.RunJournals(tmp_path)
    assert looped.folders(strict=True) is None
    assert looped.folders(strict=False) == ["a", "b"]
    assert load.RunJournals(tmp_path / "nowhere").folders(strict=False) is None


def test_a_folder_whose_kind_raises_another_error_fails_the_lenient_listing_too(tmp_path, monkeypatch):
    """pathlib's ``is_dir`` answers False only for a missing target, a loop, a non-folder on the
    way and a bad descriptor; any other error (here: permission denied) fails the listing."""
    root = tmp_path / "_run_journal"
    (root / "a").mkdir(parents=True)
    listing = load.RunJournals(tmp_path)
    monkeypatch.setattr(listing, "_entries", [("a", True), ("x", PermissionError(13, "denied"))])
    assert listing.folders(strict=False) is None
    for code in (2, 20, 9, 40):  # ENOENT, ENOTDIR, EBADF, ELOOP
        monkeypatch.setattr(listing, "_entries", [("a", True), ("x", OSError(code, "no"))])
        assert listing.folders(strict=False) == ["a"]
        assert listing.folders(strict=True) is None


def test_the_journal_findings_with_a_looping_entry_are_those_of_pathlib(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    home = locate_home(_home(tmp_path))
    root = home.session_dir / "_run_journal"
    os.symlink("loop", root / "loop")
    audit = load.full_audit(home, now=NOW)
    # the unshown-output reader gave up (as before), the dropped-line reader did not
    assert ("journal_lines_dropped", S08) in _journal_kinds(audit)
    assert ("journal_output_not_shown", S08) not in _journal_kinds(audit)
    assert load.full_audit(home, now=NOW) == audit  # and warm, from the cache


@needs_fork
def test_a_first_open_lists_and_stats_the_journals_once_before_its_copies_take_them(tmp_path, monkeypatch):
    """The listing the forked copies are dealt the journals from is the one the readers answer
    from after them: no folder listed and no journal stat'ed again once the copies are done."""
    home = locate_home(_home(tmp_path))
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    alone = load.full_audit(home, now=NOW)  # (no cache: no copy, every journal read here)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    stolen = _forking(monkeypatch, 1)
    root = home.session_dir / "_run_journal"
    journals = sorted(str(p) for p in root.rglob("*.jsonl"))
    listed, stated = _counting(monkeypatch, root)
    first = load.full_audit(home, now=NOW)
    assert stolen == [1]  # the copies took the journals
    assert first == alone
    assert sorted(listed) == sorted([str(root), str(root / S08)])
    assert sorted(stated) == journals
