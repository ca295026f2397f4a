"""Hostile files on the read side (issue 14, classes 3, 4, 5, 6 and 8).

* No text in any file crashes any output: a lone surrogate in a title is shown escaped by
  ``list``/``show``, text or ``--json``, whatever the terminal's encoding, and exported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from inspector.export import transcript_json_bytes, transcript_markdown
from inspector.session_detail import load_detail
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
