"""The model-context rules of hermes-webui one by one (``api/models.py``).

``_recovered_model_context_projection`` / ``_content_has_reasoning_only_parts`` (which rows the
model sees), ``_append_recovered_turn_to_context`` / ``_append_recovered_context_projection``
(seeding and dedupe), ``_message_matches_pending_checkpoint`` and
``_latest_user_matches_pending_text``. Each expected value below is what hermes' function
returns on the same input (checked once by calling hermes' functions in a child process).
"""

from __future__ import annotations

import pytest

from inspector.repair.model_context import (
    append_to_context,
    checkpoint_match,
    context_projection,
    latest_user_text_matches,
    text_match,
)

THINK = {"type": "reasoning", "reasoning": "think"}


@pytest.mark.parametrize(
    ("content", "seen"),
    [
        (5, True),  # not a list: never "reasoning only"; "5" is text
        ([{"type": "text", "text": " "}], True),  # no reasoning part: not reasoning-only; str(list) is text
        ([" ", THINK], False),  # blank plain parts are skipped: reasoning only
        (["text", THINK], True),  # a plain part with text: not reasoning only
        ([], False),  # nothing at all
        ("  ", False),  # blank text
        ([None, THINK], False),  # a null plain part is blank too
        ([{"type": "thinking", "thinking": "hmm"}], False),  # "thinking" parts are reasoning
        ([{"type": "Thinking", "thinking": "x"}], False),  # the type is compared lower-cased
        ([{"type": "reasoning", "text": "t"}], False),  # a reasoning part's text may sit under "text"
        ([{"type": "reasoning", "reasoning": ""}], True),  # an empty reasoning part is no reasoning
        ([{"x": 1}, THINK], True),  # a part without a type ends the reasoning-only check
        ([THINK, {"type": "text", "text": "answer"}], True),  # text after the reasoning counts
        ([{"type": "text", "text": " "}, THINK], False),  # a blank text part does not
        ([{"type": "text", "content": "answer"}, THINK], True),  # a text part's text may sit under "content"
        ([{"type": "text"}, THINK], False),  # a text part without any text does not count
    ],
    ids=[
        "int",
        "blank-text-part",
        "blank-plain-part-and-reasoning",
        "plain-text-and-reasoning",
        "empty-list",
        "blank",
        "null-part-and-reasoning",
        "thinking",
        "thinking-capitalised",
        "reasoning-under-text",
        "empty-reasoning",
        "untyped-part",
        "reasoning-then-text",
        "blank-text-then-reasoning",
        "text-under-content",
        "text-part-without-text",
    ],
)
def test_which_assistant_rows_the_model_sees(content, seen: bool) -> None:
    row = {"role": "assistant", "content": content}
    assert context_projection(row) == (row if seen else None)


def test_a_missing_context_is_created_and_seeded_from_the_messages() -> None:
    session = {"messages": [{"role": "user", "content": "a"}]}
    append_to_context(session, {"role": "assistant", "content": "b"})
    assert session["context_messages"] == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]


def test_a_row_without_text_is_never_deduplicated() -> None:
    """Only rows with text are compared; a tool-call row is appended even after its twin."""
    calls = {"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]}
    session = {"messages": [], "context_messages": [dict(calls)]}
    append_to_context(session, dict(calls))
    assert session["context_messages"] == [calls, calls]


def test_the_checkpoint_compares_the_source_of_both_sides() -> None:
    row = {"role": "user", "content": "hi", "timestamp": 5, "_source": "cli"}
    assert checkpoint_match(row, "hi", 5, "cli", None) is True
    assert checkpoint_match(row, "hi", 5, None, None) is False


@pytest.mark.parametrize(
    ("messages", "pending"),
    [
        ([{"role": "user", "content": ""}], ""),  # no pending text
        ("x", "x"),  # not a list
        (
            [{"role": "user", "content": "hi"}, {"role": "user", "content": "other"}],
            "hi",
        ),  # only the newest user row
        ([{"role": "assistant", "content": "hi"}], "hi"),  # no user row at all
    ],
)
def test_latest_user_text_match_is_false(messages, pending) -> None:
    assert latest_user_text_matches(messages, pending) is False


def test_latest_user_text_match_looks_past_other_rows() -> None:
    messages = [{"role": "user", "content": " hi "}, {"role": "assistant", "content": "answer"}]
    assert latest_user_text_matches(messages, "hi") is True


def test_text_match_is_for_user_rows_only() -> None:
    assert text_match({"role": "assistant", "content": "hi"}, "hi") is False
    assert text_match("hi", "hi") is False
