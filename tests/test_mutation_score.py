"""``python -m tests.mutation_score``: the mutation score from mutmut's ``.meta`` files and the list
of named equivalents (issue 21), on hand-written fake runs with the expected counts written out; and
the list itself: well-formed names of functions of the core that exist, each one named in
``tests/MUTATION.md``."""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest

from tests import mutation_score as ms

ROOT = Path(__file__).resolve().parents[1]
MUTATION_MD = Path(__file__).with_name("MUTATION.md")

P = "inspector.plan.x__swap__mutmut_"
S = "inspector.repair.save.xǁIndexRebuildǁfinish__mutmut_"
J = "inspector.store.journal.x_dropped_lines__mutmut_"

# 19 mutants in two modules, every status mutmut gives: 4 killed (exit 1 or 3), 2 caught by the
# type check (37), 5 timeouts (36, 24, -24, 152, 255), 3 survived (0), 2 no tests (33, 5),
# 2 not checked (null), 1 unknown (2: mutmut's "interrupted by user", no verdict).
RUN = {
    "inspector/plan.py.meta": {
        P + "1": 1, P + "2": 1, P + "3": 3, P + "4": 37, P + "5": 36, P + "6": 24,
        P + "7": 0, P + "8": 33, P + "9": None,
    },
    "inspector/repair/save.py.meta": {
        S + "1": 1, S + "2": 37, S + "3": -24, S + "4": 152, S + "5": 255,
        S + "6": 0, S + "7": 0, S + "8": 5, S + "9": None, S + "10": 2,
    },
}  # fmt: skip


def fake_run(root: Path, run: dict, hashes: dict | None = None) -> Path:
    """mutmut's folder: a ``.meta`` file per module (``hashes``: its ``hash_by_function_name``)."""
    mutants = root / "mutants"
    for rel, codes in run.items():
        meta = mutants / rel
        meta.parent.mkdir(parents=True, exist_ok=True)
        data = {"exit_code_by_key": codes, "hash_by_function_name": (hashes or {}).get(rel, {})}
        meta.write_text(json.dumps({**data, "durations_by_key": {}}), encoding="utf-8")
    return mutants


def equivalents(path: Path, *names: str) -> Path:
    path.write_text("# a group\n" + "".join(f"{n} # why\n" for n in names) + "\n# end\n", encoding="utf-8")
    return path


def run_main(capsys, *argv) -> tuple[int, str, str]:
    code = ms.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_counts_every_status_of_a_run(tmp_path):
    codes, _, files = ms.read_verdicts(fake_run(tmp_path, RUN))
    s = ms.score(codes, [P + "7", S + "6", P + "8"], files)
    assert files == 2
    assert s.total == 19
    counts = {status: s.count(status) for status in ms.STATUS_BY_EXIT_CODE.values()}
    assert counts == {
        "killed": 4,
        "caught by type check": 2,
        "timeout": 5,
        "survived": 3,
        "no tests": 2,
        "not checked": 2,
    }
    assert s.unknown == {S + "10": 2}
    assert (s.caught, s.checked) == (11, 16)  # checked: the 19 but 2 not checked and 1 unknown
    assert s.named("survived") == [P + "7", S + "6"]
    assert s.unnamed("survived") == [S + "7"]
    assert s.named("no tests") == [P + "8"]
    assert s.unnamed_uncaught == [S + "7", S + "8"]


def test_the_score_both_ways(tmp_path):
    codes, _, files = ms.read_verdicts(fake_run(tmp_path, RUN))
    s = ms.score(codes, [P + "7", S + "6", P + "8"], files)
    assert s.score == pytest.approx(11 / 16)
    assert s.score_without_equivalents == pytest.approx(11 / 13)  # 16 checked - 3 uncaught named
    plain = ms.score(codes, [], files)
    assert plain.score_without_equivalents == pytest.approx(11 / 16)


def test_the_printed_report(tmp_path, capsys):
    mutants = fake_run(tmp_path, RUN)
    listed = equivalents(tmp_path / "eq.txt", P + "7", S + "6", P + "8")
    code, out, err = run_main(capsys, mutants, "--equivalents", listed)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"mutants: 19 (2 .meta files under {mutants})"
    assert lines[1:8] == [
        "  killed                      4",
        "  caught by type check        2",
        "  timeout                     5",
        "  survived                    3   of which named equivalent 2, not named 1",
        "  no tests                    2   of which named equivalent 1, not named 1",
        "  not checked                 2",
        "  unknown exit code           1",
    ]
    assert f"    {S}10: exit code 2" in lines
    assert "checked: 16 of 19; caught = killed + type check + timeout = 11" in lines
    assert "score: caught / checked = 11 / 16 = 68.8 %" in lines
    assert "score without the named equivalents: caught / (checked - 3) = 11 / 13 = 84.6 %" in lines
    why = "2 not checked, 1 with an unknown exit code, 2 uncaught and not named (survived or no tests)"
    assert lines[-1] == f"not done: {why}"


def test_an_unknown_exit_code_is_named_not_counted(tmp_path, capsys):
    """mutmut's codes without a verdict (2 interrupted, -11 segfault, 35 suspicious), a code no
    mutmut gives, and JSON that is no integer are listed by name: neither caught nor checked."""
    odd = {
        P + "1": 1,
        P + "2": 2,
        P + "3": -11,
        P + "4": 35,
        P + "5": 99,
        P + "6": "1",
        P + "7": True,
        P + "8": 1.0,
    }
    mutants = fake_run(tmp_path, {"inspector/plan.py.meta": odd})
    code, out, _ = run_main(capsys, mutants, "--equivalents", equivalents(tmp_path / "eq.txt"))
    assert code == 1
    assert "  unknown exit code           7" in out.splitlines()
    for n, shown in [
        ("2", "2"),
        ("3", "-11"),
        ("4", "35"),
        ("5", "99"),
        ("6", "'1'"),
        ("7", "True"),
        ("8", "1.0"),
    ]:
        assert f"    {P}{n}: exit code {shown}" in out.splitlines()
    assert "checked: 1 of 8; caught = killed + type check + timeout = 1" in out
    assert "not done: 7 with an unknown exit code" in out


def test_exit_code_0_only_when_every_mutant_is_checked_and_every_uncaught_one_named(tmp_path, capsys):
    done = {P + "1": 1, P + "2": 37, P + "3": 36, P + "4": 0, P + "5": 33}
    mutants = fake_run(tmp_path / "a", {"inspector/plan.py.meta": done})
    both = equivalents(tmp_path / "both.txt", P + "4", P + "5")
    code, out, _ = run_main(capsys, mutants, "--equivalents", both)
    assert code == 0
    assert out.splitlines()[-1] == "done: every mutant checked, every uncaught one named as equivalent"
    assert "score without the named equivalents: caught / (checked - 2) = 3 / 3 = 100.0 %" in out

    survivor_unnamed = equivalents(tmp_path / "one.txt", P + "5")
    assert run_main(capsys, mutants, "--equivalents", survivor_unnamed)[0] == 1
    no_tests_unnamed = equivalents(tmp_path / "other.txt", P + "4")
    assert run_main(capsys, mutants, "--equivalents", no_tests_unnamed)[0] == 1

    unchecked = fake_run(tmp_path / "b", {"inspector/plan.py.meta": {**done, P + "6": None}})
    code, out, _ = run_main(capsys, unchecked, "--equivalents", both)
    assert code == 1 and out.splitlines()[-1] == "not done: 1 not checked"


def test_unnamed_writes_the_uncaught_mutants_not_named(tmp_path, capsys):
    mutants = fake_run(tmp_path, RUN)
    listed = equivalents(tmp_path / "eq.txt", P + "7", S + "6")
    target = tmp_path / "todo.txt"
    code, out, _ = run_main(capsys, mutants, "--equivalents", listed, "--unnamed", target)
    assert code == 1
    assert target.read_text(encoding="utf-8") == f"{P}8\n{S}7\n{S}8\n"
    assert out.splitlines()[-1] == f"3 names written to {target}"


def test_names_listed_but_caught_or_absent_are_reported(tmp_path, capsys):
    mutants = fake_run(tmp_path, {"inspector/plan.py.meta": {P + "1": 1, P + "2": 0}})
    listed = equivalents(tmp_path / "eq.txt", P + "1", P + "2", J + "4")
    code, out, _ = run_main(capsys, mutants, "--equivalents", listed)
    assert code == 0  # a stale name does not make a survivor
    assert "named as equivalent but caught in this run: 1" in out
    assert f"named as equivalent but not in this run: 1\n    {J}4\n" in out


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "cannot read mutmut's verdicts in"),
        ('{"durations_by_key": {}}', "KeyError('exit_code_by_key')"),
        ('{"exit_code_by_key": [1, 0]}', "exit_code_by_key or hash_by_function_name is not an object"),
        ('{"exit_code_by_key": {}, "hash_by_function_name": []}', "is not an object"),
    ],
)
def test_a_meta_file_that_cannot_be_read_is_named_with_exit_code_2(tmp_path, capsys, content, words):
    meta = tmp_path / "mutants" / "inspector" / "plan.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(content, encoding="utf-8")
    code, out, err = run_main(capsys, tmp_path / "mutants", "--equivalents", equivalents(tmp_path / "e"))
    assert (code, out) == (2, "")
    assert err.startswith(f"mutation_score: cannot read mutmut's verdicts in {meta}: ")
    assert words in err


def test_a_meta_file_cut_short_while_mutmut_rewrites_it_is_read_again(tmp_path, monkeypatch):
    """mutmut rewrites a .meta in place: a read during a run can meet half a file."""
    meta = tmp_path / "mutants" / "inspector" / "plan.py.meta"
    meta.parent.mkdir(parents=True)
    whole = json.dumps({"exit_code_by_key": {P + "1": 1, P + "2": 0}})
    meta.write_text(whole[:20], encoding="utf-8")
    waits = []

    def mutmut_finishes_the_file(seconds):
        waits.append(seconds)
        meta.write_text(whole, encoding="utf-8")

    monkeypatch.setattr(ms.time, "sleep", mutmut_finishes_the_file)
    assert ms.read_verdicts(tmp_path / "mutants") == ({P + "1": 1, P + "2": 0}, {}, 1)
    assert waits == [0.5]


def test_a_name_pinned_to_another_version_of_its_function_is_not_counted_as_named(tmp_path, capsys):
    """mutmut numbers a changed function's mutants anew: a name checked on the old code may now be
    another change. Pinned to the run's hash: named; to another: reported, and uncaught unnamed."""
    codes = {P + "1": 0, P + "2": 0, P + "3": 0, J + "1": 0}
    hashes = {"inspector/plan.py.meta": {"x__swap": "aaaaaaaaaaaa"}, "inspector/store/journal.py.meta": {}}
    mutants = fake_run(
        tmp_path, {"inspector/plan.py.meta": codes, "inspector/store/journal.py.meta": {}}, hashes
    )
    listed = tmp_path / "eq.txt"
    listed.write_text(
        f"{P}1 # pinned to the run's version [fn aaaaaaaaaaaa]\n"
        f"{P}2 # pinned to an older version [fn 0123456789ab]\n"
        f"{P}3 # not pinned\n"
        f"{J}1 # pinned, the run has no hash for the function [fn 0123456789ab]\n",
        encoding="utf-8",
    )
    assert ms.read_equivalents(listed) == {
        P + "1": "aaaaaaaaaaaa",
        P + "2": "0123456789ab",
        P + "3": None,
        J + "1": "0123456789ab",
    }
    todo = tmp_path / "todo.txt"
    code, out, _ = run_main(capsys, mutants, "--equivalents", listed, "--unnamed", todo)
    assert code == 1
    lines = out.splitlines()
    assert "  survived                    4   of which named equivalent 3, not named 1" in lines
    assert (
        "named as equivalent on another version of its function: 1 (not counted as named:"
        " check each diff again, then pin the new hash)"
    ) in lines
    assert f"    {P}2: pinned 0123456789ab, the run's aaaaaaaaaaaa" in lines
    assert "named as equivalent without a pin to its function's version: 1" in lines
    assert todo.read_text(encoding="utf-8") == f"{P}2\n"


def test_no_run_is_exit_code_2(tmp_path, capsys):
    listed = equivalents(tmp_path / "e")
    code, _, err = run_main(capsys, tmp_path / "missing", "--equivalents", listed)
    assert code == 2 and "no such folder" in err
    (tmp_path / "empty").mkdir()
    code, _, err = run_main(capsys, tmp_path / "empty", "--equivalents", listed)
    assert code == 2 and "no *.meta file under" in err


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("inspector.plan.x__swap__mutmut_0 # no mutant 0", "not a mutant name of the core"),
        ("plan.x__swap__mutmut_3 # shorthand", "not a mutant name of the core"),
        ("inspector.gui.main_window.x_f__mutmut_1 # not the core", "not a mutant name of the core"),
        ("inspector.plan.x__swap__mutmut_3, _4 # two on a line", "not a mutant name of the core"),
        ("inspector.plan.x__swap__mutmut_3 # once\ninspector.plan.x__swap__mutmut_3 # twice", "listed twice"),
        ("inspector.plan.x__swap__mutmut_3 # why [fn 12ab]", "a pin is written [fn <12 hex digits>]"),
        ("inspector.plan.x__swap__mutmut_3 # why [fn 0123456789ab] more", "a pin is written"),
    ],
)
def test_a_bad_equivalents_line_is_named_with_exit_code_2(tmp_path, capsys, line, words):
    listed = tmp_path / "eq.txt"
    listed.write_text(line + "\n", encoding="utf-8")
    code, _, err = run_main(capsys, fake_run(tmp_path, RUN), "--equivalents", listed)
    assert code == 2
    assert err.startswith(f"mutation_score: {listed}:") and words in err


# ---------------------------------------------------------------- the list of named equivalents

# In mutmut's copy (its run selects these tests too) inspector/ is mutmut's rewrite, megabytes a
# module: the list is checked against the project's own code, not there.
not_under_mutmut = pytest.mark.skipif(
    "MUTANT_UNDER_TEST" in os.environ, reason="the list is checked on the project"
)


def listed_names() -> list[str]:
    names = []
    for line in ms.EQUIVALENTS.read_text(encoding="utf-8").splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            assert line == f"{name} # {line.split(' # ', 1)[1]}", f"not 'name # reason': {line!r}"
            names.append(name)
    return names


@not_under_mutmut
def test_the_list_reads_and_every_line_has_a_reason_and_a_pin():
    """Rule: each name's reason ends with the hash of the function whose diff was checked."""
    names = listed_names()
    pins = ms.read_equivalents(ms.EQUIVALENTS)
    assert list(pins) == names and len(names) > 200
    assert [n for n, pin in pins.items() if pin is None] == []


def _functions(module: Path) -> set[str]:
    """mutmut's mangled names of the module's functions and methods: ``x_f``, ``xǁClassǁm``."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(f"x_{node.name}")
        elif isinstance(node, ast.ClassDef):
            found |= {f"xǁ{node.name}ǁ{m.name}" for m in node.body if isinstance(m, ast.FunctionDef)}
    return found


@not_under_mutmut
def test_every_listed_name_is_a_mutant_of_a_function_of_the_core_that_exists():
    """Rule: a name is mutmut's (module, mangled function, number) for a module under
    inspector/store, inspector/repair or inspector/plan.py, and the function is still there (a
    removed or renamed one leaves names that no run has)."""
    functions: dict[str, set[str]] = {}
    for name in listed_names():
        assert ms.NAME.fullmatch(name), name
        module, _, mutant = name.rpartition(".")
        path = ROOT / (module.replace(".", "/") + ".py")
        assert path.is_file(), name
        assert path.parent.name in {"store", "repair"} or path == ROOT / "inspector" / "plan.py", name
        if module not in functions:
            functions[module] = _functions(path)
        assert mutant.rsplit("__mutmut_", 1)[0] in functions[module], f"no such function now: {name}"


def _chunks(text: str) -> list[str]:
    """MUTATION.md cut into its bullets, paragraphs and table rows (a bullet's lines joined)."""
    return [c for c in re.split(r"\n(?=\* |\| )|\n\s*\n", text) if c.strip()]


def _named_in(chunks: list[str], name: str) -> bool:
    """The name written in full (without the ``inspector.`` package: ``save.x__deepest__mutmut_8``)
    or as the shorthand MUTATION.md uses in a bullet after a function's name: ``_10``,
    ``_start__mutmut_27``, ``_say_marker 3, 5``."""
    module, _, mutant = name.rpartition(".")
    short = f"{module.rsplit('.', 1)[1]}.{mutant}"
    function, number = mutant.rsplit("__mutmut_", 1)
    bare = function.rsplit("ǁ", 1)[1] if "ǁ" in function else function[2:]
    after = re.compile(rf"(?<![\w.])_?{number}(?!\d)")
    relative = re.compile(rf"{re.escape(bare)}__mutmut_{number}(?!\d)")
    for chunk in chunks:
        if short in chunk or relative.search(chunk):
            return True
        at = chunk.find(bare)
        while at >= 0:
            if after.search(chunk, at + len(bare)):
                return True
            at = chunk.find(bare, at + 1)
    return False


@not_under_mutmut
def test_every_listed_name_is_named_in_mutation_md():
    """Rule: MUTATION.md holds the full reason of every name on the list (in full or shorthand)."""
    chunks = _chunks(MUTATION_MD.read_text(encoding="utf-8"))
    missing = [n for n in listed_names() if not _named_in(chunks, n)]
    assert missing == []


@not_under_mutmut
def test_the_shorthand_check_does_not_accept_any_number():
    chunks = _chunks(MUTATION_MD.read_text(encoding="utf-8"))
    assert _named_in(chunks, "inspector.repair.restore.x__add_change__mutmut_10")  # `_10` after _9
    # `_say_marker` 3, 5, 9, 10
    assert _named_in(chunks, "inspector.repair.interrupted.xǁ_Repairǁ_say_marker__mutmut_9")
    assert not _named_in(chunks, "inspector.repair.restore.x__add_change__mutmut_987")
    assert not _named_in(chunks, "inspector.plan.x__no_such_function__mutmut_1")


def test_a_function_the_mutated_module_no_longer_defines_is_not_counted(tmp_path):
    """mutmut keeps a removed function's verdicts and hash in the ``.meta`` file; the mutated module
    beside it (``def <function>__mutmut_orig(`` for each function) says which are still code."""
    run = {"inspector/plan.py.meta": {P + "1": 1, P + "2": 0, "inspector.plan.x__gone__mutmut_1": 0}}
    hashes = {"inspector/plan.py.meta": {"x__swap": "aaaaaaaaaaaa", "x__gone": "bbbbbbbbbbbb"}}
    mutants = fake_run(tmp_path, run, hashes)
    codes, found, _ = ms.read_verdicts(mutants)
    assert set(codes) == {P + "1", P + "2", "inspector.plan.x__gone__mutmut_1"}  # no module: all kept
    (mutants / "inspector" / "plan.py").write_text(
        "def x__swap__mutmut_orig(a):\n    pass\n\nclass C:\n    def xǁCǁrun__mutmut_orig(self):\n        pass\n",
        encoding="utf-8",
    )
    codes, found, _ = ms.read_verdicts(mutants)
    assert codes == {P + "1": 1, P + "2": 0}
    assert found == {"inspector.plan.x__swap": "aaaaaaaaaaaa"}
