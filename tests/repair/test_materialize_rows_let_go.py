"""A home-wide materialize lets go of each state.db row's messages once the row is planned.

Rules pinned here (``materialize._each_planned_then_let_go`` and its use in ``_plan_rows``):

* each row is planned with its messages, in the rows' order, and the plan's answers are given as
  they come;
* a row's messages are let go of only after it is planned (the next row still has its own when it
  is planned), and once every row is planned none holds them; the rows themselves stay listed, with
  their id and flags;
* the plan is the one made from the rows as read: the new sidecars' bytes hold the messages, and the
  lines about the rows left alone still name them.
"""

from __future__ import annotations

import json

from inspector.repair import materialize
from tests.recovery_helpers import home_dirs, make_ctx, seed_state_db


def test_each_row_is_planned_with_its_messages_and_let_go_of_after():
    rows = [
        {"id": "a", "messages": [{"role": "user", "content": "one"}]},
        {"id": "b", "messages": []},
        {
            "id": "c",
            "messages": [{"role": "user", "content": "three"}, {"role": "assistant", "content": "4"}],
        },
    ]
    seen = []

    def plan_row(row):
        # what the row holds when it is planned, and whether the rows after it still hold theirs
        seen.append((row["id"], len(row["messages"]), [("messages" in r) for r in rows]))
        return None if row["id"] == "b" else {"session_id": row["id"]}

    got = list(materialize._each_planned_then_let_go(rows, plan_row))
    assert got == [{"session_id": "a"}, None, {"session_id": "c"}]
    assert seen == [
        ("a", 1, [True, True, True]),
        ("b", 0, [False, True, True]),
        ("c", 2, [False, False, True]),
    ]
    assert rows == [{"id": "a"}, {"id": "b"}, {"id": "c"}]


def test_a_row_without_messages_is_let_go_of_all_the_same():
    rows = [{"id": "x"}]
    assert list(materialize._each_planned_then_let_go(rows, lambda row: "planned")) == ["planned"]
    assert rows == [{"id": "x"}]


def test_the_plan_holds_every_planned_rows_messages_and_names_the_rows_left_alone(tmp_path):
    home, _sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="first", messages=2)
    seed_state_db(db, sid="second", messages=3, create=False)
    seed_state_db(db, sid="empty", messages=0, create=False)
    plan = materialize.plan(make_ctx(home), None)
    assert plan.refusal is None
    made = {c.path.name: json.loads(c.after) for c in plan.changes if c.path.name != "_index.json"}
    assert sorted(made) == ["first.json", "second.json"]
    assert [m["content"] for m in made["first.json"]["messages"]] == ["message 1", "message 2"]
    assert [m["content"] for m in made["second.json"]["messages"]] == ["message 1", "message 2", "message 3"]
    assert "create first.json from state.db (2 messages)" in plan.summary
    assert "create second.json from state.db (3 messages)" in plan.summary
    assert "leave 'empty' alone: its state.db row has no messages (no blank sidecars)" in plan.summary
    assert plan.result["details"] == [
        {"session_id": "first", "materialized": True, "messages": 2},
        {"session_id": "second", "materialized": True, "messages": 3},
    ]
