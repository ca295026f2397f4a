"""hermes' interrupted-turn repair, branches A2 and A1, rule by rule (``api/models.py``,
``_apply_core_sync_or_error_marker``; spec run-journal-and-promotion §3.3-§3.4).

Branch A runs when the transcript already has messages: A1 when the run journal shows the run
completed (``dedupe_existing=True``, no marker), A2 otherwise (the journal recovered without the
dedupe pass, then a marker). The pending prompt's identity is hermes'
``_message_matches_pending_checkpoint`` of the last row (text, ``int`` timestamp, source,
attachments), widened by ``_message_matches_pending_text``. Every expected value, the plan's words
included, is written out by hand from hermes' source, never computed by the code under test.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.home import locate_home
from inspector.plan import Clock
from inspector.repair import interrupted
from inspector.repair.context import RepairContext
from inspector.store.sidecar import dump_session, load_session
from tests.repair.test_interrupted import write_journal as hermes_journal

SID = "rules_sid"
S = "stream_rules"
NOW = 1_779_500_000.0  # 2026-05-23 01:33:20 UTC
STARTED = NOW - 3600  # the WebUI started an hour ago: the turn began after it (lost worker bookkeeping)
SENT = int(NOW - 120)  # pending_started_at: 2026-05-23 01:31:20 UTC

HISTORY = [
    {"role": "user", "content": "Earlier", "timestamp": 10},
    {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
]
CAUSE = "the turn began after the WebUI started and no worker is alive offline"
CLEARS_A2 = "clears the pending turn (the chat already had messages)"
CLEARS_A1 = "the run journal shows the run completed: clears the pending turn without an interrupted marker"
RESTORES = "restores the pending prompt as a recovered user row (sent 2026-05-23 01:31:20)"


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """The plan dates a recovered row in local time: run these tests in UTC."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


def write_sidecar(home: Path, messages: list, **fields) -> None:
    raw = {
        "session_id": SID,
        "title": "Rules",
        "messages": messages,
        "pending_user_message": "Hello hermes",
        "active_stream_id": S,
        "pending_attachments": [],
        "pending_started_at": NOW - 120,
        **fields,
    }
    path = home / "webui" / "sessions" / f"{SID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_session(load_session(json.loads(json.dumps(raw)), now=NOW, cwd=home).data))


def write_journal(home: Path, events: list[tuple[str, dict]]) -> None:
    """The run journal of this file's session and stream, as hermes' ``append_run_event`` writes it."""
    hermes_journal(home, events, sid=SID, run=S)


def plan_for(home: Path):
    ctx = RepairContext(home=locate_home(home, env={}), clock=Clock(NOW, STARTED), cwd=home)
    return interrupted.plan(ctx, SID)


def saved(result) -> dict:
    (sidecar,) = [c for c in result.changes if c.path.name == f"{SID}.json"]
    return json.loads(sidecar.after)


def recovered(**extra) -> dict:
    return {"role": "user", "content": "Hello hermes", "timestamp": SENT, "_recovered": True, **extra}


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


# ---------------------------------------------------------------- branch A2: the words, in order


def test_a2_with_the_prompt_in_the_last_row_says_each_step_in_order(home: Path) -> None:
    """Rule (A2, ``_tail_user_already_checkpointed``): the last row holds the prompt's text, so only
    the model context gets the recovered turn; nothing in the journal yet, so the marker is armed for
    the lazy retry; then the pending turn is cleared."""
    tail = {"role": "user", "content": "Hello  hermes", "timestamp": 50}
    write_sidecar(home, HISTORY + [tail])
    result = plan_for(home)
    assert result.refusal is None and result.result == {"hermes_return": True}
    assert result.summary == [
        "the last row already holds the pending prompt; only the model context gets the recovered user turn",
        f"appends an interrupted marker (cause: {CAUSE}) armed for the lazy journal retry: no output was found yet",
        CLEARS_A2,
    ]
    data = saved(result)
    assert data["messages"][:3] == HISTORY + [tail] and len(data["messages"]) == 4
    assert data["messages"][3]["_pending_journal_recovery"] is True


def test_a2_with_journal_output_says_each_step_in_order(home: Path) -> None:
    """Rule (A2 without a match): the prompt comes back as a recovered row dated at
    ``pending_started_at``, the journal's text follows it before the marker, the marker says output
    was recovered."""
    write_sidecar(home, list(HISTORY))
    write_journal(home, [("token", {"text": "Partial answer."})])
    result = plan_for(home)
    assert result.summary == [
        RESTORES,
        "adds 1 recovered assistant row before the marker",
        f"appends an interrupted marker (cause: {CAUSE}) saying output was recovered",
        CLEARS_A2,
    ]
    rows = saved(result)["messages"]
    assert rows[:3] == HISTORY + [recovered()]
    assert (rows[3]["content"], rows[3]["_recovered_from_run_journal"]) == ("Partial answer.", True)
    assert rows[4]["type"] == "interrupted" and len(rows) == 5


def test_a2_does_not_dedupe_journal_cards_against_the_sidecar(home: Path) -> None:
    """Rule: A2 recovers the journal with hermes' default ``dedupe_existing=False``: a tool card the
    sidecar already lists is added again, tagged as recovered."""
    write_sidecar(home, list(HISTORY), tool_calls=[{"name": "terminal", "preview": "ls"}])
    write_journal(
        home,
        [
            ("tool", {"name": "terminal", "preview": "ls", "args": {"command": "ls"}}),
            ("tool_complete", {"name": "terminal", "duration": 0.5, "is_error": False}),
        ],
    )
    cards = saved(plan_for(home))["tool_calls"]
    assert [(c["name"], c["preview"], c.get("_recovered_from_run_journal")) for c in cards] == [
        ("terminal", "ls", None),
        ("terminal", "ls", True),
    ]


# ---------------------------------------------------------------- the pending prompt's identity


def test_an_empty_user_row_at_the_pending_time_is_not_the_pending_prompt(home: Path) -> None:
    """Rule: the checkpoint compares the row's text with the pending prompt's: an empty user row with
    the pending turn's timestamp, source and attachments is not it, so the prompt comes back as a row."""
    tail = {"role": "user", "content": "", "timestamp": SENT}
    write_sidecar(home, HISTORY + [tail])
    rows = saved(plan_for(home))["messages"]
    assert rows[:4] == HISTORY + [tail, recovered()]
    assert rows[4]["type"] == "interrupted" and len(rows) == 5


def test_a_last_row_with_an_infinite_timestamp_makes_hermes_repair_fail(home: Path) -> None:
    """Rule: ``_message_matches_pending_checkpoint`` catches only TypeError and ValueError around
    ``int(message['timestamp'])``; ``int(inf)`` raises OverflowError, so hermes' repair fails on the
    last row (get_session logs it) and writes nothing."""
    write_sidecar(home, HISTORY + [{"role": "user", "content": "Hello hermes", "timestamp": float("inf")}])
    result = plan_for(home)
    error = "OverflowError: cannot convert float infinity to integer"
    assert result.refusal == f"hermes' repair fails on this session ({error}); it writes nothing"
    assert result.result == {"hermes_return": False, "hermes_error": error}
    assert result.changes == []


def test_a_last_row_the_model_never_saw_with_an_infinite_timestamp_still_fails(home: Path) -> None:
    """Rule: the checkpoint reads ``int(timestamp)`` before it compares the text, so a last user row
    with other text, left out of the model context (``_error``), still makes hermes' repair fail."""
    tail = {"role": "user", "content": "Something else", "timestamp": float("inf"), "_error": True}
    write_sidecar(home, HISTORY + [tail])
    result = plan_for(home)
    error = "OverflowError: cannot convert float infinity to integer"
    assert result.refusal == f"hermes' repair fails on this session ({error}); it writes nothing"
    assert result.changes == []


def test_a2_marker_cause_reads_the_pending_turn_start(home: Path) -> None:
    """Rule: the marker's cause compares ``pending_started_at`` (read before the pending fields are
    cleared) with the WebUI's start: a WebUI started after the turn began says it restarted."""
    write_sidecar(home, list(HISTORY))
    ctx = RepairContext(home=locate_home(home, env={}), clock=Clock(NOW, NOW - 60), cwd=home)
    result = interrupted.plan(ctx, SID)
    assert result.summary == [
        RESTORES,
        "appends an interrupted marker (cause: the WebUI restarted after the turn began) armed for the lazy "
        "journal retry: no output was found yet",
        CLEARS_A2,
    ]
    assert saved(result)["messages"][-1]["interruption_cause"] == "process_restart"


# ---------------------------------------------------------------- branch A1: completed journal


def test_a1_without_the_prompt_says_each_step_in_order(home: Path) -> None:
    """Rule (A1): no user row holds the prompt, so it comes back as a recovered row dated at
    ``pending_started_at``; the journal's answer follows; no marker."""
    write_sidecar(home, list(HISTORY))
    write_journal(home, [("token", {"text": "Final answer."}), ("done", {}), ("stream_end", {})])
    result = plan_for(home)
    assert result.summary == [RESTORES, "adds 1 recovered assistant row to the transcript", CLEARS_A1]
    rows = saved(result)["messages"]
    assert rows[:3] == HISTORY + [recovered()]
    assert [(m["role"], m["content"]) for m in rows[3:]] == [("assistant", "Final answer.")]


def test_a1_dedupes_journal_text_already_in_the_transcript(home: Path) -> None:
    """Rule: A1 recovers with ``dedupe_existing=True``: the journal's answer is already an assistant
    row of the transcript, so nothing is added and the plan says so."""
    history = [
        {"role": "user", "content": "Hello hermes", "timestamp": 50},
        {"role": "assistant", "content": "Final answer.", "timestamp": 51},
    ]
    write_sidecar(home, history)
    write_journal(home, [("token", {"text": "Final answer."}), ("done", {}), ("stream_end", {})])
    result = plan_for(home)
    assert result.summary == [
        "adds nothing for 1 journaled text segment already in the transcript",
        CLEARS_A1,
    ]
    assert [(m["role"], m["content"]) for m in saved(result)["messages"]] == [
        ("user", "Hello hermes"),
        ("assistant", "Final answer."),
    ]


def test_a1_dedupes_journal_cards_the_sidecar_already_lists(home: Path) -> None:
    """Rule: with ``dedupe_existing=True`` a journal tool card the sidecar already lists
    (``_journal_tool_already_present``: same name and preview) is not added again."""
    write_sidecar(home, list(HISTORY), tool_calls=[{"name": "terminal", "preview": "ls"}])
    write_journal(
        home,
        [
            ("tool", {"name": "terminal", "preview": "ls", "args": {"command": "ls"}}),
            ("tool_complete", {"name": "terminal", "duration": 0.5, "is_error": False}),
            ("done", {}),
        ],
    )
    assert saved(plan_for(home))["tool_calls"] == [{"name": "terminal", "preview": "ls"}]


def test_a1_pending_attachments_that_are_not_a_list_make_hermes_repair_fail(home: Path) -> None:
    """Rule: hermes keeps a truthy ``pending_attachments`` as it is (``or []``), and the checkpoint of
    a last row with the prompt's text, timestamp and source ends in ``list(pending_attachments)``:
    ``list(7)`` raises TypeError outside the checkpoint's ``try``, so the repair fails, even when the
    journal shows the run completed."""
    write_sidecar(
        home,
        HISTORY + [{"role": "user", "content": "Hello hermes", "timestamp": SENT}],
        pending_attachments=7,
    )
    write_journal(home, [("token", {"text": "Final answer."}), ("done", {}), ("stream_end", {})])
    result = plan_for(home)
    error = "TypeError: 'int' object is not iterable"
    assert result.refusal == f"hermes' repair fails on this session ({error}); it writes nothing"
    assert result.result == {"hermes_return": False, "hermes_error": error} and result.changes == []


# ---------------------------------------------------------------- branch B: the whitespace-token advice

WHITESPACE_ONLY = (
    "the journal counts as visible output only because of whitespace-only tokens; "
    "hermes re-appends the pending prompt but they produce no row"
)


def write_core_and_events(home: Path, events: list[dict]) -> None:
    """An empty sidecar, the agent's core transcript, and journal records given as they are."""
    write_sidecar(home, [])
    core = home / "sessions" / f"session_{SID}.json"
    core.parent.mkdir(parents=True, exist_ok=True)
    core.write_text(json.dumps({"messages": [{"role": "user", "content": "Earlier"}]}), encoding="utf-8")
    path = home / "webui" / "sessions" / "_run_journal" / SID / f"{S}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    base = {"version": 1, "run_id": S, "session_id": SID, "terminal": False}
    lines = [
        json.dumps({**base, "event_id": f"{S}:{n}", "seq": n, "created_at": NOW - 100 + n, **e})
        for n, e in enumerate(events, 1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def token(text, *, key: str = "event", payload=None) -> dict:
    return {key: "token", "payload": {"text": text} if payload is None else payload}


def b_plan(home: Path, events: list[dict]):
    write_core_and_events(home, events)
    result = plan_for(home)
    assert result.refusal is None, result.refusal
    return result


def test_b_real_journal_text_gives_no_whitespace_advice(home: Path) -> None:
    """Rule (quirk 6): a token with real text is visible output in its own right: no advice."""
    result = b_plan(home, [token("Real words.")])
    assert result.warnings == []
    assert [m["content"] for m in saved(result)["messages"][:3]] == ["Earlier", "Hello hermes", "Real words."]


def test_b_whitespace_tokens_alone_get_the_advice(home: Path) -> None:
    """Rule (quirk 6): hermes' visibility test counts a whitespace-only token (``str(text)`` is true),
    so it re-appends the prompt; no row comes of it. A token whose payload is not an object reads as
    ``{}`` (no text), and a record naming its kind only in ``type`` is read by that name."""
    for n, events in enumerate(
        (
            [token("   ")],
            [token("  "), token(None, payload=["not", "an", "object"])],
            [token(" \n ", key="type")],
        )
    ):
        result = b_plan(home / str(n), events)
        assert result.warnings == [WHITESPACE_ONLY], n
        assert [m["content"] for m in saved(result)["messages"]] == ["Earlier", "Hello hermes"], n


def test_b_whitespace_tokens_next_to_other_visible_output_get_no_advice(home: Path) -> None:
    """Rule: the advice is only for a journal visible *only* through whitespace tokens: real
    reasoning, a real token named by ``type``, or a tool call make it visible anyway."""
    for n, extra in enumerate(
        (
            {"event": "reasoning", "payload": {"text": "Think."}},
            token("Words.", key="type"),
            {"event": "tool", "payload": {"name": "terminal", "preview": "ls"}},
        )
    ):
        result = b_plan(home / str(n), [token("   "), extra])
        assert WHITESPACE_ONLY not in result.warnings, n


# ---------------------------------------------------------------- branch B: the words, in order

CLEARS_B = "clears the pending turn (the chat was rebuilt from the agent's core transcript)"


def write_core(home: Path, messages: list) -> None:
    core = home / "sessions" / f"session_{SID}.json"
    core.parent.mkdir(parents=True, exist_ok=True)
    core.write_text(json.dumps({"messages": messages}), encoding="utf-8")


def test_b_with_journal_output_says_each_step_in_order(home: Path) -> None:
    """Rule (B): the core transcript replaces the empty one; the core's last row is not the prompt
    and the journal has visible output, so the prompt comes back dated at ``pending_started_at``; the
    journal's text follows; the marker says output was recovered."""
    write_sidecar(home, [])
    write_core(home, list(HISTORY))
    write_journal(home, [("token", {"text": "Partial answer."})])
    result = plan_for(home)
    assert result.summary == [
        "replaces the empty transcript with the agent's core transcript (2 messages)",
        RESTORES,
        "adds 1 recovered assistant row after the core messages",
        f"appends an interrupted marker (cause: {CAUSE}) saying output was recovered",
        CLEARS_B,
    ]
    rows = saved(result)["messages"]
    assert rows[:3] == HISTORY + [recovered()]
    assert [m["content"] for m in rows[3:4]] == ["Partial answer."] and rows[4]["type"] == "interrupted"


def test_b_core_ending_with_the_prompt_gets_no_second_copy(home: Path) -> None:
    """Rule (B, ``_tail_user_already_checkpointed``): the core transcript's last row holds the
    prompt's text, so hermes does not re-append it, journal output or not."""
    prompt = {"role": "user", "content": "Hello hermes"}
    write_sidecar(home, [])
    write_core(home, HISTORY + [prompt])
    write_journal(home, [("token", {"text": "Partial answer."})])
    result = plan_for(home)
    assert result.summary == [
        "replaces the empty transcript with the agent's core transcript (3 messages)",
        "adds 1 recovered assistant row after the core messages",
        f"appends an interrupted marker (cause: {CAUSE}) saying output was recovered",
        CLEARS_B,
    ]
    rows = saved(result)["messages"]
    assert rows[:3] == HISTORY + [prompt]
    assert [m["content"] for m in rows[3:4]] == ["Partial answer."] and len(rows) == 5


def test_b_without_visible_output_drops_the_prompt_and_says_so(home: Path) -> None:
    """Rule (B): no visible journal output and no gateway error: hermes does not re-append the
    prompt (it is lost, the plan warns) and adds no marker (no retry is armed after a core sync)."""
    write_sidecar(home, [])
    write_core(home, list(HISTORY))
    result = plan_for(home)
    assert result.summary == [
        "replaces the empty transcript with the agent's core transcript (2 messages)",
        "adds no marker: nothing new was recovered (hermes arms no retry when it used the core transcript)",
        CLEARS_B,
    ]
    assert result.warnings == [
        "the core transcript does not hold the pending prompt and the journal has no visible output: "
        "hermes drops the pending prompt silently"
    ]
    assert saved(result)["messages"] == HISTORY


def test_b_marker_cause_reads_the_pending_turn_start(home: Path) -> None:
    """Rule (B): the recovered-output marker's cause compares ``pending_started_at`` (read before the
    pending fields are cleared) with the WebUI's start: a WebUI started after the turn began restarted."""
    write_sidecar(home, [])
    write_core(home, list(HISTORY))
    write_journal(home, [("token", {"text": "Partial answer."})])
    ctx = RepairContext(home=locate_home(home, env={}), clock=Clock(NOW, NOW - 60), cwd=home)
    result = interrupted.plan(ctx, SID)
    assert result.summary[3] == (
        "appends an interrupted marker (cause: the WebUI restarted after the turn began) saying output was recovered"
    )
    assert saved(result)["messages"][-1]["interruption_cause"] == "process_restart"


# ---------------------------------------------------------------- the gateway terminal error's words

GATEWAY_ERROR = {"role": "assistant", "content": "**Error:** 502", "_error": True}


def write_gateway_error_journal(home: Path) -> None:
    embedded = {"session_id": SID, "messages": [{"role": "user", "content": "Hello hermes"}, GATEWAY_ERROR]}
    payload = {"message": "502", "type": "error", "session": embedded, "session_id": SID}
    write_journal(
        home,
        [
            ("token", {"text": "Working on it."}),
            ("apperror", {**payload, "terminal_session_persisted": False}),
        ],
    )


def test_a2_late_gateway_error_is_appended_instead_of_a_marker_and_the_plan_says_so(home: Path) -> None:
    """Rule: the journal ends in an apperror whose session was not persisted: its error row is
    appended (tagged with the event id) and no interrupted marker follows."""
    write_sidecar(home, list(HISTORY))
    write_gateway_error_journal(home)
    result = plan_for(home)
    assert result.summary == [
        RESTORES,
        "adds 1 recovered assistant row before the marker",
        f"the journal ends in an unsaved gateway error ({S}:2); its error row is appended and no "
        "interrupted marker is added",
        CLEARS_A2,
    ]
    assert saved(result)["messages"][-1]["content"] == "**Error:** 502"


def test_a2_gateway_error_already_in_the_transcript_is_named_already_present(home: Path) -> None:
    """Rule: a row already tagged with the apperror's event id: nothing appended, still no marker."""
    present = {**GATEWAY_ERROR, "_recovered_from_run_journal": True, "_recovered_event_id": f"{S}:2"}
    write_sidecar(home, HISTORY + [present])
    write_gateway_error_journal(home)
    result = plan_for(home)
    assert result.summary[-2:] == [
        f"the journal ends in an unsaved gateway error ({S}:2); its error row is already present and no "
        "interrupted marker is added",
        CLEARS_A2,
    ]
    assert not any(m.get("type") == "interrupted" for m in saved(result)["messages"])


def test_a_journal_record_without_a_time_gives_its_row_the_repairs_clock(home: Path) -> None:
    """Rule: a recovered row takes its record's ``created_at``, or the time of the repair when the
    record has none (hermes' ``time.time()``; the plan's clock here)."""
    write_sidecar(home, list(HISTORY))
    write_journal(home, [("token", {"text": "No clock."})])
    path = home / "webui" / "sessions" / "_run_journal" / SID / f"{S}.jsonl"
    rec = json.loads(path.read_text(encoding="utf-8"))
    del rec["created_at"]
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    rows = saved(plan_for(home))["messages"]
    assert (rows[3]["content"], rows[3]["timestamp"]) == ("No clock.", int(NOW))


def test_a2_without_a_stream_says_no_output_was_recovered(home: Path) -> None:
    """Rule: without ``active_stream_id`` there is no journal to retry: the marker is the no-output
    variant, its cause ``unknown`` (no start before the WebUI's, no stream id)."""
    write_sidecar(home, list(HISTORY), active_stream_id=None)
    result = plan_for(home)
    assert result.summary == [
        RESTORES,
        "appends an interrupted marker (cause: neither a start time nor a stream id tells more) saying no "
        "output was recovered",
        CLEARS_A2,
    ]
    assert saved(result)["messages"][-1]["interruption_cause"] == "unknown"


# ---------------------------------------------------------------- the get_session guards (warnings only)


def test_every_guard_warning_in_its_words_and_order(home: Path) -> None:
    """Rule (§3.1): where hermes' cold ``get_session`` would not run the repair, the plan says why,
    in this order: no ``active_stream_id``, a pre-compression snapshot, the 30 s grace window, a
    compression continuation (named where it was found: the index, then the sidecars)."""
    write_sidecar(home, list(HISTORY), active_stream_id=None, pre_compression_snapshot=True)
    path = home / "webui" / "sessions" / f"{SID}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["pending_started_at"] = NOW - 29.5
    path.write_text(json.dumps(raw), encoding="utf-8")
    child = {"session_id": "child1", "parent_session_id": SID, "messages": []}
    (home / "webui" / "sessions" / "child1.json").write_text(json.dumps(child, indent=2), encoding="utf-8")
    (home / "webui" / "sessions" / "_index.json").write_text(json.dumps([child]), encoding="utf-8")
    assert plan_for(home).warnings == [
        "hermes' get_session runs this repair only while active_stream_id is set; "
        "it is empty here, so hermes would not run it on its own",
        "this session is a pre-compression snapshot; hermes' get_session skips the repair for it",
        "the pending turn started less than 30 s before now; "
        "hermes' get_session would wait (the stream may still be finishing)",
        "a compression continuation of this session exists (_index.json, child1.json); "
        "hermes' get_session skips the repair for its parent",
    ]


@pytest.mark.parametrize(
    ("started", "waits"),
    [(NOW - 30, False), (NOW - 29.9, True), (str(NOW - 10), True), ("soon", False), (0, False)],
    ids=["exactly-30-s", "just-under", "numeric-text", "text", "zero"],
)
def test_the_grace_window_is_under_30_seconds_of_a_float_start(home: Path, started, waits: bool) -> None:
    """Rule: hermes waits while ``time.time() - float(pending_started_at) < 30``; a falsy start, or
    one ``float()`` refuses, is "old enough"."""
    write_sidecar(home, list(HISTORY))
    path = home / "webui" / "sessions" / f"{SID}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["pending_started_at"] = started
    path.write_text(json.dumps(raw), encoding="utf-8")
    grace = (
        "the pending turn started less than 30 s before now; "
        "hermes' get_session would wait (the stream may still be finishing)"
    )
    assert (grace in plan_for(home).warnings) is waits


def test_a_start_time_no_calendar_can_show_is_given_as_the_number(home: Path) -> None:
    """Rule (the plan's words): a recovered row's time the local calendar cannot show (here 10^20 s)
    is given as the raw number; hermes stores ``int(pending_started_at)`` all the same."""
    write_sidecar(home, list(HISTORY), pending_started_at=1e20)
    result = plan_for(home)
    assert (
        result.summary[0]
        == "restores the pending prompt as a recovered user row (sent 100000000000000000000)"
    )
    assert saved(result)["messages"][2]["timestamp"] == 10**20
