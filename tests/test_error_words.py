"""Errors in words (issue 16): the window's failure messages never show an exception class name."""

from __future__ import annotations

import errno
import json

import pytest

from inspector.error_words import error_words


def test_a_file_error_is_its_reason_and_file():
    exc = PermissionError(errno.EACCES, "Permission denied", "/home/u/.hermes/state.db")
    assert error_words(exc) == "Permission denied: /home/u/.hermes/state.db"
    assert error_words(OSError(errno.ENOSPC, "")) == "the disk is full"


def test_an_error_with_a_sentence_is_that_sentence():
    assert error_words(ValueError("the sidecar has no messages list")) == "the sidecar has no messages list"


def test_json_and_utf8_errors_say_what_is_wrong_and_where():
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads('{"a": }')
    assert error_words(info.value) == "not valid JSON: Expecting value (line 1, column 7)"
    with pytest.raises(UnicodeDecodeError) as info2:
        b"ok\xff".decode("utf-8")
    assert error_words(info2.value) == "not valid UTF-8 text (byte 2)"


@pytest.mark.parametrize(
    "exc, words",
    [
        (MemoryError(), "there was not enough memory"),
        (RecursionError(), "the data is nested too deeply to read"),
        (KeyError("messages"), "a required field is missing: 'messages'"),
        (RuntimeError(), "an unexpected error (Details… shows what happened)"),
    ],
)
def test_errors_without_a_message_get_a_sentence_not_a_class_name(exc, words):
    assert error_words(exc) == words
    assert type(exc).__name__ not in error_words(exc)
