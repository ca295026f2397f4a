"""The interrupted marker: the assistant row that closes an interrupted turn.

Spec run-journal-and-promotion §3.8: the wording (head, the cause's Evidence sentence,
the outcome), the cause classification, the marker builders and the four lazy-retry
keys (§4.1) that arm the marker for the journal retry. Ported from hermes-webui byte for
byte; time comes from the explicit clock, never from the system.
"""

from __future__ import annotations

from typing import Any

from inspector.plan import Clock

# ---------------------------------------------------------------- wording (§3.8)

MARKER_HEAD = "**Response interrupted.**\n\nThe live response stream stopped before this turn finished. "
RECOVERED_OUTCOME = (
    "The partial output above was recovered from the run journal, "
    "but the interrupted agent process could not continue."
)
PENDING_RETRY_OUTCOME = (
    "Recovering the partial output from the run journal \u2014 reload this session to retry."
)
NO_OUTPUT_OUTCOME = "The user message above was preserved, but no agent output was recovered."
# Fixed wordings of the lazy retry: no Evidence sentence.
RECOVERED_WORDING = MARKER_HEAD + RECOVERED_OUTCOME
NEUTRAL_WORDING = MARKER_HEAD + "Partial output may have been lost."
# Legacy constants: never produced by new repairs, still found in old sidecars.
LEGACY_NO_OUTPUT_WORDING = MARKER_HEAD + NO_OUTPUT_OUTCOME
LEGACY_PENDING_RETRY_WORDING = MARKER_HEAD + PENDING_RETRY_OUTCOME

CAUSE_EVIDENCE = {
    "process_restart": (
        "Evidence: the WebUI process started after this turn began, so this "
        "looks like a real process crash or restart."
    ),
    "stream_run_split_brain": (
        "Evidence: the browser response stream was gone but the worker registry "
        "still listed the run. This is a stream/run bookkeeping split-brain."
    ),
    "lost_worker_bookkeeping": (
        "Evidence: the stream was gone and worker bookkeeping no longer had an "
        "active run for it. This usually means the worker state was lost or "
        "cleaned up without a terminal event."
    ),
    "unknown": (
        "Evidence: the stream stopped, but the WebUI could not classify the interruption more precisely."
    ),
}
RETRY_KEYS = (
    "_pending_journal_recovery",
    "_journal_retry_stream_id",
    "_journal_retry_attempts",
    "_journal_retry_first_seen_ts",
)


# ---------------------------------------------------------------- the marker (§3.8)


def classify_cause(stream_id: Any, pending_started_at: Any, server_started_at: float) -> str:
    """Why the stream died, as hermes would say it in a process started at ``server_started_at``.

    Offline no worker registry exists, so a known stream is never "still listed":
    ``stream_run_split_brain`` cannot occur and a known stream id gives
    ``lost_worker_bookkeeping``.
    """
    try:
        started = float(pending_started_at) if pending_started_at else None
    except (TypeError, ValueError):
        started = None
    if started is not None and float(server_started_at or 0.0) > started:
        return "process_restart"
    if stream_id:
        return "lost_worker_bookkeeping"
    return "unknown"


def marker_content(*, recovered_output: bool, pending_retry: bool, cause: str) -> str:
    """Freshly built marker text: head, the cause's Evidence sentence, the outcome."""
    if recovered_output:
        outcome = RECOVERED_OUTCOME
    elif pending_retry:
        outcome = PENDING_RETRY_OUTCOME
    else:
        outcome = NO_OUTPUT_OUTCOME
    evidence = CAUSE_EVIDENCE.get(cause, CAUSE_EVIDENCE["unknown"])
    return f"{MARKER_HEAD}{evidence} {outcome}"


def interrupted_marker(
    clock: Clock,
    *,
    recovered_output: bool = False,
    pending_retry: bool = False,
    stream_id: Any = None,
    pending_started_at: Any = None,
) -> dict:
    """``_interrupted_recovery_marker``: the assistant row that closes an interrupted turn."""
    cause = classify_cause(stream_id, pending_started_at, clock.server_started_at)
    marker = {
        "role": "assistant",
        "content": marker_content(
            recovered_output=recovered_output, pending_retry=pending_retry, cause=cause
        ),
        "timestamp": int(clock.now),
        "_error": True,
        "type": "interrupted",
        "interruption_cause": cause,
    }
    if pending_retry and not recovered_output:
        marker["_pending_journal_recovery"] = True
    return marker


def marker_with_retry_hook(
    clock: Clock, *, recovered_output: bool, stream_id: Any, pending_started_at: Any
) -> dict:
    """Recovered variant, no-output variant (no stream id) or the armed pending-retry variant."""
    if recovered_output:
        return interrupted_marker(
            clock, recovered_output=True, stream_id=stream_id, pending_started_at=pending_started_at
        )
    if not stream_id:
        # hermes does not pass the stream id here: the cause can only be restart or unknown.
        return interrupted_marker(clock, pending_started_at=pending_started_at)
    marker = interrupted_marker(
        clock, pending_retry=True, stream_id=stream_id, pending_started_at=pending_started_at
    )
    marker["_journal_retry_stream_id"] = str(stream_id)
    marker["_journal_retry_attempts"] = 0
    marker["_journal_retry_first_seen_ts"] = int(clock.now)
    return marker


def strip_retry_keys(marker: dict) -> None:
    """Remove the four lazy-retry keys from a marker."""
    for key in RETRY_KEYS:
        marker.pop(key, None)
