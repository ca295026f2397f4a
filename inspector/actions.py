"""Plan an action for one session, for ``--all``, or home-wide; shared by the CLI and the GUI.

This is where the wall clock is read (once, for the preview); everything below takes it explicitly.
"""

from __future__ import annotations

import time
from pathlib import Path

from inspector.home import Home, hermes_cwd, webui_pid, webui_started_at
from inspector.plan import Clock, Plan, attribute_warnings
from inspector.repair import HOME_WIDE, action_module
from inspector.repair.context import RepairContext


def default_clock(home: Home, now: float | None, server_started_at: float | None) -> Clock:
    """``now`` = the preview time; ``server_started_at`` = the running WebUI's start, else now."""
    wall = time.time() if now is None else now
    if server_started_at is None:
        server_started_at = webui_started_at(home) or wall
    return Clock(now=wall, server_started_at=server_started_at)


def running_warning(home: Home) -> str | None:
    """A warning when hermes-webui runs: its in-memory cache may overwrite what we write."""
    pid = webui_pid(home)
    if pid is None:
        return None
    return (
        f"hermes-webui appears to be running (pid {pid} in {home.pid_file}). It keeps sessions in memory "
        "and its next save of this session may overwrite the repair; stop it first, or write and then "
        "reload the session in the browser before anyone else writes to it."
    )


def make_context(home: Home, clock: Clock, cwd: Path | None = None) -> RepairContext:
    return RepairContext(home=home, clock=clock, cwd=cwd if cwd is not None else hermes_cwd(home))


def plan_action(ctx: RepairContext, action: str, session_id: str | None) -> list[Plan]:
    """Plans for one session id, or for every eligible session when ``session_id`` is None."""
    module = action_module(action)
    if session_id is not None or action in HOME_WIDE:
        plans = [module.plan(ctx, session_id)]
    else:
        plans = [module.plan(ctx, sid) for sid in module.eligible(ctx)]
    warning = running_warning(ctx.home)
    for p in plans:
        if warning:
            p.warnings.insert(0, warning)
        p.warnings.extend(attribute_warnings(p))  # what a rewritten file cannot keep (ACLs, xattrs, owner)
    return plans
