"""Staging one change (``plan._stage_change``): the new bytes get the extended attributes of the
file they replace, or, for a new file, the ones the plan names; and the mode a new file gets comes
from the umask the caller read once for the whole write (0666 minus it, hermes' own)."""

from __future__ import annotations

import os
import stat

import pytest

import inspector.plan as planmod
from inspector.plan import FileChange


def _user_xattrs_or_skip(path) -> None:
    try:
        os.setxattr(path, "user.probe", b"1")
    except (OSError, AttributeError):
        pytest.skip("no user extended attributes on this filesystem")


def test_the_staged_bytes_keep_the_replaced_files_attributes(tmp_path):
    target = tmp_path / "s.json"
    target.write_bytes(b"old")
    _user_xattrs_or_skip(target)
    staged = planmod._stage_change(FileChange(target, b"old", b"new", new_xattrs={"user.other": b"2"}))
    try:
        assert staged.parent == tmp_path and staged.read_bytes() == b"new"
        assert os.getxattr(staged, "user.probe") == b"1"
        assert "user.other" not in os.listxattr(staged)  # a replaced file's own attributes win
    finally:
        staged.unlink()


def test_a_new_file_gets_the_attributes_the_plan_names(tmp_path):
    probe = tmp_path / "probe"
    probe.write_bytes(b"")
    _user_xattrs_or_skip(probe)  # skips before anything is staged
    target = tmp_path / "new.json"
    staged = planmod._stage_change(FileChange(target, None, b"new", new_xattrs={"user.kept": b"y"}))
    try:
        assert os.getxattr(staged, "user.kept") == b"y"
    finally:
        staged.unlink()


def test_a_new_files_mode_comes_from_the_umask_the_caller_read(tmp_path):
    """The write reads the umask once (``current_umask``) and hands it to every staging: a process
    umask changed meanwhile does not count."""
    old = os.umask(0o022)
    try:
        staged = planmod._stage_change(FileChange(tmp_path / "new.json", None, b"x"), umask=0o077)
    finally:
        os.umask(old)
    try:
        assert stat.S_IMODE(staged.stat().st_mode) == 0o600
    finally:
        staged.unlink()
