"""Which dead writers' temp files ``plan.sweep_stale_temps`` removes, and how ``plan._first_prefix``
finds the prefix of a temp name.

Rules found by mutation testing (tests/MUTATION.md, seventeenth session); expected values are
written out by hand:

* every folder of the targets and every entry in it is looked at: a folder that cannot be listed,
  a name that is no temp file, or a dead temp that is no regular file (a folder, a link), is passed
  over and the sweep goes on with the next one;
* a temp of a process that still runs is left alone, and a link named like a dead temp is never
  removed nor followed;
* an error while one entry is handled (here: a write log that cannot be read) leaves that entry
  alone and is not raised;
* with ``whole_folders``, a temp of a name that is no target is checked against the versions
  known for ``<folder>/<name>``; what is rescued is named ``<stamp>-<hex>-swept-<temp name>``;
* ``_first_prefix`` looks at every place the mark is in the name, in order, also at its very
  start, and returns the first (in ``order``) of the prefixes found there.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys

import pytest

from inspector import plan as planmod
from inspector.plan import WriteLog, sweep_stale_temps
from tests.write_path_helpers import dead_pid, rescued

# ---------------------------------------------------------------- sweep_stale_temps


def test_names_that_are_no_temp_files_do_not_end_the_sweep(tmp_path):
    """Rule: an entry that is no temp file of a target is passed over; the dead temps after it are still removed."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    others = [f"s{i}.json" for i in range(8)]
    temps = [f".s1.json.inspector.tmp.{dead}.1.{i:04x}" for i in range(8)]
    for name in others + temps:  # the order os.scandir lists them in is the folder's own
        (folder / name).write_bytes(b"{}")
    assert sweep_stale_temps([folder / "s1.json"]) == 8
    assert sorted(p.name for p in folder.iterdir()) == sorted(others)


def test_a_folder_that_cannot_be_listed_does_not_end_the_sweep(tmp_path):
    """Rule: a target whose folder cannot be listed (it is missing) is passed over; the next folder is swept."""
    gone = tmp_path / "gone"  # never made
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    stale = folder / f".s2.json.inspector.tmp.{dead}.1.aaaa"
    stale.write_bytes(b"{}")
    assert sweep_stale_temps([gone / "s1.json", folder / "s2.json"]) == 1
    assert sorted(p.name for p in folder.iterdir()) == []


def test_a_dead_temp_that_is_a_folder_does_not_end_the_sweep(tmp_path):
    """Rule: a dead temp name that is a folder is left alone and the dead temp files after it are still removed."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    dirs = [f".s1.json.inspector.tmp.{dead}.1.d{i:03x}" for i in range(9)]
    files = [f".s1.json.inspector.tmp.{dead}.1.f{i:03x}" for i in range(8)]
    # made folder, file, folder, ..., file, folder: a folder comes first whether the folder lists
    # its entries in the order they were made or the reverse (and most likely when by a hash)
    (folder / dirs[0]).mkdir()
    for d, f in zip(dirs[1:], files, strict=True):
        (folder / f).write_bytes(b"{}")
        (folder / d).mkdir()
    assert sweep_stale_temps([folder / "s1.json"]) == 8
    assert sorted(p.name for p in folder.iterdir()) == sorted(dirs)


def test_a_temp_of_a_process_that_still_runs_is_left_alone(tmp_path):
    """Rule: a temp file whose writer (another process than this one) still runs is not removed."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        live = folder / f".s1.json.inspector.tmp.{child.pid}.1.aaaa"
        live.write_bytes(b"{}")
        assert sweep_stale_temps([folder / "s1.json"], WriteLog(tmp_path / "state")) == 0
        assert live.read_bytes() == b"{}"
        assert not (tmp_path / "state" / "rescued").exists()
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_a_link_named_like_a_dead_temp_is_neither_removed_nor_followed(tmp_path):
    """Rule: a link named like a dead writer's temp (to a regular file) is no temp file: it and its file stay."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    real = tmp_path / "real.json"
    real.write_bytes(b"private")
    link = folder / f".s1.json.inspector.tmp.{dead}.1.aaaa"
    os.symlink(real, link)
    log = WriteLog(tmp_path / "state")
    assert sweep_stale_temps([folder / "s1.json"], log) == 0
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert real.read_bytes() == b"private"
    assert rescued(log) == {}


def test_an_error_while_an_entry_is_handled_leaves_it_alone_and_is_not_raised(tmp_path):
    """Rule: a write log that cannot be read (writes.jsonl is a folder) leaves the dead temp in place, raising nothing."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    stale = folder / f".s1.json.inspector.tmp.{dead}.1.aaaa"
    stale.write_bytes(b"{}")
    state = tmp_path / "state"
    (state / "writes.jsonl").mkdir(parents=True)  # reading it raises IsADirectoryError (an OSError)
    assert sweep_stale_temps([folder / "s1.json"], WriteLog(state)) == 0
    assert stale.read_bytes() == b"{}"


def test_a_whole_folder_temp_is_checked_against_the_versions_of_its_own_name(tmp_path):
    """Rule: with whole_folders, a dead temp of a name that is no target holding a version known for
    <folder>/<name> is removed without a rescue; one holding other bytes is rescued."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    known_temp = folder / f".side.json.inspector.tmp.{dead}.1.aaaa"
    known_temp.write_bytes(b"v1")
    other_temp = folder / f".side.json.inspector.tmp.{dead}.1.bbbb"
    other_temp.write_bytes(b"v2")
    log = WriteLog(tmp_path / "state")
    known = {str(folder / "side.json"): {hashlib.sha256(b"v1").hexdigest()}}
    removed = sweep_stale_temps([folder / "s1.json"], log, known=known, whole_folders=True)
    assert removed == 2
    assert sorted(p.name for p in folder.iterdir()) == []
    ((name, data),) = rescued(log).items()
    assert name.endswith(f"-swept-.side.json.inspector.tmp.{dead}.1.bbbb")
    assert data == b"v2"


def test_a_rescued_dead_temp_is_named_with_the_reason_swept(tmp_path):
    """Rule: the rescued copy of a dead temp is named <YYYYmmddTHHMMSS>-<8 hex>-swept-<the temp's name>."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    dead = dead_pid()
    stale = folder / f".s1.json.inspector.tmp.{dead}.1.aaaa"
    stale.write_bytes(b"someone else's bytes")
    log = WriteLog(tmp_path / "state")
    assert sweep_stale_temps([folder / "s1.json"], log) == 1
    assert not stale.exists()
    ((name, data),) = rescued(log).items()
    pattern = r"\d{8}T\d{6}-[0-9a-f]{8}-swept-\.s1\.json\.inspector\.tmp\." + str(dead) + r"\.1\.aaaa"
    assert re.fullmatch(pattern, name), name
    assert data == b"someone else's bytes"


# ---------------------------------------------------------------- _first_prefix


def test_the_first_mark_in_a_name_is_looked_at():
    """Rule: a prefix ending at the first mark of a name that holds the mark twice is found."""
    order = {".a.inspector.tmp.": 0}
    assert planmod._first_prefix(".a.inspector.tmp.b.inspector.tmp.1.1.aaaa", order) == ".a.inspector.tmp."


def test_every_mark_in_a_name_is_looked_at_in_turn():
    """Rule: a prefix ending at the middle one of three marks is found."""
    name = ".a.inspector.tmp.b.inspector.tmp.c.inspector.tmp.1.1.aaaa"
    order = {".a.inspector.tmp.b.inspector.tmp.": 0}
    assert planmod._first_prefix(name, order) == ".a.inspector.tmp.b.inspector.tmp."
    order = {".a.inspector.tmp.b.inspector.tmp.c.inspector.tmp.": 0}
    assert planmod._first_prefix(name, order) == ".a.inspector.tmp.b.inspector.tmp.c.inspector.tmp."
    assert planmod._first_prefix(name, {".b.inspector.tmp.": 0}) is None


def test_a_name_starting_with_the_mark_is_looked_at_past_it():
    """Rule: the temp of target "inspector.tmp.x" (its name starts with the mark) is found by its prefix."""
    order = {".inspector.tmp.x.inspector.tmp.": 0}
    name = ".inspector.tmp.x.inspector.tmp.1.1.aaaa"
    assert planmod._first_prefix(name, order) == ".inspector.tmp.x.inspector.tmp."
    assert planmod._first_prefix(".inspector.tmp.1.1.aaaa", {".inspector.tmp.": 0}) == ".inspector.tmp."


def test_adjacent_marks_are_each_looked_at():
    """Rule: marks sharing their dot (".inspector.tmp.inspector.tmp.") are both looked at."""
    name = ".inspector.tmp.inspector.tmp.1.1.aaaa"
    assert (
        planmod._first_prefix(name, {".inspector.tmp.inspector.tmp.": 0}) == ".inspector.tmp.inspector.tmp."
    )


def test_of_two_prefixes_in_a_name_the_first_in_order_wins():
    """Rule: when a name starts with two of the prefixes, the one first in ``order`` is returned."""
    name = ".a.inspector.tmp.b.inspector.tmp.1.1.aaaa"
    short, long = ".a.inspector.tmp.", ".a.inspector.tmp.b.inspector.tmp."
    assert planmod._first_prefix(name, {short: 0, long: 1}) == short
    assert planmod._first_prefix(name, {long: 0, short: 1}) == long
