"""Action ``rebuild-index``: rewrite ``_index.json`` from the sidecars, as hermes' recovery does.

hermes' ``_rebuild_recovery_session_index`` (session-recovery §6.4) loads every non-``_``
``*.json`` of the sessions folder, leaves out the ones it cannot load, keys the
``compact()`` rows by the ``session_id`` *inside* each file (the larger ``message_count``
wins a tie) and sorts them by ``updated_at``, newest first. The old index is overwritten
(apply keeps a private copy; hermes keeps none). Home-wide: ``eligible()`` is empty.
"""

from __future__ import annotations

from pathlib import Path

from inspector.plan import FileChange, Plan, prepare_previews
from inspector.repair.context import RepairContext
from inspector.repair.registry import HERMES, HOME, ActionSpec
from inspector.repair.save import IndexRebuildError, start_index_rebuild
from inspector.store.index import INDEX_NAME
from inspector.store.jsonfmt import loads_or_none

NAME = "rebuild-index"

SPEC = ActionSpec(
    name=NAME,
    label="Rebuild index",
    scope=HOME,
    origin=HERMES,
    mirrors="api.session_recovery._rebuild_recovery_session_index",
    help="hermes' recovery rewrite of _index.json from the sidecars (the whole home)",
    answers=("index_unusable",),
    recommendations=("rebuild_index",),
)


def index_row_ids(data: bytes | None) -> list[str] | None:
    """``session_id`` of every object row of an index, in file order; None when unreadable/not a list."""
    rows = loads_or_none(data)
    if not isinstance(rows, list):
        return None
    return [str(r.get("session_id")) for r in rows if isinstance(r, dict) and r.get("session_id")]


class _SidecarWarnings:
    """What the preview says about the sidecars, gathered while the rebuild parses each one.

    Sees every sidecar that reads and parses as an object (the others are named by the
    rebuild's own skipped lines), in folder order.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.empty_ws = 0

    def fresh(self) -> _SidecarWarnings:
        """An empty one, for a piece of the folder another process reads (``save.IndexRebuild``)."""
        return _SidecarWarnings()

    def merge(self, later: _SidecarWarnings) -> None:
        """Take in what ``later`` saw of the files after this one's."""
        self.lines.extend(later.lines)
        self.empty_ws += later.empty_ws

    def __call__(self, path: Path, obj: dict) -> None:
        sid = obj.get("session_id")
        if not sid:
            self.lines.append(
                f"{path.name} has no session_id: hermes would invent a random id for its row; "
                "the inspector leaves it out"
            )
        elif sid != path.stem:
            self.lines.append(
                f"{path.name} says session_id {sid!r}: its row is keyed {sid!r}, so the audit "
                "keeps reporting index drift for it [Q7]"
            )
        if not isinstance(obj.get("workspace"), str) or not obj.get("workspace"):
            self.empty_ws += 1

    def warnings(self, ctx: RepairContext) -> list[str]:
        out = list(self.lines)
        if self.empty_ws:
            out.append(
                f"{self.empty_ws} sidecar(s) have an empty workspace; their rows get hermes' working "
                f"directory ({ctx.cwd}) [Q10]"
            )
        return out


def _diff_lines(before: list[str] | None, after: list[str], existed: bool) -> list[str]:
    if not existed:
        return [f"create {INDEX_NAME} from the sidecars ({len(after)} rows)"]
    if before is None:
        lines = [
            f"rewrite {INDEX_NAME}: the current file is unreadable or not a list; {len(after)} rows after"
        ]
        return lines
    lines = [f"rewrite {INDEX_NAME} from the sidecars: {len(before)} rows before, {len(after)} after"]
    added, dropped = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    if added:
        lines.append("add rows for: " + ", ".join(added))
    if dropped:
        lines.append("drop rows for: " + ", ".join(dropped))
    return lines


def plan(ctx: RepairContext, session_id: str | None = None) -> Plan:
    """Plan the full index rebuild (``session_id`` is ignored: the whole index is rebuilt)."""
    p = Plan(action=NAME, session_id=session_id)
    sdir: Path = ctx.session_dir
    if not sdir.is_dir():
        p.summary.append(f"no sessions folder at {sdir}: nothing to rebuild")
        return p
    path = sdir / INDEX_NAME
    seen = _SidecarWarnings()
    rebuild = start_index_rebuild(ctx.save_context(), seen)  # a helper starts on the sidecars now
    try:
        raw = ctx.snapshot.read(path)  # the old index read and parsed meanwhile
        before_ids = index_row_ids(raw.data) if raw is not None else None
        skipped: list[str] = []
        rebuilt = rebuild.finish(skipped=skipped)
    except OSError as exc:
        p.refusal = f"cannot read the sessions folder: {exc}"
        return p
    except IndexRebuildError as exc:
        p.refusal = f"hermes' index rebuild would fail here, so nothing is written: {exc}"
        return p
    finally:
        rebuild.cancel()  # after finish(), a no-op
    after, after_ids = rebuilt.data, rebuilt.row_ids  # = index_row_ids(after)
    if session_id is not None:
        p.summary.append("rebuild-index is home-wide: the whole index is rebuilt")
    p.warnings.extend(skipped)
    p.warnings.extend(seen.warnings(ctx))
    rows_before = len(before_ids) if before_ids is not None else None
    p.result = {"rows_before": rows_before, "rows_after": len(after_ids)}
    if raw is not None and raw.data == after:
        p.summary.append(
            f"{INDEX_NAME} already matches the sidecars ({len(after_ids)} rows): nothing to write"
        )
        return p
    p.summary.extend(_diff_lines(before_ids, after_ids, raw is not None))
    change = FileChange(
        path=path,
        before=raw.data if raw else None,
        after=after,
        fingerprint=raw.fingerprint if raw else None,
    )
    if raw is not None:  # the read hashed these bytes already: the 22 MB index is not hashed twice
        vars(change)["sha256_before"] = raw.fingerprint.sha256
    prepare_previews([change])  # its preview, and its hashes in a thread meanwhile
    p.changes.append(change)
    return p


def eligible(ctx: RepairContext) -> list[str]:
    """Home-wide action: planned once with ``session_id=None``."""
    return []
