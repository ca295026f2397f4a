"""The continuation check reads a sidecar's head as hermes' ``_has_compression_continuation`` does:
``_read_file_head(path, max_prefix_bytes=16384)[:4096]`` (16,384 bytes decoded as UTF-8 with invalid
bytes dropped, then 4,096 characters), and looks for ``"parent_session_id": "<sid>"`` in it.

Rule: ``_head_holds`` answers as that read on files of ASCII, multi-byte characters, invalid and cut
sequences, with the needle around the 4,096-character, 4,608-byte and 16,384-byte marks and split by
invalid bytes; a folder, a FIFO or a missing file holds nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.repair.interrupted import HEAD_BYTES, HEAD_FIRST_READ, _head_holds

SID = "abc123"
NEEDLE = f'"parent_session_id": "{SID}"'
NEEDLE_BYTES = NEEDLE.encode()


def hermes_head_holds(path: Path) -> bool:
    """hermes' read, in the project's words: 16,384 bytes, decoded ignoring errors, 4,096 characters."""
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES).decode("utf-8", errors="ignore")[:4096]
    return NEEDLE in head


PIECES = st.sampled_from(
    [
        b"a",
        b"x" * 37,
        b"\n  ",
        "é".encode(),
        "€".encode(),
        "😀".encode(),
        "é".encode() * 50,
        "😀".encode() * 300,
        b"\xff",
        b"\xe2\x82",  # a cut 3-byte sequence
        b"\xf0\x9f",  # a cut 4-byte sequence
        b"\x80",
        b"\xed\xa0\x80",  # an encoded surrogate: invalid
        NEEDLE_BYTES,
        NEEDLE_BYTES[:9] + b"\xff" + NEEDLE_BYTES[9:],  # split by an invalid byte: whole once decoded
        NEEDLE_BYTES[:20] + "é".encode() + NEEDLE_BYTES[20:],  # split by a character: not the needle
    ]
)


@st.composite
def files(draw):
    parts = draw(st.lists(PIECES, max_size=40))
    data = b"".join(parts)
    # and a needle placed near one of the marks, measured in bytes or in characters of filler
    mark = draw(st.sampled_from([0, 4000, 4070, 4080, 4096, 4500, 4580, 4608, 8000, 16300, 16360, 16384]))
    filler = draw(st.sampled_from([b"x", "é".encode(), "😀".encode(), b"\xff", b"x\xff"]))
    count = max(0, mark // len(filler) + draw(st.integers(-30, 30)))
    where = draw(st.integers(0, len(data)))
    if draw(st.booleans()):
        data = data[:where] + filler * count + NEEDLE_BYTES + data[where:]
    return data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=files())
def test_the_head_holds_the_needle_exactly_where_hermes_read_finds_it(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(data)
    assert _head_holds(str(path), NEEDLE, NEEDLE_BYTES) == hermes_head_holds(path)


@pytest.mark.parametrize(
    "data",
    [
        b"x" * 4096 + NEEDLE_BYTES,  # just past 4,096 ASCII characters
        b"x" * (4096 - len(NEEDLE_BYTES)) + NEEDLE_BYTES,  # ends at the 4,096th character
        "é".encode() * 2000 + NEEDLE_BYTES,  # 2,000 characters in 4,000 bytes: found
        "😀".encode() * 1200 + b"x" * 2000 + NEEDLE_BYTES,  # past 4,608 bytes, within 4,096 characters
        "😀".encode() * 4096 + NEEDLE_BYTES,  # 16,384 bytes of characters: past hermes' read
        "😀".encode() * 1020 + NEEDLE_BYTES,  # characters fill the first read: the rest is read
        NEEDLE_BYTES + "😀".encode() * 2000,  # at the start, and the rest read after it: kept with it
        b"\xff" * 5000 + NEEDLE_BYTES,  # invalid bytes count for no character
        b"\xff" * (HEAD_BYTES - 10) + NEEDLE_BYTES,  # cut by the 16,384-byte read
        "é".encode() * ((HEAD_FIRST_READ - 1) // 2) + b"\xc3",  # the first read ends in a cut character
        b"",
        NEEDLE_BYTES,
    ],
)
def test_named_heads(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(data)
    assert _head_holds(str(path), NEEDLE, NEEDLE_BYTES) == hermes_head_holds(path)


def test_what_is_not_a_regular_file_holds_nothing(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    assert not _head_holds(str(tmp_path / "dir.json"), NEEDLE, NEEDLE_BYTES)
    assert not _head_holds(str(tmp_path / "missing.json"), NEEDLE, NEEDLE_BYTES)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.json")
        assert not _head_holds(str(tmp_path / "fifo.json"), NEEDLE, NEEDLE_BYTES)  # and does not block
