"""The interrupted-turn plan hands the save its count of the sidecar's messages (the file it parsed
already) instead of the save parsing the file again to count them.

Rule: the plan is the same bytes, summary, warnings and result as when the save counts for itself
(``count_messages_in_bytes``, -1 for a file without a ``messages`` list), on the golden cases and on
sidecars whose messages are missing, null, empty, or longer than what the repair leaves (the save
keeps a ``.bak``, tested on ``save_session`` itself: this repair never shortens a transcript).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.home import locate_home
from inspector.plan import Clock
from inspector.repair import interrupted
from inspector.repair.context import RepairContext
from inspector.repair.save import save_session
from inspector.store.sidecar import dump_session, load_session
from tests.conftest import GOLDEN

NOW = 1_779_500_000.0
SID = "count_sid"


def _plans(home: Path, sid: str, now: float, started: float, monkeypatch: pytest.MonkeyPatch) -> tuple:
    def ctx() -> RepairContext:
        return RepairContext(home=locate_home(home, env={}), clock=Clock(now, started), cwd=home)

    given = interrupted.plan(ctx(), sid)
    real = interrupted.save_session
    counts = []

    def counted_by_the_save(*args, existing_count=None, **kwargs):
        counts.append(existing_count)
        return real(*args, **kwargs)  # no count passed: the save parses the file to count

    with monkeypatch.context() as m:
        m.setattr(interrupted, "save_session", counted_by_the_save)
        own = interrupted.plan(ctx(), sid)
    return given, own, counts


def _same(a, b) -> None:
    assert [(str(c.path), c.before, c.after, c.fingerprint) for c in a.changes] == [
        (str(c.path), c.before, c.after, c.fingerprint) for c in b.changes
    ]
    assert (a.summary, a.warnings, a.refusal, a.result) == (b.summary, b.warnings, b.refusal, b.result)


CASES = sorted(
    p.name
    for p in GOLDEN.iterdir()
    if (p / "case.json").is_file()
    and json.loads((p / "case.json").read_text(encoding="utf-8"))["action"] == "repair-interrupted"
)


@pytest.mark.parametrize("case", CASES)
def test_golden_plans_are_the_same_with_the_plan_s_count(case: str, tmp_path: Path, monkeypatch) -> None:
    spec = json.loads((GOLDEN / case / "case.json").read_text(encoding="utf-8"))
    home = tmp_path / "home"
    shutil.copytree(GOLDEN / case / "before", home)
    given, own, counts = _plans(home, spec["session_id"], spec["now"], spec["server_started_at"], monkeypatch)
    assert counts and all(isinstance(c, int) for c in counts)
    _same(given, own)


def _write(home: Path, text: bytes) -> None:
    path = home / "webui" / "sessions" / f"{SID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)


def _sidecar(home: Path, messages) -> bytes:
    raw = {
        "session_id": SID,
        "title": "t",
        "messages": [],
        "pending_user_message": "hello",
        "active_stream_id": "s1",
        "pending_started_at": NOW - 120,
    }
    text = dump_session(load_session(raw, now=NOW, cwd=home).data)
    if messages == "missing":
        obj = json.loads(text)
        del obj["messages"]
        return json.dumps(obj, ensure_ascii=False, indent=2).encode()
    return text.replace(b'"messages": []', b'"messages": ' + json.dumps(messages).encode())


def _core(home: Path, messages: list) -> None:
    path = home / "sessions" / f"session_{SID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")


@pytest.mark.parametrize(
    ("messages", "core"),
    [
        ("missing", None),
        (None, None),
        ([], None),
        ([], [{"role": "user", "content": "from core"}]),
        ("missing", [{"role": "user", "content": "from core"}]),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], None),
        (0, None),
        ("", None),
    ],
)
def test_odd_and_empty_messages_plan_the_same_with_the_plan_s_count(
    messages, core, tmp_path: Path, monkeypatch
) -> None:
    home = tmp_path / "home"
    _write(home, _sidecar(home, messages))
    if core is not None:
        _core(home, core)
    given, own, _ = _plans(home, SID, NOW, NOW - 3600, monkeypatch)
    _same(given, own)


@pytest.mark.parametrize("kept", [0, 1, 4, 6])
def test_save_session_decides_alike_on_a_given_count_bak_included(kept: int, tmp_path: Path) -> None:
    # the save keeps a .bak when the file holds more rows than it writes: the given count (the
    # file's 4 rows) decides that as the save's own count of the file does
    home = tmp_path / "home"
    rows = [{"role": "user", "content": f"m{i}"} for i in range(6)]
    _write(home, _sidecar(home, rows[:4]))
    outcomes = []
    for count in (None, 4):
        ctx = RepairContext(home=locate_home(home, env={}), clock=Clock(NOW, NOW - 3600), cwd=home)
        raw = json.loads((home / "webui" / "sessions" / f"{SID}.json").read_bytes())
        raw["messages"] = rows[:kept]
        loaded = load_session(raw, now=NOW, cwd=home)
        changes = save_session(ctx.save_context(), loaded, touch_updated_at=True, existing_count=count)
        outcomes.append([(c.path.name, c.before, c.after) for c in changes])
    assert outcomes[0] == outcomes[1]
    assert any(name.endswith(".bak") for name, _, _ in outcomes[0]) == (0 < kept < 4)
