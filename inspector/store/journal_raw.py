"""The *raw* view of a run journal: every physical line, and what hermes makes of it.

:mod:`inspector.store.journal` reads a journal the way hermes does, which silently loses
things: one invalid UTF-8 byte makes the whole file unreadable, ``str.splitlines()`` tears
a record that contains U+2028/U+2029/U+0085 (or ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, a bare
``\\r``) into fragments, and lines that are not JSON objects are skipped. A developer needs
to see those lines, where they are and why hermes dropped them, plus anomalies hermes
does not care about (string or duplicate seqs, gaps, ids that do not match the path, CRLF).

:class:`RawJournal` indexes the file in one pass (byte offset of each ``\\n``-terminated
line) and parses lines lazily, so a 200,000-event journal opens quickly. The seq checks
need every line's seq; they are computed once, on first use, in a single linear pass.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.store.journal import (
    JournalUnreadable,
    ParsedJournal,
    is_valid_journal_id,
    list_runs,
    parse_journal_bytes,
    run_summary,
)
from inspector.store.jsonfmt import read_regular

# Characters str.splitlines() treats as line boundaries besides "\n" and "\r\n".
# "\r" counts only when it is not the CR of a CRLF line end.
_TEARING = re.compile("\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CHAR_NAMES = {
    "\r": "a bare CR", "\x0b": "\\v", "\x0c": "\\f", "\x1c": "\\x1c", "\x1d": "\\x1d",
    "\x1e": "\\x1e", "\x85": "U+0085", "\u2028": "U+2028", "\u2029": "U+2029",
}


def _may_tear(text: str) -> bool:
    # Plain substring tests run at memchr speed; the regex below does not. Most journals
    # hold none of these characters (and only CRLF line ends, if any CRs at all).
    if any(ch in text for ch in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        return True
    return "\r" in text and text.count("\r") != text.count("\r\n")


def torn_line_numbers(text: str) -> list[int]:
    """1-based ``\\n``-line numbers that ``str.splitlines()`` splits into several pieces."""
    if not _may_tear(text):
        return []
    numbers: list[int] = []
    line, pos = 1, 0
    for match in _TEARING.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        if not numbers or numbers[-1] != line:
            numbers.append(line)
    return numbers


def _fragment_events(text: str) -> list[dict]:
    """The events hermes reads from the pieces ``str.splitlines()`` makes of a line."""
    events = []
    for piece in text.splitlines():
        if not piece.strip():
            continue
        try:
            value = json.loads(piece)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _describe_tear(text: str, events: list[dict]) -> str:
    chars = sorted({_CHAR_NAMES[m.group()] for m in _TEARING.finditer(text)})
    pieces = text.splitlines()
    skipped = sum(1 for p in pieces if p.strip()) - len(events)
    how = f"{len(events)} read as events, {skipped} skipped as malformed" if events else "all skipped as malformed"
    return f"torn by splitlines at {', '.join(chars)} into {len(pieces)} fragments ({how})"


@dataclass(frozen=True)
class RawLine:
    """One physical line of a journal file (split on ``\\n`` only)."""

    index: int  # 0-based
    number: int  # 1-based line number, as an editor shows it
    offset: int  # byte offset of the first byte
    length: int  # bytes, including the ``\n`` terminator when there is one
    data: bytes  # the bytes without the ``\n`` terminator
    value: Any  # the parsed JSON value (None when it did not parse: see parse_error)
    parse_error: str | None
    dropped: str | None  # why hermes' reader does not read this line as an event; None if it does
    anomalies: tuple[str, ...]
    hermes_events: tuple[dict, ...] = ()  # what hermes reads from this line (fragments of a torn line too)

    @property
    def is_event(self) -> bool:
        """True when hermes reads this line as one event (what the repairs see)."""
        return self.dropped is None


_START = object()  # "no event line yet" in the seq table


@dataclass
class _SeqTable:
    """Per line: the seq of the previous event line; per seq: the first line holding it."""

    prev: list[Any]
    first: dict[int, int]
    last: Any = None  # seq of the newest event line processed so far (_START before any)


class RawJournal:
    """A journal file indexed by line, with lazy parsing and hermes' drop reasons.

    ``session_id`` / ``run_id`` are the ids the file's path names; records naming other
    ids are reported as anomalies. ``len(journal)`` is the number of physical lines.
    """

    def __init__(self, data: bytes, *, session_id: str | None = None, run_id: str | None = None,
                 path: Path | None = None):
        self.data = data
        self.path = path
        self.session_id = session_id
        self.run_id = run_id
        self._starts = array("q")
        self._build_index()
        self.unreadable: str | None = None
        self.bad_byte_offset: int | None = None
        self._torn: frozenset[int] = frozenset()  # 0-based indexes of lines splitlines() tears
        try:
            self._torn = frozenset(n - 1 for n in torn_line_numbers(data.decode("utf-8")))
        except UnicodeDecodeError as exc:
            self.bad_byte_offset = exc.start
            self.unreadable = f"invalid UTF-8 at byte {exc.start}: hermes cannot read any of this journal"
        self._seqs = _SeqTable(prev=[], first={}, last=_START)

    @classmethod
    def from_path(cls, path: Path) -> RawJournal:
        """Read a journal file; the path's folder and stem give the expected ids."""
        return cls(read_regular(path)[0], session_id=path.parent.name, run_id=path.stem, path=path)

    # ------------------------------------------------------------ index

    def _build_index(self) -> None:
        data, starts = self.data, self._starts
        pos, end = 0, len(data)
        while pos < end:
            starts.append(pos)
            nl = data.find(b"\n", pos)
            pos = end if nl < 0 else nl + 1

    def __len__(self) -> int:
        return len(self._starts)

    def _span(self, i: int) -> tuple[int, int]:
        start = self._starts[i]
        stop = self._starts[i + 1] if i + 1 < len(self._starts) else len(self.data)
        return start, stop

    def __iter__(self) -> Iterator[RawLine]:
        for i in range(len(self)):
            yield self.line(i)

    @property
    def ends_with_newline(self) -> bool:
        """True when the last line is complete (an empty file counts as complete)."""
        return not self.data or self.data.endswith(b"\n")

    # ------------------------------------------------------------ one line

    def line(self, i: int) -> RawLine:
        """The line at 0-based index ``i`` (negative indexes count from the end)."""
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        start, stop = self._span(i)
        raw = self.data[start:stop]
        body = raw[:-1] if raw.endswith(b"\n") else raw
        value, error = _parse(body)
        dropped, notes, events = self._hermes_verdict(i, start, stop, body, value, error)
        anomalies = notes + self._record_anomalies(i, value) if dropped is None else notes
        return RawLine(index=i, number=i + 1, offset=start, length=stop - start, data=body,
                       value=value, parse_error=error, dropped=dropped, anomalies=tuple(anomalies),
                       hermes_events=tuple(events))

    def _hermes_verdict(self, i: int, start: int, stop: int, body: bytes, value: Any,
                        error: str | None) -> tuple[str | None, list[str], list[dict]]:
        notes: list[str] = []
        last_without_newline = i == len(self) - 1 and not self.ends_with_newline
        if body.endswith(b"\r"):
            notes.append("CRLF line end")
        if last_without_newline:
            notes.append("no newline at end of file")
        if self.unreadable is not None:
            here = self.bad_byte_offset is not None and start <= self.bad_byte_offset < stop
            where = "this line holds the invalid byte" if here else "another line holds an invalid byte"
            return f"journal unreadable (invalid UTF-8; {where})", notes, []
        text = body.decode("utf-8")
        if i in self._torn:
            events = _fragment_events(text)
            return _describe_tear(text, events), notes, events
        if not text.strip():
            return "blank line (skipped)", notes, []
        if error is not None:
            torn = " (torn last line without newline)" if last_without_newline else ""
            return f"not JSON: {error}{torn}", notes, []
        if not isinstance(value, dict):
            return f"JSON but not an object ({_json_type(value)})", notes, []
        return None, notes, [value]

    # ------------------------------------------------------------ anomalies

    def _record_anomalies(self, i: int, value: dict) -> list[str]:
        out: list[str] = []
        seq = value.get("seq")
        out += _seq_type_anomaly(seq)
        out += self._seq_order_anomalies(i, seq, value)
        run_id, session_id = value.get("run_id"), value.get("session_id")
        if self.run_id is not None and run_id != self.run_id:
            out.append(f"run_id {run_id!r} does not match the file name {self.run_id!r}")
        if self.session_id is not None and session_id != self.session_id:
            out.append(f"session_id {session_id!r} does not match the folder {self.session_id!r}")
        if value.get("event_id") != f"{run_id}:{seq}":
            out.append(f"event_id {value.get('event_id')!r} is not \"<run_id>:<seq>\"")
        if value.get("event") != value.get("type"):
            out.append(f"event {value.get('event')!r} differs from type {value.get('type')!r}")
        if bool(value.get("terminal")) != (value.get("terminal_state") is not None):
            out.append("terminal flag disagrees with terminal_state")
        if not isinstance(value.get("payload"), dict):
            out.append(f"payload is {_json_type(value.get('payload'))}, not an object (the repair uses {{}})")
        return out

    def _seq_table(self, upto: int, known: Any = None) -> _SeqTable:
        # Seq checks for line i only need lines before it (the previous event's seq, where a
        # seq first appeared), so the table grows as a prefix: opening a 200,000-line journal
        # at its start parses nothing ahead, and each line is parsed for it at most once.
        table = self._seqs
        for j in range(len(table.prev), upto + 1):
            table.prev.append(table.last)
            if self.unreadable is not None or j in self._torn:
                continue
            if j == upto and known is not None:
                value = known
            else:
                start, stop = self._span(j)
                value, _ = _parse(self.data[start:stop])
            if isinstance(value, dict):
                seq = value.get("seq")
                if _is_int(seq):
                    table.first.setdefault(seq, j)
                table.last = seq
        return table

    def _seq_order_anomalies(self, i: int, seq: Any, value: dict) -> list[str]:
        table = self._seq_table(i, value)
        if not _is_int(seq):
            return []
        out = []
        first = table.first.get(seq)
        if first is not None and first != i:
            out.append(f"duplicate seq {seq} (first on line {first + 1})")
        prev = table.prev[i]
        if prev is _START:
            expected, after = 1, "the start of the file"
        elif _is_int(prev):
            expected, after = prev + 1, f"seq {prev}"
        else:
            return out  # the previous record has no usable seq; nothing to compare with
        if seq != expected:
            out.append(f"seq {seq} does not follow {after} (expected {expected})")
        return out

    # ------------------------------------------------------------ whole-file views

    def hermes_view(self) -> ParsedJournal | None:
        """What ``read_run_events`` returns for these bytes; None when it cannot read them."""
        try:
            return parse_journal_bytes(self.data)
        except JournalUnreadable:
            return None

    def stats(self) -> dict:
        """Counts for a header line: lines, events hermes reads, dropped lines by kind."""
        counts = {"lines": len(self), "events": 0, "dropped": 0, "torn": 0, "anomalous": 0}
        for line in self:
            if line.is_event:
                counts["events"] += 1
            else:
                counts["dropped"] += 1
                counts["torn"] += line.dropped.startswith("torn by splitlines")
            counts["anomalous"] += bool(line.anomalies)
        return counts


def _parse(body: bytes) -> tuple[Any, str | None]:
    try:
        return json.loads(body.decode("utf-8", errors="surrogateescape")), None
    except (ValueError, RecursionError) as exc:
        return None, str(exc)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _seq_type_anomaly(seq: Any) -> list[str]:
    if _is_int(seq):
        return [] if seq >= 1 else [f"seq {seq} is below 1"]
    if isinstance(seq, str):
        return [f"seq is a string ({seq!r})"]
    if seq is None:
        return ["seq is missing"]
    return [f"seq is {_json_type(seq)}, not an integer"]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


# ---------------------------------------------------------------- a session's runs


@dataclass(frozen=True)
class RunListing:
    """One run journal of a session, summarised as hermes summarises it."""

    run_id: str
    path: Path
    size: int
    summary: dict | None  # run_summary(); None when hermes cannot read the file
    malformed: int  # lines hermes skipped
    error: str | None  # why hermes cannot read it at all
    valid_id: bool  # hermes would accept this run id (otherwise it never opens the file)


def list_session_runs(session_dir: Path, session_id: str) -> list[RunListing]:
    """Every ``_run_journal/<sid>/<run>.jsonl`` with hermes' run summary, sorted by run id."""
    out = []
    for path in list_runs(session_dir, session_id):
        run_id = path.stem
        try:
            data, _ = read_regular(path)
        except OSError as exc:
            out.append(RunListing(run_id, path, 0, None, 0, str(exc), is_valid_journal_id(run_id)))
            continue
        try:
            parsed = parse_journal_bytes(data)
        except JournalUnreadable as exc:
            out.append(RunListing(run_id, path, len(data), None, 0, str(exc), is_valid_journal_id(run_id)))
            continue
        out.append(RunListing(run_id, path, len(data), run_summary(session_id, run_id, parsed.events),
                              len(parsed.malformed), None, is_valid_journal_id(run_id)))
    return out
