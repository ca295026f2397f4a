"""Action ``repair-interrupted``: hermes' ``_apply_core_sync_or_error_marker`` as a planner.

Spec run-journal-and-promotion §3. A session whose live stream died with a pending user
turn gets that turn back as a ``_recovered`` user row, whatever the run journal already
emitted, and an interrupted marker (or none, when the journal shows the run completed).
The call is the one a cold ``get_session`` makes: ``stream_id_for_recheck`` =
``active_stream_id``, ``require_stream_dead=True`` (offline no stream is alive) and
``touch_updated_at=True``.

Branches (§3.3-§3.4): A1 completed journal, A2 non-empty messages, B empty messages with
the agent's core transcript, C empty messages without one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from inspector import portable
from inspector.forked import Forked, ForkedError
from inspector.gcpause import gc_paused
from inspector.plan import Clock, Plan
from inspector.repair.context import RepairContext
from inspector.repair.gateway_error import detect_gateway_terminal_error, materialize_gateway_terminal_error
from inspector.repair.journal_read import (
    JournalRead,
    events_have_visible_output,
    journal_completed,
    journal_has_visible_output,
    journal_outputs,
    read_journal,
)
from inspector.repair.journal_recovery import MaterializeReport, append_journaled_partial_output
from inspector.repair.marker import interrupted_marker, marker_with_retry_hook
from inspector.repair.model_context import checkpoint_match, latest_user_text_matches, normalize, text_match
from inspector.repair.notes import Notes, describe_output, journal_notes, output_warnings, unsure_refusal
from inspector.repair.pending_turn import (
    append_recovered_pending_turn,
    clear_pending,
    context_only_recovered_turn,
    recovered_ts,
)
from inspector.repair.registry import CORE_TRANSCRIPT, HERMES, RUN_JOURNALS, SESSION, ActionSpec
from inspector.repair.save import IndexFacts, index_facts_ahead, save_session, sidecar_names
from inspector.repair.session_source import load_session_for_repair
from inspector.store.files import RawFile, TooLargeToLoad, open_regular
from inspector.store.index import index_path
from inspector.store.jsonfmt import loads_bytes, loads_bytes_fast
from inspector.store.sidecar import LoadedSession, is_safe_session_id

NAME = "repair-interrupted"

SPEC = ActionSpec(
    name=NAME,
    label="Repair interrupted turn",
    scope=SESSION,
    origin=HERMES,
    mirrors="api.models._apply_core_sync_or_error_marker",
    help="hermes' interrupted-turn repair: a turn marked as running that nothing streams is closed",
    answers=("stale_pending_turn",),
    hermes_reads=frozenset({RUN_JOURNALS, CORE_TRANSCRIPT}),
)
GRACE_SECONDS = 30  # _REPAIR_STALE_PENDING_GRACE_SECONDS
CONTINUATION_HEAD_CHARS = 4096
MAX_SOURCES_NAMED = 5

CoreReader = Callable[[], RawFile | None]


class _Repair:
    """One run of ``_apply_core_sync_or_error_marker`` on a session dict."""

    def __init__(
        self, session: dict, journal: JournalRead, read_core: CoreReader, clock: Clock, notes: Notes
    ):
        self.s = session
        self.sid = session["session_id"]
        self.journal = journal
        self.read_core = read_core
        self.clock = clock
        self.notes = notes
        self.stream_id: Any = None
        self.terminal = None

    # -------------------------------------------------- entry

    def run(self) -> bool:
        """The repair of a session with a pending user message (the plan answers for one without)."""
        s = self.s
        # stream_id_for_recheck is active_stream_id itself, so the rotation re-check passes,
        # and offline no stream or worker is alive.
        self.stream_id = s.get("active_stream_id")
        self.terminal = detect_gateway_terminal_error(self.sid, self.stream_id, self.journal)
        ts = recovered_ts(s, self.clock.now)
        if len(s["messages"]) != 0:
            return self._branch_a(ts)
        core = self._core_messages()
        if core is not None:
            return self._branch_b(core, ts)
        return self._branch_c(ts)

    def _materialize(self, *, dedupe: bool) -> MaterializeReport:
        report = append_journaled_partial_output(
            self.s, self.stream_id, self.journal, dedupe=dedupe, now=self.clock.now
        )
        output_warnings(report, self.notes)
        return report

    def _recover_terminal_error(self) -> bool:
        if self.terminal is None:
            return False
        how = materialize_gateway_terminal_error(self.s, self.terminal)
        self.notes.summary.append(
            f"the journal ends in an unsaved gateway error ({self.terminal.event_id}); "
            f"its error row is {'already present' if how == 'present' else how} and no interrupted marker is added"
        )
        return True

    def _pending_identity(self, message: Any, ts: int) -> tuple[bool, bool]:
        s = self.s
        pending = s.get("pending_user_message")
        already = checkpoint_match(
            message, pending, ts, s.get("pending_user_source"), s.get("pending_attachments")
        )
        return already, already or text_match(message, pending)

    # -------------------------------------------------- branch A

    def _branch_a(self, ts: int) -> bool:
        s = self.s
        already, tail = self._pending_identity(s["messages"][-1], ts)
        started = s.get("pending_started_at")
        if journal_completed(self.sid, self.stream_id, self.journal):
            return self._branch_a1(ts, already)
        if not tail:
            append_recovered_pending_turn(s, timestamp=ts)
            self.notes.summary.append(
                f"restores the pending prompt as a recovered user row (sent {_when(ts)})"
            )
        else:
            context_only_recovered_turn(s, timestamp=ts)
            self.notes.summary.append(
                "the last row already holds the pending prompt; "
                "only the model context gets the recovered user turn"
            )
        report = self._materialize(dedupe=False)
        self._say_output(report, "before the marker")
        resolved = self._recover_terminal_error()
        clear_pending(s)
        if not resolved:
            s["messages"].append(
                marker_with_retry_hook(
                    self.clock,
                    recovered_output=report.recovered,
                    stream_id=self.stream_id,
                    pending_started_at=started,
                )
            )
            self._say_marker(s["messages"][-1])
        self.notes.summary.append("clears the pending turn (the chat already had messages)")
        return True

    def _branch_a1(self, ts: int, already: bool) -> bool:
        s = self.s
        if not (already or latest_user_text_matches(s["messages"], s.get("pending_user_message"))):
            append_recovered_pending_turn(s, timestamp=ts)
            self.notes.summary.append(
                f"restores the pending prompt as a recovered user row (sent {_when(ts)})"
            )
        report = self._materialize(dedupe=True)
        self._say_output(report, "to the transcript")
        clear_pending(s)
        self.notes.summary.append(
            "the run journal shows the run completed: clears the pending turn without an interrupted marker"
        )
        return True

    # -------------------------------------------------- branch B

    def _core_messages(self) -> tuple[dict, Any] | None:
        raw = self.read_core()  # OSError escapes: hermes' open() fails the repair too
        if raw is None:
            return None
        core = loads_bytes(raw.data)  # not JSON: hermes' json.load raises, the repair fails
        messages = core.get("messages", [])
        return (core, messages) if messages else None

    def _branch_b(self, core_and_messages: tuple[dict, Any], ts: int) -> bool:
        s = self.s
        core, messages = core_and_messages
        s["messages"] = messages
        s["tool_calls"] = core.get("tool_calls") or []
        for key in ("input_tokens", "output_tokens", "estimated_cost"):
            if core.get(key) is not None:
                s[key] = core[key]
        self.notes.summary.append(
            f"replaces the empty transcript with the agent's core transcript ({len(messages)} messages)"
        )
        self._b_pending_prompt(ts)
        report = self._materialize(dedupe=True)
        self._say_output(report, "after the core messages")
        resolved = self._recover_terminal_error()
        started = s.get("pending_started_at")
        clear_pending(s)
        if report.recovered and not resolved:
            s["messages"].append(
                interrupted_marker(
                    self.clock, recovered_output=True, stream_id=self.stream_id, pending_started_at=started
                )
            )
            self._say_marker(s["messages"][-1])
        elif not resolved:
            self.notes.summary.append(
                "adds no marker: nothing new was recovered (hermes arms no retry when it used the core transcript)"
            )
        self.notes.summary.append(
            "clears the pending turn (the chat was rebuilt from the agent's core transcript)"
        )
        return True

    def _b_pending_prompt(self, ts: int) -> None:
        s = self.s
        last = s["messages"][-1] if s["messages"] else None
        _, tail = self._pending_identity(last, ts)
        if not normalize(s.get("pending_user_message")) or tail:
            return
        visible = journal_has_visible_output(self.journal)
        if visible or self.terminal is not None:
            append_recovered_pending_turn(s, timestamp=ts)
            self.notes.summary.append(
                f"restores the pending prompt as a recovered user row (sent {_when(ts)})"
            )
            if visible and not self._journal_has_real_text():
                self.notes.warnings.append(
                    "the journal counts as visible output only because of whitespace-only tokens; "
                    "hermes re-appends the pending prompt but they produce no row"
                )
            return
        self.notes.warnings.append(
            "the core transcript does not hold the pending prompt and the journal has no visible output: "
            "hermes drops the pending prompt silently"
        )

    def _journal_has_real_text(self) -> bool:
        return events_have_visible_output(
            e for e in journal_outputs(self.journal.events) if not _blank_token(e)
        )

    # -------------------------------------------------- branch C

    def _branch_c(self, ts: int) -> bool:
        s = self.s
        if s.get("pending_user_message"):
            append_recovered_pending_turn(s, timestamp=ts)
            self.notes.summary.append(
                f"restores the pending prompt as a recovered user row (sent {_when(ts)})"
            )
        report = self._materialize(dedupe=False)
        self._say_output(report, "before the marker")
        resolved = self._recover_terminal_error()
        started = s.get("pending_started_at")
        clear_pending(s)
        if not resolved:
            s["messages"].append(
                marker_with_retry_hook(
                    self.clock,
                    recovered_output=report.recovered,
                    stream_id=self.stream_id,
                    pending_started_at=started,
                )
            )
            self._say_marker(s["messages"][-1])
        self.notes.summary.append(
            "clears the pending turn (the chat was empty and the agent has no core transcript of it)"
        )
        return True

    # -------------------------------------------------- words

    def _say_output(self, report: MaterializeReport, where: str) -> None:
        line = describe_output(report, where)
        if line:
            self.notes.summary.append(line)

    def _say_marker(self, marker: dict) -> None:
        cause = _CAUSE_BASIS.get(marker.get("interruption_cause"), "the cause hermes would give")
        if marker.get("_pending_journal_recovery"):
            self.notes.summary.append(
                f"appends an interrupted marker (cause: {cause}) armed for the lazy journal retry: "
                "no output was found yet"
            )
        elif "recovered from the run journal" in marker["content"]:
            self.notes.summary.append(
                f"appends an interrupted marker (cause: {cause}) saying output was recovered"
            )
        else:
            self.notes.summary.append(
                f"appends an interrupted marker (cause: {cause}) saying no output was recovered"
            )


# Why the offline cause is what it is: hermes decides from its own runtime state (quirk 11).
_CAUSE_BASIS = {
    "process_restart": "the WebUI restarted after the turn began",
    "lost_worker_bookkeeping": "the turn began after the WebUI started and no worker is alive offline",
    "unknown": "neither a start time nor a stream id tells more",
}


def _when(ts: int) -> str:
    """A row's time in the plan's words: the local date and time (the raw value is in the diff)."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, OSError, ValueError):
        return str(ts)


def _blank_token(event: Any) -> bool:
    """A token event whose text is blank (``event``: a :class:`~inspector.store.journal.JournalEvent`)."""
    payload = event.payload if isinstance(event.payload, dict) else {}
    name = str(event.event or event.type or "")
    return name == "token" and not str(payload.get("text") or "").strip()


# ---------------------------------------------------------------- get_session guards (§3.1)


def _grace_not_elapsed(data: dict, now: float) -> bool:
    value = data.get("pending_started_at")
    try:
        started = float(value) if value else None
    except (TypeError, ValueError, OverflowError):
        return False
    return bool(started) and now - started < GRACE_SECONDS


# hermes' head of a sidecar: ``_read_file_head(path, max_prefix_bytes=16384)[:4096]``, the first
# 16,384 bytes decoded as UTF-8 (invalid bytes dropped), then 4,096 characters of that text.
HEAD_BYTES = CONTINUATION_HEAD_CHARS * 4  # a character is at most 4 bytes
# The first read: 4,096 bytes and some more, so that a head with a few multi-byte characters has its
# 4,096 characters in one read and one short decode (most sidecar heads are ASCII or nearly).
HEAD_FIRST_READ = CONTINUATION_HEAD_CHARS + 512


def _read_upto(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd`` (fewer at its end): hermes' buffered ``read(size)``."""
    first = os.read(fd, size)
    if len(first) == size or not first:
        return first
    chunks, got = [first], len(first)
    while got < size:
        chunk = os.read(fd, size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _head_holds(path: str, needle: str, needle_bytes: bytes) -> bool:
    """Whether hermes' head of the sidecar at ``path`` (see :data:`HEAD_BYTES`) holds ``needle``
    (ASCII, ``needle_bytes`` its bytes); False for anything but a readable regular file.

    Opened non-blocking and checked with fstat, so a FIFO named like a sidecar cannot block. The
    head is found from as few bytes as tell it: 4,096 ASCII bytes are the 4,096 characters; else
    the decoded first :data:`HEAD_FIRST_READ` bytes are the start of hermes' text (UTF-8 decodes
    left to right; a character cut at the end is dropped, as is an invalid one), so when they
    give 4,096 characters those are hermes'; otherwise the 16,384 bytes are decoded, as hermes
    does (tests/repair/test_interrupted_head_rules.py holds this to hermes' read).
    """
    try:
        fd, _ = open_regular(path)
    except (OSError, ValueError):  # NotARegularFile included
        return False
    try:
        data = _read_upto(fd, HEAD_FIRST_READ)
        head = data[:CONTINUATION_HEAD_CHARS]
        if head.isascii():  # 4,096 characters, or the whole file: the text is these bytes
            return needle_bytes in head
        text = data.decode("utf-8", errors="ignore")
        if len(text) < CONTINUATION_HEAD_CHARS and len(data) == HEAD_FIRST_READ:
            data += _read_upto(fd, HEAD_BYTES - HEAD_FIRST_READ)
            text = data.decode("utf-8", errors="ignore")
    except OSError:
        return False
    finally:
        os.close(fd)
    return needle in text[:CONTINUATION_HEAD_CHARS]


def _index_may_name_parent(data: bytes, sid: Any) -> bool:
    """False only when no index row can hold ``"parent_session_id": sid`` (then no parse is needed).

    A safe id is written literally unless the text uses ``\\u`` escapes, and a key token is a
    quote, the name, a quote, optional JSON whitespace, a colon; inside a string every quote is
    escaped, so a match can only be a real key (of a row or of a nested object: then parse).
    """
    if not is_safe_session_id(sid) or _has_u_escape(data):
        return True
    # The regex ``"parent_session_id"\s*:\s*"<sid>"``, looked for only where ``<sid>"`` stands:
    # from the byte before it backwards, a quote, whitespace, a colon, whitespace, the key (each
    # whitespace run skipped whole: it stops at the colon, then at the key's closing quote).
    target = sid.encode("ascii") + b'"'
    at = data.find(target)
    while at >= 0:
        if _key_before(data, at):
            return True
        at = data.find(target, at + 1)
    return False


_FEW_BACKSLASHES = 4096


def _has_u_escape(data: bytes) -> bool:
    """``b"\\u" in data``, found from the backslashes (one memchr each: an index holds few or
    none, and a two-byte search of 22 MB costs ten times more); past a few thousand
    backslashes, the search itself."""
    at, looked = data.find(b"\\"), 0
    while at >= 0:
        if data[at + 1 : at + 2] == b"u":
            return True
        looked += 1
        if looked > _FEW_BACKSLASHES:
            return b"\\u" in data
        at = data.find(b"\\", at + 1)
    return False


_REGEX_SPACE = frozenset(b" \t\n\r\f\v")  # what ``\s`` matches in a bytes pattern
_PARENT_KEY = b'"parent_session_id"'


def _key_before(data: bytes, at: int) -> bool:
    """Whether ``data[:at]`` ends with ``"parent_session_id"``, whitespace, ``:``, whitespace, ``"``."""
    i = at - 1
    if i < 0 or data[i] != 0x22:
        return False
    i -= 1
    while i >= 0 and data[i] in _REGEX_SPACE:
        i -= 1
    if i < 0 or data[i] != 0x3A:
        return False
    i -= 1
    while i >= 0 and data[i] in _REGEX_SPACE:
        i -= 1
    return data.endswith(_PARENT_KEY, 0, i + 1)


PARALLEL_HEADS_MIN = 256  # sidecars from which their heads are read by a forked copy


def _sidecar_sources(session_dir: Path, sid: str, names: list[str] | None = None) -> list[str]:
    """The sidecars (names, in :func:`sidecar_names` order) whose hermes head holds
    ``"parent_session_id": "<sid>"``, the session's own left out; the search stops at
    :data:`MAX_SOURCES_NAMED`. ``names``: the folder's sidecar names when already listed."""
    found: list[str] = []
    needle = f'"parent_session_id": "{sid}"'
    needle_bytes = needle.encode("utf-8", errors="surrogatepass")
    own = f"{sid}.json"
    prefix = os.path.join(str(session_dir), "")  # os.path.join(folder, name) for a listed name
    for name in sidecar_names(session_dir) if names is None else names:
        if len(found) >= MAX_SOURCES_NAMED:
            break
        if name == own:  # Path(name).stem == sid (hermes skips the session itself)
            continue
        # Only the head matters (hermes reads 4096 characters); read it directly rather than
        # caching whole sidecars that the plan never writes.
        if _head_holds(prefix + name, needle, needle_bytes):
            found.append(name)
    return found


class SidecarSources:
    """:func:`_sidecar_sources` of one session, looked for by a forked copy while this process
    reads the journal and repairs (on the 10,000-sidecar bench home the 9,922 heads take 0.1 s of
    system calls and Python, and the second core is idle meanwhile), or here when :meth:`result` is
    asked and no copy was started: few sidecars, forking not safe (see
    :func:`inspector.portable.can_fork`), or the fork failed. A copy that fails is redone here.
    :meth:`close` reaps a copy whose result is no longer wanted (a plan that refuses).

    The copy then also reads the index and finds what its update after the save needs of it
    (:func:`~inspector.repair.save.index_facts_ahead`: 0.2 s of the 22 MB bench index's checks);
    :meth:`index_facts` gives them (None without a copy, or where the copy found none)."""

    def __init__(self, session_dir: Path, sid: str) -> None:
        self._dir, self._sid = session_dir, sid
        self._names = sidecar_names(session_dir)
        self._copy: Forked | None = None
        self._found: list[str] | None = None
        self._facts: IndexFacts | None = None
        if len(self._names) >= PARALLEL_HEADS_MIN and portable.can_fork():
            try:
                self._copy = Forked(lambda: _heads_and_index_facts(session_dir, sid, self._names))
            except OSError:
                self._copy = None

    def _collect(self) -> None:
        copy, self._copy = self._copy, None
        if copy is not None:
            try:
                self._found, self._facts = copy.result()
            except ForkedError:
                self._found = None

    def index_facts(self) -> IndexFacts | None:
        self._collect()
        return self._facts

    def result(self) -> list[str]:
        if self._found is None:
            self._collect()
            if self._found is None:
                self._found = _sidecar_sources(self._dir, self._sid, self._names)
        return self._found

    def close(self) -> None:
        copy, self._copy = self._copy, None
        if copy is not None:
            with contextlib.suppress(ForkedError):
                copy.result()


def _heads_and_index_facts(
    session_dir: Path, sid: str, names: list[str]
) -> tuple[list[str], IndexFacts | None]:
    """The forked copy's work: the heads first, then the index's facts (whose failure costs only them)."""
    heads = _sidecar_sources(session_dir, sid, names)
    try:
        facts = index_facts_ahead(session_dir)
    except Exception:  # noqa: BLE001 - the save finds them itself
        facts = None
    return heads, facts


def _continuation_sources(ctx: RepairContext, sid: str, heads: list[str]) -> list[str]:
    """Where hermes would find a compression continuation of ``sid``: the index, then the sidecars
    whose heads name it (``heads``: :func:`_sidecar_sources`, searched here or by a copy).

    At most :data:`MAX_SOURCES_NAMED` are gathered (the warning names no more).
    """
    found = []
    try:
        data = ctx.snapshot.data(index_path(ctx.session_dir)) or b"[]"
    except OSError:
        data = b"[]"
    if _index_may_name_parent(data, sid):
        try:
            rows = loads_bytes_fast(data)
        except (ValueError, RecursionError):
            rows = []
        if isinstance(rows, list) and any(
            isinstance(r, dict) and r.get("parent_session_id") == sid and r.get("session_id") != sid
            for r in rows
        ):
            found.append("_index.json")
    return found + heads[: MAX_SOURCES_NAMED - len(found)]


def _sources_warning(sources: list[str]) -> str:
    return (
        "a compression continuation of this session exists ("
        + ", ".join(sources[:MAX_SOURCES_NAMED])
        + "); hermes' get_session skips the repair for its parent"
    )


def guard_warnings(ctx: RepairContext, data: dict) -> list[str]:
    """Where hermes' cold ``get_session`` would not have run this repair (§3.1), in one go (the plan
    asks for the continuation's part after the repair, its heads searched meanwhile)."""
    out = _state_warnings(ctx, data)
    sid = data["session_id"]
    sources = _continuation_sources(ctx, sid, _sidecar_sources(ctx.session_dir, sid))
    if sources:
        out.append(_sources_warning(sources))
    return out


def _state_warnings(ctx: RepairContext, data: dict) -> list[str]:
    """:func:`guard_warnings` but the continuation's: what the session's own fields say."""
    out = []
    if not data.get("active_stream_id"):
        out.append(
            "hermes' get_session runs this repair only while active_stream_id is set; "
            "it is empty here, so hermes would not run it on its own"
        )
    if data.get("pre_compression_snapshot"):
        out.append("this session is a pre-compression snapshot; hermes' get_session skips the repair for it")
    if _grace_not_elapsed(data, ctx.clock.now):
        out.append(
            f"the pending turn started less than {GRACE_SECONDS} s before now; "
            "hermes' get_session would wait (the stream may still be finishing)"
        )
    return out


# ---------------------------------------------------------------- the action


def plan(ctx: RepairContext, session_id: str) -> Plan:
    """What ``_apply_core_sync_or_error_marker`` would write for this session (nothing is written)."""
    # The plan builds many small acyclic objects (the session's rows, the recovered ones, the
    # index's rows): without a pause the collector walks them again and again (~0.07 s CPU on the
    # 200,000-event journal's session).
    with gc_paused():
        return _plan(ctx, session_id)


def _plan(ctx: RepairContext, session_id: str) -> Plan:
    result = Plan(action=NAME, session_id=session_id)
    # shared: loaded.data is read (by the guards) before the repair changes the session, never
    # after, so the session is changed in place instead of in a deep copy
    source = load_session_for_repair(ctx, session_id, shared=True)
    if source.refusal is not None:
        result.refusal = source.refusal
        return result
    loaded, session = source.loaded, source.working
    # the file's messages as the save counts them (its -1 for a file without a list decides as 0)
    on_disk = len(session["messages"])
    if not loaded.data.get("pending_user_message"):
        # hermes' repair returns False at once: nothing is read (not even the run journal) or written
        result.summary = ["nothing to repair: the session has no pending user message"]
        result.result = {"hermes_return": False}
        return result
    # the guards read the session's fields now (the repair changes them in place); the sidecars'
    # heads are searched meanwhile (a forked copy where that is safe) and named after the repair,
    # in the place guard_warnings gives that warning: after the session's own
    sidecars = SidecarSources(ctx.session_dir, loaded.data["session_id"])
    try:
        return _plan_repair(
            ctx,
            session_id,
            result,
            source,
            on_disk,
            Notes(warnings=_state_warnings(ctx, loaded.data)),
            sidecars,
        )
    finally:
        sidecars.close()


def _plan_repair(
    ctx: RepairContext,
    session_id: str,
    result: Plan,
    source: Any,
    on_disk: int,
    notes: Notes,
    sidecars: SidecarSources,
) -> Plan:
    loaded, session = source.loaded, source.working
    guards = len(notes.warnings)
    sid = loaded.data["session_id"]  # (read before the repair changes the session in place)
    # Streamed: the repair walks the events at most three times (visible output, materializer)
    # and asks the scan for the rest, so a 200,000-event journal is never held as dicts.
    journal = read_journal(
        ctx.snapshot, ctx.session_dir, session_id, session.get("active_stream_id"), stream=True
    )
    if journal.unsure is not None:
        result.refusal = unsure_refusal(journal)
        return result
    core_path = ctx.home.core_transcript(session_id, session.get("profile"))
    try:
        returned = _Repair(session, journal, lambda: ctx.snapshot.read(core_path), ctx.clock, notes).run()
        journal = replace(journal, events=[])  # the notes need no events: the bytes go before the save
        changes = (
            save_session(
                ctx.save_context(),
                LoadedSession(session, loaded.count_hint, loaded.dropped_keys),
                touch_updated_at=True,
                existing_count=on_disk,
                index_facts=sidecars.index_facts(),
            )
            if returned
            else []
        )
    except TooLargeToLoad as exc:  # the inspector's limit, not hermes' failure
        result.refusal = (
            f"{exc.filename} is not loaded ({exc.strerror}): what hermes' repair would do "
            "with it is unknown, so nothing is written"
        )
        return result
    except Exception as exc:  # hermes raises too: get_session logs it and reports "not repaired"
        result.refusal = (
            f"hermes' repair fails on this session ({type(exc).__name__}: {exc}); it writes nothing"
        )
        result.result = {"hermes_return": False, "hermes_error": f"{type(exc).__name__}: {exc}"}
        return result
    sources = _continuation_sources(ctx, sid, sidecars.result())
    if sources:
        notes.warnings.insert(guards, _sources_warning(sources))
    if returned and journal.stream_id:
        journal_notes(journal, notes)
    if returned and loaded.dropped_keys:
        notes.warnings.append("hermes' save drops keys it does not know: " + ", ".join(loaded.dropped_keys))
    result.changes, result.summary, result.warnings = changes, notes.summary, notes.warnings
    result.result = {"hermes_return": returned}
    return result


def eligible(ctx: RepairContext) -> list[str]:
    """Sidecars with a pending user message and an active stream id (offline every stream is dead)."""
    return ctx.sidecars_where(
        b"pending_user_message",
        lambda raw: bool(raw.get("pending_user_message") and raw.get("active_stream_id")),
    )
