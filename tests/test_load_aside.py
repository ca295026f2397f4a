"""hermes' audit worked out in a forked copy of the process gives the very report of doing it here."""

from __future__ import annotations

import json
import time

import pytest

from inspector import load
from inspector.home import locate_home
from inspector.store import scan as scan_mod


def _home(tmp_path, bad_turn_journal: bool):
    sessions = tmp_path / "webui" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(6):
        msgs = [{"role": "user", "content": f"m{j}"} for j in range(i)]
        (sessions / f"s{i}.json").write_text(
            json.dumps({"session_id": f"s{i}", "title": f"t{i}", "messages": msgs})
        )
    (sessions / "s5.json.bak").write_text(json.dumps({"session_id": "s5", "messages": [{}] * 9}))
    (sessions / "gone.json.bak").write_text(json.dumps({"session_id": "gone", "messages": [{}]}))
    (sessions / "_index.json").write_text(json.dumps([{"session_id": "s1"}, {"session_id": "ghost"}]))
    turns = sessions / "_turn_journal"
    turns.mkdir()
    (turns / "s2~1.jsonl").write_text(
        json.dumps({"turn_id": "t", "event": "submitted", "content": "new text", "created_at": 5}) + "\n"
    )
    if bad_turn_journal:
        (turns / "bad name!~1.jsonl").write_text("{}\n")
    return locate_home(tmp_path)


@pytest.mark.parametrize("bad_turn_journal", [False, True])
def test_audit_aside_equals_audit_here(tmp_path, monkeypatch, bad_turn_journal):
    home = _home(tmp_path, bad_turn_journal)
    now = time.time()
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = load.full_audit(home, now=now)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)  # the test process has PySide6 loaded
    started = []
    real = load._start_audit_aside
    monkeypatch.setattr(load, "_start_audit_aside", lambda *a: started.append(1) or real(*a))
    aside = load.full_audit(home, now=now)
    assert started and aside == here
    assert (here["status"] == "hermes_audit_failed") == bad_turn_journal


def test_turn_journal_facts_of_the_copy_reach_the_cache(tmp_path, monkeypatch):
    home = _home(tmp_path, False)
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    load.full_audit(home, now=time.time())
    (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
    assert list(json.loads(cache_file.read_text())["turn"]) == ["_turn_journal/s2~1.jsonl"]


def test_a_second_look_with_the_cache_filled_forks_no_copy_and_says_the_same(tmp_path, monkeypatch):
    home = _home(tmp_path, False)
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    forked = []
    real = load.Forked
    monkeypatch.setattr(load, "Forked", lambda fn: forked.append(1) or real(fn))
    now = time.time()
    first = load.full_audit(home, now=now)  # no cache yet: hermes' audit and the journals in a copy
    assert forked == [1]
    second = load.full_audit(home, now=now)  # every sidecar known to the cache: all of it here
    assert forked == [1] and second == first


def test_the_split_gives_hermes_files_to_the_copy_and_every_file_to_one_side():
    todo = [
        (size, f"s{i}.json", i % 3 == 0) for i, size in enumerate([900_000, 5_000, 70_000, 300, 40_000] * 4)
    ]
    hermes = ["s7.json", "s3.json"]
    theirs, mine = load.split_sidecars(todo, hermes, their_fixed=200_000, my_fixed=50_000)
    names = [n for n, _ in theirs + mine]
    assert sorted(names) == sorted(n for _, n, _ in todo)  # each file once, on one side
    assert {"s7.json", "s3.json"} <= {n for n, _ in theirs}  # hermes' audit reads these in the copy
    want = {n: w for _, n, w in todo}
    assert all(w == want[n] for n, w in theirs + mine)  # the user texts still asked for
    size = {n: s + load.FILE_COST for s, n, _ in todo}
    theirs_cost = 200_000 + sum(size[n] for n, _ in theirs)
    mine_cost = 50_000 + sum(size[n] for n, _ in mine)
    # the rule: both sides finish together, within the largest file left to this side
    assert abs(theirs_cost - mine_cost) <= max(size[n] for n, _ in mine)


def test_a_copy_busier_than_everything_takes_only_hermes_files():
    todo = [(1000, f"s{i}.json", False) for i in range(10)]
    theirs, mine = load.split_sidecars(todo, ["s4.json"], their_fixed=10**9, my_fixed=0)
    assert theirs == [("s4.json", False)] and len(mine) == 9


def test_each_sidecar_is_read_once_across_both_processes(tmp_path, monkeypatch):
    home = _home(tmp_path, False)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    monkeypatch.setattr(scan_mod, "can_fork", lambda: True)
    log = tmp_path / "reads.log"
    real = scan_mod.read_regular

    def noting(path, *a, **k):
        with open(log, "a") as fh:  # appended from both processes
            fh.write(f"{path}\n")
        return real(path, *a, **k)

    monkeypatch.setattr(scan_mod, "read_regular", noting)
    load.full_audit(home, now=time.time())
    names = [line.rsplit("/", 1)[-1] for line in log.read_text().splitlines()]
    sidecars = [n for n in names if n.endswith((".json", ".json.bak")) and not n.startswith("_")]
    assert sorted(sidecars) == sorted(set(sidecars))
    assert set(sidecars) == {f"s{i}.json" for i in range(6)} | {"s5.json.bak", "gone.json.bak"}


def test_a_copy_that_fails_before_handing_its_share_over_changes_nothing(tmp_path, monkeypatch):
    home = _home(tmp_path, False)
    now = time.time()
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = load.full_audit(home, now=now)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)

    def broken(fd, data):
        raise OSError("no pipe")

    monkeypatch.setattr(load, "_write_all", broken)  # in the copy: it dies before writing
    monkeypatch.setattr("inspector.forked._log_failure", lambda *a: None)
    assert load.full_audit(home, now=now) == here
