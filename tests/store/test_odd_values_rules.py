"""A ``tool_calls`` column holding text that is not JSON is still tool calls for the materializer's
defects (hermes keeps the text as it is); an empty text is none."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.store.statedb import materialization_defects
from tests.recovery_helpers import custom_state_db
from tests.store.test_statedb_defect_rules import MESSAGES, SESSIONS


@pytest.mark.parametrize("text", ["XXXX", "not json"])
def test_a_tool_calls_text_that_is_not_json_still_makes_an_empty_tool_call(tmp_path: Path, text: str) -> None:
    """An assistant row with no content and a non-empty tool_calls text hermes cannot parse: an empty
    tool call row whose tool names are unknown."""
    row = {
        "id": 1,
        "session_id": "a",
        "role": "assistant",
        "content": "",
        "timestamp": 1.0,
        "tool_calls": text,
    }
    db = custom_state_db(tmp_path / "state.db", SESSIONS, MESSAGES, [{"id": "a"}], [row])
    assert materialization_defects(db, "a") == [
        {"index": 0, "role": "assistant", "defects": ["empty_tool_call"], "tools": []}
    ]


def test_an_empty_tool_calls_text_is_no_tool_call(tmp_path: Path) -> None:
    """An empty tool_calls text is none: the empty assistant row has no defect."""
    row = {"id": 1, "session_id": "a", "role": "assistant", "content": "", "timestamp": 1.0, "tool_calls": ""}
    db = custom_state_db(tmp_path / "state.db", SESSIONS, MESSAGES, [{"id": "a"}], [row])
    assert materialization_defects(db, "a") == []
