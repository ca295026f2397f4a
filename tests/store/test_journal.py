"""hermes' run-journal reader (spec run-journal-and-promotion §1.4, §1.7).

Ported from hermes-webui's ``test_run_journal.py`` reading tests: malformed lines are
tolerated, the summary classifies the terminal state, and a ``stream_end`` that follows a
``done``/``cancel``/error keeps the logical outcome. The files are written the way
``append_run_event`` writes them (compact JSON, fixed key order, one record per line).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.store.journal import (
    JournalUnreadable,
    authoritative_terminal_event,
    event_owns_run,
    journal_path,
    parse_journal_bytes,
    read_run_events,
    run_summary,
)

SID = "a1b2c3d4e5f6"
RUN = "7c8b4108d52b4aba9af362d3a54f47ac"


def _terminal_state(event: str, payload: dict) -> str | None:
    """The classification append_run_event stores with each record (§1.4)."""
    if event in ("done", "stream_end"):
        state = str(payload.get("terminal_state") or "").strip().lower()
        return "tool_limit_reached" if state == "tool_limit_reached" else "completed"
    if event == "cancel":
        return "interrupted-by-user"
    if event in ("apperror", "error"):
        kind = str(payload.get("type") or "").strip().lower()
        return {
            "tool_limit_reached": "tool_limit_reached",
            "cancelled": "interrupted-by-user",
            "canceled": "interrupted-by-user",
            "interrupted": "interrupted-by-crash",
        }.get(kind, "errored")
    return None


def record(
    seq: int,
    event: str,
    payload: dict | None = None,
    *,
    sid: str = SID,
    run: str = RUN,
    created_at: float = 1779237638.0,
) -> bytes:
    """One journal line, byte for byte as hermes' append_run_event writes it."""
    payload = payload if payload is not None else {}
    state = _terminal_state(event, payload)
    rec = {
        "version": 1,
        "event_id": f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": sid,
        "event": event,
        "type": event,
        "created_at": float(created_at),
        "terminal": state is not None,
        "terminal_state": state,
        "payload": payload,
    }
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def journal(*events: tuple[str, dict]) -> bytes:
    return b"".join(record(i, name, payload) for i, (name, payload) in enumerate(events, start=1))


def summary_of(data: bytes) -> dict:
    return run_summary(SID, RUN, parse_journal_bytes(data).events)


# ---------------------------------------------------------------- reading


def test_missing_journal_reads_as_no_events(tmp_path: Path) -> None:
    parsed = read_run_events(journal_path(tmp_path, SID, RUN))
    assert parsed.events == [] and parsed.malformed == []


def test_reader_keeps_file_order_and_every_object_record(tmp_path: Path) -> None:
    path = journal_path(tmp_path, SID, RUN)
    path.parent.mkdir(parents=True)
    path.write_bytes(journal(("token", {"text": "a"}), ("token", {"text": "b"}), ("done", {})))
    events = read_run_events(path).events
    assert [e["seq"] for e in events] == [1, 2, 3]
    assert [e["payload"].get("text") for e in events] == ["a", "b", None]


def test_malformed_lines_are_tolerated_and_reported() -> None:
    data = (
        record(1, "token", {"text": "ok"})
        + b"not json\n"
        + b"[1, 2]\n"
        + b"   \n"
        + record(2, "token", {"text": "still ok"})
        + b'{"seq": 3, "event": "tok'
    )
    parsed = parse_journal_bytes(data)
    assert [e["payload"]["text"] for e in parsed.events] == ["ok", "still ok"]
    assert parsed.malformed == [
        {"line": 2, "raw": "not json"},
        {"line": 3, "raw": "[1, 2]"},
        {"line": 6, "raw": '{"seq": 3, "event": "tok'},
    ]


def test_invalid_utf8_anywhere_makes_the_whole_journal_unreadable() -> None:
    torn = record(2, "token", {"text": "é"})
    data = record(1, "token", {"text": "fine"}) + torn[: torn.index("é".encode()) + 1]  # é cut in half
    with pytest.raises(JournalUnreadable):
        parse_journal_bytes(data)


def test_unicode_line_separator_tears_its_record_apart() -> None:
    data = journal(
        ("token", {"text": "one"}), ("token", {"text": "two\u2028lines"}), ("token", {"text": "three"})
    )
    parsed = parse_journal_bytes(data)
    assert [e["payload"]["text"] for e in parsed.events] == ["one", "three"]
    assert len(parsed.malformed) == 2  # the two fragments of record 2


@pytest.mark.parametrize("separator", ["\u0085", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r"])
def test_every_splitlines_boundary_loses_the_record(separator: str) -> None:
    line = record(1, "token", {"text": "x"}).decode().replace('"x"', f'"a{separator}b"').encode()
    assert parse_journal_bytes(line).events == []


def test_crlf_line_ends_read_normally() -> None:
    data = journal(("token", {"text": "a"}), ("done", {})).replace(b"\n", b"\r\n")
    assert [e["event"] for e in parse_journal_bytes(data).events] == ["token", "done"]


def test_records_are_not_validated_against_the_path() -> None:
    data = record(1, "token", {"text": "x"}, sid="other", run="elsewhere").replace(b'"seq":1', b'"seq":"1"')
    (event,) = parse_journal_bytes(data).events
    assert event["seq"] == "1" and event["session_id"] == "other"


@pytest.mark.parametrize("bad", ["", "  ", "a/b", "a\\b", "x y", "é"])
def test_journal_path_rejects_ids_hermes_rejects(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="invalid session_id"):
        journal_path(tmp_path, bad, RUN)
    with pytest.raises(ValueError, match="invalid run_id"):
        journal_path(tmp_path, SID, bad)


def test_journal_path_layout(tmp_path: Path) -> None:
    assert journal_path(tmp_path, SID, RUN) == tmp_path / "_run_journal" / SID / f"{RUN}.jsonl"


# ---------------------------------------------------------------- summary and terminal state


@pytest.mark.parametrize(
    ("events", "state"),
    [
        ([("token", {"text": "a"}), ("done", {})], "completed"),
        ([("done", {"terminal_state": " Tool_Limit_Reached "})], "tool_limit_reached"),
        ([("cancel", {"type": "cancelled"})], "interrupted-by-user"),
        ([("apperror", {"type": "interrupted"})], "interrupted-by-crash"),
        ([("error", {"type": "canceled"})], "interrupted-by-user"),
        ([("apperror", {"type": "provider_error"})], "errored"),
        ([("stream_end", {})], "completed"),
        ([("token", {"text": "a"}), ("metering", {})], "running"),
        ([], "unknown"),
    ],
)
def test_summary_classifies_terminal_state(events: list, state: str) -> None:
    summary = summary_of(journal(*events))
    assert summary["terminal_state"] == state
    assert summary["terminal"] is (state not in ("running", "unknown"))
    assert summary["event_count"] == len(events)
    assert summary["run_id"] == summary["stream_id"] == RUN


def test_crash_and_user_cancel_are_distinguished() -> None:
    crash = summary_of(journal(("apperror", {"type": "interrupted"})))
    cancel = summary_of(journal(("cancel", {"type": "cancelled"})))
    assert crash["terminal_state"] == "interrupted-by-crash"
    assert cancel["terminal_state"] == "interrupted-by-user"


@pytest.mark.parametrize(
    ("first", "state"),
    [
        (("done", {}), "completed"),
        (("cancel", {"type": "cancelled"}), "interrupted-by-user"),
        (("apperror", {"type": "x"}), "errored"),
    ],
)
def test_stream_end_after_a_terminal_event_keeps_the_logical_state(first: tuple, state: str) -> None:
    summary = summary_of(journal(("token", {"text": "a"}), first, ("stream_end", {"session_id": SID})))
    assert summary["terminal_state"] == state
    assert summary["last_event"] == "stream_end" and summary["last_seq"] == 3
    assert summary["last_event_id"] == f"{RUN}:3"


def test_authoritative_terminal_event_is_the_last_non_stream_end() -> None:
    events = parse_journal_bytes(
        journal(("apperror", {"type": "x"}), ("done", {}), ("stream_end", {}))
    ).events
    assert authoritative_terminal_event(events)["event"] == "done"
    only_ends = parse_journal_bytes(journal(("stream_end", {}), ("stream_end", {}))).events
    assert authoritative_terminal_event(only_ends)["seq"] == 2
    assert authoritative_terminal_event(parse_journal_bytes(journal(("token", {"text": "a"}))).events) is None


def test_event_ownership_needs_integer_seq_and_matching_ids() -> None:
    (event,) = parse_journal_bytes(record(4, "done")).events
    assert event_owns_run(event, SID, RUN)
    assert not event_owns_run(event, "other", RUN)
    assert not event_owns_run(event, SID, "other")
    for seq in ("4", True, 0, 4.0):
        assert not event_owns_run({**event, "seq": seq}, SID, RUN)
    assert not event_owns_run({**event, "event_id": f"{RUN}:5"}, SID, RUN)


# ---------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_reader_never_fails_except_as_unreadable(data: bytes) -> None:
    try:
        parsed = parse_journal_bytes(data)
    except JournalUnreadable:
        return
    assert all(isinstance(e, dict) for e in parsed.events)
    run_summary(SID, RUN, parsed.events)


_lines = st.lists(
    st.one_of(
        st.builds(lambda t: record(1, "token", {"text": t}), st.text(max_size=20)),
        st.sampled_from([b"\n", b"garbage\n", b"[]\n", b"{}\n", b'{"terminal": true}\n', b"\r\n"]),
        st.text(max_size=15).map(lambda t: t.encode("utf-8")),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(_lines)
def test_summary_never_fails_on_arbitrary_lines(lines: list[bytes]) -> None:
    try:
        parsed = parse_journal_bytes(b"".join(lines))
    except JournalUnreadable:
        return
    summary = run_summary(SID, RUN, parsed.events)
    assert summary["event_count"] == len(parsed.events)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n",
        b'{"seq": 1}\n',
        b'{"seq": 1}\nnot json\n[1]\n\n{"seq": 2}\n"x"\n',
        b'{"a": 1}\r\n{"b": "\xe2\x80\xa8"}\n{"c"',
        b'{"n": 123456789012345678901234567890}\nnull\n',
    ],
)
def test_dropped_lines_counts_what_parse_skips(data):
    from inspector.store.journal import dropped_lines, parse_journal_bytes

    malformed = parse_journal_bytes(data).malformed
    assert dropped_lines(data) == (len(malformed), malformed[0]["line"] if malformed else None)


def test_dropped_lines_refuses_invalid_utf8_like_parse():
    from inspector.store.journal import JournalUnreadable, dropped_lines

    with pytest.raises(JournalUnreadable):
        dropped_lines(b'{"a": 1}\n\xff\n')


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 64])
def test_reading_in_pieces_gives_the_lines_of_the_whole_file(block, monkeypatch):
    from inspector.store import journal as journal_mod

    data = (
        '{"seq": 1}\r\n{"seq": 2, "t": "a\u2028b"}\n\n{"x": "\u00e9\u2603"}\rnot json\x0c{"seq": 3}\n'
        '{"n": 123456789012345678901234567890}\x85[1]\n{"seq": 4}'
    ).encode()
    whole = journal_mod.parse_journal_bytes(data)
    monkeypatch.setattr(journal_mod, "BLOCK_BYTES", block)
    assert journal_mod.parse_journal_bytes(data) == whole
    bad = data[:30] + b"\xff" + data[30:]
    monkeypatch.setattr(journal_mod, "BLOCK_BYTES", 1 << 22)
    with pytest.raises(journal_mod.JournalUnreadable) as expected:
        journal_mod.parse_journal_bytes(bad)
    monkeypatch.setattr(journal_mod, "BLOCK_BYTES", block)
    with pytest.raises(journal_mod.JournalUnreadable) as got:
        journal_mod.parse_journal_bytes(bad)
    assert str(got.value) == str(expected.value)
