"""Reading one session's turn journal (``turn_journal.read_turn_journal``) through a snapshot and a scan.

Rules found by mutation testing (tests/MUTATION.md, third session): the read goes through the
caller's snapshot (so a plan sees one version of every file) and the caller's folder listing; a
shard that vanished after the listing is skipped and the next one still read; a shard that cannot be
read stops the read with a sentence naming it (hermes' read fails there too).
"""

from __future__ import annotations

import json

import pytest

from inspector.store.files import FileSnapshot
from inspector.store.scan import SessionDirScan
from inspector.store.turn_journal import TurnJournalError, read_turn_journal


def _shard(session_dir, name, *events):
    path = session_dir / "_turn_journal" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in events))
    return path


def _ev(turn_id, created_at):
    return {"event": "submitted", "turn_id": turn_id, "created_at": created_at}


def test_the_journal_names_its_session(tmp_path):
    """Rule: the journal read carries the session id it was read for."""
    _shard(tmp_path, "s1~1.jsonl", _ev("t1", 1.0))
    journal = read_turn_journal(tmp_path, "s1")
    assert journal.session_id == "s1"
    assert [e["turn_id"] for e in journal.events] == ["t1"]


def test_the_read_goes_through_the_callers_snapshot(tmp_path):
    """Rule: a shard the caller's snapshot already read is taken from it, not read again."""
    path = _shard(tmp_path, "s1~1.jsonl", _ev("t1", 1.0))
    snapshot = FileSnapshot()
    assert snapshot.data(path) is not None  # the plan read it before
    _shard(tmp_path, "s1~1.jsonl", _ev("t2", 2.0))  # rewritten since
    journal = read_turn_journal(tmp_path, "s1", snapshot)
    assert [e["turn_id"] for e in journal.events] == ["t1"]


def test_the_shards_are_the_callers_listing(tmp_path):
    """Rule: with a scan, the shards are those of the scan's listing: one created after it is not read."""
    _shard(tmp_path, "s1~1.jsonl", _ev("t1", 1.0))
    scan = SessionDirScan(tmp_path)
    scan.turn_journal_entries()  # the listing is taken
    _shard(tmp_path, "s1~2.jsonl", _ev("t2", 2.0))
    journal = read_turn_journal(tmp_path, "s1", scan=scan)
    assert [e["turn_id"] for e in journal.events] == ["t1"]
    assert [e["turn_id"] for e in read_turn_journal(tmp_path, "s1").events] == ["t1", "t2"]


def test_a_shard_gone_since_the_listing_is_skipped_and_the_next_is_read(tmp_path):
    """Rule: a listed shard that no longer exists is skipped; the shards after it are still read."""
    first = _shard(tmp_path, "s1~1.jsonl", _ev("t1", 1.0))
    _shard(tmp_path, "s1~2.jsonl", _ev("t2", 2.0))
    scan = SessionDirScan(tmp_path)
    scan.turn_journal_entries()
    first.unlink()
    journal = read_turn_journal(tmp_path, "s1", scan=scan)
    assert [e["turn_id"] for e in journal.events] == ["t2"]


def test_a_shard_that_cannot_be_read_is_named(tmp_path):
    """Rule: a shard that cannot be read (here a folder named like one) stops the read with its name."""
    (tmp_path / "_turn_journal" / "s1~1.jsonl").mkdir(parents=True)
    with pytest.raises(TurnJournalError) as caught:
        read_turn_journal(tmp_path, "s1")
    assert str(caught.value).startswith("turn journal s1~1.jsonl cannot be read: ")


def test_a_shard_orjson_reads_exactly_is_checked_once_not_per_line(tmp_path, monkeypatch):
    """Rule (``_parse_shard``): a shard without a run of 19+ digits is checked once and each line
    handed to ``fast_loads`` as already checked; a shard with such a run is read by the stdlib,
    line by line (its numbers exact), as hermes reads it."""
    from inspector.store import turn_journal

    fast, stdlib = [], []
    real_fast, real_loads = turn_journal.fast_loads, json.loads
    monkeypatch.setattr(turn_journal, "fast_loads", lambda raw, **kw: fast.append(kw) or real_fast(raw, **kw))
    monkeypatch.setattr(turn_journal.json, "loads", lambda raw: stdlib.append(raw) or real_loads(raw))
    _shard(tmp_path, "s1~1.jsonl", _ev("t1", 1.0), _ev("t2", 2.0))
    journal = read_turn_journal(tmp_path, "s1")
    assert [e["turn_id"] for e in journal.events] == ["t1", "t2"]
    assert (fast, stdlib) == ([{"checked": True}, {"checked": True}], [])

    fast.clear()
    _shard(tmp_path, "s1~1.jsonl", {**_ev("t3", 3.0), "n": 12345678901234567890123})
    journal = read_turn_journal(tmp_path, "s1")
    assert [e["n"] for e in journal.events] == [12345678901234567890123]
    assert fast == [] and len(stdlib) == 1
