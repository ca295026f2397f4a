"""In the window, a repair that reads or writes through a link leaving the home needs an explicit yes.

The window plans with links followed, so the preview can name their real targets; Write stays
disabled until the user ticks the confirmation (issue 14, class 6).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # headless, even when run on its own
pytest.importorskip("PySide6")

from inspector.gui.preview_dialog import PreviewDialog
from inspector.present.session_data import plan_session_actions
from tests.safety.helpers import demo

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_write_through_a_link_leaving_the_home_waits_for_confirmation(qtbot, tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    elsewhere = tmp_path / "elsewhere"
    d.session_dir.rename(elsewhere)
    d.session_dir.symlink_to(elsewhere, target_is_directory=True)
    plan = plan_session_actions(home, d.sessions["shrunken"], set())["restore-backup"]
    assert plan.changes and plan.refusal is None
    dialog = PreviewDialog(plan)
    qtbot.addWidget(dialog)
    assert str(elsewhere) in dialog.warnings.text()  # the real target, named
    assert dialog.confirm_links is not None and not dialog.write_button.isEnabled()
    dialog.confirm_links.setChecked(True)
    assert dialog.write_button.isEnabled()
    dialog.confirm_links.setChecked(False)
    assert not dialog.write_button.isEnabled()


def test_a_plan_inside_the_home_needs_no_confirmation(qtbot, tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    plan = plan_session_actions(home, d.sessions["shrunken"], set())["restore-backup"]
    dialog = PreviewDialog(plan)
    qtbot.addWidget(dialog)
    assert dialog.confirm_links is None and dialog.write_button.isEnabled()
