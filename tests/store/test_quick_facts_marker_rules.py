"""Rules of the first open's quick read of a sidecar (``scan.quick_sidecar_facts``, and
``scan.sidecar_facts_many``, which works a list of files out as the folder scan does):

* hermes' interrupted-turn marker search (``_session_has_pending_journal_retry``) walks the
  messages from the newest, passes by a row that is not an object, takes a row with a truthy
  ``_pending_journal_recovery`` as the marker, and stops at the first normal assistant reply (one
  without a truthy ``_error``). The quick read proves a file only where that search surely finds no
  marker; otherwise the full parse (which builds the marker row) answers.
* ``sidecar_facts_many`` answers from the quick read where the quick pass runs, from the full parse
  where it does not (msgspec's nesting limit not lowered), and without the user texts unless asked.
* the index facts of an ``_index.json`` list holding a row that is not an object: every object's
  ``session_id`` (and string ``title``) still listed, ``all_objects`` False.

Expected values written by hand from hermes-webui's ``api/models.py`` / ``api/routes.py``.
"""

from __future__ import annotations

import json

import pytest

from inspector.store import scan
from inspector.store.scan import index_facts_of, quick_sidecar_facts, sidecar_facts_many

PENDING = {"role": "user", "content": "hi", "_pending_journal_recovery": True}


def _sidecar(messages: list) -> bytes:
    return json.dumps({"session_id": "s", "messages": messages}).encode()


def _facts(marker, count: int = 2) -> dict:
    return {
        "error": None,
        "meta": {"session_id": "s", "message_count": count},
        "marker": marker,
        "count": count,
    }


def test_a_non_object_row_is_passed_by_and_the_older_marker_found() -> None:
    data = _sidecar([PENDING, "not an object"])
    assert quick_sidecar_facts(data) is None  # a marker may be found: the full parse answers
    assert sidecar_facts_many([data]) == [_facts(PENDING)]


def test_a_normal_assistant_reply_newest_ends_the_search_and_the_quick_read_proves_the_file() -> None:
    data = _sidecar([PENDING, {"role": "assistant", "content": "ok"}])
    assert quick_sidecar_facts(data) == _facts(None)
    assert sidecar_facts_many([data]) == [_facts(None)]


@pytest.mark.parametrize("error", [True, 1, "boom"])
def test_an_assistant_error_row_does_not_end_the_search(error) -> None:
    data = _sidecar([PENDING, {"role": "assistant", "content": "x", "_error": error}])
    assert quick_sidecar_facts(data) is None
    assert sidecar_facts_many([data]) == [_facts(PENDING)]


@pytest.mark.parametrize("error", [False, 0, "", None])
def test_an_assistant_row_with_a_falsy_error_ends_the_search(error) -> None:
    data = _sidecar([PENDING, {"role": "assistant", "content": "x", "_error": error}])
    assert quick_sidecar_facts(data) == _facts(None)


@pytest.mark.parametrize("role", ["Assistant", "ASSISTANT", "user", "tool"])
def test_only_the_role_assistant_ends_the_search(role: str) -> None:
    data = _sidecar([PENDING, {"role": role, "content": "x"}])
    assert quick_sidecar_facts(data) is None
    assert sidecar_facts_many([data]) == [_facts(PENDING)]


def test_the_facts_carry_no_user_texts_unless_asked() -> None:
    data = _sidecar([{"role": "user", "content": " hi "}, {"role": "assistant", "content": "ok"}])
    assert sidecar_facts_many([data]) == [_facts(None)]
    assert sidecar_facts_many([data], True) == [{**_facts(None), "texts": ["hi"], "texts_error": None}]


def test_many_files_are_answered_by_the_quick_read_where_the_pass_runs_quick(monkeypatch) -> None:
    plain = _sidecar([{"role": "user", "content": "q"}, {"role": "assistant", "content": "ok"}])
    marked = _sidecar([PENDING, "not an object"])
    full = []
    real = scan.sidecar_facts

    def counting(data, **kwargs):
        full.append(data)
        return real(data, **kwargs)

    monkeypatch.setattr(scan, "_shallow_pass", lambda fn: fn(True))
    monkeypatch.setattr(scan, "sidecar_facts", counting)
    assert sidecar_facts_many([plain, marked, plain]) == [_facts(None), _facts(PENDING), _facts(None)]
    assert full == [marked]  # only the file the quick read leaves


def test_many_files_are_parsed_in_full_where_the_pass_is_not_quick(monkeypatch) -> None:
    """msgspec's limit not lowered (another thread deep, or Python 3.12+): no quick read at all."""

    def no_quick(*args, **kwargs):
        raise AssertionError("the quick read ran outside a quick pass")

    monkeypatch.setattr(scan, "_shallow_pass", lambda fn: fn(False))
    monkeypatch.setattr(scan, "quick_sidecar_facts", no_quick)
    plain = _sidecar([{"role": "user", "content": "q"}, {"role": "assistant", "content": "ok"}])
    assert sidecar_facts_many([plain, plain]) == [_facts(None), _facts(None)]


def test_the_index_facts_of_a_list_with_a_row_that_is_not_an_object() -> None:
    data = b'[1, {"session_id": "a"}, "x", {"session_id": "b", "title": "t"}, {"session_id": 3}]'
    assert index_facts_of(data) == {
        "json": True,
        "list": True,
        "all_objects": False,
        "rows": [["a", None], ["b", "t"]],
    }
    facts = index_facts_of(b'[{"session_id": "a"}, null]')
    assert facts["all_objects"] is False and facts["rows"] == [["a", None]]
