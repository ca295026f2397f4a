"""The shared lock folder of the portable lock (``plan._shared_lock_file``): where it is and when it is refused.

Rules found by mutation testing (tests/MUTATION.md, third session): every hermes-inspector of one user
locks a sessions folder through ``<temp folder>/hermes-inspector-locks-<uid>`` (the user name, with
anything but ``A-Z a-z 0-9 _ . -`` made ``_``, where there are no uids; ``user`` when even that is
unknown), a folder made 0700; the lock of a sessions folder is the first 32 hex digits of the
sha256 of its real path, ``.lock``. A lock folder that is not a folder, not the user's own or open to
others is refused (EPERM) rather than used.
"""

from __future__ import annotations

import errno
import getpass
import hashlib
import os
import stat
import tempfile

import pytest

import inspector.plan as planmod
from inspector import portable


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def _key(folder) -> str:
    return hashlib.sha256(os.fsencode(os.path.realpath(folder))).hexdigest()[:32]


def test_the_lock_is_in_the_users_private_folder_named_by_uid(tmp_path, temp_root):
    """Rule: with uids, ``hermes-inspector-locks-<uid>``, made 0700, and a 32-digit key of the real path."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    uid = os.geteuid()
    lock = planmod._shared_lock_file(sessions)
    assert lock == temp_root / f"hermes-inspector-locks-{uid}" / f"{_key(sessions)}.lock"
    assert len(lock.stem) == 32
    st = os.lstat(lock.parent)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == uid
    link = tmp_path / "link"
    link.symlink_to(sessions)
    assert planmod._shared_lock_file(link) == lock  # one lock per real folder


def test_without_uids_the_folder_is_named_by_the_user_name_made_safe(tmp_path, temp_root, monkeypatch):
    """Rule: no uids (Windows): the user name, every character outside A-Z a-z 0-9 _ . - made ``_``."""
    monkeypatch.setattr(portable, "euid", lambda: None)
    monkeypatch.setattr(getpass, "getuser", lambda: "Jo Smith/x.y-z_9")
    lock = planmod._shared_lock_file(tmp_path)
    assert lock.parent == temp_root / "hermes-inspector-locks-Jo_Smith_x.y-z_9"


def test_without_a_user_name_the_folder_is_named_user(tmp_path, temp_root, monkeypatch):
    """Rule: no uid and no user name (getpass raises): ``hermes-inspector-locks-user``."""

    def no_name():
        raise OSError("no user name")

    monkeypatch.setattr(portable, "euid", lambda: None)
    monkeypatch.setattr(getpass, "getuser", no_name)
    assert planmod._shared_lock_file(tmp_path).parent == temp_root / "hermes-inspector-locks-user"


def _refused(tmp_path, locks) -> None:
    with pytest.raises(OSError) as caught:
        planmod._shared_lock_file(tmp_path)
    assert caught.value.errno == errno.EPERM
    assert caught.value.strerror == "the lock folder is not a private folder of yours"
    assert caught.value.filename == str(locks)


def test_a_file_at_the_lock_folders_name_is_refused(tmp_path, temp_root):
    """Rule: not a folder (even a private file of the user's) is refused."""
    locks = temp_root / f"hermes-inspector-locks-{os.geteuid()}"
    locks.write_bytes(b"")
    os.chmod(locks, 0o600)
    _refused(tmp_path, locks)


def test_a_lock_folder_open_to_others_is_refused(tmp_path, temp_root):
    """Rule: a lock folder with any group or other permission bit is refused."""
    locks = temp_root / f"hermes-inspector-locks-{os.geteuid()}"
    locks.mkdir()
    os.chmod(locks, 0o750)
    _refused(tmp_path, locks)


def test_a_lock_folder_of_another_user_is_refused(tmp_path, temp_root):
    """Rule: a private lock folder owned by someone else is refused."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    locks = temp_root / f"hermes-inspector-locks-{os.geteuid()}"
    locks.mkdir(mode=0o700)
    os.chown(locks, 4321, 4321)
    _refused(tmp_path, locks)
