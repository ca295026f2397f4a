"""Which extended attributes a rewritten file keeps, and the fsync of the staged files (mutation testing).

Rules found by mutation testing (tests/MUTATION.md, third session), from the Linux xattr(7) namespaces:
``user.*`` and the POSIX ACLs (``system.posix_acl_access``/``_default``) may be set by the file's
owner; ``trusted.*`` and ``security.*`` need CAP_SYS_ADMIN (root); the SELinux/SMACK labels are the
security policy's to give; any other ``system.*`` name the inspector cannot copy.
"""

from __future__ import annotations

import os
import threading

import pytest

import inspector.plan as planmod
from inspector import portable
from inspector.plan import ApplyError


@pytest.mark.parametrize(
    "name",
    [
        "user.note",
        "system.posix_acl_access",
        "system.posix_acl_default",
        "security.selinux",
        "security.SMACK64",
    ],
)
def test_user_attributes_acls_and_labels_can_always_be_kept(name, monkeypatch):
    """Rule: user.*, both POSIX ACLs and the two security labels raise no warning, root or not."""
    monkeypatch.setattr(portable, "euid", lambda: 1000)
    assert planmod._xattr_problem(name) is None


@pytest.mark.parametrize("name", ["trusted.overlay.origin", "security.ima", "security.capability"])
def test_trusted_and_security_attributes_need_root(name, monkeypatch):
    """Rule: trusted.* and security.* (other than the labels) can be set by root only."""
    monkeypatch.setattr(portable, "euid", lambda: 0)
    assert planmod._xattr_problem(name) is None
    monkeypatch.setattr(portable, "euid", lambda: 1)
    assert planmod._xattr_problem(name) == "only root may set it"
    monkeypatch.setattr(portable, "euid", lambda: 1000)
    assert planmod._xattr_problem(name) == "only root may set it"


@pytest.mark.parametrize("name", ["system.nfs4_acl", "system.sockprotoname", "other.thing"])
def test_other_attributes_cannot_be_copied(name):
    """Rule: any other name: the inspector does not know how to copy it (said in those words)."""
    assert planmod._xattr_problem(name) == "the inspector does not know how to copy it"


def _staged_file(tmp_path):
    path = tmp_path / ".s.json.inspector.tmp.1.1.aaaa"
    path.write_bytes(b"{}")
    return path


def test_an_attribute_the_preview_warned_about_is_skipped_and_the_others_are_still_kept(tmp_path):
    """Rule: an attribute that cannot be set and that the preview named (its problem is not None) is
    left off without refusing the write, and every attribute after it is still copied."""
    path = _staged_file(tmp_path)
    try:
        os.setxattr(path, "user.probe", b"1")
    except OSError:
        pytest.skip("no user extended attributes on this filesystem")
    fd = os.open(path, os.O_RDONLY)
    try:
        planmod._put_xattrs(fd, tmp_path / "s.json", {"system.nonsense": b"x", "user.kept": b"y"})
    finally:
        os.close(fd)
    assert os.getxattr(path, "user.kept") == b"y"
    assert "system.nonsense" not in os.listxattr(path)


def test_an_attribute_the_preview_did_not_warn_about_must_stick(tmp_path, monkeypatch):
    """Rule: a user.* attribute that cannot be set refuses the write, naming it and the file."""
    path = _staged_file(tmp_path)

    def refuse(fd, name, value):
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(os, "setxattr", refuse)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(ApplyError) as caught:
            planmod._put_xattrs(fd, tmp_path / "s.json", {"user.kept": b"y"})
    finally:
        os.close(fd)
    assert str(caught.value) == (
        f"could not keep the extended attribute user.kept of {tmp_path / 's.json'} (Operation not supported); "
        "nothing was written, every file is as it was"
    )


def test_staged_files_are_written_and_fsynced_by_named_worker_threads(tmp_path, monkeypatch):
    """Rule: a write of many files stages each new file's bytes and fsyncs it, on threads named
    ``inspector-stage`` (what a stack dump shows); a deletion stages nothing; every staged file
    holds its bytes when the staging returns."""
    changes = [planmod.FileChange(tmp_path / f"s{i}.json", None, b'{"n": %d}' % i) for i in range(5)]
    gone = tmp_path / "gone.json"
    gone.write_bytes(b"{}")
    changes.append(planmod.FileChange(gone, b"{}", None))
    synced: list[tuple[int, str]] = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append((os.fstat(fd).st_ino, threading.current_thread().name))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    staged, failed = planmod._SideBySide(changes).finish()
    assert failed is None
    assert [c for c, _ in staged] == changes
    assert staged[-1][1] is None
    temps = [tmp for _, tmp in staged[:-1]]
    assert [t.read_bytes() for t in temps] == [b'{"n": %d}' % i for i in range(5)]
    assert sorted(ino for ino, _ in synced) == sorted(t.stat().st_ino for t in temps)
    assert all(name.startswith("inspector-stage_") for _, name in synced), synced
