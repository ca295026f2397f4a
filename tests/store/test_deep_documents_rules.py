"""A document nested deeper than the stdlib reads (hermes' ``json.loads`` raises RecursionError) is
not read by orjson instead, which takes 1,024 levels: ``fast_loads``, ``orjson_loads_shallow`` and
the sidecar facts give the stdlib's verdict (tests/MUTATION.md, eleventh session: defect 1). The
expected values are written out here; the depths are far from the stdlib's limit on either side
(600 levels parse from any test's stack, 995 never do)."""

from __future__ import annotations

from unittest import mock

import pytest

import inspector.store.jsonfmt as jsonfmt
from inspector.store.jsonfmt import _NOT_PARSED, PARSE_DEPTH_LIMIT, fast_loads, orjson_loads_shallow
from inspector.store.scan import sidecar_facts, sidecar_facts_many
from tests.repair.test_light_parse_depth_rules import _depth


def _nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def _sidecar(content: bytes) -> bytes:
    return b'{"title":"deep","messages":[{"role":"user","content":' + content + b"}]}"


def test_fast_loads_gives_the_stdlibs_recursion_error_for_995_levels() -> None:
    with pytest.raises(RecursionError):
        fast_loads(_nested(995))
    with pytest.raises(RecursionError):
        fast_loads(_nested(995).decode())
    with pytest.raises(RecursionError):
        fast_loads(_sidecar(_nested(995)), checked=True)


def test_fast_loads_reads_600_levels_as_the_stdlib_does() -> None:
    assert _depth(fast_loads(_nested(600))) == 600
    assert _depth(fast_loads(_nested(600).decode())) == 600


def test_the_limit_itself_is_read_by_orjson_one_more_level_is_not() -> None:
    """500 levels are 1,000 bytes (parsed as they are); 501 are 1,002 (parsed inside extra arrays)."""
    assert PARSE_DEPTH_LIMIT == 500
    assert _depth(orjson_loads_shallow(_nested(500))) == 500
    assert orjson_loads_shallow(_nested(501)) is _NOT_PARSED
    assert orjson_loads_shallow(_nested(501).decode()) is _NOT_PARSED
    assert orjson_loads_shallow(b"[" + b" " * 1200 + b"1]") == [1]  # long but shallow
    assert orjson_loads_shallow(" " * 1200 + '{"a":"\u00e9"}') == {"a": "\u00e9"}


def test_what_orjson_refuses_is_not_parsed_short_or_long() -> None:
    assert orjson_loads_shallow(b"[NaN]") is _NOT_PARSED
    assert orjson_loads_shallow(b"[NaN]" + b" " * 1200) is _NOT_PARSED
    assert orjson_loads_shallow(b"[1] [2]" + b" " * 1200) is _NOT_PARSED


def test_where_orjsons_own_limit_is_unknown_the_value_is_walked() -> None:
    with mock.patch.object(jsonfmt, "_orjson_depth_limit_is_known", return_value=False):
        assert _depth(orjson_loads_shallow(_nested(500) + b" " * 10)) == 500
        assert orjson_loads_shallow(_nested(501)) is _NOT_PARSED
        assert orjson_loads_shallow(b"[NaN]" + b" " * 1200) is _NOT_PARSED


def test_a_sidecar_nested_995_levels_is_unreadable_as_hermes_finds_it() -> None:
    data = _sidecar(_nested(995))
    for facts in (
        sidecar_facts(data, want_texts=False),
        sidecar_facts(data, want_texts=True),
        sidecar_facts_many([data])[0],
        sidecar_facts_many([data], want_texts=True)[0],
    ):
        assert facts["count"] == -1
        assert facts["error"] == "JSON nested too deeply to parse"


def test_a_sidecar_nested_600_levels_is_read_with_its_one_message() -> None:
    data = _sidecar(_nested(600))
    for facts in (sidecar_facts(data, want_texts=False), sidecar_facts_many([data])[0]):
        assert facts["count"] == 1 and facts["error"] is None
        assert facts["meta"]["title"] == "deep"
