"""Rule: an index rebuild whose second half of sidecars is read by a forked copy (``save._rows_in_two``,
both cores on a big folder) plans exactly what one pass in order plans: the same bytes, the same skipped
lines and sidecar warnings in the same order, the same file where hermes' rebuild stops, the same
files refused for their size."""

from __future__ import annotations

import pytest

from inspector import portable
from inspector.repair import rebuild_index, save
from inspector.store import files
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json


def _both(monkeypatch, home_path):
    """(plan made in one pass, plan made in two halves, whether the copy was forked)."""
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 10**9)
    one = rebuild_index.plan(make_ctx(home_path), None)
    forked = []
    real = save.Forked

    def counting(fn):
        forked.append(1)
        return real(fn)

    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
    monkeypatch.setattr(portable, "can_fork", lambda: True)  # the test process has Qt loaded
    monkeypatch.setattr(save, "Forked", counting)
    ctx = make_ctx(home_path)
    two = rebuild_index.plan(ctx, None)
    return one, two, bool(forked), ctx


def _home(tmp_path):
    home_path, sessions, _db = home_dirs(tmp_path)
    for i in range(12):
        write_json(sessions / f"s{i:02d}.json", sidecar(f"s{i:02d}", i % 4 + 1, updated_at=float(i % 5)))
    return home_path, sessions


def _same(one, two):
    assert two.refusal == one.refusal
    assert [(c.path, c.after) for c in two.changes] == [(c.path, c.after) for c in one.changes]
    assert two.warnings == one.warnings and two.summary == one.summary and two.result == one.result


def test_two_halves_write_the_very_index_of_one_pass(tmp_path, monkeypatch):
    home_path, sessions = _home(tmp_path)
    (sessions / "s01.json").write_text("{ torn")  # first half: skipped with a line
    (sessions / "s10.json").write_text("[not json")  # second half: skipped with a line
    write_json(sessions / "s03.json", {**sidecar("other", 1), "workspace": ""})  # id differs: a warning
    write_json(sessions / "s09.json", {**sidecar("s09", 2), "workspace": ""})  # empty workspace: counted
    one, two, forked, _ = _both(monkeypatch, home_path)
    assert forked and one.changes and one.refusal is None
    assert any("s01.json cannot be loaded" in w for w in one.warnings)
    assert any("s10.json cannot be loaded" in w for w in one.warnings)
    _same(one, two)


@pytest.mark.parametrize("bad", ["s02.json", "s09.json"])  # in the first half, in the second
def test_hermes_stops_at_the_same_file(tmp_path, monkeypatch, bad):
    home_path, sessions = _home(tmp_path)
    write_json(sessions / bad, [1, 2])  # not an object: hermes' recovery rebuild raises on it
    write_json(sessions / "s11.json", ["also", "not", "an", "object"])  # later: never reached
    one, two, forked, _ = _both(monkeypatch, home_path)
    assert forked and one.refusal is not None and bad in one.refusal
    _same(one, two)


def test_a_file_too_large_in_the_copys_half_reaches_the_snapshot(tmp_path, monkeypatch):
    home_path, sessions = _home(tmp_path)
    write_json(sessions / "s10.json", {**sidecar("s10", 1), "title": "x" * 5000})
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 4000)
    monkeypatch.setattr(files.read_regular, "__defaults__", (4000,))
    one, two, forked, ctx = _both(monkeypatch, home_path)
    assert forked
    assert [e.filename for e in ctx.snapshot.too_large] == [str(sessions / "s10.json")]
    _same(one, two)
