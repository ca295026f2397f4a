"""The window's menu bar: File, Edit, Repair, View and Help, each entry wired to the window.

Moved out of ``main_window.py`` so the window keeps to building its parts and wiring them."""

from __future__ import annotations

import functools

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from inspector.gui.session_view import REPAIR_SHORTCUTS
from inspector.present.session_data import ACTIONS


def add_action(window, menu: QMenu, text: str, slot, shortcut=None) -> QAction:
    """An entry of ``menu`` owned by ``window``, calling ``slot()`` (or nothing) when triggered."""
    a = QAction(text, window)
    if shortcut is not None:
        a.setShortcut(shortcut)
    if slot is not None:
        a.triggered.connect(lambda _=False: slot())
    menu.addAction(a)
    return a


def build_menus(window) -> None:
    """Fill the main window's menu bar; sets ``recent_menu``, ``undo_action`` and
    ``repair_actions`` on it."""
    m = window.menuBar().addMenu("&File")
    add_action(window, m, "&Open Home…", window.choose_home, QKeySequence.StandardKey.Open)
    window.recent_menu = m.addMenu("Open &Recent")
    window.recent_menu.aboutToShow.connect(window._fill_recent)
    add_action(window, m, "Open the &Demo", window.open_demo)
    add_action(window, m, "Open &Bundle…", window.support.choose_bundle)
    m.addSeparator()
    add_action(window, m, "Save &Support Bundle…", window.support.save_bundle)
    add_action(window, m, "&Apply Repair Kit…", window.support.choose_kit)
    m.addSeparator()
    add_action(window, m, "Export Transcript as &Markdown…", lambda: window.choose_export("md"))
    add_action(window, m, "Export Transcript as &JSON…", lambda: window.choose_export("json"))
    m.addSeparator()
    add_action(window, m, "&Reload", window.refresh, QKeySequence.StandardKey.Refresh)
    add_action(window, m, "&Quit", window.close, QKeySequence.StandardKey.Quit)
    m = window.menuBar().addMenu("&Edit")
    add_action(window, m, "&Find Session", window._focus_search, QKeySequence.StandardKey.Find)
    add_action(
        window, m, "Find in &This Session", window.view.find_bar.open_bar, QKeySequence("Ctrl+Shift+F")
    )
    add_action(window, m, "Find &Next in Session", window._find_next, QKeySequence("F3"))
    add_action(
        window,
        m,
        "Find Pre&vious in Session",
        lambda: window._find_next(backward=True),
        QKeySequence("Shift+F3"),
    )
    add_action(window, m, "Copy Session &Id", window.copy_session_id, QKeySequence("Ctrl+Shift+C"))
    add_action(window, m, "Copy Sidecar &Path", window.copy_sidecar_path, QKeySequence("Ctrl+Alt+C"))
    add_action(window, m, "Re&veal File", window.reveal_file)
    m.addSeparator()
    window.undo_action = add_action(
        window, m, "&Undo Last Write", window.undo_last, QKeySequence.StandardKey.Undo
    )
    window.undo_action.setEnabled(False)
    m = window.menuBar().addMenu("&Repair")
    window.repair_actions: dict[str, QAction] = {}
    for action, label in ACTIONS.items():
        a = add_action(
            window,
            m,
            f"{label}…",
            functools.partial(window.preview_action, action),
            QKeySequence(REPAIR_SHORTCUTS[action]),
        )
        a.setEnabled(False)
        window.repair_actions[action] = a
    m = window.menuBar().addMenu("&View")
    a = add_action(window, m, "Needs &Attention Only", None, QKeySequence("Ctrl+Shift+A"))
    a.setCheckable(True)
    a.toggled.connect(window.attention.setChecked)
    window.attention.toggled.connect(a.setChecked)
    add_action(window, m, "Write &History…", window.show_history, QKeySequence("Ctrl+H"))
    add_action(window, m, "&Raw Sidecar", lambda: window.view.tabs.setCurrentIndex(1), QKeySequence("Ctrl+R"))
    add_action(
        window,
        m,
        "&Transcript and Journal",
        lambda: window.view.tabs.setCurrentIndex(0),
        QKeySequence("Ctrl+T"),
    )
    m = window.menuBar().addMenu("&Help")
    add_action(window, m, "&Keyboard Shortcuts", window.show_shortcuts, QKeySequence.StandardKey.HelpContents)
    add_action(window, m, "&Using the Window", window.show_guide)
    add_action(window, m, "&About Hermes Session Inspector", window.show_about)
