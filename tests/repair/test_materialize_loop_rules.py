"""The journal materializer's loop handles token and reasoning events in place (``_Materializer.run``)
and gives exactly what the plain per-event dispatch gives (``run_plain``: each event through the
handlers ``on_token``, ``on_reasoning``, ``on_interim``, ``on_tool``, ``on_tool_complete`` and the
flush events, as hermes' loop reads them).

Rule: the same session (rows, context, cards), the same report, the same exception, on events with
odd names, payloads, texts and times, with and without the dedupe pass.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.repair.journal_recovery import MaterializeReport, _Materializer
from inspector.store.journal import journal_event

TEXT_VALUES = ["", " ", "\n", "hello", " hello", "world ", "x" * 30, "\u2028", "a\n\n"]
TEXTS = st.sampled_from(TEXT_VALUES)
ODD_VALUES = [None, 0, 1, True, False, [1], {"a": 1}, 1.5]
# token and reasoning events (what the loop handles itself) most often, the others among them
NAMES = st.sampled_from(
    ["token"] * 6
    + ["reasoning"] * 4
    + ["interim_assistant", "tool", "tool_complete", "done", "error", "metering", "", None]
)
# payloads drawn from a fixed list (fast to draw): text-like keys with every kind of value, the
# keys of the other events, and payloads that are not objects
PAYLOADS = st.sampled_from(
    [{"text": t} for t in TEXT_VALUES + ODD_VALUES]
    + [{"reasoning": t} for t in TEXT_VALUES[:5] + ODD_VALUES[:4]]
    + [{"thinking": t} for t in TEXT_VALUES[:5]]
    + [{"text": "", "reasoning": " r"}, {"text": None, "reasoning": None, "thinking": "th"}, {}]
    + [{"text": "i", "already_streamed": True}, {"text": " i "}]
    + [
        {"name": "t1", "preview": "p", "args": {"a": "b"}},
        {"name": "t2", "args": 5},
        {"name": "t1", "preview": "q", "duration": 1.5, "is_error": "yes"},
        {"name": "", "is_error": True},
    ]
    + ODD_VALUES
)
CREATED = st.sampled_from([None, 0, 5, 7.5, True, "9", 0.0])


@st.composite
def events(draw):
    out = []
    for _ in range(draw(st.integers(0, 16))):
        name = draw(NAMES)
        rec = {
            "payload": draw(PAYLOADS),
            "created_at": draw(CREATED),
            "seq": draw(st.sampled_from([None, 0, 2])),
        }
        how = draw(st.sampled_from(["event", "event", "type", "both", "odd"]))
        if how in ("event", "both"):
            rec["event"] = name
        if how in ("type", "both"):
            rec["type"] = name
        if how == "odd":
            rec["event"] = draw(st.sampled_from([0, 5, ["token"]]))
            rec["type"] = name
        out.append(journal_event(copy.deepcopy(rec)))
    return out


ROWS = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant"]), "content": TEXTS},
        optional={
            "reasoning": TEXTS,
            "_recovered_from_run_journal": st.just(True),
            "_recovered_stream_id": st.just("s1"),
        },
    ),
    max_size=4,
)


def _outcome(method: str, session: dict, evs: list, dedupe: bool, started: object):
    report = MaterializeReport()
    m = _Materializer(session, "s1", dedupe=dedupe, now=100.0, report=report)
    m.started_at = started
    try:
        getattr(m, method)(iter(evs))
    except Exception as exc:  # noqa: BLE001 - the same exception is part of the rule
        return ("raised", type(exc).__name__, str(exc), repr(session), repr(report))
    return (repr(session), repr(report), m.started_at, m.current, repr(m.cards))


@settings(max_examples=500, deadline=None)
@given(
    evs=events(),
    rows=ROWS,
    dedupe=st.booleans(),
    started=st.one_of(st.none(), st.just(3)),
    cards=st.lists(
        st.fixed_dictionaries({"name": st.sampled_from(["t1", "t2"]), "preview": TEXTS}), max_size=2
    ),
)
def test_the_loop_gives_what_the_plain_dispatch_gives(evs, rows, dedupe, started, cards):
    session = {"messages": rows, "tool_calls": cards, "pending_user_message": "hi"}
    plain = _outcome("run_plain", copy.deepcopy(session), evs, dedupe, started)
    fast = _outcome("run", copy.deepcopy(session), evs, dedupe, started)
    assert fast == plain


def test_a_token_after_a_flush_starts_a_new_row_in_the_same_lists():
    # flush() empties the text lists in place: the loop holds them across a flush
    evs = [
        journal_event({"event": "token", "payload": {"text": "one"}, "created_at": 1}),
        journal_event({"event": "done", "payload": {}}),
        journal_event({"event": "token", "payload": {"text": "two"}, "created_at": 2}),
    ]
    session = {"messages": []}
    report = MaterializeReport()
    _Materializer(session, "s1", dedupe=False, now=100.0, report=report).run(iter(evs))
    assert [(m["content"], m["timestamp"]) for m in session["messages"]] == [("one", 1), ("two", 2)]
    assert report.events == 3 and report.rows_added == [0, 1]


def _rows(method: str, records: list[dict]) -> list[tuple]:
    session: dict = {"messages": []}
    m = _Materializer(session, "s1", dedupe=False, now=100.0, report=MaterializeReport())
    getattr(m, method)(iter([journal_event(r) for r in records]))
    return [(row["content"], row.get("reasoning"), row["timestamp"]) for row in session["messages"]]


@pytest.mark.parametrize("method", ["run", "run_plain"])
@pytest.mark.parametrize(
    "records, rows",
    [
        # a reasoning event without any text starts nothing: the row's time is the token's
        (
            [
                {"event": "reasoning", "payload": {}, "created_at": 5},
                {"event": "token", "payload": {"text": "hi"}, "created_at": 7},
            ],
            [("hi", None, 7)],
        ),
        # a reasoning event with text starts the row at its own time
        (
            [
                {"event": "reasoning", "payload": {"text": "r"}, "created_at": 5},
                {"event": "token", "payload": {"text": "hi"}, "created_at": 7},
            ],
            [("hi", "r", 5)],
        ),
        # a time that is not a number is no time: the clock's
        ([{"event": "token", "payload": {"text": "hi"}, "created_at": "12"}], [("hi", None, 100)]),
        ([{"event": "reasoning", "payload": {"thinking": "t"}, "created_at": "12"}], [("", "t", 100)]),
    ],
    ids=["empty-reasoning", "reasoning-first", "token-text-time", "reasoning-text-time"],
)
def test_token_and_reasoning_rules_written_out(method, records, rows):
    """Rule, for the loop and for the plain dispatch alike (hand-written rows: content, reasoning,
    timestamp): hermes' handlers as ``_append_journaled_partial_output`` reads them."""
    assert _rows(method, records) == rows
