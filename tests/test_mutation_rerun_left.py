"""``tests/mutation_rerun_left.txt``: the mutants the ledger records as killed that have not been run again on
the current suite (issue 21: a kill recorded by an earlier suite may no longer hold; the fifteenth session ran
every recorded kill again, as far as the session's time went, and lists the rest here so that the next run
starts from them: ``mutmut run $(grep -v '^#' tests/mutation_rerun_left.txt)``).

Rules: one full mutant name a line (comment lines start with ``#``), each once, sorted; each a mutant of a
function the ledger holds, recorded there as killed (exit code 1) or without a verdict yet (its function
changed since: mutmut checks it again anyway)."""

from __future__ import annotations

from pathlib import Path

from tests import mutation_ledger

LEFT = Path(__file__).with_name("mutation_rerun_left.txt")


def _names() -> list[str]:
    return [
        line for line in LEFT.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")
    ]


def test_the_list_is_sorted_and_each_name_is_there_once():
    names = _names()
    assert names == sorted(set(names))


def test_each_name_is_a_recorded_kill_or_unchecked_in_the_ledger():
    ledger = mutation_ledger.read_ledger(mutation_ledger.LEDGER)
    by_module_function = {
        (mutation_ledger.module_of(path), func): codes for (path, func), (_h, codes) in ledger.items()
    }
    wrong = []
    for name in _names():
        key = mutation_ledger._KEY.fullmatch(name)
        assert key is not None, name
        codes = by_module_function.get((key["module"], key["func"]))
        n = int(key["n"])
        if codes is None or n > len(codes) or codes[n - 1] not in (1, None):
            wrong.append(name)
    assert wrong == []
