"""``inspector.jsonout.write_pretty_ascii``: ``json.dumps(obj, ensure_ascii=True, indent=2, default=str)``
in pieces, without the stdlib's pure-Python encoder.

Rules pinned here:

* the pieces join to the stdlib's text, for plain values (written by the walk) and for everything the
  walk leaves to the stdlib where it stands (tuples, subclasses of str, int, float, dict and list,
  dicts with keys that are not strings, objects written through ``default=str``), at any depth;
* NaN and the infinities, big integers, floats as ``repr`` writes them, non-ASCII text escaped
  (surrogate pairs beyond the BMP), empty containers as ``[]`` and ``{}``;
* an ``Escaped`` value is written as the string whose JSON text it holds, wherever it stands (also
  inside what the stdlib writes);
* a list of strings is one piece; a container met again inside itself raises the stdlib's
  ``ValueError``.
"""

from __future__ import annotations

import enum
import json
from collections import OrderedDict
from pathlib import PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.jsonout import Escaped, escape, write_pretty_ascii


def _text(obj) -> str:
    pieces: list[str] = []
    write_pretty_ascii(obj, pieces.append)
    return "".join(pieces)


def _stdlib(obj) -> str:
    return json.dumps(obj, ensure_ascii=True, indent=2, default=str)


class _Kind(enum.IntEnum):
    CREATE = 3


class _Text(str):
    pass


class _Number(float):
    pass


def test_a_small_plan_is_written_as_the_stdlib_writes_it():
    obj = {"plans": [{"summary": ["create a.json", "é"], "refusal": None, "n": 2, "ok": True, "x": []}]}
    assert _text(obj) == (
        "{\n"
        '  "plans": [\n'
        "    {\n"
        '      "summary": [\n'
        '        "create a.json",\n'
        '        "\\u00e9"\n'
        "      ],\n"
        '      "refusal": null,\n'
        '      "n": 2,\n'
        '      "ok": true,\n'
        '      "x": []\n'
        "    }\n"
        "  ]\n"
        "}"
    )
    assert _text(obj) == _stdlib(obj)


@pytest.mark.parametrize(
    "value",
    [
        {"t": (1, "a", (2.5,)), "e": ()},
        {"p": PurePosixPath("/a/é"), "deep": [[{"p": PurePosixPath("/b")}]]},
        [_Kind.CREATE, _Text("x\n"), _Number(1.5), True, False],
        {3: "a", 2.5: "b", None: "c", True: "d", False: "e"},
        [{"k": {1: [1, 2]}}],
        [OrderedDict([("b", 1), ("a", [])])],
        {"x": {_Text("k"): 1}},
        [float("nan"), float("inf"), -float("inf"), 1e16, 1.5e-7, -0.0, 10**40],
        ['\U0001f600 \u2028 \x00 \\ " \t'],
        [[], {}, [[]], [{}], ""],
        "just text",
        None,
        7,
        [object.__new__(type("Thing", (), {"__str__": lambda self: "a thing"}))],
    ],
)
def test_values_the_walk_leaves_to_the_stdlib_are_written_where_they_stand(value):
    for obj in (value, {"plans": [value]}, [[value, 1]]):
        assert _text(obj) == _stdlib(obj)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=25,
)


@settings(max_examples=200)
@given(value=_json_values)
def test_any_value_is_written_as_the_stdlib_writes_it(value):
    for obj in (value, {"plans": [value, {"n": [value]}]}):
        assert _text(obj) == _stdlib(obj)


@settings(max_examples=100)
@given(text=st.text())
def test_an_escaped_string_is_written_as_the_string_itself(text):
    shown = {"changes": [{"path": "a", "diff": Escaped(escape(text))}], "t": (Escaped(escape(text)),)}
    plain = {"changes": [{"path": "a", "diff": text}], "t": (text,)}
    assert _text(shown) == _stdlib(plain)


def test_an_escaped_string_is_written_as_it_is():
    assert _text(["x", Escaped('"\\u00e9"')]) == '[\n  "x",\n  "\\u00e9"\n]'


def test_a_list_of_strings_is_one_piece():
    pieces: list[str] = []
    write_pretty_ascii({"w": ["a", "b", "c"]}, pieces.append)
    assert '[\n    "a",\n    "b",\n    "c"\n  ]' in pieces


def test_a_container_inside_itself_raises_as_the_stdlib_does():
    loop: list = [1]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match="Circular reference detected"):
        _stdlib(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        _text(loop)
    same = [1]
    assert _text([same, same]) == _stdlib([same, same])  # met twice side by side: not a loop
