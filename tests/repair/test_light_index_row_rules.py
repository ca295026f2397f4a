"""Rule: the index row of a lightly parsed sidecar is made in one step (``save.light_index_row``)
and is exactly ``compact(load_for_index(...))`` of it: the same keys in the same order, the same
values of the same types, or that pair's own exception (type and message), on every input.

Only objects the light parse gives are made that way (no ``_partial`` row, every message an
object, only the keys hermes' load reads); where the one step has any doubt (a value ``str()``
would walk is a container, the key ``self``, anything that raises) the pair runs and decides. The
last test runs hermes-webui's own recovery rebuild on a folder of such sidecars (with
``HERMES_WEBUI_SRC``) and compares its ``_index.json`` with the inspector's, byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.repair import save
from inspector.repair.save import (
    SaveContext,
    light_index_row,
    light_parse_sidecar,
    rebuild_index_from_sidecars,
)
from inspector.store.files import FileSnapshot
from inspector.store.index import PathResolver, compact, load_for_index
from inspector.store.sidecar import META_KEYS
from tests.conftest import DATA

SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = 1779900000.0


def _pair(obj: dict, resolve: PathResolver) -> tuple:
    try:
        return ("row", repr(compact(load_for_index(obj, now=NOW, resolve=resolve))))
    except Exception as exc:  # noqa: BLE001 - compared as data
        return ("error", type(exc).__name__, str(exc))


def _one_step(obj: dict, resolve: PathResolver) -> tuple:
    try:
        return ("row", repr(light_index_row(obj, NOW, resolve)))
    except Exception as exc:  # noqa: BLE001 - compared as data
        return ("error", type(exc).__name__, str(exc))


def assert_same_row(data: bytes, cwd: Path) -> dict | None:
    """The one step's outcome equals the pair's for the light parse's object of ``data``
    (repr: ``1`` and ``1.0``, ``True`` and ``1`` differ; key order shows); that object."""
    obj = light_parse_sidecar(data)
    if obj is not None:
        # one resolver each: a path's error or answer is kept by the resolver that saw it first
        assert _one_step(obj, PathResolver(cwd)) == _pair(obj, PathResolver(cwd)), data[:300]
    return obj


_text = st.text(max_size=8)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=10**300, max_value=10**320),  # past the float range: float() raises
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
    st.sampled_from(
        ["", " ", "0", "7", " 7 ", "-3", "1.5", "~", "~/x", "a\x00b", "/tmp/../x", ".", "OpenAI "]
    ),
)
_json = st.recursive(
    _scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3), max_leaves=8
)
_message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(st.sampled_from(["user", "assistant", "tool"]), _json),
        "content": _json,
        "_ts": _scalars,
        "timestamp": _scalars,
        "_partial": st.sampled_from([False, 0, "", None]),
        "tool_calls": _json,
    },
)
_obj = st.builds(
    lambda meta, messages, extra: {**meta, **({} if messages is None else {"messages": messages}), **extra},
    st.dictionaries(st.sampled_from(list(META_KEYS)), _json, max_size=24),
    st.one_of(st.none(), st.lists(_message, max_size=6)),
    st.dictionaries(
        st.sampled_from(["message_count", "tool_calls", "context_messages", "self", "unknown"]),
        _json,
        max_size=2,
    ),
)


@SETTINGS
@given(obj=_obj)
def test_the_row_of_a_generated_sidecar_is_the_pairs(obj: dict, tmp_path_factory) -> None:
    assert_same_row(json.dumps(obj, ensure_ascii=False).encode("utf-8"), tmp_path_factory.getbasetemp())


# what each coercion of load_session + compact does with values a sidecar may hold
ODD = {
    "numeric strings as counters": {"input_tokens": "2000", "cache_read_tokens": "500", "message_count": "7"},
    "float counters": {"input_tokens": 1000.9, "cache_read_tokens": 333.7, "message_count": 7.9},
    "a huge cache counter": {"input_tokens": 1, "cache_read_tokens": 10**400},
    "a huge message_count": {"message_count": 10**30},
    "a negative message_count": {"message_count": -4, "messages": [{"role": "user"}]},
    "true as message_count": {"message_count": True},
    "a time past the float range": {"messages": [{"role": "user", "_ts": 10**400}]},
    "a numeric string as time": {"messages": [{"role": "user", "timestamp": "1779000000.5"}]},
    "tool rows skipped for the time": {"messages": [{"role": "user", "_ts": 5}, {"role": "tool", "_ts": 9}]},
    "a pending prompt": {"pending_user_message": "hi", "pending_started_at": 12, "messages": []},
    "a pending prompt without a time": {"pending_user_message": "hi", "message_count": 0},
    "a provider to lower-case": {"model_provider": "  OpenRouter "},
    "a provider that is a number": {"model_provider": 12},
    "a provider that is a list": {"model_provider": ["x", {"y": 1}]},
    "a provider that is a dict": {"model_provider": {"a": [1]}},
    "a share token that is a list": {"share_token": [1]},
    "a worktree branch that is a dict": {"worktree_path": "/w", "worktree_branch": {"b": 1}},
    "a worktree": {
        "worktree_path": "/w",
        "worktree_branch": 7,
        "worktree_repo_root": "/r",
        "worktree_created_at": 3,
    },
    "an empty worktree path": {"worktree_path": "", "worktree_branch": "b"},
    "a worktree path that is a number": {"worktree_path": 5},
    "a workspace that is a number": {"workspace": 5},
    "a workspace with a NUL": {"workspace": "a\x00b"},
    "no workspace": {"title": "t"},
    "an empty workspace": {"workspace": ""},
    "a relative created workspace": {"workspace": "/tmp", "created_workspace": "x/../y"},
    "a created workspace that is a list": {"created_workspace": ["x"]},
    "compression recovery fields": {
        "compression_recovery_source_session_id": " abc ",
        "compression_recovery_action": 0,
        "compression_recovery": [],
        "recommended_recovery_action": "x",
    },
    "a blank compression action only": {"compression_recovery_action": "  "},
    "a compression action only": {"compression_recovery_action": " restore "},
    "a compression source only": {"compression_recovery_source_session_id": 5},
    "an estimate as text": {"post_compression_context_tokens_estimate": "12"},
    "a negative estimate": {"post_compression_context_tokens_estimate": -3},
    "a zero estimate": {"post_compression_context_tokens_estimate": 0},
    "an estimate of one": {"post_compression_context_tokens_estimate": 1},
    "an estimate past int()": {"post_compression_context_tokens_estimate": "9" * 5000},
    "containers of the wrong kind": {
        "compression_anchor_details": [],
        "context_engine_state": "x",
        "composer_draft": None,
        "process_wakeup_pause": 3,
        "gateway_routing": [],
        "gateway_routing_history": {},
    },
    "containers of the right kind": {
        "compression_anchor_details": {"a": 1},
        "context_engine_state": {"b": [2]},
        "compression_recovery": {"c": None},
        "gateway_routing": {"d": "x"},
        "gateway_routing_history": [{"e": 5}],
        "composer_draft": {"f": "draft"},
        "process_wakeup_pause": {"g": True},
    },
    "truthy bools": {
        "pinned": "yes",
        "archived": [0],
        "read_only": 0.5,
        "manual_title": {},
        "is_cli_session": 1,
    },
    "falsy times": {"created_at": 0, "updated_at": ""},
    "a parent session": {"parent_session_id": "p"},
    "a falsy session_id": {"session_id": 0},
    "a key named self": {"self": None},
    "a project id of zero": {"project_id": 0},
}


@pytest.mark.parametrize("fields", list(ODD.values()), ids=list(ODD))
def test_the_row_of_an_odd_sidecar_is_the_pairs(fields: dict, tmp_path: Path) -> None:
    raw = {"session_id": "a", "workspace": "/tmp", "messages": [{"role": "user", "_ts": 5}], **fields}
    if fields.get("title") == "t":
        del raw["workspace"]
    data = json.dumps(raw).encode()
    assert assert_same_row(data, tmp_path) is not None, "the light parse must take these"


def test_the_containers_a_row_carries_are_the_files_own(tmp_path: Path) -> None:
    """Rule: the objects (and the history list) an index row carries as they are come from their
    own keys of the file, each in its place; written out here, not taken from the pair."""
    raw = {"session_id": "a", "workspace": "/tmp", "messages": [], **ODD["containers of the right kind"]}
    obj = light_parse_sidecar(json.dumps(raw).encode())
    assert obj is not None
    row = light_index_row(obj, NOW, PathResolver(tmp_path))
    assert row["compression_anchor_details"] == {"a": 1}
    assert row["context_engine_state"] == {"b": [2]}
    assert row["compression_recovery"] == {"c": None}
    assert row["gateway_routing"] == {"d": "x"}
    assert row["gateway_routing_history"] == [{"e": 5}]
    assert row["composer_draft"] == {"f": "draft"}
    assert row["process_wakeup_pause"] == {"g": True}


def _project_sidecars() -> list[Path]:
    return sorted(
        p for p in DATA.rglob("*.json") if p.parent.name == "sessions" and not p.name.startswith("_")
    )


def test_the_row_of_every_project_sidecar_is_the_pairs(tmp_path: Path) -> None:
    light = 0
    for path in _project_sidecars():
        light += assert_same_row(path.read_bytes(), tmp_path) is not None
    assert light >= 20  # the light parse took most of them


def test_the_rebuild_takes_the_one_step_for_a_plain_sidecar(tmp_path: Path, monkeypatch) -> None:
    """The pair is not run for a sidecar the one step can make (it is what saves the time)."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for i in range(3):
        raw = {"session_id": f"s{i}", "title": "t", "workspace": str(tmp_path), "updated_at": i + 1.5}
        raw["messages"] = [{"role": "user", "content": "héllo", "_ts": i + 1}]
        (sessions / f"s{i}.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    ctx = SaveContext(sessions, FileSnapshot(), NOW, tmp_path)
    expected = rebuild_index_from_sidecars(ctx).data

    def no_pair(*args, **kwargs):
        raise AssertionError("load_for_index ran for a plain sidecar")

    monkeypatch.setattr(save, "load_for_index", no_pair)
    ctx = SaveContext(sessions, FileSnapshot(), NOW, tmp_path)
    assert rebuild_index_from_sidecars(ctx).data == expected
    assert b'"s2"' in expected


def test_a_doubtful_value_goes_to_the_pair(tmp_path: Path, monkeypatch) -> None:
    """A provider that is a container is not coerced by the one step: the pair makes the row."""
    calls = []
    real = save.load_for_index

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(save, "load_for_index", counting)
    obj = light_parse_sidecar(b'{"session_id": "a", "workspace": "/", "model_provider": [1]}')
    assert obj is not None
    row = light_index_row(obj, NOW, PathResolver(tmp_path))
    assert calls and row["model_provider"] == "[1]"


# ---------------------------------------------------------------- the UTF-8 check by blocks

_PIECES = st.sampled_from(
    ["é", "€", "😀", "\u07ff", "\uffff", "\U0010ffff"]  # valid characters of 2, 3 and 4 bytes
).map(lambda c: c.encode("utf-8")) | st.sampled_from(
    [
        b"\x80",
        b"\xbf",
        b"\xc3",
        b"\xe2\x82",
        b"\xf0\x9f\x98",
        b"\xc0\x80",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        b"\xff",
        b"\xfe",
        b"\xf8\x88\x80\x80\x80",
    ]
)  # bad: lone continuation bytes, cut sequences, an overlong form, a surrogate, past U+10FFFF


@st.composite
def _mixed_bytes(draw) -> bytes:
    """ASCII with characters and bad sequences, many of them at or around the block edges."""
    size = save._UTF8_BLOCK
    out = bytearray(b"a" * draw(st.integers(0, 3 * size)))
    for _ in range(draw(st.integers(0, 6))):
        piece = draw(_PIECES)
        edge = draw(st.integers(1, 3)) * size
        at = draw(st.one_of(st.integers(0, len(out)), st.integers(edge - 4, edge + 1)))
        at = min(max(at, 0), len(out))
        out[at:at] = piece
    return bytes(out)


@settings(max_examples=1500, deadline=None)
@given(_mixed_bytes())
def test_the_utf8_check_by_blocks_is_the_whole_decode(data: bytes) -> None:
    try:
        data.decode("utf-8")
        whole = True
    except UnicodeDecodeError:
        whole = False
    try:
        save.check_utf8(data)
        blocks = True
    except UnicodeDecodeError:
        blocks = False
    assert blocks == whole


@pytest.mark.parametrize("at", [0, 1, 4094, 4095, 4096, 4097, 8190, 8191, 8192])
@pytest.mark.parametrize(
    "piece", [b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\xc3", b"\xa9", b"\xf0\x9f\x98", b"\xed\xa0\x80"]
)
def test_a_character_or_a_bad_sequence_across_a_block_edge(at: int, piece: bytes) -> None:
    data = b"x" * at + piece + b"y" * 9000
    whole_ok = True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        whole_ok = False
    if whole_ok:
        save.check_utf8(data)
    else:
        with pytest.raises(UnicodeDecodeError):
            save.check_utf8(data)


# ---------------------------------------------------------------- against hermes-webui itself

SRC = os.environ.get("HERMES_WEBUI_SRC")

_HERMES_REBUILD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
sys.stdout = sys.stderr
import api.models as models
import api.session_recovery as recovery
from pathlib import Path
sessions = Path(sys.argv[2])
models.SESSION_DIR = sessions
models.SESSION_INDEX_FILE = sessions / "_index.json"
os.fsync = lambda fd: None
now = float(sys.argv[3])
time.time = lambda: now
os.chdir(sys.argv[4])
recovery._rebuild_recovery_session_index(sessions)
"""


def _hermes_sidecar(i: int, rnd) -> dict:
    """A sidecar hermes' rebuild loads (its own id, a workspace), with odd but loadable values."""
    pick = rnd.choice
    raw: dict = {"session_id": f"s{i:03d}", "workspace": pick(["/tmp", "", "rel/dir", "/tmp/../tmp"])}
    for key, values in {
        "title": ["t", "", None, 5, ["x"]],
        "model_provider": [" OpenAI ", None, 3, "", "x"],
        "created_at": [0, None, 1779000000.25, "1779000000"],
        "updated_at": [1779000000.5 + i, 1779000000 + i, 0, None],
        "input_tokens": [0, "2000", 1000.9, None, 7],
        "cache_read_tokens": [0, "500", 333.7, 3],
        "estimated_cost": [None, 1e-05, 0.049902, 3],
        "message_count": [None, "7", 7.9, True, -1, 3],
        "pinned": [True, 0, "x", None],
        "post_compression_context_tokens_estimate": [None, "12", -3, 0, 5],
        "compression_recovery_action": [None, " x ", 0],
        "compression_recovery_source_session_id": [None, " y "],
        "gateway_routing": [None, {"a": 1}, []],
        "gateway_routing_history": [[], {}, [1]],
        "composer_draft": [{}, [], {"t": "x"}],
        "share_token": [None, " tok ", 7],
        "parent_session_id": [None, "", "p"],
        "pending_user_message": [None, "", "hi"],
        "pending_started_at": [None, 1779000001],
        "worktree_path": [None, "", "/w"],
        "worktree_branch": [None, 7, "b"],
        "personality": [None, "x"],
    }.items():
        if rnd.random() < 0.6:
            raw[key] = pick(values)
    msgs = []
    for _ in range(rnd.randrange(0, 5)):
        msg = {"role": pick(["user", "assistant", "tool", 3]), "content": pick(["hé", "", ["x"]])}
        for tkey in ("_ts", "timestamp"):
            if rnd.random() < 0.5:
                msg[tkey] = pick([1779000000 + i, "1779000002.5", None, 0, "x"])
        msgs.append(msg)
    if rnd.random() < 0.9:
        raw["messages"] = msgs
    return raw


@pytest.mark.skipif(not SRC, reason="HERMES_WEBUI_SRC is not set (a hermes-webui checkout)")
def test_the_rebuild_of_lightly_parsed_sidecars_is_hermes_own(tmp_path: Path) -> None:
    import random

    rnd = random.Random(18)
    sessions = tmp_path / "home" / "webui" / "sessions"
    sessions.mkdir(parents=True)
    light = 0
    for i in range(300):
        data = json.dumps(_hermes_sidecar(i, rnd), ensure_ascii=False, indent=rnd.choice([None, 2]))
        (sessions / f"s{i:03d}.json").write_text(data, encoding="utf-8")
        light += light_parse_sidecar(data.encode()) is not None
    assert light == 300
    cwd = tmp_path / "home"
    ctx = SaveContext(sessions, FileSnapshot(), NOW, cwd)
    ours = rebuild_index_from_sidecars(ctx).data
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", _HERMES_REBUILD, SRC, str(sessions), str(NOW), str(cwd)],
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    theirs = (sessions / "_index.json").read_bytes()
    assert ours == theirs


def test_a_row_with_every_field_set_is_written_out_in_full(tmp_path: Path) -> None:
    """Rule: every field an index row takes from a sidecar comes from its own key, coerced as
    hermes' load and ``compact()`` coerce it, in ``compact()``'s order: a sidecar with every one of
    them set to a value of its own gives this row, written out by hand (and the exact pair's)."""
    for name in ("ws", "cws", "wt", "root"):
        (tmp_path / name).mkdir()
    p = {name: str((tmp_path / name).resolve()) for name in ("ws", "cws", "wt", "root")}
    raw = {
        "session_id": "full1",
        "title": "A full row",
        "workspace": p["ws"],
        "model": "m-1",
        "model_provider": "  OpenRouter ",
        "messages": [
            {"role": "user", "_ts": 100.0},
            {"role": "assistant", "timestamp": 200.0},
            {"role": "tool", "_ts": 300.0},
            {"role": "user", "_ts": 150.0},
        ],
        "created_at": 10.0,
        "updated_at": 20.0,
        "pinned": True,
        "archived": 1,
        "project_id": "p1",
        "profile": "prof",
        "input_tokens": 200,
        "output_tokens": 30,
        "estimated_cost": 0.25,
        "cache_read_tokens": 50,
        "cache_write_tokens": 7,
        "personality": "calm",
        "compression_anchor_visible_idx": 4,
        "compression_anchor_message_key": "k4",
        "compression_anchor_summary": "sum",
        "pre_compression_snapshot": True,
        "context_engine": "ce",
        "compression_anchor_engine": "cae",
        "compression_anchor_mode": "mode",
        "compression_anchor_details": {"a": 1},
        "context_engine_state": {"b": 2},
        "context_length": 8000,
        "threshold_tokens": 6000,
        "last_prompt_tokens": 500,
        "post_compression_context_tokens_estimate": 1234,
        "compression_recovery": {"c": 3},
        "recommended_recovery_action": "rra",
        "gateway_routing": {"d": 4},
        "gateway_routing_history": [{"e": 5}],
        "manual_title": True,
        "parent_session_id": "par",
        "created_workspace": p["cws"],
        "compression_recovery_source_session_id": " src ",
        "compression_recovery_action": " act ",
        "worktree_path": p["wt"],
        "worktree_branch": "br",
        "worktree_repo_root": p["root"],
        "worktree_created_at": 33.0,
        "active_stream_id": "stream-1",
        "pending_user_message": "hello?",
        "pending_started_at": 400.5,
        "is_cli_session": True,
        "source_tag": "st",
        "raw_source": "rs",
        "session_source": "ss",
        "source_label": "sl",
        "read_only": 1,
        "enabled_toolsets": ["web"],
        "composer_draft": {"f": 6},
        "process_wakeup_pause": {"g": 7},
        "share_token": " tok ",
        "share_created_at": 44.0,
    }
    want = [
        ("session_id", "full1"),
        ("title", "A full row"),
        ("workspace", p["ws"]),
        ("model", "m-1"),
        ("model_provider", "openrouter"),
        ("message_count", 4),
        ("created_at", 10.0),
        ("updated_at", 20.0),
        ("last_message_at", 400.5),  # a pending prompt's start wins over the newest message (200.0)
        ("pinned", True),
        ("archived", True),
        ("project_id", "p1"),
        ("profile", "prof"),
        ("input_tokens", 200),
        ("output_tokens", 30),
        ("estimated_cost", 0.25),
        ("cache_read_tokens", 50),
        ("cache_write_tokens", 7),
        ("cache_hit_percent", 25),  # 50 of 200
        ("personality", "calm"),
        ("compression_anchor_visible_idx", 4),
        ("compression_anchor_message_key", "k4"),
        ("compression_anchor_summary", "sum"),
        ("pre_compression_snapshot", True),
        ("context_engine", "ce"),
        ("compression_anchor_engine", "cae"),
        ("compression_anchor_mode", "mode"),
        ("compression_anchor_details", {"a": 1}),
        ("context_engine_state", {"b": 2}),
        ("context_length", 8000),
        ("threshold_tokens", 6000),
        ("last_prompt_tokens", 500),
        ("post_compression_context_tokens_estimate", 1234),
        ("compression_recovery", {"c": 3}),
        ("recommended_recovery_action", "rra"),
        ("gateway_routing", {"d": 4}),
        ("gateway_routing_history", [{"e": 5}]),
        ("manual_title", True),
        ("parent_session_id", "par"),
        ("created_workspace", p["cws"]),
        ("compression_recovery_source_session_id", "src"),
        ("compression_recovery_action", "act"),
        ("worktree_path", p["wt"]),
        ("worktree_branch", "br"),
        ("worktree_repo_root", p["root"]),
        ("worktree_created_at", 33.0),
        ("user_message_count", 2),
        ("active_stream_id", "stream-1"),
        ("pending_user_message", "hello?"),
        ("has_pending_user_message", True),
        ("is_cli_session", True),
        ("source_tag", "st"),
        ("raw_source", "rs"),
        ("session_source", "ss"),
        ("source_label", "sl"),
        ("read_only", True),
        ("enabled_toolsets", ["web"]),
        ("composer_draft", {"f": 6}),
        ("process_wakeup_pause", {"g": 7}),
        ("share_token", "tok"),
        ("share_created_at", 44.0),
        ("is_streaming", False),
    ]
    obj = light_parse_sidecar(json.dumps(raw).encode())
    assert obj is not None
    row = light_index_row(obj, NOW, PathResolver(tmp_path))
    assert list(row.items()) == want
    assert repr(row) == _pair(obj, PathResolver(tmp_path))[1]
