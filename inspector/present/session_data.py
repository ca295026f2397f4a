"""What the session view shows, worked out without Qt (in a child process of :mod:`inspector.jobs`,
or in the tests directly).

:func:`load_session_data` reads one session (via :func:`inspector.session_detail.load_detail`),
indexes each run journal line by line (:func:`inspector.store.journal_raw.index_journal`) and
links journal events to transcript rows (:mod:`inspector.present.links`).
:func:`plan_session_actions` plans the repairs the session view offers, with the same core calls
as ``hermes-inspector repair``. A big journal is shown in two stages: :func:`glance_journal` reads
its first lines (a few milliseconds), then :func:`inspector.jobs.session.index_glance` has every
line of it checked while the rest of the session is read.
"""

from __future__ import annotations

import errno
import os
import stat
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from math import isnan
from pathlib import Path

from inspector import portable
from inspector.actions import default_clock, make_context, plan_action
from inspector.catalogue import Catalogue, newest_first
from inspector.export import tools_by_message
from inspector.home import Home
from inspector.plan import Plan
from inspector.present.links import RunLinks, link_run, needs_events
from inspector.present.plans import PlanSummary
from inspector.repair import registry
from inspector.session_detail import RunInfo, SessionDetail, load_detail
from inspector.store.files import MAX_FILE_BYTES, TooLargeToLoad, read_regular
from inspector.store.journal import is_valid_journal_id, journal_path, list_runs
from inspector.store.journal_raw import JournalIndex, RawJournal, index_journal

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO named like a journal never blocks the open (POSIX)


class ActionLabels(Mapping[str, str]):
    """The session view's buttons, in display order: action name -> label, read from the action
    registry (inspector/repair/registry.py) each time, so a new action module is a new button."""

    def __getitem__(self, name: str) -> str:
        return registry.spec(name).label

    def __iter__(self) -> Iterator[str]:
        return iter(registry.names())

    def __len__(self) -> int:
        return len(registry.names())


class ActionShortcuts(Mapping[str, str]):
    """The Repair menu's keys, by the registry's order: the first action is Ctrl+1, the next Ctrl+2..."""

    def __getitem__(self, name: str) -> str:
        return f"Ctrl+{registry.names().index(name) + 1}"

    def __iter__(self) -> Iterator[str]:
        return iter(registry.names())

    def __len__(self) -> int:
        return len(registry.names())


ACTIONS = ActionLabels()


def planned_for_home(action: str) -> bool:
    """The view plans this action for the whole home, not for the selected row (scope ``home``)."""
    return registry.spec(action).scope == registry.HOME


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
    # what the views derive from the whole transcript, worked out once (in the child that read the
    # session: see warm()), not on the window's thread each time a session is shown
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def session_id(self) -> str:
        return self.detail.session_id

    def warm(self) -> None:
        """Work out :meth:`sidecar_cards` and :meth:`preferred_run` now (5,000 messages: ~10 ms)."""
        self.sidecar_cards()
        self._preferred_run_id()

    def sidecar_cards(self) -> dict[int, list[dict]]:
        """The sidecar's tool cards by the message they hang under (``export.tools_by_message``)."""
        cards = self.derived.get("cards")
        if cards is None:
            cards = self.derived["cards"] = tools_by_message((self.detail.sidecar or {}).get("tool_calls"))
        return cards

    def _preferred_run_id(self) -> str | None:
        if "preferred" not in self.derived:
            sidecar = self.detail.sidecar or {}
            wanted = [sidecar.get("active_stream_id")]
            for msg in reversed(self.detail.messages):
                if isinstance(msg, dict):
                    wanted += [msg.get("_journal_retry_stream_id"), msg.get("_recovered_stream_id")]
            ids = {run.run_id for run in self.runs}
            self.derived["preferred"] = next((sid for sid in wanted if sid and sid in ids), None)
        return self.derived["preferred"]

    def preferred_run(self) -> int:
        """The run to show first: the one the sidecar's running turn or newest marker names, else the newest."""
        wanted = self._preferred_run_id()
        for i, run in enumerate(self.runs):
            if wanted is not None and run.run_id == wanted:
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


def _index_run(run: RunData, messages: list, tool_calls: object, check: Check) -> None:
    """Read and index one run journal (every line's verdict, the counts) and link it to the transcript."""
    info = run.info
    try:
        data, _ = read_regular(info.path)
    except OSError as exc:
        run.raw_error = f"cannot read {info.path}: {exc.strerror or exc}"
        return
    events: list[tuple[int, dict]] | None = [] if needs_events(messages, tool_calls, info.run_id) else None
    index = index_journal(
        data, session_id=info.path.parent.name, run_id=info.path.stem, check=check, events=events
    )
    run.raw = RawJournal(
        data, session_id=info.path.parent.name, run_id=info.path.stem, path=info.path, index=index
    )
    if events is not None:
        run.links = link_run(messages, tool_calls, info.run_id, events)
    _take_counts(run, index)


def _take_counts(run: RunData, index: JournalIndex) -> None:
    run.dropped_lines = index.stats["dropped"]
    run.odd_lines = index.stats["anomalous"]
    run.last_time = index.last_time


def load_session_data(
    home: Home,
    session_id: str,
    check: Check = lambda: None,
    progress: Progress | None = None,
    apart: frozenset[Path] = frozenset(),
) -> SessionData:
    """Everything the session view shows about one session. ``check`` raises to cancel;
    ``progress(done, total)`` reports the run journals read. Run journals in ``apart`` are left
    unread (``raw`` None without a ``raw_error``) unless their events are needed for the links:
    the caller indexes them by other means.

    The view never lists hermes' parsed events (``RunInfo.events``: its table shows every line
    from the raw index), so they are dropped here: a 200,000-event run would keep 200,000 dicts."""
    detail = load_detail(home, session_id)
    check()
    runs: list[RunData] = []
    tool_calls = (detail.sidecar or {}).get("tool_calls")
    for n, info in enumerate(detail.runs, start=1):
        info.events = []
        run = RunData(info)
        if info.path not in apart or needs_events(detail.messages, tool_calls, info.run_id):
            _index_run(run, detail.messages, tool_calls, check)
        if not run.last_time:
            try:
                run.last_time = info.path.stat().st_mtime
            except OSError:
                pass
        runs.append(run)
        check()
        if progress is not None:
            progress(n, len(detail.runs))
    runs.sort(key=lambda r: (r.last_time, r.run_id))  # oldest first; run ids are random hex
    return SessionData(detail=detail, runs=runs)


def _read_prefix(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of a regular file (fewer if it is shorter now); the reads run
    without the GIL. More than :data:`MAX_FILE_BYTES` is never read (TooLargeToLoad)."""
    if size > MAX_FILE_BYTES:
        raise TooLargeToLoad(path, size, MAX_FILE_BYTES)
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | portable.O_BINARY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        got = 0
        while got < size:
            chunk = portable.pread(fd, size - got, got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def first_needing_attention(home: Home, catalogue: Catalogue) -> str | None:
    """The session to show first: newest one whose run journal holds output waiting to be
    recovered (a pending marker whose journal exists and is not empty), else the newest one
    that needs attention, else the newest. "Newest": first in ``catalogue.sorted_rows()``.
    Reads only directory entries.

    The catalogue's rows are not sorted for it (57,500 rows at 50,000 sessions, in the child,
    before the list can be complete): the few candidates are, or the newest is picked in one
    pass; the same answer as walking ``sorted_rows()`` (a test holds it to that)."""
    rows = list(catalogue.rows.values())
    if not rows:
        return None
    keys = [-(row.last_activity or 0.0) for row in rows]  # catalogue.newest_first's sort key
    if any(map(isnan, keys)):  # a NaN time: no order to reason about, walk the sorted rows
        return _first_of_sorted(home, catalogue.sorted_rows())
    # (a row without a pending marker or without findings is passed by without a call: 57,500 rows
    # at 50,000 sessions, on the way to the list's first complete paint)
    waiting = [
        row
        for row in rows
        if (sc := row.sidecar) is not None
        and sc.pending_marker is not None
        and _retry_stream(row) is not None
    ]
    for row in newest_first(waiting):  # a stable sort of a few: their order in sorted_rows()
        if _journal_has_output(home, row):
            return row.session_id
    attention = [i for i, row in enumerate(rows) if row.findings and row.needs_attention]
    # min() keeps the first of equal keys, as the stable sort does
    best = min(attention or range(len(rows)), key=keys.__getitem__)
    return rows[best].session_id


def _first_of_sorted(home: Home, rows: list) -> str | None:
    """:func:`first_needing_attention` by walking ``rows`` (newest first)."""
    for row in rows:
        if _retry_stream(row) is not None and _journal_has_output(home, row):
            return row.session_id
    for row in rows:
        if row.needs_attention:
            return row.session_id
    return rows[0].session_id if rows else None


def _retry_stream(row) -> str | None:
    """The run a row's pending marker waits for, when both ids are ones hermes accepts."""
    marker = row.sidecar.pending_marker if row.sidecar is not None else None
    stream = marker.get("_journal_retry_stream_id") if isinstance(marker, dict) else None
    if isinstance(stream, str) and is_valid_journal_id(stream) and is_valid_journal_id(row.session_id):
        return stream
    return None


def _journal_has_output(home: Home, row) -> bool:
    try:
        return journal_path(home.session_dir, row.session_id, _retry_stream(row)).stat().st_size > 0
    except (OSError, ValueError):
        return False


GLANCE_MIN_BYTES = 4_000_000  # below this the full load is quick; no glance needed
GLANCE_ROWS = 1_000
GLANCE_READ = 256 * 1024  # the first read of a glance; more only when these lines are longer


@dataclass
class JournalGlance:
    """A big journal shown while the whole session is still being read.

    First (``complete`` False) only its first ``ready_rows`` lines, read from the start of the
    file: each line's checks need only the lines above it, so they are exact, except that an
    invalid byte further on would make hermes drop every line. Then (``complete``, from
    :func:`index_glance`) every line, with the whole file checked.
    """

    session_id: str
    run: RunData
    ready_rows: int
    complete: bool = False


def glance_journal(
    session_dir: Path,
    session_id: str,
    prefer: list[str],
    check: Check = lambda: None,
    rows: int = GLANCE_ROWS,
    min_bytes: int = GLANCE_MIN_BYTES,
) -> JournalGlance | None:
    """The run the view will show first (``prefer``-red ids, else the newest file) with its first
    ``rows`` lines read; None when the session's journals are small or absent. Only a few
    hundred kilobytes are read and nothing is parsed yet: the view parses the lines it shows."""
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
        head = _read_head(path, rows)
    except OSError:
        return None
    raw = RawJournal(head, session_id=path.parent.name, run_id=path.stem, path=path)
    return JournalGlance(
        session_id, RunData(RunInfo(path.stem, path, size, None), raw=raw), min(rows, len(raw))
    )


def _read_head(path: Path, rows: int) -> bytes:
    """The file's first ``rows`` complete lines (all of it when it is shorter)."""
    want = GLANCE_READ
    while True:
        data = _read_prefix(path, want)
        if len(data) < want:
            return data  # the whole file
        cut, pos = 0, 0
        for _ in range(rows):
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            cut = pos = nl + 1
        else:
            return data[:cut]
        if want >= 64 * GLANCE_READ and cut:
            return data[:cut]  # very long lines: show the complete ones read so far
        if want * 4 > MAX_FILE_BYTES:
            return data[:cut]  # a line longer than anything loaded: no complete line to show
        want *= 4


def recommended_actions(detail: SessionDetail, extra_findings: list | None = None) -> set[str]:
    """Actions some finding of the session (or of the home, for home-wide ones) recommends."""
    actions = {f.action for f in detail.findings if f.action}
    actions |= {f.action for f in (extra_findings or []) if f.action}
    return actions


class PlanFailure(str):
    """A planner's failure in words (what its disabled button says), with the traceback
    (``details``) for the window's "Details…" and log."""

    details: str

    def __new__(cls, words: str, details: str = "") -> PlanFailure:
        self = super().__new__(cls, words)
        self.details = details or words
        return self

    def __reduce__(self):
        return PlanFailure, (str(self), self.details)


def plan_session_actions(
    home: Home, session_id: str, recommended: set[str], check: Check = lambda: None
) -> dict[str, Plan | str]:
    """A plan (or an error message) per action of the view, for this session.

    Per-session actions are always planned, so their buttons say whether they apply.
    ``rebuild-index`` reads every sidecar of the home, so it is planned only when a finding
    recommends it. Each plan carries the clock it was made with (``Plan.clock``: a repair kit
    saved from a preview records it).
    """
    ctx = make_context(home, default_clock(home, None, None))
    out: dict[str, Plan | str] = {}
    for action in ACTIONS:
        whole_home = planned_for_home(action)
        if whole_home and action not in recommended:
            continue
        check()
        target = None if whole_home else session_id
        try:
            # links leaving the home are followed here, named in the plan, and confirmed in the
            # preview before Write is possible (PreviewDialog.confirm_links)
            plans = plan_action(ctx, action, target, follow_links=True)
        except Exception as exc:  # noqa: BLE001 - a planner failure disables its button, with the reason
            from inspector.error_words import error_words
            from inspector.log import get_logger

            get_logger(__name__).exception("planning %s for %s failed", action, session_id)
            # the reason in words, shown beside the disabled button; the traceback for Details…
            out[action] = PlanFailure(error_words(exc), "".join(traceback.format_exception(exc)).rstrip())
            continue
        if plans:
            out[action] = plans[0]
    return out


def plan_applies(plan: Plan | PlanSummary | str | None) -> bool:
    """The button rule: the plan has changes and no refusal."""
    return isinstance(plan, (Plan, PlanSummary)) and plan.refusal is None and bool(plan.changes)


def plan_tooltip(action: str, plan: Plan | PlanSummary | str | None) -> str:
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
