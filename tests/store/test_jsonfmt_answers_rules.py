"""Small answers of ``store.jsonfmt`` (expected values written out by hand):

* ``is_utf8``: what ``bytes.decode("utf-8")`` accepts, U+2028, U+2029 and U+0085 included (they are
  valid UTF-8; only the line-splitting checks treat them apart);
* ``orjson_safe``: yes for JSON without a run of 19 or more digits, no with one (orjson turns
  integers beyond 64 bits into floats);
* ``raw_string``: a JSON string's text, also a lone surrogate escape (msgspec refuses it, the
  stdlib decodes it); None for a value that is not a string;
* ``raw_items``: no items when one is nested deeper than ``PARSE_DEPTH_LIMIT``, in objects as in
  arrays (the stdlib's verdict there depends on its stack), or holds a run of 640 digits;
* ``objects_per_line``: non-ASCII lines are counted; a U+2028 in a string leaves the count to the caller;
* ``line_pieces``: each piece ends just after the first newline at or after its last byte;
* ``fast_loads``: a lone surrogate in text parses as the stdlib's; a UTF-8 BOM is refused as hermes does;
* ``_orjson_loads_within``: orjson's value only up to the nesting limit, and only for one JSON value.
"""

from __future__ import annotations

from itertools import islice

import pytest

from inspector.store import jsonfmt


def test_is_utf8_accepts_the_line_separators_and_refuses_a_bad_byte():
    assert jsonfmt.is_utf8("caf\u00e9 \u2028 \u2029 \u0085".encode()) is True
    assert jsonfmt.is_utf8(b"caf\xc3") is False


@pytest.mark.skipif(jsonfmt._orjson is None, reason="orjson is a declared dependency")
def test_orjson_safe_says_no_only_for_a_long_digit_run():
    assert jsonfmt.orjson_safe(b'{"a": 1234567890123456789}') is False  # 19 digits
    assert jsonfmt.orjson_safe(b'{"a": 123456789012345678}') is True  # 18 digits


def test_raw_string_decodes_a_lone_surrogate_escape_as_the_stdlib():
    assert jsonfmt.raw_string(b'"\\ud800x"') == "\ud800x"
    assert jsonfmt.raw_string(b'"abc"') == "abc"
    assert jsonfmt.raw_string(b"12") is None


def test_raw_items_leaves_an_item_nested_too_deep_in_objects_to_the_stdlib():
    """``raw_items``: an item nested deeper than ``PARSE_DEPTH_LIMIT`` is the stdlib's to judge (no
    items), whether its levels are objects or arrays; one exactly that deep is taken."""
    deep = jsonfmt.PARSE_DEPTH_LIMIT + 1
    for opening, closing in ((b'{"a":', b"}"), (b"[", b"]")):
        item = opening * deep + b"1" + closing * deep
        assert jsonfmt.raw_items(b"[" + item + b"]") is None
    item = b'{"a":' * (deep - 1) + b"1" + b"}" * (deep - 1)
    assert [bytes(i) for i in jsonfmt.raw_items(b"[" + item + b"]")] == [item]


def test_raw_items_leaves_an_item_with_a_640_digit_run_to_the_stdlib():
    """``raw_items``: an item holding 640 digits in a row is the stdlib's to judge (an integer it may
    refuse to convert); 639 are taken."""
    for digits, taken in ((640, False), (639, True)):
        item = b'{"n": ' + b"7" * digits + b"}"
        assert (jsonfmt.raw_items(b"[" + item + b"]") is not None) is taken


def test_objects_per_line_counts_non_ascii_lines_and_leaves_a_line_separator_to_the_caller():
    """``objects_per_line``: UTF-8 text without U+0085, U+2028 or U+2029 is counted line by line; one
    of those in a string splits hermes' line (``str.splitlines``), so the count is the caller's."""
    assert jsonfmt.objects_per_line('{"a": "é"}\n{"b": 1}'.encode()) == 2
    assert jsonfmt.objects_per_line('{"a": "é\u2028"}\n{"b": 1}'.encode()) is None


def _pieces(data: bytes, size: int) -> list[tuple[int, int]]:
    return list(islice(jsonfmt.line_pieces(data, size), 10))  # at most 10: a piece that never ends shows


def test_line_pieces_end_each_piece_just_after_the_first_newline_from_its_last_byte():
    """``line_pieces``: a piece of about ``size`` bytes ends just after the first b"\\n" at or after its
    last byte (a newline earlier in it does not end it), the last one at the end of the data."""
    assert _pieces(b"ab\ncd\nef", 2) == [(0, 3), (3, 6), (6, 8)]
    assert _pieces(b"a\nbcd\nef", 3) == [(0, 6), (6, 8)]
    assert _pieces(b"\nab", 1) == [(0, 1), (1, 3)]
    assert _pieces(b"abcdef", 2) == [(0, 6)]


def test_fast_loads_takes_a_lone_surrogate_in_text_and_refuses_a_bom_as_hermes():
    """``fast_loads``: text holding a lone surrogate parses as the stdlib parses it; bytes starting
    with a UTF-8 BOM are refused (hermes decodes with ``utf-8``, which keeps the BOM, and
    ``json.loads`` refuses it), though ``json.loads`` of the bytes themselves would strip it."""
    assert jsonfmt.fast_loads('["\ud800"]') == ["\ud800"]
    with pytest.raises(ValueError):
        jsonfmt.fast_loads(b'\xef\xbb\xbf{"a": 1}')


@pytest.mark.skipif(jsonfmt._orjson is None, reason="orjson is a declared dependency")
def test_orjson_loads_within_gives_the_value_only_up_to_the_limit_and_for_one_value():
    """``_orjson_loads_within`` (the parse behind ``loads_bytes_fast``): orjson's value of text nesting
    at most ``limit`` levels (also with no wrapping left, at orjson's own 1,024), else "not parsed";
    the wrapping arrays never make text that is not one JSON value into one (``1], [2``)."""
    not_parsed = jsonfmt._NOT_PARSED
    assert jsonfmt._orjson_loads_within(b' {"a": [1, {}]} ', 3) == {"a": [1, {}]}
    assert jsonfmt._orjson_loads_within(b"[[[1]]]", 3) == [[[1]]]
    assert jsonfmt._orjson_loads_within(b"[[[1]]]", 2) is not_parsed
    assert jsonfmt._orjson_loads_within(b"1], [2", 3) is not_parsed
    assert jsonfmt._orjson_loads_within(b"[1]", 1024) == [1]


@pytest.mark.parametrize("body", [b"[1]", b"1", b'"x"', b"null", b"[]", b"true", b' {"a": 1}'])
def test_objects_per_line_a_single_line_that_is_not_an_object_is_not_counted(body):
    """One line holding a JSON value that is not an object (or an object after a space, which is
    not the line alone) is not one object per line: None, for the caller to judge. The first-byte
    check of the other lines starts at the second line, so the first line's rests on the guard."""
    assert jsonfmt.objects_per_line(body) is None
    assert jsonfmt.objects_per_line(body + b"\n{}") is None  # nor when an object line follows
    assert jsonfmt.objects_per_line(b"{}\n" + body) is None  # nor when it follows one


def test_objects_per_line_without_msgspec_leaves_every_body_to_the_caller(monkeypatch):
    """No msgspec (its decoder None): nothing is proven, whatever the body; nothing raises."""
    monkeypatch.setattr(jsonfmt, "_LINES_DECODER", None)
    for body in (b'{"a": 1}', b'{"a": 1}\n{"b": 2}', b"{}", b""):
        assert jsonfmt.objects_per_line(body) is None
