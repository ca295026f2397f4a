"""The mutation run's verdicts kept in the repository, so a run of many hours goes on across machines.

    python -m tests.mutation_ledger save [MUTANTS_DIR] [--ledger FILE]   # after (or during) mutmut run
    python -m tests.mutation_ledger seed [MUTANTS_DIR] [--ledger FILE]   # before mutmut run on a new machine
    python -m tests.mutation_ledger rerun [MUTANTS_DIR]                  # after a run of tests/mutation_rerun_left.txt

mutmut keeps its verdicts in ``mutants/**/*.meta`` (``exit_code_by_key``: each mutant's exit code, and
``hash_by_function_name``: a hash of each function's code), a folder that is generated and never
committed. A run of the whole core takes longer than one working session on the project's 2-core machine,
and a new machine starts with no ``mutants/``: without a record, every session would start again from
nothing. ``tests/mutation_ledger.txt`` is that record, one line per mutated function::

    inspector/plan.py<TAB>xǁPlanǁto_json<TAB>ee78b7a66096<TAB>1 1 37 0 . 1

the module's path, mutmut's mangled function name, mutmut's hash of the function's code, and the exit
code of each of its mutants in mutmut's numbering (``__mutmut_1`` first; ``.`` for a mutant without a
verdict).

``save`` writes the ledger from the ``.meta`` files, keeping, for a function whose hash is unchanged,
the ledger's verdicts where the run has none yet; a function whose code changed (another hash) or that
no longer exists drops out, exactly as mutmut itself drops a changed function's verdicts.

``seed`` writes the ledger's verdicts into the ``.meta`` files (creating them in a folder mutmut has not
generated yet): for each function whose hash in the ``.meta`` file is the ledger's, or that the file does
not know yet, every mutant without a verdict gets the ledger's. mutmut's generation then keeps them
for every function whose code is unchanged (its own rule: it compares the hashes) and checks the rest.

What the ledger cannot see, mutmut's own cache cannot either: a verdict stays while the function's code
is unchanged, even if the tests changed since (a survivor killed by a new test is found by running the
survivors again by name, as tests/MUTATION.md says). Standard library only; not collected by pytest
(tested by ``tests/test_mutation_ledger.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from tests import mutation_score

LEDGER = Path(__file__).with_name("mutation_ledger.txt")
# The recorded kills not yet run again on the current suite (tests/test_mutation_rerun_left.py, ``rerun``).
RERUN_LEFT = Path(__file__).with_name("mutation_rerun_left.txt")
RERUN_HEADER = (
    "# The mutants tests/mutation_ledger.txt records as killed that have not been run again on the current\n"
    "# suite (tests/MUTATION.md, fifteenth session). Run them with\n"
    "#   mutmut run $(grep -v '^#' tests/mutation_rerun_left.txt)\n"
    "# then `python -m tests.mutation_ledger rerun` drops each one the run ran (mutmut recorded its duration).\n"
)

HEADER = (
    "# mutmut's verdicts of the core, one line per function: module, function, mutmut's hash of its code,\n"
    "# the exit code of each of its mutants (__mutmut_1 first; '.' = no verdict). Written by\n"
    "# `python -m tests.mutation_ledger save`, read by `... seed` (tests/mutation_ledger.py, tests/MUTATION.md).\n"
)

_KEY = re.compile(r"(?P<module>.+)\.(?P<func>x_[^.]+|xǁ[^.]+)__mutmut_(?P<n>[1-9][0-9]*)")
_HASH = re.compile(r"[0-9a-f]{6,64}")
_PATH = re.compile(r"inspector/[A-Za-z0-9_/]+\.py")


# The ledger or a ``.meta`` file cannot be read as expected (says which and why): the score's own.
BadInput = mutation_score.BadInput


# (module path, function) -> (hash, [exit code or None, by mutant number - 1])
Ledger = dict[tuple[str, str], tuple[str, list[int | None]]]


def module_of(path: str) -> str:
    """``inspector/store/index.py`` -> ``inspector.store.index`` (mutmut's prefix of a mutant's name;
    a package's ``__init__.py`` is the package: ``inspector/repair/__init__.py`` -> ``inspector.repair``)."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def read_ledger(path: Path) -> Ledger:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read the ledger {path}: {exc}") from exc
    ledger: Ledger = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 4:
            raise BadInput(f"{path}:{number}: want module, function, hash and codes, tab-separated: {line!r}")
        module, func, digest, codes = parts
        if (
            not _PATH.fullmatch(module)
            or not _KEY.fullmatch(f"m.{func}__mutmut_1")
            or not _HASH.fullmatch(digest)
        ):
            raise BadInput(f"{path}:{number}: not a module path, function name and hash: {line!r}")
        try:
            verdicts = [None if c == "." else int(c) for c in codes.split()]
        except ValueError:
            raise BadInput(f"{path}:{number}: an exit code is a whole number or '.': {codes!r}") from None
        if not verdicts:
            raise BadInput(f"{path}:{number}: no verdicts: {line!r}")
        if (module, func) in ledger:
            raise BadInput(f"{path}:{number}: {module} {func} is listed twice")
        ledger[(module, func)] = (digest, verdicts)
    return ledger


def write_ledger(path: Path, ledger: Ledger) -> None:
    lines = [HEADER]
    for (module, func), (digest, verdicts) in sorted(ledger.items()):
        codes = " ".join("." if v is None else str(v) for v in verdicts)
        lines.append(f"{module}\t{func}\t{digest}\t{codes}\n")
    _replace_text(path, "".join(lines))


def _replace_text(path: Path, text: str) -> None:
    """``path`` holding ``text``, written beside it under a temporary name and renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _read_meta(meta: Path) -> dict:
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"cannot read {meta}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("exit_code_by_key"), dict):
        raise BadInput(f"{meta}: not a mutmut .meta file (no exit_code_by_key)")
    if not isinstance(data.get("hash_by_function_name", {}), dict):
        raise BadInput(f"{meta}: hash_by_function_name is not a mapping")
    return data


def _metas(mutants: Path) -> list[tuple[str, Path]]:
    """(module path, .meta file) of every mutated module under ``mutants/``."""
    if not mutants.is_dir():
        raise BadInput(f"no such folder: {mutants} (mutmut keeps its verdicts in mutants/)")
    out = []
    for meta in sorted(mutants.rglob("*.py.meta")):
        rel = meta.relative_to(mutants).as_posix().removesuffix(".meta")
        if _PATH.fullmatch(rel):
            out.append((rel, meta))
    return out


def _verdicts_of(data: dict, module: str) -> dict[str, dict[int, int | None]]:
    """function -> {mutant number: exit code or None} of one ``.meta`` file's ``exit_code_by_key``."""
    prefix = module_of(module)
    out: dict[str, dict[int, int | None]] = {}
    for key, code in data["exit_code_by_key"].items():
        match = _KEY.fullmatch(key)
        if match is None or match["module"] != prefix:
            raise BadInput(f"{module}.meta: not a mutant of {prefix}: {key!r}")
        if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
            raise BadInput(f"{module}.meta: the exit code of {key} is not a whole number: {code!r}")
        out.setdefault(match["func"], {})[int(match["n"])] = code
    return out


def save(mutants: Path, ledger_path: Path = LEDGER) -> Ledger:
    """The ledger made from the run's ``.meta`` files and the old ledger (see the module's text);
    written to ``ledger_path`` and returned."""
    old = read_ledger(ledger_path)
    new: Ledger = {}
    for module, meta in _metas(mutants):
        # the score's reader: it reads a file again that mutmut was rewriting in place
        codes, hashes = mutation_score._read_meta(meta)
        for func, by_number in _verdicts_of({"exit_code_by_key": codes}, module).items():
            digest = hashes.get(func)
            if not isinstance(digest, str) or not _HASH.fullmatch(digest):
                continue  # mutmut knows no hash for it: nothing can tell a later run it is unchanged
            verdicts: list[int | None] = [by_number.get(n) for n in range(1, max(by_number) + 1)]
            before = old.get((module, func))
            if before is not None and before[0] == digest:
                verdicts = [
                    v if v is not None else (before[1][i] if i < len(before[1]) else None)
                    for i, v in enumerate(verdicts)
                ]
            if any(v is not None for v in verdicts):
                new[(module, func)] = (digest, verdicts)
    write_ledger(ledger_path, new)
    return new


def seed(mutants: Path, ledger_path: Path = LEDGER) -> int:
    """Write the ledger's verdicts into the ``.meta`` files under ``mutants`` (see the module's text);
    returns how many mutants got a verdict."""
    if not ledger_path.exists():
        raise BadInput(f"no ledger at {ledger_path}")
    ledger = read_ledger(ledger_path)
    by_module: dict[str, list[tuple[str, str, list[int | None]]]] = {}
    for (module, func), (digest, verdicts) in ledger.items():
        by_module.setdefault(module, []).append((func, digest, verdicts))
    filled = 0
    for module, entries in sorted(by_module.items()):
        meta = mutants / (module + ".meta")
        if meta.exists():
            data = _read_meta(meta)
        else:
            data = {"exit_code_by_key": {}, "hash_by_function_name": {}}
        data.setdefault("hash_by_function_name", {})
        for key in ("durations_by_key", "estimated_durations_by_key", "type_check_error_by_key"):
            data.setdefault(key, {})
        codes = data["exit_code_by_key"]
        hashes = data["hash_by_function_name"]
        prefix = module_of(module)
        for func, digest, verdicts in entries:
            if hashes.get(func, digest) != digest:
                continue  # the function's code changed: mutmut checks its mutants again
            hashes[func] = digest
            for number, code in enumerate(verdicts, start=1):
                key = f"{prefix}.{func}__mutmut_{number}"
                if code is not None and codes.get(key) is None:
                    codes[key] = code
                    filled += 1
        meta.parent.mkdir(parents=True, exist_ok=True)
        _replace_text(meta, json.dumps(data))
    return filled


def rerun(mutants: Path, left_path: Path = RERUN_LEFT) -> tuple[int, int]:
    """Drop from the list at ``left_path`` every mutant the run under ``mutants`` ran (mutmut recorded a
    duration for it: it ran on that run's suite; ``seed`` writes verdicts, never durations); the rest is
    written back sorted, under :data:`RERUN_HEADER`. Returns (dropped, left)."""
    ran: set[str] = set()
    for _module, meta in _metas(mutants):
        durations = _read_meta(meta).get("durations_by_key", {})
        if isinstance(durations, dict):
            ran.update(key for key, value in durations.items() if value is not None)
    try:
        text = left_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {left_path}: {exc}") from exc
    names = {line for line in text.splitlines() if line.strip() and not line.startswith("#")}
    left = sorted(name for name in names if name not in ran)
    _replace_text(left_path, RERUN_HEADER + "".join(f"{name}\n" for name in left))
    return len(names) - len(left), len(left)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutation_ledger", description=__doc__.split("\n")[0]
    )
    parser.add_argument("command", choices=("save", "seed", "rerun"))
    parser.add_argument("mutants", nargs="?", default="mutants", type=Path)
    parser.add_argument("--ledger", default=LEDGER, type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "save":
            ledger = save(args.mutants, args.ledger)
            known = sum(v is not None for _, verdicts in ledger.values() for v in verdicts)
            print(f"{args.ledger}: {len(ledger)} functions, {known} verdicts")
        elif args.command == "rerun":
            dropped, left = rerun(args.mutants)
            print(f"{RERUN_LEFT}: {dropped} run again, {left} left")
        else:
            filled = seed(args.mutants, args.ledger)
            print(f"{args.mutants}: {filled} verdicts from {args.ledger}")
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
