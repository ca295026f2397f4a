"""The program as started from a shell (``python -m inspector``, the ``hermes-inspector`` script):
``cli.run``, which ends a read-only command's process as soon as its output is flushed."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from inspector import cli
from inspector.demo import build_demo_home

NOW = 1_780_000_000.25


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return build_demo_home(tmp_path_factory.mktemp("demo") / "home", now=NOW).home


@pytest.fixture(scope="module")
def big_home(tmp_path_factory) -> Path:
    """The demo plus 600 small chats: a listing far larger than a pipe's 64 KB buffer."""
    base = build_demo_home(tmp_path_factory.mktemp("big") / "home", now=NOW).home
    sessions = base / "webui" / "sessions"
    for i in range(600):
        sid = f"bulk{i:05d}"
        chat = {
            "session_id": sid,
            "title": f"Chat number {i}",
            "created_at": NOW - i,
            "updated_at": NOW - i,
            "messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
        }
        (sessions / f"{sid}.json").write_bytes(json.dumps(chat, ensure_ascii=False, indent=2).encode("utf-8"))
    return base


def _program(*args: str, state: Path, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "HERMES_INSPECTOR_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "inspector", *args], env=env, capture_output=True, **kw)


def _mask_ages(text: str) -> str:
    return re.sub(r"\d+ min old", "N min old", text)


def test_the_program_prints_what_main_prints(home, tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["audit", "--home", str(home), "--json"]) == 0
    proc = _program("audit", "--home", str(home), "--json", state=tmp_path / "state")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    assert _mask_ages(proc.stdout.decode("utf-8")) == _mask_ages(out.getvalue())
    assert json.loads(proc.stdout)["inspector"]["sessions"] > 0


def test_the_whole_output_arrives_through_a_pipe(big_home, tmp_path):
    """Output far larger than a pipe's buffer, read slowly: nothing is cut off by the quick exit."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "list", "--home", str(big_home), "--json"],
        env={**os.environ, "HERMES_INSPECTOR_STATE_DIR": str(tmp_path / "state")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    chunks = []
    while chunk := proc.stdout.read(1024):
        chunks.append(chunk)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    assert sum(map(len, chunks)) > 256 * 1024
    listing = json.loads(b"".join(chunks))
    assert len(listing["sessions"]) == 600 + 12  # the bulk chats and the demo home's 12 sessions


def test_a_reader_that_goes_away_is_not_an_error(big_home, tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "list", "--home", str(big_home), "--json"],
        env={**os.environ, "HERMES_INSPECTOR_STATE_DIR": str(tmp_path / "state")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.read(10)
    proc.stdout.close()  # `| head -c 10`
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""  # no traceback, no "Exception ignored" at exit


def test_errors_keep_their_exit_code_and_message(tmp_path):
    proc = _program("audit", "--home", str(tmp_path / "nowhere"), state=tmp_path / "state")
    assert proc.returncode == 2
    assert proc.stderr.startswith(b"hermes-inspector: ")
    assert proc.stdout == b""


def test_only_commands_that_read_take_the_quick_exit():
    assert {"audit", "list", "show", "journal", "search", "history"} == cli.READ_ONLY_COMMANDS
    # crosscheck runs hermes in a child and keeps a temporary copy: it, too, ends the normal way
    writers = {"repair", "undo", "bundle", "apply-kit", "crosscheck"}
    assert not cli.READ_ONLY_COMMANDS & writers  # writers close and log the normal way
    assert set(cli.COMMANDS) == cli.READ_ONLY_COMMANDS | writers  # a new command is classified
