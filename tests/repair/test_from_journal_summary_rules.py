"""``recover-from-journal``'s plan on golden 08 given up, with events added to its run journal: the
summary line of each run put back, the warnings, and the rows (an inspector step, spec
run-journal-and-promotion §4.4; the wording is the project's own).

Golden 08's journal holds two token events (``PLAN_TEXT``, 66 characters) and no terminal record;
the session's marker is row 3, so the text goes back as row 3 and the marker becomes row 4.

Rules pinned here:

* the line counts the rows and the tool cards put back, singular for one ("1 row", "1 tool card")
  and plural otherwise ("2 rows", "2 tool cards"), then says where they went and the first text;
* a tool event ends the row before it (its card points at that row); text after it is a new row;
* hermes' session-wide dedupe: journaled text equal to an earlier turn's row is taken as present
  (no second copy), with a warning that says so; the text after it is still put back;
* an event without ``created_at`` stamps its row with the plan's clock (``int(now)``);
* when later turns follow the recovered one, a second line says the rows go to their own turn
  (quirk 1); with no later turn there is no such line;
* a ``tool_complete`` whose ``is_error`` is a non-empty string gets ``is_error: True`` and a warning.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from inspector.repair import from_journal
from tests.recovery_helpers import golden_home, make_ctx

S08 = "518fa3e90ec7"
RUN08 = "eef688569a1f22202b7552e7c6e54f42"
PLAN_TEXT = "Here is a three-step migration plan: export, dual-write, cut over."
SECOND = "Understood. Do you want a plan or the migration script?"  # golden 08's row 1 (an earlier turn)
NOW = 1_779_427_000.0  # golden 08's clock: more than 24 hours after the marker was armed
WHERE = (
    " above the turn's interrupted marker (now row {row}), whose wording becomes hermes' promoted one "
    '("The partial output above was recovered from the run journal")'
)


def _event(seq: int, event: str, payload: dict, created_at: float | None = 1779340005.0) -> bytes:
    record = {
        "version": 1,
        "event_id": f"{RUN08}:{seq}",
        "seq": seq,
        "run_id": RUN08,
        "session_id": S08,
        "event": event,
        "type": event,
        "created_at": created_at,
        "terminal": False,
        "terminal_state": None,
        "payload": payload,
    }
    if created_at is None:
        del record["created_at"]
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def _plan(tmp_path: Path, *, before: bytes = b"", after: bytes = b"", timeless: bool = False):
    home = golden_home(tmp_path, "08-giveup-after-24h")
    journal = home / "webui" / "sessions" / "_run_journal" / S08 / f"{RUN08}.jsonl"
    lines = journal.read_bytes()
    if timeless:
        lines = re.sub(rb'"created_at":[0-9.]+,', b"", lines)
    journal.write_bytes(before + lines + after)
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal is None
    return plan, json.loads(plan.changes[0].after)


def _tool(seq: int, name: str) -> bytes:
    return _event(seq, "tool", {"name": name, "preview": name, "args": {}})


def test_one_row_no_card(tmp_path: Path) -> None:
    """Rule: "puts back 1 row" (singular), no card words."""
    plan, _ = _plan(tmp_path)
    line = f"run {RUN08}: puts back 1 row" + WHERE.format(row=4) + f"; first text {PLAN_TEXT!r}"
    assert line in plan.summary
    assert not any("later turns" in x for x in plan.summary)  # no later turn here


def test_one_row_and_one_tool_card(tmp_path: Path) -> None:
    """Rule: "1 row and 1 tool card" (both singular)."""
    plan, data = _plan(tmp_path, after=_tool(3, "terminal"))
    line = (
        f"run {RUN08}: puts back 1 row and 1 tool card" + WHERE.format(row=4) + f"; first text {PLAN_TEXT!r}"
    )
    assert line in plan.summary
    assert [(c["name"], c["assistant_msg_idx"]) for c in data["tool_calls"]] == [("terminal", 3)]


def test_two_rows_and_two_tool_cards(tmp_path: Path) -> None:
    """Rule: "2 rows and 2 tool cards" (both plural); a tool event ends the row before it."""
    after = _tool(3, "terminal") + _tool(4, "read_file") + _event(5, "token", {"text": "Step two."})
    plan, data = _plan(tmp_path, after=after)
    line = (
        f"run {RUN08}: puts back 2 rows and 2 tool cards"
        + WHERE.format(row=5)
        + f"; first text {PLAN_TEXT!r}"
    )
    assert line in plan.summary
    assert [m["content"] for m in data["messages"][3:5]] == [PLAN_TEXT, "Step two."]
    assert [(c["name"], c["assistant_msg_idx"]) for c in data["tool_calls"]] == [
        ("terminal", 3),
        ("read_file", 3),
    ]


def test_text_equal_to_an_earlier_turns_row_is_taken_as_present_with_a_warning(tmp_path: Path) -> None:
    """Rule: hermes' session-wide dedupe: no second copy of row 1; the rest still put back."""
    interim = _event(0, "interim_assistant", {"text": SECOND}, created_at=1779340002.0)
    plan, data = _plan(tmp_path, before=interim)
    contents = [m["content"] for m in data["messages"]]
    assert contents.count(SECOND) == 1 and contents[3] == PLAN_TEXT and len(contents) == 5
    assert any(f"journaled text {SECOND!r} equals (or is contained in) row 1" in w for w in plan.warnings)


def test_events_without_a_time_take_the_plans_clock(tmp_path: Path) -> None:
    """Rule: no created_at: the row's timestamp is int(now)."""
    _, data = _plan(tmp_path, timeless=True)
    assert data["messages"][3]["content"] == PLAN_TEXT
    assert data["messages"][3]["timestamp"] == int(NOW) == 1779427000


def test_a_string_is_error_is_true_with_a_warning(tmp_path: Path) -> None:
    """Rule: is_error "yes" is truthy: the card's is_error is True, and a warning says why."""
    after = _tool(3, "terminal") + _event(4, "tool_complete", {"name": "terminal", "is_error": "yes"})
    plan, data = _plan(tmp_path, after=after)
    assert data["tool_calls"][0]["is_error"] is True
    assert (
        "tool_complete for 'terminal' has is_error='yes'; hermes uses truthiness, so the card gets is_error=True"
        in plan.warnings
    )


def test_a_turn_without_marker_says_where_the_rows_went(tmp_path: Path) -> None:
    """Rule: no marker: "at the end of its turn (row N); the turn has no marker and none is added"."""
    home = golden_home(tmp_path, "08-giveup-after-24h")
    path = home / "webui" / "sessions" / f"{S08}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["messages"][3]  # the marker
    data["message_count"] = 3
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    line = (
        f"run {RUN08}: puts back 1 row at the end of its turn (row 3); the turn has no marker and none is added"
        f"; first text {PLAN_TEXT!r}"
    )
    assert line in plan.summary


def test_a_first_text_over_70_characters_is_cut_to_67_and_three_dots(tmp_path: Path) -> None:
    """Rule: the first text is quoted whole up to 70 characters, else its first 67 and "..."."""
    more = " Then a rollback plan for each step."  # PLAN_TEXT (66) + 36 = 102 characters
    plan, data = _plan(tmp_path, after=_event(3, "token", {"text": more}))
    assert data["messages"][3]["content"] == PLAN_TEXT + more
    snippet = "Here is a three-step migration plan: export, dual-write, cut over. ..."  # 66 + " " + "..."
    assert len(snippet) == 70
    line = f"run {RUN08}: puts back 1 row" + WHERE.format(row=4) + f"; first text {snippet!r}"
    assert line in plan.summary


LATER_TURNS = (
    "later turns follow this one: the rows go to their own turn and tool cards keep "
    "pointing at their rows (hermes' promotion would append them after the later "
    "turns' rows and leave stale indexes, quirk 1)"
)


def test_later_turns_get_their_own_line(tmp_path: Path) -> None:
    """Rule: a later turn after the marker: the quirk-1 line, word for word."""
    home = golden_home(tmp_path, "08-giveup-after-24h")
    path = home / "webui" / "sessions" / f"{S08}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    later = [
        {"role": "user", "content": "Then write the script.", "timestamp": 1779341000},
        {"role": "assistant", "content": "Script below.", "timestamp": 1779341010},
    ]
    data["messages"] += later
    data["context_messages"] += later
    data["message_count"] = 6
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.summary[-1] == LATER_TURNS
    assert (
        f"run {RUN08}: puts back 1 row" + WHERE.format(row=4) + f"; first text {PLAN_TEXT!r}" in plan.summary
    )


def test_a_first_text_of_70_characters_is_quoted_whole_71_is_cut(tmp_path: Path) -> None:
    """Rule: the cut is at more than 70 characters, not at 70."""
    plan, _ = _plan(tmp_path / "a", after=_event(3, "token", {"text": " Yes"}))
    whole = PLAN_TEXT + " Yes"
    assert len(whole) == 70
    assert any(x.endswith(f"; first text {whole!r}") for x in plan.summary)
    plan, _ = _plan(tmp_path / "b", after=_event(3, "token", {"text": " Yes!"}))
    assert any(x.endswith(f"; first text {PLAN_TEXT + ' ...'!r}") for x in plan.summary)


def test_the_plan_names_its_session_and_refuses_an_unsafe_id(tmp_path: Path) -> None:
    """Rule: the plan is the session's; an id with a dot is refused with the loader's words."""
    plan, _ = _plan(tmp_path)
    assert plan.session_id == S08
    refused = from_journal.plan(make_ctx(tmp_path / "home", NOW), "bad.id")
    assert refused.refusal == "unsafe session id 'bad.id': only letters, digits, '_' and '-' are allowed"
    assert refused.changes == []
