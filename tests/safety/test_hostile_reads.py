"""Hostile files on the read side (issue 14, classes 3, 4, 5, 6 and 8).

* A hostile ``state.db`` never hangs a command: a ``sessions``/``messages`` that is a view (an
  endless recursive query) or has computed columns is a finding, every query stops at a
  deadline and no value may exceed a size limit.
* Every file the inspector opens goes through one regular-file, size-bounded reader: a FIFO or
  a link to ``/dev/zero`` as ``webui.ctl.env``, ``webui.pid``, ``_index.json``, the tombstones,
  a sidecar or a state.db side file never blocks a command nor fills its memory.
* Files read whole have a size limit ("too large to load safely"): a 2 GB sparse sidecar or
  ``.bak`` and a 500 MB one-line journal keep every command under 500 MB of memory, and a
  repair that would need such a file is refused.
* Links that leave the home are shown as what they are; a repair that would write, or copy
  from, a file outside the home (a linked sessions folder, a linked ``.bak``, ``STATE_DIR=`` in
  the home's own ``webui.ctl.env``) names the real target and is refused without
  ``--follow-links``; a link swapped in after the preview is refused at write time.
* No text in any file crashes any output: a lone surrogate in a title is shown escaped by
  ``list``/``show``, text or ``--json``, whatever the terminal's encoding, and exported.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from inspector.actions import make_context, plan_action
from inspector.export import transcript_json_bytes, transcript_markdown
from inspector.home import locate_home
from inspector.linkcheck import LINKS_KEY, recheck_before_write
from inspector.session_detail import load_detail
from inspector.store import journal, statedb
from tests.safety.helpers import CLOCK, demo, run_cli, tree_state

REPO = Path(__file__).resolve().parents[2]


def _cli(*argv: str, env: dict | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """The installed command line in a child process (a real stdout with a real encoding)."""
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("HERMES_INSPECTOR_NO_CACHE", "1")
    return subprocess.run(
        [sys.executable, "-m", "inspector", *argv],
        capture_output=True,
        timeout=timeout,
        env=full_env,
        cwd=REPO,
    )


def _set_title(d, scenario: str, raw_json_text: bytes) -> str:
    sid = d.sessions[scenario]
    path = d.session_dir / f"{sid}.json"
    data = path.read_bytes()
    start = data.index(b'"title": "') + len(b'"title": "')
    path.write_bytes(data[:start] + raw_json_text + data[start:])
    return sid


# ---------------------------------------------------------------- class 8: any text, any output


def test_a_lone_surrogate_in_a_title_is_shown_escaped_by_every_output(tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    sid = _set_title(d, "healthy", b"\\ud800 \\udfff ")
    assert "\ud800" in json.loads((d.session_dir / f"{sid}.json").read_bytes())["title"]  # hermes loads it
    h = ("--home", str(d.home))
    for env in (
        {"PYTHONIOENCODING": "utf-8"},
        {"PYTHONIOENCODING": "ascii", "LC_ALL": "C"},
        {"PYTHONIOENCODING": "latin-1"},
    ):
        for argv in (("list", *h), ("show", sid, *h), ("audit", *h)):
            proc = _cli(*argv, env=env)
            assert proc.returncode == 0 and b"Traceback" not in proc.stderr, (argv, env, proc.stderr[-400:])
            if argv[0] != "audit":
                assert b"\\ud800" in proc.stdout, (argv, env)
            proc = _cli(*argv, "--json", env=env)
            assert proc.returncode == 0 and b"Traceback" not in proc.stderr, (argv, env, proc.stderr[-400:])
            json.loads(proc.stdout)
    detail = load_detail(home, sid)
    assert "\\ud800" in transcript_markdown(detail, now=0.0, include_state_db=True)
    exported = json.loads(transcript_json_bytes(detail, now=0.0))
    assert exported["title"].startswith("\ud800 \udfff ")  # the same string, written as its JSON escape


def test_a_state_db_title_that_is_not_utf8_does_not_hide_every_other_row(tmp_path: Path) -> None:
    """The next hole of the same kind: one TEXT value that is not UTF-8 failed the whole
    state.db query, so the list lost every state.db row; now it is shown escaped."""
    d, home = demo(tmp_path / "home")
    sid = d.sessions["state_only"]
    with closing(sqlite3.connect(d.state_db)) as con:
        con.execute("UPDATE sessions SET title = CAST(X'4261642078FF' AS TEXT) WHERE id = ?", (sid,))
        con.execute("UPDATE messages SET content = CAST(X'6869FE' AS TEXT) WHERE session_id = ?", (sid,))
        con.commit()
    h = ("--home", str(d.home))
    listed = _cli("list", *h)
    assert listed.returncode == 0 and b"Traceback" not in listed.stderr
    assert b"Bad x\\udcff" in listed.stdout and b"could not be read" not in listed.stdout
    shown = _cli("show", sid, *h)
    assert b"Bad x\\udcff" in shown.stdout and b"4 messages" in shown.stdout
    for argv in (("list", "--json", *h), ("show", sid, "--json", *h)):
        proc = _cli(*argv)
        assert proc.returncode == 0 and json.loads(proc.stdout)


# ---------------------------------------------------------------- class 3: a hostile state.db

ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)"
HOSTILE_SCHEMAS = {
    "sessions-endless-view": f"""ALTER TABLE sessions RENAME TO real_sessions;
        CREATE VIEW sessions AS {ENDLESS} SELECT 'x' || n AS id, 'webui' AS source, n AS started_at,
        't' AS title, 1 AS message_count FROM r;""",
    "messages-endless-view": f"""ALTER TABLE messages RENAME TO real_messages;
        CREATE VIEW messages AS {ENDLESS} SELECT n AS id, s.id AS session_id, 'user' AS role,
        'hi' AS content, n AS timestamp FROM r, real_sessions s;""",
    "messages-huge-computed-column": """ALTER TABLE messages RENAME TO real_messages;
        CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, timestamp REAL);
        INSERT INTO messages (session_id, role, timestamp) SELECT session_id, role, timestamp FROM real_messages;
        ALTER TABLE messages ADD COLUMN content TEXT AS (zeroblob(900000000)) VIRTUAL;""",
    "sessions-huge-computed-column": """
        ALTER TABLE sessions ADD COLUMN huge TEXT AS (zeroblob(900000000)) VIRTUAL;""",
}


@pytest.mark.parametrize("schema", sorted(HOSTILE_SCHEMAS))
def test_a_hostile_state_db_is_a_finding_and_no_command_hangs(tmp_path: Path, schema: str) -> None:
    d, home = demo(tmp_path / "home")
    with closing(sqlite3.connect(d.state_db)) as con:
        con.executescript(HOSTILE_SCHEMAS[schema])
    h = ("--home", str(d.home))
    state_only = d.sessions["state_only"]
    said = []
    for argv in (
        ("list", *h),
        ("audit", *h),
        ("show", state_only, *h),
        ("repair", "--all", "--action", "materialize", *h),
        ("repair", state_only, "--action", "materialize", *h),
    ):
        proc = _cli(*argv, timeout=60)  # a hang is a TimeoutExpired (0.35 s idle: ample at 20x slower)
        assert b"Traceback" not in proc.stderr, (argv, proc.stderr[-400:])
        said.append(proc.stdout.decode())
    what = "computed columns" if "computed" in schema else "is a view (a query), not a table"
    assert all(what in text for text in said), said


def test_every_state_db_query_stops_at_its_deadline(tmp_path: Path, monkeypatch) -> None:
    d, _ = demo(tmp_path / "home")
    monkeypatch.setattr(statedb, "QUERY_DEADLINE", 0.3)
    with closing(statedb.open_readonly(d.state_db)) as conn:
        with pytest.raises(sqlite3.OperationalError) as caught:
            conn.execute(f"{ENDLESS} SELECT COUNT(*) FROM r").fetchall()
        assert "ran longer than 0.3 s" in statedb.describe_sqlite_error(caught.value, d.state_db)
        conn.restart_deadline()  # a fresh deadline: the next query runs
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] > 0


def test_no_state_db_value_may_exceed_the_size_limit(tmp_path: Path, monkeypatch) -> None:
    d, _ = demo(tmp_path / "home")
    monkeypatch.setattr(statedb, "MAX_VALUE_BYTES", 1 << 20)
    with closing(statedb.open_readonly(d.state_db)) as conn:
        assert len(conn.execute("SELECT zeroblob(1000000)").fetchone()[0]) == 1_000_000
        with pytest.raises(sqlite3.DataError) as caught:
            conn.execute("SELECT zeroblob(2000000)").fetchone()
    assert "too large to load safely" in statedb.describe_sqlite_error(caught.value, d.state_db)


# ---------------------------------------------------------------- classes 4 and 5: special and huge files

# The child's own peak: VmHWM of /proc/self/status where there is one. Linux's ru_maxrss of an exec'ed
# child keeps the peak of the process it was forked from (here pytest, 500 MB late in a full run), so it
# measured the test runner, not the command; elsewhere ru_maxrss (bytes on macOS, KB on the others).
_MEASURED = (
    "import resource, sys\n"
    "from inspector.cli import main\n"
    "def peak_kb():\n"
    "    try:\n"
    "        with open('/proc/self/status') as fh:\n"
    "            for line in fh:\n"
    "                if line.startswith('VmHWM:'):\n"
    "                    return int(line.split()[1])\n"
    "    except OSError:\n"
    "        pass\n"
    "    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    return rss // 1024 if sys.platform == 'darwin' else rss\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    sys.stdout.flush()\n"
    "    sys.stderr.write('\\nMAXRSS_KB %d\\n' % peak_kb())\n"
    "sys.exit(code)\n"
)


def _cli_rss(*argv: str, timeout: float = 30.0) -> tuple[subprocess.CompletedProcess, int]:
    """The command line in a child process: its result and its peak memory (MB)."""
    env = {**os.environ, "HERMES_INSPECTOR_NO_CACHE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURED, *argv], capture_output=True, timeout=timeout, env=env, cwd=REPO
    )
    err = proc.stderr.decode(errors="replace")
    assert "MAXRSS_KB" in err and "Traceback" not in err, (argv, err[-600:])
    return proc, int(err.rsplit("MAXRSS_KB ", 1)[1].split()[0]) // 1024


def _commands(d) -> list[tuple[str, ...]]:
    h = ("--home", str(d.home))
    shrunken, lost = d.sessions["shrunken"], d.sessions["lost_response"]
    return [
        ("list", *h),
        ("audit", *h),
        ("list", "--json", *h),
        ("show", shrunken, *h),
        ("show", lost, *h),
        ("journal", lost, *h),
        ("repair", "--all", "--action", "rebuild-index", *h),
        ("repair", shrunken, "--action", "restore-backup", *h),
        ("repair", lost, "--action", "recover-journal", *h),
    ]


def _special(d, kind: str) -> None:
    """Every file the inspector opens besides sidecars and journals, as a FIFO or a link to /dev/zero."""
    sd = d.session_dir
    for path in (
        d.home / "webui.ctl.env",
        d.home / "webui.pid",
        sd / "_index.json",
        sd / "_deleted_webui_sessions.json",
        sd / "fifo01.json",
        Path(f"{d.state_db}-journal"),
    ):
        if path.exists() or path.is_symlink():
            path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_special_files_never_block_nor_fill_memory(tmp_path: Path, kind: str) -> None:
    d, _ = demo(tmp_path / "home")
    _special(d, kind)
    said = ""
    for argv in _commands(d):
        proc, rss = _cli_rss(*argv)  # a blocked open is a TimeoutExpired
        assert rss < 500, f"{argv[0]} used {rss} MB"
        said += proc.stdout.decode(errors="replace")
    assert "_index.json cannot be read: not a regular file" in said
    assert "state.db-journal is not a regular file" in said


def _event_line(seq, event="token", **extra) -> bytes:
    record = {
        "version": 1,
        "event_id": f"r1:{seq}",
        "seq": seq,
        "run_id": "r1",
        "session_id": "s1",
        "event": event,
        "type": event,
        "created_at": 1_780_000_000.0 + seq,
        "payload": {"text": "h\u00e9"},
        **extra,
    }
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


JOURNAL_BODIES = {
    "plain": b"".join(_event_line(i) for i in range(1, 40)),
    "terminal-then-more": _event_line(1)
    + _event_line(2, "done", terminal=True, terminal_state="completed")
    + _event_line(3)
    + _event_line(4, "stream_end", terminal=True, terminal_state="x"),
    "junk-and-tears": _event_line(1)
    + b"not json\n\n[1,2]\r\n"
    + _event_line(2)[:-1]
    + "\u2028x\n".encode()
    + _event_line(3)
    + b'{"seq": 4',
    "invalid-utf8": _event_line(1) + b'{"seq": 2, "x": "\xff"}\n' + _event_line(3),
    "empty": b"",
}


@pytest.mark.parametrize("name", sorted(JOURNAL_BODIES))
@pytest.mark.parametrize("block", [5, 64, 1 << 22])
def test_a_streamed_journal_summary_is_hermes_summary(
    tmp_path: Path, monkeypatch, name: str, block: int
) -> None:
    """A journal too large to load whole is summarised piece by piece, with hermes' own verdict."""
    path = tmp_path / "r1.jsonl"
    path.write_bytes(JOURNAL_BODIES[name])
    monkeypatch.setattr(journal, "BLOCK_BYTES", block)
    try:
        parsed = journal.parse_journal_bytes(path.read_bytes())
    except journal.JournalUnreadable as exc:
        with pytest.raises(journal.JournalUnreadable, match=re.escape(str(exc))):
            journal.stream_summary(path, "s1", "r1")
        return
    streamed = journal.stream_summary(path, "s1", "r1")
    assert streamed.summary == journal.run_summary("s1", "r1", parsed.events)
    assert streamed.malformed == len(parsed.malformed)
    assert streamed.first_malformed == (parsed.malformed[0]["line"] if parsed.malformed else None)


def test_a_streamed_journal_stops_at_a_line_too_long(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(journal, "BLOCK_BYTES", 64)  # the line spans pieces
    path = tmp_path / "r1.jsonl"
    path.write_bytes(_event_line(1) + b"x" * 5000 + b"\n")
    assert journal.stream_summary(path, "s1", "r1", max_line=10_000).malformed == 1
    with pytest.raises(journal.JournalTooLarge, match="too large to load safely"):
        journal.stream_summary(path, "s1", "r1", max_line=1000)


def test_the_quick_look_never_opens_a_fifo(tmp_path: Path) -> None:
    """The next hole of the same kind: the window's first, quick look at a sessions folder opened
    every ``*.json`` without O_NONBLOCK, so a FIFO named like a sidecar hung it."""
    d, _ = demo(tmp_path / "home")
    os.mkfifo(d.session_dir / "fifo01.json")
    code = (
        "import sys; from pathlib import Path; from inspector.quickscan import quick_rows; "
        "rows = quick_rows(Path(sys.argv[1])); print('fifo01' in {r.session_id for r in rows})"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(d.session_dir)], capture_output=True, timeout=60, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-400:]
    assert proc.stdout.strip() == b"True"  # listed (a blocked open is a TimeoutExpired)


def _huge(d) -> None:
    """A 2 GB sidecar, a 2 GB .bak and a 500 MB one-line journal, all sparse (no disk used)."""
    with open(d.session_dir / "huge01.json", "wb") as fh:
        fh.truncate(2 << 30)
    bak = d.session_dir / f"{d.sessions['shrunken']}.json.bak"
    with open(bak, "r+b") as fh:
        fh.truncate(2 << 30)
    journal = next((d.session_dir / "_run_journal" / d.sessions["lost_response"]).glob("*.jsonl"))
    with open(journal, "r+b") as fh:
        fh.truncate(500 << 20)


def test_huge_files_are_named_too_large_and_memory_stays_bounded(tmp_path: Path) -> None:
    d, _ = demo(tmp_path / "home")
    _huge(d)
    said, peak = "", 0
    for argv in _commands(d):
        proc, rss = _cli_rss(*argv, timeout=60)
        peak = max(peak, rss)
        assert rss < 500, f"{' '.join(argv[:2])} used {rss} MB"
        said += proc.stdout.decode(errors="replace")
    assert "too large to load safely (2.0 GB" in said
    assert "too large to load safely (500.0 MB" in said
    assert said.count("REFUSED") >= 2  # the index rebuild and the restore need a file they could not load


# ---------------------------------------------------------------- class 6: links that leave the home


@pytest.fixture
def private_state(tmp_path: Path, monkeypatch) -> Path:
    """The write log and backups in a folder of the test's own."""
    state = tmp_path / "inspector-state"
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(state))
    return state


def _restore(d, *extra: str) -> tuple[int, str]:
    code, out, err = run_cli(
        "repair",
        d.sessions["shrunken"],
        "--action",
        "restore-backup",
        "--home",
        str(d.home),
        "--now",
        str(CLOCK.now),
        "--server-started-at",
        str(CLOCK.server_started_at),
        *extra,
    )
    assert "Traceback" not in err, err
    return code, out


def test_a_linked_sessions_folder_is_shown_and_written_only_with_follow_links(
    tmp_path: Path, private_state: Path
) -> None:
    d, _ = demo(tmp_path / "home")
    elsewhere = tmp_path / "elsewhere"
    d.session_dir.rename(elsewhere)
    d.session_dir.symlink_to(elsewhere, target_is_directory=True)
    live = f"{d.sessions['shrunken']}.json"
    before = tree_state(elsewhere)
    code, out = _restore(d, "--write")
    assert code == 1 and "REFUSED" in out and "--follow-links" in out
    assert f"writes {elsewhere / live}" in out  # the preview names the real target
    assert tree_state(elsewhere) == before
    assert "is really " + str(elsewhere) in run_cli("list", "--home", str(d.home))[1]
    code, out = _restore(d, "--write", "--follow-links")
    assert code == 0 and f"writes {elsewhere / live}" in out and "Written" in out
    assert (elsewhere / live).read_bytes() == (elsewhere / f"{live}.bak").read_bytes()


def test_a_bak_linked_to_a_private_file_outside_the_home_is_not_copied(
    tmp_path: Path, private_state: Path
) -> None:
    d, _ = demo(tmp_path / "home")
    secret = tmp_path / "private" / "secret.json"
    secret.parent.mkdir()
    bak = d.session_dir / f"{d.sessions['shrunken']}.json.bak"
    secret.write_bytes(bak.read_bytes().replace(b"systemd", b"SECRET-systemd"))
    secret.chmod(0o600)
    bak.unlink()
    bak.symlink_to(secret)
    before = tree_state(d.home)
    code, out = _restore(d, "--write")
    assert code == 1 and "REFUSED" in out and f"reads {secret}" in out
    assert tree_state(d.home) == before
    shown = run_cli("show", d.sessions["shrunken"], "--home", str(d.home))[1]
    assert f"{bak} -> {secret}" in shown  # the link shown as what it is


def test_state_dir_from_the_homes_own_env_file_outside_the_home_needs_follow_links(
    tmp_path: Path, private_state: Path
) -> None:
    d, _ = demo(tmp_path / "home")
    elsewhere = tmp_path / "elsewhere-state"
    (d.home / "webui").rename(elsewhere)
    (d.home / "webui.ctl.env").write_text(f"export STATE_DIR='{elsewhere}'\n")
    home = locate_home(d.home, env={})
    assert home.state_dir == elsewhere and home.state_dir_from == "webui.ctl.env"
    before = tree_state(elsewhere)
    code, out = _restore(d, "--write")
    assert code == 1 and "REFUSED" in out and "--follow-links" in out
    assert tree_state(elsewhere) == before
    # the same folder named by the user (--state-dir) is trusted
    code, out = _restore(d, "--state-dir", str(elsewhere))
    assert "REFUSED" not in out and "outside the home" not in out


def test_a_link_swapped_in_after_the_preview_is_refused_at_write_time(tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    (plan,) = plan_action(make_context(home, CLOCK), "restore-backup", d.sessions["shrunken"])
    assert plan.changes and not plan.refusal and LINKS_KEY not in plan.result
    elsewhere = tmp_path / "elsewhere"
    d.session_dir.rename(elsewhere)
    d.session_dir.symlink_to(elsewhere, target_is_directory=True)
    assert "--follow-links" in recheck_before_write(plan, home, follow_links=False)
    assert "did not name" in recheck_before_write(plan, home, follow_links=True)
