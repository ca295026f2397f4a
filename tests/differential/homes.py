"""Seeded recipes for randomized Hermes homes, shaped like real ones.

A :class:`Case` is everything one seed decides: the clock, the action and its session, the
sessions to write with hermes' own ``Session.save`` (several saves each, so hermes leaves its
own ``.bak`` when a save shrinks the transcript), the run-journal events to append with
``append_run_event``, and what real homes add afterwards that hermes' writers never produce
(torn/CRLF/invalid-UTF-8/zero-byte journals, a missing/torn/non-list index, odd-but-valid JSON,
core transcripts, an agent ``state.db`` with rows that have no sidecar).

Only the recipe and the post-edits live here; the writing happens in the hermes child
(``hermes_side.py``), the state.db is built with the project's copy of the agent schema.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"

ACTIONS = ("recover-journal", "repair-interrupted", "materialize", "restore-backup", "rebuild-index", "audit")
# how often each action is drawn: the per-session repairs have the most branches
ACTION_WEIGHTS = (5, 5, 2, 2, 2, 1)

TEXTS = (
    "hello",
    "Summarise README.md",
    "写一个快速排序",
    "こんにちは世界",
    "🙂 emoji 👍🏽 flags 🇳🇱",
    "line\u2028separator",
    "para\u2029sep",
    "tab\there",
    'quote " and \\ backslash',
    "ünïcödé ß",
    "",
    "   ",
    "a" * 300,
    "```python\nprint(1)\n```",
    "\u0000nul",
    "زبان فارسی",
    "mixed 中文 and English",
)
# token/cost counters as real homes hold them: ints, floats, numeric strings, null, junk
COUNTERS = (
    0,
    0,
    1,
    7,
    120,
    2210,
    48213,
    10**6,
    12.9,
    0.4,
    3.0,
    "15",
    "7.5",
    " 42 ",
    "",
    "abc",
    None,
    True,
    False,
    -5,
    2**63,
    1e16,
)
COSTS = (None, 0, 0.0, 0.0123, 1.5, "0.02", "n/a", 7)
INTERRUPTED_RETRY = (
    "**Response interrupted.**\n\nThe live response stream stopped before this turn finished. "
    "Recovering the partial output from the run journal — reload this session to retry."
)
RETRY_CAP = 12
GIVEUP = 24 * 3600


@dataclass
class Case:
    seed: int
    now: float
    server_started_at: float
    build_clock: float
    action: str
    session_id: str | None
    sessions: list[dict] = field(default_factory=list)  # hermes_side "build" sessions
    journals: list[dict] = field(default_factory=list)  # append_run_event calls
    sidecar_edits: dict[str, str] = field(default_factory=dict)  # sid -> odd-JSON edit name
    journal_damage: list[tuple[str, str, str]] = field(default_factory=list)  # (sid, run, kind)
    index_state: str = "hermes"  # hermes | missing | torn | not-list | ...
    core: list[dict] = field(default_factory=list)  # core transcripts to write
    turn_events: list[tuple[str, dict]] = field(default_factory=list)  # append_turn_journal_event calls
    deleted: list[str] = field(default_factory=list)  # hermes' deleted-session tombstone
    pruned: list[str] = field(default_factory=list)  # hermes' zero-message-orphan tombstone
    file_edits: list[tuple[str, str]] = field(default_factory=list)  # (sid, orphan-bak | torn-live | id-copy)
    state_rows: list[dict] = field(default_factory=list)  # agent state.db session rows
    notes: list[str] = field(default_factory=list)


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _ts(rng: random.Random, base: float) -> Any:
    t = base + rng.randint(-5000, 0) + rng.choice((0, 0.5, 0.25))
    return rng.choice((t, int(t), t, str(t), None, t))


def _message(rng: random.Random, role: str, base: float) -> dict:
    msg: dict[str, Any] = {"role": role, "content": rng.choice(TEXTS)}
    key = rng.choice(("timestamp", "timestamp", "_ts"))
    value = _ts(rng, base)
    if value is not None:
        msg[key] = value
    if role == "user" and rng.random() < 0.15:
        msg["attachments"] = [
            {"name": rng.choice(("a.png", "報告.pdf")), "path": "/tmp/x", "size": rng.randint(1, 9999)}
        ]
    if role == "assistant" and rng.random() < 0.2:
        msg["reasoning"] = rng.choice(TEXTS)
    if role == "assistant" and rng.random() < 0.1:
        msg["_partial"] = True
        msg["content"] = rng.choice(("", "partial answer", "  "))
    return msg


def _transcript(rng: random.Random, n: int, base: float) -> list[dict]:
    out: list[dict] = []
    for i in range(n):
        role = "user" if i % 2 == 0 else rng.choice(("assistant", "assistant", "tool"))
        out.append(_message(rng, role, base + i))
        if out[-1].get("_partial") and rng.random() < 0.3:
            # the duplicate partial a failed turn used to leave behind (hermes collapses it on load)
            out.append({**out[-1], "timestamp": base + i + 0.5})
    return out


def _stream_id(rng: random.Random) -> str | int:
    """A run's stream id: 32 hex digits as hermes writes it; about one in six a number instead (a
    hand-edited sidecar: hermes reads the journal of its text, ``str(12345)``) and about one in five
    of the rest padded with blanks (hermes strips them to name the journal, and keeps the id as it
    is in the records and the rows); chosen from the hex digits drawn so that every other draw of a
    seed stays as it was."""
    run = _hex(rng, 32)
    if int(run[:2], 16) < 40:
        return int(run[:8], 16)
    return f" {run}\t" if int(run[2:4], 16) < 52 else run


def _journal(rng: random.Random, sid: str, run: str, start: float, case: Case, terminal: bool) -> None:
    kinds = ["token", "token", "reasoning", "tool", "tool_complete", "metering"]
    t = start
    for _ in range(rng.randint(0, 5)):
        kind = rng.choice(kinds)
        t += rng.choice((0.5, 1.0, 2.25))
        if kind in ("token", "reasoning"):
            payload: dict[str, Any] = {"text": rng.choice(TEXTS)}
        elif kind == "tool":
            payload = {
                "name": "terminal",
                "preview": "ls",
                "args": {"command": rng.choice(("ls", "wc -l 表"))},
            }
        elif kind == "tool_complete":
            payload = {"name": "terminal", "duration": 1.2, "is_error": rng.random() < 0.2}
        else:
            payload = {"input_tokens": rng.choice(COUNTERS[:8]), "output_tokens": rng.randint(0, 900)}
        case.journals.append(
            {"session_id": sid, "run_id": run, "event": kind, "payload": payload, "created_at": t}
        )
    if terminal:
        end = rng.choice(("stream_end", "done", "apperror", "cancel"))
        payload = {"session_id": sid}
        if end == "apperror":
            payload = {
                "message": rng.choice(
                    ("Gateway API server returned HTTP 502", "The model returned an empty response")
                ),
                "type": rng.choice(("gateway_error", "empty_response")),
            }
            if rng.random() < 0.6:
                _embed_gateway_session(random.Random(rng.random()), payload, sid, start)
        case.journals.append(
            {"session_id": sid, "run_id": run, "event": end, "payload": payload, "created_at": t + 1}
        )


def _embed_gateway_session(rng: random.Random, payload: dict, sid: str, base: float) -> None:
    """What a gateway's terminal error carries when the WebUI could not save the turn: the session
    with its transcript, whose last assistant row after the last user row is the error hermes'
    ``_recoverable_unsaved_gateway_terminal_error`` recovers (or, drawn here, is not: no user row,
    an error text of spaces, not ``_error``, another session, already persisted)."""
    rows: list[dict] = []
    if rng.random() < 0.8:
        rows += _transcript(rng, rng.randint(0, 3), base)
        rows.append({"role": "user", "content": rng.choice(TEXTS), "timestamp": base + 5})
    elif rng.random() < 0.5:
        rows.append({"role": "assistant", "content": "before any user row", "timestamp": base + 5})
    error = {
        "role": "assistant",
        "content": rng.choice(("Gateway API server returned HTTP 502", "   ", "", "\n\t", 7)),
        "_error": rng.choice((True, True, True, 1, "true")),
        "timestamp": base + 6,
    }
    if rng.random() < 0.85:
        rows.append(error)
    if rng.random() < 0.2:
        rows.append({"role": "tool", "content": "late tool row", "timestamp": base + 7})
    payload["session_id"] = sid if rng.random() < 0.9 else "other" + sid[5:]
    payload["session"] = {"session_id": sid if rng.random() < 0.9 else "other" + sid[5:], "messages": rows}
    if rng.random() < 0.25:
        payload["terminal_session_persisted"] = rng.choice((True, False))
        payload["terminal_session_persisted_session_id"] = rng.choice((sid, "other"))


def _session(rng: random.Random, case: Case, sid: str, role: str, updated_pool: list[float]) -> dict:
    """The saves of one session; ``role`` = what it is set up for (target of the action or a bystander)."""
    base = case.now - rng.randint(600, 400000)
    n = rng.randint(0, 7)
    messages = _transcript(rng, n, base)
    init: dict[str, Any] = {
        "session_id": sid,
        "title": rng.choice(TEXTS + ("Untitled",)),
        "workspace": rng.choice(("", "", "/tmp", "~", "proj/sub", "/tmp/../tmp")),
        "model": rng.choice(("openai/gpt-5", "anthropic/claude-sonnet-4.6", "")),
        "model_provider": rng.choice((None, "OpenRouter ", "", "anthropic")),
        "created_at": rng.choice((base, int(base), base)),
        "updated_at": rng.choice(updated_pool),
        "messages": messages,
        "profile": rng.choice((None, None, "default", "work")),
        "pinned": rng.random() < 0.1,
        "archived": rng.random() < 0.05,
        "input_tokens": rng.choice(COUNTERS),
        "output_tokens": rng.choice(COUNTERS),
        "cache_read_tokens": rng.choice(COUNTERS),
        "cache_write_tokens": rng.choice(COUNTERS),
        "estimated_cost": rng.choice(COSTS),
    }
    if rng.random() < 0.1:
        init["parent_session_id"] = rng.choice(("p" + _hex(rng, 11), ""))
    if rng.random() < 0.1:
        init["compression_recovery_action"] = rng.choice((" keep ", "", "retry"))
    if rng.random() < 0.1:
        init["post_compression_context_tokens_estimate"] = rng.choice((0, 5, "12", -3, 7.9, True))
    if rng.random() < 0.08:
        init["worktree_path"] = rng.choice(("/tmp/wt", "rel/wt"))
        init["worktree_branch"] = rng.choice(("main", "", "feature/ü"))
    if rng.random() < 0.08:
        init["share_token"] = rng.choice((" tok ", "abc"))
    sets: dict[str, Any] = {}
    # hermes' Session() turns falsy counters into 0; real files still hold null or "" there
    for key in ("input_tokens", "cache_read_tokens", "output_tokens"):
        if rng.random() < 0.08:
            sets[key] = rng.choice((None, "", False))
    saves = []
    if role == "restore-backup" or (role == "bystander" and rng.random() < 0.1):
        # a longer transcript first; the second save shrinks it: hermes writes <sid>.json.bak itself
        longer = messages + _transcript(rng, rng.randint(1, 4), base + 50)
        saves.append({"init": {**init, "messages": longer}})
        init = {**init, "messages": messages[: rng.randint(0, len(messages))]}
        if rng.random() < 0.3:
            init["intentional_shrink_generation"] = rng.choice((1, "x", None))
    if role == "repair-interrupted":
        run = _stream_id(rng)
        init["active_stream_id"] = rng.choice((run, run, None))
        init["pending_user_message"] = rng.choice(
            TEXTS[:6] + ("[IMPORTANT: Background process proc_1 completed (exit_code=0).\nOutput:\nok]",)
        )
        init["pending_started_at"] = rng.choice(
            (
                case.server_started_at - rng.randint(1, 900),
                case.server_started_at + rng.randint(1, 900),
                None,
                str(case.server_started_at - 5),
                int(case.server_started_at) + 3,
            )
        )
        init["pending_user_source"] = rng.choice((None, None, "process_wakeup"))
        if rng.random() < 0.2:
            init["pending_attachments"] = [{"name": "a.png", "path": "/tmp/a.png"}]
        if rng.random() < 0.2:
            init["messages"] = []
            if rng.random() < 0.6:
                case.core.append(
                    {
                        "sid": sid,
                        "profile": init["profile"],
                        "messages": _transcript(rng, rng.randint(1, 4), base)
                        + [{"role": "user", "content": init["pending_user_message"], "timestamp": base + 9}],
                    }
                )
        if rng.random() < 0.7:
            _journal(
                rng,
                sid,
                run,
                float(init["pending_started_at"] or base) + 1,
                case,
                terminal=rng.random() < 0.4,
            )
            if rng.random() < 0.15:
                case.journal_damage.append((sid, run, rng.choice(JOURNAL_DAMAGE)))
    if role == "recover-journal":
        run = _stream_id(rng)
        first_seen = case.now - rng.choice((GIVEUP - 5, GIVEUP + 5, GIVEUP, 60, 3600, GIVEUP * 2))
        marker = {
            "role": "assistant",
            "content": INTERRUPTED_RETRY,
            "timestamp": int(first_seen),
            "_error": True,
            "type": "interrupted",
            "interruption_cause": rng.choice(("process_restart", "lost_worker_bookkeeping")),
            "_pending_journal_recovery": True,
            "_journal_retry_stream_id": run,
            "_journal_retry_attempts": rng.choice((0, 1, RETRY_CAP - 2, RETRY_CAP - 1, RETRY_CAP, "3")),
            "_journal_retry_first_seen_ts": rng.choice((first_seen, int(first_seen), None)),
        }
        msgs = list(init["messages"]) + [
            {"role": "user", "content": rng.choice(TEXTS[:5]), "timestamp": base + 20, "_recovered": True},
            marker,
        ]
        if rng.random() < 0.2:  # a later turn below the marker
            msgs += [{"role": "user", "content": "next", "timestamp": base + 40}]
        init["messages"] = msgs
        if rng.random() < 0.85:
            _journal(rng, sid, run, base + 21, case, terminal=rng.random() < 0.6)
            if rng.random() < 0.2:
                case.journal_damage.append((sid, run, rng.choice(JOURNAL_DAMAGE)))
        if rng.random() < 0.15:  # an earlier, older run of the same session
            _journal(rng, sid, _hex(rng, 32), base - 100, case, terminal=True)
    saves.append({"init": init, "set": sets})
    return {"sid": sid, "saves": saves}


ODD_EDITS = (
    "unknown-keys",
    "reorder",
    "duplicate-key",
    "nan-cost",
    "huge-int",
    "compact-json",
    "string-updated-at",
    "surrogate-title",
    "null-workspace",
    "string-message-count",
    "float-ts",
    "messages-not-list",
    "tool-calls-not-list",
    "self-key",
    "infinite-counter",
    "list-content-partial",
    "huge-ts",
    "deep-key",
    "deep-key-ok",
    "bool-updated-at",
    "title-not-text",
    "text-created-at",
)


def make_case(seed: int) -> Case:
    """Everything seed ``seed`` decides."""
    rng = random.Random(seed)
    now = 1779000000.0 + rng.randint(0, 5_000_000) + rng.choice((0.0, 0.5, 0.125))
    started = now - rng.choice((30, 600, 7200))
    action = rng.choices(ACTIONS, ACTION_WEIGHTS)[0]
    case = Case(
        seed=seed,
        now=now,
        server_started_at=started,
        build_clock=now - rng.randint(1, 300),
        action=action,
        session_id=None,
    )
    pool = [now - rng.randint(1000, 90000) for _ in range(rng.randint(1, 4))]  # few values: ties
    pool += [float(int(pool[0])), int(pool[0])]
    n = rng.randint(0, 5)
    sids = [rng.choice((_hex(rng, 12), _hex(rng, 32), "s_" + _hex(rng, 8))) for _ in range(n)]
    target = None
    if action in ("recover-journal", "repair-interrupted", "restore-backup") and sids:
        target = sids[0]
    elif action in ("recover-journal", "repair-interrupted", "restore-backup"):
        target = _hex(rng, 12)
        sids = [target]
    for sid in sids:
        role = action if sid == target else "bystander"
        if role == "bystander" and rng.random() < 0.3:
            role = rng.choice(("recover-journal", "repair-interrupted"))
        case.sessions.append(_session(rng, case, sid, role, pool))
    case.session_id = target
    for sid in sids:
        if rng.random() < 0.12:
            case.sidecar_edits[sid] = rng.choice(ODD_EDITS)
    for sid in sids + [_hex(rng, 12)]:
        if rng.random() < 0.1:
            case.deleted.append(sid)
        if rng.random() < 0.1:
            case.pruned.append(sid)
        if rng.random() < 0.08:
            _turns(rng, case, sid)
    for sid in sids:
        if rng.random() < 0.07:
            case.file_edits.append((sid, rng.choice(("orphan-bak", "torn-live", "id-copy"))))
    case.index_state = rng.choice(
        ("hermes",) * 6
        + (
            "missing",
            "torn",
            "not-list",
            "row-not-object",
            "ghost-row",
            "duplicate-row",
            "empty-list",
            "odd-updated-at",
            "unhashable-id",
            "no-id-row",
        )
    )
    if action in ("materialize", "audit") or rng.random() < 0.2:
        case.state_rows = _state_rows(rng, now, sids)
    return case


def _turns(rng: random.Random, case: Case, sid: str) -> None:
    """Turn-journal events as the WebUI writes them: a submitted turn, maybe started and finished."""
    turn = "20260526T1020" + str(rng.randint(10, 59)) + "Z-" + _hex(rng, 12)
    stream = _hex(rng, 32)
    t = case.now - rng.randint(100, 100000)
    case.turn_events.append(
        (
            sid,
            {
                "event": "submitted",
                "turn_id": turn,
                "stream_id": stream,
                "role": "user",
                "content": rng.choice(TEXTS),
                "attachments": [],
                "workspace": "/tmp",
                "model": "openai/gpt-5",
                "model_provider": "openai",
                "created_at": t,
            },
        )
    )
    for name in ("worker_started", rng.choice(("completed", "interrupted", "failed", None))):
        if name and rng.random() < 0.7:
            t += 1.5
            case.turn_events.append(
                (sid, {"event": name, "turn_id": turn, "stream_id": stream, "created_at": t})
            )


def _state_rows(rng: random.Random, now: float, sids: list[str]) -> list[dict]:
    rows = []
    for _ in range(rng.randint(0, 4)):
        sid = rng.choice((_hex(rng, 12), "2026" + _hex(rng, 8)))
        rows.append(
            {
                "id": sid,
                "source": rng.choice(("webui", "webui", "cli", "telegram")),
                "title": rng.choice((None, "DB title " + _hex(rng, 4), "東京")),
                "started_at": now - rng.randint(1000, 100000),
                "messages": rng.randint(0, 4),
                "input_tokens": rng.choice((0, 10, 5000)),
                "cache_read_tokens": rng.choice((0, 0, 800)),
                "cwd": rng.choice((None, "/tmp", "")),
            }
        )
    for sid in sids[:2]:
        if rng.random() < 0.3:  # a row whose sidecar exists
            rows.append(
                {
                    "id": sid,
                    "source": "webui",
                    "title": None,
                    "started_at": now - 5000,
                    "messages": 2,
                    "input_tokens": 0,
                    "cache_read_tokens": 0,
                    "cwd": None,
                }
            )
    return rows


# ---------------------------------------------------------------- what real homes add after hermes wrote


def _edit_sidecar(path: Path, kind: str) -> None:
    text = path.read_text(encoding="utf-8")
    obj = json.loads(text)
    if kind == "unknown-keys":
        obj["x_future_key"] = {"nested": [1, 2]}
        obj = {"zz_first": True, **obj}
    elif kind == "reorder":
        obj = dict(reversed(list(obj.items())))
    elif kind == "nan-cost":
        obj["estimated_cost"] = float("nan")
    elif kind == "huge-int":
        obj["input_tokens"] = 123456789012345678901234567890
    elif kind == "string-updated-at":
        obj["updated_at"] = "2026-05-01T10:00:00"
    elif kind == "null-workspace":
        obj["workspace"] = None
    elif kind == "string-message-count":
        obj["message_count"] = str(obj.get("message_count", 0))
    elif kind == "list-content-partial":
        obj.setdefault("messages", []).append(
            {
                "role": "assistant",
                "_partial": True,
                "timestamp": 5.0,
                "content": [{"type": "text", "text": " "}, {"type": "image"}, " "],
            }
        )
    elif kind == "huge-ts":
        obj.setdefault("messages", []).append({"role": "user", "content": "x", "_ts": 10**400})
    elif kind == "bool-updated-at":
        obj["updated_at"] = True
    elif kind == "title-not-text":
        obj["title"] = {"text": "t"} if obj.get("title") else 12
    elif kind == "text-created-at":
        obj["created_at"] = "2026-01-01"
    elif kind == "messages-not-list":
        obj["messages"] = {"0": {"role": "user", "content": "hi"}}
    elif kind == "tool-calls-not-list":
        obj["tool_calls"] = {"call": 1}
    elif kind == "self-key":
        obj["self"] = 1
    elif kind == "infinite-counter":
        obj["cache_read_tokens"] = float("inf")
    elif kind == "float-ts":
        for m in obj.get("messages") or []:
            if isinstance(m, dict) and "timestamp" in m:
                m["timestamp"] = str(m["timestamp"])
    if kind in ("deep-key", "deep-key-ok"):
        # a key nested 995+ levels deep (hermes' json.loads raises RecursionError: the sidecar is
        # unreadable to it) or 600-700 (read by hermes: inspector.store.jsonfmt.PARSE_DEPTH_LIMIT)
        levels = 995 + len(text) % 40 if kind == "deep-key" else 600 + len(text) % 100
        obj["x_deep"] = "DEEP-VALUE"
        body = json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")
        data = body.replace(b'"DEEP-VALUE"', b"[" * levels + b"]" * levels, 1)
    elif kind == "compact-json":
        data = json.dumps(obj).encode()
    elif kind == "duplicate-key":
        body = json.dumps(obj, ensure_ascii=False, indent=2)
        data = body.replace('{\n  "session_id"', '{\n  "title": "shadowed",\n  "session_id"', 1).encode()
    elif kind == "surrogate-title":
        data = json.dumps({**obj, "title": "bad \ud83d title"}, ensure_ascii=True, indent=2).encode()
    else:
        data = json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")
    path.write_bytes(data)


# "deep": a line nested 994+ levels deep (hermes' reader raises RecursionError: the whole journal
# is no output), sometimes cut short after the deep part; "deep-ok": 850-900 levels, read by every
# hermes caller (inspector.store.json_depth; the depths between depend on hermes' stack: not made);
# "glued": two lines made one and a blank line added (msgspec's stream count equals the line count).
JOURNAL_DAMAGE = ("torn", "crlf", "bad-utf8", "empty", "deep", "deep-ok", "glued")


def _deep_line(levels: int, cut: bool) -> bytes:
    """A token event whose payload nests ``levels`` levels in all (the event and its payload included)."""
    n = levels - 2
    line = b'{"event":"token","payload":{"text":"deep","x":' + b"[" * n + b"]" * n + b"}}"
    return line[: len(line) - n // 2] if cut else line


def _damage_journal(path: Path, kind: str) -> None:
    data = path.read_bytes()
    if kind in ("deep", "deep-ok"):
        levels = 994 + len(data) % 600 if kind == "deep" else 850 + len(data) % 51
        line = _deep_line(levels, cut=kind == "deep" and len(data) % 3 == 0) + b"\n"
        first = data.find(b"\n") + 1
        at = len(data) if len(data) % 2 or first <= 0 else first  # at the end, or after the first line
        path.write_bytes(data[:at] + line + data[at:])
        return
    if kind == "torn":
        path.write_bytes(data[: max(0, len(data) - 17)])
    elif kind == "crlf":
        path.write_bytes(data.replace(b"\n", b"\r\n"))
    elif kind == "bad-utf8":
        path.write_bytes(data + b'{"version":1,"payload":{"text":"\xe4\xb8')
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "glued":  # two lines made one (hermes skips it) and a blank line: as many lines as objects
        lines = data.split(b"\n")
        if len(lines) >= 3:
            lines[0:2] = [lines[0] + lines[1]]
            lines.insert(len(lines) // 2, b"")
        path.write_bytes(b"\n".join(lines))


def _edit_index(path: Path, state: str, rng: random.Random) -> None:
    if state == "missing":
        path.unlink(missing_ok=True)
        return
    if state == "torn":
        path.write_bytes(path.read_bytes()[:-5] if path.exists() else b"[")
        return
    if state == "not-list":
        path.write_bytes(b'{"sessions": []}')
        return
    rows = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    if state == "row-not-object":
        rows.insert(rng.randint(0, len(rows)), "junk")
    elif state == "ghost-row":
        rows.append({"session_id": "ghost" + _hex(rng, 6), "updated_at": 1.0, "title": "gone"})
    elif state == "duplicate-row" and rows:
        rows.append(dict(rows[0]))
    elif state == "empty-list":
        rows = []
    elif state == "odd-updated-at" and rows:
        rows[-1] = {**rows[-1], "updated_at": rng.choice(("yesterday", None, [1]))}
    elif state == "unhashable-id":
        rows.append({"session_id": ["x"], "updated_at": 3.0})
    elif state == "no-id-row":
        rows.insert(0, {"title": "no id", "updated_at": 4.0})
    path.write_bytes(json.dumps(rows, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass"))


def _load_state_db_builder():
    spec = importlib.util.spec_from_file_location("make_state_db", FIXTURES / "state-db" / "make_state_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BUILDER = None


def write_state_db(path: Path, rows: list[dict]) -> None:
    """The agent's v31 schema (the project's fixture builder), with ``rows`` and their messages."""
    global _BUILDER
    if _BUILDER is None:
        _BUILDER = _load_state_db_builder()
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=DELETE")
    _BUILDER.build_schema(conn, 31, want_fts=False)
    b = _BUILDER.Builder(conn, 31)
    conn.execute("BEGIN")
    seen = set()
    for row in rows:
        if row["id"] in seen:
            continue
        seen.add(row["id"])
        title = row["title"]
        if title is not None and conn.execute("SELECT 1 FROM sessions WHERE title=?", (title,)).fetchone():
            title = None
        b.session(
            id=row["id"],
            source=row["source"],
            title=title,
            model="openai/gpt-5",
            started_at=row["started_at"],
            input_tokens=row["input_tokens"],
            cache_read_tokens=row["cache_read_tokens"],
            cwd=row["cwd"],
            last_activity_at=row["started_at"] + 9,
        )
        for i in range(row["messages"]):
            b.message(
                row["id"],
                "user" if i % 2 == 0 else "assistant",
                f"m{i} {TEXTS[i % len(TEXTS)]}",
                row["started_at"] + i,
            )
    conn.execute("COMMIT")
    conn.close()


def finish_home(case: Case, home: Path) -> None:
    """Apply what hermes' writers do not produce (after the hermes child built the home)."""
    rng = random.Random(case.seed * 7919 + 1)
    sessions = home / "webui" / "sessions"
    for sid, kind in case.sidecar_edits.items():
        path = sessions / f"{sid}.json"
        if path.exists():
            _edit_sidecar(path, kind)
    for sid, run, kind in case.journal_damage:
        path = sessions / "_run_journal" / sid / f"{run}.jsonl"
        if path.exists():
            _damage_journal(path, kind)
    for sid, kind in case.file_edits:
        live, bak = sessions / f"{sid}.json", sessions / f"{sid}.json.bak"
        if not live.exists():
            continue
        if kind == "orphan-bak":
            if not bak.exists():
                bak.write_bytes(live.read_bytes())
            live.unlink()
        elif kind == "torn-live":
            data = live.read_bytes()
            live.write_bytes(data[: len(data) // 2])
        elif kind == "id-copy":
            (sessions / f"copy{sid[:6]}.json").write_bytes(live.read_bytes())
    if rng.random() < 0.05:
        name = rng.choice(("_deleted_webui_sessions.json", "_pruned_webui_orphans.json"))
        ids = [rng.choice([s["sid"] for s in case.sessions] or ["x"]), " padded ", "", 7, None]
        (sessions / name).write_text(
            json.dumps(rng.choice(({"version": 1, "ids": ids}, {"ids": "x"}, [1], {}))), encoding="utf-8"
        )
    if case.index_state != "hermes":
        _edit_index(sessions / "_index.json", case.index_state, rng)
    for core in case.core:
        profile = core["profile"]
        base = home if not profile or profile == "default" else home / "profiles" / profile
        path = base / "sessions" / f"session_{core['sid']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {"session_id": core["sid"], "platform": "webui", "messages": core["messages"]},
                ensure_ascii=False,
                indent=2,
            ),
            encoding="utf-8",
        )
    if case.state_rows:
        write_state_db(home / "state.db", case.state_rows)


def build_request(case: Case, home: Path) -> dict:
    """The hermes child's ``build`` request for this case."""
    return {
        "op": "build",
        "home": str(home),
        "clock": case.build_clock,
        "sessions": case.sessions,
        "journals": case.journals,
        "turn_events": case.turn_events,
        "deleted": case.deleted,
        "pruned": case.pruned,
    }


def act_request(case: Case, home: Path) -> dict:
    """The hermes child's ``act`` request: this case's action on ``home``, at its clock."""
    return {
        "op": "act",
        "home": str(home),
        "action": case.action,
        "session_id": case.session_id,
        "now": case.now,
        "server_started_at": case.server_started_at,
    }
