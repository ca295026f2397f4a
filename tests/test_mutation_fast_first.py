"""The mutation run's test-ordering plugin (tests/mutation_fast_first.py).

Rules: in a process that runs a mutant's tests, the tests run fastest first by mutmut's recorded
durations, and those slower than the cap are left out (and reported as deselected) unless that
would leave none; mutmut's clean run (MUTANT_UNDER_TEST set and empty) checks the same fast tests;
anywhere else (the suite itself, mutmut's stats and listing runs, a by-name run with MUTATION_FULL=1)
the plugin changes nothing.
"""

from __future__ import annotations

import json
import os
import resource
from types import SimpleNamespace

import pytest

from tests import mutation_fast_first as plugin

# The process's own limit functions, before any test stands in for them: a test that ran the plugin
# with the real ones lowered this process's CPU limit to "what it used + 60 s", which killed mutmut's
# own process (its clean run runs these tests in it) with SIGXCPU a minute later, twice.
_REAL_GETRLIMIT = resource.getrlimit
_LIMIT_AT_IMPORT = resource.getrlimit(resource.RLIMIT_CPU)


class _Hook:
    def __init__(self) -> None:
        self.deselected: list[object] = []

    def pytest_deselected(self, items) -> None:
        self.deselected.extend(items)


def _item(nodeid: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid)


@pytest.fixture
def stats(tmp_path, monkeypatch):
    """A mutants folder with mutmut's stats: t_slow 2.0 s, t_mid 0.2 s, t_fast 0.001 s."""
    path = tmp_path / "mutmut-stats.json"
    path.write_text(
        json.dumps(
            {
                "duration_by_test": {
                    "tests/a.py::t_slow": 2.0,
                    "tests/a.py::t_mid": 0.2,
                    "tests/b.py::t_fast": 0.001,
                }
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(plugin, "_STATS", path)
    monkeypatch.setattr(plugin, "_CAPPED", tmp_path / "fast_first_capped.txt")
    monkeypatch.setattr(plugin, "_KILLERS", tmp_path / "fast_first_killers.txt")
    monkeypatch.setattr(plugin, "_PUT_BACK", tmp_path / "fast_first_put_back.txt")
    monkeypatch.setattr(plugin, "_META_ROOT", tmp_path)
    monkeypatch.setattr(plugin, "_kept", {})
    monkeypatch.setattr(plugin, "_loaded_key", None)
    monkeypatch.setattr(plugin, "_durations", {})  # put back afterwards, with the key it was read under
    monkeypatch.delenv("MUTATION_FULL", raising=False)
    monkeypatch.delenv("MUTATION_TEST_CAP", raising=False)
    _Limits(monkeypatch, resource.RLIM_INFINITY, resource.RLIM_INFINITY)  # never this process's own limit
    return tmp_path


def _run(items):
    hook = _Hook()
    config = SimpleNamespace(hook=hook)
    plugin.pytest_collection_modifyitems(config, items)
    return [item.nodeid for item in items], [item.nodeid for item in hook.deselected]


def _three():
    return [_item("tests/a.py::t_slow"), _item("tests/a.py::t_mid"), _item("tests/b.py::t_fast")]


def test_a_mutants_tests_run_fastest_first_and_the_slow_ones_are_left_out(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid"]
    assert dropped == ["tests/a.py::t_slow"]
    assert (stats / "fast_first_capped.txt").read_text() == "inspector.plan.x_f__mutmut_3\t2\t1\n"


def test_the_cap_is_a_setting(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    monkeypatch.setenv("MUTATION_TEST_CAP", "0.01")
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast"]
    assert dropped == ["tests/a.py::t_mid", "tests/a.py::t_slow"]


def test_when_every_test_is_slow_all_run_fastest_first(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    monkeypatch.setenv("MUTATION_TEST_CAP", "0.0001")
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid", "tests/a.py::t_slow"]
    assert dropped == []
    assert not (stats / "fast_first_capped.txt").exists()


def test_a_test_without_a_recorded_duration_counts_as_fast(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    kept, _ = _run([_item("tests/a.py::t_mid"), _item("tests/c.py::t_new")])
    assert kept == ["tests/c.py::t_new", "tests/a.py::t_mid"]


def test_mutmuts_own_prefix_on_a_node_id_is_ignored(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    kept, dropped = _run([_item("mutants/tests/a.py::t_slow"), _item("mutants/tests/b.py::t_fast")])
    assert kept == ["mutants/tests/b.py::t_fast"]
    assert dropped == ["mutants/tests/a.py::t_slow"]


def test_mutmuts_clean_run_checks_the_same_fast_tests_and_names_no_mutant(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "")  # mutmut sets it empty for the clean run
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid"]
    assert dropped == ["tests/a.py::t_slow"]
    assert not (stats / "fast_first_capped.txt").exists()


@pytest.mark.parametrize(
    ("mutant", "full"),
    [
        (None, None),  # the suite itself: the variable is not set
        ("stats", None),  # mutmut collecting which tests reach which function
        ("list_all_tests", None),  # mutmut listing the tests
        ("fail", None),  # mutmut's forced-fail check
        ("inspector.plan.x_f__mutmut_3", "1"),  # a by-name run with the whole set
        ("", "1"),  # its clean run
    ],
)
def test_outside_a_mutants_run_nothing_changes(stats, monkeypatch, mutant, full):
    if mutant is None:
        monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    else:
        monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)
    if full is not None:
        monkeypatch.setenv("MUTATION_FULL", full)
    kept, dropped = _run(_three())
    assert kept == ["tests/a.py::t_slow", "tests/a.py::t_mid", "tests/b.py::t_fast"]
    assert dropped == []


def test_missing_or_broken_stats_keep_the_order_and_every_test(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    (stats / "mutmut-stats.json").write_text("{not json", encoding="utf-8")
    kept, dropped = _run(_three())
    assert kept == ["tests/a.py::t_slow", "tests/a.py::t_mid", "tests/b.py::t_fast"]
    assert dropped == []
    (stats / "mutmut-stats.json").unlink()
    kept, _ = _run(_three())
    assert kept == ["tests/a.py::t_slow", "tests/a.py::t_mid", "tests/b.py::t_fast"]


class _Limits:
    """resource's CPU limit, kept in memory (a test must not lower its own process's limit)."""

    def __init__(self, monkeypatch, soft, hard, used=10.0):
        import resource

        self.soft, self.hard = soft, hard
        monkeypatch.setattr(resource, "getrlimit", lambda which: (self.soft, self.hard))
        monkeypatch.setattr(resource, "setrlimit", self._set)
        monkeypatch.setattr(
            resource, "getrusage", lambda who: SimpleNamespace(ru_utime=used * 0.75, ru_stime=used * 0.25)
        )

    def _set(self, which, limits):
        import resource

        assert which == resource.RLIMIT_CPU
        self.soft, self.hard = limits


def test_a_mutants_cpu_limit_is_20_s_and_5_times_the_tests_that_run(stats, monkeypatch):
    import resource

    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    monkeypatch.setenv("MUTATION_TEST_CAP", "1")  # t_fast 0.001 s and t_mid 0.2 s run: 20 + 5 x 0.201 s
    limits = _Limits(monkeypatch, resource.RLIM_INFINITY, resource.RLIM_INFINITY, used=10.0)
    _run(_three())
    assert limits.soft == int(10 + 20 + 5 * 0.201) + 1  # what the process used, the limit, rounded up
    monkeypatch.setenv("MUTATION_TEST_CAP", "5")  # t_slow too: 20 + 5 x 2.201 = 31.005 s
    limits = _Limits(monkeypatch, resource.RLIM_INFINITY, resource.RLIM_INFINITY, used=10.0)
    _run(_three())
    assert limits.soft == int(10 + 20 + 5 * 2.201) + 1


def test_the_cpu_limit_is_only_ever_lowered_and_never_above_the_hard_one(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    limits = _Limits(monkeypatch, 25, 26)  # mutmut's own limit lower already: kept
    _run(_three())
    assert (limits.soft, limits.hard) == (25, 26)
    limits = _Limits(monkeypatch, 5000, 5001)
    _run(_three())
    assert (limits.soft, limits.hard) == (32, 5001)
    limits = _Limits(monkeypatch, 5000, 28)  # never above the hard limit
    _run(_three())
    assert limits.soft == 28


def test_no_cpu_limit_in_the_clean_run_or_outside_a_mutants_run(stats, monkeypatch):
    import resource

    for value in ("", "stats"):
        monkeypatch.setenv("MUTANT_UNDER_TEST", value)
        limits = _Limits(monkeypatch, resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        _run(_three())
        assert limits.soft == resource.RLIM_INFINITY


def test_running_the_plugin_here_never_changes_this_processs_own_cpu_limit(stats, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    for cap in ("0.3", "1", "5"):
        monkeypatch.setenv("MUTATION_TEST_CAP", cap)
        _run(_three())
    assert _REAL_GETRLIMIT(resource.RLIMIT_CPU) == _LIMIT_AT_IMPORT


def test_stats_read_from_another_path_are_read_again_even_with_the_same_size_and_time(
    stats, monkeypatch, tmp_path
):
    """Rule: the durations are those of the file ``_STATS`` names now. This test module points the
    plugin at files of its own; had a key of the modification time alone come back (put back by
    monkeypatch) while the durations were another file's, every mutant of a run kept all its tests."""
    assert plugin._load_durations()["tests/a.py::t_slow"] == 2.0
    other = tmp_path / "other" / "mutmut-stats.json"
    other.parent.mkdir()
    text = (stats / "mutmut-stats.json").read_text(encoding="utf-8").replace("2.0", "3.0")
    other.write_text(text, encoding="utf-8")
    st = (stats / "mutmut-stats.json").stat()
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert other.stat().st_size == st.st_size
    monkeypatch.setattr(plugin, "_STATS", other)
    assert plugin._load_durations()["tests/a.py::t_slow"] == 3.0


def test_a_stats_file_that_does_not_parse_is_read_again_at_the_next_call(stats):
    """Rule: a file caught half written gives no durations this time, and is not taken as read: once
    complete it is read, even when its size and modification time are what they were."""
    path = stats / "mutmut-stats.json"
    good = path.read_text(encoding="utf-8")
    st = path.stat()
    path.write_text(good[:-1] + " ", encoding="utf-8")  # the closing brace not yet written
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert plugin._load_durations() == {}
    path.write_text(good, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert plugin._load_durations() == {
        "tests/a.py::t_slow": 2.0,
        "tests/a.py::t_mid": 0.2,
        "tests/b.py::t_fast": 0.001,
    }


def test_the_fastest_tests_are_kept_while_their_time_fits_the_budget(stats, monkeypatch):
    """Rule: of the tests under the cap, the fastest first while their recorded times add up to at
    most the budget; at least one, even when it alone is over it."""
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    monkeypatch.setenv("MUTATION_TEST_CAP", "5")  # every test under the cap: the budget decides
    monkeypatch.setenv("MUTATION_TEST_BUDGET", "0.201")  # t_fast + t_mid exactly
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid"] and dropped == ["tests/a.py::t_slow"]
    monkeypatch.setenv("MUTATION_TEST_BUDGET", "0.2")
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast"] and dropped == ["tests/a.py::t_mid", "tests/a.py::t_slow"]
    monkeypatch.setenv("MUTATION_TEST_BUDGET", "0")
    kept, _ = _run(_three())
    assert kept == ["tests/b.py::t_fast"]  # at least one
    monkeypatch.delenv("MUTATION_TEST_BUDGET")
    kept, _ = _run(_three())  # 20 s by default: all three fit
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid", "tests/a.py::t_slow"]


@pytest.fixture
def ledger(stats, monkeypatch):
    """A ledger recording ``inspector/plan.py``'s ``x_f`` at hash ``aaaaaa``: mutant 1 killed, 2 survived,
    3 a timeout; the mutants folder's ``.meta`` gives ``x_f`` the same hash, ``x_g`` another."""
    (stats / "inspector").mkdir()
    (stats / "inspector" / "plan.py.meta").write_text(
        json.dumps({"hash_by_function_name": {"x_f": "aaaaaa", "x_g": "cccccc"}}), encoding="utf-8"
    )
    path = stats / "mutation_ledger.txt"
    path.write_text(
        "# a comment line\ninspector/plan.py\tx_f\taaaaaa\t1 0 24\ninspector/plan.py\tx_g\tbbbbbb\t1 1\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(plugin, "_LEDGER", path)
    monkeypatch.setattr(plugin, "_META_ROOT", stats)
    return stats


def test_a_recorded_kill_of_the_same_function_version_keeps_every_test_fastest_first(ledger, monkeypatch):
    """Rule: the older kill run again gets all its tests (the slow one last), nothing deselected."""
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_1")
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid", "tests/a.py::t_slow"]
    assert dropped == []


@pytest.mark.parametrize(
    "mutant",
    [
        "inspector.plan.x_f__mutmut_2",  # recorded as a survivor
        "inspector.plan.x_f__mutmut_3",  # a timeout, not a kill by a test
        "inspector.plan.x_f__mutmut_4",  # past the recorded ones
        "inspector.plan.x_g__mutmut_1",  # killed, but on another version of x_g
        "inspector.plan.x_h__mutmut_1",  # a function the ledger does not hold
        "inspector.other.x_f__mutmut_1",  # a module without a .meta file
    ],
)
def test_anything_else_keeps_the_cap(ledger, monkeypatch, mutant):
    """Rule: only a recorded kill on the same version lifts the cap; the others run the fast tests."""
    monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid"]
    assert dropped == ["tests/a.py::t_slow"]


def test_recorded_kill_reads_the_real_ledger_format() -> None:
    """Rule: a line of the project's own ledger is read as ``path, function, hash, codes``."""
    first = next(
        line for line in plugin._LEDGER.read_text(encoding="utf-8").splitlines() if not line.startswith("#")
    )
    path, function, _hash, codes = first.split("\t")
    assert path.startswith("inspector/") and path.endswith(".py") and function.startswith("x")
    assert all(code == "." or code.lstrip("-").isdigit() for code in codes.split())


def test_earlier_killers_of_the_same_function_run_first_most_kills_first(ledger, monkeypatch):
    """Rule: among the tests kept, those that killed other mutants of the same function in this run come
    first, the one with most kills first; the rest stay fastest first. Killers of another function, or
    of the same name in another module, and cut or foreign lines change nothing."""
    (ledger / "fast_first_killers.txt").write_text(
        "inspector.plan.x_f__mutmut_7\ttests/a.py::t_mid\n"
        "inspector.plan.x_f__mutmut_8\ttests/a.py::t_slow\n"
        "inspector.plan.x_f__mutmut_9\ttests/a.py::t_slow\n"
        "inspector.plan.x_g__mutmut_1\ttests/a.py::t_mid\n"
        "inspector.plan.x_g__mutmut_2\ttests/a.py::t_mid\n"
        "inspector.other.x_f__mutmut_1\ttests/a.py::t_mid\n"
        "inspector.other.x_f__mutmut_2\ttests/a.py::t_mid\n"
        "not a line of ours\n"
        "inspector.plan.x_f__mutmut_10\t\n"
        "inspector.plan.x_f__mut",
        encoding="utf-8",
    )
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_1")  # a recorded kill: every test
    kept, dropped = _run(_three())
    assert kept == ["tests/a.py::t_slow", "tests/a.py::t_mid", "tests/b.py::t_fast"] and dropped == []


def test_killers_first_never_changes_which_tests_are_kept(ledger, monkeypatch):
    """Rule: a killer left out by the cap stays out; only the kept tests are put in another order."""
    (ledger / "fast_first_killers.txt").write_text(
        "inspector.plan.x_f__mutmut_7\ttests/a.py::t_slow\ninspector.plan.x_f__mutmut_8\ttests/a.py::t_mid\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_2")  # a survivor: the cap holds
    kept, dropped = _run(_three())
    assert kept == ["tests/a.py::t_mid", "tests/b.py::t_fast"] and dropped == ["tests/a.py::t_slow"]


def test_without_a_killers_file_the_order_is_fastest_first(ledger, monkeypatch):
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_1")
    assert not (ledger / "fast_first_killers.txt").exists()
    kept, _ = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid", "tests/a.py::t_slow"]


def _report(nodeid: str, failed: bool, when: str = "call") -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, failed=failed, when=when)


def test_a_failing_test_in_a_mutants_run_is_recorded_as_its_killer(stats, monkeypatch):
    """Rule: in a mutant's process each failed report (setup, call or teardown) appends one line
    ``mutant<TAB>node id`` (mutmut's ``mutants/`` prefix dropped); passing tests add nothing."""
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    plugin.pytest_runtest_logreport(_report("tests/b.py::t_fast", failed=False))
    assert not (stats / "fast_first_killers.txt").exists()
    plugin.pytest_runtest_logreport(_report("mutants/tests/a.py::t_mid", failed=True))
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_4")
    plugin.pytest_runtest_logreport(_report("tests/a.py::t_slow", failed=True))
    assert (stats / "fast_first_killers.txt").read_text(encoding="utf-8") == (
        "inspector.plan.x_f__mutmut_3\ttests/a.py::t_mid\ninspector.plan.x_f__mutmut_4\ttests/a.py::t_slow\n"
    )


@pytest.mark.parametrize(
    ("mutant", "full"), [(None, None), ("", None), ("stats", None), ("inspector.plan.x_f__mutmut_3", "1")]
)
def test_no_killer_is_recorded_outside_a_mutants_run(stats, monkeypatch, mutant, full):
    """Rule: the suite itself, mutmut's clean, stats and listing runs and a MUTATION_FULL run record nothing."""
    if mutant is None:
        monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    else:
        monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)
    if full:
        monkeypatch.setenv("MUTATION_FULL", full)
    plugin.pytest_runtest_logreport(_report("tests/a.py::t_mid", failed=True))
    assert not (stats / "fast_first_killers.txt").exists()


def test_stats_removed_after_they_were_read_keep_their_durations(stats, monkeypatch):
    """Rule: a stats file gone after it was read (a mutant removed it) leaves the durations read from it,
    not none (with none, every mutant got the 20 s CPU limit and its tests in no order)."""
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x_f__mutmut_3")
    assert plugin._load_durations()["tests/a.py::t_slow"] == 2.0
    (stats / "mutmut-stats.json").unlink()
    assert plugin._load_durations()["tests/a.py::t_slow"] == 2.0
    kept, dropped = _run(_three())
    assert kept == ["tests/b.py::t_fast", "tests/a.py::t_mid"] and dropped == ["tests/a.py::t_slow"]


def test_mutmuts_own_files_removed_by_a_mutants_test_are_put_back_after_it(stats, monkeypatch):
    """Rule: in a mutant's process, README.md, pyproject.toml and the stats in mutmut's folder, as they were
    before any mutant ran, are written back after each test that removed one, and the mutant is named in
    fast_first_put_back.txt; files that are there are left as they are."""
    (stats / "README.md").write_bytes(b"# the README\n")
    (stats / "pyproject.toml").write_bytes(b"[project]\n")
    monkeypatch.setenv("MUTANT_UNDER_TEST", "")  # the fork server's clean run keeps them
    plugin.pytest_configure(SimpleNamespace())
    monkeypatch.setenv("MUTANT_UNDER_TEST", "inspector.plan.x__sweep_early_folders__mutmut_19")
    for name in ("README.md", "mutmut-stats.json"):
        (stats / name).unlink()
    (stats / "pyproject.toml").write_bytes(b"[changed]\n")
    plugin.pytest_runtest_logreport(_report("tests/a.py::t_mid", failed=False, when="call"))
    assert not (stats / "README.md").exists()  # only after the test's teardown
    plugin.pytest_runtest_logreport(_report("tests/a.py::t_mid", failed=False, when="teardown"))
    assert (stats / "README.md").read_bytes() == b"# the README\n"
    assert "tests/a.py::t_slow" in (stats / "mutmut-stats.json").read_text(encoding="utf-8")
    assert (stats / "pyproject.toml").read_bytes() == b"[changed]\n"
    assert (stats / "fast_first_put_back.txt").read_text(encoding="utf-8") == (
        "inspector.plan.x__sweep_early_folders__mutmut_19\tREADME.md\n"
        "inspector.plan.x__sweep_early_folders__mutmut_19\tmutmut-stats.json\n"
    )
    assert sorted(p.name for p in stats.iterdir() if ".put-back" in p.name) == []


def test_nothing_is_kept_or_put_back_outside_a_mutation_run(stats, monkeypatch):
    (stats / "README.md").write_bytes(b"# the README\n")
    monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    plugin.pytest_configure(SimpleNamespace())
    assert plugin._kept == {}
    (stats / "README.md").unlink()
    plugin.pytest_runtest_logreport(_report("tests/a.py::t_mid", failed=False, when="teardown"))
    assert not (stats / "README.md").exists() and not (stats / "fast_first_put_back.txt").exists()
