"""The interrupted-turn repair's notes about the run journal come only with a repair hermes runs
(spec run-journal-and-promotion §3.1, §6.2; seventh session of issue 21, tests/MUTATION.md).

Rule pinned here: a session with an ``active_stream_id`` but no pending prompt is not repaired
(hermes' repair returns False and writes nothing), so nothing is said about its run journal, not
even a line hermes would skip in it.
"""

from __future__ import annotations

from pathlib import Path

from tests.repair.test_interrupted import write_journal as hermes_journal
from tests.repair.test_interrupted_rules import SID, S, plan_for, write_sidecar

HISTORY = [
    {"role": "user", "content": "Earlier", "timestamp": 10},
    {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
]


def test_no_pending_prompt_is_no_repair_and_no_journal_note(tmp_path: Path) -> None:
    """Rule: hermes returns False; no journal warning, though the journal holds a line hermes skips."""
    home = tmp_path / "home"
    write_sidecar(home, list(HISTORY), pending_user_message=None)
    path = hermes_journal(home, [("token", {"text": "partial"})], sid=SID, run=S)
    path.write_bytes(path.read_bytes() + b"not a record\n")
    result = plan_for(home)
    assert result.refusal is None and result.changes == []
    assert result.result == {"hermes_return": False}
    assert result.warnings == []
