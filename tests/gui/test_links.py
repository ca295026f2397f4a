"""Journal events <-> transcript rows, and the session data behind the view (no Qt needed)."""

from __future__ import annotations

import json
import time

from inspector.actions import default_clock, make_context, plan_action
from inspector.load import load_catalogue
from inspector.plan import Plan
from inspector.present.links import link_run, normalize, replay_segments
from inspector.present.session_data import (
    first_needing_attention,
    load_session_data,
    plan_applies,
    plan_session_actions,
    plan_tooltip,
)
from tests.conftest import FIXTURES

RUN = "7c8b4108d52b4aba9af362d3a54f47ac"


def _fixture_events() -> list[tuple[int, dict]]:
    lines = (FIXTURES / "journal" / "run_journal_example.jsonl").read_text(encoding="utf-8").splitlines()
    return [(i, json.loads(line)) for i, line in enumerate(lines)]


def _promoted() -> dict:
    return json.loads((FIXTURES / "journal" / "session_after_promotion.json").read_text(encoding="utf-8"))


def test_segments_follow_hermes_flushes():
    segments, tools = replay_segments(_fixture_events())
    assert [(s.content, s.reasoning) for s in segments] == [
        ("Checking GitHub first.", "The user wants open PRs; use gh."),
        ("There are 3 open PRs.", ""),
    ]
    assert segments[0].rows == [0, 1, 2]
    assert tools == {4: [3, 4]}  # the tool event (seq 4) and its tool_complete


def test_recovered_rows_link_to_the_events_they_came_from():
    session = _promoted()
    links = link_run(session["messages"], session["tool_calls"], RUN, _fixture_events())
    # Row 3 came from reasoning + two tokens, and hosts the tool card journal-4 (tool + tool_complete).
    assert links.message_to_events[3] == [0, 1, 2, 3, 4]
    assert links.message_to_events[4] == [5]
    assert links.event_to_message[5] == 4
    assert 2 not in links.message_to_events  # the _recovered user row has no journal events


def test_rows_of_another_run_are_not_linked():
    session = _promoted()
    links = link_run(session["messages"], session["tool_calls"], "another-run", _fixture_events())
    assert links.message_to_events == {} and links.event_to_message == {}


def test_gateway_error_rows_link_by_event_id():
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "boom",
            "_error": True,
            "_recovered_from_run_journal": True,
            "_recovered_stream_id": "r1",
            "_recovered_event_id": "r1:2",
        },
    ]
    events = [
        (0, {"event": "token", "seq": 1, "event_id": "r1:1", "payload": {"text": "x"}}),
        (1, {"event": "apperror", "seq": 2, "event_id": "r1:2", "payload": {}}),
    ]
    links = link_run(messages, [], "r1", events)
    assert links.event_to_message[1] == 1


def test_normalize_is_hermes_whitespace_rule():
    assert normalize("  a \n\t b  ") == "a b"
    assert normalize(None) == ""


def test_session_data_links_the_demo_recovery(demo, demo_home):
    sid = demo.sessions["lost_response"]
    ctx = make_context(demo_home, default_clock(demo_home, None, None))
    plan = plan_action(ctx, "recover-journal", sid)[0]
    for change in plan.changes:
        change.path.write_bytes(change.after)
    data = load_session_data(demo_home, sid)
    run = data.runs[0]
    assert run.run_id == demo.stream_ids["lost_response"]
    recovered = [i for i, m in enumerate(data.detail.messages) if m.get("_recovered_from_run_journal")]
    assert recovered and all(i in run.links.message_to_events for i in recovered)
    assert data.run_for_message(recovered[0]) is run
    assert data.preferred_run() == 0


def test_dropped_lines_are_counted(demo, demo_home):
    data = load_session_data(demo_home, demo.sessions["stale_pending"])
    assert data.runs[0].dropped_lines >= 2


def test_plans_enable_only_what_applies(demo, demo_home):
    plans = plan_session_actions(demo_home, demo.sessions["lost_response"], set())
    assert plan_applies(plans["recover-journal"])
    assert not plan_applies(plans["restore-backup"])
    assert "rebuild-index" not in plans  # home-wide: planned only when a finding asks for it
    assert "refused" in plan_tooltip("x", Plan("x", "s", refusal="no")) and plan_tooltip("x", None)


def test_first_needing_attention_prefers_recoverable_journal_output(demo, demo_home):
    cat = load_catalogue(demo_home, now=time.time())
    assert first_needing_attention(demo_home, cat) == demo.sessions["lost_response"]
