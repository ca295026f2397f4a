"""Each rule of ``Session.save`` (hermes ``api/models.py``) pinned by one case with literal values.

The hypothesis test in ``test_save_fast.py`` compares the save with a reference; here every
branch of ``save_session`` has a case of its own whose expected files are written out by hand:
the unsafe-id refusal, the empty-transcript guard (each of its conditions), the ``.bak`` of a
shrinking save, ``touch_updated_at``, ``skip_index``, and the two tombstone files
(``_clear_webui_zero_message_orphan_tombstone`` / ``_clear_webui_deleted_session_tombstone``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.repair.save import SaveContext, save_session
from inspector.store.files import FileSnapshot, read_raw
from inspector.store.sidecar import LoadedSession, read_sidecar
from tests.recovery_helpers import home_dirs

NOW = 1779900000.0
DELETED = "_deleted_webui_sessions.json"
ORPHANS = "_pruned_webui_orphans.json"


def _msgs(n: int) -> list[dict]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}", "timestamp": 100 + i}
        for i in range(n)
    ]


@pytest.fixture()
def sessions(tmp_path: Path) -> Path:
    sdir = home_dirs(tmp_path)[1]
    (sdir / "_index.json").write_text("[]", encoding="utf-8")
    return sdir


def _write(sessions: Path, sid: str = "a", n: int = 2, **extra) -> bytes:
    raw = {
        "session_id": sid,
        "title": "T",
        "workspace": "/",
        "created_at": 50,
        "updated_at": 60,
        "messages": _msgs(n),
        **extra,
    }
    data = json.dumps(raw).encode()
    (sessions / f"{sid}.json").write_bytes(data)
    return data


def _load(sessions: Path, sid: str = "a") -> LoadedSession:
    return read_sidecar(read_raw(sessions / f"{sid}.json"), now=NOW, cwd=sessions)


def _save(sessions: Path, session: LoadedSession, *, touch: bool = True, skip_index: bool = False) -> dict:
    ctx = SaveContext(session_dir=sessions, snapshot=FileSnapshot(), now=NOW, cwd=sessions)
    return {
        c.path.name: c.after
        for c in save_session(ctx, session, touch_updated_at=touch, skip_index=skip_index)
    }


# ---------------------------------------------------------------- refusal and guard


def test_an_unsafe_session_id_is_refused(sessions: Path) -> None:
    _write(sessions)
    session = _load(sessions)
    session.data["session_id"] = "../a"
    with pytest.raises(ValueError, match="unsafe session id"):
        _save(sessions, session)


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize(
    "live",
    [{"active_stream_id": "s1"}, {"pending_user_message": "hi"}],
    ids=["active-stream", "pending-message"],
)
def test_an_empty_transcript_does_not_overwrite_messages_while_a_turn_is_live(
    sessions: Path, live: dict, n: int
) -> None:
    _write(sessions, n=n, **live)
    session = _load(sessions)
    session.data["messages"] = []
    assert _save(sessions, session) == {}


def test_an_empty_transcript_without_a_live_turn_is_saved_with_a_bak(sessions: Path) -> None:
    before = _write(sessions, n=2)
    session = _load(sessions)
    session.data["messages"] = []
    changes = _save(sessions, session)
    assert changes["a.json.bak"] == before
    assert json.loads(changes["a.json"])["messages"] == []


def test_the_guard_needs_existing_messages(sessions: Path) -> None:
    """``existing_msg_count > 0``: an empty sidecar may be saved empty during a live turn."""
    _write(sessions, n=0, active_stream_id="s1")
    changes = _save(sessions, _load(sessions))
    assert set(changes) == {"a.json", "_index.json"}
    assert json.loads(changes["a.json"])["updated_at"] == NOW


# ---------------------------------------------------------------- .bak, touch, skip_index


def test_a_shrinking_save_keeps_the_previous_bytes_as_bak(sessions: Path) -> None:
    before = _write(sessions, n=3)
    session = _load(sessions)
    session.data["messages"] = session.data["messages"][:2]
    changes = _save(sessions, session)
    assert changes["a.json.bak"] == before and json.loads(changes["a.json"])["message_count"] == 2


@pytest.mark.parametrize("delta", [0, 1], ids=["same-count", "growing"])
def test_a_save_that_does_not_shrink_writes_no_bak(sessions: Path, delta: int) -> None:
    _write(sessions, n=2)
    session = _load(sessions)
    session.data["messages"] += _msgs(delta)
    assert "a.json.bak" not in _save(sessions, session)


def test_touch_updated_at_sets_now_and_without_it_updated_at_stays(sessions: Path) -> None:
    _write(sessions)
    assert json.loads(_save(sessions, _load(sessions), touch=True)["a.json"])["updated_at"] == NOW
    changes = _save(sessions, _load(sessions), touch=False)
    assert json.loads(changes["a.json"])["updated_at"] == 60
    assert json.loads(changes["_index.json"])[0]["updated_at"] == 60


def test_skip_index_leaves_the_index_alone(sessions: Path) -> None:
    _write(sessions)
    changes = _save(sessions, _load(sessions), skip_index=True)
    assert set(changes) == {"a.json"}


# ---------------------------------------------------------------- tombstones


def _tomb(ids, version=1) -> str:
    return json.dumps({"version": version, "ids": ids})


def test_a_saved_conversation_leaves_both_tombstones(sessions: Path) -> None:
    _write(sessions)
    (sessions / DELETED).write_text(_tomb(["b", " a ", "c", "b"]), encoding="utf-8")
    (sessions / ORPHANS).write_text(_tomb(["a"]), encoding="utf-8")
    changes = _save(sessions, _load(sessions))
    assert changes[DELETED] == b'{\n  "version": 1,\n  "ids": [\n    "b",\n    "c"\n  ]\n}'
    assert changes[ORPHANS] is None  # the last id gone: the file is deleted


def test_an_empty_transcript_leaves_the_tombstones_alone(sessions: Path) -> None:
    _write(sessions, n=0)
    (sessions / DELETED).write_text(_tomb(["a", "b"]), encoding="utf-8")
    assert DELETED not in _save(sessions, _load(sessions))


def test_tombstone_ids_are_any_json_value_as_text(sessions: Path) -> None:
    """hermes keeps ``str(id).strip()`` of every truthy id: 5 stays as "5"; 0, "" and null go."""
    _write(sessions)
    (sessions / DELETED).write_text(_tomb(["a", 5, 0, "", None, " z "]), encoding="utf-8")
    changes = _save(sessions, _load(sessions))
    assert json.loads(changes[DELETED]) == {"version": 1, "ids": ["5", "z"]}


@pytest.mark.parametrize(
    "body",
    [
        '{"ids": ["a", "b"]}',
        _tomb(["a", "b"], version=2),
        _tomb(["a", "b"], "x"),
        '{"version": 1, "ids": "a"}',
        '["a"]',
        "not json",
        '{"version": 1}',
    ],
    ids=["no-version", "version-2", "version-text", "ids-not-a-list", "not-an-object", "not-json", "no-ids"],
)
def test_a_tombstone_hermes_cannot_use_is_left_alone(sessions: Path, body: str) -> None:
    _write(sessions)
    (sessions / DELETED).write_text(body, encoding="utf-8")
    assert DELETED not in _save(sessions, _load(sessions))


def test_a_tombstone_without_the_id_is_left_alone(sessions: Path) -> None:
    _write(sessions)
    (sessions / DELETED).write_text(_tomb(["b"]), encoding="utf-8")
    assert DELETED not in _save(sessions, _load(sessions))


def test_the_orphan_tombstone_keeps_its_last_500_ids_and_the_deleted_one_its_last_1000(
    sessions: Path,
) -> None:
    _write(sessions)
    many = [f"s{i:04d}" for i in range(1200)]
    (sessions / ORPHANS).write_text(_tomb(["a"] + many), encoding="utf-8")
    (sessions / DELETED).write_text(_tomb(["a"] + many), encoding="utf-8")
    changes = _save(sessions, _load(sessions))
    assert json.loads(changes[ORPHANS])["ids"] == many[-500:]
    assert json.loads(changes[DELETED])["ids"] == many[-1000:]


def test_an_orphan_tombstone_whose_loader_raises_stops_the_clearing(sessions: Path) -> None:
    """``int(Infinity)`` raises OverflowError out of hermes' loader; ``save`` logs it, and the
    deleted-session tombstone (cleared second, in the same try) keeps the id too."""
    _write(sessions)
    (sessions / ORPHANS).write_text('{"version": Infinity, "ids": ["a", "b"]}', encoding="utf-8")
    (sessions / DELETED).write_text(_tomb(["a", "b"]), encoding="utf-8")
    changes = _save(sessions, _load(sessions))
    assert ORPHANS not in changes and DELETED not in changes and "a.json" in changes


def test_a_deleted_tombstone_whose_loader_raises_leaves_the_orphan_one_cleared(sessions: Path) -> None:
    _write(sessions)
    (sessions / ORPHANS).write_text(_tomb(["a", "b"]), encoding="utf-8")
    (sessions / DELETED).write_text('{"version": Infinity, "ids": ["a", "b"]}', encoding="utf-8")
    changes = _save(sessions, _load(sessions))
    assert json.loads(changes[ORPHANS]) == {"version": 1, "ids": ["b"]} and DELETED not in changes
