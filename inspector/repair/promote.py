"""Action ``recover-journal``: hermes' lazy journal retry, ``_retry_journal_recovery_in_place``.

Spec run-journal-and-promotion §4. When the interrupted-turn repair found no output yet, it
armed the marker with ``_pending_journal_recovery``. Every full ``get_session`` then
retries: it promotes the marker once the journal has output (rows move above it), counts
a failed attempt, demotes after 12 attempts or 24 hours, or, while the journal file is
still missing or empty, leaves everything alone. It is called with
``preserve_arriving_budget=True`` and saves without touching ``updated_at``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.plan import Clock, Plan
from inspector.repair.context import RepairContext
from inspector.repair.gateway_error import detect_gateway_terminal_error, materialize_gateway_terminal_error
from inspector.repair.journal_read import JournalRead, journal_has_visible_output, read_journal
from inspector.repair.journal_recovery import MaterializeReport, append_journaled_partial_output
from inspector.repair.marker import NEUTRAL_WORDING, RECOVERED_WORDING, strip_retry_keys
from inspector.repair.notes import Notes, describe_output, journal_notes, output_warnings, unsure_refusal
from inspector.repair.registry import HERMES, RUN_JOURNALS, SESSION, ActionSpec
from inspector.repair.save import save_session
from inspector.repair.session_source import load_session_for_repair
from inspector.store.sidecar import GIVEUP_SECONDS, MAX_ATTEMPTS, LoadedSession, pending_retry_marker

NAME = "recover-journal"

SPEC = ActionSpec(
    name=NAME,
    label="Recover journal output",
    scope=SESSION,
    origin=HERMES,
    mirrors="api.models._retry_journal_recovery_in_place",
    help="hermes' lazy journal retry: promote the run journal's output, count an attempt, demote, or wait",
    answers=("pending_journal_recovery",),
    hermes_reads=frozenset({RUN_JOURNALS}),
)

JournalReader = Callable[[Any], JournalRead]


def has_pending_journal_retry(messages: Any) -> bool:
    """``_session_has_pending_journal_retry``: a flagged row before the newest normal assistant reply."""
    return pending_retry_marker(messages) is not None


def reorder_journal_tail_above_marker(session: dict, marker_idx: int) -> list[str]:
    """``_reorder_journal_tail_above_marker``; returns warnings for tool cards it leaves stale.

    hermes rebases only ``assistant_msg_idx`` values in ``[i+1, i+1+len(J))`` (quirk 1):
    cards pointing at rows that sat further down keep their old index.
    """
    messages = session["messages"]
    if marker_idx < 0 or marker_idx >= len(messages):
        return []
    tail = messages[marker_idx + 1 :]
    journaled = [m for m in tail if isinstance(m, dict) and m.get("_recovered_from_run_journal")]
    if not journaled:
        return []
    rest = [m for m in tail if not (isinstance(m, dict) and m.get("_recovered_from_run_journal"))]
    origins = [
        (card, card["assistant_msg_idx"])
        for card in session.get("tool_calls") or []
        if isinstance(card, dict) and _plain_int(card.get("assistant_msg_idx"))
    ]
    base = marker_idx + 1
    for card in session.get("tool_calls") or []:
        if not isinstance(card, dict):
            continue
        idx = card.get("assistant_msg_idx")
        if isinstance(idx, int) and base <= idx < base + len(journaled):
            card["assistant_msg_idx"] = idx - 1
    session["messages"] = messages[:marker_idx] + journaled + [messages[marker_idx]] + rest
    return _stale_card_warnings(origins, _new_order(messages, marker_idx))


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _new_order(messages: list, marker_idx: int) -> list[int]:
    """Old row indexes in their order after the reorder."""
    tail = range(marker_idx + 1, len(messages))
    moved = [
        j for j in tail if isinstance(messages[j], dict) and messages[j].get("_recovered_from_run_journal")
    ]
    moved_set = set(moved)
    stay = [j for j in tail if j not in moved_set]
    return list(range(marker_idx)) + moved + [marker_idx] + stay


def _stale_card_warnings(origins: list[tuple[dict, int]], order: list[int]) -> list[str]:
    new_pos = {old: new for new, old in enumerate(order)}
    out = []
    for card, origin in origins:
        if origin not in new_pos or card.get("assistant_msg_idx") == new_pos[origin]:
            continue
        out.append(
            f"tool card {card.get('name')!r} ({card.get('tid')}) keeps assistant_msg_idx "
            f"{card.get('assistant_msg_idx')} after hermes' reorder, but the row it was made for "
            f"is now row {new_pos[origin]} (stale index, quirk 1)"
        )
    return out


class _Retry:
    """One run of ``_retry_journal_recovery_in_place`` on a session dict."""

    def __init__(self, session: dict, read: JournalReader, clock: Clock, notes: Notes):
        self.s = session
        self.sid = session["session_id"]
        self.read = read
        self.clock = clock
        self.notes = notes
        self.journal: JournalRead | None = None

    def run(self) -> tuple[bool, bool]:
        """(hermes' return value, whether hermes saves)."""
        messages = self.s.get("messages") or []
        for idx in range(len(messages) - 1, -1, -1):
            msg = messages[idx]
            if not isinstance(msg, dict):
                continue
            if (
                msg.get("role") == "assistant"
                and not msg.get("_error")
                and not msg.get("_pending_journal_recovery")
            ):
                self.notes.summary.append(
                    f"nothing to retry: row {idx} is a normal assistant reply newer than any pending marker"
                )
                return False, False
            if msg.get("type") == "interrupted" and msg.get("_pending_journal_recovery"):
                return self._retry(idx, msg)
        self.notes.summary.append("nothing to retry: no interrupted marker waits for journal recovery")
        return False, False

    def _retry(self, idx: int, msg: dict) -> tuple[bool, bool]:
        stream_id = msg.get("_journal_retry_stream_id")
        first_seen = msg.get("_journal_retry_first_seen_ts") or 0
        attempts = int(msg.get("_journal_retry_attempts") or 0)
        now = self.clock.now
        give_up = attempts >= MAX_ATTEMPTS or (first_seen and now - float(first_seen) > GIVEUP_SECONDS)
        if not stream_id:
            self._demote(msg, idx, "the marker names no stream to retry")
            return False, True
        if give_up:
            why = (
                f"{attempts} attempts reached the cap of {MAX_ATTEMPTS}"
                if attempts >= MAX_ATTEMPTS
                else f"given up after 24 h (armed {int(now - float(first_seen))} s ago)"
            )
            self._demote(msg, idx, why)
            self._warn_unread_journal(stream_id)
            return False, True
        return self._attempt(idx, msg, stream_id, attempts)

    def _attempt(self, idx: int, msg: dict, stream_id: Any, attempts: int) -> tuple[bool, bool]:
        self.journal = journal = self.read(stream_id)
        report = append_journaled_partial_output(self.s, stream_id, journal, dedupe=True, now=self.clock.now)
        output_warnings(report, self.notes)
        found = detect_gateway_terminal_error(self.sid, stream_id, journal)
        how = materialize_gateway_terminal_error(self.s, found) if found is not None else None
        if report.recovered or how is not None:
            return self._promote(idx, msg, report, how, attempts), True
        if (
            journal.path is not None
            and not (journal.error and journal.exists)
            and (not journal.exists or journal.size == 0)
        ):
            self.notes.summary.append(
                f"the journal {journal.path.name} is {'empty' if journal.exists else 'not there'} yet: "
                "hermes changes nothing and keeps the retry budget (still arriving)"
            )
            return False, False
        return self._count_attempt(idx, msg, attempts, journal), True

    def _promote(
        self, idx: int, msg: dict, report: MaterializeReport, how: str | None, attempts: int
    ) -> bool:
        if how is None:
            msg["content"] = RECOVERED_WORDING
            strip_retry_keys(msg)
        line = describe_output(report, "above the marker")
        if line:
            self.notes.summary.append(line)
        self.notes.warnings.extend(reorder_journal_tail_above_marker(self.s, idx))
        if how is not None:
            self.s["messages"] = [m for m in self.s["messages"] if m is not msg]
            self.notes.summary.append(
                f"the journal ends in an unsaved gateway error: its error row is "
                f"{'already present' if how == 'present' else how} and the pending marker is removed"
            )
        else:
            self.notes.summary.append(
                f"promotes the marker to the recovered wording after {attempts} counted attempts "
                "(fixed wording without the Evidence sentence; retry keys removed)"
            )
        return True

    def _count_attempt(self, idx: int, msg: dict, attempts: int, journal: JournalRead) -> bool:
        nxt = attempts + 1
        what = "no readable output" if journal.readable else "an unreadable journal"
        if nxt >= MAX_ATTEMPTS:
            self._demote(msg, idx, f"attempt {nxt} of {MAX_ATTEMPTS} found {what}")
        else:
            msg["_journal_retry_attempts"] = nxt
            self.notes.summary.append(f"counts retry attempt {nxt} of {MAX_ATTEMPTS}: it found {what}")
        return False

    def _demote(self, msg: dict, idx: int, why: str) -> None:
        msg["content"] = NEUTRAL_WORDING
        strip_retry_keys(msg)
        self.notes.summary.append(
            f"demotes the marker (row {idx}) to the neutral wording: {why}; retry keys removed"
        )

    def _warn_unread_journal(self, stream_id: Any) -> None:
        journal = self.read(stream_id)
        if journal_has_visible_output(journal):
            self.notes.warnings.append(
                f"the journal {journal.path.name} now holds output, but hermes gives up before reading it "
                "(quirk 9): the output stays unrecovered"
            )


def plan(ctx: RepairContext, session_id: str) -> Plan:
    """What the lazy journal retry would write for this session (nothing is written)."""
    result = Plan(action=NAME, session_id=session_id)
    source = load_session_for_repair(ctx, session_id)
    if source.refusal is not None:
        result.refusal = source.refusal
        return result
    loaded, session = source.loaded, source.working
    notes = Notes()
    retry = _Retry(
        session, lambda sid: read_journal(ctx.snapshot, ctx.session_dir, session_id, sid), ctx.clock, notes
    )
    try:
        returned, saves = retry.run()
    except Exception as exc:  # hermes catches everything here, logs it and saves nothing
        result.summary = [
            f"hermes' retry fails on this session ({type(exc).__name__}: {exc}); "
            "it catches the error and writes nothing"
        ]
        result.warnings = notes.warnings
        result.result = {"hermes_return": False, "hermes_error": f"{type(exc).__name__}: {exc}"}
        return result
    if retry.journal is not None and retry.journal.unsure is not None:
        result.refusal = unsure_refusal(retry.journal)
        return result
    if saves:
        try:
            result.changes = save_session(
                ctx.save_context(),
                LoadedSession(session, loaded.count_hint, loaded.dropped_keys),
                touch_updated_at=False,
            )
        except Exception as exc:
            result.refusal = (
                f"the session cannot be saved as hermes would save it ({type(exc).__name__}: {exc})"
            )
    if retry.journal is not None and retry.journal.path is not None:
        journal_notes(retry.journal, notes)
    if saves and loaded.dropped_keys:
        notes.warnings.append("hermes' save drops keys it does not know: " + ", ".join(loaded.dropped_keys))
    result.summary, result.warnings = notes.summary, notes.warnings
    result.result = {"hermes_return": returned}
    return result


def eligible(ctx: RepairContext) -> list[str]:
    """Sidecars whose newest marker waits for journal recovery (hermes' detection rule, §4.2)."""
    return ctx.sidecars_where(
        b"_pending_journal_recovery", lambda raw: has_pending_journal_retry(raw.get("messages"))
    )
