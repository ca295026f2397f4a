"""hermes' lazy journal retry rule by rule (``api/models.py``, spec run-journal-and-promotion §4).

``_reorder_journal_tail_above_marker`` (which rows move, which tool cards are rebased, and the
inspector's warning for the cards hermes leaves stale, quirk 1) and ``_retry_journal_recovery_in_place``
(the give-up boundaries, the still-arriving wait, the counted attempt, the words of each outcome).
Every expected value is written out by hand from hermes' source, never computed by the code under test.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from inspector.home import locate_home
from inspector.plan import Clock
from inspector.repair import promote
from inspector.repair.context import RepairContext
from inspector.repair.journal_read import JournalRead
from inspector.repair.notes import Notes
from inspector.repair.promote import reorder_journal_tail_above_marker
from inspector.store.sidecar import dump_session, load_session

SID = "rules_sid"
STREAM = "5d0c0ffee5d0c0ffee5d0c0ffee5d0c0"
NOW = 1_779_600_000.0
ARMED = int(NOW) - 300

MARKER = {"role": "assistant", "content": "marker", "type": "interrupted", "_error": True}


def journaled(text: str) -> dict:
    return {"role": "assistant", "content": text, "_recovered_from_run_journal": True}


def card(tid: str, idx) -> dict:
    return {"name": "terminal", "tid": tid, "assistant_msg_idx": idx}


def reorder(messages: list, cards: list, marker_idx: int) -> tuple[dict, list[str]]:
    session = {"messages": messages, "tool_calls": cards}
    return session, reorder_journal_tail_above_marker(session, marker_idx)


# ------------------------------------------------------------ _reorder_journal_tail_above_marker


def test_marker_in_the_first_row_still_gets_its_journal_rows_above_it() -> None:
    """hermes' guard is ``marker_idx < 0``: row 0 is a valid marker position."""
    session, warnings = reorder([MARKER, journaled("a")], [card("c1", 1)], 0)
    assert session["messages"] == [journaled("a"), MARKER]
    assert session["tool_calls"] == [card("c1", 0)]
    assert warnings == []


def test_an_index_outside_the_transcript_changes_nothing() -> None:
    """A negative index or one past the end returns before touching the session (no Python wrap-around)."""
    rows = [{"role": "user", "content": "u"}, MARKER, journaled("a")]
    for idx in (-1, -3, 3):
        session, warnings = reorder(copy.deepcopy(rows), [card("c1", 2)], idx)
        assert session == {"messages": rows, "tool_calls": [card("c1", 2)]} and warnings == [], idx


def test_cards_that_are_not_objects_are_skipped_and_later_cards_still_rebased() -> None:
    """hermes ``continue``s past a non-dict tool card; the cards after it are still rebased."""
    rows = [{"role": "user", "content": "u"}, MARKER, journaled("a")]
    session, warnings = reorder(rows, [None, "junk", card("c1", 2)], 1)
    assert session["messages"] == [{"role": "user", "content": "u"}, journaled("a"), MARKER]
    assert session["tool_calls"] == [None, "junk", card("c1", 1)]
    assert warnings == []


def test_a_card_whose_index_is_not_a_plain_integer_gets_no_stale_warning() -> None:
    """Only an int index (not true, not 1.0) names a row: no stale warning for the others.

    ``True`` is an int to hermes' rebase (``isinstance(idx, int)``) but lies outside [2, 3) here.
    """
    rows = [{"role": "user", "content": "u"}, MARKER, journaled("a")]
    session, warnings = reorder(rows, [card("b", True), card("f", 1.0), card("s", "1")], 1)
    assert session["tool_calls"] == [card("b", True), card("f", 1.0), card("s", "1")]
    assert session["tool_calls"][0]["assistant_msg_idx"] is True
    assert warnings == []


def test_cards_above_the_marker_and_past_the_end_keep_their_index_without_a_warning() -> None:
    """Rows above the marker do not move; a card pointing past the end names no row."""
    rows = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "ok"}, MARKER, journaled("a")]
    session, warnings = reorder(rows, [card("above", 1), card("j", 3), card("gone", 99), card("neg", -1)], 2)
    assert session["messages"] == [rows[0], rows[1], journaled("a"), MARKER]
    assert session["tool_calls"] == [card("above", 1), card("j", 2), card("gone", 99), card("neg", -1)]
    assert warnings == []


def test_every_journal_row_moves_and_each_card_follows_its_row() -> None:
    """Two journal rows right below the marker: both move up, both cards are rebased by one."""
    rows = [{"role": "user", "content": "u"}, MARKER, journaled("a"), journaled("b")]
    session, warnings = reorder(rows, [card("c1", 2), card("c2", 3)], 1)
    assert session["messages"] == [rows[0], journaled("a"), journaled("b"), MARKER]
    assert session["tool_calls"] == [card("c1", 1), card("c2", 2)]
    assert warnings == []


def test_rebase_is_by_range_not_by_row_and_the_stale_cards_are_named() -> None:
    """Quirk 1: hermes rebases indexes in [i+1, i+1+len(J)), whatever row they pointed at.

    Here the card of the error row below the marker (row 2, not journaled) is moved to row 1
    (now the journal row), and the journal row's card (row 3) is left at 3 (now the error row).
    """
    error = {"role": "assistant", "content": "**Error:** x", "_error": True}
    rows = [{"role": "user", "content": "u"}, MARKER, error, journaled("a")]
    session, warnings = reorder(rows, [card("ok", 0), card("c9", 2), card("c8", 3)], 1)
    assert session["messages"] == [rows[0], journaled("a"), MARKER, error]
    assert session["tool_calls"] == [card("ok", 0), card("c9", 1), card("c8", 3)]  # "ok" is right: no warning
    assert warnings == [
        "tool card 'terminal' (c9) keeps assistant_msg_idx 1 after hermes' reorder, but the row it was "
        "made for is now row 3 (stale index, quirk 1)",
        "tool card 'terminal' (c8) keeps assistant_msg_idx 3 after hermes' reorder, but the row it was "
        "made for is now row 1 (stale index, quirk 1)",
    ]


# ------------------------------------------------------------ _retry_journal_recovery_in_place


def write_session(
    home: Path,
    *,
    attempts: int,
    first_seen: int | None = ARMED,
    above: tuple = (),
    stream: str | None = STREAM,
) -> None:
    marker = {
        "role": "assistant",
        "content": "**Response interrupted.**",
        "timestamp": ARMED,
        "_error": True,
        "type": "interrupted",
        "_pending_journal_recovery": True,
        "_journal_retry_stream_id": stream,
        "_journal_retry_attempts": attempts,
        "_journal_retry_first_seen_ts": first_seen,
    }
    rows = [
        {"role": "user", "content": "Earlier", "timestamp": 10},
        {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
        {"role": "user", "content": "List the PRs", "timestamp": ARMED - 10},
        *above,
        marker,
    ]
    raw = {"session_id": SID, "title": "Rules", "messages": rows, "updated_at": NOW - 1000}
    path = home / "webui" / "sessions" / f"{SID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_session(load_session(raw, now=NOW, cwd=home).data))


def write_journal(home: Path, body: bytes) -> Path:
    path = home / "webui" / "sessions" / "_run_journal" / SID / f"{STREAM}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return path


def record(seq: int, event: str, payload: dict) -> bytes:
    rec = {
        "version": 1,
        "event_id": f"{STREAM}:{seq}",
        "seq": seq,
        "run_id": STREAM,
        "session_id": SID,
        "event": event,
        "type": event,
        "created_at": float(ARMED + seq),
        "terminal": event in ("done", "apperror"),
        "terminal_state": {"done": "completed", "apperror": "errored"}.get(event),
        "payload": payload,
    }
    return json.dumps(rec, separators=(",", ":")).encode() + b"\n"


def plan_at(home: Path, now: float = NOW):
    ctx = RepairContext(home=locate_home(home, env={}), clock=Clock(now, NOW - 7200), cwd=home)
    result = promote.plan(ctx, SID)
    assert result.refusal is None, result.refusal
    assert (result.action, result.session_id) == ("recover-journal", SID)
    return result


def test_an_unreadable_journal_counts_an_attempt_and_says_so(tmp_path: Path) -> None:
    """hermes counts an attempt when its reader fails (no output): the summary names the unreadable journal."""
    write_session(tmp_path, attempts=2)
    write_journal(tmp_path, b"\xff\xfe not utf-8\n")
    result = plan_at(tmp_path)
    assert result.summary == ["counts retry attempt 3 of 12: it found an unreadable journal"]


def test_the_twelfth_failed_attempt_demotes_and_names_the_row_and_the_reason(tmp_path: Path) -> None:
    """``next_attempts >= 12`` demotes instead of counting; the summary names the marker's row."""
    write_session(tmp_path, attempts=11)
    write_journal(tmp_path, record(1, "done", {}))
    assert plan_at(tmp_path).summary == [
        "demotes the marker (row 3) to the neutral wording: attempt 12 of 12 found no readable output; "
        "retry keys removed"
    ]
    write_journal(tmp_path, b"\xff\xfe not utf-8\n")
    assert plan_at(tmp_path).summary == [
        "demotes the marker (row 3) to the neutral wording: attempt 12 of 12 found an unreadable journal; "
        "retry keys removed"
    ]


def test_giving_up_with_output_waiting_warns_that_it_stays_unrecovered(tmp_path: Path) -> None:
    """Quirk 9: at the cap hermes demotes before reading the journal, even one that now holds output."""
    write_session(tmp_path, attempts=12)
    write_journal(tmp_path, record(1, "token", {"text": "Arrived late."}))
    result = plan_at(tmp_path)
    assert result.summary == [
        "demotes the marker (row 3) to the neutral wording: 12 attempts reached the cap of 12; retry keys removed"
    ]
    assert result.warnings == [
        f"the journal {STREAM}.jsonl now holds output, but hermes gives up before reading it "
        "(quirk 9): the output stays unrecovered"
    ]


GATEWAY_ERROR = {"role": "assistant", "content": "**Error:** 502", "_error": True}
APPERROR = record(
    1,
    "apperror",
    {
        "type": "error",
        "session_id": SID,
        "terminal_session_persisted": False,
        "session": {"session_id": SID, "messages": [{"role": "user", "content": "x"}, GATEWAY_ERROR]},
    },
)


def test_a_late_gateway_error_is_appended_and_the_summary_says_how(tmp_path: Path) -> None:
    """The journal ends in an unsaved apperror: its error row is appended and the marker removed."""
    write_session(tmp_path, attempts=1)
    write_journal(tmp_path, APPERROR)
    result = plan_at(tmp_path)
    assert result.result == {"hermes_return": True}
    assert result.summary[-1] == (
        "the journal ends in an unsaved gateway error: its error row is appended and the pending marker is removed"
    )


def test_a_gateway_error_already_in_the_transcript_is_named_already_present(tmp_path: Path) -> None:
    """A row tagged with the apperror's event id is already there: nothing appended, marker still removed."""
    present = {**GATEWAY_ERROR, "_recovered_from_run_journal": True, "_recovered_event_id": f"{STREAM}:1"}
    write_session(tmp_path, attempts=1, above=(present,))
    write_journal(tmp_path, APPERROR)
    result = plan_at(tmp_path)
    assert result.result == {"hermes_return": True}
    assert result.summary[-1] == (
        "the journal ends in an unsaved gateway error: its error row is already present and the pending marker "
        "is removed"
    )


def test_a_promotion_summary_says_what_moved_and_how_many_attempts_came_before(tmp_path: Path) -> None:
    """Output in the journal: the row goes above the marker, the marker takes the recovered wording."""
    write_session(tmp_path, attempts=3)
    write_journal(tmp_path, record(1, "token", {"text": "Found it."}))
    result = plan_at(tmp_path)
    assert result.result == {"hermes_return": True} and result.warnings == []
    assert result.summary == [
        "adds 1 recovered assistant row above the marker",
        "promotes the marker to the recovered wording after 3 counted attempts "
        "(fixed wording without the Evidence sentence; retry keys removed)",
    ]


def test_a_journal_record_without_a_time_gives_its_row_the_repairs_clock(tmp_path: Path) -> None:
    """A recovered row takes the record's ``created_at``, or the time of the retry when it has none."""
    write_session(tmp_path, attempts=0)
    rec = json.loads(record(1, "token", {"text": "No clock."}))
    del rec["created_at"]
    write_journal(tmp_path, json.dumps(rec).encode() + b"\n")
    result = plan_at(tmp_path, now=NOW + 42.5)
    assert result.result == {"hermes_return": True}
    sidecar = [c for c in result.changes if c.path.name == f"{SID}.json"][0]
    rows = json.loads(sidecar.after)["messages"]
    assert (rows[3]["content"], rows[3]["timestamp"]) == ("No clock.", int(NOW + 42.5))


def test_a_missing_or_empty_journal_is_still_arriving_and_the_summary_says_which(tmp_path: Path) -> None:
    """``_journal_is_still_arriving``: no file, or a 0-byte one: hermes changes nothing, keeps the budget."""
    write_session(tmp_path, attempts=2)
    missing = plan_at(tmp_path)
    assert missing.changes == [] and missing.result == {"hermes_return": False}
    assert missing.summary == [
        f"the journal {STREAM}.jsonl is not there yet: hermes changes nothing and keeps the retry budget "
        "(still arriving)"
    ]
    write_journal(tmp_path, b"")
    empty = plan_at(tmp_path)
    assert empty.changes == [] and empty.summary == [
        f"the journal {STREAM}.jsonl is empty yet: hermes changes nothing and keeps the retry budget "
        "(still arriving)"
    ]


def test_a_marker_naming_no_stream_is_demoted_with_that_reason(tmp_path: Path) -> None:
    """No ``_journal_retry_stream_id``: hermes demotes at once (nothing to read)."""
    write_session(tmp_path, attempts=0, stream=None)
    result = plan_at(tmp_path)
    assert result.result == {"hermes_return": False}
    assert result.summary == [
        "demotes the marker (row 3) to the neutral wording: the marker names no stream to retry; retry keys removed"
    ]


def test_a_marker_without_a_first_seen_time_never_ages_out(tmp_path: Path) -> None:
    """``first_seen = ... or 0`` and ``first_seen and ...``: no time recorded means no 24 h give-up."""
    for first_seen in (None, 0):
        home = tmp_path / str(first_seen)
        write_session(home, attempts=0, first_seen=first_seen)
        write_journal(home, record(1, "token", {"text": "Late but kept."}))
        assert plan_at(home, now=NOW + 10 * 86400).result == {"hermes_return": True}, first_seen


def test_the_24_hour_give_up_says_how_long_ago_the_marker_was_armed(tmp_path: Path) -> None:
    """More than 86,400 s after ``first_seen`` (and under the attempt cap): demoted, the age in whole seconds."""
    write_session(tmp_path, attempts=2)
    result = plan_at(tmp_path, now=ARMED + 86400 + 5.75)
    assert result.summary == [
        "demotes the marker (row 3) to the neutral wording: given up after 24 h (armed 86405 s ago); "
        "retry keys removed"
    ]


def scan(messages: list) -> list[str]:
    """Run hermes' backwards scan on a bare session; the journal is always 'not there yet'."""

    def read(stream_id):
        return JournalRead(stream_id, Path(f"{stream_id}.jsonl"), False, 0, [], [], None, [])

    notes = Notes()
    promote._Retry({"session_id": SID, "messages": messages}, read, Clock(NOW, NOW), notes).run()
    return notes.summary


WAITING = [
    "the journal s1.jsonl is not there yet: hermes changes nothing and keeps the retry budget (still arriving)"
]
PENDING = {"role": "assistant", "type": "interrupted", "_error": True, "_pending_journal_recovery": True}
PENDING = {**PENDING, "_journal_retry_stream_id": "s1", "_journal_retry_first_seen_ts": ARMED}


def test_the_scan_walks_every_row_back_to_the_first() -> None:
    """``range(len - 1, -1, -1)``: a marker in row 0, under a user row, or under non-dict rows is found."""
    assert scan([PENDING]) == WAITING
    assert scan([{"role": "user", "content": "u"}, PENDING, {"role": "user", "content": "again?"}]) == WAITING
    assert scan([{"role": "user", "content": "u"}, PENDING, "junk", None]) == WAITING


def test_an_empty_transcript_has_nothing_to_retry() -> None:
    assert scan([]) == ["nothing to retry: no interrupted marker waits for journal recovery"]


def test_a_transcript_without_any_marker_returns_false_and_saves_nothing(tmp_path: Path) -> None:
    """hermes returns False without saving when the scan reaches the top without a marker."""
    path = tmp_path / "webui" / "sessions" / f"{SID}.json"
    path.parent.mkdir(parents=True)
    raw = {"session_id": SID, "title": "t", "messages": [{"role": "user", "content": "u"}], "updated_at": NOW}
    path.write_bytes(dump_session(load_session(raw, now=NOW, cwd=tmp_path).data))
    result = plan_at(tmp_path)
    assert result.result == {"hermes_return": False} and result.changes == []
    assert result.summary == ["nothing to retry: no interrupted marker waits for journal recovery"]


def test_a_pending_marker_without_the_error_flag_is_not_a_normal_reply() -> None:
    """The stop rule is an assistant row without ``_error`` AND without ``_pending_journal_recovery``."""
    marker = {k: v for k, v in PENDING.items() if k != "_error"}
    assert scan([{"role": "user", "content": "u"}, marker]) == WAITING
    reply = {"role": "assistant", "content": "done"}
    assert scan([PENDING, reply]) == [
        "nothing to retry: row 1 is a normal assistant reply newer than any pending marker"
    ]


# ------------------------------------------------------------ plan: what hermes catches, what it drops


def edit_sidecar(home: Path, change) -> None:
    """Rewrite the sidecar's JSON after ``change(raw)`` (keys hermes' load keeps or ignores)."""
    path = home / "webui" / "sessions" / f"{SID}.json"
    raw = json.loads(path.read_bytes())
    change(raw)
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")


def test_an_error_inside_the_retry_is_caught_and_nothing_is_written(tmp_path: Path) -> None:
    """hermes wraps the whole retry in ``try/except Exception`` and returns False without saving.

    ``int(msg.get('_journal_retry_attempts') or 0)`` raises on ``"many"`` before anything is read.
    """
    write_session(tmp_path, attempts=0)
    write_journal(tmp_path, record(1, "token", {"text": "Never read."}))
    edit_sidecar(tmp_path, lambda raw: raw["messages"][-1].update(_journal_retry_attempts="many"))
    ctx = RepairContext(home=locate_home(tmp_path, env={}), clock=Clock(NOW, NOW - 7200), cwd=tmp_path)
    result = promote.plan(ctx, SID)
    error = "ValueError: invalid literal for int() with base 10: 'many'"
    assert result.refusal is None and result.changes == []
    assert result.summary == [
        f"hermes' retry fails on this session ({error}); it catches the error and writes nothing"
    ]
    assert result.warnings == []
    assert result.result == {"hermes_return": False, "hermes_error": error}


def test_unknown_keys_are_named_when_the_retry_saves(tmp_path: Path) -> None:
    """``Session.save`` writes only the keys it knows: a save by the retry drops the others, in file order."""
    write_session(tmp_path, attempts=2)
    write_journal(tmp_path, record(1, "done", {}))
    edit_sidecar(tmp_path, lambda raw: raw.update(legacy_flag=True, zz_note="kept by nobody"))
    result = plan_at(tmp_path)
    assert result.summary == ["counts retry attempt 3 of 12: it found no readable output"]
    assert result.warnings == ["hermes' save drops keys it does not know: legacy_flag, zz_note"]
    sidecar = [c for c in result.changes if c.path.name == f"{SID}.json"][0]
    saved = json.loads(sidecar.after)
    assert "legacy_flag" not in saved and "zz_note" not in saved


def test_unknown_keys_are_not_named_when_the_retry_does_not_save(tmp_path: Path) -> None:
    """A journal still arriving: hermes saves nothing, so nothing is dropped."""
    write_session(tmp_path, attempts=2)
    edit_sidecar(tmp_path, lambda raw: raw.update(legacy_flag=True))
    result = plan_at(tmp_path)
    assert result.changes == [] and result.warnings == []


def test_a_save_hermes_own_index_rebuild_would_fail_on_is_refused(tmp_path: Path) -> None:
    """No index and another sidecar whose ``updated_at`` is text: hermes' rebuild inside the save
    sorts text against numbers and raises; the inspector refuses rather than write half a save."""
    write_session(tmp_path, attempts=2)
    write_journal(tmp_path, b"\xff\xfe not utf-8\n")
    other = {"session_id": "other_sid", "title": "o", "messages": [{"role": "user", "content": "u"}]}
    other["updated_at"] = "yesterday"
    (tmp_path / "webui" / "sessions" / "other_sid.json").write_text(json.dumps(other), encoding="utf-8")
    ctx = RepairContext(home=locate_home(tmp_path, env={}), clock=Clock(NOW, NOW - 7200), cwd=tmp_path)
    result = promote.plan(ctx, SID)
    assert result.refusal == (
        "the session cannot be saved as hermes would save it (IndexRebuildError: a sidecar's updated_at "
        "cannot be sorted with the others (hermes' index sort by updated_at fails: '<' not supported "
        "between instances of 'str' and 'float'))"
    )
