"""Logging: named loggers under ``inspector``, a rotating log file in the inspector's state folder.

No Qt here (the window routes Qt's own messages in: see ``inspector.gui.app``).

- :func:`get_logger` gives ``inspector.<name>`` loggers. Until :func:`setup` runs they write
  nowhere (a ``NullHandler`` on ``inspector``: a library's records never reach Python's
  last-resort stderr handler).
- :func:`setup` adds the log file, ``<state folder>/logs/inspector.log`` (rotated at
  :data:`MAX_BYTES`, :data:`BACKUPS` old files kept), and with ``debug`` everything to stderr.
  The file is opened lazily, on the first record: a run that logs nothing creates nothing.
  Folder 0700, files 0600: records name sessions and paths of private chats.
- The state folder is the write log's (``WriteLog.default``, :mod:`inspector.statedir`):
  ``$HERMES_INSPECTOR_STATE_DIR``, else the system's per-user state folder (Linux:
  ``$XDG_STATE_HOME/hermes-inspector``, else ``~/.local/state/hermes-inspector``); never
  inside a Hermes home.

The command line imports this module only when it logs (``--debug``, a command that writes, or an
unexpected error): the read-only commands start no faster or slower than without logging.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from inspector import portable, statedir

ROOT = "inspector"
LOG_FILE = "inspector.log"
MAX_BYTES = 1 << 20  # rotate at 1 MiB
BACKUPS = 3  # inspector.log.1 .. .3 kept
FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(process)d %(threadName)s] %(message)s"
STDERR_FORMAT = "hermes-inspector %(levelname)s %(name)s: %(message)s"

logging.getLogger(ROOT).addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger ``inspector.<name>`` (a module's ``__name__`` is used as it is)."""
    return logging.getLogger(name if name == ROOT or name.startswith(ROOT + ".") else f"{ROOT}.{name}")


def state_folder() -> Path:
    """The inspector's private state folder (the write log's, backups', caches' and logs' parent)."""
    return statedir.state_folder()[0]


def log_path() -> Path:
    return state_folder() / "logs" / LOG_FILE


def _private_opener(path: str, flags: int) -> int:
    fd = os.open(path, flags, 0o600)
    try:
        portable.fchmod(fd, 0o600)
    except OSError:
        pass
    return fd


class LazyRotatingFile(logging.Handler):
    """A rotating log file made on the first record it handles (its folder too, 0700).

    ``logging.handlers`` (sockets, pickle, queues) is imported then, not before. A file that
    cannot be made is reported once on stderr and the records are dropped: logging never
    stops the inspector."""

    def __init__(self, path: Path, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.path = path
        self._inner: logging.Handler | None = None
        self._broken = False

    def _open(self) -> logging.Handler | None:
        if self._inner is None and not self._broken:
            from logging.handlers import RotatingFileHandler

            class _Private(RotatingFileHandler):
                def _open(self):  # every file it makes (also after a rotation) is 0600
                    return open(
                        self.baseFilename,
                        self.mode,
                        encoding=self.encoding,
                        errors=self.errors,
                        opener=_private_opener,
                    )

            inside = statedir.in_kept_out(self.path)
            if inside is not None:  # never a file of ours in the Hermes home (the write log refuses it too)
                self._broken = True
                sys.stderr.write(
                    f"hermes-inspector: not writing the log file {self.path}: it is inside {inside}; "
                    "set HERMES_INSPECTOR_STATE_DIR (or XDG_STATE_HOME) to a folder outside the home\n"
                )
                return None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                os.chmod(self.path.parent, 0o700)
                inner = _Private(self.path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
            except OSError as exc:
                self._broken = True
                sys.stderr.write(f"hermes-inspector: cannot write the log file {self.path}: {exc}\n")
                return None
            inner.setFormatter(self.formatter or logging.Formatter(FORMAT))
            self._inner = inner
        return self._inner

    def emit(self, record: logging.LogRecord) -> None:
        inner = self._open()
        if inner is not None:
            inner.emit(record)

    def flush(self) -> None:
        if self._inner is not None:
            self._inner.flush()

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
        super().close()


_installed: list[logging.Handler] = []


def is_set_up() -> bool:
    return bool(_installed)


def setup(*, debug: bool = False, stderr_level: int | None = None, path: Path | None = None) -> Path:
    """Send the ``inspector`` loggers to the log file (INFO and up; with ``debug`` DEBUG and up,
    also on stderr). ``stderr_level`` shows records from that level on stderr without ``debug``
    (the window: Qt's warnings stay visible where Qt printed them). Calling it again replaces
    what the previous call installed. Returns the log file's path."""
    root = logging.getLogger(ROOT)
    for handler in _installed:
        root.removeHandler(handler)
        handler.close()
    _installed.clear()
    target = path or log_path()
    file_handler = LazyRotatingFile(target, logging.DEBUG if debug else logging.INFO)
    file_handler.setFormatter(logging.Formatter(FORMAT))
    _installed.append(file_handler)
    if debug or stderr_level is not None:
        err = logging.StreamHandler(sys.stderr)
        err.setLevel(logging.DEBUG if debug else stderr_level)
        err.setFormatter(logging.Formatter(STDERR_FORMAT))
        _installed.append(err)
    for handler in _installed:
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    return target


def teardown() -> None:
    """Remove what :func:`setup` installed (tests; a window closing)."""
    root = logging.getLogger(ROOT)
    for handler in _installed:
        root.removeHandler(handler)
        handler.close()
    _installed.clear()
    root.setLevel(logging.NOTSET)
