"""Index rows (hermes' ``Session.compact()``) against values written out by hand.

The other index tests compare the inspector with an older inspector, so a wrong rule in
``compact()`` or ``last_message_at`` shows on both sides. Here every expected row is a literal,
taken from what hermes-webui's own source does (``api/models.py``: ``Session.compact``,
``_last_message_timestamp``, ``_is_empty_partial_activity_message``, ``_message_timestamp``;
``api/usage.py``: ``prompt_cache_hit_percent``) and confirmed once by running hermes'
``Session.load(sid).compact()`` in a child process on the same sidecars. Each case names the
rule it pins. The cases issue 13 fixed (the inspector differed from hermes there) are kept
apart in ``FIXED_BY_ISSUE_13``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.repair.save import SaveContext, rebuild_index_from_sidecars
from inspector.store.files import FileSnapshot
from inspector.store.index import compact
from inspector.store.sidecar import load_session

NOW = 1779900000.0

# The row of a sidecar holding only {session_id, title, workspace "/", created_at 1000,
# updated_at 2000}: every field at the default Session.__init__ gives it, in compact()'s order.
BASE_ROW = {
    "session_id": "plain",
    "title": "T",
    "workspace": "/",
    "model": "",
    "model_provider": None,
    "message_count": 0,
    "created_at": 1000,
    "updated_at": 2000,
    "last_message_at": 2000,
    "pinned": False,
    "archived": False,
    "project_id": None,
    "profile": None,
    "input_tokens": 0,
    "output_tokens": 0,
    "estimated_cost": None,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
    "cache_hit_percent": None,
    "personality": None,
    "compression_anchor_visible_idx": None,
    "compression_anchor_message_key": None,
    "compression_anchor_summary": None,
    "pre_compression_snapshot": False,
    "context_engine": None,
    "compression_anchor_engine": None,
    "compression_anchor_mode": None,
    "compression_anchor_details": {},
    "context_engine_state": {},
    "context_length": None,
    "threshold_tokens": None,
    "last_prompt_tokens": None,
    "post_compression_context_tokens_estimate": None,
    "compression_recovery": {},
    "recommended_recovery_action": None,
    "gateway_routing": None,
    "gateway_routing_history": [],
    "manual_title": False,
    "created_workspace": "/",
    "user_message_count": 0,
    "active_stream_id": None,
    "pending_user_message": None,
    "has_pending_user_message": False,
    "is_cli_session": False,
    "source_tag": None,
    "raw_source": None,
    "session_source": None,
    "source_label": None,
    "read_only": False,
    "enabled_toolsets": None,
    "composer_draft": {},
    "process_wakeup_pause": {},
    "share_token": None,
    "share_created_at": None,
    "is_streaming": False,
}


def _u(ts, content="q", **extra) -> dict:
    return {"role": "user", "content": content, "timestamp": ts, **extra}


def _a(ts, content="a", **extra) -> dict:
    return {"role": "assistant", "content": content, "timestamp": ts, **extra}


def _t(ts) -> dict:
    return {"role": "tool", "content": "out", "timestamp": ts}


def _raw(sid: str, **fields) -> dict:
    return {
        "session_id": sid,
        "title": "T",
        "workspace": "/",
        "created_at": 1000,
        "updated_at": 2000,
        **fields,
    }


def _row(sid: str, *, after: str | None = None, **fields) -> dict:
    """BASE_ROW with ``fields`` changed; keys new to the row go right after the key ``after``."""
    row: dict = {}
    for key, value in BASE_ROW.items():
        row[key] = value
        if key == after:
            row.update({k: v for k, v in fields.items() if k not in BASE_ROW})
    row.update({k: v for k, v in fields.items() if k in BASE_ROW})
    row["session_id"] = sid
    assert set(row) == set(BASE_ROW) | set(fields)
    return row


# (rule, raw sidecar, expected row). The values are hermes', written out by hand.
CASES = [
    ("defaults of a bare sidecar; last_message_at falls back to updated_at", _raw("plain"), _row("plain")),
    (
        "last_message_at skips tool rows",
        _raw("tool_tail", messages=[_u(100), _a(200), _t(300)]),
        _row("tool_tail", message_count=3, last_message_at=200.0, user_message_count=1),
    ),
    (
        "last_message_at scans past the 8-row tail window when only tool rows are there",
        _raw("long_tool_tail", messages=[_u(100), _a(200)] + [_t(300 + i) for i in range(9)]),
        _row("long_tool_tail", message_count=11, last_message_at=200.0, user_message_count=1),
    ),
    (
        "last_message_at skips an assistant _partial row without text",
        _raw("empty_partial", messages=[_u(100), _a(300, "", _partial=True)]),
        _row("empty_partial", message_count=2, last_message_at=100.0, user_message_count=1),
    ),
    (
        "an assistant _partial row with text counts",
        _raw("partial_with_text", messages=[_u(100), _a(300, "so far", _partial=True)]),
        _row("partial_with_text", message_count=2, last_message_at=300.0, user_message_count=1),
    ),
    (
        "a message's _ts wins over its timestamp",
        _raw("ts_first", messages=[_u(100, _ts=150)]),
        _row("ts_first", message_count=1, last_message_at=150.0, user_message_count=1),
    ),
    (
        "a zero timestamp is no timestamp: the scan goes on to the row before",
        _raw("zero_ts", messages=[_u(100), _a(0)]),
        _row("zero_ts", message_count=2, last_message_at=100.0, user_message_count=1),
    ),
    (
        "messages without a timestamp: last_message_at is updated_at, as stored",
        _raw("no_ts", messages=[{"role": "user", "content": "q"}]),
        _row("no_ts", message_count=1, user_message_count=1),
    ),
    (
        "a pending turn: pending_started_at is last_message_at (as stored), message_count is at least 1",
        _raw("pending", pending_user_message="hi", pending_started_at=500, active_stream_id="s1"),
        _row(
            "pending",
            message_count=1,
            last_message_at=500,
            active_stream_id="s1",
            pending_user_message="hi",
            has_pending_user_message=True,
        ),
    ),
    (
        "a pending turn without pending_started_at keeps the messages' last_message_at",
        _raw("pending_no_start", messages=[_u(100)], pending_user_message="hi", active_stream_id="s1"),
        _row(
            "pending_no_start",
            message_count=1,
            last_message_at=100.0,
            user_message_count=1,
            active_stream_id="s1",
            pending_user_message="hi",
            has_pending_user_message=True,
        ),
    ),
    (
        "a stored message_count (the metadata count) wins over len(messages)",
        _raw("count_hint", messages=[_u(100), _a(200)], message_count=7),
        _row("count_hint", message_count=7, last_message_at=200.0, user_message_count=1),
    ),
    (
        "cache_hit_percent is cache reads over prompt tokens, rounded",
        _raw("cache", input_tokens=1000, output_tokens=30, cache_read_tokens=250, cache_write_tokens=5),
        _row(
            "cache",
            input_tokens=1000,
            output_tokens=30,
            cache_read_tokens=250,
            cache_write_tokens=5,
            cache_hit_percent=25,
        ),
    ),
    (
        "cache_hit_percent is capped at 100",
        _raw("cache_cap", input_tokens=100, cache_read_tokens=300),
        _row("cache_cap", input_tokens=100, cache_read_tokens=300, cache_hit_percent=100),
    ),
    (
        "cache_hit_percent of a one-token prompt read from the cache is 100",
        _raw("cache_one", input_tokens=1, cache_read_tokens=1),
        _row("cache_one", input_tokens=1, cache_read_tokens=1, cache_hit_percent=100),
    ),
    (
        "cache_hit_percent is a plain percentage: 60 of 100 is 60",
        _raw("cache_60", input_tokens=100, cache_read_tokens=60),
        _row("cache_60", input_tokens=100, cache_read_tokens=60, cache_hit_percent=60),
    ),
    (
        "user_message_count counts the user rows only",
        _raw("users", messages=[_u(1), _a(2), _u(3), _t(4), _u(5)]),
        _row("users", message_count=5, last_message_at=5.0, user_message_count=3),
    ),
    (
        "parent_session_id appears only when set, right after manual_title",
        _raw("parent", parent_session_id="p1"),
        _row("parent", after="manual_title", parent_session_id="p1"),
    ),
    (
        "the four worktree keys appear only with a worktree_path, after created_workspace",
        _raw(
            "worktree", worktree_path="/", worktree_branch="b", worktree_repo_root="/", worktree_created_at=5
        ),
        _row(
            "worktree",
            after="created_workspace",
            worktree_path="/",
            worktree_branch="b",
            worktree_repo_root="/",
            worktree_created_at=5,
        ),
    ),
    (
        "the compression-recovery pair appears when either is set (stripped), after created_workspace",
        _raw("recovery", compression_recovery_source_session_id=" src ", compression_recovery_action=None),
        _row(
            "recovery",
            after="created_workspace",
            compression_recovery_source_session_id="src",
            compression_recovery_action=None,
        ),
    ),
]

# Where the inspector's compact() differed from hermes until issue 13 fixed it. hermes' values.
FIXED_BY_ISSUE_13 = [
    (
        "cache_hit_percent is None when there are no cache reads (hermes: cache_read <= 0 -> None)",
        _raw("cache_zero_read", input_tokens=1000, cache_read_tokens=0),
        _row("cache_zero_read", input_tokens=1000),
    ),
    (
        "cache_hit_percent coerces the counters with int(value or 0)",
        _raw("cache_str", input_tokens="1000", cache_read_tokens="250"),
        _row("cache_str", input_tokens="1000", cache_read_tokens="250", cache_hit_percent=25),
    ),
    (
        "cache_hit_percent is round((read / prompt) * 100): 23 of 40 is 57, not 58",
        _raw("cache_round", input_tokens=40, cache_read_tokens=23),
        _row("cache_round", input_tokens=40, cache_read_tokens=23, cache_hit_percent=57),
    ),
    (
        "an assistant _partial row whose text is only whitespace is skipped too",
        _raw("blank_partial", messages=[_u(100), _a(300, "   ", _partial=True)]),
        _row("blank_partial", message_count=2, last_message_at=100.0, user_message_count=1),
    ),
    (
        "a numeric string timestamp counts (hermes: float(raw))",
        _raw("str_ts", messages=[_u(100), _a("250.5")]),
        _row("str_ts", message_count=2, last_message_at=250.5, user_message_count=1),
    ),
    (
        "a stored message_count given as a numeric string counts (hermes: int(raw))",
        _raw("count_str", messages=[_u(100)], message_count="7"),
        _row("count_str", message_count=7, last_message_at=100.0, user_message_count=1),
    ),
]


def _typed(value):
    """A value with every type and key order made visible (``1 == 1.0 == True`` otherwise)."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def _compact(raw: dict, cwd: Path) -> dict:
    return compact(load_session(json.loads(json.dumps(raw)), now=NOW, cwd=cwd))


@pytest.mark.parametrize(("rule", "raw", "expected"), CASES, ids=[c[1]["session_id"] for c in CASES])
def test_compact_row_equals_hermes_row_written_by_hand(
    rule: str, raw: dict, expected: dict, tmp_path: Path
) -> None:
    assert _typed(_compact(raw, tmp_path)) == _typed(expected), rule


@pytest.mark.parametrize(
    ("rule", "raw", "expected"), FIXED_BY_ISSUE_13, ids=[c[1]["session_id"] for c in FIXED_BY_ISSUE_13]
)
def test_compact_row_equals_hermes_row_where_issue_13_fixed_it(
    rule: str, raw: dict, expected: dict, tmp_path: Path
) -> None:
    assert _typed(_compact(raw, tmp_path)) == _typed(expected), rule


def test_created_workspace_is_its_own_resolved_path_when_set(tmp_path: Path) -> None:
    """compact(): ``created_workspace or workspace``; the loader resolves the path (realpath)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    row = _compact(_raw("created_ws", created_workspace=str(tmp_path / "link")), tmp_path)
    assert (row["workspace"], row["created_workspace"]) == ("/", str((tmp_path / "real").resolve()))


def test_full_rebuild_writes_the_rows_written_by_hand(tmp_path: Path) -> None:
    """The rebuild path (rows straight from parsed sidecars) gives the same literal rows, as
    hermes writes them: ``json.dumps(rows, ensure_ascii=False, indent=2)``, newest first."""
    sdir = tmp_path / "sessions"
    sdir.mkdir()
    expected = []
    for i, (_, raw, row) in enumerate(CASES):
        # distinct updated_at (no ties), and the rows whose last_message_at falls back to it follow
        stamp = 3000 + i
        raw = {**raw, "updated_at": stamp}
        row = {**row, "updated_at": stamp}
        if row["last_message_at"] == 2000:
            row["last_message_at"] = stamp
        (sdir / f"{raw['session_id']}.json").write_text(json.dumps(raw), encoding="utf-8")
        expected.insert(0, row)
    ctx = SaveContext(session_dir=sdir, snapshot=FileSnapshot(), now=NOW, cwd=tmp_path)
    rebuilt = rebuild_index_from_sidecars(ctx)
    assert rebuilt.data == json.dumps(expected, ensure_ascii=False, indent=2).encode("utf-8")
    assert rebuilt.row_ids == [r["session_id"] for r in expected]
