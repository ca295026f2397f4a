"""The one registry of repair actions (Qt-free).

Each action module declares itself once, as ``SPEC = ActionSpec(...)``: its name, the button's label,
its scope, whether it is a hermes-webui repair or an inspector step, the hermes-webui function it
mirrors, the finding kinds (and hermes audit recommendations) it answers, and a one-line help. The
command line's ``--action`` choices and help, the window's buttons and Repair menu, the findings'
recommended action, crosscheck's actions and the README's action table all read this registry.

Adding an action = one new module in ``inspector/repair/`` (with ``SPEC``, ``plan`` and ``eligible``)
plus its name in :data:`MODULES` below, and its tests. The list of modules is explicit rather than
discovered with ``pkgutil``: ``inspector/repair/`` also holds the pieces the actions share (``save``,
``marker``, ``journal_read``...), which must not be imported just to find actions, and the tuple's order
is the order of the buttons and of the Repair menu's shortcuts (Ctrl+1…), which must stay stable.

The specs are read lazily (the first call imports the action modules): action modules import
``inspector.findings``, which reads the registry, so nothing here runs at import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType

SESSION = "session"  # one session; --all plans every eligible session id
HOME = "home"  # the whole home: planned once, the session id is not used
SESSION_OR_HOME = "session-or-home"  # one session, or with --all the whole home at once

HERMES = "hermes"  # a hermes-webui repair: the same bytes hermes-webui writes
INSPECTOR = "inspector"  # an inspector step: no hermes-webui function does it

# what a hermes function reads besides the sessions folder (ActionSpec.hermes_reads)
RUN_JOURNALS, STATE_DB, CORE_TRANSCRIPT = "run_journals", "state_db", "core_transcript"

# The action modules, in button / Ctrl+N order. The one list of actions.
MODULES: tuple[str, ...] = (
    "inspector.repair.promote",
    "inspector.repair.from_journal",
    "inspector.repair.interrupted",
    "inspector.repair.materialize",
    "inspector.repair.restore",
    "inspector.repair.rebuild_from_state",
    "inspector.repair.rebuild_index",
)


@dataclass(frozen=True)
class ActionSpec:
    """What an action is, declared once in its module.

    ``answers``: the inspector finding kinds this action repairs. ``needs``: what a session must have
    for this action to be the answer (e.g. ``{"bak"}``: a readable backup); when several actions answer
    the same kind, the first in :data:`MODULES` whose needs are met is recommended.
    ``recommendations``: hermes' audit recommendations (``restore_from_bak``...) this action carries out.
    ``hermes_reads``: what hermes' function reads besides the sessions folder's own files, so that
    crosscheck copies it: :data:`RUN_JOURNALS` (the session's run and turn journals), :data:`STATE_DB`,
    :data:`CORE_TRANSCRIPT` (the agent's transcript of the session).
    """

    name: str
    label: str
    scope: str
    origin: str
    mirrors: str | None
    help: str
    answers: tuple[str, ...] = ()
    needs: frozenset[str] = field(default_factory=frozenset)
    recommendations: tuple[str, ...] = ()
    hermes_reads: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.scope not in (SESSION, HOME, SESSION_OR_HOME):
            raise ValueError(f"action {self.name!r}: unknown scope {self.scope!r}")
        if self.origin not in (HERMES, INSPECTOR):
            raise ValueError(f"action {self.name!r}: unknown origin {self.origin!r}")
        if (self.origin == HERMES) != (self.mirrors is not None):
            raise ValueError(
                f"action {self.name!r}: a hermes repair names the function it mirrors; "
                "an inspector step mirrors none"
            )
        if self.hermes_reads - {RUN_JOURNALS, STATE_DB, CORE_TRANSCRIPT}:
            raise ValueError(f"action {self.name!r}: unknown hermes_reads {sorted(self.hermes_reads)}")
        if not self.name or not self.label or not self.help or "\n" in self.help:
            raise ValueError(f"action {self.name!r}: name, label and a one-line help are required")

    @property
    def is_inspector_step(self) -> bool:
        return self.origin == INSPECTOR

    @property
    def home_wide(self) -> bool:
        """``--all`` plans it once for the whole home (``session_id=None``)."""
        return self.scope in (HOME, SESSION_OR_HOME)


class Registry:
    """The specs of the modules in ``modules``, loaded on first use."""

    def __init__(self, modules: Iterable[str]):
        self.modules = tuple(modules)
        self._specs: tuple[ActionSpec, ...] | None = None
        self._by_name: dict[str, tuple[ActionSpec, str]] = {}

    def specs(self) -> tuple[ActionSpec, ...]:
        if self._specs is None:
            by_name: dict[str, tuple[ActionSpec, str]] = {}
            for modname in self.modules:
                spec = getattr(importlib.import_module(modname), "SPEC", None)
                if not isinstance(spec, ActionSpec):
                    raise TypeError(f"{modname} has no SPEC = ActionSpec(...)")
                if spec.name in by_name:
                    raise ValueError(
                        f"action {spec.name!r} is declared by {by_name[spec.name][1]} and {modname}"
                    )
                by_name[spec.name] = (spec, modname)
            self._by_name = by_name
            self._specs = tuple(s for s, _ in by_name.values())
        return self._specs

    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs())

    def spec(self, name: str) -> ActionSpec:
        """KeyError for unknown names."""
        self.specs()
        return self._by_name[name][0]

    def module(self, name: str) -> ModuleType:
        """The module implementing an action; KeyError for unknown names."""
        self.specs()
        return importlib.import_module(self._by_name[name][1])

    def module_name(self, name: str) -> str:
        self.specs()
        return self._by_name[name][1]

    def answer(self, kind: str, have: Iterable[str] = ()) -> str | None:
        """The action recommended for an inspector finding of ``kind`` (None: nothing to press)."""
        have = frozenset(have)
        for s in self.specs():
            if kind in s.answers and s.needs <= have:
                return s.name
        return None

    def for_recommendation(self, recommendation: str) -> str | None:
        """The action carrying out a hermes audit recommendation (None: none does)."""
        for s in self.specs():
            if recommendation in s.recommendations:
                return s.name
        return None

    def hermes_repairs(self) -> tuple[str, ...]:
        """The actions that mirror a hermes-webui function (what crosscheck can compare)."""
        return tuple(s.name for s in self.specs() if s.origin == HERMES)

    def steps_sentence(self) -> str:
        """Which actions are inspector steps, for the command line's help."""
        steps = [s.name for s in self.specs() if s.is_inspector_step]
        if not steps:
            return "all are hermes-webui's own repairs"
        verb = "is an inspector step" if len(steps) == 1 else "are inspector steps"
        return f"{' and '.join(steps)} {verb}, not hermes-webui repairs; the others are hermes-webui's own"


REGISTRY = Registry(MODULES)


def specs() -> tuple[ActionSpec, ...]:
    """Every action, in button order."""
    return REGISTRY.specs()


def names() -> tuple[str, ...]:
    return REGISTRY.names()


def spec(name: str) -> ActionSpec:
    return REGISTRY.spec(name)


def answer(kind: str, have: Iterable[str] = ()) -> str | None:
    return REGISTRY.answer(kind, have)


def for_recommendation(recommendation: str) -> str | None:
    return REGISTRY.for_recommendation(recommendation)


class StepsHelp(str):
    """An argparse help string that ends with :meth:`Registry.steps_sentence`, read when the help is
    shown (argparse formats ``help % params``), not when the parser is built."""

    def __mod__(self, params):
        return f"{str.__mod__(self, params)}; {REGISTRY.steps_sentence()}"


class Choices:
    """The action names for argparse's ``choices``, read from the registry only when argparse looks
    (a parse of ``--action``, or help): read-only commands do not import the action modules."""

    def __init__(self, extra: tuple[str, ...] = (), hermes_only: bool = False):
        self.extra = extra
        self.hermes_only = hermes_only

    def _names(self) -> list[str]:
        base = REGISTRY.hermes_repairs() if self.hermes_only else REGISTRY.names()
        return sorted([*base, *self.extra])

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __iter__(self):
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())
