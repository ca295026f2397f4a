"""A sidecar change message by message (issue 16, "a preview people can read")."""

from __future__ import annotations

import json

from inspector.message_diff import ADDED, CHANGED, REMOVED, diff_messages


def _chat(*messages) -> bytes:
    return json.dumps({"session_id": "s", "messages": list(messages)}).encode()


U1 = {"role": "user", "content": "Which PRs touch models.py?"}
MARK = {
    "role": "assistant",
    "content": "**Response interrupted.**",
    "_error": True,
    "_journal_retry_attempts": 0,
}
A1 = {"role": "assistant", "content": "Two PRs do."}


def test_a_recovery_reads_as_one_added_answer_and_one_changed_marker():
    """Rule: messages are aligned by role and text; a message whose other keys change is "changed"
    (naming the keys), new ones are "added" at their place, nothing else is listed."""
    after_mark = {"role": "assistant", "content": "**Response interrupted.**", "_error": True}
    d = diff_messages(_chat(U1, MARK), _chat(U1, A1, after_mark))
    assert [(c.kind, c.before_index, c.after_index, c.role) for c in d.changes] == [
        (ADDED, None, 1, "assistant"),
        (CHANGED, 1, 2, "assistant"),
    ]
    assert d.changes[0].after == "Two PRs do." and d.changes[1].fields == ("_journal_retry_attempts",)
    assert d.summary() == "Messages: 1 added, 1 changed."


def test_reworded_text_is_a_change_and_other_rows_are_removed_or_added():
    """Rule: in a replaced stretch, a message of the same role with alike text (the re-worded marker)
    is "changed"; unlike ones are "removed" and "added"."""
    cut = {"role": "assistant", "content": "The live response stream stopped. Recovering the output."}
    reworded = {"role": "assistant", "content": "The live response stream stopped. The output was recovered."}
    d = diff_messages(_chat(U1, cut, A1), _chat(U1, reworded))
    assert [(c.kind, c.before, c.after) for c in d.changes] == [
        (REMOVED, "Two PRs do.", ""),
        (CHANGED, cut["content"], reworded["content"]),
    ]
    assert d.counts() == {ADDED: 0, CHANGED: 1, REMOVED: 1}
    d = diff_messages(_chat(U1, MARK), _chat(U1, {"role": "assistant", "content": "Recovered."}))
    assert [c.kind for c in d.changes] == [REMOVED, ADDED]


def test_a_new_file_is_all_added_and_an_unreadable_one_is_said():
    assert [c.kind for c in diff_messages(None, _chat(U1, A1)).changes] == [ADDED, ADDED]
    d = diff_messages(b'{"messages": [', _chat(U1))
    assert [c.kind for c in d.changes] == [ADDED] and d.note.startswith("the file before could not be read")
    assert diff_messages(_chat(U1), b"[1, 2]") is None  # not a chat: the raw diff only
    assert diff_messages(_chat(U1), _chat(U1)).summary() == "No message is added, changed or removed."
