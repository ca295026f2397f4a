"""Hermes keeps running while the inspector works: a live agent, a live WebUI, files changing under it.

* A separate process plays the agent: it commits to state.db (WAL and rollback-journal mode) and
  appends to a run journal, line by line in two halves (so a torn last line is often on disk),
  while the inspector lists, shows, audits, previews repairs and reads the raw journal over and
  over. Nothing may fail and the inspector never blocks the agent's writer, pinned by structure,
  not by a wall clock that a busy machine breaks: in WAL mode the agent never has to wait at all;
  in either mode no commit ever exhausts hermes' 1 s busy wait, the inspector holds a read
  transaction on state.db only while SQLite itself steps or fetches (never while its own code
  runs), and no connection stays open between calls. Afterwards state.db holds exactly the
  agent's data with the same schema, user_version and application_id. (The agent's commit
  latency is reported, not asserted: a speed figure, bench/agent_commits.py.)
* A file changed between preview and write (hermes saved meanwhile) refuses the write, writes
  nothing and names the file, whether it changed before apply, during apply, or under the CLI.
* A running hermes-webui is detected from <home>/webui.pid and a live process, and the preview
  warns; a stale or hostile pid file is ignored without error.
"""

from __future__ import annotations

import _sqlite3
import contextlib
import ctypes
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import weakref
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
# synchronous=OFF so that its commits wait on nothing but the inspector's locks. Each statement is
# first tried without waiting, so every time the agent found state.db locked is counted (``waits``);
# then it waits as hermes does, and a statement that still fails after that second is an error.
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
latencies, errors, waits, i = [], [], [], 0


def step(sql):
    con.execute("PRAGMA busy_timeout=0")
    try:
        con.execute(sql)
        return
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        waits.append(f"{sql.split()[0]}: {exc}")
    finally:
        con.execute("PRAGMA busy_timeout=1000")  # hermes' own wait
    con.execute(sql)


open(out + ".ready", "w").close()
while not os.path.exists(stop):
    i += 1
    t0 = time.perf_counter()
    try:
        step("BEGIN IMMEDIATE")
        con.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                    (sys.argv[6], "user" if i % 2 else "assistant", f"live message {i}", time.time()))
        con.execute("UPDATE sessions SET message_count = message_count + 1, last_activity_at = ? WHERE id = ?",
                    (time.time(), sys.argv[6]))
        step("COMMIT")
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
json.dump({"commits": i, "errors": errors, "waits": waits, "max_ms": latencies[-1] * 1000,
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


# The inspector's side of "never blocks the writer": SQLite's own answer, per connection, to "is a
# read transaction open?" (sqlite3_txn_state, SQLite >= 3.34), asked of every connection the
# inspector opens on state.db each time its Python code runs. A read transaction holds the SHARED
# lock that makes a rollback-journal agent's COMMIT wait; it may be open only while SQLite itself
# executes or fetches (the probe's cursor methods below), never while the inspector's own code
# runs, e.g. iterating a cursor row by row and working on each row, or keeping a statement open.
_LIB = ctypes.CDLL(_sqlite3.__file__)  # the SQLite library the sqlite3 module itself uses
_LIB.sqlite3_txn_state.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_LIB.sqlite3_txn_state.restype = ctypes.c_int
_LIB.sqlite3_db_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_LIB.sqlite3_db_filename.restype = ctypes.c_char_p


def _sqlite_handle(con: sqlite3.Connection) -> int:
    """The ``sqlite3 *`` of ``con``: the first field after the object header (CPython's
    pysqlite_Connection); checked against the database file name before it is trusted."""
    return ctypes.c_void_p.from_address(id(con) + object.__basicsize__).value or 0


class ReadProbe:
    """Watches the inspector's state.db connections in this process (every one is opened by
    ``statedb.open_readonly``, whose GuardedConnection class is swapped for a watched one)."""

    def __init__(self, db: Path) -> None:
        self.db = str(db.resolve())
        self.open: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # connection -> (handle, thread)
        self.local = threading.local()
        self.opened = 0
        self.held: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        probe = self

        class WatchedCursor(sqlite3.Cursor):
            def execute(self, *args):
                probe._enter()
                try:
                    return super().execute(*args)
                finally:
                    probe._leave()

            def fetchone(self):
                probe._enter()
                try:
                    return super().fetchone()
                finally:
                    probe._leave()

            def fetchmany(self, *args):
                probe._enter()
                try:
                    return super().fetchmany(*args)
                finally:
                    probe._leave()

            def fetchall(self):
                probe._enter()
                try:
                    return super().fetchall()
                finally:
                    probe._leave()

            def __next__(self):
                probe._enter()
                try:
                    return super().__next__()
                finally:
                    probe._leave()

        class WatchedConnection(statedb.GuardedConnection):
            def guard(self) -> None:
                super().guard()
                handle = _sqlite_handle(self)
                name = _LIB.sqlite3_db_filename(handle, b"main") if handle else None
                assert name and Path(name.decode()).is_file(), "not the connection's sqlite3 handle"
                if name.decode() == probe.db:  # the live agent's database (not a profile's)
                    probe.open[self] = (handle, threading.get_ident())
                    probe.opened += 1

            def cursor(self, factory=WatchedCursor):
                return super().cursor(factory)

            def execute(self, *args):
                return self.cursor().execute(*args)

            def close(self) -> None:
                probe.open.pop(self, None)
                super().close()

        self.code = {
            f.__code__
            for f in (
                *vars(WatchedCursor).values(),
                *vars(WatchedConnection).values(),
                self._enter,
                self._leave,
            )
            if hasattr(f, "__code__")
        }
        monkeypatch.setattr(statedb, "GuardedConnection", WatchedConnection)

    def _enter(self) -> None:
        self.local.inside = getattr(self.local, "inside", 0) + 1

    def _leave(self) -> None:
        self.local.inside -= 1

    def profile(self, frame, event: str, arg) -> None:
        if not self.open or getattr(self.local, "inside", 0) or event not in ("call", "c_call"):
            return
        code = frame.f_code
        if code in self.code or code.co_name.startswith("<"):  # the probe, a comprehension or genexpr
            return
        me = threading.get_ident()
        for handle, thread in list(self.open.values()):
            if thread == me and _LIB.sqlite3_txn_state(handle, None) != 0:
                what = getattr(arg, "__qualname__", "") if event == "c_call" else code.co_qualname
                at = frame
                while at is not None and "/inspector/" not in at.f_code.co_filename:
                    at = at.f_back
                where = f"{at.f_code.co_filename.rsplit('/inspector/', 1)[-1]}:{at.f_lineno}" if at else "?"
                self.held.append(f"inspector/{where} ({what})")

    @contextlib.contextmanager
    def watching(self):
        sys.setprofile(self.profile)
        threading.setprofile(self.profile)
        try:
            yield self
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
@pytest.mark.parametrize("mode", ["wal", "delete"])
def test_a_live_agent_is_never_blocked_broken_or_modified(
    tmp_path: Path, mode: str, record_property, monkeypatch: pytest.MonkeyPatch
) -> None:
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
        probe = ReadProbe(db)
        probe.install(monkeypatch)
        # At least 2 s, 4 rounds and 50 of the agent's commits; a loaded machine only makes it longer
        # (the 120 s cap only stops a hung test).
        while time.monotonic() - start < 2.0 or rounds < 4 or seen < 50:
            assert time.monotonic() - start < 120 and writer.poll() is None
            with probe.watching():
                w = inspect_everything(home, extra_ids=[LIVE_SID], plans=rounds % 3 == 0)
                assert _open_fds_on(db) == [], "a connection to state.db stayed open between calls"
                count = statedb.session_record(db, LIVE_SID)["messages"]
                assert count >= seen, "a later read saw fewer of the agent's messages"
                seen = count
                RawJournal.from_path(journal).stats()
                code, _, err = run_cli("show", LIVE_SID, "--home", str(d.home))
            assert code == 0 and "Traceback" not in err
            assert "locked" not in w.messages()
            assert probe.held == [], (
                "a read transaction on state.db stayed open while the inspector's code ran:\n"
                + ("\n".join(sorted(set(probe.held))))
            )
            rounds += 1
    finally:
        stop.touch()
        writer.wait(timeout=30)
    stats = json.loads(out.read_text())
    record_property("writer", stats)
    print(
        f"\n{mode}: {rounds} inspector rounds ({probe.opened} state.db connections), {stats['commits']} agent "
        f"commits, {len(stats['waits'])} found state.db locked, slowest commit {stats['max_ms']:.1f} ms "
        f"(p99 {stats['p99_ms']:.1f} ms, median {stats['median_ms']:.2f} ms)"
    )
    assert rounds >= 4 and stats["commits"] >= 50
    assert probe.opened >= rounds, "the probe did not see the inspector's state.db reads"
    # No commit ever waited out hermes' own 1 s busy handler (then hermes' write fails).
    assert stats["errors"] == [], "the agent's writes failed while the inspector read"
    if mode == "wal":
        # Readers never block a WAL writer: the agent finding state.db locked at all means the
        # inspector took a write lock or ran a checkpoint.
        assert stats["waits"] == [], f"the agent waited on the inspector: {stats['waits'][:5]}"
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
        # At least 1.5 s and 5 tries, however slow the machine (the 120 s cap only stops a hang).
        start = time.monotonic()
        while time.monotonic() - start < 1.5 or outcomes["written"] + outcomes["refused"] < 5:
            assert time.monotonic() - start < 120 and hermes.poll() is None
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
    assert outcomes["written"] + outcomes["refused"] >= 5
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
