"""The preview of ``materialize`` names hermes' own materialization defects, row by row (issue 20).

hermes' recovery materializer (session-recovery §7.2) keeps only role, content and timestamp, with
no ``active`` filter and no decoding. Loading such sessions in hermes-webui shows three defects;
the sidecar stays hermes-identical (the contract) and the preview names each defect for the rows
it affects:

* a tool-call-only assistant row is written empty, its calls dropped (shown duplicated beside
  state.db's row with the call);
* ``active = 0`` rows (taken back, or archived by compaction) come back;
* ``\\x00json:``-encoded content is copied raw.

Golden case 22 (an agent-like state.db) has all three: session baec905d4b20 row 1 (an empty
``search_files`` call), session 3bda4cf39d18 row 2 (a taken-back user message) and row 0 (a
structured user message).
"""

from __future__ import annotations

from pathlib import Path

from inspector.repair import materialize
from inspector.store import statedb
from inspector.store.statedb import materialization_defects
from tests.conftest import GOLDEN, copy_tree
from tests.recovery_helpers import make_ctx

CASE = GOLDEN / "22-materialize-agent-db"


def _home(tmp_path: Path) -> Path:
    return copy_tree(CASE / "before", tmp_path / "home")


def test_defect_rows_in_the_materializer_order(tmp_path: Path) -> None:
    db = _home(tmp_path) / "state.db"
    assert materialization_defects(db, "baec905d4b20") == [
        {"index": 1, "role": "assistant", "tools": ["search_files"], "defects": ["empty_tool_call"]}
    ]
    assert materialization_defects(db, "3bda4cf39d18") == [
        {"index": 0, "role": "user", "defects": ["json_content"]},
        {"index": 2, "role": "user", "compacted": False, "defects": ["inactive"]},
    ]


def test_preview_names_each_defect_for_its_rows_and_writes_hermes_bytes(tmp_path: Path) -> None:
    home = _home(tmp_path)
    plan = materialize.plan(make_ctx(home), None)
    defects = [w for w in plan.warnings if "hermes defect" in w]
    assert len(defects) == 3
    tools, inactive, raw = defects
    assert tools.startswith("baec905d4b20: hermes defect, tool calls stripped: row(s) 1 (search_files) ")
    assert "duplicated empty assistant row" in tools
    assert inactive.startswith(
        "3bda4cf39d18: hermes defect, superseded messages come back: row(s) 2 (user, taken back) "
    )
    assert raw.startswith("3bda4cf39d18: hermes defect, encoded content shown raw: row(s) 0 (user) ")
    # The default stays hermes-identical: the bytes of the golden result.
    for change in plan.changes:
        if change.path.name.endswith(".json") and not change.path.name.startswith("_"):
            expected = (CASE / "after" / "webui" / "sessions" / change.path.name).read_bytes()
            assert change.after == expected


def test_no_defect_no_warning(tmp_path: Path) -> None:
    home = copy_tree(GOLDEN / "21-materialize-seed" / "before", tmp_path / "home")
    plan = materialize.plan(make_ctx(home), None)
    assert plan.changes and not [w for w in plan.warnings if "hermes defect" in w]


def test_compacted_and_many_rows_are_named_and_counted(tmp_path: Path) -> None:
    import sqlite3

    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    db = home / "state.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT, started_at REAL)")
        conn.execute(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, "
            "timestamp REAL, active INTEGER, compacted INTEGER)"
        )
        conn.execute("INSERT INTO sessions VALUES ('compacted1', 'webui', 'Long chat', 1.0)")
        rows = [("compacted1", "user", f"old {i}", 10.0 + i, 0, 1) for i in range(14)]
        rows.append(("compacted1", "user", "live", 100.0, 1, 0))
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, timestamp, active, compacted) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    plan = materialize.plan(make_ctx(home), "compacted1")
    (warning,) = [w for w in plan.warnings if "hermes defect" in w]
    assert warning.startswith(
        "compacted1: hermes defect, superseded messages come back: row(s) "
        "0 (user, archived by compaction), 1 (user, archived by compaction)"
    )
    assert "11 (user, archived by compaction) and 2 more have active = 0" in warning


def _plan_json(home: Path) -> dict:
    return materialize.plan(make_ctx(home), None).to_json()


def test_warnings_queried_by_a_forked_copy_are_the_same_in_the_same_order(
    tmp_path: Path, monkeypatch
) -> None:
    """Rule: a materialize of many rows whose warnings' facts could not be found while its rows were
    read asks state.db for each row's warnings in a forked copy while it makes the sidecars; the
    preview is the one made asking them itself (warnings in row order), and where the copy fails
    this process asks them."""
    home = _home(tmp_path)
    alone_from_facts = _plan_json(home)
    monkeypatch.setattr(statedb, "_messages_with_facts", lambda *args: None)  # no facts: asked
    monkeypatch.setattr(materialize, "PARALLEL_WARNINGS_MIN", 10**9)
    alone = _plan_json(home)
    assert alone == alone_from_facts
    assert any("hermes defect" in w for w in alone["warnings"])
    monkeypatch.setattr(materialize, "PARALLEL_WARNINGS_MIN", 1)
    # pytest-qt loads Qt into the test process, where portable.can_fork() says no: forced to yes,
    # and the copy's answers counted, so the preview compared is surely the forked copy's
    monkeypatch.setattr(materialize.portable, "can_fork", lambda: True)
    forked = []
    answered = []
    real = materialize._db_warnings_elsewhere

    class Noting:
        def __init__(self, pending) -> None:
            self.pending = pending

        def result(self):
            got = self.pending.result()
            answered.append(len(got))
            return got

    def counted(*args):
        pending = real(*args)
        forked.append(pending is not None)
        return Noting(pending) if pending is not None else None

    monkeypatch.setattr(materialize, "_db_warnings_elsewhere", counted)
    assert _plan_json(home) == alone
    assert forked == [True] and answered == [alone["result"]["materialized"]]

    class Failing:
        def result(self):
            raise materialize.ForkedError("the copy died")

    monkeypatch.setattr(materialize, "_db_warnings_elsewhere", lambda db, rows: Failing())
    assert _plan_json(home) == alone


def test_warnings_come_from_the_read_of_the_rows_without_asking_state_db_again(
    tmp_path: Path, monkeypatch
) -> None:
    """Rule: the state.db warnings of a materialize are made from the query that read each row's
    messages (its facts: the dropped-field counts and the defect rows): no second query per row and no
    forked copy, and the preview is the one made by asking them (the fork's and this process's own)."""
    home = _home(tmp_path)
    monkeypatch.setattr(statedb, "_messages_with_facts", lambda *args: None)
    asked = _plan_json(home)
    monkeypatch.undo()

    def never(*args, **kwargs):
        raise AssertionError("state.db asked again for a row's warnings")

    monkeypatch.setattr(materialize, "dropped_field_counts", never)
    monkeypatch.setattr(materialize, "materialization_defects", never)
    monkeypatch.setattr(materialize, "PARALLEL_WARNINGS_MIN", 1)
    monkeypatch.setattr(materialize.portable, "can_fork", lambda: True)
    monkeypatch.setattr(materialize, "Forked", never)
    got = _plan_json(home)
    assert got == asked
    assert any("hermes defect" in w for w in got["warnings"])
