"""How a deep line is read and named (tests/MUTATION.md, fourth session): the words of a journal whose
line hermes may or may not read, and the reader thread a deep line is parsed on."""

from __future__ import annotations

import threading

from inspector.store import json_depth
from inspector.store.journal import JournalDepthUnsure


def test_an_unsure_journal_names_its_line_levels_and_hermes_band():
    """Rule: the line and its levels are named with hermes' band (up to 993 levels, fewer from deeper
    inside its own code), and that what hermes would recover cannot be known."""
    err = JournalDepthUnsure(7, 950)
    assert (err.line, err.levels) == (7, 950)
    assert str(err) == (
        "line 7 is nested 950 levels deep: whether hermes can read it depends on hermes itself (it reads "
        "up to 993 levels, fewer from deeper inside its own code), so what hermes would recover from this "
        "journal cannot be known"
    )


def test_a_deep_line_is_parsed_on_a_named_daemon_thread(monkeypatch):
    """Rule: a line deep enough to need it is parsed at the bottom of a fresh thread, named
    ``deep-json-line`` and a daemon (it never keeps the program alive), with the stdlib's value."""
    started: list[tuple[str, bool]] = []
    real = threading.Thread

    class Spy(real):
        def start(self) -> None:
            started.append((self.name, self.daemon))
            super().start()

    monkeypatch.setattr(json_depth.threading, "Thread", Spy)
    line = "[" * 950 + "]" * 950
    value = json_depth.loads_from_a_fresh_stack(line)
    assert started == [("deep-json-line", True)]
    for _ in range(950 - 1):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == []
    assert (
        json_depth.loads_from_a_fresh_stack("[1]") == [1] and len(started) == 1
    )  # a shallow line: no thread
