"""The journal materializer's model-context appends (tests/MUTATION.md, fifth session): hermes'
``_append_recovered_turn_to_context`` (session-recovery §3.7) with the last eight rows' texts kept
between looks. Rules pinned with the answers written out by hand: a user row is a duplicate only
as the pending checkpoint says (its ``_source`` and ``attachments`` included), and the kept texts
follow the context: another list, or rows added to it otherwise, are looked at afresh."""

from __future__ import annotations

from inspector.repair.journal_recovery import MaterializeReport, _Materializer


def _materializer(session: dict) -> _Materializer:
    return _Materializer(session, "s1", dedupe=False, now=100.0, report=MaterializeReport())


def _user(text: str, **extra) -> dict:
    return {"role": "user", "content": text, "timestamp": 5, **extra}


def _assistant(text: str) -> dict:
    return {"role": "assistant", "content": text, "timestamp": 6}


def test_a_user_row_from_the_same_source_as_the_last_context_row_is_not_added_again():
    """Rule: the last context row with the same text, timestamp and ``_source`` ("cli" on both) is
    the same user turn: nothing is appended; another source is another turn: appended."""
    session = {"messages": [_user("hi")], "context_messages": [_user("hi", _source="cli")]}
    m = _materializer(session)
    m.append_to_context(_user("hi", _source="cli"))
    assert session["context_messages"] == [_user("hi", _source="cli")]
    m.append_to_context(_user("hi", _source="telegram"))
    assert session["context_messages"] == [_user("hi", _source="cli"), _user("hi", _source="telegram")]


def test_a_user_row_with_the_same_attachments_as_the_last_context_row_is_not_added_again():
    """Rule: the same attachments (``["a.png"]`` on both) make the same user turn: nothing is
    appended; other attachments are another turn: appended."""
    last = _user("look", attachments=["a.png"])
    session = {"messages": [_user("look")], "context_messages": [dict(last)]}
    m = _materializer(session)
    m.append_to_context(_user("look", attachments=["a.png"]))
    assert session["context_messages"] == [last]
    m.append_to_context(_user("look", attachments=["b.png"]))
    assert session["context_messages"] == [last, _user("look", attachments=["b.png"])]


def test_another_context_list_of_the_same_length_is_looked_at_afresh():
    """Rule: the duplicate test looks at the context list the session holds now: a row the last
    list had among its last eight is appended to a new list (of the same length) that lacks it."""
    session = {"messages": [_user("q")], "context_messages": [_user("q"), _assistant("x")]}
    m = _materializer(session)
    m.append_to_context(_assistant("y"))
    assert [r["content"] for r in session["context_messages"]] == ["q", "x", "y"]
    session["context_messages"] = [_user("q"), _assistant("other"), _assistant("z")]
    m.append_to_context(_assistant("x"))
    assert [r["content"] for r in session["context_messages"]] == ["q", "other", "z", "x"]


def test_rows_added_to_the_context_otherwise_are_seen_by_the_next_look():
    """Rule: rows put in the context list by someone else count: once eight other assistant rows
    stand after ``x``, ``x`` is no longer within hermes' window of the last eight and is appended
    again; while it is within, it is not."""
    session = {"messages": [_user("q")], "context_messages": [_user("q")]}
    m = _materializer(session)
    m.append_to_context(_assistant("x"))
    m.append_to_context(_assistant("x"))
    assert [r["content"] for r in session["context_messages"]] == ["q", "x"]
    session["context_messages"].extend(_assistant(f"r{i}") for i in range(7))
    m.append_to_context(_assistant("x"))  # x is the eighth row from the end: still within
    assert len(session["context_messages"]) == 9
    session["context_messages"].append(_assistant("r7"))
    m.append_to_context(_assistant("x"))  # now the ninth: out of the window
    assert [r["content"] for r in session["context_messages"][-2:]] == ["r7", "x"]
    assert len(session["context_messages"]) == 11
