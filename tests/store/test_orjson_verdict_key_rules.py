"""What the kept orjson verdict is keyed by (``orjson_verdict.build_key``) and how a failed write ends
(``write_verdict``): the module's docstring, *key* and *trust*.

Rules pinned here (expected values written out by hand):

* the check's code is keyed with everything in it: two checks that differ only in a constant, in a
  constant of a function nested in them, or in a member of a set constant (``x in {..}``, a
  ``frozenset`` constant) have different keys; the same check has the same key;
* the key holds the file format (1) and the SHA-256 of the stdlib's ``json/encoder.py``;
* no key when orjson's extension has no file or its file cannot be read (a folder); an orjson
  without ``__version__`` is keyed with the version ``""``; a ``_json`` without a file is keyed
  with None for it;
* a write that fails says False and leaves no temp file behind.
"""

from __future__ import annotations

import hashlib
import json.encoder
import os
import sys
import types
from pathlib import Path

import pytest

from inspector.store import orjson_verdict

orjson = pytest.importorskip("orjson")


def one() -> bool:
    return sorted([3, 1]) == [1, 3]


def other_constant() -> bool:
    return sorted([3, 2]) == [2, 3]


def nested_one() -> bool:
    def inner(x):
        return x + 1

    return inner(1) == 2


def nested_other() -> bool:
    def inner(x):
        return x + 2

    return inner(1) == 2


def set_one(x=1) -> bool:
    return x in {1, 2}


def set_other(x=1) -> bool:
    return x in {1, 3}


def _check(fn) -> str:
    key = orjson_verdict.build_key(fn)
    assert key is not None
    return key["check"]


def test_every_part_of_the_checks_code_is_keyed() -> None:
    assert _check(one) == _check(one)
    assert _check(one) != _check(other_constant)
    assert _check(nested_one) != _check(nested_other)
    assert _check(set_one) != _check(set_other)


def test_the_key_holds_the_format_and_the_stdlib_encoders_hash() -> None:
    key = orjson_verdict.build_key(one)
    assert key["format"] == 1
    assert key["stdlib"][1] == hashlib.sha256(Path(json.encoder.__file__).read_bytes()).hexdigest()


def _fake_extension(monkeypatch, **attrs) -> None:
    fake = types.ModuleType("orjson.orjson")
    for name, value in attrs.items():
        setattr(fake, name, value)
    monkeypatch.setitem(sys.modules, "orjson.orjson", fake)
    monkeypatch.setattr(orjson, "orjson", fake, raising=False)


def test_no_key_without_an_extension_file(monkeypatch) -> None:
    _fake_extension(monkeypatch)  # no __file__
    assert orjson_verdict.build_key(one) is None


def test_no_key_when_the_extension_file_cannot_be_read(monkeypatch, tmp_path) -> None:
    _fake_extension(monkeypatch, __file__=str(tmp_path))  # a folder: no bytes to hash
    assert orjson_verdict.build_key(one) is None


def test_an_orjson_without_a_version_is_keyed_with_an_empty_one(monkeypatch) -> None:
    monkeypatch.delattr(orjson, "__version__")
    key = orjson_verdict.build_key(one)
    assert key is not None and key["orjson"] == ""


def test_a_json_accelerator_without_a_file_is_keyed_with_none(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "_json", types.ModuleType("_json"))  # built in: no file
    key = orjson_verdict.build_key(one)
    assert key is not None and key["stdlib"][0] is None


def test_a_failed_write_says_false_and_leaves_no_temp_file(monkeypatch, tmp_path) -> None:
    path = tmp_path / "cache" / "v.json"

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(orjson_verdict.os, "replace", refuse)
    assert orjson_verdict.write_verdict(path, {"format": 1}, True) is False
    assert os.listdir(path.parent) == []
