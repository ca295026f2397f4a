"""Transcript export for support tickets: Markdown that cannot be hijacked, and JSON."""

from __future__ import annotations

import json
import time

from inspector.export import message_text, transcript_json, transcript_json_bytes, transcript_markdown
from inspector.home import locate_home
from inspector.session_detail import SessionDetail, load_detail
from tests.conftest import FIXTURES, copy_tree


def _detail(messages: list, tool_calls: list | None = None) -> SessionDetail:
    return SessionDetail(
        session_id="abc123", sidecar={"title": "T", "messages": messages, "tool_calls": tool_calls or []}
    )


def test_markdown_keeps_untrusted_content_inside_a_fence_it_cannot_close():
    evil = "```\n# not a heading\n<script>alert(1)</script>\n````"
    md = transcript_markdown(_detail([{"role": "user", "content": evil, "timestamp": 1}]), now=2.0)
    fence = "`````"  # longer than the longest backtick run in the content
    assert f"{fence}text\n{evil}\n{fence}" in md


def test_markdown_escapes_terminal_control_characters():
    md = transcript_markdown(_detail([{"role": "user", "content": "a\x1b[31mred", "timestamp": 1}]), now=2.0)
    assert "\x1b" not in md and "\\x1b[31mred" in md


def test_markdown_shows_flags_reasoning_and_tool_cards():
    session = json.loads((FIXTURES / "journal" / "session_after_promotion.json").read_text(encoding="utf-8"))
    detail = SessionDetail(session_id=session["session_id"], sidecar=session)
    md = transcript_markdown(detail, now=time.time())
    assert "### [3] assistant" in md
    assert "`_recovered_from_run_journal`" in md
    assert "reasoning:\n```text\nThe user wants open PRs; use gh.\n```" in md
    assert "- tool `terminal` (done, tid journal-4)" in md
    assert "`type=interrupted`" in md and "`cause=process_restart`" in md


def test_a_title_with_markup_stays_inline_code():
    detail = SessionDetail(session_id="abc", sidecar={"title": "<b>x</b> `y`", "messages": []})
    assert "- title: `<b>x</b> 'y'`" in transcript_markdown(detail, now=1.0)


def test_json_export_round_trips_messages_and_tool_cards(tmp_path):
    home_dir = copy_tree(FIXTURES / "storage" / ".hermes", tmp_path / "home")
    home = locate_home(home_dir)
    sid = "3f9c2a7b1d04"
    detail = load_detail(home, sid)
    out = json.loads(transcript_json_bytes(detail, now=5.0))
    assert out["session_id"] == sid and out["exported_at"] == 5.0
    assert out["messages"] == detail.messages
    assert out["format"] == "hermes-inspector-transcript/1"
    assert "messages" not in out["metadata"]
    assert transcript_json(detail, now=5.0)["findings"] == [f.to_json() for f in detail.findings]


def test_message_text_of_content_parts():
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]
    text = message_text(parts)
    assert text.startswith("look\n") and "http://x/y.png" in text
    assert message_text(None) == "" and message_text(7) == "7"
