"""Start the window: ``hermes-inspector`` with no command.

``--home``/``--state-dir``/``--state-db`` choose the home (default: the discovered one),
``--demo`` builds a demo home in a temporary folder, ``--screenshot FILE.png`` renders the
window once everything is loaded (after selecting ``--select SESSION_ID`` when given), saves
the picture and exits.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSettings, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from inspector import log
from inspector.bundle import BundleError, open_bundle
from inspector.gui.main_window import MainWindow
from inspector.gui.resources import icon, stylesheet
from inspector.home import Home, locate_home, looks_like_bundle
from inspector.jobs.offload import prestart
from inspector.log import get_logger

ORGANIZATION = "hermes-inspector"
APPLICATION = "Hermes Session Inspector"
DESKTOP_FILE = "hermes-session-inspector"  # resources/hermes-session-inspector.desktop, as README installs it
SCREENSHOT_SIZE = (1500, 900)
SCREENSHOT_TIMEOUT_MS = 60_000
SWITCH_INTERVAL_S = 0.002  # how long a worker thread may hold the GIL while the GUI thread waits
NO_GUI_THREADPOOL = "QT_NO_GUI_THREADPOOL"  # Qt 6: paint fills without Qt's GUI thread pool


def application(argv: list[str] | None = None) -> QApplication:
    """The QApplication (reused when one exists, as under pytest-qt), with names, icon and stylesheet."""
    app = QApplication.instance()
    if app is None:
        # Worker threads parse in Python; every call Qt makes into Python (painting asks the
        # models hundreds of times) waits for the GIL up to this interval (Python's default: 5 ms).
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        no_paint_threads()
        prestart()  # the window's child processes import the core meanwhile (see offload.prestart)
        app = QApplication(argv if argv is not None else sys.argv[:1])
        route_qt_messages(app)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setDesktopFileName(DESKTOP_FILE)  # Wayland shells find the icon and name through it
    app.setWindowIcon(icon("app"))
    app.setStyleSheet(stylesheet())
    return app


def no_paint_threads() -> None:
    """Paint on the GUI thread only. Qt's raster engine cuts a fill taller than about a hundred
    lines (a scroll bar, a table's background) into pieces for a pool of its own threads and
    waits for them. While the window's children keep the cores busy, every hand-over waits for a
    core: one scroll bar paint took 1 ms of CPU and 40-50 ms of wall time, 17 hand-overs. Read once,
    when Qt first paints; the user's own setting wins."""
    os.environ.setdefault(NO_GUI_THREADPOOL, "1")


QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}
OFFSCREEN_NOISE = "propagateSizeHints"  # the offscreen platform's warning about every sized window
qt_logger = get_logger("qt")


def qt_message_handler(offscreen: bool = False):
    """Qt's messages (qDebug ... qFatal) as records of the ``inspector.qt`` logger: in the log
    file, and on stderr from WARNING (as ``inspector.log.setup`` sets it up for the window).
    Qt's headless "offscreen" platform warns about every window with size constraints
    (``--screenshot`` on a server): with ``offscreen`` that one message is dropped."""

    def handler(mode: QtMsgType, context: object, message: str) -> None:
        if offscreen and OFFSCREEN_NOISE in message:
            return
        where = ""
        category = getattr(context, "category", None)
        if category and category != "default":
            where = f"[{category}] "
        qt_logger.log(QT_LEVELS.get(mode, logging.WARNING), "%s%s", where, message)

    return handler


def route_qt_messages(app: QApplication) -> None:
    """Install :func:`qt_message_handler` for this process (see there); without a logging set
    up (the window started from Python, not the program), warnings still reach stderr."""
    if not log.is_set_up():
        log.setup(stderr_level=logging.WARNING)
    qInstallMessageHandler(qt_message_handler(offscreen=app.platformName() == "offscreen"))
    sys.excepthook = log_uncaught


def log_uncaught(kind, value, tb) -> None:
    """An exception nothing caught (in a slot, a timer, an event handler): logged with its
    traceback (the stderr handler prints it as Python would have)."""
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, tb)
        return
    get_logger(__name__).error("uncaught exception", exc_info=(kind, value, tb))


def _home_from_args(args: argparse.Namespace, demo_root: Path | None) -> Home:
    """The home to open: a fresh demo home, or the one the options (or the environment) name."""
    if demo_root is not None:
        from inspector.demo import build_demo_home

        demo = build_demo_home(demo_root / "home", now=time.time())
        return locate_home(demo.home, None, None)
    return locate_home(
        getattr(args, "home", None), getattr(args, "state_dir", None), getattr(args, "state_db", None)
    )


def home_named(args: argparse.Namespace) -> bool:
    """The user named a home (``--home`` or ``$HERMES_HOME``), rather than leaving it to the default."""
    return bool(getattr(args, "home", None) or os.environ.get("HERMES_HOME"))


def wait_settled(window: MainWindow, timeout_ms: int = SCREENSHOT_TIMEOUT_MS) -> bool:
    """Run the event loop until the window has loaded what it was asked to show."""
    if window.is_settled():
        return True
    loop = QEventLoop()
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    window.settled.connect(loop.quit)
    timer.start(timeout_ms)
    loop.exec()
    window.settled.disconnect(loop.quit)
    return window.is_settled()


def screenshot(window: MainWindow, path: Path) -> bool:
    """Render the window as it is now and save it (PNG by file name)."""
    app = QApplication.instance()
    for _ in range(3):  # let layouts and pending paints finish
        app.processEvents()
    pixmap = window.grab()
    path.parent.mkdir(parents=True, exist_ok=True)
    return pixmap.save(str(path))


def run_app(args: argparse.Namespace, settings: QSettings | None = None) -> int:
    """Open the window on the chosen home; with ``--screenshot`` save a picture and return."""
    app = application()
    demo = bool(getattr(args, "demo", False))
    shot = getattr(args, "screenshot", None)
    # A screenshot uses the default layout and leaves the user's settings alone.
    scratch = (
        tempfile.TemporaryDirectory(prefix="hermes-inspector-settings-")
        if shot and settings is None
        else None
    )
    if scratch is not None:
        settings = QSettings(str(Path(scratch.name) / "settings.ini"), QSettings.Format.IniFormat)
    opened = None
    try:
        if not demo and looks_like_bundle(getattr(args, "home", None)):
            try:  # --home FILE.tar.gz: a support bundle, unpacked read-only for this window
                opened = open_bundle(args.home)
            except BundleError as exc:
                sys.stderr.write(f"hermes-inspector: {exc}\n")
                return 2
            home = opened.home
        elif not demo:
            home = _home_from_args(args, None)
        window = MainWindow(settings=settings)
        if shot:
            window.resize(*SCREENSHOT_SIZE)
        window.show()
        select = getattr(args, "select", None)
        if opened is not None:
            window.support.show_bundle(opened, select=select)
        elif demo:
            window.open_demo(
                select=select
            )  # its folder (home, write log, backups) goes when the window closes
        elif home_named(args) or home.base.exists():
            window.open_home(home, select=select)
        # else: no home named and none at ~/.hermes: the welcome page (Open Home…, the demo, recent homes)
        if shot:
            wait_settled(window)
            ok = screenshot(window, Path(shot))
            if ok:
                sys.stdout.write(f"saved {shot}\n")
            else:
                sys.stderr.write(f"hermes-inspector: could not save the screenshot to {shot}\n")
            window.close()
            return 0 if ok else 1
        return app.exec()
    finally:
        if opened is not None:
            opened.close()
        if scratch is not None:
            scratch.cleanup()
