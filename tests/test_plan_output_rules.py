"""What a plan shows: its JSON form (the command line's ``--json``) and its text preview, key by key
and line by line, and the extended attributes undo reads back from the write log."""

from __future__ import annotations

from pathlib import Path

from inspector import plan as planmod
from inspector.plan import FileChange, Plan, render_diff


def _home_wide(tmp_path: Path) -> Plan:
    return Plan(
        "rebuild-index",
        None,
        [FileChange(tmp_path / "_index.json", b"[]\n", b"[1]\n")],
        summary=["one row"],
        warnings=["a warning"],
    )


def test_the_json_form_names_every_field_and_carries_the_diff_by_default(tmp_path: Path) -> None:
    """Keys action, session_id, refusal, summary, warnings, result, changes (path, kind, both hashes, diff)."""
    plan = _home_wide(tmp_path)
    out = plan.to_json()
    assert list(out) == ["action", "session_id", "refusal", "summary", "warnings", "result", "changes"]
    assert (out["action"], out["session_id"], out["refusal"]) == ("rebuild-index", None, None)
    assert (out["summary"], out["warnings"]) == (["one row"], ["a warning"])
    (change,) = out["changes"]
    assert list(change) == ["path", "kind", "sha256_before", "sha256_after", "diff"]
    assert (change["path"], change["kind"]) == (str(tmp_path / "_index.json"), "modify")
    assert "-[]\n+[1]\n" in change["diff"]
    assert "diff" not in plan.to_json(diff=False)["changes"][0]


def test_a_refused_plan_says_why_in_its_json(tmp_path: Path) -> None:
    """The refusal and the session id are carried as they are."""
    plan = Plan("restore-bak", "s1", [], refusal="no .bak file")
    out = plan.to_json()
    assert (out["session_id"], out["refusal"], out["changes"]) == ("s1", "no .bak file", [])


def test_the_text_preview_of_a_home_wide_plan(tmp_path: Path) -> None:
    """A plan of no one session says so in its title; summary, warnings and each file's diff follow."""
    text = render_diff(_home_wide(tmp_path))
    lines = text.splitlines()
    assert lines[:5] == [
        "# rebuild-index (all eligible sessions)",
        "* one row",
        "! a warning",
        "",
        f"--- modify: {tmp_path / '_index.json'}",
    ]
    assert text.endswith("-[]\n+[1]\n")
    assert "XX" not in text


def test_the_text_preview_of_a_session_plan_names_it(tmp_path: Path) -> None:
    """The title is the action and the session id; a refusal comes next."""
    text = render_diff(Plan("restore-bak", "s1", [], refusal="no .bak file"))
    assert text == "# restore-bak s1\nREFUSED: no .bak file\n"


def test_logged_xattrs_that_are_not_base64_are_left_out() -> None:
    """A value with characters outside base64 is dropped (never decoded loosely); valid ones are kept."""
    entry = {"xattrs": {"user.bad": "!!!", "user.good": "YWI="}}
    assert planmod._logged_xattrs(entry) == {"user.good": b"ab"}
    assert planmod._logged_xattrs({"xattrs": {"user.bad": "no spaces allowed"}}) is None
    assert planmod._logged_xattrs({"xattrs": ["user.a"]}) is None
    assert planmod._logged_xattrs({}) is None
