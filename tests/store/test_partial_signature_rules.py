"""hermes' ``_partial_message_signature`` (api/models.py), field by field: what makes two adjacent
``_partial`` assistant rows the same, so that loading keeps only the first (tests/MUTATION.md, fourth
session). Every expected tuple is written out by hand from hermes' source."""

from __future__ import annotations

from inspector.store.sidecar import _partial_signature, collapse_duplicate_partials


def test_content_and_reasoning_are_stripped_text_and_missing_ones_are_empty():
    """Rule: ``str(content or '').strip()``, the same for ``reasoning``; no tool calls is ``()``."""
    assert _partial_signature({"content": "  half \n", "reasoning": "\tthought "}) == ("half", "thought", ())
    assert _partial_signature({}) == ("", "", ())
    assert _partial_signature({"content": None, "reasoning": 0, "_partial_tool_calls": None}) == ("", "", ())
    assert _partial_signature({"content": 12, "reasoning": [1]}) == ("12", "[1]", ())


def test_a_tool_call_is_its_name_sorted_json_args_flags_and_preview():
    """Rule: each call gives (str(name or ''), json.dumps(args or {}, ensure_ascii=False, sort_keys=True,
    default=str), bool(done), bool(is_error), str(preview or snippet or ''))."""
    msg = {
        "content": "x",
        "_partial_tool_calls": [
            {
                "name": "terminal",
                "args": {"zeta": "é", "alpha": [1, 2]},
                "done": 1,
                "is_error": "yes",
                "preview": "out",
                "snippet": "not this",
            }
        ],
    }
    assert _partial_signature(msg) == (
        "x",
        "",
        (("terminal", '{"alpha": [1, 2], "zeta": "é"}', True, True, "out"),),
    )


def test_a_bare_tool_call_has_empty_defaults():
    """Rule: no name is ``""``, no args is ``"{}"``, done and is_error default to False, no preview
    nor snippet is ``""``."""
    assert _partial_signature({"_partial_tool_calls": [{}]}) == ("", "", (("", "{}", False, False, ""),))
    assert _partial_signature({"_partial_tool_calls": [{"name": None, "args": [], "done": 0}]}) == (
        "",
        "",
        (("", "{}", False, False, ""),),
    )


def test_the_snippet_stands_in_for_a_missing_preview():
    """Rule: ``preview or snippet``: an empty preview falls back to the snippet."""
    calls = [{"name": "a", "preview": "", "snippet": "tail"}, {"name": "b", "snippet": 5}]
    assert _partial_signature({"_partial_tool_calls": calls}) == (
        "",
        "",
        (("a", "{}", False, False, "tail"), ("b", "{}", False, False, "5")),
    )


def test_non_dict_tool_calls_are_skipped_and_the_rest_kept_in_order():
    """Rule: a call that is not a dict is skipped (``continue``), the calls after it still count."""
    calls = ["terminal", None, {"name": "read"}, 7, {"name": "write", "done": True}]
    assert _partial_signature({"_partial_tool_calls": calls}) == (
        "",
        "",
        (("read", "{}", False, False, ""), ("write", "{}", True, False, "")),
    )


def test_args_json_cannot_write_fall_back_to_their_str():
    """Rule: ``default=str`` writes an unknown value by its str(); when ``json.dumps`` raises (keys of
    mixed types cannot be sorted) the args are ``str(args or '')``."""

    class Odd:
        def __str__(self) -> str:
            return "odd!"

    sig = _partial_signature({"_partial_tool_calls": [{"args": {"v": Odd()}}]})
    assert sig == ("", "", (("", '{"v": "odd!"}', False, False, ""),))
    sig = _partial_signature({"_partial_tool_calls": [{"args": {1: "a", "b": 2}}]})
    assert sig == ("", "", (("", "{1: 'a', 'b': 2}", False, False, ""),))


def test_args_that_are_a_string_are_written_as_a_json_string():
    """Rule: ``json.dumps`` of a string args quotes it (non-ASCII kept, ``ensure_ascii=False``)."""
    assert _partial_signature({"_partial_tool_calls": [{"args": "ls ü"}]}) == (
        "",
        "",
        (("", '"ls ü"', False, False, ""),),
    )


def test_partials_differing_only_in_whitespace_collapse_and_in_a_flag_do_not():
    """Rule: adjacent partials with the same signature collapse to the first; a changed flag, preview or
    args order does (or, for the order, does not) make them differ."""
    first = {
        "role": "assistant",
        "_partial": True,
        "content": "so far",
        "_partial_tool_calls": [{"name": "t"}],
    }
    same = {**first, "content": "so far  ", "timestamp": 2}
    kept, dropped = collapse_duplicate_partials([first, same])
    assert kept == [first] and dropped is True
    done = {**first, "_partial_tool_calls": [{"name": "t", "done": True}]}
    kept, dropped = collapse_duplicate_partials([first, done])
    assert kept == [first, done] and dropped is False
    a = {**first, "_partial_tool_calls": [{"args": {"x": 1, "y": 2}}]}
    b = {**first, "_partial_tool_calls": [{"args": {"y": 2, "x": 1}}]}
    assert collapse_duplicate_partials([a, b]) == ([a], True)
