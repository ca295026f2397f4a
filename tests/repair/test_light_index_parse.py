"""Rule: an index rebuild parses each sidecar lightly (msgspec: the values a row takes are built, the
message texts only checked) and gets exactly the row, the observer's values and the verdict that the
exact parse gives (``save.parse_sidecar_exact``: hermes' ``json.loads`` of the UTF-8 text, the same
value or the same error), on every input: where the light parse could differ it hands the file to
the exact parse. The differential test's parse check compares the two on every sidecar it writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.repair import save
from inspector.repair.save import light_parse_sidecar
from tests.differential.parse_check import exact_only, index_row_outcome, light_or_exact

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcomes(data: bytes) -> tuple:
    return index_row_outcome(light_or_exact, data), index_row_outcome(exact_only, data)


def assert_same(data: bytes) -> None:
    light, exact = _outcomes(data)
    assert light == exact, data[:300]


BIG = st.one_of(st.integers(min_value=2**63, max_value=2**200), st.integers(max_value=-(2**63) - 1))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    BIG,
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10),
    st.sampled_from(["\ud800", "\u2028", "x\x00y", "", "  ", "/tmp", "~", "1.5", "1e3", " 7 "]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
MESSAGE = st.one_of(
    st.fixed_dictionaries(
        {"role": st.one_of(st.sampled_from(["user", "assistant", "tool"]), VALUES)},
        optional={
            "content": VALUES,
            "_ts": SCALARS,
            "timestamp": SCALARS,
            "_partial": st.one_of(st.booleans(), SCALARS),
            "reasoning": VALUES,
            "tool_calls": VALUES,
        },
    ),
    VALUES,
)
META = st.sampled_from(
    [
        "session_id",
        "title",
        "workspace",
        "created_workspace",
        "model",
        "model_provider",
        "created_at",
        "updated_at",
        "pinned",
        "input_tokens",
        "cache_read_tokens",
        "estimated_cost",
        "parent_session_id",
        "worktree_path",
        "compression_anchor_details",
        "gateway_routing",
        "gateway_routing_history",
        "pending_user_message",
        "pending_started_at",
        "message_count",
        "composer_draft",
        "post_compression_context_tokens_estimate",
        "compression_recovery_action",
        "self",
        "tool_calls",
        "context_messages",
        "anchor_activity_scenes",
        "unknown_key",
    ]
)


@st.composite
def sidecars(draw) -> bytes:
    meta = draw(st.dictionaries(META, VALUES, max_size=8))
    obj = {"session_id": draw(st.sampled_from(["a", "", None, 5, "x y"])), **meta}
    messages = draw(st.one_of(st.lists(MESSAGE, max_size=5), VALUES))
    if draw(st.booleans()):
        obj["messages"] = messages
    style = draw(st.sampled_from(["pretty", "compact", "ascii"]))
    if style == "pretty":
        text = json.dumps(obj, ensure_ascii=False, indent=2)
    elif style == "compact":
        text = json.dumps(obj, ensure_ascii=False)
    else:
        text = json.dumps(obj)
    return text.encode("utf-8", "surrogatepass")


@SETTINGS
@given(sidecars())
def test_rows_of_generated_sidecars_equal_the_exact_parse(data: bytes) -> None:
    assert_same(data)


_EDITS = st.one_of(
    st.sampled_from(
        [b"", b"[", b"]", b"{", b"}", b",", b":", b'"', b"\\", b"\\u", b"\\ud800", b"0", b"-", b".", b"e"]
        + [b"NaN", b"Infinity", b"1e400", b"123456789012345678901234", b"\xff", b"\xc3", b"\xed\xa0\x80"]
        + [b"\x00", b"\x0c", b"\t", b"\xef\xbb\xbf", b"true", b"null", b"],[", b"}],[{", b'"_partial": 1,']
    ),
    st.binary(max_size=3),
)


@SETTINGS
@given(sidecars(), st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 3), _EDITS), max_size=3))
def test_rows_of_damaged_sidecars_equal_the_exact_parse(data: bytes, edits) -> None:
    for at, cut, text in edits:
        i = at % (len(data) + 1)
        data = data[:i] + text + data[i + cut :]
    assert_same(data)


CASES = {
    "invalid UTF-8 in a message text": b'{"session_id": "a", "messages": [{"role": "user", "content": "\xff"}]}',
    "UTF-8 of a surrogate in a skipped key": b'{"session_id": "a", "tool_calls": ["\xed\xa0\x80"]}',
    "lone surrogate escape in a message text": b'{"session_id": "a", "messages": [{"content": "\\ud800"}]}',
    "lone surrogate escape in the title": b'{"session_id": "a", "title": "\\udc00", "messages": []}',
    "NaN in a message text": b'{"session_id": "a", "messages": [{"role": "user", "content": NaN}]}',
    "Infinity in a skipped key": b'{"session_id": "a", "context_messages": [Infinity]}',
    "1e400 as a time": b'{"session_id": "a", "messages": [{"role": "user", "_ts": 1e400}]}',
    "a big integer as a time": b'{"session_id": "a", "messages": [{"role": "user", "_ts": 1'
    + b"0" * 30
    + b"}]}",
    "an integer past the float range as a time": b'{"session_id": "a", "messages": [{"_ts": 1'
    + b"0" * 400
    + b"}]}",
    "a big message_count": b'{"session_id": "a", "message_count": 123456789012345678901234, "messages": []}',
    "a BOM": b'\xef\xbb\xbf{"session_id": "a"}',
    "trailing text": b'{"session_id": "a"} x',
    "two objects": b'{"session_id": "a"}, {"session_id": "b"}',
    "text that closes the wrapper": b'{"session_id": "a"}],[{"session_id": "b"}',
    "a top-level list": b'[{"session_id": "a"}]',
    "a top-level big integer": b"123456789012345678901234567890",
    "null": b"null",
    "empty": b"",
    "messages null": b'{"session_id": "a", "messages": null}',
    "messages an object": b'{"session_id": "a", "messages": {"role": "user"}}',
    "a message that is a number": b'{"session_id": "a", "messages": [1, {"role": "user"}]}',
    "duplicate keys": b'{"session_id": "a", "title": "x", "title": "y", "messages": [{"role": "user", "role": "tool"}]}',
    "escaped keys": b'{"session_\\u0069d": "a", "\\u0074itle": "t", "messages": [{"\\u0072ole": "user", "\\u005fts": 5}]}',
    "duplicate keys in a kept object": b'{"session_id": "a", "composer_draft": {"b": 1, "a": 2, "b": 3}}',
    "partial rows": b'{"session_id": "a", "messages": [{"role": "assistant", "_partial": true, "content": "x"},'
    b' {"role": "assistant", "_partial": true, "content": "x", "_ts": 9}]}',
    "an empty partial row last": b'{"session_id": "a", "messages": [{"role": "user", "_ts": 5},'
    b' {"role": "assistant", "_partial": 1, "content": " ", "_ts": 9}]}',
    "a key named self": b'{"session_id": "a", "self": 1}',
    "a folder as workspace": b'{"session_id": "a", "workspace": "/"}',
    "a form feed as whitespace": b'{"session_id": "a",\x0c"messages": []}',
}


@pytest.mark.parametrize("data", list(CASES.values()), ids=list(CASES))
def test_rows_of_odd_sidecars_equal_the_exact_parse(data: bytes) -> None:
    assert_same(data)


def _stdlib_deepest() -> int:
    lo, hi = 0, 20_000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            json.loads('{"k": ' + "[" * mid + "]" * mid + "}")
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


@pytest.mark.parametrize("key", ["title", "tool_calls", "messages"])
def test_nesting_near_the_stdlibs_limit_gets_the_exact_verdict(key: str) -> None:
    limit = _stdlib_deepest()
    for depth in range(max(1, limit - 30), limit + 6):
        nested = b"[" * depth + b"]" * depth
        if key == "messages":
            value = b'[{"role": "user", "content": ' + nested + b"}]"
        else:
            value = nested
        assert_same(b'{"session_id": "a", "' + key.encode() + b'": ' + value + b"}")


def test_the_light_parse_is_used_here_and_builds_no_message_text(monkeypatch) -> None:
    """On this interpreter msgspec is installed and its nesting limit checked, so the light parse
    runs (else the tests above would compare the exact parse with itself)."""
    assert save._light_decoder() is not False

    def exact(data: bytes) -> dict:
        raise AssertionError("the exact parse was asked")

    monkeypatch.setattr(save, "parse_sidecar_exact", exact)  # as a caller that fell back would
    data = json.dumps(
        {"session_id": "a", "title": "t", "messages": [{"role": "user", "content": "hello", "_ts": 5.5}]},
        indent=2,
    ).encode()
    assert light_parse_sidecar(data) == {
        "session_id": "a",
        "title": "t",
        "messages": [{"role": "user", "_ts": 5.5}],
    }


def test_a_nesting_limit_not_below_the_stdlibs_turns_the_light_parse_off(monkeypatch) -> None:
    monkeypatch.setattr(save, "_LIGHT_MARGIN", 10**6)
    monkeypatch.setattr(save, "_light", None)
    assert save._light_decoder() is False
    data = b'{"session_id": "a", "messages": [{"role": "user", "content": "x"}]}'
    assert light_parse_sidecar(data) is None
    monkeypatch.setattr(save, "_light", None)  # the next test probes again


def test_index_row_outcome_names_the_error(tmp_path: Path) -> None:
    assert index_row_outcome(exact_only, b"[]")[0] == "error"
    assert index_row_outcome(light_or_exact, b'{"session_id": "a"}')[0] == "row"
