"""The forked helpers of an index rebuild run nicer than the process that forked them
(``save.IndexRebuild._help_nicer``, ``forked.run_nicer``).

Rules:

* a copy that calls ``run_nicer`` runs ``BACKGROUND_NICE`` steps nicer than its parent (the parent's
  niceness is unchanged);
* every helper an index rebuild forks does its pieces at that niceness, and the index is the one
  pass's (a helper's result is the same at any niceness).
"""

from __future__ import annotations

import os

import pytest

from inspector import portable
from inspector.forked import BACKGROUND_NICE, Forked, run_nicer
from inspector.repair import save
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json

FORKS = pytest.mark.skipif(
    portable.FORCED or not hasattr(os, "fork"), reason="helpers are forked copies: this system does not fork"
)


def _nicer(niceness: int) -> int:
    return min(19, niceness + BACKGROUND_NICE)


@FORKS
def test_a_copy_that_runs_nicer_is_background_nice_steps_nicer_than_its_parent() -> None:
    mine = os.nice(0)
    assert Forked(lambda: (run_nicer(), os.nice(0))[1]).result() == _nicer(mine)
    assert Forked(lambda: os.nice(0)).result() == mine  # only where asked
    assert os.nice(0) == mine


@FORKS
def test_each_index_helper_makes_its_pieces_nicer_than_this_process(tmp_path, monkeypatch) -> None:
    home, sessions, _db = home_dirs(tmp_path)
    for i in range(12):
        write_json(sessions / f"s{i:02d}.json", sidecar(f"s{i:02d}", i % 4 + 1, updated_at=float(i % 5)))
    one = save.rebuild_index_from_sidecars(make_ctx(home).save_context())
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
    monkeypatch.setattr(save, "CHUNK_FILES", 2)
    monkeypatch.setattr(portable, "can_fork", lambda: True)
    seen = tmp_path / "helper-niceness.log"
    real_help = save.IndexRebuild._help
    parent = os.getpid()

    def noting(self, write_fd):
        if os.getpid() != parent:  # in a helper: its niceness, noted before it takes a piece
            with open(seen, "a") as log:
                log.write(f"{os.nice(0)}\n")
        return real_help(self, write_fd)

    monkeypatch.setattr(save.IndexRebuild, "_help", noting)
    rebuilt = save.start_index_rebuild(make_ctx(home).save_context(), helpers=2).finish()
    assert rebuilt.data == one.data
    assert seen.read_text().split() == [str(_nicer(os.nice(0)))] * 2
