"""The single write path: preview equals apply, stale files are refused, undo restores, crashes lose nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from inspector import plan as planmod
from inspector.plan import (
    ApplyError,
    FileChange,
    Plan,
    WriteLog,
    apply_plan,
    file_diff,
    render_diff,
    undo_write,
)
from inspector.store.files import Fingerprint


def _folder(tmp_path: Path) -> Path:
    """The sessions folder of a test (the state folder, tmp_path/state, must be outside it)."""
    folder = tmp_path / "sessions"
    folder.mkdir(exist_ok=True)
    return folder


def _plan(path: Path, before: bytes | None, after: bytes | None) -> Plan:
    fp = Fingerprint.of_bytes(before) if before is not None else None
    return Plan("test", "s1", [FileChange(path, before, after, fp)], summary=["one change"])


def test_apply_writes_exactly_the_previewed_bytes_and_logs_it(tmp_path: Path) -> None:
    target = _folder(tmp_path) / "s1.json"
    target.write_bytes(b'{\n  "a": 1\n}')
    plan = _plan(target, target.read_bytes(), b'{\n  "a": 2\n}')
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(plan, log)
    assert target.read_bytes() == b'{\n  "a": 2\n}'
    assert log.find(rec.write_id) is not None
    backup = Path(rec.files[0]["backup"])
    assert backup.read_bytes() == b'{\n  "a": 1\n}'
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.root.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.log_path.stat().st_mode) == 0o600
    assert not [p for p in target.parent.iterdir() if ".tmp." in p.name], "temp file left behind"


def test_apply_refuses_a_file_changed_after_preview_and_writes_nothing(tmp_path: Path) -> None:
    target = _folder(tmp_path) / "s1.json"
    target.write_bytes(b"old")
    plan = _plan(target, b"old", b"new")
    target.write_bytes(b"hermes saved meanwhile")
    log = WriteLog(tmp_path / "state")
    with pytest.raises(ApplyError, match="changed since the preview"):
        apply_plan(plan, log)
    assert target.read_bytes() == b"hermes saved meanwhile"
    assert log.records() == []


def test_create_only_never_clobbers_a_file_that_appeared(tmp_path: Path) -> None:
    target = _folder(tmp_path) / "new.json"
    plan = _plan(target, None, b"materialized")
    target.write_bytes(b"appeared")
    with pytest.raises(ApplyError, match="now exists"):
        apply_plan(plan, WriteLog(tmp_path / "state"))
    assert target.read_bytes() == b"appeared"


def test_written_file_keeps_its_permissions_and_new_files_get_hermes_mode(tmp_path: Path) -> None:
    target = _folder(tmp_path) / "s1.json"
    target.write_bytes(b"old")
    target.chmod(0o640)
    created = _folder(tmp_path) / "s2.json"
    plan = Plan(
        "test",
        None,
        [
            FileChange(target, b"old", b"new", Fingerprint.of_bytes(b"old")),
            FileChange(created, None, b"fresh"),
        ],
    )
    apply_plan(plan, WriteLog(tmp_path / "state"))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert stat.S_IMODE(created.stat().st_mode) == 0o644


def test_undo_restores_and_refuses_when_the_file_moved_on(tmp_path: Path) -> None:
    target = _folder(tmp_path) / "s1.json"
    created = _folder(tmp_path) / "s2.json"
    target.write_bytes(b"old")
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(
        Plan("test", None, [FileChange(target, b"old", b"new"), FileChange(created, None, b"c")]), log
    )
    undo_write(rec.write_id, log)
    assert target.read_bytes() == b"old"
    assert not created.exists()
    rec2 = apply_plan(_plan(target, b"old", b"newer"), log)
    target.write_bytes(b"edited by hermes")
    with pytest.raises(ApplyError, match="changed after the write"):
        undo_write(rec2.write_id, log)
    assert target.read_bytes() == b"edited by hermes"


def test_crash_between_temp_write_and_replace_leaves_the_old_file(tmp_path: Path, monkeypatch) -> None:
    target = _folder(tmp_path) / "s1.json"
    target.write_bytes(b"old")

    def boom(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(planmod, "_exchange", boom)  # the swap (atomic exchange)
    monkeypatch.setattr(planmod.os, "rename", boom)  # and the fallback without one
    with pytest.raises(OSError):
        apply_plan(_plan(target, b"old", b"new"), WriteLog(tmp_path / "state"))
    assert target.read_bytes() == b"old"
    assert [p.name for p in target.parent.iterdir() if p.is_file()] == ["s1.json"]


def test_diff_is_readable_json_lines_and_marks_missing_newline(tmp_path: Path) -> None:
    change = FileChange(tmp_path / "x.json", b'{\n  "a": 1\n}', b'{\n  "a": 2\n}')
    diff = file_diff(change)
    assert '-  "a": 1' in diff and '+  "a": 2' in diff
    text = render_diff(Plan("demo", "x", [change], summary=["sets a"], warnings=["quirk"]))
    assert "* sets a" in text and "! quirk" in text


def test_torn_write_log_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    log = WriteLog(tmp_path / "state")
    target = _folder(tmp_path) / "s1.json"
    target.write_bytes(b"old")
    apply_plan(_plan(target, b"old", b"new"), log)
    with open(log.log_path, "ab") as fh:
        fh.write(b'{"write_id": "torn')
    assert len(log.records()) == 1


def test_read_only_folder_gives_a_clear_error_and_keeps_the_original(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores folder permissions")
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "s1.json"
    target.write_bytes(b"old")
    folder.chmod(0o500)
    try:
        with pytest.raises(OSError):
            apply_plan(_plan(target, b"old", b"new"), WriteLog(tmp_path / "state"))
        assert target.read_bytes() == b"old"
    finally:
        folder.chmod(0o700)


def _apply_unified(before: list[str], diff: str) -> list[str]:
    """Apply a unified diff (as produced by file_diff) to ``before``; used to check hunk numbers."""
    import re as _re

    out, pos = [], 0
    lines = diff.splitlines(keepends=True)[2:]
    i = 0
    while i < len(lines):
        m = _re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)", lines[i])
        a_start, a_len = int(m.group(1)), int(m.group(2) or 1)
        first = a_start - 1 if a_len else a_start
        out.extend(before[pos:first])
        pos = first
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][0], lines[i][1:]
            if tag in " -":
                pos += 1
            if tag in " +":
                out.append(text)
            i += 1
    out.extend(before[pos:])
    return out


def test_diff_of_a_big_file_cuts_the_common_edges_and_keeps_true_line_numbers(tmp_path: Path) -> None:
    before = [f'  "row": {i},\n' for i in range(50_000)]
    after = list(before)
    after[30_000] = '  "row": "changed",\n'
    change = FileChange(tmp_path / "_index.json", "".join(before).encode(), "".join(after).encode())
    diff = file_diff(change)
    assert "@@ -29998,7 +29998,7 @@" in diff
    assert _apply_unified(before, diff) == after


def test_diff_too_large_to_align_lists_removed_then_added_lines(tmp_path: Path) -> None:
    before = [f"line {i}\n" for i in range(30_000)]
    after = [f"other {i}\n" for i in range(30_000)]
    diff = file_diff(FileChange(tmp_path / "x.json", "".join(before).encode(), "".join(after).encode()))
    assert "too many differing lines to align" in diff
    assert diff.count("\n-line ") == 2_000 and diff.count("\n+other ") == 2_000
    assert "28,000 more removed lines not shown" in diff and "28,000 more added lines not shown" in diff


def test_diff_of_small_files_equals_difflib(tmp_path: Path) -> None:
    import difflib

    before = [f"a{i}\n" for i in range(40)]
    after = before[:5] + ["new\n"] + before[5:30] + before[31:] + ["tail\n"]
    diff = file_diff(FileChange(tmp_path / "x.json", "".join(before).encode(), "".join(after).encode()))
    assert diff == "".join(difflib.unified_diff(before, after, fromfile="a/x.json", tofile="b/x.json"))
    assert _apply_unified(before, diff) == after
