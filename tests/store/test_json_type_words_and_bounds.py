"""Small rules of the store found by mutation testing (tests/MUTATION.md, fourth session): the words
for a JSON value's type in the raw journal view, the bound of an orphan backup's messages (hermes'
``_msg_count(bak) < 0``) and of a run event's ``seq`` (hermes' ownership test). Written by hand."""

from __future__ import annotations

import json

import pytest

from inspector.store.backup import orphan_restore_blocker
from inspector.store.journal import event_owns_run
from inspector.store.journal_raw import _json_type


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (None, "null"),
        (True, "a boolean"),
        (False, "a boolean"),
        (0, "a number"),
        (2.5, "a number"),
        ("x", "a string"),
        ([1], "an array"),
        ({"a": 1}, "an object"),
    ],
)
def test_each_json_type_has_its_words(value, words):
    """Rule: a journal line or field of the wrong type is named by JSON's own type names."""
    assert _json_type(value) == words


def test_an_orphan_backup_with_no_messages_is_still_restored(tmp_path):
    """Rule: hermes skips an orphan ``.bak`` only when its message count is below 0 (unreadable); an
    empty transcript (0 messages) is recreated like any other (no tombstone, no state.db)."""
    (tmp_path / "s1.json.bak").write_text(json.dumps({"session_id": "s1", "messages": []}))
    assert orphan_restore_blocker(tmp_path, "s1", None) is None
    (tmp_path / "s2.json.bak").write_text(json.dumps({"session_id": "s2"}))
    assert orphan_restore_blocker(tmp_path, "s2", None) == (
        "s2.json.bak is unreadable (not JSON, not an object, or no messages list)"
    )


@pytest.mark.parametrize("seq", [0, -1])
def test_a_run_event_with_a_seq_below_one_is_owned_by_no_run(seq):
    """Rule: ``seq`` must be an integer of at least 1, whatever the other fields say."""
    event = {"seq": seq, "session_id": "s", "run_id": "r", "event_id": f"r:{seq}"}
    assert event_owns_run(event, "s", "r") is False
    assert event_owns_run({**event, "seq": 1, "event_id": "r:1"}, "s", "r") is True
