"""``run_summary``: hermes' ``_summary_from_events`` of one run (api/run_journal.py), for a run with
no events and for events without a ``seq`` (seventh session of issue 21, tests/MUTATION.md).

Rules pinned here (hermes: ``"last_seq": int((last or {}).get("seq") or 0)``, the state
``"unknown"`` without events, ``"running"`` with events and no terminal one):

* no events: nothing counted, last seq 0, no last event, state "unknown";
* a last event without a ``seq``: last seq 0.
"""

from __future__ import annotations

from inspector.store.journal import run_summary

SID = "a1b2c3d4e5f6"
RUN = "7c8b4108d52b4aba9af362d3a54f47ac"


def test_a_run_without_events() -> None:
    """Rule: the whole summary of no events, written out."""
    assert run_summary(SID, RUN, []) == {
        "session_id": SID,
        "run_id": RUN,
        "stream_id": RUN,
        "event_count": 0,
        "last_seq": 0,
        "last_event_id": None,
        "terminal": False,
        "terminal_state": "unknown",
        "last_event": None,
    }


def test_a_last_event_without_a_seq_has_last_seq_0() -> None:
    """Rule: the last event has no seq (the first has 1): last seq 0, the run still running."""
    events = [{"seq": 1, "event": "token"}, {"event": "token", "event_id": f"{RUN}:x"}]
    summary = run_summary(SID, RUN, events)
    assert (summary["event_count"], summary["last_seq"], summary["last_event_id"]) == (2, 0, f"{RUN}:x")
    assert (summary["terminal"], summary["terminal_state"], summary["last_event"]) == (
        False,
        "running",
        "token",
    )
