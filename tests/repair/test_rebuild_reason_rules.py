"""Why rebuild-from-state-db writes nothing for a torn sidecar: the three reasons, each with its
exact words, read from hermes' rules for the chat's state.db row (session-recovery §3.4: only
``source='webui'`` rows; a durably tombstoned chat is never brought back; no blank sidecars)."""

from __future__ import annotations

from inspector.repair import rebuild_from_state
from tests.recovery_helpers import home_dirs, make_ctx, seed_state_db, write_json

TORN = b'{"session_id": "chat_a", "messages": ['


def _summary(home) -> list[str]:
    p = rebuild_from_state.plan(make_ctx(home), "chat_a")
    assert not p.changes and p.refusal is None
    return p.summary


def _torn_home(tmp_path, **seed):
    home, sessions, db = home_dirs(tmp_path)
    (sessions / "chat_a.json").write_bytes(TORN)
    seed_state_db(db, sid="other_chat")  # another chat, with messages and no sidecar
    seed_state_db(db, sid="chat_a", create=False, **seed)
    return home, sessions


def test_a_torn_chat_whose_state_db_row_has_no_messages_says_so(tmp_path):
    """The row is there (webui, the torn sidecar does not count as existing) but holds no message:
    hermes writes no blank sidecar."""
    home, _ = _torn_home(tmp_path, messages=0)
    assert _summary(home) == ["nothing to do: state.db has no messages for this chat"]


def _deleted_while_planning(home, sessions) -> list[str]:
    """The user deletes the chat after the plan read its torn sidecar (hermes removes the sidecar
    and writes the durable tombstone): the plan works from the bytes it read."""
    ctx = make_ctx(home)
    assert ctx.snapshot.read(sessions / "chat_a.json").data == TORN
    (sessions / "chat_a.json").unlink()
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["chat_a"]})
    p = rebuild_from_state.plan(ctx, "chat_a")
    assert not p.changes and p.refusal is None
    return p.summary


def test_a_chat_deleted_while_planning_says_so_even_with_messages(tmp_path):
    """The durable tombstone wins over the messages: hermes never brings a deleted chat back."""
    home, sessions = _torn_home(tmp_path, messages=2)
    assert _deleted_while_planning(home, sessions) == [
        "nothing to do: the user deleted this chat (durable tombstone): hermes never brings it back"
    ]


def test_a_chat_deleted_while_planning_without_messages_is_named_deleted(tmp_path):
    home, sessions = _torn_home(tmp_path, messages=0)
    assert _deleted_while_planning(home, sessions) == [
        "nothing to do: the user deleted this chat (durable tombstone): hermes never brings it back"
    ]


def test_a_tombstone_beside_an_existing_sidecar_does_not_count(tmp_path):
    """hermes' tombstone marks a chat deleted only while ``<sid>.json`` is absent: a torn sidecar
    that is still there is rebuilt from its state.db row."""
    home, sessions = _torn_home(tmp_path, messages=0)
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["chat_a"]})
    assert _summary(home) == ["nothing to do: state.db has no messages for this chat"]


def test_a_row_of_another_source_is_no_webui_chat(tmp_path):
    home, _ = _torn_home(tmp_path, source="cli")
    assert _summary(home) == [
        "nothing to do: state.db has no WebUI chat with this id (hermes materializes only WebUI rows)"
    ]


def test_a_row_whose_id_has_spaces_is_the_chat(tmp_path):
    """hermes strips the row's id: ``' chat_a '`` is this chat."""
    home, sessions, db = home_dirs(tmp_path)
    (sessions / "chat_a.json").write_bytes(TORN)
    seed_state_db(db, sid=" chat_a ", messages=0)
    assert _summary(home) == ["nothing to do: state.db has no messages for this chat"]
