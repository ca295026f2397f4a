"""Repair actions. Each module turns (files on disk, clock) into a :class:`inspector.plan.Plan`.

Every action module exposes the same names:

* ``SPEC``: its :class:`inspector.repair.registry.ActionSpec` (name, label, scope, hermes function
  or inspector step, the findings it answers, help); the registry lists the action modules;
* ``plan(ctx: RepairContext, session_id: str | None) -> Plan``: what the repair would write
  for one session (``None`` for home-wide actions: all eligible rows / the whole index);
* ``eligible(ctx: RepairContext) -> list[str]``: the session ids ``--all`` applies to
  (home-wide actions return ``[]`` and are planned once with ``session_id=None``).
"""

from __future__ import annotations

from types import ModuleType

from inspector.repair import registry


def action_module(name: str) -> ModuleType:
    """The module implementing an action; KeyError for unknown names."""
    return registry.REGISTRY.module(name)


def is_action(name: str) -> bool:
    return name in registry.names()


def home_wide(name: str) -> bool:
    """``--all`` plans this action once, for the whole home (``session_id=None``)."""
    return registry.spec(name).home_wide
