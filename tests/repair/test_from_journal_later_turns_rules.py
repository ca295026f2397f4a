"""``recover-from-journal`` on a turn that later turns follow: where the rows, the tool cards'
indexes and the context rows go (an inspector step, not a hermes repair: hermes' promotion would
append the rows after the later turns' rows and leave stale card indexes, spec
run-journal-and-promotion §4.4 quirk 1).

Golden 08 given up, with a later turn (a user row and its reply) after the marker: the recovered
row goes to its own turn (row 3, before the marker), so rows 3-5 move down by one.

Rules pinned here:

* every tool card whose ``assistant_msg_idx`` is a row's number follows its row, also after an
  entry of ``tool_calls`` that is not a card (passed over, kept as it is);
* an index that is not a row's number stays as the file has it: ``true`` (a bool, though
  ``True == 1``), ``3.0`` (a float, though ``3.0 == 3``), ``"3"`` (text) and ``99`` (no such row;
  the step does not refuse);
* the context row added for the turn goes before the next turn's user row, found by role, content
  and timestamp together: a reply stamped with that user row's timestamp is not it; and a context
  holding that user row alone (one row) still gets the new row before it.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.repair import from_journal
from inspector.repair.marker import RECOVERED_WORDING
from tests.recovery_helpers import apply, golden_home, make_ctx

S08 = "518fa3e90ec7"
PLAN_TEXT = "Here is a three-step migration plan: export, dual-write, cut over."
NOW = 1_779_427_000.0  # golden 08's clock: more than 24 hours after the marker was armed
LATER_USER = {"role": "user", "content": "Then write the script.", "timestamp": 1779341000}
LATER_REPLY = {"role": "assistant", "content": "Script below.", "timestamp": 1779341010}
FIRST = "We need to move the users table to Postgres."
SECOND = "Understood. Do you want a plan or the migration script?"
THIRD = "A plan first, please."


def _session_with_a_later_turn(tmp_path: Path, *, tool_calls: list, context: list | None = None) -> Path:
    """Golden 08 (given up) with its run journal and a later turn after the marker."""
    home = golden_home(tmp_path, "08-giveup-after-24h")
    path = home / "webui" / "sessions" / f"{S08}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["messages"] += [dict(LATER_USER), dict(LATER_REPLY)]
    data["context_messages"] = (
        context if context is not None else data["context_messages"] + [dict(LATER_USER), dict(LATER_REPLY)]
    )
    data["tool_calls"] = tool_calls
    data["message_count"] = len(data["messages"])
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return home


def _recover(home: Path, tmp_path: Path) -> dict:
    plan = from_journal.plan(make_ctx(home, NOW), S08)
    assert plan.refusal is None
    assert plan.result["recovered_runs"] != []
    apply(plan, tmp_path)
    return json.loads((home / "webui" / "sessions" / f"{S08}.json").read_text(encoding="utf-8"))


def _card(name: str, idx: object) -> dict:
    return {"name": name, "tid": name, "assistant_msg_idx": idx, "args": {}, "done": True}


def test_cards_follow_their_rows_after_an_entry_that_is_not_a_card(tmp_path: Path) -> None:
    """Rule: a non-card entry is passed over (kept); the cards after it still follow their rows."""
    home = _session_with_a_later_turn(
        tmp_path, tool_calls=["not a card", _card("reply", 5), _card("later_user", 4)]
    )
    after = _recover(home, tmp_path)
    assert [m["content"] for m in after["messages"]][3:] == [
        PLAN_TEXT,
        RECOVERED_WORDING,
        "Then write the script.",
        "Script below.",
    ]
    assert after["tool_calls"][0] == "not a card"
    assert [c["assistant_msg_idx"] for c in after["tool_calls"][1:]] == [6, 5]


def test_an_index_that_is_not_a_row_number_stays_as_the_file_has_it(tmp_path: Path) -> None:
    """Rule: a bool, a float, text and a number past the rows are left alone, not refused."""
    home = _session_with_a_later_turn(
        tmp_path,
        tool_calls=[
            _card("bool", True),
            _card("float", 3.0),
            _card("text", "3"),
            _card("past", 99),
            _card("row", 3),
        ],
    )
    after = _recover(home, tmp_path)
    got = [c["assistant_msg_idx"] for c in after["tool_calls"]]
    assert [type(v).__name__ for v in got] == ["bool", "float", "str", "int", "int"]
    assert got == [True, 3.0, "3", 99, 4]  # only the plain row number (the marker, 3 -> 4) moved


def test_the_context_row_goes_before_the_next_user_row_not_a_reply_of_the_same_second(tmp_path: Path) -> None:
    """Rule: the next user row is found by role, content and timestamp together."""
    reply_same_second = {"role": "assistant", "content": SECOND, "timestamp": LATER_USER["timestamp"]}
    context = [
        {"role": "user", "content": FIRST, "timestamp": 1779339850},
        reply_same_second,
        {"role": "user", "content": THIRD, "timestamp": 1779340000, "_recovered": True},
        dict(LATER_USER),
        dict(LATER_REPLY),
    ]
    after = _recover(_session_with_a_later_turn(tmp_path, tool_calls=[], context=context), tmp_path)
    assert [m["content"] for m in after["context_messages"]] == [
        FIRST,
        SECOND,
        THIRD,
        PLAN_TEXT,
        "Then write the script.",
        "Script below.",
    ]


def test_a_context_of_the_next_user_row_alone_gets_the_new_row_before_it(tmp_path: Path) -> None:
    """Rule: one context row that is the next user row is still moved after (a context of one row)."""
    after = _recover(
        _session_with_a_later_turn(tmp_path, tool_calls=[], context=[dict(LATER_USER)]), tmp_path
    )
    assert [m["content"] for m in after["context_messages"]] == [PLAN_TEXT, "Then write the script."]
