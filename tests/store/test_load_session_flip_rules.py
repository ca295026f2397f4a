"""``sidecar.load_session`` rule by rule where the older kills did not hold when run again with the fast
tests only (tests/MUTATION.md, fourteenth session): hermes' ``Session(**data)`` refusing a ``self`` key
in its own words, and ``model_explicit_pick_signature`` made None when falsy. Expected values written out."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.store.sidecar import load_session


def _load(**fields):
    return load_session({"session_id": "s1", "messages": [], **fields}, now=5.0, cwd=Path("/tmp"))


@pytest.mark.parametrize("value", [None, 1, "x"])
def test_a_self_key_is_refused_in_hermes_own_words(value) -> None:
    """Rule: any ``self`` key makes hermes' ``Session(**data)`` raise TypeError with Python's message."""
    with pytest.raises(TypeError) as info:
        _load(self=value)
    assert str(info.value) == "Session.__init__() got multiple values for argument 'self'"


def test_other_spellings_of_self_are_ordinary_keys() -> None:
    """Rule: ``SELF`` and ``selfish`` are keys hermes does not know (dropped at the save), not refused."""
    loaded = _load(SELF=1, selfish=2)
    assert sorted(loaded.dropped_keys) == ["SELF", "selfish"]


@pytest.mark.parametrize(
    "value, expected",
    [("sig-1", "sig-1"), ("", None), (0, None), (False, None), (None, None), ([], None), (["a"], ["a"])],
)
def test_model_explicit_pick_signature_is_none_when_falsy(value, expected) -> None:
    """Rule: ``data.get("model_explicit_pick_signature") or None``: a truthy value kept as it is."""
    data = _load(model_explicit_pick_signature=value).data
    assert data["model_explicit_pick_signature"] == expected
    assert "MODEL_EXPLICIT_PICK_SIGNATURE" not in data


def test_a_missing_signature_is_none() -> None:
    assert _load().data["model_explicit_pick_signature"] is None
