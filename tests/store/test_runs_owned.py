"""Which runs' journals journal recovery leaves to another owner: one rule for the list and the repair.

Rules pinned (hermes' lazy retry, spec session-recovery §4.3; the stale-pending repair): the running
turn's stream is owned while the session also holds its pending user message; a pending-recovery
marker's stream is owned while hermes would still retry it (attempts left, not given up); the list's
facts of a sidecar and the sidecar itself give the same answer.
"""

from __future__ import annotations

import json

from inspector.store.scan import sidecar_facts
from inspector.store.sidecar import GIVEUP_SECONDS, MAX_ATTEMPTS, pending_retry_marker, runs_owned_elsewhere

NOW = 1_780_000_000.0


def _marker(stream: str, attempts: int = 0, first_seen: float = NOW - 10) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "_pending_journal_recovery": True,
        "_journal_retry_stream_id": stream,
        "_journal_retry_attempts": attempts,
        "_journal_retry_first_seen_ts": first_seen,
    }


def _both(session: dict) -> tuple[set[str], set[str]]:
    """(from the sidecar object, from the list's facts of its bytes)."""
    direct = runs_owned_elsewhere(session, pending_retry_marker(session.get("messages")), NOW)
    facts = sidecar_facts(json.dumps(session).encode(), want_texts=False)
    return direct, runs_owned_elsewhere(facts["meta"], facts["marker"], NOW)


def test_the_running_turn_owns_its_stream_only_with_its_pending_message():
    running = {"session_id": "s", "messages": [], "active_stream_id": "run1", "pending_user_message": "hi"}
    assert _both(running) == ({"run1"}, {"run1"})
    done = {**running, "pending_user_message": None}
    assert _both(done) == (set(), set())


def test_a_pending_marker_owns_its_stream_while_hermes_would_still_retry():
    live = {"session_id": "s", "messages": [{"role": "user", "content": "q"}, _marker("run2")]}
    assert _both(live) == ({"run2"}, {"run2"})
    spent = {"session_id": "s", "messages": [{"role": "user", "content": "q"}, _marker("run2", MAX_ATTEMPTS)]}
    assert _both(spent) == (set(), set())
    old = {"session_id": "s", "messages": [_marker("run2", first_seen=NOW - GIVEUP_SECONDS - 1)]}
    assert _both(old) == (set(), set())
    answered = {"session_id": "s", "messages": [_marker("run2"), {"role": "assistant", "content": "later"}]}
    assert _both(answered) == (set(), set())  # a normal reply after the marker ends hermes' search
