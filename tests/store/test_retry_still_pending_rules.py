"""Whether hermes' lazy retry would still read the journal for a pending-recovery marker
(``sidecar.retry_still_pending``, hermes' ``_maybe_retry_pending_journal_recovery``: it gives up after
12 attempts or when more than 86,400 s passed since the marker was first seen; a value it cannot
turn into a number ends its look): tests/MUTATION.md, tenth session. Expected answers by hand."""

from __future__ import annotations

from inspector.store.sidecar import retry_still_pending

STREAM = {"_journal_retry_stream_id": "s1"}


def test_a_marker_never_seen_before_is_still_pending_whatever_the_clock():
    assert retry_still_pending({**STREAM, "_journal_retry_attempts": 0}, now=1_900_000_000.0) is True
    assert retry_still_pending(dict(STREAM), now=1_900_000_000.0) is True


def test_the_day_is_counted_exactly():
    marker = {**STREAM, "_journal_retry_attempts": 3, "_journal_retry_first_seen_ts": 1000}
    assert retry_still_pending(marker, now=1000 + 86_400) is True  # not more than a day yet
    assert retry_still_pending(marker, now=1000 + 86_400.5) is False


def test_the_attempts_are_counted_exactly():
    assert retry_still_pending({**STREAM, "_journal_retry_attempts": 11}, now=0.0) is True
    assert retry_still_pending({**STREAM, "_journal_retry_attempts": 12}, now=0.0) is False


def test_values_that_are_no_number_end_the_retry():
    assert retry_still_pending({**STREAM, "_journal_retry_attempts": "x"}, now=0.0) is False
    assert retry_still_pending({**STREAM, "_journal_retry_attempts": [1]}, now=0.0) is False
    marker = {**STREAM, "_journal_retry_first_seen_ts": "yesterday"}
    assert retry_still_pending(marker, now=0.0) is False


def test_without_a_stream_id_nothing_is_retried():
    assert retry_still_pending({"_journal_retry_attempts": 0}, now=0.0) is False
