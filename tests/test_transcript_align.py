"""Two copies of a chat aligned message by message (sidecar beside state.db, sidecar beside its
.bak): the rows only in one copy, the rows that differ and in what, the rows that moved."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.session_detail import SessionDetail, StateDbView, _load_bak
from inspector.transcript_align import (
    DIFFERS,
    MOVED,
    ONLY_LEFT,
    ONLY_RIGHT,
    SAME,
    Copy,
    align,
    bak_copy,
    bak_reason,
    compare_bak,
    compare_state_db,
    state_db_copy,
    state_db_reason,
)


def u(text: str, t: float = 100.0) -> dict:
    return {"role": "user", "content": text, "timestamp": t}


def a(text: str, t: float = 101.0, **more) -> dict:
    return {"role": "assistant", "content": text, "timestamp": t, **more}


def call(name: str, args: str = "{}", call_id: str = "call_1") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def kinds(alignment) -> list[tuple[str, int | None, int | None]]:
    return [(r.kind, r.left, r.right) for r in alignment.rows]


CHAT = [u("What is the capital of France?"), a("Paris."), u("And of Italy?", 102.0), a("Rome.", 103.0)]


def test_equal_copies_are_all_the_same() -> None:
    al = align(Copy("sidecar", CHAT), Copy("state.db [default]", [dict(m) for m in CHAT]))
    assert kinds(al) == [(SAME, i, i) for i in range(4)]
    assert al.changes() == []
    assert al.summary() == "The sidecar and the state.db [default] hold the same 4 messages."


def test_messages_appended_in_state_db_are_only_on_its_side() -> None:
    """The drift of PR #5053: the agent kept writing to state.db after the sidecar's last save."""
    newer = CHAT + [u("And of Spain?", 104.0), a("Madrid.", 105.0)]
    al = align(Copy("sidecar", CHAT), Copy("state.db [default]", newer))
    assert kinds(al)[4:] == [(ONLY_RIGHT, None, 4), (ONLY_RIGHT, None, 5)]
    assert al.rows[5].right_text == "Madrid." and al.rows[5].left_text == ""
    assert al.changes() == [4, 5]
    assert al.summary() == "Messages: 2 only in the state.db [default], 4 the same."


def test_an_edited_message_is_one_row_that_differs_in_its_text() -> None:
    edited = [dict(m) for m in CHAT]
    edited[3] = a("Rome, of course.", 103.0)
    al = align(Copy("sidecar", CHAT), Copy("backup (.bak)", edited))
    assert kinds(al) == [(SAME, 0, 0), (SAME, 1, 1), (SAME, 2, 2), (DIFFERS, 3, 3)]
    assert al.rows[3].differences == ("text",)
    assert (al.rows[3].left_text, al.rows[3].right_text) == ("Rome.", "Rome, of course.")


def test_a_removed_message_is_only_on_the_side_that_still_has_it() -> None:
    shorter = [CHAT[0], CHAT[1], CHAT[3]]
    al = align(Copy("sidecar", CHAT), Copy("state.db [default]", shorter))
    assert kinds(al) == [(SAME, 0, 0), (SAME, 1, 1), (ONLY_LEFT, 2, None), (SAME, 3, 2)]
    assert al.summary() == "Messages: 1 only in the sidecar, 3 the same."


def test_reordered_messages_are_marked_moved_with_where_the_other_copy_has_them() -> None:
    swapped = [CHAT[0], CHAT[1], CHAT[3], CHAT[2]]
    al = align(Copy("sidecar", CHAT), Copy("state.db [default]", swapped))
    moved = [r for r in al.rows if r.kind == MOVED]
    # one of the two swapped messages stays in order, the other is the one at another place:
    # its row in each copy's order says where the other copy has it
    assert len(moved) == 2 and len({(r.left, r.right) for r in moved}) == 1
    i, j = moved[0].left, moved[0].right
    assert {i, j} == {2, 3} and CHAT[i] is swapped[j] and moved[0].left_text == moved[0].right_text
    assert [r.kind for r in al.rows].count(SAME) == 3
    assert al.summary() == "Messages: 1 moved, 3 the same."


def test_tool_rows_match_by_the_call_and_differ_in_arguments_or_call_id() -> None:
    left = [
        u("list files"),
        a("", tool_calls=[call("terminal", '{"cmd": "ls"}')]),
        {"role": "tool", "content": "a.txt", "tool_call_id": "call_1", "timestamp": 102.0},
    ]
    right = [
        u("list files"),
        a("", tool_calls=[call("terminal", '{"cmd": "ls -a"}')]),
        {
            "role": "tool",
            "content": "a.txt",
            "tool_call_id": "call_9",
            "tool_name": "terminal",
            "id": 7,
            "active": True,
            "timestamp": 102.0,
        },
    ]
    al = align(Copy("sidecar", left), Copy("state.db [default]", right))
    assert kinds(al) == [(SAME, 0, 0), (DIFFERS, 1, 1), (DIFFERS, 2, 2)]
    assert al.rows[1].differences == ("tool calls",) and al.rows[1].left_text == "(tool calls: terminal)"
    # state.db's own columns (row id, active, tool_name) are not differences; the call id is
    assert al.rows[2].differences == ("tool call id",)


def test_times_differ_only_beyond_a_second() -> None:
    al = align(Copy("sidecar", [u("hi", 100.0)]), Copy("state.db [default]", [u("hi", 100.4)]))
    assert al.rows[0].kind == SAME
    al = align(Copy("sidecar", [u("hi", 100.0)]), Copy("state.db [default]", [u("hi", 160.0)]))
    assert al.rows[0].differences == ("time",)


def test_a_copy_that_is_not_a_chat_is_said_in_words() -> None:
    al = align(Copy("sidecar", CHAT), Copy("backup (.bak)", None, "not valid JSON: Expecting value"))
    assert kinds(al) == [(ONLY_LEFT, i, None) for i in range(4)]  # what the readable copy holds
    assert al.summary() == (
        "The backup (.bak) cannot be read as a chat: not valid JSON: Expecting value. "
        "The sidecar has 4 messages."
    )


def test_state_db_copy_leaves_out_rows_taken_back_or_archived_and_says_how_many() -> None:
    rows = [
        dict(CHAT[0], id=1, active=True),
        dict(CHAT[1], id=2, active=False),
        dict(CHAT[1], id=3, active=True),
    ]
    copy = state_db_copy(StateDbView("default", Path("state.db"), {"id": "s"}, rows))
    assert [m["id"] for m in copy.messages] == [1, 3]
    assert copy.note.startswith("1 row taken back or archived")


def test_compare_state_db_and_the_reasons_it_cannot() -> None:
    detail = SessionDetail("s1", sidecar={"messages": CHAT})
    assert state_db_reason(detail) == "state.db has no row for this session"
    detail.state_db.append(StateDbView("default", Path("state.db"), {"id": "s1"}, []))
    assert state_db_reason(detail) == "state.db has this session but no message of it"
    detail.state_db.append(StateDbView("work", Path("w/state.db"), {"id": "s1"}, CHAT + [a("later", 200.0)]))
    assert state_db_reason(detail) is None
    al = compare_state_db(detail)  # the first state.db holding messages
    assert al.right.name == "state.db [work]" and al.counts()[ONLY_RIGHT] == 1


def _bak(tmp_path: Path, data: bytes) -> SessionDetail:
    bak = tmp_path / "s1.json.bak"
    bak.write_bytes(data)
    detail = SessionDetail("s1", sidecar={"messages": CHAT})
    _load_bak(detail, bak)
    return detail


def test_a_readable_bak_is_read_as_a_chat_and_compared_with_the_sidecar(tmp_path: Path) -> None:
    detail = _bak(tmp_path, json.dumps({"session_id": "s1", "messages": CHAT[:2]}).encode())
    assert detail.bak_messages == 2 and bak_reason(detail) is None
    al = compare_bak(detail)
    assert kinds(al) == [(SAME, 0, 0), (SAME, 1, 1), (ONLY_LEFT, 2, None), (ONLY_LEFT, 3, None)]


def test_a_corrupt_bak_says_so_in_words(tmp_path: Path) -> None:
    detail = _bak(tmp_path, b'{"messages": [')
    assert detail.bak_messages == -1 and detail.bak is None
    copy = bak_copy(detail)
    assert copy.messages is None and copy.error.startswith("not valid JSON")
    assert (
        compare_bak(detail).summary().startswith("The backup (.bak) cannot be read as a chat: not valid JSON")
    )
    assert bak_reason(SessionDetail("s2")) == "this session has no .bak file"


def test_an_answer_one_copy_has_longer_then_more_messages_pairs_the_answer() -> None:
    """The agent wrote on after the sidecar's last save: its answer grew and a turn followed."""
    left = [u("hello"), a("hi")]
    right = [u("hello"), a("hi there, how can I help?"), u("more", 110.0)]
    al = align(Copy("sidecar", left), Copy("state.db [default]", right))
    assert kinds(al) == [(SAME, 0, 0), (DIFFERS, 1, 1), (ONLY_RIGHT, None, 2)]
