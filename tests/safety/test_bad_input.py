"""Bad input: every damaged, hostile or odd file a home can hold gets a clear message and loses nothing.

Each case breaks one thing in a demo home (which already holds every kind of broken chat),
then the whole read side runs over it (catalogue, hermes' audit and the inspector's findings,
every session's detail and journals, every action planned for every session and home-wide,
the command line's list/audit/show/journal/repair preview). Nothing may raise, no byte of the
home may change, the user must be told about the bad input in words, and every plan that would
write is applied and undone on the spot: every replaced byte is in a backup and undo restores
the home exactly.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.actions import make_context, plan_action
from inspector.demo import DemoHome
from inspector.plan import ApplyError, Plan, WriteLog, apply_plan
from inspector.store import statedb
from tests.safety.helpers import (
    CLOCK,
    apply_then_undo,
    assert_unchanged,
    demo,
    inspect_everything,
    run_cli,
    tree_state,
)

# ---------------------------------------------------------------- building blocks


def _sidecar(d: DemoHome, scenario: str, suffix: str = ".json") -> Path:
    return d.session_dir / f"{d.sessions[scenario]}{suffix}"


def _edit_sidecar(d: DemoHome, scenario: str, edit: Callable[[dict], None]) -> None:
    path = _sidecar(d, scenario)
    obj = json.loads(path.read_bytes())
    edit(obj)
    path.write_bytes(json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8"))


def _journal(d: DemoHome, scenario: str) -> Path:
    sid = d.sessions[scenario]
    return d.session_dir / "_run_journal" / sid / f"{d.stream_ids[scenario]}.jsonl"


def _event(d: DemoHome, scenario: str, seq, event: str = "token", payload=None, **extra) -> bytes:
    sid, run = d.sessions[scenario], d.stream_ids[scenario]
    record = {
        "version": 1,
        "event_id": f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": sid,
        "event": event,
        "type": event,
        "created_at": 1_780_000_100.0,
        "terminal": False,
        "terminal_state": None,
        "payload": {"text": "hi"} if payload is None else payload,
        **extra,
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _append_journal(d: DemoHome, scenario: str, data: bytes) -> None:
    with open(_journal(d, scenario), "ab") as fh:
        fh.write(data)


def _db(d: DemoHome, sql: str, params: tuple | list = ()) -> None:
    con = sqlite3.connect(d.state_db)
    try:
        if isinstance(params, list):
            con.executemany(sql, params)
        else:
            con.execute(sql, params)
        con.commit()
    finally:
        con.close()


def _db_session(d: DemoHome, sid: str, messages: list, source: str = "webui") -> None:
    """A state.db session row with messages and no sidecar (materialize looks at it)."""
    _db(
        d,
        "INSERT INTO sessions (id, source, started_at, title, message_count) VALUES (?, ?, ?, ?, ?)",
        (sid, source, 1_779_999_000.0, f"row {sid!r}", len(messages)),
    )
    _db(
        d,
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
        [(sid, role, content, 1_779_999_001.0 + i) for i, (role, content) in enumerate(messages)],
    )


def _replace_db(d: DemoHome, data: bytes) -> None:
    d.state_db.write_bytes(data)


def _old_schema_db(d: DemoHome) -> None:
    d.state_db.unlink()
    con = sqlite3.connect(d.state_db)
    con.executescript("""
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT);
        CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT);
        INSERT INTO sessions VALUES ('oldschema01', 'webui');
        INSERT INTO messages VALUES ('oldschema01', 'user', 'from a v1 store');
        PRAGMA user_version = 1;
    """)
    con.close()


def _no_table_db(d: DemoHome, keep: str) -> None:
    con = sqlite3.connect(d.state_db)
    con.execute("DROP INDEX IF EXISTS idx_messages_session")
    con.execute("DROP TABLE messages" if keep == "sessions" else "DROP TABLE sessions")
    con.commit()
    con.close()


def _malformed_db(d: DemoHome) -> None:
    data = bytearray(d.state_db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    data[page:] = b"\xde\xad\xbe\xef" * ((len(data) - page) // 4 + 1)
    d.state_db.write_bytes(bytes(data[: len(d.state_db.read_bytes())]))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# ---------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Bad:
    """One bad input: what it breaks, and the words the user must see about it (a regex)."""

    name: str
    make: Callable[[DemoHome], None]
    says: str | None = None
    ids: tuple[str, ...] = ()  # ids a user could type, inspected besides the catalogue's


def _sidecar_bytes(scenario: str, data: bytes | Callable[[bytes], bytes]) -> Callable[[DemoHome], None]:
    def make(d: DemoHome) -> None:
        path = _sidecar(d, scenario)
        path.write_bytes(data(path.read_bytes()) if callable(data) else data)

    return make


def _set(scenario: str, **values) -> Callable[[DemoHome], None]:
    return lambda d: _edit_sidecar(d, scenario, lambda obj: obj.update(values))


def _big_sidecar(d: DemoHome) -> None:
    def edit(obj: dict) -> None:
        row = {"role": "assistant", "content": "x" * 2000, "timestamp": 1_780_000_000}
        obj["messages"] = [dict(row) for _ in range(5_000)]  # ~10 MB

    _edit_sidecar(d, "stale_pending", edit)


def _journal_lines(scenario: str, *lines: bytes) -> Callable[[DemoHome], None]:
    return lambda d: _append_journal(d, scenario, b"".join(lines))


def _journal_built(scenario: str, build: Callable[[DemoHome], bytes]) -> Callable[[DemoHome], None]:
    return lambda d: _append_journal(d, scenario, build(d))


def _journal_folder_is_a_file(d: DemoHome) -> None:
    folder = _journal(d, "stale_pending").parent
    shutil.rmtree(folder)
    folder.write_bytes(b"x")


def _odd_journal_folders(d: DemoHome) -> None:
    for name in ("..sid", "\x1b[31mred", "caf\u00e9", "sp ace", "a.b"):
        folder = d.session_dir / "_run_journal" / name
        folder.mkdir()
        (folder / "r1.jsonl").write_bytes(b'{"seq": 1}\n')


SIDECARS = [
    Bad("sidecar-truncated", _sidecar_bytes("healthy", lambda b: b[: len(b) // 2]), r"not valid JSON"),
    Bad(
        "sidecar-corrupt",
        _sidecar_bytes("lost_response", b'{"session_id": "x", "messages": [}'),
        r"not valid JSON",
    ),
    Bad("sidecar-empty", _sidecar_bytes("stale_pending", b""), r"not valid JSON"),
    Bad("sidecar-bom", _sidecar_bytes("healthy", lambda b: b"\xef\xbb\xbf" + b), r"BOM"),
    Bad("sidecar-bom-with-backup", _sidecar_bytes("shrunken", lambda b: b"\xef\xbb\xbf" + b), r"BOM"),
    Bad("sidecar-list", _sidecar_bytes("healthy", b"[]"), r"not an object"),
    Bad("sidecar-string", _sidecar_bytes("lost_response", b'"hello"'), r"not an object"),
    Bad("sidecar-null", _sidecar_bytes("stale_pending", b"null"), r"not an object"),
    Bad("sidecar-number", _sidecar_bytes("healthy", b"42"), r"not an object"),
    Bad(
        "sidecar-invalid-utf8",
        _sidecar_bytes("healthy", lambda b: b.replace(b"Untitled", b"\xff\xfe") + b"\xc3"),
        r"UTF-8|utf-8",
    ),
    Bad(
        "sidecar-deep-nesting",
        _sidecar_bytes("healthy", _nested(100_000).encode()),
        r"recursion|nested|not an object",
    ),
    Bad(
        "sidecar-deep-nesting-with-backup",
        _sidecar_bytes("shrunken", _nested(100_000).encode()),
        r"recursion|nested",
    ),
    Bad("sidecar-very-large", _big_sidecar),
    Bad(
        "sidecar-nan-huge-int-surrogate",
        _sidecar_bytes(
            "lost_response",
            lambda b: b.replace(
                b'"pinned": false',
                b'"pinned": NaN, "x": 1' + b"0" * 5000 + b', "y": "\\ud800", "z": Infinity',
            ),
        ),
    ),
    Bad(
        "sidecar-wrong-types",
        _set(
            "stale_pending",
            messages={"0": "x"},
            title=["t"],
            updated_at="yesterday",
            pending_user_message={"a": 1},
            active_stream_id=[1],
            message_count="7",
            tool_calls="none",
        ),
    ),
    Bad(
        "sidecar-message-rows-not-objects", _set("lost_response", messages=["text", 3, None, [], {"role": 5}])
    ),
    Bad("sidecar-id-mismatch", _set("healthy", session_id="someone_else"), r"someone_else"),
    Bad("sidecar-id-traversal-inside", _set("lost_response", session_id="../../escaped"), r"escaped"),
    Bad("sidecar-id-missing", lambda d: _edit_sidecar(d, "stale_pending", lambda o: o.pop("session_id"))),
    Bad("sidecar-id-number", _set("healthy", session_id=7)),
    Bad(
        "sidecar-is-a-folder",
        lambda d: (_sidecar(d, "healthy").unlink(), _sidecar(d, "healthy").mkdir()),
        r"cannot read|directory|Is a directory",
    ),
    Bad("bak-corrupt", lambda d: _sidecar(d, "shrunken", ".json.bak").write_bytes(b'{"messages": [1, 2')),
    Bad("bak-nested", lambda d: _sidecar(d, "shrunken", ".json.bak").write_bytes(_nested(50_000).encode())),
    Bad(
        "bak-is-a-folder",
        lambda d: (
            _sidecar(d, "shrunken", ".json.bak").unlink(),
            _sidecar(d, "shrunken", ".json.bak").mkdir(),
        ),
    ),
    Bad(
        "odd-file-names",
        lambda d: [
            (d.session_dir / name).write_bytes(b'{"session_id": "odd", "messages": []}')
            for name in (
                "\x1b[2Jclear.json",
                "caf\u00e9.json",
                "sp ace.json",
                "\u202eevil.json",
                "..json",
                "-rf.json",
                "x" * 240 + ".json",
                "new\nline.json",
                ".hidden.json",
            )
        ],
        r"not safe|unsafe",
    ),
]

INDEXES = [
    Bad("index-object", lambda d: (d.session_dir / "_index.json").write_bytes(b"{}"), r"not a list"),
    Bad("index-empty-list", lambda d: (d.session_dir / "_index.json").write_bytes(b"[]")),
    Bad(
        "index-corrupt",
        lambda d: (d.session_dir / "_index.json").write_bytes(b'[{"session_id": "a"'),
        r"not a list",
    ),
    Bad("index-empty-file", lambda d: (d.session_dir / "_index.json").write_bytes(b"")),
    Bad(
        "index-lists-missing-files",
        lambda d: (d.session_dir / "_index.json").write_bytes(
            json.dumps(
                [{"session_id": f"gone{i:03d}", "title": "gone", "updated_at": i} for i in range(50)]
            ).encode()
        ),
    ),
    Bad(
        "index-hostile-rows",
        lambda d: (d.session_dir / "_index.json").write_bytes(
            json.dumps(
                [
                    1,
                    "x",
                    None,
                    {"session_id": 5},
                    {"session_id": "../../etc/passwd"},
                    {"session_id": "a/b"},
                    {"session_id": "nul\u0000id"},
                    {"session_id": ["x"]},
                    {"session_id": "\u001b]8;;http://x\u0007"},
                ]
            ).encode()
        ),
        r"not a list",
    ),
    Bad(
        "index-hostile-ids",
        lambda d: (d.session_dir / "_index.json").write_bytes(
            json.dumps(
                [
                    {"session_id": s, "title": "t", "updated_at": 1}
                    for s in (
                        "../../etc/passwd",
                        "a/b",
                        "nul\u0000id",
                        "..",
                        ".",
                        "\u001b[31mred",
                        "caf\u00e9",
                    )
                ]
            ).encode()
        ),
        r"not safe",
    ),
    Bad("index-nested", lambda d: (d.session_dir / "_index.json").write_bytes(_nested(100_000).encode())),
    Bad(
        "index-is-a-folder",
        lambda d: ((d.session_dir / "_index.json").unlink(), (d.session_dir / "_index.json").mkdir()),
    ),
]

JOURNALS = [
    Bad(
        "journal-invalid-utf8",
        _journal_lines("lost_response", b'{"seq": 99, "payload": "\xff\xfe"}\n'),
        r"UTF-8",
    ),
    Bad(
        "journal-u2028-in-payload",
        _journal_built(
            "lost_response",
            lambda d: _event(d, "lost_response", 90, payload={"text": "a\u2028b\u2029c\x85d"}) + b"\n",
        ),
        r"drops|torn",
    ),
    Bad("journal-torn-last-line", _journal_lines("lost_response", b'{"seq": 91, "event": "tok'), r"drops"),
    Bad(
        "journal-non-object-lines",
        _journal_lines("stale_pending", b'[1,2]\n"str"\n42\nnull\ntrue\n{}\n'),
        r"drops",
    ),
    Bad(
        "journal-string-seqs",
        _journal_built(
            "lost_response",
            lambda d: _event(d, "lost_response", "12") + b"\n" + _event(d, "lost_response", "x") + b"\n",
        ),
    ),
    Bad(
        "journal-duplicate-seqs",
        _journal_built("lost_response", lambda d: (_event(d, "lost_response", 1) + b"\n") * 3),
    ),
    Bad(
        "journal-huge-and-negative-seqs",
        _journal_built(
            "lost_response",
            lambda d: (
                _event(d, "lost_response", 10**30)
                + b"\n"
                + _event(d, "lost_response", -5)
                + b"\n"
                + _event(d, "lost_response", 1.5)
                + b"\n"
                + _event(d, "lost_response", True)
                + b"\n"
            ),
        ),
    ),
    Bad(
        "journal-gigantic-line",
        _journal_built(
            "lost_response",
            lambda d: _event(d, "lost_response", 95, payload={"text": "y" * 8_000_000}) + b"\n",
        ),
    ),
    Bad(
        "journal-nul-and-crlf", _journal_lines("stale_pending", b'{"seq": 1}\r\n\x00\x00\x00\n{"seq":\r2}\n')
    ),
    Bad(
        "journal-deep-nesting",
        _journal_lines("lost_response", _nested(50_000).encode() + b"\n"),
        r"nested 994 or more levels deep",
    ),
    Bad(
        "journal-terminal-junk",
        _journal_built(
            "lost_response",
            lambda d: (
                _event(d, "lost_response", 96, event="done", terminal=[1], terminal_state={"a": 1})
                + b"\n"
                + _event(d, "lost_response", 97, event="error", payload=["not", "a", "dict"], terminal=True)
                + b"\n"
            ),
        ),
    ),
    Bad("journal-empty-file", lambda d: _journal(d, "lost_response").write_bytes(b"")),
    Bad(
        "journal-is-a-folder",
        lambda d: (_journal(d, "lost_response").unlink(), _journal(d, "lost_response").mkdir()),
    ),
    Bad("journal-folder-is-a-file", lambda d: _journal_folder_is_a_file(d)),
    Bad("journal-odd-folder-names", lambda d: _odd_journal_folders(d), r"rejects|not safe"),
]


STATE_DBS = [
    Bad("statedb-malformed", _malformed_db, r"malformed|damaged|not a database"),
    Bad(
        "statedb-encrypted-looking",
        lambda d: _replace_db(d, os.urandom(64 * 1024)),
        r"not an SQLite database|not a database",
    ),
    Bad(
        "statedb-header-then-garbage",
        lambda d: _replace_db(d, b"SQLite format 3\x00" + b"\x00\x10" + b"\xff" * 8000),
        r"not an SQLite database|malformed|damaged",
    ),
    Bad("statedb-empty-file", lambda d: _replace_db(d, b""), r"no sessions table"),
    Bad("statedb-old-schema", _old_schema_db),
    Bad("statedb-no-messages-table", lambda d: _no_table_db(d, "sessions")),
    Bad("statedb-no-sessions-table", lambda d: _no_table_db(d, "messages"), r"no sessions table"),
    Bad("statedb-is-a-folder", lambda d: (d.state_db.unlink(), d.state_db.mkdir()), r"not a file"),
    Bad(
        "statedb-json-content",
        lambda d: _db_session(
            d,
            "jsoncontent01",
            [
                ("user", "\x00json:" + json.dumps([{"type": "text", "text": "hello"}])),
                ("assistant", "\x00json:" + json.dumps(json.dumps({"double": "encoded"}))),
                ("assistant", "\x00json:{not json"),
                ("assistant", "\x00json:" + _nested(5000)),
                ("user", json.dumps(json.dumps(["plain", "double"]))),
            ],
        ),
    ),
    Bad(
        "statedb-odd-values",
        lambda d: _db_session(
            d,
            "oddvalues01",
            [
                ("user", b"\x00\xff blob content"),
                ("assistant", 12345),
                ("assistant", 1.5),
                ("tool", None),
                ("", "empty role"),
                ("user", "\x1b[2J\x1b]0;pwned\x07 ANSI in content"),
            ],
        ),
        r"cannot be written as JSON|oddvalues01",
    ),
    Bad(
        "statedb-hostile-ids",
        lambda d: [
            _db_session(d, sid, [("user", "hi")])
            for sid in (
                "../../escaped",
                "a/b",
                "..",
                ".",
                "nul\x00id",
                "caf\u00e9",
                "\u202eevil",
                " spaced ",
                "x" * 240,
                "\x1b[31mred",
                "-rf",
                "",
            )
        ],
        r"not a safe|not safe",
    ),
    Bad(
        "statedb-text-timestamps-and-nulls",
        lambda d: _db(d, "UPDATE messages SET timestamp = 'yesterday' WHERE rowid % 2 = 0"),
    ),
]

IDS = [
    Bad(
        "typed-ids",
        lambda d: None,
        r"not a safe session id",
        ids=(
            "../../etc/passwd",
            "a/b",
            "..",
            ".",
            "nul\x00id",
            "caf\u00e9",
            "\x1b[2J",
            "",
            " ",
            "x" * 240,
            "_index",
            "-rf",
            "\u202eevil",
        ),
    ),
]


def _links(d: DemoHome) -> None:
    outside = d.home / "outside"
    outside.mkdir()
    (outside / "secret.json").write_bytes(
        b'{"session_id": "linked01", "messages": [{"role": "user", "content": "x"}]}'
    )
    (d.session_dir / "linked01.json").symlink_to(outside / "secret.json")
    (d.session_dir / "dangling01.json").symlink_to(outside / "missing.json")
    (d.session_dir / "loop01.json").symlink_to(d.session_dir / "loop01.json")
    (d.session_dir / "_run_journal" / "linkeddir").symlink_to(outside, target_is_directory=True)


def _linked_live_with_backup(d: DemoHome) -> None:
    """The shrunken session's live file is a link to a file outside the sessions folder."""
    outside = d.home / "outside"
    outside.mkdir()
    live = _sidecar(d, "shrunken")
    (outside / live.name).write_bytes(live.read_bytes())
    live.unlink()
    live.symlink_to(outside / live.name)


SYMLINKS = [
    Bad("symlinks-in-sessions-folder", _links),
    Bad("symlinked-live-sidecar", _linked_live_with_backup),
    Bad(
        "symlinked-index",
        lambda d: (
            (d.home / "outside").mkdir(),
            (d.home / "outside" / "idx.json").write_bytes(b"{}"),
            (d.session_dir / "_index.json").unlink(),
            (d.session_dir / "_index.json").symlink_to(d.home / "outside" / "idx.json"),
        ),
    ),
]

CASES = SIDECARS + INDEXES + JOURNALS + STATE_DBS + IDS + SYMLINKS


# ---------------------------------------------------------------- the test


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch):
    """Durability is the crash loop's subject; here fsync only costs time."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def _writable(plans: list[Plan]) -> list[Plan]:
    seen, out = set(), []
    for p in plans:
        key = (p.action, p.session_id)
        if p.refusal or not p.changes or key in seen:
            continue
        seen.add(key)
        out.append(p)
    return out


def _cli_round(home: Path, ids: list[str]) -> None:
    """The command line over the same home (the workout already formatted every report once)."""
    code, _, err = run_cli("list", "--home", str(home))
    assert code == 0 and "Traceback" not in err, err
    for sid in ids:
        code, _, err = run_cli("show", sid, "--home", str(home))
        assert code in (0, 2) and "Traceback" not in err, (sid, err)  # 2: argparse reads "-rf" as an option


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_reported_and_nothing_is_lost(tmp_path: Path, case: Bad) -> None:
    d, home = demo(tmp_path / "home")
    case.make(d)
    before = tree_state(d.home)
    w = inspect_everything(home, extra_ids=case.ids)
    assert_unchanged(dict(before), d.home)
    if case.says:
        said = w.messages() + "\n" + w.text()
        assert re.search(case.says, said), f"no message matching {case.says!r} for {case.name}"
    ids = [i for i in case.ids if "\x00" not in i] + [d.sessions["shrunken"], d.sessions["lost_response"]]
    _cli_round(d.home, ids)
    assert_unchanged(dict(before), d.home)
    log = WriteLog(tmp_path / "state")
    for plan in _writable(w.plans):
        links = [c.path for c in plan.changes if c.path.is_symlink()]
        if links:  # never written through, never replaced: refused, and the link stays
            with pytest.raises(ApplyError, match="symbolic link"):
                apply_plan(plan, log)
            assert_unchanged(dict(before), d.home)
            continue
        apply_then_undo(plan, log, d.home)


def test_a_locked_state_db_is_reported_not_waited_on(tmp_path: Path, monkeypatch) -> None:
    """The agent holds an exclusive lock: every reader says so quickly and nothing breaks."""
    monkeypatch.setattr(statedb, "DEFAULT_TIMEOUT", 0.05)
    monkeypatch.setattr(statedb, "HERMES_TIMEOUT", 0.05)
    d, home = demo(tmp_path / "home")
    before = tree_state(d.home)
    holder = sqlite3.connect(d.state_db, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        w = inspect_everything(home)
    finally:
        holder.rollback()
        holder.close()
    assert re.search(r"locked", w.messages()), "the lock is not reported"
    assert_unchanged(before, d.home)


# ---------------------------------------------------------------- bugs found by this suite, now fixed


@pytest.mark.parametrize(
    ("action", "scenario"), [("recover-journal", "lost_response"), ("repair-interrupted", "stale_pending")]
)
def test_a_deeply_nested_message_is_refused_not_raised(tmp_path: Path, action: str, scenario: str) -> None:
    d, home = demo(tmp_path / "home")
    _edit_sidecar(
        d, scenario, lambda o: o["messages"].append({"role": "user", "content": json.loads(_nested(900))})
    )
    try:
        (plan,) = plan_action(make_context(home, CLOCK), action, d.sessions[scenario])
    except RecursionError:
        plan = None  # asserted outside the handler: pytest would spend seconds on a 1000-frame traceback
    assert plan is not None, "RecursionError out of plan()"
    assert plan.refusal or not plan.changes


def test_a_sidecar_name_too_long_for_its_backup_name_does_not_break_the_list(tmp_path: Path) -> None:
    """A 255-byte sidecar name fits, its ``.bak`` would not: the list still shows every session,
    that one among them, and its detail says why nothing can be backed up for it."""
    d, home = demo(tmp_path / "home")
    long_id = "x" * 250
    (d.session_dir / f"{long_id}.json").write_bytes(b'{"session_id": "x", "messages": []}')
    w = inspect_everything(home, plans=False)
    listing = w.texts[0]  # format_list over the catalogue
    for sid in [*d.sessions.values(), long_id]:
        assert sid[:30] in listing, f"{sid[:30]}… missing from the list"
    said = [f for f in w.findings if f["session_id"] == long_id and f["kind"] == "id_too_long"]
    assert said and "too long for a file name" in said[0]["message"]


@pytest.mark.parametrize("where", ["typed", "state.db"])
def test_an_id_too_long_for_a_file_name_is_reported(tmp_path: Path, where: str) -> None:
    d, home = demo(tmp_path / "home")
    sid = "y" * 300
    if where == "state.db":
        _db_session(d, sid, [("user", "hi")])
    w = inspect_everything(home, extra_ids=[sid] if where == "typed" else (), plans=False)
    said = [f for f in w.findings if f["session_id"] == sid and f["kind"] == "id_too_long"]
    assert said, "no id_too_long finding for the 300-byte id"
    assert said[0]["severity"] == "error" and "300 bytes: too long for a file name" in said[0]["message"]
    if where == "state.db":  # a row only state.db has is still listed
        assert sid[:30] in w.texts[0]


# ---------------------------------------------------------------- files the user may not read
#
# Real permissions, even under root: tests/safety/unprivileged.py drops to `nobody` after
# importing everything, and the home is handed to `nobody` first.


def _unprivileged(workload: list[str], homes: list[Path], state: Path) -> list[dict]:
    spec = json.dumps({"workload": workload, "homes": [str(h) for h in homes], "state": str(state)})
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("unprivileged.py")), spec],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout, proc.stderr
    results = json.loads(proc.stdout)
    if results and "skip" in results[0]:
        pytest.skip(results[0]["skip"])
    for r in results:
        assert r["ok"], r.get("error")
    return results


@pytest.fixture
def shared_base():
    """A folder `nobody` can reach; homes built in it are handed to `nobody` by :func:`_give_away`."""
    base = Path(tempfile.mkdtemp(prefix="inspector-perm-"))
    base.chmod(0o755)
    (base / "state").mkdir(mode=0o700)
    yield base
    for dirpath, dirnames, _ in os.walk(base):
        for name in dirnames:
            with contextlib.suppress(OSError):
                (Path(dirpath) / name).chmod(0o755)
    shutil.rmtree(base, ignore_errors=True)


def _give_away(base: Path) -> None:
    if os.geteuid() == 0:
        try:
            for dirpath, dirnames, filenames in os.walk(base):
                for name in [*dirnames, *filenames, "."]:
                    os.chown(Path(dirpath) / name, NOBODY, NOBODY, follow_symlinks=False)
        except OSError as exc:
            pytest.skip(f"cannot hand files to another user here: {exc}")


@pytest.fixture
def shared_home(shared_base):
    """A demo home in a folder `nobody` can reach, owned by `nobody` when the suite is root."""
    d, _ = demo(shared_base / "home")
    _give_away(shared_base)
    return d, shared_base / "state"


NOBODY = 65534


def _perm_target(d: DemoHome, case: str) -> tuple[Path, int]:
    sid = d.sessions
    return {
        "sidecar": (_sidecar(d, "healthy"), 0o000),
        "bak": (_sidecar(d, "shrunken", ".json.bak"), 0o000),
        "index": (d.session_dir / "_index.json", 0o000),
        "journal": (_journal(d, "lost_response"), 0o000),
        "journal-folder": (d.session_dir / "_run_journal" / sid["stale_pending"], 0o000),
        "state.db": (d.state_db, 0o000),
        "profile-state.db": (d.profile_state_db("work"), 0o000),
    }[case]


PERMISSION_CASES = {
    "sidecar": r"[Pp]ermission denied",
    "bak": r"\.bak is unreadable",  # the restore preview; see the xfail below for `show`
    "index": r"[Pp]ermission denied",
    "journal": r"[Pp]ermission denied",
    "journal-folder": r"[Pp]ermission denied|cannot be read|cannot list",
    "state.db": r"permission denied|cannot be opened",
    "profile-state.db": r"permission denied|cannot be opened",
}


def test_files_the_user_may_not_read_are_named_and_nothing_breaks(shared_base) -> None:
    """One home per unreadable file, all inspected in one unprivileged run (fast)."""
    cases = list(PERMISSION_CASES)
    homes = {case: demo(shared_base / case)[0] for case in cases}
    _give_away(shared_base)
    befores = {case: tree_state(d.home) for case, d in homes.items()}
    targets = {case: _perm_target(homes[case], case) for case in cases}
    modes = {case: path.stat().st_mode for case, (path, _) in targets.items()}
    for path, mode in targets.values():
        path.chmod(mode)
    try:
        results = _unprivileged(["inspect"], [homes[c].home for c in cases], shared_base / "state")
    finally:
        for case, (path, _) in targets.items():
            path.chmod(modes[case])
    for case, result in zip(cases, results, strict=True):
        path = targets[case][0]
        assert_unchanged(befores[case], homes[case].home)
        assert all("Traceback" not in c["err"] for c in result["cli"])
        lines = (result["messages"] + "\n" + result["text"]).splitlines()
        named = (lambda line: True) if case == "bak" else (lambda line, n=path.name: n in line)
        assert any(named(line) and re.search(PERMISSION_CASES[case], line) for line in lines), (
            f"nothing tells the user that {path} ({case}) cannot be read"
        )


def test_an_unreadable_backup_is_a_finding_with_its_reason(shared_home) -> None:
    d, state = shared_home
    bak = _sidecar(d, "shrunken", ".json.bak")
    bak.chmod(0o000)
    try:
        (result,) = _unprivileged(["cli", d.sessions["shrunken"]], [d.home], state)
    finally:
        bak.chmod(0o644)
    show = result["cli"][-1]["out"]
    assert "Permission denied" in show or "cannot be read" in show


def test_a_journal_folder_that_cannot_be_listed_is_named(shared_home) -> None:
    d, state = shared_home
    sid = d.sessions["stale_pending"]
    folder = d.session_dir / "_run_journal" / sid
    folder.chmod(0o000)
    try:
        (result,) = _unprivileged(["cli", sid], [d.home], state)
    finally:
        folder.chmod(0o755)
    show = result["cli"][-1]["out"]
    assert "has no run journal" not in show and re.search(r"[Pp]ermission denied|cannot be read", show)


def test_a_sessions_folder_the_user_may_not_read_is_a_clear_error(shared_home) -> None:
    """The command line and the window check the folder first (check_readable) and say so."""
    d, state = shared_home
    before = tree_state(d.home)
    d.session_dir.chmod(0o000)
    try:
        (result,) = _unprivileged(["cli", d.sessions["healthy"]], [d.home], state)
    finally:
        d.session_dir.chmod(0o755)
    assert_unchanged(before, d.home)
    for run in result["cli"]:
        assert run["code"] == 2 and "cannot be read" in run["err"] and "Traceback" not in run["err"]


def test_a_read_only_sessions_folder_refuses_the_write_and_keeps_the_original(shared_home) -> None:
    d, state = shared_home
    sid = d.sessions["shrunken"]
    before = tree_state(d.home)
    d.session_dir.chmod(0o555)
    try:
        (result,) = _unprivileged(["write", sid, "restore-backup"], [d.home], state)
    finally:
        d.session_dir.chmod(0o755)
    assert result["code"] == 1
    assert "NOT WRITTEN" in result["out"] and "Permission denied" in result["out"]
    assert "nothing was written" in result["out"]
    assert_unchanged(before, d.home)


def test_a_wal_state_db_in_a_read_only_folder_says_why_it_cannot_be_read(shared_home) -> None:
    """SQLite needs -wal/-shm beside a WAL database; in a read-only folder it cannot make them."""
    d, state = shared_home
    con = sqlite3.connect(d.state_db)
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    for side in ("-wal", "-shm"):
        Path(str(d.state_db) + side).unlink(missing_ok=True)
    before = tree_state(d.home)
    d.home.chmod(0o555)
    try:
        (result,) = _unprivileged(["inspect"], [d.home], state)
    finally:
        d.home.chmod(0o755)
    assert_unchanged(before, d.home)
    assert re.search(r"read-only|readonly", result["messages"] + result["text"])


@pytest.mark.parametrize(
    "poison",
    [
        (b'"input_tokens": ', b'NaN, "x_": '),
        (b'"title": ', b'"\\ud800", "x_": '),
        (b'"workspace": ', b'"/a\\u0000b", "x_": '),
    ],
    ids=["nan-tokens", "lone-surrogate", "nul-in-workspace"],
)
@pytest.mark.parametrize("action", ["rebuild-index", "materialize"])
def test_a_sidecar_hermes_cannot_reindex_is_refused_not_raised(tmp_path: Path, poison, action: str) -> None:
    d, home = demo(tmp_path / "home")
    path = _sidecar(d, "healthy")
    key, value = poison
    path.write_bytes(path.read_bytes().replace(key, key + value, 1))
    (plan,) = plan_action(make_context(home, CLOCK), action, None)
    if key == b'"input_tokens": ':
        # hermes reads NaN counters with int(value or 0) -> 0, so it indexes this sidecar (NaN kept)
        index = next(c.after for c in plan.changes if c.path.name == "_index.json")
        assert b'"input_tokens": NaN' in index and plan.refusal is None
        return
    # hermes' rebuild leaves a sidecar it cannot load out of the index: the plan may do the
    # same, but then the preview must name the file; what it cannot compute is refused.
    assert plan.refusal or not plan.changes or any(path.name in w for w in plan.warnings)


def _opening_a_fifo(thread: threading.Thread) -> bool:
    """Whether ``thread`` waits in the kernel for a FIFO's other end (Linux: its wchan)."""
    try:
        return Path(f"/proc/self/task/{thread.native_id}/wchan").read_text() == "wait_for_partner"
    except OSError:
        return False


def test_a_fifo_named_like_a_sidecar_does_not_block_the_list(tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    fifo = d.session_dir / "fifo01.json"
    os.mkfifo(fifo)
    done: list[bool] = []
    worker = threading.Thread(
        target=lambda: done.append(bool(inspect_everything(home, plans=False))), daemon=True
    )
    worker.start()
    # Event-driven, not "done within 2 s" (a busy machine is slower than that): the worker is
    # blocked the moment the kernel parks it opening a FIFO without a writer; otherwise it just
    # has to finish (the 120 s only stops a hang where /proc has no wchan).
    give_up, blocked = time.monotonic() + 120, False
    while worker.is_alive() and not blocked and time.monotonic() < give_up:
        blocked = _opening_a_fifo(worker)
        worker.join(0.01)
    blocked = blocked or worker.is_alive()
    for _ in range(200):  # release every blocked open: open the other end and close it (EOF)
        if not worker.is_alive():
            break
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(0.05)
    assert not blocked, "the catalogue blocked on a FIFO in the sessions folder"
