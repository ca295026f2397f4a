"""The quick first look at a home: newest sidecars first, metadata from the prefix only."""

from __future__ import annotations

import json
import os

import pytest

from inspector.quickscan import prefix_meta, quick_batches, quick_rows


def _sidecar(folder, sid, title, updated, mtime, **extra):
    body = {
        "session_id": sid,
        "title": title,
        "profile": extra.pop("profile", None),
        "updated_at": updated,
        "message_count": 2,
        **extra,
        "messages": [{"role": "user", "content": "hi"}] * 2,
        "tool_calls": [],
    }
    path = folder / f"{sid}.json"
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


def test_prefix_meta_reads_the_keys_before_messages():
    head = json.dumps(
        {"session_id": "a", "title": "T", "message_count": 3, "messages": [1, 2, 3]}, indent=2
    ).encode()
    assert prefix_meta(head[:80]) == {"session_id": "a", "title": "T", "message_count": 3}
    assert prefix_meta(b'{\n  "session_id": "a", "tit') is None  # no messages key in reach
    assert prefix_meta(b"\x00\x01 not json") is None


def test_quick_rows_newest_file_first_with_titles_profiles_and_baks(tmp_path):
    _sidecar(tmp_path, "old", "Old chat", 100.0, 1_000)
    _sidecar(tmp_path, "new", "New chat", 300.0, 3_000, profile="work")
    _sidecar(tmp_path, "mid", "Mid chat", 200.0, 2_000)
    (tmp_path / "mid.json.bak").write_text("{}", encoding="utf-8")
    (tmp_path / "_index.json").write_text("[]", encoding="utf-8")
    (tmp_path / "broken.json").write_bytes(b"{not json")
    os.utime(tmp_path / "broken.json", (500, 500))
    rows = quick_rows(tmp_path)
    assert [r.session_id for r in rows] == ["new", "mid", "old", "broken"]
    new, mid, _old, broken = rows
    assert (new.title, new.profile, new.sidecar_messages, new.last_activity) == ("New chat", "work", 2, 300.0)
    assert mid.has_bak and not new.has_bak
    assert broken.title == "" and broken.last_activity == 500  # unreadable prefix: the file's mtime
    assert all(not r.findings for r in rows)  # health is the full catalogue's job
    assert [r.session_id for r in quick_rows(tmp_path, 2)] == ["new", "mid"]
    batches = list(quick_batches(tmp_path, first=1, batch=2))
    assert [len(b) for b in batches] == [1, 2, 1]


def test_quick_rows_of_a_missing_folder_is_empty(tmp_path):
    assert quick_rows(tmp_path / "nope") == []


@pytest.mark.parametrize("trim_every", [1, 3, 16, 4_096])
def test_the_newest_few_are_the_first_of_the_whole_list_ties_and_all(tmp_path, monkeypatch, trim_every):
    """The window's first rows ask for the newest 200 only (issue 18: no sort of every sidecar in a
    thread of the window); they must be exactly the first of the whole list, ties broken by id,
    however often the listing cuts what it keeps back to the newest (TRIM_EVERY)."""
    import random

    from inspector import quickscan
    from inspector.quickscan import list_sessions_by_mtime

    monkeypatch.setattr(quickscan, "TRIM_EVERY", trim_every)

    rnd = random.Random(18)
    for i in range(60):
        path = tmp_path / f"s{rnd.randrange(10_000):04d}-{i}.json"
        path.write_text("{}", encoding="utf-8")
        when = float(rnd.choice((100, 200, 200, 300, 300, 300, 400 + i)))
        os.utime(path, (when, when))
    (tmp_path / "s0000-0.json.bak").write_text("{}", encoding="utf-8")
    everything, baks = list_sessions_by_mtime(tmp_path)
    assert len(everything) == 60 and len({mtime for *_, mtime, _ in everything}) < 60  # there are ties
    for newest in (0, 1, 7, 30, 59, 60, 61, 200):
        few, few_baks = list_sessions_by_mtime(tmp_path, newest)
        assert few == everything[:newest] and few_baks == baks
        assert [r.session_id for r in quick_rows(tmp_path, newest or None)] == [
            r.session_id for r in quick_rows(tmp_path)
        ][: newest or None]


def test_the_newest_few_are_kept_as_the_listing_goes(tmp_path, monkeypatch):
    """With ``newest``, the listing never holds much more than that many sidecars: a whole folder's
    worth going at once is one C call holding the GIL in a thread of the window (issue 18)."""
    import heapq

    from inspector import quickscan

    for i in range(40):
        (tmp_path / f"s{i:02d}.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(quickscan, "TRIM_EVERY", 5)
    sizes = []
    real = heapq.nsmallest

    def counting(n, items, key):
        sizes.append(len(items))
        return real(n, items, key=key)

    monkeypatch.setattr(quickscan.heapq, "nsmallest", counting)
    few, _ = quickscan.list_sessions_by_mtime(tmp_path, 3)
    assert len(few) == 3
    assert len(sizes) >= 40 // 5 and max(sizes) <= 3 + 5


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_listing_through_the_open_folder_gives_what_listing_by_path_gives(tmp_path, monkeypatch):
    """The listing looks each name up in the open folder where the system can (scandir of a
    descriptor): the same sidecars, paths, sizes, times and kinds as by path, links not followed."""
    from inspector import quickscan

    for i in range(12):
        path = tmp_path / f"s{i:02d}.json"
        path.write_text("{}" * i, encoding="utf-8")
        os.utime(path, (100.0 + i % 4, 100.0 + i % 4))
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "link.json")
    os.symlink(tmp_path / "s01.json", tmp_path / "s99.json")
    (tmp_path / "s03.json.bak").write_text("{}", encoding="utf-8")
    (tmp_path / "_index.json").write_text("[]", encoding="utf-8")
    listings = {}
    for by_descriptor in (False, True):
        if by_descriptor and os.scandir not in os.supports_fd:
            continue
        monkeypatch.setattr(quickscan, "_SCANDIR_FD", by_descriptor)
        listings[by_descriptor] = [quickscan.list_sessions_by_mtime(tmp_path, n) for n in (None, 3)]
    assert len(set(map(repr, listings.values()))) == 1
    everything, baks = listings[False][0]
    assert baks == {"s03"} and len(everything) == 14
    kinds = {sid: (path, regular) for sid, path, _, _, regular in everything}
    assert kinds["link"] == (str(tmp_path / "link.json"), False) and kinds["s99"][1] is False
    assert kinds["s05"] == (str(tmp_path / "s05.json"), True)
