"""hermes-webui's JSON byte formats, in one place.

hermes writes sidecars, `.bak` files, `_index.json` and tombstones with
``json.dumps(obj, ensure_ascii=False, indent=2)`` encoded as UTF-8, without a trailing
newline, and run-journal lines compactly. Python's own ``json`` module *is* that
serializer, so using it with the same arguments is what makes the bytes identical
(float repr, key order, raw non-ASCII, ``NaN``).

Only the byte format lives here (parsing, the writers); reading files, their size bounds and
fingerprints are :mod:`inspector.store.files`'.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from itertools import accumulate, compress
from operator import itemgetter
from typing import Any


def dumps_pretty(obj: Any) -> bytes:
    """Serialize exactly as ``Session.save`` / index / tombstone writers do."""
    return json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8")


def loads_bytes(data: bytes) -> Any:
    """Parse UTF-8 JSON as hermes does (``read_text(encoding='utf-8')`` + ``json.loads``).

    A BOM is not stripped: hermes fails on it, and so do we (the caller turns the
    error into a finding).
    """
    return json.loads(data.decode("utf-8"))


try:  # orjson only speeds up parsing; nothing is ever serialized with it
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None

try:  # msgspec only checks JSON and counts (skipping what it is not asked for); see objects_per_line
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - msgspec is a declared dependency
    _msgspec = None


# Every digit becomes "9", everything else a space: a run of 19 digits is then a plain substring
# search, which runs at memory speed (a regex over the same bytes is ten times slower).
_DIGIT_MAP = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"9" * 19


def has_long_digit_run(data: bytes) -> bool:
    """True when ``data`` holds 19+ consecutive ASCII digits (a number orjson might not keep exact)."""
    return _LONG_RUN in data.translate(_DIGIT_MAP)


def orjson_safe(data: bytes) -> bool:
    """Whether orjson parses ``data`` to exactly what the stdlib would (when it parses at all)."""
    return _orjson is not None and not has_long_digit_run(data)


def fast_loads(data: bytes | str, *, checked: bool = False) -> Any:
    """Parse UTF-8 JSON quickly, with exactly the stdlib's verdict and values.

    orjson is stricter than Python's json (NaN, 1e400, lone surrogates): anything it
    rejects is re-parsed by the stdlib. It also turns integers beyond 64 bits into floats,
    so text holding a run of 19+ digits goes to the stdlib directly. The result never
    depends on which parser ran. ``checked=True`` says the caller already established
    :func:`orjson_safe` for the bytes this text came from. A document nested deeper than
    :data:`PARSE_DEPTH_LIMIT` goes to the stdlib too (:func:`orjson_loads_shallow`): orjson
    reads 1,024 levels, the stdlib fewer (hermes' RecursionError).
    """
    if checked:
        use_orjson = _orjson is not None
    else:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        use_orjson = orjson_safe(raw)
    if use_orjson:
        obj = orjson_loads_shallow(data)
        if obj is not _NOT_PARSED:
            return obj
    return json.loads(data) if isinstance(data, str) else loads_bytes(data)


def loads_or_none(data: bytes | None) -> Any:
    """The parsed value, or None for a missing or unparseable file (callers check the type)."""
    if data is None:
        return None
    try:
        return fast_loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


# ---------------------------------------------------------------- fast exact indent=2 writer
#
# ``json.dumps(obj, ensure_ascii=False, indent=2)`` runs the stdlib's pure-Python encoder up to
# CPython 3.13: its C encoder refused ``indent`` (``JSONEncoder.iterencode`` took the C path only
# ``if ... and self.indent is None``; checked in 3.10.13, 3.11.7, 3.12.1 and 3.13.0). CPython 3.14
# gave the C encoder the indent path (gh-95382, PRs #118105 and #118636, merged during 3.14's
# development, after 3.13 branched). Measured on 3.11.7, a 4.7 MB sidecar of 5,000 messages:
# ``json.dumps(indent=2)`` 79 ms, :func:`dumps_pretty_fast` 16 ms, the same bytes
# (``bench/json_writer.py``; the C encoder writes the same value compactly in 42 ms).
#
# So :func:`dumps_pretty_fast` is :func:`dumps_pretty` itself from 3.14 on
# (:data:`STDLIB_INDENT_IN_C`); below it, orjson (``OPT_INDENT_2``) writes every subtree it
# provably writes like the stdlib (see the comment above :func:`_orjson_escapes_like_stdlib`), a
# subtree below the top shifted right line by line: in this layout a value at indent level ``L``
# is its own ``json.dumps(value, indent=2)`` with every line after the first indented by
# ``L - 1`` more levels, whatever its neighbours (``tests/store/test_jsonfmt_fast.py``); the
# containers around those subtrees are assembled here from the stdlib's own scalar encoders.
# Anything outside plain JSON data - another type or subclass, a non-``str`` key, nesting deeper
# than :data:`FAST_DUMP_MAX_DEPTH` (hence also a reference cycle) - and any error falls back to
# ``json.dumps`` itself, so exceptions (``UnicodeEncodeError`` on the final UTF-8 encoding
# included: it is raised on the same complete text) are the stdlib's own.
#
# DELETE this writer (everything down to :func:`dumps_pretty_fast`, whose callers then call
# :func:`dumps_pretty`) when ``requires-python`` reaches ``>=3.14``.

STDLIB_INDENT_IN_C = sys.version_info >= (3, 14)
FAST_DUMP_MAX_DEPTH = 100

try:
    from json.encoder import c_encode_basestring as _c_encode_str
except ImportError:  # pragma: no cover - CPython always has the accelerator
    _c_encode_str = None


class _NotFast(Exception):
    """The value needs the stdlib's own encoder (see the comment above)."""


def _float_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


# orjson writes a value exactly as the stdlib does when: every string (its escaping agrees with
# ``c_encode_basestring`` code point by code point; checked once per process on all of Unicode,
# see :func:`_orjson_escapes_like_stdlib`, and it refuses lone surrogates), every ``int`` (plain
# digits; it refuses those beyond 64 bits), ``true``/``false``/``null``, and its ``OPT_INDENT_2``
# layout (two spaces per level, ``": "``, ``"{}"``/``"[]"`` for empty containers, no trailing
# newline). Floats differ (``1e-05`` vs ``1e-5``, ``NaN`` vs ``null``), so every float is checked
# one by one; and anything but plain JSON data is left to the stdlib.
_ORJSON_ESCAPES_OK: bool | None = None
_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})


def _plane_text(plane: int) -> str:
    """Every Unicode scalar value of one plane (65,536 code points) once, in order; the surrogates
    of plane 0 left out."""
    n = 65536  # its UTF-32-LE bytes, built a byte column at a time
    buf = bytearray(4 * n)
    buf[0::4] = bytes(range(256)) * (n // 256)
    buf[1::4] = b"".join(bytes([i]) * 256 for i in range(256))
    buf[2::4] = bytes([plane]) * n
    return bytes(buf).decode("utf-32-le", "ignore")  # "ignore" drops exactly the surrogates


def _every_code_point() -> str:
    """Every Unicode scalar value once, in order (U+0000..U+10FFFF without the surrogates)."""
    return "".join(map(_plane_text, range(17)))


def _check_orjson_escapes() -> bool:
    """The check itself: orjson escapes every code point as ``c_encode_basestring`` and lays out a
    sample of every kind of plain value as ``json.dumps(indent=2)``. The code points are compared
    a plane at a time (the same verdict: a string's escapes are made code point by code point):
    7 ms and 600 page faults, against 30 ms and 6,000-10,000 faults for all 1.1 million at once."""
    if _orjson is None or _c_encode_str is None:
        return False
    try:
        for plane in range(17):
            text = _plane_text(plane)
            if _orjson.dumps(text) != _c_encode_str(text).encode("utf-8"):
                return False
        sample = {'k\n"': ["\u2028\x7f\x00é", {}, [], {"a": [1, -2, 18446744073709551615, True, None, {}]}]}
        return _orjson.dumps(sample, option=_orjson.OPT_INDENT_2) == json.dumps(
            sample, ensure_ascii=False, indent=2
        ).encode("utf-8")
    except Exception:  # noqa: BLE001 - any surprise: never use orjson to write
        return False


def _orjson_escapes_like_stdlib() -> bool:
    """:func:`_check_orjson_escapes`, once per process, its verdict kept per orjson build in the
    inspector's cache folder (:mod:`inspector.store.orjson_verdict`): 30-40 ms of every writing
    command's start otherwise."""
    global _ORJSON_ESCAPES_OK
    if _ORJSON_ESCAPES_OK is None:
        if _orjson is None or _c_encode_str is None:
            _ORJSON_ESCAPES_OK = False
        else:
            from inspector.store import orjson_verdict

            _ORJSON_ESCAPES_OK = orjson_verdict.verdict(_check_orjson_escapes, _plane_text)
    return _ORJSON_ESCAPES_OK


def _orjson_writes_like_stdlib(obj: Any, limit: int) -> bool:
    """Whether ``obj`` (a dict or list) holds only values orjson writes exactly as the stdlib.

    Each float is compared on its own (a float's text does not depend on where it stands).
    """
    dumps, float_repr, scalars = _orjson.dumps, float.__repr__, _PLAIN_SCALARS
    stack = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if type(node) is dict:
            for k in node:
                if type(k) is not str:
                    return False
            values: Any = node.values()
        else:
            values = node
        for v in values:
            t = type(v)
            if t in scalars:
                continue
            if t is float:
                if dumps(v) != float_repr(v).encode("ascii"):
                    return False
            elif t is dict or t is list:
                if v:
                    stack.append((v, depth + 1))
            else:
                return False
    return True


_WHOLE_MAX_ITEMS = 256


def _scalar_bytes(v: Any) -> bytes:
    t = type(v)
    if t is str:
        return _c_encode_str(v).encode("utf-8")
    if v is None:
        return b"null"
    if v is True:
        return b"true"
    if v is False:
        return b"false"
    if t is int:
        return int.__repr__(v).encode("ascii")
    if t is float:
        return _float_text(v).encode("ascii")
    raise _NotFast


def _emit_bytes(obj: Any, level: int, out: list[bytes]) -> None:
    """Append the bytes of the non-empty dict or list ``obj`` whose items sit at ``level``.

    The largest subtrees orjson writes exactly as the stdlib are written by orjson (every line
    after the first shifted right by ``level - 1`` levels: its raw newlines are all layout, a
    string never holds one); the others are split here, item by item, down to those subtrees.
    A container of more than :data:`_WHOLE_MAX_ITEMS` items (the index's list of rows, a long
    transcript) is split without trying it whole, so one odd float costs one item's walk twice,
    not the whole tree's.
    """
    if level > FAST_DUMP_MAX_DEPTH:
        raise _NotFast
    if len(obj) <= _WHOLE_MAX_ITEMS and _orjson_writes_like_stdlib(obj, FAST_DUMP_MAX_DEPTH - level + 1):
        data = _orjson.dumps(obj, option=_orjson.OPT_INDENT_2)
        out.append(data if level == 1 else data.replace(b"\n", b"\n" + b"  " * (level - 1)))
        return
    if type(obj) is dict:
        for k in obj:
            if type(k) is not str:
                raise _NotFast
        items: Any = obj.items()
        out.append(b"{")
    elif type(obj) is list:
        items = ((None, v) for v in obj)
        out.append(b"[")
    else:
        raise _NotFast
    sep = b"\n" + b"  " * level
    nxt = b",\n" + b"  " * level
    for k, v in items:
        out.append(sep)
        sep = nxt
        if k is not None:
            out.append(_c_encode_str(k).encode("utf-8"))
            out.append(b": ")
        tv = type(v)
        if (tv is dict or tv is list) and v:
            _emit_bytes(v, level + 1, out)
        elif tv is dict:
            out.append(b"{}")
        elif tv is list:
            out.append(b"[]")
        else:
            out.append(_scalar_bytes(v))
    out.append(b"\n" + b"  " * (level - 1) + (b"}" if type(obj) is dict else b"]"))


def dumps_pretty_fast(obj: Any) -> bytes:
    """Exactly :func:`dumps_pretty` (same bytes, same exceptions), without its pure-Python encoder.

    From CPython 3.14 on that is :func:`dumps_pretty` itself (its C encoder writes ``indent``).
    Below, orjson writes every subtree of plain JSON data whose floats it formats like
    ``float.__repr__`` (see above), the rest is assembled here from the stdlib's own scalar
    encoders; whatever cannot be (another type, a non-``str`` key, too deep, a lone surrogate)
    goes through ``json.dumps``.
    """
    if (
        not STDLIB_INDENT_IN_C
        and type(obj) in (dict, list)
        and obj
        and _orjson is not None
        and _orjson_escapes_like_stdlib()
    ):
        out: list[bytes] = []
        try:
            _emit_bytes(obj, 1, out)
        except Exception:  # noqa: BLE001 - _NotFast, a lone surrogate...: the stdlib decides (and raises)
            pass
        else:
            return b"".join(out)
    return dumps_pretty(obj)


# ---------------------------------------------------------------- fast exact parse of a whole file

# One translation gives both orjson_safe()'s digit runs and a bound on the nesting depth: every
# digit becomes "9", "[" and "{" become "[", everything else a space.
_SCAN_MAP = bytes(0x39 if 0x30 <= b <= 0x39 else 0x5B if b in (0x5B, 0x7B) else 0x20 for b in range(256))

# The stdlib's ``json.loads`` raises RecursionError on a document nested deep enough: its C scanner
# counts each level against the recursion limit (CPython 3.11: ``sys.getrecursionlimit()``, 1,000
# by default, less the frames already on the stack; 3.12+: the C recursion limit, higher), while
# orjson accepts 1,024 levels. A document nested deeper than this is therefore parsed by the stdlib
# itself, whose verdict it is; up to it, the stdlib surely parses (our stacks stay far below the
# other half of the limit: ``tests/store/test_jsonfmt_fast.py`` parses this deep from a test).
PARSE_DEPTH_LIMIT = min(500, sys.getrecursionlimit() // 2)
_ORJSON_MAX_DEPTH = 1024
_ORJSON_DEPTH_CHECKED: bool | None = None
_NOT_PARSED = object()

_CONTAINER_TYPES = frozenset({dict, list})


def nesting_exceeds(obj: Any, limit: int) -> bool:
    """Whether ``obj`` nests dicts/lists more than ``limit`` levels deep (``[]`` is one level)."""
    if type(obj) not in _CONTAINER_TYPES:
        return False
    is_container = _CONTAINER_TYPES.__contains__
    level, depth = [obj], 1
    while level:
        if depth > limit:
            return True
        nxt: list = []
        for node in level:  # the children that are containers, picked out in C
            values = node.values() if type(node) is dict else node
            nxt.extend(compress(values, map(is_container, map(type, values))))
        level, depth = nxt, depth + 1
    return False


def long_digit_runs_only_in_strings(data: bytes, scan: bytes, first: int) -> bool:
    """Whether every run of 19+ digits of the *valid* JSON text ``data`` lies inside a string.

    ``scan`` is ``data.translate(_SCAN_MAP)`` and ``first`` the first run's offset in it. In
    valid JSON a backslash only occurs inside a string, starting an escape; with the ``\\\\``
    pairs blanked out (left to right, as a parser reads them) a quote is escaped exactly when a
    backslash precedes it, so the quotes that delimit strings before an offset are the quotes
    minus the ``\\"`` pairs, and an odd number means the offset is inside a string. (Runs
    inside strings are parsed alike by orjson and the stdlib; a number token of 19+ digits is
    not.) Offsets are always digits, so no ``\\"`` pair straddles two counting windows.
    """
    text = data.replace(b"\\\\", b"__")
    quotes = 0
    prev = 0
    at = first
    while at >= 0:
        quotes += text.count(b'"', prev, at) - text.count(b'\\"', prev, at)
        if quotes % 2 == 0:
            return False
        prev = at
        at = scan.find(_LONG_RUN, at + len(_LONG_RUN))
    return True


def _orjson_depth_limit_is_known() -> bool:
    """Whether this orjson accepts exactly :data:`_ORJSON_MAX_DEPTH` nested arrays/objects
    (checked once per process: :func:`_orjson_loads_within` relies on it)."""
    global _ORJSON_DEPTH_CHECKED
    if _ORJSON_DEPTH_CHECKED is None:

        def parses(text: bytes) -> bool:
            try:
                _orjson.loads(text)
                return True
            except (ValueError, TypeError):
                return False

        n = _ORJSON_MAX_DEPTH
        _ORJSON_DEPTH_CHECKED = (
            _orjson is not None
            and parses(b"[" * (n - 1) + b"{}" + b"]" * (n - 1))
            and not parses(b"[" * n + b"{}" + b"]" * n)
            and parses(b'{"a":' * n + b"1" + b"}" * n)
            and not parses(b'{"a":' * (n + 1) + b"1" + b"}" * (n + 1))
        )
    return _ORJSON_DEPTH_CHECKED


def _orjson_loads_within(data: bytes | str, limit: int) -> Any:
    """orjson's value of ``data`` if it nests at most ``limit`` levels, else :data:`_NOT_PARSED`.

    orjson refuses more than 1,024 levels, so ``data`` wrapped in ``k = 1024 - limit`` arrays
    parses only when ``data`` itself nests at most ``limit`` levels. The wrapping cannot make
    invalid text valid: when the result is ``k`` arrays of one element each, the text ends in
    ``k`` closing brackets that close exactly those arrays, so ``data`` is whitespace, one JSON
    value, whitespace - that value. It costs a copy of the bytes; walking the parsed value for
    its depth instead (:func:`nesting_exceeds`) costs more than the parse itself on a sidecar
    of a few hundred messages (0.37 ms walk vs 0.30 ms parse for 0.28 MB, 3.11.7). The wrapped
    text is built by one join (one copy; two with ``+``, 25 ms on the 22 MB bench index).
    """
    k = _ORJSON_MAX_DEPTH - limit
    if k and isinstance(data, str):  # a str is wrapped as a str (orjson reads both)
        data = "".join(("[" * k, data, "]" * k))
    elif k and isinstance(data, bytes):
        data = b"".join((b"[" * k, data, b"]" * k))
    try:
        obj = _orjson.loads(data)
    except (ValueError, TypeError):
        return _NOT_PARSED
    for _ in range(k):
        if type(obj) is not list or len(obj) != 1:
            return _NOT_PARSED
        obj = obj[0]
    return obj


def orjson_loads_shallow(data: bytes | str) -> Any:
    """orjson's value of ``data`` when it is JSON nested at most :data:`PARSE_DEPTH_LIMIT` levels
    deep (the stdlib then surely reads it alike), else :data:`_NOT_PARSED` (not JSON to orjson,
    or deeper: the stdlib's to judge). A text of at most twice the limit characters cannot nest
    deeper (each level opens and closes): it is parsed as it is; a longer one inside extra arrays
    (:func:`_orjson_loads_within`), or, where orjson's own limit is not the one expected, parsed
    and walked (:func:`nesting_exceeds`)."""
    if len(data) <= 2 * PARSE_DEPTH_LIMIT:
        try:
            return _orjson.loads(data)
        except (ValueError, TypeError):
            return _NOT_PARSED
    return _orjson_loads_to_depth(data, PARSE_DEPTH_LIMIT)


def _orjson_loads_to_depth(data: bytes | str, limit: int) -> Any:
    """orjson's value of ``data`` if it nests at most ``limit`` levels, else :data:`_NOT_PARSED`:
    parsed inside extra arrays where orjson's own limit is the one expected and ``limit`` is below
    it (:func:`_orjson_loads_within`), else parsed and walked (:func:`nesting_exceeds`)."""
    if 0 < limit < _ORJSON_MAX_DEPTH and _orjson_depth_limit_is_known():
        return _orjson_loads_within(data, limit)
    obj = _orjson_loads_within(data, _ORJSON_MAX_DEPTH)
    if obj is not _NOT_PARSED and nesting_exceeds(obj, limit):
        return _NOT_PARSED
    return obj


def loads_bytes_fast(data: bytes, depth_limit: int = PARSE_DEPTH_LIMIT) -> Any:
    """Exactly :func:`loads_bytes` (the same value, or the same exception), parsed by orjson where
    that is known to agree.

    On top of :func:`fast_loads`' rules (a run of 19+ digits goes to the stdlib, here only when it
    is not inside a string: tool-call ids are), a document nested deeper than ``depth_limit``
    (see :data:`PARSE_DEPTH_LIMIT`) goes to the stdlib. Only a document holding more ``[`` and
    ``{`` bytes than the limit can be that deep; orjson's own depth limit tells, the document
    parsed inside extra arrays (:func:`_orjson_loads_within`), else its value is walked.
    """
    if _orjson is not None:
        scan = data.translate(_SCAN_MAP)
        if scan.count(b"[") <= depth_limit:
            obj = _orjson_loads_within(data, _ORJSON_MAX_DEPTH)  # cannot nest deeper than the limit
        else:
            obj = _orjson_loads_to_depth(data, depth_limit)
        if obj is not _NOT_PARSED:
            first = scan.find(_LONG_RUN)
            if first < 0 or long_digit_runs_only_in_strings(data, scan, first):
                return obj
    return loads_bytes(data)


# ---------------------------------------------------------------- JSON lines checked without objects

# What makes ``str.splitlines`` cut a line where a split at b"\n" does not: "\r" (also JSON
# whitespace), and U+0085, U+2028, U+2029 (valid raw inside a JSON string). The other breaks it
# knows (\x0b, \x0c, \x1c, \x1d, \x1e) are neither JSON whitespace nor allowed raw in a string,
# so text holding one never passes the check below.
_OTHER_BREAKS_ASCII = b"\r"
_OTHER_BREAKS = ("\x85", "\u2028", "\u2029")
_UTF8_CHUNK = 16_384
_LINES_DECODER = _msgspec.json.Decoder(list[_msgspec.Raw]) if _msgspec is not None else None
# The lines that could hold what only the stdlib may judge: nesting deeper than PARSE_DEPTH_LIMIT
# (such a value is longer than twice the limit) or an integer of more digits than the stdlib
# converts (``sys.get_int_max_str_digits()``, 4,300 by default, never below 640: it raises
# ValueError, msgspec skips the number). Lines up to this long need no look; longer ones are looked at.
_LOOK_BYTES = min(2 * PARSE_DEPTH_LIMIT, 640)
_PLUS_ONE = (1).__add__  # a line's length plus its b"\n": where the next line starts


def objects_per_line(body: bytes) -> int | None:
    """How many lines ``body`` has (split at b"\\n") when it is proven that hermes' reading of it
    (the UTF-8 text split with ``str.splitlines``, each line ``json.loads``-ed) gives exactly one
    JSON object per line; None when that is not proven (the caller then decides line by line).

    No object is built: msgspec checks the lines as the elements of one JSON array (each line's
    b"\\n" made a comma) and hands back each element's bytes (``msgspec.Raw``, skipped, not
    decoded). The lines are those elements exactly when the elements joined by b"\\n" are
    ``body`` itself (each element then stands alone on its line, without even whitespace around
    it); an element that starts with "{" is an object. msgspec accepts only JSON the stdlib
    accepts (``tests/store/test_quick_parse.py``): it refuses ``NaN``, ``Infinity`` and lone
    surrogate escapes, which the stdlib takes (those lines go to the caller). It does not check
    the UTF-8 of strings it skips, so the bytes are decoded here first (ASCII needs no decoding).
    A line nested deeper than :data:`PARSE_DEPTH_LIMIT` is the stdlib's to judge (its
    RecursionError depends on the stack), and so is an integer of thousands of digits (the stdlib
    raises ValueError past ``sys.get_int_max_str_digits()``): a line that might hold either is
    left to the caller.
    """
    if _LINES_DECODER is None or not body or body[:1] != b"{" or _OTHER_BREAKS_ASCII in body:
        return None
    if not body.isascii() and not _utf8_without_other_breaks(body):
        return None
    try:
        lines: list[Any] = _LINES_DECODER.decode(b"[" + body.replace(b"\n", b",") + b"]")
    except (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError):
        return None
    if b"\n".join(lines) != body:
        return None
    if len(lines) > 1:
        # the elements are the lines: line i starts where the lines before it and their b"\n"
        # end, and each line's first byte is picked out of body at once (itemgetter of the
        # offsets, in C: a third cheaper than a memoryview of each element); body[0] is "{"
        starts = itemgetter(*accumulate(map(_PLUS_ONE, map(len, lines[:-1])), initial=0))(body)
        if starts.count(0x7B) != len(starts):
            return None
    if max(map(len, lines)) > _LOOK_BYTES:
        for line in lines:
            if len(line) > _LOOK_BYTES and _stdlib_must_judge(bytes(line)):
                return None
    return len(lines)


def _utf8_without_other_breaks(body: bytes, breaks: tuple[str, ...] = _OTHER_BREAKS) -> bool:
    """Whether ``body`` is valid UTF-8 without any of ``breaks`` (U+0085, U+2028, U+2029), decoded
    a few KB at a time (cut after a b"\\n", never inside a character): only the pieces that are
    not ASCII are decoded, and none becomes one huge string (decoding 100 MB of mostly ASCII text
    with a few emoji in one piece builds a 400 MB UCS-4 string, fifteen times slower)."""
    for start, end in line_pieces(body, _UTF8_CHUNK):
        chunk = body[start:end]
        if not chunk.isascii():
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError:
                return False
            if any(sep in text for sep in breaks):
                return False
    return True


def line_pieces(data: bytes, size: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive pieces of ``data`` of about ``size`` bytes, each ending just
    after a ``\n`` (or at the end). A UTF-8 sequence never holds byte 0x0A and every line break
    ``str.splitlines`` knows is one character or ``\r\n``, so decoding and splitting the pieces
    one by one gives the very lines (and the first bad byte) of decoding the whole of ``data``."""
    start, total = 0, len(data)
    while start < total:
        end = start + size
        if end >= total:
            end = total
        else:
            newline = data.find(b"\n", end - 1)
            end = total if newline < 0 else newline + 1
        yield start, end
        start = end


def _stdlib_must_judge(raw: bytes) -> bool:
    """Whether the valid JSON ``raw`` may nest deeper than :data:`PARSE_DEPTH_LIMIT` or hold a run
    of 640+ digits (an integer the stdlib may refuse to convert; in a string it is only a false alarm)."""
    return raw.count(b"[") + raw.count(b"{") > PARSE_DEPTH_LIMIT or has_digit_run(raw, 640)


def has_digit_run(data: bytes, length: int) -> bool:
    """True when ``data`` holds ``length`` or more consecutive ASCII digits (``length`` >= 2).

    Such a run covers two neighbouring bytes of every ``length // 2``-th byte, so only those bytes
    are looked at first (a slice and a translation of a few KB); where two neighbours are digits,
    the stretch around them is looked at whole."""
    stride = length // 2
    sampled = data[::stride].translate(_DIGIT_MAP)
    run = b"9" * length
    at = sampled.find(b"99")
    while at >= 0:
        window = data[max(0, at * stride - length) : (at + 1) * stride + length + 1]
        if run in window.translate(_DIGIT_MAP):
            return True
        at = sampled.find(b"99", at + 1)
    return False


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (as ``data.decode("utf-8")`` would tell), a few KB at a time."""
    return data.isascii() or _utf8_without_other_breaks(data, ())


_RAW_ITEMS = _msgspec.json.Decoder(list[_msgspec.Raw]) if _msgspec is not None else None
_STR = _msgspec.json.Decoder(str) if _msgspec is not None else None


def raw_items(data: bytes) -> list | None:
    """The items of the JSON array ``data`` as ``msgspec.Raw`` (their bytes, not decoded), or None
    unless the stdlib surely parses ``data`` to a list: msgspec accepts it (it accepts only what
    the stdlib accepts, see :func:`objects_per_line`), it is valid UTF-8, and no item is one only
    the stdlib may judge (nested too deep, an integer of too many digits)."""
    if _RAW_ITEMS is None:
        return None
    try:
        items = _RAW_ITEMS.decode(data)
    except (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError):
        return None
    if not is_utf8(data):
        return None
    if items and max(map(len, items)) > _LOOK_BYTES:
        for item in items:
            if len(item) > _LOOK_BYTES and _stdlib_must_judge(bytes(item)):
                return None
    return items


def raw_string(raw: Any) -> str | None:
    """The ``str`` a JSON value's bytes hold (``msgspec.Raw`` or bytes, valid JSON or empty), None
    when the value is not a string: exactly the stdlib's string (a lone surrogate escape, which
    msgspec refuses, is decoded by the stdlib)."""
    if not raw:
        return None
    data = bytes(raw)
    if data[:1] != b'"':
        return None
    try:
        return _STR.decode(data)
    except (_msgspec.DecodeError, _msgspec.ValidationError):
        return json.loads(data)
