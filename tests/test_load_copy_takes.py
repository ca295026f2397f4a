"""A first open's forked copies keep no sidecar facts they will not look up again (issue 18):
only the copy running hermes' audit takes the facts it read into its scan (the audit looks them
up); the others hand theirs over and go on to the run journals."""

from __future__ import annotations

import json
import os

import pytest

from inspector import load
from inspector.store import scan as scan_mod
from tests.test_load_steal import NOW, _as_json, _forking, _here, _home, needs_fork


@needs_fork
@pytest.mark.parametrize("unlisted", [False, True])
def test_only_the_copy_running_hermes_audit_takes_its_sidecar_facts(tmp_path, monkeypatch, unlisted):
    home = _home(tmp_path)
    if unlisted:  # hermes' audit counts the messages of a live sidecar the index does not list
        index = home.session_dir / "_index.json"
        rows = [row for row in json.loads(index.read_text()) if row["session_id"] != "s13"]
        index.write_text(json.dumps(rows))
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    here = _here(home)
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE")
    stolen = _forking(monkeypatch, 1)
    log = tmp_path / "takes.log"
    real_job, real_take = load._aside_job, scan_mod.SessionDirScan.take

    def job(home, scan, share, stage, others, journals, with_hermes_audit=False, *rest):
        with open(log, "a") as fh:  # appended from every process
            fh.write(f"{os.getpid()} copy {int(with_hermes_audit)}\n")
        return real_job(home, scan, share, stage, others, journals, with_hermes_audit, *rest)

    def take(self, results):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} take {len(results)}\n")
        return real_take(self, results)

    real_hand_over = load._Stage.hand_over

    def hand_over(self, data):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} hand-over 1\n")
        return real_hand_over(self, data)

    monkeypatch.setattr(load, "_aside_job", job)
    monkeypatch.setattr(scan_mod.SessionDirScan, "take", take)
    monkeypatch.setattr(load._Stage, "hand_over", hand_over)
    assert _as_json(load.load_catalogue(home, now=NOW)) == here
    assert stolen == [1]
    lines = [line.split() for line in log.read_text().splitlines()]
    roles = {pid: int(n) for pid, what, n in lines if what == "copy"}
    assert sorted(roles.values()) == [0, 1]
    taken: dict[str, int] = {}
    for pid, what, n in lines:
        if what == "take":
            taken[pid] = taken.get(pid, 0) + int(n)
    auditing = next(pid for pid, r in roles.items() if r == 1)
    other = next(pid for pid, r in roles.items() if r == 0)
    assert taken.get(other, 0) == 0  # handed over, never taken there
    # the files hermes' audit looks up, and none of the others that copy read and handed over:
    # s05 and its .bak, gone's .bak, s02 (it has a turn journal), and s13 when the index does
    # not list it (that copy read it, or reads it again for the audit)
    assert taken[auditing] == (5 if unlisted else 4)
    # and only after it handed its sidecars over: the first process waits for that
    mine = [what for pid, what, _ in lines if pid == auditing]
    assert mine.index("hand-over") < mine.index("take")
    assert taken[str(os.getpid())] == 25  # this process takes every sidecar and .bak, once
