"""The one registry of actions (issue 15): each action module declares its SPEC once, and the
command line, the findings, crosscheck and the README all read it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from inspector import cli, crosscheck
from inspector.findings import action_for, from_hermes_item
from inspector.repair import action_module, home_wide, registry
from inspector.repair.registry import ActionSpec, Registry

ROOT = Path(__file__).resolve().parents[2]


def test_every_action_module_declares_a_valid_spec_under_its_own_name() -> None:
    """Rule: each module in the registry exposes SPEC (an ActionSpec) whose name is its NAME."""
    specs = registry.specs()
    assert len(specs) == len(registry.MODULES) == len(set(registry.names()))
    for spec in specs:
        module = action_module(spec.name)
        assert module.SPEC is spec and module.NAME == spec.name
        assert callable(module.plan) and callable(module.eligible)


def test_button_and_shortcut_order_is_stable() -> None:
    """Rule: the order of the buttons and of Ctrl+1… is the registry's, and stays what users learned."""
    assert registry.names() == (
        "recover-journal",
        "recover-from-journal",
        "repair-interrupted",
        "materialize",
        "restore-backup",
        "rebuild-from-state-db",
        "rebuild-index",
    )


def test_hermes_repairs_name_their_function_and_inspector_steps_none() -> None:
    """Rule: a hermes-webui repair names the hermes function it mirrors; an inspector step names none."""
    for spec in registry.specs():
        if spec.is_inspector_step:
            assert spec.mirrors is None and "inspector step" in spec.label
        else:
            assert spec.mirrors and spec.mirrors.startswith("api.")
    assert set(registry.REGISTRY.hermes_repairs()) == {s.name for s in registry.specs() if s.mirrors}
    with pytest.raises(ValueError, match="mirrors none"):
        ActionSpec("x", "X", registry.SESSION, registry.INSPECTOR, "api.models.f", "help")
    with pytest.raises(ValueError, match="unknown scope"):
        ActionSpec("x", "X", "sometimes", registry.HERMES, "api.models.f", "help")


def test_scope_decides_how_all_is_planned() -> None:
    """Rule: `--all` plans home-wide actions once (session_id None) and per-session ones per eligible id."""
    for spec in registry.specs():
        assert home_wide(spec.name) == (spec.scope in (registry.HOME, registry.SESSION_OR_HOME))
    assert registry.spec("rebuild-index").scope == registry.HOME


def test_findings_recommend_what_the_specs_answer() -> None:
    """Rule: a finding's action is the first action (in registry order) answering its kind whose needs
    the session meets; a hermes audit recommendation maps to the action carrying it out."""
    assert action_for("corrupt_sidecar") is None  # nothing to restore from
    assert action_for("corrupt_sidecar", {"bak"}) == "restore-backup"
    assert action_for("corrupt_sidecar", {"state_db_messages"}) == "rebuild-from-state-db"
    assert (
        action_for("corrupt_sidecar", {"bak", "state_db_messages"}) == "restore-backup"
    )  # hermes' own first
    for spec in registry.specs():
        for rec in spec.recommendations:
            item = {"kind": "shrunken_live", "recommendation": rec, "session_id": "s"}
            assert from_hermes_item(item).action == spec.name


def _string_constants(path: Path) -> set[str]:
    return {
        n.value
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def test_no_second_list_of_action_names_in_the_code() -> None:
    """Rule: an action's name is written in code only in its own module (its NAME); everyone else
    reads the registry. (Docstrings and comments may mention names; a bare string literal may not.)"""
    names = set(registry.names())
    own = {Path(action_module(n).__file__).resolve(): n for n in names}
    offenders = []
    for path in sorted((ROOT / "inspector").rglob("*.py")):
        found = _string_constants(path) & names
        if path.resolve() in own:
            found -= {own[path.resolve()]}
        if found:
            offenders.append(f"{path.relative_to(ROOT)}: {sorted(found)}")
    assert offenders == []


def _readme_table() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("| action | hermes-webui function |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        m = re.match(r"\| `([^`]+)` \| (.*) \|$", line)
        assert m, f"unexpected row {line!r}"
        rows[m.group(1)] = m.group(2)
    return rows


def test_readme_action_table_matches_the_registry() -> None:
    """Rule: the README's action table lists exactly the registry's actions, in its order; a hermes repair's
    row names the function it mirrors, an inspector step's row says it is one."""
    rows = _readme_table()
    assert list(rows) == list(registry.names())
    for spec in registry.specs():
        if spec.mirrors:
            assert spec.mirrors.rsplit(".", 1)[1] in rows[spec.name]
        else:
            assert "an inspector step" in rows[spec.name]


def test_cli_choices_and_help_come_from_the_registry() -> None:
    """Rule: `repair --action` offers every registered action; `crosscheck --action` the hermes repairs
    and audit (an inspector step has no hermes function to compare with)."""
    parser = cli.build_parser()
    subs = next(a for a in parser._actions if a.dest == "command").choices
    repair = next(a for a in subs["repair"]._actions if a.dest == "action")
    check = next(a for a in subs["crosscheck"]._actions if a.dest == "action")
    assert list(repair.choices) == sorted(registry.names())
    assert list(check.choices) == sorted([*registry.REGISTRY.hermes_repairs(), "audit"])
    assert "recover-from-journal" not in check.choices
    text = re.sub(r"\s+", "", subs["repair"].format_help())  # argparse wraps at hyphens
    for name in registry.names():
        assert name in text
    assert "recover-from-journalandrebuild-from-state-dbareinspectorsteps" in text
    with pytest.raises(SystemExit):
        parser.parse_args(["repair", "s", "--action", "no-such-action"])


def test_crosscheck_refuses_an_inspector_step_before_running_anything() -> None:
    """Rule: crosscheck runs hermes' function the spec names; an inspector step has none: refused, not run."""
    with pytest.raises(crosscheck.CrosscheckError, match="inspector step"):
        crosscheck._hermes_function("recover-from-journal")
    assert crosscheck._hermes_function("rebuild-index") == registry.spec("rebuild-index").mirrors


def test_a_module_without_spec_or_a_duplicate_name_is_refused(tmp_path, monkeypatch) -> None:
    """Rule: the registry refuses a module with no SPEC and two modules declaring one name."""
    (tmp_path / "nospec_action.py").write_text("NAME = 'x'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="no SPEC"):
        Registry(["nospec_action"]).specs()
    with pytest.raises(ValueError, match="declared by"):
        Registry(["inspector.repair.promote", "inspector.repair.promote"]).specs()
