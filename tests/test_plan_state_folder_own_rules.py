"""The write log's default state folder (tests/MUTATION.md, fifth session): the per-user folder
(``$XDG_STATE_HOME/hermes-inspector`` on Linux) is the inspector's own, so ``WriteLog.default()``
sets its mode to 0700 before writing there instead of refusing a folder others could write to
(a folder the user named with HERMES_INSPECTOR_STATE_DIR is left alone, and refused then)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from inspector import portable
from inspector.plan import WriteLog


@pytest.mark.skipif(
    portable.FORCED or not sys.platform.startswith("linux") or portable.euid() is None,
    reason="the XDG rule and POSIX modes are Linux's",
)
def test_default_state_folder_is_made_private_not_refused(tmp_path: Path, monkeypatch) -> None:
    """Rule: own folder (XDG state) that is group-writable: chmod 0700, then the write goes on."""
    monkeypatch.delenv("HERMES_INSPECTOR_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "hermes-inspector"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o775)
    log = WriteLog.default()
    assert log.root == folder
    kept = log.rescue("s1.json", b'{"x": 1}', "displaced")
    assert kept.read_bytes() == b'{"x": 1}'
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
