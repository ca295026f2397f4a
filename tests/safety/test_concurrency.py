"""Hermes keeps running while the inspector works: a live agent, a live WebUI, files changing under it.

* A separate process plays the agent: it commits to state.db (WAL and rollback-journal mode) and
  appends to a run journal, line by line in two halves (so a torn last line is often on disk),
  while the inspector lists, shows, audits, previews repairs and reads the raw journal over and
  over. Nothing may fail, the agent's commits must never wait long on the inspector (its slowest
  commit is measured and reported), no connection may stay open between calls, and afterwards
  state.db holds exactly the agent's data with the same schema, user_version and application_id.
* A file changed between preview and write (hermes saved meanwhile) refuses the write, writes
  nothing and names the file, whether it changed before apply, during apply, or under the CLI.
* A running hermes-webui is detected from <home>/webui.pid and a live process, and the preview
  warns; a stale or hostile pid file is ignored without error.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector.actions import make_context, plan_action, running_warning
from inspector.home import locate_home, webui_pid
from inspector.plan import ApplyError, WriteLog, apply_plan
from inspector.store import statedb
from inspector.store.journal_raw import RawJournal
from tests.safety.helpers import CLOCK, demo, inspect_everything, run_cli, tree_diff, tree_state

LIVE_SID = "livewriter0001"
LIVE_RUN = "liverun0001"

# The agent: hermes' writer settings (timeout=1.0 busy handler, BEGIN IMMEDIATE ... COMMIT), with
# synchronous=OFF so that its commit latency measures waiting on the inspector's locks, not fsync.
WRITER = r"""
import json, os, sqlite3, sys, time, hashlib
db, journal, mode, stop, out = sys.argv[1:6]
con = sqlite3.connect(db, timeout=1.0, isolation_level=None)
con.execute(f"PRAGMA journal_mode={mode}")
con.execute("PRAGMA synchronous=OFF")  # measure waiting on locks, not the disk
con.execute("BEGIN IMMEDIATE")
con.execute("INSERT INTO sessions (id, source, started_at, title, message_count) VALUES (?, 'webui', ?, 'live', 0)",
            (sys.argv[6], time.time()))
con.execute("COMMIT")
fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
latencies, errors, i = [], [], 0
open(out + ".ready", "w").close()
while not os.path.exists(stop):
    i += 1
    t0 = time.perf_counter()
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                    (sys.argv[6], "user" if i % 2 else "assistant", f"live message {i}", time.time()))
        con.execute("UPDATE sessions SET message_count = message_count + 1, last_activity_at = ? WHERE id = ?",
                    (time.time(), sys.argv[6]))
        con.execute("COMMIT")
    except sqlite3.Error as exc:
        errors.append(str(exc))
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        i -= 1
        continue
    finally:
        latencies.append(time.perf_counter() - t0)
    run = sys.argv[7]
    line = json.dumps({"version": 1, "event_id": f"{run}:{i}", "seq": i, "run_id": run, "session_id": sys.argv[6],
                       "event": "token", "type": "token", "created_at": time.time(), "terminal": False,
                       "terminal_state": None, "payload": {"text": f"tok{i} "}}, separators=(",", ":")).encode()
    line += b"\n"
    os.write(fd, line[: len(line) // 2])
    time.sleep(0.0005)
    os.write(fd, line[len(line) // 2:])
    time.sleep(0.002)
os.close(fd)
con.close()
latencies.sort()
json.dump({"commits": i, "errors": errors, "max_ms": latencies[-1] * 1000,
           "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000, "median_ms": latencies[len(latencies) // 2] * 1000},
          open(out, "w"))
"""


def _db_facts(db: Path) -> dict:
    """Schema, user_version, application_id and every row, read with a plain read-only connection."""
    con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        return {
            "schema": sorted(
                con.execute("SELECT type, name, sql FROM sqlite_master").fetchall(),
                key=lambda r: (r[0], r[1]),
            ),
            "user_version": con.execute("PRAGMA user_version").fetchone()[0],
            "application_id": con.execute("PRAGMA application_id").fetchone()[0],
            "sessions": con.execute("SELECT * FROM sessions ORDER BY id").fetchall(),
            "messages": con.execute("SELECT * FROM messages ORDER BY id").fetchall(),
        }
    finally:
        con.close()


def _open_fds_on(path: Path) -> list[str]:
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            out.append(target)
    return out


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
@pytest.mark.parametrize("mode", ["wal", "delete"])
def test_a_live_agent_is_never_blocked_broken_or_modified(tmp_path: Path, mode: str, record_property) -> None:
    d, home = demo(tmp_path / "home")
    db = d.state_db
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA journal_mode={mode}")
    con.execute("PRAGMA user_version = 7")
    con.execute("PRAGMA application_id = 4242")
    con.close()
    before = _db_facts(db)
    journal = d.session_dir / "_run_journal" / LIVE_SID / f"{LIVE_RUN}.jsonl"
    journal.parent.mkdir(parents=True)
    stop, out = tmp_path / "stop", tmp_path / "writer.json"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(journal), mode, str(stop), str(out), LIVE_SID, LIVE_RUN]
    )
    try:
        deadline = time.monotonic() + 30
        while not Path(str(out) + ".ready").exists():
            assert writer.poll() is None and time.monotonic() < deadline, "the agent did not start"
            time.sleep(0.01)
        rounds, seen = 0, 0
        start = time.monotonic()
        # At least 2 s, 4 rounds and 50 of the agent's commits; a loaded machine only makes it longer.
        while time.monotonic() - start < 2.0 or rounds < 4 or seen < 50:
            assert time.monotonic() - start < 120 and writer.poll() is None
            w = inspect_everything(home, extra_ids=[LIVE_SID], plans=rounds % 3 == 0)
            assert _open_fds_on(db) == [], "a connection to state.db stayed open between calls"
            count = statedb.session_record(db, LIVE_SID)["messages"]
            assert count >= seen, "a later read saw fewer of the agent's messages"
            seen = count
            RawJournal.from_path(journal).stats()
            code, _, err = run_cli("show", LIVE_SID, "--home", str(d.home))
            assert code == 0 and "Traceback" not in err
            assert "locked" not in w.messages()
            rounds += 1
    finally:
        stop.touch()
        writer.wait(timeout=30)
    stats = json.loads(out.read_text())
    record_property("writer", stats)
    print(
        f"\n{mode}: {rounds} inspector rounds, {stats['commits']} agent commits, slowest commit "
        f"{stats['max_ms']:.1f} ms (p99 {stats['p99_ms']:.1f} ms, median {stats['median_ms']:.2f} ms)"
    )
    assert rounds >= 4 and stats["commits"] >= 50
    assert stats["errors"] == [], "the agent's writes failed while the inspector read"
    assert stats["max_ms"] < 200, f"the agent waited {stats['max_ms']:.0f} ms on a commit"
    assert seen > 0
    after = _db_facts(db)
    assert after["schema"] == before["schema"]
    assert (after["user_version"], after["application_id"]) == (7, 4242)
    assert [r for r in after["sessions"] if r[0] != LIVE_SID] == before["sessions"]
    assert after["messages"][: len(before["messages"])] == before["messages"]
    added = after["messages"][len(before["messages"]) :]
    assert [r[3] for r in added] == [f"live message {i}" for i in range(1, stats["commits"] + 1)]
    lines = journal.read_bytes().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, stats["commits"] + 1))
    if mode == "delete":
        assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()


@pytest.mark.parametrize("mode", ["wal", "delete"])
def test_reading_never_changes_a_quiet_state_db(tmp_path: Path, mode: str) -> None:
    """With no agent running: the database file's bytes and mtime stay exactly as they were.

    In WAL mode a read-only reader needs -wal/-shm; when they are missing and the folder is
    writable, SQLite creates them (spec state-db.md §8.4). They are the only files that may
    appear, the -wal stays empty, and the database file itself is untouched.
    """
    d, home = demo(tmp_path / "home")
    con = sqlite3.connect(d.state_db)
    con.execute(f"PRAGMA journal_mode={mode}")
    con.close()
    for side in ("-wal", "-shm", "-journal"):
        assert not Path(f"{d.state_db}{side}").exists()
    data, mtime = d.state_db.read_bytes(), d.state_db.stat().st_mtime_ns
    before = tree_state(d.home)
    for _ in range(2):
        inspect_everything(home)
    assert d.state_db.read_bytes() == data and d.state_db.stat().st_mtime_ns == mtime
    created = set(tree_state(d.home)) - set(before)
    side_files = {f"{d.state_db.name}-wal", f"{d.state_db.name}-shm"}
    assert {Path(c).name for c in created} <= (side_files if mode == "wal" else set())
    if mode == "wal" and Path(f"{d.state_db}-wal").exists():
        assert Path(f"{d.state_db}-wal").stat().st_size == 0
    side = ("state.db-wal", "state.db-shm")
    diff = [x for x in tree_diff(before, tree_state(d.home)) if not x.endswith(side)]
    assert diff == []


# ---------------------------------------------------------------- changed between preview and write


def _writable_plans(tmp_path: Path):
    d, home = demo(tmp_path / "home")
    s = d.sessions
    wanted = [
        ("materialize", None),
        ("rebuild-index", None),
        ("recover-journal", s["lost_response"]),
        ("repair-interrupted", s["stale_pending"]),
        ("restore-backup", s["shrunken"]),
    ]
    plans = []
    for action, sid in wanted:
        (plan,) = plan_action(make_context(home, CLOCK), action, sid)
        assert plan.changes and not plan.refusal, (action, plan.refusal)
        plans.append(plan)
    return d, plans


def _hermes_touch(path: Path) -> str:
    """What hermes might have done to ``path`` since the preview; returns the expected words."""
    if not path.exists():
        path.write_bytes(b'{"session_id": "raced"}')
        return "now exists"
    if path.name == "_index.json":
        path.unlink()
        return "was removed since the preview"
    path.write_bytes(path.read_bytes() + b" ")
    return "changed since the preview"


def test_every_file_of_every_plan_changed_after_the_preview_refuses_the_write(tmp_path: Path) -> None:
    tried = 0
    for i, plan0 in enumerate(_writable_plans(tmp_path / "count")[1]):
        for j in range(len(plan0.changes)):
            d, plans = _writable_plans(tmp_path / f"p{i}-{j}")
            plan = plans[i]
            target = plan.changes[j].path
            words = _hermes_touch(target)
            before = tree_state(d.home)
            log = WriteLog(tmp_path / f"state{i}-{j}")
            with pytest.raises(ApplyError) as exc:
                apply_plan(plan, log)
            assert str(target) in str(exc.value) and words in str(exc.value)
            assert "nothing was written" in str(exc.value)
            assert tree_diff(before, tree_state(d.home)) == []
            assert (
                log.records() == []
                and not (log.root / "backups").exists()
                or not any((log.root / "backups").iterdir())
            )
            tried += 1
    assert tried >= 7


def test_hermes_saving_while_the_write_is_prepared_refuses_it(tmp_path: Path, monkeypatch) -> None:
    """The second check, after staging and before any rename, catches a save made meanwhile."""
    d, plans = _writable_plans(tmp_path)
    plan = plans[2]  # recover-journal: the sidecar and the index
    target = plan.changes[-1].path
    real_stage = planmod._stage
    calls = []

    def stage(*args, **kwargs):
        calls.append(args[0])
        tmp = real_stage(*args, **kwargs)
        if len(calls) == 1:
            target.write_bytes(target.read_bytes() + b"\n")  # hermes saves now
        return tmp

    monkeypatch.setattr(planmod, "_stage", stage)
    before = tree_state(d.home)
    log = WriteLog(tmp_path / "state")
    with pytest.raises(ApplyError, match="changed while the write was being prepared") as exc:
        apply_plan(plan, log)
    assert str(target) in str(exc.value)
    rel = str(target.relative_to(d.home))
    assert tree_diff(before, tree_state(d.home)) == [f"changed {rel}"]  # hermes' save; no temp file
    assert target.read_bytes().endswith(b"\n")  # hermes' bytes stay
    assert log.records() == []


def test_the_cli_names_the_file_hermes_changed_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    d, _ = demo(tmp_path / "home")
    sid = d.sessions["stale_pending"]
    live = d.session_dir / f"{sid}.json"
    real_apply = planmod.apply_plan

    def hermes_saves_first(plan, log, **kw):
        live.write_bytes(live.read_bytes().replace(b'"title"', b'"title" ', 1))
        return real_apply(plan, log, **kw)

    monkeypatch.setattr(planmod, "apply_plan", hermes_saves_first)  # the CLI imports it when it writes
    code, out, _ = run_cli("repair", sid, "--action", "repair-interrupted", "--home", str(d.home), "--write")
    saved = live.read_bytes()
    assert code == 1
    assert "NOT WRITTEN" in out and f"{live} changed since the preview" in out
    assert live.read_bytes() == saved
    assert WriteLog.default().records() == []


def test_repair_all_writes_every_eligible_session(tmp_path: Path) -> None:
    d, _ = demo(tmp_path / "home")
    sid = d.sessions["stale_pending"]
    obj = json.loads((d.session_dir / f"{sid}.json").read_bytes())
    obj["session_id"] = "stale_copy_01"
    (d.session_dir / "stale_copy_01.json").write_text(json.dumps(obj, ensure_ascii=False, indent=2))
    code, out, _ = run_cli(
        "repair",
        "--all",
        "--action",
        "repair-interrupted",
        "--home",
        str(d.home),
        "--write",
        "--now",
        str(CLOCK.now),
        "--server-started-at",
        str(CLOCK.server_started_at),
    )
    assert "NOT WRITTEN" not in out and code == 0
    assert len(WriteLog.default().records()) == 2


def test_a_hermes_process_saving_in_a_loop_never_sees_a_torn_file(tmp_path: Path) -> None:
    """A real second process replaces the sidecar atomically, as hermes does, as fast as it can.

    The inspector plans and writes repeatedly. Each write is either refused (the file moved) or
    done; the file always parses; no temp file is left. (That no save is lost meanwhile, even
    between the last check and the swap, is test_write_path.py's
    test_a_real_hermes_process_saving_in_a_loop_loses_no_save.)
    """
    d, home = demo(tmp_path / "home")
    sid = d.sessions["shrunken"]
    live = d.session_dir / f"{sid}.json"
    (tmp_path / "hermes-data").write_bytes(live.read_bytes())  # the shrunken session hermes holds
    hermes = subprocess.Popen(
        [
            sys.executable,
            "-c",
            r"""
import os, sys, time
path, stop, source = sys.argv[1:4]
data = open(source, "rb").read()
i = 0
open(stop + ".ready", "w").close()
while not os.path.exists(stop):
    i += 1
    tmp = path + f".tmp.{os.getpid()}.{i}"
    with open(tmp, "wb") as fh:
        fh.write(data.replace(b'"title": "', f'"title": "{i} '.encode(), 1))
    os.replace(tmp, path)
    time.sleep(0.001)
""",
            str(live),
            str(tmp_path / "stop"),
            str(tmp_path / "hermes-data"),
        ]
    )
    outcomes = {"written": 0, "refused": 0}
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "stop.ready").exists():
            assert hermes.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        log = WriteLog(tmp_path / "state")
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            (plan,) = plan_action(make_context(home, CLOCK), "restore-backup", sid)
            if not plan.changes:
                continue
            try:
                apply_plan(plan, log)
                outcomes["written"] += 1
            except ApplyError as exc:
                assert "changed" in str(exc) or "now exists" in str(exc) or "removed" in str(exc), str(exc)
                outcomes["refused"] += 1
            json.loads(live.read_bytes())
    finally:
        (tmp_path / "stop").touch()
        hermes.wait(timeout=30)
    print(f"\nwhile hermes saved in a loop: {outcomes['written']} writes done, {outcomes['refused']} refused")
    assert outcomes["written"] + outcomes["refused"] > 0
    assert not [p for p in d.session_dir.iterdir() if ".inspector.tmp." in p.name]


# ---------------------------------------------------------------- hermes-webui running


def test_a_running_webui_is_detected_and_the_preview_warns(tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (d.home / "webui.pid").write_text(f"{server.pid}\n")
        assert webui_pid(home) == server.pid
        assert f"pid {server.pid}" in running_warning(home)
        (plan,) = plan_action(make_context(home, CLOCK), "restore-backup", d.sessions["shrunken"])
        assert plan.warnings[0].startswith("hermes-webui appears to be running")
        code, out, _ = run_cli(
            "repair", d.sessions["shrunken"], "--action", "restore-backup", "--home", str(d.home)
        )
        assert code == 0 and f"! hermes-webui appears to be running (pid {server.pid}" in out
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    assert webui_pid(home) is None  # the process is gone: the pid file is stale
    (plan,) = plan_action(make_context(home, CLOCK), "restore-backup", d.sessions["shrunken"])
    assert not any("running" in w for w in plan.warnings)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"abc",
        b"-1",
        b"0",
        b"99999999999999999999",
        b"1" * 10_000,
        b"12\x0034",
        b" 1_0 ",
        b"\xff\xfe",
        b"+1",
        "\u0661".encode(),
    ],
)
def test_a_stale_or_hostile_pid_file_is_ignored(tmp_path: Path, content: bytes) -> None:
    home = locate_home(tmp_path, env={})
    (tmp_path / "webui.pid").write_bytes(content)
    assert webui_pid(home) is None
    assert running_warning(home) is None


def test_a_pid_file_that_is_a_fifo_or_a_folder_does_not_block(tmp_path: Path) -> None:
    home = locate_home(tmp_path, env={})
    os.mkfifo(tmp_path / "webui.pid")
    result: list = []
    t = threading.Thread(target=lambda: result.append(webui_pid(home)), daemon=True)
    t.start()
    t.join(5)
    assert result == [None], "reading a FIFO named webui.pid blocked"
    (tmp_path / "webui.pid").unlink()
    (tmp_path / "webui.pid").mkdir()
    assert webui_pid(home) is None
