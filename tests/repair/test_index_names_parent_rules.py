"""The continuation check's prefilter over ``_index.json`` (``interrupted._index_may_name_parent``): it
may answer False only when no ``"parent_session_id": "<sid>"`` key stands anywhere in the bytes, so
every place ``<sid>"`` occurs is looked at, the first, the last and those between (tests/MUTATION.md,
tenth session). Expected answers written out by hand."""

from __future__ import annotations

from inspector.repair.interrupted import _index_may_name_parent


def test_a_parent_key_before_the_sessions_own_row_is_found():
    data = b'[\n  {"session_id": "c1", "parent_session_id": "p1"},\n  {"session_id": "p1"}\n]'
    assert _index_may_name_parent(data, "p1") is True


def test_a_parent_key_between_two_other_mentions_is_found():
    data = b'[{"session_id": "p1"}, {"parent_session_id": "p1"}, {"title": "p1"}]'
    assert _index_may_name_parent(data, "p1") is True


def test_a_mention_at_the_very_start_does_not_hide_a_key_after_it():
    assert _index_may_name_parent(b'p1" ... "parent_session_id": "p1"', "p1") is True


def test_mentions_that_are_no_parent_key_answer_false():
    data = b'[{"session_id": "p1"}, {"title": "p1"}, {"parent_session_id": "p10"}]'
    assert _index_may_name_parent(data, "p1") is False
