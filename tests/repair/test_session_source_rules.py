"""Rules of ``repair/session_source.py``: the sidecar a run-journal repair loads.

* The load parses with orjson where that is exact (:func:`read_sidecar_exact`): the same session,
  or the same error in the same words, as :func:`~inspector.store.sidecar.read_sidecar`'s stdlib
  parse, on every golden sidecar and on hostile bytes.
* ``shared=True`` (the interrupted-turn repair) hands the planner ``loaded.data`` itself instead
  of a deep copy, only where the copy could not have failed; that object is the parse's own
  (no container shared with the module's defaults or with another load), a session too deep to
  copy is refused in the same words either way, and the plans are the same bytes with and
  without the copy.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.home import locate_home
from inspector.plan import Clock
from inspector.repair import interrupted, session_source
from inspector.repair.context import RepairContext
from inspector.repair.session_source import SHARED_MAX_DEPTH, load_session_for_repair, read_sidecar_exact
from inspector.store import sidecar as sidecar_mod
from inspector.store.files import Fingerprint, RawFile
from inspector.store.sidecar import SidecarError, dump_session, load_session, read_sidecar
from tests.conftest import GOLDEN

NOW = 1_779_500_000.0
SID = "src_sid"


def _raw(data: bytes) -> RawFile:
    return RawFile(Path("x.json"), data, Fingerprint.of_bytes(data))


def _outcome(reader, data: bytes, cwd: Path):
    try:
        loaded = reader(_raw(data), now=NOW, cwd=cwd)
    except SidecarError as exc:
        return ("error", str(exc))
    # repr: NaN != NaN, and -0.0 == 0.0; repr tells them apart and is equal for equal values
    return (
        repr(loaded.data),
        loaded.count_hint,
        loaded.dropped_keys,
        repr(loaded.odd_messages),
        loaded.collapsed_partials,
        loaded.odd_lists,
    )


def _golden_sidecars() -> list[Path]:
    return sorted(
        p for p in GOLDEN.glob("*/before/webui/sessions/*.json") if not p.name.startswith("_") and p.is_file()
    )


@pytest.mark.parametrize("path", _golden_sidecars(), ids=lambda p: f"{p.parts[-5]}/{p.name}")
def test_the_exact_parse_loads_every_golden_sidecar_as_the_stdlib_parse(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    assert _outcome(read_sidecar_exact, data, tmp_path) == _outcome(read_sidecar, data, tmp_path)


HOSTILE = [
    b"",
    b"[]",
    b"null",
    b"\xef\xbb\xbf{}",  # a BOM: hermes' read fails
    b'{"session_id": "a", "x": "\xff"}',
    b'{"session_id": "a", "x": NaN, "y": -Infinity, "z": 1e400}',
    b'{"session_id": "a", "n": 123456789012345678901234567890}',
    b'{"session_id": "a", "t": "12345678901234567890123"}',
    b'{"session_id": "a", "s": "\\ud83d"}',
    b'{"session_id": "a", "workspace": "a\\u0000b"}',
    b'{"session_id": "a", "session_id": "b", "messages": [1, {"role": "user"}]}',
    b'{"session_id": "a", "messages": {"not": "a list"}}',
    b'{"session_id": "a", "self": 1}',
    b'{"session_id": "a"} trailing',
    b'{"session_id": "a", "messages": [' + b"[" * 700 + b"]" * 700 + b"]}",
    b'{"session_id": "a", "messages": [' + b"[" * 480 + b"]" * 480 + b"]}",
    b'{"session_id": "a", "messages": [' + b"[" * 5000 + b"]" * 5000 + b"]}",
    b'{"session_id": "a", "created_at": 1e-05, "updated_at": -0.0}',
]


@pytest.mark.parametrize("data", HOSTILE)
def test_the_exact_parse_gives_the_stdlib_parse_session_or_error_on_hostile_bytes(
    data: bytes, tmp_path: Path
) -> None:
    assert _outcome(read_sidecar_exact, data, tmp_path) == _outcome(read_sidecar, data, tmp_path)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)
KEYS = st.sampled_from(
    ["session_id", "messages", "tool_calls", "title", "workspace", "pending_user_message", "model", "x"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(obj=st.dictionaries(KEYS, JSON_VALUES, max_size=6), indent=st.sampled_from([None, 2]))
def test_the_exact_parse_equals_the_stdlib_parse_on_generated_sidecars(
    obj: dict, indent, tmp_path: Path
) -> None:
    data = json.dumps(obj, ensure_ascii=False, indent=indent).encode("utf-8", "surrogatepass")
    assert _outcome(read_sidecar_exact, data, tmp_path) == _outcome(read_sidecar, data, tmp_path)


# ---------------------------------------------------------------- shared: no deep copy


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    return home


def _write(home: Path, raw: dict) -> None:
    data = load_session(json.loads(json.dumps(raw)), now=NOW, cwd=home).data
    (home / "webui" / "sessions" / f"{raw['session_id']}.json").write_bytes(dump_session(data))


def _ctx(home: Path) -> RepairContext:
    return RepairContext(home=locate_home(home, env={}), clock=Clock(NOW, NOW - 3600), cwd=home)


def _containers(obj, out: dict) -> dict:
    """id -> object of every dict and list reachable from ``obj`` (iteratively: deep values)."""
    todo = [obj]
    while todo:
        node = todo.pop()
        if isinstance(node, (dict, list)) and id(node) not in out:
            out[id(node)] = node
            todo.extend(node.values() if isinstance(node, dict) else node)
    return out


def _nested(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _session(**extra) -> dict:
    raw = {
        "session_id": SID,
        "title": "t",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "pending_user_message": "again",
        "active_stream_id": "s1",
        "pending_started_at": NOW - 120,
    }
    raw.update(extra)
    return raw


def test_shared_hands_over_the_loaded_object_itself_and_it_shares_no_container(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _write(home, _session())  # keys left out: the loader's defaults fill them
    shared = load_session_for_repair(_ctx(home), SID, shared=True)
    copied = load_session_for_repair(_ctx(home), SID)
    assert shared.working is shared.loaded.data
    assert copied.working is not copied.loaded.data and copied.working == copied.loaded.data
    assert shared.working == copied.working
    # the module's defaults (the [] and {} a missing key would get) are never handed over ...
    module = _containers([d for _, d in sidecar_mod._META_DEFAULTS], {})
    ours = _containers(shared.working, {})
    assert not set(ours) & set(module)
    # ... nor anything another load holds: each load is the parse's own objects
    other = _containers(load_session_for_repair(_ctx(home), SID, shared=True).working, {})
    assert not set(ours) & set(other)


def test_a_session_nested_deeper_than_the_bound_is_still_copied(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _write(home, _session(tool_calls=[_nested(SHARED_MAX_DEPTH + 5)]))
    source = load_session_for_repair(_ctx(home), SID, shared=True)
    assert source.refusal is None
    assert source.working is not source.loaded.data and source.working == source.loaded.data
    _write(home, _session(tool_calls=[_nested(SHARED_MAX_DEPTH - 3)]))
    assert load_session_for_repair(_ctx(home), SID, shared=True).working is not None


def test_a_session_too_deep_to_copy_is_refused_in_the_same_words_shared_or_not(tmp_path: Path) -> None:
    home = _home(tmp_path)
    depth = 480  # the stdlib parses it (its limit is the recursion limit), deepcopy cannot copy it
    text = dump_session(load_session(_session(), now=NOW, cwd=home).data)
    text = text.replace(b'"tool_calls": []', b'"tool_calls": [' + b"[" * depth + b"]" * depth + b"]")
    (home / "webui" / "sessions" / f"{SID}.json").write_bytes(text)
    shared = load_session_for_repair(_ctx(home), SID, shared=True)
    copied = load_session_for_repair(_ctx(home), SID)
    assert copied.refusal is not None and "too deeply" in copied.refusal
    assert shared.refusal == copied.refusal


def _plan_bytes(plan) -> tuple:
    return (
        [(str(c.path), c.before, c.after, c.fingerprint) for c in plan.changes],
        plan.summary,
        plan.warnings,
        plan.refusal,
        plan.result,
    )


INTERRUPTED_CASES = sorted(
    p.name
    for p in GOLDEN.iterdir()
    if (p / "case.json").is_file()
    and json.loads((p / "case.json").read_text(encoding="utf-8"))["action"] == "repair-interrupted"
)


@pytest.mark.parametrize("case", INTERRUPTED_CASES)
def test_the_interrupted_plan_is_the_same_with_and_without_the_copy(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = json.loads((GOLDEN / case / "case.json").read_text(encoding="utf-8"))
    home = tmp_path / "home"
    shutil.copytree(GOLDEN / case / "before", home)
    ctx = RepairContext(
        home=locate_home(home, env={}), clock=Clock(spec["now"], spec["server_started_at"]), cwd=home
    )
    shared = interrupted.plan(ctx, spec["session_id"])
    copies = []
    real = session_source.load_session_for_repair

    def always_copy(ctx, sid, *, shared=False):
        source = real(ctx, sid)  # shared=False: the deep copy
        copies.append(source.working is not None and source.working is not source.loaded.data)
        return source

    monkeypatch.setattr(interrupted, "load_session_for_repair", always_copy)
    ctx2 = RepairContext(
        home=locate_home(home, env={}), clock=Clock(spec["now"], spec["server_started_at"]), cwd=home
    )
    copied = interrupted.plan(ctx2, spec["session_id"])
    assert copies == [True]  # the second plan really worked on a copy
    assert _plan_bytes(shared) == _plan_bytes(copied)
    assert shared.changes, "the golden case writes something"


def test_a_float_edge_survives_the_shared_load(tmp_path: Path) -> None:
    # -0.0, 1e-05 and a big int come back as the stdlib reads them, in the object handed over
    home = _home(tmp_path)
    _write(home, _session(messages=[{"role": "user", "content": "a", "x": -0.0, "y": 1e-05, "z": 10**30}]))
    working = load_session_for_repair(_ctx(home), SID, shared=True).working
    row = working["messages"][0]
    assert math.copysign(1, row["x"]) == -1 and repr(row["y"]) == "1e-05" and row["z"] == 10**30
