"""Untrusted content stays text, data never steers a path, private copies stay private.

* Titles, messages, tool output, journal lines and file names reach the terminal with every
  control character escaped (text commands) or as pure ASCII JSON (``--json``).
* No path built from data (ids from sidecars, the index, state.db, journal folders, the command
  line) leaves the sessions folder: every planned path is a plain child of it, and applying every
  plan of a hostile home changes nothing outside it.
* Backups and the write log are 0600 in 0700 folders whatever the umask; written files keep
  their mode and owner; new files get hermes' permissions (0666 minus the umask).
* Symbolic links are never written through nor replaced.
* In the window, untrusted text is never rich text (labels, documents, tooltips).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest

from inspector.actions import make_context, plan_action
from inspector.plan import ApplyError, FileChange, Plan, WriteLog, apply_plan, undo_write
from inspector.store.files import Fingerprint
from inspector.textsafe import safe_text
from tests.safety.helpers import (
    CLOCK,
    demo,
    inspect_everything,
    plan_everything,
    run_cli,
    tree_diff,
    tree_state,
)

NOBODY = 65534
HOSTILE = (
    "\x1b[31mRED\x1b[0m \x1b]0;pwned-title\x07 \x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ "
    "\x9b2J \r\x08\x08overwrite \x07bell \x00nul \u2028sep\u2029 \x7fdel <script>alert(1)</script>"
    "<img src='file:///etc/hostname'>"
)
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _hostile_home(root: Path):
    """A demo home whose every kind of text carries terminal escapes and markup."""
    d, home = demo(root)
    for scenario in ("healthy", "stale_pending", "lost_response"):
        path = d.session_dir / f"{d.sessions[scenario]}.json"
        obj = json.loads(path.read_bytes())
        obj["title"] = "T " + HOSTILE
        obj["model"] = "M " + HOSTILE
        for msg in obj["messages"]:
            if isinstance(msg, dict):
                msg["content"] = "C " + HOSTILE
                if msg.get("role") == "tool":
                    msg["name"] = "tool " + HOSTILE
        if obj.get("pending_user_message"):
            obj["pending_user_message"] = "P " + HOSTILE
        path.write_bytes(json.dumps(obj, ensure_ascii=False, indent=2).encode())
    journal = next((d.session_dir / "_run_journal" / d.sessions["lost_response"]).iterdir())
    with open(journal, "ab") as fh:
        run, sid = journal.stem, d.sessions["lost_response"]
        event = {
            "version": 1,
            "event_id": f"{run}:90",
            "seq": 90,
            "run_id": run,
            "session_id": sid,
            "event": "tool" + HOSTILE,
            "type": "tool",
            "created_at": 1_780_000_000,
            "terminal": False,
            "terminal_state": None,
            "payload": {"name": "N " + HOSTILE, "text": "J " + HOSTILE},
        }
        fh.write(json.dumps(event, ensure_ascii=False).encode() + b"\n")
        fh.write(("dropped line " + HOSTILE + "\n").encode())
    (d.session_dir / "_index.json").write_bytes(
        json.dumps([{"session_id": "idx" + HOSTILE, "title": "I " + HOSTILE, "updated_at": 1}]).encode()
    )
    (d.session_dir / "evil\x1b[2J\x07name.json").write_bytes(b'{"session_id": "x", "title": "\\u001b[5m"}')
    con = sqlite3.connect(d.state_db)
    con.execute(
        "INSERT INTO sessions (id, source, started_at, title) VALUES (?, 'webui', 1, ?)",
        ("db\x1b[31m", "S " + HOSTILE),
    )
    con.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, 2)",
        ("db\x1b[31m", "D " + HOSTILE),
    )
    con.commit()
    con.close()
    return d, home


def test_the_command_line_never_prints_terminal_control_characters(tmp_path: Path) -> None:
    d, home = _hostile_home(tmp_path / "home")
    h = ["--home", str(d.home)]
    clock = ["--now", str(CLOCK.now), "--server-started-at", str(CLOCK.server_started_at)]
    ids = [*d.sessions.values(), "db\x1b[31m", "idx" + HOSTILE.replace("\x00", "")]
    runs = [["list", *h], ["audit", *h], ["history"]]
    for sid in ids:
        runs += [["show", sid, *h], ["journal", sid, *h]]
    for action in ("recover-journal", "repair-interrupted", "restore-backup"):
        runs += [["repair", sid, "--action", action, *h, *clock] for sid in ids]
    runs += [["repair", "--all", "--action", a, *h, *clock] for a in ("materialize", "rebuild-index")]
    checked = 0
    for argv in runs:
        code, out, err = run_cli(*argv)
        assert "Traceback" not in err
        for stream in (out, err):
            bad = UNSAFE.search(stream)
            assert bad is None, (
                f"{argv[0]} printed {bad.group()!r}: ...{stream[max(0, bad.start() - 60) : bad.end() + 20]!r}"
            )
        checked += len(out)
        code, out, err = run_cli(*argv, "--json")
        if code != 2:
            assert out.isascii() and UNSAFE.search(out) is None, f"{argv[0]} --json is not plain ASCII"
            if out.strip():
                json.loads(out)
    assert checked > 10_000
    assert "\\x1b[31m" in run_cli("show", d.sessions["healthy"], *h)[1]  # shown, as visible escapes


def test_safe_text_escapes_every_terminal_control_character() -> None:
    for code in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]:
        ch = chr(code)
        out = safe_text(f"a{ch}b")
        if ch in "\n\t":
            assert out == f"a{ch}b"
        else:
            assert UNSAFE.search(out) is None and out.startswith("a\\") and out.endswith("b")


# ---------------------------------------------------------------- paths built from data


def _unsafe_id_home(root: Path):
    """Ids that would escape the sessions folder, arriving from every source the inspector reads."""
    d, home = demo(root)
    evil = [
        "../../outside/escaped",
        "../escaped",
        "..",
        ".",
        "a/b",
        "/abs/path",
        "nul\x00id",
        "..\\win",
        "\u2025\u2025/x",
        "caf\u00e9",
        "-rf",
        " ",
    ]
    con = sqlite3.connect(d.state_db)
    for i, sid in enumerate(evil):
        con.execute(
            "INSERT INTO sessions (id, source, started_at, title, message_count) VALUES (?, 'webui', 1, ?, 1)",
            (sid, f"t{i}"),
        )
        con.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'x', 2)", (sid,)
        )
    con.commit()
    con.close()
    (d.session_dir / "_index.json").write_bytes(
        json.dumps(
            [{"session_id": sid, "title": "t", "updated_at": 1, "message_count": 3} for sid in evil]
        ).encode()
    )
    for i, sid in enumerate(evil):
        (d.session_dir / f"inner{i:02d}.json").write_bytes(
            json.dumps(
                {
                    "session_id": sid,
                    "messages": [{"role": "user", "content": "x"}],
                    "pending_user_message": "p",
                    "active_stream_id": "../../../../tmp/x",
                }
            ).encode()
        )
    (d.session_dir / "_deleted_webui_sessions.json").write_bytes(
        json.dumps({"version": 1, "ids": evil}).encode()
    )
    (d.session_dir / "..json.bak").write_bytes(b'{"messages": [1, 2, 3]}')
    (d.session_dir / "_run_journal" / "..x").mkdir()
    ((d.session_dir / "_run_journal" / "..x") / "r.jsonl").write_bytes(b'{"seq": 1}\n')
    return d, home, evil


def test_no_path_built_from_data_leaves_the_sessions_folder(tmp_path: Path) -> None:
    jail = tmp_path / "jail"
    d, home, evil = _unsafe_id_home(jail / "home")
    outside_before = {k: v for k, v in tree_state(jail).items() if not k.startswith("home/webui/sessions")}
    w = inspect_everything(home, extra_ids=evil)  # every planned path is checked to be a child
    assert any("not a safe" in m or "not safe" in m for m in w.messages().splitlines())
    log = WriteLog(tmp_path / "state")
    applied = 0
    for plan in plan_everything(home, [*d.sessions.values(), *evil]):
        if plan.refusal or not plan.changes:
            continue
        try:
            apply_plan(plan, log)
            applied += 1
        except ApplyError:
            pass  # an earlier plan changed its files: refused, nothing written
    assert applied >= 2  # materialize (the safe rows) and rebuild-index at least
    outside_after = {k: v for k, v in tree_state(jail).items() if not k.startswith("home/webui/sessions")}
    assert tree_diff(outside_before, outside_after) == [], "a write landed outside the sessions folder"
    assert not (jail / "outside").exists() and not (jail / "home" / "webui" / "escaped.json").exists()


@pytest.mark.parametrize("path", ["../escape.json", "sub/../../escape.json", "../../etc/cron.d/x"])
def test_apply_refuses_a_path_that_is_not_plain(tmp_path: Path, path: str) -> None:
    """Defence in depth: even a planner bug cannot make apply write through '..'."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target = Path(f"{folder}/{path}")
    with pytest.raises(ApplyError, match="not a plain absolute path"):
        apply_plan(Plan("test", "x", [FileChange(target, None, b"{}")]), WriteLog(tmp_path / "state"))
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["sessions"]


# ---------------------------------------------------------------- private copies, kept permissions


def _one_plan(tmp_path: Path, mode: int | None = None) -> tuple[Path, Plan]:
    target = tmp_path / "home" / "s1.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b'{"a": 1}')
    if mode is not None:
        target.chmod(mode)
    return target, Plan(
        "test", "s1", [FileChange(target, b'{"a": 1}', b'{"a": 2}', Fingerprint.of_bytes(b'{"a": 1}'))]
    )


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_backups_and_the_write_log_are_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)  # made earlier by someone else, too open
    (state / "writes.jsonl").write_bytes(b"")
    (state / "writes.jsonl").chmod(0o644)
    target, plan = _one_plan(tmp_path)
    old = os.umask(umask)
    try:
        rec = apply_plan(plan, WriteLog(state))
        undo_write(rec.write_id, WriteLog(state))
    finally:
        os.umask(old)
    for dirpath, dirnames, filenames in os.walk(state):
        for name in dirnames:
            assert stat.S_IMODE(os.stat(Path(dirpath) / name).st_mode) == 0o700, name
        for name in filenames:
            assert stat.S_IMODE(os.stat(Path(dirpath) / name).st_mode) == 0o600, name
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert len(list((state / "backups").rglob("*-s1.json"))) == 2


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o604, 0o444, 0o664])
def test_a_written_file_keeps_its_mode(tmp_path: Path, mode: int) -> None:
    target, plan = _one_plan(tmp_path, mode)
    apply_plan(plan, WriteLog(tmp_path / "state"))
    assert target.read_bytes() == b'{"a": 2}'
    assert stat.S_IMODE(target.stat().st_mode) == mode


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_hermes_permissions(tmp_path: Path, umask: int, expected: int) -> None:
    """hermes creates files with the default 0666 minus its umask; so does the inspector."""
    target = tmp_path / "home" / "new.json"
    target.parent.mkdir(parents=True)
    old = os.umask(umask)
    try:
        apply_plan(Plan("test", "new", [FileChange(target, None, b"{}")]), WriteLog(tmp_path / "state"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == expected


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can hand files to another user")
def test_run_as_root_a_file_keeps_its_owner_and_a_new_file_gets_the_folders(tmp_path: Path) -> None:
    target, plan = _one_plan(tmp_path, 0o600)
    os.chown(target, NOBODY, NOBODY)
    os.chown(target.parent, NOBODY, NOBODY)
    created = target.parent / "created.json"
    plan.changes.append(FileChange(created, None, b"{}"))
    apply_plan(plan, WriteLog(tmp_path / "state"))
    for p in (target, created):
        st = p.stat()
        assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY), p.name
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


# ---------------------------------------------------------------- symbolic links


def test_a_symlinked_target_is_never_written_through_nor_replaced(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.json"
    secret.write_bytes(b'{"secret": true}')
    folder = tmp_path / "sessions"
    folder.mkdir()
    link = folder / "s1.json"
    link.symlink_to(secret)
    dangling = folder / "s2.json"
    dangling.symlink_to(outside / "created-through-link.json")
    plans = [
        Plan(
            "modify",
            "s1",
            [FileChange(link, secret.read_bytes(), b"{}", Fingerprint.of_bytes(secret.read_bytes()))],
        ),
        Plan("create", "s2", [FileChange(dangling, None, b"{}")]),
        Plan("delete", "s1", [FileChange(link, secret.read_bytes(), None)]),
    ]
    before = tree_state(tmp_path)
    for plan in plans:
        with pytest.raises(ApplyError, match="symbolic link"):
            apply_plan(plan, WriteLog(tmp_path / "state"))
    assert tree_diff(before, tree_state(tmp_path)) == []
    assert not (outside / "created-through-link.json").exists()


def test_undo_refuses_a_file_that_became_a_symlink(tmp_path: Path) -> None:
    target, plan = _one_plan(tmp_path)
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(plan, log)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(elsewhere)
    with pytest.raises(ApplyError, match="symbolic link"):
        undo_write(rec.write_id, log)
    assert elsewhere.read_bytes() == b'{"a": 2}' and target.is_symlink()


def test_a_demo_repair_refuses_a_symlinked_sidecar(tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    live = d.session_dir / f"{d.sessions['shrunken']}.json"
    copy = tmp_path / "elsewhere.json"
    original = live.read_bytes()
    copy.write_bytes(original)
    live.unlink()
    live.symlink_to(copy)
    (plan,) = plan_action(make_context(home, CLOCK), "restore-backup", d.sessions["shrunken"])
    code, out, _ = run_cli(
        "repair", d.sessions["shrunken"], "--action", "restore-backup", "--home", str(d.home), "--write"
    )
    assert code == 1 and "symbolic link" in out
    assert live.is_symlink() and copy.read_bytes() == original
    assert plan.changes  # the preview still shows what hermes would do; the write is refused
