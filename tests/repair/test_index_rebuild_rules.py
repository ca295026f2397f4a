"""The full index rebuild through its public steps (``save.start_index_rebuild`` and
``rebuild_index_from_sidecars``; tests/MUTATION.md, fifth session): the observer sees every sidecar
whichever way the rows are made, an entry that is not a file is left out with its line, an
overridden sidecar's row is made from its new bytes, and the two refusals in their words.

The test process has Qt loaded (pytest-qt), where ``portable.can_fork()`` says no: the tests that
mean the forked helpers force it to yes and check that a helper did some of the work."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from inspector import portable
from inspector.repair import save
from inspector.repair.save import IndexRebuildError, rebuild_index_from_sidecars, start_index_rebuild
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json

FORKS = pytest.mark.skipif(
    portable.FORCED or not hasattr(os, "fork"), reason="helpers are forked copies: this system does not fork"
)
NAMES = [f"s{i:02d}.json" for i in range(10)]


def _home(tmp_path: Path) -> tuple[Path, Path]:
    home, sessions, _db = home_dirs(tmp_path)
    for i, name in enumerate(NAMES):
        write_json(sessions / name, sidecar(name[:3], i % 3 + 1, updated_at=float(i)))
    return home, sessions


@pytest.fixture
def pieces(monkeypatch):
    """Rebuilds cut in pieces of 2 files and forked from 2 files on, on this system that forks."""
    monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
    monkeypatch.setattr(save, "CHUNK_FILES", 2)
    monkeypatch.setattr(portable, "can_fork", lambda: True)


class Seen:
    """A splittable observer: each piece's own (``fresh``) taken in in order (``merge``). It notes
    the process each sidecar was seen in; in this process its first call waits (30 s at most) until
    a helper has seen one (``log``), so the helpers surely take some pieces."""

    def __init__(self, log: Path, parent: int) -> None:
        self.log, self.parent, self.calls = log, parent, []

    def __call__(self, path: Path, obj: dict) -> None:
        if os.getpid() == self.parent:
            deadline = time.monotonic() + 30
            while not self.log.exists() and time.monotonic() < deadline:
                time.sleep(0.002)
        else:
            with open(self.log, "a") as fh:
                fh.write(f"{os.getpid()}\n")
        self.calls.append((os.getpid(), path.name, obj["session_id"]))

    def fresh(self) -> Seen:
        return Seen(self.log, self.parent)

    def merge(self, other: Seen) -> None:
        self.calls.extend(other.calls)


@FORKS
def test_a_splittable_observer_sees_every_sidecar_once_in_order_some_in_the_helpers(tmp_path, pieces):
    """Rule: an observer with ``fresh`` and ``merge`` is split over the pieces: every sidecar is
    seen once, in hermes' order (the names sorted), with its parsed object, and the pieces the
    helpers made are the ones taken in (seen in another process)."""
    home, _sessions = _home(tmp_path)
    seen = Seen(tmp_path / "helpers.log", os.getpid())
    rebuild = start_index_rebuild(make_ctx(home).save_context(), seen, helpers=2)
    rebuild.finish()
    assert [(name, sid) for _, name, sid in seen.calls] == [(n, n[:3]) for n in NAMES]
    assert {pid for pid, _, _ in seen.calls} - {os.getpid()}


class FreshOnly:
    def __init__(self) -> None:
        self.names: list[str] = []

    def __call__(self, path: Path, obj: dict) -> None:
        self.names.append(path.name)

    def fresh(self) -> FreshOnly:
        return FreshOnly()


class MergeOnly(FreshOnly):
    fresh = None  # type: ignore[assignment]

    def merge(self, other: MergeOnly) -> None:
        self.names.extend(other.names)


@FORKS
@pytest.mark.parametrize("kind", ["function", "fresh-only", "merge-only"])
def test_an_observer_that_cannot_be_split_makes_the_rebuild_one_pass_here(
    tmp_path, pieces, monkeypatch, kind
):
    """Rule: an observer without both ``fresh`` and ``merge`` is never split: no helper is forked,
    and it sees every sidecar once, in hermes' order, in this process (however big the folder)."""
    home, _sessions = _home(tmp_path)
    forks = []
    real = save.Forked
    monkeypatch.setattr(save, "Forked", lambda fn: forks.append(1) or real(fn))
    names: list[str] = []
    if kind == "function":
        observer = lambda path, obj: names.append(path.name)  # noqa: E731
    else:
        observer = FreshOnly() if kind == "fresh-only" else MergeOnly()
        names = observer.names
    rebuild_index_from_sidecars(make_ctx(home).save_context(), observe=observer)
    assert names == NAMES
    assert forks == []


@pytest.mark.parametrize("split", [False, True], ids=["one-pass", "pieces"])
def test_an_entry_that_is_not_a_file_is_left_out_with_its_line(tmp_path, monkeypatch, split):
    """Rule: a folder named like a sidecar cannot be read: it is left out of the index (as hermes
    does) with the line ``<name> cannot be read (not a regular file): left out of the index, as
    hermes does``, in its place among the other skipped files; the other rows are written."""
    if split:
        if portable.FORCED or not hasattr(os, "fork"):
            pytest.skip("helpers are forked copies: this system does not fork")
        monkeypatch.setattr(save, "PARALLEL_ROWS_MIN", 2)
        monkeypatch.setattr(save, "CHUNK_FILES", 2)
        monkeypatch.setattr(portable, "can_fork", lambda: True)
    home, sessions = _home(tmp_path)
    (sessions / "s04.json").unlink()
    (sessions / "s04.json").mkdir()
    (sessions / "s07.json").write_text("{ torn")
    skipped: list[str] = []
    rebuilt = rebuild_index_from_sidecars(make_ctx(home).save_context(), skipped=skipped)
    assert skipped[0] == "s04.json cannot be read (not a regular file): left out of the index, as hermes does"
    assert skipped[1].startswith("s07.json cannot be loaded (") and len(skipped) == 2
    assert sorted(rebuilt.row_ids) == sorted(n[:3] for n in NAMES if n not in ("s04.json", "s07.json"))


def test_the_skipped_lines_are_optional(tmp_path):
    """Rule: without a list for the skipped lines a file left out is still left out quietly (the
    rebuild does not fail for want of somewhere to say so)."""
    home, sessions = _home(tmp_path)
    (sessions / "s02.json").write_text("{ torn")
    rebuilt = start_index_rebuild(make_ctx(home).save_context()).finish()
    assert "s02" not in rebuilt.row_ids and len(rebuilt.row_ids) == len(NAMES) - 1


@FORKS
def test_an_overridden_sidecar_gets_the_row_of_its_new_bytes_in_pieces(tmp_path, pieces):
    """Rule: a sidecar about to be rewritten (an override) is indexed from its new bytes, not from the
    file the helpers read, in its own place in hermes' order."""
    home, sessions = _home(tmp_path)
    new = (sessions / "s03.json").read_bytes().replace(b'"chat s03"', b'"renamed in the save"')
    assert new != (sessions / "s03.json").read_bytes()
    rebuild = start_index_rebuild(make_ctx(home).save_context(), helpers=2)
    rebuilt = rebuild.finish(overrides={sessions / "s03.json": new})
    assert b'"title": "renamed in the save"' in rebuilt.data and b'"chat s03"' not in rebuilt.data
    # newest updated_at first; s00's 0.0 is falsy, which hermes' Session reads as "now"
    assert rebuilt.row_ids == ["s00"] + [f"s{i:02d}" for i in range(9, 0, -1)]


def test_a_text_updated_at_among_numbers_refuses_with_the_sort_error(tmp_path):
    """Rule: hermes' sort by ``updated_at`` raises on a text among numbers; the rebuild refuses with
    ``a sidecar's updated_at cannot be sorted with the others (...)`` holding the sort's error."""
    home, sessions = _home(tmp_path)
    write_json(sessions / "s05.json", {**sidecar("s05", 1), "updated_at": "yesterday"})
    with pytest.raises(IndexRebuildError) as err:
        rebuild_index_from_sidecars(make_ctx(home).save_context())
    assert str(err.value).startswith(
        "a sidecar's updated_at cannot be sorted with the others (hermes' index sort by updated_at "
        "fails: '<' not supported between instances of "
    )


def test_text_utf8_cannot_hold_refuses_naming_twenty_characters_each_side(tmp_path):
    """Rule: a lone surrogate (which hermes' UTF-8 write of the index cannot encode) refuses the
    rebuild, naming the reason and the 20 characters on each side of the bad one."""
    home, sessions = _home(tmp_path)
    write_json(sessions / "s05.json", {**sidecar("s05", 1), "title": "A" * 30 + "\ud800" + "B" * 30})
    with pytest.raises(IndexRebuildError) as err:
        rebuild_index_from_sidecars(make_ctx(home).save_context())
    assert str(err.value) == (
        "a sidecar holds text that cannot be written as UTF-8 (surrogates not allowed: "
        "'" + "A" * 20 + "\\ud800" + "B" * 20 + "')"
    )


def test_the_save_rebuild_keeps_ties_in_the_folders_own_order(tmp_path):
    """Rule: the rebuild inside hermes' save (``recovery=False``) walks the folder in its own order
    (``glob``, as ``os.listdir`` lists it), not sorted, and the sort by ``updated_at`` keeps ties in
    that order: rows of equal ``updated_at`` stand as the folder lists their files."""
    home, sessions, _db = home_dirs(tmp_path)
    for name in ("m", "c", "x", "a", "q", "k", "e", "z"):
        write_json(sessions / f"{name}.json", sidecar(name, 1, updated_at=7.0))
    listed = [n[:-5] for n in os.listdir(sessions) if n.endswith(".json")]
    if listed == sorted(listed):
        pytest.skip("this file system lists the folder in name order: the two orders cannot be told apart")
    rebuilt = rebuild_index_from_sidecars(make_ctx(home).save_context(), recovery=False)
    assert rebuilt.row_ids == listed
    sorted_rebuild = rebuild_index_from_sidecars(make_ctx(home).save_context())
    assert sorted_rebuild.row_ids == sorted(listed)  # the recovery rebuild walks the names sorted


def test_a_sidecar_hermes_cannot_load_is_left_out_of_the_saves_rebuild_in_words(tmp_path):
    """Rule: in the rebuild inside hermes' save (``recovery=False``) a sidecar that parses but that
    hermes' ``Session`` cannot be made from (a NUL in its workspace path) is left out with a line
    naming the file and hermes' own error; the recovery rebuild stops on the same file instead."""
    home, sessions = _home(tmp_path)
    write_json(sessions / "s04.json", {**sidecar("s04", 1), "workspace": "x\u0000y"})
    skipped: list[str] = []
    rebuilt = rebuild_index_from_sidecars(make_ctx(home).save_context(), skipped=skipped, recovery=False)
    assert skipped == [
        "s04.json cannot be loaded (hermes cannot load it: embedded null byte): left out of the index, "
        "as hermes does"
    ]
    assert "s04" not in rebuilt.row_ids and len(rebuilt.row_ids) == len(NAMES) - 1
    with pytest.raises(IndexRebuildError) as err:
        rebuild_index_from_sidecars(make_ctx(home).save_context())
    assert str(err.value) == (
        "s04.json: hermes cannot load it or make its index row (ValueError: embedded null byte), "
        "and its recovery rebuild stops there"
    )
