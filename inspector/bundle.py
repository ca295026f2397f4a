"""Support bundles (issue 17): a ``.tar.gz`` of just the chats support needs, opened read-only.

**Making one** (:func:`collect` then :func:`write_bundle`) only reads the home. For each chosen
session it takes the files the inspector reads for it (spec session-storage §1.3, §5): the
sidecar and its ``.bak``, its run journals, its turn-journal shards, its core transcripts in
every profile; plus the two tombstone files (ids only), ``_index.json`` cut down to the chosen
sessions' rows (the other rows are other chats' titles and counts), and for each profile's
``state.db`` an extract holding only the chosen sessions' rows in the same schema
(:mod:`inspector.store.statedb_extract`). Nothing else: no ``.env``, ``config.yaml``,
``auth.json``, ``webui.pid`` or other sessions. ``manifest.json`` lists every file with its
size and sha256, the versions, the home's layout and when and by whom it was made.

Inside the archive, ``home/`` holds files relative to the Hermes home and ``state/`` files
relative to the WebUI state dir (wherever it lives), so a repair kit can name a file by
(root, relative path) and be re-anchored on the user's machine.

**Opening one** (:func:`open_bundle`) checks every member before extracting anything: at
most :data:`MAX_MEMBERS` members, each a plain file or folder under ``manifest.json``,
``home/`` or ``state/`` (no absolute path, no ``..``, no link, device, FIFO or sparse file),
each at most :data:`MAX_MEMBER_BYTES` and all together at most :data:`MAX_TOTAL_BYTES`. Then
tarfile's ``data`` filter extracts into a private 0700 temporary folder, every file is checked
against the manifest, and the tree is made read-only. :meth:`OpenedBundle.close` removes it.
"""

from __future__ import annotations

import contextlib
import getpass
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import socket
import tarfile
import tempfile
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from inspector import portable, version
from inspector.home import (  # looks_like_bundle lives in home: --home is tested without loading this module
    DEFAULT_PROFILE,
    BundleOrigin,
    Home,
    hermes_cwd,
    locate_home,
    webui_started_at,
)
from inspector.store.files import read_regular, sha256_hex
from inspector.store.index import INDEX_NAME, parse_index
from inspector.store.jsonfmt import dumps_pretty_fast
from inspector.store.sidecar import is_safe_session_id
from inspector.store.statedb import StateDbError, session_record
from inspector.store.statedb_extract import extract_sessions

BUNDLE_FORMAT = "hermes-inspector-support-bundle"
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
ROOTS = ("home", "state")
MAX_MEMBERS = 100_000
MAX_MEMBER_BYTES = 1 << 30  # 1 GiB: a sidecar or state.db extract of one chat is far below
MAX_TOTAL_BYTES = 4 << 30
MAX_MANIFEST_BYTES = 16 << 20
TOMBSTONES = ("_deleted_webui_sessions.json", "_pruned_webui_orphans.json")


class BundleError(Exception):
    """A bundle cannot be made or opened; the message says why (and that nothing was written)."""


# ---------------------------------------------------------------- identity of a home


def machine_id() -> str:
    """This machine's id (systemd/dbus ``machine-id``), else its host name."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        with contextlib.suppress(OSError):
            text = Path(path).read_text(encoding="ascii", errors="replace").strip()
            if text:
                return text
    return socket.gethostname()


def home_id(home: Home) -> str:
    """A hash naming one Hermes home on one machine: a kit made for it is refused elsewhere.

    It covers the machine id, the resolved paths of the home and of its WebUI state dir, and
    the inode of the home folder. A copy of the home (another path), the same path on another
    machine, or a home deleted and made again (another inode) each get another id, while
    nothing a repair writes changes it. Nothing is stored in the home (reads never write); the
    id is the hash, so the manifest does not carry the machine id itself.
    """
    if home.bundle is not None:
        return home.bundle.home_id
    base = home.base.resolve()
    try:
        inode = os.stat(base).st_ino
    except OSError:
        inode = 0
    text = "\0".join(
        ("hermes-inspector home v1", machine_id(), str(base), str(home.state_dir.resolve()), str(inode))
    )
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def who() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(portable.euid() if portable.euid() is not None else "unknown")
    return f"{user}@{socket.gethostname()}"


def hermes_webui_version(home: Home) -> str | None:
    """hermes-webui's version when known: ``REPO_ROOT`` of ``webui.ctl.env`` (written by its
    ``ctl.sh``), then ``api/_version.py`` there, as hermes' own ``_detect_webui_version`` reads it."""
    try:
        text = (home.base / "webui.ctl.env").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"^(?:export\s+)?REPO_ROOT=(.+)$", text, re.MULTILINE)
    if not m:
        return None
    root = Path(m.group(1).strip().strip("'\"")).expanduser()
    with contextlib.suppress(OSError):
        v = re.search(
            r"""__version__\s*=\s*['"]([^'"]+)['"]""",
            (root / "api" / "_version.py").read_text(encoding="utf-8"),
        )
        if v:
            return v.group(1)
    return None


# ---------------------------------------------------------------- making a bundle


# Files up to this size are kept in memory from the look that lists them to the write, up to
# KEEP_TOTAL together; any other is read again when written and must still have the sha256 the
# summary was made with.
KEEP_IN_MEMORY = 4 << 20
KEEP_TOTAL = 64 << 20


@dataclass(frozen=True)
class BundleFile:
    """One member: its name in the archive, where it came from, its size and sha256, and its bytes
    when they are kept (``None``: read again from ``source`` when the archive is written)."""

    arcname: str
    source: str
    size: int
    sha256: str
    data: bytes | None = None

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        try:
            data = _read_plain(Path(self.source))
        except OSError as exc:
            raise BundleError(
                f"{self.source} cannot be read ({exc.strerror or exc}); nothing was written"
            ) from exc
        if data is None or len(data) != self.size or sha256_hex(data) != self.sha256:
            raise BundleError(
                f"{self.source} changed while the bundle was being made; nothing was written, try again"
            )
        return data


@dataclass
class BundleContents:
    """Everything a bundle will hold, gathered (read-only) before anything is written."""

    sessions: list[str]
    files: list[BundleFile] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    state_dbs: list[dict] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def summary(self) -> str:
        """What goes in, as the command prints it and the window shows it before writing."""
        lines = [
            f"Support bundle: {len(self.sessions)} session(s), {len(self.files)} file(s), "
            f"{_human(self.total_bytes)} before compression"
        ]
        lines += [f"  session {sid}" for sid in self.sessions]
        lines += [f"  {f.arcname}  ({_human(f.size)})" for f in self.files]
        for db in self.state_dbs:
            lines.append(
                f"  {db['path']}: extract with {db['sessions']} session row(s), "
                f"{db['rows'].get('messages', 0)} message row(s)"
            )
            lines += [f"    left out: {x}" for x in db["left_out"]]
        lines += [f"  not included: {s}" for s in self.skipped]
        lines.append("Never included: .env, config.yaml, auth.json, other sessions.")
        return "\n".join(lines) + "\n"


def _human(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # pragma: no cover


def _read_plain(path: Path) -> bytes | None:
    """A regular file's bytes (None when missing); a link or anything else raises OSError."""
    try:
        return read_regular(path, None, follow_links=False)[0]
    except FileNotFoundError:
        return None


def _relative(path: Path, home: Home) -> str | None:
    """``home/<rel>`` or ``state/<rel>`` for a path inside one of the two roots."""
    for root, folder in (("state", home.state_dir), ("home", home.base)):
        with contextlib.suppress(ValueError):
            return f"{root}/{path.relative_to(folder).as_posix()}"
    return None


def _session_paths(home: Home, sid: str) -> list[Path]:
    """The files the inspector reads for one session (those that exist)."""
    sdir = home.session_dir
    paths = [sdir / f"{sid}.json", sdir / f"{sid}.json.bak"]
    run_dir = sdir / "_run_journal" / sid
    with contextlib.suppress(OSError):
        if run_dir.is_dir() and not run_dir.is_symlink():
            paths += sorted(p for p in run_dir.iterdir())
    turn_dir = sdir / "_turn_journal"
    with contextlib.suppress(OSError):
        if turn_dir.is_dir() and not turn_dir.is_symlink():
            paths += sorted(
                p for p in turn_dir.iterdir() if p.name == f"{sid}.jsonl" or p.name.startswith(f"{sid}~")
            )
    for profile in home.profile_names():
        paths.append(home.core_transcript(sid, profile))
    return paths


def _filtered_index(data: bytes, chosen: set[str]) -> bytes:
    """The index with only the chosen sessions' rows, in hermes' format; unusable ones as they are."""
    rows = parse_index(data)
    if rows is None:
        return data  # hermes rebuilds an unusable index: keep it as the user has it
    return dumps_pretty_fast([r for r in rows if r.get("session_id") in chosen])


def select_sessions(
    home: Home,
    ids: Iterable[str] = (),
    *,
    attention: bool = False,
    every: bool = False,
    now: float | None = None,
) -> list[str]:
    """The session ids a bundle covers: the given ones, those needing attention, or all.

    Named sessions are only looked up (a file of theirs, or a row in a ``state.db``); the
    other two read the whole catalogue."""
    ids = list(ids)
    for sid in ids:
        if not is_safe_session_id(sid):
            raise BundleError(f"{sid!r} is not a session id (only letters, digits, _ and -)")
    if every or attention:
        from inspector.load import load_catalogue

        cat = load_catalogue(home, now=time.time() if now is None else now, with_hermes_audit=False)
        return sorted(sid for sid, row in cat.rows.items() if every or row.needs_attention)
    unknown = [sid for sid in ids if not _session_exists(home, sid)]
    if unknown:
        raise BundleError(f"no session {', '.join(unknown)} in {home.base}")
    return sorted(dict.fromkeys(ids))


def _session_exists(home: Home, sid: str) -> bool:
    if any(os.path.lexists(p) for p in _session_paths(home, sid)):
        return True
    for profile in home.profile_names():
        db = home.state_db(profile)
        if db.is_file():
            with contextlib.suppress(StateDbError):
                if session_record(db, sid) is not None:
                    return True
    return False


def collect(home: Home, session_ids: list[str], *, now: float | None = None, workdir: Path) -> BundleContents:
    """Gather a bundle's contents for ``session_ids`` (reads the home, writes only in ``workdir``)."""
    if home.bundle is not None:
        raise BundleError("this is already a support bundle; make a bundle on the user's machine")
    if not session_ids:
        raise BundleError("no sessions chosen: nothing to put in a bundle")
    made_at = time.time() if now is None else now
    chosen = set(session_ids)
    out = BundleContents(sessions=list(session_ids))
    seen: set[str] = set()
    kept = [0]

    def add(path: Path, data: bytes | None = None) -> None:
        derived = data is not None  # a cut-down index or a state.db extract: kept, never re-read
        arc = _relative(path, home)
        if arc is None or arc in seen:
            return
        try:
            data = _read_plain(path) if data is None else data
        except OSError as exc:
            out.skipped.append(f"{path} ({exc.strerror or exc})")
            return
        if data is not None:
            seen.add(arc)
            keep = (
                data
                if derived or (len(data) <= KEEP_IN_MEMORY and kept[0] + len(data) <= KEEP_TOTAL)
                else None
            )
            kept[0] += len(keep or b"") if not derived else 0
            out.files.append(BundleFile(arc, str(path), len(data), sha256_hex(data), keep))

    index = home.session_dir / INDEX_NAME
    try:
        raw_index = _read_plain(index)
    except OSError as exc:
        out.skipped.append(f"{index} ({exc.strerror or exc})")
        raw_index = None
    if raw_index is not None:
        add(index, _filtered_index(raw_index, chosen))
    for name in TOMBSTONES:
        add(home.session_dir / name)
    for sid in session_ids:
        for path in _session_paths(home, sid):
            add(path)
    _add_state_dbs(home, session_ids, out, workdir, add)
    out.files.sort(key=lambda f: f.arcname)
    if (
        len(out.files) >= MAX_MEMBERS
        or out.total_bytes > MAX_TOTAL_BYTES
        or any(f.size > MAX_MEMBER_BYTES for f in out.files)
    ):
        raise BundleError(
            f"{len(session_ids)} sessions make {len(out.files):,} files of {_human(out.total_bytes)}: "
            f"more than a bundle may hold ({MAX_MEMBERS:,} files, {_human(MAX_TOTAL_BYTES)}, "
            f"{_human(MAX_MEMBER_BYTES)} a file); choose fewer sessions"
        )
    out.manifest = _manifest(home, out, made_at)
    return out


def _add_state_dbs(home: Home, session_ids: list[str], out: BundleContents, workdir: Path, add) -> None:
    for profile in home.profile_names():
        src = home.state_db(profile)
        if not src.is_file() or src.is_symlink():
            continue
        target = home.profile_home(profile) / "state.db"
        dest = workdir / f"extract-{len(out.state_dbs)}.db"
        try:
            ext = extract_sessions(src, dest, session_ids)
        except StateDbError as exc:
            out.skipped.append(f"{src}: {exc}")
            continue
        if profile != DEFAULT_PROFILE and ext.sessions == 0:
            dest.unlink(missing_ok=True)
            continue
        add(target, dest.read_bytes())
        dest.unlink(missing_ok=True)
        out.state_dbs.append(
            {"path": _relative(target, home), "source": str(src), "profile": profile, **ext.to_json()}
        )


def _manifest(home: Home, out: BundleContents, made_at: float) -> dict:
    return {
        "format": BUNDLE_FORMAT,
        "format_version": FORMAT_VERSION,
        "inspector_version": version(),
        "hermes_webui_version": hermes_webui_version(home),
        "made_at": made_at,
        "made_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(made_at)),
        "made_by": who(),
        "home": {
            "base": str(home.base),
            "state_dir": str(home.state_dir),
            "session_dir": str(home.session_dir),
            "state_db": str(home.state_db()),
            "profiles": home.profile_names(),
            "home_id": home_id(home),
            "hermes_cwd": str(hermes_cwd(home)),
            "webui_started_at": webui_started_at(home),
            "index": "cut down to the bundled sessions' rows",
        },
        "sessions": out.sessions,
        "files": [{"path": f.arcname, "size": f.size, "sha256": f.sha256} for f in out.files],
        "state_db_extracts": out.state_dbs,
        "not_included": out.skipped,
    }


def write_bundle(contents: BundleContents, dest: Path, *, overwrite: bool = False) -> None:
    """Write the archive, created 0600 (a temp file beside ``dest``, then renamed)."""
    dest = Path(dest)
    if dest.exists() and not overwrite:
        raise BundleError(f"{dest} already exists; choose another name")
    tmp = dest.with_name(f".{dest.name}.inspector.tmp.{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | portable.O_BINARY, 0o600)
    except OSError as exc:
        raise BundleError(f"cannot create {dest} ({exc.strerror or exc}); nothing was written") from exc
    try:
        portable.fchmod(fd, 0o600)
        with (
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            manifest = json.dumps(contents.manifest, ensure_ascii=False, indent=2).encode("utf-8")
            members = [(MANIFEST_NAME, lambda: manifest)] + [(f.arcname, f.read) for f in contents.files]
            for name, read in members:
                data = read()
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o600, int(contents.manifest["made_at"])
                tar.addfile(info, io.BytesIO(data))
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, dest)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise BundleError(f"cannot write {dest} ({exc.strerror or exc}); nothing was written") from exc
        raise


def make_bundle(
    home: Home, session_ids: list[str], dest: Path, *, overwrite: bool = False, now: float | None = None
) -> BundleContents:
    """collect + write_bundle, with the extracts' scratch folder cleaned up."""
    with tempfile.TemporaryDirectory(prefix="hermes-inspector-extract-") as work:
        contents = collect(home, session_ids, now=now, workdir=Path(work))
    write_bundle(contents, dest, overwrite=overwrite)
    return contents


# ---------------------------------------------------------------- opening a bundle


@dataclass
class OpenedBundle:
    """A bundle unpacked read-only into a private temporary folder."""

    archive: Path
    root: Path
    manifest: dict
    home: Home

    def describe(self) -> str:
        """One line for a title bar or a banner: it is a bundle, from whom, when."""
        m = self.manifest
        return (
            f"support bundle {self.archive.name} — from {m.get('made_by', '?')}, made "
            f"{m.get('made_at_utc', '?')} of {m.get('home', {}).get('base', '?')} "
            f"({len(m.get('sessions', []))} session(s)); read-only"
        )

    def close(self) -> None:
        _remove_tree(self.root)

    def __enter__(self) -> OpenedBundle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_tree(root: Path) -> None:
    if not root.exists():
        return
    for dirpath, dirnames, _files in os.walk(root):
        for d in dirnames:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(dirpath, d), 0o700)
    with contextlib.suppress(OSError):
        os.chmod(root, 0o700)
    shutil.rmtree(root, ignore_errors=True)


def _member_problem(m: tarfile.TarInfo) -> str | None:
    name = m.name
    p = PurePosixPath(name)
    if not name or name.startswith("/") or p.is_absolute() or "\\" in name or "\x00" in name:
        return f"{name!r} is an absolute or unusual path"
    if ".." in p.parts:
        return f"{name!r} climbs out of the bundle (..)"
    if m.issym() or m.islnk():
        return f"{name!r} is a link (to {m.linkname!r}); bundles hold plain files only"
    if m.isdev() or m.isfifo():
        return f"{name!r} is a device or FIFO; bundles hold plain files only"
    if m.issparse():
        return f"{name!r} is a sparse file; bundles hold plain files only"
    if not (m.isfile() or m.isdir()):
        return f"{name!r} is not a plain file or folder"
    top = p.parts[0] if p.parts else ""
    if name.rstrip("/") != MANIFEST_NAME and top not in ROOTS:
        return f"{name!r} is outside manifest.json, home/ and state/"
    if m.size > MAX_MEMBER_BYTES:
        return f"{name!r} is {m.size:,} bytes, more than a bundle member may be ({MAX_MEMBER_BYTES:,})"
    return None


def _check_members(path: Path) -> list[tarfile.TarInfo]:
    """Every member, checked while the archive is read; the first problem raises BundleError."""
    members = []
    total = 0
    with tarfile.open(path, mode="r:gz") as tar:
        while (m := tar.next()) is not None:
            members.append(m)
            if len(members) > MAX_MEMBERS:
                raise BundleError(f"{path} has more than {MAX_MEMBERS:,} members; not a support bundle")
            problem = _member_problem(m)
            if problem:
                raise BundleError(f"{path} is refused: {problem}. Nothing was extracted.")
            total += m.size
            if total > MAX_TOTAL_BYTES:
                raise BundleError(f"{path} would unpack to more than {MAX_TOTAL_BYTES:,} bytes; refused")
    return members


def _load_manifest(root: Path, path: Path) -> dict:
    mpath = root / MANIFEST_NAME
    if not mpath.is_file() or mpath.stat().st_size > MAX_MANIFEST_BYTES:
        raise BundleError(f"{path} has no usable manifest.json; not a support bundle")
    try:
        manifest = json.loads(mpath.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise BundleError(f"{path}: manifest.json is not valid JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{path} is not a hermes-inspector support bundle (manifest format)")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise BundleError(
            f"{path} is a bundle of format {manifest.get('format_version')!r}; "
            f"this inspector reads format {FORMAT_VERSION}"
        )
    if not isinstance(manifest.get("files"), list) or not isinstance(manifest.get("home"), dict):
        raise BundleError(f"{path}: manifest.json lacks its file list or home")
    return manifest


def _verify_files(root: Path, manifest: dict, path: Path) -> None:
    listed = {}
    for entry in manifest["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise BundleError(f"{path}: manifest.json has a malformed file entry")
        listed[entry["path"]] = entry
    present = set()
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            rel = Path(dirpath, name).relative_to(root).as_posix()
            if rel != MANIFEST_NAME:
                present.add(rel)
    extra = sorted(present - set(listed))
    missing = sorted(set(listed) - present)
    if extra or missing:
        raise BundleError(
            f"{path}: its files do not match manifest.json (extra: {extra[:5]}, missing: {missing[:5]})"
        )
    for rel, entry in listed.items():
        digest, size = hashlib.sha256(), 0
        with open(root / rel, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
        if size != entry.get("size") or digest.hexdigest() != entry.get("sha256"):
            raise BundleError(f"{path}: {rel} does not match its size and sha256 in manifest.json")


def _make_read_only(root: Path) -> None:
    for dirpath, dirnames, files in os.walk(root, topdown=False):
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o400)
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o500)
    os.chmod(root, 0o500)


def _origin(path: Path, manifest: dict) -> BundleOrigin:
    h = manifest["home"]
    started = h.get("webui_started_at")
    made_at = manifest.get("made_at")
    return BundleOrigin(
        archive=path.resolve(),
        made_at=float(made_at) if isinstance(made_at, (int, float)) else 0.0,
        made_by=str(manifest.get("made_by", "?")),
        original_base=str(h.get("base", "")),
        original_state_dir=str(h.get("state_dir", "")),
        home_id=str(h.get("home_id", "")),
        hermes_cwd=str(h.get("hermes_cwd") or h.get("base", "")),
        webui_started_at=float(started) if isinstance(started, (int, float)) else None,
        sessions=tuple(s for s in manifest.get("sessions", []) if isinstance(s, str)),
        inspector_version=_text_or_none(manifest.get("inspector_version")),
        hermes_webui_version=_text_or_none(manifest.get("hermes_webui_version")),
    )


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def open_bundle(path: str | os.PathLike) -> OpenedBundle:
    """Unpack a bundle read-only into a private temporary folder (BundleError when refused)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise BundleError(f"{path} is not a file")
    root = Path(tempfile.mkdtemp(prefix="hermes-inspector-bundle-"))
    try:
        try:
            members = _check_members(path)
            with tarfile.open(path, mode="r:gz") as tar:
                tar.extractall(root / "x", members=members, filter="data")
        except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise BundleError(
                f"{path} is not a readable .tar.gz ({exc or type(exc).__name__}); nothing was extracted"
            ) from exc
        except OSError as exc:
            raise BundleError(f"{path} cannot be unpacked ({exc.strerror or exc}); nothing was kept") from exc
        unpacked = root / "x"
        manifest = _load_manifest(unpacked, path)
        _verify_files(unpacked, manifest, path)
        for r in ROOTS:
            (unpacked / r).mkdir(exist_ok=True)
        _make_read_only(unpacked)
        home = locate_home(unpacked / "home", unpacked / "state", env={})
        # the bundle's state folder is named explicitly (it sits beside the home), so it is trusted like --state-dir
        home = Home(
            base=home.base,
            state_dir=home.state_dir,
            state_dir_from=home.state_dir_from,
            bundle=_origin(path, manifest),
        )
        return OpenedBundle(archive=path, root=root, manifest=manifest, home=home)
    except BaseException:
        _remove_tree(root)
        raise
