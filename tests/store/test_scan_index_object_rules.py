"""``SessionDirScan.index_object``: the scan's one parse of ``_index.json``.

Rules pinned here (its docstring; the values are those of Python's ``json.loads``, written out):

* a readable index that is JSON is ``(the parsed value, True)``, parsed once per scan (the same
  object again);
* a missing index, one that is not JSON, and one that is not UTF-8 are ``(None, False)``;
* ``index_facts`` after it reads the parsed value: the same facts as a scan that never parsed it
  (``json`` / ``list`` / ``all_objects`` / the object rows' ``[session_id, title or None]``).
"""

from __future__ import annotations

from pathlib import Path

from inspector.store.scan import SessionDirScan

INDEX = b'[{"session_id":"a","title":"T"},{"session_id":"b","title":3},7]'


def _folder(tmp_path: Path, data: bytes | None) -> Path:
    if data is not None:
        (tmp_path / "_index.json").write_bytes(data)
    return tmp_path


def test_a_json_index_is_its_value_and_true_parsed_once(tmp_path: Path) -> None:
    """Rule: (parsed, True), and the same object on the second call."""
    scan = SessionDirScan(_folder(tmp_path, INDEX))
    got = scan.index_object()
    assert got == ([{"session_id": "a", "title": "T"}, {"session_id": "b", "title": 3}, 7], True)
    assert scan.index_object()[0] is got[0]


def test_a_missing_index_is_none_and_false(tmp_path: Path) -> None:
    """Rule: no ``_index.json`` is (None, False)."""
    assert SessionDirScan(_folder(tmp_path, None)).index_object() == (None, False)


def test_an_index_that_is_not_json_is_none_and_false(tmp_path: Path) -> None:
    """Rule: text json.loads rejects is (None, False)."""
    assert SessionDirScan(_folder(tmp_path, b"[1,")).index_object() == (None, False)


def test_an_index_that_is_not_utf8_is_none_and_false(tmp_path: Path) -> None:
    """Rule: bytes that do not decode as UTF-8 are (None, False)."""
    assert SessionDirScan(_folder(tmp_path, b'["\xff"]')).index_object() == (None, False)


def test_facts_after_the_parse_are_those_of_a_scan_that_never_parsed(tmp_path: Path) -> None:
    """Rule: index_facts reads index_object's value; the facts do not depend on who parsed."""
    folder = _folder(tmp_path, INDEX)
    want = {"json": True, "list": True, "all_objects": False, "rows": [["a", "T"], ["b", None]]}
    scan = SessionDirScan(folder)
    scan.index_object()
    assert scan.index_facts() == want
    assert SessionDirScan(folder).index_facts() == want


def test_facts_of_a_missing_index_after_the_parse_are_none(tmp_path: Path) -> None:
    """Rule: a missing index has no facts, whether or not it was parsed first."""
    scan = SessionDirScan(_folder(tmp_path, None))
    scan.index_object()
    assert scan.index_facts() is None


def test_facts_of_an_index_that_is_not_json_after_the_parse(tmp_path: Path) -> None:
    """Rule: an index that is not JSON is no JSON, no list, no rows."""
    want = {"json": False, "list": False, "all_objects": True, "rows": []}
    scan = SessionDirScan(_folder(tmp_path, b"[1,"))
    scan.index_object()
    assert scan.index_facts() == want
