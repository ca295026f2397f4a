"""Repair kits (issue 17): a plan made in a support bundle, applied on the user's machine.

A kit is one JSON file::

    {"format": "hermes-inspector-repair-kit", "format_version": 1,
     "body": {...}, "body_sha256": "<sha256 of the canonical body>"}

The body holds the action, the session, the clock, the bundle it was made from, the id of
the home it is for (:func:`inspector.bundle.home_id`), the preview text, and for every file
its root (``home`` or ``state``) and path relative to it, its expected before-fingerprint
(sha256 and size, or absent) and its exact after-bytes (base64, with their sha256).

``body_sha256`` is a hash over the canonical body (sorted keys, no spaces, ASCII): a kit
edited by hand, or damaged in transit, is refused. It is an integrity check, not a
signature: it does not tell who made the kit.

**Applying** (:func:`check_kit`, then :func:`inspector.plan.apply_plan`) plans the same action
with the kit's clock on the user's live home, through the same code as ``repair --write``, and
writes only if that plan is the kit's: the same files, every before-fingerprint equal to the
live file's (else refused, naming the file: the chat moved on since the bundle), every
after-byte equal. ``_index.json`` is the one exception: a bundle holds only the chosen
sessions' index rows, so the kit holds those rows as they are after the repair
(``index_rows``; each must come out the same here, whether this home's repair rewrites the
index or not) and the rest of the index is whatever the user's live index gives, exactly as
``repair --write`` computes it (its save drops rows whose sidecar is gone and re-sorts, which
a bundle cannot see). What gets written is therefore byte for byte what ``repair --write`` writes with
that clock, and what support previewed; it goes through the single write path (fingerprints
re-checked, backups, the write log, undo).
"""

from __future__ import annotations

import base64
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from inspector import portable, version
from inspector.bundle import ROOTS, home_id, who
from inspector.home import Home
from inspector.plan import Clock, FileChange, Plan, render_diff
from inspector.store.files import sha256_hex
from inspector.store.index import INDEX_NAME, parse_index

KIT_FORMAT = "hermes-inspector-repair-kit"
FORMAT_VERSION = 1
MAX_KIT_BYTES = 512 << 20


class KitError(Exception):
    """A kit cannot be made, read or applied here; the message says why. Nothing was written."""


def canonical(body: dict) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=True).encode(
        "ascii"
    )


def _roots(home: Home) -> dict[str, Path]:
    return {"home": home.base, "state": home.state_dir}


def _split(path: Path, home: Home) -> tuple[str, str]:
    for root in ("state", "home"):
        try:
            return root, path.relative_to(_roots(home)[root]).as_posix()
        except ValueError:
            continue
    raise KitError(f"{path} is outside the home and its WebUI state dir; it cannot go in a kit")


def _is_index(root: str, rel: str) -> bool:
    return root == "state" and rel == f"sessions/{INDEX_NAME}"


def _index_rows(data: bytes | None, sessions: list[str]) -> dict[str, object]:
    """The index rows of ``sessions`` (None = no row), or a marker for a missing/unusable index."""
    if data is None:
        return {"__missing__": True}
    rows = parse_index(data)
    if rows is None:
        return {"__unusable__": True}
    out: dict[str, object] = {sid: None for sid in sessions}
    for row in rows:
        sid = row.get("session_id")
        if isinstance(sid, str) and sid in out and out[sid] is None:
            out[sid] = row
    return out


# ---------------------------------------------------------------- making a kit


def make_kit(plan: Plan, home: Home, clock: Clock) -> dict:
    """The kit of a plan made in an opened support bundle."""
    origin = home.bundle
    if origin is None:
        raise KitError("a repair kit is made in a support bundle (--home FILE.tar.gz); here, use --write")
    if plan.refusal:
        raise KitError(f"the plan is refused, so there is nothing to put in a kit: {plan.refusal}")
    if not plan.changes:
        raise KitError("the plan writes nothing, so there is nothing to put in a kit")
    sessions = list(origin.sessions)
    index = home.session_dir / INDEX_NAME
    index_after = next((c.after for c in plan.changes if c.path == index), None)
    if not any(c.path == index for c in plan.changes):
        try:
            index_after = index.read_bytes()
        except FileNotFoundError:
            index_after = None
        except OSError as exc:
            raise KitError(f"{index} cannot be read ({exc.strerror or exc})") from exc
    files = []
    for c in plan.changes:
        if c.path == index:
            continue
        root, rel = _split(c.path, home)
        entry: dict = {
            "root": root,
            "path": rel,
            "kind": c.kind,
            "sha256_before": sha256_hex(c.before) if c.before is not None else None,
            "size_before": len(c.before) if c.before is not None else None,
            "sha256_after": sha256_hex(c.after) if c.after is not None else None,
        }
        if c.after is not None:
            entry["after_b64"] = base64.b64encode(c.after).decode("ascii")
        files.append(entry)
    body = {
        "action": plan.action,
        "session_id": plan.session_id,
        "clock": {"now": clock.now, "server_started_at": clock.server_started_at},
        "hermes_cwd": origin.hermes_cwd,
        "home_id": origin.home_id,
        "home": {"base": origin.original_base, "state_dir": origin.original_state_dir},
        "bundle": {
            "file": origin.archive.name,
            "made_by": origin.made_by,
            "made_at": origin.made_at,
            "sessions": sessions,
            "inspector_version": origin.inspector_version,
        },
        "hermes_webui_version": origin.hermes_webui_version,
        "made_by": who(),
        "made_at": time.time(),
        "inspector_version": version(),
        "summary": list(plan.summary),
        "warnings": list(plan.warnings),
        "preview": render_diff(plan),
        "files": files,
        "index_rows": _index_rows(index_after, sessions),
    }
    return {
        "format": KIT_FORMAT,
        "format_version": FORMAT_VERSION,
        "body": body,
        "body_sha256": sha256_hex(canonical(body)),
    }


def save_kit(kit: dict, dest: Path, *, overwrite: bool = False) -> None:
    """Write a kit (0600; a temp file beside it, then renamed)."""
    dest = Path(dest)
    if dest.exists() and not overwrite:
        raise KitError(f"{dest} already exists; choose another name")
    data = (json.dumps(kit, ensure_ascii=True, indent=1) + "\n").encode("ascii")
    tmp = dest.with_name(f".{dest.name}.inspector.tmp.{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | portable.O_BINARY, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise KitError(f"cannot write {dest} ({exc.strerror or exc}); nothing was written") from exc


# ---------------------------------------------------------------- reading and checking a kit


@dataclass(frozen=True)
class KitFile:
    root: str
    path: str
    kind: str
    sha256_before: str | None
    size_before: int | None
    sha256_after: str | None
    after: bytes | None

    @property
    def label(self) -> str:
        return f"{self.root}/{self.path}"


@dataclass(frozen=True)
class Kit:
    body: dict
    files: list[KitFile]

    @property
    def action(self) -> str:
        return self.body["action"]

    @property
    def session_id(self) -> str | None:
        return self.body["session_id"]

    @property
    def clock(self) -> Clock:
        c = self.body["clock"]
        return Clock(now=float(c["now"]), server_started_at=float(c["server_started_at"]))

    def describe(self) -> str:
        b = self.body
        bundle = b.get("bundle", {})
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(float(b.get("made_at", 0))))
        return (
            f"Repair kit: {b['action']} {b['session_id'] or '(all eligible sessions)'}, made by "
            f"{b.get('made_by', '?')} at {when} from bundle {bundle.get('file', '?')} "
            f"({bundle.get('made_by', '?')})"
        )


def _safe_rel(root: object, rel: object) -> str | None:
    """Why a kit path is refused (None when it is a plain path inside its root)."""
    if root not in ROOTS:
        return f"unknown root {root!r}"
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        return f"{rel!r} is not a path"
    p = PurePosixPath(rel)
    if p.is_absolute() or rel.startswith("/"):
        return f"{rel!r} is absolute; a kit names files relative to the home"
    if ".." in p.parts or "." in p.parts or p.as_posix() != rel:
        return f"{rel!r} leaves the home or is not a plain path"
    return None


def _hex(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(ch in "0123456789abcdef" for ch in value)


def _kit_file(entry: object) -> KitFile:
    if not isinstance(entry, dict):
        raise KitError("the kit has a malformed file entry")
    problem = _safe_rel(entry.get("root"), entry.get("path"))
    if problem:
        raise KitError(f"the kit is refused: {problem}")
    kind = entry.get("kind")
    if kind not in ("create", "modify", "delete"):
        raise KitError(f"the kit is refused: {entry['path']} has an unknown kind {kind!r}")
    before, after = entry.get("sha256_before"), entry.get("sha256_after")
    if (
        (kind == "create") != (before is None)
        or (kind == "delete") != (after is None)
        or (before is not None and not _hex(before))
        or (after is not None and not _hex(after))
    ):
        raise KitError(f"the kit is refused: {entry['path']} has inconsistent fingerprints")
    data = None
    if _is_index(entry["root"], entry["path"]):
        raise KitError("the kit is refused: it names _index.json as a file (a kit holds index rows only)")
    if after is not None:
        try:
            data = base64.b64decode(entry.get("after_b64", ""), validate=True)
        except (ValueError, TypeError) as exc:
            raise KitError(f"the kit is refused: the bytes of {entry['path']} are not base64") from exc
        if sha256_hex(data) != after:
            raise KitError(f"the kit is refused: the bytes of {entry['path']} do not match their sha256")
    size = entry.get("size_before")
    return KitFile(
        entry["root"], entry["path"], kind, before, size if isinstance(size, int) else None, after, data
    )


def parse_kit(data: bytes) -> Kit:
    """Read and verify a kit's own integrity (KitError says why it is refused)."""
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise KitError(f"not a repair kit: not valid JSON ({exc})") from exc
    if not isinstance(obj, dict) or obj.get("format") != KIT_FORMAT:
        raise KitError("not a hermes-inspector repair kit")
    if obj.get("format_version") != FORMAT_VERSION:
        raise KitError(
            f"a repair kit of format {obj.get('format_version')!r}; this inspector reads "
            f"format {FORMAT_VERSION}"
        )
    body = obj.get("body")
    if not isinstance(body, dict) or obj.get("body_sha256") != sha256_hex(canonical(body)):
        raise KitError(
            "the kit was changed after it was made (its content does not match its fingerprint); "
            "ask for a new kit"
        )
    try:
        clock = body["clock"]
        float(clock["now"]), float(clock["server_started_at"])
        files = [_kit_file(e) for e in body["files"]]
        if not isinstance(body["action"], str) or not (
            body["session_id"] is None or isinstance(body["session_id"], str)
        ):
            raise TypeError("action/session_id")
        if not isinstance(body["index_rows"], dict):
            raise TypeError("index_rows")
    except (KeyError, TypeError, ValueError) as exc:
        raise KitError(f"the kit is malformed ({exc})") from exc
    labels = [f.label for f in files]
    if len(set(labels)) != len(labels):
        raise KitError("the kit names a file twice")
    return Kit(body=body, files=files)


def load_kit(path: Path) -> Kit:
    path = Path(path)
    try:
        if path.stat().st_size > MAX_KIT_BYTES:
            raise KitError(f"{path} is larger than a repair kit may be")
        data = path.read_bytes()
    except OSError as exc:
        raise KitError(f"cannot read {path} ({exc.strerror or exc})") from exc
    return parse_kit(data)


def _target(home: Home, f: KitFile) -> Path:
    """The live path of a kit file; refused when a folder on the way leaves the home."""
    root = _roots(home)[f.root]
    target = root / f.path
    try:
        resolved_parent = target.parent.resolve()
        inside = resolved_parent.is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        raise KitError(f"the kit is refused: {f.label} leads outside the home (through a link)")
    return target


def check_kit(kit: Kit, home: Home, plan: Plan) -> list[str]:
    """Why ``plan`` (made here with the kit's clock) is not the kit's: empty = apply it."""
    if home.bundle is not None:
        return ["a repair kit is applied on the user's home, not inside a support bundle"]
    if kit.body.get("home_id") != home_id(home):
        original = kit.body.get("home", {}).get("base", "?")
        return [
            f"this kit was made for another Hermes home ({original} on the machine the bundle came "
            f"from), not {home.base} (if it is the same home, locate it as when the bundle was made: the "
            "same --home and --state-dir, on the same machine)"
        ]
    if plan.refusal:
        return [f"the repair is refused on this home now: {plan.refusal}"]
    problems = []
    mine = {}
    for c in plan.changes:
        try:
            root, rel = _split(c.path, home)
        except KitError as exc:
            problems.append(str(exc))
            continue
        mine[f"{root}/{rel}"] = c
    for f in kit.files:
        try:
            _target(home, f)
        except KitError as exc:
            problems.append(str(exc))
            continue
        c = mine.pop(f.label, None)
        problems += _compare(f, c, home)
    problems += _compare_index(kit.body["index_rows"], mine.pop(f"state/sessions/{INDEX_NAME}", None), home)
    for c in mine.values():
        problems.append(f"{c.path}: this home's repair would also write it; the kit does not")
    return problems


def _compare(f: KitFile, c: FileChange | None, home: Home) -> list[str]:
    live = _roots(home)[f.root] / f.path
    live_sha = None
    if c is not None and c.before is not None:
        live_sha = sha256_hex(c.before)
    elif c is None:
        try:
            live_sha = sha256_hex(live.read_bytes())
        except FileNotFoundError:
            live_sha = None
        except OSError as exc:
            return [f"{live} cannot be read ({exc.strerror or exc})"]
    if live_sha != f.sha256_before:
        if f.sha256_before is None:
            return [f"{live} now exists; it did not when the bundle was made (the chat moved on)"]
        if live_sha is None:
            return [f"{live} was removed since the bundle was made"]
        return [f"{live} changed since the bundle was made (the chat moved on); ask for a new bundle"]
    if c is None:
        return [f"{live}: this home's repair would leave it as it is; the kit changes it"]
    if c.after != f.after:
        return [
            f"{live}: this home's repair gives other bytes than the kit (the kit was made from "
            "different files, or this machine resolves paths differently)"
        ]
    return []


def _compare_index(want: dict, c: FileChange | None, home: Home) -> list[str]:
    """The bundled sessions' index rows after this home's repair must be the kit's."""
    live = home.session_dir / INDEX_NAME
    if c is not None:
        after = c.after
    else:
        try:
            after = live.read_bytes()
        except FileNotFoundError:
            after = None
        except OSError as exc:
            return [f"{live} cannot be read ({exc.strerror or exc})"]
    got = _index_rows(after, [k for k in want if not k.startswith("__")])
    if canonical(want) != canonical(got):  # as JSON text: 1 and 1.0 are different bytes in an index
        return [
            f"{live}: the bundled sessions' index rows would come out differently here than in the kit "
            "(the chat moved on, or the index changed since the bundle was made)"
        ]
    return []


def plan_kit(kit: Kit, home: Home) -> tuple[Plan, list[str]]:
    """This home's plan of the kit's action with the kit's clock, and why it must not be written.

    The plan's summary starts with where the kit came from; with no problems it is exactly
    what ``repair --write`` would write with that clock, and exactly the kit's files.
    """
    from inspector.actions import make_context, plan_action
    from inspector.repair import home_wide, is_action

    if not is_action(kit.action):
        raise KitError(f"the kit's action {kit.action!r} is unknown to this inspector ({version()})")
    if kit.session_id is None and not home_wide(kit.action):
        raise KitError("the kit names no session for a per-session action")
    plan = plan_action(make_context(home, kit.clock), kit.action, kit.session_id)[0]
    problems = check_kit(kit, home, plan)
    plan.summary.insert(0, kit.describe())
    if problems:
        plan.refusal = "this repair kit cannot be applied here:\n  " + "\n  ".join(problems)
    return plan, problems
