"""The write path's recovery steps one by one: rules found by mutation testing (tests/MUTATION.md).

Each test drives one step of ``inspector.plan`` (putting a file back, taking ours off a target,
tidying after a write that could not be put back, naming a failure) on real files, with the
expected files and words written out by hand.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector.plan import ApplyError, FileChange, WriteLog
from tests.write_path_helpers import rescued as _rescued


def _hermes_saves_before_link(monkeypatch, target: Path, data: bytes) -> None:
    """hermes saves ``data`` at ``target`` in the instant before the write links a file there while it is absent."""
    real_link = os.link

    def link(src, dst, **kwargs):
        if Path(dst) == target and not target.exists():
            target.write_bytes(data)
        return real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", link)


needs_exchange = pytest.mark.skipif(planmod._EXCHANGE is None, reason="no atomic exchange on this system")


def _folder(tmp_path: Path) -> tuple[Path, WriteLog]:
    folder = tmp_path / "sessions"
    folder.mkdir()
    return folder, WriteLog(tmp_path / "state")


def _identity(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_dev, st.st_ino


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (OSError(errno.EIO, "Input/output error"), "Input/output error"),  # strerror, not "[Errno 5] ..."
        (OSError("the disk said no"), "the disk said no"),  # an OSError without strerror: its text
        (ValueError("bad value"), "bad value"),
        (ValueError(), "ValueError"),  # no text at all: the exception's class
        (OSError(), "OSError"),
    ],
)
def test_a_failure_is_named_by_its_strerror_else_its_text_else_its_class(exc, words):
    """Rule: the reason an ApplyError gives is the OS's own words (strerror) when there are any,
    else the exception's text, else its class name; never empty, never None."""
    assert planmod._reason(exc) == words


def test_taking_ours_off_a_target_removes_only_our_file(tmp_path):
    """Rule: when a write is put back, the file it placed at a target is removed only if it is still
    ours (same inode); a save that replaced it meanwhile goes back to the target, and no temp name
    is left beside it."""
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"ours")
    ours = _identity(target)
    planmod._remove_if_ours(target, ours, log)
    assert sorted(folder.iterdir()) == []
    target.write_bytes(b"ours")
    ours = _identity(target)
    os.link(target, tmp_path / "ours")  # keeps the inode taken, so the next file gets another one
    target.unlink()
    target.write_bytes(b"hermes saved after us")
    planmod._remove_if_ours(target, ours, log)
    assert [p.name for p in folder.iterdir()] == ["s.json"]
    assert target.read_bytes() == b"hermes saved after us" and _rescued(log) == {}


@needs_exchange
def test_putting_back_an_exchange_restores_the_previous_version_and_drops_ours_silently(tmp_path):
    """Rule: undoing an exchange puts the previous version back at the target and removes ours
    (known by its inode) without keeping it as a "rescued" file: it is not anyone else's save."""
    folder, log = _folder(tmp_path)
    target, holder = folder / "s.json", folder / ".s.json.inspector.tmp.1.2.abc.old"
    target.write_bytes(b"ours")
    holder.write_bytes(b"previous")
    planmod._put_back(target, holder, _identity(target), log)
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"previous"
    assert _rescued(log) == {}


@needs_exchange
def test_putting_back_over_a_newer_save_keeps_the_newer_save_at_the_target(tmp_path):
    """Rule: if a save landed on the target after ours was put in place, the put-back exchanges again
    so the newest save ends at the target; the previous version it displaced is kept in rescued/."""
    folder, log = _folder(tmp_path)
    target, holder = folder / "s.json", folder / ".s.json.inspector.tmp.1.2.abc.old"
    target.write_bytes(b"ours")
    ours = _identity(target)
    os.link(target, tmp_path / "ours")  # keeps the inode taken, so the newer save gets another one
    target.unlink()
    target.write_bytes(b"hermes' newer save")  # replaces ours before the put-back
    holder.write_bytes(b"previous")
    planmod._put_back(target, holder, ours, log)
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"hermes' newer save"
    assert list(_rescued(log).values()) == [b"previous"]


@needs_exchange
def test_putting_back_onto_a_removed_target_links_the_previous_version_back(tmp_path):
    """Rule: a target removed meanwhile gets the previous version back by a link; the temp name goes."""
    folder, log = _folder(tmp_path)
    target, holder = folder / "s.json", folder / ".s.json.inspector.tmp.1.2.abc.old"
    holder.write_bytes(b"previous")
    planmod._put_back(target, holder, None, log)
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"previous"


def test_holds_new_says_whether_a_target_holds_the_written_bytes(tmp_path):
    """Rule: after a write that could not be put back, a file "holds its new bytes" when it has exactly
    the planned bytes, or, for a delete, is gone; anything else (other bytes, not a regular file) does not."""
    path = tmp_path / "s.json"
    change = FileChange(path=path, before=b"old", after=b"new")
    delete = FileChange(path=path, before=b"old", after=None)
    assert planmod._holds_new(change) is False and planmod._holds_new(delete) is True  # no file
    path.write_bytes(b"new")
    assert planmod._holds_new(change) is True and planmod._holds_new(delete) is False
    path.write_bytes(b"old")
    assert planmod._holds_new(change) is False
    path.unlink()
    path.mkdir()  # cannot be read as a file: not the new bytes, and not deleted either
    assert planmod._holds_new(change) is False and planmod._holds_new(delete) is False


def _slot(folder: Path, name: str, *, aside: bytes | None, tmp: bytes | None) -> planmod._Slot:
    target = folder / f"{name}.json"
    change = FileChange(path=target, before=b"before " + name.encode(), after=b"after " + name.encode())
    aside_path, tmp_path = folder / f".{name}.aside.old", folder / f".{name}.tmp"
    for path, data in ((aside_path, aside), (tmp_path, tmp)):
        if data is not None:
            path.write_bytes(data)
    return planmod._Slot(change, tmp_path, None, aside=aside_path)


def test_tidying_after_a_failed_put_back_removes_temp_files_and_keeps_other_bytes(tmp_path):
    """Rule: after a write that could not be put back, every temp file of the write is removed; one
    holding bytes that are neither the planned before nor after (someone else's save) is first
    kept in rescued/ as "displaced"; a missing one is skipped and the next still handled."""
    folder, log = _folder(tmp_path)
    slots = [
        _slot(folder, "a", aside=None, tmp=b"after a"),  # the aside name is gone: its tmp is still removed
        _slot(folder, "b", aside=b"before b", tmp=b"hermes saved b"),
    ]
    planmod._tidy_leftovers(slots, log)
    assert sorted(folder.iterdir()) == []
    rescued = _rescued(log)
    assert list(rescued.values()) == [b"hermes saved b"]
    (name,) = rescued
    assert name.endswith("-displaced-.b.tmp")


@pytest.mark.parametrize(
    "error", [OSError(errno.ENOSPC, "No space left on device"), ApplyError("the state folder is not yours")]
)
def test_tidying_goes_on_when_one_file_cannot_be_kept(tmp_path, monkeypatch, error):
    """Rule: a leftover that cannot be kept (the state folder is full or refused) stays where it is,
    and tidying still handles every other leftover; the failure is not raised over the write's own."""
    folder, log = _folder(tmp_path)
    slots = [
        _slot(folder, "a", aside=b"someone's a", tmp=None),
        _slot(folder, "b", aside=b"before b", tmp=None),
    ]
    calls = []

    def rescue(name, data, why):
        calls.append(name)
        raise error

    monkeypatch.setattr(log, "rescue", rescue)
    planmod._tidy_leftovers(slots, log)
    assert calls == [".a.aside.old"]
    assert [p.name for p in folder.iterdir()] == [".a.aside.old"]  # kept, not unlinked unkept


def test_a_save_landing_while_ours_is_taken_off_wins_and_the_one_it_beat_is_kept(tmp_path, monkeypatch):
    """Rule: if yet another save lands at the target between taking ours off and linking the
    previous save back, the newest stays at the target and the save it beat is kept in rescued/
    ("superseded"): no save is lost."""
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"ours")
    ours = _identity(target)
    os.link(target, tmp_path / "ours")  # keeps the inode taken
    target.unlink()
    target.write_bytes(b"hermes saved after us")
    _hermes_saves_before_link(monkeypatch, target, b"hermes saved again")
    planmod._remove_if_ours(target, ours, log)
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"hermes saved again"
    rescued = _rescued(log)
    assert list(rescued.values()) == [b"hermes saved after us"] and "-superseded-" in next(iter(rescued))


def test_a_file_moved_off_a_target_is_dropped_silently_only_when_it_is_ours(tmp_path):
    """Rule: a file a write moved off a target is removed; when it is not ours (another inode, or we
    do not know ours) its bytes are first kept in rescued/ as "superseded"."""
    folder, log = _folder(tmp_path)
    holder = folder / ".s.json.inspector.tmp.1.2.abc.old"
    holder.write_bytes(b"ours")
    planmod._drop(holder, _identity(holder), log)
    assert sorted(folder.iterdir()) == [] and _rescued(log) == {}
    holder.write_bytes(b"hermes' save")
    planmod._drop(holder, (0, 0), log)
    holder.write_bytes(b"unknown")
    planmod._drop(holder, None, log)
    assert sorted(folder.iterdir()) == []
    rescued = _rescued(log)
    assert sorted(rescued.values()) == [b"hermes' save", b"unknown"]
    assert all("-superseded-.s.json.inspector.tmp.1.2.abc.old" in name for name in rescued)


@needs_exchange
def test_rolling_back_an_exchanged_file_over_a_newer_save_keeps_every_version(tmp_path):
    """Rule: rolling back a file swapped in by an exchange, after hermes saved over ours, leaves
    hermes' save at the target and keeps the previous version in rescued/; the slot is marked
    as no longer exchanged, placed nor moved."""
    folder, log = _folder(tmp_path)
    target, holder = folder / "s.json", folder / ".s.json.inspector.tmp.1.2.abc.old"
    target.write_bytes(b"ours")
    ours = _identity(target)
    os.link(target, tmp_path / "ours")
    target.unlink()
    target.write_bytes(b"hermes' newer save")
    holder.write_bytes(b"previous")
    slot = planmod._Slot(
        FileChange(path=target, before=b"previous", after=b"ours"),
        holder,
        ours,
        aside=holder,
        exchanged=True,
        placed=True,
        moved=True,
    )
    planmod._rollback(slot, log)
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"hermes' newer save"
    assert list(_rescued(log).values()) == [b"previous"]
    assert not slot.exchanged and not slot.placed and not slot.moved


def test_rolling_back_a_linked_in_file_while_hermes_saves_twice_loses_no_save(tmp_path, monkeypatch):
    """Rule: without an exchange, rolling back takes ours off the target only if it is still ours and
    links the previous version back only if nothing is there; with hermes saving twice meanwhile,
    its last save stays at the target and both versions it displaced are kept in rescued/."""
    folder, log = _folder(tmp_path)
    target, aside = folder / "s.json", folder / ".s.json.inspector.tmp.1.2.abc.old"
    target.write_bytes(b"ours")
    ours = _identity(target)
    os.link(target, tmp_path / "ours")
    target.unlink()
    target.write_bytes(b"hermes saved after us")
    aside.write_bytes(b"previous")
    _hermes_saves_before_link(monkeypatch, target, b"hermes saved again")
    slot = planmod._Slot(
        FileChange(path=target, before=b"previous", after=b"ours"),
        None,
        ours,
        aside=aside,
        placed=True,
        moved=True,
    )
    planmod._rollback(slot, log)
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"hermes saved again"
    assert sorted(_rescued(log).values()) == [b"hermes saved after us", b"previous"]
    assert not slot.placed and not slot.moved


def test_without_an_exchange_the_swap_says_enosys(monkeypatch, tmp_path):
    """Rule: asked to exchange two names on a system without an atomic exchange, the write path
    raises ENOSYS (one of the errors that mean "use the fallback") with its reason in words."""
    monkeypatch.setattr(planmod, "_EXCHANGE", None)
    with pytest.raises(OSError) as caught:
        planmod._exchange(tmp_path / "a", tmp_path / "b")
    assert caught.value.errno == errno.ENOSYS and caught.value.errno in planmod._NO_EXCHANGE
    assert caught.value.strerror == "this system has no atomic exchange of two names"
    assert caught.value.filename == str(tmp_path / "b")


def test_a_refused_write_lists_every_problem_on_its_own_line(tmp_path):
    """Rule: a write refused at its check names every file that changed, one per indented line,
    after the reason and "nothing was written"."""
    folder, log = _folder(tmp_path)
    a, b = folder / "a.json", folder / "b.json"
    a.write_bytes(b"a now")
    b.write_bytes(b"b now")
    plan = planmod.Plan(
        action="test",
        session_id="a",
        changes=[
            FileChange(path=a, before=b"a then", after=b"a new"),
            FileChange(path=b, before=b"b then", after=b"b new"),
        ],
    )
    with pytest.raises(ApplyError) as caught:
        planmod.apply_plan(plan, log)
    assert str(caught.value) == (
        f"the files changed since the preview (or cannot be written safely); nothing "
        f"was written:\n  {a} changed since the preview\n  {b} changed since the preview"
    )
    assert a.read_bytes() == b"a now" and b.read_bytes() == b"b now"


@pytest.mark.parametrize(("set_errno", "expected"), [(errno.EXDEV, errno.EXDEV), (0, errno.EIO)])
def test_a_failed_exchange_raises_the_os_error_with_its_words_and_the_target(
    monkeypatch, tmp_path, set_errno, expected
):
    """Rule: when the OS refuses the exchange, the write path raises an OSError with the OS's errno
    (EIO when it gave none), its words and the target's name, so the failure can be told apart from
    "cannot exchange here" (ENOSYS, EINVAL...) and named to the user."""
    import ctypes

    def refusing(a: bytes, b: bytes) -> int:
        ctypes.set_errno(set_errno)
        return -1

    monkeypatch.setattr(planmod, "_EXCHANGE", refusing)
    with pytest.raises(OSError) as caught:
        planmod._exchange(tmp_path / "a", tmp_path / "b")
    assert caught.value.errno == expected and caught.value.strerror == os.strerror(expected)
    assert caught.value.filename == str(tmp_path / "b")


@pytest.mark.parametrize("after", [b"new", None], ids=["fallback-replace", "delete"])
def test_a_target_removed_before_it_is_renamed_aside_stays_removed(tmp_path, monkeypatch, after):
    """Rule: without an exchange (and for any delete) the target is first renamed aside; if hermes
    removed it just before, the write is refused naming that file, it stays removed, and nothing
    else is left behind."""
    monkeypatch.setattr(planmod, "_EXCHANGE", None)
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"old")
    plan = planmod.Plan(
        action="test", session_id="s", changes=[FileChange(path=target, before=b"old", after=after)]
    )
    real = planmod._swap

    def swap(slot):
        target.unlink()  # hermes deletes the session between the last check and the swap
        return real(slot)

    monkeypatch.setattr(planmod, "_swap", swap)
    with pytest.raises(ApplyError) as caught:
        planmod.apply_plan(plan, log)
    assert str(caught.value) == (
        f"hermes-webui saved this session during the write ({target} was removed "
        "meanwhile, and stays removed); nothing was changed. Preview the repair again."
    )
    assert sorted(folder.iterdir()) == []


def test_a_write_that_can_neither_finish_nor_be_put_back_says_so_and_keeps_others_bytes(
    tmp_path, monkeypatch
):
    """Rule: when a swap fails and putting back fails too, the error says how many files hold their
    new bytes (none here), the undo command, both reasons and where the previous versions are, and
    a temp file holding someone else's bytes is kept in rescued/ before it is removed."""
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"old")
    change = FileChange(path=target, before=b"old", after=b"new")
    tmp = folder / ".s.json.inspector.tmp.1.2.abc"
    tmp.write_bytes(b"someone else's bytes")
    slot = planmod._Slot(change, tmp, None)
    plan = planmod.Plan(action="test", session_id="s", changes=[change])
    record = planmod.WriteRecord("20260101T000000-abcdef12", 0.0, "test", "s", [], complete=False)

    def fail(*args):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(planmod, "_swap", fail)
    monkeypatch.setattr(planmod, "_rollback", lambda slot, log: fail())
    with pytest.raises(planmod.WriteFailed) as caught:
        planmod._swap_all(plan, [slot], log, record, tmp_path / "kept")
    assert str(caught.value) == (
        "0 of 1 files hold their new bytes; undo them with `hermes-inspector undo 20260101T000000-abcdef12`. "
        f"Could not write {target} (Input/output error) nor put back the files already written (Input/output "
        f"error). Written: none; every previous version is kept in {tmp_path / 'kept'}"
    )
    assert caught.value.outcome == "nothing" and caught.value.written == ()
    assert caught.value.write_id == "20260101T000000-abcdef12"
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"old"
    assert list(_rescued(log).values()) == [b"someone else's bytes"]


def test_a_write_raced_by_hermes_that_cannot_be_put_back_says_hermes_saved_meanwhile(tmp_path, monkeypatch):
    """Rule: when hermes saved during the swap and putting back fails, the reason given for the file
    is "hermes-webui saved it meanwhile", not the exception's own text."""
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"old")
    change = FileChange(path=target, before=b"old", after=b"new")
    plan = planmod.Plan(action="test", session_id="s", changes=[change])
    record = planmod.WriteRecord("20260101T000000-abcdef12", 0.0, "test", "s", [], complete=False)

    def raced(slot):
        raise planmod._Raced(target)

    def fail(slot, log):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(planmod, "_swap", raced)
    monkeypatch.setattr(planmod, "_rollback", fail)
    with pytest.raises(planmod.WriteFailed) as caught:
        planmod._swap_all(plan, [planmod._Slot(change, None, None)], log, record, tmp_path / "kept")
    assert f"Could not write {target} (hermes-webui saved it meanwhile) nor put back" in str(caught.value)


@needs_exchange
def test_putting_back_onto_a_removed_target_while_hermes_saves_keeps_the_save(tmp_path, monkeypatch):
    """Rule: if the target was removed and a save lands before the previous version is linked
    back, the save stays at the target and the previous version is kept in rescued/."""
    folder, log = _folder(tmp_path)
    target, holder = folder / "s.json", folder / ".s.json.inspector.tmp.1.2.abc.old"
    holder.write_bytes(b"previous")
    _hermes_saves_before_link(monkeypatch, target, b"hermes saved")
    planmod._put_back(target, holder, None, log)
    assert [p.name for p in folder.iterdir()] == ["s.json"] and target.read_bytes() == b"hermes saved"
    assert list(_rescued(log).values()) == [b"previous"]


def test_a_target_that_never_stops_changing_stops_the_put_back_with_eagain(tmp_path, monkeypatch):
    """Rule: putting back gives up after a bounded number of exchanges when what comes out is never
    ours (the target keeps changing): OSError EAGAIN naming the target, instead of looping forever."""
    folder, log = _folder(tmp_path)
    target, holder = folder / "s.json", folder / "holder"
    exchanges = []
    identities = iter(range(10_000))
    monkeypatch.setattr(planmod, "_exchange", lambda a, b: exchanges.append((a, b)))
    monkeypatch.setattr(planmod, "_identity", lambda path: (0, next(identities)))
    with pytest.raises(OSError) as caught:
        planmod._put_back(target, holder, (0, -1), log)
    assert caught.value.errno == errno.EAGAIN
    assert caught.value.strerror == f"{target} kept changing while the write was put back"
    assert len(exchanges) == planmod._MAX_PUT_BACK


def test_a_partly_written_write_that_cannot_be_put_back_names_the_written_files(tmp_path, monkeypatch):
    """Rule: when the second file's swap fails and putting back fails, the error says "partial",
    lists the file that holds its new bytes (in the message and in ``written``) and gives the undo."""
    folder, log = _folder(tmp_path)
    a, b = folder / "a.json", folder / "b.json"
    a.write_bytes(b"a old")
    b.write_bytes(b"b old")
    changes = [
        FileChange(path=a, before=b"a old", after=b"a new"),
        FileChange(path=b, before=b"b old", after=b"b new"),
    ]
    plan = planmod.Plan(action="test", session_id="s", changes=changes)
    record = planmod.WriteRecord("20260101T000000-abcdef12", 0.0, "test", "s", [], complete=False)

    def swap(slot):
        if slot.change.path == b:
            raise OSError(errno.EIO, "Input/output error")
        a.write_bytes(b"a new")

    def fail(slot, log):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(planmod, "_swap", swap)
    monkeypatch.setattr(planmod, "_rollback", fail)
    with pytest.raises(planmod.WriteFailed) as caught:
        planmod._swap_all(
            plan, [planmod._Slot(c, None, None) for c in changes], log, record, tmp_path / "kept"
        )
    assert caught.value.outcome == "partial" and caught.value.written == (a,)
    assert str(caught.value) == (
        "1 of 2 files hold their new bytes; undo them with `hermes-inspector undo 20260101T000000-abcdef12`. "
        f"Could not write {b} (Input/output error) nor put back the files already written (Read-only file "
        f"system). Written: {a}; every previous version is kept in {tmp_path / 'kept'}"
    )


def test_a_raced_write_is_refused_even_when_its_aborted_line_cannot_be_logged(tmp_path, monkeypatch):
    """Rule: after hermes saved during the swap and every file was put back, a write log that cannot
    take the "aborted" line does not hide the refusal: the user still reads that hermes saved meanwhile."""
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"hermes' save")
    change = FileChange(path=target, before=b"old", after=b"new")
    plan = planmod.Plan(action="test", session_id="s", changes=[change])
    record = planmod.WriteRecord("20260101T000000-abcdef12", 0.0, "test", "s", [], complete=False)

    def raced(slot):
        raise planmod._Raced(target)

    def full(record, state="done"):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(planmod, "_swap", raced)
    monkeypatch.setattr(planmod, "_rollback", lambda slot, log: None)
    monkeypatch.setattr(log, "append", full)
    with pytest.raises(ApplyError) as caught:
        planmod._swap_all(plan, [planmod._Slot(change, None, None)], log, record, tmp_path / "kept")
    assert str(caught.value) == (
        f"hermes-webui saved this session during the write ({target} holds its newer "
        "save, which is kept); nothing was changed. Preview the repair again."
    )
    assert target.read_bytes() == b"hermes' save"


def test_a_swap_that_fails_and_is_put_back_says_nothing_was_written(tmp_path, monkeypatch):
    """Rule: a swap the disk refuses, once every file is put back, is reported as a WriteFailed that
    names the file and the OS's words and says no file was changed; its cause is the OS error."""
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"old")
    change = FileChange(path=target, before=b"old", after=b"new")
    plan = planmod.Plan(action="test", session_id="s", changes=[change])
    record = planmod.WriteRecord("20260101T000000-abcdef12", 0.0, "test", "s", [], complete=False)
    error = OSError(errno.EIO, "Input/output error")

    def fail(slot):
        raise error

    monkeypatch.setattr(planmod, "_swap", fail)
    with pytest.raises(planmod.WriteFailed) as caught:
        planmod._swap_all(plan, [planmod._Slot(change, None, None)], log, record, tmp_path / "kept")
    assert str(caught.value) == (
        f"could not write {target} (Input/output error); no file was changed, nothing was written"
    )
    assert caught.value.outcome == "nothing" and caught.value.__cause__ is error
    assert target.read_bytes() == b"old"


@pytest.mark.parametrize("squatter", ["file", "link"])
def test_staging_never_writes_into_something_already_at_its_temp_name(tmp_path, monkeypatch, squatter):
    """Rule: the staged file is created new (O_EXCL): a file or a link already at the temp name is
    refused, never written into or through, and left as it was."""
    folder, _ = _folder(tmp_path)
    target, temp = folder / "s.json", folder / ".s.json.inspector.tmp.fixed"
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not yours")
    if squatter == "file":
        temp.write_bytes(b"not yours")
    else:
        temp.symlink_to(outside)
    monkeypatch.setattr(planmod, "_temp_name", lambda target: temp)
    with pytest.raises(FileExistsError):
        planmod._stage(target, b"new bytes", (0o600, None, None))
    assert outside.read_bytes() == b"not yours" and temp.read_bytes() == b"not yours"
    assert temp.is_symlink() == (squatter == "link")


def test_a_staged_file_is_private_from_its_creation(tmp_path, monkeypatch):
    """Rule: the staged file is created 0600, so nobody can open the new bytes (a private chat) in the
    moment before its final mode is set."""
    folder, _ = _folder(tmp_path)
    modes = []
    real = planmod._write_all

    def write_all(fd, data):
        modes.append(os.fstat(fd).st_mode & 0o777)
        return real(fd, data)

    monkeypatch.setattr(planmod, "_write_all", write_all)
    staged = planmod._stage(folder / "s.json", b"new bytes", (0o644, None, None))
    assert modes == [0o600]
    assert staged.read_bytes() == b"new bytes" and staged.stat().st_mode & 0o777 == 0o644


def test_an_owner_that_cannot_be_given_back_does_not_stop_the_staging(tmp_path, monkeypatch):
    """Rule: giving the staged file the replaced file's owner is best effort: refused (not root, not
    a member of the group), the file is still staged with its bytes and mode."""
    folder, _ = _folder(tmp_path)
    calls = []

    def fchown(fd, uid, gid):
        calls.append((uid, gid))
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", fchown)
    other = (os.geteuid() + 1, os.getegid() + 1)
    staged = planmod._stage(folder / "s.json", b"new bytes", (0o640, *other))
    assert calls == [other]
    assert staged.read_bytes() == b"new bytes" and staged.stat().st_mode & 0o777 == 0o640


def test_short_writes_are_continued_until_every_byte_is_down(tmp_path, monkeypatch):
    """Rule: os.write may write less than asked; the staged file still gets every byte, in order."""
    folder, _ = _folder(tmp_path)
    real_write = os.write
    calls = []

    def short_write(fd, data):
        calls.append(len(data))
        if len(calls) > 100:
            raise AssertionError("the write never ends")
        return real_write(fd, bytes(data[:3]))

    monkeypatch.setattr(os, "write", short_write)
    staged = planmod._stage(folder / "s.json", b"0123456789", (0o600, None, None))
    monkeypatch.undo()
    assert staged.read_bytes() == b"0123456789" and calls == [10, 7, 4, 1]


def test_an_extended_attribute_that_cannot_be_kept_names_the_target(tmp_path, monkeypatch):
    """Rule: an extended attribute the preview promised to keep and the disk refuses stops the write
    with an ApplyError naming the attribute and the file it belongs to; the staged file is removed."""
    folder, _ = _folder(tmp_path)
    target = folder / "s.json"

    def setxattr(fd, name, value):
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(os, "setxattr", setxattr, raising=False)
    with pytest.raises(ApplyError) as caught:
        planmod._stage(target, b"new", (0o600, None, None), {"user.comment": b"x"})
    assert str(caught.value) == (
        f"could not keep the extended attribute user.comment of {target} (Operation not "
        "supported); nothing was written, every file is as it was"
    )
    assert sorted(folder.iterdir()) == []


def test_a_failed_staging_raises_its_own_error_even_if_the_temp_file_cannot_be_removed(tmp_path, monkeypatch):
    """Rule: when staging fails (disk full) and removing the half-written temp file fails too, the
    disk-full error is the one raised (the user learns what went wrong, not what the clean-up met)."""
    folder, _ = _folder(tmp_path)

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    def unlink(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(planmod, "_write_all", full)
    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(OSError) as caught:
        planmod._stage(folder / "s.json", b"new", (0o600, None, None))
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC


def test_the_check_names_paths_that_are_not_plain_and_paths_it_cannot_examine(tmp_path):
    """Rule: the check before a write refuses, with its words, a path that is not plain and absolute
    (relative, with "..", with a NUL) and a path whose status cannot be read (here a folder in the
    path is a file: "Not a directory")."""
    folder, _ = _folder(tmp_path)
    (folder / "a.json").write_bytes(b"x")
    relative, dotted = Path("sessions/s.json"), folder / ".." / "sessions" / "s.json"
    under_a_file = folder / "a.json" / "s.json"
    nul = Path(f"{folder}/s\x00.json")
    plan = planmod.Plan(
        action="test",
        session_id="s",
        changes=[
            FileChange(path=relative, before=None, after=b"new"),
            FileChange(path=dotted, before=None, after=b"new"),
            FileChange(path=nul, before=None, after=b"new"),
            FileChange(path=under_a_file, before=None, after=b"new"),
        ],
    )
    assert planmod.check_fingerprints(plan) == [
        "'sessions/s.json' is not a plain absolute path; the inspector only writes plain paths",
        f"{str(dotted)!r} is not a plain absolute path; the inspector only writes plain paths",
        f"{str(nul)!r} is not a plain absolute path; the inspector only writes plain paths",
        f"{under_a_file} cannot be examined (Not a directory)",
    ]


def test_the_check_before_a_write_names_every_kind_of_change_in_order(tmp_path, monkeypatch):
    """Rule: the check before a write lists, in the plan's order and in words, every file that
    appears twice, that appeared, was removed or changed since the preview, that is a link or not a
    regular file, or that cannot be read; a file still as previewed gives no line."""
    folder, _ = _folder(tmp_path)
    names = ["same", "twice", "appeared", "removed", "changed", "link", "fifo", "unreadable"]
    p = {name: folder / f"{name}.json" for name in names}
    for name in ("same", "twice", "appeared", "changed", "unreadable"):
        p[name].write_bytes(b"now")
    p["link"].symlink_to(p["same"])
    os.mkfifo(p["fifo"])
    real = planmod._read_held

    def read_held(path):
        if path == p["unreadable"]:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    real_open = planmod.open_regular

    def open_regular(path, **kwargs):  # what the comparison with the previewed bytes opens
        if path == p["unreadable"]:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, **kwargs)

    monkeypatch.setattr(planmod, "_read_held", read_held)
    monkeypatch.setattr(planmod, "open_regular", open_regular)
    change = {name: FileChange(path=p[name], before=b"now", after=b"new") for name in names}
    change["appeared"] = FileChange(path=p["appeared"], before=None, after=b"new")
    change["changed"] = FileChange(path=p["changed"], before=b"then", after=b"new")
    plan = planmod.Plan(
        action="test",
        session_id="s",
        changes=[
            change["same"],
            change["twice"],
            change["twice"],
            change["appeared"],
            change["removed"],
            change["changed"],
            change["unreadable"],
            change["link"],
            change["fifo"],
        ],
    )
    assert planmod.check_fingerprints(plan) == [
        f"{p['twice']} appears twice in the plan",
        f"{p['appeared']} now exists (it did not when the preview was made)",
        f"{p['removed']} was removed since the preview",
        f"{p['changed']} changed since the preview",
        f"{p['unreadable']} cannot be read (Permission denied)",
        f"{p['link']} is a symbolic link; the inspector never writes through or replaces a link",
        f"{p['fifo']} is not a regular file",
    ]


def test_a_target_swapped_for_a_special_file_after_its_check_cannot_be_read(tmp_path, monkeypatch):
    """Rule: a target that stops being a regular file between its check and its read (a FIFO swapped
    in) is named as "cannot be read (not a regular file)", never opened."""
    folder, _ = _folder(tmp_path)
    target = folder / "s.json"
    os.mkfifo(target)
    monkeypatch.setattr(planmod, "_target_problem", lambda path: None)  # it was a file when checked
    plan = planmod.Plan(
        action="test", session_id="s", changes=[FileChange(path=target, before=b"old", after=b"new")]
    )
    assert planmod.check_fingerprints(plan) == [f"{target} cannot be read (not a regular file)"]


def test_the_write_path_reads_a_target_whole_whatever_the_planning_size_limit(tmp_path, monkeypatch):
    """Rule: the size limit is for planning; what the write path checks and compares (a target, a
    version it moved aside) is read whole, so a large file is compared, not refused for its size."""
    path = tmp_path / "s.json"
    path.write_bytes(b"x" * 64)
    real = planmod.read_regular
    limits = []

    def read_regular(p, *args, **kwargs):
        limits.append(args[0] if args else kwargs.get("max_bytes", "the reader's default limit"))
        return real(p, *args, **kwargs)

    monkeypatch.setattr(planmod, "read_regular", read_regular)
    assert planmod._read_held(path) == b"x" * 64
    assert limits == [None]


def test_the_write_path_never_reads_through_a_link(tmp_path):
    """Rule: what the write path reads back (a target, a version moved aside) is read only if it is
    a regular file itself: a symbolic link reads as "no file", never as its target's bytes."""
    real = tmp_path / "real.json"
    real.write_bytes(b"elsewhere")
    link = tmp_path / "s.json"
    link.symlink_to(real)
    assert planmod._read_held(link) is None and planmod._read_held(real) == b"elsewhere"


def test_apply_refuses_a_refused_plan_an_empty_plan_and_paths_that_are_not_plain(tmp_path):
    """Rule: apply writes nothing for a plan the planner refused (saying "refused:" and why), for a
    plan with no change, and for a plan naming a path that is not plain (each named on its line)."""
    folder, log = _folder(tmp_path)
    refused = planmod.Plan(action="test", session_id="s", refusal="the .bak is unreadable")
    with pytest.raises(ApplyError) as caught:
        planmod.apply_plan(refused, log)
    assert str(caught.value) == "refused: the .bak is unreadable"
    with pytest.raises(ApplyError) as caught:
        planmod.apply_plan(planmod.Plan(action="test", session_id="s"), log)
    assert str(caught.value) == "nothing to write"
    dotted = folder / ".." / "sessions" / "s.json"
    plan = planmod.Plan(
        action="test", session_id="s", changes=[FileChange(path=dotted, before=None, after=b"new")]
    )
    with pytest.raises(ApplyError) as caught:
        planmod.apply_plan(plan, log)
    assert str(caught.value) == (
        f"the plan names paths the inspector never writes; nothing was written:\n  "
        f"{str(dotted)!r} is not a plain absolute path; the inspector only writes plain paths"
    )
    assert sorted(folder.iterdir()) == [] and not log.root.exists()


def test_a_write_is_logged_at_the_clock_it_was_given(tmp_path):
    """Rule: apply records the write at ``clock_now`` when one is given (the CLI's --now, the
    tests' frozen clock), in the record it returns and in the write log."""
    folder, log = _folder(tmp_path)
    target = folder / "s.json"
    target.write_bytes(b"old")
    plan = planmod.Plan(
        action="test", session_id="s", changes=[FileChange(path=target, before=b"old", after=b"new")]
    )
    record = planmod.apply_plan(plan, log, clock_now=1234567.5)
    assert record.time == 1234567.5 and [r.time for r in log.records()] == [1234567.5]
    assert target.read_bytes() == b"new"
