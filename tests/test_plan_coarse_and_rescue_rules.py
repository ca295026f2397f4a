"""Two corners of the write path, rule by rule with literal values: the coarse preview of a middle
too large to align (``plan._first_lines``, ``plan._coarse_diff``) and the rescue of a version
someone else wrote (``WriteLog.rescue``: a private folder, a UTC stamp, a name that fits)."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector.plan import COARSE_SHOWN, NAME_MAX, WriteLog

# ---------------------------------------------------------------- the first lines of a range


def test_the_first_lines_stop_after_n_newlines() -> None:
    data = b"a\nbb\nccc\n"
    assert planmod._first_lines(data, 0, len(data), 1) == ["a\n"]
    assert planmod._first_lines(data, 0, len(data), 2) == ["a\n", "bb\n"]
    assert planmod._first_lines(data, 0, len(data), 9) == ["a\n", "bb\n", "ccc\n"]
    assert planmod._first_lines(data, 2, len(data), 1) == ["bb\n"]


def test_an_empty_first_line_is_one_line() -> None:
    assert planmod._first_lines(b"\nx\n", 0, 3, 1) == ["\n"]


def test_the_first_lines_never_read_past_the_range() -> None:
    """A last line without its newline inside the range ends at the range's end."""
    data = b"aa\nbbXcc\n"
    assert planmod._first_lines(data, 3, 5, 1) == ["bb"]
    assert planmod._first_lines(data, 0, 5, 3) == ["aa\n", "bb"]


# ---------------------------------------------------------------- the coarse diff


def test_the_coarse_hunk_numbers_its_lines_from_one() -> None:
    out = planmod._coarse_diff("a/x.json", "b/x.json", 4, ["old\n"], ["new\n", "more\n"], 1, 2)
    assert out == (
        "--- a/x.json\n+++ b/x.json\n"
        "@@ -5,1 +5,2 @@ (too many differing lines to align: removed lines, then added lines)\n"
        "-old\n+new\n+more\n"
    )


def test_a_last_line_without_newline_is_marked() -> None:
    out = planmod._coarse_diff("a/x", "b/x", 0, ["old"], ["new\n"], 1, 1)
    assert out.endswith("-old\n\\ No newline at end of file\n+new\n")


@pytest.mark.parametrize(("extra", "shown"), [(0, False), (1, True), (1234, True)])
def test_lines_past_the_shown_ones_are_counted_per_side(extra, shown) -> None:
    side = [f"{i}\n" for i in range(COARSE_SHOWN)]
    total = COARSE_SHOWN + extra
    out = planmod._coarse_diff("a/x", "b/x", 0, side, side, total, total)
    removed = f"\\ ... {extra:,} more removed lines not shown\n"
    added = f"\\ ... {extra:,} more added lines not shown\n"
    assert (removed in out, added in out) == (shown, shown)
    if shown:
        assert out.index(removed) < out.index("+0\n") and out.endswith(added)


# ---------------------------------------------------------------- rescue


def test_a_rescued_version_is_kept_privately_under_a_utc_stamp(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TZ", "Etc/GMT-5")  # five hours east of UTC: local time is not UTC
    time.tzset()
    try:
        before = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        dest = WriteLog(tmp_path / "state").rescue("chat.json", b"theirs", "displaced")
        after = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert dest.parent == tmp_path / "state" / "rescued"
    assert stat.S_IMODE(dest.parent.stat().st_mode) == 0o700
    m = re.fullmatch(r"(\d{8}T\d{6})-[0-9a-f]{8}-displaced-chat\.json", dest.name)
    assert m is not None, dest.name
    assert before <= m.group(1) <= after
    assert dest.read_bytes() == b"theirs"


def test_a_long_name_is_shortened_to_leave_room_for_the_part_suffix(tmp_path) -> None:
    name = "x" * 300 + ".json"
    log = WriteLog(tmp_path / "state")
    log.rescue("first.json", b"one", "displaced")  # the rescued folder exists from now on
    dest = log.rescue(name, b"theirs", "displaced")
    assert len(os.fsencode(dest.name)) == NAME_MAX - len(".part")
    assert dest.read_bytes() == b"theirs"


def test_a_failed_writes_words_list_the_written_files_comma_separated() -> None:
    assert (
        planmod._written_list([Path("/h/s/a.json"), Path("/h/s/_index.json")])
        == "/h/s/a.json, /h/s/_index.json"
    )
    assert planmod._written_list([]) == ""
