"""A pause of the garbage collector while many small, acyclic objects are built at once."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection while many small objects are built at once (a scan's dicts, a pickled
    catalogue): none of them is cyclic, and the collector would walk them again and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_frozen_startup = False


def freeze_startup() -> bool:
    """Once per process: everything alive now (the modules, classes and functions of the start-up,
    a window's widgets) leaves the collector's care for good (``gc.freeze``), so that a full
    collection later walks only what was made since. None of it is ever garbage; a long-lived
    process that frees none of it loses nothing. In the window a full collection over its start-up
    heap took 24-25 ms of CPU (44,000 objects, most of them Qt wrappers: their traversal is slow)
    while it held the GIL, wherever it started: in a worker thread that allocated, it stalled the
    event loop as long. True the first time (it froze), False after."""
    global _frozen_startup
    if _frozen_startup:
        return False
    _frozen_startup = True
    gc.freeze()
    return True
