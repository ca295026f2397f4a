"""A repair plan as the window shows it: everything the buttons, the preview and its tabs need,
without the plan's bytes (issue 15: a rebuild-index plan holds ``_index.json`` twice, ~70 MB at
10,000 sessions, and used to cross to the window just to enable a button).

:func:`summarize` works it out where the plan was made (a child process of
:mod:`inspector.jobs.plans`): each file the plan touches with its sizes and fingerprints, the
rendered diff text (``plan.file_diff``, cut at :data:`DIFF_LIMIT` characters), a chat's change
message by message (``message_diff``), the summary, warnings, refusal and links. The plan itself
stays with the worker, named by :attr:`PlanSummary.handle`; Write asks the worker to write it
(:func:`inspector.jobs.plans.apply_job`, fingerprint-checked by ``plan.apply_plan``).

A plan made in the window's own process (a repair kit, hermes-webui's result in the crosscheck)
is summarized the same way and keeps the plan beside it (:attr:`PlanSummary.local`, never pickled).

Measured on the 10,000-session bench home (the first session needing attention, with
rebuild-index planned too): recover-journal's and rebuild-index's plans are 45 MB each (the index
before and after); their summaries 131 KB and 130 KB. Summarizing costs the child 0.8 s on top of
2.5 s of planning (the diff of ``_index.json``), which the preview used to work out on the window's
own thread when it opened.

No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.linkcheck import LINKS_KEY
from inspector.message_diff import MessageDiff, diff_messages
from inspector.plan import Clock, Plan, file_diff
from inspector.store.files import sha256_hex

DIFF_LIMIT = 3_000_000  # characters of diff text per file (the preview shows no more; Write writes it all)
CUT_NOTE = "\n… (diff cut for display; the whole change is written)"


@dataclass(frozen=True)
class FileTouch:
    """One file a plan writes: what the preview shows of it and what Write checks."""

    kind: str  # "create", "modify" or "delete" (``FileChange.kind``)
    path: Path
    size_before: int | None
    size_after: int | None
    sha256_before: str | None  # the bytes the plan was made from (None: the file is created)
    sha256_after: str | None  # the bytes it writes (None: the file is deleted)
    diff: str  # the unified diff, cut at DIFF_LIMIT characters
    messages: MessageDiff | None = None  # a chat's change message by message (sidecars only)


@dataclass
class PlanSummary:
    """What the window holds of a plan (the names a Plan has, where the preview reads them)."""

    handle: str | None  # the worker's name for the plan (None: a plan made in this process)
    action: str
    session_id: str | None
    changes: list[FileTouch] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refusal: str | None = None
    links: list = field(default_factory=list)  # links leaving the home the plan follows (linkcheck)
    clock: Clock | None = None
    local: Plan | None = field(default=None, repr=False, compare=False)  # see the module's docstring

    @property
    def applies(self) -> bool:
        """The button rule: changes and no refusal."""
        return self.refusal is None and bool(self.changes)

    def diff_text(self) -> str:
        return "\n".join(f"{c.kind}: {c.path}\n{c.diff}" for c in self.changes)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["local"] = None  # a plan's bytes never travel with its summary
        return state


def _cut(text: str) -> str:
    return text if len(text) <= DIFF_LIMIT else text[:DIFF_LIMIT] + CUT_NOTE


def _messages(change) -> MessageDiff | None:
    if change.path.suffix != ".json" or change.path.name.startswith("_") or change.after is None:
        return None
    return diff_messages(change.before, change.after)


def touch(change) -> FileTouch:
    return FileTouch(
        change.kind,
        Path(change.path),
        None if change.before is None else len(change.before),
        None if change.after is None else len(change.after),
        None if change.before is None else sha256_hex(change.before),
        None if change.after is None else sha256_hex(change.after),
        _cut(file_diff(change)),
        _messages(change),
    )


def summarize(plan: Plan, handle: str | None = None, *, keep_local: bool = False) -> PlanSummary:
    """The plan as the window shows it. ``handle``: the worker's name for it; ``keep_local``:
    the plan stays beside its summary (a plan made in the window's process)."""
    links = plan.result.get(LINKS_KEY) if isinstance(plan.result, dict) else None
    return PlanSummary(
        handle,
        plan.action,
        plan.session_id,
        [touch(c) for c in plan.changes],
        list(plan.summary),
        list(plan.warnings),
        plan.refusal,
        list(links or []),
        plan.clock,
        plan if keep_local else None,
    )


def same_plan(plan: Plan, summary: PlanSummary) -> list[str]:
    """Why ``plan`` (made again) is not the one previewed: a file it reads or writes differs
    (empty = the same files, the same bytes before and after)."""
    now = {str(facts[0]): facts for facts in map(touch_facts, plan.changes)}
    then = {str(c.path): (c.path, c.sha256_before, c.sha256_after) for c in summary.changes}
    problems = []
    for path, facts in then.items():
        if path not in now:
            problems.append(f"{path} is no longer part of the repair")
        elif now[path] != facts:
            problems.append(f"{path} changed since the preview")
    problems += [f"{path} is now part of the repair" for path in now if path not in then]
    if plan.refusal and not summary.refusal:
        problems.append(plan.refusal)
    return problems


def touch_facts(change) -> tuple[Path, str | None, str | None]:
    """(path, sha256 before, sha256 after) of one change."""
    return (
        Path(change.path),
        None if change.before is None else sha256_hex(change.before),
        None if change.after is None else sha256_hex(change.after),
    )
