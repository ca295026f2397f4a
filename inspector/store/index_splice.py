"""hermes' index fast path after a one-session save, as a splice of the index's own row bytes.

:func:`~inspector.store.index.index_after_save` parses the whole ``_index.json`` (22 MB and
545,000 values on the 10,000-session bench home), drops the rows whose sidecar is gone, puts the
saved session's new row in, sorts by ``updated_at`` and writes every row again with
``json.dumps(rows, ensure_ascii=False, indent=2)``. When the file is exactly what that writer
makes of its own parse, i.e. ``data == json.dumps(json.loads(data), ensure_ascii=False,
indent=2).encode()``, every row's bytes in it are already what the writer makes of that row one
level down (the writer's text of a list is its items' texts joined by ``",\\n  "`` inside
``"[\\n  "`` ... ``"\\n]"``, each item's text depending on the item alone). The result is then
those bytes in the new order, with the new row's own text, and only two values of each row are
needed: ``session_id`` (the filter, the replacement) and ``updated_at`` (the sort).

:func:`index_after_save_spliced` decides "round-trips" without building the 545,000 values, from
checks that each prove one part of it (``tests/store/test_index_splice.py`` holds the result to
``index_after_save`` on generated and hostile indexes, and to hermes' own ``_write_session_index``):

* **the rows decoded by msgspec** into a view of ``compact()``'s keys only
  (``forbid_unknown_fields``): the time and cost keys (:data:`_TIME_KEYS`) kept as their raw
  text, the counts (:data:`_COUNT_KEYS`) as strings, integers, floats, booleans or null, the keys
  hermes fills with containers (:data:`_CONTAINER_KEYS`) as strings, integers, booleans, null,
  lists and objects without a float, at most :data:`_NESTING` deep, every other key a string,
  an integer, a boolean or null (anything else is not decoded: the exact path);
* then **encoded again by msgspec and formatted** with ``msgspec.json.format(indent=2)``, which
  must give the file itself. ``format`` writes ``json.dumps(indent=2)``'s layout (its
  separators, ``[]``/``{}`` for empty containers, no trailing newline) with tokens as they are,
  and refuses what is not JSON (control characters in strings, ``01``, ``1.``, ``NaN``, trailing
  commas); msgspec's decoder keeps the last of duplicate keys as the stdlib does (a duplicate then
  makes the texts differ); its encoder writes every string exactly as ``json.dumps(s,
  ensure_ascii=False)`` does (checked for every code point), so a string decoded and encoded back
  to its own text is the writer's text of its value (``\\u00e9``, ``\\/`` or a surrogate pair
  would come back otherwise; a lone surrogate escape and invalid UTF-8 are refused), and an
  integer encoded back to its own text is its ``int``'s text (``-0`` comes back ``0``). A
  raw-kept value that is a non-empty list or object is written over several lines: a newline in
  the encoded text refuses;
* **the floats**: each float token among the raw-kept values is ``float.__repr__`` of its value
  (what the writer writes; ``_PLAIN_FLOAT_LINE`` takes most without computing, the rest are
  computed), which hold no integer ``-0``, no escape and only UTF-8 (every other byte of the file
  is msgspec's encoding of a value it decoded); each float among the counts is one msgspec
  writes as ``repr`` does (:func:`floats_written_as_repr`); no float is anywhere else;
* **no run of 640 digits** anywhere: the stdlib refuses integers longer than
  ``sys.get_int_max_str_digits()`` (never below 640), msgspec does not.

Anything else (msgspec missing, another layout, an odd row, a value the conversion does not
know, any error) gives None: the caller runs the exact path, which decides and raises as before.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Container
from dataclasses import dataclass
from itertools import accumulate, chain
from operator import attrgetter
from types import GenericAlias
from typing import Any

try:  # never writes: only decodes rows' keys and re-formats to compare
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - msgspec is a declared dependency
    _msgspec = None

# ``Session.compact()``'s keys in its order, the optional ones in their places
# (``tests/store/test_index_splice.py`` holds it to ``index.compact``).
ROW_KEYS: tuple[str, ...] = (
    "session_id",
    "title",
    "workspace",
    "model",
    "model_provider",
    "message_count",
    "created_at",
    "updated_at",
    "last_message_at",
    "pinned",
    "archived",
    "project_id",
    "profile",
    "input_tokens",
    "output_tokens",
    "estimated_cost",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_hit_percent",
    "personality",
    "compression_anchor_visible_idx",
    "compression_anchor_message_key",
    "compression_anchor_summary",
    "pre_compression_snapshot",
    "context_engine",
    "compression_anchor_engine",
    "compression_anchor_mode",
    "compression_anchor_details",
    "context_engine_state",
    "context_length",
    "threshold_tokens",
    "last_prompt_tokens",
    "post_compression_context_tokens_estimate",
    "compression_recovery",
    "recommended_recovery_action",
    "gateway_routing",
    "gateway_routing_history",
    "manual_title",
    "parent_session_id",
    "created_workspace",
    "compression_recovery_source_session_id",
    "compression_recovery_action",
    "worktree_path",
    "worktree_branch",
    "worktree_repo_root",
    "worktree_created_at",
    "user_message_count",
    "active_stream_id",
    "pending_user_message",
    "has_pending_user_message",
    "is_cli_session",
    "source_tag",
    "raw_source",
    "session_source",
    "source_label",
    "read_only",
    "enabled_toolsets",
    "composer_draft",
    "process_wakeup_pause",
    "share_token",
    "share_created_at",
    "is_streaming",
)

# Keys whose values are times or costs: kept as raw text, each float token checked against
# ``float.__repr__`` (msgspec's own float text is not the stdlib's: ``0.00001`` for ``1e-05``).
_TIME_KEYS = (
    "created_at",
    "updated_at",
    "last_message_at",
    "estimated_cost",
    "post_compression_context_tokens_estimate",
    "share_created_at",
    "worktree_created_at",
)
# Counts: decoded (a float allowed), each float then checked to be one msgspec writes as
# ``float.__repr__`` does (:func:`floats_written_as_repr`); almost always none is a float.
_COUNT_KEYS = ("message_count", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
# Keys hermes fills with objects or lists: decoded into values without floats, at most
# _NESTING levels deep (msgspec keeps the last of duplicate keys, so a duplicate shows in the
# comparison). Every other key: a string, an integer, a boolean or null.
_CONTAINER_KEYS = frozenset(
    {
        "pre_compression_snapshot",
        "compression_anchor_details",
        "context_engine_state",
        "compression_recovery",
        "gateway_routing",
        "gateway_routing_history",
        "enabled_toolsets",
        "composer_draft",
        "process_wakeup_pause",
    }
)
_NESTING = 4  # gateway_routing_history: a list of objects holding a list of objects of scalars

_UNSET: Any = _msgspec.UNSET if _msgspec is not None else object()


@functools.cache
def _codec() -> tuple:
    """(rows decoder, list-of-raw-items decoder, encoder, format), made on first use: msgspec's
    decoder of the nested types costs a few milliseconds to build (2 ** _NESTING union nodes per
    container key), which an import should not pay."""
    scalar: Any = str | int | bool | None
    nested: Any = scalar
    for _ in range(_NESTING):
        nested = scalar | list[nested] | dict[str, nested]

    def field_type(key: str) -> Any:
        if key in _TIME_KEYS:
            return _msgspec.Raw | _msgspec.UnsetType
        if key in _COUNT_KEYS:
            return scalar | float | _msgspec.UnsetType
        return (nested if key in _CONTAINER_KEYS else scalar) | _msgspec.UnsetType

    row_view = _msgspec.defstruct(
        "_RowView",
        [(key, field_type(key), _UNSET) for key in ROW_KEYS],
        forbid_unknown_fields=True,
        gc=False,
    )
    return (
        _msgspec.json.Decoder(GenericAlias(list, (row_view,))).decode,  # a type made at run time
        _msgspec.json.Decoder(list[_msgspec.Raw]).decode,
        _msgspec.json.Encoder().encode,
        _msgspec.json.format,
    )


_time_values = attrgetter(*_TIME_KEYS)
_count_values = attrgetter(*_COUNT_KEYS)
_HEAD = b"[\n  {"
_TAIL = b"}\n]"
# A run of 640 digits covers ten consecutive multiples of 64: looked for among every 64th byte
# (digits made "9", all else " "), a hit sends the file to the exact path.
_DIGIT_MAP = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_SAMPLED_RUN = b"9" * 10
_FLOAT_LINE = re.compile(rb"^-?[0-9]+[.eE][-+.eE0-9]*$", re.MULTILINE)
_MINUS_ZERO = re.compile(rb"^-0$", re.MULTILINE)
# A float token that is ``float.__repr__`` of its value without asking: fixed notation, at most
# 15 digits (any decimal of 15 significant digits or fewer is the only one of that length or
# shorter giving its double, so the shortest repr has its digits), no trailing zero in the
# fraction but a lone ".0", and at least 1e-4 (repr's fixed range is 1e-4 <= |x| < 1e16).
# tests/store/test_index_splice.py holds it to repr.
_PLAIN_FLOAT_LINE = re.compile(
    rb"^-?(?=[0-9.]{3,16}$)(?:[1-9][0-9]*\.(?:0|[0-9]*[1-9])|0\.(?!0000)(?:0|[0-9]*[1-9]))$", re.MULTILINE
)


def _canonical_floats(tokens: list[bytes]) -> list[float] | None:
    """``float(token)`` of each token (what ``json.loads`` makes of a number with a fraction or
    an exponent) when every token is ``float.__repr__`` of its value (what the writer writes)."""
    text = b" ".join(tokens).decode("ascii")
    values = list(map(float, text.split(" ")))
    if " ".join(map(float.__repr__, values)) != text:
        return None
    return values


def _time_values_ok(raws: list) -> bool:
    """The time keys' raw values (absent ones left out) hold no number the writer would write
    otherwise: floats are ``repr`` of themselves, no integer ``-0`` (the 640-digit rule is the
    caller's)."""
    rest = _PLAIN_FLOAT_LINE.sub(b"", b"\n".join(raws))
    if b"\\" in rest or _MINUS_ZERO.search(rest):  # a string kept raw is taken as it is: no escapes
        return False
    try:  # every other byte of the file is msgspec's encoding of a value it decoded (valid UTF-8)
        rest.decode("utf-8")
    except UnicodeDecodeError:
        return False
    floats = _FLOAT_LINE.findall(rest)
    return not floats or _canonical_floats(floats) is not None


_LITERALS = {b"null": None, b"true": True, b"false": False}


def _value(raw: Any, missing: Any) -> Any:
    """``json.loads`` of a raw value that passed the checks (no escapes in strings, JSON's
    grammar, no object inside); ``missing`` when the key is absent."""
    if raw is _UNSET:
        return missing
    text = bytes(raw)
    first = text[:1]
    if first == b'"':
        return text[1:-1].decode("utf-8")
    if first in b"-0123456789":
        if b"." in text or b"e" in text or b"E" in text:
            return float(text)
        return int(text)
    if text in _LITERALS:
        return _LITERALS[text]
    return json.loads(text)  # an empty list or object


def _sort_keys(raws: list) -> list:
    """``row.get("updated_at", 0)`` of each row: one ``float`` call per row when every row holds
    a float token (checked canonical before), else value by value."""
    if _UNSET not in raws:
        text = b"\n".join(raws)
        floats = _FLOAT_LINE.findall(text)
        if len(floats) == len(raws):
            return list(map(float, floats))
    return [_value(raw, 0) for raw in raws]


def floats_written_as_repr(values: list[float], encode: Any) -> bool:
    """msgspec writes each float as ``float.__repr__`` does. A float msgspec decoded from a token
    and encoded back to that token is then ``float(token)`` (repr round-trips exactly), and the
    stdlib's writer gives the token again."""
    return encode(values) == ("[" + ",".join(map(float.__repr__, values)) + "]").encode("ascii")


def _round_trips(data: bytes) -> list | None:
    """The rows' views when ``data`` is exactly the writer's text of its own parse (the module's
    checks), else None."""
    if not (data.startswith(_HEAD) and data.endswith(_TAIL)):
        return None
    if _SAMPLED_RUN in data[::64].translate(_DIGIT_MAP):
        return None
    decode_rows, _, encode, format_json = _codec()
    try:
        views = decode_rows(data)
        encoded = encode(views)
    except Exception:  # noqa: BLE001 - not the layout this path knows: the exact path decides
        return None
    # a raw-kept value holding a non-empty object or list is written over several lines
    if b"\n" in encoded or format_json(encoded, indent=2) != data:
        return None
    raws = [raw for raw in chain.from_iterable(map(_time_values, views)) if raw is not _UNSET]
    if raws and not _time_values_ok(raws):
        return None
    floats = [x for x in chain.from_iterable(map(_count_values, views)) if type(x) is float]
    if floats and not floats_written_as_repr(floats, encode):
        return None
    return views


def _row_starts(data: bytes, count: int) -> list[int] | None:
    """Where each of the ``count`` rows' text starts (its ``{``), and one more entry so that every
    row ends at ``starts[i + 1] - 4``: in the indent-2 layout the rows are joined by ``",\n  "``
    (their lengths from msgspec's raw texts of the list's items)."""
    try:
        lengths = _codec()[1](data)
    except Exception:  # noqa: BLE001 - _round_trips decoded it already
        return None
    if len(lengths) != count:
        return None
    starts = list(accumulate((len(raw) + 4 for raw in lengths), initial=4))
    if starts[-1] != len(data) + 2:
        return None
    return starts


@dataclass(frozen=True)
class SpliceFacts:
    """What the splice needs of one index's bytes, none of it depending on the saved row: each
    row's ``session_id`` (None where absent), its sort key (``row.get("updated_at", 0)``) and
    where its text starts (:func:`_row_starts`). Plain lists, so a forked copy can find them
    while the repair runs and send them back (:func:`splice_facts`)."""

    ids: list
    keys: list
    starts: list


def splice_facts(data: bytes) -> SpliceFacts | None:
    """The :class:`SpliceFacts` of ``data``, or None when the splice is not proven equal to the
    exact path's bytes for it (see the module) or anything in the way raises."""
    if _msgspec is None:
        return None
    views = _round_trips(data)
    if views is None:
        return None
    starts = _row_starts(data, len(views))
    if starts is None:
        return None
    try:
        ids = [v.session_id for v in views]
        if _UNSET in ids:
            ids = [None if row_id is _UNSET else row_id for row_id in ids]
        keys = _sort_keys([v.updated_at for v in views])
    except Exception:  # noqa: BLE001 - the exact path raises the same and decides
        return None
    return SpliceFacts(ids, keys, starts)


def index_after_save_spliced(
    data: bytes, new_row: dict, on_disk_ids: Container[str], facts: SpliceFacts | None = None
) -> bytes | None:
    """:func:`~inspector.store.index.index_after_save`'s bytes (``new_row`` being ``compact()``
    of the saved session) from the index's own row bytes, or None when that is not proven equal
    (see the module) or anything in the way raises: the caller then runs the exact path, which
    decides (and raises) as before. ``facts``: :func:`splice_facts` of these very bytes, found
    before (the caller answers for that); None: found here."""
    if facts is None:
        facts = splice_facts(data)
        if facts is None:
            return None
    ids, up, starts = facts.ids, facts.keys, facts.starts
    try:
        sid = new_row["session_id"]
        kept = [i for i, row_id in enumerate(ids) if row_id in on_disk_ids]
        new_text = json.dumps(new_row, ensure_ascii=False, indent=2).encode("utf-8").replace(b"\n", b"\n  ")
        new_key = new_row.get("updated_at", 0)
        entries = []  # a row's index, or -1 for the new row
        keys = []
        for i in kept:
            if ids[i] == sid:
                entries.append(-1)
                keys.append(new_key)
            else:
                entries.append(i)
                keys.append(up[i])
        if sid not in {ids[i] for i in kept}:
            entries.append(-1)
            keys.append(new_key)
        order = sorted(range(len(keys)), key=keys.__getitem__, reverse=True)
    except Exception:  # noqa: BLE001 - the exact path raises the same and decides
        return None
    # the rows' texts in the new order, runs of consecutive rows as one slice each, in one copy
    view = memoryview(data)
    parts: list = [b"[\n  "]
    run_start = run_end = -1
    for j in order:
        i = entries[j]
        if i >= 0 and i == run_end:
            run_end = i + 1
            continue
        if run_start >= 0:
            parts += (view[starts[run_start] : starts[run_end] - 4], b",\n  ")
        if i < 0:
            parts += (new_text, b",\n  ")
            run_start = run_end = -1
        else:
            run_start, run_end = i, i + 1
    if run_start >= 0:
        parts += (view[starts[run_start] : starts[run_end] - 4], b",\n  ")
    parts[-1] = b"\n]"
    return b"".join(parts)
