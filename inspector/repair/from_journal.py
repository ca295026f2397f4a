"""Action ``recover-from-journal``: bring back journaled output hermes-webui gave up on.

**An inspector step, not a hermes-webui repair.** hermes retries the journal recovery lazily
and gives up after 24 hours or 12 counted attempts (spec run-journal-and-promotion §4.3, quirk 9):
the marker then says "Partial output may have been lost" while the run journal still holds the
output. This step puts that output back where hermes' own *successful* promotion would have put
it, using the same journal materialization the project mirrors (§3.9, ``journal_recovery``):

* the rows hermes' promotion writes (``_recovered_from_run_journal``, ``_recovered_stream_id``,
  reasoning, tool cards, the model-context rows), materialized with dedupe on as the lazy retry
  does;
* above the turn's interrupted marker (the reorder of §4.4), whose content becomes the fixed
  promoted wording with the four retry keys removed; a turn without a marker gets the rows at its
  end and no marker;
* saved without touching ``updated_at``, as the lazy retry saves.

Where it differs from hermes' promotion, on purpose: the rows go above *their own turn's*
marker even when later turns follow, and every tool card's ``assistant_msg_idx`` follows its
row (hermes leaves such indexes stale, quirk 1), and the model-context rows go to their turn.

Which runs: a run whose journal has no terminal event (its worker died) and whose journaled
output the transcript does not show, except the run the stale-pending repair still owns
(``repair-interrupted``) and a run a pending marker still waits for while hermes would still
retry it (``recover-journal``). Runs that ended with ``done``/``cancel``/an error had a live
worker at the end, which saved the session itself; they are never touched.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from inspector.findings import WARNING, Finding
from inspector.plan import Plan
from inspector.repair.context import RepairContext
from inspector.repair.journal_read import JournalRead, read_journal
from inspector.repair.journal_recovery import append_journaled_partial_output
from inspector.repair.marker import NEUTRAL_WORDING, NO_OUTPUT_OUTCOME, RECOVERED_WORDING, strip_retry_keys
from inspector.repair.model_context import normalize
from inspector.repair.notes import Notes, journal_notes, output_warnings
from inspector.repair.registry import INSPECTOR, SESSION, ActionSpec
from inspector.repair.save import save_session
from inspector.repair.session_source import load_session_for_repair
from inspector.store.files import read_regular
from inspector.store.journal import (
    RUN_JOURNAL_DIR,
    authoritative_terminal_event,
    is_valid_journal_id,
    list_runs,
    open_run_facts,
)
from inspector.store.sidecar import (
    LoadedSession,
    is_safe_session_id,
    pending_retry_marker,
    runs_owned_elsewhere,
)

NAME = "recover-from-journal"
INSPECTOR_STEP = (
    "inspector step, not a hermes-webui repair: hermes gave up on this output; the inspector "
    "puts it back where hermes' own successful promotion would have"
)
OUTPUT_EVENTS = frozenset({"token", "reasoning", "interim_assistant", "tool", "tool_complete"})


@dataclass
class UnshownRun:
    """One run whose journaled output the transcript does not show."""

    run_id: str
    output_events: int  # token/reasoning/interim/tool events in the journal
    chars: int  # characters of journaled text and reasoning the transcript lacks
    rows: int  # rows (text or reasoning) the transcript lacks
    cards: int  # tool cards the transcript lacks
    marker_idx: int | None  # the turn's interrupted marker, if any
    insert_at: int  # where the rows go: the marker, or the end of the turn
    state: str  # why hermes shows nothing, in plain words
    first_text: str = ""

    def describe(self) -> str:
        parts = []
        if self.rows:
            parts.append(f"{self.chars} characters in {self.rows} row{'s' if self.rows != 1 else ''}")
        if self.cards:
            parts.append(f"{self.cards} tool card{'s' if self.cards != 1 else ''}")
        return (
            f"the run journal {self.run_id} holds output the transcript does not show "
            f"({' and '.join(parts)}, from {self.output_events} journaled output events); {self.state}"
        )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _first_created_at(journal: JournalRead) -> float | None:
    for event in journal.events:
        value = _number(event.get("created_at"))
        if value is not None:
            return value
    return None


def _locate(session: dict, run_id: str, journal: JournalRead) -> tuple[int | None, int, str]:
    """(the turn's interrupted marker, where the rows go, hermes' state in words) for a run.

    A pending marker naming the run is its marker. Otherwise the run answers the newest user
    row sent at or before its first event; its turn runs to the next user row, and the newest
    ``type: "interrupted"`` row of the turn is its marker.
    """
    messages = session.get("messages") or []
    for idx in range(len(messages) - 1, -1, -1):
        m = messages[idx]
        if (
            isinstance(m, dict)
            and m.get("_pending_journal_recovery")
            and str(m.get("_journal_retry_stream_id") or "") == run_id
        ):
            return idx, idx, _marker_state(m)
    first = _first_created_at(journal)
    user = None
    for idx, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") != "user":
            continue
        ts = _number(m.get("timestamp"))
        if first is None or (ts is not None and ts <= first):
            user = idx
    start = 0 if user is None else user + 1
    end = next(
        (
            j
            for j in range(start, len(messages))
            if isinstance(messages[j], dict) and messages[j].get("role") == "user"
        ),
        len(messages),
    )
    marker = next(
        (
            j
            for j in range(end - 1, start - 1, -1)
            if isinstance(messages[j], dict)
            and messages[j].get("type") == "interrupted"
            and messages[j].get("role") == "assistant"
        ),
        None,
    )
    if marker is not None:
        return marker, marker, _marker_state(messages[marker])
    return None, end, "the turn has no interrupted marker, so hermes never tries to recover it"


def _marker_state(marker: dict) -> str:
    content = str(marker.get("content") or "")
    if marker.get("_pending_journal_recovery"):
        return "hermes' lazy retry gives up on it before reading the journal (24 hours or 12 attempts)"
    if content == NEUTRAL_WORDING:
        return 'hermes gave up (the marker says "Partial output may have been lost")'
    if content.endswith(NO_OUTPUT_OUTCOME):
        return "the marker says no agent output was recovered"
    return "the turn's marker does not show it"


def _shown_row(row: dict, before: list) -> bool:
    """A recovered row whose text and reasoning are already on some assistant row of the transcript."""
    content = normalize(row.get("content"))
    reasoning = str(row.get("reasoning") or "").strip()
    rows = [m for m in before if isinstance(m, dict) and m.get("role") == "assistant" and not m.get("_error")]
    text_ok = not content or any(normalize(m.get("content")) == content for m in rows)
    reasoning_ok = not reasoning or any(str(m.get("reasoning") or "").strip() == reasoning for m in rows)
    return text_ok and reasoning_ok


def _shown_card(card: dict, run_id: str, before: Iterable) -> bool:
    preview = normalize(card.get("preview"))
    for old in before:
        if not isinstance(old, dict) or str(old.get("name") or "") != card.get("name"):
            continue
        if str(old.get("_recovered_stream_id") or "") == run_id:
            return True
        if normalize(old.get("preview") or old.get("snippet") or "") == preview:
            return True
    return False


def _simulate(session: dict, run_id: str, journal: JournalRead, now: float) -> UnshownRun | None:
    """Materialize on a copy, as the lazy retry would, and keep what the transcript lacks."""
    after = copy.deepcopy(session)
    report = append_journaled_partial_output(after, run_id, journal, dedupe=True, now=now)
    before_msgs = session.get("messages") or []
    chars = rows = 0
    first_text = ""
    for idx in report.rows_added:
        row = after["messages"][idx]
        if _shown_row(row, before_msgs):
            continue
        rows += 1
        chars += len(row.get("content") or "") + len(row.get("reasoning") or "")
        first_text = first_text or str(row.get("content") or row.get("reasoning") or "")
    for idx in report.reasoning_attached:
        reasoning = str(after["messages"][idx].get("reasoning") or "")
        if not any(
            isinstance(m, dict) and str(m.get("reasoning") or "").strip() == reasoning.strip()
            for m in before_msgs
        ):
            rows += 1
            chars += len(reasoning)
    cards = sum(1 for c in report.cards_added if not _shown_card(c, run_id, session.get("tool_calls") or []))
    if not (rows or cards):
        return None
    marker, insert_at, state = _locate(session, run_id, journal)
    events = sum(1 for e in journal.events if str(e.get("event") or e.get("type") or "") in OUTPUT_EVENTS)
    return UnshownRun(run_id, events, chars, rows, cards, marker, insert_at, state, first_text)


def unshown_runs(session: dict, journals: Iterable[tuple[str, JournalRead]], now: float) -> list[UnshownRun]:
    """Runs whose journaled output the transcript does not show (read-only; see the module docstring)."""
    owned = runs_owned_elsewhere(session, pending_retry_marker(session.get("messages")), now)
    found = []
    for run_id, journal in journals:
        if run_id in owned or not journal.readable or not journal.events:
            continue
        if authoritative_terminal_event(journal.events) is not None:
            continue  # a live worker ended this run and saved the session itself
        unshown = _simulate(session, run_id, journal, now)
        if unshown is not None:
            found.append(unshown)
    return found


# ---------------------------------------------------------------- putting the output back


def _move_rows(session: dict, first_new: int, insert_at: int) -> None:
    """Move rows ``[first_new:]`` to ``insert_at``; every tool card's index follows its row."""
    messages = session["messages"]
    n = len(messages)
    if insert_at >= first_new:
        return
    order = list(range(insert_at)) + list(range(first_new, n)) + list(range(insert_at, first_new))
    new_pos = {old: new for new, old in enumerate(order)}
    session["messages"] = [messages[i] for i in order]
    for card in session.get("tool_calls") or []:
        if not isinstance(card, dict):
            continue
        idx = card.get("assistant_msg_idx")
        if isinstance(idx, int) and not isinstance(idx, bool) and idx in new_pos:
            card["assistant_msg_idx"] = new_pos[idx]


def _move_context(session: dict, first_new_ctx: int, next_user: dict | None) -> None:
    """Put the context rows added for an earlier turn before the next turn's user row."""
    ctx = session.get("context_messages")
    if not isinstance(ctx, list) or next_user is None or first_new_ctx <= 0 or first_new_ctx >= len(ctx):
        return
    for q in range(first_new_ctx):
        row = ctx[q]
        if (
            isinstance(row, dict)
            and row.get("role") == "user"
            and row.get("content") == next_user.get("content")
            and row.get("timestamp") == next_user.get("timestamp")
        ):
            session["context_messages"] = ctx[:q] + ctx[first_new_ctx:] + ctx[q:first_new_ctx]
            return


def recover_run(session: dict, found: UnshownRun, journal: JournalRead, now: float, notes: Notes) -> None:
    """Put one run's output back into ``session`` (mutated), as hermes' promotion would have."""
    messages = session["messages"]
    first_new = len(messages)
    ctx = session.get("context_messages")
    first_new_ctx = len(ctx) if isinstance(ctx, list) else 0
    next_user = next(
        (m for m in messages[found.insert_at :] if isinstance(m, dict) and m.get("role") == "user"), None
    )
    report = append_journaled_partial_output(session, found.run_id, journal, dedupe=True, now=now)
    output_warnings(report, notes)
    _move_rows(session, first_new, found.insert_at)
    _move_context(session, first_new_ctx, next_user)
    added = len(session["messages"]) - first_new
    line = f"run {found.run_id}: puts back {added} row{'s' if added != 1 else ''}"
    if report.cards_added:
        line += f" and {len(report.cards_added)} tool card{'s' if len(report.cards_added) != 1 else ''}"
    if found.marker_idx is not None:
        marker = session["messages"][found.marker_idx + added]
        marker["content"] = RECOVERED_WORDING
        strip_retry_keys(marker)
        line += (
            f" above the turn's interrupted marker (now row {found.marker_idx + added}), whose wording "
            'becomes hermes\' promoted one ("The partial output above was recovered from the run journal")'
        )
    else:
        line += f" at the end of its turn (row {found.insert_at}); the turn has no marker and none is added"
    if found.first_text:
        snippet = found.first_text if len(found.first_text) <= 70 else found.first_text[:67] + "..."
        line += f"; first text {snippet!r}"
    notes.summary.append(line)
    if found.marker_idx is not None and found.insert_at < first_new and next_user is not None:
        notes.summary.append(
            "later turns follow this one: the rows go to their own turn and tool cards keep "
            "pointing at their rows (hermes' promotion would append them after the later "
            "turns' rows and leave stale indexes, quirk 1)"
        )


def plan(ctx: RepairContext, session_id: str) -> Plan:
    """What recovering the journaled output hermes gave up on would write (nothing is written)."""
    result = Plan(action=NAME, session_id=session_id)
    source = load_session_for_repair(ctx, session_id)
    if source.refusal is not None:
        result.refusal = source.refusal
        return result
    loaded, session = source.loaded, source.working
    notes = Notes(summary=[INSPECTOR_STEP])
    journals = _journals(ctx, session_id, session)
    now = ctx.clock.now
    recovered: list[str] = []
    try:
        for _ in range(len(journals)):
            found = unshown_runs(session, journals, now)
            found = [f for f in found if f.run_id not in recovered]
            if not found:
                break
            journal = dict(journals)[found[0].run_id]
            recover_run(session, found[0], journal, now, notes)
            recovered.append(found[0].run_id)
            journal_notes(journal, notes)
    except Exception as exc:  # noqa: BLE001 - odd journal values: refuse, write nothing
        result.refusal = (
            f"the journal output cannot be put back ({type(exc).__name__}: {exc}); nothing is written"
        )
        return result
    if not recovered:
        notes.summary.append(
            "nothing to recover: every run journal's output is shown, owned by another repair "
            "or ended by a live worker"
        )
    else:
        for line in _still_pending(session, now):
            notes.warnings.append(line)
        try:
            result.changes = save_session(
                ctx.save_context(),
                LoadedSession(session, loaded.count_hint, loaded.dropped_keys),
                touch_updated_at=False,
            )
        except Exception as exc:  # noqa: BLE001
            result.refusal = (
                f"the session cannot be saved as hermes would save it ({type(exc).__name__}: {exc})"
            )
        if loaded.dropped_keys:
            notes.warnings.append(
                "hermes' save drops keys it does not know: " + ", ".join(loaded.dropped_keys)
            )
    result.summary, result.warnings = notes.summary, notes.warnings
    result.result = {"inspector_step": True, "recovered_runs": recovered}
    return result


def _still_pending(session: dict, now: float) -> list[str]:
    marker = pending_retry_marker(session.get("messages"))
    if marker is not None:
        return [
            f"a pending retry marker still waits for stream {marker.get('_journal_retry_stream_id')}: "
            "hermes will act on it when the session is next opened"
        ]
    return []


def _journals(
    ctx: RepairContext, session_id: str, session: dict | None = None
) -> list[tuple[str, JournalRead]]:
    """The session's run journals this step may use, read through the snapshot.

    Runs another action owns (with ``session``) and journals that cannot hold a dead worker's
    output (a terminal record, or no output event: :func:`open_run_facts`) are left unparsed.
    """
    if not is_valid_journal_id(session_id):
        return []
    try:
        paths = list_runs(ctx.session_dir, session_id)
    except OSError:
        return []
    owned = (
        runs_owned_elsewhere(session, pending_retry_marker(session.get("messages")), ctx.clock.now)
        if session is not None
        else set()
    )
    out = []
    for path in paths:
        run_id = path.name[: -len(".jsonl")]
        if run_id in owned:
            continue
        try:
            data = ctx.snapshot.data(path)
        except OSError:
            data = None
        if data is not None and not open_run_facts(data)["open"]:
            continue
        out.append((run_id, read_journal(ctx.snapshot, ctx.session_dir, session_id, run_id)))
    return out


def _has_open_run(ctx: RepairContext, session_id: str) -> bool:
    """Read without the snapshot: only the sessions that qualify are planned (and read) again."""
    for path in list_runs(ctx.session_dir, session_id):
        try:
            data, _ = read_regular(path)
        except OSError:
            continue
        if open_run_facts(data)["open"]:
            return True
    return False


def eligible(ctx: RepairContext) -> list[str]:
    """Sessions whose run journals hold output the transcript lacks (those with a run-journal folder)."""
    try:
        folders = sorted(p.name for p in (ctx.session_dir / RUN_JOURNAL_DIR).iterdir() if p.is_dir())
    except OSError:
        return []
    out = []
    for sid in folders:
        if not is_safe_session_id(sid) or not _has_open_run(ctx, sid):
            continue
        source = load_session_for_repair(ctx, sid)
        if source.refusal is not None:
            continue
        try:
            found = unshown_runs(source.working, _journals(ctx, sid, source.working), ctx.clock.now)
        except Exception:  # noqa: BLE001 - odd values (e.g. "tool_calls": 1): this session's plan reports them
            continue
        if found:
            out.append(sid)
    return out


# ---------------------------------------------------------------- the finding

FINDING_KIND = "journal_output_not_shown"

SPEC = ActionSpec(
    name=NAME,
    label="Bring back given-up output (inspector step, not hermes)",
    scope=SESSION,
    origin=INSPECTOR,
    mirrors=None,
    help="an inspector step: journal output hermes gave up on, written as hermes' own promotion would have",
    answers=(FINDING_KIND,),
)


def finding_for(session_id: str, found: list[UnshownRun], path: str | None = None) -> Finding:
    """One finding for a session's runs whose output the transcript does not show."""
    text = "; ".join(f.describe() for f in found)
    return Finding(FINDING_KIND, WARNING, text, session_id, NAME, path)


def session_finding(
    ctx: RepairContext, session_id: str, journals: list[tuple[str, JournalRead]] | None = None
) -> Finding | None:
    """The finding for one session (None: nothing missing, or the sidecar cannot be used)."""
    source = load_session_for_repair(ctx, session_id)
    if source.refusal is not None:
        return None
    if journals is None:
        journals = _journals(ctx, session_id, source.working)
    try:
        found = unshown_runs(source.working, journals, ctx.clock.now)
    except Exception:  # noqa: BLE001 - odd journal values: the repair planners report them
        return None
    return finding_for(session_id, found, str(source.path)) if found else None
