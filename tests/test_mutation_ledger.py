"""``python -m tests.mutation_ledger``: mutmut's verdicts saved into the repository's ledger and seeded
back into a new ``mutants/`` folder, on hand-written ``.meta`` files with the expected lines written out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import mutation_ledger as ml

P = "inspector.plan.x__swap__mutmut_"
M = "inspector.plan.xǁPlanǁto_json__mutmut_"
S = "inspector.repair.save.x_finish__mutmut_"


def meta(mutants: Path, rel: str, codes: dict, hashes: dict) -> Path:
    path = mutants / (rel + ".meta")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "exit_code_by_key": codes,
        "hash_by_function_name": hashes,
        "type_check_error_by_key": {},
        "durations_by_key": {},
        "estimated_durations_by_key": {},
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def body(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]


@pytest.fixture
def run(tmp_path):
    mutants = tmp_path / "mutants"
    meta(
        mutants,
        "inspector/plan.py",
        {P + "1": 1, P + "2": 0, P + "3": None, P + "4": 37, M + "1": None, M + "2": None},
        {"x__swap": "aaaaaaaaaaaa", "xǁPlanǁto_json": "bbbbbbbbbbbb"},
    )
    meta(mutants, "inspector/repair/save.py", {S + "1": -24, S + "2": 33}, {"x_finish": "cccccccccccc"})
    return mutants


def test_a_packages_init_module_is_named_as_the_package(tmp_path):
    assert ml.module_of("inspector/repair/__init__.py") == "inspector.repair"
    assert ml.module_of("inspector/store/index.py") == "inspector.store.index"
    mutants = tmp_path / "mutants"
    key = "inspector.repair.x_action_module__mutmut_"
    meta(
        mutants,
        "inspector/repair/__init__.py",
        {key + "1": 1, key + "2": 0},
        {"x_action_module": "abcdefabcdef"},
    )
    ledger = tmp_path / "ledger.txt"
    ml.save(mutants, ledger)
    assert body(ledger) == ["inspector/repair/__init__.py\tx_action_module\tabcdefabcdef\t1 0"]
    fresh = tmp_path / "fresh"
    assert ml.seed(fresh, ledger) == 2
    codes = json.loads((fresh / "inspector/repair/__init__.py.meta").read_text(encoding="utf-8"))[
        "exit_code_by_key"
    ]
    assert codes == {key + "1": 1, key + "2": 0}


def test_save_writes_one_line_per_function_with_a_verdict(run, tmp_path):
    ledger = tmp_path / "ledger.txt"
    ml.save(run, ledger)
    assert body(ledger) == [
        "inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1 0 . 37",
        "inspector/repair/save.py\tx_finish\tcccccccccccc\t-24 33",
    ]  # to_json has no verdict yet: no line
    assert ledger.read_text(encoding="utf-8").startswith("# mutmut's verdicts")


def test_save_keeps_the_ledgers_verdicts_of_an_unchanged_function_and_drops_a_changed_one(run, tmp_path):
    ledger = tmp_path / "ledger.txt"
    ledger.write_text(
        "inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1 1 1 1\n"  # same hash: fills only the run's gap (3)
        "inspector/plan.py\txǁPlanǁto_json\tdddddddddddd\t1 1\n"  # another hash: the code changed
        "inspector/plan.py\tx__gone\teeeeeeeeeeee\t1\n",  # no longer in the run
        encoding="utf-8",
    )
    ml.save(run, ledger)
    assert body(ledger) == [
        "inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1 0 1 37",
        "inspector/repair/save.py\tx_finish\tcccccccccccc\t-24 33",
    ]


def test_seed_into_a_new_folder_writes_meta_files_in_mutmuts_format(tmp_path):
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1 . 0\n", encoding="utf-8")
    mutants = tmp_path / "mutants"
    assert ml.seed(mutants, ledger) == 2
    data = json.loads((mutants / "inspector/plan.py.meta").read_text(encoding="utf-8"))
    assert data == {
        "exit_code_by_key": {P + "1": 1, P + "3": 0},
        "hash_by_function_name": {"x__swap": "aaaaaaaaaaaa"},
        "durations_by_key": {},
        "estimated_durations_by_key": {},
        "type_check_error_by_key": {},
    }


def test_a_seeded_meta_file_loads_in_mutmut_itself(tmp_path):
    """mutmut's own loader takes the file as it is (it asserts there is no other key); mutmut is the
    optional group ``.[mutation]``, so without it there is nothing to check."""
    data_module = pytest.importorskip("mutmut.mutation.data")
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1 . 0\n", encoding="utf-8")
    mutants = tmp_path / "mutants"
    ml.seed(mutants, ledger)
    loaded = data_module.SourceFileMutationData(path=Path("inspector/plan.py"))
    loaded.meta_path = mutants / "inspector/plan.py.meta"
    loaded.load()
    assert loaded.exit_code_by_key == {P + "1": 1, P + "3": 0}
    assert loaded.hash_by_function_name == {"x__swap": "aaaaaaaaaaaa"}


def test_seed_fills_only_gaps_of_functions_whose_hash_is_the_ledgers(run, tmp_path):
    ledger = tmp_path / "ledger.txt"
    ledger.write_text(
        "inspector/plan.py\tx__swap\taaaaaaaaaaaa\t0 1 1 0\n"  # the run's 1, 0 and 37 stay; 3 is filled
        "inspector/plan.py\txǁPlanǁto_json\tdddddddddddd\t1 1\n"  # the run has another hash: not filled
        "inspector/repair/save.py\tx_finish\tcccccccccccc\t1 1\n",  # both have verdicts already
        encoding="utf-8",
    )
    assert ml.seed(run, ledger) == 1
    codes = json.loads((run / "inspector/plan.py.meta").read_text(encoding="utf-8"))["exit_code_by_key"]
    assert codes == {P + "1": 1, P + "2": 0, P + "3": 1, P + "4": 37, M + "1": None, M + "2": None}
    save_codes = json.loads((run / "inspector/repair/save.py.meta").read_text(encoding="utf-8"))
    assert save_codes["exit_code_by_key"] == {S + "1": -24, S + "2": 33}


def test_save_then_seed_round_trips(run, tmp_path):
    ledger = tmp_path / "ledger.txt"
    ml.save(run, ledger)
    fresh = tmp_path / "fresh"
    ml.seed(fresh, ledger)
    again = tmp_path / "again.txt"
    ml.save(fresh, again)
    assert body(again) == body(ledger)


@pytest.mark.parametrize(
    "line, words",
    [
        ("inspector/plan.py\tx__swap\taaaaaaaaaaaa", "tab-separated"),
        ("inspector/plan.py\tx__swap\tnot-a-hash\t1", "hash"),
        ("/etc/passwd\tx__swap\taaaaaaaaaaaa\t1", "module path"),
        ("inspector/plan.py\tswap\taaaaaaaaaaaa\t1", "function name"),
        ("inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1 x", "whole number"),
        ("inspector/plan.py\tx__swap\taaaaaaaaaaaa\t ", "no verdicts"),
        ("inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1\ninspector/plan.py\tx__swap\taaaaaaaaaaaa\t1", "twice"),
    ],
)
def test_a_bad_ledger_line_is_refused_with_its_line(tmp_path, line, words):
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("# header\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ml.BadInput, match=words) as err:
        ml.read_ledger(ledger)
    assert ":2:" in str(err.value) or ":3:" in str(err.value)


def test_a_bad_meta_file_is_refused_and_the_ledger_left_as_it_was(tmp_path):
    mutants = tmp_path / "mutants"
    (mutants / "inspector").mkdir(parents=True)
    (mutants / "inspector/plan.py.meta").write_text("{not json", encoding="utf-8")
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1\n", encoding="utf-8")
    with pytest.raises(ml.BadInput, match="cannot read"):
        ml.save(mutants, ledger)
    assert ledger.read_text(encoding="utf-8") == "inspector/plan.py\tx__swap\taaaaaaaaaaaa\t1\n"


def test_a_meta_key_of_another_module_is_refused(tmp_path):
    mutants = tmp_path / "mutants"
    meta(mutants, "inspector/plan.py", {S + "1": 1}, {"x_finish": "cccccccccccc"})
    with pytest.raises(ml.BadInput, match="not a mutant of inspector.plan"):
        ml.save(mutants, tmp_path / "ledger.txt")


def test_main_reports_counts_and_bad_input(run, tmp_path, capsys):
    ledger = tmp_path / "ledger.txt"
    assert ml.main(["save", str(run), "--ledger", str(ledger)]) == 0
    assert "2 functions, 5 verdicts" in capsys.readouterr().out
    assert ml.main(["seed", str(tmp_path / "new"), "--ledger", str(tmp_path / "none.txt")]) == 2
    assert "no ledger" in capsys.readouterr().err


def test_the_projects_ledger_reads_and_names_modules_of_the_core():
    ledger = ml.read_ledger(ml.LEDGER)
    root = Path(__file__).resolve().parents[1]
    for module, _ in ledger:
        assert (root / module).is_file(), module
        assert module == "inspector/plan.py" or module.startswith(("inspector/store/", "inspector/repair/"))


def test_rerun_drops_the_mutants_a_run_ran_and_keeps_the_others_sorted(tmp_path):
    """Rule: a mutant with a duration in the run's .meta files ran on that run's suite and leaves the list;
    one the run only holds a verdict for (seeded) or does not know stays; the list is written sorted, once
    each, under the header."""
    meta = tmp_path / "mutants" / "inspector" / "plan.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(
        json.dumps(
            {
                "exit_code_by_key": {P + "1": 1, P + "2": 1, P + "3": 1},
                "durations_by_key": {P + "1": 0.2, P + "3": 1.5},
                "hash_by_function_name": {},
            }
        ),
        encoding="utf-8",
    )
    left = tmp_path / "left.txt"
    left.write_text(f"# old header\n{P}3\n{P}2\n{P}1\n{P}9\n{P}2\n\n", encoding="utf-8")
    assert ml.rerun(tmp_path / "mutants", left) == (2, 2)
    assert left.read_text(encoding="utf-8") == ml.RERUN_HEADER + f"{P}2\n{P}9\n"


def test_rerun_without_a_list_is_refused(tmp_path):
    (tmp_path / "mutants").mkdir()
    with pytest.raises(ml.BadInput, match="cannot read"):
        ml.rerun(tmp_path / "mutants", tmp_path / "missing.txt")
