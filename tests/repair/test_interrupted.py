"""Action ``repair-interrupted`` (hermes' ``_apply_core_sync_or_error_marker``), through the planner.

Ported behaviours: the repair trigger and bail-outs, the recovered user turn and pending
clearing (``TestDraftRecovery``, ``TestEmptyMessagesGuard``, ``TestCoreSyncMetadata``,
``test_process_wakeup_synthetic``), marker shape and wording (``TestInterruptedRecoveryMarker``
and the cause tests of ``test_session_lost_response_regression``), journal materialization
before the marker, the completed-journal branch and gateway terminal errors.
Each test builds a small Hermes home with the sidecar codec and plans against it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.home import locate_home
from inspector.plan import Clock, WriteLog, apply_plan
from inspector.repair import interrupted
from inspector.repair.context import RepairContext
from inspector.store.files import read_raw
from inspector.store.sidecar import dump_session, load_session, read_sidecar

SID = "stale_sid"
S = "stream_1"
NOW = 1_779_500_000.0
STARTED = NOW - 3600  # the WebUI process started an hour ago


# ---------------------------------------------------------------- a small Hermes home


def write_sidecar(home: Path, raw: dict) -> Path:
    data = load_session(json.loads(json.dumps(raw)), now=NOW, cwd=home).data
    path = home / "webui" / "sessions" / f"{raw['session_id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_session(data))
    return path


def stale(messages: list | None = None, **fields) -> dict:
    """A session whose stream died with a pending user turn."""
    raw = {
        "session_id": SID,
        "title": "Test Session",
        "messages": messages or [],
        "pending_user_message": "Hello hermes",
        "active_stream_id": S,
        "pending_attachments": [],
        "pending_started_at": NOW - 120,
    }
    raw.update(fields)
    return raw


def write_journal(home: Path, events: list[tuple[str, dict]], *, sid: str = SID, run: str = S) -> Path:
    """The run journal as hermes' append_run_event writes it."""
    path = home / "webui" / "sessions" / "_run_journal" / sid / f"{run}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    out = b""
    for seq, (event, payload) in enumerate(events, start=1):
        terminal = {
            "done": "completed",
            "stream_end": "completed",
            "cancel": "interrupted-by-user",
            "apperror": "errored",
            "error": "errored",
        }.get(event)
        rec = {
            "version": 1,
            "event_id": f"{run}:{seq}",
            "seq": seq,
            "run_id": run,
            "session_id": sid,
            "event": event,
            "type": event,
            "created_at": NOW - 100 + seq,
            "terminal": terminal is not None,
            "terminal_state": terminal,
            "payload": payload,
        }
        out += json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(out)
    return path


def write_core(home: Path, messages: list, *, profile: str | None = None, **extra) -> Path:
    base = home if profile is None else home / "profiles" / profile
    path = base / "sessions" / f"session_{SID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"messages": messages, **extra}), encoding="utf-8")
    return path


def ctx_for(home: Path, *, now: float = NOW, started: float = STARTED) -> RepairContext:
    return RepairContext(home=locate_home(home, env={}), clock=Clock(now, started), cwd=home)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / "webui" / "sessions").mkdir(parents=True)
    return path


def repair(home: Path, tmp_path: Path, sid: str = SID, **clock) -> tuple[object, dict]:
    """Plan, apply, and return (plan, the sidecar as it is now on disk)."""
    plan = interrupted.plan(ctx_for(home, **clock), sid)
    if plan.changes:
        apply_plan(plan, WriteLog(tmp_path / "log"))
    data = read_sidecar(read_raw(home / "webui" / "sessions" / f"{sid}.json"), now=NOW, cwd=home).data
    return plan, data


def markers(data: dict) -> list[dict]:
    return [m for m in data["messages"] if m.get("type") == "interrupted"]


# ---------------------------------------------------------------- trigger and refusals


def test_no_pending_message_is_a_noop(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale([{"role": "user", "content": "hi"}], pending_user_message=None))
    plan, _ = repair(home, tmp_path)
    assert plan.changes == [] and plan.refusal is None
    assert plan.result == {"hermes_return": False}
    assert "no pending user message" in plan.summary[0]


@pytest.mark.parametrize("bad", ["../etc", "a.b", "", "x y"])
def test_unsafe_session_ids_are_refused(home: Path, bad: str) -> None:
    assert "unsafe session id" in interrupted.plan(ctx_for(home), bad).refusal


def test_missing_or_broken_sidecars_are_refused(home: Path) -> None:
    assert "no sidecar" in interrupted.plan(ctx_for(home), "nobody").refusal
    (home / "webui" / "sessions" / "torn.json").write_bytes(b'{"session_id": "torn", "mess')
    assert "cannot be loaded" in interrupted.plan(ctx_for(home), "torn").refusal


def test_sidecar_naming_another_session_is_refused(home: Path) -> None:
    path = write_sidecar(home, stale())
    path.rename(path.with_name("renamed.json"))
    assert "names session 'stale_sid'" in interrupted.plan(ctx_for(home), "renamed").refusal
    raw = stale()
    raw["session_id"] = None
    (home / "webui" / "sessions" / "anon.json").write_text(json.dumps(raw))
    assert "no session_id" in interrupted.plan(ctx_for(home), "anon").refusal


# ---------------------------------------------------------------- branch C: empty, no core transcript


def test_pending_message_is_recovered_as_a_user_turn(home: Path, tmp_path: Path) -> None:
    started = NOW - 60.7
    write_sidecar(
        home,
        stale(
            pending_user_message="My important question",
            pending_started_at=started,
            pending_attachments=[{"type": "image", "name": "photo.png"}],
        ),
    )
    plan, data = repair(home, tmp_path)
    assert plan.result == {"hermes_return": True}
    (user,) = [m for m in data["messages"] if m["role"] == "user"]
    assert user == {
        "role": "user",
        "content": "My important question",
        "timestamp": int(started),
        "_recovered": True,
        "attachments": [{"type": "image", "name": "photo.png"}],
    }
    assert data["context_messages"] == [user]


def test_pending_fields_are_cleared_including_the_source(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(pending_user_source="process_wakeup", pending_attachments=[{"name": "a"}]))
    _, data = repair(home, tmp_path)
    assert (
        data["pending_user_message"],
        data["pending_attachments"],
        data["pending_started_at"],
        data["active_stream_id"],
        data["pending_user_source"],
    ) == (None, [], None, None, None)
    assert data["updated_at"] == NOW


def test_missing_started_at_uses_now_for_the_recovered_turn(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(pending_started_at=None))
    _, data = repair(home, tmp_path)
    assert data["messages"][0]["timestamp"] == int(NOW)


def test_exactly_one_armed_marker_when_nothing_was_recovered(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale())
    plan, data = repair(home, tmp_path)
    (marker,) = markers(data)
    assert marker["_error"] is True and marker["_pending_journal_recovery"] is True
    assert marker["_journal_retry_stream_id"] == S and marker["_journal_retry_attempts"] == 0
    assert marker["_journal_retry_first_seen_ts"] == marker["timestamp"] == int(NOW)
    assert "preserved as a draft" not in marker["content"] and "no agent output" not in marker["content"]
    assert any("armed for the lazy journal retry" in line for line in plan.summary)


def test_without_a_stream_id_the_marker_says_no_output(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(active_stream_id=None, pending_started_at=NOW - 10))
    plan, data = repair(home, tmp_path, started=NOW - 3600)
    (marker,) = markers(data)
    assert marker["interruption_cause"] == "unknown" and "_pending_journal_recovery" not in marker
    assert marker["content"].endswith(
        "The user message above was preserved, but no agent output was recovered."
    )
    assert any("active_stream_id" in w for w in plan.warnings)


@pytest.mark.parametrize(
    ("server_started", "cause", "evidence"),
    [
        (NOW - 60, "process_restart", "started after this turn began"),
        (NOW - 3600, "lost_worker_bookkeeping", "worker bookkeeping no longer had an active run"),
    ],
)
def test_marker_cause_distinguishes_restart_from_lost_bookkeeping(
    home: Path, tmp_path: Path, server_started, cause, evidence
) -> None:
    write_sidecar(home, stale(pending_started_at=NOW - 120))
    _, data = repair(home, tmp_path, started=server_started)
    (marker,) = markers(data)
    assert marker["interruption_cause"] == cause and evidence in marker["content"]
    assert "Response interrupted" in marker["content"] and "before this turn finished" in marker["content"]


# ---------------------------------------------------------------- branch A: messages present


HISTORY = [
    {"role": "user", "content": "Earlier", "timestamp": 10},
    {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
]


def test_journaled_output_is_recovered_before_the_marker(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(list(HISTORY)))
    write_journal(
        home,
        [
            ("reasoning", {"text": "Think."}),
            ("token", {"text": "Partial "}),
            ("token", {"text": "answer."}),
            ("tool", {"name": "terminal", "preview": "ls", "args": {"command": "ls"}}),
            ("tool_complete", {"name": "terminal", "duration": 0.5, "is_error": False}),
        ],
    )
    plan, data = repair(home, tmp_path)
    roles = [
        (m["role"], m.get("_recovered"), m.get("_recovered_from_run_journal"), m.get("type"))
        for m in data["messages"][2:]
    ]
    assert roles == [
        ("user", True, None, None),
        ("assistant", None, True, None),
        ("assistant", None, None, "interrupted"),
    ]
    assert (
        data["messages"][3]["content"] == "Partial answer." and data["messages"][3]["reasoning"] == "Think."
    )
    (marker,) = markers(data)
    assert "recovered from the run journal" in marker["content"] and "_pending_journal_recovery" not in marker
    assert data["tool_calls"][0]["assistant_msg_idx"] == 3 and data["tool_calls"][0]["done"] is True
    assert "Think." not in json.dumps(data["context_messages"])
    assert any("1 recovered assistant row and 1 tool card" in line for line in plan.summary)


def test_repeated_prompt_from_history_does_not_suppress_the_recovered_turn(
    home: Path, tmp_path: Path
) -> None:
    history = [
        {"role": "user", "content": "Continue", "timestamp": 5},
        {"role": "assistant", "content": "ok", "timestamp": 6},
    ]
    write_sidecar(home, stale(history, pending_user_message="Continue"))
    _, data = repair(home, tmp_path)
    assert [m["content"] for m in data["messages"] if m["role"] == "user"] == ["Continue", "Continue"]
    assert data["messages"][2]["_recovered"] is True


def test_tail_that_already_holds_the_prompt_is_not_duplicated(home: Path, tmp_path: Path) -> None:
    history = HISTORY + [{"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120)}]
    write_sidecar(home, stale(history))
    _, data = repair(home, tmp_path)
    assert [m["content"] for m in data["messages"]].count("Hello hermes") == 1
    # The context is seeded from messages; the recovered projection then checkpoint-matches it.
    assert [m["content"] for m in data["context_messages"]].count("Hello hermes") == 1


def test_completed_journal_clears_pending_without_a_marker(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(list(HISTORY)))
    write_journal(home, [("token", {"text": "Final answer."}), ("done", {}), ("stream_end", {})])
    plan, data = repair(home, tmp_path)
    assert markers(data) == []
    assert [m["content"] for m in data["messages"][2:]] == ["Hello hermes", "Final answer."]
    assert data["pending_user_message"] is None
    assert any("shows the run completed" in line for line in plan.summary)  # branch A1


def test_completed_journal_of_another_run_is_not_trusted(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(list(HISTORY)))
    path = write_journal(home, [("token", {"text": "x"}), ("done", {})])
    path.write_bytes(path.read_bytes().replace(f'"run_id":"{S}"'.encode(), b'"run_id":"other"'))
    _, data = repair(home, tmp_path)
    assert len(markers(data)) == 1


def test_tail_with_the_prompt_text_but_another_timestamp_is_not_duplicated(
    home: Path, tmp_path: Path
) -> None:
    """Branch A2, text match without the exact checkpoint (hermes' ``_message_matches_pending_text``):
    the last row holds the pending prompt's text (spacing aside) with another timestamp. The
    transcript keeps it once; only the model context gets the recovered turn, as its own row."""
    tail = {"role": "user", "content": "  Hello   hermes ", "timestamp": 50}
    write_sidecar(home, stale(HISTORY + [tail]))
    plan, data = repair(home, tmp_path)
    (marker,) = markers(data)
    assert data["messages"] == HISTORY + [tail, marker]
    assert data["context_messages"] == HISTORY + [
        tail,
        {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_recovered": True},
    ]
    assert "only the model context gets the recovered user turn" in " ".join(plan.summary)


def test_tail_with_other_text_gets_the_recovered_row(home: Path, tmp_path: Path) -> None:
    """Branch A2 without any match: the prompt comes back as a recovered transcript row."""
    write_sidecar(home, stale(list(HISTORY)))
    _, data = repair(home, tmp_path)
    (marker,) = markers(data)
    recovered = {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_recovered": True}
    assert data["messages"] == HISTORY + [recovered, marker]
    assert data["context_messages"] == HISTORY + [recovered]


def test_completed_journal_with_the_prompt_in_an_earlier_user_row_adds_no_row(
    home: Path, tmp_path: Path
) -> None:
    """Branch A1: the newest *user* row (not the last row) text-matches the prompt
    (``_latest_user_matches_pending_text``): no recovered row, the journal's answer appended."""
    history = [
        {"role": "user", "content": "Hello hermes", "timestamp": 50},
        {"role": "assistant", "content": "Partial", "timestamp": 51},
    ]
    write_sidecar(home, stale(history))
    write_journal(home, [("token", {"text": "Final answer."}), ("done", {}), ("stream_end", {})])
    plan, data = repair(home, tmp_path)
    assert [m["content"] for m in data["messages"]] == ["Hello hermes", "Partial", "Final answer."]
    assert markers(data) == [] and not any(m.get("_recovered") for m in data["messages"])
    assert any("shows the run completed" in line for line in plan.summary)  # branch A1


def test_a_tail_from_another_source_is_not_the_checkpoint(home: Path, tmp_path: Path) -> None:
    """The checkpoint includes ``_source`` (``or 'webui'``): a tail with the prompt's text and
    timestamp but ``_source: cli`` text-matches only, so the context gets the recovered turn too."""
    tail = {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_source": "cli"}
    write_sidecar(home, stale(HISTORY + [tail]))
    _, data = repair(home, tmp_path)
    (marker,) = markers(data)
    assert data["messages"] == HISTORY + [tail, marker]
    assert data["context_messages"] == HISTORY + [
        tail,
        {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_recovered": True},
    ]


def test_a_tail_from_the_pending_source_is_the_checkpoint(home: Path, tmp_path: Path) -> None:
    """Same text, timestamp and ``_source`` as the pending turn (``pending_user_source: cli``): the
    recovered context row checkpoint-matches the tail and is not added again."""
    tail = {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_source": "cli"}
    write_sidecar(home, stale(HISTORY + [tail], pending_user_source="cli"))
    _, data = repair(home, tmp_path)
    (marker,) = markers(data)
    assert data["messages"] == HISTORY + [tail, marker]
    assert data["context_messages"] == HISTORY + [tail]


def test_an_assistant_tail_with_the_prompt_text_is_no_match(home: Path, tmp_path: Path) -> None:
    """Only a *user* row can hold the pending prompt (``_message_matches_pending_text``)."""
    tail = {"role": "assistant", "content": "Hello hermes", "timestamp": 12}
    write_sidecar(home, stale(HISTORY + [tail]))
    _, data = repair(home, tmp_path)
    (marker,) = markers(data)
    recovered = {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_recovered": True}
    assert data["messages"] == HISTORY + [tail, recovered, marker]


def test_a_text_matched_tail_the_model_never_saw_seeds_an_empty_context(home: Path, tmp_path: Path) -> None:
    """The tail holds the prompt but is an ``_error`` row (not projected into the context): the
    seeded context stays empty and the recovered turn becomes its only row."""
    tail = {"role": "user", "content": "Hello hermes", "timestamp": 5, "_error": True}
    write_sidecar(home, stale([tail]))
    _, data = repair(home, tmp_path)
    (marker,) = markers(data)
    assert data["messages"] == [tail, marker]
    assert data["context_messages"] == [
        {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_recovered": True}
    ]


def test_completed_journal_without_any_user_row_restores_the_prompt(home: Path, tmp_path: Path) -> None:
    """Branch A1 with no user row at all: no text match (``_latest_user_matches_pending_text`` is
    False), so the prompt comes back before the journal's answer."""
    write_sidecar(home, stale([{"role": "assistant", "content": "Welcome", "timestamp": 5}]))
    write_journal(home, [("token", {"text": "Final answer."}), ("done", {}), ("stream_end", {})])
    _, data = repair(home, tmp_path)
    assert [(m["role"], m["content"]) for m in data["messages"]] == [
        ("assistant", "Welcome"),
        ("user", "Hello hermes"),
        ("assistant", "Final answer."),
    ]
    assert markers(data) == []


# ---------------------------------------------------------------- branch B: core transcript


def test_core_sync_uses_the_core_messages_and_token_fields(home: Path, tmp_path: Path) -> None:
    core = [{"role": "user", "content": "Hello hermes"}, {"role": "assistant", "content": "Hi!"}]
    write_core(home, core, input_tokens=12, output_tokens=3, estimated_cost=0.5)
    write_sidecar(home, stale())
    plan, data = repair(home, tmp_path)
    assert data["messages"] == core and markers(data) == []
    assert (data["input_tokens"], data["output_tokens"], data["estimated_cost"]) == (12, 3, 0.5)
    assert data["pending_user_message"] is None


def test_core_sync_follows_the_profile(home: Path, tmp_path: Path) -> None:
    write_core(home, [{"role": "user", "content": "from profile"}], profile="work")
    write_sidecar(home, stale(profile="work"))
    _, data = repair(home, tmp_path)
    assert data["messages"][0]["content"] == "from profile"


def test_core_sync_recovers_visible_journal_output(home: Path, tmp_path: Path) -> None:
    write_core(
        home, [{"role": "user", "content": "Earlier"}, {"role": "assistant", "content": "Earlier answer"}]
    )
    write_sidecar(home, stale())
    write_journal(home, [("token", {"text": "New partial output."})])
    _, data = repair(home, tmp_path)
    assert [m["content"] for m in data["messages"][2:4]] == ["Hello hermes", "New partial output."]
    (marker,) = markers(data)
    assert "_pending_journal_recovery" not in marker and "recovered from the run journal" in marker["content"]


def test_core_sync_does_not_duplicate_output_already_in_core(home: Path, tmp_path: Path) -> None:
    write_core(
        home,
        [
            {"role": "user", "content": "Hello hermes"},
            {"role": "assistant", "content": "Answer already in the core transcript."},
        ],
        tool_calls=[{"name": "terminal", "preview": "ls"}],
    )
    write_sidecar(home, stale())
    write_journal(
        home,
        [
            ("token", {"text": "Answer already in the core transcript."}),
            ("tool", {"name": "terminal", "preview": "ls"}),
        ],
    )
    _, data = repair(home, tmp_path)
    contents = [m["content"] for m in data["messages"]]
    assert contents.count("Answer already in the core transcript.") == 1
    assert len(data["tool_calls"]) == 1 and markers(data) == []  # nothing new: no marker
    # hermes still re-appends the prompt: the journal has visible output and the core's
    # last row is not the prompt.
    assert contents[-1] == "Hello hermes"


def test_core_sync_drops_the_prompt_when_nothing_shows_it_ran(home: Path, tmp_path: Path) -> None:
    write_core(home, [{"role": "user", "content": "Earlier"}])
    write_sidecar(home, stale())
    plan, data = repair(home, tmp_path)
    assert [m["content"] for m in data["messages"]] == ["Earlier"]
    assert any("drops the pending prompt" in w for w in plan.warnings)


def test_core_sync_whitespace_token_quirk(home: Path, tmp_path: Path) -> None:
    write_core(home, [{"role": "user", "content": "Earlier"}])
    write_sidecar(home, stale())
    write_journal(home, [("token", {"text": "   "})])
    plan, data = repair(home, tmp_path)
    assert [m["content"] for m in data["messages"]] == ["Earlier", "Hello hermes"] and markers(data) == []
    assert any("whitespace-only tokens" in w for w in plan.warnings)


@pytest.mark.parametrize(
    "core_body",
    [{"messages": []}, {}, {"messages": None}],
    ids=["empty-messages", "no-messages-key", "null-messages"],
)
def test_core_transcript_without_messages_takes_branch_c(home: Path, tmp_path: Path, core_body: dict) -> None:
    """hermes: ``core.get('messages', [])`` falsy -> the core is ignored (branch C): the pending
    prompt comes back as a recovered row, an armed marker follows, the core's token counts are
    not taken."""
    path = home / "sessions" / f"session_{SID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({**core_body, "input_tokens": 99, "tool_calls": [{"name": "x"}]}), encoding="utf-8"
    )
    write_sidecar(home, stale())
    plan, data = repair(home, tmp_path)
    (marker,) = markers(data)
    recovered = {"role": "user", "content": "Hello hermes", "timestamp": int(NOW - 120), "_recovered": True}
    assert data["messages"] == [recovered, marker] and marker["_pending_journal_recovery"] is True
    assert (data["input_tokens"], data["tool_calls"]) == (0, [])
    assert any(
        "the chat was empty and the agent has no core transcript" in line for line in plan.summary
    )  # branch C
    assert not any("drops the pending prompt" in w for w in plan.warnings)


def test_core_transcript_that_is_not_json_is_refused(home: Path) -> None:
    path = write_core(home, [])
    path.write_text("{not json", encoding="utf-8")
    write_sidecar(home, stale())
    plan = interrupted.plan(ctx_for(home), SID)
    assert plan.refusal and "JSONDecodeError" in plan.refusal and plan.changes == []
    assert plan.result["hermes_return"] is False


def test_core_transcript_is_ignored_when_messages_exist(home: Path, tmp_path: Path) -> None:
    (write_core(home, [])).write_text("{not json", encoding="utf-8")
    write_sidecar(home, stale(list(HISTORY)))
    plan, _ = repair(home, tmp_path)
    assert plan.refusal is None and plan.result == {"hermes_return": True}


# ---------------------------------------------------------------- gateway terminal error


def _gateway_error_journal(home: Path) -> None:
    embedded = {
        "session_id": SID,
        "messages": [
            {"role": "user", "content": "Hello hermes"},
            {"role": "assistant", "content": "**Error:** 502", "_error": True},
        ],
    }
    write_journal(
        home,
        [
            ("token", {"text": "Working on it."}),
            (
                "apperror",
                {
                    "message": "502",
                    "type": "error",
                    "session": embedded,
                    "session_id": SID,
                    "terminal_session_persisted": False,
                },
            ),
        ],
    )


@pytest.mark.parametrize("shape", ["non_empty", "core", "empty"])
def test_gateway_terminal_error_keeps_turn_identity_and_order(home: Path, tmp_path: Path, shape: str) -> None:
    if shape == "core":
        write_core(home, list(HISTORY))
    write_sidecar(home, stale(list(HISTORY) if shape == "non_empty" else []))
    _gateway_error_journal(home)
    _, data = repair(home, tmp_path)
    tail = [(m["role"], m["content"]) for m in data["messages"][-3:]]
    assert tail == [
        ("user", "Hello hermes"),
        ("assistant", "Working on it."),
        ("assistant", "**Error:** 502"),
    ]
    assert data["messages"][-1]["_recovered_event_id"] == f"{S}:2"
    assert markers(data) == []


# ---------------------------------------------------------------- get_session guards (warnings only)


def test_grace_window_is_reported(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(pending_started_at=NOW - 5))
    plan, _ = repair(home, tmp_path)
    assert plan.result == {"hermes_return": True}
    assert any("less than 30 s" in w for w in plan.warnings)


def test_old_enough_turn_has_no_grace_warning(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(pending_started_at=NOW - 31))
    plan, _ = repair(home, tmp_path)
    assert not any("30 s" in w for w in plan.warnings)


def test_snapshot_parent_and_continuation_are_reported(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, stale(pre_compression_snapshot=True))
    write_sidecar(home, {"session_id": "child1", "parent_session_id": SID, "messages": []})
    plan, _ = repair(home, tmp_path)
    assert any("pre-compression snapshot" in w for w in plan.warnings)
    assert any("continuation" in w and "child1.json" in w for w in plan.warnings)


# ---------------------------------------------------------------- eligibility and properties


def test_eligible_lists_dead_stream_sessions(home: Path) -> None:
    write_sidecar(home, stale())
    write_sidecar(home, {"session_id": "idle", "messages": []})
    write_sidecar(home, {"session_id": "nostream", "pending_user_message": "x", "messages": []})
    assert interrupted.eligible(ctx_for(home)) == [SID]


_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
)
_message = st.one_of(
    _value,
    st.dictionaries(
        st.sampled_from(["role", "content", "timestamp", "_error", "attachments", "_source", "_recovered"]),
        st.one_of(_value, st.sampled_from(["user", "assistant"])),
        max_size=5,
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    messages=st.lists(_message, max_size=4),
    pending=_value,
    source=_value,
    attachments=_value,
    started=_value,
    stream=st.one_of(st.none(), st.just(S), st.text(max_size=4)),
    core=st.booleans(),
    context=st.one_of(_value, st.lists(_message, max_size=2)),
)
def test_planner_never_raises(
    tmp_path_factory, messages, pending, source, attachments, started, stream, core, context
) -> None:
    home = tmp_path_factory.mktemp("h")
    raw = {
        "session_id": SID,
        "messages": messages,
        "pending_user_message": pending,
        "pending_user_source": source,
        "pending_attachments": attachments,
        "pending_started_at": started,
        "active_stream_id": stream,
        "context_messages": context,
    }
    path = home / "webui" / "sessions" / f"{SID}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(raw), encoding="utf-8")
    if core:
        write_core(home, messages)
    write_journal(home, [("token", {"text": "t"}), ("tool", {"name": "x", "args": {"a": [1]}})])
    plan = interrupted.plan(ctx_for(home), SID)
    assert plan.refusal is not None or isinstance(plan.result["hermes_return"], bool)


def test_branch_c_with_journaled_output_says_each_step_in_order(home: Path, tmp_path: Path) -> None:
    """Rule (branch C: empty transcript, no core transcript): the prompt comes back as a recovered
    row, the journal's output follows it before the marker, the marker says output was recovered, and
    the preview says each step in that order (mutation testing, tests/MUTATION.md)."""
    write_sidecar(home, stale([]))
    write_journal(home, [("token", {"text": "Partial answer."})])
    plan, data = repair(home, tmp_path)
    assert plan.summary == [
        "restores the pending prompt as a recovered user row (sent "
        f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(int(NOW - 120)))})",
        "adds 1 recovered assistant row before the marker",
        "appends an interrupted marker (cause: the turn began after the WebUI started and no worker is alive "
        "offline) saying output was recovered",
        "clears the pending turn (the chat was empty and the agent has no core transcript of it)",
    ]
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "assistant"]
    assert data["messages"][1]["content"] == "Partial answer."
    (marker,) = markers(data)
    assert "recovered from the run journal" in marker["content"] and "_pending_journal_recovery" not in marker


def test_no_pending_message_says_so_in_words(home: Path, tmp_path: Path) -> None:
    """Rule: a session without a pending prompt gets exactly one line and no change."""
    write_sidecar(home, stale([], pending_user_message=None))
    plan, _ = repair(home, tmp_path)
    assert (
        plan.summary == ["nothing to repair: the session has no pending user message"] and plan.changes == []
    )


def test_no_pending_message_reads_no_journal(home: Path, tmp_path: Path) -> None:
    """Rule: hermes' repair returns at once for a session without a pending prompt, before it reads
    the run journal: a journal the plan would refuse for (a line whose reading depends on hermes'
    own stack, 950 levels) changes nothing, the plan says the one line."""
    write_sidecar(home, stale([], pending_user_message=None))
    path = write_journal(home, [("token", {"text": "x"})])
    with open(path, "ab") as fh:
        fh.write(b'{"event":"token","payload":{"x":' + b"[" * 948 + b"]" * 948 + b"}}\n")
    plan = interrupted.plan(ctx_for(home), SID)
    assert plan.refusal is None
    assert plan.summary == ["nothing to repair: the session has no pending user message"]
    assert plan.changes == [] and plan.warnings == []
    write_sidecar(home, stale([]))  # the same journal with a pending prompt: refused
    assert "depends on hermes itself" in (interrupted.plan(ctx_for(home), SID).refusal or "")


def test_branch_b_dates_the_recovered_prompt_like_the_other_branches(home: Path, tmp_path: Path) -> None:
    """Rule: in branch B (core transcript) the prompt re-appended before visible journal output is a
    recovered user row dated at pending_started_at, as in branches A and C."""
    write_core(
        home, [{"role": "user", "content": "Earlier"}, {"role": "assistant", "content": "Earlier answer"}]
    )
    write_sidecar(home, stale())
    write_journal(home, [("token", {"text": "New partial output."})])
    _, data = repair(home, tmp_path)
    assert data["messages"][2] == {
        "role": "user",
        "content": "Hello hermes",
        "timestamp": int(NOW - 120),
        "_recovered": True,
    }


def test_branch_c_does_not_dedupe_journal_cards_against_the_sidecar(home: Path, tmp_path: Path) -> None:
    """Rule: branch C recovers the journal without the dedupe pass (hermes' dedupe_existing=False
    there): a tool card the sidecar already lists is added again, tagged as recovered."""
    write_sidecar(home, stale([], tool_calls=[{"name": "terminal", "preview": "ls"}]))
    write_journal(
        home,
        [
            ("tool", {"name": "terminal", "preview": "ls", "args": {"command": "ls"}}),
            ("tool_complete", {"name": "terminal", "duration": 0.5, "is_error": False}),
        ],
    )
    _, data = repair(home, tmp_path)
    assert [(c["name"], c["preview"], c.get("_recovered_from_run_journal")) for c in data["tool_calls"]] == [
        ("terminal", "ls", None),
        ("terminal", "ls", True),
    ]
