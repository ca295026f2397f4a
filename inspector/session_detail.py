"""Everything known about one session: sidecar, .bak, index row, state.db rows of every
profile, the agent's core transcript and the run journals. Read-only; used by ``show``,
``journal`` and the GUI's session view.
"""

from __future__ import annotations

import dataclasses
import errno
import time
from dataclasses import dataclass, field
from pathlib import Path

from inspector.findings import ERROR, INFO, WARNING, Finding, action_for, unloadable_finding
from inspector.home import Home
from inspector.store import statedb
from inspector.store.files import RawFile, TooLargeToLoad, read_raw, read_regular
from inspector.store.index import index_path, parse_index
from inspector.store.journal import (
    JournalDepthUnsure,
    JournalTooDeep,
    JournalTooLarge,
    JournalUnreadable,
    is_valid_journal_id,
    list_runs,
    parse_journal_bytes,
    run_summary,
    stream_summary,
)
from inspector.store.jsonfmt import loads_bytes, loads_or_none
from inspector.store.scan import FactCache, SessionDirScan
from inspector.store.sidecar import (
    TOO_DEEP,
    SidecarError,
    is_safe_session_id,
    parse_sidecar_bytes,
    path_field_problem,
    pending_retry_marker,
)

NAME_MAX = 255  # bytes in one file name on Linux and macOS file systems


@dataclass
class RunInfo:
    """One run journal of the session, in hermes' view."""

    run_id: str
    path: Path
    size: int
    summary: dict | None
    events: list[dict] = field(default_factory=list)
    malformed: list[dict] = field(default_factory=list)
    error: str | None = None
    too_large: bool = False  # not loaded by the inspector (hermes may well read it): ``error`` says so


@dataclass
class StateDbView:
    profile: str
    path: Path
    record: dict | None = None
    messages: list[dict] = field(default_factory=list)
    error: str | None = None


@dataclass
class SessionDetail:
    session_id: str
    sidecar_path: Path | None = None
    sidecar_raw: RawFile | None = None
    sidecar: dict | None = None
    sidecar_error: str | None = None
    bak_path: Path | None = None
    bak_messages: int | None = None
    bak: dict | None = None  # the .bak read as a sidecar (to show and compare it), when it can be
    bak_error: str | None = None  # why it cannot be read as a chat
    index_row: dict | None = None
    state_db: list[StateDbView] = field(default_factory=list)
    core_path: Path | None = None
    core: dict | None = None
    core_error: str | None = None
    runs: list[RunInfo] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def messages(self) -> list:
        if self.sidecar and isinstance(self.sidecar.get("messages"), list):
            return self.sidecar["messages"]
        return []

    @property
    def title(self) -> str:
        for src in (self.sidecar, self.index_row):
            if src and isinstance(src.get("title"), str):
                return src["title"]
        for view in self.state_db:
            if view.record and isinstance(view.record.get("title"), str):
                return view.record["title"]
        return ""

    @property
    def profile(self) -> str | None:
        if self.sidecar is not None:
            p = self.sidecar.get("profile")
            return p if isinstance(p, str) and p else "default"
        for view in self.state_db:
            if view.record is not None:
                return view.profile
        return None


def _load_runs(detail: SessionDetail, session_dir: Path) -> None:
    if not is_valid_journal_id(detail.session_id):
        return
    try:
        paths = list_runs(session_dir, detail.session_id, strict=True)
    except OSError as exc:
        detail.findings.append(
            Finding(
                "journal_folder_unreadable",
                ERROR,
                f"the run-journal folder cannot be read: {exc.strerror or exc}",
                detail.session_id,
                None,
                str(session_dir / "_run_journal" / detail.session_id),
            )
        )
        return
    for path in paths:
        run_id = path.name[: -len(".jsonl")]
        try:
            data, _ = read_regular(path)
        except TooLargeToLoad as exc:
            _stream_run(detail, run_id, path, exc)
            continue
        except OSError as exc:
            detail.runs.append(RunInfo(run_id, path, 0, None, error=f"cannot read: {exc}"))
            continue
        try:
            parsed = parse_journal_bytes(data)
        except JournalUnreadable as exc:
            detail.runs.append(RunInfo(run_id, path, len(data), None, error=str(exc)))
            detail.findings.append(_unreadable_finding(detail, run_id, path, exc))
            continue
        summary = run_summary(detail.session_id, run_id, parsed.events)
        detail.runs.append(RunInfo(run_id, path, len(data), summary, parsed.events, parsed.malformed))
        if parsed.malformed:
            detail.findings.append(
                Finding(
                    "journal_lines_dropped",
                    WARNING,
                    f"run {run_id}: hermes drops {len(parsed.malformed)} line(s) it cannot parse "
                    f"(first at line {parsed.malformed[0]['line']})",
                    detail.session_id,
                    None,
                    str(path),
                )
            )


def _unreadable_finding(detail: SessionDetail, run_id: str, path: Path, exc: JournalUnreadable) -> Finding:
    """A journal hermes cannot read (or, nested that deeply, may not read): its finding."""
    unsure = isinstance(exc, JournalDepthUnsure)
    return Finding(
        "journal_too_deep" if unsure or isinstance(exc, JournalTooDeep) else "journal_unreadable",
        ERROR,
        f"run {run_id}: {exc}" + ("" if unsure else "; hermes recovers nothing from it"),
        detail.session_id,
        None,
        str(path),
    )


def _stream_run(detail: SessionDetail, run_id: str, path: Path, too_large: TooLargeToLoad) -> None:
    """A journal too large to load whole: hermes' summary of it, read piece by piece (no events)."""
    note = (
        f"run {run_id}: the journal is {too_large.strerror}: its events are not loaded and repairs "
        "that need it are refused"
    )
    try:
        streamed = stream_summary(path, detail.session_id, run_id)
    except JournalTooLarge as exc:
        detail.runs.append(RunInfo(run_id, path, too_large.size, None, error=str(exc), too_large=True))
        detail.findings.append(
            Finding("journal_too_large", WARNING, f"run {run_id}: {exc}", detail.session_id, None, str(path))
        )
        return
    except JournalUnreadable as exc:
        detail.runs.append(RunInfo(run_id, path, too_large.size, None, error=str(exc)))
        detail.findings.append(_unreadable_finding(detail, run_id, path, exc))
        return
    except OSError as exc:
        detail.runs.append(RunInfo(run_id, path, too_large.size, None, error=f"cannot read: {exc}"))
        return
    detail.runs.append(RunInfo(run_id, path, too_large.size, streamed.summary, too_large=True))
    detail.findings.append(Finding("journal_too_large", WARNING, note, detail.session_id, None, str(path)))
    if streamed.malformed:
        detail.findings.append(
            Finding(
                "journal_lines_dropped",
                WARNING,
                f"run {run_id}: hermes drops {streamed.malformed} line(s) it cannot parse "
                f"(first at line {streamed.first_malformed})",
                detail.session_id,
                None,
                str(path),
            )
        )


def _load_state_db(detail: SessionDetail, home: Home) -> None:
    for profile in home.profile_names():
        db = home.state_db(profile)
        if not db.exists():
            continue
        view = StateDbView(profile, db)
        try:
            view.record = statedb.session_record(db, detail.session_id)
            if view.record is not None:
                view.messages = statedb.read_transcript(db, detail.session_id)
        except statedb.StateDbError as exc:
            view.error = str(exc)
        if view.record is not None or view.error:
            detail.state_db.append(view)


def _load_sidecar(detail: SessionDetail, session_dir: Path) -> None:
    path = session_dir / f"{detail.session_id}.json"
    detail.sidecar_path = path
    try:
        raw = read_raw(path)
    except OSError as exc:
        detail.sidecar_error = f"cannot read: {exc.strerror or exc}"
        return
    detail.sidecar_raw = raw
    if raw is None:
        return
    try:
        detail.sidecar = parse_sidecar_bytes(raw.data)
    except (SidecarError, RecursionError) as exc:
        detail.sidecar_error = str(exc)
        detail.findings.append(
            Finding(
                "corrupt_sidecar",
                ERROR,
                f"hermes cannot load this sidecar: {exc}",
                detail.session_id,
                None,
                str(path),
            )
        )
        return
    problem = path_field_problem(detail.sidecar)
    if problem is not None:
        detail.findings.append(unloadable_finding(detail.session_id, problem, str(path)))


def _load_core(detail: SessionDetail, home: Home) -> None:
    detail.core_path = home.core_transcript(detail.session_id, detail.profile)
    try:
        raw = read_raw(detail.core_path)
    except OSError as exc:
        detail.core_error = str(exc)
        return
    if raw is None:
        return
    try:
        obj = loads_bytes(raw.data)
        detail.core = obj if isinstance(obj, dict) else None
        if detail.core is None:
            detail.core_error = "not a JSON object"
    except (UnicodeDecodeError, ValueError) as exc:
        detail.core_error = f"not valid JSON: {exc}"
    except RecursionError:
        detail.core_error = TOO_DEEP


def _load_bak(detail: SessionDetail, bak: Path) -> None:
    try:
        raw = read_raw(bak)
    except OSError as exc:  # unreadable, not a regular file, or a name too long for the folder
        if getattr(exc, "errno", None) == errno.ENAMETOOLONG:
            return
        detail.bak_path = bak
        detail.bak_messages = -1
        detail.findings.append(
            Finding(
                "backup_unreadable",
                WARNING,
                f"{bak.name} cannot be read: {exc.strerror or exc}",
                detail.session_id,
                None,
                str(bak),
            )
        )
        return
    if raw is not None:
        detail.bak_path = bak
        try:
            detail.bak = parse_sidecar_bytes(raw.data)
        except (SidecarError, RecursionError) as exc:
            detail.bak_error = str(exc) if isinstance(exc, SidecarError) else "nested too deeply to read"
        messages = detail.bak.get("messages") if detail.bak is not None else None
        # hermes' _msg_count of the backup: its messages, or -1 when it has no message list
        detail.bak_messages = len(messages) if isinstance(messages, list) else -1
        if detail.bak is not None and not isinstance(messages, list):
            detail.bak_error = "it has no message list"


def find_index_row(session_dir: Path, session_id: str) -> dict | None:
    """The first ``_index.json`` row of ``session_id`` when the index is a list of rows, else None.

    The shared scan's cached facts tell whether the index is usable and holds the id; the row
    itself is then parsed alone from hermes' indented layout (a 20 MB index is not parsed to
    show one row), and the whole file only when that layout is not found, or when a row before
    the one found may hold the id too (written in escapes, or in another layout).
    """
    facts = SessionDirScan(session_dir, FactCache.for_session_dir(session_dir)).index_facts()
    if facts is None or not (facts["list"] and facts["all_objects"]):
        return None
    if not any(rid == session_id for rid, _ in facts["rows"]):
        return None
    try:
        data, _ = read_regular(index_path(session_dir))
    except OSError:
        return None
    if is_safe_session_id(session_id):  # nothing to escape: the id is written as it is
        needle = b'"session_id": "' + session_id.encode() + b'"'
        pos = data.find(needle)
        while pos >= 0:
            start, end = data.rfind(b"\n  {", 0, pos), data.find(b"\n  }", pos)
            row = loads_or_none(data[start + 3 : end + 4]) if start >= 0 and end >= 0 else None
            if isinstance(row, dict) and row.get("session_id") == session_id:
                # the first row of the id only if no row before it holds the id: such a row
                # would hold the id's bytes, or (hermes writes no escape but of a control
                # character) the id in \uXXXX escapes; where either is there, the whole parse
                if data.find(session_id.encode(), 0, start) < 0 and data.find(b"\\u", 0, start) < 0:
                    return row
                break
            pos = data.find(needle, pos + 1)
    for r in parse_index(data) or []:
        if r.get("session_id") == session_id:
            return r
    return None


def _unshown_output(detail: SessionDetail) -> None:
    """The finding "the run journal holds output the transcript does not show" (recover-from-journal)."""
    if not detail.runs:
        return
    from inspector.repair import from_journal  # loaded only for sessions with run journals
    from inspector.repair.journal_read import JournalRead

    journals = [
        (r.run_id, JournalRead(r.run_id, r.path, True, r.size, r.events, r.malformed, None, []))
        for r in detail.runs
        if r.error is None
    ]
    try:
        found = from_journal.unshown_runs(detail.sidecar, journals, time.time())
    except Exception:  # noqa: BLE001 - odd values: the repair's own preview says what fails
        return
    if found:
        detail.findings.append(from_journal.finding_for(detail.session_id, found, str(detail.sidecar_path)))


def _corrupt_sidecar_action(detail: SessionDetail) -> None:
    """An unreadable sidecar's way back: its readable .bak (hermes' restore), else the chat's
    messages in state.db (the inspector's rebuild-from-state-db step)."""
    for n, f in enumerate(detail.findings):
        if f.kind != "corrupt_sidecar" or f.action is not None:
            continue
        have = {"bak"} if detail.bak_path is not None and detail.bak_messages >= 0 else set()
        if any(v.messages for v in detail.state_db):
            have.add("state_db_messages")
        action = action_for(f.kind, have)
        if action is None:
            continue
        detail.findings[n] = dataclasses.replace(f, action=action)


def load_detail(home: Home, session_id: str) -> SessionDetail:
    """Read everything about one session. Never writes; problems become findings."""
    detail = SessionDetail(session_id=session_id)
    session_dir = home.session_dir
    if not is_safe_session_id(session_id):
        detail.findings.append(
            Finding(
                "unsafe_session_id",
                ERROR,
                f"{session_id!r} is not a safe session id; no file path is built from it",
                session_id,
            )
        )
        _load_state_db(detail, home)
        return detail
    if len(f"{session_id}.json.bak".encode()) > NAME_MAX:
        detail.findings.append(
            Finding(
                "id_too_long",
                ERROR,
                f"the id is {len(session_id.encode())} bytes: too long for a file name, so no "
                "sidecar, backup or journal can exist for it",
                session_id,
            )
        )
        _load_state_db(detail, home)
        return detail
    _load_sidecar(detail, session_dir)
    _load_bak(detail, session_dir / f"{session_id}.json.bak")
    detail.index_row = find_index_row(session_dir, session_id)
    _load_state_db(detail, home)
    _load_core(detail, home)
    _load_runs(detail, session_dir)
    _corrupt_sidecar_action(detail)
    if detail.sidecar is not None:
        marker = pending_retry_marker(detail.messages)
        if marker is not None:
            detail.findings.append(
                Finding(
                    "pending_journal_recovery",
                    WARNING,
                    f"marker waiting for journal recovery (stream {marker.get('_journal_retry_stream_id')}, "
                    f"{marker.get('_journal_retry_attempts', 0)} attempt(s) counted)",
                    session_id,
                    action_for("pending_journal_recovery"),
                )
            )
        if detail.sidecar.get("pending_user_message") and detail.sidecar.get("active_stream_id"):
            detail.findings.append(
                Finding(
                    "stale_pending_turn",
                    WARNING,
                    "a turn is marked as running with no live stream",
                    session_id,
                    action_for("stale_pending_turn"),
                )
            )
        _unshown_output(detail)
    elif detail.sidecar_error is None and any(v.record for v in detail.state_db):
        sources = {(v.record or {}).get("source") for v in detail.state_db if v.record}
        if sources and not sources & {None, "", "webui"}:
            # the agent's own chat (its command line, a gateway): it never has a WebUI file, and
            # hermes materializes WebUI rows only; nothing is missing
            detail.findings.append(
                Finding(
                    "agent_only_chat",
                    INFO,
                    f"only state.db has this chat (source {', '.join(sorted(sources))})",
                    session_id,
                )
            )
        else:
            detail.findings.append(
                Finding(
                    "sidecar_missing",
                    INFO,
                    "only state.db has this chat",
                    session_id,
                    action_for("sidecar_missing"),
                )
            )
    return detail
