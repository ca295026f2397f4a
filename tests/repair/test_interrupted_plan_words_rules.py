"""The interrupted-turn repair's own words around hermes' repair: the keys hermes' save drops, and
the refusal when the agent's core transcript is over the reader's size limit."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.store import files as filesmod
from tests.repair.test_interrupted_rules import (
    HISTORY,
    SID,
    plan_for,
    write_core,
    write_journal,
    write_sidecar,
)


def _add_keys(home: Path, **extra) -> None:
    path = home / "webui" / "sessions" / f"{SID}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(extra)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def test_the_keys_hermes_save_drops_are_named_in_file_order(tmp_path: Path) -> None:
    """Two keys hermes' Session does not know: one warning names both, joined by ", "."""
    home = tmp_path / "home"
    write_sidecar(home, list(HISTORY))
    _add_keys(home, zz_custom=1, aa_note="kept by no one")
    write_journal(home, [("token", {"text": "Partial answer."})])
    result = plan_for(home)
    assert result.refusal is None and result.result == {"hermes_return": True}
    assert result.warnings[-1] == "hermes' save drops keys it does not know: zz_custom, aa_note"
    (sidecar,) = [c for c in result.changes if c.path.name == f"{SID}.json"]
    assert b"zz_custom" not in sidecar.after and b"aa_note" not in sidecar.after


def test_a_core_transcript_over_the_size_limit_is_a_refusal_in_words(tmp_path: Path, monkeypatch) -> None:
    """The core transcript is not loaded: what hermes would do is unknown, so nothing is planned."""
    home = tmp_path / "home"
    write_sidecar(home, [])
    write_core(home, list(HISTORY))
    write_journal(home, [("token", {"text": "Partial answer."})])
    core = home / "sessions" / f"session_{SID}.json"
    real = filesmod.FileSnapshot.read

    def read(self, path):
        if path == core:
            raise filesmod.TooLargeToLoad(path, 200 << 20, filesmod.MAX_FILE_BYTES)
        return real(self, path)

    monkeypatch.setattr(filesmod.FileSnapshot, "read", read)
    result = plan_for(home)
    assert result.changes == []
    assert result.refusal == (
        f"{core} is not loaded (too large to load safely (200.0 MB; the limit is 128.0 MB)): "
        "what hermes' repair would do with it is unknown, so nothing is written"
    )


def test_no_pending_prompt_gives_no_guard_warning(tmp_path: Path) -> None:
    """No pending prompt: hermes' repair does nothing, so nothing is said about when hermes would run it
    (here the empty active_stream_id would otherwise be named)."""
    home = tmp_path / "home"
    write_sidecar(home, list(HISTORY), pending_user_message=None, active_stream_id=None)
    result = plan_for(home)
    assert result.refusal is None and result.changes == []
    assert result.result == {"hermes_return": False}
    assert result.warnings == []
