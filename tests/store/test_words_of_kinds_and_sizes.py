"""The words the store puts in its errors: a JSON value's kind, a file's size (mutation testing, tests/MUTATION.md).

Each expected sentence is written out by hand: the reader sees "its workspace is a list", never a
Python repr, and a size in bytes, MB (2**20 bytes) or GB (2**30 bytes) with one decimal.
"""

from __future__ import annotations

import errno

import pytest

from inspector.store.files import TooLargeToLoad, _size_text
from inspector.store.sidecar import _json_kind, path_field_problem

TYPE_ERROR = "not a folder path (hermes' Session() raises TypeError)"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ([], "a list"),
        (["/tmp"], "a list"),
        ({}, "an object"),
        ({"path": "/tmp"}, "an object"),
        (3, "the number 3"),
        (1.5, "the number 1.5"),
    ],
)
def test_a_workspace_that_is_not_a_string_is_named_by_its_json_kind(value, words):
    """Rule: hermes' Session() raises TypeError on a non-string workspace; the finding names the JSON kind."""
    assert path_field_problem({"workspace": value}) == f"its workspace is {words}, {TYPE_ERROR}"


def test_a_value_of_no_json_kind_is_named_by_its_python_type():
    """Rule: a value JSON cannot hold (only reachable from Python) is named by its type, not as null."""
    assert _json_kind((1, 2)) == "tuple"
    assert _json_kind(b"x") == "bytes"


@pytest.mark.parametrize(
    ("size", "words"),
    [
        (0, "0 bytes"),
        (1, "1 bytes"),
        ((1 << 20) - 1, "1048575 bytes"),
        (1 << 20, "1.0 MB"),
        ((1 << 20) + (1 << 19), "1.5 MB"),
        (128 << 20, "128.0 MB"),
        ((1 << 30) - 1, "1024.0 MB"),
        (1 << 30, "1.0 GB"),
        ((1 << 31) + (1 << 29), "2.5 GB"),
    ],
)
def test_a_size_is_written_in_bytes_mb_or_gb(size, words):
    """Rule: below 1 MB (2**20) in bytes, below 1 GB (2**30) in MB, else in GB, with one decimal."""
    assert _size_text(size) == words


def test_too_large_to_load_is_an_efbig_oserror_naming_the_file_and_both_sizes():
    """Rule: the refusal of a file over the limit is OSError(EFBIG) with the file name and the sizes in words."""
    exc = TooLargeToLoad("/s/big.json", 3 << 30, 128 << 20)
    assert isinstance(exc, OSError)
    assert exc.errno == errno.EFBIG
    assert exc.filename == "/s/big.json"
    assert exc.strerror == "too large to load safely (3.0 GB; the limit is 128.0 MB)"
    assert (exc.size, exc.limit) == (3 << 30, 128 << 20)
    assert str(exc) == "[Errno 27] too large to load safely (3.0 GB; the limit is 128.0 MB): '/s/big.json'"
