"""hermes' recovery decision (``inspect_session_recovery_status``) parses each of the two files once:
hermes parses the live file and its ``.bak`` to count their messages, then again for its guards; the
inspector keeps the object its count was taken from. Rule pinned: the decision is the one of parsing
each twice (a reference written out here, the code before the change), on every pair of files, and a
file whose count found no object is parsed again for the guards, as hermes parses it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from inspector.store import backup
from inspector.store.backup import inspect_session_recovery_status, intentional_shrink_flag
from inspector.store.files import FileSnapshot

SID = "abc123"
UUID_A = "0123456789ab4def8123456789abcdef"
UUID_B = "fedcba9876544321a123456789abcdef"


def _reference(session_dir: Path, sid: str) -> dict:
    """The decision as it was made before: each file counted, then loaded again for the guards."""
    snapshot = FileSnapshot()
    live_path = session_dir / f"{sid}.json"
    bak_path = live_path.with_name(live_path.name + ".bak")
    live_count = backup.message_count(snapshot, live_path)
    status = {"session_id": live_path.stem, "live_messages": live_count}
    if not bak_path.exists():
        return {**status, "bak_messages": -1, "recommend": backup.NO_BACKUP}
    bak_count = backup.message_count(snapshot, bak_path)
    status["bak_messages"] = bak_count
    if bak_count <= live_count:
        return {**status, "recommend": backup.NO_ACTION}
    flag = intentional_shrink_flag(
        backup._load_object(snapshot, live_path), backup._load_object(snapshot, bak_path)
    )
    if flag is not None:
        return {**status, "recommend": backup.NO_ACTION, flag: True}
    return {**status, "recommend": backup.RESTORE}


def _messages(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


def _random_file(rng: random.Random) -> bytes | None:
    kind = rng.choice(
        ["object", "object", "object", "list", "not json", "no messages", "messages not list", None]
    )
    if kind is None:
        return None
    if kind == "not json":
        return b"{not json"
    if kind == "list":
        return b"[1, 2, 3]"
    obj: dict = {"session_id": SID}
    if kind == "messages not list":
        obj["messages"] = {"a": 1}
    elif kind == "object":
        obj["messages"] = _messages(rng.randint(0, 6))
    for key, values in (
        ("clear_generation", [None, "g1", "g2", ""]),
        ("intentional_shrink_generation", [None, UUID_A, UUID_B, "not a uuid"]),
        ("compression_anchor_mode", [None, "manual", "auto"]),
        ("context_messages", [None, [], _messages(1), _messages(3)]),
        ("truncation_watermark", [None, 0.0, 5.0]),
        ("truncation_boundary", [None, 0.0]),
        ("compression_anchor_summary", [None, "summary"]),
        ("compression_anchor_message_key", [None, "k"]),
    ):
        value = rng.choice(values)
        if value is not None:
            obj[key] = value
    return json.dumps(obj, indent=2).encode()


def test_every_pair_of_files_gets_the_decision_of_parsing_each_twice(tmp_path):
    rng = random.Random(255)
    live, bak = tmp_path / f"{SID}.json", tmp_path / f"{SID}.json.bak"
    flagged = restored = 0
    for _ in range(1500):
        for path in (live, bak):
            data = _random_file(rng)
            path.unlink(missing_ok=True)
            if data is not None:
                path.write_bytes(data)
        got = inspect_session_recovery_status(tmp_path, SID)
        assert got == _reference(tmp_path, SID)
        flagged += backup.status_flag(got) is not None
        restored += got["recommend"] == backup.RESTORE
    assert flagged > 20 and restored > 100  # both ends of the guards were reached


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The files parsed (their names), in order."""
    seen: list[str] = []
    monkeypatch.setattr(backup, "read_bytes", _naming(backup.read_bytes, seen))  # each read is parsed
    return seen


def _naming(read, seen):
    def named(snapshot, path):
        seen.append(path.name)
        return read(snapshot, path)

    return named


def _pair(tmp_path: Path, live: object, bak: object) -> None:
    for name, value in ((f"{SID}.json", live), (f"{SID}.json.bak", bak)):
        (tmp_path / name).write_bytes(value if isinstance(value, bytes) else json.dumps(value).encode())


def test_a_shrunken_session_reads_and_parses_each_file_once(tmp_path, parses):
    _pair(tmp_path, {"messages": _messages(1)}, {"messages": _messages(4)})
    assert inspect_session_recovery_status(tmp_path, SID)["recommend"] == backup.RESTORE
    assert parses == [f"{SID}.json", f"{SID}.json.bak"]


def test_the_guards_see_the_objects_the_counts_were_taken_from(tmp_path, parses):
    _pair(
        tmp_path,
        {"messages": _messages(1), "intentional_shrink_generation": UUID_A},
        {"messages": _messages(4)},
    )
    got = inspect_session_recovery_status(tmp_path, SID)
    assert got["recommend"] == backup.NO_ACTION and got[backup.FLAG_GENERATION] is True
    assert parses == [f"{SID}.json", f"{SID}.json.bak"]


def test_a_live_file_that_is_no_object_is_parsed_again_for_the_guards(tmp_path, parses):
    _pair(tmp_path, b"[1, 2]", {"messages": _messages(2)})
    got = inspect_session_recovery_status(tmp_path, SID)
    assert (got["live_messages"], got["bak_messages"], got["recommend"]) == (-1, 2, backup.RESTORE)
    assert parses == [f"{SID}.json", f"{SID}.json.bak", f"{SID}.json"]


def test_a_backup_that_is_no_object_never_reaches_the_guards(tmp_path, parses):
    _pair(tmp_path, {"messages": _messages(2)}, b"not json")
    got = inspect_session_recovery_status(tmp_path, SID)
    assert (got["bak_messages"], got["recommend"]) == (-1, backup.NO_ACTION)
    assert parses == [f"{SID}.json", f"{SID}.json.bak"]
