"""Rule: a materialize written at once hands its new sidecars to the early staging in batches of
``STAGE_BATCH`` while it still plans the other rows (the staging's creates and fsyncs are what the
write waits for on a busy machine), each new file exactly once, in the plan's order; the plan is the
same as without early staging."""

from __future__ import annotations

from pathlib import Path

from inspector.plan import early_staging
from inspector.repair import materialize
from tests.recovery_helpers import make_ctx
from tests.repair.test_materialize_warning_rules import _home


def test_new_sidecars_are_staged_in_batches_while_the_rows_are_planned(tmp_path: Path, monkeypatch) -> None:
    sids = [f"s{i:03d}" for i in range(2 * materialize.STAGE_BATCH + 5)]
    home = _home(tmp_path, sids)
    alone = materialize.plan(make_ctx(home), None).to_json()
    calls: list[tuple[list[str], int]] = []
    real_plan_row, real_stage = materialize._plan_row, materialize.stage_early
    planned = [0]

    def plan_row(*args, **kwargs):
        planned[0] += 1
        return real_plan_row(*args, **kwargs)

    def stage(changes):
        calls.append(([c.path.name for c in changes], planned[0]))
        return real_stage(changes)

    monkeypatch.setattr(materialize, "_plan_row", plan_row)
    monkeypatch.setattr(materialize, "stage_early", stage)
    with early_staging():
        staged_plan = materialize.plan(make_ctx(home), None).to_json()
    assert staged_plan == alone
    new = [Path(c["path"]).name for c in alone["changes"] if not c["path"].endswith("_index.json")]
    assert sorted(new) == [f"{sid}.json" for sid in sids]
    batches = [names for names, _ in calls if names and names != ["_index.json"]]
    assert [n for names in batches for n in names] == new  # each once, in order
    assert [len(b) for b in batches] == [materialize.STAGE_BATCH, materialize.STAGE_BATCH, 5]
    assert [at for names, at in calls if names and names != ["_index.json"]][:2] == [
        materialize.STAGE_BATCH,
        2 * materialize.STAGE_BATCH,
    ]  # handed over as soon as planned, not after the last row


def test_the_details_are_the_planned_rows_in_order_without_the_nones(monkeypatch) -> None:
    """What ``repair --json`` reports per row: each row's detail as planned, a row planned to
    nothing (hermes skips it silently) left out."""
    from types import SimpleNamespace

    handed: list[list] = []
    monkeypatch.setattr(materialize, "stage_early", lambda changes: handed.append(list(changes)))
    p = SimpleNamespace(changes=[])
    rows = [
        {"session_id": "a", "materialized": True},
        None,
        {"session_id": "c", "skipped": "unsafe_session_id"},
    ]
    assert materialize._staged_as_planned(p, iter(rows)) == [rows[0], rows[2]]
    assert handed == [[]]  # nothing planned to write: only the final hand-over, empty
