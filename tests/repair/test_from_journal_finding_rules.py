"""``recover-from-journal``'s finding and the journals it reads (an inspector step, spec
run-journal-and-promotion §4.3; the words are the project's own).

Golden 08: its run journal (``RUN08``) holds two token events and no terminal record. Before the
give-up its last row is a pending marker armed at ``ARMED``; after it, the marker says "Partial
output may have been lost".

Rules pinned here:

* a run's description counts its tool cards, singular for one and plural otherwise;
* the finding joins the runs' descriptions with "; " and names the sidecar's path;
* journals handed to the finding are still sorted by owner: a run a pending marker still waits
  for (hermes would still retry it) gets no finding;
* the journals the step reads (``_journals``) leave out the run a pending marker hermes still
  retries, and a run ended by a terminal record; without a session nothing is owned.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.repair import from_journal
from inspector.repair.from_journal import UnshownRun
from inspector.repair.journal_read import read_journal
from tests.recovery_helpers import golden_home, make_ctx
from tests.repair.test_from_journal_plan_rules import NOW, RUN08, S08, _home, _record

ARMED = 1779340070.0  # golden 08 before: the pending marker's _journal_retry_first_seen_ts


def _sidecar(home: Path) -> dict:
    return json.loads((home / "webui" / "sessions" / f"{S08}.json").read_text(encoding="utf-8"))


def test_a_run_with_two_tool_cards_says_cards_in_the_plural() -> None:
    """Rule: "2 tool cards" (plural), after the rows' words."""
    run = UnshownRun("r1", 5, 40, 2, 2, None, 0, "why")
    assert run.describe() == (
        "the run journal r1 holds output the transcript does not show "
        "(40 characters in 2 rows and 2 tool cards, from 5 journaled output events); why"
    )


def test_a_run_with_one_tool_card_and_no_row_says_card() -> None:
    """Rule: "1 tool card" (singular), no rows' words when no row is missing."""
    run = UnshownRun("r2", 1, 0, 0, 1, 3, 3, "why not")
    assert run.describe() == (
        "the run journal r2 holds output the transcript does not show "
        "(1 tool card, from 1 journaled output events); why not"
    )


def test_the_finding_joins_the_runs_and_names_the_path() -> None:
    """Rule: one finding for the session, its runs' descriptions joined by "; ", the path kept."""
    runs = [UnshownRun("r1", 2, 7, 1, 0, None, 0, "a"), UnshownRun("r2", 1, 0, 0, 1, None, 0, "b")]
    finding = from_journal.finding_for("sid1", runs, "sessions/sid1.json")
    assert finding.message == (
        "the run journal r1 holds output the transcript does not show (7 characters in 1 row, from 2 "
        "journaled output events); a; the run journal r2 holds output the transcript does not show "
        "(1 tool card, from 1 journaled output events); b"
    )
    assert (finding.kind, finding.session_id, finding.action, finding.path) == (
        "journal_output_not_shown",
        "sid1",
        "recover-from-journal",
        "sessions/sid1.json",
    )


def test_the_sessions_finding_names_its_sidecar(tmp_path: Path) -> None:
    """Rule: the finding of golden 08 given up carries the sidecar's path."""
    home = _home(tmp_path)
    finding = from_journal.session_finding(make_ctx(home, NOW), S08)
    assert finding is not None
    assert finding.path == str(home / "webui" / "sessions" / "518fa3e90ec7.json")


def test_journals_handed_to_the_finding_still_leave_the_run_hermes_retries(tmp_path: Path) -> None:
    """Rule: golden 08 before the give-up, ten minutes after the marker was armed, its journal handed
    in: hermes still retries the run, so there is no finding."""
    home = golden_home(tmp_path, "08-giveup-after-24h", "before")
    ctx = make_ctx(home, ARMED + 600.0)
    journals = [(RUN08, read_journal(ctx.snapshot, ctx.session_dir, S08, RUN08))]
    assert from_journal.session_finding(ctx, S08, journals) is None
    # a day later hermes has given up: the same journals get the finding
    assert from_journal.session_finding(make_ctx(home, NOW), S08, journals) is not None


def _runs(ctx, session: dict | None) -> list[str]:
    return [run for run, _ in from_journal._journals(ctx, S08, session)]


def test_the_step_reads_no_journal_of_a_run_hermes_still_retries(tmp_path: Path) -> None:
    """Rule: ten minutes after the marker was armed its run is left out; a day later it is read;
    without the session nothing is owned and it is read."""
    home = golden_home(tmp_path, "08-giveup-after-24h", "before")
    session = _sidecar(home)
    assert session["messages"][-1]["_journal_retry_first_seen_ts"] == ARMED
    assert _runs(make_ctx(home, ARMED + 600.0), session) == []
    assert _runs(make_ctx(home, NOW), session) == [RUN08]
    assert _runs(make_ctx(home, ARMED + 600.0), None) == [RUN08]


def test_the_step_reads_no_journal_of_a_run_that_ended(tmp_path: Path) -> None:
    """Rule: golden 08 given up, its journal ended by a ``done`` record: the journal is not read."""
    home = _home(tmp_path, after=_record(RUN08, 3, "done", {}, terminal=True))
    assert _runs(make_ctx(home, NOW), _sidecar(home)) == []
