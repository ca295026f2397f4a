"""Export one session's transcript for a support ticket, as Markdown or as JSON. No Qt.

Message content is untrusted. In Markdown every piece of it sits inside a code fence longer
than any backtick run it contains, so nothing in a message can close the fence, become a
link, an image or HTML when the ticket system renders the file. Control characters are
escaped as they are on the terminal (:func:`inspector.textsafe.safe_text`).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from inspector.session_detail import SessionDetail
from inspector.textsafe import one_line, safe_text

FLAG_KEYS = ("_recovered", "_recovered_from_run_journal", "_error", "_partial", "_pending_journal_recovery")
_BACKTICKS = re.compile(r"`+")


def to_json_text(value: Any, indent: int | None = None) -> str:
    """``json.dumps`` for display: never raises (hostile input can nest deeper than the encoder goes)."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    except (RecursionError, ValueError, TypeError):
        return f"({type(value).__name__} nested too deeply to show)"


def message_text(content: Any) -> str:
    """The readable text of a message's ``content`` (a string, or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                text = (
                    part.get("text") or part.get("content") or part.get("thinking") or part.get("reasoning")
                )
                parts.append(text if isinstance(text, str) else to_json_text(part))
            else:
                parts.append(to_json_text(part))
        return "\n".join(parts)
    return to_json_text(content)


def message_flags(msg: dict) -> list[str]:
    """The recovery flags of a message, in words a ticket reader can search for."""
    flags = [k for k in FLAG_KEYS if msg.get(k)]
    if msg.get("type"):
        flags.append(f"type={msg['type']}")
    if msg.get("interruption_cause"):
        flags.append(f"cause={msg['interruption_cause']}")
    if msg.get("_pending_journal_recovery"):
        flags.append(
            f"retry stream={msg.get('_journal_retry_stream_id')} "
            f"attempts={msg.get('_journal_retry_attempts', 0)} "
            f"first_seen={msg.get('_journal_retry_first_seen_ts')}"
        )
    if msg.get("_recovered_stream_id"):
        flags.append(f"stream={msg['_recovered_stream_id']}")
    return flags


def format_time(value: Any) -> str:
    """Local ``YYYY-MM-DD HH:MM:SS`` for a Unix time, ``-`` when there is none."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        try:
            return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(value)))
        except (OverflowError, OSError, ValueError):
            return str(value)
    return "-"


def tools_by_message(tool_calls: Any) -> dict[int, list[dict]]:
    """Tool cards grouped by the message index they hang under (``assistant_msg_idx``)."""
    out: dict[int, list[dict]] = {}
    if not isinstance(tool_calls, list):
        return out
    for card in tool_calls:
        if not isinstance(card, dict):
            continue
        idx = card.get("assistant_msg_idx")
        if isinstance(idx, int) and not isinstance(idx, bool):
            out.setdefault(idx, []).append(card)
    return out


def _fence(text: str, info: str = "text") -> str:
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{safe_text(text)}\n{fence}"


def _tool_lines(card: dict) -> list[str]:
    state = "done" if card.get("done") else "not finished"
    if card.get("is_error"):
        state += ", error"
    head = f"- tool `{one_line(card.get('name'), 60).replace('`', '')}` ({state}"
    if card.get("tid"):
        head += f", tid {one_line(card.get('tid'), 40)}"
    head += ")"
    lines = [head]
    args = card.get("args")
    if args:
        lines.append(_indent(_fence(to_json_text(args, indent=2), "json")))
    preview = card.get("preview") or card.get("snippet")
    if preview:
        lines.append(_indent(_fence(message_text(preview))))
    return lines


def _indent(block: str) -> str:
    return "\n".join("  " + line for line in block.splitlines())


def transcript_markdown(detail: SessionDetail, *, now: float, include_state_db: bool = False) -> str:
    """The session as Markdown: header, findings, then each message with its flags and tool cards."""
    title = one_line(detail.title, 200) or "(untitled)"
    out = [f"# Session {safe_text(detail.session_id)}", ""]
    out.append(f"- title: {_inline(title)}")
    out.append(f"- profile: {detail.profile or '-'}")
    if detail.sidecar_path is not None:
        out.append(f"- sidecar: `{detail.sidecar_path}`" + ("" if detail.sidecar_raw else " (missing)"))
    if detail.sidecar_error:
        out.append(f"- sidecar error: {_inline(one_line(detail.sidecar_error, 300))}")
    for run in detail.runs:
        s = run.summary or {}
        out.append(
            f"- run {run.run_id}: {s.get('event_count', '?')} events, last seq {s.get('last_seq', '?')}, "
            f"{s.get('terminal_state', run.error)}"
        )
    out.append(f"- exported: {format_time(now)}")
    if detail.findings:
        out += ["", "## Findings", ""]
        for f in detail.findings:
            action = f" (action: {f.action})" if f.action else ""
            out.append(f"- {f.severity}: {_inline(one_line(f.message, 300))}{action}")
    out += ["", f"## Messages ({len(detail.messages)})"]
    tools = tools_by_message((detail.sidecar or {}).get("tool_calls"))
    for i, msg in enumerate(detail.messages):
        out += [""] + _message_block(i, msg, tools.get(i, []))
    if include_state_db:
        for view in detail.state_db:
            out += ["", f"## state.db transcript ({view.profile}: {len(view.messages)} messages)"]
            if view.error:
                out.append(f"error: {_inline(one_line(view.error, 300))}")
            for i, msg in enumerate(view.messages):
                out += [""] + _message_block(i, msg, [])
    return "\n".join(out) + "\n"


def _inline(text: str) -> str:
    # One line of untrusted text outside a fence: inline code, so Markdown/HTML stays literal.
    text = text.replace("`", "'")
    return f"`{text}`" if text else "-"


def _message_block(i: int, msg: Any, cards: list[dict]) -> list[str]:
    if not isinstance(msg, dict):
        return [f"### [{i}] (not an object)", _fence(to_json_text(msg), "json")]
    role = one_line(msg.get("role"), 30).replace("`", "") or "?"
    lines = [f"### [{i}] {role} · {format_time(msg.get('timestamp'))}"]
    flags = message_flags(msg)
    if flags:
        lines.append("flags: " + ", ".join(_inline(one_line(f, 120)) for f in flags))
    lines.append(_fence(message_text(msg.get("content"))))
    reasoning = msg.get("reasoning")
    if reasoning:
        lines += ["reasoning:", _fence(message_text(reasoning))]
    for card in cards:
        lines += _tool_lines(card)
    return lines


def transcript_json(detail: SessionDetail, *, now: float) -> dict:
    """The session as a JSON-ready dict: metadata, findings, messages, tool cards, runs."""
    sidecar = detail.sidecar or {}
    return {
        "format": "hermes-inspector-transcript/1",
        "exported_at": now,
        "session_id": detail.session_id,
        "title": detail.title,
        "profile": detail.profile,
        "sidecar_path": str(detail.sidecar_path) if detail.sidecar_path else None,
        "sidecar_error": detail.sidecar_error,
        "metadata": {
            k: v
            for k, v in sidecar.items()
            if k not in ("messages", "tool_calls", "context_messages", "anchor_activity_scenes")
        },
        "findings": [f.to_json() for f in detail.findings],
        "messages": detail.messages,
        "tool_calls": sidecar.get("tool_calls") if isinstance(sidecar.get("tool_calls"), list) else [],
        "state_db": [
            {"profile": v.profile, "path": str(v.path), "error": v.error, "messages": v.messages}
            for v in detail.state_db
        ],
        "runs": [
            {"run_id": r.run_id, "path": str(r.path), "summary": r.summary, "error": r.error}
            for r in detail.runs
        ],
    }


def transcript_json_bytes(detail: SessionDetail, *, now: float) -> bytes:
    # A lone surrogate (a title of "\\ud800", which hermes loads) cannot be UTF-8: it is written
    # as its JSON escape, which reads back as the same string.
    text = json.dumps(transcript_json(detail, now=now), ensure_ascii=False, indent=2, default=str) + "\n"
    return text.encode("utf-8", "backslashreplace")
