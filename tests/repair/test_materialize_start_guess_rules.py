"""``materialize._some_webui_row_lacks_a_sidecar``: the guess, made before the rows are read, of
whether the index rebuild's helpers are worth starting early: True as soon as a ``source='webui'``
id of state.db has no sidecar (an id that is NULL or blank names none), True when state.db cannot be
read (then ``_rows_for`` decides), and asked without waiting on the agent's write lock."""

from __future__ import annotations

from pathlib import Path

from inspector.repair import materialize
from inspector.repair.materialize import _some_webui_row_lacks_a_sidecar
from tests.recovery_helpers import custom_state_db

SESSIONS = "CREATE TABLE sessions (id TEXT, source TEXT)"


def _db(tmp_path: Path, rows: list[dict]) -> Path:
    return custom_state_db(tmp_path / "state.db", SESSIONS, None, rows)


def test_a_webui_id_without_a_sidecar_is_the_only_yes(tmp_path: Path) -> None:
    db = _db(
        tmp_path,
        [
            {"id": "has", "source": "webui"},
            {"id": None, "source": "webui"},
            {"id": "  ", "source": "webui"},
            {"id": "cli-only", "source": "cli"},
        ],
    )
    asked = []

    def exists(sid: str) -> bool:
        asked.append(sid)
        return sid == "has"

    assert _some_webui_row_lacks_a_sidecar(db, exists) is False
    assert asked == ["has"]  # neither a blank id nor a cli row is looked for
    assert _some_webui_row_lacks_a_sidecar(db, lambda sid: False) is True


def test_a_state_db_that_cannot_be_read_answers_yes(tmp_path: Path) -> None:
    garbage = tmp_path / "state.db"
    garbage.write_bytes(b"not a database at all, just text long enough to be read" * 20)
    assert _some_webui_row_lacks_a_sidecar(garbage, lambda sid: True) is True
    assert _some_webui_row_lacks_a_sidecar(tmp_path / "missing.db", lambda sid: True) is True


def test_the_guess_does_not_wait_on_the_agents_lock(tmp_path: Path, monkeypatch) -> None:
    db = _db(tmp_path, [{"id": "has", "source": "webui"}])
    waits = []
    real = materialize.open_readonly
    monkeypatch.setattr(
        materialize, "open_readonly", lambda path, timeout=None: waits.append(timeout) or real(path, timeout)
    )
    assert _some_webui_row_lacks_a_sidecar(db, lambda sid: True) is False
    assert waits == [0.0]
