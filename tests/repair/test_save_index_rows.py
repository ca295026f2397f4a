"""What a save does to ``_index.json`` (hermes' ``_write_session_index(updates=[self])`` fast path).

hermes (``api/models.py``) takes the ids on disk from one listing of the sessions folder
(``_persisted_session_ids_snapshot``: the stems of the non-``_`` ``*.json`` names), keeps the
index rows whose ``session_id`` is in memory (the saved session) or on disk, appends the saved
session's row when it has none, puts the new row in place of *every* row of that session, sorts
by the raw ``updated_at`` (0 when missing) newest first, and falls back to a full rebuild when
any of that raises. The expected rows below are written out by hand from those rules.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.repair import interrupted
from inspector.repair.save import SaveContext, save_session
from inspector.store.files import FileSnapshot, read_raw
from inspector.store.sidecar import read_sidecar
from tests.recovery_helpers import apply, home_dirs, make_ctx

NOW = 1779900000.0


def _sidecar(sessions: Path, sid: str, updated_at: float, n: int = 2, **extra) -> None:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}", "timestamp": 100 + i}
        for i in range(n)
    ]
    raw = {
        "session_id": sid,
        "title": f"chat {sid}",
        "workspace": "/",
        "created_at": 50,
        "updated_at": updated_at,
        "messages": messages,
        **extra,
    }
    (sessions / f"{sid}.json").write_text(json.dumps(raw), encoding="utf-8")


def _save(sessions: Path, sid: str, index_rows, *, touch: bool = True) -> list[dict]:
    """Save ``sid`` unchanged over an index holding ``index_rows``; the index rows written."""
    (sessions / "_index.json").write_text(json.dumps(index_rows), encoding="utf-8")
    ctx = SaveContext(session_dir=sessions, snapshot=FileSnapshot(), now=NOW, cwd=sessions)
    session = read_sidecar(read_raw(sessions / f"{sid}.json"), now=NOW, cwd=sessions)
    changes = {c.path.name: c.after for c in save_session(ctx, session, touch_updated_at=touch)}
    assert "_index.json" in changes
    return json.loads(changes["_index.json"])


def _ids(rows: list[dict]) -> list:
    return [r.get("session_id") for r in rows]


@pytest.fixture()
def sessions(tmp_path: Path) -> Path:
    return home_dirs(tmp_path)[1]


def test_a_save_drops_index_rows_whose_sidecar_is_gone(sessions: Path) -> None:
    _sidecar(sessions, "a", 1000)
    _sidecar(sessions, "b", 3000)
    stored_b = {"session_id": "b", "updated_at": 3000, "title": "stale title"}
    rows = _save(
        sessions,
        "a",
        [
            {"session_id": "gone", "updated_at": 9000},
            stored_b,
            {"session_id": "a", "updated_at": 1000, "title": "old"},
        ],
    )
    assert _ids(rows) == ["a", "b"]
    assert rows[1] == stored_b  # kept as stored: the fast path does not recompute other rows
    assert (rows[0]["title"], rows[0]["updated_at"], rows[0]["message_count"]) == ("chat a", NOW, 2)


def test_a_repair_that_saves_drops_the_row_of_a_deleted_session(tmp_path: Path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    _sidecar(
        sessions,
        "live",
        1000,
        n=0,
        pending_user_message="Hello",
        active_stream_id="s1",
        pending_started_at=900,
    )
    (sessions / "_index.json").write_text(
        json.dumps(
            [{"session_id": "deleted", "updated_at": 5000}, {"session_id": "live", "updated_at": 1000}]
        )
    )
    plan = interrupted.plan(make_ctx(home, now=NOW), "live")
    assert plan.refusal is None
    apply(plan, tmp_path)
    rows = json.loads((sessions / "_index.json").read_bytes())
    assert _ids(rows) == ["live"] and rows[0]["updated_at"] == NOW


def test_rows_without_a_string_id_are_dropped(sessions: Path) -> None:
    _sidecar(sessions, "a", 1000)
    _sidecar(sessions, "5", 1000)
    rows = _save(
        sessions,
        "a",
        [
            {"updated_at": 1},
            {"session_id": 5, "updated_at": 2},
            {"session_id": "", "updated_at": 3},
            {"session_id": None},
        ],
    )
    assert _ids(rows) == ["a"]


def test_a_row_named_like_an_underscore_file_is_not_on_disk(sessions: Path) -> None:
    """hermes' on-disk ids skip ``_``-prefixed names (``_index.json`` is no session)."""
    _sidecar(sessions, "a", 1000)
    (sessions / "_x.json").write_text("{}", encoding="utf-8")
    rows = _save(
        sessions, "a", [{"session_id": "_x", "updated_at": 9}, {"session_id": "_index", "updated_at": 8}]
    )
    assert _ids(rows) == ["a"]


def test_a_row_whose_sidecar_is_a_dangling_link_is_kept(sessions: Path) -> None:
    """The on-disk ids come from the listing, not from a stat: a dangling ``b.json`` is listed."""
    _sidecar(sessions, "a", 1000)
    (sessions / "b.json").symlink_to(sessions / "nowhere.json")
    rows = _save(sessions, "a", [{"session_id": "b", "updated_at": 7}])
    assert _ids(rows) == ["a", "b"]


def test_a_row_naming_a_file_in_a_subfolder_is_not_on_disk(sessions: Path) -> None:
    _sidecar(sessions, "a", 1000)
    (sessions / "sub").mkdir()
    (sessions / "sub" / "x.json").write_text("{}", encoding="utf-8")
    rows = _save(sessions, "a", [{"session_id": "sub/x", "updated_at": 7}])
    assert _ids(rows) == ["a"]


def test_every_row_of_the_saved_session_is_replaced_in_place(sessions: Path) -> None:
    """``existing[i] = updated_map[sid]`` for every i: duplicate rows stay, both new."""
    _sidecar(sessions, "a", 1000)
    _sidecar(sessions, "b", 3000)
    rows = _save(
        sessions,
        "a",
        [
            {"session_id": "a", "updated_at": 1, "title": "old1"},
            {"session_id": "b", "updated_at": 3000},
            {"session_id": "a", "updated_at": 2, "title": "old2"},
        ],
        touch=False,
    )
    assert _ids(rows) == ["b", "a", "a"]
    assert rows[1] == rows[2] and rows[1]["title"] == "chat a" and rows[1]["updated_at"] == 1000


def test_a_session_without_a_row_is_appended_then_sorted(sessions: Path) -> None:
    _sidecar(sessions, "a", 2000)
    _sidecar(sessions, "b", 3000)
    _sidecar(sessions, "c", 1000)
    rows = _save(
        sessions,
        "a",
        [
            {"session_id": "c", "updated_at": 1000},
            {"session_id": "b", "updated_at": 3000},
            {"session_id": "x"},
        ],
        touch=False,
    )
    assert _ids(rows) == ["b", "a", "c"]


def test_ties_keep_the_index_order_and_a_missing_updated_at_sorts_as_zero(sessions: Path) -> None:
    for sid in ("a", "b", "c", "d"):
        _sidecar(sessions, sid, 500)
    rows = _save(
        sessions,
        "a",
        [
            {"session_id": "d"},
            {"session_id": "c", "updated_at": 500},
            {"session_id": "b", "updated_at": 500},
            {"session_id": "a", "updated_at": 1},
        ],
        touch=False,
    )
    assert _ids(rows) == ["c", "b", "a", "d"]


@pytest.mark.parametrize("bad", ["soon", None, [1]], ids=["string", "null", "list"])
def test_rows_hermes_cannot_sort_make_it_rebuild_the_index(sessions: Path, bad) -> None:
    """``existing.sort(key=updated_at)`` raises TypeError on a string/null/list next to numbers:
    hermes falls back to the full rebuild, so the stored row is replaced by b's real row."""
    _sidecar(sessions, "a", 1000)
    _sidecar(sessions, "b", 3000)
    rows = _save(
        sessions,
        "a",
        [{"session_id": "b", "updated_at": bad, "title": "stale"}, {"session_id": "a", "updated_at": 1000}],
        touch=False,
    )
    assert _ids(rows) == ["b", "a"]
    assert (rows[0]["title"], rows[0]["updated_at"]) == ("chat b", 3000)


def test_all_string_updated_at_values_sort_as_strings(sessions: Path) -> None:
    """Strings compare with strings: no TypeError, no rebuild (the saved row's updated_at is a
    number, so this needs the saved session to have a string too, and no touch)."""
    _sidecar(sessions, "a", "2026-01-02")  # type: ignore[arg-type]
    _sidecar(sessions, "b", 3000)
    rows = _save(
        sessions, "a", [{"session_id": "b", "updated_at": "2026-01-03", "title": "stale"}], touch=False
    )
    assert _ids(rows) == ["b", "a"] and rows[0]["title"] == "stale"


def test_an_unhashable_row_id_makes_hermes_rebuild_the_index(sessions: Path) -> None:
    _sidecar(sessions, "a", 1000)
    _sidecar(sessions, "b", 3000)
    rows = _save(sessions, "a", [{"session_id": ["b"], "updated_at": 1}], touch=False)
    assert _ids(rows) == ["b", "a"] and rows[0]["title"] == "chat b"


def test_a_row_that_cannot_be_written_as_utf8_makes_hermes_rebuild_the_index(sessions: Path) -> None:
    """A lone surrogate (``\\ud800`` in the index) makes hermes' UTF-8 write raise: full rebuild."""
    _sidecar(sessions, "a", 1000)
    _sidecar(sessions, "b", 3000)
    rows = _save(sessions, "a", [{"session_id": "b", "updated_at": 3000, "title": "\ud800"}], touch=False)
    assert _ids(rows) == ["b", "a"] and rows[0]["title"] == "chat b"


def test_a_new_sidecar_keeps_its_index_row_in_place(sessions: Path) -> None:
    """The saved session is in memory: its row is kept (and replaced in place) even while its
    sidecar is not on disk yet (a sidecar the plan creates); with equal ``updated_at`` it stays first."""
    _sidecar(sessions, "b", 5)
    _sidecar(sessions, "new", 5)
    session = read_sidecar(read_raw(sessions / "new.json"), now=NOW, cwd=sessions)
    (sessions / "new.json").unlink()
    (sessions / "_index.json").write_text(
        json.dumps([{"session_id": "new", "updated_at": 5}, {"session_id": "b", "updated_at": 5}]),
        encoding="utf-8",
    )
    ctx = SaveContext(session_dir=sessions, snapshot=FileSnapshot(), now=NOW, cwd=sessions)
    changes = {c.path.name: c.after for c in save_session(ctx, session, touch_updated_at=False)}
    assert _ids(json.loads(changes["_index.json"])) == ["new", "b"]


def test_a_row_without_updated_at_sorts_as_zero(sessions: Path) -> None:
    _sidecar(sessions, "a", 2)
    for sid in ("c", "d"):
        _sidecar(sessions, sid, 1)
    rows = _save(sessions, "a", [{"session_id": "d"}, {"session_id": "c", "updated_at": 0.5}], touch=False)
    assert _ids(rows) == ["a", "c", "d"]
