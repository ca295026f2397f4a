"""Rule: the one-step index row (``save.light_index_row``) of a plain sidecar is made without
``load_for_index`` + ``compact`` (the pair) and holds the value hermes' ``Session.__init__`` +
``compact()`` give each field (hermes-webui ``api/models.py``: ``share_token =
str(share_token).strip() if share_token else None``, ``worktree_branch = str(b) if b else None``,
``post_compression_context_tokens_estimate`` kept only when ``> 0``, ``composer_draft`` kept when a
dict, ``context_engine`` / ``compression_anchor_mode`` as the file has them, ``created_workspace``
and the worktree paths through ``Path(...).expanduser().resolve()``, ``message_count`` at least 1
with a pending prompt); and a value ``str()`` would walk that is a container (in any one of the
five fields the one step turns into text) sends the row to the pair.

Expected values are written by hand from hermes' source; the paths from ``os.path.realpath``.
``tests/repair/test_light_index_row_rules.py`` holds the one step to the pair on generated input.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector.repair import save
from inspector.repair.save import light_index_row, light_parse_sidecar
from inspector.store.index import PathResolver

NOW = 1779900000.0


def _obj(raw: dict) -> dict:
    obj = light_parse_sidecar(json.dumps(raw).encode())
    assert obj is not None, "the light parse must take this sidecar"
    return obj


def _one_step(raw: dict, cwd: Path, monkeypatch) -> dict:
    """The row of ``raw`` with the pair forbidden: it must be made in one step."""

    def no_pair(*args, **kwargs):
        raise AssertionError("load_for_index ran: the one step gave up on a plain sidecar")

    obj = _obj(raw)
    with monkeypatch.context() as m:
        m.setattr(save, "load_for_index", no_pair)
        return light_index_row(obj, NOW, PathResolver(cwd))


def test_a_plain_sidecar_takes_the_one_step_with_hermes_values(tmp_path: Path, monkeypatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    raw = {
        "session_id": "s1",
        "title": "T",
        "workspace": str(ws),
        "model": "m",
        "share_token": "  tok  ",
        "context_engine": "lcm",
        "compression_anchor_mode": "tail",
        "post_compression_context_tokens_estimate": 1,
        "composer_draft": {"text": "draft"},
        "messages": [{"role": "user", "_ts": 5}],
    }
    row = _one_step(raw, tmp_path, monkeypatch)
    assert row["session_id"] == "s1"
    assert row["workspace"] == os.path.realpath(ws)
    assert row["created_workspace"] == os.path.realpath(ws)  # none in the file: the workspace
    assert row["share_token"] == "tok"  # str(...).strip()
    assert row["context_engine"] == "lcm"
    assert row["compression_anchor_mode"] == "tail"
    assert row["post_compression_context_tokens_estimate"] == 1  # 1 > 0: kept
    assert row["composer_draft"] == {"text": "draft"}
    assert row["message_count"] == 1
    assert "worktree_path" not in row


def test_a_sidecar_without_a_workspace_takes_the_one_step(tmp_path: Path, monkeypatch) -> None:
    """``Path("").expanduser().resolve()`` is the working folder: the resolver's ``cwd``."""
    row = _one_step({"session_id": "s2", "messages": []}, tmp_path, monkeypatch)
    assert row["workspace"] == os.path.realpath(tmp_path)
    assert row["created_workspace"] == os.path.realpath(tmp_path)
    assert row["share_token"] is None
    assert row["context_engine"] is None


def test_created_workspace_and_worktree_paths_are_resolved_in_one_step(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "wt").mkdir()
    (tmp_path / "repo").mkdir()
    raw = {
        "session_id": "s3",
        "workspace": str(tmp_path),
        "created_workspace": "a/../a",
        "worktree_path": "wt",
        "worktree_repo_root": "./repo",
        "worktree_created_at": 7,
    }
    row = _one_step(raw, tmp_path, monkeypatch)
    assert row["created_workspace"] == os.path.realpath(tmp_path / "a")
    assert row["worktree_path"] == os.path.realpath(tmp_path / "wt")
    assert row["worktree_repo_root"] == os.path.realpath(tmp_path / "repo")
    assert row["worktree_branch"] is None  # no branch in the file: None, not "None"
    assert row["worktree_created_at"] == 7


def test_a_worktree_without_a_repo_root(tmp_path: Path, monkeypatch) -> None:
    raw = {
        "session_id": "s4",
        "workspace": str(tmp_path),
        "worktree_path": str(tmp_path),
        "worktree_branch": 7,
    }
    row = _one_step(raw, tmp_path, monkeypatch)
    assert row["worktree_path"] == os.path.realpath(tmp_path)
    assert row["worktree_branch"] == "7"  # str(7)
    assert row["worktree_repo_root"] is None


@pytest.mark.parametrize(
    ("fields", "count"),
    [
        ({"pending_user_message": "hi", "messages": []}, 1),  # max(0, 1)
        ({"pending_user_message": "hi", "message_count": 4}, 4),  # max(4, 1)
        ({"pending_user_message": "hi", "messages": [{"role": "user"}, {"role": "assistant"}]}, 2),
    ],
)
def test_a_pending_prompt_counts_at_least_one_message(tmp_path: Path, monkeypatch, fields, count) -> None:
    row = _one_step({"session_id": "s5", "workspace": str(tmp_path), **fields}, tmp_path, monkeypatch)
    assert row["message_count"] == count
    assert row["has_pending_user_message"] is True


@pytest.mark.parametrize(
    ("estimate", "expected"), [(1, 1), (True, True), (2, 2), (0, None), ("3", 3), (-1, None)]
)
def test_the_post_compression_estimate_is_kept_when_above_zero(
    tmp_path: Path, monkeypatch, estimate, expected
):
    raw = {
        "session_id": "s6",
        "workspace": str(tmp_path),
        "post_compression_context_tokens_estimate": estimate,
    }
    row = _one_step(raw, tmp_path, monkeypatch)
    got = row["post_compression_context_tokens_estimate"]
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    "key",
    [
        "model_provider",
        "compression_recovery_source_session_id",
        "compression_recovery_action",
        "share_token",
        "worktree_branch",
    ],
)
def test_a_container_in_any_text_field_goes_to_the_pair(tmp_path: Path, monkeypatch, key: str) -> None:
    """Each of the five fields on its own: the others plain (``str()`` of a container recurses)."""
    calls = []
    real = save.load_for_index

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    raw = {"session_id": "s7", "workspace": str(tmp_path), "worktree_path": str(tmp_path), key: [1]}
    obj = _obj(raw)
    monkeypatch.setattr(save, "load_for_index", counting)
    row = light_index_row(obj, NOW, PathResolver(tmp_path))
    assert calls == [1]
    assert row[key] == "[1]"  # str([1]) (.strip(), and .lower() for the provider, keep it)


@pytest.mark.parametrize(
    ("message_count", "count"),
    [
        (0, 0),
        ("0", 0),  # int("0"): a count of zero kept, not the messages' length
        (0.5, 0),
        (-0.5, 0),  # int(-0.5) is 0, which is >= 0
        (False, 0),
        (True, 1),
        ("7", 7),
        (7.9, 7),
        ("-1", 3),  # below zero: the messages are counted
        ("x", 3),
        ([], 3),
        (None, 3),
    ],
)
def test_message_count_is_the_files_count_as_int_when_at_least_zero(
    tmp_path: Path, monkeypatch, message_count, count
) -> None:
    """hermes' ``Session.__init__``: ``int(message_count)`` when that works and is >= 0, else
    None, and ``compact()`` then counts the messages (three here)."""
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user"}]
    raw = {
        "session_id": "s9",
        "workspace": str(tmp_path),
        "messages": messages,
        "message_count": message_count,
    }
    row = _one_step(raw, tmp_path, monkeypatch)
    assert row["message_count"] == count and type(row["message_count"]) is int
