"""Reports for people and programs: the full audit, the session list, one session, its journals.

Formatting only (text and JSON); what they format is built by :mod:`inspector.load` (the
catalogue, the full audit) and :mod:`inspector.session_detail` (one session).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.linkcheck import shown
from inspector.store.files import TooLargeToLoad
from inspector.textsafe import one_line, safe_text

if TYPE_CHECKING:  # the session and journal views import these when they run (audit and list stay light)
    from inspector.catalogue import SessionRow
    from inspector.findings import Finding
    from inspector.session_detail import RunInfo, SessionDetail


def format_audit(report: dict) -> str:
    lines = []
    s = report["summary"]
    lines.append(
        f"hermes audit: {report['status']}  (sidecars {s['ok']}, repairable {s['repairable']}, "
        f"unsafe to repair {s['unsafe_to_repair']})"
    )
    if report.get("error"):
        lines.append(f"  hermes' own audit would fail here: {report['error']}")
    for item in report["items"]:
        lines.append(
            f"  {item['category']:<16} {item['kind']:<34} {item['session_id']}  -> {item['recommendation']}"
        )
    ins = report["inspector"]
    lines.append("")
    lines.append(f"inspector: {ins['sessions']} sessions, {ins['needs_attention']} need attention")
    for f in ins["findings"]:
        action = f"  [{f['action']}]" if f.get("action") else ""
        lines.append(
            f"  {f['severity']:<7} {f['session_id'] or '(home)'}: {one_line(f['message'], 160)}{action}"
        )
    return "\n".join(lines)


def format_list(rows: list[SessionRow], home_findings: list[Finding]) -> str:
    from inspector.export import format_time

    lines = [
        f"{'health':<8} {'session id':<34} {'where':<9} {'profile':<10} {'msgs':>9}  {'last activity':<19}  title"
    ]
    for r in rows:
        msgs = (
            f"{r.sidecar_messages if r.sidecar_messages is not None else '-'}/"
            f"{r.state_db_messages if r.state_db_messages is not None else '-'}"
        )
        lines.append(
            f"{r.health:<8} {safe_text(r.session_id)[:34]:<34} {r.where:<9} {r.profile[:10]:<10} "
            f"{msgs:>9}  {format_time(r.last_activity):<19}  {one_line(r.title, 60)}"
        )
    for f in home_findings:
        lines.append(f"{f.severity}: {one_line(f.message, 200)}")
    return "\n".join(lines)


def _message_line(i: int, msg: object) -> str:
    from inspector.export import format_time

    if not isinstance(msg, dict):
        return f"  [{i}] (not an object: {one_line(repr(msg), 80)})"
    flags = [
        k
        for k in (
            "_recovered",
            "_recovered_from_run_journal",
            "_error",
            "_partial",
            "_pending_journal_recovery",
        )
        if msg.get(k)
    ]
    if msg.get("type"):
        flags.append(f"type={msg['type']}")
    content = msg.get("content")
    text = content if isinstance(content, str) else one_line(repr(content), 200)
    return f"  [{i}] {msg.get('role')!s:<9} {format_time(msg.get('timestamp'))}  {one_line(text, 160)}" + (
        f"  {{{', '.join(flags)}}}" if flags else ""
    )


def format_detail(d: SessionDetail) -> str:
    from inspector.export import format_time

    lines = [f"session {safe_text(d.session_id)}: {one_line(d.title, 100)}"]
    lines.append(f"  profile:   {d.profile or '-'}")
    lines.append(
        f"  sidecar:   {shown(d.sidecar_path) if d.sidecar_raw or d.sidecar_error else '(missing)'}"
        + (f"  ERROR: {d.sidecar_error}" if d.sidecar_error else "")
    )
    if d.bak_path:
        lines.append(f"  .bak:      {shown(d.bak_path)} ({d.bak_messages} messages)")
    lines.append(f"  index row: {'yes' if d.index_row else 'no'}")
    for v in d.state_db:
        status = v.error or (
            f"{len(v.messages)} messages, source {v.record.get('source')}" if v.record else "no row"
        )
        lines.append(f"  state.db:  [{v.profile}] {v.path}: {status}")
    if d.core is not None or d.core_error:
        lines.append(
            f"  core:      {shown(d.core_path)}" + (f" ERROR: {d.core_error}" if d.core_error else "")
        )
    sc = d.sidecar or {}
    if sc:
        lines.append(
            f"  created {format_time(sc.get('created_at'))}, updated {format_time(sc.get('updated_at'))}, "
            f"model {one_line(sc.get('model'), 40)}, message_count {sc.get('message_count')}"
        )
        if sc.get("active_stream_id") or sc.get("pending_user_message"):
            lines.append(
                f"  RUNNING TURN: stream {sc.get('active_stream_id')}, started "
                f"{format_time(sc.get('pending_started_at'))}, prompt {one_line(sc.get('pending_user_message'), 80)!r}"
            )
    for run in d.runs:
        s = run.summary or {}
        lines.append(
            f"  run {run.run_id}: {s.get('event_count', '?')} events, last seq {s.get('last_seq', '?')}, "
            f"{s.get('terminal_state', run.error)}"
        )
    lines.append("")
    lines.append(f"messages ({len(d.messages)}):")
    lines.extend(_message_line(i, m) for i, m in enumerate(d.messages))
    if d.findings:
        lines.append("")
        lines.append("findings:")
        for f in d.findings:
            lines.append(
                f"  {f.severity:<7} {one_line(f.message, 200)}" + (f"  [{f.action}]" if f.action else "")
            )
    return "\n".join(lines)


def _real(path: Path | None) -> str | None:
    """Where ``path`` really is (every link followed); None without a path."""
    return os.path.realpath(path) if path is not None else None


def detail_to_json(d: SessionDetail) -> dict:
    return {
        "session_id": d.session_id,
        "title": d.title,
        "profile": d.profile,
        "sidecar": {
            "path": str(d.sidecar_path) if d.sidecar_path else None,
            "real_path": _real(d.sidecar_path),
            "exists": d.sidecar_raw is not None,
            "error": d.sidecar_error,
            "fingerprint": d.sidecar_raw.fingerprint.to_json() if d.sidecar_raw else None,
            "metadata": {
                k: v
                for k, v in (d.sidecar or {}).items()
                if k not in ("messages", "tool_calls", "context_messages", "anchor_activity_scenes")
            },
            "messages": d.messages,
            "tool_calls": (d.sidecar or {}).get("tool_calls"),
        },
        "bak": {"path": str(d.bak_path), "real_path": _real(d.bak_path), "messages": d.bak_messages}
        if d.bak_path
        else None,
        "index_row": d.index_row,
        "state_db": [
            {
                "profile": v.profile,
                "path": str(v.path),
                "record": v.record,
                "messages": v.messages,
                "error": v.error,
            }
            for v in d.state_db
        ],
        "core_transcript": {"path": str(d.core_path), "present": d.core is not None, "error": d.core_error},
        "runs": [
            {"run_id": r.run_id, "path": str(r.path), "summary": r.summary, "error": r.error} for r in d.runs
        ],
        "findings": [f.to_json() for f in d.findings],
    }


def _not_read(exc: OSError) -> str:
    """Why a journal's lines are not shown: not loaded for its size, or the read's own error."""
    if isinstance(exc, TooLargeToLoad):
        return f"lines not loaded: {exc.strerror}"
    return f"cannot read: {exc.strerror or exc}"


def _raw_lines(run: RunInfo) -> list[dict]:
    """Every physical line with its offset and hermes' verdict (dropped lines and anomalies)."""
    from inspector.store.journal_raw import RawJournal

    try:
        journal = RawJournal.from_path(run.path)
    except OSError as exc:
        return [{"error": _not_read(exc)}]
    return [
        {
            "line": line.number,
            "offset": line.offset,
            "length": line.length,
            "dropped": line.dropped,
            "anomalies": list(line.anomalies),
            **(
                {"raw": line.data.decode("utf-8", errors="replace")} if line.dropped or line.anomalies else {}
            ),
        }
        for line in journal
    ]


def _raw_anomaly_lines(run: RunInfo) -> list[str]:
    from inspector.store.journal_raw import RawJournal

    try:
        journal = RawJournal.from_path(run.path)
    except OSError as exc:
        return [_not_read(exc)]
    out = []
    if journal.unreadable:
        out.append(f"UNREADABLE: {journal.unreadable}")
    if journal.depth_unsure:
        out.append(f"MAY BE UNREADABLE: {journal.depth_unsure}")
    for line in journal:
        if line.dropped:
            out.append(f"line {line.number} @ byte {line.offset}: hermes drops it: {line.dropped}")
        for anomaly in line.anomalies:
            out.append(f"line {line.number} @ byte {line.offset}: {anomaly}")
    return out


def journal_to_json(d: SessionDetail, runs: list[RunInfo]) -> dict:
    return {
        "session_id": d.session_id,
        "runs": [
            {
                "run_id": r.run_id,
                "path": str(r.path),
                "size": r.size,
                "summary": r.summary,
                "error": r.error,
                "events": r.events,
                "dropped_lines": r.malformed,
                "lines": _raw_lines(r),
            }
            for r in runs
        ],
    }


def format_journal(d: SessionDetail, runs: list[RunInfo]) -> str:
    from inspector.export import format_time

    if not runs:
        return f"session {safe_text(d.session_id)} has no run journal"
    lines = []
    for r in runs:
        s = r.summary or {}
        lines.append(f"run {r.run_id}  ({r.path}, {r.size} bytes)")
        if r.error:
            lines.append(f"  {'NOT LOADED' if r.too_large else 'UNREADABLE for hermes'}: {r.error}")
        else:
            lines.append(
                f"  {s.get('event_count')} events, last seq {s.get('last_seq')}, terminal state "
                f"{s.get('terminal_state')}, last event {s.get('last_event')}"
            )
        for ev in r.events:
            payload = ev.get("payload")
            preview = (
                payload.get("text") or payload.get("name") or payload.get("message")
                if isinstance(payload, dict)
                else payload
            )
            term = f" [{ev.get('terminal_state')}]" if ev.get("terminal") else ""
            lines.append(
                f"  {ev.get('seq')!s:>6} {format_time(ev.get('created_at'))} {ev.get('event')!s:<18}{term} "
                f"{one_line(preview, 100)}"
            )
        lines.extend(f"  {one_line(text, 200)}" for text in _raw_anomaly_lines(r))
    return "\n".join(lines)
