"""``journal.list_runs``: a session's runs folder that cannot be listed is no runs for the
readers that do not ask (the repairs, the transcript), and an error only for the one that asks
(``strict=True``: the session page says why it shows nothing). Expected values by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.store.journal import RUN_JOURNAL_DIR, list_runs


def test_the_runs_sorted_by_name_and_only_jsonl_files(tmp_path: Path) -> None:
    folder = tmp_path / RUN_JOURNAL_DIR / "s1"
    folder.mkdir(parents=True)
    for name in ("b.jsonl", "a.jsonl", "notes.txt"):
        (folder / name).write_text("{}\n")
    (folder / "c.jsonl").mkdir()  # a folder named like a run is no run
    assert list_runs(tmp_path, "s1") == [folder / "a.jsonl", folder / "b.jsonl"]


def test_a_missing_runs_folder_is_no_runs_even_when_asked(tmp_path: Path) -> None:
    assert list_runs(tmp_path, "s1") == []
    assert list_runs(tmp_path, "s1", strict=True) == []


def test_a_runs_folder_that_is_a_file_is_no_runs_unless_asked(tmp_path: Path) -> None:
    (tmp_path / RUN_JOURNAL_DIR).mkdir()
    (tmp_path / RUN_JOURNAL_DIR / "s1").write_text("not a folder")
    assert list_runs(tmp_path, "s1") == []
    with pytest.raises(NotADirectoryError):
        list_runs(tmp_path, "s1", strict=True)
