"""Gateway terminal-error recovery (hermes ``api/models.py``: ``_recoverable_unsaved_gateway_terminal_error``
and ``_materialize_unsaved_gateway_terminal_error``; spec run-journal-and-promotion §3.11), rule by rule.

Every expected value is written out by hand from hermes' two functions, and was checked against
them (fed the same journal and transcript in a child process) while writing. Two of them showed
that the inspector differed from hermes (fixed with these tests): an embedded transcript without
any user row has no current turn, so no error row; an error row whose text is only whitespace is
no error row.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from inspector.repair.gateway_error import (
    GatewayTerminalError,
    detect_gateway_terminal_error,
    materialize_gateway_terminal_error,
)
from inspector.repair.journal_read import JournalRead

SID, S = "chat_gw", "run_gw"
USER = {"role": "user", "content": "deploy it"}
ERR = {"role": "assistant", "content": "**Error:** gateway 502", "_error": True}


def _detect(embedded_messages: list) -> dict | None:
    event = {
        "seq": 1,
        "event_id": f"{S}:1",
        "run_id": S,
        "session_id": SID,
        "event": "apperror",
        "type": "apperror",
        "terminal": True,
        "payload": {
            "message": "boom",
            "session_id": SID,
            "session": {"session_id": SID, "messages": embedded_messages},
            "terminal_session_persisted": False,
        },
    }
    journal = JournalRead(S, Path("j.jsonl"), True, 1, [event], [], None, [])
    found = detect_gateway_terminal_error(SID, S, journal)
    return None if found is None else found.row


# ---------------------------------------------------------------- which embedded row is the error


def test_the_error_is_the_last_assistant_row_after_the_last_user_row() -> None:
    other = {"role": "assistant", "content": "older", "_error": True}
    assert _detect([other, USER, ERR]) == ERR
    assert _detect([USER, {**ERR, "content": "first"}, {"role": "tool", "content": "t"}, ERR]) == ERR


def test_rows_that_are_no_assistant_row_are_passed_over() -> None:
    """A tool row or a non-object after the error is not the candidate; the assistant row is."""
    assert _detect([USER, ERR, {"role": "tool", "content": "x", "_error": True}, "text"]) == ERR


def test_without_any_user_row_there_is_no_current_turn() -> None:
    """hermes: no user row, no candidate (the inspector took the last assistant row: fixed)."""
    assert _detect([ERR]) is None
    assert _detect([{"role": "system", "content": "s"}, ERR]) is None


def test_an_error_before_the_last_user_row_is_an_earlier_turns() -> None:
    assert _detect([ERR, USER]) is None
    assert _detect([USER, ERR, USER]) is None


def test_the_last_assistant_row_must_be_the_error() -> None:
    """A plain assistant row after the error hides it: only the last assistant row is looked at."""
    assert _detect([USER, ERR, {"role": "assistant", "content": "ok"}]) is None


@pytest.mark.parametrize(
    "content",
    ["", "   ", "\n\t", None, 502, ["**Error:**"]],
    ids=["empty", "spaces", "blank", "none", "int", "list"],
)
def test_an_error_row_needs_text_that_is_not_only_whitespace(content) -> None:
    """hermes ``isinstance(content, str) and content.strip()`` (whitespace was accepted: fixed)."""
    assert _detect([USER, {**ERR, "content": content}]) is None


# ---------------------------------------------------------------- where the row goes


FOUND = GatewayTerminalError(row=dict(ERR), event_id=f"{S}:7", stream_id=S)
TAGS = {"_recovered_from_run_journal": True, "_recovered_stream_id": S, "_recovered_event_id": f"{S}:7"}


def _place(messages: list, pending: str | None = "deploy it") -> tuple[str, list]:
    session = {"messages": copy.deepcopy(messages), "pending_user_message": pending}
    how = materialize_gateway_terminal_error(session, FOUND)
    return how, session["messages"]


def test_without_a_row_holding_the_pending_prompt_the_error_is_appended() -> None:
    assert _place([{"role": "user", "content": "other"}, ERR]) == (
        "appended",
        [{"role": "user", "content": "other"}, ERR, {**ERR, **TAGS}],
    )
    assert _place([]) == ("appended", [{**ERR, **TAGS}])


def test_without_a_pending_prompt_the_error_is_appended() -> None:
    assert _place([USER, ERR], pending=None) == ("appended", [USER, ERR, {**ERR, **TAGS}])
    assert _place([USER, ERR], pending="  ") == ("appended", [USER, ERR, {**ERR, **TAGS}])


def test_the_identical_error_of_the_current_turn_is_tagged() -> None:
    assert _place([USER, ERR]) == ("tagged", [USER, {**ERR, **TAGS}])


def test_the_turn_starts_at_the_last_row_holding_the_prompt() -> None:
    """The prompt is the last row: nothing after it, so the identical error of the earlier turn with
    the same prompt is left alone and the row is appended."""
    assert _place([USER, ERR, USER]) == ("appended", [USER, ERR, USER, {**ERR, **TAGS}])


def test_every_row_after_the_turn_start_is_looked_at_newest_first() -> None:
    plain = {"role": "assistant", "content": "ok"}
    assert _place([USER, ERR, plain]) == ("tagged", [USER, {**ERR, **TAGS}, plain])
    two = [USER, dict(ERR), dict(ERR)]
    assert _place(two) == ("tagged", [USER, ERR, {**ERR, **TAGS}])


def test_rows_that_are_no_objects_are_skipped() -> None:
    assert _place([USER, ERR, "text"]) == ("tagged", [USER, {**ERR, **TAGS}, "text"])


def test_a_row_recovered_from_another_stream_is_skipped() -> None:
    foreign = {**ERR, "_recovered_stream_id": "run_other"}
    assert _place([USER, foreign]) == ("appended", [USER, foreign, {**ERR, **TAGS}])
    assert _place([USER, ERR, foreign]) == ("tagged", [USER, {**ERR, **TAGS}, foreign])


def test_a_row_recovered_from_this_stream_is_tagged() -> None:
    mine = {**ERR, "_recovered_stream_id": S}
    assert _place([USER, mine]) == ("tagged", [USER, {**ERR, **TAGS}])


def test_only_an_assistant_error_with_the_same_text_is_the_same_row() -> None:
    not_error = {"role": "assistant", "content": ERR["content"]}
    other_text = {**ERR, "content": "**Error:** 503"}
    not_assistant = {**ERR, "role": "tool"}
    for row in (not_error, other_text, not_assistant):
        assert _place([USER, row]) == ("appended", [USER, row, {**ERR, **TAGS}])


def test_a_row_already_carrying_the_event_id_is_present() -> None:
    done = {"role": "assistant", "content": "x", "_recovered_event_id": f"{S}:7"}
    assert _place([USER, done]) == ("present", [USER, done])
