"""The tool cards of the journal materializer (hermes ``api/models.py``:
``_append_journaled_partial_output``'s ``tool`` branch, ``_journal_tool_already_present``,
``_truncate_journal_tool_args``), rule by rule with the cards written out by hand
(tests/MUTATION.md, tenth session).

Rules pinned here:

* an argument value of exactly 120 code points is kept whole; one of 121 is cut to 120 and
  ``...`` added;
* a card is "already present" when any card of the same name has the same preview and is not
  tagged with another run: cards before it with another preview, or tagged with another run,
  are passed over, not the end of the look;
* without a stream id (``None`` or ``""``), a tagged card of any run counts (hermes' session-wide
  look); with one, a card tagged with another run does not, so the journal's card is added;
* a skipped card leaves the row it was anchored to current: the next tool is anchored to it too
  (no new empty anchor row);
* a card's ``tid`` is ``journal-<seq>``, or without a seq ``journal-<the card's number among the
  cards this pass adds>``, counting from 1;
* a card without a name is no earlier card of any name of this run (not ``quirk 2``).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from inspector.repair.journal_read import JournalRead
from inspector.repair.journal_recovery import (
    MaterializeReport,
    _tool_args,
    append_journaled_partial_output,
    tool_card_present,
)

S = "run_tc"
NOW = 1_800_000_000.0
TAG = {"_recovered_from_run_journal": True, "_recovered_stream_id": S}


def ev(event_name: str, created_at: float | None = None, *, seq: int | None = None, **payload) -> dict:
    event: dict = {"event": event_name, "payload": payload}
    if created_at is not None:
        event["created_at"] = created_at
    if seq is not None:
        event["seq"] = seq
    return event


def run(messages: list, events: list, tool_calls: list) -> tuple[dict, MaterializeReport]:
    session = {"messages": copy.deepcopy(messages), "tool_calls": copy.deepcopy(tool_calls)}
    journal = JournalRead(S, Path("j.jsonl"), True, 1, events, [], None, [])
    report = append_journaled_partial_output(session, S, journal, dedupe=True, now=NOW)
    return session, report


def card(name: str, preview: str, tid: str, idx: int, args: dict | None = None) -> dict:
    return {
        "name": name,
        "preview": preview,
        "snippet": preview,
        "tid": tid,
        "assistant_msg_idx": idx,
        "args": args or {},
        "done": False,
        **TAG,
    }


def anchor(ts: float) -> dict:
    return {"role": "assistant", "content": "", "timestamp": int(ts), **TAG}


# ---------------------------------------------------------------- arguments


def test_an_argument_of_exactly_120_code_points_is_kept_whole() -> None:
    assert _tool_args({"cmd": "é" * 120}) == {"cmd": "é" * 120}


def test_an_argument_of_121_code_points_is_cut_to_120_and_marked() -> None:
    assert _tool_args({"cmd": "é" * 121}) == {"cmd": "é" * 120 + "..."}


def test_the_journaled_card_keeps_a_120_character_argument_whole() -> None:
    value = "x" * 119 + "y"
    session, _ = run([], [ev("tool", 50.0, name="terminal", preview="ls", args={"cmd": value})], [])
    assert session["tool_calls"] == [card("terminal", "ls", "journal-1", 0, {"cmd": value})]


# ---------------------------------------------------------------- already present


def test_a_card_with_another_preview_before_the_matching_one_does_not_end_the_look() -> None:
    present = [{"name": "terminal", "preview": "pwd"}, {"name": "terminal", "preview": "ls"}]
    session, report = run([], [ev("tool", 50.0, name="terminal", preview="ls")], present)
    assert report.cards_skipped == ["terminal"] and report.cards_added == []
    assert session["tool_calls"] == present


def test_a_card_of_another_run_before_an_untagged_match_does_not_end_the_look() -> None:
    present = [
        {"name": "terminal", "preview": "ls", "_recovered_stream_id": "run_other"},
        {"name": "terminal", "preview": "ls"},
    ]
    session, report = run([], [ev("tool", 50.0, name="terminal", preview="ls")], present)
    assert report.cards_skipped == ["terminal"] and report.cards_added == []
    assert session["tool_calls"] == present


def test_a_card_of_another_run_alone_does_not_stop_this_runs_card() -> None:
    other = {"name": "terminal", "preview": "ls", "_recovered_stream_id": "run_other"}
    session, report = run([], [ev("tool", 50.0, name="terminal", preview="ls")], [other])
    assert report.cards_skipped == [] and report.duplicate_cards == []
    assert session["tool_calls"] == [other, card("terminal", "ls", "journal-1", 0)]
    assert session["messages"] == [anchor(50.0)]


@pytest.mark.parametrize("stream_id", [None, ""])
def test_without_a_stream_id_a_card_of_any_run_is_present(stream_id) -> None:
    session = {"tool_calls": [{"name": "terminal", "preview": "ls", "_recovered_stream_id": "run_other"}]}
    assert tool_card_present(session, "terminal", "ls", stream_id) is True


def test_with_a_stream_id_a_card_of_another_run_is_not_present() -> None:
    session = {"tool_calls": [{"name": "terminal", "preview": "ls", "_recovered_stream_id": "run_other"}]}
    assert tool_card_present(session, "terminal", "ls", S) is False
    assert tool_card_present(session, "terminal", "ls", "run_other") is True


# ---------------------------------------------------------------- anchors after a skipped card


def test_a_skipped_card_leaves_its_text_row_the_anchor_of_the_next_tool() -> None:
    present = [{"name": "terminal", "preview": "ls"}]
    events = [
        ev("token", 40.0, text="hello"),
        ev("tool", 50.0, name="terminal", preview="ls"),
        ev("tool", 60.0, name="read_file", preview="a.txt"),
    ]
    session, report = run([], events, present)
    text_row = {"role": "assistant", "content": "hello", "timestamp": 40, **TAG}
    assert session["messages"] == [text_row]
    assert report.anchors_added == [] and report.anchor_reused is False
    assert session["tool_calls"] == present + [card("read_file", "a.txt", "journal-1", 0)]


# ---------------------------------------------------------------- tids


def test_cards_without_a_seq_are_numbered_from_one_among_this_passes_cards() -> None:
    events = [
        ev("tool", 50.0, name="terminal", preview="ls"),
        ev("tool", 51.0, name="terminal", preview="pwd"),
        ev("tool", 52.0, name="read_file", preview="a.txt"),
    ]
    session, _ = run([], events, [])
    assert [c["tid"] for c in session["tool_calls"]] == ["journal-1", "journal-2", "journal-3"]


def test_a_seq_names_the_card_and_a_card_without_one_takes_its_number() -> None:
    events = [
        ev("tool", 50.0, seq=7, name="terminal", preview="ls"),
        ev("tool", 51.0, name="terminal", preview="pwd"),
        ev("tool", 52.0, seq=0, name="read_file", preview="a.txt"),
    ]
    session, _ = run([], events, [])
    assert session["tool_calls"] == [
        card("terminal", "ls", "journal-7", 0),
        card("terminal", "pwd", "journal-2", 0),
        card("read_file", "a.txt", "journal-3", 0),
    ]


# ---------------------------------------------------------------- earlier cards of this run by name


@pytest.mark.parametrize("name", ["tool", "terminal", "XXXX"])
def test_a_card_without_a_name_is_no_earlier_card_of_any_name(name) -> None:
    """Even a name that is the text a missing name could be mistaken for."""
    nameless = {"preview": "ls", **TAG}
    session, report = run([], [ev("tool", 50.0, name=name, preview="pwd")], [nameless])
    assert report.duplicate_cards == []
    assert session["tool_calls"] == [nameless, card(name, "pwd", "journal-1", 0)]


def test_a_card_of_the_same_name_of_this_run_is_an_earlier_card() -> None:
    earlier = {"name": "terminal", "preview": "ls", **TAG}
    _, report = run([], [ev("tool", 50.0, name="terminal", preview="pwd")], [earlier])
    assert report.duplicate_cards == ["terminal"]
