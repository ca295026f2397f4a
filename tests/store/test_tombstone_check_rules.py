"""``tombstone.durable_tombstone_check``: hermes' "durably deleted" answer for many ids, the tombstone
read once (session-recovery §3.2: a chat is deleted when its id is in ``_deleted_webui_sessions.json``
and its ``<sid>.json`` is absent).

Rules pinned here (expected values written out by hand):

* an id in the tombstone whose sidecar is absent is deleted; an id not in it is not;
* an id whose sidecar exists is never deleted, even when the tombstone lists it;
* a blank id is never deleted;
* the ids are ``str(value).strip()`` of the list's values (``" b2 "`` is ``b2``);
* the tombstone is read through the snapshot given: the version the snapshot read first is the
  one that counts (a tombstone rewritten since is not seen), and it is read once for every id.
"""

from __future__ import annotations

import json

from inspector.store.files import FileSnapshot
from inspector.store.tombstone import TOMBSTONE_NAME, durable_tombstone_check


def _tombstone(folder, ids) -> None:
    (folder / TOMBSTONE_NAME).write_text(json.dumps({"version": 1, "ids": ids}), encoding="utf-8")


def test_a_listed_id_without_its_sidecar_is_deleted_and_others_are_not(tmp_path):
    _tombstone(tmp_path, ["a1", " b2 "])
    check = durable_tombstone_check(tmp_path, FileSnapshot())
    assert [check(sid) for sid in ("a1", "b2", "c3")] == [True, True, False]


def test_a_listed_id_whose_sidecar_exists_is_not_deleted(tmp_path):
    _tombstone(tmp_path, ["a1", "b2"])
    (tmp_path / "a1.json").write_text("{}", encoding="utf-8")
    check = durable_tombstone_check(tmp_path, FileSnapshot())
    assert (check("a1"), check("b2")) == (False, True)


def test_a_blank_id_is_never_deleted(tmp_path):
    _tombstone(tmp_path, ["", "a1"])
    assert durable_tombstone_check(tmp_path, FileSnapshot())("") is False


def test_the_tombstone_is_the_snapshots_version_read_once(tmp_path):
    _tombstone(tmp_path, ["a1"])
    snapshot = FileSnapshot()
    assert snapshot.read(tmp_path / TOMBSTONE_NAME) is not None  # the plan read it first
    _tombstone(tmp_path, ["b2"])  # rewritten since: not this plan's version
    check = durable_tombstone_check(tmp_path, snapshot)
    assert (check("a1"), check("b2")) == (True, False)
    asked = [p.name for p in snapshot.asked]
    assert asked == [TOMBSTONE_NAME, TOMBSTONE_NAME]  # the plan's read, then the check's one read
