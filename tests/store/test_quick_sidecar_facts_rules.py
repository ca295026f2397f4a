"""Rules of the quick sidecar pass (``scan.quick_sidecar_facts``) and of ``scan.user_texts_of``, each
expected value written out by hand.

Found by mutation testing (tests/MUTATION.md, ninth session): a folder path hermes' ``Session()``
cannot take is a load error on the quick pass too; a run of 640 digits (the lowest limit the stdlib's
integer parsing may have) sends the file to the full parse, 639 do not; a user row without content
counts as the empty text; the error for ``messages`` that cannot be iterated names its type.
"""

from __future__ import annotations

import json

import pytest

from inspector.store.scan import quick_sidecar_facts, user_texts_of


def _sidecar(**fields) -> bytes:
    return json.dumps({"session_id": "s1", "messages": [], **fields}).encode()


@pytest.mark.parametrize("want_texts", [False, True])
@pytest.mark.parametrize(
    ("fields", "error"),
    [
        (
            {"workspace": None},
            "its workspace is null, not a folder path (hermes' Session() raises TypeError)",
        ),
        (
            {"workspace": 5},
            "its workspace is the number 5, not a folder path (hermes' Session() raises TypeError)",
        ),
        (
            {"workspace": "/w\u0000x"},
            "its workspace holds a NUL character (hermes' Session() raises ValueError)",
        ),
    ],
)
def test_a_folder_path_hermes_cannot_take_is_a_load_error(fields, error, want_texts) -> None:
    facts = quick_sidecar_facts(_sidecar(**fields), want_texts=want_texts)
    assert facts is not None and facts["load_error"] == error


@pytest.mark.parametrize("want_texts", [False, True])
def test_good_folder_paths_and_none_at_all_are_no_load_error(want_texts) -> None:
    for data in (_sidecar(), _sidecar(workspace="/home/u/w")):
        facts = quick_sidecar_facts(data, want_texts=want_texts)
        assert facts is not None and "load_error" not in facts


def test_a_run_of_640_digits_goes_to_the_full_parse_639_do_not() -> None:
    assert quick_sidecar_facts(_sidecar(x=int("9" * 640))) is None
    facts = quick_sidecar_facts(_sidecar(x=int("9" * 639)))
    assert facts is not None and facts["count"] == 0


def test_a_user_row_without_content_or_with_empty_content_is_the_empty_text() -> None:
    rows = [
        {"role": "user"},
        {"role": "user", "content": ""},
        {"role": "user", "content": None},
        {"role": "user", "content": "  hi "},
        {"role": "assistant", "content": "not a user's"},
    ]
    facts = quick_sidecar_facts(_sidecar(messages=rows), want_texts=True)
    assert facts is not None and facts["texts"] == ["", "hi"] and facts["texts_error"] is None
    assert user_texts_of({"messages": rows}) == (["", "hi"], None)


def test_messages_that_cannot_be_iterated_are_named_by_their_type() -> None:
    assert user_texts_of({"messages": 5}) == (
        None,
        "the sidecar's messages is a int, not a list (hermes fails on it)",
    )
    assert user_texts_of({"messages": 2.5}) == (
        None,
        "the sidecar's messages is a float, not a list (hermes fails on it)",
    )
