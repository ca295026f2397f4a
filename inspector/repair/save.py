"""``Session.save`` expressed as file changes (spec session-storage §4.1, §3.2).

Given a modified in-memory session, return what hermes' save would write:

1. the sidecar (``updated_at = now`` when touching), skipped when an empty transcript
   would overwrite a non-empty one while a turn is live;
2. ``<sid>.json.bak`` holding the previous bytes when the save shrinks ``messages``;
3. ``_index.json`` through the fast path (or a full rebuild when the index is unusable);
4. when the session has messages, its id removed from both tombstone files (a file that
   becomes empty is deleted).
"""

from __future__ import annotations

import codecs
import gc
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from inspector import portable
from inspector.forked import Forked, ForkedError, run_nicer
from inspector.gcpause import gc_paused
from inspector.plan import FileChange
from inspector.store.files import FileSnapshot, TooLargeToLoad, read_raw, read_regular
from inspector.store.index import (
    FastPathFailed,
    IndexSortError,
    PathResolver,
    cache_hit_percent,
    compact,
    index_after_save,
    index_after_save_from_bytes,
    index_path,
    last_message_at,
    load_for_index,
    parse_index_json,
)
from inspector.store.index_splice import SpliceFacts, splice_facts
from inspector.store.jsonfmt import (
    dumps_pretty,
    dumps_pretty_fast,
    loads_bytes,
    loads_bytes_fast,
)
from inspector.store.sidecar import (
    META_KEYS,
    TOO_DEEP,
    LoadedSession,
    SidecarError,
    _metadata_count,
    _nonnegative_int,
    _path_value,
    _str_stripped_or_none,
    count_messages_in_bytes,
    is_safe_session_id,
    session_payload,
)

# (name, cap) in the order a save clears them: the zero-message-orphan tombstone first
TOMBSTONE_FILES = (("_pruned_webui_orphans.json", 500), ("_deleted_webui_sessions.json", 1000))


class IndexRebuildError(ValueError):
    """A sidecar hermes' own index rebuild would crash on (the message names it)."""


@dataclass(frozen=True)
class SaveContext:
    """Where and when a save happens."""

    session_dir: Path
    snapshot: FileSnapshot
    now: float
    cwd: Path


def _change(ctx: SaveContext, path: Path, after: bytes | None) -> FileChange | None:
    raw = ctx.snapshot.read(path)
    before = raw.data if raw is not None else None
    if before == after:
        return None
    return FileChange(
        path=path, before=before, after=after, fingerprint=raw.fingerprint if raw is not None else None
    )


def sidecar_names(session_dir: Path, *, sort: bool = True) -> list[str]:
    """Names of :func:`~inspector.store.sidecar.sidecar_paths`, from one listing, as strings.

    ``session_dir.glob("*.json")`` (case-sensitive, dot-names included, folders included) minus
    the ``_``-prefixed names. Sorted (for children of one folder ``Path`` order is name order),
    or with ``sort=False`` in the folder's own order, as ``os.scandir`` (and so ``glob``) gives it.
    """
    try:
        names = os.listdir(session_dir)
    except (OSError, ValueError):
        return []
    names = [n for n in names if n.endswith(".json") and not n.startswith("_")]
    return sorted(names) if sort else names


def persisted_ids(session_dir: Path) -> frozenset[str]:
    """hermes' ``_persisted_session_ids_snapshot``: the stems of the folder's sidecar names
    (``Path.stem``: ``a.b.json`` -> ``a.b``, ``.json`` -> ``.json``); empty when it cannot be listed."""
    return frozenset(n if n == ".json" else n[:-5] for n in sidecar_names(session_dir, sort=False))


def parse_sidecar_exact(data: bytes) -> dict:
    """:func:`~inspector.store.sidecar.parse_sidecar_bytes`, parsed by orjson where that is exact."""
    try:
        obj = loads_bytes_fast(data)
    except UnicodeDecodeError as exc:
        raise SidecarError(f"not valid UTF-8: {exc}") from exc
    except ValueError as exc:
        raise SidecarError(f"not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise SidecarError(TOO_DEEP) from exc
    if not isinstance(obj, dict):
        raise SidecarError(f"top-level JSON is {type(obj).__name__}, not an object") from NotAnObject()
    return obj


class NotAnObject(Exception):
    """The cause of a :class:`SidecarError` for JSON that parses but is not an object."""


try:  # parses only, for index rows (see light_parse_sidecar); never writes
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - msgspec is a declared dependency
    _msgspec = None

# Levels of arrays the light parse wraps a sidecar in, so that it refuses a document a few levels
# less deep than the stdlib's parse does from the same place (both count levels against the same
# recursion budget; the exact parse calls the stdlib a few Python frames deeper). Checked once per
# process by _light_depth_is_safe.
_LIGHT_WRAP = 16
_LIGHT_MARGIN = 8  # levels the light parse must give up before the stdlib does, at least
_LIGHT_PROBE_MAX = 20_000
_LIGHT_OPEN, _LIGHT_CLOSE = b"[" * _LIGHT_WRAP, b"]" * _LIGHT_WRAP
_light: Any = None  # the decoder; False where the light parse cannot be used


class _LightMessage(TypedDict, total=False):
    """What an index row takes of a message."""

    role: Any
    _ts: Any
    timestamp: Any
    _partial: Any


def _light_sidecar() -> Any:
    """The ``TypedDict`` of what an index row takes of a sidecar: every key ``load_session`` reads."""
    keys: dict[str, Any] = {key: Any for key in META_KEYS}
    keys.update({"self": Any, "message_count": Any, "messages": list[_LightMessage]})
    make: Any = TypedDict  # its functional form, with keys known only here
    return make("_LightSidecar", keys, total=False)


def _light_decoder() -> Any:
    """msgspec's decoder of a sidecar wrapped in :data:`_LIGHT_WRAP` arrays into what an index row
    takes of it: the keys ``load_session`` reads (each value as the JSON says, containers
    included), and of each message only ``role``, ``_ts``, ``timestamp`` and ``_partial``. The
    rest (message texts, tool calls, context messages...) is checked as JSON and skipped, never
    built. False when msgspec is missing or its depth limit is not known to be below the stdlib's."""
    global _light
    if _light is None:
        _light = False
        if _msgspec is not None:
            shape = _light_sidecar()
            for _ in range(_LIGHT_WRAP):
                shape = list.__class_getitem__(shape)
            decoder = _msgspec.json.Decoder(shape)
            if _light_depth_is_safe(decoder):
                _light = decoder
    return _light


def _deepest(parses: Callable[[int], bool]) -> int:
    """The largest n in [0, _LIGHT_PROBE_MAX] for which ``parses(n)`` (which holds up to some n)."""
    lo, hi = 0, _LIGHT_PROBE_MAX
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if parses(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _light_depth_is_safe(decoder: Any) -> bool:
    """Whether the light parse refuses every document nested more than :data:`_LIGHT_MARGIN`
    levels less deep than what the stdlib parses from here, in a value it keeps and in one it
    skips (msgspec and the stdlib both count nesting against the interpreter's recursion budget:
    measured rather than assumed). False when neither gives up below the probe's bound."""
    wrap = _LIGHT_WRAP

    def light(key: str, n: int) -> bool:
        doc = b"[" * wrap + b'{"' + key.encode() + b'": ' + b"[" * n + b"]" * n + b"}" + b"]" * wrap
        try:
            decoder.decode(doc)
            return True
        except (_msgspec.DecodeError, RecursionError):
            return False

    def stdlib(n: int) -> bool:
        try:
            json.loads('{"k": ' + "[" * n + "]" * n + "}")
            return True
        except RecursionError:
            return False

    limit = _deepest(stdlib)
    if limit >= _LIGHT_PROBE_MAX:
        return False

    def kept(n: int) -> bool:
        return light("title", n)

    def skipped(n: int) -> bool:
        return light("tool_calls", n)

    return _deepest(kept) + _LIGHT_MARGIN <= limit and _deepest(skipped) + _LIGHT_MARGIN <= limit


def light_parse_sidecar(data: bytes) -> dict | None:
    """What :func:`parse_sidecar_exact` gives of everything an index row takes from a sidecar (and
    the rebuild's observer: ``session_id``, ``workspace``), or None where only the exact parse can
    tell (the caller then runs it, from its own frame: near the stdlib's nesting limit, its verdict
    depends on how deep the stack already is).

    The light parse (:func:`_light_decoder`) checks the whole text as JSON but builds only those
    values. It is used where it surely agrees with the exact parse: the bytes are UTF-8 (msgspec
    does not check the strings it skips), the text is one JSON object whose nesting is within the
    stdlib's, every message is an object and none is a ``_partial`` row (hermes' load compares
    the texts of adjacent partial rows, so those files are parsed whole). What msgspec refuses
    (``NaN``, a lone surrogate escape, a number out of range, anything invalid) is left to the
    exact parse, whose verdict it is. Integers of any size and floats are parsed as the stdlib does
    (correctly rounded). ``tests/repair/test_light_index_parse.py`` and the differential test's
    parse check (``tests/differential/parse_check.py``) hold its rows to the exact parse's."""
    decoder = _light if _light is not None else _light_decoder()
    if decoder is not False:
        try:
            if not data.isascii():
                check_utf8(data)
            obj = decoder.decode(b"".join((_LIGHT_OPEN, data, _LIGHT_CLOSE)))  # one copy, not two
        except (ValueError, RecursionError):  # msgspec.DecodeError and UnicodeDecodeError are ValueErrors
            obj = None
        if obj is not None:
            for _ in range(_LIGHT_WRAP):
                if len(obj) != 1:
                    break
                obj = obj[0]
            else:
                messages = obj.get("messages")
                if messages is None or not any(m.get("_partial") for m in messages):
                    return obj
    return None


# ---------------------------------------------------------------- the row of a lightly parsed sidecar

# A value load_session turns into text with str() that is a container goes to load_for_index +
# compact: its str() recurses, and near the nesting limit its verdict depends on the stack's depth.
_CONTAINERS = (list, dict)


class _NotLight(Exception):
    """A value :func:`_light_row` leaves to ``load_for_index`` + ``compact``."""


def light_index_row(obj: dict, now: float, resolve: PathResolver) -> dict:
    """``compact(load_for_index(obj, now=now, resolve=resolve))`` of a sidecar object that
    :func:`light_parse_sidecar` gave (and only of such a one), made in one step: the same row (keys,
    order, values and their types), or that pair's own exception.

    Those objects hold only the keys ``load_session`` reads, ``messages`` is absent or a list of
    objects, and no message is a ``_partial`` row, so hermes' collapse of duplicate partial rows
    keeps every message and no message counts as an empty partial; the row is made from the file's
    values without the 71-key session ``load_session`` builds (and the fields only a save needs).
    Every coercion the row shows is made by the same helpers as ``load_session`` and ``compact``
    (``_nonnegative_int``, ``_str_stripped_or_none``, ``_path_value``, ``resolve``,
    ``last_message_at``, ``cache_hit_percent``), and everything ``load_session`` does that can raise
    is done here too; where anything raises, or a value that ``str()`` would walk is a container,
    the pair runs instead and its verdict (row or exception) is the answer. Held to the pair by
    ``tests/repair/test_light_index_row_rules.py`` (generated and odd sidecars), to hermes' own
    ``Session`` + ``compact()`` there too (with ``HERMES_WEBUI_SRC``), and by the differential
    test's parse check on every sidecar it writes."""
    try:
        return _light_row(obj, now, resolve)
    except Exception:  # noqa: BLE001 - any doubt: the exact pair decides, and raises its own error
        return compact(load_for_index(obj, now=now, resolve=resolve))


def _light_row(raw: dict, now: float, resolve: PathResolver) -> dict:
    """:func:`light_index_row`'s one step (raises where the pair might; the caller then runs it).

    Each value is the file's (``get`` with ``load_session``'s default: None but for ``title``,
    ``model`` and the counters) coerced as ``load_session`` coerces it, written in ``compact()``'s
    order."""
    if "self" in raw:  # Session(**data) cannot take it
        raise _NotLight
    get = raw.get
    provider = get("model_provider")
    source = get("compression_recovery_source_session_id")
    action = get("compression_recovery_action")
    share = get("share_token")
    branch = get("worktree_branch")
    if (
        type(provider) in _CONTAINERS
        or type(source) in _CONTAINERS
        or type(action) in _CONTAINERS
        or type(share) in _CONTAINERS
        or type(branch) in _CONTAINERS
    ):
        raise _NotLight
    provider = str(provider).strip().lower() if provider else None
    source = _str_stripped_or_none(source)
    action = _str_stripped_or_none(action)
    share = _str_stripped_or_none(share)
    branch = str(branch) if branch else None
    estimate = _nonnegative_int(get("post_compression_context_tokens_estimate"))
    ws = resolve(_path_value(raw["workspace"] if "workspace" in raw else "", "workspace"))
    created_ws = get("created_workspace")
    created_ws = resolve(_path_value(created_ws, "created_workspace")) if created_ws else ws
    wt_path = get("worktree_path")
    wt_path = resolve(_path_value(wt_path, "worktree_path")) if wt_path else None
    wt_root = get("worktree_repo_root")
    wt_root = resolve(_path_value(wt_root, "worktree_repo_root")) if wt_root else None
    messages = get("messages") or []  # absent, or a list of objects (the light parse's shape)
    count = _metadata_count(raw)
    if count is None:
        count = len(messages)
    pending = get("pending_user_message")
    if pending:
        count = max(count, 1)
    updated = get("updated_at") or now
    tokens_in, tokens_read = get("input_tokens") or 0, get("cache_read_tokens") or 0
    details, engine_state = get("compression_anchor_details"), get("context_engine_state")
    recovery, routing = get("compression_recovery"), get("gateway_routing")
    history = get("gateway_routing_history")
    times = {
        "pending_user_message": pending,
        "pending_started_at": get("pending_started_at"),
        "updated_at": updated,
    }
    row: dict[str, Any] = {
        "session_id": get("session_id") or None,
        "title": get("title", "Untitled"),
        "workspace": ws,
        "model": get("model", ""),
        "model_provider": provider,
        "message_count": count,
        "created_at": get("created_at") or now,
        "updated_at": updated,
        "last_message_at": last_message_at(times, messages),
        "pinned": bool(get("pinned")),
        "archived": bool(get("archived")),
        "project_id": get("project_id") or None,
        "profile": get("profile"),
        "input_tokens": tokens_in,
        "output_tokens": get("output_tokens") or 0,
        "estimated_cost": get("estimated_cost"),
        "cache_read_tokens": tokens_read,
        "cache_write_tokens": get("cache_write_tokens") or 0,
        "cache_hit_percent": cache_hit_percent({"cache_read_tokens": tokens_read, "input_tokens": tokens_in}),
        "personality": get("personality"),
        "compression_anchor_visible_idx": get("compression_anchor_visible_idx"),
        "compression_anchor_message_key": get("compression_anchor_message_key"),
        "compression_anchor_summary": get("compression_anchor_summary"),
        "pre_compression_snapshot": bool(get("pre_compression_snapshot")),
        "context_engine": get("context_engine"),
        "compression_anchor_engine": get("compression_anchor_engine"),
        "compression_anchor_mode": get("compression_anchor_mode"),
        "compression_anchor_details": details if isinstance(details, dict) else {},
        "context_engine_state": engine_state if isinstance(engine_state, dict) else {},
        "context_length": get("context_length"),
        "threshold_tokens": get("threshold_tokens"),
        "last_prompt_tokens": get("last_prompt_tokens"),
        "post_compression_context_tokens_estimate": estimate if estimate and estimate > 0 else None,
        "compression_recovery": recovery if isinstance(recovery, dict) else {},
        "recommended_recovery_action": get("recommended_recovery_action"),
        "gateway_routing": routing if isinstance(routing, dict) else None,
        "gateway_routing_history": history if isinstance(history, list) else [],
        "manual_title": bool(get("manual_title")),
    }
    parent = get("parent_session_id")
    if parent:
        row["parent_session_id"] = parent
    row["created_workspace"] = created_ws
    if source or action:
        row["compression_recovery_source_session_id"] = source
        row["compression_recovery_action"] = action
    if wt_path:
        row["worktree_path"] = wt_path
        row["worktree_branch"] = branch
        row["worktree_repo_root"] = wt_root
        row["worktree_created_at"] = get("worktree_created_at")
    row["user_message_count"] = sum(1 for m in messages if m.get("role") == "user")
    row["active_stream_id"] = get("active_stream_id")
    row["pending_user_message"] = pending
    row["has_pending_user_message"] = bool(pending)
    row["is_cli_session"] = bool(get("is_cli_session"))
    row["source_tag"] = get("source_tag")
    row["raw_source"] = get("raw_source")
    row["session_source"] = get("session_source")
    row["source_label"] = get("source_label")
    row["read_only"] = bool(get("read_only"))
    row["enabled_toolsets"] = get("enabled_toolsets")
    draft, pause = get("composer_draft"), get("process_wakeup_pause")
    row["composer_draft"] = draft if isinstance(draft, dict) else {}
    row["process_wakeup_pause"] = pause if isinstance(pause, dict) else {}
    row["share_token"] = share
    row["share_created_at"] = get("share_created_at")
    row["is_streaming"] = False
    return row


_UTF8_BLOCK = 4096  # bytes of a sidecar looked at together by check_utf8
_utf8_decode = codecs.utf_8_decode


def check_utf8(data: bytes) -> None:
    """Raise UnicodeDecodeError where ``data.decode("utf-8")`` does (and only there), decoding
    only the parts of ``data`` that are not ASCII.

    ``data`` is cut into blocks of :data:`_UTF8_BLOCK` bytes; each run of blocks that hold a byte
    past ASCII is decoded on its own (from a view: no copy), the all-ASCII blocks are skipped.
    Exact: a character of more than one byte is made of bytes past ASCII only, so it never
    straddles an all-ASCII block; each decoded run starts at the start of ``data`` or after an
    ASCII byte and ends at its end or before one, where a sequence cannot start or go on in the
    whole text either; so the whole text is valid UTF-8 exactly when every run is (the same
    decoder's verdict: overlong forms, surrogates and code points past U+10FFFF refused alike). A
    sidecar's text is mostly ASCII (keys, layout, numbers, English): on the bench home half of
    the non-ASCII files' blocks are ASCII, and this takes two thirds of the whole decode's time.
    ``tests/repair/test_light_index_row_rules.py`` holds it to ``bytes.decode`` on generated bytes
    with bad sequences at and around the block edges."""
    view = memoryview(data)
    size = _UTF8_BLOCK
    n = len(data)
    start = None
    for i in range(0, n, size):
        if data[i : i + size].isascii():
            if start is not None:
                _utf8_decode(view[start:i], "strict", True)
                start = None
        elif start is None:
            start = i
    if start is not None:
        _utf8_decode(view[start:], "strict", True)


@dataclass
class RebuiltIndex:
    """A full index rebuild: the bytes to write and the rows' ``session_id`` (as ``str``), in order."""

    data: bytes
    row_ids: list[str] = field(default_factory=list)


def rebuild_index_from_sidecars(
    ctx: SaveContext,
    overrides: dict[Path, bytes] | None = None,
    skipped: list[str] | None = None,
    observe: Callable[[Path, dict], None] | None = None,
    *,
    recovery: bool = True,
) -> RebuiltIndex:
    """A full index rebuild from every loadable sidecar (``overrides`` = bytes about to be written).

    ``recovery=True`` is ``_rebuild_recovery_session_index`` (materialize, rebuild-index): the
    names sorted; a file that cannot be read or parsed is left out, but a sidecar that parses to
    something other than an object, that ``Session()`` cannot be built from, or whose
    ``compact()`` raises makes hermes' rebuild raise, so :class:`IndexRebuildError` is raised.
    ``recovery=False`` is the rebuild inside ``Session.save`` (index missing or unusable): the
    folder's own order (``glob`` = ``os.scandir`` order; a file about to be created goes last),
    and every sidecar that fails anywhere before its row is made is left out. In both, the sort
    by ``updated_at`` keeps ties in that order, and a sort or UTF-8 write that fails in hermes
    raises :class:`IndexRebuildError`.

    hermes leaves sidecars it cannot load out of the index without a word; ``skipped``, when
    given, collects one line per such file so a preview can say which rows disappear and why.
    ``observe(path, parsed)``, when given, sees every sidecar that parses as an object (before
    hermes' load), so a caller needs no second pass over the folder.

    Each sidecar is read once, parsed, turned into its ``compact()`` row and dropped: only the
    rows are kept. :func:`start_index_rebuild` is the same in two steps.
    """
    return start_index_rebuild(ctx, observe, recovery=recovery).finish(overrides, skipped)


def start_index_rebuild(
    ctx: SaveContext,
    observe: Callable[[Path, dict], None] | None = None,
    *,
    recovery: bool = True,
    helpers: int = 1,
) -> IndexRebuild:
    """:func:`rebuild_index_from_sidecars` begun: the folder is listed now and, on a big folder where
    forking is safe, ``helpers`` forked copies start making the rows of the listed sidecars at
    once, while the caller does other work (materialize reads state.db and writes its new
    sidecars meanwhile: their rows never depend on the others'). :meth:`IndexRebuild.finish`
    (``overrides``: the files about to be written) gives the index; :meth:`IndexRebuild.cancel`
    ends it unused. Every ``start_index_rebuild`` must end in one of the two."""
    return IndexRebuild(ctx, observe, recovery, helpers)


class _Row(NamedTuple):
    """One sidecar's index row: what the rebuild keys and sorts it by, and its text in the index.

    ``text`` is the row as it stands in hermes' ``json.dumps(rows, ensure_ascii=False, indent=2)``
    (an item of the top-level list: every line after the first indented one level more), UTF-8
    encoded; None where that cannot be made on its own (text UTF-8 cannot hold, a value nested too
    deep), and then ``row`` is the ``compact()`` dict itself. Made where the sidecar was parsed, so
    the forked copy of :func:`_rows_in_two` writes its half of the index and sends bytes back."""

    session_id: Any
    message_count: int
    updated_at: Any
    text: bytes | None
    row: dict | None


def _make_row(row: dict) -> _Row:
    try:
        text: bytes | None = dumps_pretty_fast(row).replace(b"\n", b"\n  ")
    except (ValueError, TypeError, RecursionError):  # UnicodeEncodeError is a ValueError
        text = None
    return _Row(
        row["session_id"], row["message_count"], row["updated_at"], text, row if text is None else None
    )


def _final_rows(rows: list[_Row]) -> list[_Row]:
    """:func:`~inspector.store.index.rebuild_rows` on :class:`_Row` s: keyed by ``session_id``
    (rows without one left out), the larger ``message_count`` winning in the first one's place,
    then sorted by ``updated_at``, newest first (IndexSortError where that sort raises)."""
    best: dict[Any, _Row] = {}
    for row in rows:
        sid = row.session_id
        if not sid:
            continue
        if sid not in best or row.message_count > best[sid].message_count:
            best[sid] = row
    try:
        return sorted(best.values(), key=_by_updated_at, reverse=True)
    except TypeError as exc:
        raise IndexSortError(f"hermes' index sort by updated_at fails: {exc}") from exc


def _by_updated_at(row: _Row) -> Any:
    return row.updated_at


def _index_bytes(final: list[_Row]) -> bytes:
    """``dumps_pretty`` of the rows: their texts joined as ``json.dumps`` joins the items of a list
    (``indent=2``: ``[``, each item on a new line two spaces in, ``,`` between, ``]`` on its own
    line; ``[]`` when empty). Where a row has no text, the whole list is written by the stdlib
    path again (the rows with a text read back from it: the same values), which raises as hermes'
    write does."""
    if not final:
        return dumps_pretty_fast([])
    texts = [r.text for r in final]
    if None not in texts:  # one join of the 22 MB (the brackets go on the first and last rows)
        texts[0] = b"[\n  " + texts[0]
        texts[-1] = texts[-1] + b"\n]"
        return b",\n  ".join(texts)
    return dumps_pretty_fast([r.row if r.text is None else loads_bytes(r.text) for r in final])


PARALLEL_ROWS_MIN = 512  # fewer sidecars than this: the rows are made in this process only
CHUNK_FILES = 64  # sidecars per piece of work the processes of a rebuild take one after the other
_MAX_CHUNKS = 4096  # pieces at most (their tokens, 2 bytes each, fit any pipe's buffer)

# What one sidecar gives a rebuild (see IndexRebuild._outcome): None (no file), or one of
_ROW, _SKIP, _STOP = 0, 1, 2  # (_ROW, _Row), (_SKIP, line, [too-large details]), (_STOP, IndexRebuildError)


class IndexRebuild:
    """A full index rebuild under way (:func:`start_index_rebuild`).

    Where it is worth it, the sidecars listed at the start are cut into pieces of
    :data:`CHUNK_FILES`, one token per piece in a pipe; the forked helpers and, from
    :meth:`finish` on, this process take the next token until none is left (so whoever is free
    works: the caller's own work before ``finish`` does not leave a core idle). Each sidecar's
    outcome is kept (its row, its skipped line, or the error hermes' rebuild stops at), and
    ``finish`` walks them in hermes' order with the overridden files' own, so rows, skipped
    lines, the file hermes stops at, the files refused for their size and the observer's
    findings are what one pass in order gives. An observer is split with ``fresh()`` (an empty
    one of its kind per piece) and ``merge(other)`` (the pieces taken in, in order); one
    without them, or an observer with overrides, makes the rebuild one pass here. A helper
    that fails has its pieces made here.

    The helpers read the files themselves: what this process's snapshot reads after the start
    is not seen by them (materialize, the one caller that works meanwhile, reads no sidecar).
    """

    def __init__(
        self,
        ctx: SaveContext,
        observe: Callable[[Path, dict], None] | None,
        recovery: bool,
        helpers: int,
    ) -> None:
        self.ctx, self.observe, self.recovery = ctx, observe, recovery
        self.names = sidecar_names(ctx.session_dir, sort=recovery)
        self.resolve = PathResolver(ctx.cwd)
        self._folder = str(ctx.session_dir)
        self._asked_count = -1
        self._asked_names: set[str] = set()
        self._pieces: list[tuple[int, int]] = []
        self._tokens: int | None = None
        self._helpers: list[Forked] = []
        fresh, merge = getattr(observe, "fresh", None), getattr(observe, "merge", None)
        splittable = observe is None or (callable(fresh) and callable(merge))
        if len(self.names) >= PARALLEL_ROWS_MIN and splittable and helpers > 0 and portable.can_fork():
            self._start(helpers)

    # ------------------------------------------------------------ the helpers

    def _start(self, helpers: int) -> None:
        n = len(self.names)
        size = max(CHUNK_FILES, -(-n // _MAX_CHUNKS))
        self._pieces = [(i, min(i + size, n)) for i in range(0, n, size)]
        _light_decoder()  # the one-time checks (the light parse's depth limit, orjson's escapes in
        dumps_pretty_fast({"": 0})  # the writer) made before the copies, not once in each
        try:
            read_fd, write_fd = os.pipe()
        except OSError:  # no descriptors left...: one pass here
            self._pieces = []
            return
        try:
            os.set_blocking(read_fd, False)  # an empty pipe = no piece left (all were written first)
            tokens = memoryview(b"".join(i.to_bytes(2, "little") for i in range(len(self._pieces))))
            while tokens:
                tokens = tokens[os.write(write_fd, tokens) :]
            self._tokens = read_fd
            for _ in range(helpers):
                try:
                    self._helpers.append(Forked(lambda: self._help_nicer(write_fd)))
                except OSError:
                    break
        except OSError:  # the tokens could not be written (before any helper): one pass here
            pass
        finally:
            os.close(write_fd)
        if not self._helpers:  # no copy could be forked: one pass here
            os.close(read_fd)
            self._tokens, self._pieces = None, []

    def _help_nicer(self, write_fd: int) -> dict[int, tuple]:
        """:meth:`_help` in a forked helper, run nicer than this process (:func:`run_nicer`): the
        caller's own work meanwhile (materialize's planning and staging) is what the write waits
        for first; the helpers' rows are needed only at :meth:`finish`."""
        run_nicer()
        return self._help(write_fd)

    def _help(self, write_fd: int) -> dict[int, tuple]:
        """A helper's work: pieces until none is left, by number (the cyclic GC off: see
        :func:`gc_paused`; the copy ends when its result is sent)."""
        os.close(write_fd)
        gc.disable()
        done: dict[int, tuple] = {}
        while (i := self._claim()) is not None:
            done[i] = self._piece(i)
        return done

    def _claim(self) -> int | None:
        if self._tokens is None:
            return None
        try:
            token = os.read(self._tokens, 2)
        except BlockingIOError:
            return None
        return int.from_bytes(token, "little") if len(token) == 2 else None

    def _piece(self, i: int) -> tuple[list, Any]:
        start, end = self._pieces[i]
        observer = self.observe.fresh() if self.observe is not None else None  # type: ignore[attr-defined]
        return [self._outcome(self.names[k], None, observer) for k in range(start, end)], observer

    def _outcome(self, name: str, data: bytes | None, observe: Callable[[Path, dict], None] | None):
        """What the sidecar ``name`` (``data``: its bytes about to be written) gives the rebuild."""
        ctx = self.ctx
        path = ctx.session_dir / name
        if data is None:
            known = len(ctx.snapshot.too_large)
            try:
                data = self._read(name, path)
            except OSError as exc:  # a folder named *.json or an unreadable file: hermes skips it too
                big = [(e.filename, e.size, e.limit) for e in ctx.snapshot.too_large[known:]]
                del ctx.snapshot.too_large[known:]  # recorded in hermes' order by finish()
                line = f"{name} cannot be read ({exc.strerror or exc}): left out of the index, as hermes does"
                return (_SKIP, line, big)
            if data is None:
                return None
        lines: list[str] = []
        try:
            row = _index_row(ctx, path, data, self.resolve, observe, lines, self.recovery)
        except IndexRebuildError as exc:
            return (_STOP, exc)
        if row is None:
            return (_SKIP, lines[0], [])
        return (_ROW, _make_row(row))

    def _read(self, name: str, path: Path) -> bytes | None:
        """``ctx.snapshot.read_transient(path)`` of a listed sidecar. One the snapshot was never
        asked for (``FileSnapshot.read`` notes every path in ``asked`` before it keeps a version;
        nearly all of them) is read straight from its name: no ``Path`` hashed for the snapshot's
        lookup nor turned into text for the open. Any error there but a missing file is left to
        ``read_transient``, which reads the file again and reports it as before."""
        snapshot = self.ctx.snapshot
        asked = snapshot.asked
        if len(asked) != self._asked_count:  # the asked paths in this folder, by name
            sdir = self.ctx.session_dir
            self._asked_names = {p.name for p in asked if p.parent == sdir}
            self._asked_count = len(asked)
        if name not in self._asked_names:
            try:
                # read_regular opens a str path as well (open_regular takes Path | str)
                return read_regular(os.path.join(self._folder, name))[0]  # type: ignore[arg-type]
            except FileNotFoundError:
                return None
            except OSError:  # too large, not a regular file, unreadable...: read_transient says
                pass
        return snapshot.read_transient(path)

    def _gather(self) -> tuple[list, list]:
        """Every listed sidecar's outcome (in listing order) and each piece's observer: this process
        takes pieces until none is left, then the helpers' are collected."""
        results: dict[int, tuple] = {}
        with gc_paused():  # ~150 collections per process otherwise, nothing cyclic made
            try:
                while (i := self._claim()) is not None:
                    results[i] = self._piece(i)
            finally:
                self._end_helpers(results)
            for i in range(len(self._pieces)):
                if i not in results:  # a helper failed: its pieces are made here
                    results[i] = self._piece(i)
        pieces = [results[i] for i in range(len(self._pieces))]
        return [o for outcomes, _ in pieces for o in outcomes], [observer for _, observer in pieces]

    def _end_helpers(self, results: dict[int, tuple] | None) -> None:
        """Take the pieces nobody has taken (so the helpers stop after their current one), then
        collect (``results``) or just reap the helpers."""
        while self._claim() is not None:
            pass
        if self._tokens is not None:
            os.close(self._tokens)
            self._tokens = None
        helpers, self._helpers = self._helpers, []
        for helper in helpers:
            try:
                done = helper.result()
            except ForkedError:
                continue
            if results is not None:
                results.update(done)

    def cancel(self) -> None:
        """End the rebuild unused: the helpers stop after their current piece and are reaped."""
        self._end_helpers(None)
        self._pieces = []

    # ------------------------------------------------------------ the index

    def finish(
        self, overrides: dict[Path, bytes] | None = None, skipped: list[str] | None = None
    ) -> RebuiltIndex:
        """The rebuilt index, ``overrides`` (path -> bytes about to be written) read instead of the
        folder's files (``skipped`` gets a line per file left out). See :func:`rebuild_index_from_sidecars`."""
        skipped = [] if skipped is None else skipped
        overrides = overrides or {}
        sdir = self.ctx.session_dir
        in_folder = all(p.parent == sdir for p in overrides)
        if self._pieces and in_folder and (self.observe is None or not overrides):
            by_name = {p.name: d for p, d in overrides.items()}
            try:  # the new files first: the helpers may still be reading the others
                made = {name: self._outcome(name, data, None) for name, data in by_name.items()}
            except BaseException:
                self.cancel()
                raise
            outcomes, observers = self._gather()
            rows = self._walk(outcomes, made, skipped)
            if self.observe is not None:
                for observer in observers:
                    self.observe.merge(observer)  # type: ignore[attr-defined]
        else:
            self.cancel()
            rows = self._one_pass(overrides, skipped, in_folder)
        try:
            final = _final_rows(rows)
            out = _index_bytes(final)
        except IndexSortError as exc:
            raise IndexRebuildError(
                f"a sidecar's updated_at cannot be sorted with the others ({exc})"
            ) from exc
        except UnicodeEncodeError as exc:
            raise IndexRebuildError(
                f"a sidecar holds text that cannot be written as UTF-8 ({exc.reason}: "
                f"{exc.object[max(0, exc.start - 20) : exc.end + 20]!r})"
            ) from exc
        return RebuiltIndex(out, [str(r.session_id) for r in final])

    def _order(self, by_name: dict[str, Any]) -> list[tuple[str, int | None]]:
        """(name, its place in the listing, or None for an overridden file) in hermes' order: names
        sorted in a recovery rebuild, else the folder's order with the new files last."""
        order: list[tuple[str, int | None]] = [
            (n, None if n in by_name else k) for k, n in enumerate(self.names)
        ]
        listed = set(self.names)
        order.extend((n, None) for n in by_name if n not in listed)
        if self.recovery:
            order.sort(key=_first)
        return order

    def _walk(self, outcomes: list, made: dict[str, Any], skipped: list[str]) -> list[_Row]:
        """The rows of the outcomes (``made``: those of the overridden files, by name) in hermes'
        order, up to the file its rebuild stops at."""
        order = self._order(made)
        return self._rows_of((outcomes[k] if k is not None else made[name] for name, k in order), skipped)

    def _one_pass(self, overrides: dict[Path, bytes], skipped: list[str], in_folder: bool) -> list[_Row]:
        """The rows made here, in hermes' order, stopping at the file hermes stops at."""
        if not in_folder:
            raise ValueError(
                "an index rebuild reads only the sessions folder: an override names a file outside it"
            )
        by_name = {p.name: d for p, d in overrides.items()}
        order = self._order(by_name)
        with gc_paused():  # ~150 collections per process otherwise, nothing cyclic made
            return self._rows_of(
                (self._outcome(name, by_name.get(name), self.observe) for name, _k in order), skipped
            )

    def _rows_of(self, outcomes: Iterable, skipped: list[str]) -> list[_Row]:
        """The rows of ``outcomes`` (taken one by one, in hermes' order): a skipped file's line into
        ``skipped`` and its too-large files into the snapshot; a refusal raised where it stands,
        so no later file is looked at."""
        rows: list[_Row] = []
        too_large = self.ctx.snapshot.too_large
        for out in outcomes:
            if out is None:
                continue
            if out[0] == _ROW:
                rows.append(out[1])
            elif out[0] == _SKIP:
                skipped.append(out[1])
                too_large.extend(TooLargeToLoad(f, size, limit) for f, size, limit in out[2])
            else:
                raise out[1]
        return rows


def _first(item: tuple) -> Any:
    return item[0]


def _index_row(
    ctx: SaveContext,
    path: Path,
    data: bytes,
    resolve: PathResolver,
    observe: Callable[[Path, dict], None] | None,
    skipped: list[str],
    recovery: bool,
) -> dict | None:
    """One sidecar's ``compact()`` row for a full rebuild; None when hermes leaves it out."""
    try:
        obj = light_parse_sidecar(data)
        light = obj is not None
        if obj is None:
            obj = parse_sidecar_exact(data)
    except (SidecarError, RecursionError) as exc:
        if recovery and isinstance(exc.__cause__, NotAnObject):
            raise IndexRebuildError(f"{path.name}: hermes' recovery rebuild fails on it ({exc})") from exc
        skipped.append(f"{path.name} cannot be loaded ({exc}): left out of the index, as hermes does")
        return None
    if observe is not None:
        observe(path, obj)
    if light:  # light_index_row, with the pair below called from this frame as for any sidecar
        try:
            return _light_row(obj, ctx.now, resolve)
        except Exception:  # noqa: BLE001 - the exact pair decides, and raises its own error
            pass
    try:
        sess = load_for_index(obj, now=ctx.now, resolve=resolve)
        return compact(sess)
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


def rebuilt_index_bytes(
    ctx: SaveContext,
    overrides: dict[Path, bytes] | None = None,
    skipped: list[str] | None = None,
    *,
    recovery: bool = True,
) -> bytes:
    """The bytes of :func:`rebuild_index_from_sidecars`."""
    return rebuild_index_from_sidecars(ctx, overrides, skipped, recovery=recovery).data


class ListedNames:
    """One listing of the sessions folder: the names of its entries that are not symbolic links.

    Such a name existed at listing time, so a stat of it would say so; any other name (not
    listed, a link, a name with ``/``) must still be asked with a stat.
    """

    def __init__(self, session_dir: Path) -> None:
        plain: set[str] = set()
        try:
            with os.scandir(session_dir) as it:
                for entry in it:
                    try:
                        if not entry.is_symlink():
                            plain.add(entry.name)
                    except OSError:
                        continue
        except (OSError, ValueError):
            plain = set()
        if plain:  # a folder that can be listed but not searched (r without x): every stat fails
            try:
                os.stat(os.path.join(session_dir, next(iter(plain))))
            except (OSError, ValueError):
                plain = set()
        self.plain = plain


class TombstoneUnreadable(Exception):
    """hermes' tombstone load raises here (an infinite ``version``): its save stops clearing tombstones."""


def _tombstone_ids(data: bytes) -> set[str] | None:
    """The ids hermes' tombstone loader reads, or None when it reads none (unreadable, not an object,
    ``int(version) != 1``, ``ids`` not a list). Ids are ``str(id).strip()`` of every id whose
    ``str(id or "")`` is not blank, so a number counts and ``null`` does not."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    try:
        version = int(obj.get("version", 0))
    except (TypeError, ValueError):
        return None
    except OverflowError as exc:
        raise TombstoneUnreadable(str(exc)) from exc
    ids = obj.get("ids", [])
    if version != 1 or not isinstance(ids, list):
        return None
    return {str(i).strip() for i in ids if str(i or "").strip()}


def _tombstone_after(data: bytes | None, sid: str, cap: int) -> tuple[bool, bytes | None]:
    """(changed, new bytes or None to delete) after hermes' clear of ``sid`` from a tombstone file.

    The remaining ids are written sorted (the last ``cap`` of them) as ``{"version": 1, "ids": [...]}``;
    an id UTF-8 cannot hold makes hermes' write fail, leaving the file as it was.
    """
    if data is None:
        return False, None
    current = _tombstone_ids(data)
    target = str(sid).strip()
    if current is None or target not in current:
        return False, data
    current.discard(target)
    if not current:
        return True, None
    remaining = sorted(current)[-cap:]
    try:
        return True, dumps_pretty({"version": 1, "ids": remaining})
    except UnicodeEncodeError:
        return False, data


class IndexFacts(NamedTuple):
    """:func:`~inspector.store.index_splice.splice_facts` of an index found ahead of its save, and
    the sha256 of the bytes they were found in: the save uses them only for the same bytes."""

    sha256: str
    facts: SpliceFacts


def index_facts_ahead(session_dir: Path) -> IndexFacts | None:
    """The folder's ``_index.json`` read and its splice facts found, for a save later in this plan
    (a forked copy finds them while the repair runs); None where it cannot be read or the splice is
    not proven: the save then decides as it would without them."""
    try:
        raw = read_raw(index_path(session_dir))
    except OSError:  # TooLargeToLoad too: the plan's own read meets it and decides
        return None
    if raw is None:
        return None
    facts = splice_facts(raw.data)
    return IndexFacts(raw.fingerprint.sha256, facts) if facts is not None else None


def _index_after(
    ctx: SaveContext,
    session: LoadedSession,
    path: Path,
    new_bytes: bytes,
    index_data: bytes | None,
    facts: SpliceFacts | None = None,
) -> bytes:
    """``_write_session_index(updates=[session])``: the fast path over the existing index; where
    the index is missing or the fast path raises, the full rebuild in the folder's own order
    (which raises :class:`IndexRebuildError` where hermes' save would raise). ``facts``: the
    splice facts of ``index_data``, found before."""
    if index_data is not None:
        # hermes lists the folder after writing the sidecar: the saved id is always on disk
        on_disk = persisted_ids(ctx.session_dir) | {session.session_id}
        spliced = index_after_save_from_bytes(index_data, session, on_disk, facts)
        if spliced is not None:
            return spliced
        try:
            rows = parse_index_json(index_data)
        except (ValueError, RecursionError):
            rows = None  # hermes' json.loads raises: fast path fails
        if rows is not None:
            try:
                return index_after_save(rows, session, on_disk)
            except FastPathFailed:
                pass
    return rebuilt_index_bytes(ctx, {path: new_bytes}, recovery=False)


def save_session(
    ctx: SaveContext,
    session: LoadedSession,
    *,
    touch_updated_at: bool,
    skip_index: bool = False,
    existing_count: int | None = None,
    index_facts: IndexFacts | None = None,
) -> list[FileChange]:
    """The file changes of ``session.save(touch_updated_at=...)``; [] when hermes would skip.

    ``existing_count``: the caller's count of the messages of the file on disk (this snapshot's
    bytes of ``<sid>.json``) when it parsed them already; -1 and 0 decide alike below, so a
    file without a ``messages`` list may be given as 0. None: counted here.
    ``index_facts``: :func:`index_facts_ahead` of the folder, used only when this snapshot's
    ``_index.json`` is the very bytes they were found in (the same sha256).
    """
    sid = session.session_id
    if not is_safe_session_id(sid):
        raise ValueError(f"unsafe session id {sid!r}: hermes refuses to save it")
    data = session.data
    if touch_updated_at:
        data["updated_at"] = ctx.now
    path = ctx.session_dir / f"{sid}.json"
    existing = ctx.snapshot.data(path)
    new_bytes = dumps_pretty_fast(session_payload(data))  # = dump_session(data)
    changes: list[FileChange] = []
    if existing is None:
        existing_count = 0
    elif existing_count is None:
        existing_count = count_messages_in_bytes(existing)
    incoming = len(data["messages"])
    if (
        existing is not None
        and existing_count > 0
        and incoming == 0
        and (data.get("active_stream_id") or data.get("pending_user_message"))
    ):
        return []
    if existing is not None and existing_count > incoming:
        bak = _change(ctx, path.with_name(f"{sid}.json.bak"), existing)
        if bak:
            changes.append(bak)
    main = _change(ctx, path, new_bytes)
    if main:
        changes.append(main)
    if not skip_index:
        ipath = index_path(ctx.session_dir)
        raw = ctx.snapshot.read(ipath)
        facts = None
        if raw is not None and index_facts is not None and index_facts.sha256 == raw.fingerprint.sha256:
            facts = index_facts.facts
        after = _index_after(ctx, session, path, new_bytes, raw.data if raw is not None else None, facts)
        idx = _change(ctx, ipath, after)
        if idx:
            changes.append(idx)
    if data["messages"]:
        for name, cap in TOMBSTONE_FILES:
            tpath = ctx.session_dir / name
            try:
                changed, after = _tombstone_after(ctx.snapshot.data(tpath), sid, cap)
            except TombstoneUnreadable:
                break  # hermes' clear raises: the save logs it and clears no further tombstone
            if changed:
                tc = _change(ctx, tpath, after)
                if tc:
                    changes.append(tc)
    return changes
