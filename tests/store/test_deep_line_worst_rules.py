"""Rule: what hermes' read of a whole run journal comes to when a line is nested too deeply
(``json_depth``; hermes' ``_read_jsonl`` catches only ``JSONDecodeError``):

* it fails at the **first** line every reader fails on (``RecursionError`` leaves the loop there):
  the error names that line, however many such lines follow, with the levels counted up to 994;
* an unsure line (901-993 levels) is the verdict only when no line every reader fails on follows
  it, in its own piece of the file or in any later piece (the readers work a few MB at a time;
  ``BLOCK_BYTES`` is made small here so that a short journal spans many pieces);
* the error's words, written by hand.
"""

from __future__ import annotations

import pytest

import inspector.store.journal as journal
from inspector.store.journal import (
    JournalDepthUnsure,
    JournalTooDeep,
    dropped_lines,
    parse_journal_bytes,
    scan_journal_bytes,
)

OK = b'{"seq":1,"event":"token","payload":{"text":"hi"}}\n'


def _deep(levels: int) -> bytes:
    return b'{"seq":9,"payload":' + b"[" * (levels - 1) + b"]" * (levels - 1) + b"}\n"


def _scan_events(data: bytes):
    return list(scan_journal_bytes(data).events)


READERS = [parse_journal_bytes, _scan_events, dropped_lines]
IDS = ["parse_journal_bytes", "scan_journal_bytes", "dropped_lines"]


@pytest.mark.parametrize("read", READERS, ids=IDS)
def test_the_first_line_every_reader_fails_on_is_named_with_hermes_words(read) -> None:
    with pytest.raises(JournalTooDeep) as info:
        read(OK + _deep(1000) + OK + _deep(2000) + OK)
    assert info.value.line == 2
    assert info.value.levels == 994  # counted no further than the level every reader fails at
    assert str(info.value) == (
        "line 2 is nested 994 or more levels deep, deeper than hermes' reader can go (a known "
        "hermes defect: it then fails on the whole journal, not just that line)"
    )


@pytest.mark.parametrize("read", READERS, ids=IDS)
def test_an_unsure_line_in_an_early_piece_stands_when_later_pieces_are_plain(read, monkeypatch) -> None:
    monkeypatch.setattr(journal, "BLOCK_BYTES", 64)
    with pytest.raises(JournalDepthUnsure) as info:
        read(OK + _deep(950) + OK * 6 + b"\n" + OK)
    assert info.value.line == 2 and info.value.levels == 950


@pytest.mark.parametrize("read", READERS, ids=IDS)
def test_a_failing_line_in_a_later_piece_wins_over_an_unsure_one(read, monkeypatch) -> None:
    monkeypatch.setattr(journal, "BLOCK_BYTES", 64)
    with pytest.raises(JournalTooDeep) as info:
        read(OK + _deep(950) + OK * 4 + _deep(960) + OK + _deep(1200) + OK + _deep(1100))
    assert info.value.line == 9  # the first line every reader fails on, two pieces later
