"""Every finding in plain words for a support person: what is wrong, what to do now (or why
nothing can be done), and what to tell the user. No Qt; the window and the command line share it.

The finding's own ``message`` keeps the technical details (run ids, raw times, hermes' wording);
the window shows it on hover. What is shown in the window comes from here: no jargon, no raw
epochs (times are local, see :func:`local_time`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from inspector.findings import Finding, worst_finding

# kind -> (what is wrong, what to tell the user, why nothing can be done when no repair applies)
_WORDS: dict[str, tuple[str, str, str]] = {
    "corrupt_sidecar": (
        "The chat's file is damaged and hermes cannot open it",
        "the chat will not open until it is restored; its messages may still be in the agent's database",
        "there is no usable backup of this file, and the agent's database has no messages for it",
    ),
    "sidecar_too_large": (
        "The chat's file is too large for the inspector to open safely",
        "the chat is not lost; it is too big to check here",
        "the inspector does not load a file this large",
    ),
    "sidecar_unloadable": (
        "A setting in the chat's file (its workspace folder) is not a folder path, so hermes cannot open the chat",
        "the chat will not open in the WebUI until the setting is fixed; its messages are all there",
        "the inspector does not change a chat's settings; the setting needs fixing by hand",
    ),
    "session_id_mismatch": (
        "The chat's file carries another chat's id, so hermes lists it under the wrong chat",
        "the chat may appear under a different name or not at all",
        "which id is right needs a person's judgement; the inspector does not rename files",
    ),
    "pending_journal_recovery": (
        "An answer was cut off and hermes is still waiting to bring it back from its record of the reply",
        "the missing part of the answer can be brought back",
        "the record of the reply has nothing left to bring back",
    ),
    "stale_pending_turn": (
        "The chat still shows a reply as running, but nothing is writing it",
        "the chat is stuck on a reply that will never finish; it can be unstuck",
        "the reply may still be running",
    ),
    "journal_output_not_shown": (
        "The record of a reply holds text the chat does not show (hermes gave up on bringing it back)",
        "the lost part of the answer can be brought back",
        "nothing of it can be placed back safely",
    ),
    "agent_only_chat": (
        "A chat of the agent itself (not started in the WebUI): only the agent's database has it",
        "the chat is in the agent's history; the WebUI does not list chats it did not start",
        "it is not a WebUI chat, so there is no WebUI file to bring back",
    ),
    "sidecar_missing": (
        "Only the agent's database has this chat; the chat's own file is missing",
        "the chat can be rebuilt from the agent's database",
        "the agent's database has no messages for it",
    ),
    "backup_unreadable": (
        "The chat's backup file cannot be read",
        "nothing is lost from the chat itself; its backup is unusable",
        "the inspector never writes over a file it cannot read",
    ),
    "journal_unreadable": (
        "The record of a reply cannot be read, so nothing can be recovered from it",
        "part of one reply may be lost for good",
        "hermes recovers nothing from a record it cannot read",
    ),
    "journal_too_deep": (
        "A line in the record of a reply is nested too deeply for hermes to read, so hermes "
        "recovers nothing from the whole record (a known hermes defect)",
        "part of one reply may be lost; the inspector does what hermes does, so the chat matches "
        "what hermes shows",
        "hermes cannot read this record; the inspector follows hermes and brings back nothing "
        "from it (or, where hermes' result cannot be known, writes nothing)",
    ),
    "journal_folder_unreadable": (
        "The folder of reply records cannot be read",
        "check the folder's permissions; nothing was changed",
        "the inspector cannot read the folder",
    ),
    "journal_lines_dropped": (
        "Some lines in the record of a reply are damaged and hermes skips them",
        "the chat is fine; a few recorded events are unreadable",
        "damaged lines cannot be repaired; the rest of the record is used",
    ),
    "journal_too_large": (
        "The record of a reply is very large and is only checked in part",
        "the chat is fine; its reply record is unusually big",
        "the inspector does not load a record this large",
    ),
    "unsafe_journal_id": (
        "A folder of reply records has a name hermes refuses",
        "hermes ignores that folder",
        "the inspector builds no paths from an unsafe name",
    ),
    "unsafe_session_id": (
        "The chat's id is not safe as a file name",
        "hermes cannot keep files for this chat",
        "the inspector builds no paths from an unsafe id",
    ),
    "id_too_long": (
        "The chat's id is too long to be a file name",
        "hermes cannot keep files for this chat",
        "no file can exist under this id",
    ),
    "shrunken_live": (
        "The chat has fewer messages than its backup",
        "messages seem to have gone missing; the backup has them",
        "the backup cannot be used",
    ),
    "malformed_orphan_backup": (
        "Only a damaged backup is left of this chat",
        "the chat cannot be restored from its backup",
        "the backup cannot be read",
    ),
    "orphan_backup": (
        "Only the backup of this chat is left; its file is missing",
        "the chat can be restored from its backup",
        "the backup cannot be used",
    ),
    "orphan_backup_without_state_row": (
        "Only the backup of this chat is left, and the agent's database no longer knows it",
        "the chat can be restored from its backup",
        "the backup cannot be used",
    ),
    "state_db_deleted_webui_tombstone": (
        "The user deleted this chat, but the agent's database still has it",
        "nothing to do: the chat was deleted on purpose",
        "a deleted chat is not brought back",
    ),
    "index_missing_file": (
        "The chat list names a chat whose file is gone",
        "the chat list will correct itself the next time hermes saves",
        "hermes rewrites the chat list on its next save",
    ),
    "index_missing_entry": (
        "The chat is missing from the chat list",
        "the chat may not appear in the sidebar until the list is rebuilt",
        "hermes rewrites the chat list on its next save",
    ),
    "index_unusable": (
        "The chat list file is damaged",
        "the sidebar may be empty or wrong until the list is rebuilt",
        "hermes rebuilds the chat list on its next save",
    ),
    "index_unreadable": (
        "The chat list file cannot be read",
        "the sidebar may be empty until the file can be read",
        "the inspector never writes over a file it cannot read",
    ),
    "state_db_orphan_webui_row": (
        "The agent's database has an empty chat with no file",
        "nothing was lost: the chat was empty",
        "an empty chat has nothing to bring back",
    ),
    "state_db_missing_sidecar": (
        "The agent's database has this chat but its file is missing",
        "the chat can be rebuilt from the agent's database",
        "the agent's database has no messages for it",
    ),
    "turn_journal_pending_turn": (
        "A message the user sent never reached the chat",
        "their last message may need to be sent again",
        "the inspector does not replay a sent message",
    ),
    "state_db_unreadable": (
        "The agent's database cannot be read",
        "chats that live only in the agent's database are not shown",
        "the inspector only ever reads the database, and it cannot",
    ),
    "sessions_folder_outside_home": (
        "The chats folder is a link to a place outside the Hermes folder",
        "nothing is wrong with the chats; writes there are confirmed first",
        "it is a setting, not a fault",
    ),
}

# what to tell the user when the recommended repair cannot be pressed (its reason is said before)
BLOCKED_TELL = "this cannot be fixed from here yet, and nothing was changed"
_FALLBACK = ("Something about this chat looks wrong", "the details are on hover", "no repair applies to it")


@dataclass(frozen=True)
class FindingWords:
    what: str  # what is wrong
    now: str  # what to do now: the button, or why nothing can be done / why the button is off
    tell: str  # what to tell the user
    can_act: bool  # the button it names can be pressed

    def sentence(self) -> str:
        """One plain sentence: what is wrong — what to do now — what to tell the user."""
        return f"{self.what} — {self.now} — tell the user {self.tell}."


def words_for(
    finding: Finding,
    button: str | None = None,
    shortcut: str | None = None,
    blocked: str | None = None,
    planning: bool = False,
) -> FindingWords:
    """Plain words for ``finding``. ``button`` is the label of the repair it recommends (None:
    none); ``blocked`` the reason that button cannot be pressed (said inline, never only on
    hover); ``planning`` while the repair is still being worked out."""
    what, tell, nothing = _WORDS.get(finding.kind, _FALLBACK)
    if finding.kind not in _WORDS and finding.origin == "hermes":
        what = f"hermes' check reports: {finding.kind.replace('_', ' ')}"
    if button is None:
        return FindingWords(what, f"nothing to press: {nothing}", tell, False)
    keys = f" ({shortcut})" if shortcut else ""
    if planning:
        return FindingWords(what, f"“{button}”{keys} is being prepared", tell, False)
    if blocked:
        return FindingWords(what, f"“{button}” cannot be used: {blocked}", BLOCKED_TELL, False)
    return FindingWords(what, f"press “{button}”{keys} to preview the fix", tell, True)


def blocked_reason(
    plan_refusal: str | None, plan_summary: list[str] | None, planned: bool, plan_error: str | None = None
) -> str | None:
    """Why a planned repair cannot be pressed, in a few words (None: it can)."""
    if plan_error:
        return f"it could not be prepared ({plan_error})"
    if not planned:
        return "it does not apply to this chat"
    if plan_refusal:
        return f"refused ({plan_refusal})"
    if plan_summary is not None:
        return "; ".join(plan_summary) if plan_summary else "there is nothing to change"
    return None


def local_time(epoch: float | int | None) -> str:
    """A Unix time as the local date and time (e.g. ``2026-12-01 14:05``); '' when not a time."""
    if not isinstance(epoch, (int, float)) or isinstance(epoch, bool) or epoch <= 0:
        return ""
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))
    except (OverflowError, OSError, ValueError):
        return ""


def problem_words(findings) -> str:
    """The session list's Problem cell: the worst finding's "what is wrong", '' when healthy."""
    found = worst_finding(findings)
    return "" if found is None else words_for(found).what


# What the window cannot show or do while a state.db cannot be read (the banner above the panes)
STATE_DB_MISSING = (
    "chats that live only in the agent's database are not listed",
    "“Materialize from state.db” and “Rebuild from state.db” cannot run",
    "the state.db transcript of a chat is empty",
    "the search does not look in it",
)


def state_db_banner(findings: list[Finding]) -> str | None:
    """The banner for the home's unreadable state.db files (``state_db_unreadable`` findings):
    which file, why, and what is missing because of it; None when every state.db was read."""
    broken = [f for f in findings if f.kind == "state_db_unreadable"]
    if not broken:
        return None
    lines = []
    for f in broken:
        path = f.path or ""
        reason = f.message[len(path) + 2 :] if path and f.message.startswith(f"{path}: ") else f.message
        if path and reason.startswith(f"{path}: "):
            reason = reason[len(path) + 2 :]
        elif path and reason.startswith(f"{path} "):
            reason = "it " + reason[len(path) + 1 :]  # "<path> is not an SQLite database" -> "it is not..."
        lines.append(f"The agent's database {path} cannot be read: {reason}".rstrip())
    lines.append("Because of it, " + "; ".join(STATE_DB_MISSING) + ". The inspector never writes to it.")
    return "\n".join(lines)
