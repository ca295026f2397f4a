"""The mutation score of the core, from mutmut's own verdicts (issue 21).

    python -m tests.mutation_score [MUTANTS_DIR] [--equivalents FILE] [--unnamed FILE]

Reads every ``*.meta`` file under MUTANTS_DIR (default ``mutants``, where ``mutmut run`` keeps its
verdicts: ``exit_code_by_key`` maps each mutant's full name to the exit code of its test run) and the
list of survivors named as equivalent (default ``tests/mutation_equivalents.txt``: one full mutant name
a line, ``# ...`` comments; the full reasons are in ``tests/MUTATION.md``), and prints the counts and
the score both ways:

* caught = killed + caught by the type check + timeouts (a mutant that makes the tests hang is caught);
* checked = every mutant with a verdict (not "not checked", not an exit code mutmut does not define);
* the score = caught / checked, and caught / (checked - the uncaught mutants named as equivalent).

"Uncaught" is "survived" (the tests ran and passed) or "no tests" (no selected test reaches the
mutant): both are bugs the suite would let through unless the mutant cannot change behaviour.

A name's reason may end with ``[fn <hash>]``: mutmut's hash of the function's code (the ``.meta``
file's ``hash_by_function_name``) when its diff was checked. mutmut numbers a function's mutants anew
when the function changes, so ``_10`` may then be another change: a name pinned to another version of
its function than the run's is reported and not counted as named until its diff is checked again and
the pin brought up to date.

Exit code 0 only when the run is complete: every mutant has a verdict, no exit code is unknown, and
every uncaught mutant is named as equivalent. 1 otherwise (the output says why), 2 on bad input.
Standard library only, no Qt; not collected by pytest (tested by ``tests/test_mutation_score.py``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

EQUIVALENTS = Path(__file__).with_name("mutation_equivalents.txt")

# mutmut 3.8's ``status_by_exit_code`` (mutmut/stats.py), for the codes its runs give.
STATUS_BY_EXIT_CODE: dict[int | None, str] = {
    1: "killed",
    3: "killed",  # an internal error of pytest is a kill
    37: "caught by type check",
    36: "timeout",
    24: "timeout",  # SIGXCPU, mutmut's own time limit
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    0: "survived",
    5: "no tests",
    33: "no tests",
    None: "not checked",
}
CAUGHT = ("killed", "caught by type check", "timeout")
UNCAUGHT = ("survived", "no tests")

# A mutant of a module of the core: inspector.plan, inspector.store.<m> or inspector.repair.<m>, then
# mutmut's mangled function (x_<name>, or xǁ<Class>ǁ<method> for a method) and the mutant's number.
NAME = re.compile(
    r"inspector\.(?:plan|store\.[a-z_][a-z0-9_]*|repair\.[a-z_][a-z0-9_]*)"
    r"\.(?:x_[A-Za-z0-9_]+|xǁ[A-Za-z_][A-Za-z0-9_]*ǁ[A-Za-z_][A-Za-z0-9_]*)__mutmut_[1-9][0-9]*"
)


PIN = re.compile(r"\[fn ([0-9a-f]{12})\]\s*$")


class BadInput(Exception):
    """A ``.meta`` file or the equivalents list cannot be read as expected; says which and why."""


@dataclass
class Score:
    """The verdicts of one run, split by status, and what the equivalents list makes of them."""

    by_status: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in _STATUSES})
    unknown: dict[str, object] = field(default_factory=dict)  # name -> an exit code mutmut does not define
    equivalents: Mapping[str, str | None] = field(default_factory=dict)  # name -> pinned hash or None
    hashes: Mapping[str, str] = field(default_factory=dict)  # "inspector.plan.x__swap" -> the run's hash
    meta_files: int = 0

    def is_named(self, name: str) -> bool:
        """On the list, and not pinned to another version of its function than the run's."""
        return name in self.equivalents and name not in self._stale

    @cached_property  # the list and the hashes are given when the score is made
    def _stale(self) -> dict[str, tuple[str, str]]:
        out = {}
        for name, pin in self.equivalents.items():
            now = self.hashes.get(name.rsplit("__mutmut_", 1)[0])
            if pin is not None and now is not None and now != pin:
                out[name] = (pin, now)
        return out

    @property
    def stale(self) -> list[tuple[str, str, str]]:
        """(name, pinned hash, the run's hash) of names checked on another version of the function."""
        return sorted((n, pin, now) for n, (pin, now) in self._stale.items())

    @property
    def unpinned(self) -> int:
        return sum(pin is None for pin in self.equivalents.values())

    def count(self, status: str) -> int:
        return len(self.by_status[status])

    @property
    def total(self) -> int:
        return sum(len(v) for v in self.by_status.values()) + len(self.unknown)

    @property
    def caught(self) -> int:
        return sum(self.count(s) for s in CAUGHT)

    @property
    def checked(self) -> int:
        return self.caught + sum(self.count(s) for s in UNCAUGHT)

    def named(self, status: str) -> list[str]:
        return [n for n in self.by_status[status] if self.is_named(n)]

    def unnamed(self, status: str) -> list[str]:
        return [n for n in self.by_status[status] if not self.is_named(n)]

    @property
    def named_uncaught(self) -> int:
        return sum(len(self.named(s)) for s in UNCAUGHT)

    @property
    def unnamed_uncaught(self) -> list[str]:
        return sorted(n for s in UNCAUGHT for n in self.unnamed(s))

    @property
    def named_but_caught(self) -> list[str]:
        """Names on the list whose mutant is caught now (a test kills it, or the code changed)."""
        return sorted(n for s in CAUGHT for n in self.by_status[s] if n in self.equivalents)

    @property
    def named_but_absent(self) -> list[str]:
        """Names on the list that this run does not have (the function was renamed or removed)."""
        present = {n for v in self.by_status.values() for n in v} | set(self.unknown)
        return sorted(set(self.equivalents) - present)

    @property
    def score(self) -> float | None:
        return self.caught / self.checked if self.checked else None

    @property
    def score_without_equivalents(self) -> float | None:
        rest = self.checked - self.named_uncaught
        return self.caught / rest if rest else None

    @property
    def done(self) -> bool:
        return not self.count("not checked") and not self.unknown and not self.unnamed_uncaught


_STATUSES = tuple(dict.fromkeys(STATUS_BY_EXIT_CODE.values()))


def read_equivalents(path: Path) -> dict[str, str | None]:
    """The names of the list (one full mutant name a line, ``# ...`` comments, blank lines ignored),
    each with the function hash its reason is pinned to (``[fn <hash>]`` at its end), or None."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read the equivalents list {path}: {exc}") from exc
    names: dict[str, str | None] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        name, _, comment = line.partition("#")
        name = name.strip()
        if not name:
            continue
        if not NAME.fullmatch(name):
            raise BadInput(f"{path}:{number}: not a mutant name of the core: {name!r}")
        if name in names:
            raise BadInput(f"{path}:{number}: {name} is listed twice (first on line {lines[name]})")
        pin = PIN.search(comment)
        if pin is None and "[fn" in comment:
            raise BadInput(f"{path}:{number}: a pin is written [fn <12 hex digits>] at the end: {line!r}")
        names[name], lines[name] = (pin[1] if pin else None), number
    return names


def read_verdicts(mutants: Path) -> tuple[dict[str, object], dict[str, str], int]:
    """Every mutant's exit code from the ``*.meta`` files under ``mutants``, every function's hash
    (``inspector.plan.x__swap``: mutmut's hash of its code), and how many files."""
    if not mutants.is_dir():
        raise BadInput(f"no such folder: {mutants} (mutmut keeps its verdicts in mutants/)")
    codes: dict[str, object] = {}
    hashes: dict[str, str] = {}
    files = sorted(mutants.rglob("*.meta"))
    for meta in files:
        by_key, by_function = _read_meta(meta)
        codes.update(by_key)
        module = ".".join(meta.relative_to(mutants).with_suffix("").with_suffix("").parts)
        hashes.update({f"{module}.{f}": h for f, h in by_function.items()})
    if not files:
        raise BadInput(f"no *.meta file under {mutants}: has `mutmut run` started there?")
    return codes, hashes, len(files)


def _read_meta(meta: Path, retry_after: float = 0.5) -> tuple[dict, dict]:
    """One file's ``exit_code_by_key`` and ``hash_by_function_name``. mutmut rewrites a ``.meta`` in place (``open(.., "w")``, not
    a rename) after each batch of verdicts, so a file read while a run goes on can be cut short:
    it is read a second time before it is called unreadable."""
    for attempt in (1, 2):
        try:
            return _exit_codes(meta)
        except ValueError as exc:  # cut short, or not JSON (UnicodeDecodeError is one too)
            if attempt == 2:
                raise BadInput(f"cannot read mutmut's verdicts in {meta}: {exc!r}") from exc
            time.sleep(retry_after)
        except (OSError, KeyError, TypeError) as exc:
            raise BadInput(f"cannot read mutmut's verdicts in {meta}: {exc!r}") from exc
    raise AssertionError("unreachable")


def _exit_codes(meta: Path) -> tuple[dict, dict]:
    data = json.loads(meta.read_text(encoding="utf-8"))
    by_key, by_function = data["exit_code_by_key"], data.get("hash_by_function_name", {})
    if not isinstance(by_key, dict) or not isinstance(by_function, dict):
        raise TypeError("exit_code_by_key or hash_by_function_name is not an object")
    defined = _defined_functions(meta)
    if defined is not None:
        by_key = {k: v for k, v in by_key.items() if _function_of(k) in defined}
        by_function = {f: h for f, h in by_function.items() if f in defined}
    return by_key, by_function


_ORIGINAL = re.compile(r"^[ \t]*def (x\S+?)__mutmut_orig\(", re.MULTILINE)


def _defined_functions(meta: Path) -> set[str] | None:
    """The functions the mutated module beside ``meta`` still defines (mutmut writes each one's
    original as ``def <function>__mutmut_orig(``), or None when that module is not there. mutmut
    keeps a removed function's verdicts and hash in the ``.meta`` file (seen when
    ``statedb_extract._is_virtual`` was merged into ``statedb.is_virtual_table_sql``): they are not
    mutants of the code any more, so neither the score nor the ledger counts them."""
    try:
        text = meta.with_suffix("").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return set(_ORIGINAL.findall(text))


def _function_of(key: str) -> str:
    """``inspector.plan.x__swap__mutmut_3`` -> ``x__swap``."""
    return key.rpartition(".")[2].rpartition("__mutmut_")[0]


def score(
    codes: dict[str, object],
    equivalents: Mapping[str, str | None] | Iterable[str] = (),
    meta_files: int = 0,
    hashes: Mapping[str, str] | None = None,
) -> Score:
    """Split the verdicts by status; an exit code mutmut does not define is kept apart, by name."""
    named = dict(equivalents) if isinstance(equivalents, Mapping) else dict.fromkeys(equivalents)
    s = Score(equivalents=named, hashes=dict(hashes or {}), meta_files=meta_files)
    for name, code in codes.items():
        known = code is None or type(code) is int  # not True/False, which JSON could hold and == 1/0
        status = STATUS_BY_EXIT_CODE.get(code) if known else None  # type: ignore[arg-type]
        if status is None:
            s.unknown[name] = code
        else:
            s.by_status[status].append(name)
    return s


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def report(s: Score, mutants: Path) -> list[str]:
    """The lines printed: the counts, the two scores, and what keeps the run from being done."""
    w = 22
    lines = [f"mutants: {s.total} ({s.meta_files} .meta files under {mutants})"]
    for status in ("killed", "caught by type check", "timeout"):
        lines.append(f"  {status:<{w}}{s.count(status):>7}")
    for status in UNCAUGHT:
        lines.append(
            f"  {status:<{w}}{s.count(status):>7}   of which named equivalent {len(s.named(status))},"
            f" not named {len(s.unnamed(status))}"
        )
    lines.append(f"  {'not checked':<{w}}{s.count('not checked'):>7}")
    lines.append(f"  {'unknown exit code':<{w}}{len(s.unknown):>7}")
    for name, code in sorted(s.unknown.items()):
        lines.append(f"    {name}: exit code {code!r}")
    caught, checked, named = s.caught, s.checked, s.named_uncaught
    lines.append(f"checked: {checked} of {s.total}; caught = killed + type check + timeout = {caught}")
    lines.append(f"score: caught / checked = {caught} / {checked} = {_percent(s.score)}")
    lines.append(
        f"score without the named equivalents: caught / (checked - {named}) = {caught} / {checked - named}"
        f" = {_percent(s.score_without_equivalents)}"
    )
    if s.named_but_caught:
        lines.append(f"named as equivalent but caught in this run: {len(s.named_but_caught)}")
    if s.stale:
        lines.append(
            f"named as equivalent on another version of its function: {len(s.stale)} (not counted as named:"
            " check each diff again, then pin the new hash)"
        )
        lines.extend(f"    {n}: pinned {pin}, the run's {now}" for n, pin, now in s.stale)
    if s.unpinned:
        lines.append(f"named as equivalent without a pin to its function's version: {s.unpinned}")
    if s.named_but_absent:
        lines.append(f"named as equivalent but not in this run: {len(s.named_but_absent)}")
        lines.extend(f"    {n}" for n in s.named_but_absent)
    if s.done:
        lines.append("done: every mutant checked, every uncaught one named as equivalent")
    else:
        why = []
        if s.count("not checked"):
            why.append(f"{s.count('not checked')} not checked")
        if s.unknown:
            why.append(f"{len(s.unknown)} with an unknown exit code")
        if s.unnamed_uncaught:
            why.append(f"{len(s.unnamed_uncaught)} uncaught and not named (survived or no tests)")
        lines.append("not done: " + ", ".join(why))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutation_score",
        description="The mutation score of the core from mutmut's .meta files (issue 21).",
    )
    parser.add_argument("mutants", nargs="?", default="mutants", type=Path, help="mutmut's folder (mutants)")
    parser.add_argument("--equivalents", type=Path, default=EQUIVALENTS, help="the list of named equivalents")
    parser.add_argument("--unnamed", type=Path, help="write the uncaught mutants not named here, one a line")
    args = parser.parse_args(argv)
    try:
        equivalents = read_equivalents(args.equivalents)
        codes, hashes, files = read_verdicts(args.mutants)
    except BadInput as exc:
        print(f"mutation_score: {exc}", file=sys.stderr)
        return 2
    s = score(codes, equivalents, files, hashes)
    print("\n".join(report(s, args.mutants)))
    if args.unnamed is not None:
        names = s.unnamed_uncaught
        args.unnamed.write_text("".join(n + "\n" for n in names), encoding="utf-8")
        print(f"{len(names)} names written to {args.unnamed}")
    return 0 if s.done else 1


if __name__ == "__main__":
    sys.exit(main())
