"""Untrusted text on a terminal: escape control characters so content cannot drive the terminal.

Message content, titles and tool output come from users and models. Printed raw, an ESC
sequence could recolour, retitle or rewrite the terminal. Newlines and tabs stay; every
other C0/C1 control, DEL, the Unicode line/paragraph separators and the bidirectional
overrides become visible escapes such as ``\\x1b``. So does a lone surrogate (``"\\ud800"`` in a
JSON string, which hermes loads fine): it cannot be encoded as UTF-8, and printed raw it would
crash the output.
"""

from __future__ import annotations

import re

_KEEP = {"\n", "\t"}


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# Bidirectional overrides and isolates can make text read differently from its bytes
# ("Trojan Source"); they are escaped like controls.
_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}


def _unsafe(ch: str) -> bool:
    code = ord(ch)
    return (
        (code < 0x20 and ch not in _KEEP)
        or 0x7F <= code <= 0x9F
        or code in (0x2028, 0x2029)
        or code in _BIDI
        or 0xD800 <= code <= 0xDFFF
    )


# The same set as _unsafe(), as one character class: searching a long message runs in C.
_UNSAFE_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff"
    + "".join(re.escape(chr(c)) for c in sorted(_BIDI))
    + "]"
)


def safe_text(text: str) -> str:
    """``text`` with terminal-control characters escaped (newline and tab kept)."""
    if _UNSAFE_RE.search(text) is None:
        return text
    return _UNSAFE_RE.sub(lambda m: _escape(m.group()), text)


def one_line(text: object, limit: int = 120) -> str:
    """A short single-line preview of untrusted text."""
    s = text if isinstance(text, str) else "" if text is None else str(text)
    s = " ".join(s.split())
    return safe_text(s if len(s) <= limit else s[: limit - 1] + "…")
