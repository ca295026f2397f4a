"""``plan.read_xattrs``, rule by rule (found by mutation testing, eighteenth session: the write path's
tests reach it only on files without attributes, or with it replaced by a stand-in).

The attributes of the path itself, never of what a link points at; "no attributes here" (the system
or file system has none, or one vanished between the listing and its read) is {} or a skipped name;
any other error is raised.
"""

from __future__ import annotations

import errno
import os

import pytest

import inspector.plan as planmod

pytestmark = pytest.mark.skipif(not hasattr(os, "setxattr"), reason="needs extended attributes")


def _with_attribute(path):
    path.write_bytes(b"x")
    try:
        os.setxattr(path, "user.kept", b"value")
    except OSError as exc:  # a file system without user attributes
        pytest.skip(f"user attributes not supported here: {exc}")
    return path


def test_the_attributes_of_a_file_are_read(tmp_path):
    target = _with_attribute(tmp_path / "target")
    assert planmod.read_xattrs(target) == {"user.kept": b"value"}


def test_a_link_is_read_itself_not_what_it_points_at(tmp_path):
    target = _with_attribute(tmp_path / "target")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert planmod.read_xattrs(link) == {}


def test_a_links_own_attributes_are_listed_and_read_on_the_link(tmp_path):
    """A link can hold attributes of its own (``trusted.*``, set by root): both the listing and each
    read are of the link, so neither the target's names nor its values come in."""
    target = _with_attribute(tmp_path / "target")
    link = tmp_path / "link"
    link.symlink_to(target)
    try:
        os.setxattr(link, "trusted.own", b"mine", follow_symlinks=False)
    except OSError as exc:  # not root, or a file system without trusted attributes
        pytest.skip(f"cannot give a link attributes here: {exc}")
    assert planmod.read_xattrs(link) == {"trusted.own": b"mine"}


def test_a_missing_file_is_an_error_not_a_file_without_attributes(tmp_path):
    with pytest.raises(FileNotFoundError):
        planmod.read_xattrs(tmp_path / "missing")


def test_a_file_system_without_attributes_gives_none(tmp_path, monkeypatch):
    def listxattr(path, *, follow_symlinks=True):
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(planmod.os, "listxattr", listxattr)
    assert planmod.read_xattrs(tmp_path) == {}


def test_an_attribute_gone_before_it_is_read_is_left_out_and_another_error_raised(tmp_path, monkeypatch):
    target = _with_attribute(tmp_path / "target")
    os.setxattr(target, "user.gone", b"soon")
    real = os.getxattr

    def getxattr(path, name, *, follow_symlinks=True):
        if name == "user.gone":
            raise OSError(errno.ENODATA, "No data available")
        return real(path, name, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(planmod.os, "getxattr", getxattr)
    assert planmod.read_xattrs(target) == {"user.kept": b"value"}

    def failing(path, name, *, follow_symlinks=True):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(planmod.os, "getxattr", failing)
    with pytest.raises(OSError) as info:
        planmod.read_xattrs(target)
    assert info.value.errno == errno.EIO
