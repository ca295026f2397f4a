"""hermes-webui's JSON byte formats, in one place.

hermes writes sidecars, `.bak` files, `_index.json` and tombstones with
``json.dumps(obj, ensure_ascii=False, indent=2)`` encoded as UTF-8, without a trailing
newline, and run-journal lines compactly. Python's own ``json`` module *is* that
serializer, so using it with the same arguments is what makes the bytes identical
(float repr, key order, raw non-ASCII, ``NaN``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def dumps_pretty(obj: Any) -> bytes:
    """Serialize exactly as ``Session.save`` / index / tombstone writers do."""
    return json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8")


def loads_bytes(data: bytes) -> Any:
    """Parse UTF-8 JSON as hermes does (``read_text(encoding='utf-8')`` + ``json.loads``).

    A BOM is not stripped: hermes fails on it, and so do we (the caller turns the
    error into a finding).
    """
    return json.loads(data.decode("utf-8"))


try:  # orjson only speeds up parsing; nothing is ever serialized with it
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None


# Every digit becomes "9", everything else a space: a run of 19 digits is then a plain substring
# search, which runs at memory speed (a regex over the same bytes is ten times slower).
_DIGIT_MAP = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"9" * 19


def has_long_digit_run(data: bytes) -> bool:
    """True when ``data`` holds 19+ consecutive ASCII digits (a number orjson might not keep exact)."""
    return _LONG_RUN in data.translate(_DIGIT_MAP)


def orjson_safe(data: bytes) -> bool:
    """Whether orjson parses ``data`` to exactly what the stdlib would (when it parses at all)."""
    return _orjson is not None and not has_long_digit_run(data)


def fast_loads(data: bytes | str, *, checked: bool = False) -> Any:
    """Parse UTF-8 JSON quickly, with exactly the stdlib's verdict and values.

    orjson is stricter than Python's json (NaN, 1e400, lone surrogates): anything it
    rejects is re-parsed by the stdlib. It also turns integers beyond 64 bits into floats,
    so text holding a run of 19+ digits goes to the stdlib directly. The result never
    depends on which parser ran. ``checked=True`` says the caller already established
    :func:`orjson_safe` for the bytes this text came from.
    """
    if checked:
        use_orjson = _orjson is not None
    else:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        use_orjson = orjson_safe(raw)
    if use_orjson:
        try:
            return _orjson.loads(data)
        except (ValueError, TypeError):
            pass
    return json.loads(data) if isinstance(data, str) else loads_bytes(data)


def loads_or_none(data: bytes | None) -> Any:
    """The parsed value, or None for a missing or unparseable file (callers check the type)."""
    if data is None:
        return None
    try:
        return fast_loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class Fingerprint:
    """Identity of a file's content at read time: what apply re-checks before writing."""

    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of_bytes(cls, data: bytes, st: os.stat_result | None = None) -> Fingerprint:
        return cls(
            size=len(data),
            mtime_ns=st.st_mtime_ns if st is not None else 0,
            sha256=hashlib.sha256(data).hexdigest(),
        )

    def to_json(self) -> dict:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}


@dataclass(frozen=True)
class RawFile:
    """A file as read from disk: its path, its exact bytes and its fingerprint."""

    path: Path
    data: bytes
    fingerprint: Fingerprint


class NotARegularFile(OSError):
    """A FIFO, device or folder where a data file was expected: never read from it."""


def read_regular(path: Path, max_bytes: int | None = None) -> tuple[bytes, os.stat_result]:
    """Bytes and stat of a regular file. FileNotFoundError when absent.

    Opened non-blocking and checked with fstat before reading, so a FIFO named like a
    sidecar cannot block the scan and a link to ``/dev/zero`` cannot read forever.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(errno.EINVAL, "not a regular file", str(path))
        if max_bytes is not None and st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"file is {st.st_size} bytes, more than the {max_bytes}-byte limit",
                          str(path))
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    finally:
        os.close(fd)
    return data, st


def read_raw(path: Path, max_bytes: int | None = None) -> RawFile | None:
    """Read a regular file's bytes, or None when it does not exist.

    Other OS errors (permission denied, a directory in the way, a FIFO, a name too long)
    propagate so the caller can report them as findings.
    """
    try:
        data, st = read_regular(path, max_bytes)
    except FileNotFoundError:
        return None
    return RawFile(path=path, data=data, fingerprint=Fingerprint.of_bytes(data, st))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
