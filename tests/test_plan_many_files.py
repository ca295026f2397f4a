"""Rule: a write of many files (a materialize of a thousand rows) writes and fsyncs its staged files side by side,
and still has every one of them on disk before the first is swapped in; one that cannot be synced
stops the write with nothing written, named in the error."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from inspector import plan as planmod
from inspector.plan import FileChange, Plan, WriteFailed, WriteLog, apply_plan


def _many(tmp_path: Path, n: int) -> tuple[Plan, list[Path]]:
    folder = tmp_path / "sessions"
    folder.mkdir()
    paths = [folder / f"s{i:03d}.json" for i in range(n)]
    return Plan("test", None, [FileChange(p, None, b'{"n": %d}' % i) for i, p in enumerate(paths)]), paths


def _watch(monkeypatch) -> list[tuple[str, str]]:
    """Every fsync of a staged temp file and every swap into place, in the order they happen."""
    events: list[tuple[str, str]] = []
    real_fsync, real_link, real_replace = os.fsync, os.link, os.replace

    def fsync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        if ".inspector.tmp." in name:
            events.append(("fsync", os.path.basename(name)))
        real_fsync(fd)

    def link(src, dst, *a, **k):
        events.append(("place", os.path.basename(str(dst))))
        return real_link(src, dst, *a, **k)

    def replace(src, dst, *a, **k):
        events.append(("place", os.path.basename(str(dst))))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(planmod.os, "fsync", fsync)
    monkeypatch.setattr(planmod.os, "link", link)
    monkeypatch.setattr(planmod.os, "replace", replace)
    return events


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names an fd through /proc")
def test_every_staged_file_is_synced_before_the_first_swap(tmp_path, monkeypatch):
    plan, paths = _many(tmp_path, planmod.PARALLEL_FSYNC_MIN + 8)
    events = _watch(monkeypatch)
    apply_plan(plan, WriteLog(tmp_path / "state"))
    assert [p.read_bytes() for p in paths] == [c.after for c in plan.changes]
    synced = [name for kind, name in events if kind == "fsync"]
    assert len(synced) == len(paths)  # one fsync per staged file, as for a small write
    first_place = next(i for i, (kind, name) in enumerate(events) if kind == "place" and name.startswith("s"))
    assert all(kind == "fsync" for kind, _ in events[: len(paths)]) and first_place >= len(paths)
    assert not [p for p in paths[0].parent.iterdir() if ".tmp." in p.name]
    # hermes' mode for a new file, the umask read once for the whole write
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths} == {0o666 & ~planmod.current_umask()}


def test_a_file_that_cannot_be_synced_stops_the_write_with_nothing_written(tmp_path, monkeypatch):
    plan, paths = _many(tmp_path, planmod.PARALLEL_FSYNC_MIN + 8)
    real_fsync = os.fsync
    bad = paths[5].name

    def fsync(fd: int) -> None:
        if f".{bad}.inspector.tmp." in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(planmod.os, "fsync", fsync)
    with pytest.raises(WriteFailed) as err:
        apply_plan(plan, WriteLog(tmp_path / "state"))
    assert str(paths[5]) in str(err.value) and "nothing was written" in str(err.value)
    assert list(paths[0].parent.iterdir()) == []  # no target, no temp file left
