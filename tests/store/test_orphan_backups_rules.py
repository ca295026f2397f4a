"""Orphan backups (``backup.orphan_backup_paths``, ``backup.eligible_orphans``): which ``*.json.bak``
hermes' startup recovery looks at, and how the list reads the folder (session-recovery §6.2).

Rules pinned here (expected values written out by hand):

* an orphan is a ``<sid>.json.bak`` whose ``<sid>.json`` is missing; a ``_``-prefixed name is never
  one (hermes' own files, e.g. a ``_deleted_webui_sessions.json.bak``), even with its live file missing;
* ``eligible_orphans`` without a snapshot reads through one of its own for the whole list: every
  file is read once, the durable tombstone once for all the orphans (not once per orphan), so the
  list is made from one version of it.
"""

from __future__ import annotations

from collections import Counter

from inspector.store import backup, files
from tests.recovery_helpers import home_dirs, sidecar, write_json


def test_an_underscore_bak_is_never_an_orphan(tmp_path):
    _, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a1.json.bak", sidecar("a1", 2))
    write_json(sessions / "_deleted_webui_sessions.json.bak", {"version": 1, "ids": []})
    write_json(sessions / "_x.json.bak", sidecar("_x", 1))
    write_json(sessions / "b2.json", sidecar("b2", 1))
    write_json(sessions / "b2.json.bak", sidecar("b2", 1))
    assert backup.orphan_backup_paths(sessions) == [sessions / "a1.json.bak"]


def test_eligible_orphans_reads_the_tombstone_once_for_the_list(tmp_path, monkeypatch):
    _, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a1.json.bak", sidecar("a1", 2))
    write_json(sessions / "a2.json.bak", sidecar("a2", 1))
    write_json(sessions / "a3.json.bak", sidecar("a3", 1))
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["a2"]})
    reads: Counter = Counter()
    real = files.read_raw

    def counting(path, *args, **kwargs):
        reads[path.name] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files, "read_raw", counting)
    assert backup.eligible_orphans(sessions, None) == ["a1", "a3"]
    assert reads == {"a1.json.bak": 1, "a2.json.bak": 1, "a3.json.bak": 1, "_deleted_webui_sessions.json": 1}
