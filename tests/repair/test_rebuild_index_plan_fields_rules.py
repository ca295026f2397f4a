"""``rebuild_index.plan``: the plan's own fields, written out by hand (tests/MUTATION.md, tenth
session).

Rules pinned here:

* the plan keeps the session id it was asked with (the rebuild is still home-wide, and says so);
* an ``_index.json`` that cannot be read (a folder in its place) refuses the plan in its words,
  with nothing to write;
* the index's change carries the fingerprint of the index as read (its size, mtime and SHA-256)
  and that SHA-256 as its ``sha256_before``.
"""

from __future__ import annotations

import errno
import os

from inspector.repair import rebuild_index
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json

SHA256_OF_EMPTY_LIST = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"  # sha256(b"[]")


def test_the_plan_keeps_the_session_id_it_was_asked_with(tmp_path):
    home, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a.json", sidecar("a", 1, workspace=str(home)))
    p = rebuild_index.plan(make_ctx(home), "abc")
    assert p.session_id == "abc" and p.to_json(diff=False)["session_id"] == "abc"
    assert p.summary[0] == "rebuild-index is home-wide: the whole index is rebuilt"
    assert rebuild_index.plan(make_ctx(home), None).session_id is None


def test_an_index_that_is_a_folder_refuses_the_plan(tmp_path):
    home, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a.json", sidecar("a", 1, workspace=str(home)))
    (sessions / "_index.json").mkdir()
    p = rebuild_index.plan(make_ctx(home), None)
    assert p.refusal == (
        f"cannot read the sessions folder: [Errno {errno.EINVAL}] not a regular file: '{sessions / '_index.json'}'"
    )
    assert p.changes == [] and p.summary == [] and p.is_noop is False


def test_the_change_carries_the_fingerprint_of_the_index_as_read(tmp_path):
    home, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a.json", sidecar("a", 1, workspace=str(home)))
    index = sessions / "_index.json"
    index.write_bytes(b"[]")
    st = os.stat(index)
    p = rebuild_index.plan(make_ctx(home), None)
    (change,) = p.changes
    assert change.before == b"[]"
    assert change.fingerprint is not None
    assert (change.fingerprint.size, change.fingerprint.mtime_ns, change.fingerprint.sha256) == (
        2,
        st.st_mtime_ns,
        SHA256_OF_EMPTY_LIST,
    )
    assert change.sha256_before == SHA256_OF_EMPTY_LIST


def test_a_new_index_has_no_fingerprint(tmp_path):
    home, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a.json", sidecar("a", 1, workspace=str(home)))
    (change,) = rebuild_index.plan(make_ctx(home), None).changes
    assert change.kind == "create" and change.fingerprint is None and change.sha256_before is None
