"""Stream S's run journal as the repairs read it, and the two tests made on its events.

Spec run-journal-and-promotion §1.7 (reading the journal for (session_id, stream_id) the way
``read_run_events`` does: never raises, an unreadable journal behaves as no output),
``_run_journal_has_visible_output`` (§3.4) and the completed-journal test of branch A1
(§3.4, ownership per §1.4). Ported from hermes-webui byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspector.store.files import FileSnapshot
from inspector.store.journal import (
    JournalDepthUnsure,
    JournalTooDeep,
    JournalUnreadable,
    StreamedEvents,
    authoritative_terminal_event,
    event_owns_run,
    journal_event,
    journal_path,
    parse_journal_bytes,
    scan_journal_bytes,
    torn_line_numbers,
)


@dataclass(frozen=True)
class JournalRead:
    """One run journal as the repair sees it, read once through the snapshot."""

    stream_id: Any
    path: Path | None
    exists: bool
    size: int
    events: list[dict] | StreamedEvents  # StreamedEvents: parsed again at each walk (``stream=True``)
    malformed: list[dict]
    error: str | None  # why hermes cannot read it (then it behaves as if there were no output)
    torn_lines: list[int]  # physical lines str.splitlines() tore apart (U+2028 and friends)
    # Set when a line is nested so deeply that whether hermes reads the journal depends on hermes'
    # own call stack (inspector.store.json_depth): what hermes would do is unknown, repairs refuse.
    unsure: str | None = None
    too_deep: bool = False  # hermes' reader fails on a line nested too deeply (then ``error`` says so)

    @property
    def readable(self) -> bool:
        """False when hermes' reader failed (bad id, I/O error, invalid UTF-8, a line nested too
        deeply), or may fail (:attr:`unsure`)."""
        return self.error is None


def read_journal(
    snapshot: FileSnapshot, session_dir: Path, session_id: str, stream_id: Any, *, stream: bool = False
) -> JournalRead:
    """Read S's journal the way ``read_run_events`` does; never raises.

    ``stream=True``: the events are a :class:`~inspector.store.journal.StreamedEvents` (found by
    one scan, parsed again whenever they are walked, never all held), for a repair that walks
    them once or twice: a 200,000-event journal costs the memory of its bytes instead of 270 MB
    of dicts. The same events, lines and verdicts as without it.
    """

    def failed(reason: str, path: Path | None = None, exists: bool = False, size: int = 0) -> JournalRead:
        return JournalRead(stream_id, path, exists, size, [], [], reason, [])

    if not stream_id:
        return failed("no stream id")
    try:  # hermes' _validate_id reads str(stream_id): an int 12345 (a hand-edited file) names 12345.jsonl
        path = journal_path(session_dir, session_id, str(stream_id))
    except ValueError as exc:
        return failed(str(exc))
    try:
        if stream:
            # Not kept by the snapshot (nor hashed: a journal is never written), so the bytes go
            # once the events are walked; still named among the files this plan read (link checks).
            snapshot.asked.append(path)
            data = snapshot.read_transient(path)
        else:
            raw = snapshot.read(path)
            data = raw.data if raw is not None else None
    except OSError as exc:
        return failed(f"cannot read {path.name}: {exc}", path, True)
    if data is None:
        return JournalRead(stream_id, path, False, 0, [], [], None, [])
    events: list[dict] | StreamedEvents
    try:
        if stream:
            scanned = scan_journal_bytes(data)
            events, malformed, torn = scanned.events, scanned.malformed, scanned.torn_lines
        else:
            parsed = parse_journal_bytes(data)
            events, malformed = parsed.events, parsed.malformed
            torn = torn_line_numbers(data.decode("utf-8"))
    except JournalDepthUnsure as exc:
        return JournalRead(stream_id, path, True, len(data), [], [], str(exc), [], unsure=str(exc))
    except JournalTooDeep as exc:
        return replace(failed(str(exc), path, True, len(data)), too_deep=True)
    except JournalUnreadable as exc:
        return failed(str(exc), path, True, len(data))
    return JournalRead(stream_id, path, True, len(data), events, malformed, None, torn)


def journal_outputs(events: list[dict] | StreamedEvents) -> Iterator[Any]:
    """The events as :class:`~inspector.store.journal.JournalEvent` (the fields the repair's walks
    read, each ``event.get(name)``), in file order: a streamed journal's decoded piece by piece,
    without a dict per event."""
    if isinstance(events, StreamedEvents):
        return events.outputs()
    return map(journal_event, events)


def journal_has_visible_output(journal: JournalRead) -> bool:
    """``_run_journal_has_visible_output``: a token, a fresh interim, reasoning or any tool."""
    return events_have_visible_output(journal_outputs(journal.events))


def events_have_visible_output(events: Iterable[Any]) -> bool:
    """:func:`journal_has_visible_output` of these :class:`~inspector.store.journal.JournalEvent`
    (the first visible one ends the walk)."""
    for event in events:
        name = str(event.event or event.type or "")
        payload = event.payload if isinstance(event.payload, dict) else {}
        if name == "token" and str(payload.get("text") or ""):
            return True  # whitespace-only counts here (quirk 6)
        if (
            name == "interim_assistant"
            and not payload.get("already_streamed")
            and str(payload.get("text") or "").strip()
        ):
            return True
        if name == "reasoning":
            text = payload.get("text") or payload.get("reasoning") or payload.get("thinking") or ""
            if str(text).strip():
                return True
        if name == "tool":
            return True
    return False


def journal_completed(session_id: str, stream_id: Any, journal: JournalRead) -> bool:
    """A1: the owned authoritative terminal event is a ``completed`` done/stream_end."""
    if not stream_id or not journal.events:
        return False
    event = authoritative_terminal_event(journal.events)
    return (
        event is not None
        and event.get("terminal") is True
        and event.get("terminal_state") == "completed"
        and event_owns_run(event, session_id, stream_id)
    )
