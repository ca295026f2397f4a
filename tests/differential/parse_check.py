"""The quick parses of a first open give hermes' own parse, on every file the differential test writes.

A first open reads every sidecar and run journal once and keeps only a few facts: a sidecar's
verdict, metadata, message count, pending marker and user texts (:func:`inspector.store.scan.
sidecar_facts`, orjson without a pre-scan of the bytes; :func:`~inspector.store.scan.sidecar_facts_many`,
msgspec without building the messages), a journal's dropped lines
(:func:`inspector.store.scan.journal_dropped_lines`, msgspec over a few KB of lines at a time), and the
events and skipped lines of the repairs' streaming read (:func:`inspector.store.journal.scan_journal_bytes`,
orjson on the bytes of each line). Here all are compared with
the facts of the standard library's parse, which is what hermes runs (``json.loads`` of the UTF-8
text; a journal's lines split with ``str.splitlines``). An index rebuild parses each sidecar lightly
(``save.light_parse_sidecar``, msgspec); its rows are compared with those of the exact parse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.store.index import PathResolver, compact, load_for_index
from inspector.store.journal import JournalUnreadable, scan_journal_bytes
from inspector.store.scan import (
    _facts_of,
    journal_dropped_lines,
    sidecar_facts,
    sidecar_facts_many,
    user_texts_of,
)


def hermes_sidecar_facts(data: bytes, want_texts: bool) -> dict:
    """:func:`sidecar_facts` of the object hermes' own parse gives (``json.loads`` of the text)."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        error = f"not valid UTF-8: {exc}"
    except ValueError as exc:
        error = f"not valid JSON: {exc}"
    except RecursionError:
        error = "JSON nested too deeply to parse"
    else:
        return _facts_of(obj, data, want_texts)
    facts: dict[str, Any] = {"error": error, "meta": {}, "marker": None, "count": -1}
    if want_texts:
        facts["texts"], facts["texts_error"] = user_texts_of(None)
    return facts


def hermes_dropped_lines(data: bytes) -> tuple[int, int | None] | str:
    """hermes' ``read_run_events`` verdicts: (lines it skips, the first one's number), or
    ``"unreadable"`` when the file is not UTF-8 or a line is nested too deeply for ``json.loads``
    (its RecursionError is not a JSONDecodeError: ``_read_jsonl`` lets it out and every repair
    reader takes the journal as unreadable). The homes' deep lines are far from the depths where
    the caller's stack decides (:mod:`inspector.store.json_depth`)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "unreadable"
    count, first = 0, None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ok = isinstance(json.loads(line), dict)
        except ValueError:
            ok = False
        except RecursionError:
            return "unreadable"
        if not ok:
            count += 1
            first = number if first is None else first
    return count, first


def quick_dropped_lines(data: bytes) -> tuple[int, int | None] | str:
    """The first open's count (:func:`inspector.store.scan.journal_dropped_lines`)."""
    try:
        return journal_dropped_lines(data)
    except JournalUnreadable:
        return "unreadable"


def light_or_exact(data: bytes) -> tuple[dict, bool]:
    """An index rebuild's parse of a sidecar: the light parse, else the exact one; and whether the
    light parse gave it (its row is then made by ``save.light_index_row``, as the rebuild does)."""
    from inspector.repair.save import light_parse_sidecar, parse_sidecar_exact

    obj = light_parse_sidecar(data)
    return (obj, True) if obj is not None else (parse_sidecar_exact(data), False)


def exact_only(data: bytes) -> dict:
    """The exact parse, called from as deep a frame as :func:`light_or_exact` calls it (near the
    stdlib's nesting limit its verdict depends on the depth of the stack)."""
    from inspector.repair.save import parse_sidecar_exact

    return parse_sidecar_exact(data)


def index_row_outcome(parse: Callable[[bytes], Any], data: bytes) -> tuple:
    """What an index rebuild takes of a sidecar parsed by ``parse`` (:func:`light_or_exact` or
    :func:`exact_only`): the observer's ``session_id`` and ``workspace`` and the ``compact()``
    row, as text (types show: ``1`` and ``1.0`` differ), or the error's type and message. The row
    of a lightly parsed sidecar is made as the rebuild makes it (``save.light_index_row``'s one
    step, else ``load_for_index`` + ``compact`` called from this frame, as for the others)."""
    from inspector.repair.save import _light_row

    try:
        got = parse(data)
    except Exception as exc:  # noqa: BLE001 - compared as data
        return ("error", type(exc).__name__, str(exc), type(exc.__cause__).__name__)
    obj, light = got if isinstance(got, tuple) else (got, False)
    seen = repr((obj.get("session_id"), obj.get("workspace")))
    now, resolve = 1779900000.0, PathResolver(Path("/nonexistent-cwd"))
    if light:
        try:
            return ("row", seen, repr(_light_row(obj, now, resolve)))
        except Exception:  # noqa: BLE001 - the pair below decides, as in the rebuild
            pass
    try:
        row = compact(load_for_index(obj, now=now, resolve=resolve))
    except Exception as exc:  # noqa: BLE001 - compared as data
        return ("row error", seen, type(exc).__name__, str(exc))
    return ("row", seen, repr(row))


def hermes_run_events(data: bytes) -> tuple[list, list] | str:
    """hermes' ``_read_jsonl``: (events, malformed), or ``"unreadable"`` when the file is not UTF-8
    or a line is nested too deeply for the stdlib (as in :func:`hermes_dropped_lines`)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "unreadable"
    events, malformed = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        except RecursionError:
            return "unreadable"
        if isinstance(obj, dict):
            events.append(obj)
        else:
            malformed.append({"line": number, "raw": line})
    return events, malformed


def streamed_run_events(data: bytes) -> tuple[list, list] | str:
    """The repairs' streaming read (:func:`scan_journal_bytes`), its events walked once."""
    try:
        scanned = scan_journal_bytes(data)
    except JournalUnreadable:
        return "unreadable"
    return list(scanned.events), scanned.malformed


def hermes_walked_fields(data: bytes) -> list[str] | str:
    """The fields the repair's walks read (``event.get`` of each) of hermes' events, as text."""
    theirs = hermes_run_events(data)
    if isinstance(theirs, str):
        return theirs
    return [repr(tuple(e.get(k) for k in _WALKED)) for e in theirs[0]]


def streamed_walked_fields(data: bytes) -> list[str] | str:
    """The same of the repairs' streaming read's walk (:meth:`StreamedEvents.outputs`: msgspec
    decodes a plain piece's lines into the few fields the walk reads)."""
    try:
        scanned = scan_journal_bytes(data)
    except JournalUnreadable:
        return "unreadable"
    return [repr(tuple(getattr(e, k) for k in _WALKED)) for e in scanned.events.outputs()]


_WALKED = ("event", "type", "created_at", "seq", "payload")


def _same_facts(quick: dict, hermes: dict) -> bool:
    """:func:`_same`, the metadata's key order aside (the first open's quick read keeps the kept
    keys in a fixed order, not the file's: nothing reads them in order)."""
    return _same(
        {**quick, "meta": sorted(quick["meta"].items())}, {**hermes, "meta": sorted(hermes["meta"].items())}
    )


def _same(a: Any, b: Any) -> bool:
    """Equal, types included (1 and 1.0 differ; NaN equals NaN)."""
    return repr(a) == repr(b) and type(a) is type(b)


def parse_mismatches(files: dict[str, bytes]) -> list[str]:
    """One line per file of a home (relative path -> bytes) whose quick facts differ from hermes' parse,
    or whose index row by the light parse differs from the exact parse's."""
    out = []
    for rel, data in sorted(files.items()):
        name = rel.rsplit("/", 1)[-1]
        if (
            "/" not in rel.removeprefix("webui/sessions/")
            and name.endswith((".json", ".json.bak"))
            and not name.startswith("_")
        ):
            for want in (False, True):
                quick, hermes = sidecar_facts(data, want_texts=want), hermes_sidecar_facts(data, want)
                if not _same(quick, hermes):
                    out.append(f"{rel}: sidecar facts {quick!r:.200} != hermes' {hermes!r:.200}")
            for want in (False, True):
                quick, hermes = sidecar_facts_many([data], want)[0], hermes_sidecar_facts(data, want)
                if not _same_facts(quick, hermes):
                    out.append(f"{rel}: quick sidecar facts {quick!r:.200} != hermes' {hermes!r:.200}")
            light, exact = index_row_outcome(light_or_exact, data), index_row_outcome(exact_only, data)
            if light != exact:
                out.append(f"{rel}: index row {light!r:.200} != the exact parse's {exact!r:.200}")
        elif "/_run_journal/" in rel and name.endswith(".jsonl"):
            quick, hermes = quick_dropped_lines(data), hermes_dropped_lines(data)
            if quick != hermes:
                out.append(f"{rel}: dropped lines {quick!r} != hermes' {hermes!r}")
            streamed, theirs = streamed_run_events(data), hermes_run_events(data)
            if not _same(streamed, theirs):
                out.append(f"{rel}: streamed events {streamed!r:.200} != hermes' {theirs!r:.200}")
            walked, theirs_walked = streamed_walked_fields(data), hermes_walked_fields(data)
            if walked != theirs_walked:
                out.append(f"{rel}: walked events {walked!r:.200} != hermes' {theirs_walked!r:.200}")
    return out
