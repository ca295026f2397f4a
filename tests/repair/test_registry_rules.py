"""The registry's own rules: what an action's declaration must hold (``ActionSpec``), each refusal
in its words, and the command line's sentence naming the inspector steps (``steps_sentence``)."""

from __future__ import annotations

import sys
import types

import pytest

from inspector.repair.registry import (
    CORE_TRANSCRIPT,
    HERMES,
    HOME,
    INSPECTOR,
    RUN_JOURNALS,
    SESSION,
    SESSION_OR_HOME,
    STATE_DB,
    ActionSpec,
    Registry,
)

GOOD = {
    "name": "fix-it",
    "label": "Fix it",
    "scope": SESSION,
    "origin": HERMES,
    "mirrors": "api.models.fix_it",
    "help": "fixes it",
}


def _spec(**changes) -> ActionSpec:
    return ActionSpec(**{**GOOD, **changes})


def _refused(**changes) -> str:
    with pytest.raises(ValueError) as caught:
        _spec(**changes)
    return str(caught.value)


def test_a_complete_declaration_is_accepted_with_every_scope_and_read() -> None:
    for scope in (SESSION, HOME, SESSION_OR_HOME):
        assert _spec(scope=scope).scope == scope
    reads = frozenset({RUN_JOURNALS, STATE_DB, CORE_TRANSCRIPT})
    assert _spec(hermes_reads=reads).hermes_reads == reads
    step = _spec(origin=INSPECTOR, mirrors=None)
    assert step.is_inspector_step and not _spec().is_inspector_step


def test_an_unknown_scope_or_origin_is_refused_by_name() -> None:
    assert _refused(scope="everywhere") == "action 'fix-it': unknown scope 'everywhere'"
    assert _refused(origin="agent") == "action 'fix-it': unknown origin 'agent'"


def test_a_hermes_repair_names_what_it_mirrors_and_a_step_names_nothing() -> None:
    words = "action 'fix-it': a hermes repair names the function it mirrors; an inspector step mirrors none"
    assert _refused(mirrors=None) == words
    assert _refused(origin=INSPECTOR) == words


def test_an_unknown_hermes_read_is_refused_with_every_read_sorted() -> None:
    assert (
        _refused(hermes_reads=frozenset({STATE_DB, "config", "a_log"}))
        == "action 'fix-it': unknown hermes_reads ['a_log', 'config', 'state_db']"
    )


@pytest.mark.parametrize(
    "changes",
    [{"name": ""}, {"label": ""}, {"help": ""}, {"help": "two\nlines"}],
    ids=["no-name", "no-label", "no-help", "two-line-help"],
)
def test_name_label_and_a_one_line_help_are_required(changes) -> None:
    name = changes.get("name", "fix-it")
    assert _refused(**changes) == f"action {name!r}: name, label and a one-line help are required"


def _registry(monkeypatch, *origins: str) -> Registry:
    modules = []
    for i, origin in enumerate(origins):
        module = types.ModuleType(f"_registry_rules_{i}")
        name = f"action-{i}"
        module.SPEC = _spec(name=name, origin=origin, mirrors=None if origin == INSPECTOR else "api.f")
        monkeypatch.setitem(sys.modules, module.__name__, module)
        modules.append(module.__name__)
    return Registry(modules)


def test_the_steps_sentence_with_no_step_one_step_and_two(monkeypatch) -> None:
    assert _registry(monkeypatch, HERMES, HERMES).steps_sentence() == "all are hermes-webui's own repairs"
    assert _registry(monkeypatch, HERMES, INSPECTOR).steps_sentence() == (
        "action-1 is an inspector step, not hermes-webui repairs; the others are hermes-webui's own"
    )
    assert _registry(monkeypatch, INSPECTOR, HERMES, INSPECTOR).steps_sentence() == (
        "action-0 and action-2 are inspector steps, not hermes-webui repairs; the others are hermes-webui's own"
    )


def test_a_registry_looks_its_actions_up_by_name(monkeypatch) -> None:
    registry = _registry(monkeypatch, HERMES, INSPECTOR)
    assert registry.spec("action-1").origin == INSPECTOR
    assert registry.module_name("action-0") == "_registry_rules_0"
    with pytest.raises(KeyError):
        registry.spec("action-9")
