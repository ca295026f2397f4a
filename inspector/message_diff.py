"""A planned change to a sidecar, message by message (no Qt): which messages a repair adds, changes
or removes, as the chat will show them. The preview shows this beside the raw unified diff, so a
huge change reads as a few messages, not as thousands of diff lines."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from inspector.export import message_text
from inspector.store.jsonfmt import loads_bytes

ADDED, REMOVED, CHANGED, SAME = "added", "removed", "changed", "same"
TEXT_LIMIT = 4000  # characters of one message shown; the raw diff has everything


@dataclass(frozen=True)
class MessageChange:
    kind: str  # added / removed / changed / same
    before_index: int | None  # position in the messages before (None: added)
    after_index: int | None  # position after (None: removed)
    role: str
    before: str  # the text as the chat shows it ('' for added)
    after: str  # ('' for removed)
    fields: tuple[str, ...] = ()  # for "changed": the keys whose values differ


@dataclass(frozen=True)
class MessageDiff:
    changes: list[MessageChange]
    note: str | None = None  # e.g. the previous file could not be read as a chat

    def counts(self) -> dict[str, int]:
        out = {ADDED: 0, REMOVED: 0, CHANGED: 0}
        for c in self.changes:
            if c.kind in out:
                out[c.kind] += 1
        return out

    def summary(self) -> str:
        n = self.counts()
        if not any(n.values()):
            return "No message is added, changed or removed."
        parts = [f"{n[k]} {k}" for k in (ADDED, CHANGED, REMOVED) if n[k]]
        return "Messages: " + ", ".join(parts) + "."


def _messages(data: bytes | None) -> tuple[list[dict] | None, str | None]:
    if data is None:
        return [], None
    try:
        obj = loads_bytes(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"the file before could not be read as a chat ({str(exc)[:120]})"
    if not isinstance(obj, dict):
        return None, "the file is not a chat (not a JSON object)"
    messages = obj.get("messages")
    if not isinstance(messages, list):
        return [], None
    return [m if isinstance(m, dict) else {"content": m} for m in messages], None


def _text(message: dict) -> str:
    text = message_text(message.get("content"))
    if not text and message.get("tool_calls"):
        text = (
            "(tool calls: "
            + ", ".join(
                str((c.get("function") or {}).get("name") or c.get("name") or "?")
                if isinstance(c, dict)
                else "?"
                for c in message["tool_calls"]
            )
            + ")"
        )
    return text[:TEXT_LIMIT] + ("…" if len(text) > TEXT_LIMIT else "")


def _key(message: dict) -> str:
    return json.dumps([message.get("role"), message_text(message.get("content"))], ensure_ascii=False)


def _differing(before: dict, after: dict) -> tuple[str, ...]:
    keys = list(dict.fromkeys(list(before) + list(after)))
    return tuple(k for k in keys if before.get(k, _MISSING) != after.get(k, _MISSING))


_MISSING: Any = object()


# texts at least this alike (or with the same first line) are one message changed, not one removed
# and one added
PAIR_RATIO = 0.6


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].strip()


def pair_alike(before: list[dict], after: list[dict], bs: range, as_: range) -> dict[int, int]:
    """In a replaced block: each old message paired, in order, with the most alike new one of its
    role (a re-worded marker is "changed", the answers recovered above it "added")."""
    pairs: dict[int, int] = {}
    start = as_.start
    for i in bs:
        role, text = before[i].get("role"), message_text(before[i].get("content"))[:2000]
        best, best_ratio = None, PAIR_RATIO
        for j in range(start, as_.stop):
            if after[j].get("role") != role:
                continue
            other = message_text(after[j].get("content"))[:2000]
            ratio = difflib.SequenceMatcher(None, text, other, autojunk=False).ratio()
            if _first_line(text) and _first_line(text) == _first_line(other):
                ratio = max(ratio, PAIR_RATIO)  # a re-worded marker keeps its heading
            if ratio >= best_ratio:
                best, best_ratio = j, ratio
        if best is not None:
            pairs[i] = best
            start = best + 1
    return pairs


def diff_messages(
    before: bytes | None, after: bytes | None, *, keep_same: bool = False
) -> MessageDiff | None:
    """The messages of two versions of a sidecar, aligned; None when ``after`` is not a chat."""
    after_msgs, _ = _messages(after)
    if after_msgs is None:
        return None
    before_msgs, note = _messages(before)  # the note says why the file before is not shown as a chat
    if before_msgs is None:
        before_msgs = []
    changes: list[MessageChange] = []
    matcher = difflib.SequenceMatcher(
        a=[_key(m) for m in before_msgs], b=[_key(m) for m in after_msgs], autojunk=False
    )
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                b, a = before_msgs[i], after_msgs[j]
                fields = _differing(b, a)
                if fields:
                    changes.append(
                        MessageChange(CHANGED, i, j, str(a.get("role") or ""), _text(b), _text(a), fields)
                    )
                elif keep_same:
                    changes.append(MessageChange(SAME, i, j, str(a.get("role") or ""), _text(b), _text(a)))
            continue
        pairs = pair_alike(before_msgs, after_msgs, range(i1, i2), range(j1, j2))
        paired_after = {j: i for i, j in pairs.items()}
        for i in range(i1, i2):  # removed: said before the added ones of the block
            if i not in pairs:
                m = before_msgs[i]
                changes.append(MessageChange(REMOVED, i, None, str(m.get("role") or ""), _text(m), ""))
        for j in range(j1, j2):
            a = after_msgs[j]
            if j in paired_after:
                b = before_msgs[paired_after[j]]
                changes.append(
                    MessageChange(
                        CHANGED,
                        paired_after[j],
                        j,
                        str(a.get("role") or ""),
                        _text(b),
                        _text(a),
                        _differing(b, a),
                    )
                )
            else:
                changes.append(MessageChange(ADDED, None, j, str(a.get("role") or ""), "", _text(a)))
    return MessageDiff(changes, note)
