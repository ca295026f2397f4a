"""``prepare_previews`` (tests/MUTATION.md, fifth session): every change's preview and both hashes
are made when it is called, the hashes on a thread of their own, named and a daemon."""

from __future__ import annotations

import threading
from pathlib import Path

from inspector import plan as plan_mod
from inspector.plan import FileChange, prepare_previews

# sha256 of b"abc" and of b"" (FIPS 180-2's example and the empty message's well-known digest).
ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_the_previews_and_hashes_are_made_at_once_the_hashes_on_a_named_daemon_thread(monkeypatch, tmp_path):
    """Rule: after ``prepare_previews`` each change holds its preview and its two hashes (cached
    on the change: a write's checks and its log read them later without hashing again); the
    hashes were made on one fresh thread named ``inspector-hash``, a daemon (it never keeps the
    program alive), started once for the whole list."""
    started: list[tuple[str, bool]] = []
    hashed_on: set[str] = set()
    real_thread = threading.Thread
    real_hex = plan_mod.sha256_hex

    class Spy(real_thread):
        def start(self) -> None:
            started.append((self.name, self.daemon))
            super().start()

    def spy_hex(data: bytes) -> str:
        hashed_on.add(threading.current_thread().name)
        return real_hex(data)

    monkeypatch.setattr(plan_mod.threading, "Thread", Spy)
    monkeypatch.setattr(plan_mod, "sha256_hex", spy_hex)
    changes = [
        FileChange(Path(tmp_path / "made.json"), None, b"abc"),
        FileChange(Path(tmp_path / "edited.json"), b"", b"abc"),
        FileChange(Path(tmp_path / "gone.json"), b"abc", None),
    ]
    prepare_previews(changes)
    assert started == [("inspector-hash", True)]
    assert hashed_on == {"inspector-hash"}
    for change in changes:
        assert {"preview", "sha256_before", "sha256_after"} <= set(vars(change))
    assert [(c.sha256_before, c.sha256_after) for c in changes] == [(None, ABC), (EMPTY, ABC), (ABC, None)]
    assert changes[2].preview.splitlines()[:2] == ["--- a/gone.json", "+++ /dev/null"]


def test_no_change_starts_the_thread_and_makes_nothing(monkeypatch):
    """Rule: an empty list is prepared without error (the thread has nothing to hash)."""
    started: list[str] = []
    real_thread = threading.Thread

    class Spy(real_thread):
        def start(self) -> None:
            started.append(self.name)
            super().start()

    monkeypatch.setattr(plan_mod.threading, "Thread", Spy)
    prepare_previews([])
    assert started == ["inspector-hash"]
