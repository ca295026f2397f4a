"""How a long file name is shortened for the write path's temp and backup names (``plan.fit_name``).

Found by mutation testing (tests/MUTATION.md, seventeenth session): nothing called ``fit_name`` with a
name of exactly ``room`` bytes or with a name holding an undecodable byte, so a bound off by one and the
loss of the surrogate escapes passed. Expected names are written out here; the digest is computed with
hashlib on the name's bytes, written out by hand too.
"""

from __future__ import annotations

import hashlib

from inspector.plan import fit_name


def test_a_name_of_exactly_room_bytes_is_kept():
    """Rule: a name that takes ``room`` bytes fits (at most, not less than): five two-byte letters and
    three ASCII ones are 13 bytes, kept whole in a room of 13 and shortened in a room of 12."""
    assert fit_name("éééééabc", 13) == "éééééabc"
    digest = hashlib.sha256("éééééabc".encode()).hexdigest()[:16]
    # room 30: 13 bytes fit; room 12 leaves no head at all beside the 16-digit digest and its "~".
    assert fit_name("éééééabc", 30) == "éééééabc"
    assert fit_name("éééééabc", 12) == "~" + digest
    # a room under 17 keeps no head, even of a name that starts with an ASCII letter
    assert (
        fit_name("abcdefghijklmnopqrstu", 12)
        == "~" + hashlib.sha256(b"abcdefghijklmnopqrstu").hexdigest()[:16]
    )


def test_a_name_holding_an_undecodable_byte_is_counted_and_kept():
    """Rule: a file name read from a POSIX folder may hold a byte that is not UTF-8 (Python gives it as a
    lone surrogate); it is counted as that one byte and kept as it is, never an error."""
    name = "caf\udce9.json"  # the Latin-1 file name b"caf\xe9.json"
    assert fit_name(name, 9) == name
    assert fit_name(name, 200) == name


def test_a_long_name_with_an_undecodable_byte_gets_a_digest_of_its_bytes():
    """Rule: the digest is of the name's bytes, the undecodable byte as itself (0xE9), and the head
    drops it rather than failing."""
    name = "\udce9" + "b" * 40
    digest = hashlib.sha256(b"\xe9" + b"b" * 40).hexdigest()[:16]
    # room 27: a head of 10 bytes, of which the 0xE9 is dropped (not UTF-8), so nine "b".
    assert fit_name(name, 27) == "b" * 9 + "~" + digest


def test_a_long_name_is_cut_on_a_whole_letter_and_digested_whole():
    """Rule: past ``room`` bytes, the head is the name's first ``room - 17`` bytes cut back to a whole
    letter, then "~" and the first 16 hex digits of the SHA-256 of the whole name."""
    name = "é" * 100  # 200 bytes
    digest = hashlib.sha256(("é" * 100).encode()).hexdigest()[:16]
    # room 50: 33 bytes for the head, which end inside the 17th "é": 16 whole letters kept.
    assert fit_name(name, 50) == "é" * 16 + "~" + digest
    assert len(fit_name(name, 50).encode()) == 49
    plain = "a" * 300
    assert fit_name(plain, 137) == "a" * 120 + "~" + hashlib.sha256(b"a" * 300).hexdigest()[:16]
