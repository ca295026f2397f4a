"""``recover-from-journal``'s plan on golden 08 given up: what it says and writes besides the rows
(an inspector step, not a hermes repair; spec run-journal-and-promotion §4.3-4.4, the words are the
project's own).

Golden 08's journal (run ``RUN08``) holds two token events (``PLAN_TEXT``) and no terminal record;
its marker (row 3) says "Partial output may have been lost"; the sidecar's ``message_count`` is 4.

Rules pinned here:

* nothing to put back (the run ended with ``done``): the summary says so word for word, nothing
  is written;
* a later turn's pending marker that hermes still retries is left to ``recover-journal`` (its run is
  not put back) and, once the earlier run is put back, a warning names its stream;
* a journal line hermes skips (not a JSON object) is named in a warning; the output is still put back;
* a sidecar whose values make the put-back raise (``"tool_calls": 1``) is refused with the error's
  type and words, and nothing is written;
* a save whose index rebuild hermes would fail on (no ``_index.json``, another sidecar's
  ``updated_at`` text) is refused with the rebuild's words;
* the index row keeps the ``message_count`` the sidecar was loaded with (hermes' ``compact()``
  reports ``_metadata_message_count``), while the sidecar's own count is the new one;
* keys hermes' save does not know are named in a warning, in file order, and left out of the file;
* the finding for a pending marker hermes' lazy retry gives up on (armed more than 24 hours ago)
  says so: the characters and row, the journaled output events, and why hermes shows nothing; for
  a marker that is no longer pending, why is read from its words: hermes' neutral give-up wording,
  a marker ending "no agent output was recovered", or any other marker.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.repair import from_journal
from inspector.repair.marker import MARKER_HEAD, NO_OUTPUT_OUTCOME, PENDING_RETRY_OUTCOME, RECOVERED_WORDING
from tests.conftest import GOLDEN, copy_tree
from tests.recovery_helpers import make_ctx

S08 = "518fa3e90ec7"
RUN08 = "eef688569a1f22202b7552e7c6e54f42"
RUN_LATER = "0123456789abcdef0123456789abcdef"
PLAN_TEXT = "Here is a three-step migration plan: export, dual-write, cut over."
NOW = 1_779_427_000.0  # golden 08's clock: more than 24 hours after the marker was armed
STEP = (
    "inspector step, not a hermes-webui repair: hermes gave up on this output; the inspector "
    "puts it back where hermes' own successful promotion would have"
)


def _record(run: str, seq: int, event: str, payload: dict, *, terminal: bool = False) -> bytes:
    record = {
        "version": 1,
        "event_id": f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": S08,
        "event": event,
        "type": event,
        "created_at": 1779340005.0 + seq,
        "terminal": terminal,
        "terminal_state": "completed" if terminal else None,
        "payload": payload,
    }
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def _home(tmp_path: Path, *, edit: Callable[[dict], None] | None = None, after: bytes = b"") -> Path:
    """Golden 08 given up with its run journal (``after`` appended to it); ``edit`` changes the sidecar."""
    case = GOLDEN / "08-giveup-after-24h"
    home = copy_tree(case / "after", tmp_path / "home")
    copy_tree(
        case / "before" / "webui" / "sessions" / "_run_journal", home / "webui" / "sessions" / "_run_journal"
    )
    if after:
        journal = home / "webui" / "sessions" / "_run_journal" / S08 / f"{RUN08}.jsonl"
        journal.write_bytes(journal.read_bytes() + after)
    if edit is not None:
        path = home / "webui" / "sessions" / f"{S08}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        edit(data)
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return home


def _after(plan, name: str) -> dict | list:
    return json.loads(next(c for c in plan.changes if c.path.name == name).after)


def test_nothing_to_recover_says_so_word_for_word(tmp_path: Path) -> None:
    """Rule: a run that ended (``done``) is never touched; the summary says there is nothing to recover."""
    home = _home(tmp_path, after=_record(RUN08, 3, "done", {}, terminal=True))
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal is None and plan.changes == [] and plan.warnings == []
    assert plan.summary == [
        STEP,
        "nothing to recover: every run journal's output is shown, owned by another repair "
        "or ended by a live worker",
    ]
    assert plan.result == {"inspector_step": True, "recovered_runs": []}


def test_a_pending_marker_still_waiting_after_the_recovery_is_named_in_a_warning(tmp_path: Path) -> None:
    """Rule: a later turn's pending marker that hermes still retries (1 attempt, armed a minute ago)
    owns its run (left to recover-journal); the earlier run is put back, and a warning names the
    stream the marker still waits for."""
    later_user = {"role": "user", "content": "Now the rollback script.", "timestamp": 1779426900}
    pending = {
        "role": "assistant",
        "content": MARKER_HEAD + PENDING_RETRY_OUTCOME,
        "timestamp": 1779426940,
        "_error": True,
        "type": "interrupted",
        "_pending_journal_recovery": True,
        "_journal_retry_stream_id": RUN_LATER,
        "_journal_retry_attempts": 1,
        "_journal_retry_first_seen_ts": NOW - 60,
    }

    def edit(data: dict) -> None:
        data["messages"] += [later_user, pending]
        data["context_messages"].append(later_user)
        data["message_count"] = 6

    home = _home(tmp_path, edit=edit)
    later = home / "webui" / "sessions" / "_run_journal" / S08 / f"{RUN_LATER}.jsonl"
    later.write_bytes(_record(RUN_LATER, 1, "token", {"text": "Still arriving."}))
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal is None
    assert plan.result == {"inspector_step": True, "recovered_runs": [RUN08]}
    assert plan.warnings == [
        f"a pending retry marker still waits for stream {RUN_LATER}: "
        "hermes will act on it when the session is next opened"
    ]
    rows = _after(plan, f"{S08}.json")["messages"]
    assert [m["content"] for m in rows[3:5]] == [PLAN_TEXT, RECOVERED_WORDING]
    assert rows[5:] == [later_user, pending]  # the later turn and its marker as they were


def test_a_journal_line_hermes_skips_is_named_and_the_output_still_put_back(tmp_path: Path) -> None:
    """Rule: a line that is not a JSON object (line 3) gets the journal's warning; no refusal."""
    home = _home(tmp_path, after=b"not a record\n")
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal is None
    assert plan.result["recovered_runs"] == [RUN08]
    assert plan.warnings == [
        f"{RUN08}.jsonl: hermes skips 1 unreadable line (not a JSON object; "
        "line numbers as hermes counts them: 3)"
    ]
    assert _after(plan, f"{S08}.json")["messages"][3]["content"] == PLAN_TEXT


def test_odd_values_that_make_the_put_back_raise_are_refused_with_the_error(tmp_path: Path) -> None:
    """Rule: ``"tool_calls": 1`` (not a list) makes the put-back raise TypeError: the plan is refused
    with the error's type and Python's words, and nothing is written."""
    home = _home(tmp_path, edit=lambda data: data.update(tool_calls=1))
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal == (
        "the journal output cannot be put back (TypeError: 'int' object is not iterable); nothing is written"
    )
    assert plan.changes == []


def test_a_save_hermes_index_rebuild_would_fail_on_is_refused(tmp_path: Path) -> None:
    """Rule: no ``_index.json`` and another sidecar whose ``updated_at`` is text: hermes' rebuild inside
    the save sorts text against numbers and raises; the plan is refused with the rebuild's words."""
    home = _home(tmp_path)
    sessions = home / "webui" / "sessions"
    (sessions / "_index.json").unlink()
    other = {"session_id": "other_sid", "title": "o", "messages": [{"role": "user", "content": "u"}]}
    other["updated_at"] = "yesterday"
    (sessions / "other_sid.json").write_text(json.dumps(other), encoding="utf-8")
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal == (
        "the session cannot be saved as hermes would save it (IndexRebuildError: a sidecar's updated_at "
        "cannot be sorted with the others (hermes' index sort by updated_at fails: '<' not supported "
        "between instances of 'str' and 'float'))"
    )


def test_the_index_row_keeps_the_loaded_message_count(tmp_path: Path) -> None:
    """Rule: hermes' ``compact()`` reports the count the sidecar was loaded with (4), not the rows it
    holds after the put-back (5): golden 08's index row already says 4, so the index is not rewritten;
    with a stale title in that row, the row is rewritten with the sidecar's title and still 4."""
    plan = from_journal.plan(make_ctx(_home(tmp_path / "a"), NOW), S08)
    assert plan.refusal is None
    assert [c.path.name for c in plan.changes] == [f"{S08}.json"]
    assert _after(plan, f"{S08}.json")["message_count"] == 5

    home = _home(tmp_path / "b")
    index = home / "webui" / "sessions" / "_index.json"
    index.write_text(index.read_text(encoding="utf-8").replace("Database migration plan", "old title"))
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    (row,) = _after(plan, "_index.json")
    assert (row["session_id"], row["title"], row["message_count"]) == (S08, "Database migration plan", 4)


def test_keys_the_save_does_not_know_are_named_and_dropped(tmp_path: Path) -> None:
    """Rule: unknown keys are named in file order in one warning and are not in the saved file."""
    home = _home(tmp_path, edit=lambda data: data.update(legacy_flag=True, zz_note="kept by nobody"))
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal is None
    assert plan.warnings == ["hermes' save drops keys it does not know: legacy_flag, zz_note"]
    saved = _after(plan, f"{S08}.json")
    assert "legacy_flag" not in saved and "zz_note" not in saved
    assert saved["messages"][3]["content"] == PLAN_TEXT


def test_the_finding_for_a_pending_marker_hermes_gives_up_on_says_why(tmp_path: Path) -> None:
    """Rule: golden 08 before the give-up, a day later: the marker still waits (``_pending_journal_recovery``)
    but hermes' lazy retry gives up on it before reading the journal; 66 characters in 1 row."""
    home = copy_tree(GOLDEN / "08-giveup-after-24h" / "before", tmp_path / "home")
    finding = from_journal.session_finding(make_ctx(home, NOW), S08)
    assert finding is not None
    assert finding.message == (
        f"the run journal {RUN08} holds output the transcript does not show (66 characters in 1 row, "
        "from 2 journaled output events); hermes' lazy retry gives up on it before reading the journal "
        "(24 hours or 12 attempts)"
    )


FOUND = (
    f"the run journal {RUN08} holds output the transcript does not show (66 characters in 1 row, "
    "from 2 journaled output events); "
)


@pytest.mark.parametrize(
    "content, why",
    [
        (None, 'hermes gave up (the marker says "Partial output may have been lost")'),  # golden 08 as it is
        (MARKER_HEAD + NO_OUTPUT_OUTCOME, "the marker says no agent output was recovered"),
        (MARKER_HEAD + "Something else happened.", "the turn's marker does not show it"),
    ],
    ids=["neutral", "no-output", "other"],
)
def test_the_finding_reads_why_from_the_markers_words(tmp_path: Path, content, why: str) -> None:
    """Rule: a marker no longer pending: the neutral wording, a no-output ending, anything else."""

    def edit(data: dict) -> None:
        if content is not None:
            data["messages"][3]["content"] = content

    finding = from_journal.session_finding(make_ctx(_home(tmp_path, edit=edit), NOW), S08)
    assert finding is not None and finding.message == FOUND + why
