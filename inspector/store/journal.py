"""Run journals ``SESSION_DIR/_run_journal/<sid>/<run_id>.jsonl`` as hermes reads them.

This module is the *hermes view* (spec run-journal-and-promotion §1.4, §1.7): the whole
file decoded as UTF-8 (one bad byte makes the journal unreadable), split with
``str.splitlines()`` (so U+2028/U+2029/U+0085 inside a record tear it), non-object or
unparseable lines skipped as malformed, and a line nested too deeply for ``json.loads`` failing
the whole read (hermes catches only ``JSONDecodeError``: see :mod:`inspector.store.json_depth`
and docs/hermes-journal-readers.md). The repairs read journals only through here, so
they inherit hermes' quirks exactly. The raw, line-by-line view lives in
:mod:`inspector.store.journal_raw`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from inspector.store.files import open_regular, read_regular
from inspector.store.json_depth import (
    HERMES_NEVER_READS,
    NEVER,
    UNSURE,
    hermes_verdict,
    may_be_deep_bytes,
)
from inspector.store.jsonfmt import fast_loads, line_pieces, orjson_safe

RUN_JOURNAL_DIR = "_run_journal"
TERMINAL_EVENTS = frozenset({"done", "cancel", "apperror", "error", "stream_end"})
_JOURNAL_ID = re.compile(r"[A-Za-z0-9_.-]+")


class JournalUnreadable(Exception):
    """hermes could not read the journal at all (invalid UTF-8, I/O error, a line nested too deeply)."""


class JournalTooDeep(JournalUnreadable):
    """A line nested so deeply that every hermes reader fails on it (``RecursionError`` out of
    ``json.loads``, which ``_read_jsonl`` does not catch): hermes' repairs then treat the whole
    journal as having no output, as for invalid UTF-8 (see :mod:`inspector.store.json_depth`)."""

    def __init__(self, line: int, levels: int):
        self.line, self.levels = line, levels
        super().__init__(
            f"line {line} is nested {HERMES_NEVER_READS} or more levels deep, deeper than hermes' "
            "reader can go (a known hermes defect: it then fails on the whole journal, not just "
            "that line)"
        )


class JournalDepthUnsure(JournalUnreadable):
    """A line nested so deeply that whether hermes reads it depends on how deep hermes' own call
    stack is when it reads (between :data:`HERMES_ALWAYS_READS` and :data:`HERMES_NEVER_READS`
    levels): what hermes makes of the journal is not fixed by its bytes. A view shows it as a
    journal it cannot read for sure; a repair that would follow hermes' read refuses."""

    def __init__(self, line: int, levels: int):
        self.line, self.levels = line, levels
        super().__init__(
            f"line {line} is nested {levels} levels deep: whether hermes can read it depends on "
            "hermes itself (it reads up to 993 levels, fewer from deeper inside its own code), so "
            "what hermes would recover from this journal cannot be known"
        )


def check_line_depth(line: str, number: int) -> None:
    """Raise :class:`JournalTooDeep` or :class:`JournalDepthUnsure` for a line hermes' reader does
    not read alike from every caller; nothing for any other line (a cheap bracket count first)."""
    verdict, levels = hermes_verdict(line)
    if verdict == NEVER:
        raise JournalTooDeep(number, levels)
    if verdict == UNSURE:
        raise JournalDepthUnsure(number, levels)


def is_valid_journal_id(value: object) -> bool:
    """hermes' run-journal id check (session and run ids): dots allowed, no slashes."""
    if not isinstance(value, str):
        return False
    value = value.strip()
    return bool(value) and "/" not in value and "\\" not in value and bool(_JOURNAL_ID.fullmatch(value))


def journal_path(session_dir: Path, session_id: str, run_id: str) -> Path:
    """Path of a run's journal; raises ValueError for ids hermes would reject."""
    if not is_valid_journal_id(session_id):
        raise ValueError("invalid session_id")
    if not is_valid_journal_id(run_id):
        raise ValueError("invalid run_id")
    return session_dir / RUN_JOURNAL_DIR / session_id.strip() / f"{run_id.strip()}.jsonl"


@dataclass(frozen=True)
class ParsedJournal:
    """Events (object records in file order) and the lines hermes skipped."""

    events: list[dict]
    malformed: list[dict] = field(default_factory=list)


BLOCK_BYTES = 1 << 22


def _blocks(data: bytes) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive pieces of about :data:`BLOCK_BYTES`, each ending just after
    a ``\n`` (or at the end): :func:`~inspector.store.jsonfmt.line_pieces`."""
    return line_pieces(data, BLOCK_BYTES)


def _records(data: bytes, *, exact_values: bool = True) -> Iterator[tuple[int, str, dict | None]]:
    """``(line number, line, the object or None when hermes skips the line)`` of every non-blank
    line, as ``read_run_events`` sees them (the whole file decoded as UTF-8 and split with
    ``str.splitlines``), a few MB at a time. Raises JournalUnreadable for invalid UTF-8 (events
    of earlier lines may have been yielded by then: callers drop what they gathered).
    ``exact_values=False``: only which lines are objects counts, not the values in them (see
    :func:`_records_of`)."""
    view = memoryview(data)
    return _records_of(((start, view[start:end]) for start, end in _blocks(data)), exact_values=exact_values)


# The longest line :func:`stream_summary` holds in memory; hermes would hold it whole too.
MAX_LINE_BYTES = 64 << 20


class JournalTooLarge(JournalUnreadable):
    """The inspector does not load this journal (a line over :data:`MAX_LINE_BYTES`); hermes may."""


def _file_pieces(path: Path, max_line: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, bytes)`` pieces of a regular file of about :data:`BLOCK_BYTES`, each ending just
    after a ``\n`` (or at the end), read as they are needed: memory stays at one piece, or one
    line when a line is longer. JournalTooLarge for a line of more than ``max_line`` bytes that
    spans pieces (a line inside one piece is never longer than the piece)."""
    fd, _ = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        pending: list[bytes] = []
        offset, pending_size = 0, 0
        while True:
            chunk = fh.read(BLOCK_BYTES)
            if not chunk:
                if pending:
                    yield offset, b"".join(pending)
                return
            cut = chunk.rfind(b"\n")
            if pending_size + (len(chunk) if cut < 0 else chunk.find(b"\n") + 1) > max_line:
                limit = f"{max_line >> 20} MB" if max_line >= 1 << 20 else f"{max_line} bytes"
                raise JournalTooLarge(
                    f"the line at byte {offset} is longer than {limit}: too large to load safely"
                )
            if cut < 0:
                pending.append(chunk)
                pending_size += len(chunk)
                continue
            piece = b"".join([*pending, chunk[: cut + 1]])
            yield offset, piece
            offset += len(piece)
            pending, pending_size = (
                ([chunk[cut + 1 :]], len(chunk) - cut - 1) if cut + 1 < len(chunk) else ([], 0)
            )


def _records_of(
    pieces: Iterable[tuple[int, Any]], *, exact_values: bool = True
) -> Iterator[tuple[int, str, dict | None]]:
    """:func:`_records` over ``(offset, bytes)`` pieces that each end after a ``\n`` (or at the end).

    With ``exact_values=False`` every line goes to orjson first, without the scan of each piece
    for runs of 19+ digits: orjson accepts a line only where the stdlib does (what it rejects
    goes to the stdlib), but may give a float for an integer beyond 64 bits, which only matters
    to a caller that keeps the values."""
    number = 0
    pieces = iter(pieces)
    for start, piece in pieces:
        text = _piece_text(start, piece)
        raw = bytes(piece) if isinstance(piece, memoryview) else piece
        safe = not exact_values or orjson_safe(raw)
        deep = may_be_deep_bytes(raw)
        lines = text.splitlines()
        for at, line in enumerate(lines):
            number += 1
            if not line.strip():
                continue
            if deep:
                try:
                    check_line_depth(line, number)
                except (JournalTooDeep, JournalDepthUnsure) as exc:
                    _raise_worst(exc, number, lines[at + 1 :], (_piece_text(*p) for p in pieces))
            try:
                obj = fast_loads(line, checked=True) if safe else json.loads(line)
            except (ValueError, RecursionError):
                obj = None
            yield number, line, obj if isinstance(obj, dict) else None


def _piece_text(start: int, piece: Any) -> str:
    try:
        return str(piece, "utf-8")
    except UnicodeDecodeError as exc:
        raise _unreadable(start + exc.start) from exc


def _raise_worst(
    exc: JournalTooDeep | JournalDepthUnsure, number: int, lines: Iterable[str], texts: Iterable[str]
) -> None:
    """Raise what hermes' read of the whole file comes to, given a line nested too deeply (or
    unsurely deep) at line ``number``, the lines after it in its piece and the texts of the
    pieces after that (each decoded: an invalid UTF-8 byte raises JournalUnreadable).

    hermes decodes the whole file before it parses a line, so an invalid UTF-8 byte anywhere
    decides first; a line every reader fails on makes the read fail whatever an unsure line
    before it did, so an unsure verdict holds only when no such line follows.
    """

    def look(more: Iterable[str]) -> None:
        nonlocal exc, number
        for line in more:
            number += 1
            if isinstance(exc, JournalDepthUnsure) and line.strip():
                try:
                    check_line_depth(line, number)
                except JournalTooDeep as deeper:
                    exc = deeper
                except JournalDepthUnsure:
                    pass

    look(lines)
    for text in texts:
        if isinstance(exc, JournalDepthUnsure):
            look(text.splitlines())  # each line's own bracket count comes first: cheap
    raise exc


def stream_lines(path: Path, max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str, dict | None]]:
    """``(line number, line, the object or None)`` of every non-blank line of a journal file of any
    size, as hermes splits it, read piece by piece (memory: one piece or one line). A FIFO or
    device is refused (NotARegularFile) without blocking. Raises JournalUnreadable (invalid
    UTF-8), JournalTooLarge (a line over ``max_line``) and OSError."""
    return _records_of(_file_pieces(path, max_line))


def parse_journal_bytes(data: bytes) -> ParsedJournal:
    """``read_run_events`` without filters, on bytes already read."""
    events: list[dict] = []
    malformed: list[dict] = []
    for number, line, obj in _records(data):
        if obj is not None:
            events.append(obj)
        else:
            malformed.append({"line": number, "raw": line})
    return ParsedJournal(events=events, malformed=malformed)


def dropped_lines(data: bytes) -> tuple[int, int | None]:
    """(how many lines hermes skips, the first one's number): :func:`parse_journal_bytes`'s
    ``malformed`` without keeping any event (a 200,000-event journal is counted in constant memory)."""
    count, first = 0, None
    for number, _line, obj in _records(data, exact_values=False):
        if obj is None:
            count += 1
            if first is None:
                first = number
    return count, first


@dataclass(frozen=True)
class StreamedJournal:
    """hermes' view of a journal read piece by piece: its run summary and dropped lines, no events."""

    summary: dict
    malformed: int
    first_malformed: int | None


def stream_summary(
    path: Path, session_id: str, run_id: str, max_line: int = MAX_LINE_BYTES
) -> StreamedJournal:
    """:func:`run_summary` and the dropped-line count of a journal of any size, in the memory of one
    piece (or one line): for a journal too large to load whole. Raises JournalUnreadable (invalid
    UTF-8), JournalTooLarge (a line over ``max_line``) and OSError."""
    count, last, last_terminal, last_stream_end = 0, None, None, None
    dropped, first = 0, None
    for number, _line, obj in _records_of(_file_pieces(path, max_line)):
        if obj is None:
            dropped += 1
            first = number if first is None else first
            continue
        count += 1
        last = obj
        if obj.get("terminal"):
            if obj.get("event") == "stream_end":
                last_stream_end = obj
            else:
                last_terminal = obj
    # run_summary() over the few events it looks at gives the very summary of all of them
    kept = [e for e in (last_terminal, last_stream_end) if e is not None and e is not last]
    summary = run_summary(session_id, run_id, kept + ([last] if last is not None else []))
    summary["event_count"] = count
    return StreamedJournal(summary, dropped, first)


# ---------------------------------------------------------------- the repairs' streaming read
#
# ``read_run_events`` builds every event of a journal; a crashed turn's journal of 200,000 events
# is then 270 MB of dicts, and most of its parse time is the garbage collector walking them.
# :func:`scan_journal_bytes` reads the same file in one pass that keeps only what hermes' repair
# asks of the events as a whole (how many, which lines it skips, the authoritative terminal
# event); the events themselves are parsed again, one at a time, whenever a caller walks them
# (:class:`StreamedEvents`). A piece of the file holding no line break but ``\n`` and no run of
# 19+ digits is split on ``\n`` bytes and each line given to orjson as bytes (orjson checks the
# UTF-8 itself); any other piece, and any line orjson rejects, takes the exact text path of
# :func:`_records_of`. tests/store/test_journal_stream.py holds the result to
# :func:`parse_journal_bytes` on hostile journals, and tests/differential/parse_check.py to
# hermes' own reader on every journal of the differential homes.

try:  # orjson only speeds up parsing; a line it rejects goes to the exact text path
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson_loads = None

try:  # msgspec only reads the few fields the repair asks for; a line it rejects goes to the exact path
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - msgspec is a declared dependency
    _msgspec = None

# One translate of a piece tells what sends it to the exact path: each one-byte line break other
# than "\n" becomes "!", every byte above 0x7F "#" (the multi-byte characters, among them the line
# breaks U+0085, U+2028, U+2029), every digit "9", the rest " ". Each run of "#" is then
# looked at: it must be valid UTF-8 on its own (an ASCII byte never belongs to a multi-byte
# sequence, so the piece is valid UTF-8 exactly when each of its runs of non-ASCII bytes is) and
# hold none of the three breaks. A piece with more than _FEW_TAILS such bytes (text full of accents)
# is decoded whole and searched for the three sequences instead. A piece with a line of more than
# 900 opening brackets also takes the text path (json_depth). So a plain piece is valid UTF-8: what
# reads it need not check again.
#
# A run of 19+ digits (an integer orjson may not keep exact) does not make a piece less plain:
# msgspec, which counts and walks plain pieces, reads integers of any size exactly
# (tests/store/test_journal_msgspec.py). Only orjson's line path in :func:`_scan` needs the piece
# free of such runs (:func:`~inspector.store.jsonfmt.orjson_safe`), and looks itself: on the
# 200,000-event journal that search (61 MB) was a quarter of the plain check, for the one piece
# orjson reads. A run of 640+ digits still makes a piece not plain (:func:`_may_hold_huge_integer`):
# the stdlib refuses an integer of more than ``sys.get_int_max_str_digits()`` digits, and msgspec
# does not convert (so does not refuse) a field it skips.
_ONE_BYTE_BREAKS = b"\r\x0b\x0c\x1c\x1d\x1e"
_MULTI_BYTE_BREAKS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
_PIECE_MAP = bytes(
    0x39 if 0x30 <= b <= 0x39 else 0x21 if b in _ONE_BYTE_BREAKS else 0x23 if b >= 0x80 else 0x20
    for b in range(256)
)
_FEW_TAILS = 4096
# The fewest digits ``sys.get_int_max_str_digits()`` may allow (but 0, no limit): a run this long
# may be an integer the stdlib refuses to convert (ValueError: hermes skips the line) where msgspec,
# skipping a field it is not asked for, would not look at it.
_HUGE_DIGITS = 640
_DIGIT_STEP = 64  # a run of 640 digits covers exactly 10 consecutive multiples of 64


def _may_hold_huge_integer(scan: bytes) -> bool:
    """Whether ``scan`` (a piece through ``_PIECE_MAP``: digits are "9") holds a run of
    :data:`_HUGE_DIGITS` digits; looked for first among every 64th byte (a 64th of the bytes), where
    such a run leaves 10 "9"s side by side, and only then in the whole scan."""
    return b"9" * (_HUGE_DIGITS // _DIGIT_STEP) in scan[::_DIGIT_STEP] and b"9" * _HUGE_DIGITS in scan


def _plain_piece(piece: bytes) -> bool:
    """Whether ``str.splitlines()`` cuts the piece's text only at ``\n``, the piece is valid UTF-8
    and no line of it is nested deeper than hermes always reads; then its lines are the
    ``\n``-separated bytes (msgspec reads them; orjson only when :func:`_orjson_reads_exactly`)."""
    if _orjson_loads is None:
        return False
    scan = piece.translate(_PIECE_MAP)
    if b"!" in scan or _may_hold_huge_integer(scan) or may_be_deep_bytes(piece):
        return False  # (a piece that may hold a line nested too deeply: the text path checks it)
    at = scan.find(b"#")
    size, looked = len(scan), 0
    while at >= 0:
        end = at + 1
        while end < size and scan[end] == 0x23:
            end += 1
        looked += end - at
        if looked > _FEW_TAILS:  # text full of accents: one decode beats a look at each run
            try:
                text = str(piece, "utf-8")
            except UnicodeDecodeError:
                return False
            return not any(ch in text for ch in "\x85\u2028\u2029")  # one-character searches
        run = piece[at:end]
        try:
            str(run, "utf-8")
        except UnicodeDecodeError:
            return False
        if any(seq in run for seq in _MULTI_BYTE_BREAKS):
            return False
        at = scan.find(b"#", end)
    return True


def _orjson_reads_exactly(piece: bytes) -> bool:
    """Whether orjson reads every number of the plain ``piece`` as the stdlib does (no run of 19+
    digits: :func:`~inspector.store.jsonfmt.orjson_safe`)."""
    return orjson_safe(piece)


# Characters str.splitlines() treats as line boundaries besides "\n" and "\r\n".
# "\r" counts only when it is not the CR of a CRLF line end.
_TEARING = re.compile("\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


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


def _unreadable(offset: int) -> JournalUnreadable:
    return JournalUnreadable(f"not valid UTF-8 at byte {offset}: the whole journal is unreadable")


def _text_line(line: str, safe: bool) -> dict | None:
    """One non-blank line as :func:`_records_of` reads it: the object, or None when hermes skips it."""
    try:
        obj = fast_loads(line, checked=True) if safe else json.loads(line)
    except (ValueError, RecursionError):
        obj = None
    return obj if isinstance(obj, dict) else None


PiecePlan = list[tuple[int, int, bool]]  # the pieces of a file: (start, end, plain)


def _scan(
    data: bytes,
    plan: PiecePlan | None = None,
    torn: list[int] | None = None,
    counted: list[int] | None = None,
    checked: set[int] | None = None,
) -> Iterator[tuple[int, str | None, dict | None]]:
    """``(line number, the line's text when hermes skips it else None, the object or None)`` of
    every non-blank line, as :func:`_records` gives them (the text only where the object is None).

    ``plan``: the ``(start, end, plain)`` pieces; an empty list is filled while scanning, a full
    one (from an earlier scan of the same bytes) is used as it is. ``torn``: filled with the
    ``\n``-line numbers ``str.splitlines()`` tears (:func:`~inspector.store.journal_raw.
    torn_line_numbers` of the whole text). ``counted``: a one-item list; a plain piece whose
    every line is an object without a true ``terminal`` (:func:`_count_plain`) yields nothing,
    its lines are added to ``counted[0]`` instead, and its start to ``checked`` when that is a set
    (its lines are one object each: :func:`_piece_events` need not look again). Raises JournalUnreadable for invalid UTF-8,
    at the first bad byte's offset (lines before it may have been yielded: callers drop them).
    """
    pieces: Iterable[tuple[int, int, bool | None]] = (
        plan if plan else [(start, end, None) for start, end in _blocks(data)]
    )
    fill = plan is not None and not plan

    def pieces_after(offset: int) -> Iterator[tuple[int, int, bool]]:
        return ((start, end, False) for start, end in _blocks(data) if start >= offset)

    number = 0  # lines as str.splitlines() counts them
    newlines = 0  # "\n" bytes before the piece (torn lines are counted in "\n"-lines)
    for start, end, known in pieces:
        piece = data[start:end]
        plain = _plain_piece(piece) if known is None else known
        if fill:
            plan.append((start, end, plain))
        if plain and counted is not None:
            objects = _count_plain(piece)
            if objects is not None:
                counted[0] += objects
                if checked is not None:
                    checked.add(start)
                number += objects  # one object per line (_count_plain): as many "\n"-lines, which
                newlines += objects  # in a plain piece are the lines str.splitlines() makes
                continue
        if plain and not _orjson_reads_exactly(piece):
            plain = False  # orjson would read the lines below: the text path, exactly
        if not plain:
            try:
                text = str(piece, "utf-8")
            except UnicodeDecodeError as exc:
                raise _unreadable(start + exc.start) from exc
            if torn is not None:
                torn.extend(newlines + n for n in torn_line_numbers(text))
                newlines += piece.count(b"\n")
            safe = orjson_safe(piece)
            deep = may_be_deep_bytes(piece)
            text_lines = text.splitlines()
            for at, line in enumerate(text_lines):
                number += 1
                if line.strip():
                    if deep:
                        try:
                            check_line_depth(line, number)
                        except (JournalTooDeep, JournalDepthUnsure) as exc:
                            rest = ((s, data[s:e]) for s, e, _ in pieces_after(end))
                            texts = (_piece_text(*p) for p in rest)
                            _raise_worst(exc, number, text_lines[at + 1 :], texts)
                    obj = _text_line(line, safe)
                    yield number, (line if obj is None else None), obj
            continue
        lines = piece.split(b"\n")
        if piece.endswith(b"\n"):
            lines.pop()  # str.splitlines() gives no empty line after the last line end
        if torn is not None:
            newlines += len(lines)
        at = start
        for raw in lines:
            number += 1
            try:
                obj = _orjson_loads(raw)
            except ValueError:  # orjson.JSONDecodeError; invalid UTF-8 included
                try:
                    line = str(raw, "utf-8")
                except UnicodeDecodeError as exc:
                    raise _unreadable(at + exc.start) from exc
                if line.strip():
                    obj = _text_line(line, True)
                    yield number, (line if obj is None else None), obj
            else:
                if isinstance(obj, dict):
                    yield number, None, obj
                else:
                    yield number, str(raw, "utf-8"), None
            at += len(raw) + 1


# ---------------------------------------------------------------- msgspec's part of the read
#
# msgspec decodes a line into a Struct of the few fields asked for and skips the rest; where it
# decodes a line at all, the stdlib's ``json.loads`` of that line is an object whose fields hold
# exactly the values msgspec gives (tests/store/test_journal_msgspec.py: hostile lines, and the
# differential's parse check on every journal of its homes). It is only used on a plain piece
# (valid UTF-8, no line break but "\n", no line nested 900+ levels): msgspec does not check the
# UTF-8 of the strings it skips. Whatever it rejects (NaN, a lone surrogate escape, 1e400, a line
# that is not an object, bad JSON) is read by the exact path as before.


class JournalEvent:
    """The fields of a journal event that hermes' repair readers look at (``_append_journaled_
    partial_output``, ``_run_journal_has_visible_output``): ``event``, ``type``, ``created_at``,
    ``seq`` and ``payload``, each the value ``event.get(name)`` gives (None when absent)."""

    __slots__ = ("created_at", "event", "payload", "seq", "type")

    def __init__(
        self,
        event: Any = None,
        type: Any = None,
        created_at: Any = None,
        seq: Any = None,
        payload: Any = None,
    ):
        self.event, self.type, self.created_at, self.seq, self.payload = event, type, created_at, seq, payload

    def __repr__(self) -> str:
        return (
            f"JournalEvent(event={self.event!r}, type={self.type!r}, created_at={self.created_at!r}, "
            f"seq={self.seq!r}, payload={self.payload!r})"
        )


_EVENT_DECODER: Any = None
_FLAGS_DECODER: Any = None
_MSGSPEC_ERRORS: tuple[type[BaseException], ...] = (ValueError, RecursionError)
if _msgspec is not None:

    class _DecodedEvent(_msgspec.Struct, gc=False):
        # gc=False: not tracked by the collector (it holds no cycle: its values are JSON data)
        event: Any = None
        type: Any = None
        created_at: Any = None
        seq: Any = None
        payload: Any = None

    class _TerminalFlags(_msgspec.Struct, gc=False):
        # only what the count looks at (another field decoded is a str per event: 10 ms of the
        # 200,000-event journal's 55 ms decode); every other field is skipped
        terminal: Any = None

    JournalEvent = _DecodedEvent  # type: ignore[misc,assignment]  # the same fields, decoded in C
    _EVENT_DECODER = _msgspec.json.Decoder(_DecodedEvent)
    _FLAGS_DECODER = _msgspec.json.Decoder(_TerminalFlags)
    _MSGSPEC_ERRORS = (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError)


def journal_event(event: dict) -> Any:
    """The :class:`JournalEvent` of an event read by the exact path (a dict)."""
    return JournalEvent(
        event.get("event"), event.get("type"), event.get("created_at"), event.get("seq"), event.get("payload")
    )


def _one_value_per_line(data: bytes, start: int, end: int, values: int) -> bool:
    """Whether the ``values`` JSON objects msgspec read from ``data[start:end]`` are its ``\n``-lines,
    one each (a last line without its ``\n`` counted), as hermes reads them line by line.

    msgspec reads a stream of values, newlines being whitespace to it: "{" and "}" on two lines
    are one object to it and two lines hermes skips, a blank line none, two objects on one line
    two to it and a line hermes skips. So as many values as lines is not enough (a blank line and
    a line of two objects balance). Every line break between two lines must be ``}\n{``: that
    break is between two top-level values (inside one, a "{" cannot follow a "}" and whitespace,
    and a raw newline cannot be inside a string), so each of the lines holds at least one whole
    value, and as many values as lines makes it exactly one each."""
    breaks = data.count(b"\n", start, end) - data.endswith(b"\n", start, end)
    return values == breaks + 1 and (breaks == 0 or data.count(b"}\n{", start, end) == breaks)


def _count_plain(piece: bytes) -> int | None:
    """How many object lines the plain ``piece`` holds (its other lines blank), when msgspec reads
    every non-blank line as an object and none has a true ``terminal``; else None (the exact path
    reads the piece: a line hermes skips, or a terminal record the scan must keep whole)."""
    if _FLAGS_DECODER is None:
        return None
    try:
        flags = _FLAGS_DECODER.decode_lines(piece)
    except _MSGSPEC_ERRORS:
        return None
    for flag in flags:
        if flag.terminal:
            return None
    # one object per line, or the exact path (a blank line also goes there: rare, and only slower)
    if not _one_value_per_line(piece, 0, len(piece), len(flags)):
        return None
    return len(flags)


def _piece_events(data: bytes, start: int, end: int, plain: bool, lines_checked: bool = False) -> list[Any]:
    """The :class:`JournalEvent` of every object line of one piece (of a journal the scan read).
    ``lines_checked``: the scan's :func:`_count_plain` found the piece's lines one object each (msgspec
    reads as many values from the same bytes whatever the struct: the check is not made twice)."""
    if plain and _EVENT_DECODER is not None:
        try:
            # a view of the piece, not a copy (msgspec reads any buffer): 61 MB less copied for the
            # 200,000-event journal
            events = _EVENT_DECODER.decode_lines(memoryview(data)[start:end])
        except _MSGSPEC_ERRORS:
            pass  # some line is not for msgspec: the piece goes line by line, exactly
        else:  # one value per line, as _count_plain checks (a value over two lines is two bad lines)
            if lines_checked or _one_value_per_line(data, start, end, len(events)):
                return events
    return [journal_event(obj) for _n, _t, obj in _scan(data, [(start, end, plain)]) if obj is not None]


class StreamedEvents:
    """A journal's events (hermes' ``events``: the object lines, in file order) without holding them.

    Each iteration parses the bytes again and yields fresh dicts, so a consumer that mutates an
    event changes nothing another iteration sees. Its length, truth value and authoritative
    terminal event (:func:`authoritative_terminal_event`) come from the scan that made it.
    """

    def __init__(
        self, data: bytes, plan: PiecePlan, count: int, terminal: dict | None, checked: Container[int] = ()
    ):
        self._data = data
        self._plan = plan
        self._checked = checked  # the starts of the plain pieces whose lines the scan found one object each
        self._count = count
        self.authoritative_terminal = terminal

    def __iter__(self) -> Iterator[dict]:
        for _number, _text, obj in _scan(self._data, self._plan):
            if obj is not None:
                yield obj

    def outputs(self) -> Iterator[Any]:
        """The events as :class:`JournalEvent` (only the fields the repair's walks look at), in
        file order: a plain piece decoded by msgspec in one call, the rest as :meth:`__iter__`."""
        # one piece's list at a time, its items handed on by chain (in C: no frame per event)
        checked = self._checked
        return chain.from_iterable(
            _piece_events(self._data, start, end, plain, start in checked) for start, end, plain in self._plan
        )

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0


@dataclass(frozen=True)
class ScannedJournal:
    """:func:`scan_journal_bytes`: the events as a :class:`StreamedEvents`, the lines hermes skips
    (as :func:`parse_journal_bytes` gives them) and the ``\n``-line numbers hermes tears apart."""

    events: StreamedEvents
    malformed: list[dict]
    torn_lines: list[int]


def scan_journal_bytes(data: bytes) -> ScannedJournal:
    """:func:`parse_journal_bytes` (and :func:`~inspector.store.journal_raw.torn_line_numbers` of
    the text) in one pass that holds no event: memory of one piece of the file besides ``data``.
    Raises JournalUnreadable where :func:`parse_journal_bytes` does."""
    plan: PiecePlan = []
    torn: list[int] = []
    malformed: list[dict] = []
    count, last_terminal, last_stream_end = 0, None, None
    counted = [0]  # the object lines of the pieces msgspec counted whole (no terminal record there)
    checked: set[int] = set()  # those pieces' starts
    for number, text, obj in _scan(data, plan, torn, counted, checked):
        if obj is None:
            malformed.append({"line": number, "raw": text})
            continue
        count += 1
        if obj.get("terminal"):  # authoritative_terminal_event's rule, one event at a time
            if obj.get("event") == "stream_end":
                last_stream_end = obj
            else:
                last_terminal = obj
    terminal = last_terminal if last_terminal is not None else last_stream_end
    count += counted[0]
    return ScannedJournal(StreamedEvents(data, plan, count, terminal, checked), malformed, torn)


def read_run_events(path: Path) -> ParsedJournal:
    """Read a journal file the way the repair does; a missing file is an empty journal."""
    try:
        data, _ = read_regular(path)
    except FileNotFoundError:
        return ParsedJournal(events=[])
    except OSError as exc:
        raise JournalUnreadable(str(exc)) from exc
    return parse_journal_bytes(data)


def authoritative_terminal_event(events: Iterable[dict]) -> dict | None:
    """The last terminal record that is not ``stream_end``; else the last ``stream_end``."""
    if isinstance(events, StreamedEvents):
        return events.authoritative_terminal  # found by the scan, without parsing the file again
    last_terminal = None
    last_stream_end = None
    for ev in events:
        if not ev.get("terminal"):
            continue
        if ev.get("event") == "stream_end":
            last_stream_end = ev
        else:
            last_terminal = ev
    return last_terminal if last_terminal is not None else last_stream_end


def run_summary(session_id: str, run_id: str, events: list[dict]) -> dict:
    """``latest_run_summary`` for one run: counts, last seq and the logical terminal state."""
    last = events[-1] if events else None
    term = authoritative_terminal_event(events)
    if term is not None:
        state = term.get("terminal_state")
    else:
        state = "running" if events else "unknown"
    return {
        "session_id": session_id,
        "run_id": run_id,
        "stream_id": run_id,
        "event_count": len(events),
        "last_seq": (last.get("seq") if last is not None else 0) or 0,
        "last_event_id": last.get("event_id") if last is not None else None,
        "terminal": term is not None,
        "terminal_state": state,
        "last_event": last.get("event") if last is not None else None,
    }


def event_owns_run(ev: dict, session_id: str, run_id: str) -> bool:
    """hermes' ownership test for a terminal event (A1 and the gateway error path)."""
    seq = ev.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return False
    return (
        ev.get("session_id") == session_id
        and ev.get("run_id") == run_id
        and ev.get("event_id") == f"{run_id}:{seq}"
    )


def list_runs(session_dir: Path, session_id: str, *, strict: bool = False) -> list[Path]:
    """Every ``<run>.jsonl`` of a session, sorted by name (no validation of the ids).

    A missing folder is no runs. Any other error (a folder that may not be listed) is
    swallowed, or raised with ``strict`` so a view can say why it shows nothing.
    """
    folder = session_dir / RUN_JOURNAL_DIR / session_id
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    except FileNotFoundError:
        return []
    except OSError:
        if strict:
            raise
        return []


# hermes' compact writer puts these in every terminal record / output event (the spaced forms
# are a writer's other than hermes'; any of them only sends the journal to the full parse).
_TERMINAL_FLAGS = (b'"terminal":true', b'"terminal": true')
_OUTPUT_NEEDLES = tuple(
    f'"event":{sep}"{name}"'.encode()
    for sep in ("", " ")
    for name in ("token", "reasoning", "interim_assistant", "tool")
)


OTHER_LINE_BREAKS = (
    b"\r",
    b"\x0b",
    b"\x0c",
    b"\x1c",
    b"\x1d",
    b"\x1e",
    b"\xc2\x85",
    b"\xe2\x80\xa8",
    b"\xe2\x80\xa9",
)  # where str.splitlines() also splits (hermes' reader; the preview diff's byte path too), as UTF-8


def open_run_facts(data: bytes) -> dict:
    """Whether a journal may hold output of a run no live worker ended (cheap: byte tests first).

    ``open`` is False when no output event is there, or when a line carrying the terminal flag
    is a terminal record; only those lines are parsed (such a line that ``str.splitlines()``
    would cut differently sends the journal to the full parse). A journal said to be open is
    then read in full by :func:`unshown_runs`, which decides.
    """
    if not any(n in data for n in _OUTPUT_NEEDLES):
        return {"open": False}
    for flag in _TERMINAL_FLAGS:  # newest first: a run's terminal record is near its end
        found = _newest_flagged_line(data, flag, whole=True)
        if found is _CUT:
            return {"open": _open_by_full_parse(data)}  # hermes' reader cuts this line elsewhere
        if found is _TERMINAL:
            return {"open": False}
    return {"open": True}


# how much of a run journal's end :func:`open_run_facts_of_tail` is given: hermes' terminal
# record is the journal's last line, under 100 bytes in the bench's homes
OPEN_RUN_TAIL_BYTES = 4096


def open_run_facts_of_tail(tail: bytes) -> dict | None:
    """:func:`open_run_facts` of a journal from its last bytes alone, where they decide; else None.

    They decide when the newest line holding the first terminal flag that is a terminal record
    lies whole in ``tail``, after every other line holding that flag ``tail`` ends with (the
    whole journal is scanned for that flag first, newest first, and stops there: False whether
    or not output events are in it). Anything else (no such line, a line that may begin before
    ``tail``, one ``str.splitlines()`` would cut) leaves it to the whole journal. At 50,000
    sessions the list's first open read 560 MB of run journals for their last line."""
    found = _newest_flagged_line(tail, _TERMINAL_FLAGS[0], whole=False)
    return {"open": False} if found is _TERMINAL else None


_TERMINAL, _CUT, _NONE = object(), object(), object()


def _newest_flagged_line(data: bytes, flag: bytes, *, whole: bool) -> object:
    """The scan of ``data``'s lines holding ``flag``, newest first, to the first that ends it:
    _TERMINAL (a terminal record), _CUT (``str.splitlines()`` would cut it elsewhere), or _NONE
    when none does. ``whole`` False: ``data`` is the end of a file, and the scan stops (_NONE)
    at a line that may begin before it."""
    at = data.rfind(flag)
    while at >= 0:
        newline = data.rfind(b"\n", 0, at)
        if newline < 0 and not whole:
            return _NONE
        start = newline + 1
        end = data.find(b"\n", at)
        line = data[start : len(data) if end < 0 else end].rstrip(b"\r")
        if any(sep in line for sep in OTHER_LINE_BREAKS):
            return _CUT
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            record = None
        if isinstance(record, dict) and record.get("terminal"):
            return _TERMINAL
        at = data.rfind(flag, 0, start)
    return _NONE


def _open_by_full_parse(data: bytes) -> bool:
    try:
        events = parse_journal_bytes(data).events
    except JournalUnreadable:
        return False
    return authoritative_terminal_event(events) is None
