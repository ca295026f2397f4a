"""Rule: the preview's warnings about what a rewritten file cannot keep (``plan.attribute_warnings``)
in their words: attributes that cannot be read (and the files after it still looked at), no warning
for a file that is removed, and none about the owner for root. Expected texts written out by hand."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector import portable
from inspector.plan import FileChange, Plan


def _file(path: Path, data: bytes = b"{}\n") -> FileChange:
    path.write_bytes(data)
    return FileChange(path=path, before=data, after=b'{"x": 1}\n')


def _owned_by_someone_else(c: FileChange) -> os.stat_result:
    """``c``'s file given to user 1234 when the tests run as root (else it is the user's own, not
    root's); its stat."""
    if os.geteuid() == 0:
        os.chown(c.path, 1234, -1)
    return os.stat(c.path)


def test_attributes_that_cannot_be_read_are_named_and_the_next_file_is_still_looked_at(
    tmp_path, monkeypatch
) -> None:
    a = _file(tmp_path / "a.json")
    b = _file(tmp_path / "b.json")
    os.link(b.path, tmp_path / "b-link.json")
    real = planmod.read_xattrs

    def reading(path):
        if path == a.path:
            raise OSError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(planmod, "read_xattrs", reading)
    monkeypatch.setattr(portable, "euid", lambda: None)  # owners aside (as on Windows)
    assert planmod.attribute_warnings(Plan("restore", "a", [a, b])) == [
        f"{a.path}: its extended attributes cannot be read (Permission denied); the write will be "
        "refused unless they can be copied to the rewritten file",
        f"{b.path} has 2 hard links; the rewritten file is a new file, the other names keep the old bytes",
    ]


def test_a_file_that_is_removed_gets_no_warning(tmp_path, monkeypatch) -> None:
    """A removed file keeps nothing: its hard links or owner are not the preview's concern."""
    path = tmp_path / "gone.json"
    path.write_bytes(b"{}\n")
    os.link(path, tmp_path / "gone-link.json")
    monkeypatch.setattr(portable, "euid", lambda: None)
    removal = FileChange(path=path, before=b"{}\n", after=None)
    assert planmod.attribute_warnings(Plan("restore", "gone", [removal])) == []


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_root_gets_no_warning_about_the_owner(tmp_path, monkeypatch) -> None:
    """Root's rewritten file keeps the old owner (it may set it), so the preview says nothing about
    one, whoever owns the file (here not root)."""
    c = _file(tmp_path / "s.json")
    assert _owned_by_someone_else(c).st_uid != 0
    monkeypatch.setattr(portable, "euid", lambda: 0)
    assert planmod.attribute_warnings(Plan("restore", "s", [c])) == []


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_a_user_who_does_not_own_the_file_is_told_who_will_own_the_rewritten_one(
    tmp_path, monkeypatch
) -> None:
    """Any user but root (here user 1) rewriting a file another user owns is told the rewritten
    file will be theirs, with both user ids."""
    c = _file(tmp_path / "s.json")
    owner = os.stat(c.path).st_uid
    assert owner != 1
    monkeypatch.setattr(portable, "euid", lambda: 1)
    assert planmod.attribute_warnings(Plan("restore", "s", [c])) == [
        f"{c.path} belongs to user {owner}; the rewritten file will belong to you (user 1); run the "
        "repair as that user to keep its owner"
    ]


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_a_group_the_user_is_not_in_is_named_and_root_is_not_told(tmp_path, monkeypatch) -> None:
    """The owner of a file whose group the user is not in (here: their group is 999 and they are in
    no other) is told the rewritten file will belong to their own group; root, who may keep any
    group, is not."""
    c = _file(tmp_path / "s.json")
    st = _owned_by_someone_else(c)  # whose owner then rewrites it
    monkeypatch.setattr(os, "getegid", lambda: 999)
    monkeypatch.setattr(os, "getgroups", lambda: [])
    assert st.st_gid != 999 and st.st_uid != 0
    monkeypatch.setattr(portable, "euid", lambda: st.st_uid)  # the file's owner rewrites it
    assert planmod.attribute_warnings(Plan("restore", "s", [c])) == [
        f"{c.path} belongs to group {st.st_gid}, which you are not in; the rewritten file will belong "
        "to your group (999)"
    ]
    monkeypatch.setattr(portable, "euid", lambda: 0)
    assert planmod.attribute_warnings(Plan("restore", "s", [c])) == []


def test_attributes_that_cannot_be_copied_are_named_in_order(tmp_path, monkeypatch) -> None:
    """Attributes the inspector cannot put on a new file are named, sorted, each with why."""
    c = _file(tmp_path / "s.json")
    monkeypatch.setattr(planmod, "read_xattrs", lambda path: {"z.odd": b"1", "user.ok": b"2", "a.odd": b"3"})
    monkeypatch.setattr(portable, "euid", lambda: None)
    assert planmod.attribute_warnings(Plan("restore", "s", [c])) == [
        f"{c.path}: the extended attribute(s) a.odd (the inspector does not know how to copy it), "
        "z.odd (the inspector does not know how to copy it) cannot be copied to the rewritten file; "
        "it will not have them"
    ]
