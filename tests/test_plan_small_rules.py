"""Small rules of the write path found by mutation testing (tests/MUTATION.md, third session)."""

from __future__ import annotations

import errno
import sys

import pytest

import inspector.plan as planmod


def test_a_pid_past_a_c_int_is_taken_as_alive_and_the_largest_is_asked():
    """Rule: a temp file's pid past 2**31 - 1 cannot be asked about: its file is left alone (alive);
    2**31 - 1 itself is asked, and no process has it (Linux's pid_max is at most 2**22)."""
    assert planmod._pid_alive(2**31) is True
    assert planmod._pid_alive(2**31 - 1) is False


def test_a_lock_holder_is_read_as_ascii_only(tmp_path):
    """Rule: the held lock file holds an ASCII pid and start time; any other bytes are not a holder,
    even digits Python's int() would take (fullwidth digits)."""
    held = tmp_path / "x.lock.held"
    held.write_bytes("１２３ 4.5".encode())
    assert planmod._holder(held) is None
    held.write_bytes(b"123 4.5")
    assert planmod._holder(held) == (123, 4.5)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX's fcntl")
def test_a_system_module_is_imported_by_name_or_none(monkeypatch):
    """Rule: ``_system_module`` gives the named module when the system has it, None when it does not."""
    import fcntl

    monkeypatch.setattr(planmod.portable, "FORCED", False)
    assert planmod._system_module("fcntl") is fcntl
    assert planmod._system_module("no_such_module_of_this_system") is None


def test_the_bytes_of_a_target_that_is_not_a_file_are_refused_in_words(tmp_path) -> None:
    """Rule: reading a write's target that is there but is not a regular file (a folder here)
    raises an OSError that says so: EINVAL, "not a regular file" and the path, the words a
    refusal shows (``_reason``)."""
    folder = tmp_path / "s.json"
    folder.mkdir()
    with pytest.raises(OSError) as caught:
        planmod._current_bytes(folder)
    assert (caught.value.errno, caught.value.strerror, caught.value.filename) == (
        errno.EINVAL,
        "not a regular file",
        str(folder),
    )
    assert planmod._reason(caught.value) == "not a regular file"
    assert planmod._current_bytes(tmp_path / "absent.json") is None
