"""The stats of the sidecars a first open's forked copies read cross the pipe as plain tuples
(issue 18: a stat result pickles its hidden fields as a dict) and come back as the very stat
results they were: every field, visible or not, equal to a fresh ``os.stat`` of the file."""

from __future__ import annotations

import os

from inspector import load
from tests.test_load_steal import NOW, _forking, _home, needs_fork

_EVERY_FIELD = [n for n in dir(os.stat_result) if n.startswith("st_")]


def _same_stat(a: os.stat_result, b: os.stat_result, *, but_atime: bool = False) -> bool:
    """Every field equal (``but_atime``: but the access time, which the read itself moves)."""
    fields = [n for n in _EVERY_FIELD if not (but_atime and n.startswith("st_atime"))]
    visible = [i for i in range(len(a)) if not (but_atime and i == 7)]  # 7: st_atime as an int
    return (
        type(a) is os.stat_result
        and [a[i] for i in visible] == [b[i] for i in visible]
        and all(getattr(a, n) == getattr(b, n) for n in fields)
    )


def test_a_stat_comes_back_whole_and_a_missing_one_stays_missing(tmp_path):
    f = tmp_path / "s.json"
    f.write_bytes(b"{}")
    os.utime(f, ns=(1_700_000_000_123_456_789, 1_600_000_000_987_654_321))
    st = os.stat(f)
    got = [("s.json", {"count": 0}, st, None, 5), ("t.json", {"count": -1}, None, "cannot read: no", 6)]
    flat = load._flat_stats(got)
    assert all(type(item[2]) is tuple for item in flat[:1]) and flat[1][2] is None
    back = load._stats_back(flat)
    assert _same_stat(back[0][2], st)
    assert back[0][2].st_mtime_ns == 1_600_000_000_987_654_321  # the nanoseconds, not the float
    assert back[0][2].st_atime_ns == 1_700_000_000_123_456_789
    assert [item[:2] + item[3:] for item in back] == [item[:2] + item[3:] for item in got]
    assert back[1][2] is None


@needs_fork
def test_the_stats_a_copy_handed_over_are_the_files_stats(tmp_path, monkeypatch):
    home = _home(tmp_path)
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")  # nothing answered from a cache: all read
    _forking(monkeypatch, 1)
    scans, handed = [], []
    real_scan, real_read = load._scan, load._Aside.read_sidecars

    def scan(h):
        scans.append(real_scan(h))
        return scans[-1]

    def read_sidecars(self, s):
        real_read(self, s)
        handed.append(self.handed_over)

    monkeypatch.setattr(load, "_scan", scan)
    monkeypatch.setattr(load._Aside, "read_sidecars", read_sidecars)
    load.load_catalogue(home, now=NOW)
    assert handed == [load.FIRST_OPEN_COPIES]  # every copy handed its sidecars over
    names = sorted(n for n in os.listdir(home.session_dir) if n.endswith((".json", ".bak")) and n[0] != "_")
    assert len(names) == 25
    for name in names:
        _, st, error = scans[0].sidecar(name)
        assert error is None
        assert _same_stat(st, os.stat(home.session_dir / name), but_atime=True), name
