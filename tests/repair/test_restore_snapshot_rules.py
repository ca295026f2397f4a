"""``restore-backup`` decides on the bytes its context's snapshot holds: one plan never sees two
versions of a file (found by mutation testing, eighteenth session: the decision and ``eligible()``
could read the files again from disk and still pass). Here the snapshot holds the live file with 1
message and its .bak with 3; the live file on disk has grown to 5 messages since (a save by
hermes-webui); the write's fingerprint check is what meets that change, not the plan."""

from __future__ import annotations

import json

from inspector.repair import restore
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json


def _read_then_saved_again(tmp_path):
    home_path, sessions, _ = home_dirs(tmp_path)
    live, bak = sessions / "s.json", sessions / "s.json.bak"
    write_json(live, sidecar("s", 1))
    write_json(bak, sidecar("s", 3))
    ctx = make_ctx(home_path)
    first = ctx.snapshot.data(live)
    ctx.snapshot.data(bak)
    write_json(live, sidecar("s", 5))
    return ctx, first, bak.read_bytes()


def test_the_decision_is_made_on_the_bytes_the_snapshot_read(tmp_path):
    ctx, first, bak = _read_then_saved_again(tmp_path)
    plan = restore.plan(ctx, "s")
    assert plan.refusal is None
    assert [(c.before, c.after) for c in plan.changes] == [(first, bak)]
    assert plan.result["live_messages"] == 1 and plan.result["bak_messages"] == 3
    assert json.loads(first)["messages"] == sidecar("s", 1)["messages"]


def test_eligible_decides_on_the_bytes_the_snapshot_read(tmp_path):
    ctx, _, _ = _read_then_saved_again(tmp_path)
    assert restore.eligible(ctx) == ["s"]


def test_a_live_file_that_is_not_json_is_not_too_deep_and_is_replaced(tmp_path):
    """hermes counts a live file that is not JSON (or not UTF-8) as -1 and restores over it."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "s.json.bak", sidecar("s", 2))
    for broken in (b'{"session_id": "s", "messages": [', b'{"title": "\xff"}'):
        (sessions / "s.json").write_bytes(broken)
        plan = restore.plan(make_ctx(home_path), "s")
        assert plan.refusal is None
        assert [c.before for c in plan.changes] == [broken]
        assert restore.eligible(make_ctx(home_path)) == ["s"]
