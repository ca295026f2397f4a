"""Support bundles and repair kits in the window (issue 17), driven as support and the user would."""

from __future__ import annotations

import stat
import tarfile

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector.bundle import make_bundle
from inspector.gui.preview_dialog import PreviewDialog
from inspector.gui.support import BundleSummaryDialog
from inspector.kit import load_kit
from tests.gui.conftest import files_under, open_home, wait_settled


def test_support_opens_a_bundle_saves_a_kit_and_the_user_applies_it(qtbot, window, demo, demo_home, tmp_path):
    sid = demo.sessions["lost_response"]
    sidecar = demo.session_dir / f"{sid}.json"
    bundle, kit = tmp_path / "support.tar.gz", tmp_path / "kit.json"
    make_bundle(demo_home, [sid], bundle)

    # Support: File > Open Bundle... shows it read-only, with a banner and a title saying so.
    window.support.open_bundle_file(bundle)
    qtbot.waitUntil(lambda: window.home is not None and window.home.bundle is not None, timeout=60_000)
    wait_settled(qtbot, window)
    opened = window.support.opened
    assert window.support.banner.isVisible()
    assert "Support bundle (read-only)" in window.support.banner.text()
    assert opened.manifest["made_by"] in window.support.banner.text()
    assert "support bundle" in window.windowTitle() and "read-only" in window.windowTitle()
    assert window.select_session(sid)
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)

    # The preview cannot write into the bundle; it saves a repair kit.
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    dialog = window.preview
    assert not dialog.write_button.isEnabled()
    assert dialog.save_kit_button.isEnabled()
    window.support.save_kit(dialog.plan, window.home, dialog.plan.clock, kit)
    qtbot.waitUntil(kit.exists, timeout=60_000)
    dialog.reject()
    assert load_kit(kit).session_id == sid

    # Opening the user's home removes the unpacked bundle.
    open_home(qtbot, window, demo_home, select=sid)
    assert not opened.root.exists()
    assert not window.support.banner.isVisible()

    # The user: File > Apply Repair Kit... shows the same preview and writes through the usual path.
    before = files_under(demo.home)
    window.support.apply_kit_file(kit)
    qtbot.waitUntil(lambda: isinstance(window.support.dialog, PreviewDialog), timeout=60_000)
    preview = window.support.dialog
    assert preview.write_button.isEnabled(), preview.plan.refusal
    assert "Repair kit: recover-journal" in preview.summary.text()
    qtbot.mouseClick(preview.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    kit_sidecar = next(f for f in load_kit(kit).files if f.path.endswith(f"{sid}.json"))
    assert sidecar.read_bytes() == kit_sidecar.after
    assert files_under(demo.home) != before


def test_a_kit_for_a_changed_chat_is_shown_refused(qtbot, window, demo, demo_home, tmp_path):
    sid = demo.sessions["lost_response"]
    bundle, kit = tmp_path / "support.tar.gz", tmp_path / "kit.json"
    make_bundle(demo_home, [sid], bundle)
    window.support.open_bundle_file(bundle)
    qtbot.waitUntil(lambda: window.home is not None and window.home.bundle is not None, timeout=60_000)
    window.select_session(sid)
    wait_settled(qtbot, window)
    qtbot.waitUntil(
        lambda: isinstance(window.plans, dict) and "recover-journal" in window.plans, timeout=60_000
    )
    window.support.save_kit(
        window.plans["recover-journal"], window.home, window.plans["recover-journal"].clock, kit
    )
    qtbot.waitUntil(kit.exists, timeout=60_000)
    open_home(qtbot, window, demo_home, select=sid)
    sidecar = demo.session_dir / f"{sid}.json"
    sidecar.write_bytes(sidecar.read_bytes().replace(b'"title"', b'"title" ', 1))
    changed = sidecar.read_bytes()
    window.support.apply_kit_file(kit)
    qtbot.waitUntil(lambda: isinstance(window.support.dialog, PreviewDialog), timeout=60_000)
    preview = window.support.dialog
    assert not preview.write_button.isEnabled()
    assert "changed since the bundle was made" in (preview.plan.refusal or "")
    assert sidecar.read_bytes() == changed


def test_save_support_bundle_shows_what_goes_in_then_writes_0600(qtbot, window, demo, demo_home, tmp_path):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    window.support.save_bundle()
    qtbot.waitUntil(lambda: isinstance(window.support.dialog, BundleSummaryDialog), timeout=60_000)
    summary = window.support.dialog
    text = summary.text.toPlainText()
    assert f"session {sid}" in text and "state/sessions/_index.json" in text
    out = tmp_path / "bundle.tar.gz"
    window.support.write_bundle(summary.contents, out)
    qtbot.waitUntil(out.exists, timeout=60_000)
    summary.reject()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with tarfile.open(out, "r:gz") as tar:
        assert f"state/sessions/{sid}.json" in tar.getnames()


@pytest.fixture
def app_state(qapp):
    """run_app styles the whole QApplication; later tests of this process get it back as it was."""
    app = QApplication.instance()
    saved = (app.styleSheet(), app.organizationName(), app.applicationName())
    yield
    app.setStyleSheet(saved[0])
    app.setOrganizationName(saved[1])
    app.setApplicationName(saved[2])


def test_home_option_opens_a_bundle_in_the_window_and_removes_it_after(
    qtbot, tmp_path, demo, demo_home, monkeypatch, app_state
):
    import argparse
    import tempfile

    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QImage

    from inspector.gui.app import run_app

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    sid = demo.sessions["lost_response"]
    bundle = tmp_path / "support.tar.gz"
    make_bundle(demo_home, [sid], bundle)
    shot = tmp_path / "shot.png"
    args = argparse.Namespace(
        home=str(bundle), state_dir=None, state_db=None, demo=False, screenshot=str(shot), select=sid
    )
    assert run_app(args, settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)) == 0
    assert QImage(str(shot)).width() == 1500
    assert [p for p in scratch.iterdir() if p.name.startswith("hermes-inspector-bundle-")] == []


def test_home_option_with_a_hostile_bundle_says_why_and_opens_nothing(qtbot, tmp_path, capsys, app_state):
    import argparse

    from inspector.gui.app import run_app

    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    args = argparse.Namespace(
        home=str(bad), state_dir=None, state_db=None, demo=False, screenshot=None, select=None
    )
    assert run_app(args) == 2
    assert "not a readable .tar.gz" in capsys.readouterr().err
