"""Rule: where msgspec reads a journal line for the repairs' streaming read, hermes' parse of that line
(``json.loads`` of its text, as ``_read_jsonl`` runs it) is an object whose fields hold exactly the
values msgspec gives; everything msgspec rejects is read by the exact path.

msgspec reads two things there (:mod:`inspector.store.journal`): the scan's count of a plain piece
(``terminal`` and ``event`` of each line: :func:`_count_plain`) and the events the repair walks
(``event``, ``type``, ``created_at``, ``seq``, ``payload``: :meth:`StreamedEvents.outputs`). It skips
every other field without checking the UTF-8 of its strings, which is why it only reads plain pieces
(:func:`_plain_piece` checks the UTF-8 of every non-ASCII run). Its acceptance and duplicate-key
rules are held to the stdlib's on hostile lines (the shapes of test_journal_stream.py: odd values,
NaN, lone surrogates, 1e400, duplicate keys, a BOM, blank and non-object lines, invalid UTF-8), and
the whole read on hostile journals, also with pieces of 64 bytes.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.store import journal as journal_mod
from inspector.store.journal import (
    JournalUnreadable,
    _count_plain,
    _plain_piece,
    journal_event,
    parse_journal_bytes,
    scan_journal_bytes,
)
from tests.store.test_journal_stream import BAD_BYTES, ODD_LINES, good_lines, journals

pytestmark = pytest.mark.skipif(journal_mod._EVENT_DECODER is None, reason="msgspec is not installed")

FIELDS = ("event", "type", "created_at", "seq", "payload")


def _fields(event: object) -> str:
    """The walked fields as text: types count (1, 1.0 and True differ), NaN equals NaN, key order counts."""
    return repr(tuple(getattr(event, name) for name in FIELDS))


def _stdlib(line: bytes) -> object:
    """hermes' parse of one line, or the exception type it raises."""
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return type(exc)


DUPLICATES = st.sampled_from(
    [
        b'{"terminal":true,"terminal":false,"event":"done"}',
        b'{"terminal":false,"event":"done","terminal":1}',
        b'{"event":"token","event":"tool","payload":{"name":"a","name":"b"}}',
        b'{"payload":{"text":"a"},"payload":"b"}',
        b'{"payload":{"a":1,"b":2,"a":3}}',
        b'{"seq":1,"seq":2.5,"created_at":null,"created_at":7}',
        b'{"type":"token","payload":{"text":"\\ud83d\\ude00"}}',  # a surrogate pair: one character
        b'{"payload":{"text":"\\ud83d"}}',  # a lone surrogate: the stdlib reads it, msgspec does not
        b'{"seq":-0,"created_at":-0.0,"payload":1.5e-400}',
        b'{"created_at":1e400}',
        b'{"payload":9007199254740993.0}',
        b'{"payload":' + b"[" * 400 + b"]" * 400 + b"}",
        b' {"event":"token"}\t',
        b'{"event":"token"} x',
        b'{"x":"\\u0000\\/"}',
    ]
)
LINES = st.one_of(good_lines(), ODD_LINES, DUPLICATES)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=LINES, bad=st.one_of(st.none(), BAD_BYTES), at=st.integers(min_value=0))
def test_a_line_msgspec_reads_is_the_object_hermes_reads_with_the_same_fields(line, bad, at):
    if bad is not None:  # invalid UTF-8: msgspec may skip it, but such a piece is never plain
        at %= len(line) + 1
        line = line[:at] + bad + line[at:]
    if b"\n" in line or not _plain_piece(line + b"\n"):
        return  # msgspec only ever reads lines of plain pieces
    theirs = _stdlib(line)
    try:
        ours = journal_mod._EVENT_DECODER.decode(line)
    except journal_mod._MSGSPEC_ERRORS:
        ours = None
    if ours is not None:
        assert isinstance(theirs, dict), line
        assert _fields(ours) == _fields(journal_event(theirs)), line
    try:
        flags = journal_mod._FLAGS_DECODER.decode(line)
    except journal_mod._MSGSPEC_ERRORS:
        flags = None
    if flags is not None:
        assert isinstance(theirs, dict), line
        assert repr(flags.terminal) == repr(theirs.get("terminal")), line


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(LINES, max_size=10), end=st.booleans())
def test_a_counted_piece_holds_as_many_events_as_hermes_reads_and_no_terminal(lines, end):
    piece = b"\n".join(lines) + (b"\n" if end else b"")
    if not piece or not _plain_piece(piece):
        return
    counted = _count_plain(piece)
    if counted is None:
        return
    parsed = parse_journal_bytes(piece)
    assert parsed.malformed == [] and counted == len(parsed.events), piece
    assert not any(e.get("terminal") for e in parsed.events), piece


def _outputs_full(data: bytes):
    try:
        parsed = parse_journal_bytes(data)
    except JournalUnreadable as exc:
        return ("unreadable", str(exc))
    return [_fields(journal_event(e)) for e in parsed.events]


def _outputs_streamed(data: bytes):
    try:
        scanned = scan_journal_bytes(data)
    except JournalUnreadable as exc:
        return ("unreadable", str(exc))
    walked = [_fields(e) for e in scanned.events.outputs()]
    assert len(walked) == len(scanned.events)
    return walked


@st.composite
def mixed_journals(draw) -> bytes:
    """Hostile journals (test_journal_stream's) with the duplicate-key and odd-value lines mixed in."""
    data = draw(journals())
    extra = draw(st.lists(DUPLICATES, max_size=4))
    return data + b"\n" + b"\n".join(extra) if extra else data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_journals())
def test_the_walked_events_are_hermes_events_field_for_field(data: bytes) -> None:
    assert _outputs_streamed(data) == _outputs_full(data), data[:300]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(mixed_journals())
def test_the_walked_events_are_hermes_events_across_piece_edges(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(journal_mod, "BLOCK_BYTES", 64)
    assert _outputs_streamed(data) == _outputs_full(data), data[:300]


def test_a_plain_piece_is_valid_utf8_run_by_run():
    """The non-ASCII runs of a piece decide its UTF-8 validity: each checked on its own, or the whole
    piece decoded when it holds many (``_FEW_TAILS``)."""
    good = '{"payload":{"text":"é — 日本語 🙂"}}\n'.encode()
    assert _plain_piece(good)
    for bad in (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80"):
        assert not _plain_piece(good[:22] + bad + good[22:])
    assert not _plain_piece('{"payload":{"text":"a\u2028b"}}\n'.encode())
    assert not _plain_piece(b'{"payload":{"text":"a\xc2\x85b"}}\n')
    assert _plain_piece(b'{"payload":{"text":"\xc3\xa9\xc3\xa8"}}\n')  # A8/A9 as continuation bytes


def test_a_plain_piece_with_many_non_ascii_bytes_is_decoded_whole(monkeypatch):
    monkeypatch.setattr(journal_mod, "_FEW_TAILS", 0)
    good = '{"payload":{"text":"é — 日本語 🙂"}}\n'.encode()
    assert _plain_piece(good)
    assert not _plain_piece(good[:22] + b"\xff" + good[22:])
    assert not _plain_piece('{"payload":{"text":"a\u2029b"}}\n'.encode())


def test_a_terminal_record_is_not_counted_but_kept_whole():
    """A piece holding a terminal record goes line by line, so the scan keeps that record exactly."""
    lines = [b'{"event":"token","seq":1,"payload":{"text":"a"}}', b'{"event":"done","seq":2,"terminal":true}']
    piece = b"\n".join(lines) + b"\n"
    assert _count_plain(piece) is None
    assert _count_plain(lines[0] + b"\n") == 1
    scanned = scan_journal_bytes(piece)
    assert len(scanned.events) == 2
    assert scanned.events.authoritative_terminal == {"event": "done", "seq": 2, "terminal": True}
