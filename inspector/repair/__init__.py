"""Repair actions. Each module turns (files on disk, clock) into a :class:`inspector.plan.Plan`.

Every action module exposes the same three names:

* ``NAME``: the action name used by the command line and the GUI;
* ``plan(ctx: RepairContext, session_id: str | None) -> Plan``: what the repair would write
  for one session (``None`` for home-wide actions: all eligible rows / the whole index);
* ``eligible(ctx: RepairContext) -> list[str]``: the session ids ``--all`` applies to
  (home-wide actions return ``[]`` and are planned once with ``session_id=None``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

ACTION_MODULES = {
    "recover-journal": "inspector.repair.promote",
    "repair-interrupted": "inspector.repair.interrupted",
    "materialize": "inspector.repair.materialize",
    "restore-backup": "inspector.repair.restore",
    "rebuild-index": "inspector.repair.rebuild_index",
    "recover-from-journal": "inspector.repair.from_journal",
    "rebuild-from-state-db": "inspector.repair.rebuild_from_state",
}
HOME_WIDE = frozenset({"materialize", "rebuild-index"})


def action_module(name: str) -> ModuleType:
    """The module implementing an action; KeyError for unknown names."""
    return importlib.import_module(ACTION_MODULES[name])
