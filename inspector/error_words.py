"""A failure said in words for the window (issue 16: errors in words, not exception class names).

The message a person reads: what went wrong and, for a file, which one. The exception's class
and traceback stay in the log and behind the window's "Details…" button.
"""

from __future__ import annotations

import errno
import json

_ERRNO_WORDS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.ENOENT: "no such file or folder",
    errno.ENOSPC: "the disk is full",
    errno.EROFS: "the disk is read-only",
    errno.EIO: "the disk could not be read or written",
    errno.EISDIR: "a folder where a file was expected",
    errno.ENOTDIR: "a file where a folder was expected",
}

_CLASS_WORDS = {
    MemoryError: "there was not enough memory",
    RecursionError: "the data is nested too deeply to read",
    TimeoutError: "it took too long and was stopped",
    KeyboardInterrupt: "it was interrupted",
}


def error_words(exc: BaseException) -> str:
    """``exc`` as one paragraph a person can read: its own message (the inspector's errors are
    written as sentences), a file error as its reason and file, and for the few errors that
    carry no message a sentence of their own. Never the exception's class name."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 text (byte {exc.start})"
    if isinstance(exc, OSError) and (exc.strerror or exc.errno in _ERRNO_WORDS):
        reason = exc.strerror or _ERRNO_WORDS[exc.errno]
        return f"{reason}: {exc.filename}" if exc.filename else reason
    if isinstance(exc, KeyError) and exc.args:
        return f"a required field is missing: {exc.args[0]!r}"
    text = str(exc).strip()
    if text:
        return text
    for cls, words in _CLASS_WORDS.items():
        if isinstance(exc, cls):
            return words
    return "an unexpected error (Details… shows what happened)"
