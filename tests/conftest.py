"""Shared test helpers: the project's own copy of the golden cases and fixtures."""

from __future__ import annotations

import io
import os
import shutil
import stat
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hypothesis import settings

# Headless by default: a machine with no display gets Qt's offscreen platform (CI sets it too).
if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# `pytest --hypothesis-profile=mutation` (mutmut passes it, pyproject [tool.mutmut]): no deadline, since
# a loaded machine and mutmut's trampolines make a test case slow without making it wrong (a deadline
# would kill a mutant for the load), a fixed seed per test so a mutant's verdict does not depend on the
# draw, no example database written into mutmut's copy of the project, and 25 examples per property
# instead of 100 or the property's own larger number (pytest_collection_modifyitems below; a surviving
# mutant runs every test that reaches it: the property tests were most of that time; a survivor is then
# checked by hand against the full test, tests/MUTATION.md).
settings.register_profile("mutation", deadline=None, derandomize=True, database=None, max_examples=25)
# Every other run has no deadline either: a deadline is a time limit on one example, and speed targets
# live in bench/, never in unit tests (a loaded machine failed tests/store/test_backup.py's property at
# 412 ms against Hypothesis' default 200 ms). A profile chosen on the command line still wins.
settings.register_profile("project", deadline=None)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("hypothesis_profile", None) is None:
        settings.load_profile("project")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under the mutation profile, a property whose own ``@settings`` asks for more examples than the
    profile runs the profile's number: an explicit ``max_examples`` wins over any profile in
    Hypothesis, so 50 properties ran their 150-1,500 examples under mutmut, took longer than the
    fast-first cap (tests/mutation_fast_first.py) and were left out of every mutant's tests, the
    strongest ones among them (ninth session: index_journal's survivors)."""
    if config.getoption("hypothesis_profile", None) != "mutation":
        return
    cap = settings.get_profile("mutation").max_examples
    for item in items:
        fn = getattr(item, "obj", None)
        fn = getattr(fn, "__func__", fn)  # a method's function carries the settings
        own = getattr(fn, "_hypothesis_internal_use_settings", None)
        if isinstance(own, settings) and own.max_examples > cap:
            fn._hypothesis_internal_use_settings = settings(own, max_examples=cap)


DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"
FIXTURES = DATA / "fixtures"


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy bytes unchanged and make the copy writable (the shared files are read-only)."""
    shutil.copytree(src, dst, dirs_exist_ok=True)
    for root, dirs, files in os.walk(dst):
        for name in dirs + files:
            p = Path(root) / name
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return dst


def files_of(root: Path) -> dict[str, bytes]:
    """Every file below ``root``: its ``/``-separated relative path and its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def run_main(args: list[str]) -> tuple[int, str]:
    """``hermes-inspector ARGS`` in-process: (exit code, stdout)."""
    from inspector.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        code = main(args)
    return code, out.getvalue()


@pytest.fixture(autouse=True)
def _private_write_log(tmp_path_factory, monkeypatch):
    """Keep every test's backups and write log out of the real user state dir."""
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path_factory.mktemp("inspector-state")))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.delenv("HERMES_WEBUI_STATE_DIR", raising=False)


@pytest.fixture(autouse=True)
def _no_logging_left_behind():
    """A test that set up the inspector's logging (a command that writes, ``--debug``, an
    unexpected error) tears it down after it, so the next test's command logs to its own state
    folder whatever order the tests run in (mutmut's runs order them otherwise). Logging is not
    imported here when no test has imported it (a read-only command must not import it)."""
    yield
    log = sys.modules.get("inspector.log")
    if log is not None and log.is_set_up():
        log.teardown()


def always_flusher(folder) -> int | None:
    """``fs_flush.open_flusher`` on any file system and machine where ``syncfs`` exists (tests of
    the one-flush way that do not depend on where the test's folder is or on the machine's load)."""
    from inspector import fs_flush

    if not fs_flush.system_can_flush():
        return None
    try:
        return os.open(folder, os.O_RDONLY)
    except OSError:
        return None


@pytest.fixture(params=["one flush", "fsync each"])
def both_ways(request, monkeypatch) -> str:
    """Run a test of the early staging both ways: its small files flushed together, and each fsynced."""
    flusher = always_flusher if request.param == "one flush" else (lambda folder: None)
    from inspector import plan as planmod

    monkeypatch.setattr(planmod.fs_flush, "open_flusher", flusher)
    return request.param
