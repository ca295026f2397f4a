"""A pytest plugin for the mutation run: each mutant's tests fastest first, the slow ones left out.

mutmut runs, for every mutant, all the tests that reach the mutated function, with ``-x``,
in no particular order. Of the suite's 3,000 tests, 240 take 29 of its 30 minutes (the
hostile-reads, differential-style and GUI tests), and a mutant reached by one of them pays
for it even when a 1 ms rule test would have killed it. Loaded with

    PYTEST_ADDOPTS="-p tests.mutation_fast_first" mutmut run

this plugin, in a process that runs a mutant's tests (``MUTANT_UNDER_TEST`` names a mutant) and in
mutmut's clean run (the same tests unmutated, which must pass: ``MUTANT_UNDER_TEST`` set and empty):

- orders the selected tests by the duration mutmut recorded for each
  (``mutants/mutmut-stats.json``), fastest first, so a kill comes as early as it can;
- leaves out the tests slower than ``MUTATION_TEST_CAP`` seconds (1 by default), unless
  that would leave none, and appends the mutant's name to ``mutants/fast_first_capped.txt``;
- a mutant the ledger records as killed on the same version of its function (:func:`_recorded_kill`) keeps
  all its tests, fastest first: run again, a kill only a slow test makes is found again, not a "flip";
- puts first, among the tests kept, those that killed another mutant of the same function in this
  run (``mutants/fast_first_killers.txt``, appended by :func:`pytest_runtest_logreport`), most kills
  first, then by duration: a function's mutants mostly die by the same few tests, and a recorded kill
  whose killer is slow is found again in one test instead of after hundreds (the order never changes
  which tests are kept, nor, with ``-x``, the verdict: a mutant is killed when any kept test fails);
- keeps, of those, the fastest while their recorded times add up to at most ``MUTATION_TEST_BUDGET``
  seconds (20 by default; at least one test): a function reached by hundreds of tests (the save, the
  write path) has its survivors checked in seconds, not minutes;
- keeps in memory, before any mutant runs, mutmut's own files in its folder (``README.md``, which a test
  reads, ``pyproject.toml``, the stats) and writes back one a mutant's test removed, after that test
  (:func:`_put_back_files`; the mutant is named in ``mutants/fast_first_put_back.txt``): the tests run
  in that folder, and a mutant that removes the files of its working folder otherwise turns every
  later mutant's run into false kills and timeouts;
- lowers the process's CPU limit to 20 s + 5 x the recorded time of the tests that run
  (:func:`_limit_cpu`), so a mutant that loops for ever is a timeout in a minute, not in hours.

A verdict "killed" is therefore always a real kill by a test of the suite. A mutant that
outlives the fast tests is recorded as "survived", which may be too harsh: it stays a
survivor in the score until it is killed, named as equivalent, or run again by name with
the whole set (``MUTATION_FULL=1 mutmut run NAME ...``, where this plugin does nothing).
The clean run checks the tests the mutants will run, so it leaves out the same slow ones: about
a minute instead of the whole selection's half hour at every start of a run. It never changes which
tests exist, how they run, or mutmut's configuration, so the verdicts mutmut already holds stay valid.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests import mutation_ledger

_STATS = Path(__file__).resolve().parents[1] / "mutmut-stats.json"
_LEDGER = (
    Path(__file__).resolve().parent / "mutation_ledger.txt"
)  # the verdicts kept (tests/mutation_ledger.py)
_META_ROOT = Path(__file__).resolve().parents[1]  # mutmut's folder: <module path>.py.meta beside each module
_CAPPED = Path(__file__).resolve().parents[1] / "fast_first_capped.txt"
_KILLERS = Path(__file__).resolve().parents[1] / "fast_first_killers.txt"
_durations: dict[str, float] = {}
# What _durations was read from: the stats file's path with its size and modification time. The path
# is part of it: the plugin's own tests point _STATS at files of their own, and a key of the time alone,
# put back by their monkeypatch while _durations still held one of those files' (or nothing), had
# every mutant of a run keep all its tests (ninth session: the cap never applied, survivors of
# journal_raw.index_journal took 50-88 s instead of 3).
_loaded_key: tuple[str, int, int] | None = None


def _mutant_under_test() -> str | None:
    """The mutant whose tests run here; ``""`` for mutmut's clean run (mutmut sets the variable to
    the empty string for it); None anywhere else (the variable unset, mutmut's stats or forced-fail
    runs, ``MUTATION_FULL``)."""
    if os.environ.get("MUTATION_FULL"):
        return None
    name = os.environ.get("MUTANT_UNDER_TEST")
    if name == "" or (name is not None and "__mutmut_" in name):
        return name
    return None


def _load_durations() -> dict[str, float]:
    """mutmut's recorded duration of each test, read again whenever the stats file changed. A file
    that cannot be read or parsed (mutmut may be writing it) gives no durations and is read again at
    the next call."""
    global _durations, _loaded_key
    try:
        st = _STATS.stat()
    except OSError:  # gone after it was read (see _put_back_files): what was read from it stays
        return _durations if _loaded_key is not None and _loaded_key[0] == str(_STATS) else {}
    key = (str(_STATS), st.st_size, st.st_mtime_ns)
    if key != _loaded_key:
        try:
            with _STATS.open("rb") as f:
                data = json.load(f).get("duration_by_test", {})
        except (OSError, ValueError, AttributeError):
            return {}
        _durations = {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))}
        _loaded_key = key
    return _durations


def _recorded_kill(mutant: str) -> bool:
    """Whether ``tests/mutation_ledger.txt`` records ``mutant`` as killed by a test (exit code 1) on
    the version of its function this run mutates (mutmut's hash in the module's ``.meta`` file equal
    to the ledger's). Such a mutant is run against all its tests, fastest first (:func:`pytest_
    collection_modifyitems`): a kill that only a slow test makes is found again, instead of reported
    as a survivor of the fast ones (the thirteenth and fourteenth sessions' re-runs of older kills
    "flipped" exactly those). With ``-x`` the slow tests run only when the fast ones do not kill it.
    False when anything cannot be read. The ledger is read by :mod:`tests.mutation_ledger`, once
    per path (in the fork server: every mutant's process inherits it)."""
    key = mutation_ledger._KEY.fullmatch(mutant)
    if key is None:
        return False
    ledger = _ledger()
    base = key["module"].replace(".", "/")
    for path in (f"{base}.py", f"{base}/__init__.py"):
        recorded = ledger.get((path, key["func"]))
        if recorded is None:
            continue
        try:
            with (_META_ROOT / f"{path}.meta").open("rb") as f:
                now = json.load(f).get("hash_by_function_name", {}).get(key["func"])
        except (OSError, ValueError, AttributeError):
            return False
        digest, codes = recorded
        index = int(key["n"]) - 1
        return digest == now and index < len(codes) and codes[index] == 1
    return False


_ledgers: dict[Path, dict] = {}


def _ledger() -> dict:
    """:func:`tests.mutation_ledger.read_ledger` of :data:`_LEDGER` (empty when it cannot be read)."""
    if _LEDGER not in _ledgers:
        try:
            _ledgers[_LEDGER] = mutation_ledger.read_ledger(_LEDGER)
        except mutation_ledger.BadInput:
            _ledgers[_LEDGER] = {}
    return _ledgers[_LEDGER]


def _function_of(mutant: str) -> str | None:
    """``inspector.plan.x_f__mutmut_3`` -> ``inspector.plan.x_f``; None for anything else."""
    key = mutation_ledger._KEY.fullmatch(mutant)
    return None if key is None else f"{key['module']}.{key['func']}"


def _killers(function: str) -> dict[str, int]:
    """The tests that killed a mutant of ``function`` in this run (:data:`_KILLERS`), each with how many
    it killed; empty when the file cannot be read. Lines not of the form ``mutant<TAB>node id`` are
    skipped (a line being appended by another child may be cut)."""
    found: dict[str, int] = {}
    try:
        text = _KILLERS.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return found
    prefix = f"{function}__mutmut_"  # the file holds every function's kills: no pattern match per line
    for line in text.splitlines():
        mutant, sep, nodeid = line.partition("\t")
        if sep and nodeid and mutant.startswith(prefix) and mutant[len(prefix) :].isdigit():
            found[nodeid] = found.get(nodeid, 0) + 1
    return found


def _limit_cpu(tests_time: float) -> None:
    """A mutant's CPU limit: 20 s plus 5 x the recorded time of the tests that run here, more than
    this process has used. mutmut computes its own limit (30 x, at least 60 s) from every test that
    reaches the function, slow ones included, which gave a mutant that loops for ever up to hours;
    with the fast-first cap the tests that run are a second or two (at most the budget), and a mutant
    that loops (a ``find`` loop that never moves on) cost a minute of CPU at mutmut's floor. The
    recorded times are wall times of mutmut's statistics run, on a machine as loaded as this one:
    the CPU the same tests need is less. The signal at the limit (SIGXCPU) is the one mutmut's own
    limit sends, a "timeout". The limit is only ever lowered."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    budget = 20.0 + 5.0 * tests_time
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    new = int(usage.ru_utime + usage.ru_stime + budget) + 1
    if soft != resource.RLIM_INFINITY and soft <= new:
        return
    if hard != resource.RLIM_INFINITY:
        new = min(new, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (new, hard))


def _nodeid(item) -> str:
    """A test's (or its report's) node id without mutmut's ``mutants/`` prefix (as in its stats)."""
    return item.nodeid.removeprefix("mutants/")


# mutmut's own files in its folder (the working folder of every mutant's tests), kept in memory before any
# mutant runs and put back after each test of a mutant that removed one. A mutant of
# ``plan._sweep_early_folders`` (``os.scandir(None)``: the working folder) removed every file there in the
# fifteenth session: without ``README.md`` a test that reads it fails for every later mutant (a false kill),
# without the stats every mutant got the 20 s CPU limit (false timeouts).
_KEPT_NAMES = ("README.md", "pyproject.toml", "mutmut-stats.json")
_PUT_BACK = Path(__file__).resolve().parents[1] / "fast_first_put_back.txt"
_kept: dict[Path, bytes] = {}


def _keep_files() -> None:
    """The bytes of :data:`_KEPT_NAMES` in mutmut's folder, read once (in the fork server: every mutant's
    process inherits them)."""
    for name in _KEPT_NAMES:
        path = _META_ROOT / name
        if path not in _kept:
            try:
                _kept[path] = path.read_bytes()
            except OSError:
                pass


def _put_back_files(mutant: str) -> None:
    """Each kept file that is gone written back (through a temporary name and a rename), and the mutant
    that removed it named in :data:`_PUT_BACK`."""
    for path, data in _kept.items():
        if os.path.lexists(path):
            continue
        tmp = path.with_name(f".{path.name}.{os.getpid()}.put-back")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError:
            continue
        _append_line(_PUT_BACK, f"{mutant}\t{path.name}")


def _append_line(path: Path, line: str) -> None:
    """``line`` and a newline appended to ``path`` in one write (best effort: a record of the run)."""
    try:
        with path.open("a", encoding="utf-8") as f:
            f.write(f"{line}\n")
    except OSError:
        pass


def pytest_runtest_logreport(report):
    """In a mutant's process, after each test's teardown, mutmut's own files put back (:func:`_put_back_files`);
    and the test that failed (setup, call or teardown: with ``-x`` the first one
    ends the run and kills the mutant) appended to :data:`_KILLERS`, one ``mutant<TAB>node id`` line
    per write, for :func:`pytest_collection_modifyitems` to put first for the function's next mutants."""
    mutant = _mutant_under_test()
    if mutant and report.when == "teardown":
        _put_back_files(mutant)
    if mutant and report.failed:
        _append_line(_KILLERS, f"{mutant}\t{_nodeid(report)}")


def pytest_configure(config):
    # In the fork server this runs before any mutant: the durations are then inherited.
    if os.environ.get("MUTANT_UNDER_TEST", "") not in {"stats", "list_all_tests", "fail"}:
        _load_durations()
        _ledger()
    if _mutant_under_test() is not None:
        _keep_files()


def pytest_collection_modifyitems(config, items):
    mutant = _mutant_under_test()
    if mutant is None or not items:
        return
    durations = _load_durations()
    cap = float(os.environ.get("MUTATION_TEST_CAP", "1.0"))
    budget = float(os.environ.get("MUTATION_TEST_BUDGET", "20"))
    if mutant and _recorded_kill(mutant):  # an older kill run again: every test, fastest first
        cap = budget = float("inf")

    def duration(item) -> float:
        return durations.get(_nodeid(item), 0.0)

    ordered = sorted(items, key=duration)
    kept = [item for item in ordered if duration(item) <= cap] or ordered
    spent = 0.0
    for n, item in enumerate(kept):  # the fastest ones while their recorded time fits the budget
        spent += duration(item)
        if spent > budget and n:
            kept = kept[:n]
            break
    dropped = ordered[len(kept) :]
    function = _function_of(mutant) if mutant else None
    killers = _killers(function) if function else {}
    if killers:  # earlier killers of the same function's mutants first: most kills, then fastest
        kept = sorted(kept, key=lambda item: -killers.get(_nodeid(item), 0))
    items[:] = kept
    if mutant:
        _limit_cpu(sum(duration(item) for item in kept))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        if not mutant:
            return
        _append_line(_CAPPED, f"{mutant}\t{len(kept)}\t{len(dropped)}")
