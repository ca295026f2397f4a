"""The *raw* view of a run journal: every physical line, and what hermes makes of it.

:mod:`inspector.store.journal` reads a journal the way hermes does, which silently loses
things: one invalid UTF-8 byte makes the whole file unreadable, ``str.splitlines()`` tears
a record that contains U+2028/U+2029/U+0085 (or ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, a bare
``\\r``) into fragments, and lines that are not JSON objects are skipped. A developer needs
to see those lines, where they are and why hermes dropped them, plus anomalies hermes
does not care about (string or duplicate seqs, gaps, ids that do not match the path, CRLF).

:class:`RawJournal` indexes the file by line (byte offset of each ``\\n``-terminated line)
and parses a line only when it is asked for. Everything about a line is local to it except
the seq checks (duplicates, gaps), which need every earlier line: without an index they are
computed on demand, as a prefix; :func:`index_journal` computes them for every line in one
pass (plus the counts of the header line), and a :class:`JournalIndex` is small, picklable
and holds no bytes, so the pass can run in another process and the window only looks up
the lines it paints.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, compress, repeat
from operator import add, itemgetter
from pathlib import Path
from typing import Any

from inspector.store.files import TooLargeToLoad, read_regular
from inspector.store.journal import (  # noqa: F401 - torn_line_numbers: also imported from here
    _TEARING,
    JournalUnreadable,
    ParsedJournal,
    is_valid_journal_id,
    list_runs,
    parse_journal_bytes,
    run_summary,
    stream_summary,
    torn_line_numbers,
)
from inspector.store.json_depth import (
    HERMES_ALWAYS_READS,
    NEVER,
    UNSURE,
    hermes_verdict,
    loads_from_a_fresh_stack,
    may_be_deep_bytes,
)
from inspector.store.jsonfmt import has_long_digit_run

try:  # orjson only speeds up parsing; a line it rejects or might read differently goes to the stdlib
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson_loads = None

_CHAR_NAMES = {
    "\r": "a bare CR",
    "\x0b": "\\v",
    "\x0c": "\\f",
    "\x1c": "\\x1c",
    "\x1d": "\\x1d",
    "\x1e": "\\x1e",
    "\x85": "U+0085",
    "\u2028": "U+2028",
    "\u2029": "U+2029",
}
# The same characters in UTF-8, found with single-byte searches (memchr speed; a multi-byte
# search is ten times slower): the last byte of each, and the bytes that must precede it.
# In valid UTF-8 a lead byte is never a continuation byte, so "\xc2\x85" is always U+0085.
_TEARING_BYTES = (
    (b"\x0b", b""),
    (b"\x0c", b""),
    (b"\x1c", b""),
    (b"\x1d", b""),
    (b"\x1e", b""),
    (b"\x85", b"\xc2"),
    (b"\xa8", b"\xe2\x80"),
    (b"\xa9", b"\xe2\x80"),
)
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
# orjson nests up to 1,024 levels, the stdlib (hermes' parser) until the interpreter's recursion
# limit: a line that might be nested that deep is parsed by the stdlib only.
_DEEP_LINE_BYTES = 1_800
_DEEP_BRACKETS = 900


def _tearing_offsets(data: bytes) -> list[int]:
    """Byte offsets of the characters that make ``str.splitlines()`` tear a line (``data`` must be
    valid UTF-8): the same lines :func:`torn_line_numbers` finds in the decoded text."""
    hits: list[int] = []
    find = data.find
    for probe, lead in _TEARING_BYTES:
        pos = find(probe)
        while pos >= 0:
            if not lead or (pos >= len(lead) and data[pos - len(lead) : pos] == lead):
                hits.append(pos)
            pos = find(probe, pos + 1)
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        pos = find(b"\r")
        while pos >= 0:
            if data[pos + 1 : pos + 2] != b"\n":
                hits.append(pos)
            pos = find(b"\r", pos + 1)
    return hits


def _line_of(starts: array, offsets: list[int]) -> frozenset[int]:
    return frozenset(bisect_right(starts, off) - 1 for off in offsets)


def _line_starts(data: bytes) -> array:
    """Byte offset of each ``\\n``-terminated line (a last line without ``\\n`` counts)."""
    parts = data.split(b"\n")
    return _starts_of(parts, len(parts) - (1 if parts[-1] == b"" else 0))


def _starts_of(parts: list[bytes], n: int) -> array:
    # Every piece is followed by its "\n": start[i] = sum(len(piece) + 1 for the pieces before i).
    # map/accumulate run in C, without a Python step per line.
    starts = array("q", accumulate(map(add, map(len, parts), repeat(1)), initial=0))
    del starts[n:]
    return starts


def _fragment_events(text: str) -> list[dict]:
    """The events hermes reads from the pieces ``str.splitlines()`` makes of a line."""
    events = []
    for piece in text.splitlines():
        if not piece.strip():
            continue
        try:
            value = loads_from_a_fresh_stack(piece)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _describe_tear(text: str, events: list[dict]) -> str:
    chars = sorted({_CHAR_NAMES[m.group()] for m in _TEARING.finditer(text)})
    pieces = text.splitlines()
    skipped = sum(1 for p in pieces if p.strip()) - len(events)
    how = (
        f"{len(events)} read as events, {skipped} skipped as malformed"
        if events
        else "all skipped as malformed"
    )
    return (
        f"split apart by an invisible line-break character ({', '.join(chars)}) that hermes reads as a "
        f"line end, into {len(pieces)} pieces ({how})"
    )


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


@dataclass
class JournalIndex:
    """What a whole-file pass over a journal knows (see :func:`index_journal`); no bytes.

    ``seq_notes`` holds the only per-line facts that depend on other lines (duplicate seqs,
    gaps), for the lines that have any; everything else about a line is worked out from the
    line itself when it is looked at.
    """

    size: int  # bytes indexed (a journal that grows later is indexed up to here)
    starts: array  # byte offset of each line
    unreadable: str | None  # why hermes cannot read the file at all (invalid UTF-8, a line nested too deeply)
    bad_byte_offset: int | None
    torn: frozenset[int]  # 0-based lines str.splitlines() tears
    seq_notes: dict[int, tuple[str, ...]]  # line -> its duplicate/gap notes
    stats: dict  # lines, events, dropped, torn, anomalous (see RawJournal.stats)
    last_time: float = 0.0  # newest created_at of the events hermes reads (0 when none)
    digest: bytes | None = None  # sha1 of the indexed bytes, when asked for
    # for the journal view's filters: per line, one byte naming its event (0: hermes reads no event
    # from the line; k: event_names[k - 1]), and the lines hermes drops or that have notes
    kinds: bytes = b""
    event_names: tuple[str, ...] = ()
    flagged: array = field(default_factory=lambda: array("q"))
    kind_counts: dict[int, int] = field(default_factory=dict)  # lines per code of ``kinds``
    # the (0-based) line nested too deeply for hermes' reader from every caller (then
    # ``unreadable`` says so) or from some (then ``depth_unsure`` says why hermes may or may not
    # read the journal: a line in json_depth's band), else None
    deep_line: int | None = None
    depth_unsure: str | None = None

    def event_counts(self) -> list[tuple[str, int]]:
        """``(event name, lines)`` for every event name the journal holds, most frequent first
        (counted by :func:`index_journal`, not by the window)."""
        counts = self.kind_counts if self.kind_counts or not self.kinds else Counter(self.kinds)
        pairs = [(name, counts.get(code, 0)) for code, name in enumerate(self.event_names, start=1)]
        return sorted((p for p in pairs if p[1]), key=lambda p: (-p[1], p[0]))

    def filter_lines(self, event: str | None = None, flagged_only: bool = False) -> array | None:
        """The lines (0-based, in file order) of events named ``event`` (any with None) that, with
        ``flagged_only``, hermes drops or has notes about; None when nothing is filtered. Runs in
        C over the per-line bytes: ~20 ms for 200,000 lines."""
        if event is None and not flagged_only:
            return None
        if event is None:
            return array("q", self.flagged)
        try:
            code = self.event_names.index(event) + 1
        except ValueError:
            return array("q")
        same = code.__eq__
        if flagged_only:
            return array("q", compress(self.flagged, map(same, map(self.kinds.__getitem__, self.flagged))))
        return array("q", compress(range(len(self.kinds)), map(same, self.kinds)))


class RawJournal:
    """A journal file indexed by line, with lazy parsing and hermes' drop reasons.

    ``session_id`` / ``run_id`` are the ids the file's path names; records naming other
    ids are reported as anomalies. ``len(journal)`` is the number of physical lines.
    With an ``index`` (from :func:`index_journal` over exactly these bytes) nothing is
    computed up front.
    """

    def __init__(
        self,
        data: bytes,
        *,
        session_id: str | None = None,
        run_id: str | None = None,
        path: Path | None = None,
        index: JournalIndex | None = None,
    ):
        self.data = data
        self.path = path
        self.session_id = session_id
        self.run_id = run_id
        self._index: JournalIndex | None = None
        self._seqs = _SeqTable(prev=[], first={}, last=_START)
        if index is not None:
            self._adopt(index)
            return
        self._starts = _line_starts(data)
        self.unreadable: str | None = None
        self.bad_byte_offset: int | None = None
        self._torn: frozenset[int] = frozenset()  # 0-based indexes of lines splitlines() tears
        self.deep_line: int | None = None
        self.depth_unsure: str | None = None
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.bad_byte_offset = exc.start
            self.unreadable = _unreadable_reason(exc.start)
        else:
            self._torn = _line_of(self._starts, _tearing_offsets(data))
            problem = depth_problem(data)
            if problem is not None:
                self.deep_line = problem[1]
                if problem[2]:
                    self.unreadable = problem[0]
                else:
                    self.depth_unsure = problem[0]

    @classmethod
    def from_path(cls, path: Path) -> RawJournal:
        """Read a journal file; the path's folder and stem give the expected ids."""
        return cls(read_regular(path)[0], session_id=path.parent.name, run_id=path.stem, path=path)

    def _adopt(self, index: JournalIndex) -> None:
        if index.size != len(self.data):
            raise ValueError(f"the index covers {index.size} bytes, the journal has {len(self.data)}")
        self._index = index
        self._starts = index.starts
        self.unreadable = index.unreadable
        self.bad_byte_offset = index.bad_byte_offset
        self._torn = index.torn
        self.deep_line = index.deep_line
        self.depth_unsure = index.depth_unsure

    # ------------------------------------------------------------ index

    @property
    def indexed(self) -> JournalIndex | None:
        """The whole-file index, once computed (:meth:`index`) or given."""
        return self._index

    def index(
        self, check: Callable[[], None] = lambda: None, events: list[tuple[int, dict]] | None = None
    ) -> JournalIndex:
        """Index every line now (one pass); ``events`` collects ``(line, event)`` for every event
        hermes reads. Afterwards no line needs another one to be looked at."""
        if self._index is not None and events is None:
            return self._index
        index = index_journal(
            self.data, session_id=self.session_id, run_id=self.run_id, check=check, events=events
        )
        self._adopt(index)
        return index

    def __len__(self) -> int:
        return len(self._starts)

    def line_at(self, offset: int) -> int:
        """The 0-based index of the line holding byte ``offset``."""
        return max(0, bisect_right(self._starts, offset) - 1)

    def find_line(self, text: str, after: int = -1, *, backward: bool = False) -> int | None:
        """The first line after line ``after`` (or, ``backward``, the last line before it) whose
        bytes contain ``text`` (UTF-8, case-insensitive for ASCII letters), wrapping around the
        journal; None when no line does. A search in C over the bytes: a 200,000-event journal
        is not parsed for it. Text JSON escaped in the file (``\\n``, ``\\uXXXX``) is found as
        written there."""
        if not text or not self._starts:
            return None
        pattern = re.compile(re.escape(text.encode("utf-8")), re.IGNORECASE)
        count = len(self._starts)
        if not backward:
            start = self._span(after)[1] if 0 <= after < count else 0
            found = pattern.search(self.data, start) or pattern.search(self.data, 0, start)
            return None if found is None else self.line_at(found.start())
        end = self._starts[after] if 0 <= after < count else len(self.data)
        last = None
        for found in pattern.finditer(self.data, 0, end):
            last = found
        if last is None:
            for found in pattern.finditer(self.data, end):
                last = found
        return None if last is None else self.line_at(last.start())

    def find_seq(self, seq: int) -> int | None:
        """The first line whose record has ``"seq": seq`` (a byte search for the key, each
        candidate line parsed to confirm it is the record's own ``seq``); None when none has."""
        if not isinstance(seq, int) or isinstance(seq, bool):
            return None
        pattern = re.compile(rb'"seq"\s*:\s*' + str(seq).encode() + rb"(?![0-9.eE])")
        for found in pattern.finditer(self.data):
            i = self.line_at(found.start())
            value = self.line(i).value
            if isinstance(value, dict) and value.get("seq") == seq and not isinstance(value.get("seq"), bool):
                return i
        return None

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
        return RawLine(
            index=i,
            number=i + 1,
            offset=start,
            length=stop - start,
            data=body,
            value=value,
            parse_error=error,
            dropped=dropped,
            anomalies=tuple(anomalies),
            hermes_events=tuple(events),
        )

    def _hermes_verdict(
        self, i: int, start: int, stop: int, body: bytes, value: Any, error: str | None
    ) -> tuple[str | None, list[str], list[dict]]:
        notes: list[str] = []
        last_without_newline = i == len(self) - 1 and not self.ends_with_newline
        if body.endswith(b"\r"):
            notes.append("CRLF line end")
        if last_without_newline:
            notes.append("no newline at end of file")
        if self.unreadable is not None and self.depth_unsure is None and self.deep_line is not None:
            where = "this line is" if i == self.deep_line else f"line {self.deep_line + 1} is"
            return (
                f"journal unreadable ({where} nested too deeply for hermes' reader, which then "
                "fails on the whole journal: a known hermes defect)",
                notes,
                [],
            )
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
        seq = value.get("seq")
        out = _seq_type_anomaly(seq)
        if self._index is not None:
            out += self._index.seq_notes.get(i, ())
        else:
            table = self._seq_table(i, value)
            if _is_int(seq):
                out += _seq_order_notes(i, seq, table.first.get(seq), table.prev[i])
        run_id, session_id = value.get("run_id"), value.get("session_id")
        if self.run_id is not None and run_id != self.run_id:
            out.append(f"run_id {run_id!r} does not match the file name {self.run_id!r}")
        if self.session_id is not None and session_id != self.session_id:
            out.append(f"session_id {session_id!r} does not match the folder {self.session_id!r}")
        if value.get("event_id") != f"{run_id}:{seq}":
            out.append(f'event_id {value.get("event_id")!r} is not "<run_id>:<seq>"')
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

    # ------------------------------------------------------------ whole-file views

    def hermes_view(self) -> ParsedJournal | None:
        """What ``read_run_events`` returns for these bytes; None when it cannot read them."""
        try:
            return parse_journal_bytes(self.data)
        except JournalUnreadable:
            return None

    def stats(self) -> dict:
        """Counts for a header line: lines, events hermes reads, dropped lines by kind, lines with notes."""
        return dict(self.index().stats)


_DIGITS = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))  # digits -> "9", the rest -> " "
_LONG_RUN = b"9" * 19


_DIGIT_CHUNK = 1 << 22


def _long_digit_offsets(data: bytes) -> list[int]:
    """Where runs of 19+ digits start (numbers orjson may not keep exact), in order. Looked for a
    few megabytes at a time, so a big journal is not copied whole; a run never spans a line end,
    and a chunk ends just after one."""
    found: list[int] = []
    start, end = 0, len(data)
    while start < end:
        stop = data.find(b"\n", min(start + _DIGIT_CHUNK, end))
        stop = end if stop < 0 else stop + 1
        mapped = data[start:stop].translate(_DIGITS)
        pos = mapped.find(_LONG_RUN)
        while pos >= 0:
            found.append(start + pos)
            nl = mapped.find(b" ", pos + len(_LONG_RUN))  # the run ends at the next non-digit
            pos = mapped.find(_LONG_RUN, nl) if nl >= 0 else -1
        start = stop
    return found


def index_journal(
    data: bytes,
    *,
    session_id: str | None = None,
    run_id: str | None = None,
    check: Callable[[], None] = lambda: None,
    events: list[tuple[int, dict]] | None = None,
    digest: bool = False,
) -> JournalIndex:
    """One pass over a journal: every line's verdict, the seq checks and the counts.

    Each line is parsed once (orjson where it reads exactly what the stdlib reads, which also
    proves the line valid UTF-8; anything else by the stdlib). ``events`` (when given) receives
    ``(line, event)`` for every event hermes reads, in file order. ``check`` raises to cancel.
    The results are the ones :meth:`RawJournal.line` computes line by line without an index.
    Besides ``data`` it holds only the line offsets and one line at a time.
    """
    end = len(data)
    ends_with_newline = not data or data.endswith(b"\n")
    long_hits = _long_digit_offsets(data) if _orjson_loads is not None else []
    torn_hits = sorted(_tearing_offsets(data))  # meaningful only if the file is readable (checked below)
    check()
    loads = _orjson_loads
    may_crlf = b"\r" in data
    starts = array("q")
    torn: list[int] = []
    prev: Any = _START
    first: dict[int, int] = {}
    seq_notes: dict[int, tuple[str, ...]] = {}
    kinds = bytearray()  # per line: its event's code (0: no event), see JournalIndex.kinds
    codes: dict[str, int] = {}
    flagged = array("q")  # lines dropped or with notes
    n_events = n_dropped = n_torn = n_odd = 0
    last_time = 0.0
    bad: int | None = None
    never = end + 1  # past the last line, even one without a "\n"
    t_next = torn_hits[0] if torn_hits else never  # the next hit at or after this line
    d_next = long_hits[0] if long_hits else never
    ti = di = 0
    i = 0
    for pos, body in _pieces(data):
        if not i & 0x1FFF:
            check()
        starts.append(pos)
        stop = pos + len(body)  # where its "\n" is (or the end of a last line without one)
        noted = (may_crlf and body.endswith(b"\r")) or (stop == end and not ends_with_newline)
        if t_next <= stop:  # a character that tears this line (a "\n" never does)
            torn.append(i)
            while ti < len(torn_hits) and torn_hits[ti] <= stop:
                ti += 1
            t_next = torn_hits[ti] if ti < len(torn_hits) else never
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = pos + exc.start
                break
            for ev in _fragment_events(text):
                created = ev.get("created_at")
                if type(created) in _NUMBERS and created > last_time:
                    last_time = created
                if events is not None:
                    events.append((i, ev))
            n_dropped += 1
            n_torn += 1
            n_odd += noted
            kinds.append(0)
            flagged.append(i)
            i += 1
            continue
        long = d_next <= stop
        if long:
            while di < len(long_hits) and long_hits[di] <= stop:
                di += 1
            d_next = long_hits[di] if di < len(long_hits) else never
        value: Any = _NOTHING
        if loads is not None and not long and not (len(body) > _DEEP_LINE_BYTES and _deep(body)):
            try:
                value = loads(body)  # success also means valid UTF-8
            except ValueError:
                pass
        if value is _NOTHING:
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = pos + exc.start
                break
            try:
                value = loads_from_a_fresh_stack(text)
            except (ValueError, RecursionError):
                value = _NOTHING
        i += 1
        if type(value) is not dict:
            n_dropped += 1
            n_odd += noted
            kinds.append(0)
            flagged.append(i - 1)
            continue
        line = i - 1
        n_events += 1
        try:
            seq, rid, sid, eid, name, kind, terminal, state, payload, created = _fields(value)
        except KeyError:  # some are missing (None, as value.get() says)
            seq, rid, sid, eid, name, kind, terminal, state, payload, created = map(value.get, _FIELD_NAMES)
        if type(seq) is int:
            seen = first.get(seq)
            if seen is None:
                first[seq] = line
            if seen is not None or not (
                seq == prev + 1 if type(prev) is int else prev is not _START or seq == 1
            ):
                notes = _seq_order_notes(line, seq, seen, prev)
                if notes:
                    seq_notes[line] = tuple(notes)
                    noted = True
        prev = seq
        if not noted:
            # the negation of every check of RawJournal._record_anomalies, in the same terms
            noted = not (
                type(seq) is int
                and seq >= 1
                and (run_id is None or rid == run_id)
                and (session_id is None or sid == session_id)
                and eid == f"{rid}:{seq}"
                and name == kind
                and bool(terminal) == (state is not None)
                and type(payload) is dict
            )
        n_odd += noted
        if noted:
            flagged.append(line)
        code = codes.get(name) if type(name) is str else None
        if code is None:
            code = _event_code(codes, name)
        kinds.append(code)
        if type(created) in _NUMBERS and created > last_time:
            last_time = created
        if events is not None:
            events.append((line, value))
    unreadable = depth_unsure = deep_line = None
    deep = depth_problem(data) if bad is None else None
    if deep is not None:
        deep_line = deep[1]
        if deep[2]:
            unreadable = deep[0]
        else:
            depth_unsure = deep[0]
    if bad is not None or unreadable is not None:
        # hermes reads nothing of the file: every line is dropped, only the line-end notes remain
        unreadable = _unreadable_reason(bad) if bad is not None else unreadable
        starts = _line_starts(data)
        torn, seq_notes, last_time = [], {}, 0.0
        kinds, codes, flagged = bytearray(len(starts)), {}, array("q", range(len(starts)))
        n_events = n_torn = 0
        n_dropped = len(starts)
        n_odd = sum(1 for body in data.split(b"\n")[: len(starts)] if body.endswith(b"\r"))
        if starts and not ends_with_newline and not data.endswith(b"\r"):
            n_odd += 1
        if events is not None:
            del events[:]
    stats = {
        "lines": len(starts),
        "events": n_events,
        "dropped": n_dropped,
        "torn": n_torn,
        "anomalous": n_odd,
    }
    return JournalIndex(
        size=len(data),
        starts=starts,
        unreadable=unreadable,
        bad_byte_offset=bad,
        deep_line=deep_line,
        depth_unsure=depth_unsure,
        torn=frozenset(torn),
        seq_notes=seq_notes,
        stats=stats,
        last_time=last_time,
        digest=hashlib.sha1(data, usedforsecurity=False).digest() if digest else None,
        kinds=bytes(kinds),
        event_names=tuple(codes),
        flagged=flagged,
        kind_counts=dict(Counter(kinds)),
    )


NO_EVENT_NAME = "(no event name)"
OTHER_EVENT_NAMES = "(other event names)"  # past the 254 names one byte per line can tell apart
_MAX_CODES = 255


def _event_code(codes: dict[str, int], name: Any) -> int:
    """The code of an event name new to :func:`index_journal` (names that are not text share one)."""
    key = (
        name
        if type(name) is str
        else NO_EVENT_NAME
        if name is None
        else f"(event name not text: {_json_type(name)})"
    )
    code = codes.get(key)
    if code is None:
        if len(codes) >= _MAX_CODES - 1:
            key = OTHER_EVENT_NAMES
        code = codes.setdefault(key, len(codes) + 1)
    return code


_NOTHING = object()
_FIELD_NAMES = (
    "seq",
    "run_id",
    "session_id",
    "event_id",
    "event",
    "type",
    "terminal",
    "terminal_state",
    "payload",
    "created_at",
)
_fields = itemgetter(*_FIELD_NAMES)  # all of a record's checked fields in one C call
_PIECE_BYTES = 1 << 22


def _pieces(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(offset, line without its "\\n")`` for every line, split a few megabytes at a time (as fast
    as one ``split()``, without a second copy of the whole file)."""
    pos, end = 0, len(data)
    while pos < end:
        cut = data.find(b"\n", min(pos + _PIECE_BYTES, end) - 1)
        stop = end if cut < 0 else cut + 1
        parts = data[pos:stop].split(b"\n")
        if parts[-1] == b"":
            parts.pop()  # the chunk ends with a "\n"
        for body in parts:
            yield pos, body
            pos += len(body) + 1
        pos = stop


_NUMBERS = (int, float)  # created_at values that count as times (bool is neither type)


def _deep(body: bytes) -> bool:
    return len(body) > _DEEP_LINE_BYTES and body.count(b"[") + body.count(b"{") > _DEEP_BRACKETS


def _parse(body: bytes) -> tuple[Any, str | None]:
    if _orjson_loads is not None and not _deep(body) and not has_long_digit_run(body):
        try:
            return _orjson_loads(body), None
        except ValueError:
            pass  # the stdlib decides, and says why
    try:
        return loads_from_a_fresh_stack(body.decode("utf-8", errors="surrogateescape")), None
    except (ValueError, RecursionError) as exc:
        return None, str(exc)


def depth_problem(data: bytes) -> tuple[str, int, bool] | None:
    """(why, the 0-based line, whether every hermes reader fails) for the valid UTF-8 journal
    ``data`` when a line is nested too deeply for hermes' reader to read it from every caller
    (:mod:`inspector.store.json_depth`), else None. A line every reader fails on is named over
    an unsure one before it. Only lines with more opening brackets than the band's lower end are
    walked; most journals have none at all."""
    if not may_be_deep_bytes(data):
        return None
    unsure: tuple[str, int, bool] | None = None
    for i, body in enumerate(data.split(b"\n")):
        if body.count(b"[") + body.count(b"{") <= HERMES_ALWAYS_READS:
            continue
        for piece in body.decode("utf-8").splitlines():  # hermes' lines within this one
            verdict, levels = hermes_verdict(piece)
            if verdict == NEVER:
                return (
                    f"line {i + 1} is nested {levels} or more levels deep, deeper than hermes' reader can go",
                    i,
                    True,
                )
            if verdict == UNSURE and unsure is None:
                unsure = (
                    f"line {i + 1} is nested {levels} levels deep (hermes reads it or not "
                    "depending on hermes itself)",
                    i,
                    False,
                )
    return unsure


def _unreadable_reason(offset: int) -> str:
    return f"invalid UTF-8 at byte {offset}: hermes cannot read any of this journal"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_time(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _seq_type_anomaly(seq: Any) -> list[str]:
    if _is_int(seq):
        return [] if seq >= 1 else [f"seq {seq} is below 1"]
    if isinstance(seq, str):
        return [f"seq is a string ({seq!r})"]
    if seq is None:
        return ["seq is missing"]
    return [f"seq is {_json_type(seq)}, not an integer"]


def _seq_order_notes(i: int, seq: int, first: int | None, prev: Any) -> list[str]:
    """Duplicate and gap notes of event line ``i`` with integer ``seq``: ``first`` is the first line
    holding that seq (None or ``i`` when this is it), ``prev`` the previous event line's seq."""
    out = []
    if first is not None and first != i:
        out.append(f"duplicate seq {seq} (first on line {first + 1})")
    if prev is _START:
        expected, after = 1, "the start of the file"
    elif _is_int(prev):
        expected, after = prev + 1, f"seq {prev}"
    else:
        return out  # the previous record has no usable seq; nothing to compare with
    if seq != expected:
        out.append(f"seq {seq} does not follow {after} (expected {expected})")
    return out


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


def _streamed_listing(session_id: str, run_id: str, path: Path, size: int) -> RunListing:
    try:
        streamed = stream_summary(path, session_id, run_id)
    except (JournalUnreadable, OSError) as exc:  # JournalTooLarge included: its message says so
        return RunListing(run_id, path, size, None, 0, str(exc), is_valid_journal_id(run_id))
    return RunListing(
        run_id, path, size, streamed.summary, streamed.malformed, None, is_valid_journal_id(run_id)
    )


def list_session_runs(session_dir: Path, session_id: str) -> list[RunListing]:
    """Every ``_run_journal/<sid>/<run>.jsonl`` with hermes' run summary, sorted by run id."""
    out = []
    for path in list_runs(session_dir, session_id):
        run_id = path.stem
        try:
            data, _ = read_regular(path)
        except TooLargeToLoad as exc:  # too large to load whole: hermes' summary, read piece by piece
            out.append(_streamed_listing(session_id, run_id, path, exc.size))
            continue
        except OSError as exc:
            out.append(RunListing(run_id, path, 0, None, 0, str(exc), is_valid_journal_id(run_id)))
            continue
        try:
            parsed = parse_journal_bytes(data)
        except JournalUnreadable as exc:
            out.append(RunListing(run_id, path, len(data), None, 0, str(exc), is_valid_journal_id(run_id)))
            continue
        out.append(
            RunListing(
                run_id,
                path,
                len(data),
                run_summary(session_id, run_id, parsed.events),
                len(parsed.malformed),
                None,
                is_valid_journal_id(run_id),
            )
        )
    return out
