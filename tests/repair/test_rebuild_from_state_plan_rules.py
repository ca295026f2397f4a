"""``rebuild-from-state-db``'s plan (``rebuild_from_state.plan``) on a small home: the plan's name and
result on every way out, the words of each refusal, the load check, the ``.bak`` check and the rows read.

Rules pinned here (an inspector step; expected values written out by hand):

* every plan is named ``rebuild-from-state-db``; one that writes nothing has the result
  ``{"inspector_step": True, "rebuilt": False}``;
* a sidecar that cannot be read is refused with the reason the read gives (``not a regular file``
  for a folder named like a sidecar), not the exception's whole text;
* a sidecar hermes can load is left alone, also when its workspace is relative (hermes resolves it
  against its working folder, the context's ``cwd``);
* the summary names why hermes cannot load the file, in the load's own words;
* a ``.bak`` whose ``messages`` is not a list is no usable backup: the rebuild goes on;
* only the chat's own row matters: another chat's state.db messages that cannot be read (bytes that
  are not UTF-8 in a TEXT column) do not hide it while that chat has its sidecar (hermes reads the
  messages of the rows without a sidecar only, session-recovery §3.4);
* the ``message_count`` warning follows the state.db's schema: a ``sessions`` table with the column
  and a count that matches gives none;
* messages hermes' ``json.dumps`` cannot write (a BLOB's bytes) refuse the plan with the encoder's
  words, as hermes would crash.
"""

from __future__ import annotations

import sqlite3

from inspector.repair import rebuild_from_state
from tests.recovery_helpers import home_dirs, make_ctx, seed_state_db, sidecar, write_json

NOTHING = {"inspector_step": True, "rebuilt": False}


def _home(tmp_path, torn: bytes = b"[]", messages: int = 2):
    """A home with ``chat_a.json`` = ``torn`` and chat_a's WebUI row (``messages`` messages) in state.db."""
    home, sessions, db = home_dirs(tmp_path)
    (sessions / "chat_a.json").write_bytes(torn)
    seed_state_db(db, sid="chat_a", messages=messages)
    return home, sessions, db


def _plan(home):
    return rebuild_from_state.plan(make_ctx(home), "chat_a")


def test_a_plan_that_writes_nothing_is_named_and_says_not_rebuilt(tmp_path):
    home, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "chat_a.json", sidecar("chat_a", 2, workspace=str(home)))
    p = _plan(home)
    assert p.action == "rebuild-from-state-db" and p.session_id == "chat_a"
    assert p.summary == ["nothing to do: hermes can load chat_a.json"]
    assert p.result == NOTHING and not p.changes and p.refusal is None


def test_a_sidecar_with_a_relative_or_no_workspace_is_loadable(tmp_path):
    """hermes resolves ``workspace`` against its working folder: no workspace, or ``proj``, loads."""
    home, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "chat_a.json", sidecar("chat_a", 2))
    assert _plan(home).summary == ["nothing to do: hermes can load chat_a.json"]
    write_json(sessions / "chat_a.json", sidecar("chat_a", 2, workspace="proj"))
    assert _plan(home).summary == ["nothing to do: hermes can load chat_a.json"]


def test_a_sidecar_that_cannot_be_read_is_refused_with_the_reads_reason(tmp_path):
    home, sessions, _ = home_dirs(tmp_path)
    (sessions / "chat_a.json").mkdir()
    p = _plan(home)
    assert p.refusal == "cannot read chat_a.json: not a regular file"
    assert p.action == "rebuild-from-state-db" and p.result == NOTHING and not p.changes


def test_the_summary_names_why_hermes_cannot_load_the_file(tmp_path):
    home, _, _ = _home(tmp_path, torn=b"[]")
    p = _plan(home)
    assert p.refusal is None and p.action == "rebuild-from-state-db"
    assert p.summary[1] == (
        "set aside the unreadable chat_a.json (2 bytes; hermes cannot load it: top-level JSON is list, not an object)"
    )
    assert p.summary[2] == "write chat_a.json as hermes materializes it from state.db (2 messages)"
    assert p.result == {"inspector_step": True, "rebuilt": True, "messages": 2, "set_aside_bytes": 2}


def test_a_bak_whose_messages_is_not_a_list_is_no_backup(tmp_path):
    home, sessions, _ = _home(tmp_path)
    for odd in ({"a": 1}, "ab", None):
        write_json(sessions / "chat_a.json.bak", {"session_id": "chat_a", "messages": odd})
        p = _plan(home)
        assert p.refusal is None and [c.path.name for c in p.changes] == ["chat_a.json", "_index.json"]


def test_another_chats_unreadable_messages_do_not_hide_the_chat(tmp_path):
    home, sessions, db = _home(tmp_path)
    seed_state_db(db, sid="chat_b", create=False)
    write_json(sessions / "chat_b.json", sidecar("chat_b", 2, workspace=str(home)))
    conn = sqlite3.connect(db)
    with conn:  # a TEXT value that is not UTF-8: sqlite3 cannot give it as str
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('chat_b', 'user', CAST(X'ff' AS TEXT), 1300.0)"
        )
    conn.close()
    p = _plan(home)
    assert (
        p.refusal is None
        and p.summary[2] == "write chat_a.json as hermes materializes it from state.db (2 messages)"
    )
    assert [c.path.name for c in p.changes] == ["chat_a.json", "_index.json"]


def test_a_schema_with_message_count_and_a_matching_count_gives_no_count_warning(tmp_path):
    home, sessions, _ = _home(tmp_path)
    p = _plan(home)
    assert p.warnings == [
        f"chat_a: workspace is empty; hermes resolves it to its working directory ({home}) when it loads "
        "the session [Q10]"
    ]


def test_messages_json_cannot_write_refuse_the_plan(tmp_path):
    home, _, db = _home(tmp_path, messages=0)
    conn = sqlite3.connect(db)
    with conn:  # a BLOB: bytes, which json.dumps refuses
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('chat_a', 'user', X'6869', 1300.0)"
        )
    conn.close()
    p = _plan(home)
    assert p.refusal == (
        "its state.db messages cannot be written as JSON (Object of type bytes is not JSON serializable); "
        "hermes would crash"
    )
    assert not p.changes and p.result == NOTHING and p.action == "rebuild-from-state-db"
