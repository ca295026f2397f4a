"""Journal materialization (hermes ``api/models.py: _append_journaled_partial_output``, spec
run-journal-and-promotion §3.9), the rules of its anchors, interim text and dedupe pass one by one,
with the expected transcript written out by hand from hermes' closures (``_ensure_anchor``,
``_append_interim``, ``_content_match_belongs_to_current_turn``, the reasoning-only match)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from inspector.repair.journal_read import JournalRead
from inspector.repair.journal_recovery import MaterializeReport, append_journaled_partial_output

S = "run_jr"
NOW = 1_800_000_000.0
TAG = {"_recovered_from_run_journal": True, "_recovered_stream_id": S}
FLUSH = {"event": "interim_assistant", "payload": {"already_streamed": True}}  # flushes, adds nothing


def ev(event_name: str, created_at: float | None = None, **payload) -> dict:
    event = {"event": event_name, "payload": payload}
    if created_at is not None:
        event["created_at"] = created_at
    return event


def run(messages: list, events: list, *, dedupe: bool = True, **fields) -> tuple[dict, MaterializeReport]:
    session = {"messages": copy.deepcopy(messages), "tool_calls": [], **copy.deepcopy(fields)}
    journal = JournalRead(S, Path("j.jsonl"), True, 1, events, [], None, [])
    report = append_journaled_partial_output(session, S, journal, dedupe=dedupe, now=NOW)
    return session, report


def _row(content: str, ts: float = NOW, **extra) -> dict:
    return {"role": "assistant", "content": content, "timestamp": int(ts), **TAG, **extra}


# ---------------------------------------------------------------- anchors of tool cards


def test_a_tool_without_text_gets_a_new_empty_anchor_row() -> None:
    session, report = run([], [ev("tool", 50.0, name="terminal", preview="ls")])
    assert session["messages"] == [_row("", 50.0)]
    assert report.anchors_added == [0] and report.anchor_reused is False
    assert session["tool_calls"][0]["assistant_msg_idx"] == 0


def test_an_empty_anchor_of_this_stream_is_reused() -> None:
    anchor = _row("", 40.0)
    session, report = run([{"role": "user", "content": "q"}, anchor], [ev("tool", 50.0, name="t")])
    assert session["messages"] == [{"role": "user", "content": "q"}, anchor]
    assert report.anchor_reused is True and report.anchors_added == []
    assert session["tool_calls"][0]["assistant_msg_idx"] == 1


def test_a_recovered_row_with_text_is_no_anchor() -> None:
    said = _row("earlier text", 40.0)
    session, report = run([said], [ev("tool", 50.0, name="t")])
    assert session["messages"] == [said, _row("", 50.0)]
    assert report.anchors_added == [1] and report.anchor_reused is False


def test_an_anchor_alone_is_recovered_output_even_when_its_card_is_already_there() -> None:
    """The card is skipped by the dedupe, but the new anchor row is still hermes' ``True``."""
    card = {"name": "terminal", "preview": "ls"}
    session, report = run([], [ev("tool", 50.0, name="terminal", preview="ls")], tool_calls=[card])
    assert report.cards_skipped == ["terminal"] and session["tool_calls"] == [card]
    assert session["messages"] == [_row("", 50.0)]
    assert report.recovered is True


# ---------------------------------------------------------------- interim text


def test_an_interim_without_text_adds_nothing() -> None:
    session, report = run([], [ev("interim_assistant", 50.0)], dedupe=False)
    assert session["messages"] == [] and report.recovered is False


def test_an_interim_row_is_dated_by_its_event() -> None:
    session, _ = run([], [ev("interim_assistant", 50.0, text=" working ")], dedupe=False)
    assert session["messages"] == [_row("working", 50.0)]


@pytest.mark.parametrize(
    ("token", "content"),
    [("a\n", "a\nb"), ("a ", "a b"), ("a", "a\n\nb")],
    ids=["after-newline", "after-space", "after-text"],
)
def test_an_interim_after_tokens_is_joined_by_a_blank_line_unless_they_end_in_space(token, content) -> None:
    session, _ = run(
        [], [ev("token", 50.0, text=token), ev("interim_assistant", 60.0, text="b")], dedupe=False
    )
    assert session["messages"] == [_row(content, 50.0)]


# ---------------------------------------------------------------- dedupe: matched text


def test_text_already_in_the_transcript_is_matched_once_then_appended() -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "hello there"}]
    events = [ev("token", text="hello there"), FLUSH, ev("token", 70.0, text="hello there")]
    session, report = run(messages, events)
    assert report.rows_matched == [1]
    assert session["messages"] == [*messages, _row("hello there", 70.0)]


def test_a_match_at_the_first_row_joins_the_model_context() -> None:
    system = {"role": "system", "content": "s"}
    session, report = run(
        [{"role": "assistant", "content": "hello there"}],
        [ev("token", text="hello there")],
        context_messages=[system],
    )
    assert report.rows_matched == [0] and report.rows_added == []
    assert session["context_messages"] == [system, {"role": "assistant", "content": "hello there"}]


def test_a_match_before_the_newest_user_row_is_an_earlier_turn() -> None:
    messages = [{"role": "assistant", "content": "hello there"}, {"role": "user", "content": "q"}]
    _, report = run(messages, [ev("token", text="hello there")])
    assert report.earlier_turn_matches == [(0, "hello there")]


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "assistant", "content": "hello there"}],
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "hello there"},
            {"role": "assistant", "content": "z"},
        ],
    ],
    ids=["no-user-row", "after-the-user-row"],
)
def test_a_match_after_the_newest_user_row_or_without_one_is_this_turn(messages) -> None:
    _, report = run(messages, [ev("token", text="hello there")])
    assert report.rows_matched == [messages.index({"role": "assistant", "content": "hello there"})]
    assert report.earlier_turn_matches == []


# ---------------------------------------------------------------- dedupe: text with reasoning


def _with_reasoning(messages: list, **fields) -> tuple[dict, MaterializeReport]:
    return run(messages, [ev("reasoning", text="why"), ev("token", 70.0, text="answer text")], **fields)


def _appended(session: dict, messages: list) -> bool:
    return session["messages"] == [*messages, _row("answer text", NOW, reasoning="why")]


Q = {"role": "user", "content": "q", "timestamp": 100}
ANSWER = {"role": "assistant", "content": "answer text"}
PENDING = {"pending_user_message": "q", "pending_started_at": 100}


def test_text_with_reasoning_matches_a_row_of_the_current_turn_and_gets_the_reasoning() -> None:
    session, report = _with_reasoning([Q, ANSWER])
    assert report.rows_matched == [1] and report.reasoning_attached == [1]
    assert session["messages"] == [Q, {**ANSWER, "reasoning": "why"}]


def test_text_with_reasoning_does_not_match_a_row_without_a_user_row_before_it() -> None:
    session, report = _with_reasoning([ANSWER])
    assert report.rows_matched == [] and _appended(session, [ANSWER])


def test_a_user_row_after_the_match_makes_it_another_turn() -> None:
    messages = [Q, ANSWER, {"role": "assistant", "content": "z"}, {"role": "user", "content": "later"}]
    session, _ = _with_reasoning(messages)
    assert _appended(session, messages)


def test_a_recovered_user_row_after_the_match_is_another_turn_without_a_pending_prompt() -> None:
    messages = [Q, ANSWER, {"role": "user", "content": "later", "_recovered": True}]
    session, _ = _with_reasoning(messages)
    assert _appended(session, messages)


def test_with_a_pending_prompt_the_owner_must_be_its_checkpoint() -> None:
    """The user row before the match must be the pending prompt itself (text and time)."""
    matched, _ = _with_reasoning([Q, {"role": "assistant", "content": "thinking aloud"}, ANSWER], **PENDING)
    assert matched["messages"][2] == {**ANSWER, "reasoning": "why"}
    other = [{**Q, "timestamp": 99}, ANSWER]
    session, _ = _with_reasoning(other, **PENDING)
    assert _appended(session, other)


def test_with_a_pending_prompt_only_its_recovered_row_may_follow_the_match() -> None:
    recovered = {**Q, "_recovered": True}
    ok = [Q, ANSWER, recovered]
    session, report = _with_reasoning(ok, **PENDING)
    assert report.rows_matched == [1]
    for later in ({"role": "user", "content": "other"}, Q):  # another prompt, or not recovered
        messages = [Q, ANSWER, later]
        session, _ = _with_reasoning(messages, **PENDING)
        assert _appended(session, messages)
    messages = [Q, ANSWER, recovered, {"role": "user", "content": "other"}]
    session, _ = _with_reasoning(messages, **PENDING)
    assert _appended(session, messages)


def test_the_pending_prompt_recovered_after_an_unowned_match_does_not_own_it() -> None:
    messages = [ANSWER, {**Q, "_recovered": True}]
    session, _ = _with_reasoning(messages, **PENDING)
    assert _appended(session, messages)


@pytest.mark.parametrize(
    ("fields", "owner"),
    [
        ({"pending_user_source": "process_wakeup"}, {"_source": "process_wakeup"}),
        ({"pending_attachments": [{"name": "a.png"}]}, {"attachments": [{"name": "a.png"}]}),
    ],
    ids=["source", "attachments"],
)
def test_the_checkpoint_compares_source_and_attachments(fields, owner) -> None:
    session, report = _with_reasoning([{**Q, **owner}, ANSWER], **PENDING, **fields)
    assert report.rows_matched == [1]
    plain = [Q, ANSWER]
    session, _ = _with_reasoning(plain, **PENDING, **fields)
    assert _appended(session, plain)


# ---------------------------------------------------------------- dedupe: reasoning alone


def test_reasoning_alone_matches_an_earlier_reasoning_row_of_this_stream_once() -> None:
    thought = _row("", 40.0, reasoning="why")
    events = [ev("reasoning", text="why"), FLUSH, ev("reasoning", 70.0, text="why")]
    session, report = run([thought, dict(thought)], events)
    assert report.reasoning_rows_matched == [0, 1] and report.rows_added == []
    session, report = run([thought], events)
    assert report.reasoning_rows_matched == [0]
    assert session["messages"] == [thought, _row("", 70.0, reasoning="why")]


@pytest.mark.parametrize("reasoning", ["why", "XXXX"])
def test_reasoning_alone_never_matches_a_row_with_text_or_without_reasoning(reasoning) -> None:
    """A recovered row with text is no reasoning-only row; an empty anchor holds no reasoning,
    whatever the journal's reasoning says."""
    said = _row("text", 40.0, reasoning=reasoning)
    anchor = _row("", 40.0)
    for row in (said, anchor):
        session, report = run([row], [ev("reasoning", 70.0, text=reasoning)])
        assert report.reasoning_rows_matched == []
        assert session["messages"] == [row, _row("", 70.0, reasoning=reasoning)]
