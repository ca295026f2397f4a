"""The findings panel (issue 16, "no dead ends"): every line says what is wrong, what to do or why
nothing can be done, and what to tell the user; a disabled button's reason is on the line itself;
the list's health and the view's findings agree."""

from __future__ import annotations

from inspector.findings import worst
from inspector.gui.main_window import merge_findings
from inspector.gui.session_model import SESSION_ID_ROLE
from inspector.present.session_data import ACTIONS
from tests.gui.conftest import open_home, wait_settled


def _planned(qtbot, window):
    qtbot.waitUntil(lambda: window.plans is not None and not window.runner.is_busy("plans"), timeout=60_000)


def test_every_finding_line_names_the_button_or_the_reason_inline(qtbot, window, demo_home):
    """Rule: a finding that recommends a repair either names an enabled button with its key, or
    says on the same line why that button cannot be pressed; the technical message is on hover."""
    open_home(qtbot, window, demo_home)
    ids = [window.model.index(r, 0).data(SESSION_ID_ROLE) for r in range(window.model.rowCount())]
    seen_blocked = seen_press = 0
    for sid in ids:
        window.select_session(sid)
        wait_settled(qtbot, window)
        _planned(qtbot, window)
        bar = window.view.findings
        findings = merge_findings(window.data.detail.findings, list(window.model.row_for(sid).findings))
        assert len(bar.words) == min(len(findings), 5)
        for f, words in zip(findings, bar.words, strict=False):
            text = words.sentence()
            assert "tell the user" in text
            if f.action in ACTIONS:
                button = bar.buttons[f.action]
                assert words.can_act == button.isEnabled(), (sid, text)
                if button.isEnabled():
                    seen_press += 1
                    assert f"press “{ACTIONS[f.action]}”" in text
                else:
                    seen_blocked += 1
                    assert "cannot be used:" in text, text
            else:
                assert "nothing to press:" in text
    assert seen_press and seen_blocked  # the demo has both


def test_the_list_health_agrees_with_the_view(qtbot, window, demo_home):
    """Rule: the health icon of a session's row is the worst of the findings its view shows."""
    open_home(qtbot, window, demo_home)
    for r in range(window.model.rowCount()):
        sid = window.model.index(r, 0).data(SESSION_ID_ROLE)
        window.select_session(sid)
        wait_settled(qtbot, window)
        row = window.model.row_for(sid)
        shown = merge_findings(window.data.detail.findings, list(row.findings))
        assert row.health == worst(shown), (sid, row.health, [f.kind for f in shown])


def test_the_view_merges_with_the_catalogue_findings_not_an_earlier_merge(qtbot, window, demo, demo_home):
    """Rule: once the view's findings are in the list, a later view of the same session merges with
    what the catalogue found, so a finding fixed since (an old read of the session) does not stick."""
    from inspector.findings import Finding

    sid = demo.sessions["healthy"]
    open_home(qtbot, window, demo_home, select=sid)
    listed = window.model.catalogue_findings(sid)
    stale = Finding("corrupt_sidecar", "error", "an old read", sid)
    assert window.model.update_findings(sid, [stale])
    assert window.model.row_for(sid).health == "error"
    assert window.model.catalogue_findings(sid) == listed  # what the catalogue said, kept
    window.refresh()  # reads the session again: the list follows the fresh view
    wait_settled(qtbot, window)
    assert window.model.row_for(sid).health == worst(merge_findings(window.data.detail.findings, listed))


def test_a_chat_only_state_db_has_is_said_once_not_twice(qtbot, window, demo, demo_home):
    """Rule: one line per fact: hermes' audit item "state.db has this chat but its file is missing"
    and the inspector's own "only state.db has this chat" are the same fact; the view shows it once,
    with the button, and the list's health is still the worst of what the view shows."""
    sid = demo.sessions["state_only"]
    open_home(qtbot, window, demo_home, select=sid)
    _planned(qtbot, window)
    kinds = [
        f.kind for f in merge_findings(window.data.detail.findings, list(window.model.row_for(sid).findings))
    ]
    assert kinds.count("state_db_missing_sidecar") == 1 and "sidecar_missing" not in kinds
    lines = [w.sentence() for w in window.view.findings.words]
    assert sum("file is missing" in line for line in lines) == 1, lines
    assert any(f"press “{ACTIONS['materialize']}”" in line for line in lines)
    assert window.model.row_for(sid).health == worst(
        merge_findings(window.data.detail.findings, list(window.model.row_for(sid).findings))
    )


def test_an_empty_chat_only_state_db_has_is_said_once(qtbot, window, demo, demo_home):
    """Rule: one line per fact: an empty chat state.db has without a file is hermes' "empty chat with
    no file" (nothing to press), not also "only state.db has this chat" with a disabled button."""
    sid = demo.sessions["empty_orphan_row"]
    open_home(qtbot, window, demo_home, select=sid)
    _planned(qtbot, window)
    kinds = [
        f.kind for f in merge_findings(window.data.detail.findings, list(window.model.row_for(sid).findings))
    ]
    assert "state_db_orphan_webui_row" in kinds and "sidecar_missing" not in kinds
    (line,) = [w.sentence() for w in window.view.findings.words]
    assert "nothing to press" in line


def test_a_chat_of_the_agent_itself_is_not_called_a_missing_webui_file(qtbot, window, demo, demo_home):
    """Rule: a state.db chat the WebUI did not start (source 'cli') never has a WebUI file: the view
    says what it is, offers no repair, and shows no hermes wording (source='webui', rows)."""
    sid = demo.sessions["cli_only"]
    open_home(qtbot, window, demo_home, select=sid)
    _planned(qtbot, window)
    kinds = [
        f.kind for f in merge_findings(window.data.detail.findings, list(window.model.row_for(sid).findings))
    ]
    assert kinds == ["agent_only_chat"]
    (line,) = [w.sentence() for w in window.view.findings.words]
    assert line.startswith("A chat of the agent itself") and "nothing to press" in line
    assert "source" not in line and "row" not in line
    assert not any(b.isEnabled() for b in window.view.findings.buttons.values())
    header = window.view.header
    assert "missing" not in header.paths.text() and "a chat of the agent itself" in header.ids.text()
