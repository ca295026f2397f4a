"""Two copies of one chat side by side, message by message (no Qt): the sidecar and the chat's
rows in ``state.db``, or the sidecar and its ``.bak``. Each row says whether a message is in both
copies and the same, in both but different (and in what), only in one copy, or in both at other
places (moved), so drift between the copies shows at a glance: the question behind hermes-webui
PR #5053 ("sync stale sidecars from newer state.db").

This is the inspector's own reading, for people: messages are matched by role, shown text and tool
calls, in order (``difflib``), and unmatched neighbours of the same role paired when alike (as the
preview's :mod:`inspector.message_diff` does). It is not hermes' merge of the two transcripts
(``api/models.py`` reconciles by row ids, timestamps and compaction marks) and repairs nothing.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

from inspector.export import message_text
from inspector.message_diff import pair_alike
from inspector.session_detail import SessionDetail, StateDbView

SAME, DIFFERS, ONLY_LEFT, ONLY_RIGHT, MOVED = "same", "differs", "only_left", "only_right", "moved"
TEXT_LIMIT = 4000  # characters of one message kept for display
PAIR_LIMIT = 400  # a replaced block of more message pairs than this is not searched for alike pairs
TIME_TOLERANCE_S = 1.0  # timestamps closer than this are the same time (copies round differently)
SIDECAR = "sidecar"
BAK = "bak"


@dataclass(frozen=True)
class Copy:
    """One copy of the chat: its name as the window says it, its messages, or why there are none."""

    name: str
    messages: list[dict] | None  # None: the copy cannot be read as a chat (``error`` says why)
    error: str | None = None
    note: str | None = None  # e.g. the rows left out of it


@dataclass(frozen=True)
class Row:
    kind: str  # SAME, DIFFERS, ONLY_LEFT, ONLY_RIGHT, MOVED
    left: int | None  # the message's position in the left copy (None: not there)
    right: int | None
    role: str
    left_text: str
    right_text: str
    differences: tuple[str, ...] = ()  # DIFFERS: what differs, in words ("text", "tool calls", "time"...)


@dataclass(frozen=True)
class Alignment:
    left: Copy
    right: Copy
    rows: list[Row] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys((SAME, DIFFERS, ONLY_LEFT, ONLY_RIGHT, MOVED), 0)
        for row in self.rows:
            out[row.kind] += 1
        return out

    def changes(self) -> list[int]:
        """The rows that are not the same in both copies, in order (for next/previous)."""
        return [i for i, row in enumerate(self.rows) if row.kind != SAME]

    def summary(self) -> str:
        """One sentence: how the two copies differ, or that they hold the same messages."""
        if self.left.messages is None or self.right.messages is None:
            bad, other = (self.left, self.right) if self.left.messages is None else (self.right, self.left)
            said = f"The {bad.name} cannot be read as a chat: {bad.error}."
            if other.messages is not None:
                said += f" The {other.name} has {len(other.messages)} message{'s' if len(other.messages) != 1 else ''}."
            return said
        n = self.counts()
        if not self.rows:
            return f"Neither the {self.left.name} nor the {self.right.name} has any message."
        if n[SAME] == len(self.rows):
            return f"The {self.left.name} and the {self.right.name} hold the same {n[SAME]} messages."
        parts = []
        if n[ONLY_RIGHT]:
            parts.append(f"{n[ONLY_RIGHT]} only in the {self.right.name}")
        if n[ONLY_LEFT]:
            parts.append(f"{n[ONLY_LEFT]} only in the {self.left.name}")
        if n[DIFFERS]:
            parts.append(f"{n[DIFFERS]} different")
        if n[MOVED]:
            parts.append(f"{n[MOVED] // 2} moved")  # a moved message has a row at each place
        parts.append(f"{n[SAME]} the same")
        return "Messages: " + ", ".join(parts) + "."


# ---------------------------------------------------------------- a message as both copies can say it


def _calls(message: dict) -> tuple[tuple[str, str], ...]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return ()
    out = []
    for call in calls:
        if not isinstance(call, dict):
            out.append(("?", json.dumps(call, ensure_ascii=False, sort_keys=True, default=str)))
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = fn.get("name") or call.get("name") or "?"
        args = fn.get("arguments", call.get("arguments"))
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
        out.append((str(name), args))
    return tuple(out)


def _time(message: dict) -> float | None:
    value = message.get("timestamp")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def shown_text(message: dict) -> str:
    """The message as the chat shows it (its text, else the tools it calls), cut for display."""
    text = message_text(message.get("content"))
    if not text and _calls(message):
        text = "(tool calls: " + ", ".join(name for name, _ in _calls(message)) + ")"
    return text[:TEXT_LIMIT] + ("…" if len(text) > TEXT_LIMIT else "")


def _key(message: dict) -> str:
    return json.dumps(
        [message.get("role"), message_text(message.get("content")), [name for name, _ in _calls(message)]],
        ensure_ascii=False,
        default=str,
    )


def differences(left: dict, right: dict) -> tuple[str, ...]:
    """What differs between two copies of one message, in words; () when the chat shows them alike.
    Keys only one copy has (state.db's row id and flags, the sidecar's recovery marks) do not count."""
    out = []
    if left.get("role") != right.get("role"):
        out.append("role")
    if message_text(left.get("content")) != message_text(right.get("content")):
        out.append("text")
    if _calls(left) != _calls(right):
        out.append("tool calls")
    lid, rid = left.get("tool_call_id"), right.get("tool_call_id")
    if lid and rid and lid != rid:
        out.append("tool call id")
    lt, rt = _time(left), _time(right)
    if lt is not None and rt is not None and abs(lt - rt) >= TIME_TOLERANCE_S:
        out.append("time")
    return tuple(out)


def _as_messages(messages: list) -> list[dict]:
    return [m if isinstance(m, dict) else {"content": m} for m in messages]


# ---------------------------------------------------------------- aligning


def align(left: Copy, right: Copy) -> Alignment:
    """The messages of two copies of a chat, aligned in order (a copy that cannot be read as a chat
    counts as empty: the other copy's messages are listed, and the summary says why)."""
    a, b = _as_messages(left.messages or []), _as_messages(right.messages or [])
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(a=[_key(m) for m in a], b=[_key(m) for m in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                rows.append(_both(a, b, i, j))
            continue
        pairs = _pairs(a, b, range(i1, i2), range(j1, j2))
        # in the order of the right copy, each left-only message before the next paired one
        pending = list(range(i1, i2))
        paired_left = {j: i for i, j in pairs.items()}
        for j in range(j1, j2):
            if j in paired_left:
                i = paired_left[j]
                while pending and pending[0] < i:
                    rows.append(_only_left(a, pending.pop(0)))
                pending.remove(i)
                rows.append(_both(a, b, i, j))
            else:
                rows.append(_only_right(b, j))
        rows.extend(_only_left(a, i) for i in pending)
    return Alignment(left, right, _mark_moved(rows, a, b))


def _pairs(a: list[dict], b: list[dict], left: range, right: range) -> dict[int, int]:
    """In a block of messages that differ: as many on each side with the same roles in the same
    order are the same messages edited in place; otherwise the alike ones of a role are paired,
    and when none is alike, the block's first messages while their roles agree (an answer that
    one copy has longer, followed by messages only that copy has)."""
    if len(left) == len(right) and all(
        a[i].get("role") == b[j].get("role") for i, j in zip(left, right, strict=True)
    ):
        return dict(zip(left, right, strict=True))
    pairs = pair_alike(a, b, left, right) if len(left) * len(right) <= PAIR_LIMIT else {}
    if not pairs:
        for i, j in zip(left, right, strict=False):
            if a[i].get("role") != b[j].get("role"):
                break
            pairs[i] = j
    return pairs


def _both(a: list[dict], b: list[dict], i: int, j: int) -> Row:
    diff = differences(a[i], b[j])
    role = str(b[j].get("role") or a[i].get("role") or "")
    return Row(DIFFERS if diff else SAME, i, j, role, shown_text(a[i]), shown_text(b[j]), diff)


def _only_left(a: list[dict], i: int) -> Row:
    return Row(ONLY_LEFT, i, None, str(a[i].get("role") or ""), shown_text(a[i]), "")


def _only_right(b: list[dict], j: int) -> Row:
    return Row(ONLY_RIGHT, None, j, str(b[j].get("role") or ""), "", shown_text(b[j]))


def _mark_moved(rows: list[Row], a: list[dict], b: list[dict]) -> list[Row]:
    """A message only in the left copy at one place and only in the right at another is the same
    message at other places (reordered): both rows say so and where the other copy has it."""
    right_only: dict[str, list[int]] = {}
    for n, row in enumerate(rows):
        if row.kind == ONLY_RIGHT:
            right_only.setdefault(_key(b[row.right]), []).append(n)
    for n, row in enumerate(rows):
        if row.kind != ONLY_LEFT:
            continue
        found = right_only.get(_key(a[row.left]))
        if not found:
            continue
        m = found.pop(0)
        other = rows[m]
        rows[n] = Row(
            MOVED,
            row.left,
            other.right,
            row.role,
            row.left_text,
            other.right_text,
            differences(a[row.left], b[other.right]),
        )
        rows[m] = Row(
            MOVED, row.left, other.right, other.role, row.left_text, other.right_text, rows[n].differences
        )
    return rows


# ---------------------------------------------------------------- the copies of one session


def sidecar_copy(detail: SessionDetail) -> Copy:
    if detail.sidecar is None:
        why = detail.sidecar_error or "there is no sidecar file"
        return Copy(SIDECAR, None, why)
    messages = detail.sidecar.get("messages")
    if not isinstance(messages, list):
        return Copy(SIDECAR, [], note="the sidecar has no message list")
    return Copy(SIDECAR, messages)


def state_db_copy(view: StateDbView) -> Copy:
    """The chat's rows in one state.db as hermes-webui shows them: the active rows (rows taken back
    or archived by a compaction are left out, and counted in the note)."""
    name = f"state.db [{view.profile}]"
    if view.error:
        return Copy(name, None, view.error)
    active = [m for m in view.messages if not isinstance(m, dict) or m.get("active", True)]
    left_out = len(view.messages) - len(active)
    note = (
        (
            f"{left_out} row{'s' if left_out != 1 else ''} taken back or archived by a compaction "
            "left out (hermes-webui does not show them)"
        )
        if left_out
        else None
    )
    return Copy(name, active, note=note)


def bak_copy(detail: SessionDetail) -> Copy:
    """The sidecar's backup ``<id>.json.bak`` as a chat, or why it cannot be read as one."""
    name = "backup (.bak)"
    if detail.bak_path is None:
        return Copy(name, None, "there is no .bak file")
    if detail.bak is None:
        return Copy(name, None, detail.bak_error or "it cannot be read")
    messages = detail.bak.get("messages")
    if not isinstance(messages, list):
        return Copy(name, None, "it has no message list")
    return Copy(name, messages)


def state_db_reason(detail: SessionDetail) -> str | None:
    """Why the sidecar cannot be compared with state.db; None when it can."""
    if not detail.state_db:
        return "state.db has no row for this session"
    if all(v.error for v in detail.state_db):
        return "state.db cannot be read: " + detail.state_db[0].error
    if not any(v.messages for v in detail.state_db if not v.error):
        return "state.db has this session but no message of it"
    return None


def bak_reason(detail: SessionDetail) -> str | None:
    """Why there is no .bak to compare with; None when there is one (even an unreadable one: the
    comparison then says why it cannot be read)."""
    return None if detail.bak_path is not None else "this session has no .bak file"


def compare_state_db(detail: SessionDetail, view: int | None = None) -> Alignment:
    """The sidecar beside the session's rows in a state.db (``view``: its position in
    ``detail.state_db``; by default the first one holding messages)."""
    views = detail.state_db
    if view is None:
        view = next((n for n, v in enumerate(views) if not v.error and v.messages), 0)
    return align(sidecar_copy(detail), state_db_copy(views[view]))


def compare_bak(detail: SessionDetail) -> Alignment:
    return align(sidecar_copy(detail), bak_copy(detail))
