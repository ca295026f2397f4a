"""Hostile files on the read side (issue 14, classes 3, 4, 5, 6 and 8).

* A hostile ``state.db`` never hangs a command: a ``sessions``/``messages`` that is a view (an
  endless recursive query) or has computed columns is a finding, every query stops at a
  deadline and no value may exceed a size limit.
* No text in any file crashes any output: a lone surrogate in a title is shown escaped by
  ``list``/``show``, text or ``--json``, whatever the terminal's encoding, and exported.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from inspector.export import transcript_json_bytes, transcript_markdown
from inspector.session_detail import load_detail
from inspector.store import statedb
from tests.safety.helpers import demo

REPO = Path(__file__).resolve().parents[2]


def _cli(*argv: str, env: dict | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """The installed command line in a child process (a real stdout with a real encoding)."""
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("HERMES_INSPECTOR_NO_CACHE", "1")
    return subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, timeout=timeout,
                          env=full_env, cwd=REPO)


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
    for env in ({"PYTHONIOENCODING": "utf-8"}, {"PYTHONIOENCODING": "ascii", "LC_ALL": "C"},
                {"PYTHONIOENCODING": "latin-1"}):
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
}


@pytest.mark.parametrize("schema", sorted(HOSTILE_SCHEMAS))
def test_a_hostile_state_db_is_a_finding_and_no_command_hangs(tmp_path: Path, schema: str) -> None:
    d, home = demo(tmp_path / "home")
    with closing(sqlite3.connect(d.state_db)) as con:
        con.executescript(HOSTILE_SCHEMAS[schema])
    h = ("--home", str(d.home))
    state_only = d.sessions["state_only"]
    said = []
    for argv in (("list", *h), ("audit", *h), ("show", state_only, *h),
                 ("repair", "--all", "--action", "materialize", *h),
                 ("repair", state_only, "--action", "materialize", *h)):
        proc = _cli(*argv, timeout=30)  # a hang is a TimeoutExpired
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
