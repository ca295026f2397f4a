"""Which row is a context-compaction marker (``backup.is_compaction_marker``), part by part.

Rules found by mutation testing (tests/MUTATION.md, third session), written from hermes'
``api/compression_anchor.py`` (``is_context_compression_marker``: the text of the ``text``,
``input_text`` and ``output_text`` parts, each part's ``text`` or else its ``content``, joined with
newlines and stripped) and ``api/models.py`` (``_context_messages_include_compression_marker``: of
those, only a row whose ``_message_content_text`` (string parts and every part's string ``text``,
joined with nothing) starts with ``[context compaction`` or ``context compaction`` counts).
"""

from __future__ import annotations

import pytest

from inspector.store.backup import is_compaction_marker


def user(content) -> dict:
    return {"role": "user", "content": content}


@pytest.mark.parametrize(
    "first_typed_text",
    [
        "[Session Arc Summary] the story so far",
        "[Your active task list was preserved across context compression] 1.",
    ],
)
def test_an_arc_summary_or_task_list_part_is_a_marker_when_the_plain_text_is_a_compaction(first_typed_text):
    """Rule: a row whose typed parts begin with a session arc summary or a preserved task list passes
    hermes' marker test, and counts when its plain text (string parts first) begins with a compaction."""
    row = user(["[context compaction] earlier turns", {"type": "text", "text": first_typed_text}])
    assert is_compaction_marker(row)
    assert not is_compaction_marker(user([{"type": "text", "text": first_typed_text}]))  # plain text is not


def test_typed_parts_are_joined_with_newlines_then_stripped():
    """Rule: an empty first text part adds a leading newline, which the strip removes."""
    row = user([{"type": "text", "text": ""}, {"type": "text", "text": "[context compaction] y"}])
    assert is_compaction_marker(row)


def test_a_typed_part_without_text_gives_its_content_or_nothing():
    """Rule: a part's ``text`` or else its ``content`` or else nothing (not a placeholder)."""
    with_content = user(["[context compaction]", {"type": "text", "content": "[context compaction] z"}])
    assert is_compaction_marker(with_content)
    with_nothing = user([{"type": "output_text"}, {"type": "text", "text": "[context compaction] w"}])
    assert is_compaction_marker(with_nothing)


def test_only_text_part_types_count_for_the_typed_text():
    """Rule: string parts and parts of other types (an image) are not in the typed text."""
    row = user([{"type": "image_url", "text": "[context compaction]"}, {"type": "text", "text": "hello"}])
    assert not is_compaction_marker(row)
    row = user(["a string part", {"type": "input_text", "text": "[context compaction] x"}])
    assert not is_compaction_marker(row)  # the plain text begins with the string part


def test_plain_text_joins_string_parts_and_string_texts_with_nothing():
    """Rule: the plain text is the string parts and every part's string ``text`` run together;
    a part with no string text is skipped, not an error."""
    row = user(["", {"type": "text", "text": "[context compaction] y"}, {"type": "image_url"}, {"text": 3}])
    assert is_compaction_marker(row)
    row = user([{"type": "text", "text": "[context"}, " compaction] x"])
    assert not is_compaction_marker(row)  # typed text "[context" is not a marker
