"""The index rebuild's preview warnings about the sidecars it reads (``rebuild_index._SidecarWarnings``),
word for word, and the interrupted-turn marker's cause when the pending turn began before the WebUI
process started (``marker.marker_with_retry_hook``): tests/MUTATION.md, tenth session. Expected
values written out by hand."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from inspector.plan import Clock
from inspector.repair.marker import marker_with_retry_hook
from inspector.repair.rebuild_index import _SidecarWarnings


def test_each_sidecar_warning_word_for_word_and_the_empty_workspaces_counted_once_each():
    seen = _SidecarWarnings()
    folder = Path("/h/webui/sessions")
    seen(folder / "a.json", {"session_id": "", "workspace": "/w"})
    seen(folder / "b.json", {"session_id": "other", "workspace": ""})
    seen(folder / "c.json", {"session_id": "c", "workspace": None})
    seen(folder / "d.json", {"session_id": "d", "workspace": 5})
    seen(folder / "e.json", {"session_id": "e"})
    seen(folder / "f.json", {"session_id": "f", "workspace": "/w"})
    assert seen.empty_ws == 4  # "", None, a number, missing
    assert seen.warnings(SimpleNamespace(cwd=Path("/srv/hermes"))) == [
        "a.json has no session_id: hermes would invent a random id for its row; the inspector leaves it out",
        "b.json says session_id 'other': its row is keyed 'other', so the audit keeps reporting index drift "
        "for it [Q7]",
        "4 sidecar(s) have an empty workspace; their rows get hermes' working directory (/srv/hermes) [Q10]",
    ]


def test_a_turn_begun_before_the_process_started_is_a_restart_in_every_variant():
    clock = Clock(now=300.0, server_started_at=200.0)
    recovered = marker_with_retry_hook(clock, recovered_output=True, stream_id="s1", pending_started_at=100.0)
    assert recovered["interruption_cause"] == "process_restart"
    silent = marker_with_retry_hook(clock, recovered_output=False, stream_id=None, pending_started_at=100.0)
    assert silent["interruption_cause"] == "process_restart"
    armed = marker_with_retry_hook(clock, recovered_output=False, stream_id="s1", pending_started_at=100.0)
    assert armed["interruption_cause"] == "process_restart"
    # begun after the start: the stream's bookkeeping was lost, or nothing is known
    later = marker_with_retry_hook(clock, recovered_output=True, stream_id="s1", pending_started_at=250.0)
    assert later["interruption_cause"] == "lost_worker_bookkeeping"
    assert (
        marker_with_retry_hook(clock, recovered_output=False, stream_id=None, pending_started_at=250.0)[
            "interruption_cause"
        ]
        == "unknown"
    )
