"""A sidecar that parses but that hermes' ``Session()`` refuses: ``"workspace": null`` and its kin.

hermes-webui's ``Session.__init__`` (api/models.py) turns ``workspace`` (whenever the key is
present), and ``created_workspace``, ``worktree_path``, ``worktree_repo_root`` (when truthy) into
``str(Path(value).expanduser().resolve())``. ``Session.load`` and ``load_metadata_only`` both
construct the session, so such a chat does not open in the WebUI, and hermes' index rebuild
leaves it out. Rules pinned: exactly those values are flagged (and exactly those make the
inspector's own ``load_session`` fail, as the repairs see it); the finding shows in ``list``,
``show`` and ``audit``, from a fresh scan and from the scan cache; a healthy sibling is not flagged.
With ``HERMES_WEBUI_SRC`` set, hermes' own ``Session(**data)`` is asked too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.finding_words import words_for
from inspector.home import locate_home
from inspector.load import full_audit, load_catalogue
from inspector.report import format_audit, format_detail, format_list
from inspector.session_detail import load_detail
from inspector.store import scan as scan_mod
from inspector.store.sidecar import load_session, path_field_problem

UNKNOWN_USER = "~nosuchuser_zz9/project"

# (the sidecar's extra keys, whether hermes' Session() raises)
CASES = [
    ({"workspace": None}, True),
    ({"workspace": 5}, True),
    ({"workspace": 1.5}, True),
    ({"workspace": True}, True),
    ({"workspace": False}, True),
    ({"workspace": ["/tmp"]}, True),
    ({"workspace": {"path": "/tmp"}}, True),
    ({"workspace": "/tmp/a\x00b"}, True),
    ({"workspace": UNKNOWN_USER}, True),
    ({}, False),  # no key: hermes' default workspace
    ({"workspace": ""}, False),  # Path("") is the current folder
    ({"workspace": "/tmp/project"}, False),
    ({"workspace": "~/project"}, False),
    ({"workspace": "relative/dir"}, False),
    ({"workspace": "/tmp", "created_workspace": None}, False),  # falsy: the workspace is used
    ({"workspace": "/tmp", "created_workspace": 0}, False),
    ({"workspace": "/tmp", "created_workspace": []}, False),
    ({"workspace": "/tmp", "created_workspace": 7}, True),
    ({"workspace": "/tmp", "created_workspace": ["/tmp"]}, True),
    ({"workspace": "/tmp", "created_workspace": "/tmp/\x00"}, True),
    ({"workspace": "/tmp", "worktree_path": {"a": 1}}, True),
    ({"workspace": "/tmp", "worktree_path": False}, False),
    ({"workspace": "/tmp", "worktree_repo_root": 3}, True),
    ({"workspace": "/tmp", "worktree_repo_root": ""}, False),
]


def _sidecar(sid: str, **extra) -> dict:
    return {
        "session_id": sid,
        "title": f"chat {sid}",
        "created_at": 1_780_000_000.0,
        "updated_at": 1_780_000_100.0,
        "messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
        **extra,
    }


def _case_id(extra: dict) -> str:
    """The case's keys and values, a NUL written <NUL>: pytest escapes the id's backslash, and the
    escaped id given back was not found by a second collection in the same process (mutmut's run)."""
    return repr(extra).replace("\\x00", "<NUL>")


@pytest.mark.parametrize(("extra", "raises"), CASES, ids=[_case_id(c[0]) for c in CASES])
def test_exactly_the_values_hermes_refuses_are_flagged(extra: dict, raises: bool) -> None:
    raw = _sidecar("aaaa00000001", **extra)
    problem = path_field_problem(raw)
    assert (problem is not None) is raises
    if raises:
        key = next(
            k
            for k in ("created_workspace", "worktree_path", "worktree_repo_root", "workspace")
            if k in extra and (k == "workspace" or extra[k])
        )
        assert f"its {key} " in problem
    # the repairs load a sidecar with load_session: it fails on the very same values
    try:
        load_session(raw, now=1_780_000_200.0, cwd=Path("/tmp"))
        loaded = True
    except (TypeError, ValueError, RuntimeError):
        loaded = False
    assert loaded is not raises


def test_null_workspace_is_said_in_words() -> None:
    assert path_field_problem(_sidecar("a", workspace=None)) == (
        "its workspace is null, not a folder path (hermes' Session() raises TypeError)"
    )


@pytest.fixture
def home(tmp_path):
    sessions = tmp_path / "webui" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "badbad000001.json").write_text(
        json.dumps(_sidecar("badbad000001", workspace=None), indent=2)
    )
    (sessions / "good00000001.json").write_text(
        json.dumps(_sidecar("good00000001", workspace="/tmp"), indent=2)
    )
    return locate_home(tmp_path)


def _kinds(findings) -> list[str]:
    return [f.kind for f in findings]


@pytest.mark.parametrize("cached", [False, True])
def test_the_list_shows_a_null_workspace_as_an_error(home, cached: bool, monkeypatch) -> None:
    if cached:  # the second scan answers from the fact cache
        monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)  # files this new are cached too
        load_catalogue(home, now=time.time())
        (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
        assert b'"load_error"' in cache_file.read_bytes()
        monkeypatch.setattr(scan_mod, "sidecar_facts", None)  # a fresh parse would fail now
    cat = load_catalogue(home, now=time.time())
    bad, good = cat.rows["badbad000001"], cat.rows["good00000001"]
    assert "sidecar_unloadable" in _kinds(bad.findings) and bad.health == "error"
    assert "sidecar_unloadable" not in _kinds(good.findings) and good.health != "error"
    (finding,) = [f for f in bad.findings if f.kind == "sidecar_unloadable"]
    assert finding.message == (
        "hermes cannot open this chat: its workspace is null, not a folder path "
        "(hermes' Session() raises TypeError)"
    )
    assert finding.action is None and finding.path.endswith("badbad000001.json")
    line = next(
        ln for ln in format_list(cat.sorted_rows(), cat.home_findings).splitlines() if "badbad000001" in ln
    )
    assert line.startswith("error ")
    words = words_for(finding)
    assert "hermes cannot open the chat" in words.what and not words.can_act


def test_show_and_audit_name_it(home) -> None:
    detail = load_detail(home, "badbad000001")
    assert "sidecar_unloadable" in _kinds(detail.findings)
    assert "hermes cannot open this chat: its workspace is null" in format_detail(detail)
    assert "sidecar_unloadable" not in _kinds(load_detail(home, "good00000001").findings)
    report = full_audit(home, now=time.time())
    kinds = [(f["kind"], f["session_id"]) for f in report["inspector"]["findings"]]
    assert ("sidecar_unloadable", "badbad000001") in kinds
    assert ("sidecar_unloadable", "good00000001") not in kinds
    assert "badbad000001: hermes cannot open this chat" in format_audit(report)


HERMES_SRC = os.environ.get("HERMES_WEBUI_SRC")


@pytest.mark.skipif(not HERMES_SRC, reason="set HERMES_WEBUI_SRC to a hermes-webui checkout")
def test_hermes_session_refuses_exactly_the_flagged_values(tmp_path) -> None:
    """hermes' own Session(**data), in a child process with a private HERMES_HOME."""
    probe = (
        "import json, sys\n"
        f"sys.path.insert(0, {HERMES_SRC!r})\n"
        "import api.models as m\n"
        "out = []\n"
        "for raw in json.loads(sys.stdin.read()):\n"
        "    try:\n"
        "        m.Session(**raw)\n"
        "        out.append(False)\n"
        "    except Exception:\n"
        "        out.append(True)\n"
        "print(json.dumps(out))\n"
    )
    home = tmp_path / "hermes-home"
    (home / "webui" / "sessions").mkdir(parents=True)
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_WEBUI_STATE_DIR": str(home / "webui")}
    raws = [_sidecar("cccc00000001", **extra) for extra, _ in CASES]
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=json.dumps(raws),
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    raised = json.loads(done.stdout.strip().splitlines()[-1])
    assert raised == [path_field_problem(raw) is not None for raw in raws]
    assert raised == [r for _, r in CASES]


def test_a_path_field_after_an_absent_one_is_still_looked_at() -> None:
    """Rule: every path field the file holds is looked at, whichever fields before it are absent
    (a sidecar without a workspace key is common: hermes' default is used)."""
    raw = {"session_id": "a", "messages": [], "worktree_repo_root": 7}
    assert path_field_problem(raw) == (
        "its worktree_repo_root is the number 7, not a folder path (hermes' Session() raises TypeError)"
    )


def test_an_unknown_user_is_named_without_the_rest_of_the_path() -> None:
    raw = _sidecar("a", workspace="~nosuchuser4242 x/projects/app")
    assert path_field_problem(raw) == (
        "its workspace '~nosuchuser4242 x' names a user this machine does not know "
        "(hermes' Session() raises RuntimeError)"
    )


def test_a_path_field_after_an_empty_one_is_still_looked_at() -> None:
    """Rule: an empty optional path field (``""``: hermes uses the workspace) is skipped, and the
    fields after it are still looked at."""
    raw = _sidecar("a", workspace="/tmp", created_workspace="", worktree_repo_root=7)
    assert path_field_problem(raw) == (
        "its worktree_repo_root is the number 7, not a folder path (hermes' Session() raises TypeError)"
    )
