"""Action ``materialize``: create missing sidecars from state.db rows, as hermes does.

hermes' ``recover_missing_sidecars_from_state_db`` (session-recovery §6.3) turns every
``source='webui'`` state.db row that has no ``<sid>.json``, is not durably tombstoned and has
at least one message into a 48-key sidecar (§7), written byte-for-byte as hermes writes it
(``json.dumps(indent=2, ensure_ascii=False)``, no trailing newline). When at least one
sidecar is created, ``_index.json`` is rebuilt from every sidecar (§6.4), as hermes'
repair-safe does right after.

Differences from hermes, on purpose:

* **unsafe ids are skipped** (hermes would write ``<dir>/../escaped.json`` outside the
  sessions folder, or crash on a NUL): with ``session_id=None`` such rows are listed in
  ``plan.warnings`` and in ``plan.result["details"]`` (``skipped: "unsafe_session_id"``)
  while the safe rows are still planned; asking for an unsafe id directly is refused;
* a row whose messages cannot be serialized (BLOB content: hermes crashes) is skipped
  with a warning;
* nothing is written here: the plan is applied by :mod:`inspector.plan` (create-only, so an
  existing sidecar is never overwritten, like hermes' ``os.link``).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from inspector import portable
from inspector.forked import Forked, ForkedError
from inspector.gcpause import gc_paused
from inspector.plan import FileChange, Plan, back_up_early, flush_early, prepare_previews, stage_early
from inspector.repair.context import RepairContext
from inspector.repair.registry import HERMES, SESSION_OR_HOME, STATE_DB, ActionSpec
from inspector.repair.save import IndexRebuild, IndexRebuildError, ListedNames, start_index_rebuild
from inspector.store.backup import BAK_SUFFIX, message_count
from inspector.store.index import INDEX_NAME
from inspector.store.jsonfmt import dumps_pretty_fast
from inspector.store.sidecar import is_safe_session_id, resolve_path
from inspector.store.statedb import (
    SessionRowsReader,
    StateDbError,
    WarningFacts,
    dropped_field_counts,
    materialization_defects,
    open_readonly,
    probe,
    read_missing_sidecar_rows,
    read_schema,
    state_db_has_session,
)
from inspector.store.tombstone import durable_tombstone_check, is_durably_tombstoned

NAME = "materialize"

SPEC = ActionSpec(
    name=NAME,
    label="Materialize from state.db",
    scope=SESSION_OR_HOME,
    origin=HERMES,
    mirrors="api.session_recovery.recover_missing_sidecars_from_state_db",
    help="hermes' recovery of WebUI chats that only state.db has: their sidecars written, then the index rebuilt",
    answers=("sidecar_missing",),
    recommendations=("materialize_from_state_db",),
    hermes_reads=frozenset({STATE_DB}),
)
DEFAULT_TITLE = "Recovered WebUI Session"
_SOURCE_LABELS = {"webui": "WebUI", "cli": "CLI", "cron": "Cron", "tool": "Tool", "api_server": "API"}


def normalize_source(source: str) -> dict:
    """``raw_source`` / ``session_source`` / ``source_label`` for a lowercased source.

    Only ``webui`` is reachable (the reader filters on it): ``webui``/``webui``/``WebUI``.
    """
    raw = source or "unknown"
    session_source = {
        "webui": "webui",
        "cli": "cli",
        "cron": "cron",
        "tool": "tool",
        "api_server": "api",
    }.get(raw, "other")
    label = _SOURCE_LABELS.get(raw) or (raw.replace("_", " ").title() if raw != "unknown" else "Agent")
    return {
        "raw_source": None if raw == "unknown" else raw,
        "session_source": session_source,
        "source_label": label,
    }


def _or_none(row: dict, key: str) -> Any:
    return row.get(key) or None


def state_db_row_to_sidecar(row: dict) -> dict:
    """hermes' ``_state_db_row_to_sidecar``: the 48-key sidecar dict, in hermes' key order."""
    source = str(row.get("source") or "").strip().lower()
    started_at = row.get("started_at") or 0
    messages = row.get("messages") if isinstance(row.get("messages"), list) else []
    last_ts = messages[-1].get("timestamp") if messages and isinstance(messages[-1], dict) else started_at
    workspace = row.get("workspace") or ""
    count = row.get("message_count")
    recovery = row.get("compression_recovery")
    return {
        "session_id": row.get("id"),
        "title": row.get("title") or DEFAULT_TITLE,
        "workspace": workspace if isinstance(workspace, str) else "",
        "message_count": count if isinstance(count, int) else len(messages),
        "worktree_path": _or_none(row, "worktree_path"),
        "worktree_branch": _or_none(row, "worktree_branch"),
        "worktree_repo_root": _or_none(row, "worktree_repo_root"),
        "worktree_created_at": _or_none(row, "worktree_created_at"),
        "model": row.get("model") or "unknown",
        "model_provider": None,
        "created_at": started_at,
        "updated_at": last_ts or started_at,
        "pinned": False,
        "archived": False,
        "project_id": None,
        "profile": None,
        "input_tokens": 0,
        "output_tokens": 0,
        "estimated_cost": None,
        "personality": None,
        "active_stream_id": None,
        "pending_user_message": None,
        "pending_attachments": [],
        "pending_started_at": None,
        "compression_anchor_visible_idx": None,
        "compression_anchor_message_key": None,
        "compression_anchor_summary": None,
        "context_length": None,
        "threshold_tokens": None,
        "last_prompt_tokens": None,
        "compression_recovery": recovery if isinstance(recovery, dict) else {},
        "recommended_recovery_action": _or_none(row, "recommended_recovery_action"),
        "compression_recovery_source_session_id": _or_none(row, "compression_recovery_source_session_id"),
        "compression_recovery_action": _or_none(row, "compression_recovery_action"),
        "gateway_routing": None,
        "gateway_routing_history": [],
        "llm_title_generated": False,
        "parent_session_id": row.get("parent_session_id"),
        "is_cli_session": False,
        "source_tag": source or None,
        **normalize_source(source),
        "enabled_toolsets": None,
        "composer_draft": {},
        "messages": messages,
        "tool_calls": [],
        "_recovered_from_state_db": True,
    }


def _row_sid(row: dict) -> str:
    return str(row.get("id") or "").strip()


# ---------------------------------------------------------------- explanations and warnings


def _not_eligible_reason(ctx: RepairContext, db: Path, sid: str) -> str:
    sdir = ctx.session_dir
    if (sdir / f"{sid}.json").exists():
        return f"{sid}.json already exists (hermes never overwrites a sidecar)"
    if is_durably_tombstoned(sdir, sid, ctx.snapshot):
        return f"{sid} was deleted by the user (durable tombstone): hermes never brings it back"
    for row in read_missing_sidecar_rows(sdir, db, include_empty=True):
        if _row_sid(row) == sid:
            return f"state.db has no messages for {sid}: hermes never creates a blank sidecar"
    if state_db_has_session(db, sid) and probe(db) is None:
        return f"state.db row {sid} is not a source='webui' session: hermes only materializes WebUI rows"
    return f"state.db has no session {sid}"


def _skipped_lines(every: list[dict], planned: set[str]) -> list[str]:
    """What the plan leaves alone of ``every`` row without a sidecar (read with ``include_empty``)."""
    lines = []
    for row in every:
        sid = _row_sid(row)
        if sid in planned:
            continue
        if row.get("_state_db_deleted_webui_tombstone"):
            lines.append(f"leave {sid!r} alone: deleted by the user (durable tombstone)")
        elif row.get("_state_db_empty_messages"):
            lines.append(f"leave {sid!r} alone: its state.db row has no messages (no blank sidecars)")
    return lines


def _eligible(every: list[dict]) -> list[dict]:
    """The rows hermes materializes of ``every`` row read with ``include_empty``: what a read without
    it returns (the same rows, in the same order: neither tombstoned nor without messages)."""
    return [
        r
        for r in every
        if not r["_state_db_empty_messages"] and not r.get("_state_db_deleted_webui_tombstone")
    ]


def _dropped_warning(db: Path, sid: str, reader: SessionRowsReader | None = None) -> str | None:
    try:
        counts = dropped_field_counts(db, sid, reader=reader)
    except StateDbError:
        return None
    return _dropped_note(sid, counts)


def _dropped_note(sid: str, counts: dict[str, int]) -> str | None:
    """The dropped-fields note of :func:`_dropped_warning` for ``counts`` (:func:`dropped_field_counts`')."""
    dropped = [
        f"{k} ({n} row{'s' if n > 1 else ''})"
        for k, n in counts.items()
        if n and k not in ("inactive", "json_content")
    ]
    notes = []
    if dropped:
        notes.append(
            "drops " + ", ".join(dropped) + " (hermes' minimal mapper keeps only role, content, timestamp)"
        )
    if counts.get("inactive"):
        notes.append(f"includes {counts['inactive']} rewound/compacted row(s) (no active filter)")
    if counts.get("json_content"):
        notes.append(f"keeps {counts['json_content']} raw \\x00json: content value(s) undecoded")
    return f"{sid}: the sidecar " + "; ".join(notes) if notes else None


_DEFECT_ROWS_SHOWN = 12  # rows named per defect; the rest are counted


def _defect_warnings(db: Path, sid: str, reader: SessionRowsReader | None = None) -> list[str]:
    """One warning per materialization defect of hermes itself, naming the rows it affects.

    The sidecar stays hermes-identical (the contract); these say where hermes-webui will show
    the recovered chat wrongly.
    """
    try:
        rows = materialization_defects(db, sid, reader=reader)
    except StateDbError:
        return []
    return _defect_lines(sid, rows)


def _defect_lines(sid: str, rows: list[dict]) -> list[str]:
    """The warnings of :func:`_defect_warnings` for ``rows`` (:func:`materialization_defects`')."""
    out = []
    empty = [r for r in rows if "empty_tool_call" in r["defects"]]
    if empty:
        named = ", ".join(
            f"{r['index']} ({', '.join(r['tools']) or 'tool call'})" for r in empty[:_DEFECT_ROWS_SHOWN]
        )
        out.append(
            f"{sid}: hermes defect, tool calls stripped: row(s) {named}{_more(empty)} are assistant rows whose "
            "only output was tool calls; hermes writes them as empty rows without the calls, and "
            "hermes-webui then shows each next to state.db's row with the tool call, as a duplicated "
            "empty assistant row"
        )
    inactive = [r for r in rows if "inactive" in r["defects"]]
    if inactive:
        named = ", ".join(
            f"{r['index']} ({r['role']}, {'archived by compaction' if r['compacted'] else 'taken back'})"
            for r in inactive[:_DEFECT_ROWS_SHOWN]
        )
        out.append(
            f"{sid}: hermes defect, superseded messages come back: row(s) {named}{_more(inactive)} have "
            "active = 0 in state.db (hermes-webui's own transcript reader leaves them out); hermes' "
            "materializer has no active filter and puts them back in the chat"
        )
    raw = [r for r in rows if "json_content" in r["defects"]]
    if raw:
        named = ", ".join(f"{r['index']} ({r['role']})" for r in raw[:_DEFECT_ROWS_SHOWN])
        out.append(
            f"{sid}: hermes defect, encoded content shown raw: row(s) {named}{_more(raw)} hold structured "
            "content in the agent's \\x00json: encoding; hermes copies it undecoded and the chat shows "
            "the raw text"
        )
    return out


def _more(rows: list) -> str:
    extra = len(rows) - _DEFECT_ROWS_SHOWN
    return f" and {extra} more" if extra > 0 else ""


def _file_warnings(ctx: RepairContext, sid: str, payload: dict) -> list[str]:
    out = []
    if payload["session_id"] != sid:
        out.append(
            f"{sid}: state.db stores the id as {payload['session_id']!r}; hermes writes that raw "
            f"value inside {sid}.json, so its index row is keyed differently and the audit keeps "
            "reporting index drift [Q7]"
        )
    bak = ctx.session_dir / f"{sid}{BAK_SUFFIX}"
    if bak.exists():
        out.append(
            f"{sid}: an orphan {bak.name} ({message_count(ctx.snapshot, bak)} messages) exists and "
            "hermes' materializer ignores it; afterwards the audit reports shrunken_live and "
            "restore-backup would replace the state.db version (run restore-backup first) [Q6]"
        )
    if payload["workspace"] == "":
        out.append(
            f"{sid}: workspace is empty; hermes resolves it to its working directory "
            f"({_working_directory(ctx.cwd)}) when it loads the session [Q10]"
        )
    return out


@functools.lru_cache(maxsize=8)
def _working_directory(cwd: Path) -> str:
    """``resolve_path('', cwd)``, resolved once per plan for the hundreds of rows without a workspace
    (the cache is cleared when a plan starts: a link changed between two plans is seen)."""
    return resolve_path("", cwd)


def _count_warning(sid: str, payload: dict, has_count_column: bool) -> list[str]:
    written = len(payload["messages"])
    if not has_count_column:
        return [
            f"{sid}: state.db has no message_count column, so hermes writes message_count 0 "
            f"although {written} messages are written"
        ]
    if payload["message_count"] != written:
        return [
            f"{sid}: message_count {payload['message_count']!r} is copied from state.db as is; "
            f"{written} messages are written"
        ]
    return []


def _row_warnings(
    ctx: RepairContext,
    db: Path,
    row: dict,
    payload: dict,
    has_count_column: bool,
    reader: SessionRowsReader | None = None,
    asked: tuple[str | None, list[str]] | None = None,
) -> list[str]:
    """What the preview says about one materialized row; ``asked``: its state.db warnings
    (:func:`_db_warnings`), when another process already queried them."""
    sid = _row_sid(row)
    out = _file_warnings(ctx, sid, payload) + _count_warning(sid, payload, has_count_column)
    dropped, defects = asked if asked is not None else _db_warnings(db, sid, reader)
    return out + ([dropped] if dropped else []) + defects


def _db_warnings(db: Path, sid: str, reader: SessionRowsReader | None) -> tuple[str | None, list[str]]:
    """The warnings of one row that query state.db (two queries of its messages)."""
    return _dropped_warning(db, sid, reader), _defect_warnings(db, sid, reader)


def _facts_warnings(sid: str, facts: WarningFacts) -> tuple[str | None, list[str]]:
    """:func:`_db_warnings` of a row from the facts found while its messages were read."""
    return _dropped_note(sid, facts.counts), _defect_lines(sid, facts.defects)


PARALLEL_WARNINGS_MIN = 64  # rows from which their state.db warnings are queried by a forked copy


def _db_warnings_elsewhere(db: Path, rows: list[dict]) -> Forked | None:
    """A forked copy querying :func:`_db_warnings` of every row with a safe id (None for the
    others), over its own connection, while this process makes the sidecars: a materialize of
    1,000 rows asks state.db 2,000 questions, and the second core is idle meanwhile. None where
    forking is not safe or there are few rows: this process asks them itself."""
    if len(rows) < PARALLEL_WARNINGS_MIN or not portable.can_fork():
        return None
    sids = [_row_sid(r) for r in rows]

    def job() -> list[tuple[str | None, list[str]] | None]:
        with _rows_reader(db, len(sids)) as reader:
            return [_db_warnings(db, sid, reader) if is_safe_session_id(sid) else None for sid in sids]

    try:
        return Forked(job)
    except OSError:
        return None


class _Later:
    """The place of a materialized row's warnings in the preview, until its state.db ones are in."""

    def __init__(self, index: int, row: dict, payload: dict) -> None:
        self.index, self.row, self.payload = index, row, payload


# ---------------------------------------------------------------- planning


def _sidecar_exists_check(session_dir: Path) -> Callable[[str], bool]:
    """``(session_dir / f"{sid}.json").exists()`` (the reader's own check), answered from one
    listing for the ~10,000 state.db rows whose sidecar is there."""
    plain = ListedNames(session_dir).plain

    def exists(sid: str) -> bool:
        name = f"{sid}.json"
        return name in plain or (session_dir / name).exists()

    return exists


def _rows_for(
    ctx: RepairContext,
    db: Path,
    session_id: str | None,
    sidecar_exists: Callable[[str], bool] | None = None,
    *,
    include_empty: bool = False,
    facts: dict[str, WarningFacts] | None = None,
) -> list[dict]:
    """The state.db rows without a sidecar (``facts``: see :func:`read_missing_sidecar_rows`)."""
    rows = read_missing_sidecar_rows(
        ctx.session_dir,
        db,
        include_empty=include_empty,
        sidecar_exists=sidecar_exists,
        is_tombstoned=durable_tombstone_check(ctx.session_dir, ctx.snapshot),
        facts=facts,
    )
    if session_id is None:
        return rows
    return [r for r in rows if _row_sid(r) == session_id]


def _has_count_column(db: Path) -> bool:
    try:
        return "message_count" in read_schema(db).session_columns
    except StateDbError:
        return True


def _plan_row(
    ctx: RepairContext,
    db: Path,
    row: dict,
    p: Plan,
    created: dict[Path, bytes],
    has_count: bool,
    reader: SessionRowsReader | None = None,
    later: tuple[int, list] | None = None,
    facts: dict[str, WarningFacts] | None = None,
) -> dict | None:
    """Plan one row. ``later`` = (its index, the list of warnings being made): its warnings go
    there as a :class:`_Later`, to be written once the forked copy has queried state.db.
    ``facts``: the state.db warnings' facts found while the rows were read (a row found there
    needs no query)."""
    sid = _row_sid(row)
    target = ctx.session_dir / f"{sid}.json"
    warnings: list = p.warnings if later is None else later[1]
    if not is_safe_session_id(sid):
        warnings.append(
            f"skipped state.db row {sid!r}: not a safe file name; hermes would write "
            f"{os.path.normpath(target)!r}, possibly outside the sessions folder"
        )
        return {"session_id": sid, "materialized": False, "skipped": "unsafe_session_id"}
    if target in created or target.exists():
        return None  # hermes skips silently when the target exists by now
    payload = state_db_row_to_sidecar(row)
    try:
        data = dumps_pretty_fast(payload)
    except (TypeError, ValueError) as exc:
        warnings.append(f"skipped {sid}: its messages cannot be written as JSON ({exc}); hermes would crash")
        return {"session_id": sid, "materialized": False, "error": str(exc)}
    created[target] = data
    p.changes.append(FileChange(path=target, before=None, after=data))
    p.summary.append(f"create {target.name} from state.db ({len(payload['messages'])} messages)")
    if later is None:
        found = facts.get(sid) if facts is not None else None
        asked = _facts_warnings(sid, found) if found is not None else None
        warnings.extend(_row_warnings(ctx, db, row, payload, has_count, reader, asked))
    else:
        warnings.append(_Later(later[0], row, payload))
    return {"session_id": sid, "materialized": True, "messages": len(payload["messages"])}


def _with_db_warnings(
    ctx: RepairContext, db: Path, lines: list, pending: Forked, has_count: bool
) -> list[str]:
    """``lines`` with each :class:`_Later` replaced by its row's warnings, the state.db ones as the
    forked copy found them (asked here, over one connection, where the copy failed)."""
    try:
        asked = pending.result()
    except ForkedError:
        asked = None
    out: list[str] = []
    with _rows_reader(db, len(lines) if asked is None else 0) as reader:
        for line in lines:
            if isinstance(line, _Later):
                got = asked[line.index] if asked is not None else None
                out.extend(_row_warnings(ctx, db, line.row, line.payload, has_count, reader, got))
            else:
                out.append(line)
    return out


def _index_change(
    ctx: RepairContext, created: dict[Path, bytes], p: Plan, rebuild: IndexRebuild | None = None
) -> list[str]:
    """Plan the rebuilt index (or refuse) with ``created`` about to be written; ``rebuild``: one
    already started (else it is made here). Its skipped lines are returned, for the warnings' end."""
    path = ctx.session_dir / INDEX_NAME
    try:
        raw = ctx.snapshot.read(path)
        skipped: list[str] = []
        if rebuild is None:
            rebuild = start_index_rebuild(ctx.save_context())
        if raw is not None:  # written at once (repair --write): its backup is copied while the rows are made
            back_up_early(path, raw.data)
        rebuilt = rebuild.finish(overrides=created, skipped=skipped)
    except OSError as exc:
        p.refusal = f"cannot rebuild {INDEX_NAME}: {exc}"
        return []
    except IndexRebuildError as exc:
        p.refusal = f"hermes' index rebuild would fail here, so nothing is written: {exc}"
        return []
    after, rows = rebuilt.data, len(rebuilt.row_ids)
    verb = "rewrite" if raw is not None else "create"
    p.summary.append(f"{verb} {INDEX_NAME} from the sidecars ({rows} rows)")
    if raw is None or raw.data != after:
        change = FileChange(
            path=path,
            before=raw.data if raw else None,
            after=after,
            fingerprint=raw.fingerprint if raw else None,
        )
        if raw is not None:  # the read hashed these bytes already: the 22 MB index is not hashed twice
            vars(change)["sha256_before"] = raw.fingerprint.sha256
        stage_early([change])
        prepare_previews([change])
        p.changes.append(change)
    return skipped


@contextlib.contextmanager
def _rows_reader(db: Path, rows: int) -> Iterator[SessionRowsReader | None]:
    """One connection for the per-row warnings of many rows (None: each query opens its own, as
    for one row, or when the shared one cannot be opened: each query then says so itself)."""
    if rows < 2:
        yield None
        return
    try:
        reader = SessionRowsReader(db)
    except StateDbError:
        yield None
        return
    with reader:
        yield reader


def _db_unusable(db: Path, p: Plan) -> bool:
    if not db.exists():
        p.summary.append(f"no state.db at {db}: nothing to materialize")
        return True
    problem = probe(db)
    if problem is not None:
        p.warnings.append(f"state.db cannot be used: {problem} (hermes would silently materialize nothing)")
        p.summary.append("nothing to materialize: state.db is unreadable")
        return True
    return False


def plan(ctx: RepairContext, session_id: str | None = None) -> Plan:
    """Plan hermes' materialization: every eligible row (``None``) or only ``session_id``'s row.

    The cyclic garbage collector is paused meanwhile (and in the forked copy that queries the
    warnings): a home-wide plan builds ~100,000 acyclic objects (state.db's messages, the
    payloads, the previews' lines, the index rows), over which it otherwise ran ~200 collections
    (0.03-0.05 s of this process's CPU on 1,041 rows); the window's collector is back on after."""
    with gc_paused():
        return _plan(ctx, session_id)


def _plan(ctx: RepairContext, session_id: str | None) -> Plan:
    p = Plan(action=NAME, session_id=session_id)
    _working_directory.cache_clear()
    if session_id is not None and not is_safe_session_id(session_id):
        p.refusal = (
            f"{session_id!r} is not a safe session id (only A-Z a-z 0-9 _ -): "
            "hermes would write outside the sessions folder or an unloadable file"
        )
        return p
    db = ctx.home.state_db()
    p.result = {"scanned": 0, "materialized": 0, "details": []}
    if _db_unusable(db, p):
        return p
    sidecar_exists = _sidecar_exists_check(ctx.session_dir)
    # The index is rebuilt from every sidecar once the new ones are planned; the rows of the sidecars
    # already there do not depend on them, so forked helpers start making those now, while this
    # process reads state.db and writes the new sidecars (where a WebUI row lacks its sidecar at all).
    likely = _some_webui_row_lacks_a_sidecar(db, sidecar_exists)
    rebuild = start_index_rebuild(ctx.save_context(), helpers=INDEX_HELPERS if likely else 0)
    try:
        # one read of state.db: the rows to write (and the ones left alone), and the facts of their
        # state.db warnings from the same queries (the messages are not read a second time for them)
        facts: dict[str, WarningFacts] = {}
        if session_id is None:
            every = _rows_for(ctx, db, None, sidecar_exists, include_empty=True, facts=facts)
            rows = _eligible(every)
        else:
            rows = _rows_for(ctx, db, session_id, sidecar_exists, facts=facts)
        if session_id is not None and not rows:
            p.summary.append(f"nothing to do: {_not_eligible_reason(ctx, db, session_id)}")
            return p
        _plan_rows(ctx, db, rows, p, rebuild, every if session_id is None else None, facts)
    finally:
        rebuild.cancel()  # nothing created (or a failure): the helpers stop; after finish(), a no-op
    return p


def _some_webui_row_lacks_a_sidecar(db: Path, sidecar_exists: Callable[[str], bool]) -> bool:
    """Whether a ``source='webui'`` id of state.db has no sidecar: one query of the ids (no
    messages), to decide whether starting the index rebuild before reading the rows is worth it
    (what is materialized is decided by :func:`_rows_for` alone). True when it cannot tell."""
    try:
        with contextlib.closing(open_readonly(db, 0.0)) as conn:
            # fetchall first: the agent's COMMIT must not wait on a read held across the stats below
            for (sid,) in conn.execute("SELECT id FROM sessions WHERE source = 'webui'").fetchall():
                sid = str(sid or "").strip()
                if sid and not sidecar_exists(sid):
                    return True
    except Exception:  # noqa: BLE001 - a guess only: the rows are read (and judged) by _rows_for
        return True
    return False


INDEX_HELPERS = 2  # forked helpers of the index rebuild: this process plans the new sidecars meanwhile


STAGE_BATCH = 64  # new sidecars planned between two hand-overs to the early staging


def _staged_as_planned(p: Plan, planned: Iterator[dict | None]) -> list[dict]:
    """The details of the rows ``planned`` (their Nones left out), each :data:`STAGE_BATCH` new
    files handed to the early staging as soon as they are planned (written at once, repair --write:
    the staging's thousand creates and fsyncs are what the write waits for on a busy machine, so
    they start while the rest is still planned, not after), the last ones at the end."""
    details: list[dict] = []
    staged = 0
    for d in planned:
        if d is not None:
            details.append(d)
        if len(p.changes) - staged >= STAGE_BATCH:
            stage_early(p.changes[staged:])
            staged = len(p.changes)
    stage_early(p.changes[staged:])
    flush_early()  # the new files made durable together while the index is made (see EarlyStaging)
    return details


def _each_planned_then_let_go(
    rows: list[dict], plan_row: Callable[[dict], dict | None]
) -> Iterator[dict | None]:
    """``plan_row(row)`` of each row in turn, each row's messages let go of once it is planned (its
    sidecar's bytes hold what is written; the row is still listed, for the lines about the rows left
    alone, which read only its id and flags): a home-wide plan's ~30 MB of state.db messages are
    freed as it goes, and the sidecars, previews and index rows made next reuse that memory instead
    of fresh pages (each one zeroed by the kernel on its first touch)."""
    for row in rows:
        yield plan_row(row)
        row.pop("messages", None)


def _plan_rows(
    ctx: RepairContext,
    db: Path,
    rows: list[dict],
    p: Plan,
    rebuild: IndexRebuild,
    every: list[dict] | None,
    facts: dict[str, WarningFacts] | None = None,
) -> None:
    """Plan the new sidecars of ``rows``, then the index (``every``: each row read without a sidecar,
    for the lines about those left alone; None when one session was asked for). ``facts``: the
    state.db warnings' facts read with the rows; only the rows missing there are asked (here, or
    by a forked copy when none was found: see :func:`_db_warnings_elsewhere`)."""
    created: dict[Path, bytes] = {}
    has_count = _has_count_column(db)
    pending = _db_warnings_elsewhere(db, rows) if not facts else None
    if pending is None:
        unknown = sum(1 for r in rows if facts is None or _row_sid(r) not in facts)
        with _rows_reader(db, unknown) as reader:
            details = _staged_as_planned(
                p,
                _each_planned_then_let_go(
                    rows, lambda r: _plan_row(ctx, db, r, p, created, has_count, reader, facts=facts)
                ),
            )
    else:
        lines: list = []
        planned = (_plan_row(ctx, db, r, p, created, has_count, None, (i, lines)) for i, r in enumerate(rows))
        details = _staged_as_planned(p, planned)
    prepare_previews(p.changes)  # the new files' previews and hashes, made while the helpers still read
    p.result = {"scanned": len(rows), "materialized": len(created), "details": details}
    if every is not None:
        p.summary.extend(_skipped_lines(every, {_row_sid(r) for r in rows}))
    if pending is not None:
        # the forked copy's state.db warnings, taken in while the index helpers still make rows (the
        # index's own lines come after them): not after the index, when nothing else runs beside
        p.warnings.extend(_with_db_warnings(ctx, db, lines, pending, has_count))
    skipped: list[str] = []
    if created:
        if not ctx.session_dir.exists():
            p.summary.insert(0, f"create the sessions folder {ctx.session_dir} (hermes creates it)")
        skipped = _index_change(ctx, created, p, rebuild)
    else:
        p.summary.append("nothing to materialize")
    p.warnings.extend(skipped)


def eligible(ctx: RepairContext) -> list[str]:
    """Home-wide action: planned once with ``session_id=None``."""
    return []
