"""The catalogue: one row per session id across sidecars, ``.bak`` files, ``_index.json`` and
the ``state.db`` of every profile, with where it lives, counts, state and findings.

Reads only. Each sidecar is parsed once (orjson where it agrees with hermes' parser) and
only its metadata and counts are kept, not its messages.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.findings import (
    ERROR,
    WARNING,
    Finding,
    action_for,
    from_hermes_item,
    unloadable_finding,
    worst,
)
from inspector.home import Home
from inspector.linkcheck import sessions_folder_finding
from inspector.store.files import read_regular
from inspector.store.index import INDEX_NAME, parse_index
from inspector.store.scan import SessionDirScan, sidecar_facts
from inspector.store.sidecar import is_safe_session_id

STALE_PENDING_GRACE = 30.0  # hermes' _REPAIR_STALE_PENDING_GRACE_SECONDS


@dataclass
class SidecarSummary:
    """What the list needs from one sidecar, without holding its messages."""

    session_id: str
    location: str  # the file's path (a str: 10,000 Path objects cost more than the rest of the row)
    size: int
    mtime: float
    meta: dict = field(default_factory=dict)
    error: str | None = None
    pending_marker: dict | None = None
    load_error: str | None = None  # parses, but hermes' Session() raises on a folder path in it

    @property
    def path(self) -> Path:
        return Path(self.location)


def summarize_sidecar(path: Path) -> SidecarSummary:
    """Read one sidecar for the list. Never raises: problems become ``error``.

    The whole file is parsed (quickly), because only a full parse tells whether hermes can
    load it: a torn file often has a perfectly good metadata prefix.
    """
    sid = path.name[: -len(".json")]
    try:
        data, st = read_regular(path)
    except OSError as exc:
        return SidecarSummary(sid, str(path), 0, 0.0, error=f"cannot read: {exc.strerror or exc}")
    return _summary(sid, path, st, sidecar_facts(data, want_texts=False))


def _summary(sid: str, path: Path | str, st, facts: dict) -> SidecarSummary:
    # positional: 10,000 calls per catalogue, and keywords cost more to pass
    return SidecarSummary(
        sid,
        str(path),
        st.st_size,
        st.st_mtime,
        facts["meta"],
        facts["error"],
        facts["marker"],
        facts.get("load_error"),
    )


def list_sidecar_paths(session_dir: Path) -> tuple[list[Path], list[Path]]:
    """(``<sid>.json`` sidecars, ``<sid>.json.bak`` files) as hermes enumerates them."""
    sidecars, baks = [], []
    try:
        entries = list(os.scandir(session_dir))
    except OSError:
        return [], []
    for entry in entries:
        name = entry.name
        if name.startswith("_"):
            continue
        if name.endswith(".json"):
            sidecars.append(Path(entry.path))
        elif name.endswith(".json.bak"):
            baks.append(Path(entry.path))
    return sorted(sidecars), sorted(baks)


@dataclass
class SessionRow:
    """One session id of the home, wherever it lives."""

    session_id: str
    title: str = ""
    profile: str = "default"
    sidecar: SidecarSummary | None = None
    has_bak: bool = False
    in_index: bool = False
    state_db: dict | None = None  # the state.db record (see inspector.store.statedb.list_sessions)
    state_db_profile: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def where(self) -> str:
        if self.sidecar is not None and self.state_db is not None:
            return "both"
        if self.sidecar is not None:
            return "sidecar"
        if self.state_db is not None:
            return "state.db"
        if self.has_bak:
            return ".bak only"
        return "index only"

    @property
    def sidecar_messages(self) -> int | None:
        if self.sidecar is None or self.sidecar.error:
            return None
        count = self.sidecar.meta.get("message_count")
        return count if isinstance(count, int) else None

    @property
    def state_db_messages(self) -> int | None:
        return None if self.state_db is None else self.state_db.get("messages")

    # True once the catalogue is built (rows do not change after that): last_activity is then
    # kept after its first use (the list sorts 10,000 rows by it several times)
    complete: bool = field(default=False, repr=False, compare=False)
    _activity: float | None | bool = field(default=False, repr=False, compare=False)

    @property
    def last_activity(self) -> float | None:
        """The newest of the sidecar's ``updated_at``/``pending_started_at`` and state.db's activity."""
        if self._activity is not False:
            return self._activity
        value = self.compute_last_activity()
        if self.complete:
            self._activity = value
        return value

    def compute_last_activity(self) -> float | None:
        best = None
        sc = self.sidecar
        if sc is not None and not sc.error:
            meta = sc.meta
            for key in ("updated_at", "pending_started_at"):
                v = meta.get(key)
                if v.__class__ is float or v.__class__ is int:  # JSON numbers, not bools
                    v = float(v)
                    if best is None or v > best:
                        best = v
        if self.state_db is not None:
            v = self.state_db.get("last_activity")
            if v.__class__ is float or v.__class__ is int:
                v = float(v)
                if best is None or v > best:
                    best = v
        return best

    @property
    def health(self) -> str:
        return worst(self.findings)

    @property
    def needs_attention(self) -> bool:
        return any(f.severity in (ERROR, WARNING) for f in self.findings)

    def to_json(self) -> dict:
        meta = self.sidecar.meta if self.sidecar is not None else {}
        return {
            "session_id": self.session_id,
            "title": self.title,
            "profile": self.profile,
            "where": self.where,
            "sidecar_path": self.sidecar.location if self.sidecar else None,
            "has_bak": self.has_bak,
            "in_index": self.in_index,
            "sidecar_messages": self.sidecar_messages,
            "state_db_messages": self.state_db_messages,
            "last_activity": self.last_activity,
            "active_stream_id": meta.get("active_stream_id"),
            "pending_user_message": meta.get("pending_user_message"),
            "pending_started_at": meta.get("pending_started_at"),
            "pending_journal_recovery": bool(self.sidecar and self.sidecar.pending_marker),
            "health": self.health,
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass
class Catalogue:
    rows: dict[str, SessionRow]
    home_findings: list[Finding]
    hermes_audit: dict | None = None

    def sorted_rows(self) -> list[SessionRow]:
        return newest_first(self.rows.values())


def newest_first(rows: Iterable[SessionRow]) -> list[SessionRow]:
    """Rows by last activity, newest first (stable: ties keep their order)."""
    return sorted(rows, key=lambda r: -(r.last_activity or 0.0))


def _sidecar_findings(row: SessionRow, now: float) -> None:
    sc = row.sidecar
    if sc is None:
        return
    sid = row.session_id
    if sc.error:
        action = action_for("corrupt_sidecar", ("bak",)) if row.has_bak else None
        if "too large to load safely" in sc.error:  # the inspector's limit, not hermes' verdict
            row.findings.append(
                Finding(
                    "sidecar_too_large",
                    ERROR,
                    f"this sidecar is not loaded: {sc.error}",
                    sid,
                    None,
                    sc.location,
                )
            )
            return
        row.findings.append(
            Finding(
                "corrupt_sidecar",
                ERROR,
                f"hermes cannot load this sidecar: {sc.error}",
                sid,
                action,
                sc.location,
            )
        )
        return
    inner = sc.meta.get("session_id")
    if inner != sid:
        row.findings.append(
            Finding(
                "session_id_mismatch",
                ERROR,
                f"the file says session_id {inner!r} but is named {sid!r}; hermes lists and saves it under "
                "another id",
                sid,
                None,
                sc.location,
            )
        )
    if sc.load_error is not None:
        row.findings.append(unloadable_finding(sid, sc.load_error, sc.location))
    if sc.pending_marker is not None:
        m = sc.pending_marker
        row.findings.append(
            Finding(
                "pending_journal_recovery",
                WARNING,
                f"an interrupted-turn marker waits for the run journal (stream {m.get('_journal_retry_stream_id')}, "
                f"attempt {m.get('_journal_retry_attempts', 0)} of 12, armed at "
                f"{m.get('_journal_retry_first_seen_ts')})",
                sid,
                action_for("pending_journal_recovery"),
                sc.location,
            )
        )
    pending = sc.meta.get("pending_user_message")
    stream = sc.meta.get("active_stream_id")
    if pending and stream:
        started = sc.meta.get("pending_started_at")
        age = now - started if isinstance(started, (int, float)) and not isinstance(started, bool) else None
        if age is None or age >= STALE_PENDING_GRACE:
            age_words = f"{age / 60:.0f} min old" if age is not None else "with no start time"
            row.findings.append(
                Finding(
                    "stale_pending_turn",
                    WARNING,
                    f"a turn is still marked as running ({age_words}, stream {stream}) but nothing streams it",
                    sid,
                    action_for("stale_pending_turn"),
                    sc.location,
                )
            )


def build_catalogue(
    home: Home,
    *,
    now: float,
    state_db_reader: Callable[[Path], list[dict]] | None = None,
    hermes_audit: dict | None = None,
    scan: SessionDirScan | None = None,
) -> Catalogue:
    """Scan the home. ``state_db_reader(path)`` returns one record per sessions row.

    ``scan`` shares the folder listing, ``_index.json`` and each sidecar's parse with
    hermes' audit of the same folder.
    """
    session_dir = home.session_dir
    if scan is None:
        scan = SessionDirScan(session_dir)
    dir_str = str(session_dir)
    rows: dict[str, SessionRow] = {}
    home_findings: list[Finding] = []
    outside = sessions_folder_finding(home)
    if outside is not None:
        home_findings.append(Finding("sessions_folder_outside_home", WARNING, outside, None, None, dir_str))
    visible = [n for n in scan.names if not n.startswith("_")]
    prefix = dir_str if dir_str.endswith(os.sep) else dir_str + os.sep  # os.path.join, 10,000 times
    sidecar = scan.sidecar
    for name in visible:
        if not name.endswith(".json"):
            continue
        sid = name[:-5]
        path = prefix + name
        facts, st, read_error = sidecar(name)
        if read_error is not None:
            summary = SidecarSummary(sid, path, 0, 0.0, error=read_error)
        else:
            summary = _summary(sid, path, st, facts)
        row = rows[sid] = SessionRow(sid)  # names are unique: no row exists yet
        row.sidecar = summary
        if not summary.error:
            meta = summary.meta
            title = meta.get("title")
            row.title = title if title.__class__ is str else ""
            prof = meta.get("profile")
            row.profile = prof if prof.__class__ is str and prof else "default"
    for name in visible:
        if not name.endswith(".json.bak"):
            continue
        sid = name[: -len(".json.bak")]
        row = rows.get(sid)
        if row is None:
            row = rows[sid] = SessionRow(sid)
        row.has_bak = True
        _, _, read_error = scan.sidecar(name)  # hermes' audit counts its messages: the same read
        if read_error is not None:
            row.findings.append(
                Finding(
                    "backup_unreadable",
                    WARNING,
                    f"{name} cannot be read: {read_error.removeprefix('cannot read: ')}",
                    sid,
                    None,
                    str(session_dir / name),
                )
            )
    index_rows: list | None = None
    index_present = False
    facts = scan.index_facts()
    if facts is not None:
        index_present = True
        if facts["list"] and facts["all_objects"]:
            index_rows = facts["rows"]
    else:
        index_data, index_error = scan.index_bytes()
        if index_error is not None and not isinstance(index_error, FileNotFoundError):
            # the one read's own error (a FIFO, a folder, too large, permission denied): never read twice
            home_findings.append(
                Finding(
                    "index_unreadable",
                    WARNING,
                    f"_index.json cannot be read: {index_error.strerror or index_error}",
                    None,
                    None,
                    str(session_dir / INDEX_NAME),
                )
            )
        if index_data is not None:
            index_present = True
            parsed = parse_index(index_data)
            if parsed is not None:
                index_rows = [
                    [r.get("session_id"), r["title"] if isinstance(r.get("title"), str) else None]
                    for r in parsed
                ]
    if index_present:
        if index_rows is None:
            home_findings.append(
                Finding(
                    "index_unusable",
                    WARNING,
                    "_index.json is not a list of rows; hermes rebuilds it on the next save",
                    None,
                    action_for("index_unusable"),
                    str(session_dir / INDEX_NAME),
                )
            )
        else:
            for rid, title in index_rows:
                if isinstance(rid, str) and rid:
                    row = rows.get(rid)
                    if row is None:
                        row = rows[rid] = SessionRow(rid)
                    row.in_index = True
                    if not row.title and title is not None:
                        row.title = title
    if state_db_reader is not None:
        for profile in home.profile_names():
            db = home.state_db(profile)
            if not db.exists():
                continue
            try:
                records = state_db_reader(db)
            except Exception as exc:  # noqa: BLE001 - any reader failure is shown, never fatal
                home_findings.append(Finding("state_db_unreadable", ERROR, f"{db}: {exc}", path=str(db)))
                continue
            for rec in records:
                sid = str(rec.get("id", ""))
                row = rows.get(sid)
                if row is None:  # (not setdefault: 10,000 rows exist already, none to build for them)
                    row = rows[sid] = SessionRow(sid)
                if row.state_db is None:
                    row.state_db = rec
                    row.state_db_profile = profile
                    if row.sidecar is None:
                        row.profile = profile
                        if not row.title and isinstance(rec.get("title"), str):
                            row.title = rec["title"]
    for row in rows.values():
        row.complete = True  # its last_activity is worked out on first use, then kept
        _sidecar_findings(row, now)
        if not is_safe_session_id(row.session_id):
            row.findings.append(
                Finding(
                    "unsafe_session_id",
                    ERROR,
                    f"the id {row.session_id!r} is not safe as a file name; the inspector "
                    "will not build paths from it",
                    row.session_id,
                )
            )
    cat = Catalogue(rows=rows, home_findings=home_findings)
    if hermes_audit is not None:
        add_hermes_audit(cat, hermes_audit)
    return cat


def add_hermes_audit(cat: Catalogue, hermes_audit: dict) -> None:
    """Attach hermes' audit items to their sessions' rows (or to the home) as findings."""
    cat.hermes_audit = hermes_audit
    for item in hermes_audit.get("items", []):
        finding = from_hermes_item(item)
        sid = finding.session_id
        if isinstance(sid, str) and sid in cat.rows:
            cat.rows[sid].findings.append(finding)
        else:
            cat.home_findings.append(finding)
