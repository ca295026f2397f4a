"""jsonfmt's orjson check (``jsonfmt._check_orjson_escapes``): orjson may write hermes' bytes only if
it escapes every code point as the stdlib's ``c_encode_basestring`` and writes the check's sample of
plain values as ``json.dumps(ensure_ascii=False, indent=2)``.

Each test puts an orjson in jsonfmt's place that differs from the real one in one thing only, and
the check must say no (expected values written out by hand):

* no orjson, or no C string encoder: no;
* a code point escaped otherwise (U+2028 as ``\\u2028``) in the code-point text alone: no, even
  though the sample agrees;
* a negative integer, or ``true``, written otherwise in the sample: no (the sample holds both);
* an orjson that raises: no;
* the real orjson: yes.
"""

from __future__ import annotations

import pytest

from inspector.store import jsonfmt

orjson = pytest.importorskip("orjson")


class _Orjson:
    """orjson's ``dumps``, its output for ``which`` values changed by ``change``."""

    OPT_INDENT_2 = orjson.OPT_INDENT_2

    def __init__(self, change, which=object) -> None:
        self.change, self.which = change, which

    def dumps(self, obj, option=None):
        out = orjson.dumps(obj) if option is None else orjson.dumps(obj, option=option)
        return self.change(out) if isinstance(obj, self.which) else out


def _check_with(monkeypatch, fake) -> bool:
    monkeypatch.setattr(jsonfmt, "_orjson", fake)
    return jsonfmt._check_orjson_escapes()


def test_the_real_orjson_passes_and_none_or_no_c_encoder_fails(monkeypatch):
    assert jsonfmt._c_encode_str is not None
    assert jsonfmt._check_orjson_escapes() is True
    assert _check_with(monkeypatch, None) is False
    monkeypatch.setattr(jsonfmt, "_orjson", orjson)
    monkeypatch.setattr(jsonfmt, "_c_encode_str", None)
    assert jsonfmt._check_orjson_escapes() is False


def test_a_code_point_escaped_otherwise_fails_though_the_sample_agrees(monkeypatch):
    fake = _Orjson(lambda out: out.replace("\u2028".encode(), b"\\u2028"), which=str)
    assert _check_with(monkeypatch, fake) is False


def test_a_negative_integer_written_otherwise_fails(monkeypatch):
    fake = _Orjson(lambda out: out.replace(b"-2", b"-2.0"), which=dict)
    assert _check_with(monkeypatch, fake) is False


def test_true_written_otherwise_fails(monkeypatch):
    fake = _Orjson(lambda out: out.replace(b"true", b"True"), which=dict)
    assert _check_with(monkeypatch, fake) is False


def test_an_orjson_that_raises_fails(monkeypatch):
    def broken(out):
        raise orjson.JSONEncodeError("refused")

    assert _check_with(monkeypatch, _Orjson(broken)) is False
