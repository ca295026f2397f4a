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


@pytest.mark.parametrize("value", [None, "", 0, False, []])
def test_falsy_pending_attachments_become_an_empty_list(value) -> None:
    """Rule: hermes' ``pending_attachments or []``; a list with items is kept as it is."""
    data = _load(pending_attachments=value).data
    assert data["pending_attachments"] == [] and "PENDING_ATTACHMENTS" not in data
    assert _load(pending_attachments=[{"name": "a.png"}]).data["pending_attachments"] == [{"name": "a.png"}]


@pytest.mark.parametrize(
    "key, value, kind",
    [
        ("workspace", 5, "int"),
        ("created_workspace", [1], "list"),
        ("worktree_path", 3.5, "float"),
        ("worktree_repo_root", True, "bool"),
    ],
)
def test_a_path_that_is_no_string_is_refused_naming_its_key(key, value, kind) -> None:
    """Rule: hermes hands these to ``Path()``, which raises TypeError; the words name the key and the
    type (what the window and ``show`` print for a sidecar hermes cannot load)."""
    with pytest.raises(TypeError) as info:
        _load(**{key: value})
    assert str(info.value) == f"{key}: expected str, bytes or os.PathLike object, not {kind}"


@pytest.mark.parametrize(
    "value, expected",
    [({"turn-1": {"scene": "x"}}, {"turn-1": {"scene": "x"}}), ([1], {}), (None, {}), ("s", {})],
)
def test_anchor_activity_scenes_kept_when_a_dict(value, expected) -> None:
    """Rule: a dict of scenes is kept; anything else is an empty dict (hermes' isinstance check)."""
    assert _load(anchor_activity_scenes=value).data["anchor_activity_scenes"] == expected


@pytest.mark.parametrize("value, expected", [(0, None), (-3, None), (5, 5), ("7", 7), (None, None)])
def test_the_context_tokens_estimate_is_kept_only_when_positive(value, expected) -> None:
    data = _load(post_compression_context_tokens_estimate=value).data
    assert data["post_compression_context_tokens_estimate"] == expected
