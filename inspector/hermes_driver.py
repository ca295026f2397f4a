"""Run one hermes-webui repair function in hermes' own interpreter (``crosscheck``'s child).

This file is run as a script by the interpreter of the user's hermes-webui, never imported by
the inspector's process, so it uses the standard library only and imports nothing of
``inspector``. It is started by :mod:`inspector.crosscheck` with

* a private temporary copy of the files the action reads, ``HERMES_HOME`` and
  ``HERMES_WEBUI_STATE_DIR`` pointing into it (hermes reads both when ``api.config`` is
  imported), the working directory inside that copy, and a minimal environment;
* one argument: a JSON request file naming the checkout, the action and the hermes function it mirrors
  (``ActionSpec.mirrors``), the session and the clock.

It imports hermes' ``api.models`` and ``api.session_recovery``, sets hermes' server start
(``api.config.SERVER_START_TIME``, which ``_classify_interruption_cause`` reads), freezes
``time.time`` at the plan's ``now``, makes ``os.getcwd`` answer the directory the inspector
resolves an empty ``workspace`` against (hermes resolves it with ``Path.resolve()``), calls the
action's function exactly as the golden cases' ``hermes_call`` says and writes a JSON result
file: ``status`` is ``ok``, ``import_error`` or ``raised`` (with hermes' message).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path


def _message(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def _json_safe(value):
    return json.loads(json.dumps(value, default=repr))


def _run(req: dict, models, recovery) -> dict:
    """Call the hermes function the request names (the action's ``ActionSpec.mirrors``); what it
    returned, and what it was called as."""
    function = req["function"]
    session_dir = Path(req["session_dir"])
    sid = req.get("session_id")
    state_db = Path(req["state_db"]) if req.get("state_db") else None
    if function in (
        "api.models._retry_journal_recovery_in_place",
        "api.models._apply_core_sync_or_error_marker",
    ):
        session = models.Session.load(sid)
        if session is None:
            return {
                "call": "api.models.Session.load",
                "returned": None,
                "note": "hermes' Session.load returned None: hermes does nothing",
            }
        if function == "api.models._retry_journal_recovery_in_place":
            returned = models._retry_journal_recovery_in_place(session, preserve_arriving_budget=True)
            return {
                "call": "api.models._retry_journal_recovery_in_place(session, preserve_arriving_budget=True)",
                "returned": returned,
            }
        returned = models._apply_core_sync_or_error_marker(
            session,
            Path(req["core_path"]),
            stream_id_for_recheck=session.active_stream_id,
            require_stream_dead=True,
            touch_updated_at=True,
        )
        return {
            "call": "api.models._apply_core_sync_or_error_marker(session, core_path, "
            "stream_id_for_recheck=session.active_stream_id, require_stream_dead=True, "
            "touch_updated_at=True)",
            "returned": returned,
        }
    if function == "api.session_recovery.recover_missing_sidecars_from_state_db":
        returned = recovery.recover_missing_sidecars_from_state_db(session_dir, state_db)
        call = "api.session_recovery.recover_missing_sidecars_from_state_db(session_dir, state_db)"
        if returned.get("materialized"):
            recovery._rebuild_recovery_session_index(session_dir)
            call += "; api.session_recovery._rebuild_recovery_session_index(session_dir)"
        return {"call": call, "returned": returned}
    if function == "api.session_recovery.recover_session":
        live = session_dir / f"{sid}.json"
        if not live.exists():
            # an orphan .bak is restored only by startup recovery, behind its own gate
            orphans = recovery._orphaned_backup_live_paths(session_dir, state_db_path=state_db)
            if live not in orphans:
                return {
                    "call": "api.session_recovery._orphaned_backup_live_paths(session_dir, state_db)",
                    "returned": [str(p) for p in orphans],
                    "note": "startup recovery would not restore this orphan backup",
                }
        returned = recovery.recover_session(live)
        return {
            "call": "api.session_recovery.recover_session(session_dir / '<sid>.json')",
            "returned": returned,
        }
    if function == "api.session_recovery.audit_session_recovery":
        returned = recovery.audit_session_recovery(session_dir, state_db_path=state_db)
        return {
            "call": "api.session_recovery.audit_session_recovery(session_dir, state_db)",
            "returned": returned,
        }
    if function == "api.session_recovery._rebuild_recovery_session_index":
        recovery._rebuild_recovery_session_index(session_dir)
        return {"call": "api.session_recovery._rebuild_recovery_session_index(session_dir)", "returned": None}
    raise ValueError(f"no call known for hermes function {function!r} (action {req.get('action')!r})")


def main(argv: list[str]) -> int:
    request_path = Path(argv[1])
    req = json.loads(request_path.read_text(encoding="utf-8"))
    result_path = Path(req["result_path"])

    def finish(result: dict) -> int:
        result_path.write_text(json.dumps(_json_safe(result), ensure_ascii=True), encoding="utf-8")
        return 0

    sys.path.insert(0, req["checkout"])
    try:
        import api.config as config
        import api.models as models
        import api.session_recovery as recovery
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a broken import counts too
        return finish(
            {"status": "import_error", "message": _message(exc), "traceback": traceback.format_exc()[-4000:]}
        )
    import time

    now = float(req["now"])
    config.SERVER_START_TIME = float(req["server_started_at"])
    time.time = lambda: now
    cwd = req["cwd"]
    os.getcwd = lambda: cwd
    try:
        outcome = _run(req, models, recovery)
    except BaseException as exc:  # noqa: BLE001 - hermes raising is a result, reported with its message
        return finish(
            {"status": "raised", "message": _message(exc), "traceback": traceback.format_exc()[-4000:]}
        )
    return finish({"status": "ok", **outcome})


if __name__ == "__main__":
    sys.exit(main(sys.argv))
