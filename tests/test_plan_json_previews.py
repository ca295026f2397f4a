"""A change's preview as JSON text (``FileChange.preview_json``), made while the plan is made where
the diffs are shown only as JSON (``repair --write --json``: ``early_staging(json_diffs=True)``).

Rules pinned here:

* ``preview_json`` is the preview as ``json.dumps(ensure_ascii=True)`` writes that string (quotes
  included, non-ASCII as ``\\uXXXX``, beyond the BMP as a surrogate pair); it is made from the
  preview made already, else from one made for it and not kept;
* a materialize made inside ``early_staging(json_diffs=True)`` holds each change's hashes and
  ``preview_json``, not its preview; inside ``early_staging()`` (``repair --write`` without
  ``--json``) and outside it (a preview) it holds the previews, as before;
* ``repair --write --json`` writes each new sidecar's diff as the preview of the very bytes written,
  and the text the stdlib's encoder writes for that output.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from inspector import cli
from inspector import plan as planmod
from inspector.plan import FileChange, early_staging, file_diff
from inspector.repair import materialize
from tests.recovery_helpers import home_dirs, make_ctx, seed_state_db, sidecar, write_json

MADE = '{\n  "t": "é😀"\n}'.encode()
MADE_JSON = (
    '"--- /dev/null\\n+++ b/a.json\\n@@ -0,0 +1,3 @@\\n+{\\n+  \\"t\\": \\"\\u00e9\\ud83d\\ude00\\"\\n'
    '+}\\n\\\\ No newline at end of file\\n"'
)


def test_the_preview_as_json_text_is_the_stdlibs_text_of_the_preview():
    change = FileChange(Path("/x/a.json"), None, MADE)
    assert change.preview_json == MADE_JSON
    assert "preview" not in vars(change)  # made for it, not kept
    assert (
        change.preview
        == '--- /dev/null\n+++ b/a.json\n@@ -0,0 +1,3 @@\n+{\n+  "t": "é😀"\n+}\n\\ No newline at end of file\n'
    )


def test_the_preview_made_already_is_the_one_written_as_json(monkeypatch):
    change = FileChange(Path("/x/a.json"), b'{\n  "t": 1\n}', MADE)
    made = change.preview
    calls = []
    monkeypatch.setattr(planmod, "file_diff", lambda c: calls.append(c) or "not this")
    assert change.preview_json == json.dumps(made)
    assert calls == []


def _home(tmp_path: Path, rows: int = 3) -> Path:
    home, sessions, db = home_dirs(tmp_path)
    write_json(sessions / "have.json", sidecar("have", 2, updated_at=1.0))
    for i in range(rows):
        seed_state_db(db, sid=f"row{i}", messages=2, create=i == 0)
    return home


def test_a_plan_whose_diffs_are_shown_as_json_holds_their_json_text_not_the_previews(tmp_path):
    home = _home(tmp_path)
    with early_staging(json_diffs=True):
        plan = materialize.plan(make_ctx(home), None)
    assert len(plan.changes) == 4  # three new sidecars and the index
    for change in plan.changes:
        assert {"preview_json", "sha256_before", "sha256_after"} <= set(vars(change))
        assert "preview" not in vars(change)
        assert change.preview_json == json.dumps(file_diff(change))
    for staged in (early_staging(), None):
        if staged is None:
            plan = materialize.plan(make_ctx(home), None)
        else:
            with staged:
                plan = materialize.plan(make_ctx(home), None)
        for change in plan.changes:
            assert "preview" in vars(change) and "preview_json" not in vars(change)


def test_repair_write_json_shows_the_preview_of_each_file_written(tmp_path, monkeypatch):
    home = _home(tmp_path)
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    out = io.StringIO()
    args = ["repair", "--home", str(home), "--action", "materialize", "--all", "--write", "--json"]
    with redirect_stdout(out):
        assert cli.main([*args, "--now", "1780000000"]) == 0
    text = out.getvalue()
    report = json.loads(text)
    assert text == json.dumps(report, ensure_ascii=True, indent=2) + "\n"
    sessions = home / "webui" / "sessions"
    shown = {Path(c["path"]).name: c["diff"] for c in report["plans"][0]["changes"]}
    assert sorted(shown) == ["_index.json", "row0.json", "row1.json", "row2.json"]
    for name in ("row0.json", "row1.json", "row2.json"):
        written = (sessions / name).read_bytes()
        assert shown[name] == file_diff(FileChange(sessions / name, None, written))
        assert shown[name].startswith(f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1,")
