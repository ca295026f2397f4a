"""Rule: the preview diff of a file whose lines break at ``\\n`` only is found on the bytes (its common
edges) and is, byte for byte, the diff made on the decoded lines; a file with another line break
(U+2028 in a title, ``\\r\\n``) is diffed on its lines as before."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector import plan as planmod
from inspector.plan import FileChange, file_diff

LINES = st.sampled_from(
    [
        b"{",
        b"}",
        b'  "a": 1,',
        b'  "a": 2,',
        b'  "t": "x\xff"',
        b"",
        b"[",
        b"]",
        b'  "\xc3\xa9": 3',
        b"\xe2\x82",
        b"  {",
    ]
)


@st.composite
def sides(draw) -> tuple[bytes | None, bytes | None]:
    common = draw(st.lists(LINES, max_size=12))

    def side() -> bytes | None:
        if draw(st.integers(0, 9)) == 0:
            return None
        head = draw(st.integers(0, len(common)))
        tail = draw(st.integers(0, len(common) - head))
        lines = common[:head] + draw(st.lists(LINES, max_size=6)) + common[len(common) - tail :]
        text = b"\n".join(lines)
        return text + b"\n" if lines and draw(st.booleans()) else text

    return side(), side()


@settings(max_examples=600, deadline=None)
@given(
    pair=sides(),
    context=st.integers(0, 4),
    limit=st.sampled_from([2, 5, 20_000]),
    shown=st.sampled_from([1, 3, 2_000]),
)
def test_the_diff_on_bytes_is_the_diff_on_lines(pair, context, limit, shown):
    before, after = pair
    change = FileChange(Path("/x/s.json"), before, after)
    saved = planmod.DIFF_ALIGN_LIMIT, planmod.COARSE_SHOWN
    planmod.DIFF_ALIGN_LIMIT, planmod.COARSE_SHOWN = limit, shown
    try:
        assert planmod._file_diff_bytes(change, context) == planmod._file_diff_lines(change, context)
    finally:
        planmod.DIFF_ALIGN_LIMIT, planmod.COARSE_SHOWN = saved


def test_other_line_breaks_take_the_line_diff():
    change = FileChange(Path("/x/s.json"), b'{\n  "t": "a\xe2\x80\xa8b"\n}', b'{\n  "t": "c"\n}')
    assert not planmod._lf_only(change.before)
    assert file_diff(change) == planmod._file_diff_lines(change)
    crlf = FileChange(Path("/x/s.json"), b"a\r\nb\r\n", b"a\r\nc\r\n")
    assert file_diff(crlf) == planmod._file_diff_lines(crlf) and "-b" in file_diff(crlf)


def test_a_big_index_change_shows_only_its_middle():
    rows = [b'  {"session_id": "s%05d"},' % i for i in range(30_000)]
    before = b"[\n" + b"\n".join(rows) + b"\n]\n"
    after = b"[\n" + b"\n".join(rows[:100] + [b'  {"session_id": "new"},'] + rows[100:]) + b"\n]\n"
    diff = file_diff(FileChange(Path("/x/_index.json"), before, after))
    assert diff == planmod._file_diff_lines(FileChange(Path("/x/_index.json"), before, after))
    assert diff.count("\n") == 10 and '+  {"session_id": "new"},' in diff  # 3 lines each side of one added


BREAKS = st.sampled_from(
    [b"a", b"\n", b"\r", b"\r\n", b"\x85", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\x0b", b"\x0c"]
    + [b"\x1c", b"\xff", b" ", b'"', b"{", b"\xe2\x82"]
)


@settings(max_examples=600, deadline=None)
@given(
    parts=st.lists(BREAKS, min_size=1, max_size=14),
    context=st.integers(0, 4),
    limit=st.sampled_from([2, 5, 20_000]),
)
def test_a_created_file_is_previewed_as_difflib_adds_its_lines(parts, context, limit):
    """Rule: the preview of a new file (a materialize writes a thousand) is written directly, and is
    the diff made on the decoded lines, whatever line breaks the file holds."""
    change = FileChange(Path("/x/s.json"), None, b"".join(parts))
    saved = planmod.DIFF_ALIGN_LIMIT
    planmod.DIFF_ALIGN_LIMIT = limit
    try:
        assert file_diff(change, context) == planmod._file_diff_lines(change, context)
    finally:
        planmod.DIFF_ALIGN_LIMIT = saved


@settings(max_examples=800, deadline=None)
@given(
    st.lists(
        st.one_of(BREAKS, st.sampled_from([b"\xc2", b"\x85", b"\xe2", b"\x80", b"\xa8", b"\xa9"])),
        max_size=12,
    )
)
def test_lf_only_finds_every_other_line_break(parts):
    """Rule: the quick search for line breaks other than ``\\n`` (on the bytes left without plain ASCII)
    answers as a search of every separator in the whole text, also where removed bytes sat between
    the bytes of one."""
    data = b"".join(parts)
    assert planmod._lf_only(data) == (not any(sep in data for sep in planmod.OTHER_LINE_BREAKS))


def test_a_created_file_with_lf_breaks_only_is_never_split_into_lines(monkeypatch):
    """Rule: a new file whose lines break at ``\\n`` only (hermes' JSON) is previewed from its bytes
    with every ``\\n`` followed by ``+`` (no list of its lines is made), bad UTF-8 replaced as the
    line diff replaces it, with and without a final newline."""
    cases = [
        b'{\n  "t": "\xc3\xa9\xff\xe2\x82"\n}',
        b'{\n  "t": "\xc3\xa9\xff\xe2\x82"\n}\n',
        b"\n",
        b"x",
        b"\n\n",
    ]
    expected = [planmod._file_diff_lines(FileChange(Path("/x/s.json"), None, data)) for data in cases]

    def no_lines(data):
        raise AssertionError("split into lines")

    monkeypatch.setattr(planmod, "_text_lines", no_lines)
    assert [file_diff(FileChange(Path("/x/s.json"), None, data)) for data in cases] == expected
    assert expected[0].endswith("+}\n\\ No newline at end of file\n") and expected[1].endswith("\n+}\n")
