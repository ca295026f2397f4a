"""Smaller rules of the save and its neighbours, each on hand-made input: an index rebuilt from the
saved bytes (not the file on disk), UTF-8 cut at the very end, the rebuild's choice between two rows
of one session, the "intentional compress" reading of a live file, and the materializer's [Q6] words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.repair.save import check_utf8
from inspector.store.backup import _records_intentional_compress
from inspector.store.index import rebuild_rows
from tests.conftest import FIXTURES, copy_tree
from tests.repair.test_interrupted_rules import HISTORY, SID, plan_for, write_journal, write_sidecar
from tests.repair.test_materialize import _plan as materialize_plan


def test_a_save_without_an_index_rebuilds_it_from_the_saved_bytes(tmp_path: Path) -> None:
    """No _index.json: the rebuilt index's row is the saved session's (5 rows), not the file on disk (2)."""
    home = tmp_path / "home"
    write_sidecar(home, list(HISTORY))
    write_journal(home, [("token", {"text": "Partial answer."})])
    result = plan_for(home)
    by_name = {c.path.name: c for c in result.changes}
    assert by_name["_index.json"].before is None
    rows = json.loads(by_name["_index.json"].after)
    assert [(r["session_id"], r["message_count"]) for r in rows] == [(SID, 5)]
    assert len(json.loads(by_name[f"{SID}.json"].after)["messages"]) == 5


def test_utf8_cut_in_the_middle_of_the_last_character_is_refused() -> None:
    """A text ending in the first two bytes of a three-byte character is no UTF-8, as bytes.decode says."""
    with pytest.raises(UnicodeDecodeError):
        check_utf8(b'{"title": "caf\xc3\xa9 \xe2\x82')
    check_utf8(b'{"title": "caf\xc3\xa9 \xe2\x82\xac"}')


def test_of_two_rows_of_one_session_the_rebuild_keeps_the_longer_in_the_first_ones_place() -> None:
    """Larger message_count wins; a tie keeps the first; an empty id is left out and ends nothing."""
    rows = [
        {"session_id": "", "title": "no id", "message_count": 9, "updated_at": 9},
        {"session_id": "a", "title": "a short", "message_count": 1, "updated_at": 5},
        {"session_id": "b", "title": "b first", "message_count": 2, "updated_at": 3},
        {"session_id": "a", "title": "a long", "message_count": 4, "updated_at": 1},
        {"session_id": "b", "title": "b tie", "message_count": 2, "updated_at": 7},
    ]
    assert [(r["session_id"], r["title"]) for r in rebuild_rows(rows)] == [("b", "b first"), ("a", "a long")]


def test_an_anchor_key_without_a_summary_is_no_intentional_compress() -> None:
    """A shorter model context with an anchor key but no summary (and no watermark) is not a compress."""
    live = {"messages": [1, 2, 3], "context_messages": [1], "compression_anchor_message_key": "k"}
    assert _records_intentional_compress(live) is False
    assert _records_intentional_compress({**live, "compression_anchor_summary": "s"}) is True


def test_the_orphan_backup_warning_word_for_word(tmp_path: Path) -> None:
    """[Q6]: the orphan backup beside a materialized session, in the plan's warnings as written here."""
    home = tmp_path / "home"
    copy_tree(FIXTURES / "recovery" / "example" / "sessions_before", home / "webui" / "sessions")
    copy_tree(FIXTURES / "recovery" / "example", tmp_path / "ex")
    (tmp_path / "ex" / "state.db").rename(home / "state.db")
    plan = materialize_plan(home)
    assert (
        "orphan01: an orphan orphan01.json.bak (3 messages) exists and hermes' materializer ignores it; "
        "afterwards the audit reports shrunken_live and restore-backup would replace the state.db version "
        "(run restore-backup first) [Q6]"
    ) in plan.warnings
