"""``scan._load_cache_text``: the fact cache file's value. msgspec is asked only for a file whose first
bytes say it holds no run of 19+ digits (``_EXACT_PREFIX``); a file it refuses there, and every other
file, goes to the exact parse (``fast_loads``), told whether the bytes were checked (then it skips its
own scan for long numbers). Which parser is asked is seen by spies; the values are written by hand."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from inspector.store import scan

pytestmark = pytest.mark.skipif(scan._msgspec is None, reason="msgspec is not installed")


@pytest.fixture
def asked(monkeypatch) -> dict[str, list]:
    calls: dict[str, list] = {"msgspec": [], "fast_loads": []}
    real = scan._msgspec
    decode, fast_loads = real.json.decode, scan.fast_loads

    def spy_decode(data):
        calls["msgspec"].append(data)
        return decode(data)

    def spy_fast_loads(data, **kwargs):
        calls["fast_loads"].append(kwargs)
        return fast_loads(data, **kwargs)

    monkeypatch.setattr(
        scan,
        "_msgspec",
        SimpleNamespace(
            json=SimpleNamespace(decode=spy_decode),
            DecodeError=real.DecodeError,
            ValidationError=real.ValidationError,
        ),
    )
    monkeypatch.setattr(scan, "fast_loads", spy_fast_loads)
    return calls


def test_a_file_marked_exact_is_read_by_msgspec_alone(asked) -> None:
    data = scan._EXACT_PREFIX + b'"a":[1,"x"]}'
    assert scan._load_cache_text(data) == {"version": scan.CACHE_VERSION, "orjson_exact": True, "a": [1, "x"]}
    assert asked == {"msgspec": [data], "fast_loads": []}


def test_a_file_marked_exact_that_msgspec_refuses_goes_to_the_exact_parse_as_checked(asked) -> None:
    data = scan._EXACT_PREFIX + b'"a":NaN}'  # json.dumps writes NaN; msgspec refuses it
    value = scan._load_cache_text(data)
    assert math.isnan(value["a"])
    assert asked == {"msgspec": [data], "fast_loads": [{"checked": True}]}


def test_a_file_not_marked_exact_never_goes_to_msgspec(asked) -> None:
    data = scan._PLAIN_PREFIX + b'"a":123456789012345678901234567890}'
    assert scan._load_cache_text(data) == {"version": scan.CACHE_VERSION, "a": 123456789012345678901234567890}
    assert asked == {"msgspec": [], "fast_loads": [{"checked": False}]}
