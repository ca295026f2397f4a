"""The History dialog works out a past write's diff off the GUI thread (issue 15: a big diff
never stalls the window), shows the diff of the row selected last, and drops one still coming
when it closes."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from inspector.gui import history_dialog
from inspector.gui.history_dialog import (
    DIFF_CHANNEL,
    DIFF_PENDING,
    GUI_DIFF_BYTES,
    HistoryDialog,
    record_text,
)
from inspector.gui.workers import TaskRunner
from inspector.history import write_diff
from inspector.plan import WriteRecord


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(tmp: Path, name: str, before: bytes, after: bytes, when: float) -> WriteRecord:
    """A logged write of one sidecar: the file holds ``after``, its backup ``before``."""
    sessions = tmp / "home" / "webui" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    target = sessions / f"{name}.json"
    target.write_bytes(after)
    backup = tmp / "state" / "backups" / name / f"{name}.json"
    backup.parent.mkdir(parents=True, exist_ok=True)
    backup.write_bytes(before)
    return WriteRecord(
        write_id=f"w-{name}",
        time=when,
        action="restore-backup",
        session_id=name,
        files=[
            {
                "kind": "sidecar",
                "path": str(target),
                "sha256_before": _sha(before),
                "sha256_after": _sha(after),
                "backup": str(backup),
            }
        ],
    )


def _lines(prefix: str, n: int) -> bytes:
    return "".join(f'  "{prefix} line {i}",\n' for i in range(n)).encode()


def _dialog(qtbot, records, tmp_path, runner=None) -> HistoryDialog:
    dialog = HistoryDialog(
        records, str(tmp_path / "state" / "writes.jsonl"), str(tmp_path / "state" / "backups"), runner=runner
    )
    qtbot.addWidget(dialog)
    return dialog


def test_the_diff_of_a_selected_write_comes_from_a_worker_and_says_what_the_write_changed(qtbot, tmp_path):
    """Rule: selecting a write shows its record at once and the diff when the worker has it; the
    text is what write_diff gives (the same as when the dialog worked it out on the GUI thread)."""
    rec = _write(tmp_path, "a", _lines("old", 50), _lines("new", 50), time.time())
    dialog = _dialog(qtbot, [rec], tmp_path)
    text = dialog.detail.toPlainText()
    assert rec.write_id in text and DIFF_PENDING in text and "What this write changed:" not in text
    assert dialog.diff_shown is None and dialog.runner.is_busy(DIFF_CHANNEL)
    qtbot.waitUntil(lambda: dialog.diff_shown == rec.write_id, timeout=60_000)
    backup = f"{tmp_path / 'state' / 'backups'}/{rec.write_id}"
    expected = record_text(rec, backup, None, write_diff(rec, [rec], max_bytes=GUI_DIFF_BYTES))
    assert dialog.detail.toPlainText() == expected
    assert '+  "new line 7",' in expected and '-  "old line 7",' in expected


def test_the_newest_selection_wins(qtbot, tmp_path):
    """Rule: moving to another row while a diff is worked out shows the other row's diff, never a late one."""
    now = time.time()
    first = _write(tmp_path, "first", _lines("first-old", 20), _lines("first-new", 20), now - 10)
    second = _write(tmp_path, "second", _lines("second-old", 20), _lines("second-new", 20), now)
    runner = TaskRunner()
    dialog = _dialog(qtbot, [first, second], tmp_path, runner)  # newest first: "second" is row 0
    assert dialog.model.record(0) is second
    dialog.table.selectRow(1)  # the first row's diff is still on its way
    qtbot.waitUntil(lambda: not runner.is_busy(), timeout=60_000)
    assert dialog.diff_shown == first.write_id
    text = dialog.detail.toPlainText()
    assert "first-new line 3" in text and "second-new" not in text


def test_closing_the_dialog_drops_a_diff_still_coming(qtbot, tmp_path):
    """Rule: a closed dialog gets no late diff (its channel is cancelled: the runner drops the result)."""
    rec = _write(tmp_path, "a", _lines("old", 20), _lines("new", 20), time.time())
    runner = TaskRunner()
    dialog = _dialog(qtbot, [rec], tmp_path, runner)
    assert runner.is_busy(DIFF_CHANNEL)
    dialog.reject()
    assert not runner.is_busy(DIFF_CHANNEL)
    runner.wait(30_000)
    qtbot.wait(50)
    assert dialog.diff_shown is None and DIFF_PENDING in dialog.detail.toPlainText()


def test_a_diff_that_cannot_be_worked_out_is_said_in_the_detail_pane(qtbot, tmp_path, monkeypatch):
    """Rule: a failing diff leaves the record shown, with the reason instead of the diff."""
    monkeypatch.setenv("HERMES_INSPECTOR_NO_SUBPROCESS", "1")  # the job runs here, so the patch applies

    def broken(rec, records, max_bytes, check):
        raise OSError("the backups folder went away")

    monkeypatch.setattr(history_dialog, "write_diff", broken)
    rec = _write(tmp_path, "a", b"{}\n", b'{"a": 1}\n', time.time())
    dialog = _dialog(qtbot, [rec], tmp_path)
    qtbot.waitUntil(lambda: dialog.diff_shown == rec.write_id, timeout=60_000)
    text = dialog.detail.toPlainText()
    assert rec.write_id in text and "The diff could not be worked out" in text
    assert "the backups folder went away" in text and DIFF_PENDING not in text
