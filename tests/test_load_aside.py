"""hermes' audit worked out in a forked copy of the process gives the very report of doing it here."""

from __future__ import annotations

import json
import os
import time
from functools import partial

import pytest

from inspector import load, portable
from inspector.home import locate_home
from inspector.store import scan as scan_mod

# the tests that fork (the copies themselves, not only the report): none where this process may not
needs_fork = pytest.mark.skipif(portable.FORCED or not hasattr(os, "fork"), reason="no fork here")

# pytest-qt loads PySide6.QtCore into the test process, where portable.can_fork() says no; run
# alone, without Qt, it says yes. So each side of a comparison says which path it takes: the
# audit "here" with can_fork forced to no (and no copy started, checked), the audit "aside" with
# it forced to yes and the copies' process ids recorded (tests/MUTATION.md, fifth session).


def _audit_here(home, now, monkeypatch) -> dict:
    """hermes' audit worked out in this process alone; ``load.can_fork`` says yes afterwards."""
    monkeypatch.setattr(load, "can_fork", lambda: False)
    started = []
    real = load.Forked
    monkeypatch.setattr(load, "Forked", lambda fn: started.append(1) or real(fn))
    report = load.full_audit(home, now=now)
    assert started == []
    monkeypatch.setattr(load, "Forked", real)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    return report


@pytest.fixture
def copy_pids(tmp_path, monkeypatch):
    """The process ids the copies' jobs ran in (read with the returned function)."""
    log = tmp_path / "copy-pids.log"
    real = load._aside_job

    def noting(*args, **kwargs):
        with open(log, "a") as fh:  # appended from the copies
            fh.write(f"{os.getpid()}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(load, "_aside_job", noting)
    return lambda: [int(line) for line in log.read_text().split()] if log.exists() else []


def _home(tmp_path, bad_turn_journal: bool, deep: bool = False):
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
    if deep:  # hermes' audit fails on it (json.loads raises RecursionError): a file only this process reads
        (sessions / "deep.json").write_bytes(b'{"session_id": "deep", "x": ' + b"[" * 995 + b"]" * 995 + b"}")
    return locate_home(tmp_path)


@needs_fork
@pytest.mark.parametrize(
    ("bad_turn_journal", "deep"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_audit_aside_equals_audit_here(tmp_path, monkeypatch, bad_turn_journal, deep, copy_pids):
    home = _home(tmp_path, bad_turn_journal, deep)
    now = time.time()
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _audit_here(home, now, monkeypatch)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    assert copy_pids() == []
    aside = load.full_audit(home, now=now)
    pids = copy_pids()
    assert len(pids) == load.AUDIT_COPIES and os.getpid() not in pids  # the copies did the work
    assert aside == here
    assert (here["status"] == "hermes_audit_failed") == (bad_turn_journal or deep)
    if deep:
        assert here["error"].startswith(
            "hermes' recovery audit would fail (HTTP 500) on a sidecar nested too deeply to parse: deep.json"
        )


@needs_fork
def test_turn_journal_facts_of_the_copy_reach_the_cache(tmp_path, monkeypatch, copy_pids):
    home = _home(tmp_path, False)
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    load.full_audit(home, now=time.time())
    assert copy_pids() and os.getpid() not in copy_pids()  # hermes' audit ran in a copy
    (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
    assert list(json.loads(cache_file.read_text())["turn"]) == ["_turn_journal/s2~1.jsonl"]


@needs_fork
def test_the_list_s_copies_facts_only_the_cache_keeps_are_taken_when_it_is_saved(
    tmp_path, monkeypatch, copy_pids
):
    """The window's catalogue (its cache written after its rows are sent): hermes' turn-journal
    facts and its state.db query's entry come back from the copy pickled, are not in the cache
    before the save, and the file it writes is the one of taking them at once."""
    home = _home(tmp_path, False)
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    monkeypatch.setattr(load, "WORK_STEALING", False)  # (the deal by cost: a partly known folder's way too)
    import sqlite3

    db = sqlite3.connect(home.state_db())
    db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT, started_at REAL)")
    db.execute("INSERT INTO sessions VALUES ('lost', 'webui', 'gone', 1.0)")
    db.commit()
    db.close()
    files = {}
    scans: list = []
    real_scan = load._scan
    monkeypatch.setattr(load, "_scan", lambda h: scans.append(real_scan(h)) or scans[-1])
    for saved_later in (False, True):
        for old in scan_mod.cache_dir().glob("scan-*.json"):
            old.unlink()
        scans.clear()
        saves: list = []
        cat = load.load_catalogue(home, now=1_800_000_000.0, save_later=saves.append if saved_later else None)
        assert copy_pids() and os.getpid() not in copy_pids()  # hermes' audit ran in a copy
        if saved_later:
            (scan,) = scans
            assert scan.cache.entries[scan_mod.TURN] == {}  # not taken yet
            (save,) = saves
            save()
            assert list(scan.cache.entries[scan_mod.TURN]) == ["_turn_journal/s2~1.jsonl"]
        (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
        files[saved_later] = {k: v for k, v in json.loads(cache_file.read_text()).items() if k != "saved_at"}
        assert [row.session_id for row in cat.sorted_rows()]
    assert files[True] == files[False]
    assert list(files[True]["turn"]) == ["_turn_journal/s2~1.jsonl"]
    assert any(key.startswith("hermes-missing-rows:") for key in files[True]["state_db"])


@needs_fork
def test_a_second_look_with_the_cache_filled_forks_no_copy_and_says_the_same(tmp_path, monkeypatch):
    home = _home(tmp_path, False)
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    forked = []
    real = load.Forked
    monkeypatch.setattr(load, "Forked", lambda fn: forked.append(1) or real(fn))
    now = time.time()
    first = load.full_audit(home, now=now)  # no cache yet: the work dealt out to the copies
    assert forked == [1] * load.AUDIT_COPIES
    second = load.full_audit(home, now=now)  # every sidecar known to the cache: all of it here
    assert forked == [1] * load.AUDIT_COPIES and second == first


def test_the_plan_gives_hermes_files_to_its_copy_and_every_file_to_one_worker():
    sizes = [900_000, 5_000, 70_000, 300, 40_000] * 4
    todo = [(size, f"s{i}.json", i % 3 == 0) for i, size in enumerate(sizes)]
    journals = [(3_000_000, "/j/a.jsonl"), (200_000, "/j/b.jsonl"), (1_000_000, "/j/c.jsonl")]
    plan = load.plan_work(todo, ["s7.json", "s3.json"], journals, [50_000.0, 200_000.0, 0.0])
    names = [n for share in plan.sidecars for n, _ in share]
    assert sorted(names) == sorted(n for _, n, _ in todo)  # each sidecar once, to one worker
    assert {"s7.json", "s3.json"} <= {n for n, _ in plan.sidecars[1]}  # hermes' audit reads them there
    want = {n: w for _, n, w in todo}
    assert all(w == want[n] for share in plan.sidecars for n, w in share)  # the user texts still asked for
    assert plan.journals[0] == []  # this process builds the catalogue: journals go to the copies
    assert sorted(p for j in plan.journals for p in j) == sorted(p for _, p in journals)
    cost = {n: s + load.FILE_COST for s, n, _ in todo}
    jcost = {p: load.JOURNAL_BYTE_COST * s for s, p in journals}
    loads = [
        fixed + sum(cost[n] for n, _ in plan.sidecars[i]) + sum(jcost[p] for p in plan.journals[i])
        for i, fixed in enumerate([50_000.0, 200_000.0, 0.0])
    ]
    assert loads == pytest.approx(plan.load)
    # the rule: the workers finish together, within the largest file dealt out by the balance
    assert max(loads) - min(loads) <= max(max(cost.values()), max(jcost.values()))


def test_a_copy_busier_than_everything_gets_only_hermes_files():
    todo = [(1000, f"s{i}.json", False) for i in range(10)]
    plan = load.plan_work(todo, ["s4.json"], [], [0.0, 1e9, 0.0])
    assert plan.sidecars[1] == [("s4.json", False)]
    assert len(plan.sidecars[0]) + len(plan.sidecars[2]) == 9


@needs_fork
def test_each_sidecar_is_read_once_across_the_processes(tmp_path, monkeypatch):
    # (a live sidecar _index.json does not list may be read again by the copy running hermes'
    # audit, which counts its messages for the item: the index is parsed there, after the split)
    home = _home(tmp_path, False)
    (home.session_dir / "_index.json").write_text(json.dumps([{"session_id": f"s{i}"} for i in range(6)]))
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    monkeypatch.setattr(scan_mod, "can_fork", lambda: True)
    log = tmp_path / "reads.log"
    real = scan_mod.read_regular

    def noting(path, *a, **k):
        with open(log, "a") as fh:  # appended from both processes
            fh.write(f"{os.getpid()} {path}\n")
        return real(path, *a, **k)

    monkeypatch.setattr(scan_mod, "read_regular", noting)
    load.full_audit(home, now=time.time())
    reads = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert {int(pid) for pid, _ in reads} - {os.getpid()}  # the copies read some of them
    names = [path.rsplit("/", 1)[-1] for _, path in reads]
    sidecars = [n for n in names if n.endswith((".json", ".json.bak")) and not n.startswith("_")]
    assert sorted(sidecars) == sorted(set(sidecars))
    assert set(sidecars) == {f"s{i}.json" for i in range(6)} | {"s5.json.bak", "gone.json.bak"}
    assert names.count("_index.json") == 1  # parsed in the copy, its facts handed over


@needs_fork
def test_a_copy_that_fails_before_handing_its_share_over_changes_nothing(tmp_path, monkeypatch):
    home = _home(tmp_path, False)
    now = time.time()
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _audit_here(home, now, monkeypatch)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)

    def broken(stage, data):
        raise OSError("no room")

    monkeypatch.setattr(load._Stage, "hand_over", broken)  # in the copies: they fail before handing over
    failures = []
    monkeypatch.setattr("inspector.forked._log_failure", lambda message, details: failures.append(message))
    assert load.full_audit(home, now=now) == here
    assert len(failures) == load.AUDIT_COPIES  # every copy ran, and failed


def _with_journals(tmp_path, monkeypatch):
    home = _home(tmp_path, False)
    runs = home.session_dir / "_run_journal"
    for sid, lines in (("s1", ['{"seq": 1}', "not json", '{"seq": 3}']), ("s3", ['{"a": 1}', "[1]"])):
        (runs / sid).mkdir(parents=True)
        (runs / sid / "r1.jsonl").write_text("\n".join(lines) + "\n")
        (runs / sid / "r2.jsonl").write_text('{"seq": 1}\n')
    (runs / "bad name!").mkdir()
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    return home


@needs_fork
def test_journals_read_by_the_copies_give_the_journal_findings_of_reading_them_here(tmp_path, monkeypatch):
    home = _with_journals(tmp_path, monkeypatch)
    now = time.time()
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    monkeypatch.setattr(load, "can_fork", lambda: False)
    here = load.full_audit(home, now=now)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    monkeypatch.setattr(load, "can_fork", lambda: True)
    log = tmp_path / "journal-reads.log"
    real = load.read_regular

    def noting(path, *a, **k):
        with open(log, "a") as fh:  # appended from every process
            fh.write(f"{os.getpid()} {path}\n")
        return real(path, *a, **k)

    monkeypatch.setattr(load, "read_regular", noting)
    aside = load.full_audit(home, now=now)
    assert aside == here
    kinds = [f["kind"] for f in aside["inspector"]["findings"]]
    assert kinds.count("journal_lines_dropped") == 2 and "unsafe_journal_id" in kinds
    reads = [line.split() for line in log.read_text().splitlines()]
    assert sorted(p for _, p in reads) == sorted({p for _, p in reads})  # each journal read once
    assert len(reads) == 4 and os.getpid() not in {int(pid) for pid, _ in reads}  # in the copies


@needs_fork
@pytest.mark.parametrize("copies", [1, 2])
def test_any_number_of_copies_gives_the_same_report(tmp_path, monkeypatch, copies):
    home = _with_journals(tmp_path, monkeypatch)
    now = time.time()
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _audit_here(home, now, monkeypatch)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    monkeypatch.setattr(load, "AUDIT_COPIES", copies)
    forked = []
    real = load.Forked
    monkeypatch.setattr(load, "Forked", lambda fn: forked.append(1) or real(fn))
    assert load.full_audit(home, now=now) == here
    assert len(forked) == copies


@needs_fork
def test_a_second_copy_that_fails_changes_nothing(tmp_path, monkeypatch, copy_pids):
    home = _with_journals(tmp_path, monkeypatch)
    now = time.time()
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _audit_here(home, now, monkeypatch)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    real = load._aside_job

    def second_fails(home, scan, share, stage, others, journals, with_hermes_audit=False, *rest, **kw):
        if not with_hermes_audit:
            raise RuntimeError("the second copy fails")
        return real(home, scan, share, stage, others, journals, with_hermes_audit, *rest, **kw)

    monkeypatch.setattr(load, "_aside_job", second_fails)
    monkeypatch.setattr(load, "AUDIT_COPIES", 2)
    failures = []
    monkeypatch.setattr("inspector.forked._log_failure", lambda message, details: failures.append(message))
    assert load.full_audit(home, now=now) == here
    assert failures == ["RuntimeError: the second copy fails"]
    assert len(copy_pids()) == 1 and os.getpid() not in copy_pids()  # the first copy ran hermes' audit


@needs_fork
def test_a_copy_hands_over_megabytes_without_waiting_for_the_reader():
    import signal

    from inspector.forked import Forked

    data = os.urandom(3 << 20)  # far more than a pipe holds
    stage = load._Stage()

    def job():
        stage.in_copy()
        try:
            stage.hand_over(data)
        finally:
            stage.close_writing_end()
        return "went on"

    signal.alarm(20)  # a copy blocked on its hand-over would hang here
    try:
        copy = Forked(job)
        stage.in_parent()
        assert copy.result() == "went on"  # it ended before anything was read
        assert stage.receive() == data
    finally:
        signal.alarm(0)


@needs_fork
def test_a_copy_that_dies_before_handing_over_is_told_apart_from_an_empty_hand_over():
    from inspector.forked import Forked, ForkedError

    stage = load._Stage()

    def dies():
        stage.in_copy()
        os._exit(3)

    copy = Forked(dies)
    stage.in_parent()
    with pytest.raises(ForkedError):
        copy.result()
    assert stage.receive() is None


def test_the_audit_command_forks_one_copy_more_than_the_windows_catalogue():
    """The audit command (its journal findings) has no window to keep painting: it takes
    ``AUDIT_COPIES``; the list and the window's catalogue take ``FIRST_OPEN_COPIES``."""
    assert (load.FIRST_OPEN_COPIES, load.AUDIT_COPIES) == (2, 3)
    assert load.copies_of(True) == 3 and load.copies_of(False) == 2


@needs_fork
def test_the_copies_hand_overs_are_taken_in_the_order_they_come():
    """The first process takes whichever copy's facts are ready first (it unpickles one while
    another copy still pickles its own), each once, and a copy that dies is taken in its turn."""
    from inspector.forked import Forked, ForkedError

    stages = [load._Stage() for _ in range(3)]

    def job(i: int, wait: float):
        for other in stages:
            if other is not stages[i]:
                for fd in other.fds():
                    os.close(fd)
        stages[i].in_copy()
        time.sleep(wait)
        if i == 1:
            os._exit(3)  # dies without handing over
        try:
            stages[i].hand_over(b"copy %d" % i)
        finally:
            stages[i].close_writing_end()

    copies = [Forked(partial(job, i, wait)) for i, wait in enumerate((0.6, 0.3, 0.0))]
    for stage in stages:
        stage.in_parent()
    order = [(i, stage.receive()) for i, stage in load._as_ready(stages)]
    assert order == [(3, b"copy 2"), (2, None), (1, b"copy 0")]
    for i, copy in enumerate(copies):
        if i == 1:
            with pytest.raises(ForkedError):
                copy.result()
        else:
            copy.result()


@needs_fork
def test_work_meanwhile_runs_while_a_copy_s_result_has_not_begun_to_come():
    """The first process's work while it would wait: steps until every copy's result begins to
    come (or the work is done, or fails); none once they are all there."""
    from inspector.forked import Forked

    copies = [Forked(partial(time.sleep, 0.4)), Forked(lambda: 7)]
    steps: list[float] = []

    def step() -> bool:
        steps.append(time.monotonic())
        time.sleep(0.01)
        return True

    started = time.monotonic()
    load._while_copies_work(copies, step)
    assert len(steps) >= 10 and time.monotonic() - started >= 0.35  # until the slow copy's result came
    assert [copy.result() for copy in copies] == [None, 7]
    done = [Forked(lambda: 1)]
    time.sleep(0.2)
    load._while_copies_work(done, lambda: pytest.fail("called with the result there"))
    assert done[0].result() == 1
    for finished_early, raising in ((True, False), (False, True)):
        calls = []

        def short(calls=calls, finished_early=finished_early, raising=raising) -> bool:
            calls.append(1)
            if raising:
                raise ValueError("a step that fails")
            return len(calls) < 3 if finished_early else True

        slow = [Forked(partial(time.sleep, 0.3))]
        load._while_copies_work(slow, short)
        assert calls == ([1, 1, 1] if finished_early else [1])
        assert slow[0].result() is None


@needs_fork
def test_the_list_s_work_meanwhile_sees_the_built_catalogue_which_then_only_gains_findings(
    tmp_path, monkeypatch, copy_pids
):
    """``while_copies_finish`` is given the catalogue once built, before the copies' results are
    taken; the catalogue is the one of a look without it, and its rows differ from what they were
    then in their findings only (the rule the job's early flat records rest on)."""
    from inspector.present.rows import flat_row

    home = _home(tmp_path, True)
    (home.session_dir / "s3.json").write_text(
        json.dumps({"session_id": "s3", "messages": [{"role": "user", "content": "x", "_error": "e"}]})
    )
    monkeypatch.setattr(load, "AUDIT_ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    seen: list = []

    def meanwhile(cat):
        seen.append({sid: (row, len(row.findings), flat_row(row)[:12]) for sid, row in cat.rows.items()})
        time.sleep(0.05)  # (a copy may still be working)
        return lambda: False

    plain = load.load_catalogue(home, now=1_800_000_000.0)
    cat = load.load_catalogue(home, now=1_800_000_000.0, while_copies_finish=meanwhile)
    assert copy_pids()
    (then,) = seen
    assert [flat_row(r) for r in cat.sorted_rows()] == [flat_row(r) for r in plain.sorted_rows()]
    assert set(then) == set(cat.rows)
    for sid, row in cat.rows.items():
        was, findings, head = then[sid]
        assert row is was and flat_row(row)[:12] == head and len(row.findings) >= findings
    assert any(len(row.findings) > then[sid][1] for sid, row in cat.rows.items())  # hermes' audit's
