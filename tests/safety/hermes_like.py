"""A stand-in for a running hermes-webui, for the race tests of ``repair --write`` (run as a script).

It writes the sessions folder exactly the way hermes-webui (df65251d5, ``api/models.py`` and
``api/session_recovery.py``) does, with no lock shared with the inspector (hermes has none):

* ``Session.save``: the sidecar to ``<sid>.tmp.<pid>.<tid>``, fsync, ``os.replace``; then the
  index's fast path (``_write_session_index(updates=[s])``): read ``_index.json``, keep the rows
  whose sidecar is listed (``*.json``), put the saved session's row in, sort by ``updated_at``,
  ``_index.tmp.<pid>.<tid>``, fsync, ``os.replace``;
* the state.db materialize of one chat a user opens (``session_recovery``): the new sidecar to
  ``<sid>.json.reconcile.tmp.<pid>.<tid>``, then ``os.link`` (create-or-fail: a sidecar already
  there is kept), then the index row;
* ``_cleanup_stale_tmp_files``: every ``*.tmp.*`` (pathlib's glob, dot-names included) whose mtime
  is more than 3600 s before *its* clock is removed (``sweep OFFSET``: a clock OFFSET s ahead).

Commands, one per line on stdin, each answered by one JSON line on stdout once done:
``save SID``, ``create SID FILE`` (FILE: the bytes hermes writes), ``sweep OFFSET``,
``live SID WATCH FILE TURN`` (save SID over and over in a thread until ``stop``, the index too
every TURN-th save, the others streaming checkpoints; the first time a temp file the inspector
staged for WATCH's sidecar is in the folder, create WATCH from FILE),
``stop`` (answers what the live loop did), ``quit``.

The live loop checks, before each save, that the sidecar and the index still hold what it last
wrote; when not, it waits for the inspector's write to be over (its flock on the folder: event
driven, no time window) and records the sha256 of its own save that was replaced.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path

STALE = 3600  # _STALE_TMP_AGE_SECONDS


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Hermes:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.index = folder / "_index.json"
        self.lock = threading.Lock()  # hermes' _INDEX_WRITE_LOCK and the session lock, in one
        self.saves = 0

    def _write(self, tmp: Path, final: Path, data: bytes) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)

    def _tmp(self, path: Path) -> Path:
        return path.with_suffix(f".tmp.{os.getpid()}.{threading.get_ident()}")

    def update_index(self, row: dict) -> bytes:
        """``_write_session_index(updates=[s])``: the fast path (read, modify, replace)."""
        listed = {p.stem for p in self.folder.glob("*.json") if not p.name.startswith("_")}
        existing = json.loads(self.index.read_bytes())
        existing = [e for e in existing if e.get("session_id") in listed]
        if row["session_id"] not in {e.get("session_id") for e in existing}:
            existing.append(row)
        existing = [row if e.get("session_id") == row["session_id"] else e for e in existing]
        existing.sort(key=lambda e: e.get("updated_at", 0), reverse=True)
        data = json.dumps(existing, ensure_ascii=False, indent=2).encode("utf-8")
        self._write(self._tmp(self.index), self.index, data)
        return data

    def save(self, sid: str, skip_index: bool = False) -> tuple[bytes, bytes | None]:
        """``Session.save()``: a new title and ``updated_at`` each time (a turn); ``skip_index``: a
        streaming checkpoint's ``save(skip_index=True)`` (the sidecar only)."""
        with self.lock:
            self.saves += 1
            path = self.folder / f"{sid}.json"
            session = json.loads(path.read_bytes())
            session["title"] = f"save {self.saves}"
            session["updated_at"] = 2_000_000_000.0 + self.saves
            data = json.dumps(session, ensure_ascii=False, indent=2).encode("utf-8")
            self._write(self._tmp(path), path, data)
            if skip_index:
                return data, None
            row = {k: session.get(k) for k in ("session_id", "title", "updated_at")}
            row["message_count"] = len(session.get("messages") or [])
            return data, self.update_index(row)

    def create(self, sid: str, source: Path) -> dict:
        """The materialize of one state.db row: create-or-fail with ``os.link``."""
        with self.lock:
            target = self.folder / f"{sid}.json"
            data = source.read_bytes()
            tmp = target.with_suffix(f".json.reconcile.tmp.{os.getpid()}.{threading.get_ident()}")
            tmp.write_bytes(data)
            try:
                os.link(tmp, target)
                made = True
            except FileExistsError:
                made = False  # a live sidecar appeared meanwhile: hermes keeps it
            finally:
                tmp.unlink()
            index = None
            if made:
                session = json.loads(data)
                row = {k: session.get(k) for k in ("session_id", "title", "updated_at")}
                row["message_count"] = len(session.get("messages") or [])
                index = sha(self.update_index(row))
            return {"created": made, "sha256": sha(data), "index": index}

    def sweep(self, offset: float) -> list[str]:
        """``_cleanup_stale_tmp_files`` on a clock ``offset`` seconds ahead."""
        cutoff = time.time() + offset - STALE
        gone = []
        for p in self.folder.glob("*.tmp.*"):
            try:
                if p.stat().st_mtime < cutoff:
                    p.unlink(missing_ok=True)
                    gone.append(p.name)
            except OSError:
                pass
        return sorted(gone)


def write_in_progress(folder: Path) -> bool:
    """An inspector write holds a flock on the sessions folder from its first check to its end."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


class Live(threading.Thread):
    def __init__(self, hermes: Hermes, sid: str, watch: str, source: Path, turn: int) -> None:
        super().__init__(daemon=True)
        self.hermes, self.sid, self.watch, self.source, self.turn = hermes, sid, watch, source, turn
        self.stop = threading.Event()
        self.replaced: list[str] = []
        self.created: dict | None = None
        self.last: dict[str, bytes] = {}
        self.error: str | None = None

    def read(self, path: Path) -> bytes:
        """One whole version (every writer replaces atomically). Without an exchange the inspector
        renames the old file aside before linking its own in: the name is absent for microseconds."""
        give_up = time.monotonic() + 60  # only a hang guard
        while True:
            try:
                return path.read_bytes()
            except FileNotFoundError:
                if time.monotonic() > give_up:
                    raise
                time.sleep(0.0002)

    def check(self) -> None:
        for path, last in list(self.last.items()):
            if self.read(path) == last:
                continue
            give_up = time.monotonic() + 60  # only a hang guard: the wait is for the write's end
            while write_in_progress(self.hermes.folder):
                if time.monotonic() > give_up:
                    raise SystemExit("an inspector write held the folder for 60 s")
                time.sleep(0.001)
            now = self.read(path)
            if now != last:
                self.replaced.append(sha(last))
                self.last[path] = now  # counted once

    def run(self) -> None:
        stage = f".{self.watch}.json.inspector.tmp."
        sidecar = self.hermes.folder / f"{self.sid}.json"
        try:
            while not self.stop.is_set():
                self.check()
                if self.created is None and any(n.startswith(stage) for n in os.listdir(self.hermes.folder)):
                    self.created = self.hermes.create(self.watch, self.source)
                    # its index save is checked like any other
                    self.last[self.hermes.index] = self.read(self.hermes.index)
                # a turn: streaming checkpoints (the sidecar only), then the save with the index
                data, index = self.hermes.save(self.sid, skip_index=self.hermes.saves % self.turn != 0)
                self.last[sidecar] = data
                if index is not None:
                    self.last[self.hermes.index] = index
        except BaseException as exc:  # noqa: BLE001 - reported to the test, which fails on it
            self.error = f"{type(exc).__name__}: {exc}"


def main() -> None:
    hermes = Hermes(Path(sys.argv[1]))
    live: Live | None = None
    for line in sys.stdin:
        cmd, *args = line.split()
        if cmd == "save":
            data, index = hermes.save(args[0])
            out: object = {"sidecar": sha(data), "index": sha(index)}
        elif cmd == "create":
            out = hermes.create(args[0], Path(args[1]))
        elif cmd == "sweep":
            out = {"swept": hermes.sweep(float(args[0]))}
        elif cmd == "live":
            live = Live(hermes, args[0], args[1], Path(args[2]), int(args[3]))
            live.start()
            out = {"started": True}
        elif cmd == "stop":
            assert live is not None
            live.stop.set()
            live.join()
            out = {
                "saves": hermes.saves,
                "replaced": live.replaced,
                "created": live.created,
                "error": live.error,
                "last_index": sha(live.last[hermes.index]) if hermes.index in live.last else None,
            }
        elif cmd == "quit":
            return
        else:
            out = {"error": f"unknown command {cmd}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
