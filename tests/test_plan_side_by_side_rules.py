"""Staging every change side by side (``plan._SideBySide``).

Rules pinned (its docstring): every change with new bytes is staged (a temp file beside its target,
holding those bytes); a change without new bytes (a deletion) gets None; a change whose staging
failed gets None and leaves nothing, and the first failure *in plan order* is returned with its
error, the later ones only leaving None; nothing raises.
"""

from __future__ import annotations

from pathlib import Path

import inspector.plan as planmod
from inspector.plan import FileChange


def test_each_change_gets_its_staged_file_or_none_and_the_first_failure_in_plan_order(tmp_path: Path) -> None:
    good = FileChange(tmp_path / "a.json", None, b"new a")
    gone = FileChange(tmp_path / "b.json", b"old b", None)
    (tmp_path / "blocker").write_bytes(b"a file where a folder would be")
    first_bad = FileChange(tmp_path / "blocker" / "c.json", None, b"c")
    second_bad = FileChange(tmp_path / "blocker" / "d.json", None, b"d")
    staged, failed = planmod._SideBySide([good, first_bad, gone, second_bad]).finish()
    assert [change for change, _ in staged] == [good, first_bad, gone, second_bad]
    tmp = staged[0][1]
    try:
        assert tmp is not None and tmp.parent == tmp_path and tmp.read_bytes() == b"new a"
        assert [t for _, t in staged[1:]] == [None, None, None]
        assert failed is not None
        path, error = failed
        assert path == tmp_path / "blocker" / "c.json"
        assert isinstance(error, OSError)
        assert (tmp_path / "blocker").read_bytes() == b"a file where a folder would be"
    finally:
        if tmp is not None:
            tmp.unlink()


def test_no_failure_is_none(tmp_path: Path) -> None:
    staged, failed = planmod._SideBySide([FileChange(tmp_path / "a.json", None, b"x")]).finish()
    assert failed is None
    ((_, tmp),) = staged
    assert tmp is not None and tmp.read_bytes() == b"x"
    tmp.unlink()
