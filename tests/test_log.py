"""Logging: a rotating, private log file in the state folder, made only when something is logged;
``--debug`` on stderr; the read-only commands do not even import ``logging``."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector import cli, log
from inspector.plan import WriteLog


@pytest.fixture(autouse=True)
def _no_leftover_handlers():
    yield
    log.teardown()


def test_the_log_lives_in_the_write_logs_state_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    assert log.state_folder() == WriteLog.default().root
    monkeypatch.delenv("HERMES_INSPECTOR_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert log.state_folder() == WriteLog.default().root == tmp_path / "xdg" / "hermes-inspector"
    assert log.log_path() == tmp_path / "xdg" / "hermes-inspector" / "logs" / "inspector.log"


def test_nothing_is_made_until_a_record_is_logged_then_folder_0700_file_0600(tmp_path) -> None:
    path = log.setup(path=tmp_path / "state" / "logs" / "inspector.log")
    assert not (tmp_path / "state").exists(), "setting up must not write"
    log.get_logger("test").debug("below the file's level")
    assert not path.exists()
    log.get_logger("test").info("session %s opened", "abc")
    logging.getLogger("inspector").handlers[-1].flush()
    assert "inspector.test" in path.read_text() and "session abc opened" in path.read_text()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_file_rotates_and_keeps_a_few_old_ones(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(log, "MAX_BYTES", 2_000)
    path = log.setup(path=tmp_path / "logs" / "inspector.log")
    logger = log.get_logger("rotation")
    for i in range(200):
        logger.info("line %03d %s", i, "x" * 60)
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == ["inspector.log", *(f"inspector.log.{n}" for n in range(1, log.BACKUPS + 1))]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in path.parent.iterdir())
    assert "line 199" in path.read_text()


def test_a_log_file_that_cannot_be_made_is_said_once_and_nothing_breaks(tmp_path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    log.setup(path=blocker / "logs" / "inspector.log")
    log.get_logger("x").warning("one")
    log.get_logger("x").warning("two")
    err = capsys.readouterr().err
    assert err.count("cannot write the log file") == 1


def test_library_records_without_setup_go_nowhere(capsys) -> None:
    log.get_logger("quiet").warning("no handler set up")
    assert capsys.readouterr().err == ""


def _demo_home(tmp_path: Path) -> Path:
    from inspector.demo import build_demo_home

    return build_demo_home(tmp_path / "home", now=time.time()).home


def test_debug_logs_to_stderr_and_the_file(tmp_path, capsys, monkeypatch) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(state))
    log.get_logger("probe")  # a logger made before setup is routed too
    assert cli.main(["--debug", "history"]) == 0  # before the command
    log.get_logger("probe").debug("a debug record")
    err = capsys.readouterr().err
    assert "DEBUG inspector.probe: a debug record" in err
    log.teardown()
    assert cli.main(["history", "--debug"]) == 0  # or after it
    log.get_logger("probe").debug("after a subcommand's --debug")
    assert "after a subcommand's --debug" in capsys.readouterr().err
    log.teardown()
    assert cli.main(["history"]) == 0  # a read-only command without --debug sets up nothing
    log.get_logger("probe").warning("nowhere")
    assert capsys.readouterr().err == "" and not log.is_set_up()
    for handler in logging.getLogger("inspector").handlers:
        handler.flush()
    assert "a debug record" in (state / "logs" / "inspector.log").read_text()


def test_an_unexpected_error_is_logged_with_its_traceback(tmp_path, monkeypatch) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(state))

    def broken(args):
        raise RuntimeError("a bug in a command")

    monkeypatch.setitem(cli.COMMANDS, "history", broken)
    with pytest.raises(RuntimeError):
        cli.main(["history"])
    for handler in logging.getLogger("inspector").handlers:
        handler.flush()
    text = (state / "logs" / "inspector.log").read_text()
    assert "hermes-inspector history failed" in text and "Traceback" in text and "a bug in a command" in text


def test_a_written_repair_is_logged(tmp_path, monkeypatch) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(state))
    home = _demo_home(tmp_path)
    assert (
        cli.main(["repair", "--all", "--action", "rebuild-index", "--home", str(home), "--write", "--json"])
        == 0
    )
    for handler in logging.getLogger("inspector").handlers:
        handler.flush()
    text = (state / "logs" / "inspector.log").read_text()
    (write_id,) = {json.loads(line)["write_id"] for line in (state / "writes.jsonl").read_text().splitlines()}
    assert f"rebuild-index of the home written as {write_id}" in text


def test_a_read_only_command_does_not_import_logging(tmp_path) -> None:
    """Start-up of `audit`, `list`, ... is unchanged: logging is set up only with --debug."""
    home = _demo_home(tmp_path)
    probe = (
        "import sys, io, contextlib; from inspector import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()): code = cli.main(sys.argv[1:])\n"
        "print(code, 'logging' in sys.modules)"
    )
    env = {**os.environ, "HERMES_INSPECTOR_STATE_DIR": str(tmp_path / "state")}
    out = subprocess.run(
        [sys.executable, "-c", probe, "audit", "--json", "--home", str(home)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout.split()
    assert out == ["0", "False"]
    # nothing but the fact cache, which the audit writes once the home's files are older than the
    # cache's racy window (2 s: on a loaded machine the demo home is, by the time the audit reads it)
    state = tmp_path / "state"
    written = sorted(p.relative_to(state).as_posix() for p in state.rglob("*")) if state.exists() else []
    assert [p for p in written if p != "cache" and not p.startswith("cache/scan-")] == [], written


def test_the_log_file_is_never_made_inside_an_open_home(tmp_path, monkeypatch, capsys) -> None:
    """A state folder that resolves inside the Hermes home gets no log file (the write log refuses it too)."""
    from inspector import statedir

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr(statedir, "_kept_out", [])
    statedir.keep_out_of(home)
    target = home / "webui" / "state" / "logs" / "inspector.log"
    handler = log.LazyRotatingFile(target)
    handler.emit(logging.LogRecord("inspector.x", logging.ERROR, __file__, 1, "boom", (), None))
    assert not (home / "webui").exists()
    assert "not writing the log file" in capsys.readouterr().err
