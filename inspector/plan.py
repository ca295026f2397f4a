"""The single write path: Plan -> preview (diff) -> apply -> undo.

A repair never writes. It returns a :class:`Plan`: for each file, the bytes before (with
the fingerprint taken when they were read) and the bytes after. :func:`render_diff` shows
it; :func:`apply_plan` writes exactly those bytes after re-checking every fingerprint,
keeps the previous bytes as a private backup outside the sessions folder and appends an
entry to the write log; :func:`undo_write` puts a logged write back if nothing changed
since.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import ctypes
import difflib
import errno
import functools
import hashlib
import importlib
import json
import os
import re
import stat
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from inspector import fs_flush, portable
from inspector.statedir import state_folder
from inspector.store.files import Fingerprint, NotARegularFile, open_regular, read_regular, sha256_hex
from inspector.store.journal import OTHER_LINE_BREAKS


# flock(2) where the system has it (Linux, macOS, the BSDs); msvcrt's byte-range lock on
# Windows; a lock file made with O_EXCL where neither is (or when forced portable).
def _system_module(name: str) -> Any:
    """The module ``name`` when this system has it (and the run is not forced portable), else None."""
    if portable.FORCED:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


fcntl = _system_module("fcntl")
msvcrt = _system_module("msvcrt")

# New sidecars get hermes' permissions: the process umask applied to 0666 (0644 observed, the
# mode under the usual umask 022). ``FileChange.new_mode=None`` means exactly that.
DEFAULT_NEW_FILE_MODE = 0o644


@dataclass(frozen=True)
class Clock:
    """The explicit clock of a repair: wall time and the WebUI process start time."""

    now: float
    server_started_at: float


@dataclass(frozen=True)
class FileChange:
    """One file of a plan. ``before is None`` creates it, ``after is None`` deletes it.

    A modified file keeps its mode and owner. A created file gets ``new_mode``, or, when
    that is None, hermes' own: 0666 minus the umask.
    """

    path: Path
    before: bytes | None
    after: bytes | None
    fingerprint: Fingerprint | None = None
    new_mode: int | None = None
    # For a created file: the extended attributes (ACL entries included) it gets, as undo
    # re-creating a deleted file does. A modified file keeps those of the file it replaces.
    new_xattrs: dict[str, bytes] | None = None

    @property
    def kind(self) -> str:
        if self.before is None:
            return "create"
        if self.after is None:
            return "delete"
        return "modify"

    # The preview, the write's checks, its log entry and its temp sweep each name these; a
    # home-wide write hashes its 22 MB index and a thousand new sidecars once, not four times.
    @cached_property
    def sha256_before(self) -> str | None:
        return sha256_hex(self.before) if self.before is not None else None

    @cached_property
    def sha256_after(self) -> str | None:
        return sha256_hex(self.after) if self.after is not None else None

    @cached_property
    def preview(self) -> str:
        """:func:`file_diff` of this change, made once (a materialize makes its 1,000 new sidecars'
        while its index is still being rebuilt, not after)."""
        return file_diff(self)


@dataclass
class Plan:
    """What a repair would write, and why. Producing one writes nothing."""

    action: str
    session_id: str | None
    changes: list[FileChange] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refusal: str | None = None
    result: dict = field(default_factory=dict)
    clock: Clock | None = None  # the clock it was planned with (``crosscheck`` runs hermes with it)

    @property
    def is_noop(self) -> bool:
        return self.refusal is None and not self.changes

    def to_json(self, diff: bool = True) -> dict:
        return {
            "action": self.action,
            "session_id": self.session_id,
            "refusal": self.refusal,
            "summary": self.summary,
            "warnings": self.warnings,
            "result": self.result,
            "changes": [
                {
                    "path": str(c.path),
                    "kind": c.kind,
                    "sha256_before": c.sha256_before,
                    "sha256_after": c.sha256_after,
                    **({"diff": c.preview} if diff else {}),
                }
                for c in self.changes
            ],
        }


class ApplyError(Exception):
    """Apply or undo refused or failed. The message says why, what is on disk now and how to undo it.

    ``outcome`` says what was written: ``"nothing"`` (every file is as it was), ``"partial"``
    (some files hold their new bytes: the message names them and gives the undo command) or
    ``"all"`` (every file was written but the write log could not be marked complete).
    ``written`` lists the files that hold their new bytes; ``write_id`` is the write to undo.
    """

    def __init__(
        self,
        message: str,
        *,
        outcome: str = "nothing",
        written: tuple[Path, ...] = (),
        write_id: str | None = None,
    ):
        super().__init__(message)
        self.outcome = outcome
        self.written = tuple(written)
        self.write_id = write_id


class WriteFailed(ApplyError, OSError):
    """The disk refused a write (full, read-only, permission denied...).

    The message names the file and the reason and says what is on disk now. It is also an
    OSError, so callers that catch OSError around a write keep working.
    """


# ---------------------------------------------------------------- preview


def _text_lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace")
    return text.splitlines(keepends=True) if text else []


# difflib's matcher is roughly quadratic on long runs of similar lines (a 10,000-row _index.json
# has a million); past this many differing lines the preview lists them without alignment.
DIFF_ALIGN_LIMIT = 20_000
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _common_edges(before: list[str], after: list[str]) -> tuple[int, int]:
    """Lengths of the common leading and trailing runs of lines (not overlapping)."""
    limit = min(len(before), len(after))
    head = 0
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return head, tail


def _shift_hunk(line: str, offset: int) -> str:
    if not offset:
        return line
    m = _HUNK.match(line)
    if not m:
        return line
    a, a_len, b, b_len = m.groups()
    # a zero-length side is numbered from the line before it; shifting keeps that convention
    return f"@@ -{int(a) + offset}{a_len or ''} +{int(b) + offset}{b_len or ''} @@" + line[m.end() :]


def prepare_previews(changes: list[FileChange]) -> None:
    """Make each change's preview and hashes now (they are cached): the hashes in a thread beside
    the previews, since hashlib lets go of the GIL on large data (a home-wide write's 22 MB index
    is hashed while its preview is made, not after)."""

    def hashes() -> None:
        for c in changes:
            c.sha256_before  # noqa: B018 - cached
            c.sha256_after  # noqa: B018

    worker = threading.Thread(target=hashes, name="inspector-hash", daemon=True)
    worker.start()
    try:
        for c in changes:
            c.preview  # noqa: B018 - cached
    finally:
        worker.join()


def file_diff(change: FileChange, context: int = 3) -> str:
    """Unified diff of one change. hermes' files are indented JSON, so lines are readable.

    The common head and tail are cut before diffing (line numbers stay those of the files),
    so a one-row change in a huge index costs nothing; a middle too large to align is
    shown as its removed and added lines, with a note.

    Where both sides break lines at ``\\n`` only (as hermes' JSON does unless a string holds
    U+0085, U+2028 or U+2029), the common edges are found on the bytes and only the middle is
    decoded and split (:func:`_file_diff_bytes`): the 22 MB index of a home-wide write is never
    turned into two lists of 700,000 strings (170 MB) to show a few hunks.
    """
    if change.before is None and change.after and change.after.count(b"\n") < DIFF_ALIGN_LIMIT:
        return _created_file_diff(change)
    if _lf_only(change.before) and _lf_only(change.after):
        return _file_diff_bytes(change, context)
    return _file_diff_lines(change, context)


def _created_file_diff(change: FileChange) -> str:
    """:func:`_file_diff_lines` of a new file that is not empty: every line added, in one hunk
    (difflib's only one for an empty "before"), written here directly (a materialize of 1,000
    rows previews 1,000 new sidecars). Past DIFF_ALIGN_LIMIT lines, the coarse listing as before.
    Only for files with fewer ``\\n`` than that (a bigger one, e.g. a new 22 MB index, is never
    split into lines whole: :func:`_file_diff_bytes` counts its lines on the bytes). Where the
    file breaks lines at ``\\n`` only (:func:`_lf_only`, as hermes' JSON does), the lines are not
    split at all: each ``\\n`` of the bytes becomes ``\\n+`` before they are decoded (0.04-0.06 s
    instead of 0.06-0.09 s for a materialize's 1,041 new sidecars, 12 MB)."""
    b = f"b/{change.path.name}"
    data = change.after
    if data and _lf_only(data):  # lines end at "\n" only: every line's "+" put in by one replace
        last = data.endswith(b"\n")
        n = data.count(b"\n") + (not last)
        if n <= DIFF_ALIGN_LIMIT:
            # on the bytes, then decoded: "\n" is ASCII, so no sequence the decoding replaces
            # reaches over it, and what comes after it changes nothing before it
            plus = data.replace(b"\n", b"\n+")
            text = (plus[:-1] if last else plus).decode("utf-8", errors="replace")
            head = f"--- /dev/null\n+++ {b}\n@@ -0,0 +{'1' if n == 1 else f'1,{n}'} @@\n+"
            return head + text if last else "".join((head, text, "\n\\ No newline at end of file\n"))
    after = _text_lines(data)
    n = len(after)
    if n > DIFF_ALIGN_LIMIT:
        return _coarse_diff("/dev/null", b, 0, [], after[:COARSE_SHOWN], 0, n)
    head = f"--- /dev/null\n+++ {b}\n@@ -0,0 +{'1' if n == 1 else f'1,{n}'} @@\n"
    return head + "".join(
        f"+{x}" if x.endswith("\n") else f"+{x}\n\\ No newline at end of file\n" for x in after
    )


def _file_diff_lines(change: FileChange, context: int = 3) -> str:
    """:func:`file_diff` on the decoded lines (``str.splitlines``: every line break it knows)."""
    before = _text_lines(change.before)
    after = _text_lines(change.after)
    a = "/dev/null" if change.before is None else f"a/{change.path.name}"
    b = "/dev/null" if change.after is None else f"b/{change.path.name}"
    head, tail = _common_edges(before, after)
    start = max(0, head - context)
    keep_tail = max(0, tail - context)
    mid_before, mid_after = before[start : len(before) - keep_tail], after[start : len(after) - keep_tail]
    if max(len(mid_before), len(mid_after)) > DIFF_ALIGN_LIMIT:
        return _coarse_diff(
            a, b, start, mid_before[:COARSE_SHOWN], mid_after[:COARSE_SHOWN], len(mid_before), len(mid_after)
        )
    return _unified(a, b, start, mid_before, mid_after, context)


def _unified(a: str, b: str, start: int, mid_before: list[str], mid_after: list[str], context: int) -> str:
    out = []
    for line in difflib.unified_diff(mid_before, mid_after, fromfile=a, tofile=b, n=context):
        line = _shift_hunk(line, start)
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lf_only(data: bytes | None) -> bool:
    """Whether ``data`` breaks lines at ``\\n`` only (no byte sequence of OTHER_LINE_BREAKS in it).

    Searched first in what is left of the bytes without the ASCII ones that are no line break
    (one pass; in a 22 MB index a few KB remain): every separator is either kept whole there
    or made of non-ASCII bytes only, so none is missed; one found there (it may straddle a
    removed byte) is looked for again in the bytes themselves. Three searches of multi-byte
    separators over the whole text cost four times as much (many ``\\xe2\\x80`` of quotes)."""
    if data is None:
        return True
    rest = data.translate(None, _NOT_BREAKS)
    return not any(sep in rest for sep in OTHER_LINE_BREAKS) or not any(
        sep in data for sep in OTHER_LINE_BREAKS
    )


_NOT_BREAKS = bytes(b for b in range(0x80) if bytes([b]) not in OTHER_LINE_BREAKS)


def _common_prefix(x: memoryview, y: memoryview) -> int:
    """Length of the common leading bytes (64 KB at a time, then halving)."""
    n = min(len(x), len(y))
    lo, step = 0, 1 << 16
    while lo < n:
        hi = min(n, lo + step)
        if x[lo:hi] != y[lo:hi]:
            while hi - lo > 1:  # x[:lo] == y[:lo] and x[lo:hi] != y[lo:hi]
                mid = (lo + hi) // 2
                if x[lo:mid] == y[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
    return n


def _common_suffix(x: memoryview, y: memoryview, limit: int) -> int:
    """Length of the common trailing bytes, at most ``limit``."""
    lx, ly = len(x), len(y)
    lo, step = 0, 1 << 16
    while lo < limit:
        hi = min(limit, lo + step)
        if x[lx - hi : lx - lo] != y[ly - hi : ly - lo]:
            while hi - lo > 1:  # the last lo bytes agree, the last hi do not
                mid = (lo + hi) // 2
                if x[lx - mid : lx - lo] == y[ly - mid : ly - lo]:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
    return limit


def _line_count(data: bytes, start: int, end: int) -> int:
    """Lines of ``data[start:end]`` (``str.splitlines`` of a ``\\n``-only text)."""
    if end <= start:
        return 0
    return data.count(b"\n", start, end) + (data[end - 1] != 0x0A)


def _first_lines(data: bytes, start: int, end: int, n: int) -> list[str]:
    """The first ``n`` lines of ``data[start:end]``, decoded as :func:`_text_lines` decodes them."""
    stop = start
    for _ in range(n):
        if stop >= end:
            break
        nl = data.find(b"\n", stop, end)
        stop = end if nl < 0 else nl + 1
    return _text_lines(data[start:stop])


def _file_diff_bytes(change: FileChange, context: int) -> str:
    """:func:`_file_diff_lines` of two ``\\n``-only sides, their common edges found on the bytes.

    A line of one side equals a line of the other exactly when both are the same bytes (the
    decoding replaces bad bytes line by line as it does for the whole text: no UTF-8 sequence
    holds a ``\\n``), so the common leading lines are the whole lines inside the common leading
    bytes, and the common trailing lines are the whole lines inside the common trailing bytes
    that start a line on both sides, the two runs never overlapping."""
    before, after = change.before or b"", change.after or b""
    a = "/dev/null" if change.before is None else f"a/{change.path.name}"
    b = "/dev/null" if change.after is None else f"b/{change.path.name}"
    lb, la = len(before), len(after)
    vb, va = memoryview(before), memoryview(after)
    if before == after:
        head_bytes = lb
    else:
        head_bytes = before.rfind(b"\n", 0, _common_prefix(vb, va)) + 1
    head = _line_count(before, 0, head_bytes)
    suffix = _common_suffix(vb, va, min(lb, la) - head_bytes)
    qb, qa = lb - suffix, la - suffix
    if (qb == 0 or before[qb - 1] == 0x0A) and (qa == 0 or after[qa - 1] == 0x0A):
        tail_start = qb
    else:
        nl = before.find(b"\n", qb)
        tail_start = lb if nl < 0 else nl + 1
    tail = _line_count(before, tail_start, lb)
    start = max(0, head - context)
    start_bytes = head_bytes
    for _ in range(head - start):
        start_bytes = before.rfind(b"\n", 0, start_bytes - 1) + 1
    keep_tail = max(0, tail - context)
    keep_from = tail_start
    for _ in range(tail - keep_tail):
        nl = before.find(b"\n", keep_from)
        keep_from = lb if nl < 0 else nl + 1
    keep_bytes = lb - keep_from
    end_b, end_a = lb - keep_bytes, la - keep_bytes
    n_before, n_after = _line_count(before, start_bytes, end_b), _line_count(after, start_bytes, end_a)
    if max(n_before, n_after) > DIFF_ALIGN_LIMIT:
        return _coarse_diff(
            a,
            b,
            start,
            _first_lines(before, start_bytes, end_b, COARSE_SHOWN),
            _first_lines(after, start_bytes, end_a, COARSE_SHOWN),
            n_before,
            n_after,
        )
    return _unified(
        a, b, start, _text_lines(before[start_bytes:end_b]), _text_lines(after[start_bytes:end_a]), context
    )


COARSE_SHOWN = 2_000  # lines of each side shown when a middle is too large to align


def _coarse_diff(
    a: str, b: str, start: int, before: list[str], after: list[str], n_before: int, n_after: int
) -> str:
    """Removed then added lines of a middle too large to align (``n_before``/``n_after`` lines), of
    which the first COARSE_SHOWN of each side (``before``/``after``) are shown."""
    head = (
        f"--- {a}\n+++ {b}\n"
        f"@@ -{start + 1},{n_before} +{start + 1},{n_after} @@ "
        f"(too many differing lines to align: removed lines, then added lines)\n"
    )
    parts = [head]
    for sign, side, total in (("-", before, n_before), ("+", after, n_after)):
        parts.extend(
            f"{sign}{x}" if x.endswith("\n") else f"{sign}{x}\n\\ No newline at end of file\n"
            for x in side[:COARSE_SHOWN]
        )
        if total > COARSE_SHOWN:
            parts.append(
                f"\\ ... {total - COARSE_SHOWN:,} more {'removed' if sign == '-' else 'added'} "
                "lines not shown\n"
            )
    return "".join(parts)


def render_diff(plan: Plan) -> str:
    """The whole preview as text: summary, warnings, then one diff per file."""
    parts = [f"# {plan.action} {plan.session_id or '(all eligible sessions)'}\n"]
    if plan.refusal:
        parts.append(f"REFUSED: {plan.refusal}\n")
    for line in plan.summary:
        parts.append(f"* {line}\n")
    for line in plan.warnings:
        parts.append(f"! {line}\n")
    for change in plan.changes:
        parts.append(f"\n--- {change.kind}: {change.path}\n")
        parts.append(file_diff(change))
    return "".join(parts)


# ---------------------------------------------------------------- apply


class _NotRegular(OSError):
    pass


def _current_bytes(path: Path) -> bytes | None:
    """The bytes at ``path`` (None: no file). Never follows a link nor blocks on a FIFO that was
    swapped in after the path was checked: that raises OSError "not a regular file"."""
    data = _read_held(path)
    if data is None and os.path.lexists(path):
        raise _NotRegular(errno.EINVAL, "not a regular file", str(path))
    return data


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


def _plain_problem(path: Path) -> str | None:
    text = str(path)
    if "\x00" in text or os.path.normpath(text) != text or not path.is_absolute():
        return f"{text!r} is not a plain absolute path; the inspector only writes plain paths"
    return None


def _target_problem(path: Path) -> str | None:
    """Why ``path`` must not be written (a link, not a regular file, not a plain path), else None."""
    problem = _plain_problem(path)
    if problem is not None:
        return problem
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} cannot be examined ({_reason(exc)})"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link; the inspector never writes through or replaces a link"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    return None


def check_fingerprints(plan: Plan) -> list[str]:
    """Why the plan must not be written now (empty = every file still holds what the preview read).

    Besides content changes this refuses targets that are symbolic links or not regular
    files (never followed, never replaced), paths that are not plain, and duplicate paths.
    """
    changed = []
    seen: set[Path] = set()
    buffer: memoryview | None = None
    for c in plan.changes:
        if c.path in seen:
            changed.append(f"{c.path} appears twice in the plan")
            continue
        seen.add(c.path)
        problem = _target_problem(c.path)
        if problem is not None:
            changed.append(problem)
            continue
        try:
            if c.before is None:
                exists = _current_bytes(c.path) is not None
            else:  # the bytes themselves (no hash of a 22 MB index per check), read through one buffer
                if buffer is None:
                    buffer = memoryview(bytearray(_COMPARE_CHUNK))
                same = _holds_bytes(c.path, c.before, buffer)
        except OSError as exc:
            changed.append(f"{c.path} cannot be read ({_reason(exc)})")
            continue
        if c.before is None:
            if exists:
                changed.append(f"{c.path} now exists (it did not when the preview was made)")
        elif same is None:
            changed.append(f"{c.path} was removed since the preview")
        elif not same:
            changed.append(f"{c.path} changed since the preview")
    return changed


_COMPARE_CHUNK = 1 << 20  # bytes read at a time by :func:`_holds_bytes`
_HAS_READV = hasattr(os, "readv") and not portable.FORCED  # reads into the one reused buffer


def _holds_bytes(path: Path, expected: bytes, buffer: memoryview) -> bool | None:
    """Whether the file at ``path`` holds exactly ``expected``: read to its end and compared byte for
    byte, a chunk at a time through ``buffer`` (the first difference ends the read), so the 22 MB
    index checked twice per write costs no fresh 22 MB copy each time. None: no file. Opens as
    :func:`_current_bytes` does: never through a link, never blocking; a link or anything but a
    regular file raises _NotRegular."""
    try:
        fd, _ = open_regular(path, follow_links=False)
    except (FileNotFoundError, NotARegularFile):
        fd = None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        fd = None
    if fd is None:
        if os.path.lexists(path):
            raise _NotRegular(errno.EINVAL, "not a regular file", str(path))
        return None
    offset = 0
    try:
        while True:
            if _HAS_READV:
                chunk = buffer[: os.readv(fd, [buffer])]
            else:  # no readv (Windows): a fresh chunk per read, still never the whole file at once
                chunk = memoryview(os.read(fd, len(buffer)))
            if not chunk:
                return offset == len(expected)
            if not expected.startswith(chunk, offset):  # a memcmp at ``offset``: no copy made
                return False
            offset += len(chunk)
    finally:
        os.close(fd)


# ---------------------------------------------------------------- names that always fit

NAME_MAX = 255  # bytes in one file name (ext4, xfs, btrfs, APFS...)
_TEMP_MARK = ".inspector.tmp."


def fit_name(name: str, room: int) -> str:
    """``name`` itself if it takes at most ``room`` bytes, else its head, ``~`` and a digest of it all.

    Two different long names never shorten to the same result (the digest is of the whole name). The
    head is the name's first ``room - 17`` bytes decoded with the bytes that are not whole UTF-8 letters
    left out, so it never takes more than those bytes (a room under 17 gives ``~`` and the digest alone).
    """
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= room:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:16]
    head = raw[: max(0, room - len(digest) - 1)].decode("utf-8", "ignore")
    return f"{head}~{digest}"


def _temp_prefix(target: Path) -> str:
    """``.<name>.inspector.tmp.``, with a long name shortened so the temp name fits in 255 bytes."""
    name = target.name
    if len(name.encode("utf-8", "surrogateescape")) > 180:
        name = fit_name(name, 137)
    return f".{name}{_TEMP_MARK}"


def _first_prefix(name: str, order: dict[str, int]) -> str | None:
    """The first (in ``order``) of the prefixes ``name`` starts with. Every prefix ends with
    :data:`_TEMP_MARK`, so only the places where ``name`` holds the mark are looked up: a folder of
    10,000 files swept for 1,000 targets is 10,000 lookups, not ten million ``startswith``."""
    best = None
    at = name.find(_TEMP_MARK)
    while at >= 0:
        candidate = name[: at + len(_TEMP_MARK)]
        if candidate in order and (best is None or order[candidate] < order[best]):
            best = candidate
        at = name.find(_TEMP_MARK, at + 1)
    return best


def _temp_name(target: Path) -> Path:
    # hermes sweeps `*.tmp.*` files older than an hour and never lists names that do not
    # end in `.json`, so a crash here never leaves something hermes would load as a session.
    return target.with_name(
        f"{_temp_prefix(target)}{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex[:8]}"
    )


def _aside_name(target: Path) -> Path:
    """A fresh private name beside ``target`` for a version moved off it (swept like a temp file)."""
    return target.with_name(
        f"{_temp_prefix(target)}{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex[:8]}.old"
    )


_MAX_PID = 2**31 - 1  # os.kill(pid, 0) raised OverflowError past a C int: the file was left alone


def _pid_alive(pid: int) -> bool:
    """Whether a temp file's writer may still be at work. portable.pid_alive asks without a signal
    (``os.kill(pid, 0)`` ends the process on Windows); a pid past what the system can number cannot
    be told about, so its file is left alone."""
    if pid > _MAX_PID:
        return True
    return portable.pid_alive(pid)


def _any_prefix(name: str) -> str | None:
    """``.<name>.inspector.tmp.`` of a temp file of the inspector for any target, else None."""
    at = name.find(_TEMP_MARK, 1)
    return name[: at + len(_TEMP_MARK)] if name.startswith(".") and at > 1 else None


def sweep_stale_temps(
    targets: list[Path],
    log: WriteLog | None = None,
    known: dict[str, set[str]] | None = None,
    whole_folders: bool = False,
) -> int:
    """Remove the inspector's own temp files for ``targets`` left by a process that died.

    Only names ``.<target name>.inspector.tmp.<pid>.<tid>[...]`` of a pid that no longer runs
    are touched; returns how many were removed. A write killed in the middle of a swap can
    leave there the version it displaced: with ``log``, a file whose bytes are not a version
    the write log knows for that target (a backed-up previous version, or the inspector's
    own new bytes; ``known`` adds sha256s per target path, e.g. those of the write about to
    run) is first copied to ``<state>/rescued/`` so that no byte of it is lost.

    ``whole_folders``: the dead processes' temp files for any name in the targets' folders too
    (a run killed while it staged a sidecar that is no target any more: hermes created it since).
    """
    removed = 0
    by_parent: dict[Path, dict[str, Path]] = {}
    for t in targets:
        by_parent.setdefault(t.parent, {})[_temp_prefix(t)] = t
    extra = known or {}
    known = None
    for parent, prefixes in by_parent.items():
        try:
            entries = list(os.scandir(parent))
        except OSError:
            continue
        order = {p: i for i, p in enumerate(prefixes)}
        for entry in entries:
            prefix = _first_prefix(entry.name, order)
            if prefix is not None:
                target = str(prefixes[prefix])
            elif whole_folders and (prefix := _any_prefix(entry.name)) is not None:
                target = str(parent / prefix[1 : -len(_TEMP_MARK)])  # a shortened long name: unknown
            else:
                continue
            pid = entry.name[len(prefix) :].split(".", 1)[0]
            if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                if not entry.is_file(follow_symlinks=False):
                    continue
                if log is not None:
                    if known is None:
                        known = _known_versions(log)
                        for path, shas in extra.items():
                            known.setdefault(path, set()).update(shas)
                    data = _read_held(Path(entry.path))
                    if data is not None and sha256_hex(data) not in known.get(target, set()):
                        log.rescue(Path(entry.path).name, data, "swept")
                os.unlink(entry.path)
                removed += 1
    return removed


def _known_versions(log: WriteLog) -> dict[str, set[str]]:
    known: dict[str, set[str]] = {}
    for rec in log.records():
        for f in rec.files:
            shas = known.setdefault(str(f.get("path")), set())
            shas.update(x for x in (f.get("sha256_before"), f.get("sha256_after")) if isinstance(x, str))
    return known


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_UMASK_LOCK = threading.Lock()
_UMASK: list[int] = []


def current_umask() -> int:
    """The process umask, read without changing it where the system tells it (Linux's
    ``/proc/self/status``, other threads may be creating files). Elsewhere it is set and put
    back once, under a lock, and remembered (a process's umask does not change under it)."""
    if sys.platform.startswith("linux") and not portable.FORCED:
        try:
            with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("Umask:"):
                        return int(line.split()[1], 8)
        except (OSError, ValueError, IndexError):
            pass
    with _UMASK_LOCK:
        if not _UMASK:
            mask = os.umask(0o022)
            os.umask(mask)
            _UMASK.append(mask)
        return _UMASK[0]


def _attributes(change: FileChange, umask: int | None = None) -> tuple[int, int | None, int | None]:
    """(mode, uid, gid) the written file gets: those of the file it replaces, else hermes' own.

    A new file gets ``new_mode`` when the plan sets one (undo re-creating a file), else what
    hermes' writers produce: 0666 minus the umask. Run as root, a new file belongs to the
    owner of its folder, so the user's hermes can still read and rewrite it. ``umask``: the
    process's, when the caller read it already (once for a write of many files).
    """
    try:
        st = os.lstat(change.path)
        return stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
    except OSError:
        pass
    mode = (
        change.new_mode
        if change.new_mode is not None
        else 0o666 & ~(current_umask() if umask is None else umask)
    )
    if portable.euid() == 0:
        try:
            pst = os.stat(change.path.parent)
            return mode, pst.st_uid, pst.st_gid
        except OSError:
            pass
    return mode, None, None


# ---------------------------------------------------------------- extended attributes and ACLs
#
# A rewritten file is a new inode: whatever the old one carried besides its bytes and mode
# must be copied to it before it takes the old one's place. POSIX ACL entries are the
# extended attributes ``system.posix_acl_access`` / ``system.posix_acl_default``; where
# hermes-webui runs as a service account given access by an ACL, losing them stops it from
# saving that chat.

_HAS_XATTR = hasattr(os, "listxattr")
_NO_XATTR = {
    errno.ENOTSUP,
    getattr(errno, "EOPNOTSUPP", errno.ENOTSUP),
    getattr(errno, "ENODATA", errno.ENOENT),
}


def read_xattrs(path: Path) -> dict[str, bytes]:
    """The extended attributes of ``path`` (not following a link); {} where the system has none."""
    if not _HAS_XATTR:
        return {}
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in _NO_XATTR:
            return {}
        raise
    out = {}
    for name in names:
        try:
            out[name] = os.getxattr(path, name, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _NO_XATTR:
                raise
    return out


# The SELinux label: policy gives a new file its label (normally the one the old file had);
# copying it is attempted, and neither warned about nor required (a user may not relabel).
_LABELS = frozenset({"security.selinux", "security.SMACK64"})


def _xattr_problem(name: str) -> str | None:
    """Why the attribute ``name`` cannot be put on a new file by this process (None: it can)."""
    if name.startswith("user.") or name in ("system.posix_acl_access", "system.posix_acl_default"):
        return None
    if name in _LABELS:
        return None
    if name.startswith(("trusted.", "security.")):
        return None if portable.euid() == 0 else "only root may set it"
    return "the inspector does not know how to copy it"


def attribute_warnings(plan: Plan) -> list[str]:
    """What a rewritten file of ``plan`` cannot keep (extended attributes, ACL entries, owner, links).

    Nothing here writes. ``apply_plan`` copies every attribute this does not warn about, and
    refuses (writing nothing) if one of those cannot be copied after all.
    """
    out = []
    for c in plan.changes:
        try:
            st = os.lstat(c.path)
        except OSError:
            st = None
        if c.before is None or c.after is None or st is None or not stat.S_ISREG(st.st_mode):
            attrs = c.new_xattrs or {}
        else:
            try:
                attrs = read_xattrs(c.path)
            except OSError as exc:
                out.append(
                    f"{c.path}: its extended attributes cannot be read ({_reason(exc)}); the write will be "
                    "refused unless they can be copied to the rewritten file"
                )
                continue
            euid = portable.euid()  # None: Windows, where owners are not POSIX ids
            if euid is not None and euid != 0 and st.st_uid != euid:
                out.append(
                    f"{c.path} belongs to user {st.st_uid}; the rewritten file will belong to you (user "
                    f"{euid}); run the repair as that user to keep its owner"
                )
            elif (
                euid is not None
                and euid != 0
                and st.st_gid != os.getegid()
                and st.st_gid not in os.getgroups()
            ):
                out.append(
                    f"{c.path} belongs to group {st.st_gid}, which you are not in; the rewritten file "
                    f"will belong to your group ({os.getegid()})"
                )
            if st.st_nlink > 1:
                out.append(
                    f"{c.path} has {st.st_nlink} hard links; the rewritten file is a new file, the other "
                    "names keep the old bytes"
                )
        lost = [f"{name} ({why})" for name in sorted(attrs) if (why := _xattr_problem(name)) is not None]
        if lost:
            out.append(
                f"{c.path}: the extended attribute(s) {', '.join(lost)} cannot be copied to the "
                "rewritten file; it will not have them"
            )
    return out


def _put_xattrs(fd: int, target: Path, attrs: dict[str, bytes]) -> None:
    """Copy ``attrs`` onto the staged file; an attribute the preview did not warn about must stick."""
    for name, value in attrs.items():
        problem = _xattr_problem(name)
        try:
            os.setxattr(fd, name, value)
        except OSError as exc:
            if problem is not None or name in _LABELS:
                continue  # the preview said it cannot be kept; a label is the policy's to give
            raise ApplyError(
                f"could not keep the extended attribute {name} of {target} ({_reason(exc)}); "
                "nothing was written, every file is as it was"
            ) from exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    written = 0
    # os.write may write less than asked; loop until everything is down.
    while written < len(data):
        written += os.write(fd, view[written:])


def _stage(
    target: Path,
    data: bytes,
    attributes: tuple[int, int | None, int | None],
    xattrs: dict[str, bytes] | None = None,
    *,
    sync: bool = True,
) -> Path:
    """Write ``data`` to a fsynced temp file beside ``target`` with the given (mode, uid, gid) and
    xattrs (``sync=False``: not fsynced, for :class:`EarlyStaging`'s one flush of the file system)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    mode, uid, gid = attributes
    tmp = _temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | portable.O_BINARY, 0o600)
    try:
        try:
            _write_all(fd, data)
            if uid is not None and portable.euid() is not None and (uid, gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only root (or a group member) may; best effort
                    os.fchown(fd, uid, gid)
            portable.fchmod(fd, mode)
            if xattrs:  # after the mode: an ACL sets the group bits itself
                _put_xattrs(fd, target, xattrs)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


# ---------------------------------------------------------------- the atomic exchange
#
# renameat2(RENAME_EXCHANGE) swaps two names in one step: the target gets the new file and the
# temp name gets whatever was at the target at that instant, so what was displaced can be
# checked afterwards and nothing anyone else renamed into place is ever unlinked.

_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
_RENAME_SWAP = 2  # macOS renamex_np
_SYS_RENAMEAT2 = {"x86_64": 316, "amd64": 316, "aarch64": 276, "arm64": 276, "riscv64": 276, "i686": 353}
# Errors that mean "this system or filesystem cannot exchange": the names are untouched.
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", errno.ENOTSUP)}


def _load_exchange():
    """A ``swap(a: bytes, b: bytes) -> int`` calling the OS's atomic exchange, or None."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except (OSError, TypeError):
        return None
    if sys.platform.startswith("linux"):
        fn = getattr(libc, "renameat2", None)  # glibc >= 2.28
        if fn is not None:
            fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
            fn.restype = ctypes.c_int
            return lambda a, b: fn(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
        number = _SYS_RENAMEAT2.get(os.uname().machine)
        syscall = getattr(libc, "syscall", None)
        if number is not None and syscall is not None:
            syscall.restype = ctypes.c_long
            return lambda a, b: syscall(
                ctypes.c_long(number),
                ctypes.c_int(_AT_FDCWD),
                ctypes.c_char_p(a),
                ctypes.c_int(_AT_FDCWD),
                ctypes.c_char_p(b),
                ctypes.c_uint(_RENAME_EXCHANGE),
            )
    elif sys.platform == "darwin":
        fn = getattr(libc, "renamex_np", None)
        if fn is not None:
            fn.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint)
            fn.restype = ctypes.c_int
            return lambda a, b: fn(a, b, _RENAME_SWAP)
    return None


# Forced portable: the Windows way, os.replace after moving the old file aside (see apply_plan).
_EXCHANGE = None if portable.FORCED else _load_exchange()


def _exchange(a: Path, b: Path) -> None:
    """Swap the names ``a`` and ``b`` atomically (both must exist). OSError when it cannot."""
    if _EXCHANGE is None:
        raise OSError(errno.ENOSYS, "this system has no atomic exchange of two names", str(b))
    if _EXCHANGE(os.fsencode(a), os.fsencode(b)) != 0:
        code = ctypes.get_errno() or errno.EIO
        raise OSError(code, os.strerror(code), str(b))


# ---------------------------------------------------------------- the write log


@dataclass(frozen=True)
class WriteRecord:
    """An entry of the write log. ``complete`` is False for a write that was interrupted."""

    write_id: str
    time: float
    action: str
    session_id: str | None
    files: list[dict]
    complete: bool = True

    def to_json(self) -> dict:
        return {
            "write_id": self.write_id,
            "time": self.time,
            "action": self.action,
            "session_id": self.session_id,
            "files": self.files,
            "complete": self.complete,
        }


def _inside(path: Path, folder: Path) -> bool:
    p, f = os.path.realpath(path), os.path.realpath(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


class WriteLog:
    """Backups and the append-only write log, kept in a private folder outside the home.

    Default location: ``$XDG_STATE_HOME/hermes-inspector`` (``~/.local/state/...``), or
    ``$HERMES_INSPECTOR_STATE_DIR`` (a private folder of our own inside it when it is shared).
    Every folder the inspector makes there is 0700 and every file 0600: backups hold private
    chats. A folder the user named is used as it is, never chmod-ed. It must not
    be inside the Hermes home (``keep_out_of``) nor inside a folder a write changes.
    """

    def __init__(self, root: Path, *, keep_out_of: tuple[Path, ...] = (), own_root: bool = True):
        self.root = root
        self.keep_out_of = tuple(keep_out_of)
        self.own_root = own_root  # False: a folder the user named; its permissions are left alone

    @classmethod
    def default(cls, home=None) -> WriteLog:
        """The user's write log; ``home`` (a located :class:`~inspector.home.Home`) must not hold it."""
        outside = () if home is None else tuple(dict.fromkeys((Path(home.base), Path(home.state_dir))))
        root, own = state_folder()
        return cls(root, keep_out_of=outside, own_root=own)

    @property
    def log_path(self) -> Path:
        return self.root / "writes.jsonl"

    def check_outside(self, folders=()) -> None:
        """Refuse (ApplyError) a state folder inside the home or inside a folder being written."""
        for folder in (*self.keep_out_of, *folders):
            if _inside(self.root, folder):
                raise ApplyError(
                    f"the inspector's state folder {self.root} (backups and the write log) is inside {folder}; "
                    "it must be kept outside the Hermes home and its sessions. Set HERMES_INSPECTOR_STATE_DIR "
                    "(or XDG_STATE_HOME) to a folder outside it; nothing was written"
                )

    def _ensure(self) -> None:
        self.check_outside()
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(self.root)
        if portable.euid() is not None and st.st_uid != portable.euid():
            raise ApplyError(
                f"the state folder {self.root} belongs to user {st.st_uid}, not to you; the "
                "inspector keeps private chats there only in a folder of its own. Set "
                "HERMES_INSPECTOR_STATE_DIR to another folder; nothing was written"
            )
        if self.own_root:
            os.chmod(self.root, 0o700)
        elif stat.S_IMODE(st.st_mode) & 0o022:
            raise ApplyError(f"the state folder {self.root} can be written by others; nothing was written")
        (self.root / "backups").mkdir(exist_ok=True, mode=0o700)
        os.chmod(self.root / "backups", 0o700)

    def backup_dir(self, write_id: str) -> Path:
        return self.root / "backups" / write_id

    def rescue(self, name: str, data: bytes, why: str) -> Path:
        """Keep ``data`` (a version someone else wrote that a write moved aside) in ``rescued/``."""
        self._ensure()
        folder = self.root / "rescued"
        folder.mkdir(exist_ok=True, mode=0o700)
        os.chmod(folder, 0o700)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
        prefix = f"{stamp}-{why}-"
        dest = folder / (prefix + fit_name(name, NAME_MAX - len(prefix) - len(".part")))
        _write_private(dest, data)
        return dest

    def append(self, record: WriteRecord, state: str = "done") -> None:
        self._ensure()
        entry = {**record.to_json(), "state": state}
        entry.pop("complete")
        line = (json.dumps(entry, ensure_ascii=True) + "\n").encode("ascii")
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | portable.O_BINARY, 0o600)
        try:
            portable.fchmod(fd, 0o600)  # whatever made it before, the log holds private chats' names
            _write_all(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self) -> list[WriteRecord]:
        try:
            text = self.log_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        # Each write logs a "started" entry before touching any file and a "done" entry after;
        # a write with no "done" was interrupted (its files may be old or new, never torn).
        # A write that failed before changing any file is logged "aborted" and not listed.
        records: dict[str, WriteRecord] = {}
        aborted: set[str] = set()
        for line in text.splitlines():
            try:
                obj = json.loads(line)
                state = obj.get("state", "done")
                rec = WriteRecord(
                    obj["write_id"],
                    obj["time"],
                    obj["action"],
                    obj.get("session_id"),
                    obj["files"],
                    state == "done",
                )
                if not isinstance(rec.write_id, str):
                    continue
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a torn last line after a crash: skip it, never fail the history
            if state == "aborted":
                aborted.add(rec.write_id)
                records.pop(rec.write_id, None)
            elif rec.write_id not in aborted and (rec.complete or rec.write_id not in records):
                records[rec.write_id] = rec
        return list(records.values())

    def find(self, write_id: str) -> WriteRecord | None:
        for rec in self.records():
            if rec.write_id == write_id:
                return rec
        return None


# ---------------------------------------------------------------- one writer per home
#
# Two writers at once (the window and a command, or two commands) would each check the files
# and then write over each other. A write holds an exclusive flock(2) on every sessions folder
# it changes, from its first check to its last log line. The lock is on the folder itself:
# it creates no file (nothing inside the sessions folder, nothing for hermes to list or
# sweep), it is the same lock whatever path or symlink names the folder, and any user who can
# read the folder shares it (a command run as root and the window run as the user both see
# it, which a lock file in each user's own state folder would not). Where a filesystem cannot
# flock a folder (some network filesystems), a lock file in the state folder, named after the
# folder's real path, is used instead.

LOCK_WAIT = 5.0  # seconds a second writer waits before it refuses
_HELD = threading.local()


class WriteBusy(ApplyError):
    """Another writer holds the home: nothing was written."""


def _busy(folder: Path) -> WriteBusy:
    return WriteBusy(
        f"another hermes-inspector (the window or a command) is writing to {folder}; "
        "nothing was written. Try again when it has finished."
    )


def _flock(fd: int, deadline: float, folder: Path) -> None:
    """An exclusive lock on ``fd``: flock(2), or on Windows msvcrt's lock of its first byte
    (both released by the system when the descriptor is closed or the process dies)."""
    while True:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return
        except InterruptedError:
            continue
        except OSError as exc:
            # held by another: flock says EWOULDBLOCK, msvcrt EACCES (or EDEADLOCK after its retries)
            held_by_another = isinstance(exc, BlockingIOError) or (
                fcntl is None and exc.errno in (errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK))
            )
            if not held_by_another:
                raise
            if time.monotonic() >= deadline:
                raise _busy(folder) from None
            time.sleep(0.05)


def _lock_file(folder: Path, log: WriteLog) -> Path:
    """The lock file standing for ``folder`` in the state folder (named after its real path)."""
    log._ensure()
    locks = log.root / "locks"
    locks.mkdir(exist_ok=True, mode=0o700)
    key = hashlib.sha256(os.fsencode(os.path.realpath(folder))).hexdigest()[:32]
    return locks / f"{key}.lock"


def _shared_lock_file(folder: Path) -> Path:
    """The lock file of ``folder`` where there is no flock (Windows, forced portable): in one
    private folder for every hermes-inspector of this user, whatever state folder each one uses
    (the window and a command with another ``HERMES_INSPECTOR_STATE_DIR`` still exclude each
    other): ``<temp folder>/hermes-inspector-locks-<uid or user name>``, 0700 and the user's own."""
    import getpass
    import tempfile

    uid = portable.euid()
    if uid is None:
        try:
            who = re.sub(r"[^A-Za-z0-9_.-]", "_", getpass.getuser())
        except (KeyError, OSError):
            who = "user"
    else:
        who = str(uid)
    locks = Path(tempfile.gettempdir()) / f"hermes-inspector-locks-{who}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(locks, 0o700)
    st = os.lstat(locks)
    if not stat.S_ISDIR(st.st_mode) or (
        uid is not None and (st.st_uid != uid or stat.S_IMODE(st.st_mode) & 0o077)
    ):
        raise OSError(errno.EPERM, "the lock folder is not a private folder of yours", str(locks))
    key = hashlib.sha256(os.fsencode(os.path.realpath(folder))).hexdigest()[:32]
    return locks / f"{key}.lock"


def _flock_path(path: Path, flags: int, deadline: float, folder: Path):
    """Open ``path`` and lock the descriptor (:func:`_flock`); the function that releases it
    (closing the descriptor releases its lock). The descriptor is closed when locking fails."""
    fd = os.open(path, flags, 0o600)
    try:
        _flock(fd, deadline, folder)
    except BaseException:
        os.close(fd)
        raise
    return functools.partial(os.close, fd)


def _lock_one(folder: Path, log: WriteLog, deadline: float):
    """Lock ``folder``; the function that releases it."""
    if fcntl is None:
        lock = _shared_lock_file(folder)
        if msvcrt is None:
            return _exclusive_file_lock(lock, folder, deadline)
        return _flock_path(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOINHERIT", 0), deadline, folder)
    try:
        return _flock_path(
            folder,
            os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0),
            deadline,
            folder,
        )
    except OSError:
        pass  # WriteBusy is no OSError: a folder another writer holds is not taken by a lock file
    # the folder cannot be locked (missing, or a filesystem without flock on folders): a lock file
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    return _flock_path(_lock_file(folder, log), flags, deadline, folder)


def _holder(path: Path) -> tuple[int, float] | None:
    """(pid, start time) written in a held lock file, or None when it cannot be read whole."""
    try:
        pid, started = path.read_text(encoding="ascii").split()
        return int(pid), float(started)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _holder_gone(holder: tuple[int, float] | None) -> bool:
    """Whether the process that made a lock file has ended (its pid is gone or now names
    another process, started later)."""
    if holder is None:
        return False  # being written this instant, or not ours to judge: wait for it
    facts = portable.process_facts(holder[0])
    return facts is None or (facts.started_at is not None and abs(facts.started_at - holder[1]) > 1.0)


def _exclusive_file_lock(lock: Path, folder: Path, deadline: float):
    """A lock for systems with neither flock nor msvcrt (and the forced-portable mode): the file
    ``<lock>.held`` made with O_EXCL holds this process's pid and start time; it is removed on
    release. One left behind by a process that died is taken over: it is first renamed to a
    name of our own, so two waiters never both remove it."""
    held = lock.with_name(lock.name + ".held")
    me = portable.process_facts(os.getpid())
    stamp = f"{os.getpid()} {me.started_at if me and me.started_at is not None else 0.0!r}\n".encode("ascii")
    while True:
        try:
            fd = os.open(held, os.O_WRONLY | os.O_CREAT | os.O_EXCL | portable.O_BINARY, 0o600)
        except FileExistsError:
            holder = _holder(held)
            if _holder_gone(holder):
                aside = held.with_name(f"{held.name}.stale-{uuid.uuid4().hex}")
                with contextlib.suppress(FileNotFoundError):
                    os.rename(held, aside)
                    if _holder(aside) != holder:  # another waiter's fresh lock: put it back
                        with contextlib.suppress(OSError):
                            os.link(aside, held)
                    os.unlink(aside)
                continue
            if time.monotonic() >= deadline:
                raise _busy(folder) from None
            time.sleep(0.05)
            continue
        try:
            _write_all(fd, stamp)
        finally:
            os.close(fd)
        return functools.partial(_release_file_lock, held, stamp)


def _release_file_lock(held: Path, stamp: bytes) -> None:
    with contextlib.suppress(OSError):
        if held.read_bytes() == stamp:
            os.unlink(held)


@contextlib.contextmanager
def write_lock(folders, log: WriteLog, wait: float | None = None):
    """Hold the write lock of every folder in ``folders`` (re-entrant within a thread).

    Waits up to ``wait`` seconds (default :data:`LOCK_WAIT`) for another writer, then raises
    :class:`WriteBusy`. A lock that cannot be taken for another reason raises WriteFailed.
    """
    held: set[str] = getattr(_HELD, "keys", None) or set()
    _HELD.keys = held
    deadline = time.monotonic() + (LOCK_WAIT if wait is None else wait)
    taken: list[tuple[str, Callable[[], None]]] = []
    try:
        for folder in sorted(dict.fromkeys(os.path.realpath(f) for f in folders)):
            if folder in held:
                continue
            try:
                release = _lock_one(Path(folder), log, deadline)
            except ApplyError:
                raise
            except OSError as exc:
                raise WriteFailed(
                    f"could not lock {folder} for writing ({_reason(exc)}); nothing was written, "
                    "every file is as it was"
                ) from exc
            taken.append((folder, release))
            held.add(folder)
        yield
    finally:
        for folder, release in reversed(taken):
            held.discard(folder)
            with contextlib.suppress(OSError):
                release()


# ---------------------------------------------------------------- backups


def _write_private(dest: Path, data: bytes) -> None:
    """``data`` to ``dest`` (0600) through a fsynced ``.part`` file and a rename."""
    tmp = dest.with_name(dest.name + ".part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | portable.O_BINARY, 0o600)
    try:
        portable.fchmod(fd, 0o600)
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, dest)


def backup_name(index: int, name: str) -> str:
    """The backup file name of the ``index``-th file of a write: always fits, with its ``.part``."""
    prefix = f"{index:02d}-"
    return prefix + fit_name(name, NAME_MAX - len(prefix) - len(".part"))


def _save_backup(
    folder: Path, index: int, change: FileChange, early: EarlyStaging | None = None
) -> str | None:
    if change.before is None:
        return None
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    dest = folder / backup_name(index, change.path.name)
    if early is None or not early.take_backup(change, dest):
        _write_private(dest, change.before)
    return str(dest)


def _remove_backups(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for p in folder.iterdir():
            with contextlib.suppress(OSError):
                p.unlink()
        folder.rmdir()


def _file_entry(change: FileChange, backup: str | None) -> dict:
    mode = None
    xattrs: dict[str, bytes] = {}
    if change.before is not None:
        with contextlib.suppress(OSError):
            mode = stat.S_IMODE(os.lstat(change.path).st_mode)
        with contextlib.suppress(OSError):
            xattrs = read_xattrs(change.path)
    entry = {
        "path": str(change.path),
        "kind": change.kind,
        "sha256_before": change.sha256_before,
        "sha256_after": change.sha256_after,
        "backup": backup,
        "mode": mode,
    }
    if xattrs:  # undo re-creating a deleted file gives them back
        entry["xattrs"] = {k: base64.b64encode(v).decode("ascii") for k, v in sorted(xattrs.items())}
    return entry


def _refuse(problems: list[str], why: str) -> ApplyError:
    return ApplyError(f"{why}; nothing was written:\n  " + "\n  ".join(problems))


# ---------------------------------------------------------------- swapping files in, and back


class _Raced(Exception):
    """Someone else (hermes-webui) saved ``path`` during the write."""

    def __init__(self, path: Path):
        super().__init__(str(path))
        self.path = path


@dataclass
class _Slot:
    """One file of a write in progress."""

    change: FileChange
    tmp: Path | None  # the staged new version (None: a delete)
    ours: tuple[int, int] | None  # (st_dev, st_ino) of the staged file
    aside: Path | None = None  # where the version displaced from the target now is
    exchanged: bool = False  # swapped by an atomic exchange (aside is the staged file's name)
    placed: bool = False  # our version was linked in at the target (create, or the fallback)
    moved: bool = False  # the previous version was renamed off the target to ``aside``


_MAX_PUT_BACK = 100


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _read_held(path: Path) -> bytes | None:
    """The bytes of the regular file at ``path`` (never through a link, never blocking); None if not one."""
    try:
        return read_regular(path, None, follow_links=False)[0]
    except (FileNotFoundError, NotARegularFile):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
        raise


def _swap(slot: _Slot) -> None:
    """Put one staged change in place and check what it displaced; _Raced when that was not ``before``.

    A modified file is swapped in with an atomic exchange; the displaced file keeps its name
    beside the target until the whole write has succeeded. Without an exchange (or on a
    filesystem that refuses it) the previous file is renamed aside and the new one linked in
    (a link never replaces a file that appeared in between). A new file is linked in; a
    deleted one is renamed aside.
    """
    c = slot.change
    if c.before is None:
        try:
            os.link(slot.tmp, c.path)  # never clobbers a file that appeared
        except FileExistsError:
            raise _Raced(c.path) from None
        slot.placed = True
        return
    if c.after is not None and _EXCHANGE is not None:
        try:
            _exchange(slot.tmp, c.path)
        except FileNotFoundError:
            raise _Raced(c.path) from None  # the target was removed meanwhile
        except OSError as exc:
            if exc.errno not in _NO_EXCHANGE:
                raise
        else:
            slot.exchanged = slot.moved = slot.placed = True
            slot.aside = slot.tmp
            if not _displaced_before(slot.aside, c.before):
                raise _Raced(c.path)
            return
    aside = _aside_name(c.path)
    try:
        os.rename(c.path, aside)
    except FileNotFoundError:
        raise _Raced(c.path) from None
    slot.moved, slot.aside = True, aside
    if c.after is not None:
        try:
            os.link(slot.tmp, c.path)
        except FileExistsError:
            raise _Raced(c.path) from None  # a save landed in the gap: it stays
        slot.placed = True
    if not _displaced_before(aside, c.before):
        raise _Raced(c.path)


def _displaced_before(aside: Path, before: bytes) -> bool:
    """Whether the version a swap moved off its target to ``aside`` is ``before``, the one checked
    under the lock. One already gone from ``aside`` (a ``*.tmp.*`` name) was removed by hermes'
    sweep of such files older than an hour: every save hermes makes is a file written just then,
    never that old, so it was the version checked, which the write's backups hold. Compared as
    the check before the write compares (:func:`_holds_bytes`: no fresh copy of a 22 MB index)."""
    try:
        same = _holds_bytes(aside, before, memoryview(bytearray(min(_COMPARE_CHUNK, len(before) + 1))))
    except _NotRegular:  # a link or a special file there now: not the version checked
        return False
    return True if same is None else same


def _drop(holder: Path, ours: tuple[int, int] | None, log: WriteLog) -> None:
    """Remove a file moved off a target: ours goes; anyone else's is first kept in ``rescued/``."""
    if ours is None or _identity(holder) != ours:
        data = _read_held(holder)
        if data is not None:
            log.rescue(holder.name, data, "superseded")
    os.unlink(holder)


def _link_back(holder: Path, target: Path, log: WriteLog) -> None:
    """Put ``holder`` back at ``target``, unless a newer save is there (then keep ``holder`` aside)."""
    try:
        os.link(holder, target)
    except FileExistsError:
        _drop(holder, None, log)
        return
    os.unlink(holder)


def _remove_if_ours(target: Path, ours: tuple[int, int] | None, log: WriteLog) -> None:
    """Take our file off ``target``; a save that replaced it meanwhile stays where it is."""
    holder = _aside_name(target)
    try:
        os.rename(target, holder)
    except FileNotFoundError:
        return
    if _identity(holder) == ours:
        os.unlink(holder)
    else:
        _link_back(holder, target, log)


def _put_back(target: Path, holder: Path, wrong: tuple[int, int] | None, log: WriteLog) -> None:
    """Undo an exchange: ``holder`` goes back to ``target`` and what comes out must be ``wrong`` (ours).

    If what comes out is a save made after ours was put in place, it is newer than what went
    back: exchange again, so the newest save always ends at the target.
    """
    ours = wrong
    for _ in range(_MAX_PUT_BACK):
        going = _identity(holder)
        try:
            _exchange(holder, target)
        except FileNotFoundError:
            _link_back(holder, target, log)  # the target was removed meanwhile
            return
        if _identity(holder) == wrong:
            _drop(holder, ours, log)
            return
        wrong = going
    raise OSError(errno.EAGAIN, f"{target} kept changing while the write was put back")


def _rollback(slot: _Slot, log: WriteLog) -> None:
    c = slot.change
    if slot.exchanged:
        _put_back(c.path, slot.aside, slot.ours, log)
        slot.exchanged = slot.placed = slot.moved = False
        return
    if slot.placed:
        _remove_if_ours(c.path, slot.ours, log)
        slot.placed = False
    if slot.moved:
        _link_back(slot.aside, c.path, log)
        slot.moved = False


def _holds_new(change: FileChange) -> bool:
    try:
        now = _current_bytes(change.path)
    except OSError:
        return False
    return now is None if change.after is None else now is not None and now == change.after


def _written_list(paths: list[Path]) -> str:
    return ", ".join(map(str, paths))


# ---------------------------------------------------------------- apply and undo


def apply_plan(plan: Plan, log: WriteLog, *, clock_now: float | None = None) -> WriteRecord:
    """Write exactly the previewed bytes, or refuse and write nothing.

    The whole write holds the home's write lock (a second writer waits up to LOCK_WAIT
    seconds, then is refused). Order, so that a crash at any point leaves every target
    either old or new, and a save by hermes-webui at any moment is never lost:

    1. check every target (same bytes as the preview, a regular file, not a link);
    2. back up every previous version (0600, in the 0700 state folder, outside the home);
    3. stage every new version as a fsynced temp file beside its target (mode, owner,
       extended attributes and ACL entries of the file it replaces);
    4. log the write as "started", then check every target again;
    5. swap each file in atomically (renameat2 RENAME_EXCHANGE) and check that what it
       displaced is exactly the previewed "before" bytes. If it is not, hermes-webui saved
       meanwhile: its save is put back, every file already swapped is put back, and the
       write is refused with nothing changed;
    6. remove the displaced versions (they are in the backups), fsync the folders, log "done".

    ApplyError messages name the file and the reason and say what was written
    (``ApplyError.outcome``) and how to undo it.
    """
    if plan.refusal:
        raise ApplyError(f"refused: {plan.refusal}")
    if not plan.changes:
        raise ApplyError("nothing to write")
    not_plain = [p for c in plan.changes if (p := _plain_problem(c.path)) is not None]
    if not_plain:
        raise _refuse(not_plain, "the plan names paths the inspector never writes")
    # each folder once (a materialize's 1,041 new sidecars share one): both checks resolve it
    folders = list(dict.fromkeys(c.path.parent for c in plan.changes))
    log.check_outside(folders)
    with write_lock(folders, log):
        return _apply_locked(plan, log, clock_now)


def _apply_locked(plan: Plan, log: WriteLog, clock_now: float | None) -> WriteRecord:
    stale = check_fingerprints(plan)
    if stale:
        raise _refuse(stale, "the files changed since the preview (or cannot be written safely)")
    write_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
    folder = log.backup_dir(write_id)
    early = _EARLY.get()
    # Many files: their staging starts now, in threads, and the backups are written meanwhile (both
    # are done, every file fsynced, before the write is logged as started and anything is swapped).
    side = _SideBySide(plan.changes, early) if _staged_count(plan) >= PARALLEL_FSYNC_MIN else None
    try:
        log._ensure()
        backed_up = early if early is not None and early.backs_up_to(log) else None
        files = [
            _file_entry(change, _save_backup(folder, i, change, backed_up))
            for i, change in enumerate(plan.changes)
        ]
    except BaseException as exc:
        if side is not None:
            side.finish_and_discard()
        _remove_backups(folder)
        if not isinstance(exc, OSError):
            raise
        raise WriteFailed(
            f"could not keep a backup in {folder} ({_reason(exc)}); nothing was written, "
            "every file is as it was"
        ) from exc
    slots: list[_Slot] = []
    record = WriteRecord(
        write_id,
        time.time() if clock_now is None else clock_now,
        plan.action,
        plan.session_id,
        files,
        complete=False,
    )
    current = plan.changes[0].path
    logged = False
    try:
        sweep_stale_temps(
            [c.path for c in plan.changes],
            log,
            known={
                str(c.path): {x for x in (c.sha256_before, c.sha256_after) if x is not None}
                for c in plan.changes
            },
            whole_folders=True,
        )
        if side is None:
            for change in plan.changes:
                current = change.path
                tmp = None
                if change.after is not None:
                    tmp = (early.take(change) if early is not None else None) or _stage_change(change)
                slots.append(_Slot(change, tmp, _identity(tmp) if tmp is not None else None))
        else:
            staged, failed = side.finish()
            side = None
            slots.extend(_Slot(c, tmp, _identity(tmp) if tmp is not None else None) for c, tmp in staged)
            if failed is not None:
                current = failed[0]
                raise failed[1]
        current = log.log_path
        logged = True
        log.append(record, state="started")
        stale = check_fingerprints(plan)
        if stale:
            raise _refuse(stale, "the files changed while the write was being prepared")
    except (OSError, ApplyError) as exc:
        if side is not None:  # the sweep failed while the pool was staging
            side.finish_and_discard()
        _discard(slots)
        _remove_backups(folder)
        if logged:  # the "started" line may be on disk even though appending it failed
            with contextlib.suppress(OSError):
                log.append(record, state="aborted")
        if isinstance(exc, ApplyError):
            raise
        raise WriteFailed(
            f"could not write {current} ({_reason(exc)}); nothing was written, every file is as it was"
        ) from exc
    except BaseException:
        if side is not None:  # interrupted while the pool was staging: its files go, as the pool ends
            side.finish_and_discard()
        raise
    _swap_all(plan, slots, log, record, folder)
    for slot in slots:
        for leftover in (slot.aside, slot.tmp):
            if leftover is not None:
                with contextlib.suppress(FileNotFoundError, OSError):
                    os.unlink(
                        leftover
                    )  # the displaced version is in the backups; the staged one is linked in
    for parent in dict.fromkeys(c.path.parent for c in plan.changes):
        _fsync_dir(parent)
    record = WriteRecord(record.write_id, record.time, record.action, record.session_id, files, complete=True)
    try:
        log.append(record, state="done")
    except OSError as exc:
        paths = [c.path for c in plan.changes]
        raise WriteFailed(
            f"every file was written, but the write log could not be marked complete "
            f"({_reason(exc)}); `hermes-inspector undo {write_id}` puts the previous versions back "
            f"(the write is listed as interrupted). Written: {_written_list(paths)}; previous "
            f"versions kept in {folder}; log {log.log_path}",
            outcome="all",
            written=tuple(paths),
            write_id=write_id,
        ) from exc
    return record


def _swap_all(plan: Plan, slots: list[_Slot], log: WriteLog, record: WriteRecord, folder: Path) -> None:
    """Swap every staged file in; on a save by hermes or a failure, put every file back as it was."""
    started: list[_Slot] = []
    try:
        for slot in slots:
            started.append(slot)
            _swap(slot)
        return
    except (_Raced, OSError) as exc:
        failure: BaseException = exc
        where = started[-1].change.path
    try:
        for slot in reversed(started):
            _rollback(slot, log)
    except (OSError, ApplyError) as exc:
        written = [c.path for c in plan.changes if _holds_new(c)]
        _tidy_leftovers(slots, log)
        why = _reason(failure) if isinstance(failure, OSError) else "hermes-webui saved it meanwhile"
        raise WriteFailed(
            f"{len(written)} of {len(plan.changes)} files hold their new bytes; undo them with "
            f"`hermes-inspector undo {record.write_id}`. Could not write {where} ({why}) nor put back the files "
            f"already written ({_reason(exc)}). Written: {_written_list(written) or 'none'}; every previous "
            f"version is kept in {folder}",
            outcome="partial" if written else "nothing",
            written=tuple(written),
            write_id=record.write_id,
        ) from exc
    _discard(slots)
    _remove_backups(folder)
    with contextlib.suppress(OSError):
        log.append(record, state="aborted")
    if isinstance(failure, _Raced):
        if os.path.lexists(failure.path):
            raise ApplyError(
                f"hermes-webui saved this session during the write ({failure.path} holds its newer "
                "save, which is kept); nothing was changed. Preview the repair again."
            ) from None
        raise ApplyError(
            f"hermes-webui saved this session during the write ({failure.path} was removed "
            "meanwhile, and stays removed); nothing was changed. Preview the repair again."
        ) from None
    raise WriteFailed(
        f"could not write {where} ({_reason(failure)}); no file was changed, nothing was written"
    ) from failure


def _tidy_leftovers(slots: list[_Slot], log: WriteLog) -> None:
    """After a write that could not be put back: remove its temp files, keeping anyone else's bytes."""
    for slot in slots:
        for leftover in dict.fromkeys(p for p in (slot.aside, slot.tmp) if p is not None):
            with contextlib.suppress(OSError, ApplyError):
                data = _read_held(leftover)
                if data is None:
                    continue
                if data not in (slot.change.before, slot.change.after):  # the backups hold `before`
                    log.rescue(leftover.name, data, "displaced")
                os.unlink(leftover)


PARALLEL_FSYNC_MIN = 32  # staged files from which they are written and fsynced side by side (a materialize)
_FSYNC_THREADS = 8


def _staged_count(plan: Plan) -> int:
    return sum(1 for c in plan.changes if c.after is not None)


def _stage_change(change: FileChange, umask: int | None = None) -> Path:
    """:func:`_stage` of ``change``'s new bytes with the attributes and xattrs it is to have."""
    xattrs = _xattrs_for(change)
    return _stage(change.path, change.after, _attributes(change, umask), xattrs)


def _xattrs_for(change: FileChange) -> dict[str, bytes] | None:
    """The extended attributes ``change``'s staged file gets: the replaced file's, or ``new_xattrs``."""
    return read_xattrs(change.path) if change.before is not None else change.new_xattrs


class _SideBySide:
    """Every change with new bytes staged (written and fsynced) by a pool of threads, several at a
    time: one after the other, a thousand new sidecars cost a thousand waits on the disk (creating,
    writing, then a journal commit each), while concurrent ones overlap and share commits.
    :meth:`finish` waits for all of them, so every staged file is on disk before any is swapped in,
    as with one staged file at a time. ``early``: versions staged while the plan was made, taken
    instead of staging them again where they still fit."""

    def __init__(self, changes: list[FileChange], early: EarlyStaging | None = None) -> None:
        from concurrent.futures import Future, ThreadPoolExecutor

        self.changes = changes
        umask = current_umask()  # read once (Linux: from /proc), not once per new file
        self._pool = ThreadPoolExecutor(max_workers=_FSYNC_THREADS, thread_name_prefix="inspector-stage")
        self.futures: list = []
        for c in changes:
            tmp = early.take(c, umask) if early is not None and c.after is not None else None
            if tmp is not None:
                done: Future = Future()
                done.set_result(tmp)
                self.futures.append(done)
            else:
                self.futures.append(
                    self._pool.submit(_stage_change, c, umask) if c.after is not None else None
                )

    def finish(self) -> tuple[list[tuple[FileChange, Path | None]], tuple[Path, BaseException] | None]:
        """Each change with its temp file (None: no new bytes, or its staging failed and left
        nothing) and the first failure in plan order with its error."""
        self._pool.shutdown(wait=True)  # every staged file is on disk (fsynced) once this returns
        staged: list[tuple[FileChange, Path | None]] = []
        failed: tuple[Path, BaseException] | None = None
        for change, future in zip(self.changes, self.futures, strict=True):
            error = future.exception() if future is not None else None
            if error is not None and failed is None:
                failed = (change.path, error)
            staged.append((change, future.result() if future is not None and error is None else None))
        return staged, failed

    def finish_and_discard(self) -> None:
        """Wait for the pool and remove every file it staged (the write stops before any swap)."""
        staged, _failed = self.finish()
        for _change, tmp in staged:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


# ---------------------------------------------------------------- staging while the plan is made


class EarlyStaging:
    """New versions staged (written and fsynced under their temp names, exactly as :func:`apply_plan`
    stages them) while a plan that is written as soon as it is made is still being made: ``repair
    --write`` of a materialize stages its thousand new sidecars while the index is rebuilt, not
    after. Only inside :func:`early_staging` (the command that plans and then writes at once); a
    plan that is only previewed never stages anything.

    Nothing is swapped in here: :func:`apply_plan` takes a staged file for its change only after its
    own checks (under the write lock, fingerprints checked), and only when the change is the very
    object that was staged, the temp file is still the inode that was written (same number, size,
    times and mode), and the attributes
    (mode, owner, extended attributes) the file would be staged with now are those it was staged
    with; anything else is staged again there. Folders reached through a symbolic link, and paths
    the write path refuses, are never staged early (the plan's link guard has not judged them yet).
    Whatever was staged and not taken is removed when :func:`early_staging` ends.

    Where :func:`inspector.fs_flush.open_flusher` allows it (Linux 5.8+, a local file system, little
    unwritten data on the machine), the small files of a folder, once :meth:`stage` is handed many
    at once (a materialize's batches), are written without a ``fsync`` each, one after the other by
    one thread, and made durable together by one ``syncfs`` of their file system
    (:meth:`flush_soon`, which runs after every write queued before it): :meth:`take` gives such a
    file only once a flush that began after it was written has succeeded (it asks for one itself if
    none was), and none when that flush failed (the copy is removed; the caller stages it again and
    fsyncs it). Elsewhere each file is fsynced by the pool of threads, as before."""

    def __init__(self, log: WriteLog | None = None) -> None:
        self._pool: Any = None  # a ThreadPoolExecutor once something is staged
        self._big: Any = None  # the one for files of EARLY_BIG_BYTES or more, once there is one
        self._serial: Any = None  # the one thread writing the files flushed together, once there is one
        self._flushers: dict[Path, int | None] = {}  # folder -> its descriptor for syncfs (None: fsync each)
        self._unsynced = 0  # files queued on the serial thread so far, without their own fsync
        self._flushes: list[tuple[int, Any]] = []  # (files queued before it, its future), in order
        self._umask: int | None = None
        self._staged: dict[int, tuple[FileChange, Any, int | None]] = {}
        self._plain_folders: dict[Path, bool] = {}
        self._log = log  # where the write's backups go: the previous versions are copied there early too
        self._backups: dict[Path, tuple[bytes, Any]] = {}  # path -> (the bytes copied, their copy)
        self._backup_folder: Path | None = None
        self._lock = threading.Lock()
        self._switch: float | None = None  # the interpreter's switch interval before staging began

    def _folder_is_plain(self, folder: Path) -> bool:
        """``folder`` exists and no link is on its path (realpath changes nothing)."""
        known = self._plain_folders.get(folder)
        if known is None:
            known = os.path.isdir(folder) and os.path.realpath(folder) == str(folder)
            self._plain_folders[folder] = known
        return known

    def _start(self) -> Any:
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            # The staging threads take the GIL back after each of their ~9 system calls per file,
            # while this thread goes on with Python work (the plan's previews, the index rows):
            # at the default 5 ms hand-over they would mostly wait for it, a thousand files for
            # seconds. Handed over every 0.5 ms until the staging ends (see close()).
            self._switch = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch, EARLY_SWITCH_INTERVAL))
            self._umask = current_umask()
            self._pool = ThreadPoolExecutor(max_workers=_FSYNC_THREADS, thread_name_prefix="inspector-early")
        return self._pool

    def _pool_for(self, size: int) -> Any:
        """The threads for a file of ``size`` bytes: the shared pool, or for a big one (a home-wide
        write's 22 MB index and its backup) threads of their own, so that it is not queued behind a
        thousand small files still being staged (a materialize submits the index ~0.5-2.5 s after
        its sidecars at load 12; the index then started only once they were all done, and the write
        waited 0-440 ms more for its 22 MB and fsync)."""
        pool = self._start()
        if size < EARLY_BIG_BYTES:
            return pool
        if self._big is None:
            from concurrent.futures import ThreadPoolExecutor

            self._big = ThreadPoolExecutor(
                max_workers=EARLY_BIG_THREADS, thread_name_prefix="inspector-early-big"
            )
        return self._big

    def _flusher(self, folder: Path) -> int | None:
        """``folder``'s descriptor for one ``syncfs`` of its files (opened before the first of them
        is written), or None: each of its files is fsynced."""
        if folder not in self._flushers:
            self._flushers[folder] = fs_flush.open_flusher(folder)
        return self._flushers[folder]

    def _serial_thread(self) -> Any:
        if self._serial is None:
            from concurrent.futures import ThreadPoolExecutor

            self._start()  # the umask and the switch interval
            self._serial = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inspector-early")
        return self._serial

    def stage(self, changes: list[FileChange]) -> None:
        """Start staging each of ``changes`` with new bytes, and copying the previous bytes of each
        it replaces to the write log's folder (in threads; this returns at once).

        The small files are left to one flush (see the class) once a call hands over
        :data:`PARALLEL_FSYNC_MIN` or more of them, and from then on: a write of a few files fsyncs
        each, as before (a ``syncfs`` also waits for other programs' unwritten data, which only
        pays for itself over many files)."""
        todo = [c for c in changes if c.after is not None and id(c) not in self._staged]
        many = (
            self._unsynced > 0 or sum(1 for c in todo if len(c.after) < EARLY_BIG_BYTES) >= PARALLEL_FSYNC_MIN
        )
        for c in todo:
            if _plain_problem(c.path) is not None or not self._folder_is_plain(c.path.parent):
                continue
            if c.before is not None:
                self.back_up(c.path, c.before)
            if many and len(c.after) < EARLY_BIG_BYTES and self._flusher(c.path.parent) is not None:
                serial = self._serial_thread()
                self._unsynced += 1
                future = serial.submit(self._stage_one, c, self._umask, False)
                self._staged[id(c)] = (c, future, self._unsynced)
                continue
            pool = self._pool_for(len(c.after))
            self._staged[id(c)] = (c, pool.submit(self._stage_one, c, self._umask), None)

    def flush_soon(self) -> None:
        """Queue one ``syncfs`` of each folder's file system after the files queued so far without
        their own fsync (the plan has staged its new files: they are made durable while it goes on)."""
        if self._serial is None or (self._flushes and self._flushes[-1][0] == self._unsynced):
            return
        fds = [fd for fd in self._flushers.values() if fd is not None]
        try:
            future = self._serial.submit(_flush_all, fds)
        except RuntimeError:  # its thread was ended (every write it had is done): flushed here
            from concurrent.futures import Future

            future = Future()
            try:
                _flush_all(fds)
            except OSError as exc:
                future.set_exception(exc)
            else:
                future.set_result(None)
        self._flushes.append((self._unsynced, future))

    def _flushed(self, seq: int) -> bool:
        """Whether a flush queued after the ``seq``-th unsynced file succeeded (one is queued now if none was)."""
        if not self._flushes or self._flushes[-1][0] < seq:
            self.flush_soon()
        for covered, future in self._flushes:
            if covered >= seq:
                return future.exception() is None
        return False  # pragma: no cover - flush_soon queued one covering every file

    def back_up(self, path: Path, before: bytes) -> None:
        """Start copying ``before``, the bytes of ``path`` a write will replace, to the write log's
        folder (a plan may ask as soon as it has read them, before it knows the new ones). A write
        takes the copy only for a change of ``path`` whose previous bytes are this very object."""
        if self._log is None or path in self._backups:
            return
        if _plain_problem(path) is not None or not self._folder_is_plain(path.parent):
            return
        self._backups[path] = (before, self._pool_for(len(before)).submit(self._back_up, before))

    def _back_up(self, before: bytes) -> tuple[Path, tuple[int, ...] | None]:
        """``before`` as a private file (0600, fsynced, as ``_write_private`` writes every backup)
        in a private folder of this process in the write log's ``backups/``."""
        assert self._log is not None
        with self._lock:
            if self._backup_folder is None:
                self._log._ensure()  # the checks and modes of the folders a write's backups go in
                _sweep_early_folders(self._log.root / "backups")
                folder = self._log.root / "backups" / f"{_EARLY_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"
                folder.mkdir(mode=0o700)
                os.chmod(folder, 0o700)
                self._backup_folder = folder
            folder = self._backup_folder
        dest = folder / uuid.uuid4().hex
        _write_private(dest, before)
        return dest, _stamp(dest)

    def backs_up_to(self, log: WriteLog) -> bool:
        """Whether the previous versions are copied early to ``log``'s folder (the write's own)."""
        return self._log is log

    def take_backup(self, change: FileChange, dest: Path) -> bool:
        """Move the copy of ``change.before`` made early to ``dest`` (the write's backup); False when
        there is none, or it is no longer the file written (the caller then writes the backup)."""
        entry = self._backups.get(change.path)
        if entry is None or entry[0] is not change.before:
            return False
        del self._backups[change.path]
        try:
            made, stamp = entry[1].result()
        except BaseException:  # noqa: BLE001 - written by the caller, which meets the error itself
            return False
        try:
            if stamp is None or _stamp(made) != stamp:  # changed (or gone) since: not a backup
                os.unlink(made)
                return False
            os.replace(made, dest)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(made)
            return False
        return True

    @staticmethod
    def _stage_one(change: FileChange, umask: int | None, sync: bool = True):
        xattrs = _xattrs_for(change)
        attributes = _attributes(change, umask)
        tmp = _stage(change.path, change.after, attributes, xattrs, sync=sync)
        return tmp, _stamp(tmp), attributes, xattrs

    def take(self, change: FileChange, umask: int | None = None) -> Path | None:
        """The temp file staged for ``change`` if it still fits (see the class), else None (and the
        file is removed): the caller stages ``change`` itself."""
        entry = self._staged.pop(id(change), None)
        if entry is None or entry[0] is not change:
            return None
        try:
            tmp, identity, attributes, xattrs = entry[1].result()
        except BaseException:  # noqa: BLE001 - staged again by the caller, which meets the error itself
            return None
        if identity is None or _stamp(tmp) != identity:
            # not the file staged here any more (or gone before it could be looked at: hermes'
            # sweep of `*.tmp.*`): staged again by the caller; what is there is not ours to remove
            return None
        try:
            fits = _attributes(change, umask) == attributes and _xattrs_for(change) == xattrs
        except OSError:
            fits = False
        if fits and entry[2] is not None:  # not fsynced itself: on disk once a later flush succeeded
            fits = self._flushed(entry[2])
        if not fits:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return None
        return tmp

    def close(self) -> None:
        """Wait for the threads; remove every staged file and early backup no write took."""
        for pool in (self._serial, self._pool, self._big):
            if pool is not None:
                pool.shutdown(wait=True)
        for fd in self._flushers.values():
            fs_flush.close(fd)
        self._flushers.clear()
        if self._switch is not None:
            sys.setswitchinterval(self._switch)
            self._switch = None
        futures = [entry[1] for entry in self._staged.values()] + [
            entry[1] for entry in self._backups.values()
        ]
        for future in futures:
            if future.exception() is None:
                with contextlib.suppress(OSError):
                    os.unlink(future.result()[0])
        self._staged.clear()
        self._backups.clear()
        if self._backup_folder is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self._backup_folder)


_EARLY_MARK = ".early-"  # backups/.early-<pid>-<random>/: copies made before a write took them


def _sweep_early_folders(backups: Path) -> None:
    """Remove the ``.early-<pid>-*`` folders of processes that ended without their write (killed
    between planning and writing): a copy there was never moved to a write's backup, so no write
    replaced the version it holds, which is still where it was. A living process's are left alone."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(backups):
            if not entry.name.startswith(_EARLY_MARK) or not entry.is_dir(follow_symlinks=False):
                continue
            pid = entry.name[len(_EARLY_MARK) :].split("-", 1)[0]
            if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                for leftover in os.scandir(entry.path):
                    if leftover.is_file(follow_symlinks=False):
                        os.unlink(leftover.path)
                os.rmdir(entry.path)


def _stamp(path: Path) -> tuple[int, ...] | None:
    """The inode at ``path`` with its size and times: a file staged early is still ours when this
    has not changed (an inode number alone may be given to a new file once ours is removed)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode


EARLY_SWITCH_INTERVAL = 0.0005  # seconds: the GIL hand-over while files are staged early
EARLY_BIG_BYTES = 1 << 20  # a file this big is staged (or backed up) early by threads of its own
EARLY_BIG_THREADS = 2

_EARLY: contextvars.ContextVar[EarlyStaging | None] = contextvars.ContextVar(
    "inspector_early_staging", default=None
)


@contextlib.contextmanager
def early_staging(log: WriteLog | None = None) -> Iterator[EarlyStaging]:
    """Within this, :func:`stage_early` stages (see :class:`EarlyStaging`; with ``log``, the write
    log the plan will be written with, the previous versions are copied to its backups folder too)
    and :func:`apply_plan` takes what was staged; at its end whatever was not taken is removed."""
    early = EarlyStaging(log)
    token = _EARLY.set(early)
    try:
        yield early
    finally:
        _EARLY.reset(token)
        early.close()


def back_up_early(path: Path, before: bytes) -> None:
    """Copy ``before`` (``path``'s bytes as a plan read them) to the write log's folder now, when
    the plan is to be written as soon as it is made (see :meth:`EarlyStaging.back_up`); else nothing."""
    early = _EARLY.get()
    if early is not None:
        early.back_up(path, before)


def _flush_all(fds: list[int]) -> None:
    """:func:`inspector.fs_flush.flush` of each descriptor (the first failure raised)."""
    for fd in fds:
        fs_flush.flush(fd)


def flush_early() -> None:
    """Within :func:`early_staging`, start making the files staged so far durable together
    (:meth:`EarlyStaging.flush_soon`); elsewhere nothing."""
    early = _EARLY.get()
    if early is not None:
        early.flush_soon()


def stage_early(changes: list[FileChange]) -> None:
    """Stage ``changes`` now when the plan they belong to is to be written as soon as it is made
    (inside :func:`early_staging`); elsewhere (a preview) nothing."""
    early = _EARLY.get()
    if early is not None:
        early.stage(changes)


def _discard(slots: list[_Slot]) -> None:
    for slot in slots:
        if slot.tmp is not None and not slot.exchanged:
            with contextlib.suppress(OSError):
                os.unlink(slot.tmp)


def undo_write(write_id: str, log: WriteLog) -> WriteRecord:
    """Restore every file of a logged write, if each still holds what was written.

    A file that already holds its previous bytes (an interrupted write never reached it, or
    an interrupted undo already put it back) is left alone, so undo can always be re-run.
    Undo is itself a write: it holds the write lock from its first check, and a save by
    hermes-webui during it is never lost (the undo is refused with nothing changed).
    """
    rec = log.find(write_id)
    if rec is None:
        raise ApplyError(f"no write with id {write_id} in {log.log_path}")
    folders = [Path(str(f.get("path"))).parent for f in rec.files]
    log.check_outside(folders)
    with write_lock(folders, log):
        undo_plan = _undo_plan(rec)
        return apply_plan(undo_plan, log)


def _undo_plan(rec: WriteRecord) -> Plan:
    write_id = rec.write_id
    problems = []
    to_restore = []
    for f in rec.files:
        path = Path(f["path"])
        problem = _target_problem(path)
        if problem is not None:
            problems.append(problem)
            continue
        try:
            now = _current_bytes(path)
        except OSError as exc:
            problems.append(f"{path} cannot be read ({_reason(exc)})")
            continue
        now_sha = sha256_hex(now) if now is not None else None
        if now_sha == f["sha256_before"]:
            continue  # already holds its previous bytes
        if now_sha != f["sha256_after"]:
            problems.append(f"{path} changed after the write; undo would lose that change")
        elif f["backup"] is not None and not Path(f["backup"]).is_file():
            problems.append(f"backup {f['backup']} is missing")
        else:
            to_restore.append((f, now))
    if problems:
        raise ApplyError("nothing was written:\n  " + "\n  ".join(problems))
    if not to_restore:
        raise ApplyError(f"nothing to undo: the files of {write_id} already hold their previous bytes")
    changes = []
    for f, current in to_restore:
        try:
            previous = Path(f["backup"]).read_bytes() if f["backup"] else None
        except OSError as exc:
            raise ApplyError(
                f"backup {f['backup']} cannot be read ({_reason(exc)}); nothing was written"
            ) from exc
        if previous is not None and sha256_hex(previous) != f["sha256_before"]:
            raise ApplyError(
                f"backup {f['backup']} does not hold the previous bytes of {f['path']}; nothing was written"
            )
        fp = Fingerprint.of_bytes(current) if current is not None else None
        mode = f.get("mode") if isinstance(f.get("mode"), int) else None
        changes.append(
            FileChange(
                path=Path(f["path"]),
                before=current,
                after=previous,
                fingerprint=fp,
                new_mode=mode,
                new_xattrs=_logged_xattrs(f),
            )
        )
    return Plan(action=f"undo:{rec.action}", session_id=rec.session_id, changes=changes)


def _logged_xattrs(entry: dict) -> dict[str, bytes] | None:
    raw = entry.get("xattrs")
    if not isinstance(raw, dict):
        return None
    out = {}
    for name, value in raw.items():
        with contextlib.suppress(ValueError, TypeError):
            if isinstance(name, str) and isinstance(value, str):
                out[name] = base64.b64decode(value, validate=True)
    return out or None
