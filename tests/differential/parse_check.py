"""The quick parses of a first open give hermes' own parse, on every file the differential test writes.

A first open reads every sidecar and run journal once and keeps only a few facts: a sidecar's
verdict, metadata, message count, pending marker and user texts (:func:`inspector.store.scan.
sidecar_facts`, orjson without a pre-scan of the bytes), a journal's dropped lines
(:func:`inspector.store.journal.dropped_lines`, orjson on every line), and the events and skipped
lines of the repairs' streaming read (:func:`inspector.store.journal.scan_journal_bytes`, orjson on
the bytes of each line). Here all are compared with
the facts of the standard library's parse, which is what hermes runs (``json.loads`` of the UTF-8
text; a journal's lines split with ``str.splitlines``).
"""

from __future__ import annotations

import json
from typing import Any

from inspector.store.journal import JournalUnreadable, dropped_lines, scan_journal_bytes
from inspector.store.scan import _facts_of, sidecar_facts, user_texts_of


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
    try:
        return dropped_lines(data)
    except JournalUnreadable:
        return "unreadable"


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


def _same(a: Any, b: Any) -> bool:
    """Equal, types included (1 and 1.0 differ; NaN equals NaN)."""
    return repr(a) == repr(b) and type(a) is type(b)


def parse_mismatches(files: dict[str, bytes]) -> list[str]:
    """One line per file of a home (relative path -> bytes) whose quick facts differ from hermes' parse."""
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
        elif "/_run_journal/" in rel and name.endswith(".jsonl"):
            quick, hermes = quick_dropped_lines(data), hermes_dropped_lines(data)
            if quick != hermes:
                out.append(f"{rel}: dropped lines {quick!r} != hermes' {hermes!r}")
            streamed, theirs = streamed_run_events(data), hermes_run_events(data)
            if not _same(streamed, theirs):
                out.append(f"{rel}: streamed events {streamed!r:.200} != hermes' {theirs!r:.200}")
    return out
