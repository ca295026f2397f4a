"""The orjson check's verdict kept per orjson build (inspector/store/orjson_verdict.py).

Rules pinned: a kept verdict is reused (the check does not run again); a changed key (another
orjson version or extension, another check) runs the check; a corrupt, foreign-keyed, non-boolean,
group-writable file is no verdict; nothing is kept in a folder kept out (the Hermes home) or with
HERMES_INSPECTOR_NO_CACHE; jsonfmt without orjson never asks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector import statedir
from inspector.store import jsonfmt, orjson_verdict


def Counting(ok: bool = True):  # noqa: N802 - used like a class
    """A check (a plain function: its code is part of the key) that counts its runs in ``.runs``."""

    def check() -> bool:
        check.runs += 1
        return ok

    check.runs = 0
    return check


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE", raising=False)
    monkeypatch.setattr(statedir, "_kept_out", [])
    return tmp_path / "state" / "cache"


def _kept_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{orjson_verdict.PREFIX}*.json")) if folder.exists() else []


def test_verdict_is_reused_for_the_same_build(cache) -> None:
    check = Counting(True)
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 1
    files = _kept_files(cache)
    assert len(files) == 1
    assert json.loads(files[0].read_text())["ok"] is True
    assert orjson_verdict.verdict(check) is True
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 1  # the kept verdict answered


def test_a_false_verdict_is_kept_too(cache) -> None:
    check = Counting(False)
    assert orjson_verdict.verdict(check) is False
    assert orjson_verdict.verdict(check) is False
    assert check.runs == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda k: {**k, "orjson": k["orjson"] + ".post1"},
        lambda k: {**k, "extension": [k["extension"][0], k["extension"][1], "0" * 64]},
        lambda k: {**k, "extension": [k["extension"][0], k["extension"][1] + 1, k["extension"][2]]},
        lambda k: {**k, "python": ["another build", k["python"][1]]},
        lambda k: {**k, "stdlib": [None, k["stdlib"][1]]},
        lambda k: {**k, "check": "1" * 64},
    ],
    ids=["version", "extension-hash", "extension-size", "python", "stdlib", "check-code"],
)
def test_a_changed_key_runs_the_check_again(cache, monkeypatch, change) -> None:
    check = Counting(True)
    assert orjson_verdict.verdict(check) is True
    real = orjson_verdict.build_key
    monkeypatch.setattr(orjson_verdict, "build_key", lambda *fns: change(real(*fns)))
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2
    assert len(_kept_files(cache)) == 2  # each build its own file
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2


def test_the_key_names_this_orjson_build() -> None:
    import orjson
    import orjson.orjson as ext

    key = orjson_verdict.build_key(jsonfmt._check_orjson_escapes, jsonfmt._plane_text)
    assert key is not None
    assert key["orjson"] == orjson.__version__
    assert key["extension"][0] == os.path.realpath(ext.__file__)
    assert key["extension"][1] == os.stat(ext.__file__).st_size
    assert key["extension"][2] == orjson_verdict._file_sha256(ext.__file__)
    # the check's code is part of the key: another check (or helper) is another key
    other = orjson_verdict.build_key(jsonfmt._check_orjson_escapes)
    assert other["check"] != key["check"]
    assert orjson_verdict.build_key(jsonfmt._check_orjson_escapes, jsonfmt._plane_text) == key


def test_a_check_that_is_not_a_plain_function_is_never_kept(cache) -> None:
    class Check:
        runs = 0

        def __call__(self) -> bool:
            self.runs += 1
            return True

    check = Check()
    assert orjson_verdict.verdict(check) is True
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2
    assert not cache.exists()


def test_the_code_hash_is_the_same_in_another_process(tmp_path) -> None:
    import subprocess
    import sys

    script = (
        "from inspector.store import jsonfmt, orjson_verdict as v;"
        "print(v.build_key(jsonfmt._check_orjson_escapes, jsonfmt._plane_text)['check'])"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(seen) == 1


@pytest.mark.parametrize(
    "spoil",
    [
        lambda p: p.write_bytes(b"{not json"),
        lambda p: p.write_bytes(b""),
        lambda p: p.write_bytes(b"\xff\xfe"),
        lambda p: p.write_text(json.dumps([1, 2])),
        lambda p: p.write_text(json.dumps({"key": {"format": 1}, "ok": True})),
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "ok": 1})),
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "ok": None})),
        lambda p: p.write_bytes(b" " * (orjson_verdict.MAX_BYTES + 1)),
    ],
    ids=[
        "corrupt",
        "empty",
        "not-utf8",
        "not-object",
        "foreign-key",
        "int-verdict",
        "null-verdict",
        "too-big",
    ],
)
def test_a_spoilt_file_runs_the_check_and_is_written_again(cache, spoil) -> None:
    check = Counting(True)
    orjson_verdict.verdict(check)
    (path,) = _kept_files(cache)
    spoil(path)
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2
    assert json.loads(path.read_text())["ok"] is True  # written again
    orjson_verdict.verdict(check)
    assert check.runs == 2


def test_a_kept_false_in_a_foreign_keyed_file_is_not_taken(cache) -> None:
    check = Counting(True)
    orjson_verdict.verdict(check)
    (path,) = _kept_files(cache)
    kept = json.loads(path.read_text())
    kept["key"] = {**kept["key"], "orjson": "0.0.1"}
    kept["ok"] = False
    path.write_text(json.dumps(kept))
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX modes")
def test_a_file_others_can_write_is_not_trusted(cache) -> None:
    check = Counting(True)
    orjson_verdict.verdict(check)
    (path,) = _kept_files(cache)
    os.chmod(path, 0o666)
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="symlinks")
def test_a_symlink_is_not_followed(cache, tmp_path) -> None:
    check = Counting(True)
    orjson_verdict.verdict(check)
    (path,) = _kept_files(cache)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(elsewhere)
    orjson_verdict.verdict(check)
    assert check.runs == 2


def test_nothing_is_kept_in_a_kept_out_folder(cache, tmp_path) -> None:
    statedir.keep_out_of(tmp_path / "state")  # as if the state folder lay in the open home
    check = Counting(True)
    assert orjson_verdict.verdict(check) is True
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2
    assert not cache.exists()


def test_nothing_is_kept_without_a_cache(cache, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    check = Counting(True)
    orjson_verdict.verdict(check)
    orjson_verdict.verdict(check)
    assert check.runs == 2
    assert not cache.exists()


def test_an_unwritable_cache_folder_only_costs_the_check(cache, monkeypatch) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text("a file where the folder should be")
    check = Counting(True)
    assert orjson_verdict.verdict(check) is True
    assert orjson_verdict.verdict(check) is True
    assert check.runs == 2


# ---------------------------------------------------------------- through jsonfmt


def test_jsonfmt_reuses_the_kept_verdict_in_a_new_process(cache, monkeypatch) -> None:
    runs = []
    real = jsonfmt._check_orjson_escapes

    def counted() -> bool:
        runs.append(1)
        return real()

    monkeypatch.setattr(jsonfmt, "_check_orjson_escapes", counted)
    for _ in range(3):  # each a new process, as far as the module global is concerned
        monkeypatch.setattr(jsonfmt, "_ORJSON_ESCAPES_OK", None)
        assert jsonfmt._orjson_escapes_like_stdlib() is True
    assert runs == [1]
    assert jsonfmt.dumps_pretty_fast({"a": [1.5, "é\n"]}) == jsonfmt.dumps_pretty({"a": [1.5, "é\n"]})


def test_the_real_check_is_what_is_kept(cache, monkeypatch) -> None:
    monkeypatch.setattr(jsonfmt, "_ORJSON_ESCAPES_OK", None)
    assert jsonfmt._orjson_escapes_like_stdlib() is True
    (path,) = _kept_files(cache)
    kept = json.loads(path.read_text())
    assert kept["ok"] is True
    assert kept["key"] == orjson_verdict.build_key(jsonfmt._check_orjson_escapes, jsonfmt._plane_text)


def test_without_orjson_nothing_is_asked_or_kept(cache, monkeypatch) -> None:
    monkeypatch.setattr(jsonfmt, "_orjson", None)
    monkeypatch.setattr(jsonfmt, "_ORJSON_ESCAPES_OK", None)

    def never(*args, **kwargs):  # pragma: no cover - the rule is that it is not called
        raise AssertionError("the verdict cache was asked without orjson")

    monkeypatch.setattr(orjson_verdict, "verdict", never)
    assert jsonfmt._orjson_escapes_like_stdlib() is False
    value = {"a": [1e-05, "x", {"b": None}]}
    assert jsonfmt.dumps_pretty_fast(value) == jsonfmt.dumps_pretty(value)
    assert not cache.exists()
