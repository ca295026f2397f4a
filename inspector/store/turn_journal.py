"""Turn journals ``SESSION_DIR/_turn_journal/<sid>~<pid>.jsonl`` (and legacy ``<sid>.jsonl``).

hermes-webui appends one compact JSON event per line (``submitted``, ``worker_started``,
``completed``, ``interrupted``...) before a turn starts, so a crash leaves a trace. The
recovery audit (session-recovery §4.1 #11) reads them like this, and so does this module:

* session ids come from the file stems: the part before the first ``~`` (when it is not the
  first character), else the whole stem;
* an id failing ``^[A-Za-z0-9_.-]+$`` makes hermes raise ``ValueError("invalid session_id")``
  (quirk Q4); shards are decoded strictly as UTF-8 (hermes does not catch a decode error);
  unparseable or non-object lines are skipped as malformed, but a line nested too deeply for
  ``json.loads`` raises (hermes catches only ``JSONDecodeError``; the depth rule and its band,
  where hermes' own stack decides, are :mod:`inspector.store.json_depth`'s);
* events of all shards are sorted by ``created_at`` (non-numbers count as 0), then the latest
  event per stripped ``turn_id`` wins (``>=``, so a later equal timestamp replaces), where
  hermes converts ``created_at`` with ``float()`` and fails on anything non-numeric;
* a turn is pending when its latest event is not ``completed``/``interrupted``, has non-blank
  ``content`` and that text is not the text of any user message of the live sidecar.

Wherever hermes itself would raise, this module raises :class:`TurnJournalError` (a
``ValueError``) with a readable message; callers decide whether to crash like hermes or not.
Shards are listed in sorted name order (hermes uses directory order, which is arbitrary).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.store.files import FileSnapshot
from inspector.store.json_depth import NEVER, UNSURE, hermes_verdict, may_be_deep_bytes
from inspector.store.jsonfmt import fast_loads, loads_or_none, orjson_safe

TURN_JOURNAL_DIR = "_turn_journal"
TERMINAL_TURN_EVENTS = frozenset({"completed", "interrupted"})
_SESSION_ID_RE = re.compile(r"[A-Za-z0-9_.-]+")


class TurnJournalError(ValueError):
    """hermes would raise reading this journal (its whole recovery audit then fails)."""


def is_valid_turn_journal_id(session_id: object) -> bool:
    """hermes' turn-journal id check: non-blank, no slashes, only ``A-Z a-z 0-9 _ . -``."""
    sid = str(session_id or "").strip()
    return bool(sid) and "/" not in sid and "\\" not in sid and _SESSION_ID_RE.fullmatch(sid) is not None


def journal_dir(session_dir: Path) -> Path:
    """``<session_dir>/_turn_journal``."""
    return Path(session_dir) / TURN_JOURNAL_DIR


def session_id_from_stem(stem: str) -> str:
    """``"sid~123"`` -> ``"sid"``; a stem without ``~`` (or starting with it) is kept whole."""
    tilde = stem.find("~")
    return stem[:tilde] if tilde > 0 else stem


def _stem(name: str) -> str:
    i = name.rfind(".")
    return name[:i] if 0 < i < len(name) - 1 else name


def turn_journal_session_ids(session_dir: Path, scan=None) -> list[str]:
    """hermes' ``iter_turn_journal_session_ids``: sorted ids of every ``*.jsonl`` regular file.

    ``scan`` (a :class:`~inspector.store.scan.SessionDirScan`) answers from its one listing.
    """
    if scan is not None:
        _, files, _ = scan.turn_journal_entries()
        return sorted({session_id_from_stem(_stem(n)) for n in files if n.endswith(".jsonl")})
    jdir = journal_dir(session_dir)
    if not jdir.exists():
        return []
    try:
        paths = [p for p in jdir.glob("*.jsonl") if p.is_file()]
    except OSError:
        return []
    return sorted({session_id_from_stem(p.stem) for p in paths})


def shard_paths(session_dir: Path, session_id: str, scan=None) -> list[Path]:
    """The shards hermes merges for one id: ``<sid>~*.jsonl`` (sorted) then legacy ``<sid>.jsonl``."""
    if not is_valid_turn_journal_id(session_id):
        raise TurnJournalError(
            f"invalid session_id: turn journal name {session_id!r} (hermes accepts only A-Z a-z 0-9 _ . -)"
        )
    sid = str(session_id).strip()
    jdir = journal_dir(session_dir)
    if scan is not None:
        _, _, existing = scan.turn_journal_entries()
        shards = [jdir / n for n in scan.turn_journal_shards(sid)]
        if f"{sid}.jsonl" in existing:
            shards.append(jdir / f"{sid}.jsonl")
        return shards
    shards = sorted(jdir.glob(f"{sid}~*.jsonl")) if jdir.exists() else []
    legacy = jdir / f"{sid}.jsonl"
    if legacy.exists():
        shards.append(legacy)
    return shards


@dataclass
class TurnJournal:
    """Events of one session (sorted by ``created_at``) and the lines hermes skipped."""

    session_id: str
    events: list[dict] = field(default_factory=list)
    malformed: list[dict] = field(default_factory=list)


def _safe_ts(event: dict) -> float:
    try:
        return float(event.get("created_at") or 0)
    except (ValueError, TypeError):
        return 0.0
    except OverflowError as exc:
        raise TurnJournalError(f"created_at {event.get('created_at')!r} overflows a float") from exc


def _parse_shard(data: bytes, name: str, journal: TurnJournal) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TurnJournalError(
            f"turn journal {name} is not valid UTF-8 (byte {exc.start}); hermes fails reading it"
        ) from exc
    safe = orjson_safe(data)  # checked once for the whole shard
    deep = may_be_deep_bytes(data)
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if deep:  # hermes' json.loads raises RecursionError past its room, which it does not catch
            verdict, levels = hermes_verdict(raw)
            if verdict == NEVER:
                raise TurnJournalError(
                    f"turn journal {name} line {line_no} is nested {levels} or more levels deep, "
                    "deeper than hermes' reader can go"
                )
            if verdict == UNSURE:
                raise TurnJournalError(
                    f"turn journal {name} line {line_no} is nested {levels} levels deep: whether "
                    "hermes reads it or fails depends on hermes itself"
                )
        try:
            event = fast_loads(raw, checked=True) if safe else json.loads(raw)
        except ValueError:
            event = None
        except RecursionError as exc:
            raise TurnJournalError(f"turn journal {name} line {line_no} is nested too deeply") from exc
        if isinstance(event, dict):
            journal.events.append(event)
        else:
            journal.malformed.append({"line": line_no, "raw": raw, "shard": name})


def read_turn_journal(
    session_dir: Path, session_id: str, snapshot: FileSnapshot | None = None, scan=None
) -> TurnJournal:
    """hermes' ``read_turn_journal``: every shard merged, events sorted by ``created_at``."""
    snapshot = snapshot if snapshot is not None else FileSnapshot()
    journal = TurnJournal(session_id=str(session_id))
    for shard in shard_paths(session_dir, session_id, scan):
        try:
            data = snapshot.data(shard)
        except OSError as exc:
            raise TurnJournalError(f"turn journal {shard.name} cannot be read: {exc}") from exc
        if data is None:
            continue
        _parse_shard(data, shard.name, journal)
    journal.events.sort(key=_safe_ts)
    return journal


# What hermes' audit reads from an event (``latest_turn_events`` and ``pending_turns``).
_AUDIT_KEYS = ("turn_id", "event", "created_at", "content")


def shard_audit_facts(data: bytes, name: str) -> dict:
    """One shard reduced to what the audit reads: ``{"error": None, "events": [...]}`` with each
    object line's ``turn_id``/``event``/``created_at``/``content`` (only the keys it has, values
    untouched), or ``{"error": message}`` where hermes fails reading the shard. Cacheable."""
    journal = TurnJournal(session_id="")
    try:
        _parse_shard(data, name, journal)
    except TurnJournalError as exc:
        return {"error": str(exc)}
    return {"error": None, "events": [{k: e[k] for k in _AUDIT_KEYS if k in e} for e in journal.events]}


def audit_turn_events(session_dir: Path, session_id: str, scan) -> list[dict]:
    """``read_turn_journal(...).events`` as the audit needs them (see :func:`shard_audit_facts`),
    each shard read and parsed through ``scan`` (a :class:`~inspector.store.scan.SessionDirScan`,
    which caches the reduced events by file identity). Raises TurnJournalError where hermes fails."""
    events: list[dict] = []
    for shard in shard_paths(session_dir, session_id, scan):
        facts = scan.turn_shard_facts(shard)
        if facts is None:
            continue
        if facts["error"] is not None:
            raise TurnJournalError(facts["error"])
        events.extend(facts["events"])
    events.sort(key=_safe_ts)
    return events


def _strict_ts(event: dict) -> float:
    value = event.get("created_at") or 0
    try:
        return float(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise TurnJournalError(
            f"turn {event.get('turn_id')!r}: created_at {value!r} is not a number (hermes fails on it)"
        ) from exc


def latest_turn_events(events: list[dict]) -> dict[str, dict]:
    """The latest event per stripped ``turn_id`` (hermes' ``derive_turn_journal_states``)."""
    states: dict[str, dict] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        turn_id = str(event.get("turn_id") or "").strip()
        if not turn_id:
            continue
        previous = states.get(turn_id)
        if previous is None or _strict_ts(event) >= _strict_ts(previous):
            states[turn_id] = event
    return states


def is_terminal_turn_event(event: dict) -> bool:
    """``completed`` or ``interrupted``."""
    return str((event or {}).get("event") or "") in TERMINAL_TURN_EVENTS


def user_message_texts(sidecar: bytes | None) -> set[str]:
    """Stripped texts of the live sidecar's ``role == "user"`` messages, as hermes compares them.

    Unreadable/non-object sidecars give an empty set. A truthy ``messages`` that cannot be
    iterated (a number) makes hermes fail: TurnJournalError.
    """
    payload = loads_or_none(sidecar)
    if not isinstance(payload, dict):
        return set()
    messages: Any = payload.get("messages") or []
    try:
        iterator = iter(messages)
    except TypeError as exc:
        raise TurnJournalError(
            f"the sidecar's messages is a {type(messages).__name__}, not a list (hermes fails on it)"
        ) from exc
    return {
        str(m.get("content") or "").strip()
        for m in iterator
        if isinstance(m, dict) and m.get("role") == "user"
    }


@dataclass(frozen=True)
class PendingTurn:
    """A submitted turn with no terminal event whose text is not in the sidecar."""

    turn_id: str
    event: str
    content: str


def pending_turns(states: dict[str, dict], user_texts: set[str]) -> list[PendingTurn]:
    """The pending turns (§4.1 #11), sorted by turn id."""
    out = []
    for turn_id, event in sorted(states.items(), key=lambda kv: kv[0]):
        if is_terminal_turn_event(event):
            continue
        content = str(event.get("content") or "").strip()
        if not content or content in user_texts:
            continue
        out.append(PendingTurn(turn_id=turn_id, event=str(event.get("event") or ""), content=content))
    return out
