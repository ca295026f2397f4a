"""Adding an action = one new module (issue 15): a throwaway action module, registered and nothing
else edited, shows up in the command line, the window's buttons and Repair menu, the findings'
recommendations and the view's planning."""

from __future__ import annotations

import io
import textwrap
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from PySide6.QtGui import QKeySequence

from inspector import cli
from inspector.findings import WARNING, Finding, action_for, from_hermes_item
from inspector.gui.main_window import MainWindow
from inspector.plan import FileChange, Plan
from inspector.present.session_data import plan_session_actions
from inspector.repair import registry

NAME = "tidy-notes"
MODULE = f'''
    """A throwaway action: it exists only in this test's temporary folder."""
    from inspector.plan import Plan
    from inspector.repair.registry import HERMES, SESSION, ActionSpec

    NAME = "{NAME}"
    SPEC = ActionSpec(name=NAME, label="Tidy notes", scope=SESSION, origin=HERMES,
                      mirrors="api.models._tidy_notes", help="a throwaway action for the registry's test",
                      answers=("untidy_notes",), recommendations=("tidy_notes",))


    def eligible(ctx):
        return []


    def plan(ctx, session_id):
        p = Plan(action=NAME, session_id=session_id)
        p.summary.append("the notes of " + str(session_id) + " would be tidied")
        return p
'''


@pytest.fixture
def one_new_module(tmp_path, monkeypatch) -> str:
    """Only a new module, and the registry listing it (the one line adding an action takes)."""
    folder = tmp_path / "new_action"
    folder.mkdir()
    (folder / "tidy_notes_action.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(registry, "REGISTRY", registry.Registry((*registry.MODULES, "tidy_notes_action")))
    return NAME


def test_a_new_module_is_a_command_line_action(one_new_module, demo, demo_home) -> None:
    """Rule: `repair --action` and `crosscheck --action` accept the new action; its plan is previewed."""
    parser = cli.build_parser()
    assert parser.parse_args(["repair", "s1", "--action", NAME]).action == NAME
    assert parser.parse_args(["crosscheck", "s1", "--action", NAME]).action == NAME  # it mirrors hermes
    sid = next(iter(demo.sessions.values()))
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["repair", sid, "--action", NAME, "--home", str(demo.home)])
    assert code == 0 and f"the notes of {sid} would be tidied" in out.getvalue()


def test_a_new_module_answers_findings(one_new_module) -> None:
    """Rule: findings of the kinds the new SPEC answers, and hermes' recommendation it carries out,
    recommend the new action."""
    assert action_for("untidy_notes") == NAME
    hermes = from_hermes_item({"kind": "untidy", "recommendation": "tidy_notes", "session_id": "s1"})
    assert hermes.action == NAME


def test_a_new_module_is_a_button_a_menu_entry_and_a_planned_repair(
    one_new_module, qtbot, settings, demo, demo_home
) -> None:
    """Rule: the window has a button and a Repair menu entry for the new action, with the next
    shortcut (the existing ones keep theirs), its finding says which button to press, and the
    session view plans it."""
    before = {name: f"Ctrl+{n}" for n, name in enumerate(registry.names()[:-1], start=1)}
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    try:
        button = window.view.findings.buttons[NAME]
        assert button.text() == "Tidy notes" and not button.isEnabled()
        menu = window.repair_actions[NAME]
        assert menu.text() == "Tidy notes…"
        assert menu.shortcut() == QKeySequence(f"Ctrl+{len(registry.names())}")
        for name, keys in before.items():
            assert window.repair_actions[name].shortcut() == QKeySequence(keys)
        finding = Finding("untidy_notes", WARNING, "the notes are untidy", "s1", action_for("untidy_notes"))
        change = FileChange(Path("/nowhere/s1.json"), b"{}", b"{ }")
        applies = Plan(action=NAME, session_id="s1", changes=[change])
        words = window.view.findings.words_of(finding, {NAME: applies})
        assert words.can_act and "press “Tidy notes”" in words.sentence()
    finally:
        window.runner.cancel_all()
        window.runner.wait(10_000)
    sid = next(iter(demo.sessions.values()))
    plans = plan_session_actions(demo_home, sid, set())
    assert isinstance(plans[NAME], Plan) and plans[NAME].summary == [f"the notes of {sid} would be tidied"]
