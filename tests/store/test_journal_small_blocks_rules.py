"""The repairs' streaming read of a run journal gives what hermes' ``_read_jsonl`` gives, wherever the
file is cut into pieces.

Rule written while working mutation survivors (tests/MUTATION.md, ninth session): ``journal._scan`` reads
a journal a few megabytes at a time, and only journals larger than one piece (the slow tests'
200,000-event file) reached its code that carries line numbers, torn lines and invalid bytes across
pieces. Here the pieces are a few bytes, and the expected value is hermes' own reader (``json.loads``
per ``str.splitlines()`` line), never the code under test.

It found a defect at every piece size: msgspec's ``decode_lines`` reads a stream of values, so the
lines ``{`` and ``}`` were one object to the streaming read (no event, and not the two malformed lines
hermes reports); now a piece whose values are not one per line goes to the exact path.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

import inspector.store.journal as journal
from tests.differential.parse_check import _same, hermes_run_events, streamed_run_events
from tests.store.test_quick_parse import journals


@given(data=journals(), block=st.sampled_from([1, 2, 3, 5, 8, 13, 64, 1 << 22]))
def test_the_streaming_read_in_pieces_of_any_size_is_hermes_read(data: bytes, block: int) -> None:
    with mock.patch.object(journal, "BLOCK_BYTES", block):
        streamed = streamed_run_events(data)
    assert _same(streamed, hermes_run_events(data))


def test_pieces_of_a_few_bytes_over_lines_hermes_skips_and_tears() -> None:
    data = b'{"seq":1}\n\n  \n[1]\n{"a":"x\xe2\x80\xa8y"}\n{"seq":2}\r\n{"bad\n{"seq":3}'
    for block in (1, 4, 7, 16):
        with mock.patch.object(journal, "BLOCK_BYTES", block):
            assert streamed_run_events(data) == hermes_run_events(data)
    with mock.patch.object(journal, "BLOCK_BYTES", 4):
        assert streamed_run_events(data + b"\n\xff\n") == "unreadable"


def test_a_value_over_two_lines_is_two_lines_hermes_skips() -> None:
    """The defect the property found (at the default piece size too): hand-written expected values."""
    for block in (3, 1 << 22):
        with mock.patch.object(journal, "BLOCK_BYTES", block):
            assert streamed_run_events(b'{"a":1}\n{\n}\n') == (
                [{"a": 1}],
                [{"line": 2, "raw": "{"}, {"line": 3, "raw": "}"}],
            )
            assert streamed_run_events(b"{} {}\n{}\n") == ([{}], [{"line": 1, "raw": "{} {}"}])
