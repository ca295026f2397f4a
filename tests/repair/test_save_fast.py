"""The fast index rebuild, save and continuation check equal the straightforward ones, byte for byte.

Each reference below is the implementation these replaced (every sidecar through
``read_sidecar`` and the stdlib's encoder, existence by ``os.path.exists``, every sidecar head
read with ``open``). On generated hostile sessions folders both must give the same bytes, the
same skipped lines and warnings, or the same exception with the same message.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.repair import interrupted, rebuild_index
from inspector.repair.save import (
    IndexRebuildError,
    SaveContext,
    persisted_ids,
    rebuild_index_from_sidecars,
    save_session,
    sidecar_names,
)
from inspector.store.files import FileSnapshot, Fingerprint, RawFile
from inspector.store.index import compact
from inspector.store.jsonfmt import dumps_pretty, loads_bytes
from inspector.store.sidecar import (
    LoadedSession,
    SidecarError,
    count_messages_in_bytes,
    dump_session,
    load_session,
    parse_sidecar_bytes,
    read_sidecar,
    sidecar_paths,
)
from tests.recovery_helpers import home_dirs, make_ctx

NOW = 1779900000.0
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - compared as data
        return None, (type(exc), str(exc))


# ---------------------------------------------------------------- the references


def _ref_row(ctx: SaveContext, path: Path, data: bytes, skipped: list[str], recovery: bool) -> dict | None:
    try:
        obj = parse_sidecar_bytes(data)
    except (SidecarError, RecursionError) as exc:
        if recovery and str(exc).startswith("top-level JSON is"):
            raise IndexRebuildError(f"{path.name}: hermes' recovery rebuild fails on it ({exc})") from exc
        skipped.append(f"{path.name} cannot be loaded ({exc}): left out of the index, as hermes does")
        return None
    try:
        return compact(load_session(obj, now=ctx.now, cwd=ctx.cwd))
    except (ValueError, TypeError, OSError, OverflowError, RuntimeError, RecursionError) as exc:
        if recovery:
            raise IndexRebuildError(
                f"{path.name}: hermes cannot load it or make its index row "
                f"({type(exc).__name__}: {exc}), and its recovery rebuild stops there"
            ) from exc
        skipped.append(
            f"{path.name} cannot be loaded (hermes cannot load it: {exc}): left out of the index, "
            "as hermes does"
        )
        return None


def ref_rebuilt_index_bytes(ctx: SaveContext, overrides=None, skipped=None, recovery: bool = True) -> bytes:
    """Recovery: sorted names, a non-object or unloadable sidecar stops the rebuild. In a save:
    the folder's own order (a new file last), every failing sidecar left out."""
    skipped = [] if skipped is None else skipped
    overrides = overrides or {}
    if recovery:
        paths = sorted(set(sidecar_paths(ctx.session_dir)) | set(overrides))
    else:
        listed = [
            ctx.session_dir / e.name
            for e in os.scandir(ctx.session_dir)
            if e.name.endswith(".json") and not e.name.startswith("_")
        ]
        paths = listed + [p for p in overrides if p not in listed]
    rows = []
    for path in paths:
        data = overrides.get(path)
        if data is None:
            try:
                raw = ctx.snapshot.read(path)
            except OSError as exc:
                skipped.append(
                    f"{path.name} cannot be read ({exc.strerror or exc}): left out of the index, "
                    "as hermes does"
                )
                continue
            if raw is None:
                continue
            data = raw.data
        row = _ref_row(ctx, path, data, skipped, recovery)
        if row is not None:
            rows.append(row)
    best: dict = {}
    for row in rows:
        sid = row["session_id"]
        if sid and (sid not in best or row["message_count"] > best[sid]["message_count"]):
            best[sid] = row
    final = list(best.values())
    try:
        final.sort(key=lambda r: r.get("updated_at", 0), reverse=True)
    except TypeError as exc:
        raise IndexRebuildError(
            f"a sidecar's updated_at cannot be sorted with the others "
            f"(hermes' index sort by updated_at fails: {exc})"
        ) from exc
    try:
        return dumps_pretty(final)
    except UnicodeEncodeError as exc:
        raise IndexRebuildError(
            f"a sidecar holds text that cannot be written as UTF-8 ({exc.reason}: "
            f"{exc.object[max(0, exc.start - 20) : exc.end + 20]!r})"
        ) from exc


def ref_sidecar_warnings(session_dir: Path, cwd: Path, snapshot: FileSnapshot) -> list[str]:
    out, empty_ws = [], 0
    for path in sidecar_paths(session_dir):
        try:
            data = snapshot.data(path)
        except OSError:
            data = None
        try:
            obj = parse_sidecar_bytes(data if data is not None else b"")
        except (SidecarError, RecursionError):
            continue
        sid = obj.get("session_id")
        if not sid:
            out.append(
                f"{path.name} has no session_id: hermes would invent a random id for its row; "
                "the inspector leaves it out"
            )
        elif sid != path.stem:
            out.append(
                f"{path.name} says session_id {sid!r}: its row is keyed {sid!r}, so the audit keeps "
                "reporting index drift for it [Q7]"
            )
        if not isinstance(obj.get("workspace"), str) or not obj.get("workspace"):
            empty_ws += 1
    if empty_ws:
        out.append(
            f"{empty_ws} sidecar(s) have an empty workspace; their rows get hermes' working "
            f"directory ({cwd}) [Q10]"
        )
    return out


def ref_index_after_save_bytes(ctx: SaveContext, session: LoadedSession, new_bytes: bytes) -> bytes:
    """hermes' fast path (any failure falls back to the rebuild in the folder's own order)."""
    sid = session.session_id
    data = ctx.snapshot.data(ctx.session_dir / "_index.json")
    if data is not None:
        try:
            rows = loads_bytes(data)
            if not isinstance(rows, list):
                raise ValueError("not a list")
            on_disk = {p.stem for p in ctx.session_dir.glob("*.json") if not p.name.startswith("_")} | {sid}
            new = compact(session)
            kept = [r for r in rows if r.get("session_id") in on_disk]
            if sid not in {r.get("session_id") for r in kept}:
                kept.append(new)
            for i, r in enumerate(kept):
                if r.get("session_id") == sid:
                    kept[i] = new
            kept.sort(key=lambda r: r.get("updated_at", 0), reverse=True)
            return dumps_pretty(kept)
        except Exception:  # noqa: BLE001 - hermes falls back on any failure
            pass
    return ref_rebuilt_index_bytes(ctx, {ctx.session_dir / f"{sid}.json": new_bytes}, recovery=False)


def ref_continuation_sources(session_dir: Path, snapshot: FileSnapshot, sid: str) -> list[str]:
    found = []
    try:
        rows = loads_bytes(snapshot.data(session_dir / "_index.json") or b"[]")
    except (ValueError, OSError, RecursionError):
        rows = []
    if isinstance(rows, list) and any(
        isinstance(r, dict) and r.get("parent_session_id") == sid and r.get("session_id") != sid for r in rows
    ):
        found.append("_index.json")
    needle = f'"parent_session_id": "{sid}"'
    for path in sidecar_paths(session_dir):
        if path.stem == sid:
            continue
        try:
            with open(path, "rb") as fh:
                head = fh.read(4096 * 4).decode("utf-8", errors="ignore")
        except OSError:
            continue
        if needle in head[:4096]:
            found.append(path.name)
    return found


# ---------------------------------------------------------------- hostile sessions folders

_text = st.text(max_size=8)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    _text,
    st.sampled_from(["", "~", "a\x00b", "/tmp", "x\ud800y", 7.2e-05, 1e16, 12345678901234567890123]),
)
_json = st.recursive(
    _scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3), max_leaves=10
)
_message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", None])},
        optional={"content": _json, "_ts": _scalars, "timestamp": _scalars, "_partial": st.booleans()},
    ),
    _json,
)
_SIDS = ["a", "b", "c", "p"]
_META = [
    "title",
    "workspace",
    "created_workspace",
    "model",
    "updated_at",
    "created_at",
    "pinned",
    "input_tokens",
    "cache_read_tokens",
    "estimated_cost",
    "parent_session_id",
    "worktree_path",
    "compression_anchor_details",
    "gateway_routing",
    "pending_user_message",
    "pending_started_at",
    "message_count",
    "composer_draft",
    "compression_recovery_action",
]


def _sidecar_obj():
    return st.builds(
        lambda sid, meta, messages: {"session_id": sid, **meta, "messages": messages},
        st.one_of(st.sampled_from(_SIDS), st.sampled_from(["", None, 5, "x"])),
        st.dictionaries(
            st.sampled_from(_META), st.one_of(_json, st.sampled_from(["a", "p", "  "])), max_size=8
        ),
        st.one_of(st.lists(_message, max_size=5), _json),
    )


def _encode(obj, style: str) -> bytes:
    if style == "compact":
        return json.dumps(obj).encode("utf-8", "surrogatepass")
    return json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")


_file = st.one_of(
    st.builds(_encode, _sidecar_obj(), st.sampled_from(["pretty", "pretty", "compact"])),
    st.binary(max_size=60),
    st.sampled_from(
        [
            b"",
            b"[]",
            b"{}",
            b"null",
            b'{"session_id": "a", "messages": [NaN]}',
            b'{"session_id": "b", "updated_at": Infinity}',
            b'{"session_id": "c", "messages": [' + b"[" * 1010 + b"]" * 1010 + b"]}",
            b'{"session_id": "c", "messages": [' + b"[" * 300 + b"]" * 300 + b"]}",
            b'{"session_id": "a", "input_tokens": 123456789012345678901234, "messages": []}',
            b'{"session_id": "a", "title": "\\ud800", "messages": []}',
            b'\xef\xbb\xbf{"session_id": "a"}',
        ]
    ),
)
_NAMES = [
    "a.json",
    "b.json",
    "c.json",
    "p.json",
    "x.json",
    ".json",
    ".h.json",
    "_skip.json",
    "a.JSON",
    "d.json.bak",
]
_index = st.one_of(
    st.none(),
    st.just(b"{}"),
    st.just(b"[]"),
    st.just(b"not json"),
    st.just(b"[1]"),
    st.lists(
        st.fixed_dictionaries(
            {"session_id": st.sampled_from(_SIDS + ["gone", ""])},
            optional={"updated_at": _scalars, "parent_session_id": st.sampled_from(_SIDS), "title": _text},
        ),
        max_size=6,
    ).flatmap(
        lambda rows: st.sampled_from(
            [
                json.dumps(rows, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass"),
                json.dumps(rows).encode("utf-8", "surrogatepass"),
                json.dumps(rows, ensure_ascii=True).encode(),
            ]
        )
    ),
)


def _populate(sessions: Path, files: dict[str, bytes], index: bytes | None, folder_name: bool) -> None:
    for name, data in files.items():
        (sessions / name).write_bytes(data)
    if index is not None:
        (sessions / "_index.json").write_bytes(index)
    if folder_name:
        (sessions / "dir.json").mkdir()


def _home(tmp_path_factory):
    home, sessions, _ = home_dirs(tmp_path_factory.mktemp("h"))
    return home, sessions


def _save_ctx(home: Path) -> SaveContext:
    return make_ctx(home).save_context()


@SETTINGS
@given(
    files=st.dictionaries(st.sampled_from(_NAMES), _file, max_size=6),
    index=_index,
    folder=st.booleans(),
    override=st.one_of(st.none(), st.tuples(st.sampled_from(["a.json", "n.json"]), _file)),
)
def test_index_rebuild_equals_the_reference(files, index, folder, override, tmp_path_factory) -> None:
    home, sessions = _home(tmp_path_factory)
    _populate(sessions, files, index, folder)
    overrides = {sessions / override[0]: override[1]} if override else None
    ref_skipped: list[str] = []
    new_skipped: list[str] = []
    expected = _outcome(ref_rebuilt_index_bytes, _save_ctx(home), overrides, ref_skipped)
    got = _outcome(rebuild_index_from_sidecars, _save_ctx(home), overrides, new_skipped)
    assert (got[0].data if got[0] is not None else None, got[1]) == expected
    assert new_skipped == ref_skipped
    if expected[1] is None:
        assert got[0].row_ids == [
            str(r.get("session_id"))
            for r in json.loads(expected[0])
            if isinstance(r, dict) and r.get("session_id")
        ]


@SETTINGS
@given(files=st.dictionaries(st.sampled_from(_NAMES), _file, max_size=6), index=_index, folder=st.booleans())
def test_rebuild_index_plan_warnings_equal_the_reference(files, index, folder, tmp_path_factory) -> None:
    home, sessions = _home(tmp_path_factory)
    _populate(sessions, files, index, folder)
    ctx = make_ctx(home)
    plan = rebuild_index.plan(ctx, None)
    if plan.refusal is not None:
        return
    skipped: list[str] = []
    ref_after = ref_rebuilt_index_bytes(_save_ctx(home), None, skipped)
    assert plan.warnings == skipped + ref_sidecar_warnings(sessions, ctx.cwd, FileSnapshot())
    after = plan.changes[0].after if plan.changes else (sessions / "_index.json").read_bytes()
    assert after == ref_after


def _loaded(data: bytes, home: Path) -> LoadedSession | None:
    try:
        return read_sidecar(RawFile(Path("x.json"), data, Fingerprint.of_bytes(data)), now=NOW, cwd=home)
    except (SidecarError, RecursionError):
        return None


def ref_save_session(ctx: SaveContext, session: LoadedSession, *, touch_updated_at: bool) -> list:
    """``save_session`` as it was (tombstones aside: they are untouched by the change)."""
    sid = session.session_id
    data = session.data
    if touch_updated_at:
        data["updated_at"] = ctx.now
    path = ctx.session_dir / f"{sid}.json"
    existing = ctx.snapshot.data(path)
    new_bytes = dump_session(data)
    changes = []
    existing_count = count_messages_in_bytes(existing) if existing is not None else 0
    incoming = len(data["messages"])
    if (
        existing is not None
        and existing_count > 0
        and incoming == 0
        and (data.get("active_stream_id") or data.get("pending_user_message"))
    ):
        return []
    if existing is not None and existing_count > incoming:
        changes.append((f"{sid}.json.bak", existing))
    changes.append((path.name, new_bytes))
    changes.append(("_index.json", ref_index_after_save_bytes(ctx, session, new_bytes)))
    return changes


@SETTINGS
@given(
    files=st.dictionaries(st.sampled_from(_NAMES), _file, max_size=6),
    index=_index,
    target=st.sampled_from(_SIDS),
    source=_sidecar_obj(),
    extra=st.lists(_message, max_size=2),
    touch=st.booleans(),
)
def test_save_equals_the_reference(files, index, target, source, extra, touch, tmp_path_factory) -> None:
    home, sessions = _home(tmp_path_factory)
    _populate(sessions, files, index, False)
    loaded = _loaded(_encode({**source, "session_id": target}, "pretty"), home)
    if loaded is None:
        return
    loaded.data["messages"] = list(loaded.data["messages"]) + extra
    ref_session = copy.deepcopy(loaded)
    got = _outcome(save_session, _save_ctx(home), loaded, touch_updated_at=touch)
    expected = _outcome(ref_save_session, _save_ctx(home), ref_session, touch_updated_at=touch)
    assert got[1] == expected[1]
    if expected[1] is None:
        written = {name: after for name, after in expected[0]}
        before = {
            name: (sessions / name).read_bytes() if (sessions / name).exists() else None for name in written
        }
        assert {c.path.name: c.after for c in got[0]} == {n: a for n, a in written.items() if a != before[n]}


@SETTINGS
@given(
    files=st.dictionaries(
        st.sampled_from(_NAMES),
        st.one_of(
            _file,
            st.builds(
                lambda pad, sid, sep: (pad + '{"parent_session_id"' + sep + '"' + sid + '"}').encode(),
                st.sampled_from(["", "x" * 4070, "é" * 2040, "\ufffd" * 1400]),
                st.sampled_from(_SIDS),
                st.sampled_from([": ", ":", " : "]),
            ),
            st.builds(
                lambda sid: b'{"a": "\xff\xfe", "parent_session_id": "' + sid.encode() + b'"}',
                st.sampled_from(_SIDS),
            ),
        ),
        max_size=6,
    ),
    index=_index,
    sid=st.sampled_from(_SIDS),
)
def test_continuation_sources_equal_the_reference(files, index, sid, tmp_path_factory) -> None:
    home, sessions = _home(tmp_path_factory)
    _populate(sessions, files, index, True)
    ctx = make_ctx(home)
    expected = ref_continuation_sources(sessions, FileSnapshot(), sid)
    got = interrupted._continuation_sources(ctx, sid, interrupted._sidecar_sources(sessions, sid))
    assert got == expected[: interrupted.MAX_SOURCES_NAMED]


@pytest.mark.parametrize(
    "index",
    [
        b'[{"session_id": "k", "parent_session_id": "p"}]',
        b'[{"session_id": "k", "parent_session_id" :\n "p"}]',
        b'[{"session_id": "k", "parent_session_id": "\\u0070"}]',
        b'[{"session_id": "k", "parent\\u005fsession_id": "p"}]',
        b'[{"session_id": "p", "parent_session_id": "p"}]',
        b'[{"session_id": "k", "title": "\\"parent_session_id\\": \\"p\\""}]',
        b'[{"session_id": "k", "nested": {"parent_session_id": "p"}}]',
        b'[{"session_id": "k", "parent_session_id": "p", "parent_session_id": "q"}]',
    ],
)
def test_index_continuation_prefilter_never_hides_a_row(index: bytes, tmp_path: Path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    (sessions / "_index.json").write_bytes(index)
    expected = ref_continuation_sources(sessions, FileSnapshot(), "p")
    assert (
        interrupted._continuation_sources(make_ctx(home), "p", interrupted._sidecar_sources(sessions, "p"))
        == expected
    )


def test_sidecar_names_match_the_glob(tmp_path: Path) -> None:
    names = [
        "a.json",
        ".json",
        "..json",
        ".h.json",
        "_i.json",
        "A.JSON",
        "b.json.bak",
        "c.jsonx",
        "d\nx.json",
        "é.json",
        "zz.json",
        "0.json",
    ]
    for n in names:
        (tmp_path / n).write_bytes(b"{}")
    (tmp_path / "dir.json").mkdir()
    os.symlink(tmp_path / "missing", tmp_path / "dangling.json")
    raw = os.fsencode(tmp_path) + b"/\xff\xfe.json"
    with open(raw, "wb") as fh:
        fh.write(b"{}")
    assert sidecar_names(tmp_path) == [p.name for p in sidecar_paths(tmp_path)]
    assert [tmp_path / n for n in sidecar_names(tmp_path)] == sidecar_paths(tmp_path)
    assert sidecar_names(tmp_path / "missing") == [] == sidecar_paths(tmp_path / "missing")
    assert sidecar_names(tmp_path / "a.json") == [] == sidecar_paths(tmp_path / "a.json")


def _odd_names_folder(folder: Path) -> None:
    """Two sidecars, a dangling and a good symlink, and a subfolder holding a sidecar."""
    for n in ("a.json", "b.json"):
        (folder / n).write_bytes(b"{}")
    os.symlink(folder / "missing", folder / "dangling.json")
    os.symlink(folder / "a.json", folder / "alias.json")
    (folder / "sub").mkdir()
    (folder / "sub" / "x.json").write_bytes(b"{}")


def test_persisted_ids_are_the_stems_of_hermes_glob(tmp_path: Path) -> None:
    _odd_names_folder(tmp_path)
    for n in (".json", "..json", "a.b.json", "_x.json", "c.JSON"):
        (tmp_path / n).write_bytes(b"{}")
    expected = {p.stem for p in tmp_path.glob("*.json") if not p.name.startswith("_")}
    assert persisted_ids(tmp_path) == expected
    assert {".json", ".", "a.b", "a", "alias", "dangling"} <= expected
    assert persisted_ids(tmp_path / "missing") == frozenset()


def test_materialize_existence_check_equals_path_exists(tmp_path: Path) -> None:
    from inspector.repair.materialize import _sidecar_exists_check

    _odd_names_folder(tmp_path)
    exists = _sidecar_exists_check(tmp_path)
    for sid in ("a", "b", "c", "dangling", "alias", "sub/x", "../x", "nul\x00", ".", "sub"):
        assert exists(sid) == (tmp_path / f"{sid}.json").exists(), sid


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches any folder")
def test_a_folder_that_cannot_be_searched_is_asked_file_by_file(tmp_path: Path) -> None:
    from inspector.repair.materialize import _sidecar_exists_check

    (tmp_path / "a.json").write_bytes(b"{}")
    tmp_path.chmod(0o600)  # listable, not searchable
    try:
        assert persisted_ids(tmp_path) == {"a"}  # listed, although a stat would fail
        with pytest.raises(PermissionError):
            (tmp_path / "a.json").exists()
        with pytest.raises(PermissionError):
            _sidecar_exists_check(tmp_path)("a")
    finally:
        tmp_path.chmod(0o700)


def test_a_sidecar_nested_past_the_stdlibs_limit_is_skipped_as_before(tmp_path: Path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    deep = b"[" * 1010 + b"]" * 1010
    (sessions / "a.json").write_bytes(b'{"session_id": "a", "messages": [' + deep + b"]}")
    (sessions / "b.json").write_bytes(b'{"session_id": "b", "messages": []}')
    ref_skipped: list[str] = []
    new_skipped: list[str] = []
    expected = ref_rebuilt_index_bytes(_save_ctx(home), None, ref_skipped)
    got = rebuild_index_from_sidecars(_save_ctx(home), None, new_skipped)
    assert got.data == expected and got.row_ids == ["b"]
    assert new_skipped == ref_skipped and "a.json cannot be loaded" in new_skipped[0]
