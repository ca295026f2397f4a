"""``repair --write`` of a materialize, with its early staging, while hermes-webui is running and saving.

The early staging (``inspector.plan.EarlyStaging``) writes the new sidecars and the new index under
dot-names in the sessions folder, and copies the index's backup, while the plan is still being made;
the write takes them only after its own checks, under the write lock. hermes-webui takes no lock of
ours: it saves sidecars and the index, creates the sidecar of a chat a user opens, sweeps ``*.tmp.*``
files older than an hour. ``tests/safety/hermes_like.py`` does each of these exactly as hermes does,
in another process, on command (at a named point of the inspector's run: no time window) or in a
loop of its own.

Rules pinned (each test is named after its rule):
* no save of hermes is lost: a save the write replaced is in the write's backup or rescued;
* a sidecar hermes created first stays hermes': the write is refused, naming it, or skips it;
* the index is the inspector's complete one or hermes' own, never an older one brought back;
* undo never puts an older index back over a newer hermes save;
* a staged file hermes swept is staged again (even one gone before its staging thread could look
  at it), or the write is refused with nothing changed;
* the old version an exchange moved to a temp name, swept there by hermes at once (older than an
  hour), leaves a complete write whose backup holds it, not a half-written home;
* a run killed at any point of its early staging changes nothing hermes lists, and the next run
  removes what it left (staged files, early copies, also for a chat hermes created since) and
  writes the same bytes a quiet run writes;
* no staged dot-file and no early copy is ever left behind by a run that ended.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from inspector import cli
from inspector import plan as planmod
from inspector.plan import WriteLog
from tests.recovery_helpers import home_dirs, seed_state_db, sidecar, write_json

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="hermes' stand-in uses flock")

ROOT = Path(__file__).resolve().parents[2]
HERMES_LIKE = Path(__file__).with_name("hermes_like.py")
ROWS = planmod.PARALLEL_FSYNC_MIN + 8  # enough new sidecars to be staged side by side (a materialize)
WATCH = "row005"  # the chat a user opens while the inspector materializes it
TURN = 60  # saves per turn of the live hermes: streaming checkpoints, then one with the index
NOW = "1780000000"
HANG = 60.0  # seconds: only stops a hang, never a time window a test depends on
TEMP_MARK = ".inspector.tmp."
SAVED_MESSAGE = "hermes-webui saved this session during the write"


@pytest.fixture(autouse=True)
def _either_way(both_ways) -> None:
    """Every race here is met the same whether the small staged files are flushed together or
    fsynced one by one (a killed command's own process decides for itself)."""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- the home and hermes


def _home(tmp_path: Path, old_index: bool = False) -> Path:
    """Three chats with sidecars and hermes' index of them; ROWS state.db chats without one."""
    home, sessions, db = home_dirs(tmp_path)
    rows = []
    for i, sid in enumerate(("live", "have1", "have2")):
        payload = sidecar(sid, 2, updated_at=1_000.0 + i, created_at=900.0)
        write_json(sessions / f"{sid}.json", payload)
        rows.append({"session_id": sid, "title": payload["title"], "updated_at": payload["updated_at"]})
    index = sessions / "_index.json"
    index.write_bytes(json.dumps(rows[::-1], ensure_ascii=False, indent=2).encode("utf-8"))
    if old_index:  # nobody has saved for two hours
        os.utime(index, (os.stat(index).st_atime - 7200, os.stat(index).st_mtime - 7200))
    for i in range(ROWS):
        seed_state_db(db, sid=f"row{i:03d}", messages=2, create=i == 0)
    return home


def _sessions(home: Path) -> Path:
    return home / "webui" / "sessions"


def _hermes_version(tmp_path: Path) -> Path:
    """The sidecar hermes writes for WATCH when the user opens it (not the inspector's bytes)."""
    path = tmp_path / "hermes-watch.json"
    path.write_bytes(
        json.dumps(sidecar(WATCH, 2, title="opened in the WebUI", updated_at=5.0), indent=2).encode()
    )
    return path


class Hermes:
    """The hermes-like process on a home's sessions folder; :meth:`ask` waits for its answer."""

    def __init__(self, sessions: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERMES_LIKE), str(sessions)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._lock = threading.Lock()  # asked from the staging threads too

    def ask(self, command: str) -> dict:
        with self._lock:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], HANG)
            assert ready, f"hermes did not answer {command!r}"
            line = self.proc.stdout.readline()
            assert line, f"hermes ended on {command!r}"
            return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            with self._lock:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            self.proc.wait(timeout=HANG)


@pytest.fixture
def hermes_for():
    started: list[Hermes] = []

    def start(home: Path) -> Hermes:
        h = Hermes(_sessions(home))
        started.append(h)
        return h

    yield start
    for h in started:
        h.close()


# ---------------------------------------------------------------- the inspector's run


def _state(tmp_path: Path, monkeypatch) -> WriteLog:
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    return WriteLog.default()


def _repair(home: Path, capsys) -> tuple[int, dict]:
    """``hermes-inspector repair --action materialize --all --write`` (the early-staging path)."""
    argv = ["repair", "--home", str(home), "--action", "materialize", "--all", "--write", "--json"]
    code = cli.main([*argv, "--now", NOW])
    return code, json.loads(capsys.readouterr().out)


def _undo(write_id: str, capsys) -> tuple[int, str]:
    code = cli.main(["undo", write_id])
    out = capsys.readouterr()
    return code, out.out + out.err


def _listed(home: Path) -> dict[str, bytes]:
    """What hermes lists: every ``*.json`` of the sessions folder, with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(_sessions(home).glob("*.json"))}


def _leftovers(home: Path, log: WriteLog) -> list[str]:
    """Staged dot-files in the sessions folder, early copies in the state folder."""
    staged = [p.name for p in _sessions(home).iterdir() if TEMP_MARK in p.name]
    backups = log.root / "backups"
    early = [p.name for p in backups.iterdir() if p.name.startswith(".early-")] if backups.is_dir() else []
    return staged + early


def _kept(log: WriteLog) -> set[str]:
    """sha256 of every version a completed write displaced (its backups) and every rescued file."""
    kept = {f["sha256_before"] for rec in log.records() if rec.complete for f in rec.files}
    rescued = log.root / "rescued"
    if rescued.is_dir():
        kept |= {sha(p.read_bytes()) for p in rescued.iterdir()}
    return kept


def _index_ids(home: Path) -> set[str]:
    return {row["session_id"] for row in json.loads((_sessions(home) / "_index.json").read_bytes())}


def _complete_index(home: Path) -> bool:
    """The index lists every chat hermes lists (no row dropped)."""
    listed = {name[: -len(".json")] for name in _listed(home) if not name.startswith("_")}
    return _index_ids(home) == listed


def _after_of(log: WriteLog, name: str) -> set[str]:
    """sha256 of every version of ``name`` a materialize wrote (not an undo)."""
    return {
        f["sha256_after"]
        for rec in log.records()
        if rec.action == "materialize"
        for f in rec.files
        if Path(f["path"]).name == name
    }


def _written(out: dict) -> dict:
    (w,) = out["written"]
    return w


def _hook(monkeypatch, owner, name: str, before=None, after=None) -> None:
    """Wrap ``owner.name``: ``before(*args)`` runs first, ``after(result, *args)`` once it returned."""
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):
        if before is not None:
            before(*args)
        result = real(*args, **kwargs)
        if after is not None:
            after(result, *args)
        return result

    static = isinstance(owner, type) and isinstance(owner.__dict__.get(name), staticmethod)
    monkeypatch.setattr(owner, name, staticmethod(wrapper) if static else wrapper)


def _once(action):
    """``action`` the first time only (the hook may be reached again by a later run)."""
    done = threading.Event()

    def run(*args):
        if not done.is_set():
            done.set()
            action(*args)

    return run


def _quiet_run(tmp_path: Path, capsys, monkeypatch) -> dict[str, bytes]:
    """What a run on the same home with no hermes at all writes (every listed file)."""
    home = _home(tmp_path / "quiet")
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "quiet-state"))
    code, out = _repair(home, capsys)
    assert code == 0, out
    return {k: v.replace(str(home).encode(), b"HOME") for k, v in _listed(home).items()}


def _same_as(home: Path, quiet: dict[str, bytes]) -> None:
    got = {k: v.replace(str(home).encode(), b"HOME") for k, v in _listed(home).items()}
    assert got == quiet


# ---------------------------------------------------------------- 1. a live hermes


def test_a_live_hermes_saving_and_opening_a_chat_being_materialized_loses_nothing(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """hermes runs turns on a chat: streaming checkpoints (its sidecar only), then a save with the
    index, over and over. When it sees the inspector staging the sidecar of WATCH, it creates that
    sidecar itself (a user opened the chat). The first run waits, under the write lock, for that
    sidecar (an event, not a time); later runs go as they go, each write undone at once (undo is
    a write too) so that the next run materializes again. Every outcome is allowed except a loss:
    each of hermes' saves a write replaced is in a backup or rescued, WATCH stays hermes', no
    staged file or early copy is left, and once hermes is quiet the index is the inspector's
    complete one."""
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    source = _hermes_version(tmp_path)
    watch = _sessions(home) / f"{WATCH}.json"
    hermes = hermes_for(home)

    def until_hermes_created(*_args) -> None:
        deadline = HANG
        while not watch.exists():  # hermes creates it as soon as it sees WATCH staged
            assert deadline > 0, "hermes never created the sidecar it saw staged"
            threading.Event().wait(0.005)
            deadline -= 0.005

    _hook(monkeypatch, planmod, "_apply_locked", before=_once(until_hermes_created))
    assert hermes.ask(f"live live {WATCH} {source} {TURN}") == {"started": True}
    outcomes: list[str] = []
    for _ in range(8):
        code, out = _repair(home, capsys)
        w = _written(out)
        if "error" in w:
            assert code == 1 and w["outcome"] == "nothing", w
            outcomes.append("refused")
            if len(outcomes) == 1:  # hermes' sidecar came first: refused, naming it
                assert f"{WATCH}.json now exists" in w["error"], w["error"]
            assert _leftovers(home, log) == []
            continue
        outcomes.append("written")
        code, text = _undo(w["write_id"], capsys)
        if code != 0:  # hermes saved the index after the write: undo keeps that save
            kept = ("changed after the write; undo would lose that change", "changed since the preview")
            assert any(k in text for k in (*kept, SAVED_MESSAGE)), text
            outcomes.append("undo refused")
            break
        outcomes.append("undone")
    report = hermes.ask("stop")
    assert report["error"] is None, report["error"]
    if outcomes[-1] not in ("written", "undo refused"):  # hermes is quiet now: the write goes through
        code, out = _repair(home, capsys)
        assert code == 0 and "error" not in _written(out), out
        outcomes.append("written when quiet")
    print(
        f"\nhermes saved {report['saves']} times (its index every {TURN}th); the inspector's runs: "
        f"{outcomes}; hermes' saves a write replaced: {len(report['replaced'])}"
    )
    assert report["created"] == {
        "created": True,
        "sha256": sha(source.read_bytes()),
        "index": report["created"]["index"],
    }
    assert watch.read_bytes() == source.read_bytes()  # hermes' sidecar stays hermes'
    lost = [h for h in report["replaced"] if h not in _kept(log)]
    assert lost == [], f"{len(lost)} of hermes' saves were replaced and are in no backup"
    assert _leftovers(home, log) == []
    # the index is the inspector's complete one, or the last hermes saved (after the write)
    final = sha((_sessions(home) / "_index.json").read_bytes())
    assert final in _after_of(log, "_index.json") | {report["last_index"]}
    assert final == report["last_index"] or _complete_index(home)
    assert {f"row{i:03d}.json" for i in range(ROWS)} <= set(_listed(home))


# ---------------------------------------------------------------- 1. hermes creates a sidecar being materialized


def test_a_sidecar_hermes_creates_while_it_is_staged_stays_hermes_and_the_write_is_refused(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    source = _hermes_version(tmp_path)
    hermes = hermes_for(home)
    made: list[dict] = []

    def create_it(
        result, change, umask, *rest
    ) -> None:  # WATCH's new sidecar is staged: the user opens the chat
        if change.path.name == f"{WATCH}.json" and not made:
            made.append(hermes.ask(f"create {WATCH} {source}"))

    _hook(monkeypatch, planmod.EarlyStaging, "_stage_one", after=create_it)
    code, out = _repair(home, capsys)
    assert made and made[0]["created"], made
    w = _written(out)
    assert code == 1 and w["outcome"] == "nothing" and w["written_files"] == []
    assert f"{WATCH}.json now exists (it did not when the preview was made)" in w["error"]
    assert "nothing was written" in w["error"]
    listed = _listed(home)
    assert listed[f"{WATCH}.json"] == source.read_bytes()
    assert [n for n in listed if n.startswith("row")] == [f"{WATCH}.json"]  # none of the inspector's
    assert sha(listed["_index.json"]) == made[0]["index"]  # hermes' own index, with its new row
    assert _leftovers(home, log) == [] and log.records() == []
    # The next run skips the chat hermes made and writes the rest; hermes' sidecar is untouched.
    code, out = _repair(home, capsys)
    assert code == 0 and "error" not in _written(out), out
    assert _listed(home)[f"{WATCH}.json"] == source.read_bytes()
    assert not any(f["path"].endswith(f"/{WATCH}.json") for f in _written(out)["files"])
    assert _complete_index(home) and _leftovers(home, log) == []


def test_a_sidecar_hermes_creates_during_the_swaps_stays_hermes_and_nothing_is_written(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    source = _hermes_version(tmp_path)
    hermes = hermes_for(home)
    before = _listed(home)
    made: list[dict] = []

    def create_it(slot) -> None:  # checked, staged, some sidecars linked in: hermes creates WATCH now
        if slot.change.path.name == f"{WATCH}.json" and not made:
            made.append(hermes.ask(f"create {WATCH} {source}"))

    _hook(monkeypatch, planmod, "_swap", before=create_it)
    code, out = _repair(home, capsys)
    assert made and made[0]["created"], made
    w = _written(out)
    assert code == 1 and w["outcome"] == "nothing", w
    assert SAVED_MESSAGE in w["error"] and f"{WATCH}.json holds its newer save, which is kept" in w["error"]
    after = _listed(home)
    assert after.pop(f"{WATCH}.json") == source.read_bytes()
    assert sha(after.pop("_index.json")) == made[0]["index"]
    before.pop("_index.json")
    assert after == before  # every sidecar the write had linked in is taken back
    assert _leftovers(home, log) == [] and not (log.root / "rescued").exists()


def test_a_hermes_save_over_a_sidecar_just_linked_in_is_kept_when_the_write_is_put_back(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """The write has linked WATCH's new sidecar in; the user opens that chat at once and hermes
    saves it (its sidecar, then its index). The write then finds hermes' index where it swaps its
    own and puts everything back: the sidecars it created go, but WATCH now holds hermes' save,
    which is no longer the write's file: it stays, and so does hermes' index."""
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    hermes = hermes_for(home)
    before = _listed(home)
    saved: list[dict] = []

    def save_it(result, slot) -> None:
        if slot.change.path.name == f"{WATCH}.json" and not saved:
            saved.append(hermes.ask(f"save {WATCH}"))

    _hook(monkeypatch, planmod, "_swap", after=save_it)
    code, out = _repair(home, capsys)
    w = _written(out)
    assert saved and code == 1 and w["outcome"] == "nothing" and SAVED_MESSAGE in w["error"], w
    after = _listed(home)
    assert sha(after.pop(f"{WATCH}.json")) == saved[0]["sidecar"]
    assert sha(after.pop("_index.json")) == saved[0]["index"]
    before.pop("_index.json")
    assert after == before
    assert _leftovers(home, log) == [] and not (log.root / "rescued").exists()


# ---------------------------------------------------------------- 2. the seams: hermes saves the index


def test_an_index_save_after_the_early_backup_refuses_the_write_and_undo_never_restores_an_older_index(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """The index's backup is copied as soon as the index is read; hermes saves the index right
    after. The write is refused (the index changed since the preview) and the early copy is
    removed, never a backup. The next run backs up hermes' save, the one it displaced; when hermes
    saves again after that write, undo refuses rather than put an older index over it."""
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    hermes = hermes_for(home)
    index = _sessions(home) / "_index.json"
    saved: list[dict] = []

    def save_now(result, self, before) -> None:  # the early copy of the index is on disk
        if not saved:
            assert sha(Path(result[0]).read_bytes()) == sha(before) != ""
            saved.append(hermes.ask("save live"))

    _hook(monkeypatch, planmod.EarlyStaging, "_back_up", after=save_now)
    code, out = _repair(home, capsys)
    assert saved
    w = _written(out)
    assert code == 1 and w["outcome"] == "nothing"
    assert f"{index} changed since the preview" in w["error"]
    assert sha(index.read_bytes()) == saved[0]["index"]
    assert _leftovers(home, log) == [] and log.records() == []
    assert not [p for p in (log.root / "backups").iterdir()]  # no write's backup, no early copy
    # The next run: its backup of the index is hermes' save, the version it displaced.
    hermes_index = index.read_bytes()
    code, out = _repair(home, capsys)
    w = _written(out)
    assert code == 0 and "error" not in w, out
    (entry,) = [f for f in log.records()[-1].files if f["path"] == str(index)]
    assert Path(entry["backup"]).read_bytes() == hermes_index
    assert _complete_index(home)
    # hermes saves again: undo must not bring the older index back over that save.
    newer = hermes.ask("save live")
    code, text = _undo(w["write_id"], capsys)
    assert code != 0 and f"{index} changed after the write; undo would lose that change" in text
    assert sha(index.read_bytes()) == newer["index"]
    assert _leftovers(home, log) == []


def test_an_index_save_between_the_last_check_and_the_swap_is_kept_and_nothing_is_written(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    hermes = hermes_for(home)
    before = _listed(home)
    saved: list[dict] = []

    def save_now(slot) -> None:  # every new sidecar linked in; the index is next
        if slot.change.path.name == "_index.json" and not saved:
            saved.append(hermes.ask("save live"))

    _hook(monkeypatch, planmod, "_swap", before=save_now)
    code, out = _repair(home, capsys)
    w = _written(out)
    assert saved and code == 1 and w["outcome"] == "nothing" and SAVED_MESSAGE in w["error"], w
    after = _listed(home)
    assert sha(after["_index.json"]) == saved[0]["index"]
    assert sha(after["live.json"]) == saved[0]["sidecar"]
    assert set(after) == set(before)  # the new sidecars are taken back
    assert _leftovers(home, log) == []


# ---------------------------------------------------------------- 2. the seams: hermes' sweep of *.tmp.*


def test_staged_files_hermes_sweeps_before_the_write_takes_them_are_staged_again(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """hermes' clock runs two hours ahead (or the files' mtimes say they are old): its sweep removes
    every staged file while the write waits for the lock. The write stages each again and writes
    exactly what a quiet run writes."""
    quiet = _quiet_run(tmp_path, capsys, monkeypatch)
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    hermes = hermes_for(home)
    swept: list[list[str]] = []

    def sweep_now(*_args) -> None:  # under the lock, once every early staging thread is done
        early = planmod._EARLY.get()
        for _change, staged, *_ in list(early._staged.values()):
            staged.result()
        swept.append(hermes.ask("sweep 7200")["swept"])

    _hook(monkeypatch, planmod, "_apply_locked", before=_once(sweep_now))
    code, out = _repair(home, capsys)
    assert code == 0 and "error" not in _written(out), out
    assert len(swept[0]) == ROWS + 1 and all(TEMP_MARK in n for n in swept[0])  # every sidecar, the index
    _same_as(home, quiet)
    assert _leftovers(home, log) == []


def test_staged_files_hermes_sweeps_after_the_write_took_them_refuse_it_with_nothing_changed(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """The sweep lands after the write took the staged files, before the first is linked in: the
    write links nothing that is gone (a link of a removed name fails), puts nothing in place and
    says so; the next run writes what a quiet run writes."""
    quiet = _quiet_run(tmp_path, capsys, monkeypatch)
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    hermes = hermes_for(home)
    before = _listed(home)
    swept: list[list[str]] = []

    def sweep_now(slot) -> None:
        swept.append(hermes.ask("sweep 7200")["swept"])

    _hook(monkeypatch, planmod, "_swap", before=_once(sweep_now))
    code, out = _repair(home, capsys)
    w = _written(out)
    assert swept and swept[0] and code == 1 and w["outcome"] == "nothing", w
    assert "no file was changed" in w["error"] or "nothing was changed" in w["error"], w["error"]
    assert _listed(home) == before and _leftovers(home, log) == []
    code, out = _repair(home, capsys)
    assert code == 0 and "error" not in _written(out), out
    _same_as(home, quiet)
    assert _leftovers(home, log) == []


def test_the_old_index_hermes_sweeps_off_the_exchange_leaves_a_complete_write(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """The index was last saved two hours ago. The exchange puts the new index in and the old one at
    the staged file's name, where hermes' sweep removes it at once (``*.tmp.*``, older than an
    hour). A save made during the write is never that old, so what was swept is the version the
    checks saw, which is in the write's backup: the write is complete (not a half-written home
    blamed on a save that never happened) and undo puts the old index back."""
    home = _home(tmp_path, old_index=True)
    log = _state(tmp_path, monkeypatch)
    hermes = hermes_for(home)
    index = _sessions(home) / "_index.json"
    old = index.read_bytes()
    swept: list[list[str]] = []
    real_exchange = planmod._exchange

    def exchange(a, b):
        real_exchange(a, b)
        if Path(b).name == "_index.json" and not swept:
            swept.append(hermes.ask("sweep 0")["swept"])  # hermes' own clock

    monkeypatch.setattr(planmod, "_exchange", exchange)
    code, out = _repair(home, capsys)
    w = _written(out)
    assert swept and len(swept[0]) == 1 and swept[0][0].startswith(f"._index.json{TEMP_MARK}"), swept
    assert code == 0 and "error" not in w, w
    assert _complete_index(home) and _leftovers(home, log) == []
    (entry,) = [f for f in log.records()[-1].files if f["path"] == str(index)]
    assert Path(entry["backup"]).read_bytes() == old
    code, text = _undo(w["write_id"], capsys)
    assert code == 0, text
    assert index.read_bytes() == old


def test_a_staged_file_hermes_sweeps_before_it_is_even_stamped_is_staged_again(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """The sweep lands between the staging thread's write of WATCH's file and its look at what it
    wrote (its inode, size and times): a file that is gone by then is no staged file at all. The
    write must stage it again, not take a name that no longer exists (which could only fail)."""
    quiet = _quiet_run(tmp_path, capsys, monkeypatch)
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    hermes = hermes_for(home)
    swept: list[list[str]] = []
    done = threading.Event()

    def sweep_now(result, target, *_args) -> None:
        if target.name == f"{WATCH}.json" and not swept:
            swept.append(hermes.ask("sweep 7200")["swept"])
            done.set()

    def after_the_sweep(*_args) -> None:  # the write takes the staged files once the sweep is over
        assert done.wait(HANG), "WATCH was never staged"

    _hook(monkeypatch, planmod, "_stage", after=sweep_now)
    _hook(monkeypatch, planmod, "_apply_locked", before=after_the_sweep)
    code, out = _repair(home, capsys)
    assert swept and any(n.startswith(f".{WATCH}.json{TEMP_MARK}") for n in swept[0]), swept
    assert code == 0 and "error" not in _written(out), out
    _same_as(home, quiet)
    assert _leftovers(home, log) == []


# ---------------------------------------------------------------- 2. the seams: killed while staging early

KILLED = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from inspector import cli
from inspector import plan as planmod

point, home = sys.argv[2], sys.argv[3]


def die():
    os.kill(os.getpid(), signal.SIGKILL)


stage_one, back_up, side_by_side = (
    planmod.EarlyStaging._stage_one, planmod.EarlyStaging._back_up, planmod._SideBySide.__init__
)
if point in ("first sidecar staged", "index staged"):
    def staged(change, umask, *rest):
        got = stage_one(change, umask, *rest)
        if point == "first sidecar staged" or change.path.name == "_index.json":
            die()
        return got
    planmod.EarlyStaging._stage_one = staticmethod(staged)
elif point == "index backed up":
    def backed_up(self, before):
        back_up(self, before)
        die()
    planmod.EarlyStaging._back_up = backed_up
elif point == "write lock taken":
    planmod._apply_locked = lambda *args, **kwargs: die()
elif point == "staged files taken":
    def taken(self, *args, **kwargs):
        side_by_side(self, *args, **kwargs)
        die()
    planmod._SideBySide.__init__ = taken
elif point == "backups written, logged, first swap next":
    planmod._swap = lambda slot: die()
cli.main(["repair", "--home", home, "--action", "materialize", "--all", "--write", "--now", sys.argv[4]])
raise SystemExit("the kill point was never reached")
"""
POINTS = (
    "first sidecar staged",
    "index backed up",
    "index staged",
    "write lock taken",
    "staged files taken",
    "backups written, logged, first swap next",
)


def _killed_at(point: str, home: Path, log: WriteLog) -> None:
    """``repair --write`` in a child process that SIGKILLs itself at ``point``."""
    env = {**os.environ, "HERMES_INSPECTOR_STATE_DIR": str(log.root)}
    proc = subprocess.run(
        [sys.executable, "-c", KILLED, str(ROOT), point, str(home), NOW],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,  # only a hang guard
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.parametrize("point", POINTS)
def test_a_run_killed_while_staging_early_changes_nothing_listed_and_the_next_run_cleans_up(
    tmp_path: Path, capsys, monkeypatch, point: str
) -> None:
    quiet = _quiet_run(tmp_path, capsys, monkeypatch)
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    before = _listed(home)
    _killed_at(point, home, log)
    assert _listed(home) == before  # nothing hermes lists changed
    code, out = _repair(home, capsys)
    assert code == 0 and "error" not in _written(out), out
    _same_as(home, quiet)
    assert _leftovers(home, log) == []
    # What was swept were the inspector's own bytes, some perhaps unfinished (killed mid-write):
    # a file it had only begun is kept in rescued/, as every version no logged write knows is.
    rescued = log.root / "rescued"
    listed = _listed(home)
    for p in rescued.iterdir() if rescued.exists() else ():
        target = p.name.split("-swept-.", 1)[1].split(TEMP_MARK, 1)[0]
        assert listed[target].startswith(p.read_bytes()), p.name


def test_what_a_killed_run_staged_for_a_chat_hermes_created_since_is_removed_by_the_next_run(
    tmp_path: Path, capsys, monkeypatch, hermes_for
) -> None:
    """Killed with every new file staged; then a user opens WATCH (hermes creates its sidecar).
    The next run no longer writes WATCH, and still removes the file the killed run staged for it
    (a dead process's temp file in a folder it writes). Its bytes, and those of the index the
    killed run staged (no longer what the next run writes), are versions no logged write knows:
    kept in ``rescued/`` first, as every swept unknown version is."""
    home = _home(tmp_path)
    log = _state(tmp_path, monkeypatch)
    source = _hermes_version(tmp_path)
    _killed_at("staged files taken", home, log)  # every file staged early is on disk by then
    (left,) = [p for p in _sessions(home).iterdir() if p.name.startswith(f".{WATCH}.json{TEMP_MARK}")]
    staged = left.read_bytes()
    (index,) = [p for p in _sessions(home).iterdir() if p.name.startswith(f"._index.json{TEMP_MARK}")]
    staged_index = index.read_bytes()  # rows the next run writes otherwise (WATCH is hermes' now)
    assert hermes_for(home).ask(f"create {WATCH} {source}")["created"]
    code, out = _repair(home, capsys)
    assert code == 0 and "error" not in _written(out), out
    assert _listed(home)[f"{WATCH}.json"] == source.read_bytes()
    assert _leftovers(home, log) == []
    rescued = sorted(p.read_bytes() for p in (log.root / "rescued").iterdir())
    assert rescued == sorted([staged, staged_index])
