"""Sweeping a dead writer's temp files keeps every version the write log does not know (``plan._known_versions``).

Rules found by mutation testing (tests/MUTATION.md, third session): a version is "known" for one
target path only, as the before or the after bytes of a logged write of that path; any other
bytes found in a stale temp file are rescued before the file is removed.
"""

from __future__ import annotations

import hashlib
import os

from inspector.plan import WriteLog, WriteRecord, sweep_stale_temps
from tests.write_path_helpers import dead_pid, rescued


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_stale_temp_holding_a_logged_version_of_its_own_target_is_not_rescued(tmp_path):
    """Rule: the before and the after bytes of a logged write of a target are known for that target
    only: a stale temp holding either is removed, one holding other bytes (or a version logged
    for another file) is first copied to rescued/."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target, other = folder / "s1.json", folder / "s2.json"
    log = WriteLog(tmp_path / "state")
    files = [{"path": str(target), "sha256_before": _sha(b"v1"), "sha256_after": _sha(b"v2")}]
    log.append(WriteRecord("w1", 1.0, "repair", "s1", files))
    pid = dead_pid()
    (folder / f".s1.json.inspector.tmp.{pid}.1.aaaa").write_bytes(b"v1")  # the version before the write
    (folder / f".s1.json.inspector.tmp.{pid}.1.bbbb").write_bytes(b"v2")  # the inspector's own new bytes
    (folder / f".s1.json.inspector.tmp.{pid}.1.cccc").write_bytes(b"v3")  # someone else's: rescued
    (folder / f".s2.json.inspector.tmp.{pid}.1.dddd").write_bytes(b"v1")  # known for s1.json, not s2.json
    assert sweep_stale_temps([target, other], log) == 4
    assert sorted(p.name for p in folder.iterdir()) == []
    assert sorted(rescued(log).values()) == [b"v1", b"v3"]


def test_a_log_entry_without_hashes_makes_nothing_known(tmp_path):
    """Rule: a logged file with no (or non-string) sha256 fields adds no known version."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target = folder / "s1.json"
    log = WriteLog(tmp_path / "state")
    log.append(WriteRecord("w1", 1.0, "repair", "s1", [{"path": str(target), "sha256_before": None}]))
    pid = dead_pid()
    (folder / f".s1.json.inspector.tmp.{pid}.1.aaaa").write_bytes(b"v1")
    assert sweep_stale_temps([target], log) == 1
    assert sorted(rescued(log).values()) == [b"v1"]


def test_the_whole_folder_sweep_takes_a_dead_writers_temps_for_other_names_too(tmp_path):
    """Rule (a run killed while it staged early, whose files are no target of the next write):
    with ``whole_folders`` a dead process's temp file for any name in a target's folder is swept,
    its unknown bytes rescued first; a living process's, hermes' own ``*.tmp.*`` files and
    names that only look alike are left alone. Without it only the targets' temps are."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target = folder / "s1.json"
    log = WriteLog(tmp_path / "state")
    dead = dead_pid()
    other = folder / f".s9.json.inspector.tmp.{dead}.1.aaaa"
    kept = [
        folder / f".s9.json.inspector.tmp.{os.getpid()}.1.bbbb",  # this process: alive
        folder / f"s9.tmp.{dead}.1",  # hermes' own temp file
        folder / f"..inspector.tmp.{dead}.1",  # no target name before the mark
        folder / f"s9.json.inspector.tmp.{dead}.1",  # not a dot-name: never one of the inspector's
        folder / f".s9.json.inspector.tmp.x{dead}.1",  # no pid after it
    ]
    for p in (other, *kept):
        p.write_bytes(b"staged")
    assert sweep_stale_temps([target], log) == 0
    assert other.exists()
    assert sweep_stale_temps([target], log, whole_folders=True) == 1
    assert not other.exists() and all(p.exists() for p in kept)
    assert sorted(rescued(log).values()) == [b"staged"]
