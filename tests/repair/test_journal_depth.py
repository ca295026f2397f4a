"""The two journal repairs on a run journal holding a line nested too deeply for hermes' reader.

hermes' ``_read_jsonl`` lets ``json.loads``' RecursionError out (it catches only
``JSONDecodeError``) and every reader of ``_apply_core_sync_or_error_marker`` and of the lazy
journal retry catches it as ``Exception``: the journal counts as having no output at all, the
path an invalid UTF-8 byte takes (spec quirk 5). So, with no hermes needed: a repair on a journal
holding a line 994+ levels deep writes exactly what it writes when that journal is not UTF-8,
and says why in plain words; a line whose fate depends on hermes' own stack (901-993 levels) is
refused; a line at most 900 levels deep is an ordinary event. tests/hermes_check/
test_journal_depth_hermes.py holds the same to hermes' own functions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.actions import make_context, plan_action
from inspector.finding_words import words_for
from inspector.load import full_audit
from inspector.plan import Plan
from tests.safety.helpers import CLOCK, demo

REPAIRS = [("recover-journal", "lost_response"), ("repair-interrupted", "stale_pending")]


def _deep_event(levels: int) -> bytes:
    """An event line whose payload nests ``levels`` levels in all (the event itself included)."""
    n = levels - 2
    return b'{"event":"token","payload":{"text":"deep","x":' + b"[" * n + b"]" * n + b"}}\n"


def _plan(tmp_path: Path, scenario: str, action: str, append: bytes | None, tag: str) -> Plan:
    d, home = demo(tmp_path / tag)
    journal = d.session_dir / "_run_journal" / d.sessions[scenario] / f"{d.stream_ids[scenario]}.jsonl"
    if append is not None:
        with open(journal, "ab") as fh:
            fh.write(b"\n" + append)  # on a line of its own (a demo journal may end torn)
    (plan,) = plan_action(make_context(home, CLOCK), action, d.sessions[scenario])
    return plan


def _written(plan: Plan) -> dict[str, bytes | None]:
    return {c.path.name: c.after for c in plan.changes}


@pytest.mark.parametrize(("action", "scenario"), REPAIRS)
def test_a_line_too_deep_for_every_hermes_reader_gives_what_an_unreadable_journal_gives(
    tmp_path: Path, action: str, scenario: str
) -> None:
    plain = _plan(tmp_path, scenario, action, None, "plain")
    deep = _plan(tmp_path, scenario, action, _deep_event(1000), "deep")
    unreadable = _plan(tmp_path, scenario, action, b'{"text":"\xe4\xb8\n', "utf8")
    assert deep.refusal is None and unreadable.refusal is None
    assert _written(deep) == _written(unreadable)  # hermes' one failure path: no output at all
    assert _written(deep) != _written(plain)  # the journal's output is what hermes loses
    said = [w for w in deep.warnings if "nested 994 or more levels deep" in w]
    assert said and "known hermes defect" in said[0] and "no output" in said[0], deep.warnings


@pytest.mark.parametrize(("action", "scenario"), REPAIRS)
@pytest.mark.parametrize("levels", [901, 950, 993])
def test_a_line_whose_reading_depends_on_hermes_own_stack_is_refused(
    tmp_path: Path, action: str, scenario: str, levels: int
) -> None:
    plan = _plan(tmp_path, scenario, action, _deep_event(levels), f"unsure{levels}")
    assert plan.refusal and not plan.changes
    assert f"nested {levels} levels deep" in plan.refusal
    assert "depends on hermes itself" in plan.refusal and "nothing is written" in plan.refusal


@pytest.mark.parametrize(("action", "scenario"), REPAIRS)
def test_a_line_every_hermes_reader_reads_is_an_ordinary_event(
    tmp_path: Path, action: str, scenario: str
) -> None:
    """900 levels: read alike by every hermes caller, so it is a token event like any other
    (its text "deep" is recovered with the rest)."""
    plan = _plan(tmp_path, scenario, action, _deep_event(900), "ok")
    shallow = _plan(tmp_path, scenario, action, _deep_event(3), "shallow")
    assert plan.refusal is None and not [w for w in plan.warnings if "nested" in w]
    assert _written(plan) == _written(shallow)  # only the token's text is kept, not the payload's x
    assert _written(plan) != _written(_plan(tmp_path, scenario, action, None, "plain"))  # "deep" is added


def test_the_audit_names_the_journal_in_plain_words(tmp_path: Path) -> None:
    d, home = demo(tmp_path / "home")
    scenario = "lost_response"
    journal = d.session_dir / "_run_journal" / d.sessions[scenario] / f"{d.stream_ids[scenario]}.jsonl"
    with open(journal, "ab") as fh:
        fh.write(_deep_event(2000))
    report = full_audit(home, now=CLOCK.now)
    found = [f for f in report["inspector"]["findings"] if f["kind"] == "journal_too_deep"]
    assert len(found) == 1 and found[0]["session_id"] == d.sessions[scenario]
    assert "nested 994 or more levels deep" in found[0]["message"]
    from inspector.findings import Finding

    words = words_for(Finding("journal_too_deep", "error", found[0]["message"], found[0]["session_id"]))
    text = " ".join(str(v) for v in vars(words).values() if isinstance(v, str))
    assert "nested too deeply" in text and "hermes" in text and "Error" not in text
