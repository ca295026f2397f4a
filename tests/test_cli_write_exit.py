"""How a write command's output is written and its process ends (``cli.run``): once the command has returned, every file,
fsync and write-log line is done; the process then runs the ``atexit`` handlers, flushes its output
and leaves without the interpreter's teardown (``cli._leave_after_write``), unless a thread is still
working."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from contextlib import redirect_stdout
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector import cli
from inspector.demo import build_demo_home

NOW = 1_780_000_000.25


def _program(*args: str, state: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HERMES_INSPECTOR_STATE_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args], env=env, capture_output=True, timeout=120
    )


def _script(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, timeout=60, cwd=tmp_path
    )


def test_a_write_through_the_program_is_complete_logged_and_undoable(tmp_path):
    """Rule: ``repair --write`` and ``undo`` run as programs end with their files written, the
    write log's last line of each write "done", the log file holding the write's line, and the
    whole JSON output on stdout (exit status 0)."""
    home = build_demo_home(tmp_path / "home", now=NOW).home
    state = tmp_path / "state"
    sessions = home / "webui" / "sessions"
    before = {p.name: p.read_bytes() for p in sessions.iterdir() if p.is_file()}
    proc = _program(
        "repair", "--home", str(home), "--action", "materialize", "--all", "--write", "--json",
        "--now", str(NOW), state=state,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    (written,) = out["written"]
    write_id = written["write_id"]
    for f in written["files"]:
        assert Path(f["path"]).read_bytes() != before.get(Path(f["path"]).name)
    entries = [json.loads(line) for line in (state / "writes.jsonl").read_text().splitlines()]
    assert (entries[-1]["write_id"], entries[-1]["state"]) == (write_id, "done")
    assert f"written as {write_id}" in (state / "logs" / "inspector.log").read_text()
    proc = _program("--home", str(home), "undo", write_id, state=state)
    assert proc.returncode == 0, proc.stderr
    assert {p.name: p.read_bytes() for p in sessions.iterdir() if p.is_file()} == before
    entries = [json.loads(line) for line in (state / "writes.jsonl").read_text().splitlines()]
    assert entries[-1]["state"] == "done" and entries[-1]["write_id"] != write_id


def test_the_quick_exit_runs_the_atexit_handlers_and_flushes_the_output(tmp_path):
    """Rule: leaving after a write runs every ``atexit`` handler (here one writing a file), sends
    what is still buffered on stdout, and ends with the command's exit status."""
    proc = _script(
        """
        import atexit, sys
        from inspector import cli
        atexit.register(lambda: open("handler-ran", "w").write("yes"))
        sys.stdout.write("x" * 200_000)  # more than stdout's buffer holds, the rest still buffered
        sys.stdout.write("end")
        cli._leave_after_write(3)
        open("after", "w").write("not reached")
        """,
        tmp_path,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == b"x" * 200_000 + b"end"
    assert (tmp_path / "handler-ran").read_text() == "yes"
    assert not (tmp_path / "after").exists()


def test_a_thread_still_working_gets_the_normal_exit(tmp_path):
    """Rule: while a thread that is not a daemon is still working, the process exits the normal
    way, which waits for it: its file is written before the process ends."""
    proc = _script(
        """
        import threading, time
        from inspector import cli
        def late():
            time.sleep(0.3)
            open("late", "w").write("done")
        threading.Thread(target=late).start()
        cli._leave_after_write(0)
        """,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "late").read_text() == "done"


def test_only_the_commands_that_write_take_the_quick_exit_after_writing():
    """Rule: ``repair``, ``undo`` and ``apply-kit`` leave quickly after writing; ``bundle`` and
    ``crosscheck`` (a temporary copy, hermes in a child) and the window exit the normal way."""
    assert cli.WRITE_COMMANDS == {"repair", "undo", "apply-kit"}
    assert not cli.WRITE_COMMANDS & cli.READ_ONLY_COMMANDS
    assert cli.WRITE_COMMANDS <= set(cli.COMMANDS)


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and the infinities too: written as the stdlib writes them
    | st.text(),  # any code point: escaped as \\uXXXX, surrogate pairs beyond the BMP
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150)
@given(value=_json_values)
def test_repair_json_output_is_written_as_print_json_writes_it(value):
    """Rule: ``repair --json`` writes its output piece by piece as the encoder makes it: the very
    text (and newline) ``_print_json`` writes, whatever the values."""
    for obj in (value, {"plans": [value], "path": Path("/a/é"), "t": 1.5e16, "n": [[], {}]}):
        out = io.StringIO()
        with redirect_stdout(out):
            cli._print_json(obj)
        streamed = io.StringIO()
        with redirect_stdout(streamed):
            cli._print_json_streamed(obj)
        assert streamed.getvalue() == out.getvalue()


class _CountingOut(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []

    def write(self, s: str) -> int:
        self.writes.append(len(s))
        return super().write(s)


def test_repair_json_output_goes_out_in_few_large_writes():
    """Rule: the encoder's pieces are joined into writes of at least ``JSON_OUT_CHUNK`` characters
    (the last one the rest, with the newline), not one write per piece: with ``PYTHONUNBUFFERED``
    each write of the text stream is a system call. The text is still ``_print_json``'s."""
    obj = {"plans": [{"diff": "+line é\n" * 50, "n": i, "x": [1.5, None, True]} for i in range(2000)]}
    out = io.StringIO()
    with redirect_stdout(out):
        cli._print_json(obj)
    counted = _CountingOut()
    with redirect_stdout(counted):
        cli._print_json_streamed(obj)
    text = counted.getvalue()
    assert text == out.getvalue()
    assert len(text) > 20 * cli.JSON_OUT_CHUNK
    assert len(counted.writes) <= len(text) // cli.JSON_OUT_CHUNK + 1
    assert all(n >= cli.JSON_OUT_CHUNK for n in counted.writes[:-1])
    assert text.endswith("}\n")
    small = _CountingOut()
    with redirect_stdout(small):
        cli._print_json_streamed([1, "a"])
    assert small.writes == [len('[\n  1,\n  "a"\n]\n')]
