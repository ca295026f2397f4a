"""One scan of a sessions folder, shared by hermes' audit, the catalogue and the journal findings.

:class:`SessionDirScan` lists the folder once (a set of names instead of one ``exists()`` or
glob per file), reads ``_index.json`` once, lists ``_turn_journal/`` once and derives each
sidecar's facts (hermes' message count, the catalogue's metadata summary, the user texts the
turn-journal check compares) from a single read and parse.

:class:`FactCache` optionally keeps those *derived* per-file facts across runs, in the
inspector's own cache folder (never in the Hermes home). Every entry is keyed on the file's
``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` - the key hermes uses for its journal
summaries - and an entry is only stored when the file's ``ctime`` is older than
:data:`RACY_WINDOW_NS` at read time, so a rewrite inside the same timestamp tick cannot hide
behind an unchanged key (git's "racily clean" rule). Nothing a repair plan writes from is
cached: plans read files through :class:`~inspector.store.files.FileSnapshot`. A corrupt,
unreadable or unwritable cache is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from inspector import portable
from inspector.forked import Forked, ForkedError
from inspector.statedir import cache_folder
from inspector.store.files import NotARegularFile, derive_from_tail, read_regular
from inspector.store.journal import JournalUnreadable, dropped_lines
from inspector.store.json_depth import may_be_deep_bytes
from inspector.store.jsonfmt import (
    _NOT_PARSED,
    PARSE_DEPTH_LIMIT,
    fast_loads,
    has_digit_run,
    has_long_digit_run,
    is_utf8,
    line_pieces,
    objects_per_line,
    orjson_loads_shallow,
    raw_items,
    raw_string,
)
from inspector.store.sidecar import PATH_FIELDS, TOO_DEEP, path_field_problem, pending_retry_marker
from inspector.store.turn_journal import TURN_JOURNAL_DIR, TurnJournalError, shard_audit_facts

CACHE_VERSION = 6  # 4: sidecar facts may hold "load_error"; 5: journal facts may hold "too_deep";
# 6: facts of a sidecar nested deeper than PARSE_DEPTH_LIMIT and of a journal piece whose lines
# msgspec miscounted are the stdlib's (5 may hold orjson's and msgspec's)
RACY_WINDOW_NS = 2_000_000_000
_MARKER_FLAG = b'"_pending_journal_recovery": true'
# A cache file that starts with _EXACT_PREFIX holds no run of 19+ digits (checked when it was
# written), so it parses with orjson without the scan for long numbers (20 ms on 8 MB).
_PLAIN_PREFIX = b'{"version":%d,' % CACHE_VERSION
_EXACT_PREFIX = b'{"version":%d,"orjson_exact":true,' % CACHE_VERSION
SIDECAR, JOURNAL, INDEX, TURN, STATE_DB = "sidecar", "journal", "index", "turn", "state_db"
OPEN_RUN = "open_run"  # whether a run journal holds output and no terminal record (repair.from_journal)
_KINDS = (SIDECAR, JOURNAL, INDEX, TURN, STATE_DB, OPEN_RUN)

# The metadata keys the catalogue and the session list read from a sidecar (see SessionRow); the
# rest of a sidecar's ~60 metadata keys would only cost time and memory in every scan.
_META_KEYS = (
    "session_id",
    "title",
    "profile",
    "updated_at",
    "created_at",
    "pending_started_at",
    "message_count",
    "active_stream_id",
    "pending_user_message",
)
CATALOGUE_META = frozenset(_META_KEYS)


def cache_dir() -> Path:
    """``$HERMES_INSPECTOR_STATE_DIR/cache``, else the per-user cache folder (``$XDG_CACHE_HOME/
    hermes-inspector`` on Linux; see :func:`inspector.statedir.cache_folder`)."""
    return cache_folder()


def stat_key(st: os.stat_result) -> list[int]:
    """The file's identity. Nanosecond times are split in seconds and nanoseconds so that no
    number has 19 digits: the cache file then parses with orjson (see ``jsonfmt.fast_loads``)."""
    m, c = divmod(st.st_mtime_ns, 1_000_000_000), divmod(st.st_ctime_ns, 1_000_000_000)
    return [st.st_dev, st.st_ino, st.st_size, m[0], m[1], c[0], c[1]]


class FactCache:
    """Derived per-file facts, persisted as one JSON file per sessions folder."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, dict[str, list]] = {kind: {} for kind in _KINDS}
        self._seen: dict[str, set[str]] = {kind: set() for kind in _KINDS}
        # Facts of files too recent to keep (see put), as entries: those worked out here, for a
        # forked copy to hand over (unkept), and those another copy of this run handed over
        # (borrowed: answered by get during this run, like the sidecar facts a copy hands over,
        # never saved)
        self._unkept: dict[str, dict[str, list]] = {kind: {} for kind in _KINDS}
        self._borrowed: dict[str, dict[str, list]] = {kind: {} for kind in _KINDS}
        self._dirty = False
        if path is not None:
            self._load()

    @classmethod
    def for_session_dir(cls, session_dir: Path) -> FactCache:
        if os.environ.get("HERMES_INSPECTOR_NO_CACHE"):
            return cls(None)
        try:
            ident = str(Path(session_dir).resolve())
            name = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:32]
            return cls(cache_dir() / f"scan-{name}.json")
        except (OSError, ValueError, RuntimeError):
            return cls(None)

    def _load(self) -> None:
        try:
            data, _ = read_regular(self.path)  # over the limit: no cache, only slower
            obj = _load_cache_text(data)
        except Exception:  # noqa: BLE001 - a corrupt cache is no cache
            return
        if not isinstance(obj, dict) or obj.get("version") != CACHE_VERSION:
            return
        for kind in _KINDS:
            entries = obj.get(kind)
            if isinstance(entries, dict):
                self.entries[kind] = entries

    def get(self, kind: str, path: str, st: os.stat_result) -> dict | None:
        self._seen[kind].add(path)
        entry = self.entries[kind].get(path)
        if entry is None:
            entry = self._borrowed[kind].get(path)
        if (
            isinstance(entry, list)
            and len(entry) == 2
            and entry[0] == stat_key(st)
            and isinstance(entry[1], dict)
        ):
            return entry[1]
        return None

    def put(self, kind: str, path: str, st: os.stat_result, facts: dict, read_started_ns: int) -> None:
        self._seen[kind].add(path)
        if st.st_ctime_ns >= read_started_ns - RACY_WINDOW_NS:
            self.entries[kind].pop(path, None)  # too recent: the same key could still hide a change
            self._unkept[kind][path] = [stat_key(st), facts]
            return
        self._unkept[kind].pop(path, None)
        self.entries[kind][path] = [stat_key(st), facts]
        self._dirty = True

    def get_for(self, kind: str, path: str, stats: list[os.stat_result | None]) -> dict | None:
        """:meth:`get` for facts derived from several files at once (None: a file that is absent)."""
        self._seen[kind].add(path)
        entry = self.entries[kind].get(path)
        key = [stat_key(st) if st is not None else None for st in stats]
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == key and isinstance(entry[1], dict):
            return entry[1]
        return None

    def put_for(
        self, kind: str, path: str, stats: list[os.stat_result | None], facts: dict, read_started_ns: int
    ) -> None:
        """:meth:`put` for facts derived from several files (``stats`` taken before reading them)."""
        self._seen[kind].add(path)
        if any(st is not None and st.st_ctime_ns >= read_started_ns - RACY_WINDOW_NS for st in stats):
            self.entries[kind].pop(path, None)
            return
        self.entries[kind][path] = [[stat_key(st) if st is not None else None for st in stats], facts]
        self._dirty = True

    def seen(self, kind: str) -> set[str]:
        """The paths of ``kind`` this run looked up or stored."""
        return set(self._seen[kind])

    def adopt(self, kind: str, entries: dict[str, list]) -> None:
        """Take the entries of ``kind`` another copy of this cache worked out (a forked process
        that read files this one did not): they are seen, and saved with the rest."""
        for path, entry in entries.items():
            self._seen[kind].add(path)
            if self.entries[kind].get(path) != entry:
                self.entries[kind][path] = entry
                self._dirty = True

    def unkept(self, kind: str) -> dict[str, list]:
        """The entries of ``kind`` worked out in this process from files too recent to keep (see
        :meth:`put`): for a forked copy to hand over with its kept ones, so that the process it
        works for does not read those files again in the same run."""
        return dict(self._unkept[kind])

    def borrow(self, kind: str, entries: dict[str, list]) -> None:
        """Take the entries of ``kind`` another copy of this run worked out from files too recent
        to keep (its :meth:`unkept`): :meth:`get` answers them while their files keep the identity
        they were read with, as if this process had read them when that copy did (the sidecar
        facts a copy hands over are taken the same way); :meth:`save` never writes them."""
        for path, entry in entries.items():
            self._seen[kind].add(path)
            if self.entries[kind].pop(path, None) is not None:
                self._dirty = True
            self._borrowed[kind][path] = entry

    def save(self, *, background: bool = False) -> None:
        """Write the cache (entries of files not seen by this scan are dropped per kind used).

        ``background``: written by a detached copy of this process (where forking is safe), so
        the caller goes on (a command prints and exits) while the cache, 8 MB of JSON for 10,000
        sessions, is serialized and written; nothing waits for it and nothing depends on it."""
        if self.path is None:
            return
        for kind, seen in self._seen.items():
            if seen:
                stale = [p for p in self.entries[kind] if p not in seen]
                for p in stale:
                    del self.entries[kind][p]
                self._dirty = self._dirty or bool(stale)
        if not self._dirty:
            return
        if background and _detached(self._write):
            self._dirty = False
            return
        self._write()

    def _write(self) -> None:
        try:
            text = json.dumps(
                {"version": CACHE_VERSION, **self.entries}, ensure_ascii=True, separators=(",", ":")
            )
            if not has_long_digit_run(text.encode("ascii")):  # said up front: the load skips the check
                text = _EXACT_PREFIX.decode("ascii") + text[len(_PLAIN_PREFIX) :]
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".scan-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(text.encode("utf-8"))
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except Exception:  # noqa: BLE001 - an unwritable cache only costs time, never the scan
            return
        self._dirty = False


def _load_cache_text(data: bytes) -> Any:
    """The cache file's value: msgspec's where the file says it holds no run of 19+ digits (it then
    parses as the stdlib does: ASCII written by ``json.dumps``, a few levels deep; what it refuses,
    a ``NaN`` or a lone surrogate escape, goes to the exact parse), 8 MB in 30 ms instead of 50."""
    if _msgspec is not None and data.startswith(_EXACT_PREFIX):
        try:
            return _msgspec.json.decode(data)
        except (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError):
            pass
    return fast_loads(data, checked=data.startswith(_EXACT_PREFIX))


def _detached(fn: Callable[[], None]) -> bool:
    """``fn()`` in a detached copy of this process (forked twice: nothing is left to reap, and
    its standard streams and every other inherited descriptor are closed, so a reader of this
    process's output sees its end when this process ends). False when forking is not safe here."""
    if not portable.can_fork():
        return False
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:  # the intermediate copy: fork the worker and leave at once
        try:
            if os.fork() == 0:
                try:
                    null = os.open(os.devnull, os.O_RDWR)
                    for fd in (0, 1, 2):
                        os.dup2(null, fd)
                    os.closerange(3, 4096)
                    fn()
                finally:
                    os._exit(0)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return True


# ---------------------------------------------------------------- sidecar facts


def user_texts_of(payload: Any) -> tuple[list[str] | None, str | None]:
    """(sorted texts, None), or (None, error) where hermes' user-text collection raises."""
    if not isinstance(payload, dict):
        return [], None
    messages: Any = payload.get("messages") or []
    try:
        iterator = iter(messages)
    except TypeError:
        return None, (
            f"the sidecar's messages is a {type(messages).__name__}, not a list (hermes fails on it)"
        )
    return sorted(
        {
            str(m.get("content") or "").strip()
            for m in iterator
            if isinstance(m, dict) and m.get("role") == "user"
        }
    ), None


try:  # orjson only parses; see jsonfmt.fast_loads for when its values equal the stdlib's
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None

# orjson keeps integers in [-2**63, 2**64) exact and turns those beyond into floats (the stdlib
# keeps them as ints): a kept float this large may have been such an integer.
_INT_AS_FLOAT = float(2**63)


def may_be_coerced(value: Any) -> bool:
    """Whether ``value`` (from orjson) holds a float of magnitude >= 2**63: possibly an integer
    orjson could not keep exact, where the stdlib would give an int. Too deep to walk: True."""
    cls = value.__class__
    if cls is float:
        return not (-_INT_AS_FLOAT < value < _INT_AS_FLOAT)
    try:
        if cls is dict:
            return any(may_be_coerced(v) for v in value.values())
        if cls is list:
            return any(may_be_coerced(v) for v in value)
    except RecursionError:
        return True
    return False


def sidecar_facts(data: bytes, *, want_texts: bool) -> dict:
    """What the audit and the catalogue derive from one sidecar's bytes.

    ``count`` is hermes' ``_msg_count`` (-1 unless an object with a ``messages`` list);
    ``error``/``meta``/``marker`` (and ``load_error``: a folder path hermes' ``Session()`` raises on,
    :func:`path_field_problem`) are the catalogue's summary; ``texts``/``texts_error`` the
    stripped user texts (only with ``want_texts``).

    The file is parsed once, by orjson when it can (its verdict is the stdlib's: what it rejects
    goes to the stdlib, as in ``jsonfmt.fast_loads``). Only the values kept here need to be the
    stdlib's exactly, so instead of scanning every file for long digit runs first (a second pass
    over all the bytes), the kept values are checked afterwards: when one may be an integer orjson
    turned into a float (:func:`may_be_coerced`), the file is parsed again exactly.
    """
    if _orjson is not None:
        obj = orjson_loads_shallow(data)  # not JSON to orjson, or deep: the stdlib decides (hermes' error)
        if obj is not _NOT_PARSED:
            facts = _facts_of(obj, data, want_texts)
            if not _kept_values_may_be_coerced(facts, obj, want_texts):
                return facts
    return _exact_sidecar_facts(data, want_texts)


# the top-level keys whose values a sidecar's facts keep or describe: the metadata, and hermes'
# folder paths (load_error names a path's JSON kind: an integer rounded to a float changes it)
_KEPT_KEYS = CATALOGUE_META | frozenset(PATH_FIELDS)


def _kept_values_may_be_coerced(facts: dict, obj: Any, want_texts: bool) -> bool:
    if obj.__class__ is float:  # the error names the top-level type: an int the stdlib keeps is no float
        return may_be_coerced(obj)
    if obj.__class__ is not dict:
        return False
    # the values as parsed, before anything is derived from them (a message_count that is not an
    # int is replaced by the number of messages: a rounded integer would be replaced too)
    if any(may_be_coerced(v) for k, v in obj.items() if k in _KEPT_KEYS):
        return True
    if facts["marker"] is not None and may_be_coerced(facts["marker"]):
        return True
    if want_texts and isinstance(obj, dict) and isinstance(obj.get("messages"), list):
        for m in obj["messages"]:  # str(content) of a user row: a number's text depends on its type
            if m.__class__ is dict and m.get("role") == "user":
                content = m.get("content")
                if content.__class__ is not str and may_be_coerced(content):
                    return True
    return False


def _exact_sidecar_facts(data: bytes, want_texts: bool) -> dict:
    try:
        obj = fast_loads(data)
    except UnicodeDecodeError as exc:
        obj, error = None, f"not valid UTF-8: {exc}"
    except ValueError as exc:
        obj, error = None, f"not valid JSON: {exc}"
    except RecursionError:
        obj, error = None, TOO_DEEP
    else:
        return _facts_of(obj, data, want_texts)
    facts: dict[str, Any] = {"error": error, "meta": {}, "marker": None, "count": -1}
    if want_texts:
        facts["texts"], facts["texts_error"] = user_texts_of(None)
    return facts


def _facts_of(obj: Any, data: bytes, want_texts: bool) -> dict:
    """:func:`sidecar_facts` of a file that parsed to ``obj``."""
    facts: dict[str, Any] = {"error": None, "meta": {}, "marker": None, "count": -1}
    if want_texts:
        facts["texts"], facts["texts_error"] = user_texts_of(obj)
    if obj is None:  # the file says null: no error (as the stdlib path always had it), no facts
        return facts
    if not isinstance(obj, dict):
        facts["error"] = f"top-level JSON is {type(obj).__name__}, not an object"
        return facts
    raw_messages = obj.get("messages")
    if isinstance(raw_messages, list):
        facts["count"] = len(raw_messages)
        messages = raw_messages
    else:
        messages = []
    if _MARKER_FLAG in data:
        facts["marker"] = pending_retry_marker(messages)
    meta = {k: v for k, v in obj.items() if k in CATALOGUE_META}
    if not isinstance(meta.get("message_count"), int):
        meta["message_count"] = len(messages)
    facts["meta"] = meta
    unloadable = path_field_problem(obj)
    if unloadable is not None:  # parses, yet hermes' Session() raises on it: the key only then
        facts["load_error"] = unloadable
    return facts


def cached_file_facts(
    cache: FactCache | None,
    kind: str,
    key: str,
    path: Path,
    derive: Callable[[bytes], dict],
    tail: tuple[int, Callable[[bytes], dict | None]] | None = None,
) -> dict | None:
    """``derive(the file's bytes)``, answered by ``cache`` while the file's identity is unchanged
    (and stored there otherwise); None when the file does not exist. Other OSErrors propagate.
    ``tail``: (how many bytes, what they tell), for facts the end of a file may decide alone
    (:func:`inspector.store.files.derive_from_tail`)."""
    started = time.time_ns()
    if cache is not None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            st = None
        if st is not None and stat.S_ISREG(st.st_mode):
            facts = cache.get(kind, key, st)
            if facts is not None:
                return facts
    try:
        if tail is None:
            data, st = read_regular(path)
            facts = derive(data)
        else:
            facts, st = derive_from_tail(path, tail[0], tail[1], derive)
    except FileNotFoundError:
        return None
    if cache is not None:
        cache.put(kind, key, st, facts, started)
    return facts


# ---------------------------------------------------------------- _index.json facts

try:  # see jsonfmt.objects_per_line: msgspec checks JSON and hands back the bytes of what it skips
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - msgspec is a declared dependency
    _msgspec = None

if _msgspec is not None:
    _ABSENT = _msgspec.Raw(b"")  # no JSON value is empty

    class _IndexRow(_msgspec.Struct):
        """The two keys of an index row the audit and the catalogue read (the last of a repeated
        key, as the stdlib's dict keeps it), as their JSON bytes; empty when absent."""

        session_id: _msgspec.Raw = _ABSENT
        title: _msgspec.Raw = _ABSENT

    _INDEX_ROWS = _msgspec.json.Decoder(list[_IndexRow])


def index_facts_of(data: bytes) -> dict:
    """:meth:`SessionDirScan.index_facts` of ``_index.json``'s bytes.

    The usual index (a list of objects, valid UTF-8, nothing only the stdlib may judge) is read
    without building its rows: msgspec checks it and hands back the bytes of each row's
    ``session_id`` and ``title`` (:func:`~inspector.store.jsonfmt.raw_items`), a fifth of the time
    of a full parse. Anything else goes to the exact parse, whose verdict it is.
    """
    parsed = _index_rows_shallow(data)
    if parsed is None and _msgspec is not None and raw_items(data) is not None:
        try:
            parsed = _INDEX_ROWS.decode(data)
        except (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError):
            parsed = None  # a row that is not an object: the exact parse says which
    if parsed is not None:
        rows = []
        for row in parsed:
            sid = raw_string(row.session_id)  # None: absent or not a string
            if sid is not None:
                rows.append([sid, raw_string(row.title)])
        return {"json": True, "list": True, "all_objects": True, "rows": rows}
    try:
        obj, ok = fast_loads(data), True
    except (UnicodeDecodeError, ValueError, RecursionError):
        obj, ok = None, False
    return _index_facts_of_object(obj, ok)


def _index_rows_shallow(data: bytes) -> list | None:
    """The rows of the usual index in one msgspec pass, or None when that proves nothing (the
    caller then tries :func:`~inspector.store.jsonfmt.raw_items` and the exact parse).

    :func:`raw_items` decodes the whole file a first time to look at each row's bytes (is it one
    only the stdlib may judge: nested too deep, a run of 640+ digits?), 0.23 s for the 107 MB
    index of 50,000 sessions, then the rows are decoded a second time. Here the whole file is
    looked at instead: valid UTF-8 and no run of 640 digits anywhere (a run inside a string only
    sends the file to the slower way), and the nesting is msgspec's to refuse, in a
    :func:`_shallow_pass` where it gives up about :data:`PARSE_DEPTH_LIMIT` levels down, as for
    a sidecar (:func:`quick_sidecar_facts`); 0.13 s in all."""
    if _msgspec is None or not is_utf8(data) or has_digit_run(data, 640):
        return None

    def decode(quick: bool) -> list | None:
        if not quick:
            return None
        try:
            return _INDEX_ROWS.decode(data)
        except (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError):
            return None

    return _shallow_pass(decode)


def _index_facts_of_object(obj: Any, ok: bool) -> dict:
    rows = []
    all_objects = True
    if ok and isinstance(obj, list):
        for r in obj:
            if not isinstance(r, dict):
                all_objects = False
                continue
            sid = r.get("session_id")
            if isinstance(sid, str):
                title = r.get("title")
                rows.append([sid, title if isinstance(title, str) else None])
    return {"json": ok, "list": ok and isinstance(obj, list), "all_objects": all_objects, "rows": rows}


# ---------------------------------------------------------------- run journal facts

JOURNAL_PIECE_BYTES = (
    1 << 16
)  # small enough that the checks of a piece find it in the cache (4 MB: 0.48 s, 64 KB: 0.35 s for 166 MB)


def journal_dropped_lines(data: bytes) -> tuple[int, int | None]:
    """(how many lines hermes' ``read_run_events`` skips, the first one's number) of a run journal's
    bytes: :func:`inspector.store.journal.dropped_lines`, without a JSON parse per line where the
    lines are proven to be one object each (:func:`~inspector.store.jsonfmt.objects_per_line`, a
    few MB at a time). Raises JournalUnreadable for invalid UTF-8, as hermes' reader fails.

    hermes decodes the whole file, splits it with ``str.splitlines`` and skips blank lines and
    lines that are not a JSON object. The pieces end just after a b"\\n" (no line break
    ``str.splitlines`` knows spans one, and no UTF-8 sequence holds that byte), so a piece the quick
    check does not prove is read here line by line as hermes does, numbered on from the pieces
    before it."""
    count, first, number = 0, None, 0
    for start, end in line_pieces(data, JOURNAL_PIECE_BYTES):
        piece = data[start:end]
        quick = objects_per_line(piece[:-1] if piece.endswith(b"\n") else piece)
        if quick is not None:
            number += quick
        else:
            # A proven piece has no line of more than 900 opening brackets (objects_per_line leaves any
            # line over PARSE_DEPTH_LIMIT of them to its caller), so a line hermes may fail to read at
            # all is in a piece like this one: the whole journal then takes the exact reader's rules
            # (json_depth: too deep, unsure; invalid UTF-8 anywhere first).
            if may_be_deep_bytes(piece):
                return dropped_lines(data)
            for line in _piece_lines(piece, start):
                number += 1
                if line.strip() and not _is_object_line(line):
                    count += 1
                    first = number if first is None else first
    return count, first


def _piece_lines(piece: bytes, start: int) -> list[str]:
    """A piece's lines as hermes splits them (JournalUnreadable for invalid UTF-8, as in
    :mod:`inspector.store.journal`, the offset counted from the file's start)."""
    try:
        text = str(piece, "utf-8")
    except UnicodeDecodeError as exc:
        raise JournalUnreadable(
            f"not valid UTF-8 at byte {start + exc.start}: the whole journal is unreadable"
        ) from exc
    return text.splitlines()


def _is_object_line(line: str) -> bool:
    """Whether ``json.loads(line)`` is a dict (False where it raises). orjson answers where it
    agrees: it refuses what the stdlib may take (NaN, lone surrogates: then the stdlib decides)
    and its integers beyond 64 bits do not change whether a line is an object; a line that may
    nest deeper than the stdlib goes (see jsonfmt.PARSE_DEPTH_LIMIT) is the stdlib's alone."""
    try:
        if _orjson is not None and line.count("[") + line.count("{") <= PARSE_DEPTH_LIMIT:
            try:
                return _orjson.loads(line).__class__ is dict
            except (ValueError, TypeError):
                pass
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


PARALLEL_MIN_FILES = 256  # fewer files than this are parsed in this process only


def can_fork() -> bool:
    """A forked helper is safe here: see :func:`inspector.portable.can_fork` (a system that
    allows it, not macOS, not forced portable, no Qt in this process; the window scans in a
    spawned child)."""
    return portable.can_fork()


def _read_sidecars(dir_str: str, names: list[tuple[str, bool]], quick: bool = True) -> list[tuple]:
    """``(name, facts, stat, read error, read started ns)`` of each ``(name, want_texts)``.

    The files are read one by one in a pass where msgspec may check them without building their
    messages (:func:`quick_sidecar_facts`, see :func:`_shallow_pass` for why it runs there); the
    few it does not prove are parsed after that pass (:func:`sidecar_facts`), a batch at a time.
    ``quick=False`` (a file or two: setting up the pass costs about 0.1 ms): each parsed in full."""
    out: list[tuple | None] = [None] * len(names)
    at = 0
    while at < len(names):
        if quick:
            at, pending = _shallow_pass(partial(_read_some, dir_str, names, at, out))
        else:
            at, pending = _read_some(dir_str, names, at, out, False)
        for i, data, st, started in pending:
            name, want_texts = names[i]
            out[i] = (name, sidecar_facts(data, want_texts=want_texts), st, None, started)
    return out


PENDING_BYTES = 32 << 20  # files held for their full parse at a time (the quick pass keeps none)


def _read_some(
    dir_str: str, names: list[tuple[str, bool]], at: int, out: list, quick: bool
) -> tuple[int, list]:
    """From ``names[at]`` on: each file read and, when ``quick``, its facts proven by
    :func:`quick_sidecar_facts` into ``out``; the others returned for the full parse (until they
    hold :data:`PENDING_BYTES`). Returns (where to go on, those files)."""
    pending: list[tuple] = []
    held = 0
    for i in range(at, len(names)):
        name, want_texts = names[i]
        started = time.time_ns()
        try:
            # a str opens the same file as a Path, without building one per file
            data, st = read_regular(os.path.join(dir_str, name))
        except OSError as exc:
            facts = {"error": None, "meta": {}, "marker": None, "count": -1}
            out[i] = (name, facts, None, f"cannot read: {exc.strerror or exc}", started)
            continue
        facts = quick_sidecar_facts(data, want_texts) if quick else None
        if facts is not None:
            out[i] = (name, facts, st, None, started)
            continue
        pending.append((i, data, st, started))
        held += len(data)
        if held >= PENDING_BYTES:
            return i + 1, pending
    return len(names), pending


def sidecar_facts_many(datas: list[bytes], want_texts: bool = False) -> list[dict]:
    """:func:`sidecar_facts` of each of ``datas``, as :func:`_read_sidecars` works them out (the
    quick pass, then the full parse of the rest)."""
    out: list = [None] * len(datas)

    def run(quick: bool) -> None:
        for i, data in enumerate(datas):
            out[i] = quick_sidecar_facts(data, want_texts) if quick else None

    _shallow_pass(run)
    return [
        facts if facts is not None else sidecar_facts(data, want_texts=want_texts)
        for facts, data in zip(out, datas, strict=True)
    ]


# ---------------------------------------------------------------- sidecar facts without the messages

if _msgspec is not None:

    class _SidecarKeys(_msgspec.Struct):
        """What :func:`quick_sidecar_facts` reads of a sidecar: ``messages`` as the bytes of each
        message (skipped, checked, not built), the catalogue's metadata keys and hermes' folder
        path keys as their bytes (empty when absent). A repeated key: the last counts, as in the
        stdlib's dict. Any other key is skipped (checked, not built)."""

        messages: list[_msgspec.Raw] | None = None
        session_id: _msgspec.Raw = _ABSENT
        title: _msgspec.Raw = _ABSENT
        profile: _msgspec.Raw = _ABSENT
        updated_at: _msgspec.Raw = _ABSENT
        created_at: _msgspec.Raw = _ABSENT
        pending_started_at: _msgspec.Raw = _ABSENT
        message_count: _msgspec.Raw = _ABSENT
        active_stream_id: _msgspec.Raw = _ABSENT
        pending_user_message: _msgspec.Raw = _ABSENT
        workspace: _msgspec.Raw = _ABSENT
        created_workspace: _msgspec.Raw = _ABSENT
        worktree_path: _msgspec.Raw = _ABSENT
        worktree_repo_root: _msgspec.Raw = _ABSENT

    _SIDECAR_KEYS = _msgspec.json.Decoder(_SidecarKeys)

    class _MessageKeys(_msgspec.Struct):
        """The keys hermes' interrupted-turn marker search reads of a message (see
        :func:`~inspector.store.sidecar.pending_retry_marker`), as their bytes."""

        role: _msgspec.Raw = _ABSENT
        content: _msgspec.Raw = _ABSENT
        error: _msgspec.Raw = _msgspec.field(default=_ABSENT, name="_error")
        pending: _msgspec.Raw = _msgspec.field(default=_ABSENT, name="_pending_journal_recovery")

    _MESSAGE_KEYS = _msgspec.json.Decoder(_MessageKeys)

    class _SidecarTexts(_SidecarKeys):
        """:class:`_SidecarKeys` with each message's keys that the user texts and the marker search
        read (a message that is not an object: left to the full parse)."""

        messages: list[_MessageKeys] | None = None  # type: ignore[assignment]

    _SIDECAR_TEXTS = _msgspec.json.Decoder(_SidecarTexts)
    _VALUE = _msgspec.json.Decoder()
    _NESTING_PROBE = _msgspec.json.Decoder(_msgspec.Raw)


def _json_value(raw: Any) -> Any:
    """The value of a JSON value's bytes (valid JSON), exactly the stdlib's: msgspec's, where it
    refuses one (a number beyond a float's range) the stdlib's own."""
    try:
        return _VALUE.decode(raw)
    except (_msgspec.DecodeError, _msgspec.ValidationError):
        return json.loads(bytes(raw))


def quick_sidecar_facts(data: bytes, want_texts: bool = False) -> dict | None:
    """:func:`sidecar_facts` of a sidecar without building its messages, or None when that is not
    proven (the caller then parses it in full). ``want_texts``: each message's role and content
    are decoded too, for the user texts.

    msgspec checks the whole file (it accepts only JSON the stdlib accepts: ``tests/store/
    test_quick_parse.py``) and hands back each message's bytes and those of the keys kept; the
    kept values are then decoded one by one. What it skips unlooked-at is looked at here: the
    UTF-8 of the strings, and runs of 640+ digits (an integer the stdlib refuses past
    ``sys.get_int_max_str_digits()``). A file with an interrupted-turn marker (the newest messages
    are looked at as hermes' search does), or that is not an object with a list (or null, or no)
    ``messages``, is left to the full parse. Must run in :func:`_shallow_pass` (nesting: see there)."""
    if _msgspec is None:
        return None
    try:
        keys = (_SIDECAR_TEXTS if want_texts else _SIDECAR_KEYS).decode(data)
    except (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError):
        return None
    if not is_utf8(data) or has_digit_run(data, 640):
        return None
    messages: Any = keys.messages  # each message's bytes, or (want_texts) its keys
    if messages and _may_hold_marker(messages):
        return None
    meta = {}
    for key in _META_KEYS:
        raw = getattr(keys, key)
        if raw:
            meta[key] = _json_value(raw)
    if not isinstance(meta.get("message_count"), int):
        meta["message_count"] = len(messages) if messages is not None else 0
    facts: dict[str, Any] = {
        "error": None,
        "meta": meta,
        "marker": None,
        "count": len(messages) if messages is not None else -1,
    }
    if want_texts:  # hermes' user texts (see user_texts_of): str(content or "").strip() of each user row
        texts = set()
        for m in messages or ():
            if m.role and _json_value(m.role) == "user":
                texts.add(str((_json_value(m.content) if m.content else None) or "").strip())
        facts["texts"], facts["texts_error"] = sorted(texts), None
    paths = {key: _json_value(raw) for key in PATH_FIELDS if (raw := getattr(keys, key))}
    if paths:
        unloadable = path_field_problem(paths)
        if unloadable is not None:
            facts["load_error"] = unloadable
    return facts


def _may_hold_marker(messages: list) -> bool:
    """Whether :func:`~inspector.store.sidecar.pending_retry_marker` may find a marker among
    ``messages`` (their bytes), read from the newest as it does: False once a normal assistant
    reply comes first (most often the newest message)."""
    for raw in reversed(messages):
        if raw.__class__ is _MessageKeys:
            keys = raw
        else:
            try:
                keys = _MESSAGE_KEYS.decode(raw)
            except _msgspec.ValidationError:  # not an object: the search passes it by
                continue
        if keys.pending and _json_value(keys.pending):
            return True
        if (
            keys.role
            and _json_value(keys.role) == "assistant"
            and not (keys.error and _json_value(keys.error))
        ):
            return False
    return False


_NESTING_CAP = 1 << 14  # the deepest nesting probed
_ROOMS: dict[int, int] = {}  # the room last found under each recursion limit


def _nesting_room() -> int:
    """How many levels of nested arrays msgspec decodes from here before it raises RecursionError
    (it counts them against the interpreter's recursion limit, as the stdlib's parser does).

    The room found last under the same recursion limit is tried first, then the levels beside it
    (from the same place the room moves by a level from call to call): ``room`` decoding and
    ``room + 1`` not is the answer the search below gives too (a nesting that decodes is decoded
    at any lesser depth), in two or three probes instead of fifteen. A quick pass is set up per
    chunk of sidecars, each time with two of these (0.18 ms with the search alone, 0.03 ms so).
    The probes are made here, not in a helper: a frame more would take a level of the room."""
    limit = sys.getrecursionlimit()
    decode = _NESTING_PROBE.decode
    guess = _ROOMS.get(limit)
    if guess is not None and 0 < guess < _NESTING_CAP - 1:
        decodes: dict[int, bool] = {}
        for room in (guess, guess + 1, guess - 1):
            if room < 1:
                continue
            for depth in (room, room + 1):
                if depth not in decodes:
                    try:
                        decode(b"[" * depth + b"]" * depth)
                        decodes[depth] = True
                    except RecursionError:
                        decodes[depth] = False
                if not decodes[depth]:
                    break
            if decodes[room] and not decodes.get(room + 1, True):
                _ROOMS[limit] = room
                return room
    low, high = 0, _NESTING_CAP
    while low < high:
        mid = (low + high + 1) // 2
        try:
            decode(b"[" * mid + b"]" * mid)
            low = mid
        except RecursionError:
            high = mid - 1
    _ROOMS[limit] = low
    return low


OTHER_THREADS_MARGIN = 200  # frames another thread may still go deeper while a quick pass runs


def _other_threads_shallow(depth: int) -> bool:
    """Whether every thread but this one is fewer than ``depth`` frames deep (none is: True)."""
    if threading.active_count() == 1:
        return True
    me = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        if ident == me:
            continue
        n = 0
        while frame is not None:
            n += 1
            if n >= depth:
                return False
            frame = frame.f_back
    return True


def _shallow_pass(fn: Callable[[bool], Any]) -> Any:
    """``fn(quick)`` with ``quick`` True where msgspec gives up on values nested deeper than about
    :data:`~inspector.store.jsonfmt.PARSE_DEPTH_LIMIT` levels.

    msgspec's limit is the interpreter's recursion limit less the frames below it (3.11), so that
    limit is lowered while ``fn`` runs. The limit is the whole interpreter's: only when every other
    thread is far from it (:func:`_other_threads_shallow`: the first open's scans run before any
    thread starts, or in a forked copy; a window worker has a thread watching its parent, a few
    frames deep); otherwise, or where that does not lower msgspec's limit (3.12 on: C code has its
    own), ``quick`` is False. A file nested deeper is refused by msgspec and parsed in full by the
    caller *after* this pass: the stdlib's verdict on a deep file is the one that counts (its own
    RecursionError), at the usual limit. (Calling ``fn`` a few hundred frames further down instead
    made every call there several times slower on 3.11: the frames' memory is allocated in
    chunks, and calls at a chunk's edge allocate and free one each time.)"""
    if _msgspec is None:
        return fn(False)
    limit = sys.getrecursionlimit()
    lower = _nesting_room() - PARSE_DEPTH_LIMIT
    if lower <= 0:
        return fn(_nesting_room() <= PARSE_DEPTH_LIMIT + 50)
    if not _other_threads_shallow(limit - lower - OTHER_THREADS_MARGIN):
        return fn(False)
    try:
        sys.setrecursionlimit(limit - lower)
    except (RecursionError, ValueError):
        return fn(False)
    try:
        quick = _nesting_room() <= PARSE_DEPTH_LIMIT + 50
    except BaseException:
        sys.setrecursionlimit(limit)
        raise
    try:
        return fn(quick)
    finally:
        sys.setrecursionlimit(limit)


def _stem(name: str) -> str:
    """``PurePath(name).stem``."""
    i = name.rfind(".")
    return name[:i] if 0 < i < len(name) - 1 else name


class SessionDirScan:
    """One listing of a sessions folder and the facts derived from it (see the module docstring)."""

    def __init__(self, session_dir: Path, cache: FactCache | None = None) -> None:
        self.session_dir = Path(session_dir)
        self.cache = cache
        self._dir_str = str(self.session_dir)
        try:
            self._dir_fd: int | None = os.open(self._dir_str, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            weakref.finalize(self, os.close, self._dir_fd)
        except (OSError, ValueError, AttributeError):
            self._dir_fd = None
        existing: set[str] = set()
        self.names: list[str] = []
        try:
            with os.scandir(self.session_dir) as it:
                for entry in it:
                    name = entry.name
                    self.names.append(name)
                    if not entry.is_symlink() or Path(entry.path).exists():
                        existing.add(name)
        except OSError:  # a folder that cannot be listed has no names
            pass
        self._existing = existing
        self.names.sort()
        self._live: list[str] | None = None  # see live_names
        self._baks: list[str] | None = None
        self._facts: dict[str, tuple[dict, os.stat_result | None, str | None]] = {}
        self._index: tuple[bytes | None, OSError | None] | None = None
        self._index_st: os.stat_result | None = None
        self._index_obj: tuple[Any, bool] | None = None
        self._index_facts: dict | None = None
        self._shards: dict[str, list[str]] | None = None
        self._turn: tuple[list[str], set[str], set[str]] | None = None
        self._deferred_puts: list[tuple] | None = None  # see defer_sidecar_puts

    def defer_sidecar_puts(self) -> None:
        """From now on :meth:`take` keeps the sidecar facts it is given (and :meth:`sidecar` those
        it reads) for :meth:`sidecar` only, and their fact cache entries wait for :meth:`put_deferred` (the window's first open calls
        it just before the cache is saved, after the list is sent: 57,500 ``FactCache.put`` calls,
        0.1 s at 50,000 sessions, off the way to the list; a forked copy whose cache is never
        saved never makes them)."""
        if self._deferred_puts is None:
            self._deferred_puts = []

    def put_deferred(self) -> None:
        """The fact cache entries :meth:`take` deferred, made now (see :meth:`defer_sidecar_puts`);
        later takes put at once again."""
        pending, self._deferred_puts = self._deferred_puts, None
        if pending and self.cache is not None:
            put = self.cache.put
            for name, st, facts, started in pending:
                put(SIDECAR, name, st, facts, started)

    # -- names

    def exists(self, name: str) -> bool:
        """``(session_dir / name).exists()``, from the listing where that is the same answer."""
        if name in self._existing:  # a listed name (never a path, nor "." or ".."): the usual question
            return True
        if "/" in name or "\0" in name or name in ("", ".", ".."):
            return (self.session_dir / name).exists()
        return False

    def live_names(self) -> list[str]:
        """hermes' live sidecars (``*.json`` not starting with ``_``), sorted. Picked from the
        listing once (a look asks three times, 10,000 names each); each call gets its own list."""
        if self._live is None:
            self._live = [n for n in self.names if n.endswith(".json") and not n.startswith("_")]
        return self._live.copy()

    def bak_names(self) -> list[str]:
        """The ``*.json.bak`` names, sorted; picked once, as :meth:`live_names`."""
        if self._baks is None:
            self._baks = [n for n in self.names if n.endswith(".json.bak")]
        return self._baks.copy()

    # -- sidecars

    def sidecar(
        self, name: str, *, want_texts: bool = False
    ) -> tuple[dict, os.stat_result | None, str | None]:
        """(facts, stat, read error) of ``<session_dir>/<name>``, read and parsed at most once."""
        got = self._facts.get(name)
        if got is not None and (not want_texts or "texts" in got[0]):
            return got
        got = self._read_sidecar(name, want_texts)
        self._facts[name] = got
        return got

    def _stat(self, name: str) -> os.stat_result | None:
        """``os.stat`` of a plain name in the folder (relative to the folder's descriptor: no
        path to build and resolve per file), None when it fails."""
        try:
            if self._dir_fd is not None and "/" not in name and name not in (".", ".."):
                return os.stat(name, dir_fd=self._dir_fd)
            return os.stat(os.path.join(self._dir_str, name))
        except (OSError, ValueError):
            return None

    def _read_sidecar(self, name: str, want_texts: bool) -> tuple[dict, os.stat_result | None, str | None]:
        started = time.time_ns()
        if self.cache is not None:  # cache keys are names: the cache file belongs to this folder
            st = self._stat(name)
            if st is not None and stat.S_ISREG(st.st_mode):
                facts = self.cache.get(SIDECAR, name, st)
                if facts is not None and (not want_texts or "texts" in facts):
                    return facts, st, None
        ((_, facts, st, error, started),) = _read_sidecars(self._dir_str, [(name, want_texts)], quick=False)
        if error is None and self.cache is not None:
            if self._deferred_puts is not None:
                self._deferred_puts.append((name, st, facts, started))
            else:
                self.cache.put(SIDECAR, name, st, facts, started)
        return facts, st, error

    def prefetch(self, names: list[str], texts_for: set[str] | frozenset[str] = frozenset()) -> int:
        """Read and parse, ahead of :meth:`sidecar`, the files among ``names`` the cache does not
        answer for (``texts_for``: names whose user texts are wanted too). When there are many
        (a first open), a forked second process parses half of them, so both cores work.
        Returns how many files were parsed here (0 when there was nothing to do or too little
        to be worth a second process: :meth:`sidecar` then reads them one by one)."""
        todo = self._todo(names, texts_for)
        if len(todo) < PARALLEL_MIN_FILES or not can_fork():
            return 0
        todo.sort(reverse=True)  # largest first, dealt out in turn: the halves weigh about the same
        theirs_todo = [(n, w) for _, n, w in todo[0::2]]
        mine_todo = [(n, w) for _, n, w in todo[1::2]]
        try:
            pending = Forked(lambda: _read_sidecars(self._dir_str, theirs_todo))
        except OSError:  # no second process: all of it here
            pending = None
        mine = _read_sidecars(self._dir_str, mine_todo)
        try:
            theirs = pending.result() if pending is not None else None
        except ForkedError:
            theirs = None
        if theirs is None:
            theirs = _read_sidecars(self._dir_str, theirs_todo)
        self.take(mine + theirs)
        return len(todo)

    def read_here(self, todo: list[tuple[str, bool]]) -> list[tuple]:
        """:func:`_read_sidecars` of ``(name, want_texts)`` pairs of this folder, in this process (one
        quick pass): what :meth:`take` takes, and what pickles to another copy of this scan."""
        return _read_sidecars(self._dir_str, todo) if todo else []

    def take(self, results: list[tuple]) -> None:
        """The facts of files read (by :meth:`read_here`, here or in another copy of this scan),
        answered from now on by :meth:`sidecar` and stored in the cache."""
        deferred = self._deferred_puts
        for name, facts, st, error, started in results:
            self._facts[name] = (facts, st, error)
            if error is None and self.cache is not None:
                if deferred is not None:
                    deferred.append((name, st, facts, started))
                else:
                    self.cache.put(SIDECAR, name, st, facts, started)

    def unanswered(
        self, names: list[str], texts_for: set[str] | frozenset[str] = frozenset()
    ) -> list[tuple[int, str, bool]]:
        """``(size, name, want_texts)`` of the files among ``names`` neither this scan nor the cache
        answers for (their facts are taken from the cache here)."""
        return self._todo(names, texts_for)

    def _todo(self, names: list[str], texts_for: set[str] | frozenset[str]) -> list[tuple[int, str, bool]]:
        """``(size, name, want_texts)`` of the files among ``names`` neither this scan nor the cache
        answers for (their facts are taken from the cache here)."""
        todo: list[tuple[int, str, bool]] = []
        for name in names:
            want = name in texts_for
            got = self._facts.get(name)
            if got is not None and (not want or "texts" in got[0]):
                continue
            st = self._stat(name)
            if self.cache is not None and st is not None and stat.S_ISREG(st.st_mode):
                facts = self.cache.get(SIDECAR, name, st)
                if facts is not None and (not want or "texts" in facts):
                    self._facts[name] = (facts, st, None)
                    continue
            todo.append((st.st_size if st is not None else 0, name, want))
        return todo

    def read_ahead(self, names: list[str], texts_for: set[str] | frozenset[str] = frozenset()) -> int:
        """:meth:`prefetch` in this process only, whatever the number of files: one quick pass
        (:func:`quick_sidecar_facts`) instead of a full parse per file as :meth:`sidecar` does.
        For a forked copy that reads a few hundred files (hermes' audit beside the scan).
        Returns how many files were read."""
        todo = self._todo(names, texts_for)
        if not todo:
            return 0
        self.take(self.read_here([(n, w) for _, n, w in todo]))
        return len(todo)

    def message_count(self, name: str) -> int:
        """hermes' ``_msg_count`` of ``<name>`` (-1 when missing or unreadable)."""
        facts, _, err = self.sidecar(name)
        return -1 if err is not None else facts["count"]

    # -- index

    def index_bytes(self) -> tuple[bytes | None, OSError | None]:
        """``_index.json``'s bytes, or the error reading it (FileNotFoundError when absent)."""
        if self._index is None:
            try:
                data, self._index_st = read_regular(self.session_dir / "_index.json")
                self._index = (data, None)
            except OSError as exc:
                self._index = (None, exc)
        return self._index

    def index_object(self) -> tuple[Any, bool]:
        """(parsed ``_index.json``, True), or (None, False) when it is missing or not JSON."""
        if self._index_obj is None:
            data, _ = self.index_bytes()
            if data is None:
                self._index_obj = (None, False)
            else:
                try:
                    self._index_obj = (fast_loads(data), True)
                except (UnicodeDecodeError, ValueError, RecursionError):
                    self._index_obj = (None, False)
        return self._index_obj

    def index_facts(self) -> dict | None:
        """What the audit and the catalogue take from ``_index.json``, or None when it is missing
        or cannot be read (``index_bytes`` has the error).

        ``{"json": parsed, "list": a list, "all_objects": every row an object, "rows": [[session_id,
        title or None], ...]}`` where ``rows`` are the object rows whose ``session_id`` is a string,
        in file order, and the title is kept only when it is a string. Cached like sidecar facts:
        hermes rewrites the index on every save, but an unchanged 20 MB index is not parsed again.
        """
        if self._index_facts is not None:  # worked out once per scan (before a forked copy is made)
            return self._index_facts
        started = time.time_ns()
        if self.cache is not None:
            st = self._stat("_index.json")
            if st is not None and stat.S_ISREG(st.st_mode):
                facts = self.cache.get(INDEX, "_index.json", st)
                if facts is not None:
                    self._index_facts = facts
                    return facts
        data, error = self.index_bytes()
        if error is not None:
            return None
        if self._index_obj is not None:  # parsed already
            facts = _index_facts_of_object(*self._index_obj)
        else:
            facts = index_facts_of(data)
        self._index_facts = facts
        if self.cache is not None and self._index_st is not None:
            self.cache.put(INDEX, "_index.json", self._index_st, facts, started)
        return facts

    def adopt_index_facts(self, facts: dict | None, entry: list | None) -> None:
        """:meth:`index_facts` as another copy of this scan worked them out (None: it found the
        index missing or unreadable; then this scan reads it itself when asked, for the error),
        with that copy's cache entry for them."""
        if facts is None or self._index_facts is not None:
            return
        self._index_facts = facts
        if self.cache is not None:
            self.cache.adopt(INDEX, {"_index.json": entry} if entry is not None else {})

    # -- turn journals

    def turn_journal_entries(self) -> tuple[list[str], set[str], set[str]]:
        """(sorted names, names that are regular files, names that exist) in ``_turn_journal/``.

        All empty when the folder is missing or cannot be listed.
        """
        if self._turn is None:
            names: list[str] = []
            files: set[str] = set()
            existing: set[str] = set()
            try:
                with os.scandir(self.session_dir / "_turn_journal") as it:
                    for e in it:
                        names.append(e.name)
                        if e.is_file():
                            files.add(e.name)
                        if not e.is_symlink() or Path(e.path).exists():
                            existing.add(e.name)
            except OSError:
                names, files, existing = [], set(), set()
            names.sort()
            self._turn = (names, files, existing)
        return self._turn

    def turn_shard_facts(self, path: Path) -> dict | None:
        """:func:`~inspector.store.turn_journal.shard_audit_facts` of one turn-journal shard, None
        when it does not exist. Raises TurnJournalError (hermes' failure) when it cannot be read."""
        try:
            return cached_file_facts(
                self.cache,
                TURN,
                f"{TURN_JOURNAL_DIR}/{path.name}",
                path,
                lambda data: shard_audit_facts(data, path.name),
            )
        except OSError as exc:
            raise TurnJournalError(f"turn journal {path.name} cannot be read: {exc}") from exc

    def turn_journal_shards(self, sid: str) -> list[str]:
        """Sorted names matching ``<sid>~*.jsonl`` (``sid`` holds only ``A-Z a-z 0-9 _ . -``)."""
        if self._shards is None:
            shards: dict[str, list[str]] = {}
            for name in self.turn_journal_entries()[0]:
                tilde = name.find("~")
                if tilde >= 0 and name.endswith(".jsonl"):
                    shards.setdefault(name[:tilde], []).append(name)
            self._shards = shards
        return self._shards.get(sid, [])


__all__ = [
    "FactCache",
    "SessionDirScan",
    "NotARegularFile",
    "sidecar_facts",
    "cache_dir",
    "RACY_WINDOW_NS",
    "CATALOGUE_META",
]
