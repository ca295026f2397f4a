"""The check before a write compares each file that has previewed bytes with those bytes a chunk at a
time, through one reused buffer (``plan._holds_bytes``): the verdict is a whole-file byte comparison."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inspector.plan as planmod
from inspector.plan import FileChange, Plan


def _check(path, before: bytes) -> list[str]:
    return planmod.check_fingerprints(
        Plan(action="test", session_id="s", changes=[FileChange(path=path, before=before, after=b"new")])
    )


@pytest.mark.parametrize("readv", [True, False], ids=["readv", "read"])
@settings(max_examples=60)
@given(
    before=st.binary(max_size=40),
    now=st.binary(max_size=40),
    chunk=st.integers(min_value=1, max_value=9),
    same=st.booleans(),
)
def test_a_file_passes_the_check_exactly_when_it_holds_the_previewed_bytes(
    tmp_path_factory, readv, before, now, chunk, same
):
    """Rule: whatever the chunk size and read call, a target passes only when its bytes equal the
    previewed ones: a longer or shorter file, or one byte different anywhere (first chunk, last
    chunk, a chunk's edge), is "changed since the preview"."""
    if same:
        now = before
    path = tmp_path_factory.mktemp("cmp") / "s.json"
    path.write_bytes(now)
    buffer = memoryview(bytearray(chunk))
    old_readv = planmod._HAS_READV
    planmod._HAS_READV = readv and hasattr(os, "readv")
    try:
        assert planmod._holds_bytes(path, before, buffer) is (now == before)
    finally:
        planmod._HAS_READV = old_readv


def test_a_big_target_is_compared_through_one_small_buffer(tmp_path, monkeypatch):
    """Rule: a target larger than the comparison's chunk is compared whole, through a buffer of one
    chunk made once per check (not a copy of the file per target): equal bytes pass, a change in the
    last byte or one byte more is "changed since the preview"."""
    monkeypatch.setattr(planmod, "_COMPARE_CHUNK", 16)
    made = []
    real = bytearray

    class CountingBytearray(real):
        def __init__(self, *args):
            made.append(args)
            super().__init__(*args)

    monkeypatch.setattr(planmod, "bytearray", CountingBytearray, raising=False)
    data = bytes(range(256)) * 3
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(data)
    b.write_bytes(data)
    plan = Plan(
        action="test",
        session_id="s",
        changes=[
            FileChange(path=a, before=data, after=b"new"),
            FileChange(path=b, before=data, after=b"new"),
        ],
    )
    assert planmod.check_fingerprints(plan) == []
    assert made == [(16,)]  # one buffer for both files
    b.write_bytes(data[:-1] + b"\x00")
    a.write_bytes(data + b"x")
    assert planmod.check_fingerprints(plan) == [
        f"{a} changed since the preview",
        f"{b} changed since the preview",
    ]


def test_the_comparison_opens_as_the_read_did(tmp_path):
    """Rule: a target that is gone is "removed", a link is never read through (its own words come
    from the link check; read directly it is "not a regular file"), a folder is not a regular file."""
    gone = tmp_path / "gone.json"
    assert _check(gone, b"x") == [f"{gone} was removed since the preview"]
    real = tmp_path / "real.json"
    real.write_bytes(b"x")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    buffer = memoryview(bytearray(4))
    with pytest.raises(OSError, match="not a regular file"):
        planmod._holds_bytes(link, b"x", buffer)
    folder = tmp_path / "dir.json"
    folder.mkdir()
    with pytest.raises(OSError, match="not a regular file"):
        planmod._holds_bytes(folder, b"x", buffer)
    assert planmod._holds_bytes(real, b"x", buffer) is True


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX FIFOs")
def test_a_fifo_swapped_in_is_never_opened_for_reading(tmp_path):
    """Rule: the comparison opens without blocking, so a FIFO (no writer) in the target's place is
    "not a regular file", not a hang."""
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        planmod._holds_bytes(fifo, b"x", memoryview(bytearray(4)))


def test_the_version_a_swap_displaced_is_compared_the_same_way(tmp_path, monkeypatch):
    """Rule: after a swap, the version moved aside counts as the one checked only when it holds
    exactly the previewed bytes (compared whole, chunk by chunk), or when it is gone (hermes' sweep);
    a changed, longer or shorter file, a link or a FIFO in its place does not."""
    monkeypatch.setattr(planmod, "_COMPARE_CHUNK", 8)
    before = bytes(range(100))
    aside = tmp_path / ".s.json.inspector.tmp.1"
    assert planmod._displaced_before(aside, before) is True  # gone
    aside.write_bytes(before)
    assert planmod._displaced_before(aside, before) is True
    for other in (before[:-1] + b"\xff", before + b"\n", before[:-1], b""):
        aside.write_bytes(other)
        assert planmod._displaced_before(aside, before) is False
    aside.unlink()
    real = tmp_path / "real"
    real.write_bytes(before)
    aside.symlink_to(real)
    assert planmod._displaced_before(aside, before) is False
    if sys.platform != "win32":
        aside.unlink()
        os.mkfifo(aside)
        assert planmod._displaced_before(aside, before) is False
