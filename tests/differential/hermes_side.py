"""The hermes-webui half of the differential test: a long-lived child process serving many seeds.

Run as ``python hermes_side.py`` with ``HERMES_WEBUI_SRC`` pointing at a hermes-webui checkout,
``HERMES_HOME`` at a scratch folder, and the working directory anywhere. It imports hermes once,
then reads one JSON request per line on stdin and answers one JSON line on its own stdout
(hermes' logging and prints go to stderr). Requests:

* ``{"op": "build", "home": H, "clock": T, "sessions": [...], "journals": [...]}``: write a home
  with hermes' own writers: ``Session(**kwargs)`` + attribute overrides + ``Session.save``,
  ``append_run_event`` for journal events, all under a frozen ``time.time() == T``.
* ``{"op": "act", "home": H, "action": A, "session_id": S, "now": T, "server_started_at": T0}``:
  run the hermes function of action ``A`` on home ``H`` under a frozen clock, with the process'
  working directory ``H`` (hermes resolves an empty workspace against it).

For every request the module-level paths hermes reads (``api.models.SESSION_DIR``,
``SESSION_INDEX_FILE``) are pointed at ``H/webui/sessions`` and hermes' in-memory caches are
emptied, as hermes' own tests isolate a session folder. This file imports nothing from the
project: it only runs hermes' functions.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

_REAL_TIME = time.time
_OUT = sys.stdout


def _import_hermes():
    src = os.environ["HERMES_WEBUI_SRC"]
    sys.path.insert(0, src)
    sys.stdout = sys.stderr  # hermes may print; the protocol owns the real stdout
    import api.config as config
    import api.models as models
    import api.run_journal as run_journal
    import api.session_recovery as recovery
    import api.turn_journal as turn_journal

    return config, models, run_journal, recovery, turn_journal


CONFIG, MODELS, RUN_JOURNAL, RECOVERY, TURN_JOURNAL = _import_hermes()
os.fsync = lambda fd: None  # hermes fsyncs every write; the bytes are the same without it

# Exceptions raised inside hermes' writers that an outer hermes function swallowed: hermes then
# stopped part-way (a sidecar written, its index not), which the inspector refuses to mirror.
_INNER_RAISES: list[str] = []


def _recording(module, name: str) -> None:
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except Exception as exc:
            _INNER_RAISES.append(f"{name}: {type(exc).__name__}: {exc}")
            raise

    setattr(module, name, wrapper)


_recording(MODELS, "_write_session_index")
_recording(RECOVERY, "_rebuild_recovery_session_index")


def _point_at(home: Path) -> Path:
    sessions = home / "webui" / "sessions"
    MODELS.SESSION_DIR = sessions
    MODELS.SESSION_INDEX_FILE = sessions / "_index.json"
    MODELS._PERSISTED_SESSION_IDS_CACHE = (None, None, frozenset())
    MODELS.SESSIONS.clear()
    MODELS._JOURNAL_RETRY_LOCKS.clear()
    for name in (
        "STREAMS",
        "CANCEL_FLAGS",
        "AGENT_INSTANCES",
        "STREAM_PARTIAL_TEXT",
        "ACTIVE_RUNS",
        "SESSION_AGENT_LOCKS",
    ):
        getattr(CONFIG, name).clear()
    for module, names in (
        (MODELS, ("_LEGACY_SIDECAR_FACTS", "_SIDECAR_METADATA_CACHE")),
        (RUN_JOURNAL, ("_SEQ_CACHE", "_SUMMARY_CACHE")),
    ):
        for name in names:
            cache = getattr(module, name, None)
            if hasattr(cache, "clear"):
                cache.clear()
    os.environ["HERMES_HOME"] = str(home)
    os.chdir(home)
    return sessions


def _freeze(now: float) -> None:
    time.time = lambda: now


def _thaw() -> None:
    time.time = _REAL_TIME


def _build(req: dict) -> dict:
    home = Path(req["home"])
    sessions = _point_at(home)
    sessions.mkdir(parents=True, exist_ok=True)
    _freeze(req["clock"])
    try:
        for spec in req["sessions"]:
            for step in spec["saves"]:
                s = MODELS.Session(**step["init"])
                for key, value in step.get("set", {}).items():
                    setattr(s, key, value)
                s.save(touch_updated_at=False, skip_index=step.get("skip_index", False))
        for ev in req["journals"]:
            RUN_JOURNAL.append_run_event(
                ev["session_id"], ev["run_id"], ev["event"], ev["payload"], created_at=ev["created_at"]
            )
        for sid, event in req.get("turn_events", []):
            TURN_JOURNAL.append_turn_journal_event(sid, event)
        for sid in req.get("deleted", []):
            MODELS._record_webui_deleted_session_tombstone(sid)
        for sid in req.get("pruned", []):
            MODELS._record_webui_zero_message_orphan_tombstone(sid)
    finally:
        _thaw()
    return {"ok": True}


def _profile_home(home: Path, profile) -> Path:
    if not profile or profile == "default":
        return home
    return home / "profiles" / str(profile)


def _act(req: dict) -> dict:
    home = Path(req["home"])
    sessions = _point_at(home)
    action, sid = req["action"], req.get("session_id")
    CONFIG.SERVER_START_TIME = req["server_started_at"]
    state_db = home / "state.db"
    _INNER_RAISES.clear()
    _freeze(req["now"])
    try:
        if action == "recover-journal":
            session = MODELS.Session.load(sid)
            result = MODELS._retry_journal_recovery_in_place(session, preserve_arriving_budget=True)
        elif action == "repair-interrupted":
            session = MODELS.Session.load(sid)
            core = _profile_home(home, session.profile) / "sessions" / f"session_{sid}.json"
            result = MODELS._apply_core_sync_or_error_marker(
                session,
                core,
                stream_id_for_recheck=session.active_stream_id,
                require_stream_dead=True,
                touch_updated_at=True,
            )
        elif action == "materialize":
            result = RECOVERY.recover_missing_sidecars_from_state_db(sessions, state_db)
            if int(result.get("materialized") or 0) > 0:
                RECOVERY._rebuild_recovery_session_index(sessions)
        elif action == "restore-backup":
            live = sessions / f"{sid}.json"
            # an orphan backup (no live file) is restored only where hermes' startup recovery
            # restores it (durable tombstone, state.db row): the inspector follows that rule
            if live.exists() or live in RECOVERY._orphaned_backup_live_paths(sessions, state_db):
                result = RECOVERY.recover_session(live)
            else:
                result = {"orphan_not_restored": True}
        elif action == "rebuild-index":
            result = RECOVERY._rebuild_recovery_session_index(sessions)
        elif action == "audit":
            result = RECOVERY.audit_session_recovery(sessions, state_db)
        else:
            return {"error": f"unknown action {action!r}"}
    except Exception as exc:  # noqa: BLE001 - reported to the parent as data
        return {
            "raised": f"{type(exc).__name__}: {exc}",
            "trace": traceback.format_exc(limit=4),
            "inner": list(_INNER_RAISES),
        }
    finally:
        _thaw()
        os.chdir("/")
    return {"result": json.loads(json.dumps(result, default=repr)), "inner": list(_INNER_RAISES)}


def main() -> None:
    _OUT.write(json.dumps({"ready": True}) + "\n")
    _OUT.flush()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            answer = _build(req) if req["op"] == "build" else _act(req)
        except Exception as exc:  # noqa: BLE001 - a harness error, reported as data
            answer = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc(limit=6)}
        _OUT.write(json.dumps(answer, ensure_ascii=True) + "\n")
        _OUT.flush()


if __name__ == "__main__":
    main()
