"""Rule: an index rebuild reads each listed sidecar as the plan's snapshot would (``read_transient``):
a sidecar this plan's snapshot already read is taken from the snapshot (one plan never sees two
versions of a file), every other one is read from the folder (``IndexRebuild._read`` reads those
by name, straight from the folder), and a file that cannot be read (too large, a folder named
``*.json``, a FIFO) gives the same skipped line and the same too-large record as before, in one
pass and in pieces taken by forked helpers alike.
"""

from __future__ import annotations

import os

import pytest

from inspector import portable
from inspector.repair import save
from inspector.store import files
from inspector.store.files import FileSnapshot
from tests.recovery_helpers import home_dirs, sidecar, write_json

NOW = 1779900000.0


# each rule in one pass and in pieces taken by forked helpers (where this system forks)
ONE_PASS_AND_PIECES = pytest.mark.parametrize(
    "forked",
    [
        False,
        pytest.param(
            True,
            marks=pytest.mark.skipif(
                portable.FORCED or not hasattr(os, "fork"),
                reason="helpers are forked copies: this system does not fork",
            ),
        ),
    ],
    ids=["one pass", "pieces"],
)


def _ctx(sessions, tmp_path) -> save.SaveContext:
    return save.SaveContext(sessions, FileSnapshot(), NOW, tmp_path)


def _folder(tmp_path, n=8):
    _home, sessions, _db = home_dirs(tmp_path)
    for i in range(n):
        write_json(sessions / f"s{i:02d}.json", sidecar(f"s{i:02d}", i % 3 + 1, updated_at=float(i)))
    return sessions


def _pieces(monkeypatch) -> None:
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
    monkeypatch.setattr(save, "CHUNK_FILES", 2)
    monkeypatch.setattr(portable, "can_fork", lambda: True)  # the test process has Qt loaded


@ONE_PASS_AND_PIECES
def test_a_sidecar_the_snapshot_read_is_taken_from_it(tmp_path, monkeypatch, forked) -> None:
    sessions = _folder(tmp_path)
    ctx = _ctx(sessions, tmp_path)
    seen = ctx.snapshot.read(sessions / "s05.json")  # the plan's version of s05
    assert seen is not None
    write_json(sessions / "s05.json", sidecar("s05", 7, updated_at=99.0))  # changed on disk since
    if forked:
        _pieces(monkeypatch)
    got = save.start_index_rebuild(ctx).finish()
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 10**9)
    want_ctx = _ctx(sessions, tmp_path)
    write_json(sessions / "s05.json", save.loads_bytes(seen.data))  # as the snapshot saw it
    want = save.rebuild_index_from_sidecars(want_ctx)
    assert got.data == want.data
    assert b'"message_count": 7' not in got.data


# mutmut's trampoline hides the patched default of read_regular (tests/MUTATION.md)
@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ, reason="patches a default mutmut's trampoline hides")
@ONE_PASS_AND_PIECES
def test_unreadable_sidecars_are_reported_as_before(tmp_path, monkeypatch, forked) -> None:
    sessions = _folder(tmp_path)
    (sessions / "s02.json").unlink()
    (sessions / "s02.json").mkdir()  # a folder named like a sidecar
    write_json(sessions / "s06.json", {**sidecar("s06", 2), "pad": "x" * 4000})
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 3000)
    monkeypatch.setattr(files.read_regular, "__defaults__", (3000,))
    if forked:
        _pieces(monkeypatch)
    ctx = _ctx(sessions, tmp_path)
    skipped: list[str] = []
    got = save.start_index_rebuild(ctx).finish(skipped=skipped)
    assert [line.split(" ", 1)[0] for line in skipped] == ["s02.json", "s06.json"]
    assert "cannot be read" in skipped[0] and "cannot be read" in skipped[1]
    assert [(e.filename, e.size > 3000) for e in ctx.snapshot.too_large] == [
        (str(sessions / "s06.json"), True)
    ]
    assert b'"s02"' not in got.data and b'"s06"' not in got.data and b'"s07"' in got.data


@pytest.mark.parametrize("enabled", [True, False], ids=["gc on", "gc off"])
def test_the_collector_is_paused_while_rows_are_made_and_left_as_it_was(tmp_path, monkeypatch, enabled):
    """The rows are made with the cyclic GC off (nothing there makes a cycle); afterwards it is
    on again exactly when it was on before."""
    import gc

    sessions = _folder(tmp_path, n=4)
    seen = []
    real = save._index_row

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(save, "_index_row", recording)
    was = gc.isenabled()
    try:
        if enabled:
            gc.enable()
        else:
            gc.disable()
        got = save.rebuild_index_from_sidecars(_ctx(sessions, tmp_path))
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
    assert seen == [False] * 4 and b'"s03"' in got.data


@ONE_PASS_AND_PIECES
def test_an_override_outside_the_sessions_folder_is_refused_in_words(tmp_path, monkeypatch, forked) -> None:
    """The rebuild reads the sessions folder only: a file about to be written elsewhere (a caller's
    mistake) is refused with a message that says so, before any row is made (started with or
    without helpers: they are ended first)."""
    sessions = _folder(tmp_path)
    outside = tmp_path / "elsewhere" / "s99.json"
    if forked:
        _pieces(monkeypatch)
    started = save.start_index_rebuild(_ctx(sessions, tmp_path))
    with pytest.raises(ValueError) as caught:
        started.finish({outside: b'{"session_id": "s99"}'})
    assert str(caught.value) == (
        "an index rebuild reads only the sessions folder: an override names a file outside it"
    )
    assert not isinstance(caught.value, save.IndexRebuildError)


@ONE_PASS_AND_PIECES
def test_a_sidecar_too_large_is_left_out_and_recorded_with_its_size_and_limit(
    tmp_path, monkeypatch, forked
) -> None:
    """Rule: a sidecar larger than the reader's limit (here a sparse file one byte past 128 MB: its
    size is known without reading it) is left out with its line, and the plan's snapshot records it
    once with its path, its size and the limit, whoever read it (the helpers send those three)."""
    sessions = _folder(tmp_path, 6)
    os.truncate(sessions / "s03.json", (128 << 20) + 1)
    if forked:
        _pieces(monkeypatch)
    ctx = _ctx(sessions, tmp_path)
    skipped: list[str] = []
    rebuilt = save.start_index_rebuild(ctx, helpers=2).finish(skipped=skipped)
    assert skipped == [
        "s03.json cannot be read (too large to load safely (128.0 MB; the limit is 128.0 MB)): "
        "left out of the index, as hermes does"
    ]
    assert [(e.filename, e.size, e.limit) for e in ctx.snapshot.too_large] == [
        (str(sessions / "s03.json"), 134217729, 134217728)
    ]
    # newest first; s00's updated_at of 0.0 is falsy, which hermes' Session reads as "now"
    assert rebuilt.row_ids == ["s00", "s05", "s04", "s02", "s01"]


def test_a_sidecar_gone_before_its_read_is_left_out_and_the_rest_go_on(tmp_path, monkeypatch) -> None:
    """Rule: a sidecar listed when the rebuild started and removed before it is read (hermes
    deleted the session meanwhile) is left out without a line, and every file after it in the
    order still gets its row."""
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 10**9)
    sessions = _folder(tmp_path, 6)
    started = save.start_index_rebuild(_ctx(sessions, tmp_path))
    (sessions / "s01.json").unlink()
    skipped: list[str] = []
    rebuilt = started.finish(skipped=skipped)
    assert skipped == []
    assert rebuilt.row_ids == ["s00", "s05", "s04", "s03", "s02"]  # s00 first: updated_at 0.0 is "now"
