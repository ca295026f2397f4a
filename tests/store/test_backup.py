"""Backups, the durable tombstone and hermes' backup-restore decision with its intentional-shrink guards."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.store.backup import (
    FLAG_CLEAR,
    FLAG_COMPRESS,
    FLAG_GENERATION,
    eligible_orphans,
    inspect_session_recovery_status,
    is_compaction_marker,
    is_uuid4_hex,
    message_count,
    orphan_restore_blocker,
    restorable_live_ids,
)
from inspector.store.files import FileSnapshot
from inspector.store.tombstone import is_durably_tombstoned, load_tombstone_ids, parse_tombstone
from tests.conftest import FIXTURES
from tests.recovery_helpers import msgs, seed_state_db, sidecar, write_json

GEN_A = "0123456789ab4cde8f0123456789abcd"
GEN_B = "fedcba9876544c21b0fedcba98765432"


def _pair(tmp_path, sid, live, bak):
    write_json(tmp_path / f"{sid}.json", live)
    write_json(tmp_path / f"{sid}.json.bak", bak)


def _decision(tmp_path, sid):
    return inspect_session_recovery_status(tmp_path, sid)


def _clear_live(sid, **overrides):
    live = {
        "session_id": sid,
        "messages": [],
        "context_messages": [],
        "truncation_watermark": 0.0,
        "truncation_boundary": 0.0,
        "active_stream_id": None,
        "pending_user_message": None,
        "pending_attachments": [],
        "pending_started_at": None,
        "pending_user_source": None,
        "clear_generation": "clear-gen-2",
    }
    live.update(overrides)
    return live


# ---------------------------------------------------------------- message counts


@pytest.mark.parametrize(
    "payload, expected",
    [
        (b'[{"session_id": "x"}]', -1),  # _index.json shape: a list
        (b'"text"', -1),
        (b'{"messages": {"a": 1}}', -1),
        (b'{"no_messages": []}', -1),
        (b"{broken", -1),
        (b'\xef\xbb\xbf{"messages": []}', -1),  # UTF-8 BOM: hermes fails to load it
        (b"\xff\xfe", -1),
        (b"", -1),
        (b'{"messages": [1, 2, 3]}', 3),
    ],
)
def test_msg_count_returns_neg1_for_non_dict_top_level_and_other_bad_shapes(tmp_path, payload, expected):
    (tmp_path / "x.json").write_bytes(payload)
    assert message_count(FileSnapshot(), tmp_path / "x.json") == expected


def test_msg_count_of_missing_file_or_folder_is_neg1(tmp_path):
    (tmp_path / "d.json").mkdir()
    assert message_count(FileSnapshot(), tmp_path / "d.json") == -1
    assert message_count(FileSnapshot(), tmp_path / "missing.json") == -1


# ---------------------------------------------------------------- durable tombstone


@pytest.mark.parametrize(
    "payload, ids",
    [
        ({"version": 1, "ids": ["a", " b ", "", "  ", None, 0, 7]}, {"a", "b", "7"}),
        ({"version": "1", "ids": ["a"]}, {"a"}),
        ({"version": 1.0, "ids": ["a"]}, {"a"}),
        ({"version": 2, "ids": ["a"]}, None),
        ({"version": "one", "ids": ["a"]}, None),
        ({"ids": ["a"]}, None),
        ({"version": 1, "ids": "a"}, None),
        ({"version": 1}, None),
        (["a"], None),
    ],
)
def test_tombstone_validation(payload, ids):
    got = parse_tombstone(json.dumps(payload).encode())
    assert got == (frozenset(ids) if ids is not None else None)


@pytest.mark.parametrize("raw", [b"", b"{", b'\xef\xbb\xbf{"version": 1, "ids": ["a"]}', b"\xff", b"null"])
def test_corrupt_empty_bom_or_non_object_tombstone_blocks_nothing(tmp_path, raw):
    (tmp_path / "_deleted_webui_sessions.json").write_bytes(raw)
    assert load_tombstone_ids(tmp_path) == frozenset()
    assert is_durably_tombstoned(tmp_path, "a") is False


def test_tombstone_is_ignored_for_empty_id_or_existing_sidecar(tmp_path):
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": ["a", "b"]})
    write_json(tmp_path / "b.json", sidecar("b", 1))
    assert is_durably_tombstoned(tmp_path, "a") is True
    assert is_durably_tombstoned(tmp_path, "b") is False
    assert is_durably_tombstoned(tmp_path, "") is False


def test_index_entry_alone_is_not_a_tombstone(tmp_path):
    write_json(tmp_path / "_index.json", [{"session_id": "a", "source_tag": "webui"}])
    assert is_durably_tombstoned(tmp_path, "a") is False


# ---------------------------------------------------------------- basic decisions


def test_no_backup_decision(tmp_path):
    write_json(tmp_path / "a.json", sidecar("a", 2))
    assert _decision(tmp_path, "a") == {
        "session_id": "a",
        "live_messages": 2,
        "bak_messages": -1,
        "recommend": "no_backup",
    }


@pytest.mark.parametrize("live_n, bak_n", [(3, 3), (4, 3)])
def test_ties_and_smaller_backups_never_restore(tmp_path, live_n, bak_n):
    _pair(tmp_path, "a", sidecar("a", live_n), sidecar("a", bak_n))
    assert _decision(tmp_path, "a")["recommend"] == "no_action"


def test_unreadable_backup_never_restores(tmp_path):
    write_json(tmp_path / "a.json", sidecar("a", 0))
    (tmp_path / "a.json.bak").write_bytes(b"{torn")
    assert _decision(tmp_path, "a") == {
        "session_id": "a",
        "live_messages": 0,
        "bak_messages": -1,
        "recommend": "no_action",
    }


def test_normal_larger_backup_recovery_still_restores(tmp_path):
    _pair(tmp_path, "a", sidecar("a", 2), sidecar("a", 5))
    assert _decision(tmp_path, "a") == {
        "session_id": "a",
        "live_messages": 2,
        "bak_messages": 5,
        "recommend": "restore",
    }


def test_malformed_live_sidecar_still_recovers_larger_backup(tmp_path):
    (tmp_path / "a.json").write_bytes(b'{"session_id": "a", "messages": [')
    write_json(tmp_path / "a.json.bak", sidecar("a", 1))
    assert _decision(tmp_path, "a")["recommend"] == "restore"
    assert _decision(tmp_path, "a")["live_messages"] == -1


# ---------------------------------------------------------------- clear sentinel (#5570, #5532)


def test_stale_pre_clear_backup_inspect_decision(tmp_path):
    _pair(tmp_path, "c", _clear_live("c"), sidecar("c", 4))
    assert _decision(tmp_path, "c") == {
        "session_id": "c",
        "live_messages": 0,
        "bak_messages": 4,
        "recommend": "no_action",
        FLAG_CLEAR: True,
    }


def test_clear_sentinel_backup_is_not_restored_by_startup_recovery(tmp_path):
    _pair(tmp_path, "c", _clear_live("c"), sidecar("c", 4))
    assert restorable_live_ids(tmp_path) == []


def test_same_generation_clear_backup_still_restores(tmp_path):
    _pair(tmp_path, "c", _clear_live("c"), sidecar("c", 4, clear_generation="clear-gen-2"))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


def test_clear_sentinel_does_not_suppress_later_backup_recovery(tmp_path):
    live = _clear_live("c", messages=msgs(1), truncation_watermark=3.0)
    _pair(tmp_path, "c", live, sidecar("c", 3, clear_generation="clear-gen-2"))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


def test_empty_non_sentinel_live_session_still_recovers(tmp_path):
    _pair(tmp_path, "c", {"session_id": "c", "messages": []}, sidecar("c", 2))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


def test_clear_shaped_live_without_clear_generation_still_restores(tmp_path):
    live = _clear_live("c")
    del live["clear_generation"]
    _pair(tmp_path, "c", live, sidecar("c", 2))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


@pytest.mark.parametrize("generation", ["", None, 7, ["clear-gen-2"]])
def test_blank_or_non_string_clear_generation_still_restores(tmp_path, generation):
    _pair(tmp_path, "c", _clear_live("c", clear_generation=generation), sidecar("c", 2))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


def test_empty_live_without_clear_watermark_still_restores(tmp_path):
    _pair(tmp_path, "c", _clear_live("c", truncation_watermark=None), sidecar("c", 2))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


@pytest.mark.parametrize(
    "key, value",
    [
        ("active_stream_id", "stream-1"),
        ("pending_user_message", "hi"),
        ("pending_started_at", 5.0),
        ("pending_attachments", [{"n": 1}]),
    ],
)
def test_active_or_pending_clear_like_sidecar_still_restores(tmp_path, key, value):
    _pair(tmp_path, "c", _clear_live("c", **{key: value}), sidecar("c", 2))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


@pytest.mark.parametrize(
    "missing", ["pending_user_source", "pending_started_at", "context_messages", "truncation_boundary"]
)
def test_incomplete_clear_like_sidecar_missing_pending_fields_still_restores(tmp_path, missing):
    live = _clear_live("c")
    del live[missing]
    _pair(tmp_path, "c", live, sidecar("c", 2))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


def test_clear_sentinel_equality_is_pythons(tmp_path):
    # hermes compares with ==: an integer 0 / False watermark matches 0.0
    _pair(tmp_path, "c", _clear_live("c", truncation_watermark=0, truncation_boundary=False), sidecar("c", 2))
    assert _decision(tmp_path, "c").get(FLAG_CLEAR) is True


def test_post_clear_message_with_stale_pre_clear_backup_is_not_restored(tmp_path):
    live = _clear_live("c", messages=msgs(1), context_messages=msgs(1))
    _pair(tmp_path, "c", live, sidecar("c", 4))
    assert _decision(tmp_path, "c") == {
        "session_id": "c",
        "live_messages": 1,
        "bak_messages": 4,
        "recommend": "no_action",
        FLAG_CLEAR: True,
    }


def test_post_clear_message_after_real_compaction_still_recovers(tmp_path):
    live = _clear_live("c", messages=msgs(1), truncation_watermark=12.5, truncation_boundary=3.0)
    _pair(tmp_path, "c", live, sidecar("c", 4))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


def test_clear_survives_startup_recovery(tmp_path):
    _pair(tmp_path, "c", _clear_live("c"), sidecar("c", 6))
    _pair(tmp_path, "n", sidecar("n", 1), sidecar("n", 2))
    assert restorable_live_ids(tmp_path) == ["n"]


def test_malformed_live_messages_make_clear_guard_fail_open(tmp_path):
    write_json(tmp_path / "c.json", {**_clear_live("c"), "messages": "not a list"})
    write_json(tmp_path / "c.json.bak", sidecar("c", 1))
    assert _decision(tmp_path, "c")["recommend"] == "restore"


# ---------------------------------------------------------------- manual compression (#4836)


def _compressed_live(sid, **overrides):
    live = {
        "session_id": sid,
        "messages": msgs(6),
        "context_messages": msgs(2),
        "compression_anchor_mode": "manual",
    }
    live.update(overrides)
    return live


def _marker():
    return {"role": "assistant", "content": "[Context compaction] earlier turns were summarized"}


def test_startup_recovery_skips_intentional_manual_compress(tmp_path):
    _pair(
        tmp_path,
        "k",
        _compressed_live("k"),
        {"session_id": "k", "messages": msgs(8), "context_messages": msgs(8)},
    )
    assert _decision(tmp_path, "k") == {
        "session_id": "k",
        "live_messages": 6,
        "bak_messages": 8,
        "recommend": "no_action",
        FLAG_COMPRESS: True,
    }
    assert restorable_live_ids(tmp_path) == []


def test_manual_compression_recovery_behavior_is_preserved(tmp_path):
    _pair(
        tmp_path,
        "k",
        _compressed_live("k", compression_anchor_mode=" MANUAL "),
        {"session_id": "k", "messages": msgs(8), "context_messages": msgs(8)},
    )
    assert _decision(tmp_path, "k").get(FLAG_COMPRESS) is True


def test_startup_recovery_still_fires_for_post_compress_real_loss(tmp_path):
    bak = {"session_id": "k", "messages": msgs(9), "context_messages": [_marker()] + msgs(4)}
    _pair(tmp_path, "k", _compressed_live("k"), bak)
    assert _decision(tmp_path, "k")["recommend"] == "restore"


def test_startup_recovery_fires_when_loss_shrinks_both_messages_and_context(tmp_path):
    live = _compressed_live("k", messages=msgs(1), context_messages=msgs(1))
    bak = {"session_id": "k", "messages": msgs(7), "context_messages": msgs(1)}
    _pair(tmp_path, "k", live, bak)
    assert _decision(tmp_path, "k")["recommend"] == "restore"


def test_compress_recorded_by_anchor_or_watermark(tmp_path):
    bak = {"session_id": "k", "messages": msgs(8), "context_messages": msgs(8)}
    anchored = _compressed_live(
        "k",
        compression_anchor_mode=None,
        compression_anchor_summary="sum",
        compression_anchor_message_key={"role": "user"},
    )
    _pair(tmp_path, "k", anchored, bak)
    assert _decision(tmp_path, "k").get(FLAG_COMPRESS) is True
    watermark = _compressed_live("k", compression_anchor_mode=None, truncation_watermark=10.0)
    _pair(tmp_path, "k", watermark, bak)
    assert _decision(tmp_path, "k").get(FLAG_COMPRESS) is True
    blank_summary = _compressed_live(
        "k",
        compression_anchor_mode=None,
        compression_anchor_summary="  ",
        compression_anchor_message_key={"role": "user"},
    )
    _pair(tmp_path, "k", blank_summary, bak)
    assert _decision(tmp_path, "k")["recommend"] == "restore"


def test_compaction_marker_rules():
    assert is_compaction_marker({"role": "user", "content": "  [CONTEXT COMPACTION] x"})
    assert is_compaction_marker(
        {"role": "assistant", "content": [{"type": "text", "text": "[context compaction]"}]}
    )
    assert not is_compaction_marker({"role": "tool", "content": "[context compaction]"})
    assert not is_compaction_marker({"role": "", "content": "[context compaction]"})
    assert not is_compaction_marker({"role": "user", "content": "context compaction happened"})
    assert is_compaction_marker(
        {"role": "user", "content": "context compaction happened", "_compressed_summary": 1}
    )
    assert not is_compaction_marker({"role": "user", "content": "[Session Arc Summary] ..."})
    assert not is_compaction_marker("[context compaction]")


# ---------------------------------------------------------------- shrink generation (#6911)


def _gen_pair(live_generation, backup_generation, sid="g"):
    live = {
        "session_id": sid,
        "messages": msgs(1),
        "context_messages": msgs(1),
        "intentional_shrink_generation": live_generation,
    }
    bak = {
        "session_id": sid,
        "messages": msgs(2),
        "context_messages": msgs(2),
        "intentional_shrink_generation": backup_generation,
    }
    return live, bak


def test_uuid4_hex_shape():
    assert is_uuid4_hex(GEN_A) and is_uuid4_hex(GEN_B)
    for bad in (
        GEN_A.upper(),
        GEN_A + "0",
        GEN_A[:-1],
        GEN_A[:12] + "5" + GEN_A[13:],
        GEN_A[:16] + "c" + GEN_A[17:],
        GEN_A + "\n",
        None,
        0,
    ):
        assert not is_uuid4_hex(bad)


def test_different_generation_backup_is_intentional_and_not_restored(tmp_path):
    _pair(tmp_path, "g", *_gen_pair(GEN_A, GEN_B))
    assert _decision(tmp_path, "g") == {
        "session_id": "g",
        "live_messages": 1,
        "bak_messages": 2,
        "recommend": "no_action",
        FLAG_GENERATION: True,
    }


def test_undo_shrink_backup_without_generation_is_not_revived(tmp_path):
    live, bak = _gen_pair(GEN_A, None)
    _pair(tmp_path, "g", live, bak)
    assert _decision(tmp_path, "g").get(FLAG_GENERATION) is True
    del bak["intentional_shrink_generation"]
    _pair(tmp_path, "g", live, bak)
    assert _decision(tmp_path, "g").get(FLAG_GENERATION) is True
    assert restorable_live_ids(tmp_path) == []


@pytest.mark.parametrize("invalid", [None, "", " ", 0, [], {}])
def test_missing_or_invalid_live_generation_fails_open(tmp_path, invalid):
    _pair(tmp_path, "g", *_gen_pair(invalid, GEN_B))
    assert _decision(tmp_path, "g")["recommend"] == "restore"


def test_same_generation_backup_from_real_save_remains_recoverable(tmp_path):
    _pair(tmp_path, "g", *_gen_pair(GEN_A, GEN_A))
    assert _decision(tmp_path, "g")["recommend"] == "restore"


@pytest.mark.parametrize("invalid", ["", " ", 0, [], {}])
def test_invalid_backup_generation_fails_open(tmp_path, invalid):
    _pair(tmp_path, "g", *_gen_pair(GEN_A, invalid))
    assert _decision(tmp_path, "g")["recommend"] == "restore"


@pytest.mark.parametrize(
    "field, malformed",
    [
        (side, value)
        for value in (
            "0123456789AB4CDE8F0123456789ABCD",
            "0123456789ab4cde8f0123456789abcd0",
            "0123456789ab4cde8f0123456789abc",
            "0123456789ab5cde8f0123456789abcd",
            "0123456789ab4cdecf0123456789abcd",
        )
        for side in ("live", "backup")
    ],
)
def test_malformed_nonblank_generation_fails_open_to_restore(tmp_path, field, malformed):
    live_gen = malformed if field == "live" else GEN_A
    bak_gen = malformed if field == "backup" else GEN_B
    _pair(tmp_path, "g", *_gen_pair(live_gen, bak_gen))
    assert _decision(tmp_path, "g")["recommend"] == "restore"


def test_generation_guard_on_the_storage_fixture():
    sessions = FIXTURES / "storage" / ".hermes" / "webui" / "sessions"
    expected = json.loads((FIXTURES / "storage" / "recovery_status_A.json").read_text(encoding="utf-8"))
    assert inspect_session_recovery_status(sessions, "3f9c2a7b1d04") == expected["inspect"]


def test_guards_apply_in_order_clear_first(tmp_path):
    live = _clear_live("o", intentional_shrink_generation=GEN_A, compression_anchor_mode="manual")
    _pair(tmp_path, "o", live, sidecar("o", 3))
    assert set(_decision(tmp_path, "o")) == {
        "session_id",
        "live_messages",
        "bak_messages",
        "recommend",
        FLAG_CLEAR,
    }


# ---------------------------------------------------------------- orphan backups


def test_orphan_backup_eligibility(tmp_path):
    db = tmp_path / "state.db"
    seed_state_db(db, sid="known")
    write_json(tmp_path / "known.json.bak", sidecar("known", 2))
    write_json(tmp_path / "unknown.json.bak", sidecar("unknown", 2))
    write_json(tmp_path / "deleted.json.bak", sidecar("deleted", 2))
    (tmp_path / "torn.json.bak").write_bytes(b"{")
    write_json(tmp_path / "_index.json.bak", [])
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": ["deleted"]})
    assert eligible_orphans(tmp_path, db) == ["known"]
    assert "_deleted_webui_sessions.json" in orphan_restore_blocker(tmp_path, "deleted", db)
    assert "no session unknown" in orphan_restore_blocker(tmp_path, "unknown", db)
    assert "unreadable" in orphan_restore_blocker(tmp_path, "torn", db)
    # no state.db (or an unreadable one): the check fails open
    assert eligible_orphans(tmp_path, None) == ["known", "unknown"]
    (tmp_path / "garbage.db").write_bytes(b"garbage" * 100)
    assert eligible_orphans(tmp_path, tmp_path / "garbage.db") == ["known", "unknown"]


def test_startup_candidates_do_not_read_live_files_without_backup(tmp_path):
    write_json(tmp_path / "plain.json", sidecar("plain", 1))
    _pair(tmp_path, "s", sidecar("s", 1), sidecar("s", 3))

    class Recording(FileSnapshot):
        def __init__(self):
            super().__init__()
            self.paths = []

        def read(self, path):
            self.paths.append(path.name)
            return super().read(path)

    snap = Recording()
    assert restorable_live_ids(tmp_path, snap) == ["s"]
    assert "plain.json" not in snap.paths


def test_clear_sentinel_with_same_generation_backup_from_a_later_loss_restores(tmp_path):
    live = _clear_live("p", clear_generation="clear-post")
    backup = {**live, "messages": msgs(1), "context_messages": msgs(1)}
    _pair(tmp_path, "p", live, backup)
    assert _decision(tmp_path, "p")["recommend"] == "restore"


def test_cleared_session_whose_backup_was_removed_has_nothing_to_restore(tmp_path):
    write_json(tmp_path / "c.json", _clear_live("c"))
    assert _decision(tmp_path, "c")["recommend"] == "no_backup"


def test_clearing_empty_live_session_preserves_existing_recoverable_backup(tmp_path):
    # the clear route does not stamp a generation on an already-empty session
    live = _clear_live("e", clear_generation=None)
    bak = {
        "session_id": "e",
        "messages": msgs(1),
        "context_messages": msgs(1),
        "truncation_watermark": 0.0,
        "truncation_boundary": 0.0,
    }
    _pair(tmp_path, "e", live, bak)
    assert _decision(tmp_path, "e")["recommend"] == "restore"
    assert restorable_live_ids(tmp_path) == ["e"]


_json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "messages",
                    "context_messages",
                    "clear_generation",
                    "truncation_watermark",
                    "truncation_boundary",
                    "intentional_shrink_generation",
                    "compression_anchor_mode",
                    "role",
                    "content",
                    "version",
                    "ids",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=20,
)
_file_bytes = st.one_of(st.binary(max_size=60), _json_like.map(lambda v: json.dumps(v).encode()))


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(live=_file_bytes, bak=_file_bytes, tomb=_file_bytes)
def test_decision_and_tombstone_never_fail_on_arbitrary_files(tmp_path, live, bak, tomb):
    (tmp_path / "x.json").write_bytes(live)
    (tmp_path / "x.json.bak").write_bytes(bak)
    (tmp_path / "_deleted_webui_sessions.json").write_bytes(tomb)
    status = inspect_session_recovery_status(tmp_path, "x")
    assert status["recommend"] in ("restore", "no_action")
    assert status["bak_messages"] >= -1 and status["live_messages"] >= -1
    assert isinstance(load_tombstone_ids(tmp_path), frozenset)
