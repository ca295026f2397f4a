"""Journal materialization (``journal_recovery._Materializer``, spec run-journal-and-promotion
§3.9): the dedupe look at the transcript's rows, the dedupe switch, the model-context window and
the loop's handling of empty or odd events. Expected transcripts written out by hand."""

from __future__ import annotations

from tests.repair.test_journal_recovery_rules import NOW, TAG, _row, ev, run

USER = {"role": "user", "content": "q"}
THINK = {"role": "assistant", "content": "", "reasoning": "think", "timestamp": 5, **TAG}


# ---------------------------------------------------------------- created_at


def test_a_created_at_that_is_no_number_stamps_the_row_with_now():
    """A token whose ``created_at`` is a string starts the row at the clock's now."""
    session, _ = run([], [ev("token", "5", text="hi")])
    assert session["messages"] == [_row("hi", NOW)]


# ---------------------------------------------------------------- the dedupe look at existing rows


def test_an_error_row_with_the_same_text_is_no_match():
    """An existing ``_error`` row never holds the journaled text: a new row is added."""
    err = {"role": "assistant", "content": "hello", "_error": True}
    session, report = run([USER, err], [ev("token", text="hello")])
    assert report.rows_matched == []
    assert session["messages"] == [USER, err, _row("hello", NOW)]


def test_an_error_row_before_the_matching_row_does_not_end_the_look():
    """An ``_error`` row is passed over and an equal assistant row after it is the match."""
    err = {"role": "assistant", "content": "boom", "_error": True}
    said = {"role": "assistant", "content": "hello"}
    session, report = run([USER, err, said], [ev("token", text="hello")])
    assert report.rows_matched == [2]
    assert session["messages"] == [USER, err, said]


def test_a_user_row_before_the_matching_row_does_not_end_the_look():
    """A user row is passed over and the assistant row after it is the match."""
    said = {"role": "assistant", "content": "hello"}
    session, report = run([USER, said], [ev("token", text="hello")])
    assert report.rows_matched == [1]
    assert session["messages"] == [USER, said]


def test_an_empty_assistant_row_before_the_matching_row_does_not_end_the_look():
    """An assistant row without text is passed over and a later equal row is the match."""
    empty = {"role": "assistant", "content": ""}
    said = {"role": "assistant", "content": "hello"}
    session, report = run([USER, empty, said], [ev("token", text="hello")])
    assert report.rows_matched == [2]
    assert session["messages"] == [USER, empty, said]


def test_a_text_of_24_chars_inside_a_longer_row_is_a_match():
    """Journaled text of exactly 24 characters contained in an existing row counts as present."""
    long_row = {"role": "assistant", "content": "Intro. abcdefghijklmnopqrstuvwx and more."}
    session, report = run([USER, long_row], [ev("token", text="abcdefghijklmnopqrstuvwx")])
    assert report.rows_matched == [1]
    assert session["messages"] == [USER, long_row]


def test_a_text_of_23_chars_inside_a_longer_row_is_no_match():
    """Journaled text shorter than 24 characters must equal a row to count as present."""
    long_row = {"role": "assistant", "content": "Intro. abcdefghijklmnopqrstuvw and more."}
    session, report = run([USER, long_row], [ev("token", text="abcdefghijklmnopqrstuvw")])
    assert report.rows_matched == []
    assert session["messages"] == [USER, long_row, _row("abcdefghijklmnopqrstuvw", NOW)]


# ---------------------------------------------------------------- the dedupe switch


def test_without_dedupe_an_equal_row_is_not_claimed():
    """With dedupe off, text equal to an existing row is still added as a new row."""
    said = {"role": "assistant", "content": "hello"}
    session, report = run([USER, said], [ev("token", text="hello")], dedupe=False)
    assert report.rows_matched == []
    assert session["messages"] == [USER, said, _row("hello", NOW)]


def test_without_dedupe_a_reasoning_only_row_is_not_claimed():
    """With dedupe off, journaled reasoning equal to a recovered reasoning-only row is added again."""
    session, report = run([USER, THINK], [ev("reasoning", text="think")], dedupe=False)
    assert report.reasoning_rows_matched == []
    assert session["messages"] == [USER, THINK, _row("", NOW, reasoning="think")]


def test_reasoning_with_text_is_never_a_reasoning_only_match():
    """Reasoning that comes with text makes a new row even when a reasoning-only row holds it."""
    session, report = run([USER, THINK], [ev("reasoning", text="think"), ev("token", text="answer")])
    assert report.reasoning_rows_matched == []
    assert session["messages"] == [USER, THINK, _row("answer", NOW, reasoning="think")]


# ---------------------------------------------------------------- the model context's window


def _interims(*texts: str) -> list:
    return [ev("interim_assistant", text=t) for t in texts]


def test_a_row_equal_to_one_of_the_last_eight_context_rows_is_not_added_to_the_context():
    """After nine rows, a tenth equal to the second to last is a new transcript row but not a context row."""
    texts = [f"t{i}" for i in range(1, 10)]
    session, _ = run([USER], _interims(*texts, "t8"), context_messages=[])
    assert session["messages"] == [USER] + [_row(t, NOW) for t in texts] + [_row("t8", NOW)]
    assert session["context_messages"] == [USER] + [_row(t, NOW) for t in texts]


def test_a_row_equal_to_one_nine_rows_back_is_added_to_the_context():
    """Only the last eight context rows are looked at: a row equal to one nine back is added again."""
    texts = [f"t{i}" for i in range(1, 10)]
    session, _ = run([USER], _interims(*texts, "t1"), context_messages=[])
    assert session["context_messages"] == [USER] + [_row(t, NOW) for t in texts] + [_row("t1", NOW)]


# ---------------------------------------------------------------- tool cards


def test_a_card_of_another_run_does_not_skip_this_runs_card():
    """An equal card tagged with another stream is not this run's card: the journaled card is added."""
    other = {"name": "terminal", "preview": "ls", "_recovered_stream_id": "run_other"}
    session, report = run([], [ev("tool", 50.0, name="terminal", preview="ls")], tool_calls=[other])
    assert report.cards_skipped == []
    assert [c["tid"] for c in session["tool_calls"][1:]] == ["journal-1"]


def test_without_dedupe_an_earlier_card_of_this_run_gives_no_duplicate_warning():
    """With dedupe off, no duplicate-card warning is collected."""
    earlier = {"name": "terminal", "preview": "pwd", **TAG}
    _, report = run([], [ev("tool", 50.0, name="terminal", preview="ls")], dedupe=False, tool_calls=[earlier])
    assert report.duplicate_cards == []
    assert len(report.cards_added) == 1


# ---------------------------------------------------------------- empty events in the loop


def test_an_empty_token_does_not_end_the_walk():
    """A token without text is passed over; the tokens after it still make the row."""
    session, report = run([], [ev("token", text=""), ev("token", text="hello")])
    assert session["messages"] == [_row("hello", NOW)]
    assert report.events == 2


def test_an_empty_reasoning_event_adds_no_reasoning_and_does_not_end_the_walk():
    """A reasoning event without text adds nothing; the events after it are still read."""
    session, report = run([], [ev("reasoning"), ev("token", text="hi")])
    assert session["messages"] == [_row("hi", NOW)]
    assert report.events == 2


def test_a_row_whose_text_a_user_context_row_holds_is_still_added_after_the_window_moved():
    """Role and text are compared pairwise in the last eight context rows: a user row's text is no match
    for an assistant row, also after the window moved on by a row the pass added."""
    earlier = [{"role": "assistant", "content": f"c{i}"} for i in range(1, 8)]
    dup_user = {"role": "user", "content": "dup"}
    session, _ = run([USER], _interims("n1", "dup"), context_messages=[*earlier, dup_user])
    assert session["messages"] == [USER, _row("n1", NOW), _row("dup", NOW)]
    assert session["context_messages"] == [*earlier, dup_user, _row("n1", NOW), _row("dup", NOW)]


def test_a_reasoning_event_without_an_object_payload_does_not_end_the_walk():
    """A reasoning event whose payload is no object is passed over; the events after it still count."""
    session, report = run([], [{"event": "reasoning", "payload": "x"}, ev("token", text="hi")])
    assert session["messages"] == [_row("hi", NOW)]
    assert report.events == 2
