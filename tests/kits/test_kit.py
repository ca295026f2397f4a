"""Repair kits: refused when edited, made for another home, leaving the home, or when the chat moved on."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from inspector.cli import close_bundles, main
from inspector.kit import KitError, canonical, load_kit, parse_kit
from inspector.store.files import sha256_hex
from tests.conftest import GOLDEN, copy_tree, files_of, run_main

CASE = GOLDEN / "01-promote-tokens-tool"
SID = "9f14583f0e4e4444aaaa111122223333"
CLOCK = ["--now", "1779237765.0", "--server-started-at", "1779237651.5"]


@pytest.fixture(autouse=True)
def _close():
    yield
    close_bundles()


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, Path]:
    """(the user's home, a kit for it made in a bundle of it)."""
    home = copy_tree(CASE / "before", tmp_path / "home")
    bundle, kit = tmp_path / "b.tar.gz", tmp_path / "kit.json"
    assert run_main(["bundle", SID, "--home", str(home), "-o", str(bundle)])[0] == 0
    code, out = run_main(
        ["repair", SID, "--action", "recover-journal", "--home", str(bundle), *CLOCK, "--kit-out", str(kit)]
    )
    assert code == 0, out
    return home, kit


def _rewrite(kit: Path, change, rehash: bool) -> None:
    obj = json.loads(kit.read_text())
    change(obj["body"])
    if rehash:
        obj["body_sha256"] = sha256_hex(canonical(obj["body"]))
    kit.write_text(json.dumps(obj))


def test_kit_holds_action_clock_fingerprints_after_bytes_and_preview(made) -> None:
    _home, kit_path = made
    assert stat.S_IMODE(kit_path.stat().st_mode) == 0o600
    kit = load_kit(kit_path)
    assert (kit.action, kit.session_id) == ("recover-journal", SID)
    assert (kit.clock.now, kit.clock.server_started_at) == (1779237765.0, 1779237651.5)
    sidecar = next(f for f in kit.files if f.path == f"sessions/{SID}.json")
    assert sidecar.root == "state" and sidecar.after is not None
    assert sidecar.sha256_before == sha256_hex(
        (CASE / "before" / "webui" / "sessions" / f"{SID}.json").read_bytes()
    )
    assert sidecar.after == (CASE / "after" / "webui" / "sessions" / f"{SID}.json").read_bytes()
    assert "--- a/" in kit.body["preview"] and kit.body["bundle"]["sessions"] == [SID]


def test_a_kit_edited_by_hand_is_refused(made) -> None:
    home, kit = made
    before = files_of(home)
    _rewrite(kit, lambda b: b.update(session_id="another"), rehash=False)
    with pytest.raises(KitError, match="changed after it was made"):
        load_kit(kit)
    code, _ = run_main(["apply-kit", str(kit), "--home", str(home), "--write"])
    assert code == 2 and files_of(home) == before


def test_a_kit_for_another_home_is_refused(made, tmp_path: Path, capsys) -> None:
    home, kit = made
    other = tmp_path / "copy-of-home"
    shutil.copytree(home, other)  # the same files, another home
    code, out = run_main(["apply-kit", str(kit), "--home", str(other), "--write"])
    assert code == 1 and "another Hermes home" in out and "Nothing was written" in out
    assert files_of(other) == files_of(home)


@pytest.mark.parametrize("bad", ["../../outside.json", "/etc/passwd", "sessions/../../x.json", "./x.json"])
def test_a_kit_whose_paths_leave_the_home_is_refused(made, bad: str) -> None:
    home, kit = made
    _rewrite(kit, lambda b: b["files"][0].update(path=bad), rehash=True)  # a consistent hash: not enough
    with pytest.raises(KitError, match="leaves the home|absolute"):
        load_kit(kit)


def test_a_kit_whose_folder_is_a_link_out_of_the_home_is_refused(made, tmp_path: Path) -> None:
    home, kit = made
    outside = tmp_path / "outside"
    outside.mkdir()
    (home / "webui" / "escape").symlink_to(outside)
    _rewrite(kit, lambda b: b["files"][0].update(path="escape/x.json"), rehash=True)
    code, out = run_main(["apply-kit", str(kit), "--home", str(home), "--write"])
    assert code == 1 and "leads outside the home" in out
    assert list(outside.iterdir()) == []


def test_a_file_changed_after_the_bundle_refuses_naming_it(made) -> None:
    home, kit = made
    sidecar = home / "webui" / "sessions" / f"{SID}.json"
    sidecar.write_bytes(sidecar.read_bytes().replace(b"Lost-response repro", b"Renamed meanwhile"))
    before = files_of(home)
    code, out = run_main(["apply-kit", str(kit), "--home", str(home), "--write"])
    assert code == 1
    assert f"{sidecar} changed since the bundle was made" in out and "Nothing was written" in out
    assert files_of(home) == before


def test_another_chat_saved_meanwhile_does_not_stop_the_kit(made) -> None:
    """Only the bundled sessions' index rows are the kit's: a row of another chat may move on."""
    home, kit = made
    index = home / "webui" / "sessions" / "_index.json"
    rows = json.loads(index.read_bytes())
    other = dict(rows[0], session_id="0ther5e551on", title="another chat")
    (home / "webui" / "sessions" / "0ther5e551on.json").write_text("{}")
    index.write_text(json.dumps(rows + [other], ensure_ascii=False, indent=2))
    code, out = run_main(["apply-kit", str(kit), "--home", str(home), "--write"])
    assert code == 0, out
    assert any(r["session_id"] == "0ther5e551on" for r in json.loads(index.read_bytes()))


def test_a_kit_is_refused_inside_a_bundle(made, tmp_path: Path, capsys) -> None:
    home, kit = made
    bundle = tmp_path / "b.tar.gz"
    assert main(["apply-kit", str(kit), "--home", str(bundle), "--write"]) == 2
    assert "not on a support bundle" in capsys.readouterr().err


def test_kit_out_outside_a_bundle_is_refused(tmp_path: Path, capsys) -> None:
    home = copy_tree(CASE / "before", tmp_path / "home")
    assert (
        main(
            [
                "repair",
                SID,
                "--action",
                "recover-journal",
                "--home",
                str(home),
                "--kit-out",
                str(tmp_path / "k.json"),
            ]
        )
        == 2
    )
    assert "support bundle" in capsys.readouterr().err
    assert not (tmp_path / "k.json").exists()


@pytest.mark.parametrize("text", [b"", b"not json", b"[]", b'{"format": "something else"}'])
def test_what_is_not_a_kit_is_refused(text: bytes) -> None:
    with pytest.raises(KitError):
        parse_kit(text)


def test_a_kit_whose_bytes_do_not_match_their_fingerprint_is_refused(made) -> None:
    _home, kit = made
    import base64

    _rewrite(kit, lambda b: b["files"][0].update(after_b64=base64.b64encode(b"{}").decode()), rehash=True)
    with pytest.raises(KitError, match="do not match their sha256"):
        load_kit(kit)


def test_a_kit_applies_where_the_live_index_also_drops_a_stale_row(tmp_path: Path) -> None:
    """The bundle's plan leaves the index alone; the user's save also drops a row whose sidecar is
    gone (hermes' fast path). The bundled session's row is the same, so the kit applies, and the
    bytes are those of ``repair --write``."""
    import time

    from inspector.demo import build_demo_home

    demo = build_demo_home(tmp_path / "demo", now=time.time())
    sid = demo.sessions["lost_response"]
    index = demo.session_dir / "_index.json"
    rows = json.loads(index.read_bytes())
    rows.append(dict(rows[-1], session_id="gone0000aaaa", title="a chat deleted by hand"))
    index.write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")
    bundle, kit = tmp_path / "b.tar.gz", tmp_path / "kit.json"
    assert run_main(["bundle", sid, "--home", str(demo.home), "-o", str(bundle)])[0] == 0
    code, out = run_main(
        ["repair", sid, "--action", "recover-journal", "--home", str(bundle), "--kit-out", str(kit)]
    )
    assert code == 0, out
    assert "_index.json" not in out  # the bundle's own index does not change
    code, out = run_main(["apply-kit", str(kit), "--home", str(demo.home), "--write"])
    assert code == 0, out
    by_kit = files_of(demo.home)
    assert b"gone0000aaaa" not in (demo.session_dir / "_index.json").read_bytes()
    write_id = out.split("Undo with: hermes-inspector undo ")[1].split()[0]
    assert run_main(["undo", write_id])[0] == 0
    clock = load_kit(kit).clock
    code, out = run_main(
        [
            "repair",
            sid,
            "--action",
            "recover-journal",
            "--home",
            str(demo.home),
            "--write",
            "--now",
            repr(clock.now),
            "--server-started-at",
            repr(clock.server_started_at),
        ]
    )
    assert code == 0, out
    assert files_of(demo.home) == by_kit
