"""Visible output of a run journal (hermes ``api/models.py: _run_journal_has_visible_output``),
rule by rule, each expected value written out by hand from hermes' loop (and checked against that
function, fed the same events in a child process, while writing them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.repair.journal_read import JournalRead, journal_has_visible_output


def _journal(events: list[dict]) -> JournalRead:
    return JournalRead("s1", Path("j.jsonl"), True, 1, events, [], None, [])


def _visible(events: list[dict]) -> bool:
    return journal_has_visible_output(_journal(events))


def _one(event: dict) -> bool:
    return _visible([event])


def test_no_events_is_no_output() -> None:
    assert _visible([]) is False


def test_events_that_show_nothing_are_no_output() -> None:
    """``done``, a marker, a nameless event: none is visible, whatever text its payload holds."""
    assert _one({"event": "done", "payload": {"text": "finished"}}) is False
    assert _one({"event": "stream_end", "payload": {"text": "x", "already_streamed": False}}) is False
    assert _one({"payload": {"text": "no name"}}) is False
    assert _one({"event": "", "type": "", "payload": {"text": "blank names"}}) is False


def test_the_name_is_event_first_then_type() -> None:
    """``str(event.get('event') or event.get('type') or '')``: ``type`` only when ``event`` is
    missing or empty; an ``event`` that shows nothing is not saved by a visible ``type``."""
    assert _one({"type": "token", "payload": {"text": "a"}}) is True
    assert _one({"event": "", "type": "tool"}) is True
    assert _one({"event": "token", "type": "tool", "payload": {"text": ""}}) is False
    assert _one({"event": "done", "type": "tool"}) is False


def test_a_token_with_any_text_is_output_even_whitespace() -> None:
    """Quirk 6: ``str(payload.get('text') or '')`` non-empty; whitespace counts, no strip."""
    assert _one({"event": "token", "payload": {"text": "hello"}}) is True
    assert _one({"event": "token", "payload": {"text": " "}}) is True
    assert _one({"event": "token", "payload": {"text": 7}}) is True  # str(7)


def test_a_token_without_text_is_no_output() -> None:
    assert _one({"event": "token", "payload": {"text": ""}}) is False
    assert _one({"event": "token", "payload": {}}) is False
    assert _one({"event": "token", "payload": {"text": None}}) is False
    assert _one({"event": "token", "payload": {"text": 0}}) is False  # 0 or '' -> ''
    assert _one({"event": "token"}) is False


def test_a_payload_that_is_no_object_counts_as_empty() -> None:
    """``payload if isinstance(payload, dict) else {}``: a string or list payload has no text."""
    assert _one({"event": "token", "payload": "text"}) is False
    assert _one({"event": "interim_assistant", "payload": ["text"]}) is False
    assert _one({"event": "reasoning", "payload": "thinking"}) is False
    assert _one({"event": "tool", "payload": "x"}) is True


def test_a_fresh_interim_with_text_is_output() -> None:
    assert _one({"event": "interim_assistant", "payload": {"text": "working"}}) is True
    assert _one({"event": "interim_assistant", "payload": {"text": "w", "already_streamed": 0}}) is True


def test_an_interim_already_streamed_or_blank_is_no_output() -> None:
    assert _one({"event": "interim_assistant", "payload": {"text": "w", "already_streamed": True}}) is False
    assert _one({"event": "interim_assistant", "payload": {"text": " \n\t"}}) is False
    assert _one({"event": "interim_assistant", "payload": {}}) is False
    assert _one({"event": "interim_assistant", "payload": {"text": None}}) is False


def test_reasoning_text_is_text_else_reasoning_else_thinking() -> None:
    assert _one({"event": "reasoning", "payload": {"text": "t"}}) is True
    assert _one({"event": "reasoning", "payload": {"reasoning": "r"}}) is True
    assert _one({"event": "reasoning", "payload": {"thinking": "k"}}) is True
    assert _one({"event": "reasoning", "payload": {"text": "", "reasoning": None, "thinking": "k"}}) is True


def test_the_first_non_empty_reasoning_field_is_the_only_one_read() -> None:
    """``text or reasoning or thinking``, then stripped: a whitespace ``text`` hides a real
    ``reasoning``, a whitespace ``reasoning`` hides a real ``thinking``."""
    assert _one({"event": "reasoning", "payload": {"text": "  ", "reasoning": "r"}}) is False
    assert _one({"event": "reasoning", "payload": {"reasoning": "\n", "thinking": "k"}}) is False


def test_reasoning_without_text_is_no_output() -> None:
    assert _one({"event": "reasoning", "payload": {}}) is False
    assert _one({"event": "reasoning", "payload": {"text": None, "reasoning": "", "thinking": " "}}) is False
    assert _one({"event": "reasoning"}) is False


def test_reasoning_text_that_is_no_string_is_read_as_its_str() -> None:
    assert _one({"event": "reasoning", "payload": {"reasoning": 3}}) is True


def test_any_tool_event_is_output() -> None:
    assert _one({"event": "tool", "payload": {}}) is True
    assert _one({"event": "tool"}) is True
    assert _one({"type": "tool", "payload": {"name": "terminal"}}) is True


def test_names_are_case_sensitive() -> None:
    assert _one({"event": "TOKEN", "payload": {"text": "a"}}) is False
    assert _one({"event": "Tool"}) is False
    assert _one({"event": "REASONING", "payload": {"text": "r"}}) is False


class _Unread(dict):
    """An event that fails the test if the walk reads it."""

    def get(self, *args):
        raise AssertionError("read past the first visible event")


def test_one_visible_event_among_others_is_output_and_ends_the_walk() -> None:
    assert _visible(
        [{"event": "done", "payload": {"text": "x"}}, {"event": "token", "payload": {"text": "a"}}, _Unread()]
    )
    quiet = [
        {"event": "token", "payload": {"text": ""}},
        {"event": "interim_assistant", "payload": {"text": "w", "already_streamed": True}},
        {"event": "reasoning", "payload": {"text": " "}},
        {"event": "done"},
    ]
    assert _visible(quiet) is False
    assert _visible([*quiet, {"event": "tool"}]) is True


@pytest.mark.parametrize("name", ["token", "interim_assistant", "reasoning"])
def test_a_nameless_event_with_text_is_not_read_as_any_kind(name: str) -> None:
    """An event without a name is none of the visible kinds, whatever its payload."""
    payload = {"text": "x", "reasoning": "r", "thinking": "k"}
    assert _one({"payload": payload}) is False
    assert _one({"event": name, "payload": payload}) is True
