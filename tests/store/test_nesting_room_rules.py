"""``scan._nesting_room`` remembers the room it found under each recursion limit and tries it (and the
levels beside it) first. Whatever it remembers, its answer is the deepest nesting that decodes, as
the search from nothing finds it: pinned on a decoder whose room is known exactly (msgspec's own
room moves by a level from call to call on 3.11, so against it only within that level)."""

from __future__ import annotations

import sys

import pytest

from inspector.store import scan

pytestmark = pytest.mark.skipif(scan._msgspec is None, reason="no msgspec: no quick pass")


class _Probe:
    """A decoder with a room of exactly ``room(limit)`` levels under each recursion limit; counts
    its probes (input: ``depth`` "[" then as many "]")."""

    def __init__(self, room) -> None:
        self.room = room
        self.probes: list[int] = []

    def decode(self, data: bytes) -> None:
        depth = len(data) // 2
        assert depth >= 1 and data == b"[" * depth + b"]" * depth
        self.probes.append(depth)
        if depth > self.room(sys.getrecursionlimit()):
            raise RecursionError("maximum recursion depth exceeded")


def _fake(monkeypatch, room) -> _Probe:
    probe = _Probe(room)
    monkeypatch.setattr(scan, "_NESTING_PROBE", probe)
    monkeypatch.setattr(scan, "_ROOMS", {})
    return probe


@pytest.mark.parametrize("remembered", [None, 0, 1, 2, 499, 500, 501, 502, 498, 540, 5, scan._NESTING_CAP])
def test_the_room_is_the_searched_one_whatever_was_remembered(monkeypatch, remembered):
    probe = _fake(monkeypatch, lambda limit: 500)
    limit = sys.getrecursionlimit()
    if remembered is not None:
        scan._ROOMS[limit] = remembered
    assert scan._nesting_room() == 500
    assert scan._ROOMS == {limit: 500}  # remembered for the next call
    if remembered in (499, 500, 501):  # the room, or a level beside it: a few probes, no search
        assert len(probe.probes) <= 4
    probe.probes.clear()
    assert scan._nesting_room() == 500
    assert probe.probes == [500, 501]


def test_a_room_of_one_level_and_of_none(monkeypatch):
    probe = _fake(monkeypatch, lambda limit: 1)
    assert scan._nesting_room() == 1
    probe.probes.clear()
    assert scan._nesting_room() == 1  # remembered: two probes (the level below, 0, is never probed)
    assert probe.probes == [1, 2]
    _fake(monkeypatch, lambda limit: 0)
    scan._ROOMS[sys.getrecursionlimit()] = 1
    assert scan._nesting_room() == 0


def test_a_room_past_the_cap_is_the_cap(monkeypatch):
    probe = _fake(monkeypatch, lambda limit: 10**6)
    assert scan._nesting_room() == scan._NESTING_CAP
    for remembered in (scan._NESTING_CAP - 2, scan._NESTING_CAP - 1, scan._NESTING_CAP):
        scan._ROOMS[sys.getrecursionlimit()] = remembered  # its neighbours all decode: searched
        assert scan._nesting_room() == scan._NESTING_CAP
    assert max(probe.probes) == scan._NESTING_CAP  # never a probe deeper than the cap


def test_each_recursion_limit_has_its_own_room(monkeypatch):
    probe = _fake(monkeypatch, lambda limit: limit - 40)
    limit = sys.getrecursionlimit()
    assert scan._nesting_room() == limit - 40
    sys.setrecursionlimit(limit - 300)
    try:
        assert scan._nesting_room() == limit - 340
        probe.probes.clear()
        assert scan._nesting_room() == limit - 340
        assert probe.probes == [limit - 340, limit - 339]
    finally:
        sys.setrecursionlimit(limit)
    assert scan._ROOMS == {limit: limit - 40, limit - 300: limit - 340}


def _searched() -> int:
    """msgspec's room, found here by the search from nothing (in this frame, as the function's own)."""
    decoder = scan._NESTING_PROBE
    low, high = 0, 1 << 14
    while low < high:
        mid = (low + high + 1) // 2
        try:
            decoder.decode(b"[" * mid + b"]" * mid)
            low = mid
        except RecursionError:
            high = mid - 1
    return low


def _at_depth(n: int, fn):
    """``fn()`` called ``n`` frames further down."""
    return fn() if n == 0 else _at_depth(n - 1, fn)


def test_msgspecs_room_follows_the_caller_up_and_down_the_stack(monkeypatch):
    """Within a few levels: msgspec's room moves by a level from call to call on 3.11, and by more
    under a tracer (coverage, mutmut's statistics run)."""
    monkeypatch.setattr(scan, "_ROOMS", {})
    rooms = []
    for n in (0, 1, 2, 30, 3, 100, 99, 0, 250):
        room = _at_depth(n, scan._nesting_room)
        assert abs(room - _at_depth(n, _searched)) <= 3, n
        rooms.append(room)
    assert abs((rooms[0] - rooms[3]) - 30) <= 6 and abs((rooms[0] - rooms[8]) - 250) <= 6
