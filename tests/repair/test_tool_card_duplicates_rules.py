"""A tool card is reported as a duplicate (hermes' quirk 2) only when a card of the same name from
the same stream is already in the session, and the first run, which finds none, reports none
(tests/MUTATION.md, tenth session). Expected values written out by hand."""

from __future__ import annotations

from tests.repair.test_journal_output import Journal, make_session, materialize


def test_the_first_run_reports_no_duplicate_and_the_second_reports_the_card(tmp_path) -> None:
    journal = Journal(tmp_path)
    journal.append("tool", {"name": "terminal", "preview": "ls"})
    journal.append("tool_complete", {"name": "terminal", "preview": "a.txt b.txt"})
    session = make_session([{"role": "user", "content": "q"}])
    first = materialize(session, journal)
    assert first.recovered is True
    assert first.duplicate_cards == []
    assert [c["name"] for c in first.cards_added] == ["terminal"]
    second = materialize(session, journal)
    assert second.duplicate_cards == ["terminal"]


def test_a_card_of_another_name_is_no_duplicate(tmp_path) -> None:
    journal = Journal(tmp_path)
    journal.append("tool", {"name": "terminal", "preview": "ls"})
    journal.append("tool", {"name": "browser", "preview": "open"})
    report = materialize(make_session([{"role": "user", "content": "q"}]), journal)
    assert report.duplicate_cards == []
    assert [c["name"] for c in report.cards_added] == ["terminal", "browser"]
