"""The session sidecar ``SESSION_DIR/<sid>.json``: load, save and ``compact()`` as hermes does.

A loaded sidecar is a plain ``dict`` in hermes' save order (spec session-storage §2.2):
71 keys, unknown keys dropped, values coerced like ``Session.__init__`` (§2.3). Writing it
back with :func:`dump_session` produces the bytes ``Session.save`` would produce.

Path resolution (``workspace``, ``created_workspace``, worktree paths) depends on the
machine and on the working directory of the hermes process (an empty workspace becomes
its cwd). Callers pass that directory explicitly as ``cwd``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.store.files import RawFile
from inspector.store.jsonfmt import dumps_pretty, loads_bytes, loads_or_none

# the reason given for a sidecar on which the stdlib's json.loads raises RecursionError (hermes' too)
TOO_DEEP = "JSON nested too deeply to parse"

SAFE_SESSION_ID = re.compile(r"[A-Za-z0-9_-]+")

# (key, default) in the order Session.save writes the metadata prefix.
_META_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("session_id", None),
    ("title", "Untitled"),
    ("workspace", None),
    ("created_workspace", None),
    ("model", ""),
    ("model_provider", None),
    ("model_explicit_pick_signature", None),
    ("created_at", None),
    ("updated_at", None),
    ("pinned", False),
    ("archived", False),
    ("project_id", None),
    ("profile", None),
    ("input_tokens", 0),
    ("output_tokens", 0),
    ("estimated_cost", None),
    ("cache_read_tokens", 0),
    ("cache_write_tokens", 0),
    ("personality", None),
    ("active_stream_id", None),
    ("pending_user_message", None),
    ("pending_attachments", []),
    ("pending_started_at", None),
    ("pending_user_source", None),
    ("compression_anchor_visible_idx", None),
    ("compression_anchor_message_key", None),
    ("compression_anchor_summary", None),
    ("pre_compression_snapshot", False),
    ("context_engine", None),
    ("compression_anchor_engine", None),
    ("compression_anchor_mode", None),
    ("compression_anchor_details", {}),
    ("context_engine_state", {}),
    ("context_length", None),
    ("threshold_tokens", None),
    ("last_prompt_tokens", None),
    ("post_compression_context_tokens_estimate", None),
    ("compression_recovery", {}),
    ("recommended_recovery_action", None),
    ("compression_recovery_source_session_id", None),
    ("compression_recovery_action", None),
    ("truncation_watermark", None),
    ("truncation_boundary", None),
    ("clear_generation", None),
    ("intentional_shrink_generation", None),
    ("gateway_routing", None),
    ("gateway_routing_history", []),
    ("llm_title_generated", False),
    ("manual_title", False),
    ("parent_session_id", None),
    ("worktree_path", None),
    ("worktree_branch", None),
    ("worktree_repo_root", None),
    ("worktree_created_at", None),
    ("is_cli_session", False),
    ("source_tag", None),
    ("raw_source", None),
    ("session_source", None),
    ("source_label", None),
    ("read_only", False),
    ("enabled_toolsets", None),
    ("composer_draft", {}),
    ("process_wakeup_pause", {}),
    ("share_token", None),
    ("share_created_at", None),
)
META_KEYS: tuple[str, ...] = tuple(k for k, _ in _META_DEFAULTS)
BULK_KEYS = ("messages", "tool_calls", "anchor_activity_scenes")
# Public attributes hermes keeps after the bulk keys; every other unknown key is dropped on load.
EXTRA_KEYS = ("context_messages",)
SAVED_KEYS = META_KEYS + ("message_count", "anchor_scene_index") + BULK_KEYS + EXTRA_KEYS

_CONTAINER_DEFAULTS = tuple((k, d) for k, d in _META_DEFAULTS if isinstance(d, (list, dict)))
_BOOL_KEYS = (
    "pinned",
    "archived",
    "pre_compression_snapshot",
    "llm_title_generated",
    "manual_title",
    "is_cli_session",
    "read_only",
)
_ZERO_IF_FALSY = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_DICT_KEYS = (
    "compression_anchor_details",
    "context_engine_state",
    "compression_recovery",
    "composer_draft",
    "process_wakeup_pause",
)


class SidecarError(ValueError):
    """A sidecar hermes could not load (bad UTF-8, bad JSON, not an object)."""


def is_safe_session_id(sid: object) -> bool:
    """hermes' ``is_safe_session_id``: non-empty, only ``A-Z a-z 0-9 _ -``."""
    return isinstance(sid, str) and bool(SAFE_SESSION_ID.fullmatch(sid))


def resolve_path(value: str, cwd: Path) -> str:
    """``Path(value).expanduser().resolve()`` evaluated as if the process cwd were ``cwd``."""
    p = Path(value).expanduser()
    if not p.is_absolute():
        p = cwd / p
    return str(Path(os.path.realpath(p)))


def parse_sidecar_bytes(data: bytes) -> dict:
    """Decode and parse a sidecar as ``Session.load`` does; raise SidecarError like hermes fails."""
    try:
        obj = loads_bytes(data)
    except UnicodeDecodeError as exc:
        raise SidecarError(f"not valid UTF-8: {exc}") from exc
    except ValueError as exc:
        raise SidecarError(f"not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise SidecarError(TOO_DEEP) from exc
    if not isinstance(obj, dict):
        raise SidecarError(f"top-level JSON is {type(obj).__name__}, not an object")
    return obj


def _nonnegative_int(value: Any) -> Any:
    """``_parse_nonnegative_int``: an int >= 0 as it is (``True`` included), else ``int(value)``
    when that is >= 0, else None. ``int()`` of an infinity raises OverflowError, as in hermes."""
    if isinstance(value, int) and value >= 0:
        return value
    try:
        parsed = int(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed >= 0 else None


def _str_stripped_or_none(value: Any) -> str | None:
    """``str(value).strip() if value else None`` (a blank string stays ``""``)."""
    return str(value).strip() if value else None


def _path_value(value: Any, key: str) -> str:
    """A path hermes hands to ``Path()``: anything but a string raises TypeError there."""
    if not isinstance(value, str):
        raise TypeError(f"{key}: expected str, bytes or os.PathLike object, not {type(value).__name__}")
    return value


def _metadata_count(raw: dict) -> int | None:
    """The ``message_count`` hermes' ``compact()`` reports: ``int(value)`` when that works and is
    >= 0 (``"7"`` -> 7, ``7.9`` -> 7, ``true`` -> 1), else None; an infinity raises OverflowError."""
    count = _nonnegative_int(raw.get("message_count"))
    return None if count is None else int(count)


def _partial_signature(msg: dict) -> tuple:
    """What makes two ``_partial`` assistant rows the same for hermes: stripped content and
    reasoning, and each partial tool call's name, args (as sorted JSON), done/error flags, preview."""
    tools = []
    for call in msg.get("_partial_tool_calls") or []:
        if not isinstance(call, dict):
            continue
        try:
            args = json.dumps(call.get("args") or {}, ensure_ascii=False, sort_keys=True, default=str)
        except Exception:  # noqa: BLE001 - hermes falls back to str() on any failure
            args = str(call.get("args") or "")
        tools.append(
            (
                str(call.get("name") or ""),
                args,
                bool(call.get("done", False)),
                bool(call.get("is_error", False)),
                str(call.get("preview") or call.get("snippet") or ""),
            )
        )
    return (str(msg.get("content") or "").strip(), str(msg.get("reasoning") or "").strip(), tuple(tools))


def collapse_duplicate_partials(messages: Any) -> tuple[Any, bool]:
    """hermes' load step: of adjacent ``_partial`` rows with the same signature keep the first.

    Returns (messages, whether anything was dropped); a non-list is returned as it is.
    """
    if not isinstance(messages, list):
        return messages, False
    kept: list = []
    previous = None
    for msg in messages:
        if isinstance(msg, dict) and msg.get("_partial"):
            sig = _partial_signature(msg)
            if sig == previous:
                continue
            previous = sig
        else:
            previous = None
        kept.append(msg)
    return kept, len(kept) != len(messages)


@dataclass
class LoadedSession:
    """A session as hermes holds it after ``Session.load``.

    ``data`` holds the saved keys in save order. ``count_hint`` is the file's
    ``message_count`` (``compact()`` reports it, not ``len(messages)``).
    """

    data: dict
    count_hint: int | None
    dropped_keys: list[str] = field(default_factory=list)
    # ``messages`` when the file holds a truthy non-list there (hermes keeps it; ``data`` has []):
    # only ``compact()`` looks at it, as hermes' does.
    odd_messages: Any = None
    # hermes dropped adjacent duplicate ``_partial`` rows while loading (and re-saves the file then)
    collapsed_partials: bool = False
    # keys whose file value is truthy but not a list and that ``data`` holds as [] (hermes keeps it)
    odd_lists: tuple[str, ...] = ()

    @property
    def session_id(self) -> str:
        return self.data["session_id"]


def load_session(
    raw: dict,
    *,
    now: float,
    cwd: Path,
    resolve: Callable[[str], str] | None = None,
    dropped_keys: bool = True,
) -> LoadedSession:
    """Build the in-memory session hermes would build from a parsed sidecar dict.

    ``resolve`` resolves a workspace path (default: :func:`resolve_path` against ``cwd``; an index
    rebuild passes one that answers each distinct value once). ``dropped_keys=False`` skips listing
    the keys hermes does not save (the index needs only the fields).
    """
    get = raw.get
    data: dict[str, Any] = {key: get(key, default) for key, default in _META_DEFAULTS}
    for key, default in _CONTAINER_DEFAULTS:
        if key not in raw:
            data[key] = type(default)()  # a fresh [] / {} per session, as Session.__init__ makes
    if not data["session_id"]:
        # hermes invents a random id here; we cannot reproduce randomness, callers refuse.
        data["session_id"] = None
    if "self" in raw:  # Session(**data) cannot take it
        raise TypeError("Session.__init__() got multiple values for argument 'self'")
    for key in _BOOL_KEYS:
        data[key] = bool(data[key])
    for key in _ZERO_IF_FALSY:
        data[key] = data[key] or 0
    for key in _DICT_KEYS:
        if not isinstance(data[key], dict):
            data[key] = {}
    mp = data["model_provider"]
    data["model_provider"] = str(mp).strip().lower() if mp else None
    data["model_explicit_pick_signature"] = data["model_explicit_pick_signature"] or None
    data["project_id"] = data["project_id"] or None
    for key in ("created_at", "updated_at"):
        if not data[key]:
            data[key] = now
    estimate = _nonnegative_int(data["post_compression_context_tokens_estimate"])
    data["post_compression_context_tokens_estimate"] = estimate if estimate and estimate > 0 else None
    for key in ("compression_recovery_source_session_id", "compression_recovery_action", "share_token"):
        data[key] = _str_stripped_or_none(data[key])
    if not isinstance(data["gateway_routing"], dict):
        data["gateway_routing"] = None
    if not isinstance(data["gateway_routing_history"], list):
        data["gateway_routing_history"] = []
    data["pending_attachments"] = data["pending_attachments"] or []
    data["worktree_branch"] = str(data["worktree_branch"]) if data["worktree_branch"] else None
    if resolve is None:

        def resolve(value: str) -> str:
            return resolve_path(value, cwd)

    # A missing workspace is hermes' DEFAULT_WORKSPACE (machine-dependent); taken here as "".
    ws = raw["workspace"] if "workspace" in raw else ""
    data["workspace"] = resolve(_path_value(ws, "workspace"))
    cws = data["created_workspace"]
    data["created_workspace"] = resolve(_path_value(cws, "created_workspace")) if cws else data["workspace"]
    for key in ("worktree_path", "worktree_repo_root"):
        value = data[key]
        data[key] = resolve(_path_value(value, key)) if value else None
    messages, collapsed = collapse_duplicate_partials(raw.get("messages"))
    tool_calls = raw.get("tool_calls")
    scenes = raw.get("anchor_activity_scenes")
    context = raw.get("context_messages")
    data["messages"] = messages if isinstance(messages, list) else []
    data["tool_calls"] = tool_calls or []  # hermes keeps a truthy non-list as it is
    data["anchor_activity_scenes"] = scenes if isinstance(scenes, dict) else {}
    data["context_messages"] = context if isinstance(context, list) else []
    odd = messages if messages and not isinstance(messages, list) else None
    count_hint = _metadata_count(raw)
    dropped = [k for k in raw if k not in SAVED_KEYS] if dropped_keys else []
    odd_lists = ("messages",) if odd is not None else ()
    return LoadedSession(
        data=data,
        count_hint=count_hint,
        dropped_keys=dropped,
        odd_messages=odd,
        collapsed_partials=collapsed,
        odd_lists=odd_lists,
    )


def sidecar_paths(session_dir: Path) -> list[Path]:
    """hermes' list of live sidecars: every ``*.json`` not starting with ``_``, sorted."""
    try:
        return sorted(p for p in session_dir.glob("*.json") if not p.name.startswith("_"))
    except OSError:
        return []


def pending_retry_marker(messages: object) -> dict | None:
    """The row hermes' ``_session_has_pending_journal_retry`` finds, or None.

    Walk from the newest row: a row with a truthy ``_pending_journal_recovery`` is the
    marker; the first normal assistant reply (not ``_error``) before that ends the search.
    """
    for message in reversed(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            continue
        if message.get("_pending_journal_recovery"):
            return message
        if message.get("role") == "assistant" and not message.get("_error"):
            return None
    return None


def anchor_scene_index(scenes: dict) -> dict:
    """``{scene_key: updated_at}`` fingerprint of the anchor scenes, written before the bodies."""
    out = {}
    for key, record in scenes.items():
        if isinstance(record, dict):
            out[key] = record.get("updated_at")
    return out


def session_payload(data: dict) -> dict:
    """The dict ``Session.save`` serializes, in its key order."""
    payload = {key: data[key] for key in META_KEYS}
    payload["message_count"] = len(data["messages"])
    payload["anchor_scene_index"] = anchor_scene_index(data["anchor_activity_scenes"])
    for key in BULK_KEYS + EXTRA_KEYS:
        payload[key] = data[key]
    return payload


def dump_session(data: dict) -> bytes:
    """Bytes of ``Session.save`` for this session (``updated_at`` already set by the caller)."""
    return dumps_pretty(session_payload(data))


def count_messages_in_bytes(data: bytes | None) -> int:
    """hermes' ``_msg_count``: len(messages), or -1 for absent/unreadable/non-object/no list."""
    obj = loads_or_none(data)
    if not isinstance(obj, dict):
        return -1
    messages = obj.get("messages")
    return len(messages) if isinstance(messages, list) else -1


def read_sidecar(raw: RawFile, *, now: float, cwd: Path) -> LoadedSession:
    """Parse and load a sidecar file; raises SidecarError with a readable reason."""
    data = parse_sidecar_bytes(raw.data)
    try:
        return load_session(data, now=now, cwd=cwd)
    except (ValueError, TypeError, OSError, OverflowError, RuntimeError) as exc:
        # e.g. a NUL in workspace: hermes' Path.resolve() raises and the sidecar is unloadable
        raise SidecarError(f"hermes cannot load it: {exc}") from exc


# hermes' lazy journal retry: _JOURNAL_RETRY_MAX_ATTEMPTS and _JOURNAL_RETRY_GIVEUP_SECONDS
MAX_ATTEMPTS = 12
GIVEUP_SECONDS = 86400


def retry_still_pending(marker: dict, now: float) -> bool:
    """True while hermes' lazy retry would still read the journal for this pending marker (§4.3 step 6)."""
    try:
        attempts = int(marker.get("_journal_retry_attempts") or 0)
    except (TypeError, ValueError):
        return False
    first_seen = marker.get("_journal_retry_first_seen_ts") or 0
    if not marker.get("_journal_retry_stream_id") or attempts >= MAX_ATTEMPTS:
        return False
    try:
        return not (first_seen and now - float(first_seen) > GIVEUP_SECONDS)
    except (TypeError, ValueError):
        return False


def runs_owned_elsewhere(session: Mapping[str, Any], marker: dict | None, now: float) -> set[str]:
    """The runs whose journals another owner still handles, so journal recovery leaves them:
    the running turn's stream (``active_stream_id`` with a ``pending_user_message``: the
    stale-pending repair's) and the stream a pending-recovery ``marker`` names while hermes' own
    lazy retry would still read it (:func:`retry_still_pending`).

    ``session`` is the sidecar's object or the list's facts of it (those two keys are enough);
    ``marker`` its :func:`pending_retry_marker`.
    """
    owned = set()
    stream = session.get("active_stream_id")
    if stream and session.get("pending_user_message"):
        owned.add(str(stream))
    if marker is not None and retry_still_pending(marker, now):
        owned.add(str(marker.get("_journal_retry_stream_id")))
    return owned


# The folder paths Session.__init__ turns into ``str(Path(value).expanduser().resolve())``:
# ``workspace`` whenever the key is present (a missing one is hermes' default folder), the
# others only when truthy (else None, or the workspace for ``created_workspace``).
PATH_FIELDS = ("workspace", "created_workspace", "worktree_path", "worktree_repo_root")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return (
        "a list"
        if isinstance(value, list)
        else "an object"
        if isinstance(value, dict)
        else type(value).__name__
    )


def path_field_problem(raw: Mapping[str, Any]) -> str | None:
    """Why hermes' ``Session(**data)`` raises on this sidecar's folder paths (:data:`PATH_FIELDS`),
    in words; None when it does not.

    ``Path(value)`` raises TypeError for anything but a string (``"workspace": null`` included),
    ``resolve()`` ValueError for a NUL character, ``expanduser()`` RuntimeError for ``~name`` of a
    user this machine does not know. ``Session.load`` and ``load_metadata_only`` both construct
    the session: the WebUI cannot open the chat, and its index rebuild leaves it out.
    :func:`load_session` fails on the same values (it resolves them as hermes does).
    """
    for key in PATH_FIELDS:
        if key not in raw:
            continue
        value = raw[key]
        if key != "workspace" and not value:
            continue
        if not isinstance(value, str):
            return f"its {key} is {_json_kind(value)}, not a folder path (hermes' Session() raises TypeError)"
        if "\x00" in value:
            return f"its {key} holds a NUL character (hermes' Session() raises ValueError)"
        if value.startswith("~"):
            try:
                Path(value).expanduser()
            except RuntimeError:
                return (
                    f"its {key} {value.split('/', 1)[0]!r} names a user this machine does not know "
                    "(hermes' Session() raises RuntimeError)"
                )
    return None
