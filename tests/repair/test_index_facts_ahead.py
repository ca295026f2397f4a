"""The interrupted-turn plan's index update with its facts found ahead by the forked copy (issue 18:
the 22 MB bench index's round-trip checks, 0.2 s, run on the second core while this process reads
the journal and repairs).

Rules: the plan writes the same bytes whether the copy found the index's splice facts or the save
found them itself; the save uses facts only for the very bytes its snapshot holds (the same sha256:
the copy read the file on its own, and hermes or anyone may have written it in between); a copy that
cannot find them (no index, a folder, an index the splice cannot prove, an error) leaves the save to
find them, with the same result.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from inspector.repair import interrupted, save
from inspector.store import index as index_module
from inspector.store.index_splice import SpliceFacts, splice_facts
from tests.repair.test_continuation_heads_forked import _FailingCopy, _forking
from tests.repair.test_interrupted_rules import SID, plan_for, utc, write_sidecar  # noqa: F401 - utc: autouse

HISTORY = [
    {"role": "user", "content": "Earlier", "timestamp": 10},
    {"role": "assistant", "content": "Earlier answer", "timestamp": 11},
]


def _index_rows() -> list[dict]:
    """Rows as hermes' writer leaves them (keys in ``compact()``'s order), newest first: the session's
    own and three others."""
    rows = [
        {"session_id": "other3", "title": "Third é", "message_count": 4, "updated_at": 1_779_400_300.5},
        {"session_id": SID, "title": "Rules", "message_count": 2, "updated_at": 1_779_400_200.25},
        {"session_id": "other2", "title": "Second", "message_count": 1, "updated_at": 1_779_400_100.0},
        {"session_id": "other1", "title": "First", "message_count": 0, "updated_at": 1_779_400_000.75},
    ]
    return rows


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write_sidecar(home, list(HISTORY))
    sessions = home / "webui" / "sessions"
    for row in _index_rows():
        if row["session_id"] != SID:
            raw = {"session_id": row["session_id"], "title": row["title"], "messages": []}
            (sessions / f"{row['session_id']}.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    (sessions / "_index.json").write_bytes(
        json.dumps(_index_rows(), ensure_ascii=False, indent=2).encode("utf-8")
    )
    return home


def _facts_seen(monkeypatch) -> list:
    """The ``facts`` each splice was given (None: found by the splice itself)."""
    seen: list = []
    real = index_module.index_after_save_spliced

    def recorded(data, new_row, on_disk_ids, facts=None):
        seen.append(facts)
        return real(data, new_row, on_disk_ids, facts)

    monkeypatch.setattr(index_module, "index_after_save_spliced", recorded)
    return seen


def _changes(result) -> dict[str, bytes | None]:
    assert result.refusal is None
    return {c.path.name: c.after for c in result.changes}


def _here(home: Path, monkeypatch) -> dict[str, bytes | None]:
    with monkeypatch.context() as m:
        m.setattr(interrupted.portable, "can_fork", lambda: False)
        return _changes(plan_for(home))


def test_the_copys_facts_give_the_same_bytes(home: Path, monkeypatch) -> None:
    """Rule: the same sidecar and index bytes, the copy's facts used in one plan and not the other."""
    here = _here(home, monkeypatch)
    assert set(here) == {f"{SID}.json", "_index.json"}
    rows = json.loads(here["_index.json"])
    assert [r["session_id"] for r in rows] == [SID, "other3", "other2", "other1"]  # the saved row on top
    _forking(monkeypatch)
    seen = _facts_seen(monkeypatch)
    assert _changes(plan_for(home)) == here
    (facts,) = seen
    assert isinstance(facts, SpliceFacts)
    assert facts.ids == ["other3", SID, "other2", "other1"]
    assert facts.keys == [1_779_400_300.5, 1_779_400_200.25, 1_779_400_100.0, 1_779_400_000.75]


def _with_facts(monkeypatch, make) -> None:
    """The copy's facts replaced by ``make(real facts)``."""
    real = save.index_facts_ahead

    def replaced(session_dir):
        return make(real(session_dir))

    monkeypatch.setattr(interrupted, "index_facts_ahead", replaced)


def _reversed_keys(found: save.IndexFacts) -> SpliceFacts:
    """Facts that sort the other rows oldest first: used, they show in the written index."""
    facts = found.facts
    return replace(facts, keys=[-k for k in facts.keys])


def test_facts_for_other_bytes_are_not_used(home: Path, monkeypatch) -> None:
    """Rule: facts whose sha256 is not the snapshot's index's are ignored (the save finds its own)."""
    here = _here(home, monkeypatch)
    _forking(monkeypatch)
    seen = _facts_seen(monkeypatch)
    _with_facts(monkeypatch, lambda found: save.IndexFacts("0" * 64, _reversed_keys(found)))
    assert _changes(plan_for(home)) == here
    assert seen == [None]


def test_facts_for_the_same_bytes_are_used(home: Path, monkeypatch) -> None:
    """Rule: the sha256 is what lets facts in: wrong facts under the right sha256 show in the index
    (so the test above proves the check, not an unused argument)."""
    _forking(monkeypatch)
    index = home / "webui" / "sessions" / "_index.json"
    sha = hashlib.sha256(index.read_bytes()).hexdigest()
    _with_facts(monkeypatch, lambda found: save.IndexFacts(sha, _reversed_keys(found)))
    rows = json.loads(_changes(plan_for(home))["_index.json"])
    assert [r["session_id"] for r in rows] == [SID, "other1", "other2", "other3"]  # the others oldest first


def test_an_index_changed_after_the_copy_read_it_is_spliced_from_its_own_bytes(
    home: Path, monkeypatch
) -> None:
    """Rule: the copy read the index, then it changed (hermes saved another session): the save's
    snapshot holds the new bytes, whose sha256 differs, so the copy's facts are not used."""
    _forking(monkeypatch)
    index = home / "webui" / "sessions" / "_index.json"
    rows = _index_rows()
    rows[0]["updated_at"] = 1_779_400_000.0  # other3 now the oldest
    newer = json.dumps(sorted(rows, key=lambda r: -r["updated_at"]), ensure_ascii=False, indent=2).encode()
    seen = _facts_seen(monkeypatch)
    # the copy reads the old bytes; the snapshot's first read of the index is the save's, after this
    real_sources = interrupted.SidecarSources

    class ChangedAfterFork(real_sources):
        def index_facts(self):
            found = super().index_facts()
            index.write_bytes(newer)  # hermes' save lands after the copy's read, before the plan's
            return found

    monkeypatch.setattr(interrupted, "SidecarSources", ChangedAfterFork)
    got = json.loads(_changes(plan_for(home))["_index.json"])
    assert seen == [None]
    assert [r["session_id"] for r in got] == [SID, "other2", "other1", "other3"]


@pytest.mark.parametrize("shape", ["missing", "folder", "indent-4", "not-json"])
def test_an_index_the_copy_cannot_take_leaves_the_facts_to_the_save(home: Path, shape: str) -> None:
    """Rule: no facts (None) where the index is missing, unreadable or not one the splice can prove."""
    index = home / "webui" / "sessions" / "_index.json"
    if shape == "missing":
        index.unlink()
    elif shape == "folder":
        index.unlink()
        index.mkdir()
    elif shape == "indent-4":
        index.write_text(json.dumps(_index_rows(), ensure_ascii=False, indent=4), encoding="utf-8")
    else:
        index.write_bytes(b"[\n  {\n")
    assert save.index_facts_ahead(index.parent) is None


def test_the_facts_found_ahead_are_the_splices_own(home: Path) -> None:
    index = home / "webui" / "sessions" / "_index.json"
    data = index.read_bytes()
    found = save.index_facts_ahead(index.parent)
    assert found is not None
    assert found.sha256 == hashlib.sha256(data).hexdigest()
    assert found.facts == splice_facts(data)
    assert found.facts.starts[0] == 4  # after "[\n  "


def test_a_copy_whose_facts_fail_still_gives_the_heads_and_the_same_bytes(home: Path, monkeypatch) -> None:
    """Rule: an error while finding the facts costs only them: no warning lost, the same bytes."""
    here_plan = None
    with monkeypatch.context() as m:
        m.setattr(interrupted.portable, "can_fork", lambda: False)
        here_plan = plan_for(home)
    _forking(monkeypatch)

    def broken(session_dir):
        raise MemoryError("no room")

    monkeypatch.setattr(interrupted, "index_facts_ahead", broken)
    searched_here: list[str] = []
    search = interrupted._sidecar_sources

    def recorded(session_dir, sid, names=None):
        searched_here.append(sid)
        return search(session_dir, sid, names)

    seen = _facts_seen(monkeypatch)
    monkeypatch.setattr(interrupted, "_sidecar_sources", recorded)
    result = plan_for(home)
    assert _changes(result) == _changes(here_plan)
    assert result.warnings == here_plan.warnings
    assert seen == [None] and searched_here == []  # the heads came from the copy


def _write_child(sessions: Path) -> None:
    """A sidecar naming the session as its parent: the heads' search finds it."""
    (sessions / "child1.json").write_text(
        json.dumps({"session_id": "child1", "parent_session_id": SID, "messages": []}, indent=2),
        encoding="utf-8",
    )


def test_the_copys_work_is_the_heads_then_the_facts(home: Path) -> None:
    """Rule (what the copy runs, called here): the heads, then the index's facts."""
    sessions = home / "webui" / "sessions"
    _write_child(sessions)
    names = interrupted.sidecar_names(sessions)
    heads, found = interrupted._heads_and_index_facts(sessions, SID, names)
    assert heads == ["child1.json"]
    assert found == save.index_facts_ahead(sessions)
    assert found is not None and found.facts.ids == ["other3", SID, "other2", "other1"]


def test_the_copys_facts_failing_leave_its_heads(home: Path, monkeypatch) -> None:
    sessions = home / "webui" / "sessions"
    _write_child(sessions)

    def broken(session_dir):
        raise ValueError("no facts")

    monkeypatch.setattr(interrupted, "index_facts_ahead", broken)
    names = interrupted.sidecar_names(sessions)
    assert interrupted._heads_and_index_facts(sessions, SID, names) == (["child1.json"], None)


def test_a_failed_copy_gives_no_facts_and_its_heads_are_searched_here(home: Path, monkeypatch) -> None:
    """Rule: the copy died: the save finds the facts itself, the heads are searched here (the
    continuation's warning still comes), the same bytes."""
    sessions = home / "webui" / "sessions"
    _write_child(sessions)
    here = _here(home, monkeypatch)
    monkeypatch.setattr(interrupted, "PARALLEL_HEADS_MIN", 1)
    monkeypatch.setattr(interrupted.portable, "can_fork", lambda: True)
    monkeypatch.setattr(interrupted, "Forked", _FailingCopy)
    seen = _facts_seen(monkeypatch)
    result = plan_for(home)
    assert _changes(result) == here
    assert seen == [None]
    assert result.warnings[0] == (
        "a compression continuation of this session exists (child1.json); "
        "hermes' get_session skips the repair for its parent"
    )
