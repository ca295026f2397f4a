"""Rule: an index rebuild whose sidecars are read in pieces by forked helpers and this process
(``save.IndexRebuild``: whoever is free takes the next piece) plans exactly what one pass in order
plans: the same bytes, the same skipped lines and sidecar warnings in the same order, the same file
where hermes' rebuild stops, the same files refused for their size. Materialize starts the helpers
before it plans its new sidecars (their rows never depend on the others') and gets the very plan a
rebuild started afterwards in one pass gives, its new files sorting in between the others."""

from __future__ import annotations

import os
import time

import pytest

from inspector import portable
from inspector.forked import ForkedError
from inspector.plan import file_diff
from inspector.repair import materialize, rebuild_index, save
from inspector.store import files
from inspector.store.files import sha256_hex
from tests.recovery_helpers import home_dirs, make_ctx, seed_state_db, sidecar, write_json

FORKS = pytest.mark.skipif(
    portable.FORCED or not hasattr(os, "fork"), reason="helpers are forked copies: this system does not fork"
)


def _counting(monkeypatch, pieces: int, reads_log=None):
    """Pieces of ``pieces`` files, rebuilds forked from 2 files on; a list counting the forks.

    pytest-qt loads Qt into the test process, where ``portable.can_fork()`` says no: it is forced
    to yes here. With ``reads_log``, every sidecar a helper reads (``IndexRebuild._read``) is noted there with the helper's
    process id, and once a helper is forked this process's first sidecar read waits (bounded: 30 s)
    until a helper has read one: with two pieces or more, the helpers' path surely runs (whoever is
    free takes the next piece, and this process could otherwise take them all first)."""
    forked = []
    real = save.Forked

    def counting(fn):
        forked.append(1)
        return real(fn)

    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
    monkeypatch.setattr(save, "CHUNK_FILES", pieces)
    monkeypatch.setattr(portable, "can_fork", lambda: True)
    monkeypatch.setattr(save, "Forked", counting)
    if reads_log is not None:
        me, waited = os.getpid(), []
        real_read = save.IndexRebuild._read  # every sidecar the rebuild reads, by name or not

        def noting(self, name, path):
            if path.name.endswith(".json") and not path.name.startswith("_"):
                if os.getpid() == me and forked and not waited:
                    waited.append(1)
                    deadline = time.monotonic() + 30
                    while not _helper_reads(reads_log) and time.monotonic() < deadline:
                        time.sleep(0.002)
                with open(reads_log, "a") as fh:  # appended from every process
                    fh.write(f"{os.getpid()} {path.name}\n")
            return real_read(self, name, path)

        monkeypatch.setattr(save.IndexRebuild, "_read", noting)
    return forked


def _reads(reads_log) -> list[tuple[int, str]]:
    """(process id, sidecar name) of every sidecar read noted so far."""
    if not os.path.exists(reads_log):
        return []
    with open(reads_log) as fh:
        return [(int(pid), name) for pid, name in (line.split() for line in fh)]


def _helper_reads(reads_log) -> int:
    """How many sidecars the helpers read (in a process that is not this one)."""
    return sum(1 for pid, _ in _reads(reads_log) if pid != os.getpid())


def _each_read_once(home_path) -> bool:
    """Whether no sidecar was read twice across the processes (a helper's piece is never made again)."""
    names = [name for _, name in _reads(home_path.parent / "helper-reads.log")]
    return len(names) == len(set(names)) > 0


def _both(monkeypatch, home_path, pieces=2, plan=rebuild_index.plan, prove=True):
    """(plan made in one pass, plan made in pieces, how many helpers were forked, how many sidecars
    the helpers read, the context); ``prove``: make sure a helper reads (see :func:`_counting`)."""
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 10**9)
    one = plan(make_ctx(home_path), None)
    reads_log = home_path.parent / "helper-reads.log"
    forked = _counting(monkeypatch, pieces, reads_log if prove else None)
    ctx = make_ctx(home_path)
    two = plan(ctx, None)
    return one, two, len(forked), _helper_reads(reads_log), ctx


def _home(tmp_path, n=12):
    home_path, sessions, _db = home_dirs(tmp_path)
    for i in range(n):
        write_json(sessions / f"s{i:02d}.json", sidecar(f"s{i:02d}", i % 4 + 1, updated_at=float(i % 5)))
    return home_path, sessions


def _same(one, two):
    assert two.refusal == one.refusal
    assert [(c.path, c.after) for c in two.changes] == [(c.path, c.after) for c in one.changes]
    assert two.warnings == one.warnings and two.summary == one.summary and two.result == one.result


@FORKS
@pytest.mark.parametrize("pieces", [1, 2, 5, 64])
def test_pieces_write_the_very_index_of_one_pass(tmp_path, monkeypatch, pieces):
    home_path, sessions = _home(tmp_path)
    (sessions / "s01.json").write_text("{ torn")  # skipped with a line
    (sessions / "s10.json").write_text("[not json")  # skipped with a line
    write_json(sessions / "s03.json", {**sidecar("other", 1), "workspace": ""})  # id differs: a warning
    write_json(sessions / "s09.json", {**sidecar("s09", 2), "workspace": ""})  # empty workspace: counted
    write_json(sessions / "s11.json", sidecar("s04", 9))  # a second row for s04, the larger one wins
    one, two, forked, helper_reads, _ = _both(monkeypatch, home_path, pieces, prove=pieces < 12)
    assert forked == 1 and one.changes and one.refusal is None
    if pieces < 12:  # (one piece for the 12 files: whoever is free takes it)
        assert helper_reads > 0 and _each_read_once(home_path)
    assert any("s01.json cannot be loaded" in w for w in one.warnings)
    assert any("s10.json cannot be loaded" in w for w in one.warnings)
    _same(one, two)


@FORKS
@pytest.mark.parametrize("bad", ["s02.json", "s09.json"])  # in an early piece, in a late one
def test_hermes_stops_at_the_same_file(tmp_path, monkeypatch, bad):
    home_path, sessions = _home(tmp_path)
    write_json(sessions / bad, [1, 2])  # not an object: hermes' recovery rebuild raises on it
    write_json(sessions / "s11.json", ["also", "not", "an", "object"])  # later: never reached
    (sessions / "s10.json").write_text("{ torn")  # after the stop: no line about it
    one, two, forked, helper_reads, _ = _both(monkeypatch, home_path)
    assert (
        forked == 1
        and helper_reads > 0
        and one.refusal is not None
        and bad in one.refusal
        and "s11" not in one.refusal
    )
    _same(one, two)


@FORKS
# It lowers read_regular's size limit through its __defaults__; under mutmut read_regular is a
# trampoline whose own defaults that does not reach (tests/MUTATION.md), so it sits the run out.
@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ, reason="patches a default mutmut's trampoline hides")
def test_a_file_too_large_reaches_the_snapshot_once_and_in_order(tmp_path, monkeypatch):
    home_path, sessions = _home(tmp_path)
    for name in ("s03.json", "s10.json"):
        write_json(sessions / name, {**sidecar(name[:3], 1), "title": "x" * 5000})
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 4000)
    monkeypatch.setattr(files.read_regular, "__defaults__", (4000,))
    one, two, forked, helper_reads, ctx = _both(monkeypatch, home_path)
    assert forked == 1 and helper_reads > 0
    assert [e.filename for e in ctx.snapshot.too_large] == [
        str(sessions / n) for n in ("s03.json", "s10.json")
    ]
    _same(one, two)


def test_a_helper_that_fails_has_its_pieces_made_here(tmp_path, monkeypatch):
    home_path, _sessions = _home(tmp_path)
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 10**9)
    one = rebuild_index.plan(make_ctx(home_path), None)
    _counting(monkeypatch, 2)

    def broken(self, write_fd):
        os.close(write_fd)
        assert self._claim() is not None  # takes a piece, then dies with it
        raise RuntimeError("the helper dies")

    monkeypatch.setattr(save.IndexRebuild, "_help", broken)
    _same(one, rebuild_index.plan(make_ctx(home_path), None))


@FORKS
def test_two_helpers_and_an_unused_rebuild_leave_nothing_behind(tmp_path, monkeypatch):
    home_path, sessions = _home(tmp_path, 30)
    ctx = make_ctx(home_path)
    one = save.rebuild_index_from_sidecars(ctx.save_context())
    forked = _counting(monkeypatch, 3)
    started = save.start_index_rebuild(ctx.save_context(), helpers=2)
    assert len(forked) == 2
    assert started.finish().data == one.data
    started.cancel()  # after finish: nothing left to end
    unused = save.start_index_rebuild(ctx.save_context(), helpers=2)
    unused.cancel()
    assert unused._helpers == [] and unused._tokens is None


def _materialize_home(tmp_path):
    """Sidecars a..l on disk and state.db rows (no sidecar) whose names sort in between them."""
    home_path, sessions, db = home_dirs(tmp_path)
    for i, name in enumerate("acegikmoqsuw"):
        write_json(sessions / f"{name}.json", sidecar(name, i % 3 + 1, updated_at=float(i % 4)))
    first = True
    for name in ("b", "h", "n", "zz", "m2"):
        seed_state_db(db, sid=name, messages=2, create=first)
        first = False
    return home_path, sessions


@FORKS
def test_materialize_starts_the_rebuild_early_and_plans_the_same(tmp_path, monkeypatch):
    home_path, sessions = _materialize_home(tmp_path)
    (sessions / "g.json").write_text("{ torn")  # skipped with a line, between the new files
    one, two, forked, helper_reads, _ = _both(monkeypatch, home_path, 2, materialize.plan)
    assert forked >= 2 and helper_reads > 0 and one.result["materialized"] == 5
    assert _each_read_once(home_path)  # the early rebuild's pieces are the ones used and one.refusal is None
    assert any("g.json cannot be loaded" in w for w in one.warnings)
    _same(one, two)
    index = [c for c in two.changes if c.path.name == "_index.json"][0]
    assert b'"session_id": "zz"' in index.after and b'"session_id": "b"' in index.after


def test_materialize_refuses_at_the_same_file(tmp_path, monkeypatch):
    home_path, sessions = _materialize_home(tmp_path)
    write_json(sessions / "k.json", [1])  # hermes' recovery rebuild raises on it
    one, two, _forked, _reads, _ = _both(monkeypatch, home_path, 2, materialize.plan)
    assert one.refusal is not None and "k.json" in one.refusal
    _same(one, two)


def test_materialize_previews_and_hashes_are_those_of_the_bytes(tmp_path, monkeypatch):
    home_path, sessions = _materialize_home(tmp_path)
    write_json(sessions / "_index.json", [])  # an index to rewrite: its hash is the read's
    _counting(monkeypatch, 2)
    plan = materialize.plan(make_ctx(home_path), None)
    assert plan.refusal is None and len(plan.changes) == 6
    for change in plan.changes:
        assert change.preview == file_diff(change)
        assert change.sha256_after == sha256_hex(change.after)
        assert change.sha256_before == (sha256_hex(change.before) if change.before is not None else None)


def test_rebuild_index_preview_and_hashes_are_those_of_the_bytes(tmp_path, monkeypatch):
    home_path, sessions = _home(tmp_path)
    write_json(sessions / "_index.json", [{"session_id": "gone"}])  # a stale index to rewrite
    _counting(monkeypatch, 2)
    plan = rebuild_index.plan(make_ctx(home_path), None)
    (change,) = plan.changes
    assert change.before is not None and change.preview == file_diff(change)
    assert change.sha256_before == sha256_hex(change.before)
    assert change.sha256_after == sha256_hex(change.after)


def test_materialize_forks_no_helper_when_every_webui_row_has_its_sidecar(tmp_path, monkeypatch):
    home_path, sessions = _materialize_home(tmp_path)
    for name in ("b", "h", "n", "zz", "m2"):
        write_json(sessions / f"{name}.json", sidecar(name, 1))
    forked = _counting(monkeypatch, 2)
    plan = materialize.plan(make_ctx(home_path), None)
    assert plan.changes == [] and "nothing to materialize" in plan.summary and forked == []


@FORKS
def test_helpers_started_for_rows_that_are_then_left_alone_are_ended(tmp_path, monkeypatch):
    home_path, sessions, db = home_dirs(tmp_path)
    for name in "acegikmoqsuw":
        write_json(sessions / f"{name}.json", sidecar(name, 1))
    seed_state_db(db, sid="empty", messages=0)  # lacks its sidecar, but hermes never writes a blank one
    one, two, forked, _reads, _ = _both(monkeypatch, home_path, 2, materialize.plan)
    assert forked == 2 and two.changes == [] and "nothing to materialize" in two.summary
    _same(one, two)


def test_no_pipe_or_no_fork_means_one_pass_here(tmp_path, monkeypatch):
    home_path, _sessions = _home(tmp_path)
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 10**9)
    one = rebuild_index.plan(make_ctx(home_path), None)
    forked = _counting(monkeypatch, 2)

    def no_pipe():
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(save.os, "pipe", no_pipe)
    _same(one, rebuild_index.plan(make_ctx(home_path), None))
    assert forked == []
    monkeypatch.undo()
    _counting(monkeypatch, 2)

    def no_fork(fn):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(save, "Forked", no_fork)
    _same(one, rebuild_index.plan(make_ctx(home_path), None))


@FORKS
def test_a_helper_that_failed_does_not_stop_the_next_ones_pieces_being_taken(tmp_path, monkeypatch):
    """Rule: the helpers are collected one after the other past one that failed: the pieces the
    next helper made are taken in (each sidecar read once across the processes), the index is the
    one pass's."""
    home_path, _sessions = _home(tmp_path)
    ctx = make_ctx(home_path)
    one = save.rebuild_index_from_sidecars(ctx.save_context())
    reads_log = home_path.parent / "helper-reads.log"
    forked = _counting(monkeypatch, 2, reads_log)
    counting = save.Forked

    class Failed:  # the first helper: never started, it took no piece, and it reports a failure
        def result(self):
            raise ForkedError("the first helper failed")

    def first_fails(fn):
        if not forked:
            forked.append(1)
            return Failed()
        return counting(fn)

    monkeypatch.setattr(save, "Forked", first_fails)
    rebuilt = save.start_index_rebuild(make_ctx(home_path).save_context(), helpers=2).finish()
    assert len(forked) == 2 and rebuilt.data == one.data
    assert _helper_reads(reads_log) > 0 and _each_read_once(home_path)


@FORKS
def test_a_read_refused_for_its_size_before_the_start_is_named_once(tmp_path, monkeypatch):
    """Rule: the snapshot's list of files refused for their size names each once, in order: one
    refused before the rebuild started stays first and alone, however many entries of the folder a
    helper finds it cannot read (every piece here holds one: a folder named like a sidecar)."""
    home_path, sessions = _home(tmp_path, 10)
    for i in range(0, 10, 2):  # s00, s02, ... s08: one in each piece of two
        (sessions / f"s{i:02d}.json").unlink()
        (sessions / f"s{i:02d}.json").mkdir()
    earlier = files.TooLargeToLoad(sessions / "_big.json", 10**9, 10**8)
    want_skipped = [
        f"s{i:02d}.json cannot be read (not a regular file): left out of the index, as hermes does"
        for i in range(0, 10, 2)
    ]
    # in one pass here first (the same rule; it also lets mutmut's statistics, which see only this
    # process, link this test to the rows' code the helpers run below)
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 10**9)
    ctx = make_ctx(home_path).save_context()
    ctx.snapshot.too_large.append(earlier)
    skipped: list[str] = []
    one = save.start_index_rebuild(ctx, helpers=2).finish(skipped=skipped)
    assert ctx.snapshot.too_large == [earlier] and skipped == want_skipped
    reads_log = home_path.parent / "helper-reads.log"
    forked = _counting(monkeypatch, 2, reads_log)
    ctx = make_ctx(home_path).save_context()
    ctx.snapshot.too_large.append(earlier)  # a read this plan made before the rebuild
    skipped = []
    rebuilt = save.start_index_rebuild(ctx, helpers=2).finish(skipped=skipped)
    assert len(forked) == 2 and _helper_reads(reads_log) > 0
    assert ctx.snapshot.too_large == [earlier]
    assert skipped == want_skipped
    assert sorted(rebuilt.row_ids) == [f"s{i:02d}" for i in range(1, 10, 2)]
    assert rebuilt.data == one.data
