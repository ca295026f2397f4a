"""Rules of the sessions-folder scan (``inspector.store.scan``) pinned on small hand-made inputs:
which kept values of a sidecar send it to the exact parse, how a run journal's quick count trims a
piece, the fact cache's multi-file entries and its save, the scan's cached sidecar reads, and how
``prefetch`` shares its files with a second process.

orjson keeps integers in [-2**63, 2**64) exact and turns larger ones into floats; the stdlib keeps
them as ints. ``BIG`` (2**64) is the smallest integer orjson cannot keep.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.forked import ForkedError
from inspector.store import scan
from inspector.store.scan import (
    JOURNAL,
    RACY_WINDOW_NS,
    SIDECAR,
    FactCache,
    SessionDirScan,
    journal_dropped_lines,
    sidecar_facts,
    stat_key,
)

BIG = b"18446744073709551616"  # 2**64


# ---------------------------------------------------------------- kept values and the exact parse


def test_a_big_integer_in_a_kept_meta_key_stays_an_integer():
    """Rule: a metadata value orjson turned into a float (an integer of 2**64) is read exactly: the
    ``message_count`` kept is the integer, not the number of messages that replaces a float."""
    facts = sidecar_facts(b'{"messages": [], "message_count": ' + BIG + b"}", want_texts=False)
    assert facts["meta"] == {"message_count": 18446744073709551616}
    assert facts["count"] == 0


def test_a_big_integer_as_a_user_text_is_written_as_the_integer():
    """Rule: a user row's content that is an integer of 2**64 gives the text of the integer (as the
    stdlib reads it), not of orjson's float."""
    data = (
        b'{"messages": [{"role": "user", "content": ' + BIG + b'}, {"role": "assistant", "content": "ok"}]}'
    )
    facts = sidecar_facts(data, want_texts=True)
    assert facts["texts"] == ["18446744073709551616"]
    assert facts["texts_error"] is None
    assert facts["count"] == 2


def test_a_big_integer_in_the_marker_row_stays_an_integer():
    """Rule: the interrupted-turn marker row is kept as the stdlib reads it: an integer of 2**64 in
    it is an int, not orjson's float."""
    data = (
        b'{"messages": [{"role": "user", "content": "q", "_pending_journal_recovery": true, "n": '
        + BIG
        + b"}]}"
    )
    facts = sidecar_facts(data, want_texts=False)
    assert facts["marker"] == {"role": "user", "content": "q", "_pending_journal_recovery": True, "n": 2**64}
    assert facts["marker"]["n"].__class__ is int


def _innermost(value, depth):
    for _ in range(depth):
        value = value[0]
    return value


def test_a_kept_value_too_deep_to_walk_is_read_exactly():
    """Rule: a kept value nested too deep to look through (a RecursionError while looking, two frames
    a level) may hold a rounded integer, so the file is parsed exactly: the integer of 2**64 at the
    bottom is an int."""
    depth = 600
    data = b'{"messages": [], "title": ' + b"[" * depth + BIG + b"]" * depth + b"}"
    facts = sidecar_facts(data, want_texts=False)
    assert _innermost(facts["meta"]["title"], depth) == 18446744073709551616
    assert _innermost(facts["meta"]["title"], depth).__class__ is int


def test_a_value_too_deep_to_walk_may_be_coerced_whatever_it_holds():
    """Rule (``may_be_coerced``'s own words: "Too deep to walk: True"): a value nested deeper than the
    interpreter lets the walk go is answered True even when nothing in it is a float, so its file is
    parsed exactly; a shallow one is looked through. (Since the twelfth session the sidecar parse reads
    deep documents exactly on its own, so the rule is held here, on the function.)"""
    deep: list = [1.0]
    for _ in range(5000):
        deep = [deep]
    assert scan.may_be_coerced(deep) is True
    assert scan.may_be_coerced({"a": deep}) is True
    assert scan.may_be_coerced([[[1.0]]]) is False
    assert scan.may_be_coerced([[[2.0**64]]]) is True


# ---------------------------------------------------------------- run journal pieces


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"a": 1}\n{}}\n', (1, 2)),  # the piece's last line, before its b"\n", is no object
        (b"{}\n{}}", (1, 2)),  # a last line without b"\n" is looked at whole
        (b"{}\n{}", (0, None)),
    ],
    ids=["last-line-broken", "no-final-newline", "all-objects"],
)
def test_only_the_final_newline_is_left_out_of_the_quick_count(data, expected):
    """Rule: the quick check of a piece leaves out only its final b"\\n", never a byte of the last
    line: a line ``{}}`` (or ``{}}`` at the end of a journal without a final newline) is dropped."""
    assert journal_dropped_lines(data) == expected


def test_a_piece_proven_one_object_per_line_is_not_read_line_by_line(monkeypatch):
    """Rule (the quick count): a piece whose lines are proven to be one object each is counted
    without splitting it into lines; only a piece the check cannot prove (a line that is not an
    object, here in the second piece) is read line by line as hermes reads it."""
    monkeypatch.setattr(scan, "JOURNAL_PIECE_BYTES", 16)
    split = []
    real = scan._piece_lines
    monkeypatch.setattr(
        scan, "_piece_lines", lambda piece, start: split.append((piece, start)) or real(piece, start)
    )
    plain = b'{"a": 1}\n{"b": 2}\n'
    assert journal_dropped_lines(plain) == (0, None)
    assert split == []
    assert journal_dropped_lines(plain + b'{"c": 3}\nnot json\n{"d": 4}\n') == (1, 4)
    assert [start for _, start in split] == [len(plain)]


# ---------------------------------------------------------------- FactCache.put_for


def _stat(tmp_path: Path, name: str = "r1.jsonl") -> os.stat_result:
    path = tmp_path / name
    path.write_bytes(b"{}\n")
    return os.stat(path)


def test_put_for_marks_the_path_as_seen(tmp_path):
    """Rule: ``put_for`` marks its path as seen by this run (and only it)."""
    cache = FactCache(None)
    st = _stat(tmp_path)
    cache.put_for(JOURNAL, "runs/r1", [st, None], {"n": 1}, st.st_ctime_ns + RACY_WINDOW_NS + 1)
    assert cache.seen(JOURNAL) == {"runs/r1"}


def test_put_for_keeps_facts_read_after_the_window(tmp_path):
    """Rule: facts of files changed more than the racy window before the read started are kept,
    saved and answered while the files keep their identity."""
    path = tmp_path / "scan.json"
    cache = FactCache(path)
    st = _stat(tmp_path)
    cache.put_for(JOURNAL, "runs/r1", [st, None], {"n": 1}, st.st_ctime_ns + RACY_WINDOW_NS + 1)
    assert cache.get_for(JOURNAL, "runs/r1", [st, None]) == {"n": 1}
    cache.save()
    assert FactCache(path).get_for(JOURNAL, "runs/r1", [st, None]) == {"n": 1}


def test_put_for_of_files_changed_right_at_the_window_keeps_nothing(tmp_path):
    """Rule: a file changed exactly the racy window before the read started is too recent: its
    facts are not kept."""
    cache = FactCache(None)
    st = _stat(tmp_path)
    cache.put_for(JOURNAL, "runs/r1", [None, st], {"n": 1}, st.st_ctime_ns + RACY_WINDOW_NS)
    assert cache.get_for(JOURNAL, "runs/r1", [None, st]) is None


def test_a_racy_put_for_drops_the_older_entry_of_that_path(tmp_path):
    """Rule: facts too recent to keep remove what the cache held for that path before."""
    cache = FactCache(None)
    st = _stat(tmp_path)
    cache.put_for(JOURNAL, "runs/r1", [st], {"n": 1}, st.st_ctime_ns + RACY_WINDOW_NS + 1)
    cache.put_for(JOURNAL, "runs/r1", [st], {"n": 2}, st.st_ctime_ns)
    assert cache.get_for(JOURNAL, "runs/r1", [st]) is None
    assert cache.entries[JOURNAL] == {}


# ---------------------------------------------------------------- FactCache.save


_ENTRY = [[1, 2, 3, 4, 5, 6, 7], {"n": 1}]


def test_save_drops_entries_this_run_did_not_see(tmp_path):
    """Rule: entries of a kind this run used but did not look up are dropped from the saved file,
    even when nothing else changed."""
    path = tmp_path / "scan.json"
    first = FactCache(path)
    first.adopt(JOURNAL, {"a": _ENTRY, "b": _ENTRY})
    first.save()
    second = FactCache(path)
    st = _stat(tmp_path)
    assert second.get(JOURNAL, "a", st) is None  # a lookup (another identity): "a" is seen
    second.save()
    assert FactCache(path).entries[JOURNAL] == {"a": _ENTRY}


def test_save_writes_in_this_process_unless_asked_for_the_background(tmp_path, monkeypatch):
    """Rule: ``save()`` writes the file itself before it returns; only ``background=True`` hands the
    write to a detached copy."""
    handed: list = []
    monkeypatch.setattr(scan, "_detached", lambda fn: handed.append(fn) or True)
    path = tmp_path / "scan.json"
    cache = FactCache(path)
    cache.adopt(JOURNAL, {"a": _ENTRY})
    cache.save()
    assert handed == []
    assert FactCache(path).entries[JOURNAL] == {"a": _ENTRY}


def test_the_background_copy_writes_the_cache(tmp_path, monkeypatch):
    """Rule: ``save(background=True)`` gives the detached copy the cache's own write to run."""
    monkeypatch.setattr(scan, "_detached", lambda fn: fn() or True)  # the copy's work, run here
    path = tmp_path / "scan.json"
    cache = FactCache(path)
    cache.adopt(JOURNAL, {"a": _ENTRY})
    cache.save(background=True)
    assert FactCache(path).entries[JOURNAL] == {"a": _ENTRY}


def test_a_cache_handed_to_the_background_is_not_written_again(tmp_path, monkeypatch):
    """Rule: once the detached copy took the write, a later ``save`` with nothing new writes nothing."""
    handed: list = []
    monkeypatch.setattr(scan, "_detached", lambda fn: handed.append(fn) or True)  # the copy never writes
    path = tmp_path / "scan.json"
    cache = FactCache(path)
    cache.adopt(JOURNAL, {"a": _ENTRY})
    cache.save(background=True)
    cache.save()
    assert len(handed) == 1
    assert not path.exists()


# ---------------------------------------------------------------- SessionDirScan: cached sidecar reads


PLANTED = {"error": None, "meta": {"seen": "cache"}, "marker": None, "count": 7}


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "a.json").write_bytes(b'{"messages": [{"role": "user", "content": "hi"}]}')
    return folder


def _plant(cache: FactCache, folder: Path, name: str, facts: dict) -> None:
    cache.entries[SIDECAR][name] = [stat_key(os.stat(folder / name)), facts]


def test_a_sidecar_the_cache_knows_is_answered_from_it(tmp_path):
    """Rule: a sidecar whose identity matches its cache entry is answered from the cache, not read."""
    folder = _folder(tmp_path)
    cache = FactCache(None)
    _plant(cache, folder, "a.json", PLANTED)
    facts, st, error = SessionDirScan(folder, cache).sidecar("a.json")
    assert facts == PLANTED
    assert (st.st_size, error) == (49, None)


def test_cached_texts_answer_a_read_that_wants_texts(tmp_path):
    """Rule: cached facts that hold the user texts answer a read that wants them."""
    folder = _folder(tmp_path)
    cache = FactCache(None)
    with_texts = {**PLANTED, "texts": ["planted"], "texts_error": None}
    _plant(cache, folder, "a.json", with_texts)
    assert SessionDirScan(folder, cache).sidecar("a.json", want_texts=True)[0] == with_texts


def test_cached_facts_without_texts_send_a_read_for_texts_to_the_file(tmp_path):
    """Rule: cached facts without user texts do not answer a read that wants them: the file is read."""
    folder = _folder(tmp_path)
    cache = FactCache(None)
    _plant(cache, folder, "a.json", PLANTED)
    facts = SessionDirScan(folder, cache).sidecar("a.json", want_texts=True)[0]
    assert facts["texts"] == ["hi"]
    assert facts["count"] == 1


def test_a_sidecar_read_is_put_in_the_cache_under_its_name(tmp_path, monkeypatch):
    """Rule: the facts of a sidecar read from its file go into the cache under its name and identity."""
    monkeypatch.setattr(scan, "RACY_WINDOW_NS", -(10**18))  # a file written just now is cached too
    folder = _folder(tmp_path)
    cache = FactCache(None)
    facts, st, _ = SessionDirScan(folder, cache).sidecar("a.json")
    assert facts == {"error": None, "meta": {"message_count": 1}, "marker": None, "count": 1}
    assert cache.entries[SIDECAR] == {"a.json": [stat_key(st), facts]}


def test_the_folder_itself_exists(tmp_path):
    """Rule: ``exists("")`` asks about the folder itself (``session_dir / ""``), which is there."""
    scan_ = SessionDirScan(_folder(tmp_path))
    assert scan_.exists("") is True
    assert scan_.exists("gone.json") is False


def test_a_missing_sidecar_counts_minus_one(tmp_path):
    """Rule: ``message_count`` of a sidecar that cannot be read is -1."""
    scan_ = SessionDirScan(_folder(tmp_path))
    assert scan_.message_count("gone.json") == -1
    assert scan_.message_count("a.json") == 1


# ---------------------------------------------------------------- prefetch


class _HereForked:
    """``Forked`` run in this process at ``result``: the copy's value, or ForkedError when it raised."""

    def __init__(self, fn):
        self.fn = fn

    def result(self):
        try:
            return self.fn()
        except Exception as exc:
            raise ForkedError(f"{type(exc).__name__}: {exc}") from exc


class _FailedForked(_HereForked):
    def result(self):
        raise ForkedError("RuntimeError: the copy died")


def _many(tmp_path: Path, n: int) -> tuple[Path, list[str]]:
    folder = tmp_path / "many"
    folder.mkdir()
    names = [f"s{i:03d}.json" for i in range(n)]
    for i, name in enumerate(names):
        (folder / name).write_bytes(b'{"messages": []' + b" " * i + b"}")
    return folder, names


@pytest.fixture
def forks(monkeypatch):
    monkeypatch.setattr(scan, "can_fork", lambda: True)
    monkeypatch.setattr(scan, "Forked", _HereForked)


def test_prefetch_of_too_few_files_does_nothing(tmp_path, forks):
    """Rule: fewer files than ``PARALLEL_MIN_FILES`` are not prefetched even where forking is safe."""
    folder, names = _many(tmp_path, 3)
    scan_ = SessionDirScan(folder)
    assert scan_.prefetch(names) == 0
    assert len(scan_.unanswered(names)) == 3


def test_prefetch_of_exactly_the_minimum_reads_them_all(tmp_path, forks):
    """Rule: ``PARALLEL_MIN_FILES`` files (256) are prefetched, every one of them, half by the copy."""
    assert scan.PARALLEL_MIN_FILES == 256
    folder, names = _many(tmp_path, 256)
    scan_ = SessionDirScan(folder)
    assert scan_.prefetch(names) == 256
    assert scan_.unanswered(names) == []
    assert scan_.sidecar("s255.json")[0]["count"] == 0


def test_prefetch_reads_here_what_a_failed_copy_did_not(tmp_path, monkeypatch):
    """Rule: when the forked copy fails, its half is read in this process: every file is answered."""
    monkeypatch.setattr(scan, "can_fork", lambda: True)
    monkeypatch.setattr(scan, "Forked", _FailedForked)
    folder, names = _many(tmp_path, 256)
    scan_ = SessionDirScan(folder)
    assert scan_.prefetch(names) == 256
    assert scan_.unanswered(names) == []
