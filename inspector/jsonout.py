"""The text of ``json.dumps(obj, ensure_ascii=True, indent=2, default=str)``, made in pieces.

Below CPython 3.14 the stdlib writes ``indent`` in pure Python: one generator per container, one
piece per key, separator and value (a home-wide materialize's 13 MB ``repair --json`` is ~75,000
pieces through nested generators). Here the plain values (``dict`` with ``str`` keys, ``list``,
``str``, ``int``, ``float``, ``True``/``False``/``None``, exact types) are written by one
recursive walk with the stdlib's own string escaper and number texts, a list of strings joined in
one step; anything else (another type, a subclass, a tuple, a dict with a key that is not a
``str``) is written by ``json.dumps`` itself, its lines shifted to the level where it stands
(with ``ensure_ascii`` no string holds a raw newline, so every newline of its text is layout). A
container met again inside itself raises the stdlib's ``ValueError``.

An :class:`Escaped` value is a string whose JSON text was made before (by the same escaper): its
text is written as it is, so a caller may escape its large strings early, while it waits for other
work, and hold that text (ASCII) rather than the strings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import INFINITY
from json.encoder import encode_basestring_ascii as escape
from typing import Any

__all__ = ["Escaped", "escape", "write_pretty_ascii"]

_INDENT = "  "


class Escaped:
    """A string written as its JSON text ``text`` (``escape(the string)``: quotes included)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:  # what json.dumps(default=str) would write it as, if it met one
        return json.loads(self.text)


def _float_text(value: float) -> str:
    """The stdlib's text of a float (``allow_nan``: ``NaN``, ``Infinity``, ``-Infinity``)."""
    if value != value:
        return "NaN"
    if value == INFINITY:
        return "Infinity"
    if value == -INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _stdlib_text(value: Any, level: int) -> str:
    """``json.dumps``' text of ``value`` standing at ``level`` (its lines shifted that far)."""
    text = json.dumps(value, ensure_ascii=True, indent=2, default=str)
    return text.replace("\n", "\n" + _INDENT * level) if level else text


def write_pretty_ascii(obj: Any, put: Callable[[str], None]) -> None:
    """Hand ``put`` the pieces whose concatenation is ``json.dumps(obj, ensure_ascii=True,
    indent=2, default=str)``, in order (an :class:`Escaped` value written as the string it stands
    for); where the stdlib raises, this raises the same error."""
    active: set[int] = set()

    def value(v: Any, level: int) -> None:
        t = type(v)
        if t is str:
            put(escape(v))
        elif v is None:
            put("null")
        elif v is True:
            put("true")
        elif v is False:
            put("false")
        elif t is int:
            put(int.__repr__(v))
        elif t is float:
            put(_float_text(v))
        elif t is list:
            if v:
                array(v, level)
            else:
                put("[]")
        elif t is dict:
            if not v:
                put("{}")
            elif all(type(k) is str for k in v):
                mapping(v, level)
            else:
                put(_stdlib_text(v, level))
        elif t is Escaped:
            put(v.text)
        else:
            put(_stdlib_text(v, level))

    def enter(v: Any) -> int:
        key = id(v)
        if key in active:
            raise ValueError("Circular reference detected")
        active.add(key)
        return key

    def array(v: list, level: int) -> None:
        key = enter(v)
        inner = level + 1
        nl = "\n" + _INDENT * inner
        end = "\n" + _INDENT * level + "]"
        if all(type(x) is str for x in v):
            put("[" + nl + ("," + nl).join(map(escape, v)) + end)
        else:
            sep = "[" + nl
            for x in v:
                put(sep)
                sep = "," + nl
                value(x, inner)
            put(end)
        active.discard(key)

    def mapping(v: dict, level: int) -> None:
        key = enter(v)
        inner = level + 1
        nl = "\n" + _INDENT * inner
        sep = "{" + nl
        for k, x in v.items():
            put(sep + escape(k) + ": ")
            sep = "," + nl
            value(x, inner)
        put("\n" + _INDENT * level + "}")
        active.discard(key)

    value(obj, 0)
