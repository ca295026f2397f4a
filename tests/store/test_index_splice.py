"""The index update of a one-session save spliced from the index's own row bytes
(``inspector.store.index_splice``) against the exact path and against hermes.

Rule: hermes' fast path (``api/models.py``, ``_write_session_index(updates=[s])``) parses
``_index.json`` with ``json.loads``, keeps the rows whose ``session_id`` is on disk, puts the saved
session's ``compact()`` row in place of every row of that id (or appends it), sorts by the raw
``updated_at`` (0 when missing) newest first and writes ``json.dumps(rows, ensure_ascii=False,
indent=2)``. The splice may give bytes only where they are exactly the exact path's
(``index.index_after_save`` of ``parse_index_json``); everywhere else it gives None and the exact
path decides. Each hostile file below is one the splice must leave to the exact path; the plain
ones are ones it must take (so the equality is not vacuous).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.store import index_splice
from inspector.store.index import (
    FastPathFailed,
    compact,
    index_after_save,
    index_after_save_from_bytes,
    parse_index_json,
)
from inspector.store.index_splice import ROW_KEYS, index_after_save_spliced
from inspector.store.sidecar import load_session
from tests.differential.harness import hermes_src

NOW = 1796000000.0
SETTINGS = settings(max_examples=120, deadline=None)


def _session(sid: str, updated_at, **extra):
    raw = {
        "session_id": sid,
        "title": f"chat {sid} é ✓",
        "workspace": "/",
        "created_at": 1794998873.01,
        "updated_at": updated_at,
        "messages": [
            {"role": "user", "content": "hi", "timestamp": 1794998874.5},
            {"role": "assistant", "content": "hello", "timestamp": 1794998875.25},
        ],
        **extra,
    }
    return load_session(raw, now=NOW, cwd=Path("/"))


def _rows(n: int, **extra) -> list[dict]:
    return [compact(_session(f"s{i:04d}", 1796000000.5 - i * 3.25, **extra)) for i in range(n)]


def _hermes_bytes(rows) -> bytes:
    return json.dumps(rows, ensure_ascii=False, indent=2).encode("utf-8")


def _exact(data: bytes, saved, on_disk):
    try:
        return index_after_save(parse_index_json(data), saved, on_disk)
    except (FastPathFailed, ValueError, RecursionError) as exc:  # parse errors: hermes rebuilds
        return type(exc)


def _check(data: bytes, saved, on_disk, *, taken: bool | None = None) -> bytes | None:
    spliced = index_after_save_from_bytes(data, saved, on_disk)
    if spliced is not None:
        assert spliced == _exact(data, saved, on_disk)
    # the facts found ahead (by the interrupted plan's copy) give the same answer as finding them here
    facts = index_splice.splice_facts(data)
    assert (facts is not None) or spliced is None
    assert index_after_save_from_bytes(data, saved, on_disk, facts) == spliced
    if taken is not None:
        assert (spliced is not None) == taken
    return spliced


# ---------------------------------------------------------------- plain indexes: taken and equal


def test_compacts_keys_are_row_keys_in_order() -> None:
    """ROW_KEYS is compact()'s key order, its optional keys (parent, recovery source, worktree) in place."""
    full = compact(
        _session(
            "a1",
            5.0,
            parent_session_id="p1",
            compression_recovery_source_session_id="r1",
            compression_recovery_action="retry",
            worktree_path="/w",
        )
    )
    assert tuple(full) == ROW_KEYS
    plain = compact(_session("a2", 5.0))
    assert [k for k in ROW_KEYS if k in plain] == list(plain)


@pytest.mark.parametrize(
    "case",
    [
        "moved-to-top",
        "appended",
        "ghosts-dropped",
        "duplicates-replaced",
        "ties-stable",
        "missing-time",
        "int-times",
    ],
)
def test_a_hermes_written_index_is_spliced_to_the_exact_bytes(case: str) -> None:
    rows = _rows(30)
    on_disk = {r["session_id"] for r in rows}
    saved = _session("s0007", NOW)
    if case == "appended":
        saved = _session("new1", 1796000000.0 - 40)
        on_disk.add("new1")
    elif case == "ghosts-dropped":
        on_disk -= {"s0003", "s0004", "s0020"}
    elif case == "duplicates-replaced":
        rows.insert(12, dict(rows[7]))
    elif case == "ties-stable":
        for r in rows[5:15]:
            r["updated_at"] = 1796000000.5
        saved = _session("s0009", 1796000000.5)
    elif case == "missing-time":
        del rows[4]["updated_at"]
        del rows[11]["updated_at"]
    elif case == "int-times":
        for r in rows[::3]:
            r["updated_at"] = int(r["updated_at"])
    _check(_hermes_bytes(rows), saved, on_disk, taken=True)


def test_the_bench_shapes_are_spliced() -> None:
    """Nested gateway routing, composer drafts and an ``estimated_cost`` of 1e-05 (repr's
    exponent form, which hermes writes) keep the splice."""
    rows = _rows(12)
    rows[2]["gateway_routing"] = {
        "used_provider": "openai",
        "routing": [{"provider": "openai", "status": "ok"}],
    }
    rows[2]["gateway_routing_history"] = [rows[2]["gateway_routing"], {"n": 3, "ok": True, "why": None}]
    rows[5]["composer_draft"] = {"text": "half a thought: yes, no", "files": []}
    rows[6]["estimated_cost"] = 1e-05
    rows[8]["estimated_cost"] = 0
    rows[9]["created_at"] = []
    _check(_hermes_bytes(rows), _session("s0005", NOW), {r["session_id"] for r in rows}, taken=True)


def test_a_row_without_a_session_id_is_dropped_in_the_splice() -> None:
    """hermes' ``row.get("session_id") in on_disk`` is ``None in on_disk``: such a row goes, as any
    row whose sidecar is gone; the splice takes that index and drops it too (its id read as None)."""
    rows = _rows(6)
    del rows[2]["session_id"]
    rows[4]["session_id"] = None
    on_disk = {r["session_id"] for r in rows if r.get("session_id")}
    out = _check(_hermes_bytes(rows), _session("s0005", NOW), on_disk, taken=True)
    assert [r.get("session_id") for r in json.loads(out)] == ["s0000", "s0005", "s0001", "s0003"]
    facts = index_splice.splice_facts(_hermes_bytes(rows))
    assert facts is not None and facts.ids == ["s0000", "s0001", None, "s0003", None, "s0005"]


def test_a_float_count_msgspec_writes_as_repr_is_spliced() -> None:
    rows = _rows(6)
    rows[1]["message_count"] = 2.5
    rows[2]["input_tokens"] = 1234.0
    rows[3]["cache_read_tokens"] = -0.0
    _check(_hermes_bytes(rows), _session("s0003", NOW), {r["session_id"] for r in rows}, taken=True)


@SETTINGS
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=12))
def test_floats_written_as_repr_is_msgspecs_text_equal_to_repr_for_each(values) -> None:
    import msgspec

    each = all(msgspec.json.encode(v) == repr(v).encode() for v in values)
    assert index_splice.floats_written_as_repr(values, msgspec.json.encode) == each


def test_strings_with_the_writers_own_escapes_are_spliced() -> None:
    """Quotes, backslashes, newlines and other control characters in a title (and a key of a
    nested object) are escaped by the writer as msgspec writes them: the splice keeps them."""
    rows = _rows(6)
    rows[1]["title"] = 'a "quoted" \\ title\nwith a tab\t, a bell \x07 and \x1f'
    rows[2]["composer_draft"] = {'say "hi"\n': ["line\none", "\u2028 and \x7f"]}
    data = _hermes_bytes(rows)
    assert b"\\" in data
    _check(data, _session("s0003", NOW), {r["session_id"] for r in rows}, taken=True)


# ---------------------------------------------------------------- hostile files: left to the exact path


def _edit(data: bytes, old: bytes, new: bytes) -> bytes:
    assert old in data
    return data.replace(old, new, 1)


_PLAIN = _hermes_bytes(_rows(6))
_HOSTILE = {
    "duplicate-key": _edit(_PLAIN, b'    "title": ', b'    "title": "x",\n    "title": '),
    "unknown-key": _edit(_PLAIN, b'    "title": ', b'    "tilte": "x",\n    "title": '),
    "keys-reordered": _edit(
        _PLAIN,
        '"title": "chat s0001 é ✓",\n    "workspace": "/"'.encode(),
        '"workspace": "/",\n    "title": "chat s0001 é ✓"'.encode(),
    ),
    "escape": _edit(_PLAIN, b"chat s0002", b"chat \\u00e9 s0002"),
    "escaped-slash": _edit(_PLAIN, b"chat s0002", b"chat \\/ s0002"),
    "upper-hex-escape": _edit(_PLAIN, b"chat s0002", b"chat \\u001F s0002"),
    "bad-utf8-in-time-key": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": "\xc3"'),
    "count-msgspec-writes-otherwise": _edit(_PLAIN, b'"message_count": 2,', b'"message_count": 0.00001,'),
    "escape-in-time-key": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": "a\\nb"'),
    "trailing-zero": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": 1794998873.010'),
    "upper-exponent": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": 1.79499887301E9'),
    "fixed-below-1e-4": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": 0.00001'),
    "too-many-digits": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": 1794998873.0100000001'),
    "minus-zero": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": -0'),
    "long-int": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": ' + b"7" * 5000),
    "float-in-int-key": _edit(_PLAIN, b'"user_message_count": 1,', b'"user_message_count": 1.5,'),
    "float-in-container": _edit(
        _PLAIN, b'"context_engine_state": {}', b'"context_engine_state": {\n      "x": 0.5\n    }'
    ),
    "nested-duplicate": _edit(
        _PLAIN,
        b'"context_engine_state": {}',
        b'"context_engine_state": {\n      "x": 1,\n      "x": 2\n    }',
    ),
    "object-in-time-key": _edit(
        _PLAIN, b'"created_at": 1794998873.01', b'"created_at": {\n      "a": 1\n    }'
    ),
    "list-in-time-key": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": [\n      1.50\n    ]'),
    "nan": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": NaN'),
    "infinity": _edit(_PLAIN, b'"created_at": 1794998873.01', b'"created_at": Infinity'),
    "too-deep": _edit(
        _PLAIN,
        b'"context_engine_state": {}',
        b'"context_engine_state": '
        + json.dumps(json.loads("[" * 12 + "]" * 12), indent=2).replace("\n", "\n    ").encode(),
    ),
    "unhashable-id": _edit(_PLAIN, b'"session_id": "s0003"', b'"session_id": [\n      "s0003"\n    ]'),
    "trailing-newline": _PLAIN + b"\n",
    "bom": b"\xef\xbb\xbf" + _PLAIN,
    "crlf": _PLAIN.replace(b"\n", b"\r\n"),
    "compact": json.dumps(json.loads(_PLAIN), ensure_ascii=False).encode(),
    "indent-4": json.dumps(json.loads(_PLAIN), ensure_ascii=False, indent=4).encode(),
    "ascii-escapes": json.dumps(json.loads(_PLAIN), indent=2).encode(),
    "bad-utf8": _edit(_PLAIN, "é".encode(), b"\xc3"),
    "surrogate": _edit(_PLAIN, "é".encode(), b"\xed\xa0\x80"),
    "row-not-object": _edit(_PLAIN, b"[\n  {", b'[\n  "junk",\n  {'),
    "empty": b"[]",
    "torn": _PLAIN[:-5],
}


@pytest.mark.parametrize("name", sorted(_HOSTILE))
def test_a_file_the_splice_cannot_prove_goes_to_the_exact_path(name: str) -> None:
    data = _HOSTILE[name]
    rows = json.loads(_PLAIN)
    on_disk = {r["session_id"] for r in rows}
    assert index_after_save_spliced(data, compact(_session("s0002", NOW)), on_disk) is None
    _check(data, _session("s0002", NOW), on_disk, taken=False)


def test_a_sort_hermes_cannot_do_is_left_to_the_exact_path() -> None:
    rows = _rows(8)
    rows[3]["updated_at"] = "yesterday"
    data = _hermes_bytes(rows)
    saved = _session("s0001", NOW)
    on_disk = {r["session_id"] for r in rows}
    assert _exact(data, saved, on_disk) is FastPathFailed
    assert index_after_save_from_bytes(data, saved, on_disk) is None


# ---------------------------------------------------------------- generated indexes

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), _text)
_number = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(10**30), 10**30),
    st.sampled_from([1e-05, 0.0001, 1e16, 1e15, -0.0, 0.1, 5e-324, 1.7976931348623157e308]),
)
_nested = st.recursive(
    _scalar, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text, kids, max_size=3), max_leaves=8
)
_rows_strategy = st.lists(
    st.fixed_dictionaries(
        {"session_id": st.one_of(st.sampled_from(["s0000", "s0001", "s0002", "gone"]), _scalar)},
        optional={
            "title": _scalar,
            "message_count": _scalar,
            "created_at": st.one_of(_number, _scalar),
            "updated_at": st.one_of(_number, st.none()),
            "estimated_cost": _number,
            "gateway_routing": _nested,
            "composer_draft": _nested,
            "context_engine_state": st.one_of(_nested, st.dictionaries(_text, _number, max_size=2)),
            "pinned": _scalar,
        },
    ).map(lambda row: {k: row[k] for k in ROW_KEYS if k in row}),
    max_size=8,
)


@SETTINGS
@given(rows=_rows_strategy, saved_time=_number, gone=st.booleans())
def test_generated_hermes_indexes_splice_to_the_exact_bytes(rows, saved_time, gone) -> None:
    data = _hermes_bytes(rows)
    saved = _session("s0001", saved_time)
    on_disk = {"s0000", "s0001", "s0002"} | (set() if gone else {"gone"})
    _check(data, saved, on_disk)


@SETTINGS
@given(
    rows=_rows_strategy,
    at=st.integers(0, 10**6),
    junk=st.sampled_from([b"\\", b"0", b",", b" ", b"\n", b"-", b"e", b".", b'"']),
)
def test_generated_indexes_with_one_byte_changed_splice_to_the_exact_bytes_or_not_at_all(
    rows, at, junk
) -> None:
    data = _hermes_bytes(rows)
    data = data[: at % (len(data) + 1)] + junk + data[at % (len(data) + 1) + 1 :]
    _check(data, _session("s0001", 1796000000.0), {"s0000", "s0001", "s0002"})


# ---------------------------------------------------------------- the float tokens taken without asking


@SETTINGS
@given(
    x=st.floats(allow_nan=False, allow_infinity=False),
    digits=st.integers(0, 20),
    form=st.sampled_from("fegr"),
)
def test_a_float_token_the_plain_pattern_takes_is_reprs_own_text(x, digits, form) -> None:
    """_PLAIN_FLOAT_LINE (fixed notation, <= 15 digits, no trailing zero, >= 1e-4) only takes
    tokens that are float.__repr__ of their value."""
    token = repr(x) if form == "r" else format(x, f".{digits}{form}")
    if index_splice._PLAIN_FLOAT_LINE.fullmatch(token.encode()) and math.isfinite(float(token)):
        assert float.__repr__(float(token)) == token


@pytest.mark.parametrize(
    "token",
    [
        "0.0001",
        "0.0",
        "-0.0",
        "5.0",
        "100.5",
        "123456789012345.0",
        "99999999999999.9",
        "0.123456789012",
        "1794998873.01",
    ],
)
def test_plain_float_tokens_at_the_edges(token: str) -> None:
    matched = bool(index_splice._PLAIN_FLOAT_LINE.fullmatch(token.encode()))
    assert not matched or float.__repr__(float(token)) == token
    assert float.__repr__(float(token)) == token  # each is canonical: taken or checked, never refused


@pytest.mark.parametrize("token", ["0.00001", "5.10", "1e-05", "1.0e5", "0.00009", "1.50"])
def test_tokens_the_plain_pattern_leaves_for_the_repr_check(token: str) -> None:
    assert not index_splice._PLAIN_FLOAT_LINE.fullmatch(token.encode())


@SETTINGS
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20))
def test_the_time_check_takes_exactly_the_repr_tokens(values) -> None:
    raws = [repr(v).encode() for v in values]
    assert index_splice._time_values_ok(raws)
    odd = [f"{v:.17g}".encode() for v in values]
    floats_canonical = all(float.__repr__(float(t)) == t.decode() for t in odd if re.search(rb"[.eE]", t))
    assert index_splice._time_values_ok(odd) == (floats_canonical and b"-0" not in odd)  # int -0 is written 0


def test_a_run_of_640_digits_is_found_at_every_alignment() -> None:
    rows = _rows(3)
    base = _hermes_bytes(rows)
    for shift in range(64):
        data = _edit(base, b'"title": "chat s0001', b'"title": "' + b"x" * shift + b"1" * 640)
        assert index_splice._round_trips(data) is None
    assert (
        index_splice._round_trips(_edit(base, b'"title": "chat s0001', b'"title": "' + b"1" * 570))
        is not None
    )  # 9 multiples of 64 at most


# ---------------------------------------------------------------- hermes' own fast path

_HERMES = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sessions = Path(sys.argv[2])
import api.models as models
models.SESSION_DIR = sessions
models.SESSION_INDEX_FILE = sessions / "_index.json"
models._PERSISTED_SESSION_IDS_CACHE = (None, None, frozenset())
models.SESSIONS.clear()
models._write_session_index(updates=None)  # hermes' own full rebuild: the index before
before = models.SESSION_INDEX_FILE.read_bytes()
(sessions / "s0004.json").unlink()  # a row whose sidecar is gone
models._PERSISTED_SESSION_IDS_CACHE = (None, None, frozenset())
s = models._load_session_from_path(sessions / "s0002.json")
s.title = "changed ✓ : yes"
s.updated_at = 1796000099.75
s.save(touch_updated_at=False, skip_index=True)
models.SESSIONS.clear()
models._write_session_index(updates=[s])
print(json.dumps({"before": before.decode("utf-8"), "after": models.SESSION_INDEX_FILE.read_text(encoding="utf-8")}))
"""


@pytest.mark.skipif(hermes_src() is None, reason="HERMES_WEBUI_SRC does not name a hermes-webui checkout")
def test_hermes_own_fast_path_gives_the_spliced_bytes(tmp_path: Path) -> None:
    sessions = tmp_path / "webui" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(8):
        raw = {
            "session_id": f"s{i:04d}",
            "title": f"chat {i} é ✓",
            "workspace": str(tmp_path),
            "created_at": 1794998873.01 + i,
            "updated_at": 1796000000.5 - i * 3.25,
            "estimated_cost": 1e-05 if i == 3 else 0.25 * i,
            "gateway_routing": {
                "used_provider": "openai",
                "routing": [{"provider": "openai", "status": "ok"}],
            }
            if i % 2
            else None,
            "messages": [{"role": "user", "content": "hi", "timestamp": 1794998874.5 + i}],
        }
        (sessions / f"s{i:04d}.json").write_text(
            json.dumps(raw, ensure_ascii=False, indent=2), encoding="utf-8"
        )
    env = {
        "HERMES_HOME": str(tmp_path),
        "HERMES_WEBUI_STATE_DIR": str(tmp_path / "webui"),
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [sys.executable, "-c", _HERMES, str(hermes_src()), str(sessions)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    from inspector.repair.save import persisted_ids
    from inspector.store.files import read_raw
    from inspector.store.sidecar import read_sidecar

    saved = read_sidecar(read_raw(sessions / "s0002.json"), now=NOW, cwd=tmp_path)
    on_disk = persisted_ids(sessions) | {"s0002"}
    spliced = index_after_save_from_bytes(got["before"].encode("utf-8"), saved, on_disk)
    assert spliced is not None
    assert spliced == got["after"].encode("utf-8")


def test_msgspec_writes_every_string_as_the_index_writer_does() -> None:
    """The fact the escape rule rests on: msgspec's encoder escapes exactly what
    ``json.dumps(..., ensure_ascii=False)`` escapes, in the same form, for every code point."""
    import msgspec

    every = "".join(map(chr, [*range(0xD800), *range(0xE000, 0x110000)]))
    assert msgspec.json.encode(every) == json.dumps(every, ensure_ascii=False).encode("utf-8")
    for c in range(0x80):
        assert msgspec.json.encode(chr(c)) == json.dumps(chr(c), ensure_ascii=False).encode()


def test_without_msgspec_the_exact_path_decides(monkeypatch) -> None:
    """msgspec is a dependency with an ImportError fallback: without it nothing is spliced."""
    rows = _rows(5)
    data = _hermes_bytes(rows)
    saved = _session("s0002", NOW)
    on_disk = {r["session_id"] for r in rows}
    assert index_after_save_from_bytes(data, saved, on_disk) is not None
    monkeypatch.setattr(index_splice, "_msgspec", None)
    assert index_after_save_from_bytes(data, saved, on_disk) is None
