"""Plan an action for one session, for ``--all``, or home-wide; shared by the CLI and the GUI.

This is where the wall clock is read (once, for the preview); everything below takes it explicitly.
"""

from __future__ import annotations

import time
from pathlib import Path

from inspector.home import Home, hermes_cwd, webui_pid, webui_started_at
from inspector.linkcheck import guard_plan
from inspector.plan import Clock, Plan, attribute_warnings
from inspector.repair import action_module, home_wide
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


def _planned(ctx: RepairContext, module, session_id: str | None, follow_links: bool) -> Plan:
    """``module.plan``, refused when a file it needed was too large to load (the plan was made
    without that file, so it may not be what hermes would do), and with every file it reads or
    writes outside the home named (refused unless ``follow_links``: see inspector.linkcheck)."""
    seen, asked = len(ctx.snapshot.too_large), len(ctx.snapshot.asked)
    plan = module.plan(ctx, session_id)
    guard_plan(plan, ctx.home, ctx.snapshot.asked[asked:], follow_links)
    skipped = list({exc.filename: exc for exc in ctx.snapshot.too_large[seen:]}.values())
    if skipped and not plan.refusal and plan.changes:
        names = "; ".join(f"{exc.filename}: {exc.strerror}" for exc in skipped[:3])
        plan.refusal = (
            f"a file this repair needs was not loaded ({names}); what hermes would do with it "
            "is unknown, so nothing is written"
        )
    elif skipped:  # nothing to write, or refused for another reason: still say what was not read
        plan.warnings.extend(f"{exc.filename} was not loaded: {exc.strerror}" for exc in skipped)
    return plan


def plan_action(
    ctx: RepairContext, action: str, session_id: str | None, *, follow_links: bool = False
) -> list[Plan]:
    """Plans for one session id, or for every eligible session when ``session_id`` is None.
    ``follow_links``: the user agreed to read and write through links that leave the home."""
    module = action_module(action)
    if session_id is not None or home_wide(action):
        plans = [_planned(ctx, module, session_id, follow_links)]
    else:
        plans = [_planned(ctx, module, sid, follow_links) for sid in module.eligible(ctx)]
    warning = running_warning(ctx.home)
    for p in plans:
        p.clock = ctx.clock
        if warning:
            p.warnings.insert(0, warning)
        p.warnings.extend(attribute_warnings(p))  # what a rewritten file cannot keep (ACLs, xattrs, owner)
    return plans
