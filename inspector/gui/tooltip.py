"""Tooltips that show untrusted text as text.

Qt renders a tooltip as HTML whenever ``Qt.mightBeRichText`` guesses it is markup, so a
session title such as ``<img src='file:///...'>`` would load a local image. Text Qt would take
for markup is escaped and wrapped, so it is displayed literally; other text stays plain.
"""

from __future__ import annotations

import html

from PySide6.QtGui import Qt


def plain_tooltip(text: str | None) -> str | None:
    """``text`` as a tooltip that Qt displays literally."""
    if not text or not Qt.mightBeRichText(text):
        return text
    return "<p style='white-space:pre-wrap'>" + html.escape(text, quote=False) + "</p>"


def show_choice_on_hover(combo, lead: str) -> None:
    """Keep ``combo``'s tooltip as ``lead`` plus its whole current entry: a narrow pane cuts the entry off."""

    def update(text: str) -> None:
        combo.setToolTip(plain_tooltip(f"{lead}\n{text}" if text else lead))

    combo.currentTextChanged.connect(update)
    update(combo.currentText())
