"""A run journal's open-run facts from its end (``open_run_facts_of_tail``, read by
``derive_from_tail``): the list's first open reads the last page of each run journal, not the
journal, where that page decides. Rule pinned: whatever the end of a journal is and however short
the piece given, the answer is the whole journal's ``open_run_facts`` or None (the whole journal
then decides); hermes' journals, whose terminal record is the last line, are decided by their end.
"""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path

import pytest

from inspector import load, portable
from inspector.store import files
from inspector.store import scan as scan_mod
from inspector.store.files import NotARegularFile, TooLargeToLoad, derive_from_tail
from inspector.store.journal import OPEN_RUN_TAIL_BYTES, open_run_facts, open_run_facts_of_tail
from tests.repair.test_from_journal import _journal_line
from tests.store.test_files import grow_after_fstat

SID, RUN = "s1", "r1"
TOKEN = _journal_line(SID, RUN, 1, "token", {"text": "partial"}, 1.0)
TOOL = _journal_line(SID, RUN, 2, "tool", {"name": "x", "args": {"terminal": True}}, 2.0)  # flag, no end
DONE = _journal_line(SID, RUN, 3, "done", {}, 3.0)
METERING = _journal_line(SID, RUN, 4, "metering", {"tokens": 3}, 4.0)
SPACED_DONE = DONE.replace('"terminal":true', '"terminal": true')
CUT_DONE = DONE.replace("\n", "\x0c\n")  # a form feed: hermes' reader cuts the line there
GARBLED_DONE = DONE.replace("}\n", "}X\n")  # bytes after the object: no record


def _tail(text: str, n: int) -> dict | None:
    data = text.encode("utf-8")
    return open_run_facts_of_tail(data[-n:])


def test_a_journal_ending_in_its_terminal_record_is_decided_by_its_last_line():
    text = TOKEN * 50 + DONE
    assert open_run_facts(text.encode())["open"] is False
    assert _tail(text, len(DONE) + 1) == {"open": False}  # the newline before the line is in the piece
    assert _tail(text, OPEN_RUN_TAIL_BYTES) == {"open": False}


def test_a_line_that_may_begin_before_the_piece_does_not_decide():
    """The piece starts exactly at the terminal line: it may be the end of a longer line."""
    text = TOKEN * 50 + DONE
    assert _tail(text, len(DONE)) is None
    assert _tail(text, len(DONE) - 5) is None


def test_lines_after_the_terminal_record_and_flag_lines_that_are_no_end_are_passed_over():
    assert _tail(TOKEN * 9 + DONE + TOOL + METERING, len(DONE + TOOL + METERING) + 1) == {"open": False}
    # the flag line that is no end lies whole in the piece, the terminal record does not
    assert _tail(TOKEN * 9 + DONE + TOOL, len(TOOL) + 1) is None


def test_what_the_whole_journal_decides_otherwise_is_left_to_it():
    for ending in (CUT_DONE, GARBLED_DONE, SPACED_DONE, METERING, TOKEN):
        text = TOKEN * 9 + ending
        assert _tail(text, len(text) - 1) is None, ending
    # a cut line newer than the terminal record: hermes' reader decides on the whole journal
    text = TOKEN + DONE + CUT_DONE.replace('"seq":3', '"seq":5')
    assert _tail(text, len(text) - 1) is None
    assert open_run_facts(text.encode())["open"] is False


def _random_journal(rng: random.Random) -> bytes:
    pieces = [
        TOKEN,
        TOOL,
        DONE,
        METERING,
        SPACED_DONE,
        CUT_DONE,
        GARBLED_DONE,
        '"terminal":true\n',
        "\n",
        "{}\n",
    ]
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
    if rng.random() < 0.3:
        text = text.replace("\n", "\r\n")
    if text and rng.random() < 0.3:
        text = text[: rng.randrange(len(text))]  # torn at the end
    data = text.encode("utf-8")
    if data and rng.random() < 0.1:
        data += b"\xff" + DONE.encode()  # a byte no UTF-8 holds, in a line of its own or not
    return data


def test_any_end_of_any_journal_gives_the_whole_journals_answer_or_none():
    rng = random.Random(18)
    decided = 0
    for _ in range(1500):
        data = _random_journal(rng)
        whole = open_run_facts(data)
        for n in range(1, len(data) + 1):
            got = open_run_facts_of_tail(data[-n:])
            if got is not None:
                decided += 1
                assert got == whole, (data, n)
    assert decided > 1000  # the test reaches the answers, not only the Nones


def test_derive_from_tail_reads_the_end_where_it_decides_and_the_whole_otherwise(tmp_path, monkeypatch):
    rng = random.Random(4)
    path = tmp_path / "run.jsonl"
    whole_reads = []
    real = files._read_to_end
    monkeypatch.setattr(files, "_read_to_end", lambda *a: whole_reads.append(1) or real(*a))
    for _ in range(300):
        data = _random_journal(rng)
        path.write_bytes(data)
        for n in (1, 7, 60, 300, 4096):
            whole_reads.clear()
            facts, st = derive_from_tail(path, n, open_run_facts_of_tail, open_run_facts)
            assert facts == open_run_facts(data)
            assert (st.st_size, st.st_ino) == (len(data), path.stat().st_ino)
            from_end = len(data) > n and open_run_facts_of_tail(data[-n:]) is not None
            assert whole_reads == ([] if from_end else [1])


def test_a_file_no_longer_than_the_piece_is_read_whole_and_given_to_derive(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"0123456789")
    calls = []
    got, _ = derive_from_tail(path, 10, lambda b: calls.append(b) or "end", lambda b: ("whole", b))
    assert got == ("whole", b"0123456789") and calls == []
    got, _ = derive_from_tail(path, 9, lambda b: calls.append(b) or "end", lambda b: ("whole", b))
    assert got == "end" and calls == [b"123456789"]
    got, _ = derive_from_tail(path, 9, lambda b: calls.append(b) and None, lambda b: ("whole", b))
    assert got == ("whole", b"0123456789")


def test_the_whole_read_after_the_end_starts_at_the_first_byte_where_pread_is_a_seek(tmp_path, monkeypatch):
    monkeypatch.setattr(portable, "pread", portable.pread_fallback)
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"abcdefghij")
    got, _ = derive_from_tail(path, 3, lambda b: None, lambda b: b)
    assert got == b"abcdefghij"


def test_a_file_that_shrank_since_its_stat_is_read_whole(tmp_path, monkeypatch):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"abcdefghij")
    monkeypatch.setattr(portable, "pread", lambda fd, n, at: b"ij")  # fewer bytes than asked
    calls = []
    got, _ = derive_from_tail(path, 3, lambda b: calls.append(b) or "end", lambda b: b)
    assert got == b"abcdefghij" and calls == []


def test_a_file_over_the_limit_is_refused_before_any_read(tmp_path, monkeypatch):
    path = tmp_path / "run.jsonl"
    with open(path, "wb") as fh:
        fh.truncate(1000)  # sparse
    with monkeypatch.context() as m, pytest.raises(TooLargeToLoad) as got:
        m.setattr(portable, "pread", lambda *a: pytest.fail("read"))
        m.setattr(files, "_read_to_end", lambda *a: pytest.fail("read"))
        derive_from_tail(path, 10, lambda b: "end", lambda b: b, max_bytes=999)
    assert got.value.errno == errno.EFBIG and (got.value.size, got.value.filename) == (1000, str(path))
    assert derive_from_tail(path, 2000, lambda b: "end", len, max_bytes=1000)[0] == 1000
    assert derive_from_tail(path, 10, lambda b: None, len, max_bytes=None)[0] == 1000


def test_what_is_not_a_regular_file_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError):
        derive_from_tail(tmp_path / "gone.jsonl", 10, lambda b: "end", len)
    with pytest.raises(NotARegularFile):
        derive_from_tail(tmp_path, 10, lambda b: "end", len)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.jsonl")
        with pytest.raises(NotARegularFile):
            derive_from_tail(tmp_path / "fifo.jsonl", 10, lambda b: "end", len)


def _journals(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    session_dir = tmp_path / "sessions"
    folder = session_dir / "_run_journal" / "abc123"
    folder.mkdir(parents=True)
    paths = {}
    for name, text in (("ended", TOKEN * 200 + DONE), ("open", TOKEN * 200), ("short", TOKEN + DONE)):
        path = folder / f"{name}.jsonl"
        path.write_text(text, encoding="utf-8")
        paths[name] = str(path)
    return session_dir, paths


def test_the_lists_open_run_facts_read_only_the_end_of_an_ended_journal(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    session_dir, paths = _journals(tmp_path)
    whole = []
    real = files._read_to_end
    monkeypatch.setattr(
        files, "_read_to_end", lambda fd, st, p, limit: whole.append(str(p)) or real(fd, st, p, limit)
    )
    cache = scan_mod.FactCache(None)
    load._open_run_facts_of_every_journal(session_dir, cache)
    assert sorted(whole) == sorted([paths["open"], paths["short"]])  # the ended one: its last page
    entries = cache.entries[scan_mod.OPEN_RUN]
    assert {name: entries[path][1] for name, path in paths.items()} == {
        "ended": {"open": False},
        "open": {"open": True},
        "short": {"open": False},
    }
    assert all(entries[path][0] == scan_mod.stat_key(os.stat(path)) for path in paths.values())


def test_a_file_that_grows_past_the_limit_while_read_whole_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"a" * 20)
    grow_after_fstat(monkeypatch, path, b"b" * 100)
    with pytest.raises(TooLargeToLoad) as got:
        derive_from_tail(path, 5, lambda b: None, len, max_bytes=50)
    assert (got.value.size, got.value.limit, got.value.filename) == (51, 50, str(path))
