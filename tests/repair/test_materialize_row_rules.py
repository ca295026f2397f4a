"""hermes' ``_state_db_row_to_sidecar`` as ``materialize.state_db_row_to_sidecar`` mirrors it: the
48 keys in hermes' order, each value from the row or its default (api/session_recovery.py), and
``normalize_source`` for the sources hermes' ``normalize_agent_session_source`` names alike.

Rules found by mutation testing (tests/MUTATION.md, seventh session): the tests that reach these
functions through a home take longer than the mutation run's fast-test cap; these call them
directly, every expected value written out by hand.
"""

from __future__ import annotations

import pytest

from inspector.repair.materialize import normalize_source, state_db_row_to_sidecar

MESSAGES = [
    {"role": "user", "content": "q", "timestamp": 11.0},
    {"role": "assistant", "content": "a", "timestamp": 12.5},
]


def _sidecar(**changed):
    """The 48-key sidecar of a row that gives only ``id``, in hermes' key order, with ``changed``."""
    out = {
        "session_id": "s1",
        "title": "Recovered WebUI Session",
        "workspace": "",
        "message_count": 0,
        "worktree_path": None,
        "worktree_branch": None,
        "worktree_repo_root": None,
        "worktree_created_at": None,
        "model": "unknown",
        "model_provider": None,
        "created_at": 0,
        "updated_at": 0,
        "pinned": False,
        "archived": False,
        "project_id": None,
        "profile": None,
        "input_tokens": 0,
        "output_tokens": 0,
        "estimated_cost": None,
        "personality": None,
        "active_stream_id": None,
        "pending_user_message": None,
        "pending_attachments": [],
        "pending_started_at": None,
        "compression_anchor_visible_idx": None,
        "compression_anchor_message_key": None,
        "compression_anchor_summary": None,
        "context_length": None,
        "threshold_tokens": None,
        "last_prompt_tokens": None,
        "compression_recovery": {},
        "recommended_recovery_action": None,
        "compression_recovery_source_session_id": None,
        "compression_recovery_action": None,
        "gateway_routing": None,
        "gateway_routing_history": [],
        "llm_title_generated": False,
        "parent_session_id": None,
        "is_cli_session": False,
        "source_tag": None,
        "raw_source": None,
        "session_source": "other",
        "source_label": "Agent",
        "enabled_toolsets": None,
        "composer_draft": {},
        "messages": [],
        "tool_calls": [],
        "_recovered_from_state_db": True,
    }
    assert len(out) == 48
    for key, value in changed.items():
        assert key in out
        out[key] = value
    return out


def _same(got: dict, expected: dict) -> None:
    assert got == expected
    assert list(got) == list(expected)  # hermes' key order: the sidecar's bytes follow it


def test_a_full_row_gives_each_of_its_values_in_hermes_key_order():
    """Rule: every value the row has goes to its key; the source is stripped and lowercased."""
    row = {
        "id": "s1",
        "source": "  WebUI ",
        "title": "Trip",
        "model": "openai/gpt-5",
        "started_at": 10.0,
        "message_count": 9,
        "parent_session_id": "p0",
        "workspace": "/home/u/proj",
        "worktree_path": "/w",
        "worktree_branch": "main",
        "worktree_repo_root": "/r",
        "worktree_created_at": 9.5,
        "compression_recovery": {"k": 1},
        "recommended_recovery_action": "retry",
        "compression_recovery_source_session_id": "s0",
        "compression_recovery_action": "resume",
        "messages": MESSAGES,
    }
    _same(
        state_db_row_to_sidecar(row),
        _sidecar(
            title="Trip",
            workspace="/home/u/proj",
            message_count=9,
            worktree_path="/w",
            worktree_branch="main",
            worktree_repo_root="/r",
            worktree_created_at=9.5,
            model="openai/gpt-5",
            created_at=10.0,
            updated_at=12.5,
            compression_recovery={"k": 1},
            recommended_recovery_action="retry",
            compression_recovery_source_session_id="s0",
            compression_recovery_action="resume",
            parent_session_id="p0",
            source_tag="webui",
            raw_source="webui",
            session_source="webui",
            source_label="WebUI",
            messages=MESSAGES,
        ),
    )


def test_a_bare_row_gives_hermes_defaults():
    """Rule: no title is "Recovered WebUI Session", no model "unknown", no times 0, no messages
    [] with a count of 0, and the optional worktree/recovery keys None."""
    _same(state_db_row_to_sidecar({"id": "s1"}), _sidecar())


def test_values_of_the_wrong_kind_fall_back_as_hermes_does():
    """Rule: a workspace that is not text is "", a count that is not an int is the number of
    messages, a compression_recovery that is not a dict is {}, empty strings read as None or the
    default, and messages that are not a list are []."""
    row = {
        "id": "s1",
        "title": "",
        "model": "",
        "workspace": 7,
        "message_count": "2",
        "compression_recovery": [1],
        "worktree_path": "",
        "recommended_recovery_action": "",
        "started_at": 4.0,
        "messages": MESSAGES,
    }
    _same(
        state_db_row_to_sidecar(row),
        _sidecar(message_count=2, created_at=4.0, updated_at=12.5, messages=MESSAGES),
    )
    _same(
        state_db_row_to_sidecar({"id": "s1", "messages": {"role": "user"}, "message_count": 3}),
        _sidecar(message_count=3),
    )


@pytest.mark.parametrize(
    ("messages", "updated_at"),
    [
        ([], 4.0),  # no messages: started_at
        ([{"role": "user", "content": "q"}], 4.0),  # the last message has no timestamp
        ([{"role": "user", "content": "q", "timestamp": 0}], 4.0),  # a zero time is no time
        ([{"role": "user", "content": "q", "timestamp": 9.0}, "not a dict"], 4.0),  # the last is no dict
        ([{"role": "user", "content": "q", "timestamp": 9.0}], 9.0),
    ],
)
def test_updated_at_is_the_last_message_time_else_started_at(messages, updated_at):
    """Rule: ``updated_at`` is the last message's timestamp when it is a dict with a true one,
    else ``started_at``."""
    got = state_db_row_to_sidecar({"id": "s1", "started_at": 4.0, "messages": messages})
    assert got["updated_at"] == updated_at
    assert got["created_at"] == 4.0
    assert got["message_count"] == len(messages)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("webui", ("webui", "webui", "WebUI")),
        ("cli", ("cli", "cli", "CLI")),
        ("cron", ("cron", "cron", "Cron")),
        ("tool", ("tool", "tool", "Tool")),
        ("api_server", ("api_server", "api", "API")),
        ("my_bot", ("my_bot", "other", "My Bot")),
        ("", (None, "other", "Agent")),
        ("unknown", (None, "other", "Agent")),
    ],
)
def test_normalize_source_names_the_source_as_hermes_does(source, expected):
    """Rule (hermes' ``normalize_agent_session_source`` gives the same for these): the raw source
    (None for none or "unknown"), its session source ("other" when not a known one) and its label
    (a known label, else the words of the source titled, else "Agent")."""
    got = normalize_source(source)
    assert got == dict(zip(("raw_source", "session_source", "source_label"), expected, strict=True))
    assert list(got) == ["raw_source", "session_source", "source_label"]
