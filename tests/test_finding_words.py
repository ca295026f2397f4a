"""Plain words for findings (issue 16, "no dead ends"): every finding of the demo home says what is
wrong, what to do now or why nothing can be done, and what to tell the user, without jargon."""

from __future__ import annotations

import re
import time

import pytest

from inspector.demo import build_demo_home
from inspector.finding_words import _WORDS, blocked_reason, local_time, words_for
from inspector.findings import _HERMES_WORDS, Finding
from inspector.home import locate_home
from inspector.load import load_catalogue
from inspector.session_detail import load_detail

JARGON = re.compile(r"branch [AB]|splitlines|\b\d{9,}(\.\d+)?\b|_index\.json|sidecar|\bstream\b|\bseq\b")


@pytest.fixture(scope="module")
def demo_findings(tmp_path_factory):
    demo = build_demo_home(tmp_path_factory.mktemp("words") / "demo", now=time.time())
    home = locate_home(demo.home, None, None)
    cat = load_catalogue(home, now=time.time())
    found = list(cat.home_findings)
    for sid, row in cat.rows.items():
        found += list(row.findings)
        found += load_detail(home, sid).findings
    return found


def test_every_demo_finding_has_its_own_words_without_jargon(demo_findings):
    """Rule: each finding kind the demo shows has written words (no fallback), and neither the
    sentence nor its parts carry jargon, raw epochs or file-format names."""
    assert {f.kind for f in demo_findings} >= {
        "corrupt_sidecar",
        "pending_journal_recovery",
        "stale_pending_turn",
    }
    for f in demo_findings:
        assert f.kind in _WORDS, f.kind
        for button in (None, "Do it"):
            sentence = words_for(f, button).sentence()
            assert not JARGON.search(sentence), sentence
            assert sentence.count(" — ") == 2 and sentence.endswith(".")


def test_every_hermes_audit_kind_is_worded():
    """Rule: hermes' audit kinds all have words (a new kind would otherwise show a fallback)."""
    assert set(_HERMES_WORDS) <= set(_WORDS)


def test_the_three_parts_of_a_sentence():
    """Rule: a repair that applies names its button and key; one that cannot be pressed says why
    inline; a finding without a repair says why nothing can be done."""
    f = Finding(
        "corrupt_sidecar",
        "error",
        "hermes cannot load this sidecar: Expecting value: line 1",
        "abc",
        "restore-backup",
    )
    ok = words_for(f, "Restore from backup", "Ctrl+5")
    assert ok.can_act and "press “Restore from backup” (Ctrl+5)" in ok.sentence()
    assert "tell the user the chat will not open" in ok.sentence()
    off = words_for(
        f,
        "Restore from backup",
        "Ctrl+5",
        blocked=blocked_reason(None, ["nothing to do: abc.json has no .bak"], True),
    )
    assert not off.can_act and "cannot be used: nothing to do: abc.json has no .bak" in off.sentence()
    assert "tell the user this cannot be fixed from here yet" in off.sentence()  # not "it can be restored"
    none = words_for(Finding("journal_unreadable", "error", "run r1: bad", "abc"))
    assert "nothing to press: hermes recovers nothing" in none.sentence()
    assert words_for(f, "Restore from backup", planning=True).now.endswith("is being prepared")


def test_blocked_reasons():
    assert blocked_reason(None, None, False) == "it does not apply to this chat"
    assert blocked_reason("a file changed", [], True) == "refused (a file changed)"
    assert blocked_reason(None, [], True) == "there is nothing to change"
    assert blocked_reason(None, None, True, plan_error="boom") == "it could not be prepared (boom)"


def test_local_time_is_local_and_rejects_what_is_not_a_time():
    epoch = 1_796_139_723
    assert local_time(epoch) == time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))
    assert local_time(None) == local_time(True) == local_time(-5) == local_time(1e300) == ""


def test_the_state_db_banner_names_the_file_the_reason_and_what_is_missing():
    from inspector.finding_words import STATE_DB_MISSING, state_db_banner
    from inspector.findings import ERROR, Finding

    assert state_db_banner([Finding("index_unreadable", "warning", "x")]) is None
    banner = state_db_banner(
        [
            Finding(
                "state_db_unreadable",
                ERROR,
                "/h/state.db: /h/state.db is not an SQLite database",
                path="/h/state.db",
            )
        ]
    )
    first, second = banner.splitlines()
    assert first == "The agent's database /h/state.db cannot be read: it is not an SQLite database"
    assert all(words in second for words in STATE_DB_MISSING)
