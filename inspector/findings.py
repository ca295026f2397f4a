"""Findings: what is wrong with a session, in plain words, with the repair that applies.

hermes' own audit items are kept verbatim elsewhere (they must equal hermes' output);
these are the inspector's findings, shown in the list and the session view, and listed
under the ``inspector`` key of ``audit --json``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from inspector.repair import registry

ERROR = "error"
WARNING = "warning"
INFO = "info"
_RANK = {ERROR: 3, WARNING: 2, INFO: 1}


def action_for(kind: str, have: Iterable[str] = ()) -> str | None:
    """The action the registry recommends for an inspector finding of ``kind``, given what the session
    has (``"bak"``: a readable backup; ``"state_db_messages"``: its chat's messages in state.db)."""
    return registry.answer(kind, have)


@dataclass(frozen=True)
class Finding:
    """One problem. ``action`` names the repair that addresses it (None: nothing to press)."""

    kind: str
    severity: str
    message: str
    session_id: str | None = None
    action: str | None = None
    path: str | None = None
    origin: str = "inspector"  # "inspector" or "hermes" (a hermes audit item)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "session_id": self.session_id,
            "message": self.message,
            "action": self.action,
            "path": self.path,
            "origin": self.origin,
        }


def unloadable_finding(session_id: str, problem: str, path: str | None) -> Finding:
    """A sidecar that parses, but that hermes' ``Session()`` refuses (``problem``: see
    :func:`inspector.store.sidecar.path_field_problem`): the WebUI cannot open the chat, and its
    index rebuild leaves it out. No repair answers it (the inspector does not edit settings)."""
    return Finding(
        "sidecar_unloadable", ERROR, f"hermes cannot open this chat: {problem}", session_id, None, path
    )


def hermes_audit_fails_finding(error: str) -> Finding:
    """hermes' own recovery audit raising on this home (``error``: what the command line's ``audit``
    reports as ``hermes_audit_failed``). A home finding, so the window says it too; nothing to
    press: the files at fault are listed as damaged on their own rows."""
    return Finding(
        "hermes_audit_fails",
        ERROR,
        f"{error}. Until that is mended, hermes-webui's recovery page lists nothing for this home.",
    )


def worst(findings: list[Finding] | tuple[Finding, ...]) -> str:
    """``ok``, or the most severe finding's severity."""
    best = "ok"
    rank = 0
    for f in findings:
        if _RANK.get(f.severity, 0) > rank:
            rank = _RANK[f.severity]
            best = f.severity
    return best


def worst_finding(findings: Iterable[Finding]) -> Finding | None:
    """The most severe finding (the first of equally severe ones); None when there is none."""
    return max(findings, key=lambda f: _RANK.get(f.severity, 0), default=None)


_HERMES_WORDS = {
    "shrunken_live": ("the live sidecar has fewer messages than its .bak", WARNING),
    "malformed_orphan_backup": ("a .bak with no live sidecar cannot be read", ERROR),
    "state_db_deleted_webui_tombstone": ("state.db still has a chat the user deleted (tombstoned)", INFO),
    "orphan_backup": ("only a .bak is left; the live sidecar is missing", WARNING),
    "orphan_backup_without_state_row": ("only a .bak is left and state.db no longer knows the chat", WARNING),
    "index_missing_file": ("_index.json lists a session whose sidecar is missing", INFO),
    "index_missing_entry": ("the sidecar is missing from _index.json", INFO),
    "state_db_orphan_webui_row": ("state.db has an empty WebUI chat with no sidecar", INFO),
    "state_db_missing_sidecar": ("state.db has this WebUI chat but its sidecar is missing", WARNING),
    "turn_journal_pending_turn": (
        "the turn journal has a submitted turn that never reached the sidecar",
        WARNING,
    ),
}


def from_hermes_item(item: dict) -> Finding:
    """A hermes audit item as a finding, keeping hermes' kind and recommendation."""
    kind = str(item.get("kind"))
    words, severity = _HERMES_WORDS.get(kind, (kind.replace("_", " "), WARNING))
    rec = item.get("recommendation")
    counts = f" (live {item.get('live_messages')}, .bak {item.get('bak_messages')})"
    if kind == "turn_journal_pending_turn":
        counts = f" (turn {item.get('turn_id')}, last event {item.get('event')})"
    return Finding(
        kind=kind,
        severity=severity,
        message=f"{words}{counts}; hermes says {item.get('category')}: {rec}",
        session_id=item.get("session_id"),
        action=registry.for_recommendation(str(rec)),
        origin="hermes",
    )
