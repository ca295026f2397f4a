"""The journal's events without msgspec (an optional speed-up): the plain ``JournalEvent`` class.

Fifth session of issue 21 (tests/MUTATION.md). With msgspec installed, ``JournalEvent`` is msgspec's
struct and the plain class is never built, so no other test reaches its ``__init__``: here the
module is loaded once more, in a private copy, with ``import msgspec`` failing.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest


@pytest.fixture
def journal_without_msgspec(monkeypatch):
    monkeypatch.setitem(sys.modules, "msgspec", None)  # `import msgspec` raises ImportError
    spec = importlib.util.find_spec("inspector.store.journal")
    module = importlib.util.module_from_spec(spec)
    # a private copy, under the module's name while the test runs (dataclasses look it up there);
    # the module every other import holds is put back afterwards
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    assert module._msgspec is None and module._EVENT_DECODER is None
    return module


def test_each_event_keeps_the_five_fields_the_repairs_read(journal_without_msgspec):
    """Rule: without msgspec an event is the plain class, holding ``event``, ``type``,
    ``created_at``, ``seq`` and ``payload`` as the line says them (None when absent)."""
    data = (
        b'{"event": "token", "type": "t", "created_at": 1.5, "seq": 1, "payload": {"text": "hi"}, "x": 0}\n'
        b'{"seq": 2}\n'
    )
    first, second = journal_without_msgspec.scan_journal_bytes(data).events.outputs()
    assert type(first) is journal_without_msgspec.JournalEvent
    assert (first.event, first.type, first.created_at, first.seq, first.payload) == (
        "token",
        "t",
        1.5,
        1,
        {"text": "hi"},
    )
    assert (second.event, second.type, second.created_at, second.seq, second.payload) == (
        None,
        None,
        None,
        2,
        None,
    )
    assert repr(second) == "JournalEvent(event=None, type=None, created_at=None, seq=2, payload=None)"
