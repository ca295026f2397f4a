"""A preview's diff when the files differ in their very first or very last byte (``plan._common_prefix``
and ``_common_suffix``, which find the common edges on the bytes): the changed line is shown, not taken
for a common one. Expected texts written out by hand (unified diff, as ``diff -u`` writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.plan import FileChange, file_diff

H = "--- a/s.json\n+++ b/s.json\n"


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (b"a\nx\n", b"b\nx\n", H + "@@ -1,2 +1,2 @@\n-a\n+b\n x\n"),  # the first byte differs
        (b"ab\n", b"bb\n", H + "@@ -1 +1 @@\n-ab\n+bb\n"),  # the first byte of the only line
        (b"x\ny\n", b"x\nz\n", H + "@@ -1,2 +1,2 @@\n x\n-y\n+z\n"),  # the last byte before the newline
        (
            b"x\na",
            b"x\nb",
            H + "@@ -1,2 +1,2 @@\n x\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
        ),  # the very last byte
        # ten more lines: the change lies beyond the three lines of context of the other edge
        (b"a\n" + b"x\n" * 10, b"b\n" + b"x\n" * 10, H + "@@ -1,4 +1,4 @@\n-a\n+b\n x\n x\n x\n"),
        (
            b"x\n" * 10 + b"a",
            b"x\n" * 10 + b"b",
            H
            + "@@ -8,4 +8,4 @@\n x\n x\n x\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
        ),
        (  # both edges: two hunks, the middle's ten lines too far from either change to join them
            b"a\n" + b"x\n" * 10 + b"a",
            b"b\n" + b"x\n" * 10 + b"b",
            H
            + "@@ -1,4 +1,4 @@\n-a\n+b\n x\n x\n x\n"
            + "@@ -9,4 +9,4 @@\n x\n x\n x\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
        ),
    ],
    ids=[
        "first-byte",
        "first-byte-one-line",
        "last-line",
        "last-byte",
        "first-byte-long",
        "last-byte-long",
        "both-edges",
    ],
)
def test_a_change_at_either_edge_is_shown(before: bytes, after: bytes, expected: str) -> None:
    assert file_diff(FileChange(path=Path("/h/s.json"), before=before, after=after)) == expected
