"""GUI test helpers: settings in a temp folder, a demo home, a window that has finished loading."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from inspector.demo import DemoHome, build_demo_home
from inspector.gui.main_window import MainWindow
from inspector.home import Home, locate_home

LOAD_TIMEOUT_MS = 30_000
# Qt's offscreen platform (the headless test platform) warns on every top-level window whose
# layout has size constraints; no real platform does. Every other Qt warning still fails.
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/gui/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def _settings_in_tmp(qapp, tmp_path_factory):
    """No test reads or writes the user's real QSettings."""
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))


@pytest.fixture
def settings(tmp_path) -> QSettings:
    return QSettings(str(tmp_path / "inspector.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def demo(tmp_path) -> DemoHome:
    return build_demo_home(tmp_path / "demo-home", now=time.time())


@pytest.fixture
def demo_home(demo) -> Home:
    return locate_home(demo.home, None, None)


@pytest.fixture
def window(qtbot, settings):
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.resize(1500, 900)
    w.show()
    yield w
    w.runner.cancel_all()
    w.runner.wait(10_000)


def wait_settled(qtbot, window: MainWindow, timeout: int = LOAD_TIMEOUT_MS) -> None:
    """Wait until nothing is loading and the requested session is shown."""
    qtbot.waitUntil(window.is_settled, timeout=timeout)


def open_home(qtbot, window: MainWindow, home: Home, select: str | None = None) -> None:
    window.open_home(home, select=select, remember=False)
    wait_settled(qtbot, window)
    if select is not None:
        assert window.data is not None and window.data.session_id == select


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def kept_plan(summary):
    """The plan a preview shows, with its bytes, as the worker keeps it (the window holds only
    its summary: issue 15)."""
    from inspector.jobs.plans import load

    return summary.local if summary.local is not None else load(summary.handle)
