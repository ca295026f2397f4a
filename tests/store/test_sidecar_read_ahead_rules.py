"""The folder scan's read-ahead of sidecars (``scan._read_some``, ``SessionDirScan._todo`` and
``read_ahead``), rule by rule (tests/MUTATION.md, fourth session): which files are read, which the
cache answers, what an unreadable file gives, where a batch held for the full parse ends. The facts of a
file are compared with the full parse (``sidecar_facts``), which the quick pass must equal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.store import scan as scan_module
from inspector.store.scan import SIDECAR, FactCache, SessionDirScan, _read_some, sidecar_facts, stat_key

SIXTEEN = b'{"messages": []}'  # 16 bytes
FIFTEEN = b'{"messages":[]}'  # 15 bytes
UNREADABLE_FACTS = {"error": None, "meta": {}, "marker": None, "count": -1}


def _files(folder: Path, files: dict[str, bytes]) -> str:
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return str(folder)


def test_an_unreadable_file_gets_no_facts_and_the_reason(tmp_path):
    """Rule: a file that cannot be read gives the empty facts (count -1), no stat and ``cannot read:``
    with the OS's words; the read goes on with the next file."""
    folder = _files(tmp_path, {"b.json": SIXTEEN})
    names = [("a.json", False), ("b.json", False)]
    out: list = [None, None]
    at, pending = _read_some(folder, names, 0, out, False)
    assert out[0][:4] == ("a.json", UNREADABLE_FACTS, None, "cannot read: No such file or directory")
    assert at == 2 and [p[0] for p in pending] == [1] and pending[0][1] == SIXTEEN


def test_the_quick_pass_answers_in_place_and_holds_nothing(tmp_path):
    """Rule: with ``quick`` each file's facts go straight into ``out`` (equal to the full parse's) and
    nothing is held for the full parse; without it every readable file is held and ``out`` untouched;
    the read starts at ``at``."""
    folder = _files(
        tmp_path, {"a.json": SIXTEEN, "b.json": b'{"messages": [{"role": "user", "content": "hi"}]}'}
    )
    names = [("a.json", False), ("b.json", True)]
    out: list = [None, None]
    assert _read_some(folder, names, 1, out, True) == (2, [])
    assert out[0] is None
    name, facts, st, error, _started = out[1]
    assert (name, st.st_size, error) == ("b.json", 49, None)
    assert facts == sidecar_facts((tmp_path / "b.json").read_bytes(), want_texts=True)
    out = [None, None]
    at, pending = _read_some(folder, names, 0, out, False)
    assert out == [None, None] and at == 2 and [p[0] for p in pending] == [0, 1]


@pytest.mark.parametrize(
    ("sizes", "stop", "held"),
    [([16, 16, 16], 2, [0, 1]), ([16, 15, 16, 16], 3, [0, 1, 2])],
    ids=["reaches-exactly", "one-byte-short"],
)
def test_a_batch_for_the_full_parse_ends_once_it_holds_the_bound(tmp_path, monkeypatch, sizes, stop, held):
    """Rule: files are held for the full parse until together they hold at least ``PENDING_BYTES``
    (here 32): the batch ends after that file and the next read starts after it."""
    monkeypatch.setattr(scan_module, "PENDING_BYTES", 32)
    data = {16: SIXTEEN, 15: FIFTEEN}
    folder = _files(tmp_path, {f"{i}.json": data[size] for i, size in enumerate(sizes)})
    names = [(f"{i}.json", False) for i in range(len(sizes))]
    at, pending = _read_some(folder, names, 0, [None] * len(sizes), False)
    assert at == stop
    assert [p[0] for p in pending] == held


def _seed(cache: FactCache, folder: Path, name: str, facts: dict) -> None:
    cache.entries[SIDECAR][name] = [stat_key(os.stat(folder / name)), facts]


def test_the_cache_answers_for_unchanged_files_and_the_rest_is_to_read(tmp_path):
    """Rule: a file the cache knows (same identity) is taken from it, unless its texts are wanted and the
    cached facts have none; every other file is to be read, with its size (0 when it is missing), in
    the order given. What the cache answered is the scan's answer from then on."""
    _files(tmp_path, {"a.json": SIXTEEN, "b.json": FIFTEEN, "c.json": SIXTEEN, "d.json": SIXTEEN})
    cache = FactCache(None)
    plain = {"error": None, "meta": {"seen": "cache"}, "marker": None, "count": 7}
    with_texts = {**plain, "texts": ["hello"]}
    _seed(cache, tmp_path, "a.json", plain)
    _seed(cache, tmp_path, "c.json", plain)
    _seed(cache, tmp_path, "d.json", with_texts)
    scan = SessionDirScan(tmp_path, cache)
    todo = scan._todo(["a.json", "b.json", "c.json", "d.json", "gone.json"], {"c.json", "d.json"})
    assert todo == [(15, "b.json", False), (16, "c.json", True), (0, "gone.json", False)]
    (tmp_path / "a.json").write_bytes(b'{"messages": [], "title": "changed since"}')
    assert scan.sidecar("a.json")[0] == plain  # the scan keeps what it took from the cache: one view
    assert scan.sidecar("d.json", want_texts=True)[0] == with_texts


def test_read_ahead_reads_only_what_is_left_and_keeps_it_in_the_cache(tmp_path, monkeypatch):
    """Rule: ``read_ahead`` reads the files neither the scan nor the cache answers for, returns how many,
    and puts each one read without error into the cache under its name and identity (0 when there is
    nothing to read)."""
    monkeypatch.setattr(scan_module, "RACY_WINDOW_NS", -(10**18))  # a file written just now is cached too
    _files(tmp_path, {"a.json": SIXTEEN, "b.json": FIFTEEN})
    cache = FactCache(None)
    scan = SessionDirScan(tmp_path, cache)
    assert scan.read_ahead(["a.json", "b.json", "gone.json"]) == 3
    entry = cache.entries[SIDECAR]
    assert sorted(entry) == ["a.json", "b.json"]
    assert entry["a.json"] == [
        stat_key(os.stat(tmp_path / "a.json")),
        sidecar_facts(SIXTEEN, want_texts=False),
    ]
    assert scan.read_ahead(["a.json", "b.json"]) == 0
    assert SessionDirScan(tmp_path, cache).read_ahead(["a.json", "b.json"]) == 0
