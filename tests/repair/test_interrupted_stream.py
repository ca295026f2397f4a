"""Rule: ``repair-interrupted`` reads its run journal in one streaming pass and makes exactly the plan
the full read (every event built and held, hermes' ``read_run_events``) makes: the same bytes, the
same summary and warnings, on every branch (A, A1, B, C, the gateway error) and on hostile journals
(lines torn by U+2028 or CR, skipped lines, a cut character at the end, invalid UTF-8, long
integers, CRLF). The journal's bytes are not kept by the plan's snapshot, yet the journal is still
among the files the plan read (its links are checked like any other).

The reader itself is held to the full reader in tests/store/test_journal_stream.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.actions import make_context, plan_action
from inspector.home import locate_home
from inspector.linkcheck import LINKS_KEY
from inspector.plan import Clock
from inspector.repair import interrupted
from inspector.repair import journal_read as journal_read_mod
from inspector.store import journal as journal_mod
from tests.repair.test_interrupted import (
    HISTORY,
    NOW,
    SID,
    STARTED,
    S,
    ctx_for,
    stale,
    write_core,
    write_sidecar,
)


def _line(seq: int, event: str, payload: object, **extra) -> bytes:
    terminal = {"done": "completed", "stream_end": "completed", "apperror": "errored"}.get(event)
    rec = {
        "version": 1,
        "event_id": f"{S}:{seq}",
        "seq": seq,
        "run_id": S,
        "session_id": SID,
        "event": event,
        "type": event,
        "created_at": NOW - 100 + seq,
        "terminal": terminal is not None,
        "terminal_state": terminal,
        "payload": payload,
        **extra,
    }
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _output(n: int) -> list[bytes]:
    """n events of a run: reasoning, tokens, tool cards."""
    out = []
    for seq in range(1, n + 1):
        kind = seq % 5
        if kind == 0:
            out.append(
                _line(seq, "tool", {"name": "terminal", "preview": f"ls {seq}", "args": {"command": "ls"}})
            )
        elif kind == 1:
            out.append(_line(seq, "tool_complete", {"name": "terminal", "duration": 0.5, "is_error": False}))
        elif kind == 2:
            out.append(_line(seq, "reasoning", {"text": f"thinking {seq} é"}))
        else:
            out.append(_line(seq, "token", {"text": f" word{seq}"}))
    return out


ERROR_ROW = {"role": "assistant", "content": "**Error:** 502", "_error": True}
APPERROR = {
    "message": "boom",
    "session_id": SID,
    "session": {"session_id": SID, "messages": [{"role": "user", "content": "Hello hermes"}, ERROR_ROW]},
    "terminal_session_persisted": False,
}


def _journals() -> dict[str, bytes]:
    body = _output(40)
    return {
        "plain": b"\n".join(body) + b"\n",
        "torn_and_skipped": b"\n".join(
            [
                *body[:10],
                _line(11, "token", {"text": "torn\u2028apart"}),
                b"[1, 2]",
                b"",
                b"{not json",
                _line(12, "token", {"text": "bare\rcr"}),
                *body[12:],
            ]
        )
        + b"\n",
        "cut_char_at_eof": b"\n".join(body) + b"\n" + b'{"event":"token","payload":{"text":"\xe2\x82',
        "invalid_utf8_inside": b"\n".join(body[:20]) + b"\n\xff\xfe\n" + b"\n".join(body[20:]) + b"\n",
        "torn_last_line": b"\n".join(body) + b"\n" + _line(41, "token", {"text": "half"})[:30],
        "crlf": b"\r\n".join(body) + b"\r\n",
        "long_integers": b"\n".join([*body, _line(10**20, "tool", {"name": "big", "preview": "p"})]) + b"\n",
        "completed": b"\n".join([*body, _line(41, "done", {}), _line(42, "stream_end", {})]) + b"\n",
        "gateway_error": b"\n".join([*body, _line(41, "apperror", APPERROR)]) + b"\n",
        "whitespace_tokens": b"\n".join(_line(i, "token", {"text": "  "}) for i in range(1, 30)) + b"\n",
        "metering_only": b"\n".join(_line(i, "metering", {"input_tokens": i}) for i in range(1, 30)) + b"\n",
        "empty": b"",
    }


SESSIONS = {
    "history": lambda: stale(list(HISTORY)),  # branch A (A1 when completed)
    "empty_with_core": lambda: stale([]),  # branch B (a core transcript is written)
    "empty": lambda: stale([]),  # branch C
}


def _plan_of(home: Path, stream: bool, monkeypatch) -> tuple:
    real = journal_read_mod.read_journal

    def read(*args, stream: bool = False, **kwargs):
        return real(*args, stream=stream_wanted, **kwargs)

    stream_wanted = stream
    monkeypatch.setattr(interrupted, "read_journal", read)
    plan = interrupted.plan(ctx_for(home), SID)
    return (
        [(c.path, c.before, c.after) for c in plan.changes],
        plan.summary,
        plan.warnings,
        plan.refusal,
        plan.result,
    )


@pytest.mark.parametrize("pieces", [None, 64], ids=["pieces_4mb", "pieces_64b"])
@pytest.mark.parametrize("session", sorted(SESSIONS))
@pytest.mark.parametrize("shape", sorted(_journals()))
def test_the_streamed_plan_is_the_full_read_plan(
    tmp_path: Path, monkeypatch, shape: str, session: str, pieces: int | None
) -> None:
    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    write_sidecar(home, SESSIONS[session]())
    if session == "empty_with_core":
        write_core(home, [{"role": "user", "content": "Earlier"}, {"role": "assistant", "content": "word5"}])
    path = home / "webui" / "sessions" / "_run_journal" / SID / f"{S}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(_journals()[shape])
    if pieces:
        monkeypatch.setattr(journal_mod, "BLOCK_BYTES", pieces)
    full = _plan_of(home, False, monkeypatch)
    streamed = _plan_of(home, True, monkeypatch)
    assert streamed == full
    assert full[0] or full[3]  # the plan does something (or is refused): the comparison is not empty


def test_the_journal_bytes_are_not_kept_but_the_journal_is_among_the_files_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    write_sidecar(home, stale(list(HISTORY)))
    path = home / "webui" / "sessions" / "_run_journal" / SID / f"{S}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(_output(20)) + b"\n")
    ctx = ctx_for(home)
    plan = interrupted.plan(ctx, SID)
    assert plan.changes and not plan.refusal
    assert ctx.snapshot.peek(path) == (False, None)  # not held once the plan is made
    assert path in ctx.snapshot.asked


def test_a_journal_linked_outside_the_home_is_named_and_refused_without_follow_links(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    write_sidecar(home, stale(list(HISTORY)))
    elsewhere = tmp_path / "elsewhere" / f"{S}.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(b"\n".join(_output(20)) + b"\n")
    link = home / "webui" / "sessions" / "_run_journal" / SID / f"{S}.jsonl"
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere)
    ctx = make_context(locate_home(home, env={}), Clock(NOW, STARTED), home)
    (plan,) = plan_action(ctx, "repair-interrupted", SID)
    assert plan.changes and plan.refusal and "--follow-links" in plan.refusal
    assert str(elsewhere) in json.dumps(plan.result[LINKS_KEY])
