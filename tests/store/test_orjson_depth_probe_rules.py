"""The probe of orjson's depth limit (``jsonfmt._orjson_depth_limit_is_known``): the fast reader relies
on orjson refusing exactly past 1,024 nested arrays/objects (orjson's documented recursion limit), so it
checks that once per process with four documents and falls back to walking the value otherwise
(tests/MUTATION.md, fourth session). An orjson stand-in with another limit shows each verdict."""

from __future__ import annotations

import json
import sys

import orjson
import pytest

from inspector.store import jsonfmt

N = 1024
ARRAYS_AT_LIMIT = b"[" * (N - 1) + b"{}" + b"]" * (N - 1)
ARRAYS_PAST_LIMIT = b"[" * N + b"{}" + b"]" * N
OBJECTS_AT_LIMIT = b'{"a":' * N + b"1" + b"}" * N
OBJECTS_PAST_LIMIT = b'{"a":' * (N + 1) + b"1" + b"}" * (N + 1)


class FakeOrjson:
    """An orjson that refuses a document nested deeper than ``arrays`` levels when it is an array and
    ``objects`` levels when it is an object (raising ``error``), and otherwise parses with the stdlib; it
    records every document it is given."""

    def __init__(self, arrays: int = N, objects: int = N, error: type[Exception] = ValueError) -> None:
        self.arrays, self.objects, self.error = arrays, objects, error
        self.seen: list[bytes] = []

    def loads(self, text: bytes):
        self.seen.append(text)
        if not isinstance(text, bytes):
            raise TypeError("Input must be bytes")
        depth = deepest = 0
        for byte in text:
            if byte in b"[{":
                depth += 1
                deepest = max(deepest, depth)
            elif byte in b"]}":
                depth -= 1
        limit = self.arrays if text[:1] == b"[" else self.objects
        if deepest > limit:
            raise self.error("recursion limit exceeded")
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(old + 4 * N)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(str(exc)) from None
        finally:
            sys.setrecursionlimit(old)


@pytest.fixture
def fresh(monkeypatch):
    """No verdict cached yet; the fixture's caller puts its orjson in place."""
    monkeypatch.setattr(jsonfmt, "_ORJSON_DEPTH_CHECKED", None)

    def use(fake) -> None:
        monkeypatch.setattr(jsonfmt, "_orjson", fake)

    return use


def test_this_orjson_refuses_exactly_past_1024_levels(fresh):
    """Rule: the installed orjson accepts 1,024 nested arrays/objects and refuses 1,025 (its documented
    limit): the probe says True, and says it from a fresh start."""
    fresh(orjson)
    assert jsonfmt._orjson_depth_limit_is_known() is True
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(ARRAYS_PAST_LIMIT)


def test_the_probe_reads_four_documents_at_and_past_the_limit_in_order(fresh):
    """Rule: 1,023 arrays around an object parse, 1,024 do not; 1,024 nested objects parse, 1,025 do not."""
    fake = FakeOrjson()
    fresh(fake)
    assert jsonfmt._orjson_depth_limit_is_known() is True
    assert fake.seen == [ARRAYS_AT_LIMIT, ARRAYS_PAST_LIMIT, OBJECTS_AT_LIMIT, OBJECTS_PAST_LIMIT]


@pytest.mark.parametrize(
    "arrays, objects",
    [(N - 1, N), (N + 1, N), (N, N - 1), (N, N + 1), (N + 1, N + 1), (10, 10)],
    ids=["arrays-lower", "arrays-higher", "objects-lower", "objects-higher", "both-higher", "shallow"],
)
def test_an_orjson_with_another_limit_is_not_trusted(fresh, arrays, objects):
    """Rule: any other limit, for arrays or for objects, lower or higher, makes the probe say False."""
    fresh(FakeOrjson(arrays, objects))
    assert jsonfmt._orjson_depth_limit_is_known() is False


def test_a_type_error_from_orjson_counts_as_a_refusal(fresh):
    """Rule: orjson refusing with TypeError instead of ValueError is a refusal too (not an error)."""
    fresh(FakeOrjson(error=TypeError))
    assert jsonfmt._orjson_depth_limit_is_known() is True
    fresh(FakeOrjson(arrays=N - 1, error=TypeError))
    jsonfmt._ORJSON_DEPTH_CHECKED = None  # the fixture restores it
    assert jsonfmt._orjson_depth_limit_is_known() is False


def test_without_orjson_the_limit_is_not_known(fresh):
    """Rule: no orjson installed: False, without parsing anything."""
    fresh(None)
    assert jsonfmt._orjson_depth_limit_is_known() is False


def test_the_verdict_is_taken_once_per_process(fresh):
    """Rule: the first verdict is kept; later calls do not probe again, even when orjson changed."""
    first = FakeOrjson()
    fresh(first)
    assert jsonfmt._orjson_depth_limit_is_known() is True
    later = FakeOrjson(arrays=3)
    fresh(later)
    assert jsonfmt._orjson_depth_limit_is_known() is True
    assert later.seen == [] and len(first.seen) == 4
