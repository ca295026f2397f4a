"""Search where lost chats live (issue 16): sidecar titles and messages, .bak files, every
profile's state.db, run journal text and run ids; each hit names the session, where it matched
and a snippet. Bounded and read-only: FIFOs are not opened, big files are skipped in words."""

from __future__ import annotations

import io
import json
import os
import sqlite3
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from inspector import cli
from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.search import (
    WHERE_BAK,
    WHERE_DB,
    WHERE_DB_TITLE,
    WHERE_JOURNAL,
    WHERE_RUN_ID,
    WHERE_SIDECAR,
    WHERE_SIDECAR_RAW,
    WHERE_TITLE,
    search_home,
    snippet,
)

NOW = 1_780_000_000.25


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return build_demo_home(tmp_path_factory.mktemp("demo") / "home", now=NOW)


def _home(demo):
    return locate_home(str(demo.home), None, None)


def _tree_state(root: Path) -> dict:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_corrupt_sidecars_chat_is_found_in_state_db_and_in_its_raw_text(demo):
    sid = demo.sessions["corrupt"]
    result = search_home(_home(demo), "release notes")
    found = {(h.session_id, h.where) for h in result.hits}
    assert (sid, WHERE_SIDECAR_RAW) in found  # the unreadable sidecar's text
    assert (sid, WHERE_DB_TITLE) in found and (sid, WHERE_DB) in found  # where its messages still live
    db_hit = next(h for h in result.hits if h.session_id == sid and h.where == WHERE_DB)
    assert "release notes" in db_hit.snippet.casefold()
    assert db_hit.detail.startswith("profile default")


def test_a_run_id_is_one_hit_not_every_journal_line(demo):
    sid = demo.sessions["lost_response"]
    run_id = demo.stream_ids["lost_response"]
    result = search_home(_home(demo), run_id[:10].upper())  # case does not matter
    assert [(h.session_id, h.where, h.snippet) for h in result.hits] == [(sid, WHERE_RUN_ID, run_id)]


def test_journal_text_is_searched_and_names_the_line_and_event(demo):
    sid = demo.sessions["lost_response"]
    journal = next((demo.home / "webui" / "sessions" / "_run_journal" / sid).glob("*.jsonl"))
    words = None
    for line in journal.read_text().splitlines():
        event = json.loads(line)
        text = event["payload"].get("text") if isinstance(event.get("payload"), dict) else None
        if isinstance(text, str) and len(text.split()) >= 3:
            words = " ".join(text.split()[:3])
            break
    assert words, "the demo's lost answer has text in its journal"
    hits = [h for h in search_home(_home(demo), words).hits if h.where == WHERE_JOURNAL]
    assert hits and hits[0].session_id == sid
    assert hits[0].detail.startswith("line ") and words.casefold() in hits[0].snippet.casefold()


def test_sidecar_title_messages_and_bak_each_say_where(tmp_path):
    home = build_demo_home(tmp_path / "home", now=NOW).home
    sessions = home / "webui" / "sessions"
    chat = {
        "session_id": "abc123",
        "title": "Plan the Zebra trip",
        "messages": [
            {"role": "user", "content": "Where do zebras sleep?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Zebras sleep standing."}]},
        ],
    }
    (sessions / "abc123.json").write_text(json.dumps(chat))
    (sessions / "abc123.json.bak").write_text(
        json.dumps({**chat, "title": "old", "messages": chat["messages"][:1]})
    )
    result = search_home(locate_home(str(home), None, None), "zebra")
    got = [(h.session_id, h.where, h.detail) for h in result.hits if h.session_id == "abc123"]
    assert got == [
        ("abc123", WHERE_TITLE, ""),
        ("abc123", WHERE_SIDECAR, "message 1 (user)"),
        ("abc123", WHERE_SIDECAR, "message 2 (assistant)"),
        ("abc123", WHERE_BAK, "message 1 (user)"),
    ]


def test_search_reads_only(demo):
    before = _tree_state(demo.home)
    search_home(_home(demo), "the")
    assert _tree_state(demo.home) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_like_a_sidecar_or_journal_never_blocks(tmp_path):
    home = build_demo_home(tmp_path / "home", now=NOW).home
    sessions = home / "webui" / "sessions"
    os.mkfifo(sessions / "fifo01.json")
    (sessions / "_run_journal" / "fifo01").mkdir(parents=True)
    os.mkfifo(sessions / "_run_journal" / "fifo01" / "run1.jsonl")
    result = search_home(locate_home(str(home), None, None), "release")
    assert any(s.startswith("fifo01.json: not searched (not a regular file") for s in result.skipped)
    assert any(s.startswith("fifo01/run1.jsonl: not a regular file") for s in result.skipped)


def test_a_sidecar_over_the_size_cap_is_skipped_in_words(demo):
    result = search_home(_home(demo), "release", max_file_bytes=200)
    assert any("larger than the search reads" in s for s in result.skipped)


def test_hits_stop_at_the_limit_and_say_so(demo):
    result = search_home(_home(demo), "e", max_hits=5)
    assert len(result.hits) == 5 and result.truncated


def test_an_unreadable_state_db_is_reported_not_fatal(tmp_path):
    home = build_demo_home(tmp_path / "home", now=NOW).home
    (home / "state.db").write_bytes(b"this is not a database" * 100)
    for side in ("-wal", "-shm"):
        (home / f"state.db{side}").unlink(missing_ok=True)
    result = search_home(locate_home(str(home), None, None), "release")
    assert any(s.startswith("state.db of profile default: not searched") for s in result.skipped)
    assert any(h.where == WHERE_SIDECAR_RAW for h in result.hits)  # the rest is still searched


def test_like_wildcards_in_the_query_are_literal(tmp_path):
    home = build_demo_home(tmp_path / "home", now=NOW).home
    with sqlite3.connect(home / "state.db") as conn:
        hits_all = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    assert hits_all > 0
    result = search_home(locate_home(str(home), None, None), "%_%")
    assert [h for h in result.hits if h.where == WHERE_DB] == []


def test_empty_query_is_refused(demo):
    with pytest.raises(ValueError):
        search_home(_home(demo), "   ")


def test_snippet_centres_the_match_and_marks_cuts():
    text = "a " * 100 + "needle" + " b" * 100
    s = snippet(text, "needle", width=30)
    assert "needle" in s and s.startswith("…") and s.endswith("…") and len(s) == 32


def test_cli_search_json_gives_session_where_snippet(demo, capsys):
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["search", "--home", str(demo.home), "release notes", "--json"])
    assert code == 0
    data = json.loads(out.getvalue())
    assert data["query"] == "release notes"
    assert {"session_id", "where", "snippet"} <= set(data["hits"][0])
    assert demo.sessions["corrupt"] in {h["session_id"] for h in data["hits"]}


def test_cli_search_text_lists_hits_and_a_count(demo):
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["search", "--home", str(demo.home), demo.stream_ids["lost_response"]])
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:2] == [demo.sessions["lost_response"], "run"]
    assert lines[-1] == "1 match(es) in 1 session(s)."


def test_cli_search_refuses_empty_text(demo, capsys):
    assert cli.main(["search", "--home", str(demo.home), " "]) == 2
    assert "nothing to search for" in capsys.readouterr().err


def test_a_journal_hermes_cannot_read_is_searched_up_to_its_bad_byte_and_says_so(tmp_path):
    home = build_demo_home(tmp_path / "home", now=NOW).home
    folder = home / "webui" / "sessions" / "_run_journal" / "bad001"
    folder.mkdir(parents=True)
    (folder / "run1.jsonl").write_bytes(
        b'{"event":"token","payload":{"text":"the lost kiwi answer"}}\n' + b"x" * (5 << 20) + b"\n\xff\n"
    )
    result = search_home(locate_home(str(home), None, None), "kiwi answer")
    assert [(h.session_id, h.where, h.detail) for h in result.hits] == [
        ("bad001", WHERE_JOURNAL, "line 1 (token)")
    ]
    assert any(
        s.startswith("bad001/run1.jsonl: searched only up to where it stops being readable")
        for s in result.skipped
    )
