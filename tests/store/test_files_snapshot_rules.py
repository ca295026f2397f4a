"""``FileSnapshot`` records what it could not load (found by mutation testing, eighteenth session:
only the rebuild's transient reads were tested for it)."""

from __future__ import annotations

import os

import pytest

from inspector.store.files import FileSnapshot, TooLargeToLoad


def test_a_file_too_large_read_whole_is_raised_and_recorded_with_its_size_and_limit(tmp_path):
    """A sparse file one byte past 128 MB (its size is known without reading it)."""
    big = tmp_path / "s.json"
    big.write_bytes(b"")
    os.truncate(big, (128 << 20) + 1)
    snapshot = FileSnapshot()
    with pytest.raises(TooLargeToLoad) as info:
        snapshot.read(big)
    assert snapshot.too_large == [info.value]
    assert (info.value.filename, info.value.size, info.value.limit) == (str(big), 134217729, 134217728)
    assert snapshot.asked == [big]
