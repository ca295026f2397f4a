"""Rule: the continuation check's index pre-filter (``_index_may_name_parent``) says "maybe" exactly
where the regex ``"parent_session_id"\\s*:\\s*"<sid>"`` matches somewhere in the index bytes (it looks
only where ``<sid>"`` stands, backwards), so a row naming the session as its parent is never missed
and a "no" still skips the parse."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.repair import interrupted
from inspector.repair.interrupted import _index_may_name_parent
from inspector.store.sidecar import is_safe_session_id

SIDS = st.sampled_from(["p", "abc", "a.b", "x_1", "x-1"])
PARTS = st.lists(
    st.sampled_from(
        [
            b'"parent_session_id"',
            b'"parent_session_id',
            b'parent_session_id"',
            b":",
            b" ",
            b"\t",
            b"\n",
            b"\r",
            b"\x0b",
            b"\x0c",
            b"\xc2\xa0",
            b'"',
            b'\\"',
            b"p",
            b"abc",
            b"a.b",
            b"x_1",
            b"xp",
            b",",
            b"{",
            b"}",
        ]
    ),
    max_size=14,
)


def _regex(data: bytes, sid: str) -> bool:
    return re.search(rb'"parent_session_id"\s*:\s*"' + re.escape(sid.encode()) + rb'"', data) is not None


@settings(max_examples=1500, deadline=None)
@given(parts=PARTS, sid=SIDS)
def test_the_prefilter_answers_as_the_regex(parts, sid):
    data = b"".join(parts)
    if is_safe_session_id(sid):  # (an unsafe id, or a \\u escape in the index: always "maybe")
        assert _index_may_name_parent(data, sid) == _regex(data, sid), data
    else:
        assert _index_may_name_parent(data, sid)


def test_the_prefilter_on_named_shapes():
    assert _index_may_name_parent(b'[{"parent_session_id" :\n\t "p"}]', "p")
    assert not _index_may_name_parent(b'[{"parent_session_id": "xp"}]', "p")
    assert not _index_may_name_parent(b'[{"session_id": "p"}]', "p")
    assert not _index_may_name_parent(b'[{"parent_session_id":\xc2\xa0"p"}]', "p")  # NBSP is no \s
    assert _index_may_name_parent(b'[{"parent_session_id": "\\u0070"}]', "p")  # an escape: parse


@settings(max_examples=800, deadline=None)
@given(data=st.lists(st.sampled_from([b"\\", b"u", b"\\u", b"\\\\", b"x", b'"', b"\\\\u"]), max_size=12))
def test_the_u_escape_test_is_the_substring_test(data):
    """Rule: the look from each backslash answers as ``b"\\u" in data`` (also past its limit)."""
    blob = b"".join(data)
    assert interrupted._has_u_escape(blob) == (b"\\u" in blob), blob


def test_the_u_escape_test_past_its_limit_searches_the_bytes(monkeypatch):
    monkeypatch.setattr(interrupted, "_FEW_BACKSLASHES", 1)
    assert interrupted._has_u_escape(b'"a\\"b\\"c\\"d" "\\u0070"')
    assert not interrupted._has_u_escape(b'"a\\"b\\"c\\"d"')
