"""Guards of the gateway terminal-error detection (``detect_gateway_terminal_error``): which
apperror records hermes recovers an error row from. Expected values written out by hand."""

from __future__ import annotations

from pathlib import Path

from inspector.repair.gateway_error import detect_gateway_terminal_error
from inspector.repair.journal_read import JournalRead
from tests.repair.test_gateway_error_rules import ERR, SID, USER


def _event(run_id: str, **payload_over) -> dict:
    payload = {
        "message": "boom",
        "session_id": SID,
        "session": {"session_id": SID, "messages": [USER, ERR]},
        "terminal_session_persisted": False,
    }
    payload.update(payload_over)
    return {
        "seq": 1,
        "event_id": f"{run_id}:1",
        "run_id": run_id,
        "session_id": SID,
        "event": "apperror",
        "type": "apperror",
        "terminal": True,
        "payload": payload,
    }


def _journal(stream_id, events: list) -> JournalRead:
    return JournalRead(stream_id, Path("j.jsonl"), True, 1, events, [], None, [])


def test_an_empty_stream_id_finds_nothing_even_with_an_owned_event():
    """Without a stream id nothing is detected, even if an event names the empty run."""
    assert detect_gateway_terminal_error(SID, "", _journal("", [_event("")])) is None


def test_the_record_type_must_be_apperror_too():
    """An ``apperror`` event whose ``type`` is something else is no gateway error."""
    event = {**_event("run_gw"), "type": "stream_error"}
    assert detect_gateway_terminal_error(SID, "run_gw", _journal("run_gw", [event])) is None


def test_persisted_for_another_session_is_still_recovered():
    """Persisted for another session id does not count as saved: the error row is found."""
    event = _event("run_gw", terminal_session_persisted=True, terminal_session_persisted_session_id="other")
    found = detect_gateway_terminal_error(SID, "run_gw", _journal("run_gw", [event]))
    assert found is not None
    assert (found.row, found.event_id, found.stream_id) == (ERR, "run_gw:1", "run_gw")


def test_persisted_id_without_the_persisted_flag_is_still_recovered():
    """The right persisted session id without ``terminal_session_persisted`` True is not saved."""
    event = _event("run_gw", terminal_session_persisted=False, terminal_session_persisted_session_id=SID)
    found = detect_gateway_terminal_error(SID, "run_gw", _journal("run_gw", [event]))
    assert found is not None
    assert found.row == {"role": "assistant", "content": "**Error:** gateway 502", "_error": True}


def test_persisted_for_this_session_is_not_recovered():
    """Persisted, for this session: hermes saved it already, nothing is detected."""
    event = _event("run_gw", terminal_session_persisted=True, terminal_session_persisted_session_id=SID)
    assert detect_gateway_terminal_error(SID, "run_gw", _journal("run_gw", [event])) is None
