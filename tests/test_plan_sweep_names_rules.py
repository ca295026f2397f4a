"""Two checks of the write path on names and displaced files (``plan.sweep_stale_temps`` with
``whole_folders``, ``plan._displaced_before``).

Rules pinned here (expected values written out by hand):

* with ``whole_folders``, a dead process's temp file ``.<name>.inspector.tmp.<pid>.<tid>.<hex>`` is
  swept for any name of one character or more, also a name that itself starts with
  ``inspector.tmp.`` (the mark is looked for after the leading dot);
* what a swap moved aside is the version checked only if it is that version's bytes, or it is
  gone (hermes' sweep of ``*.tmp.*``); a link or a folder there is not (the swap is refused as a
  race).
"""

from __future__ import annotations

import os

from inspector import plan as planmod
from inspector.plan import WriteLog, sweep_stale_temps
from tests.write_path_helpers import dead_pid


def test_a_dead_writers_temp_is_swept_for_a_one_character_name(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    stale = folder / f".x.inspector.tmp.{dead}.1.aaaa"
    stale.write_bytes(b"{}")
    assert sweep_stale_temps([folder / "s1.json"], WriteLog(tmp_path / "state"), whole_folders=True) == 1
    assert not stale.exists()


def test_a_dead_writers_temp_is_swept_for_a_name_starting_with_the_mark(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    stale = folder / f".inspector.tmp.x.inspector.tmp.{dead}.1.aaaa"  # the temp of "inspector.tmp.x"
    stale.write_bytes(b"{}")
    assert sweep_stale_temps([folder / "s1.json"], WriteLog(tmp_path / "state"), whole_folders=True) == 1
    assert not stale.exists()


def test_what_was_moved_aside_is_the_version_checked_only_with_its_bytes_or_gone(tmp_path):
    aside = tmp_path / ".s1.json.inspector.tmp.1.1.aaaa.old"
    assert planmod._displaced_before(aside, b"v1") is True  # gone: hermes' sweep took it
    aside.write_bytes(b"v1")
    assert planmod._displaced_before(aside, b"v1") is True
    assert planmod._displaced_before(aside, b"v2") is False
    aside.unlink()
    os.symlink(tmp_path / "elsewhere", aside)  # a link (dangling) is not a version of the file
    assert planmod._displaced_before(aside, b"v1") is False
    aside.unlink()
    aside.mkdir()
    assert planmod._displaced_before(aside, b"v1") is False
