"""What the session view shows, gathered off the GUI thread. Pure Python, no Qt.

:func:`load_session_data` reads one session (via :func:`inspector.session_detail.load_detail`),
indexes each run journal line by line (:class:`inspector.store.journal_raw.RawJournal`) and
links journal events to transcript rows. :func:`plan_session_actions` plans the repairs the
session view offers, with the same core calls as ``hermes-inspector repair``.
:func:`search_messages` finds sessions whose message text contains a query.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.actions import default_clock, make_context, plan_action
from inspector.catalogue import Catalogue
from inspector.export import message_text
from inspector.gui.links import RunLinks, link_run
from inspector.home import Home
from inspector.plan import Plan
from inspector.session_detail import RunInfo, SessionDetail, load_detail
from inspector.store.journal import is_valid_journal_id, journal_path, list_runs
from inspector.store.journal_raw import RawJournal
from inspector.store.jsonfmt import loads_bytes

# The session view's buttons, in display order: action name -> label.
ACTIONS: dict[str, str] = {
    "recover-journal": "Recover journal output",
    "repair-interrupted": "Repair interrupted turn",
    "materialize": "Materialize from state.db",
    "restore-backup": "Restore from backup",
    "rebuild-index": "Rebuild index",
}
HOME_WIDE_IN_VIEW = frozenset({"rebuild-index"})  # planned for the whole home, not one row

Check = Callable[[], None]
Progress = Callable[[int, int], None]


@dataclass
class RunData:
    """One run journal: hermes' view (``info``), the raw line index and the event/row links."""

    info: RunInfo
    raw: RawJournal | None = None
    raw_error: str | None = None
    links: RunLinks = field(default_factory=RunLinks)
    dropped_lines: int = 0  # physical lines hermes does not read as one event
    odd_lines: int = 0  # lines with anomalies (seq gaps, mismatched ids, CRLF...)
    last_time: float = 0.0  # newest created_at of its events (else the file's mtime): runs sort by it

    @property
    def run_id(self) -> str:
        return self.info.run_id


@dataclass
class SessionData:
    detail: SessionDetail
    runs: list[RunData]

    @property
    def session_id(self) -> str:
        return self.detail.session_id

    def preferred_run(self) -> int:
        """The run to show first: the one the sidecar's running turn or newest marker names, else the newest."""
        sidecar = self.detail.sidecar or {}
        wanted = [sidecar.get("active_stream_id")]
        for msg in reversed(self.detail.messages):
            if isinstance(msg, dict):
                wanted += [msg.get("_journal_retry_stream_id"), msg.get("_recovered_stream_id")]
        for sid in wanted:
            for i, run in enumerate(self.runs):
                if sid and run.run_id == sid:
                    return i
        return max(len(self.runs) - 1, 0)

    def run_for_message(self, index: int) -> RunData | None:
        """The run a transcript row was recovered from, when it says so or a link shows it."""
        msgs = self.detail.messages
        if 0 <= index < len(msgs) and isinstance(msgs[index], dict):
            sid = msgs[index].get("_recovered_stream_id") or msgs[index].get("_journal_retry_stream_id")
            for run in self.runs:
                if run.run_id == sid:
                    return run
        for run in self.runs:
            if index in run.links.message_to_events:
                return run
        return None


def scan_journal(raw: RawJournal, check: Check = lambda: None, run: RunData | None = None,
                 progress: Progress | None = None) -> list[tuple[int, dict]]:
    """``(table row, event)`` for every event hermes reads, in file order (a torn line can hold
    several fragments hermes reads as events).

    Walking every line here, in the worker, also builds the journal's seq table, so the table
    view's first look at a line deep in a 200,000-line file does not parse the lines before it
    on the GUI thread.
    """
    events: list[tuple[int, dict]] = []
    for i in range(len(raw)):
        if i % 5000 == 0:
            check()
            if progress is not None and i:
                progress(i, len(raw))
        line = raw.line(i)
        if run is not None:
            run.dropped_lines += line.dropped is not None
            run.odd_lines += bool(line.anomalies)
        for ev in line.hermes_events:
            if isinstance(ev, dict):
                events.append((i, ev))
    return events


def load_session_data(home: Home, session_id: str, check: Check = lambda: None,
                      progress: Progress | None = None) -> SessionData:
    """Everything the session view shows about one session. ``check`` raises to cancel;
    ``progress(done, total)`` reports the journal lines read."""
    detail = load_detail(home, session_id)
    check()
    runs: list[RunData] = []
    tool_calls = (detail.sidecar or {}).get("tool_calls")
    for info in detail.runs:
        run = RunData(info)
        try:
            run.raw = RawJournal.from_path(info.path)
        except OSError as exc:
            run.raw_error = f"cannot read {info.path}: {exc.strerror or exc}"
        if run.raw is not None:
            events = scan_journal(run.raw, check, run, progress)
            run.links = link_run(detail.messages, tool_calls, info.run_id, events)
            run.last_time = max((t for _, ev in events if _is_time(t := ev.get("created_at"))), default=0.0)
        if not run.last_time:
            try:
                run.last_time = info.path.stat().st_mtime
            except OSError:
                pass
        runs.append(run)
        check()
    runs.sort(key=lambda r: (r.last_time, r.run_id))  # oldest first; run ids are random hex
    return SessionData(detail=detail, runs=runs)


def _is_time(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def first_needing_attention(home: Home, catalogue: Catalogue) -> str | None:
    """The session to show first: newest one whose run journal holds output waiting to be
    recovered (a pending marker whose journal exists and is not empty), else the newest one
    that needs attention. Reads only directory entries."""
    rows = catalogue.sorted_rows()
    for row in rows:
        marker = row.sidecar.pending_marker if row.sidecar is not None else None
        stream = marker.get("_journal_retry_stream_id") if isinstance(marker, dict) else None
        if isinstance(stream, str) and is_valid_journal_id(stream) and is_valid_journal_id(row.session_id):
            try:
                if journal_path(home.session_dir, row.session_id, stream).stat().st_size > 0:
                    return row.session_id
            except (OSError, ValueError):
                pass
    for row in rows:
        if row.needs_attention:
            return row.session_id
    return rows[0].session_id if rows else None


GLANCE_MIN_BYTES = 4_000_000  # below this the full load is quick; no glance needed
GLANCE_ROWS = 2_000


@dataclass
class JournalGlance:
    """A big journal's first lines, shown while the whole session is still being read.

    Only ``ready_rows`` lines may be shown: their seq checks are already computed, so looking
    at them costs the GUI thread nothing (a deeper line would make it parse everything above).
    """

    session_id: str
    run: RunData
    ready_rows: int


def glance_journal(session_dir: Path, session_id: str, prefer: list[str], check: Check = lambda: None,
                   rows: int = GLANCE_ROWS, min_bytes: int = GLANCE_MIN_BYTES) -> JournalGlance | None:
    """The run the view will show first (``prefer``-red ids, else the newest file), indexed, with
    its first ``rows`` lines checked; None when the session's journals are small or absent."""
    if not is_valid_journal_id(session_id):
        return None
    stats = []
    for path in list_runs(session_dir, session_id):
        try:
            st = path.stat()
        except OSError:
            continue
        stats.append((path, st.st_size, st.st_mtime))
    if not stats or sum(size for _, size, _ in stats) < min_bytes:
        return None
    by_id = {path.stem: (path, size) for path, size, _ in stats}
    pick = next((by_id[r] for r in prefer if r in by_id), None)
    if pick is None:
        path, size, _ = max(stats, key=lambda s: (s[2], s[0].name))
        pick = (path, size)
    path, size = pick
    check()
    try:
        raw = RawJournal.from_path(path)
    except OSError:
        return None
    ready = min(rows, len(raw))
    for i in range(ready):
        raw.line(i)  # builds the seq-check prefix for exactly these lines, here in the worker
    return JournalGlance(session_id, RunData(RunInfo(path.stem, path, size, None), raw=raw), ready)


def recommended_actions(detail: SessionDetail, extra_findings: list | None = None) -> set[str]:
    """Actions some finding of the session (or of the home, for home-wide ones) recommends."""
    actions = {f.action for f in detail.findings if f.action}
    actions |= {f.action for f in (extra_findings or []) if f.action}
    return actions


def plan_session_actions(home: Home, session_id: str, recommended: set[str],
                         check: Check = lambda: None) -> dict[str, Plan | str]:
    """A plan (or an error message) per action of the view, for this session.

    Per-session actions are always planned, so their buttons say whether they apply.
    ``rebuild-index`` reads every sidecar of the home, so it is planned only when a finding
    recommends it.
    """
    ctx = make_context(home, default_clock(home, None, None))
    out: dict[str, Plan | str] = {}
    for action in ACTIONS:
        if action in HOME_WIDE_IN_VIEW and action not in recommended:
            continue
        check()
        target = None if action in HOME_WIDE_IN_VIEW else session_id
        try:
            plans = plan_action(ctx, action, target)
        except Exception as exc:  # noqa: BLE001 - a planner failure disables its button, with the reason
            out[action] = f"{type(exc).__name__}: {exc}"
            continue
        if plans:
            out[action] = plans[0]
    return out


def plan_applies(plan: Plan | str | None) -> bool:
    """The button rule: the plan has changes and no refusal."""
    return isinstance(plan, Plan) and plan.refusal is None and bool(plan.changes)


def plan_tooltip(action: str, plan: Plan | str | None) -> str:
    """Why a repair button is enabled or not, in plain words."""
    label = ACTIONS.get(action, action)
    if plan is None:
        return f"{label}: no finding of this session calls for it"
    if isinstance(plan, str):
        return f"{label}: could not be planned: {plan}"
    if plan.refusal:
        return f"{label}: refused: {plan.refusal}"
    if not plan.changes:
        reason = "; ".join(plan.summary) if plan.summary else "nothing to change"
        return f"{label}: nothing to write ({reason})"
    files = ", ".join(f"{c.kind} {Path(c.path).name}" for c in plan.changes)
    return f"{label}: {'; '.join(plan.summary[:3])}\nFiles: {files}"


def search_messages(paths: list[Path], query: str, check: Check = lambda: None,
                    progress: Callable[[int, int], None] | None = None) -> set[str]:
    """Session ids (file stems) whose message text contains ``query`` (case-insensitive)."""
    needle = " ".join(query.split()).casefold()
    found: set[str] = set()
    if not needle:
        return found
    for n, path in enumerate(paths, start=1):
        if n % 50 == 0:
            check()
            if progress is not None:
                progress(n, len(paths))
        try:
            data = path.read_bytes()
        except OSError:
            continue
        # Cheap pre-check on the raw bytes before parsing; JSON escapes can hide a match, so a
        # miss on ASCII-only needles is final only when the file has no escapes at all.
        lowered = data.lower()
        if needle.isascii() and needle.encode() not in lowered and b"\\" not in data:
            continue
        try:
            obj = loads_bytes(data)
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        messages = obj.get("messages") if isinstance(obj, dict) else None
        if not isinstance(messages, list):
            continue
        for msg in messages:
            if isinstance(msg, dict) and needle in " ".join(message_text(msg.get("content")).split()).casefold():
                found.add(path.name[: -len(".json")])
                break
    return found
