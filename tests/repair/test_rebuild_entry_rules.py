"""The index rebuild's public entry points pass on what they are given (tests/MUTATION.md, fifth
session): ``rebuilt_index_bytes`` is the recovery rebuild unless told otherwise (hermes'
``_rebuild_recovery_session_index``: a sidecar holding a JSON value that is not an object makes it
raise; the rebuild inside ``Session.save`` leaves such a sidecar out), fills the ``skipped`` list
it is given, and ``rebuild_index_from_sidecars`` shows every sidecar that parses as an object to
``observe``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.repair import save
from inspector.store.files import FileSnapshot
from tests.recovery_helpers import home_dirs, sidecar, write_json

NOW = 1779900000.0


def _folder(tmp_path: Path) -> Path:
    _home, sessions, _db = home_dirs(tmp_path)
    write_json(sessions / "s00.json", sidecar("s00", 1, updated_at=1.0))
    write_json(sessions / "s01.json", sidecar("s01", 2, updated_at=2.0))
    return sessions


def _ctx(sessions: Path, tmp_path: Path) -> save.SaveContext:
    return save.SaveContext(sessions, FileSnapshot(), NOW, tmp_path)


def test_rebuilt_index_bytes_is_the_recovery_rebuild_by_default(tmp_path: Path) -> None:
    """Rule: default recovery=True: a sidecar holding ``[]`` makes the rebuild raise; with
    recovery=False (the save's rebuild) it is left out and the others' rows are written."""
    sessions = _folder(tmp_path)
    (sessions / "s02.json").write_bytes(b"[]")
    with pytest.raises(save.IndexRebuildError):
        save.rebuilt_index_bytes(_ctx(sessions, tmp_path))
    data = save.rebuilt_index_bytes(_ctx(sessions, tmp_path), recovery=False)
    assert b'"session_id": "s00"' in data
    assert b'"session_id": "s01"' in data
    assert b"s02" not in data


def test_rebuilt_index_bytes_fills_skipped(tmp_path: Path) -> None:
    """Rule: a sidecar that does not parse is left out, and the caller's ``skipped`` says so."""
    sessions = _folder(tmp_path)
    (sessions / "s02.json").write_bytes(b"{not json")
    skipped: list[str] = []
    data = save.rebuilt_index_bytes(_ctx(sessions, tmp_path), None, skipped)
    assert b'"session_id": "s00"' in data
    assert b"s02" not in data
    assert len(skipped) == 1
    assert skipped[0].startswith("s02.json ")


def test_rebuild_index_from_sidecars_shows_each_object_to_observe(tmp_path: Path) -> None:
    """Rule: ``observe(path, parsed)`` sees every sidecar that parses as an object."""
    sessions = _folder(tmp_path)
    (sessions / "s02.json").write_bytes(b"{not json")
    seen: dict[str, object] = {}
    save.rebuild_index_from_sidecars(
        _ctx(sessions, tmp_path), observe=lambda path, obj: seen.__setitem__(path.name, obj["session_id"])
    )
    assert seen == {"s00.json": "s00", "s01.json": "s01"}
