"""How the write path finds the OS's atomic exchange of two names (``plan._load_exchange``).

Rules found by mutation testing (tests/MUTATION.md, third session). ``_EXCHANGE`` is loaded once at
import, so these tests call ``_load_exchange`` themselves, with the C library as it is or with one
of its entry points hidden. What each OS documents:

* Linux, renameat2(2): ``renameat2(olddirfd, oldpath, newdirfd, newpath, flags)`` with
  ``AT_FDCWD`` (-100) and ``RENAME_EXCHANGE`` (2, linux/fs.h) swaps the two names; 0 on success,
  -1 and ``errno`` on failure (ENOENT when a name does not exist). Before glibc 2.28 there is no
  wrapper: ``syscall(SYS_renameat2, ...)`` (316 on x86_64, 276 on aarch64).
* macOS, rename(2): ``renamex_np(from, to, RENAME_SWAP)`` with ``RENAME_SWAP`` = 0x2.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import inspector.plan as planmod

on_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's renameat2")


class _Libc:
    """The real C library with some entry points hidden or replaced (``None`` hides one)."""

    def __init__(self, real, **override):
        self._real = real
        self._override = override

    def __getattr__(self, name):
        if name in self._override:
            value = self._override[name]
            if value is None:
                raise AttributeError(name)
            return value
        return getattr(self._real, name)


def _with_libc(monkeypatch, **override) -> None:
    """``ctypes.CDLL`` answers the C library (opened as asked) with ``override`` applied."""
    real_cdll = ctypes.CDLL

    def cdll(*args, **kwargs):
        return _Libc(real_cdll(*args, **kwargs), **override)

    monkeypatch.setattr(ctypes, "CDLL", cdll)


def _must_not_be_called(*args):
    raise AssertionError("the raw syscall was used although libc has renameat2")


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(b"new bytes\n")
    b.write_bytes(b"old bytes\n")
    return a, b


def _assert_swaps(swap, tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    assert swap(os.fsencode(a), os.fsencode(b)) == 0  # renameat2: 0 on success (an int, not None)
    assert a.read_bytes() == b"old bytes\n"  # both names still exist, each with the other's file
    assert b.read_bytes() == b"new bytes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def _assert_swaps_relative_names(swap, tmp_path: Path, monkeypatch) -> None:
    """A relative name is taken from the working folder (AT_FDCWD), not from another descriptor."""
    a, b = _pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert swap(b"a.json", b"b.json") == 0
    assert a.read_bytes() == b"old bytes\n" and b.read_bytes() == b"new bytes\n"


def _assert_errno_is_kept(swap, tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    missing = tmp_path / "missing.json"
    ctypes.set_errno(0)
    assert swap(os.fsencode(a), os.fsencode(missing)) == -1
    assert ctypes.get_errno() == errno.ENOENT  # the library is opened with use_errno: _exchange reads it
    assert a.read_bytes() == b"old bytes\n"  # a failed exchange leaves the names as they were


@on_linux
def test_linux_uses_libcs_renameat2_to_exchange_two_names(tmp_path, monkeypatch):
    """Rule: with glibc's renameat2 wrapper, the exchange is renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)."""
    _with_libc(monkeypatch, syscall=_must_not_be_called)
    swap = planmod._load_exchange()
    assert swap is not None
    _assert_swaps(swap, tmp_path)
    _assert_swaps_relative_names(swap, tmp_path, monkeypatch)
    _assert_errno_is_kept(swap, tmp_path)


@on_linux
def test_renameat2s_c_signature_is_declared_so_a_str_path_is_refused(tmp_path, monkeypatch):
    """Rule: renameat2 is called with its declared argument types: a ``str`` (which ctypes would pass as a
    wide string naming another file) is refused, only the fsencoded bytes go through."""
    _with_libc(monkeypatch, syscall=_must_not_be_called)
    swap = planmod._load_exchange()
    a, b = _pair(tmp_path)
    with pytest.raises(ctypes.ArgumentError):
        swap(str(a), str(b))
    assert a.read_bytes() == b"new bytes\n" and b.read_bytes() == b"old bytes\n"


@on_linux
def test_without_the_wrapper_linux_calls_the_renameat2_syscall_by_number(tmp_path, monkeypatch):
    """Rule: a glibc older than 2.28 (no renameat2 symbol) exchanges through syscall(SYS_renameat2, ...)."""
    if os.uname().machine not in {"x86_64", "amd64", "aarch64", "arm64"}:
        pytest.skip("the syscall number is checked on x86_64 and aarch64")
    _with_libc(monkeypatch, renameat2=None)
    swap = planmod._load_exchange()
    assert swap is not None
    _assert_swaps(swap, tmp_path)
    _assert_swaps_relative_names(swap, tmp_path, monkeypatch)
    _assert_errno_is_kept(swap, tmp_path)


@on_linux
def test_the_syscall_numbers_are_linuxs(monkeypatch):
    """Rule: SYS_renameat2 is 316 on x86_64 and 276 on aarch64/arm64 and riscv64 (asm/unistd.h)."""
    assert planmod._SYS_RENAMEAT2["x86_64"] == 316
    assert planmod._SYS_RENAMEAT2["aarch64"] == 276
    assert planmod._SYS_RENAMEAT2["riscv64"] == 276


@on_linux
def test_an_unknown_machine_without_the_wrapper_has_no_exchange(monkeypatch):
    """Rule: no renameat2 symbol and no known syscall number: no exchange (the portable path), not a guess."""
    _with_libc(monkeypatch, renameat2=None)
    monkeypatch.setattr(os, "uname", lambda: SimpleNamespace(machine="sparc64"))
    assert planmod._load_exchange() is None


@on_linux
def test_a_libc_without_renameat2_or_syscall_has_no_exchange(monkeypatch):
    """Rule: neither the wrapper nor syscall(): no exchange."""
    _with_libc(monkeypatch, renameat2=None, syscall=None)
    assert planmod._load_exchange() is None


class _RenamexNp:
    """A stand-in for macOS's renamex_np: records its declared signature and its calls."""

    def __init__(self):
        self.argtypes = None
        self.restype = None
        self.calls = []

    def __call__(self, *args):
        self.calls.append(args)
        return 0


def test_macos_uses_renamex_np_with_rename_swap(monkeypatch):
    """Rule: on macOS the exchange is renamex_np(a, b, RENAME_SWAP) with RENAME_SWAP = 0x2, declared
    (const char *, const char *, unsigned int) -> int."""
    renamex_np = _RenamexNp()
    _with_libc(monkeypatch, renamex_np=renamex_np, renameat2=_must_not_be_called, syscall=_must_not_be_called)
    monkeypatch.setattr(sys, "platform", "darwin")
    swap = planmod._load_exchange()
    assert swap is not None
    assert swap(b"/s/a.json", b"/s/b.json") == 0
    assert renamex_np.calls == [(b"/s/a.json", b"/s/b.json", 2)]
    assert renamex_np.argtypes == (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint)
    assert renamex_np.restype is ctypes.c_int


def test_macos_without_renamex_np_has_no_exchange(monkeypatch):
    """Rule: a macOS older than 10.12 (no renamex_np): no exchange."""
    _with_libc(monkeypatch, renamex_np=None)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert planmod._load_exchange() is None


@pytest.mark.parametrize("platform", ["freebsd14", "win32", "cygwin"])
def test_other_systems_have_no_exchange(monkeypatch, platform):
    """Rule: only Linux and macOS exchange; elsewhere the portable path, even if the library has both calls."""
    _with_libc(monkeypatch, renamex_np=_RenamexNp())
    monkeypatch.setattr(sys, "platform", platform)
    assert planmod._load_exchange() is None


def test_no_c_library_means_no_exchange(monkeypatch):
    """Rule: a C library that cannot be opened (OSError) gives no exchange, not a crash at import."""

    def refuse(*args, **kwargs):
        raise OSError("no libc here")

    monkeypatch.setattr(ctypes, "CDLL", refuse)
    assert planmod._load_exchange() is None
