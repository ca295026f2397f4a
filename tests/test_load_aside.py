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
