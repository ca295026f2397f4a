"""The depth rule of hermes' run-journal reader (``inspector.store.json_depth``), and the journal
readers that follow it.

hermes' ``_read_jsonl`` catches only ``JSONDecodeError``; on CPython 3.11 ``json.loads`` raises
``RecursionError`` on a line it enters more levels deep than the recursion limit leaves room for,
and every repair reader of hermes then takes the whole journal as having no output. The rule:
entered 994+ levels deep, every hermes caller fails; at most 900, every caller reads it alike;
in between it depends on hermes' own stack (the repairs refuse).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import random
import sys
import threading

import pytest

from inspector.store.journal import (
    JournalDepthUnsure,
    JournalTooDeep,
    JournalUnreadable,
    dropped_lines,
    parse_journal_bytes,
    scan_journal_bytes,
)
from inspector.store.json_depth import (
    ALWAYS,
    HERMES_ALWAYS_READS,
    HERMES_NEVER_READS,
    NEVER,
    UNSURE,
    hermes_verdict,
    levels_entered,
    levels_needed,
)

CPYTHON_311 = sys.version_info[:2] == (3, 11)


def _stdlib_levels(text: str) -> int:
    """The levels the stdlib's own (pure-Python) scanner enters before it returns or raises: its
    parse_object/parse_array hooks counted (the same grammar as the C scanner hermes runs)."""
    state = {"now": 0, "max": 0}
    decoder = json.JSONDecoder()

    def counted(parse):
        def inner(*args, **kwargs):
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            try:
                return parse(*args, **kwargs)
            finally:
                state["now"] -= 1

        return inner

    decoder.parse_object = counted(json.decoder.JSONObject)
    decoder.parse_array = counted(json.decoder.JSONArray)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        decoder.decode(text)
    except ValueError:
        pass
    return state["max"]


_ATOMS = ['1', '"a"', '"\\u12', '"\\u12ab"', '"\\x"', "tru", "true", "NaN", "-Infinity", "-", "01", "1.",
          "1e", '"\x01"', "{}", "[]", '{"k":1}', "", '"\\"', '"a\\"b"', "Infinity", "nul"]  # fmt: skip
_SEPS = [",", " , ", ":", "", " ", "\n", "\t", "]", "}", '"k":', '"k"', ',"k":', " : "]


def test_the_levels_walked_are_the_levels_the_stdlib_scanner_enters_on_broken_and_valid_json() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        parts = [
            rng.choice(["[", '{"a":', "{", "[ ", " ", rng.choice(_ATOMS), rng.choice(_SEPS), "]", "}"])
            for _ in range(rng.randint(1, 60))
        ]
        text = "".join(parts)
        assert levels_entered(text, 10**6) == _stdlib_levels(text), text


def _in_thread(fn):
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


@pytest.mark.skipif(
    not CPYTHON_311, reason="the recursion counting of CPython 3.11 (hermes' interpreter here)"
)
def test_the_c_scanner_raises_recursion_error_exactly_past_the_levels_walked() -> None:
    """At one fixed stack point the C scanner fails on ``[``*n``]``*n past some n; any line,
    broken or not, then fails exactly when the walk says it needs more than n levels (entered, or
    RAISE_LEVELS more than those open where the scanner raises JSONDecodeError itself)."""

    def fails(text: str) -> bool:
        try:
            json.loads(text)
        except RecursionError:
            return True
        except ValueError:
            return False
        return False

    def room() -> int:
        n = 1
        while not fails("[" * (n + 1) + "]" * (n + 1)):
            n += 1
        return n

    limit = _in_thread(room)
    lines = [
        "[" * limit + "]" * limit,
        '{"a":' * limit + "1" + "}" * limit,
        "[" * (limit + 1),  # cut short after going too deep
        "[" * (limit - 1) + "x" + "[" * 50,  # broken just before the limit: an ordinary bad line
        "[1," * limit + "tru" + "]" * limit,
        "[" * (limit - 1) + '["\\q"]',  # a bad escape with ``limit`` open: raising needs 3 more
        "[" * (limit - 3) + '["\\q"]',  # ... with ``limit - 2`` open: still too many
        "[" * (limit - 4) + '["\\q"]',  # ... with ``limit - 3`` open: fits
        "[" * (limit - 1) + "[1 2]",  # a missing comma: raised where it is
        "[" * (limit - 1) + '{"k" 1}',  # a missing colon
        "[" * (limit - 1) + "{1:2}",  # a key that is not a string
        "[" * (limit - 1) + '["\x01"]',  # a control character in a string
        "[" * limit + "tru",  # no value: raised after unwinding, no frame at this depth
        "[" * limit + ",",
        "[" * limit,
        '[{"k":' * (limit // 2) + '"\\q"' + "[" * 500,  # a bad escape stops it
        '[{"k":' * (limit // 2) + "[[",
    ]
    for text in lines:
        needed = levels_needed(text, 10**6)
        assert _in_thread(lambda text=text: fails(text)) == (needed > limit), (needed, limit, text[:40])


@pytest.mark.parametrize(
    ("levels", "verdict"),
    [(5, ALWAYS), (900, ALWAYS), (901, UNSURE), (993, UNSURE), (994, NEVER), (5000, NEVER)],
)
def test_the_verdict_at_each_side_of_the_band(levels: int, verdict: str) -> None:
    line = '{"event":"token","payload":' + "[" * (levels - 1) + "]" * (levels - 1) + "}"
    got, walked = hermes_verdict(line)
    assert got == verdict
    assert walked == (min(levels, HERMES_NEVER_READS) if levels > HERMES_ALWAYS_READS else walked)


def test_a_line_broken_before_it_goes_deep_is_an_ordinary_line_whatever_follows() -> None:
    line = '{"seq":1,"payload":[[[x' + "[" * 5000
    assert levels_entered(line) == 4
    assert hermes_verdict(line) == (ALWAYS, 4)


def test_many_brackets_side_by_side_are_not_deep() -> None:
    line = '{"a":[' + ",".join(["[1]"] * 3000) + "]}"
    assert hermes_verdict(line) == (ALWAYS, 3)


def _deep(levels: int, seq: int = 9) -> bytes:
    return b'{"seq":%d,"payload":' % seq + b"[" * (levels - 1) + b"]" * (levels - 1) + b"}"


OK = b'{"seq":1,"event":"token","payload":{"text":"hi"}}\n'
READERS = [parse_journal_bytes, scan_journal_bytes, dropped_lines]


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__)
def test_a_line_every_hermes_reader_fails_on_makes_the_whole_journal_unreadable(read) -> None:
    with pytest.raises(JournalTooDeep) as info:
        read(OK + _deep(HERMES_NEVER_READS) + b"\n" + OK)
    assert isinstance(info.value, JournalUnreadable) and info.value.line == 2
    assert "nested 994 or more levels deep" in str(info.value)


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__)
def test_a_line_whose_fate_depends_on_hermes_stack_is_unsure(read) -> None:
    with pytest.raises(JournalDepthUnsure) as info:
        read(OK + _deep(HERMES_ALWAYS_READS + 1) + b"\n" + OK)
    assert info.value.line == 2 and info.value.levels == HERMES_ALWAYS_READS + 1


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__)
def test_a_line_every_caller_reads_is_an_event(read) -> None:
    got = read(OK + _deep(HERMES_ALWAYS_READS, seq=2) + b"\n" + OK)
    if read is dropped_lines:
        assert got == (0, None)
    else:
        assert [e["seq"] for e in got.events] == [1, 2, 1]


@pytest.mark.parametrize("read", [parse_journal_bytes, scan_journal_bytes], ids=lambda f: f.__name__)
def test_invalid_utf8_anywhere_wins_and_a_failing_line_wins_over_an_unsure_one(read) -> None:
    """hermes decodes the whole file first; then any line every caller fails on fails the read."""
    with pytest.raises(JournalUnreadable) as info:
        read(OK + _deep(950) + b"\n" + _deep(1000) + b"\n\xff\n")
    assert type(info.value) is JournalUnreadable and "not valid UTF-8" in str(info.value)
    with pytest.raises(JournalTooDeep) as deep:
        read(OK + _deep(950) + b"\n" + OK + _deep(1000) + b"\n")
    assert deep.value.line == 4


def test_the_streaming_read_checks_a_deep_line_in_a_later_piece(monkeypatch) -> None:
    import inspector.store.journal as journal

    monkeypatch.setattr(journal, "BLOCK_BYTES", 64)
    data = OK * 5 + _deep(1200) + b"\n" + OK * 3
    with pytest.raises(JournalTooDeep) as info:
        list(scan_journal_bytes(data).events)
    assert info.value.line == 6
    with pytest.raises(JournalTooDeep):
        parse_journal_bytes(data)


@pytest.mark.parametrize(
    ("levels", "unreadable", "unsure"), [(900, False, False), (950, False, True), (1000, True, False)]
)
def test_the_raw_view_says_what_hermes_reads_of_a_journal_with_a_deep_line(
    levels: int, unreadable: bool, unsure: bool
) -> None:
    """The line-by-line view (with and without its one-pass index) agrees with the readers:
    994+ levels: hermes reads nothing of the file; 901-993: it may not; 900: an ordinary line."""
    from inspector.store.journal_raw import RawJournal, index_journal

    data = OK + _deep(levels, seq=2) + b"\n" + OK
    index = index_journal(data)
    for raw in (RawJournal(data), RawJournal(data, index=index)):
        assert (raw.unreadable is not None) is unreadable and (raw.depth_unsure is not None) is unsure
        assert raw.hermes_view() is None if (unreadable or unsure) else len(raw.hermes_view().events) == 3
        lines = list(raw)
        if unreadable:
            assert all(line.dropped and "nested too deeply" in line.dropped for line in lines)
            assert "this line" in lines[1].dropped and "line 2" in lines[0].dropped
        else:
            assert not any(line.dropped for line in lines)
    assert index.stats["events"] == (0 if unreadable else 3)


@pytest.mark.parametrize(
    ("levels", "error"),
    [(900, None), (950, "depends on hermes itself"), (1000, "nested 994 or more levels deep")],
)
def test_a_turn_journal_line_too_deep_makes_hermes_reader_fail_like_its_other_errors(
    levels: int, error
) -> None:
    """hermes' ``read_turn_journal`` has the same JSONDecodeError-only catch (its audit then
    fails): the inspector's shard reader raises where hermes does, and refuses to guess in the band."""
    from inspector.store.turn_journal import shard_audit_facts

    data = b'{"turn_id":"t","event":"submitted","created_at":1}\n' + _deep(levels) + b"\n"
    facts = shard_audit_facts(data, "s~1.jsonl")
    if error is None:
        assert facts["error"] is None and len(facts["events"]) == 2
    else:
        assert error in facts["error"] and "line 2" in facts["error"]


def test_the_raw_view_reads_a_line_in_the_band_the_same_from_any_depth_of_stack() -> None:
    """A 950-level line (valid JSON) is read from a fresh stack: the same answer at the bottom
    of a test as 80 frames deeper (where the stdlib parser would run out of levels)."""
    from inspector.store.journal_raw import RawJournal
    from inspector.store.json_depth import loads_from_a_fresh_stack

    data = OK + _deep(950, seq=2) + b"\n" + OK

    def dropped_at(depth: int) -> list[str | None]:
        if depth:
            return dropped_at(depth - 1)
        return [line.dropped for line in RawJournal(data)]

    assert dropped_at(0) == dropped_at(80) == [None, None, None]
    text = "[" * 950 + "]" * 950
    with pytest.raises(RecursionError):  # what the stdlib does from that deep a stack

        def parse_at(depth: int) -> object:
            return parse_at(depth - 1) if depth else json.loads(text)

        parse_at(80)
    value, levels = loads_from_a_fresh_stack(text), 1
    while value:  # walked, not compared: comparing 950 levels recurses like the parse
        (value,) = value
        levels += 1
    assert value == [] and levels == 950
    with pytest.raises(RecursionError):
        loads_from_a_fresh_stack("[" * 1000 + "]" * 1000)
    with pytest.raises(ValueError):
        loads_from_a_fresh_stack("[" * 950 + "]" * 949)
