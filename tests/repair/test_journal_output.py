"""The shared journal-recovery machinery, unit by unit (spec §3.2, §3.7-§3.9, §3.11).

Many cases are ported from hermes-webui's ``test_issue3929_partial_work_recovery.py``
(reasoning handling, context projection, idempotency, segment identity),
``test_issue3875_recovery_anchor_dedup.py`` (one empty anchor per stream),
``test_recovered_journal_context.py`` and ``TestJournalToolDedupeScoping``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.plan import Clock
from inspector.repair.gateway_error import detect_gateway_terminal_error, materialize_gateway_terminal_error
from inspector.repair.journal_read import JournalRead, journal_has_visible_output, read_journal
from inspector.repair.journal_recovery import append_journaled_partial_output, tool_card_present
from inspector.repair.marker import (
    CAUSE_EVIDENCE,
    MARKER_HEAD,
    NEUTRAL_WORDING,
    RECOVERED_WORDING,
    classify_cause,
    interrupted_marker,
    marker_with_retry_hook,
)
from inspector.repair.model_context import (
    append_to_context,
    checkpoint_match,
    context_projection,
    normalize,
    text_match,
)
from inspector.repair.pending_turn import append_recovered_pending_turn, wakeup_display_meta
from inspector.store.files import FileSnapshot
from inspector.store.sidecar import load_session

SID = "partial_work"
S = "stream_partial_work"
NOW = 1_800_000_000.0


def line(
    seq, event: str, payload: dict | None = None, *, created_at: float = 1000.0, sid: str = SID, run: str = S
) -> bytes:
    """One record as hermes' append_run_event writes it."""
    terminal = {
        "done": "completed",
        "stream_end": "completed",
        "cancel": "interrupted-by-user",
        "apperror": "errored",
        "error": "errored",
    }.get(event)
    obj = {
        "version": 1,
        "event_id": f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": sid,
        "event": event,
        "type": event,
        "created_at": float(created_at),
        "terminal": terminal is not None,
        "terminal_state": terminal,
        "payload": payload if payload is not None else {},
    }
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class Journal:
    """A run journal in a temp sessions folder, appended like hermes does."""

    def __init__(self, session_dir: Path, sid: str = SID, run: str = S):
        self.session_dir, self.sid, self.run = session_dir, sid, run
        self.path = session_dir / "_run_journal" / sid / f"{run}.jsonl"
        self.seq = 0

    def append(self, event: str, payload: dict | None = None, **kw) -> Journal:
        self.seq += 1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as fh:
            fh.write(line(self.seq, event, payload, sid=self.sid, run=self.run, **kw))
        return self

    def read(self) -> JournalRead:
        return read_journal(FileSnapshot(), self.session_dir, self.sid, self.run)


@pytest.fixture()
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path)


def make_session(messages: list, **fields) -> dict:
    """A session dict as the sidecar codec loads it."""
    raw = {"session_id": SID, "messages": messages, **fields}
    return load_session(json.loads(json.dumps(raw)), now=NOW, cwd=Path("/")).data


def materialize(session: dict, journal: Journal, *, dedupe: bool = True):
    return append_journaled_partial_output(session, journal.run, journal.read(), dedupe=dedupe, now=NOW)


# ---------------------------------------------------------------- matching


def test_normalize_collapses_unicode_whitespace() -> None:
    assert normalize("  a\u00a0\tb\n\nc ") == "a b c"
    assert normalize(None) == "" and normalize(0) == "" and normalize(5) == "5"


def test_checkpoint_match_needs_text_timestamp_source_and_attachments() -> None:
    row = {"role": "user", "content": "Hi  there", "timestamp": 100.9, "attachments": [{"n": 1}]}
    assert checkpoint_match(row, "Hi there", 100, None, [{"n": 1}])
    assert checkpoint_match(row, "Hi there", "100", "webui", [{"n": 1}])
    assert not checkpoint_match(row, "Hi there", 101, None, [{"n": 1}])
    assert not checkpoint_match(row, "Hi there", 100, "fork", [{"n": 1}])
    assert not checkpoint_match(row, "Hi there", 100, None, [])
    assert not checkpoint_match({**row, "timestamp": None}, "Hi there", 100, None, [{"n": 1}])
    assert not checkpoint_match({**row, "role": "assistant"}, "Hi there", 100, None, [{"n": 1}])
    assert text_match(row, "Hi\nthere") and not text_match(row, "Hi")


# ---------------------------------------------------------------- context projection


def test_projection_drops_reasoning_errors_and_empty_rows() -> None:
    assert context_projection({"role": "assistant", "content": "x", "reasoning": "r"}) == {
        "role": "assistant",
        "content": "x",
    }
    assert context_projection({"role": "assistant", "content": "x", "_error": True}) is None
    assert context_projection({"role": "assistant", "content": "  "}) is None
    assert context_projection({"role": "tool", "content": "", "tool_call_id": "c"}) is not None


def test_projection_of_reasoning_only_structured_content() -> None:
    parts = [{"type": "reasoning", "reasoning": "think"}]
    assert context_projection({"role": "assistant", "content": parts}) is None
    calls = [{"id": "c1"}]
    assert context_projection({"role": "assistant", "content": parts, "tool_calls": calls}) == {
        "role": "assistant",
        "content": "",
        "tool_calls": calls,
    }


def test_empty_context_is_seeded_from_every_message_without_dedupe() -> None:
    session = make_session(
        [
            {"role": "user", "content": "First check"},
            {"role": "assistant", "content": "Same status."},
            {"role": "user", "content": "Second check"},
            {"role": "assistant", "content": "Same status."},
        ]
    )
    append_to_context(session, {"role": "assistant", "content": "Same status."})
    assert [m["content"] for m in session["context_messages"]] == [
        "First check",
        "Same status.",
        "Second check",
        "Same status.",
    ]


def test_context_skips_rows_already_among_the_last_eight() -> None:
    session = make_session([], context_messages=[{"role": "assistant", "content": "done  here"}])
    append_to_context(session, {"role": "assistant", "content": "done here", "timestamp": 5})
    assert len(session["context_messages"]) == 1
    append_to_context(session, {"role": "user", "content": "done here", "timestamp": 5})
    assert len(session["context_messages"]) == 2


# ---------------------------------------------------------------- marker


@pytest.mark.parametrize(
    ("started", "server", "stream", "cause"),
    [
        (100.0, 200.0, "s", "process_restart"),
        (300.0, 200.0, "s", "lost_worker_bookkeeping"),
        (None, 200.0, "s", "lost_worker_bookkeeping"),
        ("not a number", 200.0, None, "unknown"),
        (300.0, 200.0, None, "unknown"),
        ("150", 200.0, None, "process_restart"),
    ],
)
def test_cause_classification(started, server, stream, cause) -> None:
    assert classify_cause(stream, started, server) == cause


def test_markers_never_claim_a_restart_as_fact_or_a_draft() -> None:
    clock = Clock(NOW, NOW)
    for kwargs in ({"recovered_output": True}, {"pending_retry": True}, {}):
        marker = interrupted_marker(clock, stream_id="s", pending_started_at=NOW - 5, **kwargs)
        assert "Response interrupted" in marker["content"]
        assert "before this turn finished" in marker["content"]
        assert "preserved as a draft" not in marker["content"]
        assert "process restarted" not in marker["content"].lower()
        assert list(marker)[:6] == ["role", "content", "timestamp", "_error", "type", "interruption_cause"]


def test_marker_wordings() -> None:
    clock = Clock(NOW, NOW + 10)
    restart = interrupted_marker(clock, recovered_output=True, stream_id="s", pending_started_at=NOW - 1)
    assert restart["content"] == (
        MARKER_HEAD + CAUSE_EVIDENCE["process_restart"] + " The partial output above "
        "was recovered from the run journal, but the interrupted agent process could "
        "not continue."
    )
    assert RECOVERED_WORDING.endswith("could not continue.") and "Evidence" not in RECOVERED_WORDING
    assert NEUTRAL_WORDING.endswith("Partial output may have been lost.")


def test_retry_hook_variants() -> None:
    clock = Clock(NOW + 0.7, NOW)
    armed = marker_with_retry_hook(clock, recovered_output=False, stream_id="s1", pending_started_at=NOW + 1)
    assert armed["_pending_journal_recovery"] is True and armed["_journal_retry_stream_id"] == "s1"
    assert armed["_journal_retry_attempts"] == 0 and armed["_journal_retry_first_seen_ts"] == int(NOW)
    assert "\u2014 reload this session to retry." in armed["content"]
    assert armed["interruption_cause"] == "lost_worker_bookkeeping"
    plain = marker_with_retry_hook(clock, recovered_output=False, stream_id=None, pending_started_at=NOW + 1)
    assert "_pending_journal_recovery" not in plain and plain["interruption_cause"] == "unknown"
    assert plain["content"].endswith("no agent output was recovered.")
    done = marker_with_retry_hook(clock, recovered_output=True, stream_id="s1", pending_started_at=None)
    assert "_journal_retry_stream_id" not in done and "recovered from the run journal" in done["content"]


# ---------------------------------------------------------------- recovered user turn


def test_recovered_turn_key_order_source_and_attachments() -> None:
    session = make_session(
        [{"role": "user", "content": "x", "timestamp": 1}],
        pending_user_message="Go",
        pending_user_source="fork",
        pending_attachments=[{"name": "a.png"}],
        truncation_watermark=5.5,
    )
    row = append_recovered_pending_turn(session, timestamp=42)
    assert list(row) == ["role", "content", "timestamp", "_recovered", "_source", "attachments"]
    assert row["attachments"] == [{"name": "a.png"}] and session["truncation_watermark"] == 42
    assert session["context_messages"][-1]["content"] == "Go"


def test_wakeup_meta_is_derived_from_the_completion_prompt() -> None:
    text = "[IMPORTANT: Background process proc_1 completed (exit_code=2).\nCommand: make\nOutput:\nboom"
    assert wakeup_display_meta(text) == {
        "type": "completion",
        "task_id": "proc_1",
        "command": "make",
        "exit_code": 2,
    }
    watch = (
        '[IMPORTANT: Background process p matched watch pattern "ERR.*".\nCommand: tail\nMatched output:\n'
    )
    assert wakeup_display_meta(watch)["pattern"] == "ERR.*"
    assert wakeup_display_meta("hello") is None


# ---------------------------------------------------------------- materialization


def test_tokens_merge_and_tools_become_cards(journal: Journal) -> None:
    journal.append("token", {"text": "  Hello"}, created_at=1001.5).append("token", {"text": " world  "})
    journal.append("token", {"text": "!"})
    journal.append(
        "tool",
        {
            "name": "terminal",
            "preview": "ls",
            "args": {"timeout": 60, "flag": True, "none": None, "items": [1, "a"], "extra": "dropped"},
        },
    )
    journal.append(
        "tool_complete", {"name": "terminal", "preview": "a b", "duration": 1.2, "is_error": "false"}
    )
    session = make_session([{"role": "user", "content": "q"}])
    report = materialize(session, journal, dedupe=False)
    assert report.recovered
    row = session["messages"][1]
    assert row == {
        "role": "assistant",
        "content": "Hello world  !",
        "timestamp": 1001,
        "_recovered_from_run_journal": True,
        "_recovered_stream_id": S,
    }
    (card,) = session["tool_calls"]
    assert card["args"] == {"timeout": "60", "flag": "True", "none": "None", "items": "[1, 'a']"}
    assert card["tid"] == "journal-4" and card["assistant_msg_idx"] == 1
    assert (card["preview"], card["snippet"], card["done"], card["duration"], card["is_error"]) == (
        "a b",
        "a b",
        True,
        1.2,
        True,
    )  # "false" is truthy in hermes
    assert report.truthy_is_error == [("terminal", "false")]


def test_long_tool_args_are_cut_at_120_code_points(journal: Journal) -> None:
    journal.append("tool", {"name": "w", "args": {"content": "é" * 130}})
    session = make_session([{"role": "user", "content": "q"}])
    materialize(session, journal)
    assert session["tool_calls"][0]["args"]["content"] == "é" * 120 + "..."


def test_reasoning_only_journal_is_display_metadata(journal: Journal) -> None:
    journal.append("reasoning", {"text": "Display-only Thinking."})
    session = make_session([{"role": "user", "content": "Continue", "timestamp": 1234}])
    assert materialize(session, journal).recovered
    assert (
        session["messages"][-1]["content"] == ""
        and session["messages"][-1]["reasoning"] == "Display-only Thinking."
    )
    assert [m["content"] for m in session["context_messages"]] == ["Continue"]
    assert "Display-only" not in json.dumps(session["context_messages"])


def test_reasoning_is_attached_to_matching_text_once(journal: Journal) -> None:
    text = "The visible partial was already restored."
    journal.append("reasoning", {"text": "Backfill once."}).append("token", {"text": text})
    session = make_session(
        [{"role": "user", "content": "Continue"}, {"role": "assistant", "content": text}],
        context_messages=[{"role": "user", "content": "Continue"}, {"role": "assistant", "content": text}],
    )
    assert materialize(session, journal).recovered
    assert not materialize(session, journal).recovered
    rows = [m for m in session["messages"] if m.get("content") == text]
    assert len(rows) == 1 and rows[0]["reasoning"] == "Backfill once."
    assert "Backfill once" not in json.dumps(session["context_messages"])


def test_reasoning_never_claims_text_from_a_prior_turn(journal: Journal) -> None:
    text = "The same sufficiently long partial output appears again."
    journal.append("reasoning", {"text": "Current turn only."}).append("token", {"text": text})
    session = make_session(
        [
            {"role": "user", "content": "Earlier"},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "Current"},
        ]
    )
    assert materialize(session, journal).recovered
    assert "reasoning" not in session["messages"][1]
    assert [m.get("reasoning") for m in session["messages"][3:]] == ["Current turn only."]


def test_repeated_prompt_uses_the_checkpoint_owner(journal: Journal) -> None:
    text = "The same sufficiently long recovered answer appears."
    journal.append("reasoning", {"text": "Second Continue turn."}).append("token", {"text": text})
    session = make_session(
        [
            {"role": "user", "content": "Continue", "timestamp": 1000},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "Continue", "timestamp": 2000, "_recovered": True},
        ],
        pending_user_message="Continue",
        pending_started_at=2000,
    )
    materialize(session, journal)
    assert "reasoning" not in session["messages"][1]
    assert session["messages"][3]["reasoning"] == "Second Continue turn."


def test_core_row_before_recovered_owner_echo_receives_reasoning(journal: Journal) -> None:
    text = "The core transcript already contains this partial output."
    journal.append("reasoning", {"text": "Attach here."}).append("token", {"text": text})
    session = make_session(
        [
            {"role": "user", "content": "Current request", "timestamp": 3000},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "Current request", "timestamp": 3000, "_recovered": True},
        ],
        pending_user_message="Current request",
        pending_started_at=3000,
    )
    assert materialize(session, journal).recovered
    assert session["messages"][1]["reasoning"] == "Attach here."
    assert len([m for m in session["messages"] if m.get("content") == text]) == 1


def test_reasoning_only_rows_are_idempotent_and_host_later_tools(journal: Journal) -> None:
    journal.append("reasoning", {"text": "Inspect the first boundary."})
    session = make_session([{"role": "user", "content": "Keep checking"}])
    assert materialize(session, journal).recovered
    assert not materialize(session, journal).recovered
    journal.append("tool", {"name": "terminal", "preview": "next"})
    assert materialize(session, journal).recovered
    assert len([m for m in session["messages"] if m.get("reasoning")]) == 1
    assert session["tool_calls"][0]["assistant_msg_idx"] == 1


def test_identical_segments_split_by_a_tool_stay_distinct(journal: Journal) -> None:
    text = "The same sufficiently long process update appears twice."
    journal.append("reasoning", {"text": "First."}).append("token", {"text": text})
    journal.append("tool", {"name": "terminal", "preview": "split"}).append(
        "tool_complete", {"name": "terminal"}
    )
    journal.append("reasoning", {"text": "Second."}).append("token", {"text": text})
    session = make_session([{"role": "user", "content": "Check twice"}])
    assert materialize(session, journal).recovered
    assert not materialize(session, journal).recovered
    assert [m.get("reasoning") for m in session["messages"] if m.get("content") == text] == [
        "First.",
        "Second.",
    ]


def test_consecutive_tools_share_one_anchor_and_tool_first_reuses_it(journal: Journal) -> None:
    journal.append("tool", {"name": "a", "preview": "1"}).append("tool", {"name": "b", "preview": "2"})
    session = make_session([{"role": "user", "content": "go"}])
    for _ in range(20):
        materialize(session, journal)
    anchors = [m for m in session["messages"] if m.get("_recovered_from_run_journal") and not m["content"]]
    assert len(anchors) == 1
    assert {c["assistant_msg_idx"] for c in session["tool_calls"]} == {1}
    assert session["context_messages"] == []  # anchors never enter (or seed) the model context


def test_distinct_streams_get_distinct_anchors(tmp_path: Path) -> None:
    session = make_session([{"role": "user", "content": "go"}])
    for run in ("run_one", "run_two"):
        j = Journal(tmp_path, run=run).append("tool", {"name": "t", "preview": run})
        append_journaled_partial_output(session, run, j.read(), dedupe=True, now=NOW)
    assert [m["_recovered_stream_id"] for m in session["messages"][1:]] == ["run_one", "run_two"]


def test_tool_before_reasoning_keeps_its_own_anchor(journal: Journal) -> None:
    journal.append("tool", {"name": "terminal", "preview": "first"})
    session = make_session(
        [
            {"role": "user", "content": "Keep checking"},
            {
                "role": "assistant",
                "content": "",
                "_recovered_from_run_journal": True,
                "_recovered_stream_id": S,
            },
            {
                "role": "assistant",
                "content": "",
                "reasoning": "Later.",
                "_recovered_from_run_journal": True,
                "_recovered_stream_id": S,
            },
        ]
    )
    assert materialize(session, journal).recovered
    assert session["tool_calls"][0]["assistant_msg_idx"] == 1 and "reasoning" not in session["messages"][1]


def test_tool_dedupe_is_scoped_by_stream() -> None:
    session = make_session(
        [],
        tool_calls=[
            {"name": "terminal", "preview": "ls  -la", "_recovered_stream_id": "other"},
            {"name": "read", "snippet": "a.txt"},
        ],
    )
    assert not tool_card_present(session, "terminal", "ls -la", S)
    assert tool_card_present(session, "terminal", "ls -la", "other")
    assert tool_card_present(session, "read", "a.txt", S)  # untagged cards block recovery


def test_session_wide_text_dedupe_swallows_short_common_replies(journal: Journal) -> None:
    journal.append("token", {"text": "Done."})
    session = make_session(
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "b"},
        ]
    )
    report = materialize(session, journal)
    assert not report.recovered and len(session["messages"]) == 3
    assert report.earlier_turn_matches == [(1, "Done.")]


def test_dedupe_back_fills_a_missing_context_row(journal: Journal) -> None:
    journal.append("token", {"text": "Recovered answer text."})
    session = make_session(
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "Recovered answer text."}],
        context_messages=[{"role": "user", "content": "q"}],
    )
    assert not materialize(session, journal).recovered
    assert [m["content"] for m in session["context_messages"]] == ["q", "Recovered answer text."]


def test_interim_assistant_ends_a_row(journal: Journal) -> None:
    journal.append("token", {"text": "Part one"}).append("interim_assistant", {"text": " note "})
    journal.append("interim_assistant", {"text": "streamed", "already_streamed": True})
    journal.append("token", {"text": "Part two"})
    session = make_session([{"role": "user", "content": "q"}])
    materialize(session, journal, dedupe=False)
    assert [m["content"] for m in session["messages"][1:]] == ["Part one\n\nnote", "Part two"]


def test_whitespace_tokens_are_visible_but_produce_no_row(journal: Journal) -> None:
    journal.append("token", {"text": "   "})
    assert journal_has_visible_output(journal.read())
    session = make_session([{"role": "user", "content": "q"}])
    report = materialize(session, journal)
    assert not report.recovered and report.whitespace_tokens == 1


def test_unreadable_journal_recovers_nothing(journal: Journal) -> None:
    journal.append("token", {"text": "é"})
    journal.path.write_bytes(journal.path.read_bytes()[:-5])  # cuts é in half
    read = journal.read()
    assert read.error and not journal_has_visible_output(read)
    assert not materialize(make_session([{"role": "user", "content": "q"}]), journal).recovered


def test_invalid_stream_id_reads_as_an_error(tmp_path: Path) -> None:
    assert read_journal(FileSnapshot(), tmp_path, SID, "../x").error == "invalid run_id"
    assert read_journal(FileSnapshot(), tmp_path, SID, None).error == "no stream id"


def test_a_stream_id_that_is_not_text_names_the_journal_hermes_reads(tmp_path: Path) -> None:
    """Rule (hermes' ``_validate_id`` reads ``str(value)``): a stream id stored as a number (a
    hand-edited sidecar; hermes writes text) names the journal of its text, 12345 ->
    ``12345.jsonl`` and 1.5 -> ``1.5.jsonl``, and the rows recovered from it carry the id as it
    was stored; one whose text hermes refuses (a list) is an invalid run id."""
    Journal(tmp_path, run="12345").append("token", {"text": "partial answer"})
    read = read_journal(FileSnapshot(), tmp_path, SID, 12345)
    assert (read.error, read.path, read.stream_id) == (
        None,
        tmp_path / "_run_journal" / SID / "12345.jsonl",
        12345,
    )
    assert [e["payload"] for e in read.events] == [{"text": "partial answer"}]
    session = make_session([{"role": "user", "content": "q", "timestamp": 1}])
    assert append_journaled_partial_output(session, 12345, read, dedupe=True, now=NOW).recovered
    assert session["messages"][-1]["content"] == "partial answer"
    assert session["messages"][-1]["_recovered_stream_id"] == 12345

    Journal(tmp_path, run="1.5").append("token", {"text": "x"})
    assert len(read_journal(FileSnapshot(), tmp_path, SID, 1.5).events) == 1
    assert read_journal(FileSnapshot(), tmp_path, SID, ["12345"]).error == "invalid run_id"


# ---------------------------------------------------------------- gateway terminal error


def _apperror(session_messages: list, **payload) -> dict:
    body = {
        "message": "boom",
        "type": "error",
        "session_id": SID,
        "session": {"session_id": SID, "messages": session_messages},
        "terminal_session_persisted": False,
    }
    body.update(payload)
    return body


ERROR_ROW = {"role": "assistant", "content": "**Error:** 502", "_error": True}
USER_Q = {"role": "user", "content": "q"}  # the turn the error ends (hermes needs a user row)


def test_gateway_error_is_detected_and_appended(journal: Journal) -> None:
    journal.append("token", {"text": "partial"}).append(
        "apperror", _apperror([{"role": "user", "content": "q"}, ERROR_ROW])
    )
    found = detect_gateway_terminal_error(SID, S, journal.read())
    assert found is not None and found.event_id == f"{S}:2"
    session = make_session([{"role": "user", "content": "q"}])
    assert materialize_gateway_terminal_error(session, found) == "appended"
    assert session["messages"][-1] == {
        **ERROR_ROW,
        "_recovered_from_run_journal": True,
        "_recovered_stream_id": S,
        "_recovered_event_id": f"{S}:2",
    }
    assert materialize_gateway_terminal_error(session, found) == "present"


def test_gateway_error_tags_an_identical_row_of_the_current_turn(journal: Journal) -> None:
    journal.append("apperror", _apperror([{"role": "user", "content": "q"}, ERROR_ROW]))
    session = make_session([{"role": "user", "content": "q"}, dict(ERROR_ROW)], pending_user_message="q")
    assert (
        materialize_gateway_terminal_error(session, detect_gateway_terminal_error(SID, S, journal.read()))
        == "tagged"
    )
    assert session["messages"][1]["_recovered_event_id"] == f"{S}:1"
    assert len(session["messages"]) == 2


@pytest.mark.parametrize(
    "change",
    [
        {"session_id": "other"},
        {"session": {"session_id": "other", "messages": [ERROR_ROW]}},
        {"session": "not an object"},
        {"terminal_session_persisted": True, "terminal_session_persisted_session_id": SID},
        {"session": {"session_id": SID, "messages": [{"role": "user", "content": "q"}]}},
        {"session": {"session_id": SID, "messages": [USER_Q, {**ERROR_ROW, "_error": 1}]}},
        {"session": {"session_id": SID, "messages": [USER_Q, {**ERROR_ROW, "content": ""}]}},
    ],
)
def test_gateway_error_rejects_foreign_or_malformed_identity(journal: Journal, change: dict) -> None:
    journal.append("apperror", _apperror([USER_Q, ERROR_ROW], **change))
    assert detect_gateway_terminal_error(SID, S, journal.read()) is None


def test_gateway_error_must_own_the_run(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.path.parent.mkdir(parents=True)
    j.path.write_bytes(line(1, "apperror", _apperror([USER_Q, ERROR_ROW]), run="someone_else"))
    assert detect_gateway_terminal_error(SID, S, j.read()) is None


@pytest.mark.parametrize(
    ("later", "found"), [("done", False), ("cancel", False), ("stream_end", True), ("token", True)]
)
def test_gateway_error_uses_the_authoritative_terminal_event(
    journal: Journal, later: str, found: bool
) -> None:
    journal.append("apperror", _apperror([USER_Q, ERROR_ROW])).append(later, {"text": "x"})
    assert (detect_gateway_terminal_error(SID, S, journal.read()) is not None) is found


# ---------------------------------------------------------------- properties

_payload = st.dictionaries(
    st.sampled_from(
        [
            "text",
            "name",
            "preview",
            "args",
            "duration",
            "is_error",
            "already_streamed",
            "reasoning",
            "thinking",
        ]
    ),
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.text(max_size=6),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    ),
    max_size=4,
)
_event = st.tuples(
    st.sampled_from(
        [
            "token",
            "reasoning",
            "interim_assistant",
            "tool",
            "tool_complete",
            "done",
            "stream_end",
            "apperror",
            "metering",
        ]
    ),
    _payload,
)
_row = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "tool"]),
            "content": st.one_of(st.text(max_size=8), st.none()),
        },
        optional={
            "_error": st.booleans(),
            "reasoning": st.text(max_size=4),
            "_recovered_from_run_journal": st.booleans(),
            "_recovered_stream_id": st.sampled_from([S, "x"]),
            "timestamp": st.integers(0, 3),
        },
    ),
    st.integers(),
    st.none(),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_event, max_size=8), st.lists(_row, max_size=5), st.booleans())
def test_materialization_never_fails_and_is_idempotent_in_size(
    tmp_path_factory, events, rows, dedupe
) -> None:
    j = Journal(tmp_path_factory.mktemp("j"))
    for name, payload in events:
        j.append(name, payload)
    session = make_session(rows)
    before = len(session["messages"])
    append_journaled_partial_output(session, S, j.read(), dedupe=dedupe, now=NOW)
    assert len(session["messages"]) >= before
    assert all(isinstance(c, dict) for c in session["tool_calls"])


def test_repeated_dedupe_runs_duplicate_cards_whose_preview_was_replaced(journal: Journal) -> None:
    journal.append("tool", {"name": "terminal", "preview": "ls"})
    journal.append("tool_complete", {"name": "terminal", "preview": "a.txt b.txt"})
    session = make_session([{"role": "user", "content": "q"}])
    for _ in range(3):
        report = materialize(session, journal)
    assert len(session["tool_calls"]) == 3  # quirk 2: hermes compares the tool event's original preview
    assert report.duplicate_cards == ["terminal"]
    assert {c["assistant_msg_idx"] for c in session["tool_calls"]} == {1}  # the anchor is reused
