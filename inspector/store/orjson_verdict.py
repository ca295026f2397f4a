"""The verdict of jsonfmt's orjson check, kept per orjson build in the inspector's own cache folder.

:func:`inspector.store.jsonfmt._orjson_escapes_like_stdlib` proves, once per process, that this
orjson escapes every Unicode code point exactly as the stdlib's ``c_encode_basestring`` and lays
out plain values as ``json.dumps(indent=2)`` (30-40 ms: the 1.1 million code points written by
both). Only then may orjson write a byte hermes would write. The verdict depends on nothing but the
two encoders, so it is kept in a small file, one per build, and reused by the next process:

* **key**: what the verdict depends on - orjson's version, its extension file (real path, size and
  the SHA-256 of its bytes), the Python build (``sys.version``, the cache tag), the stdlib's side
  (the SHA-256 of ``_json``'s extension file and of ``json/encoder.py``) and the check's own code
  (the SHA-256 of its marshalled code objects, so a changed check is never answered by an old
  verdict). The file is named by the key's hash and holds the key itself: another build (another
  virtual environment sharing the cache folder, an upgraded orjson, a rebuilt extension) reads
  another file, or finds a different key in this one, and runs the check.
* **where**: :func:`inspector.statedir.cache_folder` (``$HERMES_INSPECTOR_STATE_DIR/cache``, else the
  per-user cache folder), never a folder registered with
  :func:`inspector.statedir.keep_out_of` (the open Hermes home); nothing at all with
  ``HERMES_INSPECTOR_NO_CACHE`` set.
* **trust**: a file that is missing, unreadable, larger than 64 KB, not ours (another owner, or
  writable by group or others, on POSIX), not JSON, of another key, or without a boolean verdict is
  no verdict: the check runs (and its verdict is written again, atomically; a failed write only
  costs the next process the check).

Without orjson nothing here is used (jsonfmt never asks).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

from inspector import portable

FORMAT = 1
MAX_BYTES = 65_536
PREFIX = "orjson-check-"


def _file_sha256(path: str | None) -> str | None:
    if not path:
        return None
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _const_text(value: Any) -> str:
    if isinstance(value, CodeType):
        return "code(" + _code_text(value) + ")"
    if isinstance(value, (tuple, list)):
        return type(value).__name__ + "(" + ",".join(map(_const_text, value)) + ")"
    if isinstance(value, frozenset):  # its iteration order follows the string hash seed
        return "frozenset(" + ",".join(sorted(map(_const_text, value))) + ")"
    return type(value).__name__ + ":" + repr(value)


def _code_text(code: CodeType) -> str:
    """A code object's instructions, names and constants (nested code included), the same text in
    every process (``marshal.dumps`` is not: it flags objects by their reference counts)."""
    return "|".join(
        (code.co_code.hex(), ",".join(code.co_names), ",".join(code.co_varnames), _const_text(code.co_consts))
    )


def _code_sha256(*functions: Callable[..., Any]) -> str | None:
    """The SHA-256 of the functions' code; None when one is not a plain function (nothing to key)."""
    digest = hashlib.sha256()
    for fn in functions:
        code = getattr(fn, "__code__", None)
        if not isinstance(code, CodeType):
            return None
        digest.update(_code_text(code).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def build_key(check: Callable[[], bool], *helpers: Callable[..., Any]) -> dict | None:
    """What the verdict of ``check`` (which calls ``helpers``) depends on; None when orjson's
    extension file cannot be found or read, or a function is not plain Python (then there is nothing
    to key a verdict by, and the check runs every time)."""
    try:
        import _json
        import json.encoder as json_encoder

        import orjson
        import orjson.orjson as ext
    except ImportError:
        return None
    ext_file = getattr(ext, "__file__", None)
    ext_sha = _file_sha256(ext_file)
    if ext_file is None or ext_sha is None:
        return None
    check_sha = _code_sha256(check, *helpers)
    if check_sha is None:
        return None
    try:
        real = os.path.realpath(ext_file)
        size = os.stat(real).st_size
    except OSError:
        return None
    return {
        "format": FORMAT,
        "orjson": str(getattr(orjson, "__version__", "")),
        "extension": [real, size, ext_sha],
        "python": [sys.version, sys.implementation.cache_tag],
        "stdlib": [_file_sha256(getattr(_json, "__file__", None)), _file_sha256(json_encoder.__file__)],
        "check": check_sha,
    }


def verdict_path(key: dict, folder: Path) -> Path:
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:32]
    return folder / f"{PREFIX}{name}.json"


def _folder() -> Path | None:
    """The cache folder, or None where no verdict may be kept (no cache asked for, the home's)."""
    if os.environ.get("HERMES_INSPECTOR_NO_CACHE"):
        return None
    from inspector.statedir import cache_folder, in_kept_out

    try:
        folder = cache_folder()
    except Exception:  # noqa: BLE001 - no cache folder: the check runs every time
        return None
    return None if in_kept_out(folder) else folder


def _ours(st: os.stat_result) -> bool:
    if not stat.S_ISREG(st.st_mode):
        return False
    euid = portable.euid()
    if euid is None:  # Windows: no POSIX owner or mode bits (the folder is the user's own)
        return True
    return st.st_uid == euid and not stat.S_IMODE(st.st_mode) & 0o022


def read_verdict(path: Path, key: dict) -> bool | None:
    """The verdict kept at ``path`` for ``key``, or None (see the module's *trust*)."""
    try:
        fd = os.open(path, os.O_RDONLY | portable.O_BINARY | portable.O_NOFOLLOW | portable.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not _ours(st) or st.st_size > MAX_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_BYTES + 1)
        obj = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    if not isinstance(obj, dict) or obj.get("key") != key:
        return None
    ok = obj.get("ok")
    return ok if type(ok) is bool else None


def write_verdict(path: Path, key: dict, ok: bool) -> bool:
    """Keep ``ok`` for ``key`` at ``path`` (atomically); False when it could not be written."""
    import tempfile  # only here: 5 ms of imports (shutil, bz2, lzma) a kept verdict does without

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".orjson-check-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps({"key": key, "ok": ok}, sort_keys=True).encode("utf-8"))
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except Exception:  # noqa: BLE001 - an unwritable cache only costs the next process the check
        return False
    return True


def verdict(check: Callable[[], bool], *helpers: Callable[..., Any]) -> bool:
    """``check()``'s verdict: the kept one for this build when there is one, else ``check()``
    itself (then kept for the next process)."""
    folder = _folder()
    key = build_key(check, *helpers) if folder is not None else None
    if key is None:
        return check()
    path = verdict_path(key, folder)
    kept = read_verdict(path, key)
    if kept is not None:
        return kept
    ok = check()
    write_verdict(path, key, ok)
    return ok
