"""The transcript: each message as a readable block, with recovery badges and tool cards.

Message content is untrusted. It goes into the document only through
``QTextCursor.insertText`` (never ``setHtml``/``insertHtml``/Markdown), so markup is shown as
the characters it is made of; the browser never follows links and ``loadResource`` returns
nothing, so no image or stylesheet is ever fetched, local or remote.
"""

from __future__ import annotations

import bisect
import json
import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QPoint, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTextBrowser,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from inspector.export import format_time, message_text, to_json_text, tools_by_message
from inspector.gui.qtypes import single_shot
from inspector.gui.resources import colours
from inspector.gui.tooltip import show_choice_on_hover
from inspector.present.session_data import SessionData
from inspector.textsafe import one_line, safe_text

CONTENT_LIMIT = 50_000  # characters of one message rendered; the Raw tab has everything
TOOL_PREVIEW_LINES = 12
# A timer, not a zero-delay call: posted calls run before timers and input, so the two halves of a
# render would otherwise run back to back; a 1 ms timer lets the event loop handle what waits between.
NEXT_TURN_MS = 1
ANCHOR_STEP = 20  # messages laid out per call while the view goes back to its place after a new render
TURN_BUDGET_S = 0.008  # a long transcript renders this long per turn of the event loop (at least one message)
RENDER_WINDOW = 40  # newest messages rendered at first; older ones on request (a render and its layout
# cost the GUI thread up to ~0.4 ms per message with tool output: 40 keep a selection under ~20 ms)
SIDECAR = "sidecar"
BAK = "bak"  # the sidecar's backup <id>.json.bak, shown as a chat


@dataclass(frozen=True)
class Badge:
    text: str
    kind: str  # recovered | error | pending | info


def message_badges(msg: dict) -> list[Badge]:
    """The recovery and error badges of one message, in plain words."""
    out: list[Badge] = []
    if msg.get("_recovered"):
        out.append(Badge("recovered turn", "recovered"))
    if msg.get("_recovered_from_run_journal"):
        stream = one_line(msg.get("_recovered_stream_id"), 14)
        out.append(Badge(f"from run journal {stream}".strip(), "recovered"))
    if msg.get("_recovered_event_id"):
        out.append(Badge(f"event {one_line(msg.get('_recovered_event_id'), 48)}", "info"))
    if msg.get("type") == "interrupted":
        cause = one_line(msg.get("interruption_cause") or "unknown cause", 40)
        out.append(Badge(f"interrupted: {cause}", "error"))
    elif msg.get("_error"):
        out.append(Badge("error", "error"))
    if msg.get("_pending_journal_recovery"):
        attempts = msg.get("_journal_retry_attempts", 0)
        first = msg.get("_journal_retry_first_seen_ts")
        stream = one_line(msg.get("_journal_retry_stream_id"), 14)
        out.append(
            Badge(
                f"pending retry · {attempts}/12 attempts · since {format_time(first)} · stream {stream}",
                "pending",
            )
        )
    if msg.get("_partial"):
        out.append(Badge("partial", "info"))
    if msg.get("active") is False:
        out.append(Badge("inactive (rewound)", "info"))
    if msg.get("compacted"):
        out.append(Badge("compacted", "info"))
    if msg.get("compressed_summary"):
        out.append(Badge("compression summary", "info"))
    return out


def state_db_cards(msg: dict) -> list[dict]:
    """state.db keeps tool calls on the assistant row (OpenAI shape); show them as cards."""
    calls = msg.get("tool_calls")
    cards = []
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            args: Any = fn.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            cards.append(
                {
                    "name": fn.get("name") or call.get("name"),
                    "args": args,
                    "tid": call.get("id"),
                    "done": True,
                }
            )
    return cards


class SafeTextBrowser(QTextBrowser):
    """A read-only browser that never loads a resource and never follows a link."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setUndoRedoEnabled(False)
        self.setAcceptDrops(False)

    def loadResource(self, kind: int, name: QUrl) -> Any:  # noqa: N802 - Qt's name
        return None

    def setSource(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802 - Qt's name
        return None  # navigation is never allowed


@dataclass
class _Build:
    """A whole transcript being rendered aside, a turn at a time (see TranscriptView.render)."""

    doc: QTextDocument
    cursor: QTextCursor
    messages: list
    cards: dict[int, list[dict]]
    first_shown: int
    first_block: bool
    next: int  # the first message not rendered yet
    ranges: list[tuple[int, int, int]] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)


@dataclass
class _Anchor:
    """The message a whole new render should show at the top of the view again, and how far the
    new document is laid out (see TranscriptView._build_chunk)."""

    doc: QTextDocument
    message: int
    offset: float
    laid: int
    scroll: int | None = None  # the scroll bar's value the last step left (a change: the reader moved)


class TranscriptView(QWidget):
    """A session's transcript (sidecar, state.db or core), with selection linked to the journal."""

    message_selected = Signal(int)  # sidecar message index, -1 for none
    rendered = Signal()  # a long transcript's last messages are in (see render)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._data: SessionData | None = None
        self._expanded: set[int] = set()
        self._starts: list[int] = []
        self._ranges: list[tuple[int, int, int]] = []
        self._selected = -1
        self._highlighted: set[int] = set()
        self._quiet = False
        self._show_all = False
        self._first_shown = 0
        self._pending: tuple | None = None  # a long transcript's rest, appended a turn later
        self._building: _Build | None = None  # a whole transcript built aside, shown once whole
        self._anchor: _Anchor | None = None  # where the view goes back to once that one is laid out
        self._anchor_timer = single_shot(self, NEXT_TURN_MS, self._anchor_step)
        self._build_timer = single_shot(
            self, NEXT_TURN_MS, lambda: self._build_chunk(time.perf_counter() + TURN_BUDGET_S)
        )

        title = QLabel("Transcript")
        title.setObjectName("PaneTitle")
        self.source = QComboBox()
        show_choice_on_hover(self.source, "Which copy of the conversation to show")
        self.source.currentIndexChanged.connect(self._on_source_changed)
        self.reasoning = QCheckBox("Reasoning")
        self.reasoning.setToolTip("Expand every message's reasoning")
        self.reasoning.toggled.connect(self._on_reasoning_toggled)
        self.browser = SafeTextBrowser()
        self.browser.setObjectName("TranscriptBrowser")
        self.browser.anchorClicked.connect(self._on_anchor)
        self.browser.cursorPositionChanged.connect(self._on_cursor)

        head = QHBoxLayout()
        head.addWidget(title)
        head.addWidget(self.source, 1)
        head.addWidget(self.reasoning)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.browser, 1)
        self.set_data(None)

    # ------------------------------------------------------------ data

    def set_data(self, data: SessionData | None) -> None:
        same = data is not None and self._data is not None and data.session_id == self._data.session_id
        previous = self.source.currentData() if same else None  # a reload keeps the chosen copy
        self._data = data
        self._quiet = True
        self.source.clear()
        if data is not None:
            d = data.detail
            self.source.addItem(f"Sidecar ({len(d.messages)} messages)", SIDECAR)
            for n, view in enumerate(d.state_db):
                count = "error" if view.error else f"{len(view.messages)} messages"
                self.source.addItem(f"state.db [{view.profile}] ({count})", f"state.db:{n}")
            if d.core is not None or d.core_error:
                core_msgs = d.core.get("messages") if isinstance(d.core, dict) else None
                count = f"{len(core_msgs)} messages" if isinstance(core_msgs, list) else "error"
                self.source.addItem(f"Agent core transcript ({count})", "core")
            if d.bak_path is not None:
                count = (
                    f"{d.bak_messages} messages"
                    if d.bak is not None and d.bak_messages >= 0
                    else "unreadable"
                )
                self.source.addItem(f"Backup .bak ({count}, read-only)", BAK)
            pick = self.source.findData(previous) if previous else -1
            if pick <= 0 and d.sidecar is None:
                # No readable sidecar: show the first copy that can be read instead of an empty page.
                pick = next((i + 1 for i, v in enumerate(d.state_db) if not v.error and v.messages), -1)
            self.source.setCurrentIndex(max(pick, 0))
        self.source.setEnabled(self.source.count() > 1)
        self._quiet = False
        self._expanded.clear()
        if not same:
            self._show_all = False
        self._selected = -1
        self._highlighted = set()
        self.render(later=True)  # the caller's other changes are painted first, then the messages

    def current_source(self) -> str:
        return self.source.currentData() or SIDECAR

    def show_sidecar(self) -> None:
        self.source.setCurrentIndex(max(self.source.findData(SIDECAR), 0))

    def _on_source_changed(self, _i: int) -> None:
        if not self._quiet:
            self._selected = -1
            self.render()

    def _on_reasoning_toggled(self, _on: bool) -> None:
        self._expanded.clear()
        self.render(keep_scroll=True)

    def _messages(self) -> tuple[list, dict[int, list[dict]], str | None]:
        """(messages, tool cards per message, why there is nothing) for the chosen source."""
        if self._data is None:
            return [], {}, "Select a session."
        d = self._data.detail
        src = self.current_source()
        if src == SIDECAR:
            if d.sidecar is None:
                why = (
                    f"The sidecar cannot be read: {d.sidecar_error}"
                    if d.sidecar_error
                    else "This session has no sidecar. Pick the state.db transcript above, if there is one."
                )
                return [], {}, why
            return d.messages, self._data.sidecar_cards(), None
        if src.startswith("state.db:"):
            view = d.state_db[int(src.split(":", 1)[1])]
            if view.error:
                return [], {}, f"state.db cannot be read: {view.error}"
            cards = {i: state_db_cards(m) for i, m in enumerate(view.messages) if isinstance(m, dict)}
            return view.messages, {i: c for i, c in cards.items() if c}, None
        if src == BAK:
            if d.bak is None or not isinstance(d.bak.get("messages"), list):
                why = d.bak_error or "it cannot be read"
                return (
                    [],
                    {},
                    f"The backup {d.bak_path.name if d.bak_path else '.bak'} cannot be read as a chat: {why}.",
                )
            return d.bak["messages"], tools_by_message(d.bak.get("tool_calls")), None
        core = d.core if isinstance(d.core, dict) else {}
        if d.core_error:
            return [], {}, f"The core transcript cannot be read: {d.core_error}"
        msgs = core.get("messages") if isinstance(core.get("messages"), list) else []
        return msgs, tools_by_message(core.get("tool_calls")), None

    # ------------------------------------------------------------ rendering

    def render(self, keep_scroll: bool = False, *, later: bool = False) -> None:
        """Show the chosen transcript. A long one is shown over a few turns of the event loop: the
        messages that render within TURN_BUDGET_S (the top of the view) at once, then as many per
        turn (or all of them as soon as anything asks: see :meth:`_finish_render`), so selecting a
        session never holds the window for the whole render. ``later``: not even the first
        messages now, but in the next turn (a session being shown has its header painted
        first, then its transcript)."""
        self._pending = None
        scroll = self.browser.verticalScrollBar().value()
        if self._building is not None:
            self._building.doc.deleteLater()  # never shown: dropped for this new render
            self._building = None
        self._anchor = None
        self._build_timer.stop()
        messages, cards, why = self._messages()
        doc = QTextDocument(self.browser)
        doc.setDocumentMargin(8)
        doc.setUndoRedoEnabled(False)
        cursor = QTextCursor(doc)
        if why:
            self._insert_note(cursor, why)
        first = 0 if self._show_all else max(0, len(messages) - RENDER_WINDOW)
        if first:
            self._insert_earlier_link(cursor, first)
        first_block = not why and not first
        if keep_scroll and len(messages) - first > RENDER_WINDOW:
            # The whole transcript again, in place of the one shown (reasoning switched, colours
            # changed): built aside a turn at a time while the old one stays, then swapped in.
            self._building = _Build(doc, cursor, messages, cards, first, first_block, next=first)
            self._build_timer.start()
            return
        self._ranges = []
        self._starts = []
        self._first_shown = first
        if later and not keep_scroll:
            split = first
        else:
            budget = None if keep_scroll else time.perf_counter() + TURN_BUDGET_S
            split = self._render_messages(
                cursor, messages, cards, first, len(messages), budget, first_block=first_block
            )
        if split == len(messages):
            self._render_end(cursor)
        self._show_document(doc, scroll if keep_scroll else None)
        if split < len(messages):
            self._pending = (doc, cursor, messages, cards, split, first_block and split == first)
            QTimer.singleShot(NEXT_TURN_MS, self._next_chunk)
        elif later:
            self.rendered.emit()

    def _show_document(self, doc: QTextDocument, scroll: int | None) -> None:
        self._quiet = True
        self.browser.setDocument(doc)  # the old document, a child of the browser, is deleted by Qt
        self._quiet = False
        self._apply_highlight()
        if scroll is not None:
            self.browser.verticalScrollBar().setValue(scroll)

    def _render_messages(
        self,
        cursor: QTextCursor,
        messages: list,
        cards: dict,
        start: int,
        stop: int,
        budget: float | None = None,
        first_block: bool = False,
        into: tuple[list, list] | None = None,
    ) -> int:
        """Render messages ``start``..``stop`` (at least one, then only while ``budget``, a
        ``perf_counter`` deadline, is not past); the index of the first one not rendered. Their
        places go to the shown document's ranges, or to ``into`` (ranges, starts) of one built aside."""
        ranges, starts = into if into is not None else (self._ranges, self._starts)
        for i in range(start, stop):
            if budget is not None and i > start and time.perf_counter() >= budget:
                return i
            pos = self._render_message(
                cursor, i, messages[i], cards.get(i, []), first=first_block and i == start
            )
            ranges.append((pos, cursor.position(), i))
            starts.append(pos)
        return stop

    def _build_chunk(self, budget: float | None = None) -> None:
        """Go on with the transcript built aside (see :meth:`render`): as many messages as fit in
        ``budget`` (all of them when None). Once it is whole it is shown, and the view goes back
        to the message that was at its top (see :meth:`_anchor_step`)."""
        build = self._building
        if build is None:
            return
        build.next = self._render_messages(
            build.cursor,
            build.messages,
            build.cards,
            build.next,
            len(build.messages),
            budget,
            first_block=build.first_block and build.next == build.first_shown,
            into=(build.ranges, build.starts),
        )
        if build.next < len(build.messages):
            self._build_timer.start()
            return
        self._render_end(build.cursor)
        self._building = None
        top = self._top_message()  # in the old document, laid out down to the view
        offset = self.browser.verticalScrollBar().value() - self._message_y(top) if top >= 0 else 0.0
        self._ranges, self._starts, self._first_shown = build.ranges, build.starts, build.first_shown
        self._show_document(build.doc, None)
        if top > self._first_shown:
            # Qt lays a new document out from its top when asked where something is; down to the
            # message that was at the top of the view a turn at a time, then the view goes back to it.
            self._anchor = _Anchor(build.doc, top, offset, self._first_shown)
            self._anchor_timer.start()

    def _top_message(self) -> int:
        """The message at the top of the view (-1 when none is)."""
        if not self._ranges:
            return -1
        pos = self.browser.cursorForPosition(QPoint(0, 0)).position()
        return self._ranges[max(bisect.bisect_right(self._starts, pos) - 1, 0)][2]

    def _message_y(self, i: int) -> float:
        """Where shown message ``i`` starts, in the document's pixels (the scroll bar's units)."""
        k = self._range_of(i)
        if k is None:
            return 0.0
        doc = self.browser.document()
        return doc.documentLayout().blockBoundingRect(doc.findBlock(self._ranges[k][0])).top()

    def _anchor_step(self) -> None:
        """Lay the new document out a little further (TURN_BUDGET_S), and once it is laid out
        down to the anchor's message put that message back at the top of the view."""
        anchor = self._anchor
        if anchor is None or anchor.doc is not self.browser.document():
            self._anchor = None
            return
        bar = self.browser.verticalScrollBar()
        if anchor.scroll is not None and bar.value() != anchor.scroll:
            self._anchor = None  # the reader moved meanwhile: leave the view where they took it
            return
        deadline = time.perf_counter() + TURN_BUDGET_S
        while anchor.laid < anchor.message:  # at least one step per turn
            anchor.laid = min(anchor.laid + ANCHOR_STEP, anchor.message)
            self._message_y(anchor.laid)  # lays the document out down to that message
            if time.perf_counter() >= deadline:
                break
        if anchor.laid < anchor.message:
            anchor.scroll = bar.value()
            self._anchor_timer.start()
            return
        self._anchor = None
        bar.setValue(round(self._message_y(anchor.message) + anchor.offset))

    def _render_end(self, cursor: QTextCursor) -> None:
        if self.current_source() == SIDECAR and self._data is not None:
            self._render_pending(cursor, self._data.detail.sidecar or {})

    def _finish_render(self, budget: float | None = None) -> None:
        """Append the messages a long transcript's first turn left out: as many as fit in
        ``budget`` (a ``perf_counter`` deadline; the rest a turn later), or all of them now when
        someone needs the whole transcript. The same cursor goes on, so the result is the same
        as one pass; each turn's messages go in as one edit (one layout of what they add)."""
        if budget is None and self._building is not None:
            self._build_chunk()  # the transcript built aside is needed whole now
        pending, self._pending = self._pending, None
        if pending is None:
            return
        doc, cursor, messages, cards, split, first_block = pending
        if doc is not self.browser.document():
            return  # rendered anew since
        self._quiet = True
        cursor.beginEditBlock()
        stop = self._render_messages(
            cursor, messages, cards, split, len(messages), budget, first_block=first_block
        )
        if stop == len(messages):
            self._render_end(cursor)
        cursor.endEditBlock()
        self._quiet = False
        self._apply_highlight()
        if stop < len(messages):
            self._pending = (doc, cursor, messages, cards, stop, False)
            QTimer.singleShot(NEXT_TURN_MS, self._next_chunk)
        else:
            self.rendered.emit()

    def _next_chunk(self) -> None:
        self._finish_render(time.perf_counter() + TURN_BUDGET_S)

    def _render_again(self, i: int) -> None:
        """Render shown message ``i`` again where it is (its reasoning opened or closed): the same
        document a whole new render would make, without one (0.9 s for 5,000 messages shown; this
        is one message and the layout below it). The view stays where it is."""
        k = self._range_of(i)
        if k is None:
            return
        messages, cards, _why = self._messages()
        start, end, _i = self._ranges[k]
        first = start == 0  # in the document's first block: nothing above it
        bar = self.browser.verticalScrollBar()
        scroll = bar.value()
        self._quiet = True
        cursor = QTextCursor(self.browser.document())
        cursor.beginEditBlock()
        cursor.setPosition(start if first else start - 1)  # with the block break it starts with
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        pos = self._render_message(cursor, i, messages[i], cards.get(i, []), first=first)
        cursor.endEditBlock()
        delta = cursor.position() - end
        self._ranges[k] = (pos, cursor.position(), i)
        if delta:
            ranges = self._ranges
            for n in range(k + 1, len(ranges)):
                s, e, j = ranges[n]
                ranges[n] = (s + delta, e + delta, j)
            self._starts[k + 1 :] = [s for s, _e, _j in ranges[k + 1 :]]
        self._quiet = False
        self._apply_highlight()
        bar.setValue(scroll)

    def _range_of(self, i: int) -> int | None:
        """Where message ``i`` is in ``_ranges`` (shown messages are consecutive), None if not shown."""
        k = i - self._first_shown
        return k if 0 <= k < len(self._ranges) and self._ranges[k][2] == i else None

    def rendering(self) -> bool:
        """True while a long transcript's last messages are still to be appended, or a whole new
        one is built aside or laid out down to where the view was (see :meth:`render`)."""
        return self._pending is not None or self._building is not None or self._anchor is not None

    def _fmt(
        self,
        *,
        bold: bool = False,
        italic: bool = False,
        colour: QColor | None = None,
        mono: bool = False,
        background: QColor | None = None,
        scale: float = 1.0,
    ) -> QTextCharFormat:
        f = QTextCharFormat()
        if mono:
            f.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        if bold:
            f.setFontWeight(QFont.Weight.Bold)
        if italic:
            f.setFontItalic(True)
        if colour is not None:
            f.setForeground(colour)
        if background is not None:
            f.setBackground(background)
        if scale != 1.0:
            f.setFontPointSize(max(self.font().pointSizeF() * scale, 6.0))
        return f

    def _block(
        self,
        cursor: QTextCursor,
        *,
        indent: int = 0,
        top: int = 0,
        background: QColor | None = None,
        first: bool = False,
    ) -> None:
        bf = QTextBlockFormat()
        bf.setLeftMargin(indent)
        bf.setTopMargin(top)
        if background is not None:
            bf.setBackground(background)
        if first and cursor.position() == 0 and cursor.block().length() <= 1:
            cursor.setBlockFormat(bf)
        else:
            cursor.insertBlock(bf)

    def _muted(self) -> QColor:
        return self.palette().color(QPalette.ColorGroup.Active, QPalette.ColorRole.PlaceholderText)

    def _insert_note(self, cursor: QTextCursor, text: str) -> None:
        self._block(cursor, first=True)
        cursor.insertText(safe_text(text), self._fmt(italic=True, colour=self._muted()))

    def _insert_earlier_link(self, cursor: QTextCursor, hidden: int) -> None:
        self._block(cursor, first=True)
        link = self._fmt(colour=self.palette().color(QPalette.ColorRole.Link))
        link.setAnchor(True)
        link.setAnchorHref("earlier:")
        cursor.insertText(f"▴ Show {hidden:,} earlier messages", link)

    def _badge_colour(self, kind: str) -> QColor:
        c = colours()
        return {"recovered": c.badge_recovered, "error": c.badge_error, "pending": c.badge_pending}.get(
            kind, c.badge_info
        )

    def _render_message(self, cursor: QTextCursor, i: int, msg: Any, cards: list[dict], first: bool) -> int:
        """Insert one message; returns the position where its first block starts."""
        c = colours()
        self._block(cursor, top=0 if first else 12, first=first)
        start = cursor.position()
        if not isinstance(msg, dict):
            cursor.insertText(f"#{i}  (not an object) ", self._fmt(bold=True, colour=c.removed))
            self._block(cursor, indent=14)
            cursor.insertText(safe_text(to_json_text(msg))[:CONTENT_LIMIT], self._fmt(mono=True))
            return start
        role = one_line(msg.get("role"), 24) or "?"
        role_colour = {"user": c.role_user, "assistant": c.role_assistant}.get(role, c.role_other)
        cursor.insertText(f"#{i}  ", self._fmt(colour=self._muted()))
        cursor.insertText(role, self._fmt(bold=True, colour=role_colour))
        if role == "tool" and msg.get("tool_name"):
            cursor.insertText(
                f" {one_line(msg.get('tool_name'), 40)}", self._fmt(bold=True, colour=role_colour)
            )
        cursor.insertText(
            f"   {format_time(msg.get('timestamp'))}", self._fmt(colour=self._muted(), scale=0.9)
        )
        badges = message_badges(msg)
        if badges:
            self._block(cursor, indent=14, top=2)
            for n, badge in enumerate(badges):
                if n:
                    cursor.insertText("  ", QTextCharFormat())
                cursor.insertText(
                    f"\u2009{badge.text}\u2009",
                    self._fmt(background=self._badge_colour(badge.kind), scale=0.85),
                )
        text = message_text(msg.get("content"))
        self._block(cursor, indent=14, top=3)
        if text.strip():
            shown = text if len(text) <= CONTENT_LIMIT else text[:CONTENT_LIMIT]
            cursor.insertText(safe_text(shown), QTextCharFormat())
            if len(text) > CONTENT_LIMIT:
                cursor.insertText(
                    f"\n… {len(text) - CONTENT_LIMIT:,} more characters (see Raw)",
                    self._fmt(italic=True, colour=self._muted()),
                )
        else:
            cursor.insertText("(no text)", self._fmt(italic=True, colour=self._muted()))
        reasoning = msg.get("reasoning") or msg.get("reasoning_content")
        if reasoning:
            self._render_reasoning(cursor, i, message_text(reasoning))
        for card in cards:
            self._render_card(cursor, card)
        return start

    def _render_reasoning(self, cursor: QTextCursor, i: int, reasoning: str) -> None:
        open_ = self.reasoning.isChecked() or i in self._expanded
        self._block(cursor, indent=14, top=3)
        link = self._fmt(colour=self.palette().color(QPalette.ColorRole.Link), scale=0.9)
        link.setAnchor(True)
        link.setAnchorHref(f"reasoning:{i}")
        arrow = "▾" if open_ else "▸"
        cursor.insertText(f"{arrow} Reasoning ({len(reasoning):,} characters)", link)
        if open_:
            self._block(cursor, indent=28)
            shown = reasoning[:CONTENT_LIMIT]
            cursor.insertText(safe_text(shown), self._fmt(italic=True, colour=self._muted()))

    def _render_card(self, cursor: QTextCursor, card: dict) -> None:
        bg = self.palette().color(QPalette.ColorRole.AlternateBase)
        state = "done" if card.get("done") else "not finished"
        if card.get("is_error"):
            state += ", error"
        if card.get("duration") is not None:
            state += f", {one_line(card.get('duration'), 12)} s"
        self._block(cursor, indent=28, top=4, background=bg)
        cursor.insertText("⚙ ", self._fmt())
        cursor.insertText(one_line(card.get("name") or "tool", 60), self._fmt(bold=True, mono=True))
        cursor.insertText(f"  {state}", self._fmt(colour=self._muted(), scale=0.9))
        if card.get("tid"):
            cursor.insertText(
                f"  tid {one_line(card.get('tid'), 40)}", self._fmt(colour=self._muted(), scale=0.9)
            )
        if card.get("_recovered_from_run_journal"):
            cursor.insertText("  ", QTextCharFormat())
            cursor.insertText(
                "\u2009from run journal\u2009", self._fmt(background=colours().badge_recovered, scale=0.85)
            )
        args = card.get("args")
        if args:
            text = args if isinstance(args, str) else to_json_text(args)
            self._block(cursor, indent=28, background=bg)
            cursor.insertText(safe_text(one_line(text, 400)), self._fmt(mono=True, scale=0.9))
        preview = card.get("preview") or card.get("snippet")
        if preview:
            lines = message_text(preview).splitlines() or [""]
            shown = "\n".join(lines[:TOOL_PREVIEW_LINES])
            if len(lines) > TOOL_PREVIEW_LINES:
                shown += f"\n… {len(lines) - TOOL_PREVIEW_LINES} more lines"
            self._block(cursor, indent=28, background=bg)
            cursor.insertText(
                safe_text(shown[:CONTENT_LIMIT]), self._fmt(mono=True, colour=self._muted(), scale=0.9)
            )

    def _render_pending(self, cursor: QTextCursor, sidecar: dict) -> None:
        pending = sidecar.get("pending_user_message")
        stream = sidecar.get("active_stream_id")
        if not pending and not stream:
            return
        self._block(cursor, top=14)
        cursor.insertText(
            "pending turn (not in messages yet)", self._fmt(bold=True, colour=colours().file_header)
        )
        started = sidecar.get("pending_started_at")
        age = ""
        if isinstance(started, (int, float)) and not isinstance(started, bool) and started > 0:
            age = f" · started {format_time(started)} ({age_words(time.time() - started)} ago)"
        cursor.insertText("  ", QTextCharFormat())
        cursor.insertText(
            f"\u2009stream {one_line(stream, 14)}{age}\u2009",
            self._fmt(background=colours().badge_pending, scale=0.85),
        )
        self._block(cursor, indent=14, top=3)
        cursor.insertText(safe_text(message_text(pending)[:CONTENT_LIMIT]) or "(no text)", QTextCharFormat())

    # ------------------------------------------------------------ selection and links

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if text == "earlier:":
            self.show_all()
            return
        if text.startswith("reasoning:"):
            try:
                i = int(text.split(":", 1)[1])
            except ValueError:
                return
            self._expanded ^= {i}
            if self._range_of(i) is None or self._building is not None:
                self.render(keep_scroll=True)
            else:
                self._render_again(i)

    def show_all(self) -> None:
        """Render every message (the first render shows the newest RENDER_WINDOW)."""
        if not self._show_all:
            self._show_all = True
            self.render()

    def _ensure_rendered(self, indexes: set[int]) -> None:
        if indexes and min(indexes) < self._first_shown:
            self.show_all()

    def message_at(self, position: int) -> int:
        """The message at a position of the shown document (-1 if none): what is still to come or
        being built aside is not needed for that, so a click does not wait for it."""
        k = bisect.bisect_right(self._starts, position) - 1
        if k < 0:
            return -1
        start, end, i = self._ranges[k]
        return i if start <= position <= end else -1

    def _on_cursor(self) -> None:
        if self._quiet or self.current_source() != SIDECAR:
            return
        i = self.message_at(self.browser.textCursor().position())
        if i != self._selected:
            self._selected = i
            self._highlighted = {i} if i >= 0 else set()
            self._apply_highlight()
            self.message_selected.emit(i)

    def selected_message(self) -> int:
        return self._selected

    def select_message(self, i: int, *, emit: bool = True) -> None:
        """Select (highlight and scroll to) a sidecar message, as if the user clicked it."""
        self._finish_render()
        if self.current_source() != SIDECAR:
            self.show_sidecar()
        self._ensure_rendered({i} if i >= 0 else set())
        self._selected = i
        self.highlight_messages({i} if i >= 0 else set(), scroll=True)
        if emit:
            self.message_selected.emit(i)

    def highlight_messages(self, indexes: set[int], *, scroll: bool = True) -> None:
        """Highlight rows (e.g. the message a journal event became) without moving the selection signal."""
        self._finish_render()
        self._ensure_rendered(set(indexes))
        self._highlighted = set(indexes)
        self._apply_highlight()
        if scroll and indexes:
            self._anchor = None  # the view goes to these messages instead of back to where it was
            first = min(indexes)
            for start, _end, i in self._ranges:
                if i == first:
                    self._quiet = True
                    cur = QTextCursor(self.browser.document())
                    cur.setPosition(start)
                    self.browser.setTextCursor(cur)
                    self.browser.ensureCursorVisible()
                    self._quiet = False
                    break

    def highlighted_messages(self) -> set[int]:
        return set(self._highlighted)

    def _apply_highlight(self) -> None:
        selections = []
        doc = self.browser.document()
        for start, end, i in self._ranges:
            if i not in self._highlighted:
                continue
            sel = QTextEdit.ExtraSelection()
            cur = QTextCursor(doc)
            cur.setPosition(start)
            cur.setPosition(max(start, end - 1), QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cur
            fmt = QTextCharFormat()
            fmt.setBackground(colours().highlight)
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
            sel.format = fmt
            selections.append(sel)
        self.browser.setExtraSelections(selections)

    def plain_text(self) -> str:
        self._finish_render()
        return self.browser.toPlainText()


def age_words(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} days"
