"""The recovered pending turn's timestamp and source stamp at their edges (hermes
``api/models.py``: the ``_recovered_ts`` of each branch, ``api/process_event_utils.py``:
``stamp_message_source`` and ``attach_wakeup_display_meta``), written out by hand
(tests/MUTATION.md, tenth session).

Rules pinned here:

* the turn's start is its timestamp when it is a number above 0 (``int()`` of it: 0.5 gives 0,
  1 gives 1); a start of 0 takes the clock's ``int(now)``;
* a ``webui`` turn (the default source) is not stamped at all;
* only a ``process_wakeup`` turn gets ``_wakeup_meta``: another source gets ``_source`` alone,
  even when its text reads as a wakeup;
* a wakeup row that already has ``_wakeup_meta`` keeps it (no second derivation).
"""

from __future__ import annotations

import pytest

from inspector.repair.pending_turn import append_recovered_pending_turn, recovered_ts, stamp_source

WAKEUP = "[IMPORTANT: Background process p7 completed (exit_code=0).\nCommand: make\nOutput:\nok\n"
META = {"type": "completion", "task_id": "p7", "command": "make", "exit_code": 0}


@pytest.mark.parametrize(
    ("started", "expected"),
    [(0, 1_800_000_000), (0.0, 1_800_000_000), (-5, 1_800_000_000), (0.5, 0), (1, 1), (1.9, 1), (2, 2)],
)
def test_the_turns_start_is_its_timestamp_when_above_zero(started, expected) -> None:
    assert recovered_ts({"pending_started_at": started}, 1_800_000_000.75) == expected


def test_a_webui_turn_is_not_stamped() -> None:
    row = {"role": "user", "content": WAKEUP}
    stamp_source(row, "webui")
    assert row == {"role": "user", "content": WAKEUP}


def test_a_recovered_webui_turn_has_no_source() -> None:
    session = {
        "messages": [],
        "pending_user_message": "hello",
        "pending_user_source": "webui",
        "pending_attachments": [],
    }
    row = append_recovered_pending_turn(session, timestamp=7)
    assert row == {"role": "user", "content": "hello", "timestamp": 7, "_recovered": True}


def test_another_source_gets_no_wakeup_meta_even_for_a_wakeup_text() -> None:
    row = {"role": "user", "content": WAKEUP}
    stamp_source(row, "cron")
    assert row == {"role": "user", "content": WAKEUP, "_source": "cron"}


def test_a_wakeup_row_keeps_the_meta_it_has() -> None:
    row = {"role": "user", "content": WAKEUP, "_wakeup_meta": {"type": "kept"}}
    stamp_source(row, "process_wakeup")
    assert row == {
        "role": "user",
        "content": WAKEUP,
        "_wakeup_meta": {"type": "kept"},
        "_source": "process_wakeup",
    }


def test_a_wakeup_row_without_meta_gets_it() -> None:
    row = {"role": "user", "content": WAKEUP}
    stamp_source(row, "process_wakeup")
    assert row == {"role": "user", "content": WAKEUP, "_source": "process_wakeup", "_wakeup_meta": META}
