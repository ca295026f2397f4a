"""The journal materializer's shortcuts give what hermes' plain algorithm gives.

``_Materializer.append_to_context`` normalizes each context row's text once instead of at every
look (rule: the same rows appended as ``model_context.append_to_context``, hermes'
``_append_recovered_turn_to_context``), and ``on_tool_complete`` finds the newest card not done
from lists of open cards instead of walking every card (rule: the same card completed as
hermes' walk from the newest card).
"""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.repair.journal_recovery import MaterializeReport, _Materializer
from inspector.repair.model_context import append_to_context

TEXTS = st.sampled_from(["", " ", "hello", "hello ", " hello  world", "hello world", "x" * 30, "\n"])
CONTENT = st.one_of(
    TEXTS,
    st.none(),
    st.integers(-2, 2),
    st.lists(
        st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking"]), "text": TEXTS}), max_size=2
    ),
)
ROW = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "tool", None, float("nan")]),
        "content": CONTENT,
        "timestamp": st.sampled_from([1, 2, "3"]),
    },
    optional={
        "reasoning": TEXTS,
        "_error": st.booleans(),
        "tool_calls": st.lists(st.just({"id": "a"}), max_size=1),
        "_source": st.sampled_from(["webui", "cli"]),
    },
)


def _materializer(session: dict) -> _Materializer:
    return _Materializer(session, "s1", dedupe=False, now=100.0, report=MaterializeReport())


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(ROW, max_size=6),
    context=st.one_of(
        st.none(),
        st.just("not a list"),
        st.lists(st.one_of(ROW, st.just("a string row"), st.none()), max_size=12),
    ),
    added=st.lists(ROW, min_size=1, max_size=12),
)
def test_context_append_with_remembered_texts_equals_hermes_algorithm(messages, context, added):
    session = {"messages": messages}
    if context is not None:
        session["context_messages"] = context
    plain = copy.deepcopy(session)
    cached = copy.deepcopy(session)
    m = _materializer(cached)
    for row in added:
        append_to_context(plain, copy.deepcopy(row))
        m.append_to_context(copy.deepcopy(row))
        assert repr(cached) == repr(plain)  # (a NaN role is not == itself)


def test_a_remembered_text_follows_the_string_not_its_id():
    m = _materializer({"messages": []})
    first = "a  b"
    assert m.normalize(first) == "a b"
    assert m.normalize(["a", "b"]) == "['a', 'b']"  # not a str: never remembered
    other = "c   d"
    assert m.normalize(other) == "c d"
    assert m.normalize(first) == "a b"


def _complete_by_walk(cards: list[dict], payload: dict) -> dict | None:
    """hermes' loop: from the newest card, the first not done (of this name when one is given)."""
    name = str(payload.get("name") or "")
    for card in reversed(cards):
        if card.get("done") or (name and card.get("name") != name):
            continue
        card["done"] = True
        return card
    return None


NAMES = st.sampled_from(["", "read", "write", "grep"])


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["tool", "tool_complete"]), st.one_of(NAMES, st.none(), st.just(0))),
        max_size=40,
    )
)
def test_tool_complete_marks_the_card_hermes_walk_marks(steps):
    session: dict = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
    m = _materializer(session)
    walked: list[dict] = []
    for seq, (kind, name) in enumerate(steps, 1):
        payload = {"name": name}
        if kind == "tool":
            m.on_tool(seq, payload, None)
            walked.append(copy.deepcopy(m.cards[-1]))
        else:
            m.on_tool_complete(payload)
            _complete_by_walk(walked, payload)
        assert [c["done"] for c in m.cards] == [c["done"] for c in walked]


OWN_ROW = st.fixed_dictionaries(
    {
        "role": st.just("assistant"),
        "content": TEXTS,
        "timestamp": st.sampled_from([1, 2]),
        "_recovered_from_run_journal": st.just(True),
        "_recovered_stream_id": st.sampled_from(["s1", None]),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(ROW, max_size=6),
    context=st.one_of(
        st.none(),
        st.just("not a list"),
        st.lists(st.one_of(ROW, OWN_ROW, st.just("a string row"), st.none()), max_size=12),
    ),
    added=st.lists(st.one_of(OWN_ROW, OWN_ROW, ROW), min_size=1, max_size=12),
)
def test_a_row_the_pass_made_enters_the_context_as_hermes_algorithm_adds_it(messages, context, added):
    # _append_row's rows (no reasoning, a str content) go in without the projection's copies;
    # any other row through the general path, interleaved, as the pass interleaves them
    session = {"messages": messages}
    if context is not None:
        session["context_messages"] = context
    plain = copy.deepcopy(session)
    cached = copy.deepcopy(session)
    m = _materializer(cached)
    for row in added:
        append_to_context(plain, copy.deepcopy(row))
        own = set(row) == set(OWN_KEYS) and isinstance(row["content"], str)
        (m._append_own_row_to_context if own else m.append_to_context)(copy.deepcopy(row))
        assert repr(cached) == repr(plain)


OWN_KEYS = ("role", "content", "timestamp", "_recovered_from_run_journal", "_recovered_stream_id")


def test_a_row_the_pass_makes_goes_into_an_existing_context_as_itself():
    """Rule (``_append_own_row_to_context``): a row the pass made (a fresh dict no one else holds)
    is appended to a context that has rows as the row itself, not as a copy of its projection;
    a blank one is not appended; a missing or empty context takes the general path, which
    seeds it from the transcript and appends a copy."""
    first = {"role": "user", "content": "hi", "timestamp": 1}
    m = _materializer({"messages": [dict(first)], "context_messages": [dict(first)]})
    row = {
        "role": "assistant",
        "content": "an answer",
        "timestamp": 2,
        "_recovered_from_run_journal": True,
        "_recovered_stream_id": "s1",
    }
    m._append_own_row_to_context(row)
    assert m.s["context_messages"] == [first, row]
    assert m.s["context_messages"][1] is row
    m._append_own_row_to_context(dict(row, content="  "))
    assert m.s["context_messages"] == [first, row]

    seeded = _materializer({"messages": [dict(first)]})
    seeded._append_own_row_to_context(row)
    assert seeded.s["context_messages"] == [first, row]
    assert seeded.s["context_messages"][1] is not row


def test_the_window_of_the_last_rows_follows_the_appends_and_each_text_is_normalized_once(monkeypatch):
    """Rule (``_window_of``, ``_add_to_context``, ``normalize``): the roles and normalized texts of
    the context's last 8 rows are made once and moved along with each row the pass appends, made
    again only when the context was changed otherwise; and no string is normalized twice (the
    pass looks at a row's text in the window, in its projection and in the dedupe check)."""
    from inspector.repair import journal_recovery

    normalized = []
    real = journal_recovery.normalize
    monkeypatch.setattr(journal_recovery, "normalize", lambda v: normalized.append(v) or real(v))
    rows = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"text  {i}", "timestamp": i}
        for i in range(10)
    ]
    context = [dict(r) for r in rows]
    m = _materializer({"messages": [dict(r) for r in rows], "context_messages": context})
    m.append_to_context({"role": "assistant", "content": "new  one", "timestamp": 20})
    window = m.window
    assert window[0] is context and window[1] == 11
    assert list(window[2]) == ["assistant", "user"] * 3 + ["assistant", "assistant"]
    assert list(window[3]) == [f"text {i}" for i in range(3, 10)] + ["new one"]

    m.append_to_context({"role": "assistant", "content": "another", "timestamp": 21})
    assert m.window is window and window[1] == 12
    assert list(window[3]) == [f"text {i}" for i in range(4, 10)] + ["new one", "another"]

    context.append({"role": "user", "content": "from  elsewhere", "timestamp": 22})  # not by the pass
    m.append_to_context({"role": "assistant", "content": "third", "timestamp": 23})
    assert m.window is not window and m.window[0] is context and m.window[1] == 14
    assert list(m.window[3]) == [f"text {i}" for i in range(6, 10)] + [
        "new one",
        "another",
        "from elsewhere",
        "third",
    ]
    assert len({id(v) for v in normalized}) == len(normalized)
