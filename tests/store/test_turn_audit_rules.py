"""hermes' turn journal as the audit reads it (``api/turn_journal.py``: ``read_turn_journal``,
``derive_turn_journal_states``, the pending-turn check), through the folder scan's one listing and
its cache, rule by rule (tests/MUTATION.md, fourth session). Values written out by hand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.store.scan import TURN, FactCache, SessionDirScan, stat_key
from inspector.store.turn_journal import (
    PendingTurn,
    TurnJournalError,
    _safe_ts,
    _strict_ts,
    audit_turn_events,
    latest_turn_events,
    pending_turns,
    shard_audit_facts,
    shard_paths,
)


def _journal(tmp_path: Path, shards: dict[str, bytes]) -> Path:
    jdir = tmp_path / "_turn_journal"
    jdir.mkdir(parents=True, exist_ok=True)
    for name, data in shards.items():
        (jdir / name).write_bytes(data)
    return tmp_path


def test_a_missing_or_empty_time_sorts_as_zero_and_an_overflowing_one_fails():
    """Rule: the sort key is ``float(created_at or 0)``, 0.0 when it is no number; an integer too large
    for a float is hermes' OverflowError, named with the value."""
    assert _safe_ts({}) == 0.0
    assert _safe_ts({"created_at": ""}) == 0.0
    assert _safe_ts({"created_at": "soon"}) == 0.0
    assert _safe_ts({"created_at": "2.5"}) == 2.5
    huge = 10**400
    with pytest.raises(TurnJournalError) as caught:
        _safe_ts({"created_at": huge})
    assert str(caught.value) == f"created_at {huge!r} overflows a float"


def test_the_states_compare_times_strictly_naming_the_turn_whose_time_is_no_number():
    """Rule: ``derive_turn_journal_states`` reads ``float(created_at or 0)`` and fails on text that is no
    number, naming the turn and the value."""
    assert _strict_ts({}) == 0.0
    assert _strict_ts({"created_at": None}) == 0.0
    assert _strict_ts({"created_at": 3}) == 3.0
    with pytest.raises(TurnJournalError) as caught:
        _strict_ts({"turn_id": "t1", "created_at": "soon"})
    assert str(caught.value) == "turn 't1': created_at 'soon' is not a number (hermes fails on it)"


def test_the_latest_event_per_turn_skips_non_objects_and_goes_on():
    """Rule: an event that is not an object is skipped, the events after it still count; the latest
    (by time, a tie to the later one) is kept per stripped turn id."""
    first = {"turn_id": "a", "event": "submitted", "created_at": 1}
    later = {"turn_id": " a ", "event": "completed", "created_at": 1}
    other = {"turn_id": "b", "event": "submitted"}
    assert latest_turn_events([7, first, "x", later, other]) == {"a": later, "b": other}


def test_a_pending_turn_without_an_event_name_has_an_empty_one():
    """Rule: a non-terminal turn whose text is not in the sidecar is pending; its ``event`` is
    ``str(event or '')``; the turns come sorted by id."""
    states = {
        "t2": {"turn_id": "t2", "content": " second "},
        "t1": {"turn_id": "t1", "event": "submitted", "content": "first"},
        "t3": {"turn_id": "t3", "event": "interrupted", "content": "ended"},
        "t4": {"turn_id": "t4", "event": "submitted", "content": "already there"},
    }
    assert pending_turns(states, {"already there"}) == [
        PendingTurn(turn_id="t1", event="submitted", content="first"),
        PendingTurn(turn_id="t2", event="", content="second"),
    ]


def test_a_shards_facts_name_the_shard_hermes_fails_on():
    """Rule: a shard hermes cannot read gives its error, naming the shard; a readable one its events'
    four audit keys."""
    assert shard_audit_facts(b"\xff{}\n", "s~1.jsonl") == {
        "error": "turn journal s~1.jsonl is not valid UTF-8 (byte 0); hermes fails reading it"
    }
    assert shard_audit_facts(b'{"turn_id": "t", "x": 1, "created_at": 2}\nnot json\n', "s~1.jsonl") == {
        "error": None,
        "events": [{"turn_id": "t", "created_at": 2}],
    }


def test_shards_are_every_tilde_name_of_the_listing_then_the_legacy_file_only_if_present(tmp_path):
    """Rule: hermes globs ``<sid>~*.jsonl`` (sorted; the id ends at the first ``~``; any kind of entry),
    then ``<sid>.jsonl`` when it exists; ``<sid>~1.txt`` or another id's shards are not its shards."""
    folder = _journal(
        tmp_path,
        {"s~2.jsonl": b"", "s~1~b.jsonl": b"", "s~1.txt": b"", "s.json~1.jsonl": b"", "t~1.jsonl": b""},
    )
    (folder / "_turn_journal" / "s~3.jsonl").mkdir()
    jdir = folder / "_turn_journal"
    scan = SessionDirScan(folder)
    assert shard_paths(folder, "s", scan) == [jdir / "s~1~b.jsonl", jdir / "s~2.jsonl", jdir / "s~3.jsonl"]
    assert shard_paths(folder, "s", None) == [jdir / "s~1~b.jsonl", jdir / "s~2.jsonl", jdir / "s~3.jsonl"]
    (jdir / "s.jsonl").write_bytes(b"")
    assert shard_paths(folder, "s", SessionDirScan(folder))[-1] == jdir / "s.jsonl"
    assert shard_paths(folder, "s.json", SessionDirScan(folder)) == [jdir / "s.json~1.jsonl"]


def test_the_audit_reads_the_shards_of_the_scans_listing_and_skips_a_vanished_one(tmp_path):
    """Rule: the events come from the shards the scan listed (one listing for the whole audit); a shard
    gone since is skipped and the shards after it still read; events sorted by time."""
    folder = _journal(
        tmp_path,
        {
            "s~1.jsonl": b'{"turn_id": "a", "event": "submitted", "created_at": 5}\n',
            "s~2.jsonl": b'{"turn_id": "b", "event": "submitted", "created_at": 9}\n',
            "s~3.jsonl": b'{"turn_id": "c", "event": "submitted", "created_at": 1}\n',
        },
    )
    scan = SessionDirScan(folder)
    scan.turn_journal_entries()  # the listing is taken now
    (folder / "_turn_journal" / "s~2.jsonl").unlink()
    (folder / "_turn_journal" / "s~0.jsonl").write_bytes(b'{"turn_id": "late", "created_at": 0}\n')
    assert audit_turn_events(folder, "s", scan) == [
        {"turn_id": "c", "event": "submitted", "created_at": 1},
        {"turn_id": "a", "event": "submitted", "created_at": 5},
    ]


def test_an_unreadable_shard_fails_the_audit_naming_it(tmp_path):
    """Rule: a shard that is not valid UTF-8 fails the audit with hermes' error naming the shard."""
    folder = _journal(tmp_path, {"s~1.jsonl": b"\xfe\n"})
    with pytest.raises(TurnJournalError) as caught:
        audit_turn_events(folder, "s", SessionDirScan(folder))
    assert str(caught.value) == "turn journal s~1.jsonl is not valid UTF-8 (byte 0); hermes fails reading it"


def test_a_shards_facts_come_from_the_cache_by_its_path_under_the_journal_folder(tmp_path):
    """Rule: while a shard's identity is unchanged its facts are the cache's, kept under
    ``_turn_journal/<name>``."""
    folder = _journal(tmp_path, {"s~1.jsonl": b'{"turn_id": "a"}\n'})
    shard = folder / "_turn_journal" / "s~1.jsonl"
    cache = FactCache(None)
    remembered = {"error": None, "events": [{"turn_id": "remembered"}]}
    cache.entries[TURN]["_turn_journal/s~1.jsonl"] = [stat_key(os.stat(shard)), remembered]
    assert SessionDirScan(folder, cache).turn_shard_facts(shard) == remembered
    assert SessionDirScan(folder).turn_shard_facts(shard) == {"error": None, "events": [{"turn_id": "a"}]}


def test_a_shard_that_cannot_be_read_is_named_with_the_reason(tmp_path):
    """Rule: an error reading a shard (here a folder where a file should be) fails as hermes does,
    naming the shard."""
    folder = _journal(tmp_path, {})
    shard = folder / "_turn_journal" / "s~1.jsonl"
    shard.mkdir()
    with pytest.raises(TurnJournalError) as caught:
        SessionDirScan(folder).turn_shard_facts(shard)
    assert str(caught.value).startswith("turn journal s~1.jsonl cannot be read: ")
