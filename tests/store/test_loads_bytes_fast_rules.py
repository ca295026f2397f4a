"""``jsonfmt.loads_bytes_fast`` on a document that is one long integer: the run of digits starts at the
first byte and is no string, so the stdlib reads it (an exact int), not orjson (which rounds it to a
float beyond 64 bits)."""

from __future__ import annotations

import json

from inspector.store.jsonfmt import loads_bytes_fast


def test_a_bare_long_integer_at_the_first_byte_is_read_exactly() -> None:
    """30 digits from byte 0: the value is the int itself, as json.loads gives it."""
    data = b"123456789012345678901234567890"
    assert loads_bytes_fast(data) == 123456789012345678901234567890
    assert type(loads_bytes_fast(data)) is int
    assert loads_bytes_fast(data) == json.loads(data)


def test_a_long_integer_after_the_first_byte_is_read_exactly_too() -> None:
    """The same number in a list: its run starts at byte 1."""
    assert loads_bytes_fast(b"[123456789012345678901234567890]") == [123456789012345678901234567890]
