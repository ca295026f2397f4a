"""A file nested too deeply for Python's json.loads (hermes' parser) is said in those words wherever
the inspector reads one: the sidecar's error, the exact save parse, the core transcript of the
session view (which used to let the RecursionError out and lose the whole view), and the home's
list, which says that hermes' own recovery audit fails on such a home as ``audit`` does.
Expected texts written out here."""

from __future__ import annotations

import pytest

from inspector.home import locate_home
from inspector.load import load_catalogue
from inspector.repair.save import parse_sidecar_exact
from inspector.session_detail import load_detail
from inspector.store.sidecar import SidecarError, parse_sidecar_bytes
from tests.recovery_helpers import home_dirs, sidecar, write_json

DEEP = b'{"session_id": "deep", "x": ' + b"[" * 995 + b"]" * 995 + b"}"
TOO_DEEP_WORDS = "JSON nested too deeply to parse"


@pytest.mark.parametrize("parse", [parse_sidecar_bytes, parse_sidecar_exact])
def test_a_deep_sidecar_is_said_to_be_nested_too_deeply(parse):
    with pytest.raises(SidecarError) as info:
        parse(DEEP)
    assert str(info.value) == TOO_DEEP_WORDS
    assert isinstance(info.value.__cause__, RecursionError)


@pytest.mark.parametrize("parse", [parse_sidecar_bytes, parse_sidecar_exact])
def test_a_broken_sidecar_is_still_not_valid_json(parse):
    with pytest.raises(SidecarError) as info:
        parse(b'{"session_id": ')
    assert str(info.value) == "not valid JSON: Expecting value: line 1 column 16 (char 15)"


def _home(tmp_path, *, deep: bool):
    base, sessions, _ = home_dirs(tmp_path)
    for i in range(3):
        write_json(sessions / f"s{i}.json", sidecar(f"s{i}", i))
    if deep:
        (sessions / "deep.json").write_bytes(DEEP)
    return locate_home(base)


def test_the_session_view_reads_a_deep_core_transcript_as_an_error(tmp_path):
    home = _home(tmp_path, deep=False)
    core = home.core_transcript("s1")
    core.parent.mkdir(parents=True)
    core.write_bytes(DEEP)
    detail = load_detail(home, "s1")
    assert detail.core is None
    assert detail.core_error == TOO_DEEP_WORDS
    assert detail.sidecar is not None  # the rest of the view is there


def test_the_list_says_hermes_own_audit_fails_first_among_the_home_findings(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    home = _home(tmp_path, deep=True)
    cat = load_catalogue(home, now=1.0)
    first = cat.home_findings[0]
    assert (first.kind, first.severity, first.session_id, first.action) == (
        "hermes_audit_fails",
        "error",
        None,
        None,
    )
    assert first.message == (
        "hermes' recovery audit would fail (HTTP 500) on a sidecar nested too deeply to parse: deep.json. "
        "Until that is mended, hermes-webui's recovery page lists nothing for this home."
    )
    assert cat.rows["deep"].sidecar.error == TOO_DEEP_WORDS


def test_a_home_hermes_can_audit_has_no_such_finding(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    cat = load_catalogue(_home(tmp_path, deep=False), now=1.0)
    assert [f.kind for f in cat.home_findings if f.kind == "hermes_audit_fails"] == []


def test_without_hermes_audit_nothing_is_said_about_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    cat = load_catalogue(_home(tmp_path, deep=True), now=1.0, with_hermes_audit=False)
    assert "hermes_audit_fails" not in [f.kind for f in cat.home_findings]
