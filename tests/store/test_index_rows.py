"""Index rows straight from parsed sidecars equal hermes' load + ``compact()``.

``load_for_index`` is ``load_session`` with memoised path resolution; it must build the very
same session (same values, same types, same key order, the same exception) for any parsed
sidecar: every fixture and golden sidecar of the project, and generated hostile ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.store.index import (
    PathResolver,
    compact,
    load_for_index,
    rebuild_index,
    rebuild_rows,
)
from inspector.store.jsonfmt import dumps_pretty
from inspector.store.sidecar import META_KEYS, SidecarError, load_session, parse_sidecar_bytes, resolve_path
from tests.conftest import DATA
from tests.index_reference import old_rebuild_index

NOW = 1779900000.0
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - compared as data
        return None, (type(exc), str(exc))


def _typed(value):
    """A value with every type and key order made visible (``1 == 1.0 == True`` otherwise)."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def _same_load(raw: dict, cwd: Path) -> None:
    expected = _outcome(load_session, raw, now=NOW, cwd=cwd)
    got = _outcome(load_for_index, raw, now=NOW, resolve=PathResolver(cwd))
    assert (got[1] is None) == (expected[1] is None)
    if expected[1] is not None:
        assert got[1] == expected[1]
        return
    exp, sess = expected[0], got[0]
    assert _typed(sess.data) == _typed(exp.data)
    assert sess.count_hint == exp.count_hint
    if exp.session_id:
        assert _typed(_outcome(compact, sess)) == _typed(_outcome(compact, exp))


def _project_sidecars() -> list[Path]:
    return sorted(
        p for p in DATA.rglob("*.json") if p.parent.name == "sessions" and not p.name.startswith("_")
    )


@pytest.mark.parametrize("path", _project_sidecars(), ids=lambda p: str(p.relative_to(DATA)))
def test_load_for_index_equals_load_session_on_every_project_sidecar(path: Path, tmp_path: Path) -> None:
    try:
        raw = parse_sidecar_bytes(path.read_bytes())
    except SidecarError:
        return
    _same_load(raw, tmp_path)


def test_there_are_project_sidecars_to_compare() -> None:
    assert len(_project_sidecars()) >= 20


_text = st.text(max_size=10)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    _text,
    st.sampled_from(["", " ", "0", "~", "~/x", "a\x00b", "/tmp/../x", "."]),
)
_json = st.recursive(
    _scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3), max_leaves=10
)
_message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", None, 3])},
        optional={"content": _json, "_ts": _scalars, "timestamp": _scalars, "_partial": st.booleans()},
    ),
    _json,
)
_raw = st.builds(
    lambda meta, messages, extra: {**meta, "messages": messages, **extra},
    st.dictionaries(st.sampled_from(list(META_KEYS)), _json, max_size=20),
    st.one_of(st.lists(_message, max_size=6), _json),
    st.dictionaries(
        st.sampled_from(
            ["message_count", "tool_calls", "anchor_activity_scenes", "context_messages", "unknown"]
        ),
        _json,
        max_size=3,
    ),
)


@SETTINGS
@given(raw=_raw)
def test_load_for_index_equals_load_session_on_generated_sidecars(raw: dict, tmp_path_factory) -> None:
    _same_load(raw, tmp_path_factory.getbasetemp())


def test_path_resolver_answers_like_resolve_path_and_repeats_errors(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    resolve = PathResolver(tmp_path)
    for value in ("", "link", "link/sub", "/", "~", "rel/../x", str(tmp_path / "link")):
        assert resolve(value) == resolve_path(value, tmp_path) == resolve(value)
    for _ in range(2):
        with pytest.raises(ValueError) as got:
            resolve("bad\x00path")
        with pytest.raises(ValueError) as expected:
            resolve_path("bad\x00path", tmp_path)
        assert str(got.value) == str(expected.value)


@pytest.mark.slow
@SETTINGS
@given(raws=st.lists(_raw, max_size=6), ids=st.lists(st.sampled_from(["a", "b", "c", "", None]), max_size=6))
def test_rebuild_rows_keeps_the_old_dedup_and_order(raws, ids, tmp_path_factory) -> None:
    cwd = tmp_path_factory.getbasetemp()
    sessions = []
    for raw, sid in zip(raws, ids, strict=False):
        loaded = _outcome(load_session, {**raw, "session_id": sid}, now=NOW, cwd=cwd)[0]
        if loaded is not None and _outcome(compact, loaded)[1] is None:
            sessions.append(loaded)
    expected = _outcome(old_rebuild_index, sessions)
    assert _outcome(rebuild_index, sessions) == expected
    if expected[1] is None:
        rows = rebuild_rows(compact(s) for s in sessions)
        assert expected[0] == dumps_pretty(rows)
