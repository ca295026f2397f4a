"""``materialize``'s plan (hermes' ``_materialize_missing_sidecars_from_state_db``, spec
session-recovery): what it answers before and around the rows, word for word.

Rules pinned here:

* a requested id that is not a safe session id (``A-Z a-z 0-9 _ -``) is refused before state.db is
  read, with the id and why; the plan still names its action and the id;
* no state.db: nothing to materialize, said with the path; the result counts nothing;
* one requested id that hermes would not materialize: "nothing to do" and the reason (here a row
  whose source is not ``webui``), nothing written, the result counts nothing;
* one requested id that hermes would materialize: only that row's sidecar and the index, and the
  result counts one row; the whole-home plan writes every eligible row (not the CLI one);
* a folder big enough for the index rebuild's forked helpers to start early (the threshold, 512
  sidecars, made 2 here) gets the same plan: the new sidecar and an index of every row;
* the whole-home plan with no eligible row: "nothing to materialize" (not a "nothing to do" reason,
  which answers a requested id).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.repair import materialize, save
from tests.recovery_helpers import custom_state_db, home_dirs, make_ctx, sidecar, write_json

SESSIONS_DDL = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT, model TEXT, started_at REAL, "
    "message_count INTEGER, parent_session_id TEXT)"
)
MESSAGES_DDL = (
    "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, "
    "content TEXT, timestamp REAL)"
)
NOTHING = {"scanned": 0, "materialized": 0, "details": []}


def _db(tmp_path: Path, sources: dict[str, str]) -> Path:
    """A home whose state.db holds one session per id (with its source) and one user message each."""
    home, _, db = home_dirs(tmp_path)
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": sid, "source": source} for sid, source in sources.items()],
        [{"session_id": sid, "role": "user", "content": f"hello {sid}"} for sid in sources],
    )
    return home


def test_an_unsafe_id_is_refused_with_the_id_and_why(tmp_path: Path) -> None:
    """Rule: "'../escaped' is not a safe session id ...": refused, nothing planned, the plan still
    names the action and the id."""
    home = _db(tmp_path, {"a": "webui"})
    plan = materialize.plan(make_ctx(home), "../escaped")
    assert (plan.action, plan.session_id) == ("materialize", "../escaped")
    assert plan.refusal == (
        "'../escaped' is not a safe session id (only A-Z a-z 0-9 _ -): "
        "hermes would write outside the sessions folder or an unloadable file"
    )
    assert plan.changes == []


def test_no_state_db_is_nothing_to_materialize_with_its_path(tmp_path: Path) -> None:
    """Rule: no state.db: one summary line with its path, no warning, a result that counts nothing."""
    home, _, db = home_dirs(tmp_path)
    plan = materialize.plan(make_ctx(home))
    assert plan.refusal is None and plan.changes == [] and plan.warnings == []
    assert plan.summary == [f"no state.db at {db}: nothing to materialize"]
    assert plan.result == NOTHING


def test_a_requested_row_hermes_would_not_materialize_says_why(tmp_path: Path) -> None:
    """Rule: a requested id whose row is a CLI session: "nothing to do" and the reason, nothing else."""
    home = _db(tmp_path, {"a": "webui", "c": "cli"})
    plan = materialize.plan(make_ctx(home), "c")
    assert (plan.action, plan.session_id, plan.refusal) == ("materialize", "c", None)
    assert plan.summary == [
        "nothing to do: state.db row c is not a source='webui' session: hermes only materializes WebUI rows"
    ]
    assert plan.changes == [] and plan.result == NOTHING


def test_a_requested_row_is_the_only_one_planned(tmp_path: Path) -> None:
    """Rule: one id asked for: its sidecar and the index (of that one row), and a result of one row."""
    home = _db(tmp_path, {"a": "webui", "b": "webui"})
    plan = materialize.plan(make_ctx(home), "b")
    assert plan.refusal is None
    assert [c.path.name for c in plan.changes] == ["b.json", "_index.json"]
    assert plan.result == {
        "scanned": 1,
        "materialized": 1,
        "details": [{"session_id": "b", "materialized": True, "messages": 1}],
    }
    assert [row["session_id"] for row in json.loads(plan.changes[1].after)] == ["b"]


def test_the_whole_home_plans_every_eligible_row(tmp_path: Path) -> None:
    """Rule: no id asked for: every eligible row's sidecar and the index."""
    home = _db(tmp_path, {"a": "webui", "b": "webui", "c": "cli"})
    plan = materialize.plan(make_ctx(home))
    assert sorted(c.path.name for c in plan.changes) == ["_index.json", "a.json", "b.json"]
    assert (plan.result["scanned"], plan.result["materialized"]) == (2, 2)


def test_the_whole_home_with_no_eligible_row_is_nothing_to_materialize(tmp_path: Path) -> None:
    """Rule: no id asked for and only a CLI row: "nothing to materialize", not a requested id's reason."""
    home = _db(tmp_path, {"c": "cli"})
    plan = materialize.plan(make_ctx(home))
    assert plan.refusal is None and plan.changes == []
    assert plan.summary == ["nothing to materialize"]
    assert plan.result == NOTHING


def test_a_folder_big_enough_for_the_early_helpers_gets_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: with two sidecars already there (the helpers' threshold made 2) and a WebUI row without
    its sidecar, the plan writes that sidecar and an index of all three rows."""
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
    home = _db(tmp_path, {"a": "webui"})
    sessions = home / "webui" / "sessions"
    for sid in ("old1", "old2"):
        write_json(sessions / f"{sid}.json", sidecar(sid, 1, updated_at=1.0))
    plan = materialize.plan(make_ctx(home))
    assert plan.refusal is None
    assert [c.path.name for c in plan.changes] == ["a.json", "_index.json"]
    assert sorted(row["session_id"] for row in json.loads(plan.changes[1].after)) == ["a", "old1", "old2"]
