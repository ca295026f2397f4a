"""``recover-from-journal``: when a journaled tool card counts as already shown by the transcript
(an inspector step, spec run-journal-and-promotion §4.4; hermes' own dedupe, ``tool_card_present``,
runs first and is not what is pinned here).

Golden 08 given up, its run journal holding one ``tool`` event (``terminal``, preview ``ls -la``)
and no text, so the session's ``tool_calls`` alone decide whether there is anything to put back.

Rules pinned here:

* a card of the same name tagged with this run (``_recovered_stream_id``) is shown, whatever its
  preview; entries before it that are not cards, or are another tool's cards, are passed over;
* a card of the same name whose preview (or, without one, snippet) is the journaled preview is
  shown, even tagged with another run (hermes' dedupe leaves such a card to be added again);
* otherwise the card is not shown and the run is put back: a card of the same name with another
  preview and no tag; a card without a name, one without a tag, one without a preview match
  nothing, whatever the journal holds (even the text a missing value could be mistaken for).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.repair import from_journal
from tests.conftest import GOLDEN, copy_tree
from tests.recovery_helpers import make_ctx

S08 = "518fa3e90ec7"
RUN08 = "eef688569a1f22202b7552e7c6e54f42"
NOW = 1_779_427_000.0  # golden 08's clock: more than 24 hours after the marker was armed
NOTHING = "nothing to recover: every run journal's output is shown, owned by another repair or ended by a live worker"


def _plan(
    tmp_path: Path, tool_calls: list, *, run: str = RUN08, name: str = "terminal", preview: str = "ls -la"
):
    """Golden 08 given up with ``tool_calls``; its only journal (``run``) holds one tool event."""
    case = GOLDEN / "08-giveup-after-24h"
    home = copy_tree(case / "after", tmp_path / "home")
    folder = home / "webui" / "sessions" / "_run_journal" / S08
    folder.mkdir(parents=True)
    record = {
        "version": 1,
        "event_id": f"{run}:1",
        "seq": 1,
        "run_id": run,
        "session_id": S08,
        "event": "tool",
        "type": "tool",
        "created_at": 1779340005.0,
        "terminal": False,
        "terminal_state": None,
        "payload": {"name": name, "preview": preview, "args": {}},
    }
    (folder / f"{run}.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    path = home / "webui" / "sessions" / f"{S08}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tool_calls"] = tool_calls
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal is None
    return plan


def _nothing(plan) -> bool:
    return plan.result["recovered_runs"] == [] and plan.summary[-1] == NOTHING and plan.changes == []


def test_a_card_of_this_run_is_shown_whatever_its_preview(tmp_path: Path) -> None:
    """Rule: tagged with this run: shown; a non-card entry and another tool's card before it are
    passed over."""
    cards = [
        "not a card",
        {"name": "read_file", "preview": "notes.txt"},
        {"name": "terminal", "preview": "pwd", "_recovered_stream_id": RUN08},
    ]
    assert _nothing(_plan(tmp_path, cards))


def test_a_card_with_the_journaled_preview_is_shown_even_from_another_run(tmp_path: Path) -> None:
    """Rule: same name and preview, tagged with another run: shown."""
    cards = [{"name": "terminal", "preview": "ls  -la", "_recovered_stream_id": "another-run"}]
    assert _nothing(_plan(tmp_path, cards))  # the preview compared with its whitespace normalized


def test_a_snippet_stands_for_a_missing_preview(tmp_path: Path) -> None:
    """Rule: no preview: the snippet is compared (same name, tagged with another run: shown)."""
    cards = [{"name": "terminal", "snippet": "ls -la", "_recovered_stream_id": "another-run"}]
    assert _nothing(_plan(tmp_path, cards))


@pytest.mark.parametrize(
    "run, name, preview, card",
    [
        (RUN08, "terminal", "ls -la", {"name": "terminal", "preview": "pwd"}),  # another preview, no tag
        (RUN08, "XXXX", "ls -la", {"preview": "ls -la"}),  # no name
        ("XXXX", "terminal", "ls -la", {"name": "terminal", "preview": "pwd"}),  # no tag
        (RUN08, "terminal", "XXXX", {"name": "terminal"}),  # no preview, no snippet
    ],
)
def test_a_card_that_matches_neither_way_is_not_shown(tmp_path: Path, run, name, preview, card) -> None:
    """Rule: the run is put back with its one tool card; a missing name, tag or preview matches
    nothing, whatever the journal holds."""
    plan = _plan(tmp_path, [card], run=run, name=name, preview=preview)
    assert plan.result["recovered_runs"] == [run]
    assert plan.summary[1].startswith(f"run {run}: puts back 1 row and 1 tool card above")
