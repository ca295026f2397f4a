"""Rule: a first open parses each sidecar and run journal once, quickly, and keeps exactly the facts
hermes' own parse (the standard library's ``json.loads``) would give.

The sidecar facts come from orjson without a scan of the bytes for long digit runs first: orjson
turns integers beyond 64 bits into floats, so a kept value that may be such a float sends the file
to the exact parser. Journal lines go to orjson without that scan at all (only whether a line is an
object counts). The same comparison runs on every file of every home the differential test builds
(``tests/differential/parse_check.py``).
"""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from inspector.store import scan
from inspector.store.journal import JournalDepthUnsure, JournalTooDeep
from inspector.store.json_depth import may_be_deep_bytes
from inspector.store.jsonfmt import PARSE_DEPTH_LIMIT, has_digit_run, objects_per_line, raw_items
from inspector.store.scan import (
    JOURNAL_PIECE_BYTES,
    _index_facts_of_object,
    _nesting_room,
    _other_threads_shallow,
    _shallow_pass,
    index_facts_of,
    journal_dropped_lines,
    may_be_coerced,
    quick_sidecar_facts,
    sidecar_facts,
    sidecar_facts_many,
)
from tests.differential.parse_check import (
    _same,
    _same_facts,
    hermes_dropped_lines,
    hermes_sidecar_facts,
    quick_dropped_lines,
)

BIG = st.one_of(
    st.integers(min_value=2**63, max_value=2**80), st.integers(min_value=-(2**80), max_value=-(2**63) - 1)
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    BIG,
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["\ud800", "\u2028", "x\x00y", "call_86685597948029058620679f"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
ROLES = st.sampled_from(["user", "assistant", "tool", 7])


@st.composite
def sidecars(draw) -> bytes:
    messages = draw(
        st.lists(
            st.fixed_dictionaries(
                {"role": ROLES, "content": VALUES},
                optional={"_pending_journal_recovery": st.booleans(), "_error": st.booleans(), "ts": VALUES},
            ),
            max_size=4,
        )
    )
    meta = draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "session_id",
                    "title",
                    "updated_at",
                    "created_at",
                    "pending_started_at",
                    "message_count",
                    "profile",
                    "active_stream_id",
                    "pending_user_message",
                    "model",
                    "extra",
                ]
            ),
            VALUES,
            max_size=6,
        )
    )
    obj = {**meta, "messages": messages}
    if draw(st.booleans()):
        obj = draw(st.one_of(st.just(obj), VALUES))
    text = json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=True)
    data = text.encode("utf-8", "surrogatepass")
    cut = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=max(0, len(data)))))
    return data if cut is None else data[:cut]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=sidecars(), want_texts=st.booleans())
def test_sidecar_facts_equal_hermes_parse(data: bytes, want_texts: bool) -> None:
    assert _same(sidecar_facts(data, want_texts=want_texts), hermes_sidecar_facts(data, want_texts))


def test_an_integer_orjson_would_round_is_kept_exact_in_the_metadata_and_user_texts() -> None:
    big = 2**64 + 1
    data = json.dumps(
        {"session_id": "s", "updated_at": big, "messages": [{"role": "user", "content": big}]}, indent=2
    ).encode()
    facts = sidecar_facts(data, want_texts=True)
    assert facts["meta"]["updated_at"] == big and type(facts["meta"]["updated_at"]) is int
    assert facts["texts"] == [str(big)]


def test_long_digit_runs_in_strings_need_no_second_parse() -> None:
    # tool-call ids: the run of digits sits in a string nobody keeps, so orjson's values are kept
    data = json.dumps(
        {
            "session_id": "s",
            "messages": [{"role": "assistant", "tool_calls": [{"id": "call_86685597948029058620679f"}]}],
        }
    ).encode()
    assert _same(sidecar_facts(data, want_texts=True), hermes_sidecar_facts(data, True))
    assert not may_be_coerced({"a": [1.5, 2**62, "12345678901234567890123"]})
    assert may_be_coerced({"a": [float(2**64)]}) and may_be_coerced(-1e19)


def test_a_message_count_beyond_64_bits_is_kept_not_replaced() -> None:
    # orjson gives a float, which is "not an int" and would be replaced by the number of messages
    data = b'{\n  "session_id": null,\n  "message_count": -9223372036854775809,\n  "messages": []\n}'
    assert sidecar_facts(data, want_texts=False)["meta"]["message_count"] == -9223372036854775809
    assert _same(sidecar_facts(data, want_texts=False), hermes_sidecar_facts(data, False))


def test_a_top_level_integer_beyond_64_bits_is_named_as_the_stdlib_names_it() -> None:
    for text in (b"-9223372036854775809", b"18446744073709551616"):
        facts = sidecar_facts(text, want_texts=False)
        assert (
            facts["error"]
            == "top-level JSON is int, not an object"
            == hermes_sidecar_facts(text, False)["error"]
        )


LINES = st.one_of(
    st.dictionaries(st.text(max_size=4), SCALARS, max_size=3).map(lambda d: json.dumps(d, allow_nan=True)),
    VALUES.map(lambda v: json.dumps(v, allow_nan=True)),
    st.sampled_from(
        [
            "",
            "   ",
            "\u3000",
            '{"a": 1',
            "[1, 2]",
            '{"t": "a\u2028b"}',
            '{"n": NaN}',
            '{"x": 1e400}',
            '{"s": "\\ud800"}',
            '{"b": 123456789012345678901234}',
            "\r",
            "{}\r",
        ]
    ),
)


@st.composite
def journals(draw) -> bytes:
    text = "\n".join(draw(st.lists(LINES, max_size=8)))
    if draw(st.booleans()):
        text += "\n"
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:
        at = draw(st.integers(min_value=0, max_value=len(data) - 1))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xe2\x80", b"\n", b"\x85"])) + data[at:]
    return data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=journals())
def test_dropped_lines_equal_hermes_parse(data: bytes) -> None:
    assert quick_dropped_lines(data) == hermes_dropped_lines(data)


# Lines that only the standard library may judge, or that a check of many lines at once could get
# wrong: what msgspec refuses but the stdlib takes, what it skips without looking (the UTF-8 of a
# string), values nested or long enough to be the stdlib's alone, line breaks str.splitlines knows
# and a split at b"\n" does not, and lines whose pieces join into valid JSON across the line breaks.
HOSTILE_LINES = [
    '{"n": NaN}',
    '{"i": Infinity, "j": -Infinity}',
    '{"s": "\\ud800"}',
    '{"s": "\\udc00x"}',
    '{"s": "\\ud83d\\ude00"}',
    '{"b": ' + "7" * 5000 + "}",
    '{"b": "' + "7" * 5000 + '"}',
    '{"b": -' + "1" * 700 + "}",
    '{"f": 1.' + "5" * 5000 + "}",
    '{"a": 1, "a": 2}',
    '{"d": ' + "[" * 600 + "]" * 600 + "}",
    '{"d": ' + "[" * 995 + "]" * 995 + "}",
    '{"d": ' + "[" * 1100 + "]" * 1100 + "}",
    '{"d": ' + '{"k":' * 400 + "1" + "}" * 400 + "}",
    "[" * 2000,
    '{"c": "a\x01b"}',
    '{"c": "a\x1cb"}',
    '{"c": "tab\there"}',
    '{"c": "del\x7f"}',
    '{"ws": 1}\x0b',
    '\x0c{"ws": 1}',
    '{"ws":\t1 }',
    ' {"ws": 1}',
    '{"ws": 1} ',
    "\u3000",
    "\xa0{}",
    "{}\xa0",
    '{"u": "a\u2028b"}',
    '{"u": "a\x85b"}',
    '{"u": "a\u2029b"}',
    "{}\r",
    '{"a":\r1}',
    '{"a":"}',
    '{"}',
    "{},{}",
    '{"a":[[1',
    "2]]}",
    "{},{}",
    '{"a":1',
    '"b":2}',
    "1",
    '"text"',
    "[]",
    "null",
    "{}",
    '{"x": "é🙂日本"}',
    "\ufeff{}",
    "",
    " ",
]


@st.composite
def hostile_journals(draw) -> bytes:
    lines = draw(st.lists(st.one_of(st.sampled_from(HOSTILE_LINES), LINES), max_size=10))
    text = "\n".join(lines) + ("\n" if draw(st.booleans()) else "")
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:
        at = draw(st.integers(min_value=0, max_value=len(data) - 1))
        data = (
            data[:at]
            + draw(st.sampled_from([b"\xff", b"\xe2\x80", b"\xed\xa0\x80", b"\xc0\xaf"]))
            + data[at:]
        )
    return data


@settings(
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=hostile_journals())
def test_dropped_lines_equal_hermes_parse_on_hostile_lines(data: bytes) -> None:
    # Hypothesis raises the recursion limit while a test runs, so json.loads here reads deeper than
    # hermes' reader can: a line of 900+ opening brackets is judged by hermes' own limits
    # (inspector.store.json_depth, pinned against hermes in tests/hermes_check/test_journal_depth_hermes.py,
    # and by the plain test below, which runs outside Hypothesis).
    assume(not may_be_deep_bytes(data))
    assert quick_dropped_lines(data) == hermes_dropped_lines(data)


def test_each_hostile_line_alone_and_among_good_lines_is_judged_as_hermes_does() -> None:
    good = '{"seq": 1, "event": "token", "text": "hello"}'
    for line in HOSTILE_LINES:
        for text in (line, f"{good}\n{line}\n{good}\n", f"{line}\n{line}\n{good}"):
            data = text.encode("utf-8", "surrogatepass")
            assert quick_dropped_lines(data) == hermes_dropped_lines(data), repr(text[:80])


def test_lines_that_join_into_valid_json_across_line_breaks_are_not_taken_for_objects() -> None:
    # with each line break made a comma these lines are an array of three objects, as many as there
    # are lines; alone, none of them is JSON (the check proves each element is one whole line)
    for lines in (['{"a":"}', '{"}', "{},{}"], ['{"a":[[1', "2]]}", "{},{}"], ['{"a":1', '"b":2}', "{},{}"]):
        data = "\n".join(lines).encode()
        joined = json.loads("[" + ",".join(lines) + "]")
        assert len(joined) == len(lines) and all(isinstance(o, dict) for o in joined)
        assert objects_per_line(data) is None
        assert quick_dropped_lines(data) == hermes_dropped_lines(data) == (3, 1)


def test_a_journal_of_plain_object_lines_is_proven_without_a_parse_per_line() -> None:
    body = "\n".join(json.dumps({"seq": i, "event": "token", "text": "é🙂 " * (i % 5)}) for i in range(3000))
    assert objects_per_line(body.encode()) == 3000
    assert journal_dropped_lines((body + "\n").encode()) == (0, None)


def test_a_journal_larger_than_one_piece_numbers_its_lines_on_across_pieces() -> None:
    good = json.dumps({"seq": 1, "event": "token", "text": "x" * 200})
    n = (JOURNAL_PIECE_BYTES // len(good)) * 2 + 50
    lines = [good] * n
    lines[n - 10] = "not json"  # in the last piece, which goes line by line
    lines[n - 5] = '{"u": "a\u2028b"}'  # torn by str.splitlines: two dropped lines
    data = ("\n".join(lines) + "\n").encode()
    assert journal_dropped_lines(data) == hermes_dropped_lines(data) == (3, n - 9)


@pytest.mark.parametrize(
    ("levels", "error"), [(1000, JournalTooDeep), (950, JournalDepthUnsure)], ids=["too-deep", "unsure"]
)
def test_a_deep_line_after_pieces_proven_quickly_still_fails_the_journal(levels, error) -> None:
    """Rule (json_depth): a line of 994+ levels makes hermes' reader fail on the whole journal, and
    one of 901-993 levels may; the pieces before it, proven without a parse per line, change nothing."""
    good = json.dumps({"seq": 1, "event": "token", "text": "x" * 200})
    n = (JOURNAL_PIECE_BYTES // len(good)) * 2
    deep = '{"d": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"
    data = ("\n".join([good] * n + [deep, good]) + "\n").encode()
    with pytest.raises(error):
        journal_dropped_lines(data)


def stdlib_index_facts(data: bytes) -> dict:
    """The index facts of hermes' own parse (``json.loads`` of the UTF-8 text)."""
    try:
        obj, ok = json.loads(data.decode("utf-8")), True
    except (UnicodeDecodeError, ValueError, RecursionError):
        obj, ok = None, False
    return _index_facts_of_object(obj, ok)


HOSTILE_VALUES = [
    "NaN",
    "-Infinity",
    '"\\ud800"',
    '"a\\ud83d\\ude00b"',
    '"\\u00e9\\n\\t"',
    "7" * 5000,
    "-" + "1" * 700,
    '"' + "7" * 5000 + '"',
    "1e400",
    "[" * 600 + "]" * 600,
    "[" * 1100 + "]" * 1100,
    '{"k":' * 300 + "1" + "}" * 300,
    '"é🙂日本\u2028"',
    "true",
    "null",
    "12",
    "[]",
    "{}",
]
KEYS = st.sampled_from(['"session_id"', '"title"', '"session\\u005fid"', '"tit\\u006ce"', '"other"'])


@st.composite
def index_texts(draw) -> bytes:
    rows = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        if draw(st.integers(min_value=0, max_value=9)) == 0:  # a row that is not an object
            rows.append(draw(st.sampled_from(HOSTILE_VALUES)))
            continue
        pairs = draw(  # as text: a key may repeat (the last one counts)
            st.lists(
                st.tuples(
                    KEYS,
                    st.one_of(
                        st.sampled_from(HOSTILE_VALUES), VALUES.map(lambda v: json.dumps(v, allow_nan=True))
                    ),
                ),
                max_size=4,
            )
        )
        rows.append("{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}")
    text = "[\n" + ",\n".join(rows) + "\n]"
    if draw(st.booleans()):
        text = (
            draw(st.sampled_from(["", " ", "\ufeff", "\x0c"]))
            + text
            + draw(st.sampled_from(["", " ", "x", ","]))
        )
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:
        at = draw(st.integers(min_value=0, max_value=len(data) - 1))
        data = (
            data[:at]
            + draw(st.sampled_from([b"\xff", b"\xe2\x80", b"\xed\xa0\x80", b"", b"]"]))
            + data[at + 1 :]
        )
    return data


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=index_texts())
def test_index_facts_equal_hermes_parse(data: bytes) -> None:
    """Rule: the quick read of ``_index.json`` (msgspec, the rows' session_id and title as bytes)
    gives the facts of the stdlib's parse on every input."""
    assert _same(index_facts_of(data), stdlib_index_facts(data))


def test_the_usual_index_is_read_without_building_its_rows() -> None:
    rows = [
        {"session_id": f"s{i}", "title": f"chat é🙂 {i}", "updated_at": 1.5 + i, "n": 2**70}
        for i in range(50)
    ]
    rows.append({"session_id": 7, "title": "x"})
    rows.append({"title": "no id"})
    text = json.dumps(rows, ensure_ascii=False, indent=2)  # and a row repeating its key (the last counts):
    text = (
        text[:-2] + ',\n  {"session_id": "s-last", "title": ["not a string"], "session\\u005fid": "dup"}\n]'
    )
    data = text.encode()
    assert raw_items(data) is not None  # the quick read applies
    facts = index_facts_of(data)
    assert facts["rows"][:2] == [["s0", "chat é🙂 0"], ["s1", "chat é🙂 1"]]
    assert facts["rows"][-1] == ["dup", None]
    assert _same(facts, stdlib_index_facts(data))


def test_has_digit_run_finds_every_run_of_the_length_and_no_shorter_one() -> None:
    for length in (2, 3, 19, 640):
        for size in range(length - 2, length + 3):
            for pad in range(0, 2 * length, max(1, length // 7)):
                data = b"x" * pad + b"5" * size + b"y" * (length - pad % length)
                assert has_digit_run(data, length) == (size >= length), (length, size, pad)


def test_has_digit_run_looks_past_near_misses_before_and_after_the_run() -> None:
    """Rule: numbers one digit short of the length (decimals such as ``1111.5``) come before and
    after the long run; every one of them is a near miss and the search goes on past each."""
    for length in (3, 4, 19, 640):
        near_miss = (b"1" * (length - 1) + b".") * 6
        # the premise: each half-length step lands on digits twice in a row in the near misses
        step = length // 2
        digits = b"0123456789"
        assert any(
            near_miss[i] in digits and near_miss[i + step] in digits
            for i in range(0, len(near_miss) - step, step)
        )
        assert not has_digit_run(near_miss + b"," + near_miss, length), length
        for run in (b"7" * length, b"7" * (length + 5)):
            assert has_digit_run(near_miss + b"," + run + b"," + near_miss, length), length
            assert has_digit_run(near_miss + b"," + near_miss + b"," + run, length), length
            assert has_digit_run(run + b"," + near_miss, length), length


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=sidecars(), want_texts=st.booleans())
def test_quick_sidecar_facts_equal_hermes_parse(data: bytes, want_texts: bool) -> None:
    """Rule: the first open's read of a sidecar without its messages (msgspec) keeps exactly the
    facts of the stdlib's parse, or leaves the file to the full parse."""
    quick = sidecar_facts_many([data], want_texts)[0]
    assert _same_facts(quick, hermes_sidecar_facts(data, want_texts))


MESSAGE_TEXTS = st.one_of(
    st.sampled_from(
        [
            '{"role": "assistant", "content": "ok"}',
            '{"role": "assistant", "content": "x", "_error": true}',
            '{"role": "assistant", "_error": 0}',
            '{"role": "user", "content": "hi", "_pending_journal_recovery": true}',
            '{"role": "user", "_pending_journal_recovery": 1}',
            '{"role": "user", "\\u005fpending_journal_recovery": true}',
            '{"role": "user", "_pending_journal_recovery": false, "_pending_journal_recovery": true}',
            '{"rol\\u0065": "assistant"}',
            '"not an object"',
            "7",
            "null",
        ]
    ),
    st.sampled_from(HOSTILE_VALUES).map(lambda v: '{"role": "tool", "content": ' + v + "}"),
    VALUES.map(lambda v: json.dumps({"role": "user", "content": v}, allow_nan=True)),
)
TOP_KEYS = st.sampled_from(
    [
        '"session_id"',
        '"session\\u005fid"',
        '"title"',
        '"message_count"',
        '"updated_at"',
        '"pending_user_message"',
        '"workspace"',
        '"worktree_path"',
        '"context_messages"',
        '"model"',
    ]
)


@st.composite
def hostile_sidecars(draw) -> bytes:
    pairs = draw(
        st.lists(
            st.tuples(
                TOP_KEYS,
                st.one_of(
                    st.sampled_from(HOSTILE_VALUES + ['"~nosuchuser9/x"', '"a\\u0000b"', '"/tmp/w"']),
                    VALUES.map(lambda v: json.dumps(v, allow_nan=True)),
                ),
            ),
            max_size=5,
        )
    )
    messages = draw(
        st.one_of(
            st.lists(MESSAGE_TEXTS, max_size=5).map(lambda m: "[" + ", ".join(m) + "]"),
            st.sampled_from(["null", "{}", '"x"', "3", "[]"]),
        )
    )
    if draw(st.booleans()):
        pairs.insert(draw(st.integers(min_value=0, max_value=len(pairs))), ('"messages"', messages))
    text = "{\n  " + ",\n  ".join(f"{k}: {v}" for k, v in pairs) + "\n}"
    if draw(st.integers(min_value=0, max_value=5)) == 0:
        text = draw(st.sampled_from(["[", " ", "\ufeff", "\x0c", "1 ", '"s"'])) + text
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:
        at = draw(st.integers(min_value=0, max_value=len(data) - 1))
        data = (
            data[:at]
            + draw(st.sampled_from([b"\xff", b"\xe2\x80", b"\xed\xa0\x80", b"", b"}", b"\x01"]))
            + data[at + 1 :]
        )
    return data


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hostile_sidecars(), want_texts=st.booleans())
def test_quick_sidecar_facts_equal_hermes_parse_on_hostile_files(data: bytes, want_texts: bool) -> None:
    assert _same_facts(sidecar_facts_many([data], want_texts)[0], hermes_sidecar_facts(data, want_texts))


def test_each_hostile_value_in_a_sidecar_is_judged_as_hermes_does() -> None:
    for value in HOSTILE_VALUES:
        for text in (
            '{"title": ' + value + ', "messages": []}',
            '{"messages": [{"role": "tool", "content": ' + value + "}]}",
            '{"title": "t", "messages": [' + value + '], "model": "m"}',
        ):
            data = text.encode("utf-8", "surrogatepass")
            for want in (False, True):
                quick = sidecar_facts_many([data], want)[0]
                assert _same_facts(quick, hermes_sidecar_facts(data, want)), text[:60]


def _msgspec_counts_against_the_recursion_limit() -> bool:
    """Whether the quick pass can work here: msgspec present, and a lower recursion limit gives it
    less room (3.11; from 3.12 C code has a limit of its own). Probed without the pass's code."""
    if scan._msgspec is None:
        return False
    room = _nesting_room()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit - 100)
    try:
        lowered = _nesting_room()
    finally:
        sys.setrecursionlimit(limit)
    return lowered < room


def test_the_usual_sidecar_is_read_without_building_its_messages() -> None:
    messages = [
        {"role": "user", "content": f"q{i} é🙂"} if i % 2 == 0 else {"role": "assistant", "content": "a"}
        for i in range(40)
    ]
    data = json.dumps(
        {"session_id": "s1", "title": "t", "message_count": 40, "updated_at": 1.5, "messages": messages},
        ensure_ascii=False,
        indent=2,
    ).encode()
    if not _msgspec_counts_against_the_recursion_limit():
        pytest.skip("msgspec's nesting limit is not the recursion limit on this Python: no quick pass")
    proven = []
    _shallow_pass(lambda quick: proven.append(quick and quick_sidecar_facts(data)))
    assert proven[0]["count"] == 40 and proven[0]["meta"]["title"] == "t"


def test_the_quick_pass_refuses_nesting_the_stdlib_may_not_parse() -> None:
    """Rule: msgspec counts nesting against the recursion limit, as the stdlib does; in the quick
    pass it gives up at about PARSE_DEPTH_LIMIT levels, so a deeper file is the full parse's."""
    rooms = []
    _shallow_pass(lambda quick: rooms.append((quick, _nesting_room())))
    quick, room = rooms[0]
    if quick:
        assert room <= PARSE_DEPTH_LIMIT + 50
    deep = b'{"messages": [' + b"[" * 700 + b"]" * 700 + b"]}"
    assert sidecar_facts_many([deep])[0]["count"] == 1 == hermes_sidecar_facts(deep, False)["count"]


def test_the_quick_pass_runs_beside_a_shallow_thread_and_not_beside_a_deep_one() -> None:
    """Rule: the quick pass lowers the interpreter's recursion limit for its time, so it runs only
    while every other thread is far from that limit (a window worker's thread watching its parent
    is a few frames deep); beside a deep one it is off, and the files are parsed in full."""
    import threading

    def idle(release: threading.Event, depth: int) -> None:
        if depth:
            idle(release, depth - 1)
        else:
            release.wait(30)

    for depth, quick_expected in ((3, True), (PARSE_DEPTH_LIMIT, False)):
        release = threading.Event()
        thread = threading.Thread(target=idle, args=(release, depth), daemon=True)
        thread.start()
        try:
            seen = []
            _shallow_pass(seen.append)
        finally:
            release.set()
            thread.join()
        data = b'{"messages": [1, 2]}'
        assert sidecar_facts_many([data])[0]["count"] == 2
        if quick_expected and not _msgspec_counts_against_the_recursion_limit():
            pytest.skip("no quick pass on this Python")
        assert seen == [quick_expected]


@pytest.mark.parametrize("value", ["[1]", '"text"', "7", "-0.5", "true", "null", "[]", '["{"]'])
@pytest.mark.parametrize("at", [0, 1, 2, 5, 6])
def test_a_line_that_is_json_but_no_object_is_found_wherever_it_is(value, at) -> None:
    # each line's first byte is picked out of the piece by the offsets the lines' lengths give:
    # one line that is JSON but no object, first, second, in the middle or last, is found
    lines = [json.dumps({"seq": i, "text": "x" * i}) for i in range(7)]
    lines[at] = value
    data = "\n".join(lines).encode()
    assert objects_per_line(data) is None
    assert quick_dropped_lines(data + b"\n") == hermes_dropped_lines(data + b"\n") == (1, at + 1)
    assert objects_per_line("\n".join(json.dumps({"seq": i}) for i in range(7)).encode()) == 7


def test_the_quick_pass_is_off_beside_an_older_deep_thread_when_called_from_a_newer_one() -> None:
    """Rule: every other thread is looked at, whichever order the interpreter lists them in: a
    deep thread started before the one that asks (the newest thread is listed first) turns the
    quick pass off as well."""
    import threading

    def idle(release: threading.Event, depth: int) -> None:
        if depth:
            idle(release, depth - 1)
        else:
            release.wait(30)

    release = threading.Event()
    deep = threading.Thread(target=idle, args=(release, PARSE_DEPTH_LIMIT), daemon=True)
    deep.start()
    seen: list = []
    try:
        asker = threading.Thread(target=lambda: _shallow_pass(seen.append))
        asker.start()
        asker.join(30)
    finally:
        release.set()
        deep.join()
    assert seen == [False]


def test_another_thread_is_shallow_while_it_has_fewer_frames_than_the_depth() -> None:
    """Rule: ``_other_threads_shallow(depth)`` holds while every other thread has fewer than
    ``depth`` frames (counted here by the stdlib's ``traceback.walk_stack``)."""
    import sys
    import threading
    import traceback

    release, parked = threading.Event(), threading.Event()

    def idle(depth: int) -> None:
        if depth:
            idle(depth - 1)
        else:
            parked.set()
            release.wait(30)

    thread = threading.Thread(target=idle, args=(150,), daemon=True)
    thread.start()
    try:
        assert parked.wait(30)
        frames = len(list(traceback.walk_stack(sys._current_frames()[thread.ident])))
        assert frames > 150
        assert _other_threads_shallow(frames) is False
        assert _other_threads_shallow(frames + 1) is True
    finally:
        release.set()
        thread.join()


def test_without_msgspec_there_is_no_quick_pass(monkeypatch) -> None:
    monkeypatch.setattr(scan, "_msgspec", None)
    seen: list = []
    _shallow_pass(seen.append)
    assert seen == [False] and seen[0] is False


def test_a_caller_already_deep_gets_the_quick_pass_without_a_lower_limit() -> None:
    """Rule: where msgspec's room is already no more than PARSE_DEPTH_LIMIT levels (the caller is
    deep in the stack), it gives up soon enough by itself: the pass is quick, the limit untouched."""
    if not _msgspec_counts_against_the_recursion_limit():
        pytest.skip("no quick pass on this Python")
    limit = sys.getrecursionlimit()

    def deep(levels: int) -> tuple:
        if levels:
            return deep(levels - 1)
        seen: list = []
        room = _nesting_room()
        _shallow_pass(lambda quick: seen.append((quick, sys.getrecursionlimit())))
        return room, seen

    # from here to a room 10 levels under PARSE_DEPTH_LIMIT, whatever the stack below the test
    room, seen = deep(_nesting_room() - (PARSE_DEPTH_LIMIT - 10))
    assert PARSE_DEPTH_LIMIT - 50 < room <= PARSE_DEPTH_LIMIT
    assert seen == [(True, limit)]


def test_a_recursion_limit_the_interpreter_refuses_to_lower_means_no_quick_pass(monkeypatch) -> None:
    if not _msgspec_counts_against_the_recursion_limit():
        pytest.skip("no quick pass on this Python")
    limit = sys.getrecursionlimit()
    real = sys.setrecursionlimit

    def refuse_lower(value: int) -> None:
        if value < limit:
            raise RecursionError("cannot set the recursion limit that low at this depth")
        real(value)

    monkeypatch.setattr(sys, "setrecursionlimit", refuse_lower)
    seen: list = []
    _shallow_pass(seen.append)
    assert seen == [False] and seen[0] is False
    assert sys.getrecursionlimit() == limit


def test_the_limit_comes_back_when_the_room_cannot_be_measured(monkeypatch) -> None:
    """Rule: an exception while the limit is lowered (a Ctrl-C in the measure of the room) goes
    on up as it is, and the interpreter's recursion limit is put back first."""
    if not _msgspec_counts_against_the_recursion_limit():
        pytest.skip("no quick pass on this Python")

    class Interrupted(BaseException):
        pass

    limit = sys.getrecursionlimit()
    real = scan._nesting_room
    calls: list[int] = []

    def room_then_interrupted() -> int:
        calls.append(sys.getrecursionlimit())
        if len(calls) == 2:  # the measure made with the limit lowered
            raise Interrupted
        return real()

    monkeypatch.setattr(scan, "_nesting_room", room_then_interrupted)
    with pytest.raises(Interrupted):
        _shallow_pass(lambda quick: pytest.fail("fn ran"))
    assert calls[0] == limit and calls[1] < limit
    assert sys.getrecursionlimit() == limit
