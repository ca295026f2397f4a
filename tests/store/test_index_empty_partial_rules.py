"""``index._is_empty_partial``: hermes' ``_is_empty_partial_activity_message``, which
``last_message_at`` skips like a tool row (an assistant ``_partial`` row without reply text is
cancelled activity, not a message time). Each expected value written by hand from hermes' rule;
found by mutation testing, eighteenth session (the index tests had no partial row with list content).
"""

from __future__ import annotations

import pytest

from inspector.store.index import _is_empty_partial, last_message_at


def _partial(**fields):
    return {"role": "assistant", "_partial": True, **fields}


@pytest.mark.parametrize(
    ("msg", "empty"),
    [
        ("not a row", False),
        (_partial(content=""), True),
        (_partial(content="  \n"), True),
        (_partial(content="hi"), False),
        (_partial(), True),  # no content: ""
        ({"role": "user", "_partial": True, "content": ""}, False),
        ({"role": "assistant", "content": ""}, False),
        ({"role": "assistant", "_partial": False, "content": ""}, False),
        (_partial(content=[]), True),
        (_partial(content=[{"type": "text", "text": "hi"}]), False),
        (_partial(content=[{"type": "text", "text": "  "}]), True),
        (_partial(content=[{"type": "text"}]), True),
        (_partial(content=[{"type": "text", "content": "hi"}]), False),
        (_partial(content=[{"type": "text", "text": "", "content": "hi"}]), False),
        (_partial(content=[{"type": "image", "text": "hi"}]), True),
        (_partial(content=[{"text": "hi"}]), True),
        (_partial(content=["a plain string part"]), False),
        (_partial(content=["  "]), True),
        (_partial(content=[None]), True),
        (_partial(content=[0]), True),
        (_partial(content=[{"type": "image"}, "x"]), False),
        (_partial(content=5), False),
        (_partial(content=0), True),
        (_partial(content=None), True),
        (_partial(content={"a": 1}), False),
    ],
)
def test_an_empty_partial_row_is_one_without_reply_text(msg, empty):
    assert _is_empty_partial(msg) is empty


def test_the_last_message_time_skips_an_empty_partial_row_with_list_content():
    messages = [
        {"role": "user", "content": "q", "timestamp": 100.0},
        _partial(content=[{"type": "tool_use", "text": "ignored"}], timestamp=200.0),
    ]
    assert last_message_at({}, messages) == 100.0
    messages[1]["content"] = [{"type": "text", "text": "an answer"}]
    assert last_message_at({}, messages) == 200.0


def test_the_last_message_time_reads_the_sessions_own_messages_when_none_are_given():
    data = {"messages": [{"role": "user", "content": "q", "timestamp": 5.0}], "updated_at": 9.0}
    assert last_message_at(data) == 5.0
    assert last_message_at(data, []) == 9.0
