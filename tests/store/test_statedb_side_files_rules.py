"""``statedb._check_side_files`` (through ``read_schema``): each of ``-journal``, ``-wal`` and ``-shm``
that exists beside the database must be a regular file, whichever of them are missing; one that
cannot be examined keeps the database closed too. Messages written out by hand."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from inspector.store.statedb import StateDbError, read_schema
from tests.recovery_helpers import agent_state_db

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symlink loops are POSIX")


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_a_fifo_after_a_missing_side_file_keeps_the_database_closed(tmp_path: Path, suffix: str) -> None:
    db = tmp_path / "state.db"
    agent_state_db(db)
    os.mkfifo(f"{db}{suffix}")  # no -journal before it
    with pytest.raises(StateDbError) as err:
        read_schema(db)
    assert str(err.value) == (
        f"{db}{suffix} is not a regular file (a FIFO, device or folder): SQLite would block or read it, "
        "so the database is not opened"
    )


def test_a_side_file_that_cannot_be_examined_keeps_the_database_closed(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    agent_state_db(db)
    loop = Path(f"{db}-wal")
    loop.symlink_to(loop)  # stat raises ELOOP
    with pytest.raises(StateDbError) as err:
        read_schema(db)
    assert str(err.value) == (
        f"{loop} cannot be examined (Too many levels of symbolic links); the database is not opened"
    )
