"""The light parse's depth check (``save._light_depth_is_safe``) and its binary search
(``save._deepest``).

Rules pinned (see the docstrings in ``inspector/repair/save.py``):

* ``_deepest(parses)`` is the largest n in [0, 20 000] for which ``parses(n)`` holds, for a
  ``parses`` that holds up to some n;
* the light decoder is used only when it gives up at least 8 levels (``_LIGHT_MARGIN``) before
  the stdlib does, both for a value it keeps (``title``) and for one it skips (``tool_calls``),
  each probed as a document wrapped in 16 arrays (``_LIGHT_WRAP``) like a sidecar;
* a stdlib that parses every probe (no limit below 20 000 levels) makes the light parse unusable.

The decoder here stands in for msgspec's typed decoder: it reads the document as JSON, refuses
anything not shaped as 16 one-item arrays around one object (as the typed decoder does), and gives
up beyond a nesting limit set by the test, one for a kept key and one for a skipped key. The
stdlib is the real ``json.loads``, made to give up beyond a limit set by the test (or never), so
each probe stays small.
"""

from __future__ import annotations

import json

import msgspec
import pytest

from inspector.repair import save

KEPT_KEYS = {"title", "session_id", "workspace", "model"}  # some keys an index row takes


def _depth(value) -> int:
    """Levels of arrays nested in ``value`` (``[]`` is 1, ``[[]]`` is 2)."""
    depth = 0
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    return depth


class FakeDecoder:
    """msgspec's typed decoder of a sidecar wrapped in 16 arrays, with given depth limits."""

    def __init__(self, kept: int, skipped: int) -> None:
        self.kept, self.skipped = kept, skipped
        self.docs: list[bytes] = []

    def decode(self, doc: bytes):
        self.docs.append(doc)
        try:
            obj = json.loads(doc)
        except ValueError as exc:
            raise msgspec.DecodeError("invalid JSON") from exc
        inner = obj
        for _ in range(16):
            if not (isinstance(inner, list) and len(inner) == 1):
                raise msgspec.DecodeError("Expected `array` of one item")
            (inner,) = inner
        if not isinstance(inner, dict):
            raise msgspec.DecodeError("Expected `object`")
        for key, value in inner.items():
            limit = self.kept if key in KEPT_KEYS else self.skipped
            if _depth(value) > limit:
                raise msgspec.DecodeError("JSON is too deeply nested")
        return obj


class FakeJson:
    """The stdlib's ``json``, giving up (RecursionError) beyond ``limit`` levels of arrays."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit

    def loads(self, text: str):
        # Nesting is counted before parsing: the real parse of 20 000 levels would itself give up.
        if self.limit is not None and text.count("[") > self.limit:
            raise RecursionError("maximum recursion depth exceeded")
        return json.loads(text) if self.limit is not None else {}


def _safe(monkeypatch, stdlib: int | None, kept: int, skipped: int) -> bool:
    monkeypatch.setattr(save, "json", FakeJson(stdlib))
    return save._light_depth_is_safe(FakeDecoder(kept, skipped))


# --- _deepest -----------------------------------------------------------------------------------


@pytest.mark.parametrize("top", [0, 1, 2, 3, 5, 7, 100, 999, 10_000, 19_998, 19_999, 20_000])
def test_deepest_is_the_largest_n_that_parses(top: int) -> None:
    assert save._deepest(lambda n: n <= top) == top


def test_deepest_never_probes_beyond_twenty_thousand() -> None:
    probed: list[int] = []
    assert save._deepest(lambda n: probed.append(n) or True) == 20_000
    assert max(probed) == 20_000 and min(probed) >= 1


# --- _light_depth_is_safe -----------------------------------------------------------------------


def test_a_decoder_well_below_the_stdlib_is_safe(monkeypatch) -> None:
    assert _safe(monkeypatch, stdlib=100, kept=50, skipped=60) is True


def test_exactly_the_margin_below_the_stdlib_is_safe_for_a_kept_value(monkeypatch) -> None:
    # 92 + 8 <= 100: just safe.
    assert _safe(monkeypatch, stdlib=100, kept=92, skipped=10) is True


def test_exactly_the_margin_below_the_stdlib_is_safe_for_a_skipped_value(monkeypatch) -> None:
    assert _safe(monkeypatch, stdlib=100, kept=10, skipped=92) is True


def test_a_kept_value_parsed_within_the_margin_is_unsafe(monkeypatch) -> None:
    # 93 + 8 > 100: the light parse could accept what the stdlib refuses.
    assert _safe(monkeypatch, stdlib=100, kept=93, skipped=10) is False


def test_a_skipped_value_parsed_within_the_margin_is_unsafe(monkeypatch) -> None:
    assert _safe(monkeypatch, stdlib=100, kept=10, skipped=93) is False


def test_a_decoder_as_deep_as_the_stdlib_is_unsafe_for_either_kind_of_value(monkeypatch) -> None:
    assert _safe(monkeypatch, stdlib=100, kept=100, skipped=10) is False
    assert _safe(monkeypatch, stdlib=100, kept=10, skipped=100) is False


def test_a_stdlib_without_a_limit_below_the_probe_makes_the_light_parse_unusable(monkeypatch) -> None:
    monkeypatch.setattr(save, "json", FakeJson(None))
    decoder = FakeDecoder(10, 10)
    assert save._light_depth_is_safe(decoder) is False
    assert decoder.docs == []  # decided before probing the decoder


def test_the_probes_are_sidecars_wrapped_in_sixteen_arrays_with_a_kept_and_a_skipped_key(monkeypatch) -> None:
    monkeypatch.setattr(save, "json", FakeJson(40))
    decoder = FakeDecoder(20, 25)
    assert save._light_depth_is_safe(decoder) is True
    wrap_open, wrap_close = b"[" * 16, b"]" * 16
    keys = set()
    for doc in decoder.docs:
        assert doc.startswith(wrap_open + b'{"') and doc.endswith(b"}" + wrap_close)
        inner = doc[16:-16]
        key, _, value = inner[2:-1].partition(b'": ')
        n = value.count(b"[")
        assert value == b"[" * n + b"]" * n
        keys.add(key)
    assert keys == {b"title", b"tool_calls"}
