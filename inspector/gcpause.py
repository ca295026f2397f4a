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
