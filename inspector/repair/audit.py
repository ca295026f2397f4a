"""hermes-webui's read-only session recovery audit, reproduced exactly (session-recovery §4).

:func:`audit_session_recovery` returns the very dict hermes' ``audit_session_recovery``
returns: ``status``, ``summary`` (``ok`` = number of live sidecar files, then one count per
category) and ``items`` in hermes' evaluation order (live sidecars, orphan backups, index
drift, state.db rows, turn journals), with hermes' kinds, categories, recommendations and
quirks (Q1-Q10). It writes nothing and creates nothing; state.db is opened read-only.

Where hermes' audit itself raises (quirk Q4: a turn-journal file whose name is not a valid
session id gives ``ValueError("invalid session_id")``; also an undecodable journal, a
non-numeric ``created_at``, a sidecar whose ``messages`` is a number), this function raises
:class:`HermesAuditError`. It is a ``ValueError`` like hermes' error, its message says which
file is at fault, and ``exc.partial_report`` holds the audit computed with the offending
journal sessions left out, so a caller (the CLI, the GUI) can show that report with a
warning instead of crashing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.store.backup import (
    RESTORE,
    inspect_session_recovery_status,
    message_count,
    session_id_of_bak,
)
from inspector.store.files import FileSnapshot
from inspector.store.scan import STATE_DB, TOO_DEEP, SessionDirScan
from inspector.store.statedb import SessionPresence, read_missing_sidecar_rows
from inspector.store.tombstone import is_durably_tombstoned
from inspector.store.turn_journal import (
    TurnJournalError,
    audit_turn_events,
    latest_turn_events,
    pending_turns,
    turn_journal_session_ids,
)

REPAIRABLE, UNSAFE = "repairable", "unsafe_to_repair"


class HermesAuditError(ValueError):
    """hermes' own audit would raise here (quirk Q4 and friends).

    ``partial_report`` is the audit without the offending turn-journal sessions;
    ``errors`` lists one readable message per offending session.
    """

    def __init__(self, message: str, partial_report: dict, errors: list[str]):
        super().__init__(message)
        self.partial_report = partial_report
        self.errors = errors


def _item(
    sid: Any, kind: str, category: str, recommendation: str, live: int = -1, bak: int = -1, **extra: Any
) -> dict:
    item = {
        "session_id": sid,
        "kind": kind,
        "category": category,
        "recommendation": recommendation,
        "live_messages": live,
        "bak_messages": bak,
    }
    item.update(extra)
    return item


def _live_items(
    session_dir: Path, live_names: list[str], snap: FileSnapshot, scan: SessionDirScan
) -> list[dict]:
    items = []
    baks = set(scan.bak_names())
    for name in live_names:
        if name + ".bak" not in baks:
            continue  # hermes' decision is no_backup: no item, and no need to parse the sidecar
        if scan.message_count(name + ".bak") <= scan.message_count(name):
            continue  # no_action without looking further (the scan's counts are hermes' _msg_count)
        status = inspect_session_recovery_status(session_dir, _stem(name), snap)
        if status["recommend"] == RESTORE:
            items.append(
                _item(
                    status["session_id"],
                    "shrunken_live",
                    REPAIRABLE,
                    "restore_from_bak",
                    status["live_messages"],
                    status["bak_messages"],
                )
            )
    return items


def _stem(name: str) -> str:
    """``PurePath(name).stem``."""
    i = name.rfind(".")
    return name[:i] if 0 < i < len(name) - 1 else name


def _orphan_paths(session_dir: Path, scan: SessionDirScan) -> list[Path]:
    """backup.orphan_backup_paths from the scan's listing."""
    out = []
    for name in scan.bak_names():
        live = name[: -len(".bak")]
        if scan.exists(live) or live.startswith("_"):
            continue
        out.append(session_dir / name)
    return out


def _orphan_items(
    session_dir: Path,
    state_db: Path | None,
    snap: FileSnapshot,
    tombstoned_baks: set[str],
    scan: SessionDirScan,
) -> list[dict]:
    items = []
    orphans = _orphan_paths(session_dir, scan)
    if not orphans:
        return items
    with SessionPresence(state_db) as has_session:  # hermes' state_db_has_session, one connection
        for bak in orphans:
            sid = session_id_of_bak(bak)
            count = message_count(snap, bak)
            if count < 0:
                items.append(_item(sid, "malformed_orphan_backup", UNSAFE, "manual_review", -1, count))
            elif is_durably_tombstoned(session_dir, sid, snap):
                tombstoned_baks.add(sid)
                items.append(
                    _item(
                        sid, "state_db_deleted_webui_tombstone", UNSAFE, "deleted_session_skipped", -1, count
                    )
                )
            elif has_session(sid):
                items.append(_item(sid, "orphan_backup", REPAIRABLE, "restore_from_bak", -1, count))
            else:
                items.append(
                    _item(sid, "orphan_backup_without_state_row", UNSAFE, "manual_review", -1, count)
                )
    return items


def _index_items(
    session_dir: Path, live_ids: set[str], deleted_row_ids: set[str], snap: FileSnapshot, scan: SessionDirScan
) -> list[dict]:
    if not scan.exists("_index.json"):
        return []
    facts = scan.index_facts()
    index_ids = {sid for sid, _ in facts["rows"]} if facts is not None else set()
    items = []
    for sid in sorted(index_ids - live_ids):
        if sid in deleted_row_ids or is_durably_tombstoned(session_dir, sid, snap):
            continue
        items.append(_item(sid, "index_missing_file", REPAIRABLE, "rebuild_index"))
    for sid in sorted(live_ids - index_ids):
        count = scan.message_count(f"{sid}.json")
        items.append(_item(sid, "index_missing_entry", REPAIRABLE, "rebuild_index", count, -1))
    return items


def _state_row_items(rows: list[dict], tombstoned_baks: set[str]) -> list[dict]:
    items = []
    for row in rows:
        sid = str(row.get("id") or "")
        if sid in tombstoned_baks:
            continue
        if row.get("_state_db_deleted_webui_tombstone"):
            items.append(_item(sid, "state_db_deleted_webui_tombstone", UNSAFE, "deleted_session_skipped"))
        elif row.get("_state_db_empty_messages"):
            items.append(_item(sid, "state_db_orphan_webui_row", UNSAFE, "manual_review"))
        else:
            items.append(_item(sid, "state_db_missing_sidecar", REPAIRABLE, "materialize_from_state_db"))
    return items


def _journal_items_for(session_dir: Path, sid: str, snap: FileSnapshot, scan: SessionDirScan) -> list[dict]:
    states = latest_turn_events(audit_turn_events(session_dir, sid, scan))
    name = f"{sid}.json"
    facts, _, error = scan.sidecar(name, want_texts=True)
    live = -1 if error is not None else facts["count"]
    if error is not None:
        texts: set[str] = set()
    elif facts["texts_error"] is not None:
        raise TurnJournalError(facts["texts_error"])
    else:
        texts = set(facts["texts"])
    return [
        _item(
            sid,
            "turn_journal_pending_turn",
            REPAIRABLE,
            "audit_only_pending_turn_journal",
            live,
            -1,
            turn_id=turn.turn_id,
            event=turn.event,
        )
        for turn in pending_turns(states, texts)
    ]


def _journal_items(
    session_dir: Path, snap: FileSnapshot, errors: list[str], scan: SessionDirScan
) -> list[dict]:
    items: list[dict] = []
    for sid in turn_journal_session_ids(session_dir, scan):
        try:
            items.extend(_journal_items_for(session_dir, sid, snap, scan))
        except TurnJournalError as exc:
            errors.append(f"{sid}: {exc}")
    return items


class _Background:
    """``fn(*args, **kwargs)`` in a thread; :meth:`result` joins it and returns or raises its outcome."""

    def __init__(self, fn, *args, **kwargs) -> None:
        self._outcome: tuple[bool, Any] = (False, None)

        def run() -> None:
            try:
                self._outcome = (True, fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - raised again by result()
                self._outcome = (False, exc)

        self._thread = threading.Thread(target=run, name="audit-state-db", daemon=True)
        self._thread.start()

    def result(self) -> Any:
        self._thread.join()
        ok, value = self._outcome
        if not ok:
            raise value
        return value


def _stat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _missing_sidecar_rows(
    session_dir: Path,
    state_db_path: Path | None,
    scan: SessionDirScan,
    sidecar_exists: Callable[[str], bool],
    is_tombstoned: Callable[[str], bool],
) -> list[dict]:
    """What the audit reads of :func:`read_missing_sidecar_rows` (``include_empty``): each row's
    ``id`` and its ``_state_db_empty_messages`` / ``_state_db_deleted_webui_tombstone`` flags, in
    hermes' order.

    With a fact cache, what the query found is kept while state.db and its WAL and rollback
    journal are the files they were (device, inode, size, mtime, ctime: every commit changes one
    of them): the stripped id of every ``source='webui'`` row in the query's order, and of those
    that had no sidecar the raw id and whether they have messages. A second look then asks the
    folder which of them have a sidecar now and the tombstones which are deleted, as hermes does
    each time; the query runs again only when a row without a sidecar is not in the entry (its
    sidecar was removed since). Nothing is kept when the query failed (hermes then reports no
    rows: a locked database may answer next time), found no webui row, or an id is not text."""
    cache = scan.cache
    if cache is None or state_db_path is None:
        return _read_rows(session_dir, state_db_path, sidecar_exists, is_tombstoned)
    db = str(state_db_path)
    key = f"hermes-missing-rows:{db}"
    started = time.time_ns()
    stats = [_stat_or_none(f"{db}{suffix}") for suffix in ("", "-wal", "-journal")]
    if stats[0] is None:
        return _read_rows(session_dir, state_db_path, sidecar_exists, is_tombstoned)
    facts = cache.get_for(STATE_DB, key, stats)
    if facts is not None and isinstance(facts.get("ids"), list) and isinstance(facts.get("rows"), dict):
        known = facts["rows"]
        rows = []
        for sid in facts["ids"]:
            if sidecar_exists(sid):
                continue
            got = known.get(sid)
            if got is None:  # a sidecar removed since the query ran: its messages were not asked for
                rows = None
                break
            row = {"id": got[0], "_state_db_empty_messages": got[1]}
            if is_tombstoned(sid):
                row["_state_db_deleted_webui_tombstone"] = True
            rows.append(row)
        if rows is not None:
            return rows
    ids: list[str] = []

    def noting(sid: str) -> bool:  # called once per webui row with an id, in the query's order
        ids.append(sid)
        return sidecar_exists(sid)

    rows = _read_rows(session_dir, state_db_path, noting, is_tombstoned)
    kept = {}
    for row in rows:
        raw = row.get("id")
        if raw.__class__ is not str:
            return rows
        kept[raw.strip()] = [raw, bool(row.get("_state_db_empty_messages"))]
    missing = [sid for sid in ids if not sidecar_exists(sid)]
    if ids and all(sid in kept for sid in missing) and len(kept) == len(missing):
        cache.put_for(STATE_DB, key, stats, {"ids": ids, "rows": kept}, started)
    return rows


def _read_rows(
    session_dir: Path,
    state_db_path: Path | None,
    sidecar_exists: Callable[[str], bool],
    is_tombstoned: Callable[[str], bool],
) -> list[dict]:
    return read_missing_sidecar_rows(
        session_dir,
        state_db_path,
        include_empty=True,
        sidecar_exists=sidecar_exists,
        is_tombstoned=is_tombstoned,
    )


def _report(items: list[dict], live_count: int) -> dict:
    summary = {"ok": live_count, REPAIRABLE: 0, UNSAFE: 0}
    for item in items:
        summary[item["category"]] += 1
    if summary[UNSAFE]:
        status = "needs_manual_review"
    elif summary[REPAIRABLE]:
        status = "warn"
    else:
        status = "ok"
    return {"status": status, "summary": summary, "items": items}


def audit_session_recovery(
    session_dir: Path,
    state_db_path: Path | None = None,
    snapshot: FileSnapshot | None = None,
    *,
    scan: SessionDirScan | None = None,
    nesting_checked_elsewhere: bool = False,
) -> dict:
    """hermes' ``audit_session_recovery(session_dir, state_db_path)``, read-only.

    Raises HermesAuditError exactly where hermes' audit raises (see the module docstring).
    ``scan`` shares one listing and one parse per sidecar with other readers of the folder.
    ``nesting_checked_elsewhere``: the caller looks for the sidecars hermes' audit fails on
    (:func:`with_nesting_failures`) where it has read them all anyway; otherwise every sidecar and
    ``.bak`` is read here (hermes reads each too). :class:`AuditAhead` starts its state.db query
    earlier.
    """
    session_dir = Path(session_dir)
    if not session_dir.exists():
        return _report([], 0)
    snap = snapshot if snapshot is not None else FileSnapshot()
    if scan is None:
        scan = SessionDirScan(session_dir)
    rows_thread = _rows_thread(session_dir, state_db_path, scan, snap)
    return _audit(session_dir, state_db_path, snap, scan, rows_thread, nesting_checked_elsewhere)


class AuditAhead:
    """:func:`audit_session_recovery` of ``session_dir`` and ``state_db_path`` with ``scan``, its
    state.db query started now, in a thread, and the rest of it done by :meth:`audit` (once).

    For a caller with other work to do first: the forked copy that reads sidecars before it runs
    the audit, which then waited for this query at the end of a first open."""

    def __init__(self, session_dir: Path, state_db_path: Path | None, scan: SessionDirScan) -> None:
        self.session_dir = Path(session_dir)
        self.state_db_path = state_db_path
        self.scan = scan
        self.snapshot = FileSnapshot()
        self._rows = _rows_thread(self.session_dir, state_db_path, scan, self.snapshot)

    def audit(self, *, nesting_checked_elsewhere: bool = False) -> dict:
        """The audit (as :func:`audit_session_recovery` with the same arguments)."""
        if not self.session_dir.exists():
            return _report([], 0)
        return _audit(
            self.session_dir,
            self.state_db_path,
            self.snapshot,
            self.scan,
            self._rows,
            nesting_checked_elsewhere,
        )


def _rows_thread(
    session_dir: Path, state_db_path: Path | None, scan: SessionDirScan, snap: FileSnapshot
) -> _Background:
    """:func:`_missing_sidecar_rows` in a thread: state.db is read while the audit looks at the
    files (SQLite lets go of the GIL while it runs a query); the items keep hermes' order."""

    def sidecar_exists(sid: str) -> bool:
        return scan.exists(f"{sid}.json")

    return _Background(
        _missing_sidecar_rows,
        session_dir,
        state_db_path,
        scan,
        sidecar_exists,
        lambda sid: is_durably_tombstoned(session_dir, sid, snap),
    )


def _audit(
    session_dir: Path,
    state_db_path: Path | None,
    snap: FileSnapshot,
    scan: SessionDirScan,
    rows_thread: _Background,
    nesting_checked_elsewhere: bool,
) -> dict:
    live_names = scan.live_names()
    live_ids = {_stem(n) for n in live_names}
    tombstoned_baks: set[str] = set()
    items = _live_items(session_dir, live_names, snap, scan)
    items += _orphan_items(session_dir, state_db_path, snap, tombstoned_baks, scan)
    rows = rows_thread.result()
    deleted_row_ids = {str(r.get("id") or "") for r in rows if r.get("_state_db_deleted_webui_tombstone")}
    items += _index_items(session_dir, live_ids, deleted_row_ids, snap, scan)
    items += _state_row_items(rows, tombstoned_baks)
    errors: list[str] = []
    items += _journal_items(session_dir, snap, errors, scan)
    report = _report(items, len(live_names))
    too_deep = [] if nesting_checked_elsewhere else too_deep_sidecars(scan)
    if errors or too_deep:
        raise _audit_error(report, too_deep, errors)
    return report


def too_deep_sidecars(scan: SessionDirScan) -> list[str]:
    """The sidecars and ``.bak`` files (names) that hermes' audit fails on: it counts the messages of
    every one (``_msg_count`` of each live sidecar, of its ``.bak``, of each orphan ``.bak``), and
    ``_msg_count`` catches no RecursionError, which ``json.loads`` raises on a file nested too deeply
    (the audit's HTTP 500). Each file is read (once per scan: a caller that read them all asks for
    nothing more)."""
    return [n for n in scan.live_names() + scan.bak_names() if scan.sidecar(n)[0]["error"] == TOO_DEEP]


def with_nesting_failures(
    report: dict | None, error: HermesAuditError | None, scan: SessionDirScan
) -> tuple[dict | None, HermesAuditError | None]:
    """(hermes' audit, its error) of :func:`audit_session_recovery` made with
    ``nesting_checked_elsewhere``, with what it left out: the error it raises when a sidecar is
    nested too deeply (:func:`too_deep_sidecars`)."""
    too_deep = too_deep_sidecars(scan)
    if not too_deep:
        return report, error
    if error is None:
        return None, _audit_error(report, too_deep, [])
    return None, _audit_error(error.partial_report, too_deep, error.errors)


def _audit_error(report: dict | None, too_deep: list[str], journal_errors: list[str]) -> HermesAuditError:
    """hermes' audit failing on the sidecars ``too_deep`` (before anything else: it counts every
    sidecar's messages first) and on the turn journals (``journal_errors``, one per session)."""
    deep_errors = [f"{name}: nested too deeply for hermes' json.loads (RecursionError)" for name in too_deep]
    causes = []
    if too_deep:
        causes.append("on a sidecar nested too deeply to parse: " + ", ".join(too_deep))
    if journal_errors:
        causes.append("on the turn journal: " + "; ".join(journal_errors))
    return HermesAuditError(
        "hermes' recovery audit would fail (HTTP 500) " + "; and ".join(causes),
        partial_report=report,
        errors=deep_errors + journal_errors,
    )
