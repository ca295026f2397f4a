"""Turn journals ``_turn_journal/<sid>~<pid>.jsonl``, read as hermes' recovery audit reads them."""

from __future__ import annotations

import json

import pytest

from inspector.store.turn_journal import (
    TurnJournalError,
    is_valid_turn_journal_id,
    latest_turn_events,
    pending_turns,
    read_turn_journal,
    session_id_from_stem,
    shard_paths,
    turn_journal_session_ids,
    user_message_texts,
)


def _journal(session_dir, name, *events, raw=b""):
    path = session_dir / "_turn_journal" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e, separators=(",", ":")) for e in events]
    path.write_bytes(("\n".join(lines) + "\n").encode() + raw if lines else raw)
    return path


def _ev(event, turn_id, created_at, **extra):
    return {"event": event, "turn_id": turn_id, "created_at": created_at, **extra}


def test_session_ids_come_from_the_part_before_the_first_tilde(tmp_path):
    for name in ("a~1.jsonl", "a~2.jsonl", "b.jsonl", "c~d~3.jsonl", "~9.jsonl", "notes.txt"):
        _journal(tmp_path, name, _ev("submitted", "t", 1.0))
    (tmp_path / "_turn_journal" / "dir~1.jsonl").mkdir()
    assert turn_journal_session_ids(tmp_path) == ["a", "b", "c", "~9"]
    assert session_id_from_stem("x~") == "x" and session_id_from_stem("~x") == "~x"


def test_no_journal_folder_means_no_sessions(tmp_path):
    assert turn_journal_session_ids(tmp_path) == []
    (tmp_path / "_turn_journal").write_text("not a folder", encoding="utf-8")
    assert turn_journal_session_ids(tmp_path) == []


@pytest.mark.parametrize(
    "sid, ok",
    [
        ("abc", True),
        ("a.b-c_1", True),
        ("sess.123", True),
        ("", False),
        ("a b", False),
        ("a/b", False),
        ("~9", False),
        ("é", False),
    ],
)
def test_turn_journal_id_rule(sid, ok):
    assert is_valid_turn_journal_id(sid) is ok


def test_invalid_id_raises_like_hermes(tmp_path):
    with pytest.raises(TurnJournalError, match="invalid session_id"):
        shard_paths(tmp_path, "has space")
    with pytest.raises(ValueError):
        read_turn_journal(tmp_path, "~9")


def test_shards_and_legacy_file_are_merged_and_sorted_by_created_at(tmp_path):
    _journal(tmp_path, "s~2.jsonl", _ev("completed", "t1", 5.0))
    _journal(tmp_path, "s~1.jsonl", _ev("submitted", "t1", 1.0, content="hi"), _ev("submitted", "t2", 7.0))
    _journal(tmp_path, "s.jsonl", _ev("worker_started", "t1", 2.0), _ev("x", "t3", "not a number"))
    _journal(tmp_path, "sx~1.jsonl", _ev("submitted", "other", 0.5))
    journal = read_turn_journal(tmp_path, "s")
    assert [(e["turn_id"], e["created_at"]) for e in journal.events] == [
        ("t3", "not a number"),
        ("t1", 1.0),
        ("t1", 2.0),
        ("t1", 5.0),
        ("t2", 7.0),
    ]


def test_malformed_lines_are_skipped(tmp_path):
    path = _journal(tmp_path, "s~1.jsonl", _ev("submitted", "t1", 1.0), raw=b'[1, 2]\n{"torn": \n\n')
    journal = read_turn_journal(tmp_path, "s")
    assert len(journal.events) == 1
    assert [m["line"] for m in journal.malformed] == [2, 3]
    assert journal.malformed[0]["shard"] == path.name


def test_undecodable_shard_raises(tmp_path):
    _journal(tmp_path, "s~1.jsonl", _ev("submitted", "t1", 1.0), raw=b"\xe2\x82")
    with pytest.raises(TurnJournalError, match="UTF-8"):
        read_turn_journal(tmp_path, "s")


def test_latest_event_per_turn_wins_and_equal_timestamps_replace():
    events = [
        _ev("submitted", " t1 ", 1.0),
        _ev("worker_started", "t1", 1.0),
        _ev("submitted", "", 9.0),
        _ev("completed", "t2", 3.0),
        _ev("submitted", "t2", 2.0),
        "junk",
    ]
    states = latest_turn_events(events)
    assert set(states) == {"t1", "t2"}
    assert states["t1"]["event"] == "worker_started"
    assert states["t2"]["event"] == "completed"


@pytest.mark.parametrize("bad", ["soon", [1], {"a": 1}])
def test_non_numeric_created_at_makes_hermes_fail(bad):
    with pytest.raises(TurnJournalError, match="created_at"):
        latest_turn_events([_ev("submitted", "t1", 1.0), _ev("submitted", "t1", bad)])


def test_pending_turn_rule():
    states = {
        "done": _ev("completed", "done", 3.0, content="x"),
        "stopped": _ev("interrupted", "stopped", 3.0, content="y"),
        "started": _ev("worker_started", "started", 3.0),
        "blank": _ev("submitted", "blank", 1.0, content="   "),
        "saved": _ev("submitted", "saved", 1.0, content=" already there "),
        "lost": _ev("submitted", "lost", 1.0, content="  Deploy now  "),
    }
    (turn,) = pending_turns(states, {"already there"})
    assert (turn.turn_id, turn.event, turn.content) == ("lost", "submitted", "Deploy now")


def test_user_message_texts_compare_like_hermes():
    data = json.dumps(
        {
            "messages": [
                {"role": "user", "content": " a "},
                {"role": "assistant", "content": "b"},
                {"role": "user", "content": None},
                "junk",
                {"role": "user", "content": [{"type": "text", "text": "c"}]},
            ]
        }
    ).encode()
    assert user_message_texts(data) == {"a", "", "[{'type': 'text', 'text': 'c'}]"}
    assert user_message_texts(None) == set()
    assert user_message_texts(b"{torn") == set()
    assert user_message_texts(b"[]") == set()
    assert user_message_texts(b'{"messages": "text"}') == set()
    with pytest.raises(TurnJournalError):
        user_message_texts(b'{"messages": 5}')
