"""Links that leave the home: where a plan's files really are.

A sessions folder that is a symbolic link, a ``.bak`` linked to a private file elsewhere, or a
``STATE_DIR=`` in the home's own ``webui.ctl.env`` naming another folder all make a repair
read or write somewhere the user did not point the inspector at. Such a plan names the real
target of each of its files in its preview, lists them in ``result["links_leaving_home"]``, and
is refused unless the user says to follow links (``--follow-links`` on the command line, an
explicit confirmation in the window).

The trusted roots are the home itself (wherever it resolves to) and a WebUI state dir the user
named (``--state-dir`` or ``$HERMES_WEBUI_STATE_DIR``). A path leaves the home when it is not
under a trusted root, or when it is but resolves (links followed) outside that root's own
resolved folder. One ``realpath`` per file the plan touched: no cost for a scan.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from inspector.home import Home

LINKS_KEY = "links_leaving_home"
FOLLOW_HINT = "add --follow-links (in the window: confirm following links) to go ahead"


@dataclass(frozen=True)
class LinkExit:
    """A file a plan reads or writes that is really outside the home."""

    path: Path  # as the plan names it
    target: Path  # where it is, every link followed
    written: bool  # the plan writes it (else only reads it)

    def to_json(self) -> dict:
        return {"path": str(self.path), "target": str(self.target), "written": self.written}

    def describe(self) -> str:
        verb = "writes" if self.written else "reads"
        if os.path.normpath(os.path.abspath(self.path)) == str(self.target):
            return f"{verb} {self.target}, outside the home"
        return f"{verb} {self.target}, outside the home (named {self.path}: a symbolic link leads there)"


def trusted_roots(home: Home) -> list[Path]:
    roots = [home.base]
    if home.state_dir_from in ("option", "env"):
        roots.append(home.state_dir)
    return roots


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def leaves_home(home: Home, path: Path, realpath=os.path.realpath) -> Path | None:
    """The real target of ``path`` when it is outside the home, else None (``realpath``: one
    answering as ``os.path.realpath``, e.g. a :class:`RealPaths` shared by many calls)."""
    lexical = os.path.normpath(os.path.abspath(path))
    real = realpath(lexical)
    for root in trusted_roots(home):
        root_lexical = os.path.normpath(os.path.abspath(root))
        if _inside(lexical, root_lexical) and _inside(real, realpath(root_lexical)):
            return None
    return Path(real)


class RealPaths:
    """``os.path.realpath`` of many normalized absolute paths, each folder resolved once.

    realpath walks a path a component at a time, following each symbolic link it meets; so the
    real path of ``folder/name`` is the folder's real path joined with ``name`` whenever ``name``
    is not itself a link (``lstat`` says so; a missing or unreadable name is kept as it is, as
    realpath keeps it), and the whole realpath otherwise. A materialize's thousand new files in
    one folder cost one ``lstat`` each instead of a walk of every component twice."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def __call__(self, lexical: str) -> str:
        folder, name = os.path.split(lexical)
        if not folder or not name or name in (".", ".."):
            return os.path.realpath(lexical)
        try:
            if stat.S_ISLNK(os.lstat(lexical).st_mode):
                return os.path.realpath(lexical)
        except OSError:  # missing (a file to create) or unreadable: realpath keeps the name
            pass
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder)
        return os.path.join(real, name)


def shown(path: Path | str | None) -> str:
    """``path``, followed by `` -> <real target>`` when a link along it leads elsewhere."""
    if path is None:
        return "-"
    lexical = os.path.normpath(os.path.abspath(path))
    real = os.path.realpath(lexical)
    return str(path) if real == lexical else f"{path} -> {real}"


def sessions_folder_finding(home: Home) -> str | None:
    """A sentence when the sessions folder is really outside the home (a link, or ``STATE_DIR=``
    in the home's own ``webui.ctl.env``), else None."""
    target = leaves_home(home, home.session_dir)
    if target is None:
        return None
    how = (
        "STATE_DIR= in the home's webui.ctl.env names it"
        if home.state_dir_from == "webui.ctl.env"
        else "a link leads there"
    )
    return (
        f"the sessions folder {home.session_dir} is really {target}, outside the home ({how}); "
        f"repairs there are refused unless links are followed ({FOLLOW_HINT})"
    )


def link_exits(home: Home, written: Iterable[Path], read: Iterable[Path]) -> list[LinkExit]:
    """Every written and read path that leaves the home (a file both read and written counts as written)."""
    written = list(dict.fromkeys(written))
    out: list[LinkExit] = []
    realpath = RealPaths()
    for path in written:
        target = leaves_home(home, path, realpath)
        if target is not None:
            out.append(LinkExit(path, target, True))
    seen = set(written)
    for path in dict.fromkeys(read):
        if path in seen:
            continue
        target = leaves_home(home, path, realpath)
        if target is not None:
            out.append(LinkExit(path, target, False))
    return out


def guard_plan(plan, home: Home, read: Iterable[Path], follow_links: bool) -> list[LinkExit]:
    """Name the real target of every file of ``plan`` outside the home (a warning each, and
    ``result["links_leaving_home"]``), and refuse the plan when it would write or copy through
    such a link and links are not to be followed. Returns the exits found."""
    exits = link_exits(home, [c.path for c in plan.changes], read)
    if not exits:
        return exits
    plan.result[LINKS_KEY] = [e.to_json() for e in exits]
    plan.warnings.extend(e.describe() for e in exits)
    if not follow_links and plan.changes and not plan.refusal:
        first = exits[0]
        plan.refusal = (
            f"this repair {first.describe()}"
            + (f" and {len(exits) - 1} more" if len(exits) > 1 else "")
            + f"; {FOLLOW_HINT}"
        )
    return exits


def recheck_before_write(plan, home: Home, follow_links: bool) -> str | None:
    """Just before a write: why it may not go ahead, else None. A file of the plan that now
    resolves outside the home may be written only when links are followed *and* the preview named
    that very target (``result["links_leaving_home"]``); a link swapped in since is refused. The
    planned paths only, one realpath each; ``apply_plan``'s own checks follow."""
    previewed = plan.result.get(LINKS_KEY, []) if isinstance(plan.result, dict) else []
    for exit_ in link_exits(home, [c.path for c in plan.changes], []):
        if not follow_links:
            return f"{exit_.describe()}; {FOLLOW_HINT}"
        if exit_.to_json() not in previewed:
            return f"{exit_.describe()}, which the preview did not name (a link changed since); preview again"
    return None
