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
# Runs of 19+ digits: orjson does not keep such integers exact, msgspec does; a piece holding them
# is plain (read by msgspec), and the scan's orjson line path sends it to the exact path itself. A
# run of 640+ digits (an integer the stdlib may refuse to convert, which msgspec skipping the field
# would not notice) makes the piece not plain.
LONG_DIGITS = st.sampled_from(
    [
        b'{"seq":12345678901234567890123,"payload":{"n":-99999999999999999999}}',
        b'{"event":"token","seq":18446744073709551616,"payload":[18446744073709551615]}',
        b'{"event":"done","terminal":true,"seq":98765432109876543210987}',
        b'{"terminal":12345678901234567890,"event":"x"}',
        b'{"payload":{"id":"call_1234567890123456789012345"}}',
        b'{"created_at":1234567890123456789012.5,"payload":1.00000000000000011102230246251565404236316680908203125}',
        b'{"created_at":1.00000000000000011102230246251565404236316680908203126}',
        b'{"created_at":2.2250738585072011e-308,"seq":-0.000000000000000000001}',
        b'{"created_at":0.' + b"1" * 500 + b"}",
        b'{"payload":' + b"7" * 4300 + b"}",
        b'{"payload":' + b"7" * 4301 + b"}",  # the stdlib refuses to convert it: hermes skips the line
        b'{"event":"token","other":' + b"7" * 4301 + b"}",  # a field msgspec skips
        b'{"event":"token","other":[' + b"7" * 639 + b"," + b"8" * 4400 + b"]}",
        b'{"payload":' + b"1" + b"0" * 400 + b".5}",  # the stdlib reads inf, msgspec refuses
    ]
)
LINES = st.one_of(good_lines(), ODD_LINES, DUPLICATES, LONG_DIGITS)


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
    extra = draw(st.lists(st.one_of(DUPLICATES, LONG_DIGITS), max_size=4))
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


def test_a_run_of_19_digits_leaves_a_piece_to_msgspec_but_not_to_orjson():
    """msgspec counts and walks a piece holding 19+ digit integers (it keeps them exact); where the scan
    reads such a piece line by line (a terminal record), the lines go the exact way, not orjson's
    (which turns 98765432109876543210987 into a float)."""
    token = b'{"event":"token","seq":123456789012345678901,"payload":{"text":"a","n":-99999999999999999999}}'
    done = b'{"event":"done","terminal":true,"seq":98765432109876543210987}'
    assert _plain_piece(token + b"\n") and _plain_piece(done + b"\n")
    assert _count_plain(token + b"\n") == 1  # counted by msgspec, not sent to the exact path
    data = token + b"\n" + done + b"\n"
    scanned, parsed = scan_journal_bytes(data), parse_journal_bytes(data)
    assert list(scanned.events) == parsed.events
    assert repr(list(scanned.events)) == repr(parsed.events)  # ints stay ints
    assert scanned.events.authoritative_terminal["seq"] == 98765432109876543210987
    assert type(scanned.events.authoritative_terminal["seq"]) is int
    walked = list(scanned.events.outputs())
    assert [_fields(e) for e in walked] == [_fields(journal_event(e)) for e in parsed.events]
    assert walked[0].seq == 123456789012345678901 and walked[0].payload["n"] == -99999999999999999999


@pytest.mark.parametrize("shift", [0, 1, 17, 63, 64, 65, 100])
def test_a_run_of_640_digits_makes_a_piece_not_plain_wherever_it_stands(shift):
    """sys.get_int_max_str_digits() is never below 640: a shorter run is an integer the stdlib always
    converts; a run of 640 or more may be refused by it, and msgspec skipping the field would not
    notice, so the piece goes the exact way (found among every 64th byte first: any alignment)."""
    head = b'{"event":"token","pad":"' + b"x" * shift + b'","other":'
    for digits, plain in ((639, True), (640, False), (641, False), (5000, False)):
        piece = head + b"7" * digits + b"}\n"
        assert _plain_piece(piece) is plain, (shift, digits)
        assert _plain_piece(b'{"a":1}\n' * 3 + piece + b'{"b":2}\n') is plain, (shift, digits)
    assert _plain_piece(head + (b"7" * 639 + b",") * 30 + b"1}\n")  # many runs just too short
