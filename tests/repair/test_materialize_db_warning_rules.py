"""The state.db warnings of one materialized row (``materialize._db_warnings``: the dropped-fields note and
hermes' defects), word for word, on the hand-built database of ``tests/store/test_statedb_defect_rules.py``.

Rules found by mutation testing (tests/MUTATION.md, seventh session): the tests that reach these words
through a whole home are slower than the mutation run's fast-test cap. Like
``test_materialize_warning_rules.py``, they ask ``_db_warnings`` (the pair a preview shows per row).
"""

from __future__ import annotations

import pytest

from inspector.repair import materialize
from inspector.store import statedb
from inspector.store.statedb import SessionRowsReader
from tests.recovery_helpers import custom_state_db
from tests.store.test_statedb_defect_rules import MESSAGES, SESSIONS, _db

DROPPED_A = (
    "a: the sidecar drops tool_calls (2 rows), tool_call_id (1 row), tool_name (1 row), reasoning (2 rows), "
    "reasoning_content (1 row), reasoning_details (1 row), codex_reasoning_items (1 row) (hermes' minimal "
    "mapper keeps only role, content, timestamp); includes 2 rewound/compacted row(s) (no active filter); "
    "keeps 1 raw \\x00json: content value(s) undecoded"
)
DEFECTS_A = [
    "a: hermes defect, tool calls stripped: row(s) 0 (terminal, web, ?, ?), 2 (tool call) are assistant rows "
    "whose only output was tool calls; hermes writes them as empty rows without the calls, and hermes-webui "
    "then shows each next to state.db's row with the tool call, as a duplicated empty assistant row",
    "a: hermes defect, superseded messages come back: row(s) 2 (assistant, taken back), 3 (user, archived by "
    "compaction) have active = 0 in state.db (hermes-webui's own transcript reader leaves them out); hermes' "
    "materializer has no active filter and puts them back in the chat",
    "a: hermes defect, encoded content shown raw: row(s) 3 (user) hold structured content in the agent's "
    "\\x00json: encoding; hermes copies it undecoded and the chat shows the raw text",
]


@pytest.mark.parametrize("shared", [False, True], ids=["own connection", "a SessionRowsReader"])
def test_each_dropped_field_and_defect_is_said_word_for_word(tmp_path, shared):
    """Rule: the note names each dropped column with its row count ("1 row", "2 rows"), then the
    inactive and encoded rows; one warning per defect names its rows (index and tools, role and
    why taken back or archived, role), in that order."""
    db = _db(tmp_path)
    if shared:
        with SessionRowsReader(db) as reader:
            got = materialize._db_warnings(db, "a", reader)
    else:
        got = materialize._db_warnings(db, "a", None)
    assert got == (DROPPED_A, DEFECTS_A)


def test_a_row_without_anything_dropped_or_wrong_says_nothing(tmp_path):
    """Rule: no dropped data and no defect: no note (None) and no warning."""
    db = custom_state_db(
        tmp_path / "state.db",
        SESSIONS,
        MESSAGES,
        [{"id": "a"}],
        [{"id": 1, "session_id": "a", "role": "user", "content": "q", "timestamp": 1.0, "active": 1}],
    )
    assert materialize._db_warnings(db, "a", None) == (None, [])


def test_an_unreadable_database_says_nothing(tmp_path):
    """Rule: a state.db that cannot be read gives no note and no warning (the plan says why elsewhere)."""
    db = tmp_path / "state.db"
    db.write_bytes(b"this is not an sqlite database at all\x00\x01\x02" * 200)
    assert materialize._db_warnings(db, "a", None) == (None, [])


def test_past_twelve_rows_the_rest_are_counted(tmp_path):
    """Rule: each defect names its first 12 rows and counts the rest ("and N more"); one inactive
    row alone is only "includes 1 ..."."""
    rows = [
        {"id": i, "session_id": "a", "role": "user", "content": f"m{i}", "timestamp": float(i), "active": 0}
        for i in range(14)
    ]
    db = custom_state_db(tmp_path / "state.db", SESSIONS, MESSAGES, [{"id": "a"}], rows)
    named = ", ".join(f"{i} (user, taken back)" for i in range(12))
    assert materialize._db_warnings(db, "a", None) == (
        "a: the sidecar includes 14 rewound/compacted row(s) (no active filter)",
        [
            f"a: hermes defect, superseded messages come back: row(s) {named} and 2 more have active = 0 in "
            "state.db (hermes-webui's own transcript reader leaves them out); hermes' materializer has no "
            "active filter and puts them back in the chat"
        ],
    )


def test_with_a_reader_both_questions_are_asked_of_it(tmp_path, monkeypatch):
    """Rule: given a SessionRowsReader, both questions go to its connection: none is opened (one
    per row and question was the cost the reader saves on a home of thousands of rows)."""
    db = _db(tmp_path)
    opened = []
    real = statedb.open_readonly

    def spy(path, timeout=None):
        opened.append(path)
        return real(path, timeout)

    with SessionRowsReader(db) as reader:
        monkeypatch.setattr(statedb, "open_readonly", spy)
        assert materialize._db_warnings(db, "a", reader) == (DROPPED_A, DEFECTS_A)
    assert opened == []


def test_encoded_rows_are_named_in_a_list(tmp_path):
    """Rule: the rows of encoded content are named "index (role)", separated by ", "."""
    rows = [
        {
            "id": 1,
            "session_id": "a",
            "role": "user",
            "content": "\x00json:[1]",
            "timestamp": 1.0,
            "active": 1,
        },
        {
            "id": 2,
            "session_id": "a",
            "role": "assistant",
            "content": "\x00json:{}",
            "timestamp": 2.0,
            "active": 1,
        },
    ]
    db = custom_state_db(tmp_path / "state.db", SESSIONS, MESSAGES, [{"id": "a"}], rows)
    assert materialize._db_warnings(db, "a", None)[1] == [
        "a: hermes defect, encoded content shown raw: row(s) 0 (user), 1 (assistant) hold structured content "
        "in the agent's \\x00json: encoding; hermes copies it undecoded and the chat shows the raw text"
    ]
