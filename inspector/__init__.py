"""Hermes Session Inspector: read, audit and safely repair Hermes WebUI sessions.

The version has one home, ``pyproject.toml``: :func:`version` asks the installed package's
metadata (``importlib.metadata``) and, in a source tree that was never installed, reads
``pyproject.toml`` itself. ``inspector.__version__`` works too; both are worked out on first use
(``importlib.metadata`` costs milliseconds every command would pay at start-up).
"""

from __future__ import annotations

DISTRIBUTION = "hermes-session-inspector"
UNKNOWN_VERSION = "0+unknown"


def version() -> str:
    """The version of this installed package, else the one its source tree's ``pyproject.toml`` says."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(DISTRIBUTION)
    except PackageNotFoundError:
        return source_tree_version()


def source_tree_version(pyproject=None) -> str:
    """``[project] version`` of the ``pyproject.toml`` beside this package (a source checkout)."""
    import tomllib
    from pathlib import Path

    path = (
        Path(pyproject)
        if pyproject is not None
        else Path(__file__).resolve().parent.parent / "pyproject.toml"
    )
    try:
        with open(path, "rb") as fh:
            project = tomllib.load(fh).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return UNKNOWN_VERSION
    if project.get("name") != DISTRIBUTION or not isinstance(project.get("version"), str):
        return UNKNOWN_VERSION
    return project["version"]


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'inspector' has no attribute {name!r}")
