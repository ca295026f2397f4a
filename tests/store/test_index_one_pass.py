"""The usual ``_index.json`` is read in one msgspec pass (issue 18: the window's first open).

``index_facts_of`` used to decode the whole index twice (``raw_items`` to look at each row's
bytes, then the rows); the usual index is now proven in one pass where msgspec gives up on deep
nesting, and anything that pass does not prove goes the old ways, with the stdlib's verdict.
"""

from __future__ import annotations

import json

import pytest

from inspector.store import scan
from inspector.store.jsonfmt import PARSE_DEPTH_LIMIT
from tests.differential.parse_check import _same
from tests.store.test_quick_parse import stdlib_index_facts

pytestmark = pytest.mark.skipif(scan._msgspec is None, reason="the one pass is msgspec's")


def _usual_index(extra: str = "") -> bytes:
    rows = [{"session_id": f"s{i}", "title": f"chat é🙂 {i}", "message_count": i} for i in range(30)]
    text = json.dumps(rows, ensure_ascii=False, indent=2)
    if extra:
        text = text[:-2] + ",\n  " + extra + "\n]"
    return text.encode("utf-8")


def _count_raw_items(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = scan.raw_items

    def counting(data):
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(scan, "raw_items", counting)
    return calls


def test_the_usual_index_is_proven_in_one_pass(monkeypatch) -> None:
    """Rule: valid UTF-8, no 640-digit run, nesting msgspec accepts in a shallow pass: the rows
    come from that one decode (raw_items' second look at every row is not taken)."""
    calls = _count_raw_items(monkeypatch)
    data = _usual_index('{"session_id": "last", "title": ["not a string"], "session\\u005fid": "dup"}')
    facts = scan.index_facts_of(data)
    assert calls == []
    assert facts["rows"][:2] == [["s0", "chat é🙂 0"], ["s1", "chat é🙂 1"]]
    assert facts["rows"][-1] == ["dup", None]  # a repeated key: the last counts, as in the stdlib's dict
    assert _same(facts, stdlib_index_facts(data))


@pytest.mark.parametrize(
    "extra",
    [
        '{"session_id": "deep", "x": '
        + "[" * (PARSE_DEPTH_LIMIT + 60)
        + "]" * (PARSE_DEPTH_LIMIT + 60)
        + "}",
        '{"session_id": "digits", "n": ' + "7" * 700 + "}",
        '{"session_id": "digits in a string", "t": "' + "7" * 700 + '"}',
    ],
    ids=["nested past the limit", "a 640+ digit integer", "a 640+ digit run in a string"],
)
def test_what_the_one_pass_does_not_prove_goes_the_old_way(monkeypatch, extra: str) -> None:
    """Rule: a row nested past what the shallow pass accepts, or a run of 640+ digits anywhere,
    is not proven by the one pass: raw_items and the exact parse decide, and the facts are the
    stdlib's (the deep row is the stdlib's to refuse or accept)."""
    calls = _count_raw_items(monkeypatch)
    data = _usual_index(extra)
    facts = scan.index_facts_of(data)
    assert calls == [len(data)]
    assert _same(facts, stdlib_index_facts(data))


def test_invalid_utf8_is_the_exact_parse_s(monkeypatch) -> None:
    """Rule: an index that is not valid UTF-8 is never read by msgspec alone (it skips strings
    unlooked-at): the stdlib's verdict, not JSON."""
    calls = _count_raw_items(monkeypatch)
    data = _usual_index().replace(b"chat", b"ch\xfft", 1)
    facts = scan.index_facts_of(data)
    assert facts["json"] is False and facts["rows"] == []
    assert _same(facts, stdlib_index_facts(data))
    assert calls == [len(data)]  # the old way's check refuses it too


def test_with_other_threads_deep_the_rows_come_from_msgspec_not_the_exact_parse(monkeypatch) -> None:
    """Rule: where the one pass may not lower the recursion limit (another thread is deep, as in a
    window worker), raw_items proves the index and msgspec decodes its rows: the exact parse
    (``fast_loads``) is not taken for the usual index."""
    monkeypatch.setattr(scan, "_other_threads_shallow", lambda limit: False)
    calls = _count_raw_items(monkeypatch)

    def no_exact_parse(data):
        raise AssertionError("the exact parse ran on the usual index")

    monkeypatch.setattr(scan, "fast_loads", no_exact_parse)
    data = _usual_index('{"session_id": "last", "title": 7}')
    facts = scan.index_facts_of(data)
    assert calls == [len(data)]
    assert facts["json"] is True and facts["list"] is True and facts["all_objects"] is True
    assert facts["rows"][:2] == [["s0", "chat é🙂 0"], ["s1", "chat é🙂 1"]]
    assert facts["rows"][-1] == ["last", None]
    assert len(facts["rows"]) == 31
