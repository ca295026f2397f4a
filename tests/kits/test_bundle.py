"""Support bundles: what goes in, the state.db extract, and opening one read-only (issue 17)."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from inspector.bundle import BundleError, make_bundle, open_bundle
from inspector.cli import close_bundles, main
from inspector.home import locate_home
from tests.conftest import FIXTURES, GOLDEN, copy_tree, run_main

MAKE_STATE_DB = FIXTURES / "state-db" / "make_state_db.py"
MIXED = GOLDEN / "25-audit-mixed" / "before"


@pytest.fixture(autouse=True)
def _private_tmp(tmp_path, monkeypatch):
    """Unpacked bundles go to a folder of the test's own, so 'nothing left behind' can be checked."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield scratch
    close_bundles()


def _names(bundle: Path) -> list[str]:
    with tarfile.open(bundle, "r:gz") as tar:
        return tar.getnames()


def _sidecar_ids(home: Path) -> list[str]:
    sdir = home / "webui" / "sessions"
    return sorted(p.stem for p in sdir.glob("*.json") if not p.name.startswith("_"))


@pytest.fixture
def mixed_home(tmp_path: Path) -> Path:
    home = copy_tree(MIXED, tmp_path / "home")
    for name, text in (
        (".env", "OPENAI_API_KEY=secret\n"),
        ("config.yaml", "model: x\n"),
        ("auth.json", '{"token": "secret"}'),
        ("webui.pid", "1\n"),
    ):
        (home / name).write_text(text)
    return home


def test_bundle_holds_only_the_chosen_sessions_and_no_secrets(mixed_home: Path, tmp_path: Path) -> None:
    ids = _sidecar_ids(mixed_home)
    chosen, others = ids[0], ids[1:]
    out = tmp_path / "b.tar.gz"
    code, text = run_main(["bundle", chosen, "--home", str(mixed_home), "-o", str(out)])
    assert code == 0, text
    assert "1 session(s)" in text and chosen in text
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    names = _names(out)
    assert names[0] == "manifest.json"
    assert f"state/sessions/{chosen}.json" in names
    for sid in others:
        assert not any(sid in n for n in names), f"{sid} is another session"
    for secret in (".env", "config.yaml", "auth.json", "webui.pid"):
        assert f"home/{secret}" not in names


def test_manifest_lists_every_file_with_size_and_sha256(mixed_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "b.tar.gz"
    contents = make_bundle(locate_home(mixed_home), _sidecar_ids(mixed_home)[:2], out)
    m = contents.manifest
    assert m["format"] == "hermes-inspector-support-bundle" and m["inspector_version"]
    assert m["home"]["base"] == str(mixed_home) and len(m["home"]["home_id"]) == 64
    with tarfile.open(out, "r:gz") as tar:
        members = {i.name: tar.extractfile(i).read() for i in tar.getmembers() if i.isfile()}
    assert json.loads(members.pop("manifest.json")) == m
    import hashlib

    assert {f["path"]: (f["size"], f["sha256"]) for f in m["files"]} == {
        n: (len(d), hashlib.sha256(d).hexdigest()) for n, d in members.items()
    }


def test_index_in_a_bundle_holds_only_the_chosen_rows(mixed_home: Path, tmp_path: Path) -> None:
    ids = _sidecar_ids(mixed_home)
    out = tmp_path / "b.tar.gz"
    make_bundle(locate_home(mixed_home), [ids[0]], out)
    with tarfile.open(out, "r:gz") as tar:
        rows = json.loads(tar.extractfile("state/sessions/_index.json").read())
    assert {r["session_id"] for r in rows} <= {ids[0]}


@pytest.fixture
def agent_db_home(tmp_path: Path) -> Path:
    home = tmp_path / "agent-home"
    (home / "webui" / "sessions").mkdir(parents=True)
    subprocess.run(
        [sys.executable, str(MAKE_STATE_DB), str(home / "state.db")], check=True, capture_output=True
    )
    return home


def test_state_db_extract_holds_only_the_chosen_sessions_and_passes_integrity_check(
    agent_db_home: Path, tmp_path: Path
) -> None:
    with sqlite3.connect(agent_db_home / "state.db") as c:
        all_ids = [r[0] for r in c.execute("SELECT id FROM sessions ORDER BY id")]
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    chosen = [all_ids[0], all_ids[-1]]
    out = tmp_path / "b.tar.gz"
    code, text = run_main(["bundle", *chosen, "--home", str(agent_db_home), "-o", str(out)])
    assert code == 0, text
    with open_bundle(out) as opened:
        db = opened.home.base / "state.db"
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as c:
            assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert sorted(r[0] for r in c.execute("SELECT id FROM sessions")) == sorted(chosen)
            assert {r[0] for r in c.execute("SELECT DISTINCT session_id FROM messages")} <= set(chosen)
            got_tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert got_tables == tables, "the extract keeps the same schema"


def test_state_db_extract_search_index_covers_only_the_copied_rows(
    agent_db_home: Path, tmp_path: Path
) -> None:
    with sqlite3.connect(agent_db_home / "state.db") as c:
        if not c.execute("SELECT 1 FROM sqlite_master WHERE name='messages_fts'").fetchone():
            pytest.skip("this SQLite has no FTS5")
        sid = c.execute(
            "SELECT session_id FROM messages GROUP BY session_id ORDER BY COUNT(*) DESC"
        ).fetchone()[0]
        n = c.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (sid,)).fetchone()[0]
    out = tmp_path / "b.tar.gz"
    make_bundle(locate_home(agent_db_home), [sid], out)
    with (
        open_bundle(out) as opened,
        sqlite3.connect(f"{(opened.home.base / 'state.db').as_uri()}?mode=ro", uri=True) as c,
    ):
        indexed = c.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchone()[0]
    assert 0 < indexed <= n


def test_an_opened_bundle_is_read_only_and_removed_on_close(
    mixed_home: Path, tmp_path: Path, _private_tmp: Path
) -> None:
    out = tmp_path / "b.tar.gz"
    make_bundle(locate_home(mixed_home), _sidecar_ids(mixed_home), out)
    opened = open_bundle(out)
    assert stat.S_IMODE(opened.root.stat().st_mode) == 0o700
    sidecar = next(opened.home.session_dir.glob("*.json"))
    assert not os.access(sidecar, os.W_OK) or os.geteuid() == 0
    assert stat.S_IMODE(sidecar.stat().st_mode) == 0o400
    assert opened.home.bundle is not None and opened.home.bundle.original_base == str(mixed_home)
    assert "support bundle" in opened.describe() and opened.manifest["made_by"] in opened.describe()
    opened.close()
    assert list(_private_tmp.iterdir()) == []


def test_every_read_command_takes_a_bundle_as_home(
    mixed_home: Path, tmp_path: Path, _private_tmp: Path
) -> None:
    ids = _sidecar_ids(mixed_home)
    out = tmp_path / "b.tar.gz"
    make_bundle(locate_home(mixed_home), ids, out)
    for args in (["audit"], ["list"], ["show", ids[0]], ["journal", ids[0]]):
        code, text = run_main([*args, "--home", str(out)])
        assert code == 0, (args, text)
    code, text = run_main(["list", "--home", str(out), "--json"])
    assert sorted(r["session_id"] for r in json.loads(text)["sessions"]) == ids
    close_bundles()
    assert list(_private_tmp.iterdir()) == []


def test_repair_write_in_a_bundle_is_refused(mixed_home: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "b.tar.gz"
    make_bundle(locate_home(mixed_home), _sidecar_ids(mixed_home), out)
    code = main(["repair", "--all", "--action", "rebuild-index", "--home", str(out), "--write"])
    assert code == 2
    assert "read-only" in capsys.readouterr().err


def test_an_existing_output_file_is_never_overwritten(mixed_home: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "b.tar.gz"
    out.write_bytes(b"keep me")
    assert main(["bundle", "--all", "--home", str(mixed_home), "-o", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert out.read_bytes() == b"keep me"


# ---------------------------------------------------------------- hostile bundles


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], manifest: bool = True) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        if manifest:
            data = json.dumps(
                {"format": "hermes-inspector-support-bundle", "format_version": 1, "files": [], "home": {}}
            ).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"{}") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def _device(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    return info, None


HOSTILE = {
    "dotdot": ([_file("state/../../escaped.json")], "climbs out"),
    "absolute": ([_file("/tmp/escaped-by-bundle.json")], "absolute"),
    "symlink": ([_link("state/sessions/x.json", "/etc/passwd", tarfile.SYMTYPE)], "link"),
    "hardlink": (
        [_file("state/sessions/a.json"), _link("state/sessions/b.json", "/etc/passwd", tarfile.LNKTYPE)],
        "link",
    ),
    "device": ([_device("state/sessions/null.json")], "device"),
    "outside-roots": ([_file("elsewhere/x.json")], "outside manifest.json"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_bundle_is_refused_and_nothing_is_written(
    name: str, tmp_path: Path, _private_tmp: Path
) -> None:
    members, words = HOSTILE[name]
    bundle = _tar(tmp_path / f"{name}.tar.gz", members)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(BundleError, match=words):
        open_bundle(bundle)
    assert list(_private_tmp.iterdir()) == [], "the temporary folder was left behind"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not Path("/tmp/escaped-by-bundle.json").exists()


def test_bundle_with_a_10_gb_sparse_member_is_refused(tmp_path: Path, _private_tmp: Path) -> None:
    if shutil.which("tar") is None:
        pytest.skip("GNU tar is needed to write a sparse member")
    src = tmp_path / "src"
    (src / "home").mkdir(parents=True)
    (src / "manifest.json").write_text("{}")
    with open(src / "home" / "state.db", "wb") as fh:
        fh.truncate(10 * 1024**3)
    bundle = tmp_path / "sparse.tar.gz"
    subprocess.run(
        ["tar", "-S", "-czf", str(bundle), "-C", str(src), "manifest.json", "home/state.db"], check=True
    )
    assert bundle.stat().st_size < 10 * 1024**2
    with pytest.raises(BundleError, match="sparse|bytes"):
        open_bundle(bundle)
    assert list(_private_tmp.iterdir()) == []


def test_bundle_with_an_oversized_member_is_refused_before_reading_it(
    tmp_path: Path, _private_tmp: Path
) -> None:
    info = tarfile.TarInfo("home/state.db")
    info.size = 10 * 1024**3
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        tar.addfile(info)  # a header that promises 10 GB, with no data behind it
    bundle = tmp_path / "big.tar.gz"
    import gzip

    bundle.write_bytes(gzip.compress(raw.getvalue()))
    with pytest.raises(BundleError, match="more than a bundle member may be"):
        open_bundle(bundle)
    assert list(_private_tmp.iterdir()) == []


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_gzip_is_refused_with_a_clear_message(
    damage: str, mixed_home: Path, tmp_path: Path, _private_tmp: Path, capsys
) -> None:
    good = tmp_path / "good.tar.gz"
    make_bundle(locate_home(mixed_home), _sidecar_ids(mixed_home), good)
    bad = tmp_path / "bad.tar.gz"
    data = good.read_bytes()
    bad.write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(200) if damage == "garbage" else data[: len(data) // 2])
    assert main(["list", "--home", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.tar.gz" in err and ("not a readable .tar.gz" in err or "does not match" in err), err
    assert list(_private_tmp.iterdir()) == []


def test_a_file_not_matching_the_manifest_is_refused(
    mixed_home: Path, tmp_path: Path, _private_tmp: Path
) -> None:
    good = tmp_path / "good.tar.gz"
    make_bundle(locate_home(mixed_home), _sidecar_ids(mixed_home)[:1], good)
    with tarfile.open(good, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    tampered = tmp_path / "tampered.tar.gz"
    with tarfile.open(tampered, "w:gz") as tar:
        for m, data in members:
            if m.name.endswith(".json") and m.name.startswith("state/sessions/") and "_index" not in m.name:
                data = data.replace(b'"title"', b'"titlE"')
            m.size = len(data)
            tar.addfile(m, io.BytesIO(data))
    with pytest.raises(BundleError, match="does not match its size and sha256"):
        open_bundle(tampered)
    assert list(_private_tmp.iterdir()) == []


def test_a_bundle_of_every_session_reads_like_the_home(mixed_home: Path, tmp_path: Path) -> None:
    """The same list and the same hermes audit verdicts, paths aside: the bundle holds what they read."""
    out = tmp_path / "b.tar.gz"
    assert run_main(["bundle", "--all", "--home", str(mixed_home), "-o", str(out)])[0] == 0
    home_list, bundle_list = (
        run_main(["list", "--home", str(mixed_home)])[1],
        run_main(["list", "--home", str(out)])[1],
    )
    assert home_list == bundle_list
    home_audit = json.loads(run_main(["audit", "--home", str(mixed_home), "--json"])[1])
    bundle_audit = json.loads(run_main(["audit", "--home", str(out), "--json"])[1])
    assert (home_audit["status"], home_audit["summary"]) == (bundle_audit["status"], bundle_audit["summary"])
    assert [i.get("session_id") for i in home_audit["items"]] == [
        i.get("session_id") for i in bundle_audit["items"]
    ]


def test_a_file_changed_between_the_summary_and_the_write_stops_the_bundle(
    mixed_home: Path, tmp_path: Path, monkeypatch
) -> None:
    import inspector.bundle as bundle_mod

    monkeypatch.setattr(bundle_mod, "KEEP_IN_MEMORY", 0)  # every plain file is read again when written
    sid = _sidecar_ids(mixed_home)[0]
    contents = bundle_mod.collect(locate_home(mixed_home), [sid], workdir=tmp_path)
    sidecar = mixed_home / "webui" / "sessions" / f"{sid}.json"
    sidecar.write_bytes(sidecar.read_bytes() + b" ")
    out = tmp_path / "b.tar.gz"
    with pytest.raises(BundleError, match="changed while the bundle was being made"):
        bundle_mod.write_bundle(contents, out)
    assert not out.exists() and not any(p.name.startswith(".b.tar.gz") for p in tmp_path.iterdir())


def test_manifest_names_the_hermes_webui_version_when_ctl_sh_recorded_its_checkout(
    mixed_home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "hermes-webui"
    (repo / "api").mkdir(parents=True)
    (repo / "api" / "_version.py").write_text('__version__ = "exp-v0.52.262"\n')
    (mixed_home / "webui.ctl.env").write_text(f"PID=1\nREPO_ROOT={repo}\nSTATE_DIR={mixed_home / 'webui'}\n")
    contents = make_bundle(locate_home(mixed_home), _sidecar_ids(mixed_home)[:1], tmp_path / "b.tar.gz")
    assert contents.manifest["hermes_webui_version"] == "exp-v0.52.262"
    assert "home/webui.ctl.env" not in _names(tmp_path / "b.tar.gz")


def test_home_id_is_stable_for_a_home_and_differs_for_a_copy(mixed_home: Path, tmp_path: Path) -> None:
    from inspector.bundle import home_id

    copy = tmp_path / "copy"
    shutil.copytree(mixed_home, copy)
    assert home_id(locate_home(mixed_home)) == home_id(locate_home(str(mixed_home) + "/"))
    assert home_id(locate_home(mixed_home)) != home_id(locate_home(copy))
    assert home_id(locate_home(mixed_home)) != home_id(locate_home(mixed_home, state_dir=copy / "webui"))
