"""Rule: the write log's folder (``WriteLog._ensure``) is made with its parents, private (0700)
whether the inspector owns it or the user named it, and a named folder others can write to is
refused in words. Expected values written out by hand."""

from __future__ import annotations

import os
import stat

import pytest

from inspector.plan import ApplyError, WriteLog

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


@pytest.mark.parametrize("own_root", [True, False], ids=["own", "named"])
def test_the_folder_is_made_with_its_parents_and_private(tmp_path, own_root) -> None:
    root = tmp_path / "not" / "yet" / "state"
    WriteLog(root, own_root=own_root)._ensure()
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root / "backups").st_mode) == 0o700


def test_a_named_folder_others_can_write_to_is_refused(tmp_path) -> None:
    root = tmp_path / "state"
    root.mkdir()
    os.chmod(root, 0o770)
    with pytest.raises(ApplyError) as caught:
        WriteLog(root, own_root=False)._ensure()
    assert str(caught.value) == f"the state folder {root} can be written by others; nothing was written"
    assert not (root / "backups").exists()
