"""Search a home for text where lost chats live (issue 16).

One pass, read-only, over every place a chat's words can be: sidecar titles and messages
(``<sid>.json``), their ``.bak`` copies, every profile's ``state.db`` (titles and messages,
through :mod:`inspector.store.statedb`, opened read-only), run journals (their text, streamed
line by line) and run ids (the journal file names). Each hit names the session, *where* it
matched, and a one-line snippet around the match.

Bounded: a sidecar or ``.bak`` over :data:`MAX_FILE_BYTES` is not read (it is listed in
``skipped``), journals are streamed (memory of one piece), a FIFO or device named like a
session file is refused without blocking, and at most ``max_hits`` hits are kept.
Matching is case-insensitive (``str.casefold``); state.db's own ``LIKE`` is case-insensitive
for ASCII only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.home import Home
from inspector.store.files import read_regular
from inspector.store.jsonfmt import loads_or_none

MAX_FILE_BYTES = 32 << 20
MAX_HITS = 1000
SNIPPET_WIDTH = 80
# A journal's bookkeeping ids: every line repeats them, a run id is matched once by its file name
_JOURNAL_ID_KEYS = frozenset({"session_id", "run_id", "event_id", "stream_id"})

WHERE_TITLE = "title"
WHERE_SIDECAR = "sidecar message"
WHERE_SIDECAR_RAW = "sidecar text (unreadable JSON)"
WHERE_BAK = ".bak message"
WHERE_BAK_TITLE = ".bak title"
WHERE_BAK_RAW = ".bak text (unreadable JSON)"
WHERE_DB_TITLE = "state.db title"
WHERE_DB = "state.db message"
WHERE_JOURNAL = "run journal"
WHERE_RUN_ID = "run id"


@dataclass(frozen=True)
class Hit:
    session_id: str
    where: str
    snippet: str
    path: str = ""
    detail: str = ""  # the message's role and index, the journal's line, the database's profile

    def to_json(self) -> dict:
        return {
            "session_id": self.session_id,
            "where": self.where,
            "snippet": self.snippet,
            "detail": self.detail,
            "path": self.path,
        }


@dataclass
class SearchResult:
    query: str
    hits: list[Hit] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files not searched, in words
    truncated: bool = False

    def to_json(self) -> dict:
        return {
            "query": self.query,
            "hits": [h.to_json() for h in self.hits],
            "skipped": list(self.skipped),
            "truncated": self.truncated,
        }

    def session_ids(self) -> set[str]:
        return {h.session_id for h in self.hits}


class _Full(Exception):
    pass


def snippet(text: str, needle: str, width: int = SNIPPET_WIDTH) -> str:
    """One line of about ``width`` characters around the first match of ``needle`` (casefolded),
    whitespace runs shown as one space; ``…`` where text was cut."""
    flat = " ".join(text.split())
    at = flat.casefold().find(needle)
    if at < 0:
        return flat[:width] + ("…" if len(flat) > width else "")
    start = max(0, at - (width - len(needle)) // 2)
    end = min(len(flat), start + width)
    start = max(0, end - width)
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")


def content_text(content: Any) -> str:
    """The words of a message's ``content``: a string, or the text of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                for key in ("text", "content"):
                    if isinstance(part.get(key), str):
                        parts.append(part[key])
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return ""


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif depth < 20 and isinstance(value, dict):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif depth < 20 and isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


class _Searcher:
    def __init__(
        self, home: Home, query: str, max_hits: int, max_file_bytes: int, check: Callable[[], None]
    ) -> None:
        self.home = home
        self.check = check
        self.needle = query.casefold()
        self.result = SearchResult(query)
        self.max_hits = max_hits
        self.max_file_bytes = max_file_bytes
        # A journal line is only decoded when its raw text may hold the needle: an ASCII needle
        # without characters JSON escapes appears in the raw line whenever it is in a value.
        self.raw_prefilter = (
            query.isascii() and query.isprintable() and '"' not in query and "\\" not in query
        )

    def add(self, sid: str, where: str, text: str, path: Path | str = "", detail: str = "") -> None:
        if len(self.result.hits) >= self.max_hits:
            self.result.truncated = True
            raise _Full
        self.result.hits.append(Hit(str(sid), where, snippet(text, self.needle), str(path), detail))

    def matches(self, text: str) -> bool:
        return self.needle in text.casefold()

    # ------------------------------------------------------------ sidecars and .bak

    def session_file(self, path: Path, sid: str, bak: bool) -> None:
        try:
            data, _ = read_regular(path, self.max_file_bytes)
        except FileNotFoundError:
            return
        except OSError as exc:
            self.result.skipped.append(f"{path.name}: not searched ({_os_words(exc)})")
            return
        obj = loads_or_none(data)
        if not isinstance(obj, dict):
            text = data.decode("utf-8", "replace")
            if self.matches(text):
                self.add(sid, WHERE_BAK_RAW if bak else WHERE_SIDECAR_RAW, text, path)
            return
        title = obj.get("title")
        if isinstance(title, str) and self.matches(title):
            self.add(sid, WHERE_BAK_TITLE if bak else WHERE_TITLE, title, path)
        messages = obj.get("messages")
        if not isinstance(messages, list):
            return
        for index, msg in enumerate(messages):
            if not isinstance(msg, dict):
                continue
            text = content_text(msg.get("content"))
            if text and self.matches(text):
                role = msg.get("role") if isinstance(msg.get("role"), str) else "?"
                self.add(
                    sid, WHERE_BAK if bak else WHERE_SIDECAR, text, path, f"message {index + 1} ({role})"
                )

    def session_files(self) -> None:
        try:
            entries = sorted(os.scandir(self.home.session_dir), key=lambda e: e.name)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                self.result.skipped.append(f"the sessions folder: not listed ({_os_words(exc)})")
            return
        for n, entry in enumerate(entries):
            if n % 100 == 0:
                self.check()
            name = entry.name
            if name.startswith("_"):
                continue
            if name.endswith(".json.bak"):
                self.session_file(Path(entry.path), name[: -len(".json.bak")], bak=True)
            elif name.endswith(".json"):
                self.session_file(Path(entry.path), name[: -len(".json")], bak=False)

    # ------------------------------------------------------------ state.db

    def state_dbs(self) -> None:
        from inspector.store.statedb import StateDbError, search_text

        seen: set[Path] = set()
        for profile in self.home.profile_names():
            path = self.home.state_db(profile)
            if path in seen or not path.exists():
                continue
            seen.add(path)
            try:
                titles, messages = search_text(path, self.result.query, limit=self.max_hits)
            except StateDbError as exc:
                self.result.skipped.append(f"state.db of profile {profile}: not searched ({exc})")
                continue
            detail = f"profile {profile}"
            for row in titles:
                title = row["title"] if isinstance(row["title"], str) else ""
                self.add(row["session_id"], WHERE_DB_TITLE, title, path, detail)
            for row in messages:
                text = content_text(row["content"])
                if not text and isinstance(row["content"], str | bytes):
                    text = str(row["content"])
                self.add(row["session_id"], WHERE_DB, text, path, f"{detail}, {row['role']} row {row['id']}")

    # ------------------------------------------------------------ run journals

    def journals(self) -> None:
        from inspector.store.journal import RUN_JOURNAL_DIR

        root = self.home.session_dir / RUN_JOURNAL_DIR
        try:
            folders = sorted(os.scandir(root), key=lambda e: e.name)
        except OSError:
            return
        for folder in folders:
            if not folder.is_dir(follow_symlinks=False):
                continue
            try:
                runs = sorted(
                    (e for e in os.scandir(folder.path) if e.name.endswith(".jsonl")), key=lambda e: e.name
                )
            except OSError as exc:
                self.result.skipped.append(f"run journals of {folder.name}: not listed ({_os_words(exc)})")
                continue
            for run in runs:
                self.check()
                run_id = run.name[: -len(".jsonl")]
                if self.matches(run_id):
                    self.add(folder.name, WHERE_RUN_ID, run_id, run.path)
                self.journal(Path(run.path), folder.name)

    def journal(self, path: Path, sid: str) -> None:
        from inspector.store.journal import JournalUnreadable, stream_lines

        try:
            st = os.stat(path)
        except OSError:
            return
        if not stat.S_ISREG(st.st_mode):
            self.result.skipped.append(f"{sid}/{path.name}: not a regular file (a FIFO or device), not read")
            return
        try:
            for number, line, obj in stream_lines(path):
                if number % 20000 == 0:
                    self.check()
                if self.raw_prefilter and self.needle not in line.casefold():
                    continue
                values = (
                    [s for k, val in obj.items() if k not in _JOURNAL_ID_KEYS for s in _strings(val)]
                    if obj is not None
                    else [line]
                )
                for value in values:
                    if self.matches(value):
                        event = obj.get("event") if obj is not None else None
                        what = f"line {number}" + (
                            f" ({event})" if isinstance(event, str) else " (dropped)" if obj is None else ""
                        )
                        self.add(sid, WHERE_JOURNAL, value, path, what)
                        break
        except JournalUnreadable as exc:
            self.result.skipped.append(
                f"{sid}/{path.name}: searched only up to where it stops being readable ({exc})"
            )
        except OSError as exc:
            self.result.skipped.append(f"{sid}/{path.name}: not searched ({_os_words(exc)})")


def _os_words(exc: OSError) -> str:
    from inspector.store.files import NotARegularFile, TooLargeToLoad

    if isinstance(exc, NotARegularFile):
        return "not a regular file: a FIFO, device or folder"
    if isinstance(exc, TooLargeToLoad):
        return "larger than the search reads"
    return exc.strerror or str(exc)


def search_home(
    home: Home,
    query: str,
    *,
    max_hits: int = MAX_HITS,
    max_file_bytes: int = MAX_FILE_BYTES,
    check: Callable[[], None] = lambda: None,
) -> SearchResult:
    """Every place in ``home`` where ``query`` occurs (see the module's text). Reads only.
    ValueError for an empty query; ``check`` raises to stop (called between files)."""
    if not query.strip():
        raise ValueError("nothing to search for")
    searcher = _Searcher(home, query, max_hits, max_file_bytes, check)
    try:
        searcher.session_files()
        searcher.state_dbs()
        searcher.journals()
    except _Full:
        pass
    return searcher.result


def format_result(result: SearchResult) -> str:
    """The hits as lines: session id, where, snippet; then what was not searched."""
    if not result.hits:
        lines = [f"No match for {result.query!r}."]
    else:
        width = max(len(h.session_id) for h in result.hits)
        where_w = max(len(h.where) for h in result.hits)
        lines = [f"{h.session_id:<{width}}  {h.where:<{where_w}}  {h.snippet}" for h in result.hits]
        sessions = len(result.session_ids())
        lines.append(
            f"{len(result.hits)} match(es) in {sessions} session(s)"
            + (" (stopped at the limit: narrow the search)" if result.truncated else "")
            + "."
        )
    lines += [f"Not (fully) searched: {s}" for s in result.skipped]
    return "\n".join(lines)
