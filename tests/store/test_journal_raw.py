"""The raw journal view: every physical line, hermes' verdict on it, and the anomalies."""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.store import journal_raw
from inspector.store.journal import JournalUnreadable, parse_journal_bytes
from inspector.store.journal_raw import RawJournal, index_journal, list_session_runs, torn_line_numbers

SID = "a1b2c3d4e5f6"
RUN = "7c8b4108d52b4aba9af362d3a54f47ac"


def rec(
    seq,
    event: str = "token",
    payload: dict | None = None,
    *,
    sid: str = SID,
    run: str = RUN,
    event_id: str | None = None,
) -> bytes:
    """A journal line as hermes' append_run_event writes it (terminal fields kept simple)."""
    terminal = event in ("done", "stream_end")
    obj = {
        "version": 1,
        "event_id": event_id or f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": sid,
        "event": event,
        "type": event,
        "created_at": 1.0,
        "terminal": terminal,
        "terminal_state": "completed" if terminal else None,
        "payload": payload or {"text": "t"},
    }
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def raw(data: bytes) -> RawJournal:
    return RawJournal(data, session_id=SID, run_id=RUN)


def test_index_gives_offsets_lengths_and_line_numbers() -> None:
    lines = [rec(1), b"junk\n", rec(2)]
    journal = raw(b"".join(lines))
    assert len(journal) == 3
    offset = 0
    for i, line in enumerate(journal):
        assert (line.index, line.number, line.offset, line.length) == (i, i + 1, offset, len(lines[i]))
        assert line.data == lines[i][:-1]
        offset += len(lines[i])
    assert journal.line(-1).number == 3
    with pytest.raises(IndexError):
        journal.line(3)


def test_clean_journal_has_events_and_no_anomalies() -> None:
    journal = raw(rec(1) + rec(2) + rec(3, "done"))
    assert all(line.is_event and not line.anomalies for line in journal)
    assert [line.value["seq"] for line in journal] == [1, 2, 3]
    assert journal.stats() == {"lines": 3, "events": 3, "dropped": 0, "torn": 0, "anomalous": 0}


def test_empty_file_has_no_lines() -> None:
    assert len(raw(b"")) == 0 and raw(b"").hermes_view().events == []


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"not json\n", "not JSON"),
        (b"[1, 2]\n", "JSON but not an object (an array)"),
        (b"   \n", "blank line"),
        (b'"text"\n', "JSON but not an object (a string)"),
    ],
)
def test_drop_reasons(line: bytes, reason: str) -> None:
    journal = raw(rec(1) + line + rec(2))
    assert journal.line(1).dropped.startswith(reason)
    assert journal.line(0).is_event and journal.line(2).is_event


def test_torn_last_line_without_newline() -> None:
    journal = raw(rec(1) + rec(2)[:40])
    last = journal.line(1)
    assert "torn last line without newline" in last.dropped
    assert "no newline at end of file" in last.anomalies


def test_record_with_u2028_is_torn_by_splitlines() -> None:
    journal = raw(rec(1) + rec(2, payload={"text": "a\u2028b"}) + rec(3))
    torn = journal.line(1)
    # in words (the window shows this reason): no "splitlines", the character named for the developer
    assert torn.dropped.startswith(
        "split apart by an invisible line-break character (U+2028) that hermes "
        "reads as a line end, into 2 pieces"
    )
    assert "splitlines" not in torn.dropped
    assert torn.value["payload"]["text"] == "a\u2028b"  # the developer still sees the record
    assert torn.hermes_events == ()
    assert journal.stats()["torn"] == 1


def test_torn_fragments_that_parse_are_what_hermes_reads() -> None:
    journal = raw(b'{"a": 1}\x0b{"b": 2}\n')
    line = journal.line(0)
    assert "2 read as events" in line.dropped
    assert list(line.hermes_events) == parse_journal_bytes(journal.data).events == [{"a": 1}, {"b": 2}]


def test_invalid_utf8_marks_every_line_and_the_guilty_one() -> None:
    bad = rec(2, payload={"text": "é"})
    data = rec(1) + bad[: bad.index("é".encode()) + 1] + b"\n" + rec(3)
    journal = raw(data)
    assert journal.unreadable and journal.hermes_view() is None
    assert all(not line.is_event for line in journal)
    assert "another line holds" in journal.line(0).dropped
    assert "this line holds the invalid byte" in journal.line(1).dropped


def test_crlf_is_an_anomaly_but_hermes_reads_it() -> None:
    journal = raw((rec(1) + rec(2)).replace(b"\n", b"\r\n"))
    assert all(line.is_event for line in journal)
    assert all("CRLF line end" in line.anomalies for line in journal)


def test_seq_anomalies() -> None:
    journal = raw(rec(1) + rec("2") + rec(3) + rec(3) + rec(7))
    assert "seq is a string ('2')" in journal.line(1).anomalies
    assert not any("duplicate" in a for a in journal.line(2).anomalies)
    assert "duplicate seq 3 (first on line 3)" in journal.line(3).anomalies
    assert any("does not follow seq 3 (expected 4)" in a for a in journal.line(3).anomalies)
    assert any("seq 7 does not follow seq 3" in a for a in journal.line(4).anomalies)


def test_seq_must_start_at_one() -> None:
    assert any("expected 1" in a for a in raw(rec(2)).line(0).anomalies)


def test_ids_that_do_not_match_the_path() -> None:
    journal = raw(rec(1, sid="other") + rec(2, run="elsewhere") + rec(3, event_id="x:3"))
    assert any("session_id 'other'" in a for a in journal.line(0).anomalies)
    assert any("run_id 'elsewhere'" in a for a in journal.line(1).anomalies)
    assert any("event_id" in a for a in journal.line(2).anomalies)


def test_anomalies_do_not_depend_on_reading_order() -> None:
    data = rec(1) + rec(1) + b"junk\n" + rec(5)
    forward = [raw(data).line(i).anomalies for i in range(4)]
    backward_journal = raw(data)
    backward = [backward_journal.line(i).anomalies for i in reversed(range(4))][::-1]
    assert forward == backward


def test_torn_line_numbers() -> None:
    assert torn_line_numbers("a\nb\u2028c\nd\r\ne\x0bf\u2029g\n") == [2, 4]
    assert torn_line_numbers("a\r\nb\r\n") == []
    assert torn_line_numbers("a\rb\n") == [1]


def test_list_session_runs(tmp_path: Path) -> None:
    folder = tmp_path / "_run_journal" / SID
    folder.mkdir(parents=True)
    (folder / f"{RUN}.jsonl").write_bytes(rec(1) + rec(2, "done"))
    (folder / "bbbb.jsonl").write_bytes(b"\xff\n")
    (folder / "notes.txt").write_text("ignored")
    runs = list_session_runs(tmp_path, SID)
    assert [r.run_id for r in runs] == [RUN, "bbbb"]
    assert runs[0].summary["terminal_state"] == "completed" and runs[0].summary["event_count"] == 2
    assert runs[1].summary is None and "UTF-8" in runs[1].error
    assert list_session_runs(tmp_path, "nobody") == []


def test_from_path_takes_ids_from_the_path(tmp_path: Path) -> None:
    path = tmp_path / "_run_journal" / SID / f"{RUN}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(rec(1, sid="other"))
    journal = RawJournal.from_path(path)
    assert (journal.session_id, journal.run_id) == (SID, RUN)
    assert any("does not match the folder" in a for a in journal.line(0).anomalies)


def test_200k_event_journal_opens_without_parsing_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: opening a journal and reading its first lines parses only the lines up to them (the speed of a
    200,000-event journal is the benchmark's business, not a unit test's: bench/); the last line is
    still reachable and right."""
    one = rec(1).decode()
    data = "".join(
        one.replace(f"{RUN}:1", f"{RUN}:{i}").replace('"seq":1', f'"seq":{i}') for i in range(1, 200_001)
    ).encode()
    parsed: list[bytes] = []
    real_parse = journal_raw._parse

    def counting_parse(body: bytes):
        parsed.append(body)
        return real_parse(body)

    monkeypatch.setattr(journal_raw, "_parse", counting_parse)
    journal = raw(data)
    first, tenth = journal.line(0), journal.line(9)
    assert len(journal) == 200_000 and first.is_event and not tenth.anomalies
    # line 9 needs the seq order of the lines before it, and nothing after it
    assert len(parsed) <= 10 and journal.indexed is None, f"opening parsed {len(parsed)} lines"
    last = journal.line(199_999)
    assert last.value["seq"] == 200_000 and not last.anomalies


# ---------------------------------------------------------------- properties

_pieces = st.one_of(
    st.builds(
        lambda s, t: rec(s, payload={"text": t}), st.integers(0, 5) | st.just("3"), st.text(max_size=8)
    ),
    st.sampled_from(
        [
            b"\n",
            b"\r\n",
            b"junk\n",
            b"[]\n",
            b"{}\n",
            b"\xff",
            b"\xe2\x80\xa8",
            b"\x0b",
            b"\r",
            b'{"a":1}\x0b{"b":2}\n',
        ]
    ),
    st.binary(max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=10))
def test_raw_view_agrees_with_hermes_reader(pieces: list[bytes]) -> None:
    data = b"".join(pieces)
    journal = raw(data)
    lines = list(journal)
    assert sum(line.length for line in lines) == len(data)
    try:
        hermes = parse_journal_bytes(data).events
    except JournalUnreadable:
        assert journal.unreadable and not any(line.is_event or line.hermes_events for line in lines)
        return
    assert [event for line in lines for event in line.hermes_events] == hermes
    assert all(line.hermes_events == (line.value,) for line in lines if line.is_event)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_raw_view_never_fails(data: bytes) -> None:
    journal = raw(data)
    for i in range(len(journal)):
        journal.line(i)
    journal.stats()


# ---------------------------------------------------------------- the whole-file index


def _lines(journal: RawJournal, order: list[int] | None = None) -> list[tuple]:
    order = list(range(len(journal))) if order is None else order
    seen = {i: journal.line(i) for i in order}
    return [
        (
            seen[i].offset,
            seen[i].length,
            seen[i].data,
            seen[i].dropped,
            seen[i].anomalies,
            seen[i].parse_error,
            repr(seen[i].value),
            repr(seen[i].hermes_events),
        )
        for i in range(len(journal))
    ]


_index_pieces = st.one_of(
    _pieces,
    st.builds(lambda s: rec(s, sid="other"), st.integers(1, 4)),
    st.builds(lambda s: rec(s, run="elsewhere"), st.integers(1, 4)),
    st.builds(lambda s: rec(s, event_id="x"), st.integers(1, 4)),
    st.builds(lambda s: rec(s, payload=[1]), st.integers(1, 4)),  # type: ignore[arg-type]
    st.builds(
        lambda s, v: rec(s, payload={"n": v}), st.integers(1, 4), st.sampled_from([2**70, -(2**65), 10**19])
    ),
    st.sampled_from(
        [
            rec(None),
            rec(True),
            rec(1.0),
            rec(2**70),
            rec(3, "done"),
            b'{"seq":1}\r\n',
            b'{"x":1e400}\n',
            b'{"x":NaN}\n',
            b'"\\ud800"\n',
            b'{"a":"\\ud800"}\n',
            b"\xc2\x85",
            b"\xc3\xa9\n",
            b" \n",
        ]
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_index_pieces, max_size=12), st.booleans(), st.randoms(use_true_random=False))
def test_the_index_gives_every_line_exactly_what_reading_it_alone_gives(
    pieces: list[bytes], named: bool, rnd
) -> None:
    data = b"".join(pieces)
    ids = {"session_id": SID, "run_id": RUN} if named else {}
    lazy = RawJournal(data, **ids)
    order = list(range(len(lazy)))
    rnd.shuffle(order)  # lazily, the seq checks of a line are worked out from the lines above it
    events: list[tuple[int, dict]] = []
    index = index_journal(data, events=events, **ids)
    indexed = RawJournal(data, index=index, **ids)
    assert (indexed.unreadable, indexed.bad_byte_offset) == (lazy.unreadable, lazy.bad_byte_offset)
    assert _lines(indexed) == _lines(lazy, order)
    lines = list(lazy)
    assert index.stats == {
        "lines": len(lines),
        "events": sum(line.is_event for line in lines),
        "dropped": sum(not line.is_event for line in lines),
        "torn": sum(bool(line.dropped and line.dropped.startswith("split apart")) for line in lines),
        "anomalous": sum(bool(line.anomalies) for line in lines),
    }
    assert repr(events) == repr([(line.index, ev) for line in lines for ev in line.hermes_events])
    times = [
        t
        for _, ev in events
        if isinstance(t := ev.get("created_at"), (int, float)) and not isinstance(t, bool) and t > 0
    ]
    assert index.last_time == max(times, default=0.0)
    # the filters' per-line facts: the event each line is read as, and whether it is dropped or noted
    names = [index.event_names[k - 1] if k else None for k in index.kinds]
    assert names == [_event_name(line) if line.is_event else None for line in lines]
    assert list(index.flagged) == [line.index for line in lines if line.dropped or line.anomalies]


def _event_name(line) -> str:
    name = line.value.get("event")
    return name if isinstance(name, str) else "(no event name)" if name is None else index_name_not_text(name)


def index_name_not_text(name) -> str:
    kind = (
        "a number"
        if isinstance(name, (int, float)) and not isinstance(name, bool)
        else (
            "a boolean" if isinstance(name, bool) else "an array" if isinstance(name, list) else "an object"
        )
    )
    return f"(event name not text: {kind})"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "a",
                "é",
                "\u2028",
                "\u2029",
                "\x85",
                "\x0b",
                "\x0c",
                "\x1c",
                "\x1d",
                "\x1e",
                "\r",
                "\r\n",
                "\n",
                "€",
                "\u2027",
                "\u202a",
            ]
        ),
        max_size=30,
    )
)
def test_torn_lines_are_found_in_the_bytes_as_in_the_text(chars: list[str]) -> None:
    text = "".join(chars)
    journal = RawJournal(text.encode("utf-8"))
    assert sorted(journal._torn) == [n - 1 for n in torn_line_numbers(text)]


def test_numbers_orjson_would_round_and_deep_lines_are_read_by_the_stdlib() -> None:
    deep = b'{"seq":2,"payload":' + b"[" * 950 + b"]" * 950 + b"}\n"
    data = rec(1, payload={"n": 123456789012345678901234567890}) + deep
    for journal in (RawJournal(data), RawJournal(data, index=index_journal(data))):
        assert journal.line(0).value["payload"]["n"] == 123456789012345678901234567890
        first = journal.line(1)  # read from a fresh stack: the same from any caller
        assert first.dropped is None and first.value["seq"] == 2
        value, levels = first.value["payload"], 1
        while value:  # walked, not compared: comparing 950 levels recurses like the parse
            (value,) = value
            levels += 1
        assert value == [] and levels == 950


def test_an_invalid_byte_late_in_the_file_makes_every_line_dropped() -> None:
    data = rec(1) + rec(2) + b'{"bad": "\xff"}\n' + rec(3).replace(b"\n", b"\r\n")
    index = index_journal(data)
    assert index.unreadable and index.bad_byte_offset == data.index(b"\xff")
    assert index.stats == {"lines": 4, "events": 0, "dropped": 4, "torn": 0, "anomalous": 1}
    journal = RawJournal(data, index=index)
    assert "this line holds the invalid byte" in journal.line(2).dropped
    assert journal.line(3).anomalies == ("CRLF line end",)


def test_journal_filters_pick_lines_by_event_name_and_by_hermes_verdict() -> None:
    """The journal view's filters: an event type, "dropped or noted lines only", or both."""
    data = (
        rec(1, "token")
        + rec(2, "tool")
        + b"not json\n"
        + rec(3, "token").replace(b"\n", b"\r\n")
        + rec(5, "tool")
        + rec(6, "done")
    )
    index = index_journal(data, session_id=SID, run_id=RUN)
    assert index.event_counts() == [("token", 2), ("tool", 2), ("done", 1)]
    assert index.filter_lines() is None  # nothing filtered: every line shown
    assert list(index.filter_lines("token")) == [0, 3]
    assert list(index.filter_lines("tool")) == [1, 4]
    # line 3 (not JSON) is dropped, line 4 has a CRLF, line 5 skips seq 4
    assert list(index.filter_lines(flagged_only=True)) == [2, 3, 4]
    assert list(index.filter_lines("tool", flagged_only=True)) == [4]
    assert list(index.filter_lines("no such event")) == []


def test_an_unreadable_journal_filters_as_all_dropped() -> None:
    data = rec(1) + b'{"bad": "\xff"}\n'
    index = index_journal(data)
    assert index.event_counts() == []
    assert list(index.filter_lines(flagged_only=True)) == [0, 1]


def test_more_event_names_than_one_byte_tells_apart_share_one_filter_entry() -> None:
    data = b"".join(rec(i, f"e{i}") for i in range(1, 301))
    index = index_journal(data)
    assert len(index.event_names) == 255 and index.event_names[-1] == "(other event names)"
    assert dict(index.event_counts())["(other event names)"] == 300 - 254
    assert list(index.filter_lines("e7")) == [6]


def test_an_index_is_small_and_only_fits_its_own_bytes() -> None:
    data = b"".join(rec(i) for i in range(1, 10_001)) + rec(7)
    index = index_journal(data, session_id=SID, run_id=RUN, digest=True)
    assert index.stats["anomalous"] == 1 and list(index.seq_notes) == [10_000]
    assert index.digest == hashlib.sha1(data).digest()
    assert len(pickle.dumps(index)) < 100_000  # offsets and the few notes: no bytes, no parsed records
    with pytest.raises(ValueError):
        RawJournal(data + rec(8), index=index)
    journal = RawJournal(data, session_id=SID, run_id=RUN, index=index)
    assert journal.stats() == index.stats and journal.indexed is index
    assert "duplicate seq 7 (first on line 7)" in journal.line(10_000).anomalies
