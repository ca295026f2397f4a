"""A read-once view of the files a plan is built from.

Every file a repair looks at is read through one :class:`FileSnapshot`, which keeps the
exact bytes and their fingerprint. The plan's ``before`` bytes are therefore the bytes the
decision was made on, and apply can refuse if the disk moved on since.

A file over the reader's size limit is not loaded (``TooLargeToLoad``, an OSError the planners
report like any unreadable file); the snapshot remembers it in :attr:`FileSnapshot.too_large`,
so a plan built without it can be refused: what hermes would make of that file is unknown.
"""

from __future__ import annotations

from pathlib import Path

from inspector.store.jsonfmt import RawFile, TooLargeToLoad, read_raw


class FileSnapshot:
    """Caches ``RawFile`` reads by path (None = the file does not exist)."""

    def __init__(self) -> None:
        self._cache: dict[Path, RawFile | None] = {}
        self.too_large: list[TooLargeToLoad] = []  # every read refused for its size, in order
        self.asked: list[Path] = []  # every path read() was asked for, in order (cache hits too)

    def read(self, path: Path) -> RawFile | None:
        self.asked.append(path)
        if path not in self._cache:
            try:
                self._cache[path] = read_raw(path)
            except TooLargeToLoad as exc:
                self.too_large.append(exc)
                raise
        return self._cache[path]

    def data(self, path: Path) -> bytes | None:
        raw = self.read(path)
        return raw.data if raw is not None else None

    def peek(self, path: Path) -> tuple[bool, bytes | None]:
        """``(True, bytes or None when missing)`` when this snapshot already read ``path``, else
        ``(False, None)`` without reading it."""
        if path not in self._cache:
            return False, None
        raw = self._cache[path]
        return True, raw.data if raw is not None else None

    def exists(self, path: Path) -> bool:
        return self.read(path) is not None
