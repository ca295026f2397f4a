"""The default Hermes home on each system, as hermes-webui finds it (``api/paths.py:
_platform_default_hermes_home``), the inspector's own folders from ``platformdirs``, and the
running server's facts through ``psutil``. Run on Linux with the system and the environment given
explicitly; the hermes comparison runs hermes' own function in a child process when
``HERMES_WEBUI_SRC`` names a checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector import portable, statedir
from inspector.home import default_hermes_home, hermes_cwd, locate_home, webui_started_at
from inspector.store import scan

WIN, MAC, LINUX = portable.WINDOWS, portable.MACOS, portable.LINUX


def _webui_state(base: Path, what: str = "sessions") -> Path:
    """Give ``base`` the WebUI state hermes looks for (``webui/sessions``, ``webui/settings.json``, ``webui``)."""
    if what == "sessions":
        (base / "webui" / "sessions").mkdir(parents=True)
    elif what == "settings":
        (base / "webui").mkdir(parents=True)
        (base / "webui" / "settings.json").write_text("{}")
    else:
        (base / "webui").mkdir(parents=True)
    return base


@pytest.fixture
def win(tmp_path: Path):
    profile, local = tmp_path / "Users" / "ann", tmp_path / "Users" / "ann" / "AppData" / "Local"
    profile.mkdir(parents=True)
    local.mkdir(parents=True)
    return profile, local, {"USERPROFILE": str(profile), "LOCALAPPDATA": str(local)}


def test_windows_default_home_is_localappdata_hermes(win) -> None:
    """Rule (hermes v0.51.134+): on Windows the default home is %LOCALAPPDATA%\\hermes."""
    profile, local, env = win
    assert default_hermes_home(WIN, env) == local / "hermes"


@pytest.mark.parametrize("what", ["sessions", "settings", "folder"])
def test_windows_keeps_a_populated_legacy_home_while_the_new_one_is_not_established(win, what) -> None:
    """Rule (hermes #2905): %USERPROFILE%\\.hermes with WebUI state wins over an empty %LOCALAPPDATA%\\hermes."""
    profile, local, env = win
    _webui_state(profile / ".hermes", what)
    assert default_hermes_home(WIN, env) == profile / ".hermes"
    (local / "hermes").mkdir()  # an agent-only new home (no webui/) is not established yet
    (local / "hermes" / "config.yaml").write_text("model: x\n")
    assert default_hermes_home(WIN, env) == profile / ".hermes"


def test_windows_prefers_the_new_home_once_it_holds_webui_state(win) -> None:
    profile, local, env = win
    _webui_state(profile / ".hermes")
    _webui_state(local / "hermes", "settings")
    assert default_hermes_home(WIN, env) == local / "hermes"


def test_windows_legacy_home_with_only_agent_files_is_not_used(win) -> None:
    """Rule: only WebUI-owned state (webui/) marks the legacy home, never the agent's auth.json/config.yaml."""
    profile, local, env = win
    (profile / ".hermes").mkdir()
    (profile / ".hermes" / "auth.json").write_text("{}")
    (profile / ".hermes" / "config.yaml").write_text("")
    assert default_hermes_home(WIN, env) == local / "hermes"


def test_windows_without_localappdata_falls_back_to_the_profile_dot_hermes(win) -> None:
    profile, _, env = win
    for value in (None, "", "   "):
        e = {"USERPROFILE": env["USERPROFILE"]} | ({} if value is None else {"LOCALAPPDATA": value})
        assert default_hermes_home(WIN, e) == profile / ".hermes"
    # Path.home() on Windows: USERPROFILE, else HOMEDRIVE + HOMEPATH
    assert default_hermes_home(WIN, {"HOMEDRIVE": "", "HOMEPATH": str(profile)}) == profile / ".hermes"


@pytest.mark.parametrize("system", [MAC, LINUX, portable.OTHER])
def test_macos_and_linux_default_home_is_dot_hermes_whatever_localappdata_says(win, system) -> None:
    profile, local, env = win
    _webui_state(local / "hermes")
    assert default_hermes_home(system, env, user_home=profile) == profile / ".hermes"


def test_hermes_home_overrides_the_platform_default_on_windows_too(win, tmp_path: Path) -> None:
    """Rule: HERMES_HOME, then HERMES_WEBUI_STATE_DIR, are used as they are on every system."""
    profile, local, env = win
    home = locate_home(env=env, system=WIN)
    assert home.base == local / "hermes" and home.session_dir == local / "hermes" / "webui" / "sessions"
    home = locate_home(env=env | {"HERMES_HOME": str(tmp_path / "h")}, system=WIN)
    assert home.base == tmp_path / "h"
    home = locate_home(env=env | {"HERMES_WEBUI_STATE_DIR": str(tmp_path / "s")}, system=WIN)
    assert home.base == local / "hermes" and home.state_dir == tmp_path / "s"


HERMES_SRC = os.environ.get("HERMES_WEBUI_SRC")
_HERMES_CHILD = r"""
import json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import api.paths as paths
class WindowsOs:  # hermes asks os.name; everything else is the real os
    name = "nt"
    def __getattr__(self, attr):
        return getattr(os, attr)
paths.os = WindowsOs()
paths.HOME = Path(sys.argv[2])
print(json.dumps(str(paths._platform_default_hermes_home())))
"""


@pytest.mark.skipif(not HERMES_SRC, reason="HERMES_WEBUI_SRC is not set (a hermes-webui checkout)")
@pytest.mark.parametrize("layout", ["nothing", "legacy", "both", "new", "agent-only-legacy"])
def test_windows_rule_matches_hermes_own_function(win, layout) -> None:
    profile, local, env = win
    if layout in ("legacy", "both"):
        _webui_state(profile / ".hermes")
    if layout in ("both", "new"):
        _webui_state(local / "hermes", "settings")
    if layout == "agent-only-legacy":
        (profile / ".hermes").mkdir()
        (profile / ".hermes" / "auth.json").write_text("{}")
    out = subprocess.run(
        [sys.executable, "-c", _HERMES_CHILD, HERMES_SRC, str(profile)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LOCALAPPDATA": str(local)},
        check=True,
    )
    assert Path(json.loads(out.stdout)) == default_hermes_home(WIN, env)


# ---------------------------------------------------------------- the inspector's own folders


def test_state_and_cache_folders_keep_the_override_and_the_xdg_variables(tmp_path: Path, monkeypatch) -> None:
    """Rule: HERMES_INSPECTOR_STATE_DIR first; on Linux $XDG_STATE_HOME / $XDG_CACHE_HOME as before."""
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "mine"))
    assert statedir.state_folder() == (tmp_path / "mine", True)
    assert scan.cache_dir() == tmp_path / "mine" / "cache"
    monkeypatch.delenv("HERMES_INSPECTOR_STATE_DIR")
    if portable.FORCED:
        monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
        assert statedir.state_folder() == (tmp_path / "Local" / "hermes-inspector", True)
        assert scan.cache_dir() == tmp_path / "Local" / "hermes-inspector" / "Cache"
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("the XDG rule is Linux's")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert statedir.state_folder() == (tmp_path / "state" / "hermes-inspector", True)
    assert scan.cache_dir() == tmp_path / "cache" / "hermes-inspector"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "u"))
    assert statedir.state_folder() == (tmp_path / "u" / ".local" / "state" / "hermes-inspector", True)
    assert scan.cache_dir() == tmp_path / "u" / ".cache" / "hermes-inspector"
    assert not (tmp_path / "u").exists(), "finding the folders made one"


# ---------------------------------------------------------------- the running server, through psutil


def test_a_running_servers_start_time_and_working_directory_come_from_the_system(tmp_path: Path) -> None:
    """Rule: the clock's server start and hermes' cwd are the live process's (psutil), on any system."""
    cwd = tmp_path / "server-cwd"
    cwd.mkdir()
    before = time.time()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], cwd=cwd)
    try:
        (tmp_path / "webui.pid").write_text(f"{proc.pid}\n")
        home = locate_home(tmp_path, env={})
        started = webui_started_at(home)
        assert started is not None and before - 2 <= started <= time.time() + 1
        assert hermes_cwd(home).resolve() == cwd.resolve()
        facts = portable.process_facts(proc.pid)
        assert facts.cmdline[1:] == ("-c", "import time; time.sleep(60)")
        assert Path(facts.exe).resolve() == Path(sys.executable).resolve()
    finally:
        proc.kill()
        proc.wait()
    assert webui_started_at(home) is None and hermes_cwd(home) == tmp_path  # gone: the home stands in


def test_no_such_process_has_no_facts() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert portable.process_facts(proc.pid) is None and not portable.pid_alive(proc.pid)
