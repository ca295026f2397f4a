"""The demo home: a realistic Hermes home built from scratch, for ``hermes-inspector --demo``.

Everything is written by this project's own code from ``resources/demo_recipe.json`` (the
conversation text); nothing is copied from a real install. For a given clock ``now`` the
build is deterministic: fixed ids, no randomness, every time relative to ``now``. Only the
absolute paths (the home itself and the workspaces under it) differ between two builds.

Layout written under ``root`` (which must be empty or missing)::

    webui/sessions/<sid>.json, <sid>.json.bak, _index.json
    webui/sessions/_run_journal/<sid>/<stream>.jsonl
    state.db                      agent store of the default profile (rollback-journal mode)
    profiles/work/state.db        agent store of the profile "work"
    workspace/<name>/             empty folders the sessions' workspaces point at

Scenarios (keys of :attr:`DemoHome.sessions`):

* ``healthy`` (tool calls + tool rows + session tool cards), ``healthy_reasoning`` (reasoning,
  an image part; the newest session and **missing from _index.json**: the index drift),
  ``healthy_work`` (profile "work", HTML/script text that must be shown literally).
  Each has a matching ``source='webui'`` row with the same messages in its profile's state.db.
* ``lost_response``: a pending-retry interrupted marker after a ``_recovered`` user row, and a
  run journal that now holds the answer (reasoning, tokens, tool + tool_complete, tokens, no
  terminal record): "Recover journal output" promotes it.
* ``waiting_marker``: the same kind of marker, but its journal file does not exist yet.
* ``given_up``: a day-old marker hermes' lazy retry gave up on ("Partial output may have been
  lost", retry keys stripped) while its run journal holds the answer (reasoning, tokens):
  "Bring back given-up output" (an inspector step) puts it back.
* ``stale_pending``: a turn left pending (dead ``active_stream_id``) with a non-terminal
  journal. That journal also has a token containing a raw U+2028 (hermes' reader tears it
  into two malformed fragments) and a torn last line, so the raw journal view shows three
  dropped lines.
* ``state_only``: a ``source='webui'`` chat in state.db with messages and no sidecar.
* ``shrunken``: a live sidecar with 2 messages and a ``.bak`` with 6 (no intentional-shrink marks).
* ``corrupt``: a sidecar cut in the middle of a string (its pre-damage row stays in the index).
* ``empty_orphan_row``: a ``source='webui'`` state.db row with no messages and no sidecar.
* ``cli_only``: a ``source='cli'`` agent session (not a WebUI chat).
"""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from inspector.repair.marker import NEUTRAL_WORDING, strip_retry_keys
from inspector.store.index import INDEX_NAME, rebuild_index
from inspector.store.journal import RUN_JOURNAL_DIR, TERMINAL_EVENTS
from inspector.store.sidecar import LoadedSession, dump_session, load_session, parse_sidecar_bytes

RECIPE_NAME = "demo_recipe.json"
WORK_PROFILE = "work"
UNINDEXED = "healthy_reasoning"
FEATURES = {
    "tool_calls": "healthy",
    "reasoning": "healthy_reasoning",
    "multimodal": "healthy_reasoning",
    "unindexed": "healthy_reasoning",
    "profile_work": "healthy_work",
    "html_content": "healthy_work",
    "torn_journal": "stale_pending",
}
SCHEMA_VERSION = 31
JSON_CONTENT_PREFIX = "\x00json:"
MARKER_CONTENT = (
    "**Response interrupted.**\n\nThe live response stream stopped before this turn finished. "
    "Evidence: the WebUI process started after this turn began, so this looks like a real process "
    "crash or restart. Recovering the partial output from the run journal \u2014 reload this session to retry."
)

STATE_DB_DDL = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT,
    billing_provider TEXT,
    estimated_cost_usd REAL,
    cost_status TEXT,
    title TEXT,
    title_source TEXT,
    last_activity_at REAL,
    profile_name TEXT,
    archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    hidden INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    _compressed_summary INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_sessions_source ON sessions(source);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
"""
SESSION_COLUMNS = (
    "id",
    "source",
    "model",
    "started_at",
    "ended_at",
    "end_reason",
    "message_count",
    "tool_call_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cwd",
    "billing_provider",
    "estimated_cost_usd",
    "cost_status",
    "title",
    "title_source",
    "last_activity_at",
    "profile_name",
)
MESSAGE_COLUMNS = (
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "finish_reason",
    "reasoning",
    "active",
    "compacted",
)


@dataclass(frozen=True)
class DemoHome:
    """A built demo home: its base folder and which session plays which scenario."""

    home: Path
    now: float
    sessions: dict[str, str]
    features: dict[str, str]
    stream_ids: dict[str, str]

    @property
    def state_dir(self) -> Path:
        return self.home / "webui"

    @property
    def session_dir(self) -> Path:
        return self.state_dir / "sessions"

    @property
    def state_db(self) -> Path:
        return self.home / "state.db"

    def profile_state_db(self, profile: str) -> Path:
        return self.home / "profiles" / profile / "state.db"


@dataclass
class _Build:
    """What the scenario builders share while the home is being written."""

    root: Path
    now: float
    indexed: list[LoadedSession] = field(default_factory=list)
    db: dict[str, list[tuple[dict, list[dict]]]] = field(default_factory=dict)
    stream_ids: dict[str, str] = field(default_factory=dict)

    @property
    def session_dir(self) -> Path:
        return self.root / "webui" / "sessions"

    def ts(self, offset: float) -> float:
        return round(self.now + offset, 3)


def load_recipe() -> dict:
    """The demo's scenario text (installed as ``inspector.resources``; the checkout's copy otherwise)."""
    try:
        text = resources.files("inspector.resources").joinpath(RECIPE_NAME).read_text(encoding="utf-8")
    except ModuleNotFoundError:
        text = (Path(__file__).resolve().parent.parent / "resources" / RECIPE_NAME).read_text(
            encoding="utf-8"
        )
    return json.loads(text)


def build_demo_home(root: Path, *, now: float) -> DemoHome:
    """Write the demo home into ``root`` (created; must be empty) and describe it."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty; the demo home needs an empty folder")
    b = _Build(root=root.resolve(), now=now)
    sessions = {name: _SCENARIOS[name](b, name, spec) for name, spec in load_recipe()["sessions"].items()}
    unindexed = sessions[UNINDEXED]
    _write(b.session_dir / INDEX_NAME, rebuild_index([s for s in b.indexed if s.session_id != unindexed]))
    for profile, rows in b.db.items():
        _write_state_db(_profile_db_path(b.root, profile), rows)
    features = {key: sessions[name] for key, name in FEATURES.items()}
    return DemoHome(home=b.root, now=now, sessions=sessions, features=features, stream_ids=dict(b.stream_ids))


# ---------------------------------------------------------------- messages


def _openai_call(call: dict) -> dict:
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
    }


def _message(b: _Build, spec: dict, row_id: int | None) -> dict:
    """A recipe row as hermes stores it: ``at`` -> ``timestamp`` (+ ``id``), OpenAI tool calls."""
    msg: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "at":
            msg["timestamp"] = b.ts(value)
            if row_id is not None:
                msg["id"] = row_id
        elif key == "tool_calls":
            msg["tool_calls"] = [_openai_call(c) for c in value]
        else:
            msg[key] = copy.deepcopy(value)
    return msg


def _messages(b: _Build, specs: list[dict]) -> list[dict]:
    return [_message(b, spec, n) for n, spec in enumerate(specs, start=1)]


def _tool_cards(messages: list[dict]) -> list[dict]:
    """Session-level ``tool_calls``: one card per assistant tool call, as the WebUI rebuilds them."""
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
    cards = []
    for idx, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        for call in msg.get("tool_calls") or []:
            args = json.loads(call["function"]["arguments"])
            cards.append(
                {
                    "name": call["function"]["name"],
                    "snippet": str(results.get(call["id"], {}).get("content", ""))[:200],
                    "tid": call["id"],
                    "assistant_msg_idx": idx,
                    "args": {k: str(v)[:120] for k, v in list(args.items())[:4]},
                }
            )
    return cards


def _context(messages: list[dict]) -> list[dict]:
    """The model-facing history: the rows without display-only ``_`` keys and without markers."""
    return [{k: v for k, v in m.items() if not k.startswith("_")} for m in messages if not m.get("_error")]


def _recovered_user(b: _Build, spec: dict) -> dict:
    return {
        "role": "user",
        "content": spec["content"],
        "timestamp": int(b.now + spec["at"]),
        "_recovered": True,
    }


def _agent_user_row(b: _Build, spec: dict) -> dict:
    """The user turn as the agent recorded it in state.db when the turn started."""
    return {"role": "user", "content": spec["content"], "timestamp": b.ts(spec["at"])}


def _pending_retry_marker(stream_id: str, ts: int) -> dict:
    """hermes' pending-retry marker (cause ``process_restart``), armed for the lazy journal retry."""
    return {
        "role": "assistant",
        "content": MARKER_CONTENT,
        "timestamp": ts,
        "_error": True,
        "type": "interrupted",
        "interruption_cause": "process_restart",
        "_pending_journal_recovery": True,
        "_journal_retry_stream_id": stream_id,
        "_journal_retry_attempts": 0,
        "_journal_retry_first_seen_ts": ts,
    }


# ---------------------------------------------------------------- sidecars


def _workspace(b: _Build, name: str) -> Path:
    path = b.root / "workspace" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _session(b: _Build, spec: dict, messages: list[dict], *, updated: float, **extra: Any) -> LoadedSession:
    """The in-memory session hermes would hold, with every saved key, via the project's loader."""
    usage = spec["usage"]
    raw = {
        "session_id": spec["id"],
        "title": spec["title"],
        "workspace": str(_workspace(b, spec["workspace"])),
        "model": spec["model"],
        "model_provider": spec["provider"],
        "created_at": b.ts(spec["created"]),
        "updated_at": b.ts(updated),
        "profile": spec["profile"],
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "estimated_cost": usage["estimated_cost"],
        "cache_read_tokens": usage["cache_read_tokens"],
        "llm_title_generated": spec["llm_title"],
        "messages": messages,
        "tool_calls": _tool_cards(messages),
        "context_messages": _context(messages),
    }
    raw.update(extra)
    return load_session(raw, now=b.now, cwd=b.root)


def _save(b: _Build, session: LoadedSession, *, suffix: str = ".json", indexed: bool = True) -> bytes:
    """Write the sidecar bytes ``Session.save`` would write; remember it for the index."""
    data = dump_session(session.data)
    _write(b.session_dir / f"{session.session_id}{suffix}", data)
    if indexed:
        b.indexed.append(load_session(parse_sidecar_bytes(data), now=b.now, cwd=b.root))
    return data


def _write(path: Path, data: bytes, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mode is not None:
        os.chmod(path, mode)


# ---------------------------------------------------------------- run journals


def _journal_line(b: _Build, sid: str, run_id: str, seq: int, entry: dict) -> str:
    """One record in hermes' compact format and key order (non-terminal events only)."""
    if entry["event"] in TERMINAL_EVENTS:
        raise ValueError("the demo journals hold no terminal record")
    record = {
        "version": 1,
        "event_id": f"{run_id}:{seq}",
        "seq": seq,
        "run_id": run_id,
        "session_id": sid,
        "event": entry["event"],
        "type": entry["event"],
        "created_at": float(b.ts(entry["at"])),
        "terminal": False,
        "terminal_state": None,
        "payload": entry["payload"],
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _write_journal(b: _Build, sid: str, run_id: str, entries: list[dict]) -> None:
    """Append-style journal bytes; an entry marked ``torn`` is cut in half with no newline."""
    parts = []
    for seq, entry in enumerate(entries, start=1):
        line = _journal_line(b, sid, run_id, seq, entry)
        if entry.get("torn"):
            parts.append(line[: len(line) // 2])
            break
        parts.append(line + "\n")
    _write(b.session_dir / RUN_JOURNAL_DIR / sid / f"{run_id}.jsonl", "".join(parts).encode("utf-8"), 0o600)


# ---------------------------------------------------------------- scenarios


def _plain(b: _Build, name: str, spec: dict) -> str:
    messages = _messages(b, spec["messages"])
    _save(b, _session(b, spec, messages, updated=spec["updated"]))
    _add_db_row(b, spec, messages, profile=spec["profile"])
    return spec["id"]


def _interrupted(b: _Build, name: str, spec: dict) -> str:
    """A2's outcome with nothing recovered yet: recovered user row + armed pending-retry marker."""
    history = _messages(b, spec["messages"])
    user = _recovered_user(b, spec["recovered"])
    marker = _pending_retry_marker(spec["stream"], int(b.now + spec["marker_at"]))
    if spec.get("given_up"):  # hermes' lazy retry gave up after 24 hours: neutral wording, keys stripped
        marker["content"] = NEUTRAL_WORDING
        strip_retry_keys(marker)
    # A2 projects the recovered row into the model context as is (``_recovered`` kept, §3.7).
    session = _session(
        b,
        spec,
        history + [user, marker],
        updated=spec["updated"],
        context_messages=_context(history) + [dict(user)],
    )
    _save(b, session)
    b.stream_ids[name] = spec["stream"]
    if "journal" in spec:
        _write_journal(b, spec["id"], spec["stream"], spec["journal"])
    _add_db_row(b, spec, history + [_agent_user_row(b, spec["recovered"])], profile=spec["profile"])
    return spec["id"]


def _stale_pending(b: _Build, name: str, spec: dict) -> str:
    """A turn still marked running (dead stream) with a partial, damaged journal."""
    history = _messages(b, spec["messages"])
    pending = spec["pending"]
    session = _session(
        b,
        spec,
        history,
        updated=spec["updated"],
        active_stream_id=spec["stream"],
        pending_user_message=pending["content"],
        pending_started_at=b.ts(pending["at"]),
    )
    _save(b, session)
    b.stream_ids[name] = spec["stream"]
    _write_journal(b, spec["id"], spec["stream"], spec["journal"])
    _add_db_row(b, spec, history + [_agent_user_row(b, pending)], profile=spec["profile"])
    return spec["id"]


def _shrunken(b: _Build, name: str, spec: dict) -> str:
    """A live file that lost messages (no shrink markers) next to the fuller ``.bak``."""
    full = _messages(b, spec["messages"])
    _save(b, _session(b, spec, full, updated=spec["backup_updated"]), suffix=".json.bak", indexed=False)
    _save(b, _session(b, spec, full[: spec["live_count"]], updated=spec["updated"]))
    _add_db_row(b, spec, full, profile=spec["profile"])
    return spec["id"]


def _corrupt(b: _Build, name: str, spec: dict) -> str:
    """A sidecar torn mid-string; the index keeps the row it had before the damage."""
    messages = _messages(b, spec["messages"])
    data = _save(b, _session(b, spec, messages, updated=spec["updated"]))
    phrase = spec["tear_at"].encode("utf-8")
    cut = data.index(phrase) + len(phrase) // 2
    _write(b.session_dir / f"{spec['id']}.json", data[:cut])
    _add_db_row(b, spec, messages, profile=spec["profile"])
    return spec["id"]


def _db_only(b: _Build, name: str, spec: dict) -> str:
    """A state.db session with no sidecar (a WebUI chat that lost its file, or a CLI session)."""
    if "id_suffix" in spec:
        stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime(b.now + spec["started"]))
        spec = {**spec, "id": f"{stamp}_{spec['id_suffix']}"}
    _add_db_row(b, spec, [_message(b, m, None) for m in spec["messages"]], profile="default")
    return spec["id"]


_SCENARIOS = {
    "healthy": _plain,
    "healthy_reasoning": _plain,
    "healthy_work": _plain,
    "lost_response": _interrupted,
    "waiting_marker": _interrupted,
    "given_up": _interrupted,
    "stale_pending": _stale_pending,
    "shrunken": _shrunken,
    "corrupt": _corrupt,
    "state_only": _db_only,
    "empty_orphan_row": _db_only,
    "cli_only": _db_only,
}


# ---------------------------------------------------------------- state.db


def _db_content(content: Any) -> str | None:
    """Agent encoding of ``content``: text as is, structured parts behind the ``\\x00json:`` sentinel."""
    if content is None or isinstance(content, str):
        return content
    return JSON_CONTENT_PREFIX + json.dumps(content)


def _db_message(sid: str, msg: dict) -> dict:
    calls = msg.get("tool_calls")
    return {
        "session_id": sid,
        "role": msg["role"],
        "content": _db_content(msg.get("content")),
        "tool_call_id": msg.get("tool_call_id"),
        "tool_calls": json.dumps(calls) if calls else None,
        "tool_name": msg.get("name") if msg["role"] == "tool" else None,
        "timestamp": msg["timestamp"],
        "finish_reason": msg.get("finish_reason"),
        "reasoning": msg.get("reasoning"),
        "active": 1,
        "compacted": 0,
    }


def _add_db_row(b: _Build, spec: dict, messages: list[dict], *, profile: str) -> None:
    """Queue the agent's ``sessions`` row and ``messages`` rows for this session."""
    usage = spec["usage"]
    started = b.ts(spec["created"] if "created" in spec else spec["started"])
    ended = spec.get("ended")
    rows = [_db_message(spec["id"], m) for m in messages]
    session = {
        "id": spec["id"],
        "source": spec.get("source", "webui"),
        "model": spec["model"],
        "started_at": started,
        "ended_at": b.ts(ended) if ended is not None else None,
        "end_reason": spec.get("end_reason"),
        "message_count": len(rows),
        "tool_call_count": sum(len(m.get("tool_calls") or []) for m in messages),
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "cache_read_tokens": usage["cache_read_tokens"],
        "cwd": str(_workspace(b, spec["workspace"])),
        "billing_provider": spec.get("provider"),
        "estimated_cost_usd": usage["estimated_cost"],
        "cost_status": "estimated" if usage["estimated_cost"] is not None else None,
        "title": spec["title"],
        "title_source": _title_source(spec),
        "last_activity_at": rows[-1]["timestamp"] if rows else started,
        "profile_name": profile,
    }
    b.db.setdefault(profile, []).append((session, rows))


def _title_source(spec: dict) -> str | None:
    if spec["title"] is None:
        return None
    return "llm" if spec.get("llm_title") else "derived"


def _profile_db_path(root: Path, profile: str) -> Path:
    return root / "state.db" if profile == "default" else root / "profiles" / profile / "state.db"


def _insert(con: sqlite3.Connection, table: str, columns: tuple[str, ...], row: dict) -> None:
    marks = ", ".join("?" for _ in columns)
    con.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", [row[c] for c in columns])


def _write_state_db(path: Path, sessions: list[tuple[dict, list[dict]]]) -> None:
    """A rollback-journal (DELETE mode) store; messages inserted in time order like the agent did."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA journal_mode=DELETE")
        con.executescript(STATE_DB_DDL)
        con.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        for session, _ in sorted(sessions, key=lambda s: s[0]["started_at"]):
            _insert(con, "sessions", SESSION_COLUMNS, session)
        messages = [m for _, rows in sessions for m in rows]
        for msg in sorted(messages, key=lambda m: m["timestamp"]):
            _insert(con, "messages", MESSAGE_COLUMNS, msg)
        con.commit()
    finally:
        con.close()
