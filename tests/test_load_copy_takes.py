"""A first open's forked copies keep no sidecar facts they will not look up again (issue 18):
only the copy running hermes' audit takes the facts it read into its scan (the audit looks them
up); the others hand theirs over and go on to the run journals."""

from __future__ import annotations

import os

from inspector import load
from inspector.store import scan as scan_mod
from tests.test_load_steal import NOW, _as_json, _forking, _here, _home, needs_fork


@needs_fork
def test_only_the_copy_running_hermes_audit_takes_its_sidecar_facts(tmp_path, monkeypatch):
    home = _home(tmp_path)
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

    monkeypatch.setattr(load, "_aside_job", job)
    monkeypatch.setattr(scan_mod.SessionDirScan, "take", take)
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
    assert taken[auditing] > 0  # hermes' audit looks its files up
    assert taken[str(os.getpid())] == 25  # this process takes every sidecar and .bak, once
