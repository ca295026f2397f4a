"""Materialize's index step (``materialize._index_change``) and each row's count warning
(``materialize._row_warnings``), on hand-made homes: the words are written out.

Rules pinned:

* the summary's last line says ``rewrite`` when an ``_index.json`` was there and ``create`` when none
  was, with the number of rows of the rebuilt index;
* an ``_index.json`` that cannot be read (a folder by that name) refuses the whole plan with
  ``cannot rebuild _index.json: <the error>``;
* each materialized row's count warning names that row's id.
"""

from __future__ import annotations

from pathlib import Path

from inspector.repair import materialize
from inspector.store import statedb
from tests.recovery_helpers import make_ctx
from tests.repair.test_materialize_warning_rules import _home


def _summary_and_refusal(home: Path) -> tuple[list[str], str | None]:
    out = materialize.plan(make_ctx(home), None).to_json()
    return out["summary"], out.get("refusal")


def test_an_index_that_was_there_is_rewritten_and_one_that_was_not_is_created(tmp_path: Path) -> None:
    home = _home(tmp_path / "a", ["s00", "s01"])
    assert _summary_and_refusal(home) == (
        [
            "create s01.json from state.db (1 messages)",
            "create s00.json from state.db (1 messages)",
            "create _index.json from the sidecars (2 rows)",
        ],
        None,
    )
    (home / "webui" / "sessions" / "_index.json").write_text("[]\n", encoding="utf-8")
    assert _summary_and_refusal(home) == (
        [
            "create s01.json from state.db (1 messages)",
            "create s00.json from state.db (1 messages)",
            "rewrite _index.json from the sidecars (2 rows)",
        ],
        None,
    )


def test_an_index_that_cannot_be_read_refuses_the_plan(tmp_path: Path) -> None:
    home = _home(tmp_path, ["s00", "s01"])
    index = home / "webui" / "sessions" / "_index.json"
    index.mkdir()
    plan = materialize.plan(make_ctx(home), None)
    assert plan.refusal == f"cannot rebuild _index.json: [Errno 22] not a regular file: {str(index)!r}"
    assert plan.summary == [
        "create s01.json from state.db (1 messages)",
        "create s00.json from state.db (1 messages)",
    ]


def test_each_rows_count_warning_names_that_row(tmp_path: Path) -> None:
    home = _home(tmp_path, ["s00", "s01"])
    warnings = materialize.plan(make_ctx(home), None).to_json()["warnings"]
    for sid in ("s00", "s01"):
        assert (
            f"{sid}: state.db has no message_count column, so hermes writes message_count 0 although "
            "1 messages are written"
        ) in warnings
    assert not any(w.startswith("None") for w in warnings)


def test_a_schema_that_cannot_be_read_is_taken_to_have_the_count_column(tmp_path: Path, monkeypatch) -> None:
    home = _home(tmp_path, ["s00"])
    assert materialize._has_count_column(home / "state.db") is False  # the fixture's table has none

    def refuse(db: Path) -> None:
        raise statedb.StateDbError("database is locked")

    monkeypatch.setattr(materialize, "read_schema", refuse)
    assert materialize._has_count_column(home / "state.db") is True


def test_a_state_db_that_is_not_a_database_plans_nothing_and_says_so(tmp_path: Path) -> None:
    home = _home(tmp_path, ["s00"])
    db = home / "state.db"
    db.write_bytes(b"this is not a database, only text\n" * 100)
    for session_id in (None, "s00"):
        plan = materialize.plan(make_ctx(home), session_id)
        assert plan.summary == ["nothing to materialize: state.db is unreadable"]
        assert plan.warnings == [
            f"state.db cannot be used: {db} is not an SQLite database (it looks encrypted or is not a "
            "state.db at all) (hermes would silently materialize nothing)"
        ]
        assert plan.changes == [] and plan.refusal is None


def test_no_state_db_plans_nothing_and_says_where_it_looked(tmp_path: Path) -> None:
    home = _home(tmp_path, ["s00"])
    (home / "state.db").unlink()
    plan = materialize.plan(make_ctx(home), None)
    assert plan.summary == [f"no state.db at {home / 'state.db'}: nothing to materialize"]
    assert plan.warnings == [] and plan.changes == [] and plan.refusal is None


def test_probe_of_no_path_says_so() -> None:
    """``statedb.probe``'s words when it is given no path at all (a home without a state.db setting)."""
    assert statedb.probe(None) == "no state.db path"
