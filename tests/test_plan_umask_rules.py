"""``plan.current_umask``: where Linux tells the umask (``/proc/self/status``) it is read there and never
set, since other threads may be creating files meanwhile; elsewhere (and with the portable paths forced) it
is set to 022 and put back once, and remembered.

Rules pinned with ``os.umask`` spied on and ``/proc/self/status`` given as written: a status whose other
lines are not ASCII (a process name in UTF-8) is still read, bad bytes replaced, the umask never set; the
fallback sets 022, puts the umask back and remembers it.
"""

from __future__ import annotations

import io
import os
import sys

import pytest

from inspector import plan as planmod
from inspector import portable

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")


@pytest.fixture
def umask_calls(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = os.umask

    def spy(mask: int) -> int:
        calls.append(mask)
        return real(mask)

    monkeypatch.setattr(planmod.os, "umask", spy)
    monkeypatch.setattr(planmod, "_UMASK", [])
    return calls


def test_a_status_with_a_name_in_utf8_is_read_and_the_umask_never_set(monkeypatch, umask_calls) -> None:
    status = "Name:\tpythoné\nUmask:\t0027\nState:\tR (running)\n".encode()

    def fake_open(path, encoding=None, errors=None):
        assert path == "/proc/self/status"
        return io.TextIOWrapper(io.BytesIO(status), encoding=encoding, errors=errors)

    monkeypatch.setattr(planmod, "open", fake_open, raising=False)
    monkeypatch.setattr(portable, "FORCED", False)
    assert planmod.current_umask() == 0o027
    assert umask_calls == []


def test_the_fallback_sets_022_puts_it_back_and_remembers(monkeypatch, umask_calls) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    umask_calls.clear()  # os.umask is the spy here too
    monkeypatch.setattr(portable, "FORCED", True)
    assert planmod.current_umask() == mask
    assert umask_calls == [0o022, mask]
    assert planmod._UMASK == [mask]
    assert planmod.current_umask() == mask
    assert umask_calls == [0o022, mask]  # remembered: not set again
