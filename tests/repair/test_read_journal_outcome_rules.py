"""``read_journal``: the repair's one read of a run journal, field by field for each outcome (no
stream id, an id hermes refuses, no file, a file that cannot be read, invalid UTF-8, a line too deep
for hermes, a line whose reading depends on hermes' own stack, a readable journal), with and without
``stream``. Expected values are written by hand from the spec (run-journal-and-promotion.md, 1.7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.repair.journal_read import read_journal
from inspector.store.files import FileSnapshot
from tests.store.test_deep_line_worst_rules import OK, _deep

SID = "s1"
TOO_DEEP = (
    "line 2 is nested 994 or more levels deep, deeper than hermes' reader can go (a known hermes defect: it "
    "then fails on the whole journal, not just that line)"
)
UNSURE = (
    "line 2 is nested 950 levels deep: whether hermes can read it depends on hermes itself (it reads up to "
    "993 levels, fewer from deeper inside its own code), so what hermes would recover from this journal "
    "cannot be known"
)


def _journal(tmp_path: Path, run: str, data: bytes | None) -> Path:
    path = tmp_path / "_run_journal" / SID / f"{run}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is None:
        path.mkdir()  # something there that is not a file
    else:
        path.write_bytes(data)
    return path


def _fields(read) -> tuple:
    return (
        read.stream_id,
        read.path,
        read.exists,
        read.size,
        list(read.events),
        read.malformed,
        read.error,
        read.torn_lines,
        read.unsure,
        read.too_deep,
    )


STREAM = pytest.mark.parametrize("stream", [False, True], ids=["events", "streamed"])


@STREAM
def test_no_stream_id_and_an_id_hermes_refuses_read_nothing(tmp_path: Path, stream: bool) -> None:
    read = read_journal(FileSnapshot(), tmp_path, SID, "", stream=stream)
    assert _fields(read) == ("", None, False, 0, [], [], "no stream id", [], None, False)
    read = read_journal(FileSnapshot(), tmp_path, SID, "../r", stream=stream)
    assert _fields(read) == ("../r", None, False, 0, [], [], "invalid run_id", [], None, False)
    assert not read.readable


@STREAM
def test_a_missing_journal_is_no_error(tmp_path: Path, stream: bool) -> None:
    read = read_journal(FileSnapshot(), tmp_path, SID, "r", stream=stream)
    path = tmp_path / "_run_journal" / SID / "r.jsonl"
    assert _fields(read) == ("r", path, False, 0, [], [], None, [], None, False)
    assert read.readable


@STREAM
def test_a_journal_that_cannot_be_read_exists_and_says_why(tmp_path: Path, stream: bool) -> None:
    path = _journal(tmp_path, "r", None)
    read = read_journal(FileSnapshot(), tmp_path, SID, "r", stream=stream)
    said = f"cannot read r.jsonl: [Errno 22] not a regular file: '{path}'"
    assert _fields(read) == ("r", path, True, 0, [], [], said, [], None, False)


@STREAM
def test_invalid_utf8_makes_the_whole_journal_unreadable(tmp_path: Path, stream: bool) -> None:
    data = OK + b'{"a":"\xff"}\n'
    path = _journal(tmp_path, "r", data)
    read = read_journal(FileSnapshot(), tmp_path, SID, "r", stream=stream)
    said = "not valid UTF-8 at byte 56: the whole journal is unreadable"
    assert _fields(read) == ("r", path, True, 60, [], [], said, [], None, False)


@STREAM
def test_a_line_too_deep_for_hermes_reads_as_unreadable_and_says_so(tmp_path: Path, stream: bool) -> None:
    data = OK + _deep(1000)
    path = _journal(tmp_path, "r", data)
    read = read_journal(FileSnapshot(), tmp_path, SID, "r", stream=stream)
    assert _fields(read) == ("r", path, True, len(data), [], [], TOO_DEEP, [], None, True)


@STREAM
def test_a_line_whose_reading_depends_on_hermes_is_unsure(tmp_path: Path, stream: bool) -> None:
    data = OK + _deep(950)
    path = _journal(tmp_path, "r", data)
    read = read_journal(FileSnapshot(), tmp_path, SID, "r", stream=stream)
    assert _fields(read) == ("r", path, True, len(data), [], [], UNSURE, [], UNSURE, False)
    assert not read.readable


@STREAM
def test_a_readable_journal_gives_its_events_the_lines_hermes_skips_and_the_torn_ones(
    tmp_path: Path, stream: bool
) -> None:
    data = OK + b"junk\n" + '{"a":"x\u2028y"}\n'.encode()  # U+2028 unescaped: splitlines tears the line
    path = _journal(tmp_path, "r", data)
    read = read_journal(FileSnapshot(), tmp_path, SID, "r", stream=stream)
    malformed = [{"line": 2, "raw": "junk"}, {"line": 3, "raw": '{"a":"x'}, {"line": 4, "raw": 'y"}'}]
    event = {"seq": 1, "event": "token", "payload": {"text": "hi"}}
    assert _fields(read) == ("r", path, True, 69, [event], malformed, None, [3], None, False)
    assert isinstance(read.events, list) is not stream  # streamed: parsed again at each walk


def test_the_events_are_a_list_unless_streamed_is_asked_for(tmp_path: Path) -> None:
    _journal(tmp_path, "r", OK)
    read = read_journal(FileSnapshot(), tmp_path, SID, "r")
    assert read.events == [{"seq": 1, "event": "token", "payload": {"text": "hi"}}]
    assert type(read.events) is list
