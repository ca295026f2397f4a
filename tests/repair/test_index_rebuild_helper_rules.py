"""A forked helper's work in an index rebuild (``save.IndexRebuild._help``), run in this process.

In a real rebuild ``_help`` runs only in a forked copy, where no test's process sees it (and where a
helper that fails is made good by this process doing its pieces: the index is the same either way).
Here the helper is never forked (a stand-in for ``Forked`` that starts nothing, as a copy that died
before taking a piece) and its work is done in the test's process on the rebuild's own tokens.

Rules pinned here (expected values written out by hand):

* a helper takes every piece left, one token at a time, and gives each piece's outcomes by its
  number: piece 0 = ``s00.json``, ``s01.json`` and piece 1 = ``s02.json``, ``s03.json`` (two
  sidecars a piece, the listing sorted), each sidecar's row with its id and message count;
* with no piece left the helper gives nothing, and ``finish()`` still makes the whole index here.
"""

from __future__ import annotations

import gc
import os

from inspector import portable
from inspector.forked import ForkedError
from inspector.repair import save
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json


class _NotStarted:
    """A helper that was never started: no piece taken, its result a failure."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def result(self):
        raise ForkedError("the helper never started")


def _rebuild(tmp_path, monkeypatch):
    home, sessions, _ = home_dirs(tmp_path)
    for i in range(4):  # s00 .. s03 with 1 .. 4 messages
        write_json(sessions / f"s{i:02d}.json", sidecar(f"s{i:02d}", i + 1, workspace=str(home)))
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
    monkeypatch.setattr(save, "CHUNK_FILES", 2)
    monkeypatch.setattr(portable, "can_fork", lambda: True)
    monkeypatch.setattr(save, "Forked", _NotStarted)
    return save.start_index_rebuild(make_ctx(home).save_context(), helpers=1)


def _help_here(rebuild) -> dict:
    """The helper's work in this process, on a write end of its own (it closes it, as the copy does)."""
    read_fd, write_fd = os.pipe()
    try:
        return rebuild._help(write_fd)
    finally:
        gc.enable()  # the helper turns the cyclic GC off for its copy
        os.close(read_fd)


def _summary(done: dict) -> dict:
    return {
        i: ([(kind, row.session_id, row.message_count) for kind, row in outcomes], observer)
        for i, (outcomes, observer) in done.items()
    }


def test_a_helper_takes_every_piece_left_and_gives_each_by_its_number(tmp_path, monkeypatch):
    rebuild = _rebuild(tmp_path, monkeypatch)
    done = _help_here(rebuild)
    assert _summary(done) == {
        0: ([(save._ROW, "s00", 1), (save._ROW, "s01", 2)], None),
        1: ([(save._ROW, "s02", 3), (save._ROW, "s03", 4)], None),
    }
    assert _help_here(rebuild) == {}  # no token left: nothing more to do
    # the helper's result is a failure: finish() makes every piece here, in hermes' order (all
    # four rows have the plan's clock as updated_at: the listing's order is kept)
    assert rebuild.finish().row_ids == ["s00", "s01", "s02", "s03"]
