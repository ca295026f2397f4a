"""The continuation guard (session-recovery §3.1; tests/MUTATION.md, fifth session): hermes'
``get_session`` skips the interrupted-turn repair for a session that an ``_index.json`` row names
as its ``parent_session_id``, found by the regex ``"parent_session_id"\\s*:\\s*"<sid>"`` on the
index text and then the parsed rows, however the index spaces its keys."""

from __future__ import annotations

import json

import pytest

from inspector.repair.interrupted import guard_warnings
from tests.recovery_helpers import home_dirs, make_ctx

WARNING = (
    "a compression continuation of this session exists (_index.json); "
    "hermes' get_session skips the repair for its parent"
)


@pytest.mark.parametrize(
    "text",
    [
        '[{"session_id":"child","parent_session_id":"p1"}]',  # compact: no space anywhere
        '[{"session_id": "child", "parent_session_id" :\t\n"p1"}]',  # spaces before and after the colon
        '[{"parent_session_id":"p1","session_id":"child"}]',  # the key first in its row
        json.dumps([{"session_id": "child", "parent_session_id": "p1"}], indent=2),  # hermes' own
    ],
    ids=["compact", "spaced", "key-first", "indented"],
)
def test_an_index_row_naming_the_session_as_parent_is_found_however_spaced(tmp_path, text):
    """Rule: the index row ``{"session_id": "child", "parent_session_id": "p1"}`` makes the guard
    warn for ``p1`` whatever JSON whitespace stands around the key's colon."""
    home, sessions, _db = home_dirs(tmp_path)
    (sessions / "_index.json").write_text(text, encoding="utf-8")
    warnings = guard_warnings(make_ctx(home), {"session_id": "p1", "active_stream_id": "run"})
    assert warnings == [WARNING]


@pytest.mark.parametrize(
    "text",
    [
        '[{"session_id":"child","parent_session_id":"other","title":"p1"}]',  # p1 only as another value
        '[{"session_id":"p1","parent_session_id":"p1"}]',  # the session itself (hermes skips it)
        '[{"session_id":"child","parent_session_id":"xp1"}]',  # a longer id ending like it
    ],
    ids=["other-value", "itself", "longer-id"],
)
def test_no_row_naming_the_session_as_parent_gives_no_warning(tmp_path, text):
    """Rule: a row that does not name ``p1`` as its parent (or is ``p1`` itself) gives no warning."""
    home, sessions, _db = home_dirs(tmp_path)
    (sessions / "_index.json").write_text(text, encoding="utf-8")
    assert guard_warnings(make_ctx(home), {"session_id": "p1", "active_stream_id": "run"}) == []


def test_an_index_that_cannot_be_read_is_no_source(tmp_path):
    """Rule: ``_index.json`` is a folder (reading it fails): the guard names no source and does not
    fail (the plan's own save then fails on it: tests/repair/test_interrupted_continuation_rules.py)."""
    home, sessions, _db = home_dirs(tmp_path)
    (sessions / "_index.json").mkdir()
    assert guard_warnings(make_ctx(home), {"session_id": "p1", "active_stream_id": "run"}) == []


def test_a_sidecar_whose_head_names_the_session_as_parent_is_a_source(tmp_path):
    """Rule: ``child.json``'s head holds ``"parent_session_id": "p1"``: the guard names it (in the
    session's own folder; ``other.json`` names another parent)."""
    home, sessions, _db = home_dirs(tmp_path)
    (sessions / "child.json").write_text(
        json.dumps({"session_id": "child", "parent_session_id": "p1"}, indent=2)
    )
    (sessions / "other.json").write_text(
        json.dumps({"session_id": "other", "parent_session_id": "p2"}, indent=2)
    )
    assert guard_warnings(make_ctx(home), {"session_id": "p1", "active_stream_id": "run"}) == [
        "a compression continuation of this session exists (child.json); "
        "hermes' get_session skips the repair for its parent"
    ]
