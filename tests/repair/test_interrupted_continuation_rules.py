"""The interrupted-turn repair's warning about a compression continuation (spec
run-journal-and-promotion §3.1: hermes' cold ``get_session`` skips the repair for a session another
sidecar's head names as its ``parent_session_id``): where the plan looks, rule by rule (seventh
session of issue 21, tests/MUTATION.md).

Rules pinned here:

* the session's own sidecar is not a continuation of itself, even when it names itself as parent,
  and the sidecars sorted after it are still looked at;
* the warning names at most five sources; a sixth continuation does not hide the five;
* an ``_index.json`` that cannot be read (a folder of that name) is no source to the guard; the
  repair itself then fails on it, as hermes' save does, and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.repair.test_interrupted_rules import SID, plan_for, write_sidecar

HISTORY = [
    {"role": "user", "content": "Earlier", "timestamp": 10},
    {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
]
SKIPS = "; hermes' get_session skips the repair for its parent"


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _child(home: Path, name: str) -> None:
    child = {"session_id": name, "parent_session_id": SID, "messages": []}
    (home / "webui" / "sessions" / f"{name}.json").write_text(json.dumps(child, indent=2), encoding="utf-8")


def _continuation_warnings(home: Path) -> list[str]:
    result = plan_for(home)
    assert result.refusal is None
    return [w for w in result.warnings if w.startswith("a compression continuation")]


def test_the_session_naming_itself_is_passed_over_and_the_sidecars_after_it_read(home: Path) -> None:
    """Rule: ``rules_sid.json`` names itself as parent (passed over); ``zz_child.json``, sorted after
    it, is the one continuation."""
    write_sidecar(home, list(HISTORY), parent_session_id=SID)
    assert f'"parent_session_id": "{SID}"' in (home / "webui" / "sessions" / f"{SID}.json").read_text()
    _child(home, "zz_child")
    assert _continuation_warnings(home) == [
        f"a compression continuation of this session exists (zz_child.json){SKIPS}"
    ]


def test_six_continuations_name_the_first_five(home: Path) -> None:
    """Rule: six sidecars name it as parent: the warning names the first five, in file-name order."""
    write_sidecar(home, list(HISTORY))
    for i in range(1, 7):
        _child(home, f"child{i}")
    names = ", ".join(f"child{i}.json" for i in range(1, 6))
    assert _continuation_warnings(home) == [
        f"a compression continuation of this session exists ({names}){SKIPS}"
    ]


def test_an_index_that_cannot_be_read_is_no_source_and_the_repair_then_fails(home: Path) -> None:
    """Rule: ``_index.json`` is a folder: the guard reads no source from it (and does not fail);
    the repair's save then fails on it, and the plan says so and writes nothing."""
    write_sidecar(home, list(HISTORY))
    (home / "webui" / "sessions" / "_index.json").mkdir()
    _child(home, "child1")
    result = plan_for(home)
    assert result.refusal.startswith("hermes' repair fails on this session (NotARegularFile: ")
    assert result.refusal.endswith("_index.json'); it writes nothing")
    assert result.changes == []
