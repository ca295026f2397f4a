"""Builders shared by the session-recovery tests (state.db, sidecars, homes, contexts)."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path
from typing import Any

from inspector.home import locate_home
from inspector.plan import Clock, Plan, WriteLog, apply_plan
from inspector.repair.context import RepairContext
from tests.conftest import FIXTURES, GOLDEN, copy_tree

NOW = 1779900000.0
# hermes-webui's own test schema (tests/test_session_db_sidecar_reconciliation.py)
SEED_SESSIONS = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT, model TEXT, "
    "started_at REAL, message_count INTEGER, parent_session_id TEXT)"
)
SEED_MESSAGES = (
    "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, "
    "content TEXT, timestamp REAL)"
)


def seed_state_db(
    path: Path, *, sid: str = "state_only_001", source: str = "webui", messages: int = 2, create: bool = True
) -> str:
    """hermes' ``_make_state_db``: one session row with ``messages`` alternating user/assistant rows."""
    conn = sqlite3.connect(path)
    if create:
        conn.execute(SEED_SESSIONS)
        conn.execute(SEED_MESSAGES)
    conn.execute(
        "INSERT INTO sessions (id, source, title, model, started_at, message_count, parent_session_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (sid, source, "Recovered from DB", "openai/gpt-5", 1234.0, messages, "parent-1"),
    )
    for i in range(messages):
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            (sid, "user" if i % 2 == 0 else "assistant", f"message {i + 1}", 1234.0 + i),
        )
    conn.commit()
    conn.close()
    return sid


def custom_state_db(
    path: Path, sessions_ddl: str, messages_ddl: str | None, sessions: list[dict], messages: list[dict] = ()
) -> Path:
    """A state.db with the given DDL and rows (dicts keyed by column)."""
    conn = sqlite3.connect(path)
    conn.execute(sessions_ddl)
    if messages_ddl:
        conn.execute(messages_ddl)
    for table, rows in (("sessions", sessions), ("messages", messages)):
        for row in rows:
            cols = list(row)
            conn.execute(
                f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                [row[c] for c in cols],
            )
    conn.commit()
    conn.close()
    return path


def agent_state_db(path: Path, journal: str = "delete") -> dict:
    """The realistic v31 agent store of fixtures/state-db/make_state_db.py; returns its session ids."""
    spec = importlib.util.spec_from_file_location("make_state_db", FIXTURES / "state-db" / "make_state_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute(f"PRAGMA journal_mode={journal.upper()}")
    module.build_schema(conn, 31, want_fts=False)
    conn.execute("BEGIN IMMEDIATE")
    ids = module.populate(module.Builder(conn, 31), NOW)
    conn.execute("COMMIT")
    conn.close()
    return ids


def write_json(path: Path, payload: Any) -> Path:
    """Write JSON as hermes' tests do (``json.dumps`` defaults)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def msgs(n: int, prefix: str = "m") -> list[dict]:
    """``n`` alternating user/assistant messages."""
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{prefix}{i}", "timestamp": 100.0 + i}
        for i in range(n)
    ]


def sidecar(sid: str, n: int, **extra: Any) -> dict:
    """A minimal sidecar dict with ``n`` messages."""
    return {"session_id": sid, "title": f"chat {sid}", "messages": msgs(n), **extra}


def home_dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, sessions dir, state.db path) of a home under ``tmp_path``; the sessions dir is created."""
    home = tmp_path / "home"
    sessions = home / "webui" / "sessions"
    sessions.mkdir(parents=True)
    return home, sessions, home / "state.db"


def golden_home(tmp_path: Path, case: str, state: str = "after") -> Path:
    """A golden case's ``state`` files plus the run journals of its ``before`` (the after/ tree keeps
    only changed files), in ``tmp_path / "home"``."""
    home = copy_tree(GOLDEN / case / state, tmp_path / "home")
    journals = GOLDEN / case / "before" / "webui" / "sessions" / "_run_journal"
    if journals.is_dir() and not (home / "webui" / "sessions" / "_run_journal").exists():
        copy_tree(journals, home / "webui" / "sessions" / "_run_journal")
    return home


def make_ctx(home: Path, now: float = NOW, cwd: Path | None = None) -> RepairContext:
    """A repair context on ``home`` with a frozen clock; hermes' cwd defaults to the home."""
    return RepairContext(home=locate_home(home), clock=Clock(now, now - 100.0), cwd=cwd or home)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes, plus every directory (mapped to ``b'<dir>'``)."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        out[p.relative_to(root).as_posix()] = p.read_bytes() if p.is_file() else b"<dir>"
    return out


def apply(plan: Plan, tmp_path: Path) -> None:
    """Apply a plan with a private write log."""
    apply_plan(plan, WriteLog(tmp_path / "writelog"), clock_now=NOW)
