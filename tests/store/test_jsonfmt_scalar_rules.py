"""The fast writer's scalars and the fast reader's digit-run check, rule by rule (tests/MUTATION.md,
fourth session). The writer must give the bytes of ``json.dumps(obj, ensure_ascii=False, indent=2)``
encoded as UTF-8, which hermes' ``Session.save`` writes; every expected value below is that text,
written out by hand from the JSON module's documented output."""

from __future__ import annotations

import pytest

from inspector.store import jsonfmt
from inspector.store.jsonfmt import _float_text, _NotFast, _scalar_bytes, dumps_pretty_fast


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", b'"plain"'),
        ("é \u2028 ☃", '"é \u2028 ☃"'.encode()),  # ensure_ascii=False: non-ASCII kept, as UTF-8
        ('q"b\\n\n\t\x01', b'"q\\"b\\\\n\\n\\t\\u0001"'),
        (None, b"null"),
        (True, b"true"),
        (False, b"false"),
        (0, b"0"),
        (-12345678901234567890123, b"-12345678901234567890123"),
        (1.5, b"1.5"),
        (1e16, b"1e+16"),
        (-0.0, b"-0.0"),
        (float("nan"), b"NaN"),
        (float("inf"), b"Infinity"),
        (float("-inf"), b"-Infinity"),
    ],
)
def test_each_scalar_is_written_as_the_stdlib_writes_it(value, expected):
    """Rule: a string as ``c_encode_basestring`` (UTF-8), None/True/False as null/true/false, an int
    by its digits, a float by ``float.__repr__`` with NaN/Infinity/-Infinity spelled as the stdlib."""
    assert _scalar_bytes(value) == expected


@pytest.mark.parametrize(
    "value", [b"bytes", 1 + 2j, (1, 2), type("MyInt", (int,), {})(3), type("MyStr", (str,), {})("s")]
)
def test_any_other_type_is_left_to_the_stdlib(value):
    """Rule: only the exact types str, int, float, bool and None are written here; anything else (a
    subclass too) raises ``_NotFast`` so the stdlib decides."""
    with pytest.raises(_NotFast):
        _scalar_bytes(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.1, "0.1"),
        (-2.5e-07, "-2.5e-07"),
        (1e308 * 10, "Infinity"),
        (-1e308 * 10, "-Infinity"),
        (float("nan"), "NaN"),
    ],
)
def test_float_text_is_repr_with_the_stdlib_names_of_the_non_finite(value, expected):
    """Rule: ``float.__repr__`` for a finite float; NaN, Infinity and -Infinity as ``json.dumps`` writes them."""
    assert _float_text(value) == expected


def test_a_long_list_of_scalars_is_written_item_by_item_as_the_stdlib():
    """Rule: a list of more than 256 items is split and each scalar written here: the bytes are still
    ``json.dumps(..., indent=2)``'s."""
    items = [True, False, None, 7, "x", 0.5] * 50
    expected = (
        b"[\n"
        + b",\n".join(b"  " + t for t in [b"true", b"false", b"null", b"7", b'"x"', b"0.5"] * 50)
        + b"\n]"
    )
    assert dumps_pretty_fast(items) == expected


def _check(data: bytes) -> bool:
    scan = data.translate(jsonfmt._SCAN_MAP)
    first = scan.find(jsonfmt._LONG_RUN)
    assert first >= 0
    return jsonfmt.long_digit_runs_only_in_strings(data, scan, first)


@pytest.mark.parametrize(
    ("data", "inside"),
    [
        (b"12345678901234567890123", False),  # a number token at offset 0
        (b'"12345678901234567890123"', True),  # a top-level string: the quote at offset 0 counts
        (b'["\\"12345678901234567890123", 12345678901234567890123]', False),  # escaped quote, then a number
        (b'["1234567890123456789", 1234567890123456789, "1234567890123456789"]', False),  # middle one
        (b'["\\"x", "1234567890123456789", "\\"", "1234567890123456789"]', True),
    ],
)
def test_every_long_run_is_placed_from_the_start_of_the_text(data, inside):
    """Rule: the quotes before each run are counted from the first byte, less the escaped ones of each
    stretch once; a run at offset 0 is checked too, and every run after the first is checked in turn."""
    assert _check(data) is inside
