"""Rule: the repairs' streaming journal read (:func:`scan_journal_bytes`) gives exactly what the full
read gives (:func:`parse_journal_bytes`, hermes' ``read_run_events``): the same events in the same
order, the same skipped lines with hermes' line numbers and text, the same torn lines, the same
authoritative terminal event, and the same "unreadable" verdict and message; the events can be
walked again and are the same each time.

The streaming read splits a piece of the file on ``\\n`` bytes and gives each line to orjson as
bytes, so the hostile shapes are the ones where that could differ from decoding the whole text and
``str.splitlines()``: U+2028/U+2029/U+0085 and the one-byte breaks inside strings, CR and CRLF
line ends, a multi-byte character cut at the end of the file or of a piece, invalid UTF-8 in the
middle, a torn last line, blank and whitespace-only lines (Unicode whitespace included), non-object
lines, values orjson reads differently or not at all (19+ digit integers, NaN, lone surrogates,
a BOM). Small pieces (``BLOCK_BYTES`` patched) put those shapes on piece edges.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.store import journal as journal_mod
from inspector.store.journal import (
    JournalUnreadable,
    StreamedEvents,
    authoritative_terminal_event,
    parse_journal_bytes,
    scan_journal_bytes,
)
from inspector.store.journal_raw import torn_line_numbers


def _full(data: bytes):
    """What the full read gives: (events, malformed, torn, terminal) or ("unreadable", message)."""
    try:
        parsed = parse_journal_bytes(data)
    except JournalUnreadable as exc:
        return ("unreadable", str(exc))
    torn = torn_line_numbers(data.decode("utf-8"))
    return (parsed.events, parsed.malformed, torn, authoritative_terminal_event(parsed.events))


def _streamed(data: bytes):
    try:
        scanned = scan_journal_bytes(data)
    except JournalUnreadable as exc:
        return ("unreadable", str(exc))
    events = list(scanned.events)
    assert list(scanned.events) == events or repr(list(scanned.events)) == repr(events)  # walked again
    assert len(scanned.events) == len(events) and bool(scanned.events) == bool(events)
    return (events, scanned.malformed, scanned.torn_lines, authoritative_terminal_event(scanned.events))


def _assert_same(data: bytes) -> None:
    full, streamed = _full(data), _streamed(data)
    # repr: types count (1 is not 1.0 nor True), NaN equals NaN, key order counts
    assert repr(streamed) == repr(full), data[:300]


def _event(seq: int, name: str, payload: object, **extra) -> dict:
    return {
        "version": 1,
        "event_id": f"r1:{seq}",
        "seq": seq,
        "run_id": "r1",
        "session_id": "s1",
        "event": name,
        "type": name,
        "created_at": 1700000000.5 + seq,
        "terminal": False,
        "terminal_state": None,
        "payload": payload,
        **extra,
    }


def _compact(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


TEXTS = st.one_of(
    st.text(max_size=10),
    st.sampled_from(
        [
            "a\u2028b",
            "\u2029",
            "x\x85y",
            "\r",
            "\x0b\x0c",
            "\x1c\x1d\x1e\x1f",
            "é\u00a0\u3000",
            "call_86685597948029058620679f",
            "   ",
            "\u2028\n",
        ]
    ),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=2**63, max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXTS,
)
PAYLOADS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXTS, inner, max_size=3)),
    max_leaves=6,
)
NAMES = st.sampled_from(
    ["token", "reasoning", "tool", "tool_complete", "metering", "done", "stream_end", "apperror"]
)


@st.composite
def good_lines(draw) -> bytes:
    seq = draw(st.integers(min_value=1, max_value=50))
    name = draw(NAMES)
    extra = {}
    if draw(st.booleans()):
        extra = {"terminal": draw(st.sampled_from([True, 1, "yes", 0, False])), "terminal_state": "completed"}
    obj = _event(seq, name, draw(PAYLOADS), **extra)
    # raw characters (ensure_ascii=False) or \\u escapes, as other writers might
    return _compact(obj) if draw(st.booleans()) else json.dumps(obj).encode("ascii")


ODD_LINES = st.sampled_from(
    [
        b"",
        b"   ",
        b"\t",
        b"\xc2\xa0",  # NBSP: blank for str.strip(), not JSON
        b"\x1f",  # str.strip() removes it too, no line break
        b"[1, 2]",
        b'"just a string"',
        b"42",
        b"null",
        b"{not json",
        b'{"a": NaN, "b": Infinity}',  # the stdlib accepts these, orjson does not
        b'{"a": "\\ud800"}',  # a lone surrogate escape: the stdlib accepts it
        b'{"n": 123456789012345678901234567890}',
        b'{"n": 1e400}',
        b'{"a": 1, "a": 2}',
        b"\xef\xbb\xbf{}",  # a BOM
        b'{"k": "a\xe2\x80\xa8b"}',  # U+2028 raw inside a string: torn
        b'{"k": "a\xc2\x85b"}',  # U+0085 raw inside a string: torn
        b'{"k": "a\rb"}',  # a bare CR inside a string (invalid JSON once torn)
        b'{"k": 1}\r',  # a CRLF line end
        b'{"k": "\x0b"}',
        b'{"k": "\xc3\xa9\xc3\xa8"}',  # continuation bytes A8/A9 that are no line break
        b"[" * 1100 + b"]" * 1100,
        b'{"terminal": true, "event": "done", "seq": 3}',
        b'{"terminal": true, "event": "stream_end", "seq": 4}',
    ]
)
BAD_BYTES = st.sampled_from([b"\xff", b"\xe2\x80", b"\xc3", b"\xed\xa0\x80", b"\x80"])


@st.composite
def journals(draw) -> bytes:
    lines = draw(st.lists(st.one_of(good_lines(), ODD_LINES), max_size=14))
    sep = draw(st.sampled_from([b"\n", b"\n", b"\r\n"]))
    data = sep.join(lines)
    if draw(st.booleans()):
        data += sep
    cut = draw(st.sampled_from(["none", "none", "torn_last", "cut_char", "bad_middle"]))
    if cut == "torn_last" and data:
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    elif cut == "cut_char":
        data += draw(st.sampled_from([b'{"t": "\xe2\x80', b"\xf0\x9f\x98", b"\xc3"]))
    elif cut == "bad_middle" and data:
        at = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:at] + draw(BAD_BYTES) + data[at:]
    return data


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 64 bytes: every shape lands on a piece edge somewhere."""
    monkeypatch.setattr(journal_mod, "BLOCK_BYTES", 64)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(journals())
def test_streamed_read_equals_the_full_read(data: bytes) -> None:
    _assert_same(data)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(journals())
def test_streamed_read_equals_the_full_read_across_piece_edges(small_pieces, data: bytes) -> None:
    _assert_same(data)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(journals())
def test_streamed_read_equals_the_full_read_when_breaks_are_searched_whole(monkeypatch, data: bytes) -> None:
    """A piece with many bytes that may end U+0085/U+2028/U+2029 is searched for the sequences
    instead of looking at each such byte: the same verdicts."""
    monkeypatch.setattr(journal_mod, "_FEW_TAILS", 0)
    _assert_same(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n",
        _compact(_event(1, "token", {"text": "a\u2028b"}))
        + b"\n"
        + _compact(_event(2, "token", {"text": "c"})),
        _compact(_event(1, "token", {"text": "x"})) + b"\n" + b'{"text": "\xe2\x82',  # cut at EOF
        _compact(_event(1, "token", {"text": "x"})) + b"\n\xff\n" + _compact(_event(2, "done", {})),
        _compact(_event(1, "token", {"text": "x"}))
        + b"\n"
        + _compact(_event(2, "token", {"text": "y"}))[:20],
        b'{"n": 12345678901234567890123}\n{"n": 1.5}\n',
        b'{"a": NaN}\n[1]\n"s"\n\xc2\xa0\n{"b": "\\ud800"}\n',
    ],
    ids=["empty", "blank", "u2028", "cut_char_eof", "bad_byte", "torn_last", "long_digits", "odd_values"],
)
def test_streamed_read_equals_the_full_read_on_named_shapes(data: bytes) -> None:
    _assert_same(data)


def test_the_unreadable_message_names_the_first_bad_byte_as_the_full_read_does(small_pieces) -> None:
    data = b"".join(_compact(_event(i, "token", {"text": "é" * 9})) + b"\n" for i in range(1, 9))
    bad = data[:150] + b"\xff" + data[150:] + b"\xfe"
    with pytest.raises(JournalUnreadable) as full:
        parse_journal_bytes(bad)
    with pytest.raises(JournalUnreadable) as streamed:
        scan_journal_bytes(bad)
    assert (
        str(streamed.value)
        == str(full.value)
        == "not valid UTF-8 at byte 150: the whole journal is unreadable"
    )


def test_the_streamed_events_are_not_held_but_parsed_again_at_each_walk() -> None:
    """Bounded memory by structure: the scan keeps the bytes, the piece plan and at most two terminal
    events; each walk yields fresh dicts, so mutating one changes nothing a later walk sees."""
    lines = [_compact(_event(i, "token", {"text": f"t{i}"})) for i in range(1, 2001)]
    lines.append(_compact(_event(2001, "done", {}, terminal=True, terminal_state="completed")))
    scanned = scan_journal_bytes(b"\n".join(lines) + b"\n")
    events = scanned.events
    assert isinstance(events, StreamedEvents) and len(events) == 2001
    held = [v for v in vars(events).values() if isinstance(v, (list, dict))]
    assert all(not isinstance(v, list) or all(isinstance(p, tuple) for p in v) for v in held)
    first = next(iter(events))
    first["payload"]["text"] = "changed"
    assert next(iter(events))["payload"]["text"] == "t1"
    assert authoritative_terminal_event(events)["seq"] == 2001
