"""The recovered pending turn (hermes ``_append_recovered_pending_turn``, the A2 context-only row,
``api/process_event_utils.py: wakeup_display_meta``), rule by rule with literal values."""

from __future__ import annotations

from inspector.repair.pending_turn import (
    append_recovered_pending_turn,
    context_only_recovered_turn,
    wakeup_display_meta,
)

WAKEUP = "[IMPORTANT: Background process p7 completed (exit_code={code}).\nCommand: make\nOutput:\nok\n"


def test_a_wakeup_exit_code_that_is_no_integer_stays_text() -> None:
    assert wakeup_display_meta(WAKEUP.format(code="-9")) == {
        "type": "completion",
        "task_id": "p7",
        "command": "make",
        "exit_code": -9,
    }
    assert wakeup_display_meta(WAKEUP.format(code="killed"))["exit_code"] == "killed"


def test_a_process_wakeup_prompt_gets_its_display_metadata() -> None:
    session = {
        "messages": [],
        "pending_user_message": WAKEUP.format(code="0"),
        "pending_user_source": "process_wakeup",
        "pending_attachments": [],
    }
    row = append_recovered_pending_turn(session, timestamp=7)
    assert row == {
        "role": "user",
        "content": WAKEUP.format(code="0"),
        "timestamp": 7,
        "_recovered": True,
        "_source": "process_wakeup",
        "_wakeup_meta": {"type": "completion", "task_id": "p7", "command": "make", "exit_code": 0},
    }


def test_no_row_without_pending_text() -> None:
    session = {"messages": [], "pending_user_message": "", "context_messages": []}
    assert append_recovered_pending_turn(session, timestamp=7) is None
    assert session == {"messages": [], "pending_user_message": "", "context_messages": []}


def test_the_context_only_row_keeps_source_and_attachments_but_no_wakeup_metadata() -> None:
    """Branch A2's row (hermes builds it inline): ``_source`` when not webui, the attachments,
    never ``_wakeup_meta``; it goes to the context only."""
    tail = {"role": "user", "content": WAKEUP.format(code="0"), "timestamp": 5}
    session = {
        "messages": [tail],
        "pending_user_message": WAKEUP.format(code="0"),
        "pending_user_source": "process_wakeup",
        "pending_attachments": [{"name": "a.png"}],
    }
    row = context_only_recovered_turn(session, timestamp=7)
    assert row == {
        "role": "user",
        "content": WAKEUP.format(code="0"),
        "timestamp": 7,
        "_recovered": True,
        "_source": "process_wakeup",
        "attachments": [{"name": "a.png"}],
    }
    assert session["messages"] == [tail] and session["context_messages"] == [tail, row]
