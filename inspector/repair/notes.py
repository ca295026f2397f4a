"""Plain-words notes of the run-journal repairs: the plan summary lines and warnings.

What materialization added (spec run-journal-and-promotion §3.9) as one summary line, and
warnings for the observed hermes quirks (§6.2) that apply to this journal and this pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.repair.journal_read import JournalRead
from inspector.repair.journal_recovery import MaterializeReport


@dataclass
class Notes:
    """What a planner tells the user: the summary lines and the warnings."""

    summary: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def describe_output(report: MaterializeReport, where: str) -> str | None:
    """One summary line for what materialization added, e.g. "adds 2 recovered assistant rows ..."."""
    parts = []
    if report.rows_added:
        parts.append(_plural(len(report.rows_added), "recovered assistant row"))
    if report.anchors_added:
        parts.append(_plural(len(report.anchors_added), "empty anchor row") + " for tool cards")
    if report.cards_added:
        parts.append(_plural(len(report.cards_added), "tool card"))
    text = f"adds {' and '.join(parts)} {where}" if parts else ""
    if report.rows_matched:
        held = f"{_plural(len(report.rows_matched), 'journaled text segment')} already in the transcript"
        text = f"{text}; {held}" if text else f"adds nothing for {held}"
    if report.reasoning_attached:
        attach = f"attaches journaled reasoning to {_plural(len(report.reasoning_attached), 'existing row')}"
        text = f"{text}; {attach}" if text else attach
    return text or None


def journal_notes(journal: JournalRead, notes: Notes) -> None:
    """Warnings for the journal quirks that apply to this file (§6.2 items 4 and 5, and a line
    nested too deeply for hermes' reader: see inspector.store.json_depth)."""
    name = journal.path.name if journal.path is not None else "the run journal"
    if journal.error and journal.exists:
        notes.warnings.append(
            f"{name}: {journal.error}; hermes treats the run as having no output"
            + (
                ", so the reply's text in this record is not brought back (the inspector does the same)"
                if journal.too_deep
                else ""
            )
        )
    if journal.torn_lines:
        lines = ", ".join(str(n) for n in journal.torn_lines[:10])
        notes.warnings.append(
            f"{name}: line(s) {lines} contain an invisible line-break character (U+2028, U+2029, U+0085 or "
            "another one hermes reads as a line end); hermes tears those records apart and loses them"
        )
    if journal.malformed:
        lines = ", ".join(str(m["line"]) for m in journal.malformed[:10])
        notes.warnings.append(
            f"{name}: hermes skips {_plural(len(journal.malformed), 'unreadable line')} (not a JSON object; "
            f"line numbers as hermes counts them: {lines})"
        )


def output_warnings(report: MaterializeReport, notes: Notes) -> None:
    """Warnings for materialization quirks that showed up in this pass (§6.2 items 2, 3, 7)."""
    for idx, text in report.earlier_turn_matches:
        snippet = text if len(text) <= 60 else text[:57] + "..."
        notes.warnings.append(
            f"journaled text {snippet!r} equals (or is contained in) row {idx} from an earlier turn; "
            "hermes' session-wide dedupe treats it as already present and recovers nothing for it"
        )
    for name in report.duplicate_cards:
        notes.warnings.append(
            f"a {name!r} tool card recovered from this stream already exists with another preview; "
            "hermes adds another card (repeated dedupe runs duplicate cards)"
        )
    for name, raw in report.truthy_is_error:
        notes.warnings.append(
            f"tool_complete for {name!r} has is_error={raw!r}; hermes uses truthiness, "
            f"so the card gets is_error={bool(raw)}"
        )


def unsure_refusal(journal: JournalRead) -> str:
    """The refusal of a repair whose journal hermes may or may not read (:attr:`JournalRead.unsure`)."""
    name = journal.path.name if journal.path is not None else "the run journal"
    return (
        f"{name}: {journal.unsure}; the inspector does not guess, so nothing is written "
        "(hermes' own repair would recover either all of this record or none of it)"
    )
