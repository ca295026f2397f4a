"""``restore-backup`` on a sidecar or ``.bak`` nested too deeply for hermes' ``json.loads``.

hermes' ``recover_session`` counts the live file's messages, then the backup's, with ``_msg_count``,
which catches OSError and ValueError but not the RecursionError the stdlib raises on JSON nested
about a thousand levels deep. hermes then raises and restores nothing (the differential test's seed
1910 found the inspector restoring there). These homes are written by hand: 1,200 levels is far
beyond the stdlib's reach, 300 well within it.
"""

from __future__ import annotations

import json

from inspector.repair import restore
from inspector.store.backup import recovery_raises_on, startup_recovery_raises_on
from inspector.store.files import FileSnapshot
from tests.recovery_helpers import home_dirs, make_ctx, seed_state_db, sidecar, write_json


def _nested(session: dict, levels: int) -> bytes:
    """The sidecar's indent=2 JSON with a key ``x_deep`` holding ``levels`` nested empty lists."""
    body = json.dumps({**session, "x_deep": "DEEP"}, indent=2).encode()
    return body.replace(b'"DEEP"', b"[" * levels + b"]" * levels, 1)


def _refusal(name: str) -> str:
    return (
        f"hermes' recover_session fails on this session: {name} is nested too deeply for its "
        "json.loads (RecursionError), so hermes restores nothing and neither does the inspector; "
        "both files are left as they are"
    )


def test_a_bak_too_deep_for_hermes_is_not_restored(tmp_path):
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "s.json", sidecar("s", 1))
    (sessions / "s.json.bak").write_bytes(_nested(sidecar("s", 4), 1200))
    plan = restore.plan(make_ctx(home_path), "s")
    assert plan.changes == []
    assert plan.refusal == _refusal("s.json.bak")
    assert restore.eligible(make_ctx(home_path)) == []


def test_a_live_file_too_deep_for_hermes_stops_the_restore_before_the_bak_is_read(tmp_path):
    """The live file is counted first: it is the one named, even with a readable, larger .bak."""
    home_path, sessions, _ = home_dirs(tmp_path)
    (sessions / "s.json").write_bytes(_nested(sidecar("s", 1), 1200))
    write_json(sessions / "s.json.bak", sidecar("s", 4))
    plan = restore.plan(make_ctx(home_path), "s")
    assert plan.changes == []
    assert plan.refusal == _refusal("s.json")
    assert recovery_raises_on(sessions, "s", FileSnapshot()) == "s.json"


def test_an_orphan_bak_too_deep_for_hermes_is_refused_and_stops_the_startup_recovery(tmp_path):
    """hermes' startup recovery counts every orphan .bak's messages before it restores anything, outside
    its per-session try: a deep orphan .bak ends it, and no session is restored, not even a
    restorable one (a.json, 1 message, with a .bak of 2). ``--all`` plans that orphan alone, refused
    in words that say so."""
    home_path, sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="o")
    (sessions / "o.json.bak").write_bytes(_nested(sidecar("o", 3), 1200))
    write_json(sessions / "a.json", sidecar("a", 1))
    write_json(sessions / "a.json.bak", sidecar("a", 2))
    assert restore.eligible(make_ctx(home_path)) == ["o"]
    plan = restore.plan(make_ctx(home_path), "o")
    assert plan.changes == []
    assert plan.refusal == _refusal("o.json.bak") + (
        "; hermes' startup recovery, which reads every orphan .bak "
        "before it restores anything, stops at this one and restores no session at all"
    )
    assert startup_recovery_raises_on(sessions, FileSnapshot()) == "o"


def test_a_deep_orphan_bak_stops_the_startup_recovery_even_when_tombstoned(tmp_path):
    """hermes counts an orphan's messages before it looks at the tombstone."""
    home_path, sessions, _ = home_dirs(tmp_path)
    (sessions / "o.json.bak").write_bytes(_nested(sidecar("o", 3), 1200))
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["o"]})
    write_json(sessions / "a.json", sidecar("a", 1))
    write_json(sessions / "a.json.bak", sidecar("a", 2))
    assert restore.eligible(make_ctx(home_path)) == ["o"]


def test_a_deep_bak_beside_its_live_file_does_not_stop_the_startup_recovery(tmp_path):
    """Only orphans are read before the restores; a live file's .bak is read in its own try."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "b.json", sidecar("b", 1))
    (sessions / "b.json.bak").write_bytes(_nested(sidecar("b", 3), 1200))
    write_json(sessions / "a.json", sidecar("a", 1))
    write_json(sessions / "a.json.bak", sidecar("a", 2))
    assert startup_recovery_raises_on(sessions, FileSnapshot()) is None
    assert restore.eligible(make_ctx(home_path)) == ["a"]


def test_a_deep_orphan_bak_whose_name_is_not_plain_leaves_nothing_eligible(tmp_path):
    home_path, sessions, _ = home_dirs(tmp_path)
    (sessions / "o o.json.bak").write_bytes(_nested(sidecar("o o", 3), 1200))
    write_json(sessions / "a.json", sidecar("a", 1))
    write_json(sessions / "a.json.bak", sidecar("a", 2))
    assert restore.eligible(make_ctx(home_path)) == []


def test_nesting_hermes_reads_does_not_stop_the_restore(tmp_path):
    """300 levels parse in hermes: the backup (4 messages) replaces the live file (1), byte for byte."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "s.json", sidecar("s", 1))
    bak = _nested(sidecar("s", 4), 300)
    (sessions / "s.json.bak").write_bytes(bak)
    assert recovery_raises_on(sessions, "s", FileSnapshot()) is None
    plan = restore.plan(make_ctx(home_path), "s")
    assert plan.refusal is None
    assert [c.after for c in plan.changes] == [bak]
    assert restore.eligible(make_ctx(home_path)) == ["s"]


def test_a_deep_file_of_another_session_leaves_this_one_eligible(tmp_path):
    """b's live file counts as -1 for the inspector's decision (restore), but hermes raises on it."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a.json", sidecar("a", 1))
    write_json(sessions / "a.json.bak", sidecar("a", 2))
    (sessions / "b.json").write_bytes(_nested(sidecar("b", 1), 1200))
    write_json(sessions / "b.json.bak", sidecar("b", 2))
    assert restore.eligible(make_ctx(home_path)) == ["a"]


def test_no_bak_and_a_live_file_too_deep_is_refused_like_hermes_raises(tmp_path):
    """hermes counts the live file before it looks for the .bak, so it raises even with no backup."""
    home_path, sessions, _ = home_dirs(tmp_path)
    (sessions / "s.json").write_bytes(_nested(sidecar("s", 1), 1200))
    plan = restore.plan(make_ctx(home_path), "s")
    assert plan.refusal is not None and "s.json is nested too deeply" in plan.refusal
