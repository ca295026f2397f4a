"""The index rules the differential test against hermes-webui found, pinned with hand-written values.

* ``cache_hit_percent`` is hermes' ``prompt_cache_hit_percent(cache_read_tokens, input_tokens)``:
  both read with ``int(value or 0)``, None unless both are > 0.
* Every field ``Session.__init__`` coerces is coerced the same way before ``compact()``.
* Rows are sorted on their raw ``updated_at`` (ties keep their order); where that sort raises,
  hermes' write raises, and the inspector writes nothing.
* The rebuild inside a save walks the folder in its own order; the recovery rebuild sorts names.
* The save's fast path replaces every row of the saved id and drops rows whose sidecar is gone.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.repair import rebuild_index
from inspector.repair.save import IndexRebuildError, save_session
from inspector.store.index import IndexSortError, cache_hit_percent, compact, sort_rows
from inspector.store.sidecar import load_session
from tests.recovery_helpers import NOW, home_dirs, make_ctx, write_json


def _row(tmp_path: Path, **fields) -> dict:
    raw = {"session_id": "s1", "title": "t", "workspace": "/tmp", "messages": [], **fields}
    return compact(load_session(raw, now=NOW, cwd=tmp_path))


# ---------------------------------------------------------------- cache_hit_percent


@pytest.mark.parametrize(
    ("read", "prompt", "expected"),
    [
        (0, 2000, None),  # input tokens but no cache reads: None, not 0
        (500, 2000, 25),
        ("500", "2000", 25),  # numeric strings are read with int()
        (333.7, 1000.9, 33),  # floats truncated first: 333 / 1000
        (1, 8, 12),  # 12.5 rounds to even
        (3, 8, 38),  # 37.5 rounds to even
        (300, 200, 100),  # capped
        (True, 4, 25),  # int(True) == 1
        (5, 0, None),
        (5, "abc", None),  # not a number: 0
        (5, "7.5", None),  # int("7.5") raises: 0
        (None, None, None),
        (-3, 10, None),
    ],
)
def test_cache_hit_percent_is_hermes_prompt_cache_hit_percent(read, prompt, expected) -> None:
    assert cache_hit_percent({"cache_read_tokens": read, "input_tokens": prompt}) == expected


def test_an_infinite_counter_makes_hermes_compact_raise() -> None:
    with pytest.raises(OverflowError):
        cache_hit_percent({"cache_read_tokens": float("inf"), "input_tokens": 10})


# ---------------------------------------------------------------- Session.__init__ coercions in a row


@pytest.mark.parametrize("falsy", [None, "", False, 0.0, [], {}])
def test_falsy_token_counters_become_the_integer_zero(falsy, tmp_path) -> None:
    row = _row(
        tmp_path, input_tokens=falsy, output_tokens=falsy, cache_read_tokens=falsy, cache_write_tokens=falsy
    )
    assert [row[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")] == [
        0,
        0,
        0,
        0,
    ]
    assert all(type(row[k]) is int for k in ("input_tokens", "cache_read_tokens"))


def test_truthy_odd_counters_stay_as_written(tmp_path) -> None:
    row = _row(tmp_path, input_tokens="2000", cache_read_tokens=12.5)
    assert (row["input_tokens"], row["cache_read_tokens"], row["cache_hit_percent"]) == ("2000", 12.5, 1)


@pytest.mark.parametrize(
    ("value", "expected"), [("", None), ("  OpenRouter ", "openrouter"), (5, "5"), (None, None), ("   ", "")]
)
def test_model_provider_is_str_stripped_lowered_when_truthy(value, expected, tmp_path) -> None:
    assert _row(tmp_path, model_provider=value)["model_provider"] == expected


@pytest.mark.parametrize(("value", "expected"), [("7", 7), (7.9, 7), (True, 1), (-1, 2), ("x", 2), (None, 2)])
def test_message_count_is_read_with_int_else_the_transcript_length(value, expected, tmp_path) -> None:
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert _row(tmp_path, message_count=value, messages=messages)["message_count"] == expected


def test_message_times_are_read_with_float(tmp_path) -> None:
    row = _row(tmp_path, updated_at=5.0, messages=[{"role": "user", "timestamp": "1700000000"}])
    assert row["last_message_at"] == 1700000000.0
    row = _row(tmp_path, updated_at=5.0, messages=[{"role": "user", "_ts": "soon"}])
    assert row["last_message_at"] == 5.0


def test_text_fields_hermes_strips(tmp_path) -> None:
    row = _row(
        tmp_path,
        compression_recovery_source_session_id=" s0 ",
        compression_recovery_action="  ",
        share_token=" tok ",
        worktree_path="/tmp",
        worktree_branch=5,
    )
    assert (row["compression_recovery_source_session_id"], row["compression_recovery_action"]) == ("s0", "")
    assert (row["share_token"], row["worktree_branch"]) == ("tok", "5")


def test_dict_fields_that_are_not_dicts_become_empty(tmp_path) -> None:
    row = _row(tmp_path, composer_draft="draft", process_wakeup_pause=[1])
    assert (row["composer_draft"], row["process_wakeup_pause"]) == ({}, {})


@pytest.mark.parametrize(
    ("value", "expected"), [(True, True), ("12", 12), (0, None), (-4, None), ("x", None)]
)
def test_post_compression_estimate_is_a_positive_int_or_none(value, expected, tmp_path) -> None:
    assert (
        _row(tmp_path, post_compression_context_tokens_estimate=value)[
            "post_compression_context_tokens_estimate"
        ]
        == expected
    )


@pytest.mark.parametrize("workspace", [None, 7, ["/tmp"]])
def test_a_workspace_that_is_not_text_makes_the_sidecar_unloadable(workspace, tmp_path) -> None:
    with pytest.raises(TypeError):
        _row(tmp_path, workspace=workspace)


# ---------------------------------------------------------------- the sort


def test_equal_updated_at_keep_their_order_newest_first() -> None:
    rows = [
        {"session_id": "a", "updated_at": 5},
        {"session_id": "b", "updated_at": 9.0},
        {"session_id": "c", "updated_at": 5.0},
        {"session_id": "d"},
    ]
    assert [r["session_id"] for r in sort_rows(rows)] == ["b", "a", "c", "d"]


def test_text_next_to_numbers_cannot_be_sorted() -> None:
    with pytest.raises(IndexSortError, match="not supported between instances of"):
        sort_rows([{"updated_at": "2026-05-01"}, {"updated_at": 5.0}])
    rows = [{"updated_at": "a"}, {"updated_at": "b"}]  # text only: Python orders it, so does hermes
    assert sort_rows(rows) == [{"updated_at": "b"}, {"updated_at": "a"}]


# ---------------------------------------------------------------- the two rebuilds and the fast path


def _sidecars(sessions: Path, names: list[str], **fields) -> None:
    for n in names:
        write_json(
            sessions / f"{n}.json",
            {
                "session_id": n,
                "title": n,
                "workspace": "/tmp",
                "updated_at": 50.0,
                "messages": [{"role": "user", "content": "hi"}],
                **fields,
            },
        )


def _loaded(sessions: Path, sid: str, home: Path):
    return load_session(json.loads((sessions / f"{sid}.json").read_text()), now=NOW, cwd=home)


def test_the_rebuild_inside_a_save_keeps_ties_in_the_folders_own_order(tmp_path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    names = ["m", "c", "x", "a", "q"]
    _sidecars(sessions, names)
    folder_order = [e.name[:-5] for e in os.scandir(sessions)]  # what hermes' glob walks
    ctx = make_ctx(home).save_context()
    changes = save_session(ctx, _loaded(sessions, "c", home), touch_updated_at=False)
    index = next(c.after for c in changes if c.path.name == "_index.json")
    assert [r["session_id"] for r in json.loads(index)] == folder_order


def test_the_recovery_rebuild_keeps_ties_in_name_order(tmp_path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    _sidecars(sessions, ["m", "c", "x", "a", "q"])
    plan = rebuild_index.plan(make_ctx(home), None)
    assert [r["session_id"] for r in json.loads(plan.changes[0].after)] == ["a", "c", "m", "q", "x"]


def test_the_fast_path_replaces_every_row_of_the_saved_id_and_drops_rows_without_a_sidecar(tmp_path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    _sidecars(sessions, ["a", "b"])
    write_json(
        sessions / "_index.json",
        [
            {"session_id": "a", "updated_at": 9.0, "title": "old a"},
            {"session_id": "ghost", "updated_at": 8.0},
            {"session_id": "b", "updated_at": 7.0},
            {"session_id": "a", "updated_at": 1.0, "title": "older a"},
        ],
    )
    changes = save_session(
        make_ctx(home).save_context(), _loaded(sessions, "a", home), touch_updated_at=False
    )
    rows = json.loads(next(c.after for c in changes if c.path.name == "_index.json"))
    assert [(r["session_id"], r.get("title"), r["updated_at"]) for r in rows] == [
        ("a", "a", 50.0),
        ("a", "a", 50.0),
        ("b", None, 7.0),
    ]


# ---------------------------------------------------------------- where hermes raises, nothing is written


def _repair(home: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["repair", *args, "--home", str(home), "--write", "--now", repr(NOW)])
    return code, out.getvalue()


def test_text_updated_at_makes_the_index_rebuild_a_refusal_and_exit_1(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "log"))
    home, sessions, _ = home_dirs(tmp_path)
    _sidecars(sessions, ["a"])
    _sidecars(sessions, ["b"], updated_at="2026-05-01T10:00:00")
    code, out = _repair(home, "--all", "--action", "rebuild-index")
    assert code == 1
    assert "'<' not supported between instances of 'float' and 'str'" in out
    assert not (sessions / "_index.json").exists()


def test_a_lone_surrogate_in_another_title_makes_the_save_a_refusal(tmp_path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    _sidecars(sessions, ["a"])
    (sessions / "b.json").write_text(
        '{"session_id": "b", "title": "bad \\ud83d", "workspace": "/tmp", '
        '"updated_at": 40.0, "messages": []}',
        encoding="utf-8",
    )
    with pytest.raises(IndexRebuildError, match="cannot be written as UTF-8"):
        save_session(make_ctx(home).save_context(), _loaded(sessions, "a", home), touch_updated_at=True)


# ---------------------------------------------------------------- duplicate partial replies


def test_adjacent_duplicate_partials_are_dropped_on_load_keeping_the_first(tmp_path) -> None:
    partial = {"role": "assistant", "content": " half an answer ", "_partial": True, "timestamp": 200.0}
    messages = [
        {"role": "user", "content": "q", "timestamp": 100.0},
        partial,
        {**partial, "content": "half an answer", "timestamp": 300.0},  # same once stripped
        {"role": "tool", "content": "x", "timestamp": 400.0},
    ]
    row = _row(tmp_path, updated_at=5.0, messages=messages)
    assert (row["message_count"], row["last_message_at"]) == (3, 200.0)


def test_partials_with_different_tool_calls_are_both_kept(tmp_path) -> None:
    a = {
        "role": "assistant",
        "content": "",
        "_partial": True,
        "timestamp": 200.0,
        "_partial_tool_calls": [{"name": "terminal", "args": {"command": "ls"}}],
    }
    b = {**a, "timestamp": 300.0, "_partial_tool_calls": [{"name": "terminal", "args": {"command": "pwd"}}]}
    row = _row(tmp_path, messages=[a, b])
    assert row["message_count"] == 2


def test_a_repair_of_a_sidecar_hermes_would_rewrite_on_load_is_refused(tmp_path) -> None:
    from inspector.repair.session_source import load_session_for_repair

    home, sessions, _ = home_dirs(tmp_path)
    partial = {"role": "assistant", "content": "half", "_partial": True}
    write_json(
        sessions / "a.json", {"session_id": "a", "workspace": "/tmp", "messages": [partial, dict(partial)]}
    )
    source = load_session_for_repair(make_ctx(home), "a")
    assert source.loaded is None
    assert "adjacent duplicate partial replies" in source.refusal


def test_a_repair_of_a_sidecar_whose_transcript_is_not_a_list_is_refused(tmp_path) -> None:
    from inspector.repair.session_source import load_session_for_repair

    home, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a.json", {"session_id": "a", "workspace": "/tmp", "messages": {"x": 1}})
    assert (
        load_session_for_repair(make_ctx(home), "a").refusal
        == "a.json holds messages that is not a list: not repaired"
    )


def test_tool_calls_that_are_not_a_list_are_kept_as_hermes_keeps_them(tmp_path) -> None:
    raw = {"session_id": "a", "workspace": "/tmp", "messages": [], "tool_calls": {"call": 1}}
    assert load_session(raw, now=NOW, cwd=tmp_path).data["tool_calls"] == {"call": 1}
    assert load_session({**raw, "tool_calls": None}, now=NOW, cwd=tmp_path).data["tool_calls"] == []


def test_a_transcript_that_is_not_a_list_counts_its_length_in_the_row(tmp_path) -> None:
    row = _row(tmp_path, messages={"a": 1, "b": 2}, updated_at=5.0)
    assert (row["message_count"], row["user_message_count"], row["last_message_at"]) == (2, 0, 5.0)


# ---------------------------------------------------------------- tombstones cleared by a save


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            {"version": 1, "ids": ["a", " padded ", "", 7, None]},
            b'{\n  "version": 1,\n  "ids": [\n    "7",\n    "padded"\n  ]\n}',
        ),
        ({"version": "1", "ids": ["a", "b"]}, b'{\n  "version": 1,\n  "ids": [\n    "b"\n  ]\n}'),
        ({"ids": ["a", "b"]}, None),  # no version: hermes reads no ids, the file stays
        ({"version": 2, "ids": ["a"]}, None),
        ({"version": 1, "ids": "a"}, None),
        ({"version": 1, "ids": [" a "]}, "deleted"),
    ],
)
def test_a_save_clears_the_id_from_tombstones_as_hermes_reads_them(content, expected, tmp_path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    _sidecars(sessions, ["a"])
    write_json(sessions / "_pruned_webui_orphans.json", content)
    changes = save_session(
        make_ctx(home).save_context(), _loaded(sessions, "a", home), touch_updated_at=False
    )
    got = {c.path.name: c.after for c in changes}
    if expected is None:
        assert "_pruned_webui_orphans.json" not in got
    elif expected == "deleted":
        assert got["_pruned_webui_orphans.json"] is None
    else:
        assert got["_pruned_webui_orphans.json"] == expected


def test_an_infinite_tombstone_version_stops_hermes_clearing_the_other_tombstone(tmp_path) -> None:
    home, sessions, _ = home_dirs(tmp_path)
    _sidecars(sessions, ["a"])
    (sessions / "_pruned_webui_orphans.json").write_text(
        '{"version": Infinity, "ids": ["a"]}', encoding="utf-8"
    )
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["a", "b"]})
    changes = save_session(
        make_ctx(home).save_context(), _loaded(sessions, "a", home), touch_updated_at=False
    )
    assert {c.path.name for c in changes} == {"a.json", "_index.json"}


def test_a_message_time_past_the_float_range_raises_even_under_a_pending_prompt(tmp_path) -> None:
    messages = [{"role": "user", "content": "x", "_ts": 10**400}]
    with pytest.raises(OverflowError):
        _row(tmp_path, messages=messages, pending_user_message="p", pending_started_at=7.0)
    assert (
        _row(tmp_path, messages=messages[:0], pending_user_message="p", pending_started_at=7.0)[
            "last_message_at"
        ]
        == 7.0
    )
