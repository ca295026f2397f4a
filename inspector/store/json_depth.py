"""How deep hermes' ``json.loads`` goes into a run-journal line before it stops, and what follows.

hermes reads a run journal with ``_read_jsonl`` (``api/run_journal.py``): ``json.loads`` on each
line, catching only ``json.JSONDecodeError``. On CPython 3.11 (what hermes runs here) the C
scanner of ``json`` calls ``Py_EnterRecursiveCall`` each time it enters an array or an object,
and that counter is shared with the Python frames already on the stack: with the default
recursion limit of 1,000, ``json.loads`` raises ``RecursionError`` when it enters level
``1000 - F + 1`` where ``F`` is the number of Python frames on the stack at the scanner
(``json.loads``, ``JSONDecoder.decode`` and ``raw_decode`` included). ``RecursionError`` is not a
``JSONDecodeError``: it leaves ``_read_jsonl`` and ``read_run_events``, and every reader of the
repairs catches it as ``Exception`` and treats the journal as having no output at all (the same
path as an invalid UTF-8 byte, quirk 5 of spec §6.2). Measured on hermes' interpreter:

* the shallowest possible caller (``read_run_events`` called from a module's top level: six
  Python frames down to ``raw_decode``) parses 993 levels and fails on 994, so a line the parser
  enters **994 or more** levels deep makes every hermes reader fail (:data:`HERMES_NEVER_READS`);
* hermes' own calls sit deeper, and at a depth that varies with the caller (the differential
  test's main-thread call of the interrupted-turn repair: 988 levels for
  ``_append_journaled_partial_output`` and 989 for the terminal-error check in the same repair;
  a plain thread: 990 for a reader called straight from the thread's function; a server request
  thread: fewer). A line needing **at most 900** levels is read alike by every caller (a caller
  would need more than 93 frames beyond the shallowest one's to fail on it; hermes' call paths,
  read from its source, hold a few dozen at most): :data:`HERMES_ALWAYS_READS`;
* between the two (901-993 levels) whether hermes reads the line depends on how deep hermes' own
  stack happens to be: the inspector does not guess (the repairs refuse, saying why).

What counts is the level the parser *enters* before it stops: a line that breaks JSON before
going deep (a torn record, say) is an ordinary skipped line, whatever brackets follow. (A line
that breaks while ``L`` containers are open may need room for ``L + 3``: raising
``JSONDecodeError`` there runs its Python ``__init__``, see :data:`RAISE_LEVELS`.) So the depth is found by walking the line with
the stdlib's own grammar (:func:`levels_needed`), not by counting brackets; the walk runs only on lines holding more than :data:`HERMES_ALWAYS_READS`
opening brackets, which no hermes writer produces (its snapshot arguments are bounded to a few
levels).
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

HERMES_ALWAYS_READS = 900  # levels every hermes reader enters without RecursionError
HERMES_NEVER_READS = 994  # levels no hermes reader enters without RecursionError

ALWAYS = "always"  # hermes reads the line like any other (an event or a skipped line)
NEVER = "never"  # hermes' read fails on it: the whole journal is no output
UNSURE = "unsure"  # it depends on how deep hermes' stack is when it reads

_WS = re.compile(r"[ \t\n\r]*")  # json.decoder.WHITESPACE
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")  # json.scanner.NUMBER_RE
_CHUNK = re.compile(r'[^"\\\x00-\x1f]*')  # a string's plain characters (strict: no control chars)
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_LITERALS = ("null", "true", "false", "NaN", "Infinity", "-Infinity")


def _string_end(s: str, i: int) -> int:
    """Index after the string starting with the quote at ``i``, or -1 where the stdlib's strict
    ``scanstring`` raises (unterminated, a control character, a bad escape)."""
    n = len(s)
    i += 1
    while True:
        i = _CHUNK.match(s, i).end()
        if i >= n:
            return -1
        c = s[i]
        if c == '"':
            return i + 1
        if c != "\\":
            return -1
        esc = s[i + 1 : i + 2]
        if esc == "u":
            if not _HEX4.match(s, i + 2):
                return -1
            i += 6
        elif esc and esc in _SIMPLE_ESCAPES:
            i += 2
        else:
            return -1


def _scalar_end(s: str, i: int) -> int:
    """Index after the number or literal at ``i``, or -1 where the stdlib finds no value."""
    for word in _LITERALS:
        if s.startswith(word, i):
            return i + len(word)
    m = _NUMBER.match(s, i)
    return m.end() if m else -1


def _member_value_start(s: str, i: int) -> int:
    """Where the value of an object member whose key starts at ``i`` begins (the key string, white
    space, ":", white space); -1 where the stdlib's scanner raises on the way ("Expecting property
    name enclosed in double quotes", a bad string, "Expecting ':' delimiter")."""
    if not s.startswith('"', i):
        return -1
    i = _string_end(s, i)
    if i < 0:
        return -1
    i = _WS.match(s, i).end()
    if not s.startswith(":", i):
        return -1
    return _WS.match(s, i + 1).end()


def _walk(s: str, stop_at: int) -> tuple[int, int]:
    """(levels ``json.loads(s)`` enters, the containers open where its C scanner raises
    ``JSONDecodeError`` itself or -1), counting no further than ``stop_at`` levels.

    The walk follows the stdlib's scanner: whitespace, strict strings, its number pattern, its
    literals (``NaN``, ``Infinity`` included), an object's keys as strings, ``:`` and ``,`` where
    it wants them; it stops at the first place the stdlib raises. Iterative, so any depth is
    walked without recursion.
    """
    n = len(s)
    stack: list[str] = []  # "[" or "{" for every open container
    deepest = 0
    i = _WS.match(s, 0).end()
    want_value = True
    while True:
        if want_value:
            if i >= n:
                return deepest, -1  # "Expecting value": raised once the scanner has unwound
            c = s[i]
            if c in "[{":
                stack.append(c)
                if len(stack) > deepest:
                    deepest = len(stack)
                    if deepest >= stop_at:
                        return deepest, -1
                i = _WS.match(s, i + 1).end()
                closer = "]" if c == "[" else "}"
                if s.startswith(closer, i):
                    stack.pop()
                    i += 1
                    want_value = False
                    if not stack:
                        return deepest, -1
                    continue
                if c == "{":
                    i = _member_value_start(s, i)
                    if i < 0:
                        return deepest, len(stack)
                continue  # the first value of the container
            if c == '"':
                end = _string_end(s, i)
                if end < 0:
                    return deepest, len(stack)  # the string scanner raises where it is
            else:
                end = _scalar_end(s, i)
                if end < 0:
                    # no value here: the C scanner signals StopIteration, and raw_decode raises
                    # "Expecting value" once it has unwound (no frame at this depth)
                    return deepest, -1
            i = end
            want_value = False
            if not stack:
                return deepest, -1  # the top-level value is complete ("Extra data" needs no depth)
            continue
        # after a value inside a container
        i = _WS.match(s, i).end()
        top = stack[-1]
        c = s[i : i + 1]
        if c == ("]" if top == "[" else "}"):
            stack.pop()
            i += 1
            if not stack:
                return deepest, -1
            continue
        if c != ",":
            return deepest, len(stack)
        i = _WS.match(s, i + 1).end()
        if top == "{":
            i = _member_value_start(s, i)
            if i < 0:
                return deepest, len(stack)
        want_value = True


def levels_entered(s: str, stop_at: int = HERMES_NEVER_READS) -> int:
    """How many nested arrays/objects ``json.loads(s)`` enters before it returns or raises
    (``[]`` enters one), counting no further than ``stop_at``."""
    return _walk(s, stop_at)[0]


# Raising JSONDecodeError from inside the C scanner calls the exception class (its ``__init__`` is
# a Python function): on CPython 3.11 that takes 3 levels of the recursion budget beyond the open
# containers (the call of the type, of its ``__init__`` slot, and the Python frame), measured and
# pinned by tests/store/test_json_depth.py.
RAISE_LEVELS = 3


def levels_needed(s: str, stop_at: int = HERMES_NEVER_READS) -> int:
    """The room in levels ``json.loads(s)`` needs not to raise ``RecursionError``: the levels it
    enters, or :data:`RAISE_LEVELS` more than the containers open where the C scanner raises
    ``JSONDecodeError`` itself (a bad string, a missing ``:`` or ``,``, a key that is not a
    string), whichever is more. A missing value is not raised there (see :func:`_walk`)."""
    deepest, open_at_error = _walk(s, stop_at)
    return max(deepest, open_at_error + RAISE_LEVELS if open_at_error >= 0 else 0)


def may_be_deep(line: str) -> bool:
    """Whether the one line ``line`` holds enough opening brackets to reach past
    :data:`HERMES_ALWAYS_READS` levels."""
    return line.count("[") + line.count("{") > HERMES_ALWAYS_READS


# Everything but "[", "{" and "\n" deleted, "{" made "[": each line's opening brackets side by side.
_NOT_OPENING = bytes(b for b in range(256) if b not in b"[{\n")
_OPENING_MAP = bytes(0x5B if b == 0x7B else b for b in range(256))
_DEEP_RUN = b"[" * (HERMES_ALWAYS_READS + 1)


def may_be_deep_bytes(data: bytes) -> bool:
    """Whether a ``\n``-line of the UTF-8 ``data`` (a piece of a journal, many lines) holds more
    than :data:`HERMES_ALWAYS_READS` opening brackets (``[`` and ``{`` are single bytes in UTF-8,
    and every line hermes' ``splitlines`` makes lies within one ``\n``-line). Runs in C: a delete
    and a substring search; an ordinary journal's lines hold a handful of brackets each."""
    return _DEEP_RUN in data.translate(_OPENING_MAP, _NOT_OPENING)


def hermes_verdict(line: str) -> tuple[str, int]:
    """(:data:`ALWAYS`, :data:`NEVER` or :data:`UNSURE`, the levels needed) for one line."""
    if not may_be_deep(line):
        return ALWAYS, 0
    levels = levels_needed(line)
    if levels <= HERMES_ALWAYS_READS:
        return ALWAYS, levels
    return (NEVER if levels >= HERMES_NEVER_READS else UNSURE), levels


def loads_from_a_fresh_stack(text: str) -> Any:
    """``json.loads(text)`` run at the bottom of a new thread's stack, so that how deep a line
    it reads does not depend on how deep its caller is (the stdlib parser counts its levels
    against the recursion limit, with the caller's frames). The raw view reads a line in
    :data:`UNSURE`'s band this way: the same answer from a test, the window or a worker."""
    if not may_be_deep(text):
        return json.loads(text)
    result: list[Any] = []
    failure: list[BaseException] = []

    def read() -> None:
        try:
            result.append(json.loads(text))
        except (ValueError, RecursionError) as exc:
            failure.append(exc)

    reader = threading.Thread(target=read, name="deep-json-line", daemon=True)
    reader.start()
    reader.join()
    if failure:
        raise failure[0]
    return result[0]
