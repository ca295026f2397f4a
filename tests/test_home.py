"""Locating a Hermes home as hermes-webui would have been started on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.home import HomeError, check_readable, hermes_cwd, locate_home, webui_pid


def test_explicit_home_wins_over_environment(tmp_path: Path) -> None:
    home = locate_home(tmp_path / "h", env={"HERMES_HOME": "/elsewhere"})
    assert home.base == tmp_path / "h"
    assert home.session_dir == tmp_path / "h" / "webui" / "sessions"


def test_hermes_home_then_default(tmp_path: Path) -> None:
    assert locate_home(env={"HERMES_HOME": str(tmp_path)}).base == tmp_path
    assert locate_home(env={}).base == Path("~/.hermes").expanduser()


def test_state_dir_order_flag_env_ctl_file_default(tmp_path: Path) -> None:
    (tmp_path / "webui.ctl.env").write_text("PORT=8787\nSTATE_DIR=/srv/hermes/state\n")
    assert locate_home(tmp_path, env={}).state_dir == Path("/srv/hermes/state")
    assert locate_home(tmp_path, env={"HERMES_WEBUI_STATE_DIR": "/env/state"}).state_dir == Path("/env/state")
    assert locate_home(
        tmp_path, "/flag/state", env={"HERMES_WEBUI_STATE_DIR": "/env/state"}
    ).state_dir == Path("/flag/state")
    (tmp_path / "webui.ctl.env").unlink()
    assert locate_home(tmp_path, env={}).state_dir == tmp_path / "webui"


def test_profile_home_is_unwrapped_and_profiles_map_to_their_state_db(tmp_path: Path) -> None:
    (tmp_path / "profiles" / "work").mkdir(parents=True)
    (tmp_path / "profiles" / "Bad Name").mkdir(parents=True)
    home = locate_home(tmp_path / "profiles" / "work", env={})
    assert home.base == tmp_path
    assert home.profile_names() == ["default", "work"]
    assert home.state_db(None) == tmp_path / "state.db"
    assert home.state_db("default") == tmp_path / "state.db"
    assert home.state_db("work") == tmp_path / "profiles" / "work" / "state.db"
    assert home.state_db("../evil") == tmp_path / "state.db", "invalid names fall back to the base home"
    assert (
        home.core_transcript("abc", "work")
        == tmp_path / "profiles" / "work" / "sessions" / "session_abc.json"
    )


def test_missing_home_is_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(HomeError, match="does not exist"):
        check_readable(locate_home(tmp_path / "nope", env={}))
    (tmp_path / "file").write_text("x")
    with pytest.raises(HomeError, match="not a folder"):
        check_readable(locate_home(tmp_path / "file", env={}))


def test_running_webui_is_detected_from_its_pid_file(tmp_path: Path) -> None:
    home = locate_home(tmp_path, env={})
    assert webui_pid(home) is None
    (tmp_path / "webui.pid").write_text(str(os.getpid()))
    assert webui_pid(home) == os.getpid()
    assert hermes_cwd(home) == Path(os.getcwd())
    (tmp_path / "webui.pid").write_text("999999999")
    assert webui_pid(home) is None
    assert hermes_cwd(home) == tmp_path
