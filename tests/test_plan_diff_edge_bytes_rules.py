"""A preview's diff when the files differ in their very first or very last byte (``plan._common_prefix``
and ``_common_suffix``, which find the common edges on the bytes): the changed line is shown, not taken
for a common one. Expected texts written out by hand (unified diff, as ``diff -u`` writes them)."""

from __future__ import annotations

import functools
import random
from pathlib import Path

import pytest

from inspector import plan as planmod
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
        (  # repeated lines: the alignment difflib picks on the whole lines (a valid one among several)
            b"b\na\nb\na\na\n\nb\nb\nb\n",
            b"b\na\na\na\n\nb\nb\nb\n",
            H + "@@ -1,6 +1,5 @@\n-b\n-a\n b\n a\n a\n+a\n \n",
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
        "repeated-lines",
    ],
)
def test_a_change_at_either_edge_is_shown(before: bytes, after: bytes, expected: str) -> None:
    assert file_diff(FileChange(path=Path("/h/s.json"), before=before, after=after)) == expected


def _edited(rnd: random.Random) -> tuple[bytes, bytes]:
    """Two sides of repeated short lines (so that a change can be aligned in more than one way), the
    second a few lines changed, put in or taken out of the first, sometimes without its last newline."""
    lines = [rnd.choice([b"a", b"b", b"c", b"", b"xy"]) + b"\n" for _ in range(rnd.randint(0, 40))]
    after = list(lines)
    for _ in range(rnd.randint(0, 3)):
        k = rnd.randint(0, len(after))
        op = rnd.random()
        if op < 0.4 and k < len(after):
            after[k] = rnd.choice([b"a", b"z"]) + b"\n"
        elif op < 0.7:
            after.insert(k, b"q\n")
        elif k < len(after):
            del after[k]
    new = b"".join(after)
    return b"".join(lines), new.rstrip(b"\n") if rnd.random() < 0.3 else new


PARTS = 10  # each seeded test in ten parts of its cases: every part well under the mutation run's
# 1 s cap on a test (tests/mutation_fast_first.py), so a mutant's run keeps them all


@functools.cache
def _repeated_line_cases() -> list[tuple[bytes, bytes]]:
    rnd = random.Random(7)
    cases = []
    for _ in range(3000):
        before, after = _edited(rnd)
        for lead in (b"", b"\n"):  # and both after a common empty first line
            cases.append((lead + before, lead + after))
    return cases


@pytest.mark.parametrize("part", range(PARTS))
def test_the_diff_on_bytes_aligns_repeated_lines_as_the_diff_on_lines(part: int) -> None:
    """Rule (the common edges found on the bytes are the longest ones): where equal lines make more than
    one alignment possible, the preview made on the bytes picks the one difflib picks on the whole lines.
    6,000 seeded cases, whatever Hypothesis's example count (the property test beside this one runs 25
    examples under mutmut); a common head or tail found too short picks another alignment in 1-2 % of them."""
    differing = []
    for before, after in _repeated_line_cases()[part::PARTS]:
        change = FileChange(path=Path("/h/s.json"), before=before, after=after)
        if planmod._file_diff_bytes(change, 3) != planmod._file_diff_lines(change, 3):
            differing.append((before, after))
    assert differing == []


@functools.cache
def _lines_put_in_cases() -> list[tuple[bytes, bytes]]:
    rnd = random.Random(3)
    cases = []
    for _ in range(2000):
        before = b"\n" + b"".join(
            rnd.choice([b"a", b"", b"q", b"b"]) + b"\n" for _ in range(rnd.randint(0, 12))
        )
        top = rnd.choice([b"q", b"a", b"z"]) + b"\n"
        top += b"".join(rnd.choice([b"a", b"", b"q"]) + b"\n" for _ in range(rnd.randint(0, 4)))
        cases.append((before, top))
    return cases


@pytest.mark.parametrize("part", range(PARTS))
def test_lines_put_in_before_a_file_that_starts_empty_are_diffed_as_on_the_lines(part: int) -> None:
    """Rule: where the whole old file is the new one's common tail (lines put in at the top) and it starts
    with an empty line, the tail kept around the change is cut at whole lines from its start, and the
    preview on the bytes is the diff on the lines. 2,000 seeded cases."""
    differing = []
    for before, top in _lines_put_in_cases()[part::PARTS]:
        change = FileChange(path=Path("/h/s.json"), before=before, after=top + before)
        for context in (0, 1, 3):
            if planmod._file_diff_bytes(change, context) != planmod._file_diff_lines(change, context):
                differing.append((before, top, context))
    assert differing == []


_TEN = b"".join(b"l%d\n" % i for i in range(1, 11))


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # a side of one line is written without its length, also after the common head is cut
        (_TEN[:15], _TEN[:18], H + "@@ -5 +5,2 @@\n l5\n+l6\n"),
        (_TEN[:18], _TEN[:15], H + "@@ -5,2 +5 @@\n l5\n-l6\n"),
        # two changes four lines apart: two hunks with one line of context (one with three)
        (
            _TEN,
            _TEN.replace(b"l3\n", b"L3\n").replace(b"l8\n", b"L8\n"),
            H + "@@ -2,3 +2,3 @@\n l2\n-l3\n+L3\n l4\n@@ -7,3 +7,3 @@\n l7\n-l8\n+L8\n l9\n",
        ),
    ],
    ids=["one-line-before", "one-line-after", "two-hunks"],
)
def test_a_diff_with_one_line_of_context_is_difflibs(before: bytes, after: bytes, expected: str) -> None:
    """Rule: ``file_diff``'s ``context`` is the number of context lines, as ``diff -u -U1`` (and
    difflib on the whole lines) writes them; the hunk headers keep difflib's form after the common
    head is cut (a side of one line has no length). Expected texts written out by hand."""
    assert _TEN[:15] == b"l1\nl2\nl3\nl4\nl5\n" and _TEN[:18] == _TEN[:15] + b"l6\n"
    change = FileChange(path=Path("/h/s.json"), before=before, after=after)
    assert file_diff(change, context=1) == expected


@pytest.mark.parametrize(
    ("before", "after", "context", "expected"),
    [
        (
            b"\xc2\x85\n\n\n\n",
            b"\n\n\n\n\n",
            3,
            H + "@@ -1,4 +1,4 @@\n-\x85\n\\ No newline at end of file\n \n \n \n+\n",
        ),
        (
            b"\n\n\n\n\n",
            b"\xc2\x85\n\n\n\n",
            3,
            H + "@@ -1,4 +1,4 @@\n+\x85\n\\ No newline at end of file\n \n \n \n-\n",
        ),
        # every break str.splitlines knows besides "\n", one after the other: each is a line
        (
            b"\r\x0b\x0c\x1c\x1d\x1e\xc2\x85\xe2\x80\xa8\xe2\x80\xa9\n\n\n\n",
            b"\n\n\n\n\n",
            3,
            H
            + "@@ -1,12 +1,4 @@\n"
            + "".join(
                f"-{c}\n\\ No newline at end of file\n"
                for c in ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
            )
            + " \n \n \n+\n",
        ),
        # "\r\n" ends line 3 on both sides; line 8 changes; one line of context
        (
            _TEN.replace(b"l3\n", b"l3\r\n"),
            _TEN.replace(b"l3\n", b"l3\r\n").replace(b"l8\n", b"L8\n"),
            1,
            H + "@@ -7,3 +7,3 @@\n l7\n-l8\n+L8\n l9\n",
        ),
    ],
    ids=["old-side", "new-side", "every-break", "context-one"],
)
def test_a_side_that_breaks_lines_elsewhere_is_diffed_on_its_text_lines(
    before: bytes, after: bytes, context: int, expected: str
) -> None:
    """Rule: when either side breaks a line at something other than ``\\n`` (U+0085 or a carriage
    return, which ``str.splitlines`` splits at), the preview is made on the text lines of both
    sides, not on the bytes, with the context asked for. In the first two, one side's lines are
    ``\\x85`` and four empty ones, the other's five empty ones: the common tail of four lines is cut
    to three of context, so the one hunk spans four lines of each side (on the bytes the tail
    would count three lines and the hunk five). Written out by hand."""
    change = FileChange(path=Path("/h/s.json"), before=before, after=after)
    assert file_diff(change, context=context) == expected
