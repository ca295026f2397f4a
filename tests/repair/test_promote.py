"""Action ``recover-journal`` (hermes' ``_retry_journal_recovery_in_place``), through the planner.

Ported behaviours: ``TestRetryJournalRecoveryInPlace`` (promote, increment, demote by
attempts and by age, no-op, detection helper, stops at a normal assistant reply),
``TestLazyRetryBackwardsCompat`` (legacy markers untouched, retry keys round-trip),
``TestWslPageCacheRace`` (journal missing first and readable later, journal growing,
repeated reads idempotent), the lazy-retry tests of ``test_session_lost_response_regression``
and ``test_late_gateway_terminal_journal_replaces_pending_retry_marker``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.home import locate_home
from inspector.plan import Clock, WriteLog, apply_plan
from inspector.repair import promote
from inspector.repair.context import RepairContext
from inspector.repair.marker import LEGACY_NO_OUTPUT_WORDING, NEUTRAL_WORDING, RECOVERED_WORDING
from inspector.store.files import read_raw
from inspector.store.sidecar import dump_session, load_session, read_sidecar

SID = "retry_sid"
S = "7c8b4108d52b4aba9af362d3a54f47ac"
NOW = 1_779_600_000.0
ARMED = int(NOW) - 300
PENDING_CONTENT = (
    "**Response interrupted.**\n\nThe live response stream stopped before this turn finished. "
    "Recovering the partial output from the run journal \u2014 reload this session to retry."
)
KEYS = (
    "_pending_journal_recovery",
    "_journal_retry_stream_id",
    "_journal_retry_attempts",
    "_journal_retry_first_seen_ts",
)


def pending_marker(*, attempts: int = 0, first_seen: int | None = ARMED, stream: str | None = S) -> dict:
    marker = {
        "role": "assistant",
        "content": PENDING_CONTENT,
        "timestamp": ARMED,
        "_error": True,
        "type": "interrupted",
        "interruption_cause": "process_restart",
        "_pending_journal_recovery": True,
        "_journal_retry_stream_id": stream,
        "_journal_retry_attempts": attempts,
        "_journal_retry_first_seen_ts": first_seen,
    }
    return marker


def base_messages(marker: dict, *after: dict) -> list:
    return [
        {"role": "user", "content": "Earlier", "timestamp": 10},
        {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
        {"role": "user", "content": "List the PRs", "timestamp": ARMED - 10, "_recovered": True},
        marker,
        *after,
    ]


def write_sidecar(home: Path, messages: list, **fields) -> None:
    raw = {"session_id": SID, "title": "Retry", "messages": messages, "updated_at": NOW - 1000, **fields}
    data = load_session(json.loads(json.dumps(raw)), now=NOW, cwd=home).data
    path = home / "webui" / "sessions" / f"{SID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_session(data))


class Journal:
    """S's run journal, appended the way hermes' append_run_event writes it."""

    def __init__(self, home: Path):
        self.path = home / "webui" / "sessions" / "_run_journal" / SID / f"{S}.jsonl"
        self.seq = 0

    def append(self, event: str, payload: dict | None = None) -> Journal:
        self.seq += 1
        terminal = {
            "done": "completed",
            "stream_end": "completed",
            "cancel": "interrupted-by-user",
            "apperror": "errored",
            "error": "errored",
        }.get(event)
        rec = {
            "version": 1,
            "event_id": f"{S}:{self.seq}",
            "seq": self.seq,
            "run_id": S,
            "session_id": SID,
            "event": event,
            "type": event,
            "created_at": float(ARMED - 5 + self.seq),
            "terminal": terminal is not None,
            "terminal_state": terminal,
            "payload": payload or {},
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        return self


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / "webui" / "sessions").mkdir(parents=True)
    return path


def ctx_for(home: Path, now: float = NOW) -> RepairContext:
    return RepairContext(home=locate_home(home, env={}), clock=Clock(now, NOW - 7200), cwd=home)


def retry(home: Path, tmp_path: Path, now: float = NOW):
    """Plan, apply, and return (plan, the sidecar on disk afterwards)."""
    plan = promote.plan(ctx_for(home, now), SID)
    assert plan.refusal is None, plan.refusal
    if plan.changes:
        apply_plan(plan, WriteLog(tmp_path / "log"))
    data = read_sidecar(read_raw(home / "webui" / "sessions" / f"{SID}.json"), now=NOW, cwd=home).data
    return plan, data


def sidecar_bytes(home: Path) -> bytes:
    return (home / "webui" / "sessions" / f"{SID}.json").read_bytes()


# ---------------------------------------------------------------- promotion


def test_lost_response_is_promoted_once_the_journal_is_readable(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker()))
    Journal(home).append("token", {"text": "Checking GitHub first."}).append(
        "tool", {"name": "terminal", "preview": "gh pr list", "args": {"command": "gh pr list"}}
    ).append("tool_complete", {"name": "terminal", "duration": 1.2, "is_error": False}).append(
        "token", {"text": "Three open PRs."}
    )
    plan, data = retry(home, tmp_path)
    assert plan.result == {"hermes_return": True}
    rows = data["messages"]
    assert [m["content"] for m in rows[3:5]] == ["Checking GitHub first.", "Three open PRs."]
    marker = rows[5]
    assert marker["content"] == RECOVERED_WORDING and not any(k in marker for k in KEYS)
    assert (marker["timestamp"], marker["_error"], marker["interruption_cause"]) == (
        ARMED,
        True,
        "process_restart",
    )
    card = data["tool_calls"][0]
    assert (
        card["assistant_msg_idx"] == 3
        and rows[card["assistant_msg_idx"]]["content"] == "Checking GitHub first."
    )
    assert data["updated_at"] == NOW - 1000  # saved without touching updated_at
    assert "promotes the marker to the recovered wording" in " ".join(plan.summary)
    assert "adds 2 recovered assistant rows and 1 tool card above the marker" in plan.summary


def test_rows_after_the_marker_stay_below_and_the_stale_index_is_reported(home: Path, tmp_path: Path) -> None:
    later = [
        {"role": "user", "content": "Hello?", "timestamp": ARMED + 20},
        {"role": "assistant", "content": "**Error:** x", "timestamp": ARMED + 30, "_error": True},
    ]
    write_sidecar(home, base_messages(pending_marker(), *later))
    Journal(home).append("token", {"text": "Reading first."}).append("tool", {"name": "read", "preview": "a"})
    plan, data = retry(home, tmp_path)
    assert [m["content"] for m in data["messages"][3:]] == [
        "Reading first.",
        RECOVERED_WORDING,
        "Hello?",
        "**Error:** x",
    ]
    assert data["tool_calls"][0]["assistant_msg_idx"] == 6  # hermes' stale index (quirk 1)
    assert any("stale index" in w for w in plan.warnings)


def test_reasoning_only_journal_promotes(home: Path, tmp_path: Path) -> None:
    write_sidecar(
        home, base_messages(pending_marker()), context_messages=[{"role": "user", "content": "Earlier"}]
    )
    Journal(home).append("reasoning", {"text": "Only thinking."})
    _, data = retry(home, tmp_path)
    assert data["messages"][3]["reasoning"] == "Only thinking." and data["messages"][3]["content"] == ""
    assert data["context_messages"] == [{"role": "user", "content": "Earlier"}]


def test_late_gateway_terminal_error_replaces_the_pending_marker(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker()))
    embedded = {
        "session_id": SID,
        "messages": [
            {"role": "user", "content": "List the PRs"},
            {"role": "assistant", "content": "**Error:** 502", "_error": True},
        ],
    }
    Journal(home).append("token", {"text": "Starting."}).append(
        "apperror",
        {"type": "error", "session": embedded, "session_id": SID, "terminal_session_persisted": False},
    )
    plan, data = retry(home, tmp_path)
    assert plan.result == {"hermes_return": True}
    assert [m["content"] for m in data["messages"][3:]] == ["Starting.", "**Error:** 502"]
    assert not any(m.get("type") == "interrupted" for m in data["messages"])
    assert data["messages"][-1]["_recovered_event_id"] == f"{S}:2"


# ---------------------------------------------------------------- still arriving, counted attempts, demotion


def test_missing_journal_does_not_consume_attempts(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(attempts=3)))
    before = sidecar_bytes(home)
    plan, _ = retry(home, tmp_path)
    assert plan.changes == [] and plan.result == {"hermes_return": False}
    assert "still arriving" in plan.summary[0] and sidecar_bytes(home) == before


def test_zero_byte_journal_is_still_arriving(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker()))
    journal = Journal(home)
    journal.path.parent.mkdir(parents=True)
    journal.path.write_bytes(b"")
    plan, _ = retry(home, tmp_path)
    assert plan.changes == [] and "empty" in plan.summary[0]


def test_sealed_empty_journal_counts_one_attempt(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(attempts=0)))
    Journal(home).append("metering", {"tokens": 3}).append("stream_end", {"session_id": SID})
    plan, data = retry(home, tmp_path)
    marker = data["messages"][3]
    assert marker["_journal_retry_attempts"] == 1 and marker["content"] == PENDING_CONTENT
    assert plan.summary == ["counts retry attempt 1 of 12: it found no readable output"]
    assert data["updated_at"] == NOW - 1000


def test_non_empty_journal_without_output_counts_too(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker()))
    Journal(home).append("metering", {"tokens": 3})
    _, data = retry(home, tmp_path)
    assert data["messages"][3]["_journal_retry_attempts"] == 1


def test_sealed_empty_journal_demotes_at_the_cap(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(attempts=0)))
    Journal(home).append("done", {})
    for expected in range(1, 12):
        _, data = retry(home, tmp_path)
        assert data["messages"][3]["_journal_retry_attempts"] == expected
    plan, data = retry(home, tmp_path)
    marker = data["messages"][3]
    assert marker["content"] == NEUTRAL_WORDING and not any(k in marker for k in KEYS)
    assert marker["interruption_cause"] == "process_restart"
    assert plan.result == {"hermes_return": False}
    follow_up, _ = retry(home, tmp_path)
    assert follow_up.changes == []  # a demoted marker is never retried again


def test_marker_at_eleven_attempts_demotes_on_the_next_read(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(attempts=11)))
    Journal(home).append("apperror", {"type": "provider_error"})
    plan, data = retry(home, tmp_path)
    assert data["messages"][3]["content"] == NEUTRAL_WORDING
    assert "demotes the marker" in plan.summary[0]


def test_marker_already_at_the_cap_demotes_without_reading(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(attempts=12)))
    Journal(home).append("token", {"text": "would have been recovered"})
    plan, data = retry(home, tmp_path)
    assert data["messages"][3]["content"] == NEUTRAL_WORDING and len(data["messages"]) == 4
    assert any("gives up before reading" in w for w in plan.warnings)


def test_marker_demotes_after_24_hours_without_reading_the_journal(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(first_seen=ARMED)))
    Journal(home).append("token", {"text": "Arrived too late."})
    plan, data = retry(home, tmp_path, now=ARMED + 86400 + 1)
    assert len(data["messages"]) == 4 and data["messages"][3]["content"] == NEUTRAL_WORDING
    assert "given up after 24 h" in plan.summary[0]
    assert any("gives up before reading" in w for w in plan.warnings)
    exactly_24h, _ = retry_copy(home, tmp_path, now=ARMED + 86400)
    assert exactly_24h.result == {"hermes_return": True}


def retry_copy(home: Path, tmp_path: Path, now: float):
    """Plan only (no apply) with another clock, on a fresh copy of the original state."""
    fresh = tmp_path / "fresh"
    (fresh / "webui" / "sessions").mkdir(parents=True)
    write_sidecar(fresh, base_messages(pending_marker(first_seen=ARMED)))
    Journal(fresh).append("token", {"text": "Arrived in time."})
    return promote.plan(ctx_for(fresh, now), SID), fresh


def test_marker_without_stream_id_is_demoted(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(stream=None)))
    plan, data = retry(home, tmp_path)
    assert data["messages"][3]["content"] == NEUTRAL_WORDING and plan.result == {"hermes_return": False}


def test_invalid_utf8_journal_counts_an_attempt_with_a_warning(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(attempts=2)))
    journal = Journal(home).append("token", {"text": "é"})
    journal.path.write_bytes(journal.path.read_bytes()[:-5])
    plan, data = retry(home, tmp_path)
    assert data["messages"][3]["_journal_retry_attempts"] == 3
    assert any("not valid UTF-8" in w for w in plan.warnings)


def test_u2028_record_is_lost_with_a_warning(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker()))
    Journal(home).append("token", {"text": "kept "}).append("token", {"text": "lost\u2028part"})
    plan, data = retry(home, tmp_path)
    assert data["messages"][3]["content"] == "kept"
    assert any("U+2028" in w for w in plan.warnings)


def test_session_wide_dedupe_quirk_is_reported(home: Path, tmp_path: Path) -> None:
    messages = base_messages(pending_marker())
    messages[1]["content"] = "Done."
    write_sidecar(home, messages)
    Journal(home).append("token", {"text": "Done."})
    plan, data = retry(home, tmp_path)
    assert data["messages"][3]["_journal_retry_attempts"] == 1  # recovered "nothing"
    assert any("earlier turn" in w for w in plan.warnings)


# ---------------------------------------------------------------- detection and no-ops


def test_legacy_marker_without_the_flag_is_never_touched(home: Path, tmp_path: Path) -> None:
    legacy = {
        "role": "assistant",
        "content": LEGACY_NO_OUTPUT_WORDING,
        "timestamp": ARMED,
        "_error": True,
        "type": "interrupted",
    }
    write_sidecar(home, base_messages(legacy))
    Journal(home).append("token", {"text": "x"})
    plan, _ = retry(home, tmp_path)
    assert plan.changes == [] and plan.result == {"hermes_return": False}


def test_retry_stops_at_a_normal_assistant_reply(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(), {"role": "assistant", "content": "Live reply"}))
    Journal(home).append("token", {"text": "x"})
    plan, _ = retry(home, tmp_path)
    assert plan.changes == [] and "normal assistant reply" in plan.summary[0]


def test_detection_helper() -> None:
    assert promote.has_pending_journal_retry([{"role": "user"}, pending_marker(), {"role": "user"}])
    assert not promote.has_pending_journal_retry([pending_marker(), {"role": "assistant", "content": "x"}])
    assert promote.has_pending_journal_retry([pending_marker(), {"role": "assistant", "_error": True}, 5])
    assert not promote.has_pending_journal_retry([])


def test_retry_keys_round_trip_through_save_and_load(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker(attempts=4)))
    Journal(home).append("stream_end", {})
    _, data = retry(home, tmp_path)
    marker = data["messages"][3]
    assert [marker[k] for k in KEYS] == [True, S, 5, ARMED]


def test_page_cache_race_missing_then_growing_then_readable(home: Path, tmp_path: Path) -> None:
    write_sidecar(home, base_messages(pending_marker()))
    first, _ = retry(home, tmp_path)
    assert first.changes == []  # not there yet: budget kept
    journal = Journal(home).append("metering", {})
    _, data = retry(home, tmp_path)
    assert data["messages"][3]["_journal_retry_attempts"] == 1
    journal.append("token", {"text": "Finally visible."})
    promoted, data = retry(home, tmp_path)
    assert promoted.result == {"hermes_return": True} and data["messages"][3]["content"] == "Finally visible."
    again, _ = retry(home, tmp_path)
    assert again.changes == [] and again.result == {"hermes_return": False}


def test_eligible_follows_the_detection_rule(home: Path) -> None:
    write_sidecar(home, base_messages(pending_marker()))
    other = home / "webui" / "sessions" / "done_sid.json"
    data = load_session(
        {
            "session_id": "done_sid",
            "messages": base_messages(pending_marker(), {"role": "assistant", "content": "later reply"}),
        },
        now=NOW,
        cwd=home,
    ).data
    other.write_bytes(dump_session(data))
    assert promote.eligible(ctx_for(home)) == [SID]


def test_unsafe_and_missing_sessions_are_refused(home: Path) -> None:
    assert "unsafe" in promote.plan(ctx_for(home), "a/b").refusal
    assert "no sidecar" in promote.plan(ctx_for(home), "nobody").refusal


# ---------------------------------------------------------------- property

_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 20),
    st.text(max_size=4),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(
    attempts=_value,
    first_seen=_value,
    stream=st.one_of(_value, st.just(S)),
    kind=_value,
    extra=st.lists(
        st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "content",
                    "_error",
                    "_recovered_from_run_journal",
                    "_pending_journal_recovery",
                    "type",
                ]
            ),
            _value,
            max_size=4,
        ),
        max_size=3,
    ),
    events=st.lists(
        st.tuples(
            st.sampled_from(["token", "tool", "tool_complete", "reasoning", "done"]),
            st.dictionaries(st.sampled_from(["text", "name", "preview", "args"]), _value, max_size=3),
        ),
        max_size=4,
    ),
)
def test_planner_never_raises(tmp_path_factory, attempts, first_seen, stream, kind, extra, events) -> None:
    home = tmp_path_factory.mktemp("h")
    marker = {
        "role": "assistant",
        "content": "x",
        "_error": True,
        "type": "interrupted",
        "_pending_journal_recovery": True,
        "_journal_retry_stream_id": stream,
        "_journal_retry_attempts": attempts,
        "_journal_retry_first_seen_ts": first_seen,
        "kind": kind,
    }
    write_sidecar(home, [{"role": "user", "content": "q"}, marker, *extra])
    journal = Journal(home)
    for name, payload in events:
        journal.append(name, payload)
    plan = promote.plan(ctx_for(home), SID)
    assert plan.refusal is None or plan.changes == []
    assert isinstance(plan.result["hermes_return"], bool)
