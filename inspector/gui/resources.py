"""Icons and the stylesheet, found through ``importlib.resources`` in package ``inspector.resources``.

The top-level ``resources/`` folder is installed as that package, so this works from a checkout
and after ``pip install``. Colours that cannot come from the palette (badges, diff lines) are
picked here for the light or the dark palette.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette

HEALTH_ICONS = ("ok", "info", "warning", "error")


def _resource(*parts: str):
    node = files("inspector.resources")
    for part in parts:
        node = node / part
    return node


def stylesheet() -> str:
    """The application stylesheet (``resources/inspector.qss``)."""
    return _resource("inspector.qss").read_text(encoding="utf-8")


def icon(name: str) -> QIcon:
    """An icon from ``resources/icons/<name>.svg`` (an empty icon if it is missing or there is no app)."""
    if QGuiApplication.instance() is None:
        return QIcon()  # pixmaps need a QGuiApplication; models may be used without one
    return _icon(name)


@cache
def _icon(name: str) -> QIcon:
    node = _resource("icons", f"{name}.svg")
    try:
        data = node.read_bytes()
    except OSError:
        return QIcon()
    from PySide6.QtCore import QByteArray
    from PySide6.QtGui import QPixmap

    pixmap = QPixmap()
    pixmap.loadFromData(QByteArray(data), "SVG")
    return QIcon(pixmap) if not pixmap.isNull() else QIcon()


def health_icon(health: str) -> QIcon:
    return icon(f"health-{health if health in HEALTH_ICONS else 'info'}")


def is_dark() -> bool:
    """True when the application palette is dark (the system dark theme, or a dark palette)."""
    app = QGuiApplication.instance()
    if app is None:
        return False
    window = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    return window.lightness() < 128


@dataclass(frozen=True)
class Colours:
    """Accent colours for things the palette has no role for."""

    added: QColor
    removed: QColor
    hunk: QColor
    file_header: QColor
    badge_recovered: QColor
    badge_error: QColor
    badge_pending: QColor
    badge_info: QColor
    highlight: QColor
    dropped_background: QColor
    dropped_text: QColor
    role_user: QColor
    role_assistant: QColor
    role_other: QColor
    json_key: QColor
    json_string: QColor
    json_number: QColor
    json_literal: QColor


def colours() -> Colours:
    """Accent colours for the current palette (light or dark)."""
    if is_dark():
        return Colours(
            added=QColor("#7fd18b"),
            removed=QColor("#f28b82"),
            hunk=QColor("#8ab4f8"),
            file_header=QColor("#e0c46c"),
            badge_recovered=QColor("#2e6b3a"),
            badge_error=QColor("#8a2f2a"),
            badge_pending=QColor("#7a5a12"),
            badge_info=QColor("#2f4f7a"),
            highlight=QColor("#3d4f2a"),
            dropped_background=QColor("#4a2323"),
            dropped_text=QColor("#ffb4ab"),
            role_user=QColor("#8ab4f8"),
            role_assistant=QColor("#7fd18b"),
            role_other=QColor("#c9a0f0"),
            json_key=QColor("#8ab4f8"),
            json_string=QColor("#a8d69b"),
            json_number=QColor("#f2b872"),
            json_literal=QColor("#c9a0f0"),
        )
    return Colours(
        added=QColor("#1a7f37"),
        removed=QColor("#cf222e"),
        hunk=QColor("#0550ae"),
        file_header=QColor("#7d4e00"),
        badge_recovered=QColor("#d3f0d9"),
        badge_error=QColor("#ffd7d5"),
        badge_pending=QColor("#fff0c2"),
        badge_info=QColor("#dbe9fb"),
        highlight=QColor("#fff3b0"),
        dropped_background=QColor("#ffe4e2"),
        dropped_text=QColor("#9a1c16"),
        role_user=QColor("#0550ae"),
        role_assistant=QColor("#1a7f37"),
        role_other=QColor("#6f42c1"),
        json_key=QColor("#0550ae"),
        json_string=QColor("#0a6b2a"),
        json_number=QColor("#953800"),
        json_literal=QColor("#6f42c1"),
    )


_DARK_PROPERTY = "inspectorDark"  # what a widget last painted for: the dark palette or not
_PALETTE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


def remember_palette(widget: QObject) -> None:
    """Note which palette (light or dark) ``widget`` paints for now (see :func:`palette_switched`)."""
    widget.setProperty(_DARK_PROPERTY, is_dark())


def palette_switched(widget: QObject, event: QEvent) -> bool:
    """True when ``event`` tells ``widget`` that the application switched between light and dark
    since it last painted its own colours (which depend on nothing else, see :func:`colours`).
    Qt sends a widget a PaletteChange for every change of its palette (a stylesheet's polish
    too): the rest are not a switch, and cost nothing."""
    if event.type() not in _PALETTE_EVENTS:
        return False
    before = widget.property(_DARK_PROPERTY)
    now = is_dark()
    if before == now:
        return False
    widget.setProperty(_DARK_PROPERTY, now)
    return True


_restyling = False


def restyle() -> None:
    """Apply the application's stylesheet again (a no-op without one). Its ``palette(...)`` colours
    are resolved when it is applied, so a switch between light and dark while the window runs
    needs it for the stylesheet's own colours to follow."""
    global _restyling
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if _restyling or not isinstance(app, QApplication) or not app.styleSheet():
        return
    _restyling = True
    try:
        app.setStyleSheet(app.styleSheet())
    finally:
        _restyling = False
