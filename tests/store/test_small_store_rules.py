"""Small rules of the store found by mutation testing (tests/MUTATION.md, third session), each written by hand."""

from __future__ import annotations

import pytest

from inspector.store.backup import _backup_predates_compress
from inspector.store.jsonfmt import _every_code_point
from inspector.store.scan import FactCache
from inspector.store.turn_journal import TurnJournalError, user_message_texts


def test_a_live_sidecar_without_a_context_list_counts_as_no_context_rows():
    """Rule: a backup with context rows predates the compress when the live sidecar has no context list
    (missing or not a list counts as 0 rows), and not when the backup has no more rows than it."""
    bak = {"context_messages": [{"role": "user", "content": "hi"}]}
    assert _backup_predates_compress({}, bak) is True
    assert _backup_predates_compress({"context_messages": "x"}, bak) is True
    assert _backup_predates_compress({"context_messages": [{"role": "user", "content": "a"}]}, bak) is False


def test_a_sidecar_whose_messages_is_a_number_is_named_by_its_type():
    """Rule: a truthy ``messages`` that cannot be iterated makes hermes fail; the sentence names its type."""
    with pytest.raises(TurnJournalError) as caught:
        user_message_texts(b'{"messages": 5}')
    assert str(caught.value) == "the sidecar's messages is a int, not a list (hermes fails on it)"


def test_every_code_point_is_every_unicode_scalar_value_once_in_order():
    """Rule: U+0000..U+10FFFF without the 2,048 surrogates, in order."""
    text = _every_code_point()
    assert len(text) == 0x110000 - 0x800
    assert text == "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)


def test_adopted_cache_entries_are_kept_and_an_unchanged_one_saves_nothing(tmp_path):
    """Rule: entries another copy of the cache worked out are taken as they are; adopting an entry the
    cache already holds leaves nothing to write."""
    path = tmp_path / "cache.json"
    kind = next(iter(FactCache(None).entries))
    entry = [[1, 2, 3], {"messages": 4}]
    cache = FactCache(path)
    cache.adopt(kind, {"/s/a.json": entry})
    assert cache.entries[kind] == {"/s/a.json": entry}
    cache.save()
    before = path.stat().st_mtime_ns, path.stat().st_ino
    again = FactCache(path)
    again.adopt(kind, {"/s/a.json": entry})
    assert again.entries[kind] == {"/s/a.json": entry}
    again.save()
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == before
