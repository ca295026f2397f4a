"""Packaging habits: the version in one place, the desktop entry and its icon, the systems the
classifiers claim, ruff's unused-noqa rule."""

from __future__ import annotations

import configparser
import subprocess
import sys
import tomllib
from pathlib import Path

import inspector
from inspector import cli

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DESKTOP = ROOT / "resources" / "hermes-session-inspector.desktop"


def test_the_version_comes_from_pyproject_only() -> None:
    assert inspector.version() == PYPROJECT["project"]["version"]
    assert inspector.__version__ == inspector.version()
    assert inspector.source_tree_version() == PYPROJECT["project"]["version"]
    init = (ROOT / "inspector" / "__init__.py").read_text(encoding="utf-8")
    assert PYPROJECT["project"]["version"] not in init, "the version is written in a second place"


def test_an_uninstalled_source_tree_reads_pyproject(monkeypatch) -> None:
    import importlib.metadata as md

    def not_installed(name):
        raise md.PackageNotFoundError(name)

    monkeypatch.setattr(md, "version", not_installed)
    assert inspector.version() == PYPROJECT["project"]["version"]


def test_a_missing_or_foreign_pyproject_gives_an_unknown_version(tmp_path) -> None:
    assert inspector.source_tree_version(tmp_path / "absent.toml") == inspector.UNKNOWN_VERSION
    other = tmp_path / "pyproject.toml"
    other.write_text('[project]\nname = "something-else"\nversion = "9.9"\n')
    assert inspector.source_tree_version(other) == inspector.UNKNOWN_VERSION
    other.write_text("not [toml")
    assert inspector.source_tree_version(other) == inspector.UNKNOWN_VERSION


def test_version_on_stdout_and_no_metadata_lookup_at_start_up(capsys) -> None:
    try:
        cli.main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out == f"hermes-inspector {PYPROJECT['project']['version']}\n"
    probe = "import sys, inspector.cli; print('importlib.metadata' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_desktop_entry_starts_the_program_with_its_icon() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # keys are case-sensitive
    entry.read(DESKTOP, encoding="utf-8")
    e = entry["Desktop Entry"]
    assert e["Type"] == "Application" and e["Terminal"] == "false"
    assert e["Exec"] in PYPROJECT["project"]["scripts"], "Exec must be the installed command"
    assert e["Icon"] == DESKTOP.stem  # the name README installs resources/icons/app.svg under
    assert e["Categories"].endswith(";") and e["Name"] == "Hermes Session Inspector"
    assert (ROOT / "resources" / "icons" / "app.svg").is_file()
    assert "*.desktop" in PYPROJECT["tool"]["setuptools"]["package-data"]["inspector.resources"]
    from inspector.gui.app import DESKTOP_FILE

    assert DESKTOP_FILE == DESKTOP.stem


def test_the_classifiers_name_the_three_systems_and_the_dependencies_have_wheels_for_each() -> None:
    """Rule: Linux, macOS and Windows are named (each has its paths in inspector/portable.py), never
    "OS Independent"; what runs there comes from packages with wheels for all three."""
    classifiers = PYPROJECT["project"]["classifiers"]
    for system in (
        "Operating System :: POSIX :: Linux",
        "Operating System :: MacOS",
        "Operating System :: Microsoft :: Windows",
    ):
        assert system in classifiers
    assert not any("OS Independent" in c for c in classifiers)
    names = {
        d.split(">")[0].split("<")[0].split(";")[0].strip() for d in PYPROJECT["project"]["dependencies"]
    }
    assert names == {"PySide6-Essentials", "orjson", "msgspec", "platformdirs", "psutil"}
    minor = int(PYPROJECT["project"]["requires-python"].removeprefix(">=3."))
    assert f"Programming Language :: Python :: 3.{minor}" in classifiers


def test_ruff_reports_unused_noqa_comments() -> None:
    assert "RUF100" in PYPROJECT["tool"]["ruff"]["lint"]["select"]


def test_every_package_of_the_source_tree_is_installed() -> None:
    """setuptools installs only the packages pyproject lists: a new package left out works in an editable
    checkout and is missing from `pip install .`."""
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "inspector").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert on_disk - {"inspector.resources"} <= listed, sorted(on_disk - listed)
    assert "inspector.resources" in listed


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "inspector", "tests", "bench"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_tree_is_ruff_clean_and_ruff_formatted() -> None:
    """`ruff check` and `ruff format --check` over the code, its tests and the benchmark (ruff is pinned in
    the test extra, so a release that formats differently cannot fail this by surprise)."""
    checked = _ruff("check", "--no-cache")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    formatted = _ruff("format", "--check", "--no-cache")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
