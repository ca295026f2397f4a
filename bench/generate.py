"""Build a synthetic but realistic Hermes home for the benchmarks, seeded so runs are comparable.

    python bench/generate.py --sessions 10000 [--out DIR] [--seed 1] [--journal-events 200000] [--force]

What it writes (``DIR`` is the Hermes home, ``DIR/webui/sessions`` the WebUI session dir):

* ``N`` sidecars in hermes' exact byte format (built with :func:`inspector.store.sidecar.load_session`
  and written with :func:`~inspector.store.sidecar.dump_session`). Most chats have 2-40 messages; about
  1% are a long tail of 200-5,000 messages heavy with tool calls, tool results and reasoning, one of them
  exactly 5,000 (the "largest sidecar"). ``context_messages`` repeats the transcript, as WebUI writes it
  (only the recent part after a compression for the long ones). File mtimes are the sessions' ``updated_at``.
* ``_index.json`` as hermes' full rebuild writes it (``compact()`` rows, newest first), with the usual drift.
* run journals ``_run_journal/<sid>/<run>.jsonl`` for the recently active chats (1-3 runs of 100-600
  events) and one journal of ``--journal-events`` events (200,000 by default): the stream of a crashed
  turn of the largest session, which is left with a stale pending turn; plus turn journals.
* ``DIR/state.db`` in the agent's schema (v31 tables and indexes, no FTS, rollback journal): one
  ``sessions`` row per chat with all its ``messages``, plus state-only chats (CLI, Telegram, cron, subagent).
* the usual share of broken sessions: shrunken and corrupt sidecars with ``.bak``, orphan and malformed
  backups, index drift both ways, state.db rows without sidecar (with and without messages, tombstoned),
  an id mismatch, stale pending turns, interrupted-turn markers waiting for the journal, torn, truncated
  and invalid-UTF-8 journals, pending turn-journal turns.
* ``DIR/bench_manifest.json``: what was generated (counts, bytes, the largest sidecar, the big journal).

Generated homes are cached under ``bench/out/`` (gitignored) keyed by size, seed, journal size and
:data:`GEN_VERSION`; :func:`ensure_home` reuses one when its manifest is present. :func:`ensure_variant`
builds the ``noindex`` (no ``_index.json``) and ``stale`` (an old, drifted ``_index.json``) variants of a
home with hard links, so they share the page cache and cost no extra disk.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import random
import shutil
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from inspector.store.index import compact, sort_rows  # noqa: E402
from inspector.store.jsonfmt import dumps_pretty  # noqa: E402
from inspector.store.sidecar import LoadedSession, dump_session, load_session  # noqa: E402

GEN_VERSION = 1
OUT_DIR = ROOT / "bench" / "out"
NOW = 1_795_000_000.0  # the generated home's "present" (2026-11-18); everything is before it
DAY = 86400.0
CWD = Path("/home/ada")
MANIFEST = "bench_manifest.json"
STALE_INDEX = "bench_index_stale.json"  # kept in the home base, copied in by the "stale" variant
CONTENT_JSON_PREFIX = "\x00json:"

# Share of sessions per kind (each kind gets at least one session, so a 30-session home has them all).
BROKEN_RATES = {
    "corrupt_live_with_bak": 0.001,  # truncated live sidecar, readable .bak  -> shrunken_live, corrupt_sidecar
    "corrupt_live_no_bak": 0.0005,  # not JSON, no .bak                      -> corrupt_sidecar
    "shrunken_live": 0.003,  # .bak has more messages than live        -> shrunken_live
    "orphan_bak": 0.001,  # .bak only, webui row with messages      -> orphan_backup + materialize
    "orphan_bak_no_state": 0.0005,  # .bak only, no state.db row             -> orphan_backup_without_state_row
    "malformed_orphan_bak": 0.0002,  # garbage .bak only                       -> malformed_orphan_backup
    "index_missing_file": 0.002,  # index row, sidecar gone (half with a state row)
    "index_missing_entry": 0.005,  # sidecar not in the index
    "state_missing_sidecar": 0.002,  # webui row with messages, no sidecar    -> materialize_from_state_db
    "state_orphan_empty": 0.001,  # webui row without messages             -> state_db_orphan_webui_row
    "tombstoned": 0.001,  # deleted in WebUI, row kept             -> state_db_deleted_webui_tombstone
    "id_mismatch": 0.0002,  # inner session_id differs from the file name
    "stale_pending": 0.002,  # turn still marked running, journal without terminal
    "pending_marker": 0.001,  # interrupted marker waiting for the run journal
    "turn_journal_pending": 0.001,  # submitted turn never answered
}
HEALTHY_BAK_RATE = 0.03  # .bak with fewer messages than live: normal history, no finding
TAIL_RATE = 0.006  # long chats (200-5,000 messages)
JOURNAL_RATE = 0.05  # recently active chats that still have run journals
STATE_ONLY_RATE = 0.15  # agent sessions with no sidecar (CLI, gateway, cron, subagent)
CLI_ID_RATE = 0.02  # imported CLI sessions with agent-style ids

MODELS = [
    ("anthropic/claude-sonnet-4.6", "openrouter"),
    ("openai/gpt-5", "openai"),
    ("anthropic/claude-opus-4.1", "anthropic"),
    ("google/gemini-2.5-pro", "openrouter"),
    ("deepseek/deepseek-chat-v3", "openrouter"),
]
TOOLS = [
    "terminal",
    "read_file",
    "write_file",
    "search_files",
    "patch",
    "web_search",
    "browser_navigate",
    "execute_code",
    "todo",
    "memory",
]
_WORDS = (
    "the a to of and in that is for it with as was on be at by this had not are but from or have an they "
    "which one you were all there would their we been has when who will more no if out so what up its about "
    "into than them can only other new some could time these two may then do first any now such like our "
    "over even most made after also did many before must through back years where much your way well down "
    "should because each just those people how too little good very make world still own see work long get "
    "here between both life being under never day same another know while last might great old year off come "
    "since against go came right used take three build docker image python module function error config test "
    "deploy server client request response cache index session journal sidecar database query table column "
    "branch commit merge rebase release version package install upgrade migrate schema field value list "
    "parser token stream thread worker queue retry timeout latency memory disk file folder path permission "
    "user agent model prompt context window summary tool call result output input log warning trace stack"
).split()
_EXOTIC = [
    "café",
    "naïve",
    "über",
    "Zürich",
    "日本語",
    "テスト",
    "données",
    "🙂",
    "—",
    "“quoted”",
    "→",
    "señor",
]


def _make_corpus(rng: random.Random) -> tuple[list[str], list[str]]:
    sentences = []
    for i in range(800):
        words = rng.choices(_WORDS, k=rng.randint(5, 18))
        if i % 17 == 0:
            words.insert(rng.randrange(len(words)), rng.choice(_EXOTIC))
        words[0] = words[0].capitalize()
        sentences.append(" ".join(words) + rng.choice([".", ".", ".", "?", "!", ":"]))
    lines = []
    for _ in range(400):
        kind = rng.randrange(5)
        w = rng.choices(_WORDS, k=4)
        if kind == 0:
            lines.append(
                f"drwxr-xr-x  {rng.randint(2, 9)} ada ada {rng.randint(1, 99999):>6} Nov {rng.randint(1, 30):>2} "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {w[0]}_{w[1]}"
            )
        elif kind == 1:
            lines.append(f"    def {w[0]}_{w[1]}(self, {w[2]}):  # {w[3]}")
        elif kind == 2:
            lines.append(f"{w[0]}/{w[1]}.py:{rng.randint(1, 900)}: {w[2]} {w[3]} = {rng.randint(0, 10**6)}")
        elif kind == 3:
            lines.append(
                f"[{rng.choice(['INFO', 'WARN', 'DEBUG', 'ERROR'])}] {' '.join(w)} took {rng.random():.3f}s"
            )
        else:
            lines.append(json.dumps({w[0]: w[1], w[2]: rng.randint(0, 999), "ok": rng.random() < 0.8}))
    return sentences, lines


@dataclass
class Text:
    """Cheap seeded text: sentences and tool-output lines drawn from a fixed corpus."""

    rng: random.Random
    sentences: list[str]
    lines: list[str]

    def prose(self, lo: int, hi: int) -> str:
        target = self.rng.randint(lo, hi)
        out, size = [], 0
        while size < target:
            s = self.rng.choice(self.sentences)
            out.append(s)
            size += len(s) + 1
        return " ".join(out)

    def output(self, lo: int, hi: int) -> str:
        target = self.rng.randint(lo, hi)
        out, size = [], 0
        while size < target:
            s = self.rng.choice(self.lines)
            out.append(s)
            size += len(s) + 1
        return "\n".join(out)


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


# ---------------------------------------------------------------- conversations


@dataclass
class Conversation:
    messages: list[dict]
    tool_calls: list[dict]
    user_turns: list[tuple[int, str]] = field(default_factory=list)  # (index, text) of each user message


def _tool_call(text: Text, rng: random.Random, idx: int) -> tuple[dict, dict, str]:
    name = rng.choice(TOOLS)
    if name == "terminal":
        args = {"command": " ".join(rng.choices(_WORDS, k=rng.randint(2, 6))), "timeout": 60}
    elif name in ("read_file", "write_file", "patch"):
        args = {"path": f"/home/ada/code/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"}
        if name != "read_file":
            args["content"] = text.output(60, 400)
    else:
        args = {"query": " ".join(rng.choices(_WORDS, k=rng.randint(2, 7)))}
    call_id = f"call_{_hex(rng, 24)}"
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    output = text.output(60, 900)
    summary = {
        "name": name,
        "snippet": output[:200],
        "tid": call_id,
        "assistant_msg_idx": idx,
        "args": {k: str(v)[:120] for k, v in list(args.items())[:4]},
    }
    return call, summary, output


def make_conversation(text: Text, n_msgs: int, t0: float, t1: float, heavy: bool, model: str) -> Conversation:
    """Turns of user -> (assistant tool calls -> tool results)* -> assistant answer, trimmed to n_msgs."""
    rng = text.rng
    msgs: list[dict] = []
    tools: list[dict] = []
    turns: list[tuple[int, str]] = []
    tool_p = 0.8 if heavy else 0.2
    while len(msgs) < n_msgs:
        user = text.prose(10, 250 if heavy else 120)
        turns.append((len(msgs), user))
        msgs.append({"role": "user", "content": user})
        rounds = 0
        while rng.random() < tool_p and rounds < (6 if heavy else 2) and len(msgs) < n_msgs - 1:
            rounds += 1
            idx = len(msgs)
            calls, outputs = [], []
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                call, summary, output = _tool_call(text, rng, idx)
                calls.append(call)
                tools.append(summary)
                outputs.append((call, output))
            asst = {"role": "assistant", "content": "", "tool_calls": calls, "finish_reason": "tool_calls"}
            if heavy or rng.random() < 0.3:
                asst["reasoning"] = text.prose(30, 250)
            msgs.append(asst)
            for call, output in outputs:
                msgs.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "name": call["function"]["name"],
                        "content": output,
                    }
                )
        answer = {
            "role": "assistant",
            "content": text.prose(30, 700 if heavy else 350),
            "finish_reason": "stop",
        }
        if heavy or rng.random() < 0.4:
            answer["reasoning"] = text.prose(30, 300)
        if rng.random() < 0.5:
            answer["_turnDuration"] = round(rng.uniform(1.0, 90.0), 2)
            answer["_usedModel"] = model
            answer["_turnUsage"] = {
                "input_tokens": rng.randint(500, 90000),
                "output_tokens": rng.randint(20, 4000),
            }
        msgs.append(answer)
    del msgs[n_msgs:]
    if msgs and msgs[-1]["role"] == "user" and n_msgs > 1:
        msgs[-1] = {"role": "assistant", "content": text.prose(80, 600), "finish_reason": "stop"}
    step = (t1 - t0) / max(1, len(msgs))
    t = t0
    for m in msgs:
        t += rng.uniform(0.2, 1.8) * step
        m["timestamp"] = round(min(t, t1), 3)
    tools = [s for s in tools if s["assistant_msg_idx"] < len(msgs)]
    turns = [(i, u) for i, u in turns if i < len(msgs)]
    return Conversation(msgs, tools, turns)


# ---------------------------------------------------------------- state.db


def _load_fixture_schema():
    """The agent schema builder the tests use (tests/data/fixtures/state-db/make_state_db.py)."""
    path = ROOT / "tests" / "data" / "fixtures" / "state-db" / "make_state_db.py"
    spec = importlib.util.spec_from_file_location("bench_make_state_db", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_MSG_COLS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "token_count",
    "finish_reason",
    "reasoning",
    "active",
    "compacted",
    "display_order",
    "message_uid",
)
_SESSION_COLS = (
    "id",
    "source",
    "created_source",
    "user_id",
    "session_key",
    "chat_id",
    "chat_type",
    "model",
    "model_config",
    "system_prompt_hash",
    "parent_session_id",
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
    "api_call_count",
    "profile_name",
    "archived",
    "pinned",
)


class StateDb:
    """Writes the agent's state.db in one transaction, with explicit message ids (display_order = id)."""

    def __init__(self, path: Path, rng: random.Random):
        self.rng = rng
        fixture = _load_fixture_schema()
        path.unlink(missing_ok=True)
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=DELETE")
        self.conn.execute("PRAGMA synchronous=OFF")
        fixture.build_schema(self.conn, 31, want_fts=False)
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute(
            "INSERT INTO state_meta (key, value) VALUES ('db_file_generation', ?)", (_hex(rng, 32),)
        )
        self.prompt_hash = hashlib.sha256(b"You are Hermes, a helpful agent.").hexdigest()
        self.conn.execute(
            "INSERT INTO system_prompts (hash, prompt) VALUES (?, ?)",
            (self.prompt_hash, "You are Hermes, a helpful agent."),
        )
        self.next_id = 1
        self.titles: set[str] = set()
        self.sessions = 0
        self.messages = 0

    def _title(self, title: str | None) -> str | None:
        if not title:
            return None
        base, n = title, 1
        while title in self.titles:
            n += 1
            title = f"{base} #{n}"
        self.titles.add(title)
        return title

    def add(
        self,
        sid: str,
        source: str,
        model: str,
        provider: str,
        started: float,
        title: str | None,
        messages: list[dict],
        *,
        cwd: str | None = None,
        parent: str | None = None,
        archived: bool = False,
        pinned: bool = False,
    ) -> None:
        rng = self.rng
        rows = []
        tool_calls = 0
        for m in messages:
            content = m.get("content")
            if isinstance(content, (list, dict)):
                content = CONTENT_JSON_PREFIX + json.dumps(content)
            calls = m.get("tool_calls")
            tool_calls += len(calls or [])
            rows.append(
                (
                    self.next_id,
                    sid,
                    m.get("role"),
                    content,
                    m.get("tool_call_id"),
                    json.dumps(calls) if calls else None,
                    m.get("name"),
                    m.get("timestamp", started),
                    None,
                    m.get("finish_reason"),
                    m.get("reasoning"),
                    1,
                    0,
                    self.next_id,
                    _hex(rng, 32),
                )
            )
            self.next_id += 1
        last = max((r[7] for r in rows), default=started)
        inp, out = rng.randint(0, 400000), rng.randint(0, 40000)
        values = (
            sid,
            source,
            source,
            None,
            None,
            None,
            None,
            model,
            json.dumps({"provider": provider, "model": model}),
            self.prompt_hash,
            parent,
            started,
            last + 60 if source != "webui" else None,
            "cli_close" if source == "cli" else None,
            len(rows),
            tool_calls,
            inp,
            out,
            inp // 3,
            cwd,
            provider,
            round(inp * 3e-6 + out * 1.5e-5, 4),
            "estimated",
            self._title(title),
            "llm",
            last,
            rng.randint(1, 200),
            "default",
            int(archived),
            int(pinned),
        )
        self.conn.execute(
            f"INSERT INTO sessions ({', '.join(_SESSION_COLS)}) "
            f"VALUES ({', '.join('?' * len(_SESSION_COLS))})",
            values,
        )
        if rows:
            self.conn.executemany(
                f"INSERT INTO messages ({', '.join(_MSG_COLS)}) VALUES ({', '.join('?' * len(_MSG_COLS))})",
                rows,
            )
        self.sessions += 1
        self.messages += len(rows)

    def close(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()


# ---------------------------------------------------------------- journals


def journal_line(
    sid: str,
    run_id: str,
    seq: int,
    event: str,
    created: float,
    payload: dict,
    terminal_state: str | None = None,
) -> str:
    rec = {
        "version": 1,
        "event_id": f"{run_id}:{seq}",
        "seq": seq,
        "run_id": run_id,
        "session_id": sid,
        "event": event,
        "type": event,
        "created_at": float(created),
        "terminal": terminal_state is not None,
        "terminal_state": terminal_state,
        "payload": payload,
    }
    return json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n"


def run_events(text: Text, sid: str, run_id: str, t0: float, n: int, terminal: bool) -> list[str]:
    """n journal lines of one run: reasoning and token deltas, tool calls, metering, then done + stream_end."""
    rng = text.rng
    lines: list[str] = []
    body = n - 2 if terminal else n
    t = t0
    seq = 0
    words = text.prose(200, 400).split()
    while seq < body:
        seq += 1
        t += rng.uniform(0.01, 0.2)
        r = rng.random()
        if r < 0.70:
            ev, payload = "token", {"text": " " + " ".join(rng.choices(words, k=rng.randint(1, 3)))}
        elif r < 0.82:
            ev, payload = "reasoning", {"text": " " + " ".join(rng.choices(words, k=rng.randint(1, 4)))}
        elif r < 0.88:
            name = rng.choice(TOOLS)
            args = {"command": " ".join(rng.choices(_WORDS, k=3))}
            if rng.random() < 0.5:
                ev, payload = (
                    "tool",
                    {
                        "event_type": "tool.started",
                        "name": name,
                        "preview": args["command"],
                        "args": args,
                        "tid": f"call_{_hex(rng, 12)}",
                    },
                )
            else:
                ev, payload = (
                    "tool_complete",
                    {
                        "event_type": "tool.completed",
                        "name": name,
                        "preview": text.output(40, 200),
                        "args": args,
                        "duration": round(rng.uniform(0.1, 9), 2),
                        "is_error": False,
                    },
                )
        elif r < 0.95:
            ev, payload = (
                "metering",
                {"input_tokens": rng.randint(100, 90000), "output_tokens": rng.randint(1, 900)},
            )
        else:
            ev, payload = "interim_assistant", {"text": text.prose(20, 120), "already_streamed": True}
        lines.append(journal_line(sid, run_id, seq, ev, round(t, 3), payload))
    if terminal:
        lines.append(
            journal_line(
                sid,
                run_id,
                seq + 1,
                "done",
                round(t + 0.1, 3),
                {"usage": {"input_tokens": 1200, "output_tokens": 300}},
                "completed",
            )
        )
        lines.append(
            journal_line(
                sid, run_id, seq + 2, "stream_end", round(t + 0.2, 3), {"session_id": sid}, "completed"
            )
        )
    return lines


def turn_events(
    sid: str, turn_id: str, stream_id: str, content: str, created: float, done: bool
) -> list[str]:
    base = {"turn_id": turn_id, "stream_id": stream_id}
    out = [
        dict(
            event="submitted",
            **base,
            role="user",
            content=content,
            attachments=[],
            workspace="/home/ada/code",
            model="openai/gpt-5",
            model_provider="openai",
            created_at=created,
            version=1,
            session_id=sid,
        )
    ]
    if done:
        out.append(dict(event="worker_started", **base, created_at=created + 0.5, version=1, session_id=sid))
        out.append(
            dict(
                event="completed", **base, created_at=created + 9.0, version=1, session_id=sid, terminal=True
            )
        )
    return [json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n" for e in out]


# ---------------------------------------------------------------- sessions


@dataclass
class Spec:
    sid: str
    n_msgs: int
    heavy: bool
    created: float
    updated: float
    model: str
    provider: str
    kind: str | None = None  # one of BROKEN_RATES, or None (healthy)
    healthy_bak: bool = False
    journals: bool = False
    cli_id: bool = False


def _session_ids(rng: random.Random, n: int, used: set[str]) -> list[str]:
    out = []
    while len(out) < n:
        sid = _hex(rng, 12)
        if sid not in used:
            used.add(sid)
            out.append(sid)
    return out


def plan_sessions(rng: random.Random, n: int) -> tuple[list[Spec], set[str]]:
    used: set[str] = set()
    ids = _session_ids(rng, n, used)
    specs = []
    n_tail = max(1, round(n * TAIL_RATE))
    tail = set(rng.sample(range(n), n_tail))
    for i, sid in enumerate(ids):
        heavy = i in tail
        if heavy:
            n_msgs = int(round(200 * (25 ** rng.random())))  # log-uniform 200..5000
        else:
            n_msgs = 2 + int(39 * rng.random() ** 1.5)  # 2..40, short chats the most common
        age = (rng.random() ** 1.6) * 730 * DAY  # more recent than old
        created = NOW - age
        span = rng.uniform(60, 3 * 3600) if not heavy else rng.uniform(2 * 3600, 20 * DAY)
        updated = min(NOW - rng.uniform(0, 600), created + span)
        model, provider = rng.choice(MODELS)
        specs.append(Spec(sid, n_msgs, heavy, round(created, 3), round(updated, 3), model, provider))
    # the largest sidecar: exactly 5,000 messages, the most recent heavy chat
    largest = max((s for s in specs if s.heavy), key=lambda s: s.n_msgs)
    largest.n_msgs = 5000
    largest.created, largest.updated = round(NOW - 25 * DAY, 3), round(NOW - 3600, 3)
    for s in specs:
        if rng.random() < CLI_ID_RATE and s is not largest:
            s.cli_id = True
    # broken kinds on distinct sessions (never the largest, which gets its own scenario)
    pool = [s for s in specs if s is not largest]
    rng.shuffle(pool)
    cursor = 0
    for kind, rate in BROKEN_RATES.items():
        for _ in range(max(1, round(n * rate))):
            if cursor < len(pool):
                pool[cursor].kind = kind
                cursor += 1
    for s in pool[cursor:]:
        s.healthy_bak = rng.random() < HEALTHY_BAK_RATE
    recent = sorted(specs, key=lambda s: -s.updated)[: max(1, round(n * JOURNAL_RATE))]
    for s in recent:
        s.journals = True
    for s in specs:
        if s.kind in ("stale_pending", "pending_marker", "turn_journal_pending"):
            s.journals = True
    largest.kind = "largest"
    return specs, used


class Writer:
    def __init__(self, home: Path, rng: random.Random, journal_events: int):
        self.home = home
        self.rng = rng
        self.journal_events = journal_events
        self.session_dir = home / "webui" / "sessions"
        self.session_dir.mkdir(parents=True)
        (self.session_dir / "_run_journal").mkdir()
        (self.session_dir / "_turn_journal").mkdir()
        sentences, lines = _make_corpus(rng)
        self.text = Text(rng, sentences, lines)
        self.db = StateDb(home / "state.db", rng)
        self.index_rows: list[dict] = []
        self.tombstones: list[str] = []
        self.bytes = {"sidecars": 0, "baks": 0, "run_journals": 0, "turn_journals": 0}
        self.counts: dict[str, int] = {"sidecars": 0, "baks": 0, "run_journals": 0, "journal_events": 0}
        self.largest: dict = {}
        self.big_journal: dict = {}
        self.kinds: dict[str, list[str]] = {}

    # -------------------------------------------------------------- one sidecar

    def _meta(self, spec: Spec, conv: Conversation) -> dict:
        rng = self.rng
        first_user = conv.user_turns[0][1] if conv.user_turns else "Untitled"
        inp = rng.randint(0, 900000 if spec.heavy else 60000)
        meta = {
            "session_id": spec.sid,
            "title": first_user[:64].strip() or "Untitled",
            "workspace": f"/home/ada/code/{rng.choice(_WORDS)}",
            "model": spec.model,
            "model_provider": spec.provider,
            "created_at": spec.created,
            "updated_at": spec.updated,
            "pinned": rng.random() < 0.002,
            "archived": rng.random() < 0.05,
            "profile": rng.choice([None, None, "default"]),
            "input_tokens": inp,
            "output_tokens": inp // rng.randint(5, 40),
            "estimated_cost": round(inp * 3e-6, 6) if inp else None,
            "cache_read_tokens": inp // 2,
            "llm_title_generated": rng.random() < 0.7,
            "context_length": 200000,
            "last_prompt_tokens": rng.randint(1000, 150000),
        }
        if rng.random() < 0.2:
            routing = {
                "used_provider": spec.provider,
                "used_model": spec.model,
                "requested_provider": spec.provider,
                "requested_model": spec.model,
                "routing": [{"provider": spec.provider, "status": "ok"}],
                "provider_changed": False,
                "model_changed": False,
                "has_failover": False,
            }
            meta["gateway_routing"] = routing
            meta["gateway_routing_history"] = [routing] * rng.randint(1, 8)
        if rng.random() < 0.02:
            meta["composer_draft"] = {"text": self.text.prose(10, 200), "files": []}
        if spec.cli_id:
            meta.update(
                is_cli_session=True,
                source_tag="cli",
                raw_source="cli",
                session_source="cli",
                source_label="CLI",
            )
        if spec.heavy:
            meta.update(
                context_engine="compressor",
                compression_anchor_engine="compressor",
                compression_anchor_visible_idx=max(0, len(conv.messages) - 40),
                compression_anchor_summary=self.text.prose(100, 300),
            )
        return meta

    def _session(self, spec: Spec, conv: Conversation, meta: dict) -> LoadedSession:
        msgs = conv.messages
        if spec.heavy:
            keep = msgs[-self.rng.randint(20, 60) :]
            summary = {
                "role": "user",
                "content": "[CONTEXT SUMMARY]: " + self.text.prose(300, 1500),
                "timestamp": keep[0]["timestamp"] if keep else spec.created,
            }
            context = [summary] + keep
        else:
            context = list(msgs)
        raw = {
            **meta,
            "messages": msgs,
            "tool_calls": conv.tool_calls,
            "anchor_activity_scenes": {},
            "context_messages": context,
        }
        return load_session(raw, now=NOW, cwd=CWD)

    def _write(self, path: Path, data: bytes, mtime: float, counter: str) -> None:
        path.write_bytes(data)
        os.utime(path, (mtime, mtime))
        self.bytes[counter] += len(data)

    def _bak_of(self, spec: Spec, conv: Conversation, meta: dict, n: int) -> bytes:
        short = Conversation(conv.messages[:n], [t for t in conv.tool_calls if t["assistant_msg_idx"] < n])
        sess = self._session(spec, short, {**meta, "updated_at": round(spec.updated - 3600, 3)})
        return dump_session(sess.data)

    def session(self, spec: Spec) -> None:
        rng, text = self.rng, self.text
        self.kinds.setdefault(spec.kind or ("healthy_bak" if spec.healthy_bak else "healthy"), []).append(
            spec.sid
        )
        conv = make_conversation(text, spec.n_msgs, spec.created, spec.updated, spec.heavy, spec.model)
        meta = self._meta(spec, conv)
        kind = spec.kind
        runs: list[tuple[str, float, int, bool]] = []  # (run_id, t0, events, terminal)
        if kind in ("stale_pending", "largest"):
            stream = _hex(rng, 32)
            meta.update(
                active_stream_id=stream,
                pending_user_message=text.prose(20, 200),
                pending_started_at=round(spec.updated + 5, 3),
                pending_user_source="webui",
            )
            n_events = self.journal_events if kind == "largest" else rng.randint(100, 600)
            runs.append((stream, spec.updated + 6, n_events, False))
        if kind == "pending_marker":
            stream = _hex(rng, 32)
            conv.messages.append(
                {
                    "role": "assistant",
                    "timestamp": int(spec.updated + 30),
                    "_error": True,
                    "type": "interrupted",
                    "interruption_cause": "process_restart",
                    "_pending_journal_recovery": True,
                    "_journal_retry_stream_id": stream,
                    "_journal_retry_attempts": rng.randint(0, 5),
                    "_journal_retry_first_seen_ts": round(spec.updated + 31, 3),
                    "content": "**Response interrupted.**\n\nThe live response stream stopped before this turn "
                    "finished. The journal may still hold its output.",
                }
            )
            if rng.random() < 0.5:
                runs.append((stream, spec.updated + 2, rng.randint(50, 300), True))
        sess = self._session(spec, conv, meta)
        data = dump_session(sess.data)
        row = compact(sess)
        live = self.session_dir / f"{spec.sid}.json"
        bak = self.session_dir / f"{spec.sid}.json.bak"
        in_index = True
        write_live = True
        state_row = True
        n = len(conv.messages)
        if kind == "corrupt_live_with_bak":
            self._write(bak, self._bak_of(spec, conv, meta, max(1, n - 2)), spec.updated - 3600, "baks")
            data = data[: int(len(data) * 0.6)]
        elif kind == "corrupt_live_no_bak":
            data = data[: len(data) // 2] + b"\x00\x00garbage"
        elif kind == "shrunken_live":
            self._write(bak, data, spec.updated - 60, "baks")
            short = Conversation(conv.messages[: max(1, n // 3)], [])
            data = dump_session(self._session(spec, short, meta).data)
        elif kind in ("orphan_bak", "orphan_bak_no_state"):
            self._write(bak, data, spec.updated, "baks")
            write_live = False
            state_row = kind == "orphan_bak"
            in_index = kind == "orphan_bak"
        elif kind == "malformed_orphan_bak":
            self._write(
                bak, b'{"session_id": "' + spec.sid.encode() + b'", "messages": [', spec.updated, "baks"
            )
            write_live, state_row, in_index = False, False, False
        elif kind == "index_missing_file":
            write_live = False
            state_row = rng.random() < 0.5
        elif kind == "index_missing_entry":
            in_index = False
        elif kind in ("state_missing_sidecar", "state_orphan_empty", "tombstoned"):
            write_live, in_index = False, False
            if kind == "state_orphan_empty":
                conv.messages = []
            if kind == "tombstoned":
                self.tombstones.append(spec.sid)
        elif kind == "id_mismatch":
            data = data.replace(
                f'"session_id": "{spec.sid}"'.encode(), f'"session_id": "{spec.sid}x"'.encode(), 1
            )
        elif spec.healthy_bak or kind == "largest":
            self._write(
                bak, self._bak_of(spec, conv, meta, max(1, n - rng.randint(1, 6))), spec.updated - 600, "baks"
            )
        if write_live:
            self._write(live, data, spec.updated, "sidecars")
            self.counts["sidecars"] += 1
        if bak.exists():
            self.counts["baks"] += 1
        if in_index:
            self.index_rows.append(row)
        if state_row:
            self.db.add(
                spec.sid,
                "webui",
                spec.model,
                spec.provider,
                spec.created,
                meta["title"],
                conv.messages,
                cwd=meta["workspace"],
                archived=meta["archived"],
                pinned=meta["pinned"],
            )
        if kind == "largest":
            self.largest = {"session_id": spec.sid, "messages": n, "bytes": len(data), "path": str(live)}
        if spec.journals:
            self._journals(spec, conv, runs)

    def _journals(self, spec: Spec, conv: Conversation, runs: list[tuple[str, float, int, bool]]) -> None:
        rng, text = self.rng, self.text
        if not runs or spec.kind == "largest":
            # the runs of the last turns of the chat, all completed
            turn_starts = [
                conv.messages[i]["timestamp"] for i, _ in conv.user_turns[-3:] if i < len(conv.messages)
            ] or [spec.updated]
            runs = [
                (_hex(rng, 32), t, rng.randint(100, 600), True) for t in turn_starts[-rng.randint(1, 3) :]
            ] + runs
        folder = self.session_dir / "_run_journal" / spec.sid
        folder.mkdir(exist_ok=True)
        turns = []
        for run_id, t0, n_events, terminal in runs:
            lines = run_events(text, spec.sid, run_id, t0, n_events, terminal)
            blob = "".join(lines).encode("utf-8")
            damage = self.rng.random()
            if terminal and spec.kind is None and damage < 0.01:
                blob = blob.replace(b'{"text":" ', '{"text":" \u2028'.encode(), 1)  # torn by splitlines
            elif terminal and spec.kind is None and damage < 0.02:
                blob = blob[: len(blob) - 40]  # torn last line (crash mid-write)
            elif terminal and spec.kind is None and damage < 0.025:
                blob += "日".encode()[:2]  # multi-byte character cut at EOF: invalid UTF-8
            path = folder / f"{run_id}.jsonl"
            path.write_bytes(blob)
            os.utime(path, (t0 + n_events * 0.1, t0 + n_events * 0.1))
            self.bytes["run_journals"] += len(blob)
            self.counts["run_journals"] += 1
            self.counts["journal_events"] += n_events
            if n_events == self.journal_events and spec.kind == "largest":
                self.big_journal = {
                    "session_id": spec.sid,
                    "run_id": run_id,
                    "events": n_events,
                    "bytes": len(blob),
                    "path": str(path),
                }
            turns.append((run_id, t0, terminal))
        user_texts = [u for _, u in conv.user_turns]
        lines = []
        for k, (run_id, t0, terminal) in enumerate(turns):
            content = user_texts[-len(turns) + k] if len(user_texts) >= len(turns) else "hello"
            turn_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t0)) + "-" + _hex(rng, 12)
            lines += turn_events(spec.sid, turn_id, run_id, content, round(t0 - 1, 3), terminal)
        if spec.kind == "turn_journal_pending":
            t = spec.updated + 120
            turn_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t)) + "-" + _hex(rng, 12)
            lines += turn_events(spec.sid, turn_id, _hex(rng, 32), text.prose(20, 120), round(t, 3), False)
        blob = "".join(lines).encode("utf-8")
        path = self.session_dir / "_turn_journal" / f"{spec.sid}~{48213 + rng.randrange(50)}.jsonl"
        path.write_bytes(blob)
        self.bytes["turn_journals"] += len(blob)

    # -------------------------------------------------------------- state-only chats and the rest

    def state_only(self, n: int, used: set[str]) -> None:
        rng, text = self.rng, self.text
        for _ in range(n):
            source = rng.choices(["cli", "telegram", "cron", "subagent", "discord"], [60, 20, 8, 10, 2])[0]
            started = NOW - (rng.random() ** 1.5) * 730 * DAY
            stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime(started))
            sid = f"{'cron_' if source == 'cron' else ''}{stamp}_{_hex(rng, 6)}"
            if sid in used:
                continue
            used.add(sid)
            model, provider = rng.choice(MODELS)
            conv = make_conversation(
                text, rng.randint(2, 30), started, started + rng.uniform(60, 7200), False, model
            )
            title = conv.user_turns[0][1][:60] if conv.user_turns and source != "subagent" else None
            self.db.add(
                sid, source, model, provider, round(started, 3), title, conv.messages, cwd="/home/ada/code"
            )

    def finish(self, used: set[str]) -> None:
        rng = self.rng
        rows = sort_rows(self.index_rows)
        index = dumps_pretty(rows)
        path = self.session_dir / "_index.json"
        path.write_bytes(index)
        newest = max((r["updated_at"] for r in rows), default=NOW)
        os.utime(path, (newest, newest))
        # an old, drifted index: a fifth of the sessions unknown to it, a third of the rows out of date,
        # some rows for sessions deleted since
        stale = []
        for r in rows:
            x = rng.random()
            if x < 0.2:
                continue
            if x < 0.55:
                r = dict(
                    r,
                    message_count=max(0, r["message_count"] - rng.randint(1, 20)),
                    updated_at=r["updated_at"] - rng.uniform(3600, 30 * DAY),
                    title="Untitled",
                )
            stale.append(r)
        ghosts = _session_ids(rng, max(1, len(rows) // 50), used)
        for sid in ghosts:
            stale.append(dict(rows[0] if rows else {}, session_id=sid, title="Deleted chat"))
        (self.home / STALE_INDEX).write_bytes(dumps_pretty(sort_rows(stale)))
        tomb = {"version": 1, "ids": self.tombstones + _session_ids(rng, 3, used)}
        (self.session_dir / "_deleted_webui_sessions.json").write_bytes(dumps_pretty(tomb))
        self.db.close()


def generate(home: Path, sessions: int, seed: int = 1, journal_events: int = 200_000) -> dict:
    """Write a synthetic home into ``home`` (which must not exist) and return its manifest."""
    started = time.perf_counter()
    rng = random.Random(seed)
    home.mkdir(parents=True)
    specs, used = plan_sessions(rng, sessions)
    writer = Writer(home, rng, journal_events)
    for spec in specs:
        writer.session(spec)
    writer.state_only(max(1, round(sessions * STATE_ONLY_RATE)), used)
    writer.finish(used)
    manifest = {
        "generator_version": GEN_VERSION,
        "sessions": sessions,
        "seed": seed,
        "now": NOW,
        "journal_events": journal_events,
        "counts": {
            **writer.counts,
            "state_db_sessions": writer.db.sessions,
            "state_db_messages": writer.db.messages,
            "index_rows": len(writer.index_rows),
            "tail_sessions": sum(1 for s in specs if s.heavy),
        },
        "bytes": {**writer.bytes, "state_db": (home / "state.db").stat().st_size},
        "largest_sidecar": writer.largest,
        "big_journal": writer.big_journal,
        "kinds": {k: len(v) for k, v in sorted(writer.kinds.items())},
        "examples": {k: v[:3] for k, v in sorted(writer.kinds.items())},
        "seconds": round(time.perf_counter() - started, 1),
    }
    (home / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


# ---------------------------------------------------------------- cache and variants


def home_path(sessions: int, seed: int = 1, journal_events: int = 200_000) -> Path:
    return OUT_DIR / f"home-n{sessions}-seed{seed}-j{journal_events}-v{GEN_VERSION}"


def read_manifest(home: Path) -> dict | None:
    try:
        return json.loads((home / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def ensure_home(
    sessions: int,
    seed: int = 1,
    journal_events: int = 200_000,
    *,
    force: bool = False,
    out: Path | None = None,
    log=None,
) -> tuple[Path, dict]:
    """The cached home for these parameters, generated when missing (or when ``force``)."""
    home = out or home_path(sessions, seed, journal_events)
    log = log or (lambda msg: print(msg, file=sys.stderr))
    manifest = None if force else read_manifest(home)
    if manifest is not None and manifest.get("generator_version") == GEN_VERSION:
        return home, manifest
    for path in (home, Path(f"{home}.noindex"), Path(f"{home}.stale")):
        if path.exists():
            shutil.rmtree(path)
    log(f"generating {sessions} sessions into {home} ...")
    manifest = generate(home, sessions, seed, journal_events)
    log(
        f"  done in {manifest['seconds']} s: {manifest['bytes']['sidecars'] / 1e6:.0f} MB of sidecars, "
        f"{manifest['bytes']['state_db'] / 1e6:.0f} MB state.db"
    )
    return home, manifest


def _link_tree(src: Path, dst: Path, skip: set[str]) -> None:
    dst.mkdir(parents=True)
    for entry in os.scandir(src):
        if entry.name in skip:
            continue
        target = dst / entry.name
        if entry.is_dir(follow_symlinks=False):
            _link_tree(Path(entry.path), target, set())
        else:
            os.link(entry.path, target)


def ensure_variant(home: Path, variant: str) -> Path:
    """``noindex``: the same home without ``_index.json``; ``stale``: with an old, drifted one."""
    if variant == "fresh":
        return home
    dst = Path(f"{home}.{variant}")
    if (dst / MANIFEST).exists():
        return dst
    if dst.exists():
        shutil.rmtree(dst)
    _link_tree(home, dst, {"webui", MANIFEST})
    _link_tree(home / "webui" / "sessions", dst / "webui" / "sessions", {"_index.json"})
    if variant == "stale":
        index = dst / "webui" / "sessions" / "_index.json"
        index.write_bytes((home / STALE_INDEX).read_bytes())
        old = NOW - 30 * DAY
        os.utime(index, (old, old))
    elif variant != "noindex":
        raise ValueError(f"unknown variant {variant!r}")
    shutil.copyfile(home / MANIFEST, dst / MANIFEST)
    return dst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a synthetic Hermes home for the benchmarks.")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--out", type=Path, help="home to write (default: a cached home under bench/out/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--journal-events", type=int, default=200_000, help="events in the one big run journal")
    ap.add_argument("--force", action="store_true", help="regenerate even when a cached home exists")
    args = ap.parse_args(argv)
    if args.out is not None and args.out.exists() and not args.force and read_manifest(args.out) is None:
        print(f"refusing to write into existing {args.out} (use --force)", file=sys.stderr)
        return 2
    home, manifest = ensure_home(
        args.sessions, args.seed, args.journal_events, force=args.force, out=args.out
    )
    print(json.dumps({"home": str(home), **manifest}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
