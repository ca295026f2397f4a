"""The interrupted marker's cause at its edges and its words for a cause it does not know (hermes
``api/models.py``: ``_classify_interruption_cause``, ``_interrupted_content_for``), written out by
hand (tests/MUTATION.md, tenth session).

Rules pinned here:

* a turn that began at the very moment the process started is no restart (the process must have
  started *after* it: ``>``);
* a process start of 0 (hermes' ``SERVER_START_TIME or 0.0``) is after no turn, even one that
  began at 0.5;
* a turn start of 0 is no start at all: never a restart, whatever the process start;
* a cause the wording does not know gets the ``unknown`` cause's Evidence sentence.
"""

from __future__ import annotations

import pytest

from inspector.repair.marker import classify_cause, marker_content

HEAD = "**Response interrupted.**\n\nThe live response stream stopped before this turn finished. "
UNKNOWN = "Evidence: the stream stopped, but the WebUI could not classify the interruption more precisely."
LOST = (
    "Evidence: the stream was gone and worker bookkeeping no longer had an active run for it. This "
    "usually means the worker state was lost or cleaned up without a terminal event."
)


@pytest.mark.parametrize(("stream", "cause"), [("s1", "lost_worker_bookkeeping"), (None, "unknown")])
def test_a_turn_begun_when_the_process_started_is_no_restart(stream, cause) -> None:
    assert classify_cause(stream, 100.0, 100.0) == cause
    assert classify_cause(stream, 100, 100.0) == cause
    assert classify_cause(stream, 99.5, 100.0) == "process_restart"


@pytest.mark.parametrize("server", [0.0, 0, None])
def test_a_process_start_of_zero_is_after_no_turn(server) -> None:
    assert classify_cause(None, 0.5, server) == "unknown"
    assert classify_cause("s1", 0.5, server) == "lost_worker_bookkeeping"


@pytest.mark.parametrize("started", [0, 0.0, "", None])
def test_a_turn_start_of_zero_is_no_start(started) -> None:
    assert classify_cause(None, started, 200.0) == "unknown"
    assert classify_cause("s1", started, 200.0) == "lost_worker_bookkeeping"


def test_a_cause_the_wording_does_not_know_gets_the_unknown_evidence() -> None:
    assert marker_content(recovered_output=False, pending_retry=False, cause="no_such_cause") == (
        HEAD + UNKNOWN + " The user message above was preserved, but no agent output was recovered."
    )
    assert marker_content(recovered_output=True, pending_retry=False, cause="") == (
        HEAD
        + UNKNOWN
        + " The partial output above was recovered from the run journal, but the interrupted agent"
        " process could not continue."
    )


def test_a_known_cause_gets_its_own_evidence() -> None:
    assert marker_content(recovered_output=False, pending_retry=True, cause="lost_worker_bookkeeping") == (
        HEAD
        + LOST
        + " Recovering the partial output from the run journal \u2014 reload this session to retry."
    )
