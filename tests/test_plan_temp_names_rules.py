"""The names of the write path's temp files (``plan._temp_prefix``, ``plan._temp_name``).

Found by mutation testing (tests/MUTATION.md, seventeenth session): the 180-byte bound past which a
target's name is shortened in its temp prefix, the room it is shortened to, and the temp name's last
part were not pinned. Expected names written out by hand (the digest with hashlib on the name).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path

import inspector.plan as planmod


def test_a_name_of_180_bytes_is_kept_whole_in_its_temp_prefix():
    """Rule: a target name of up to 180 bytes is kept as it is: ``.<name>.inspector.tmp.``."""
    kept = "a" * 175 + ".json"  # 180 bytes
    assert planmod._temp_prefix(Path("/s") / kept) == "." + kept + ".inspector.tmp."


def test_a_name_past_180_bytes_is_shortened_to_137_in_its_temp_prefix():
    """Rule: a target name of 181 bytes or more is shortened to 137 bytes: its first 120, "~" and
    16 hex digits of the SHA-256 of the whole name."""
    name = "a" * 176 + ".json"  # 181 bytes
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    prefix = planmod._temp_prefix(Path("/s") / name)
    assert prefix == "." + "a" * 120 + "~" + digest + ".inspector.tmp."
    assert len(prefix.encode()) == 1 + 137 + 15


def test_a_temp_name_is_the_prefix_the_pid_the_thread_and_eight_hex_digits():
    """Rule: ``.<name>.inspector.tmp.<pid>.<thread id>.<8 hex digits>``, in the target's folder."""
    target = Path("/s/s1.json")
    temp = planmod._temp_name(target)
    assert temp.parent == Path("/s")
    stem = f".s1.json.inspector.tmp.{os.getpid()}.{threading.get_ident()}."
    assert temp.name.startswith(stem)
    assert re.fullmatch(r"[0-9a-f]{8}", temp.name[len(stem) :])
