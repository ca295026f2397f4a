"""``RepairContext.sidecars_where``: the sidecars an action's ``--all`` looks at (``promote`` and
``recover-journal``'s lists).

Rules pinned here (its docstring; hermes' list of live sidecars is every ``*.json`` not starting
with ``_``, sorted): a sidecar is named when its id is safe (``A-Z a-z 0-9 _ -``), its bytes hold
the needle, it parses, its ``session_id`` is its file name and the predicate holds. Every other
file is passed over and the files after it (in name order) are still looked at: a name that is
not a safe id, bytes without the needle, bytes that are not JSON, a ``session_id`` that is another
name's, a predicate that does not hold.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.recovery_helpers import make_ctx

NEEDLE = b"_pending_journal_recovery"


def _sidecar(sid: str, *, marked: bool, session_id: str | None = None) -> bytes:
    row = {"role": "assistant", "content": "x", "_pending_journal_recovery": marked}
    return json.dumps({"session_id": session_id or sid, "messages": [row]}).encode()


def test_every_file_that_does_not_qualify_is_passed_over_not_the_end(tmp_path: Path) -> None:
    """Rule: each kind of file that is not named is skipped; the later names are still read."""
    sessions = tmp_path / "webui" / "sessions"
    sessions.mkdir(parents=True)
    files = {
        "a.b.json": _sidecar("a.b", marked=True),  # not a safe id (a dot)
        "b1.json": json.dumps({"session_id": "b1", "messages": []}).encode(),  # no needle
        "c1.json": _sidecar("c1", marked=True),  # named
        "d1.json": _sidecar("d1", marked=True, session_id="other"),  # another session's id
        "e1.json": b'{"_pending_journal_recovery": ',  # not JSON
        "f1.json": _sidecar("f1", marked=False),  # the predicate does not hold
        "g1.json": _sidecar("g1", marked=True),  # named
        "_h1.json": _sidecar("_h1", marked=True),  # hermes' own file, not a session
    }
    for name, data in files.items():
        (sessions / name).write_bytes(data)

    def marked(raw: dict) -> bool:
        return any(m.get("_pending_journal_recovery") for m in raw["messages"])

    assert make_ctx(tmp_path).sidecars_where(NEEDLE, marked) == ["c1", "g1"]
