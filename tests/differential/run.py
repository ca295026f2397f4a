"""Command line: many seeds of the differential test, in a few worker processes.

    HERMES_WEBUI_SRC=/path/to/hermes-webui python -m tests.differential.run --seeds 10000 --jobs 2

Each worker runs the inspector in-process and keeps one hermes-webui child for all its seeds.
Prints one line per mismatch class (how many seeds, the first seed, what differs) and a total;
exits 1 when anything mismatched, 2 when no hermes-webui checkout is given.
Reproduce one seed with ``--seed-list N`` (add ``--verbose`` for every seed's verdict).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path


def _worker(args: tuple[list[int], str, str | None]) -> list[tuple]:
    seeds, scratch, python = args
    os.environ["HERMES_INSPECTOR_STATE_DIR"] = str(Path(scratch) / "inspector-log")
    from tests.differential.harness import HermesChild, hermes_src, run_seed

    src = hermes_src()
    child = HermesChild(src, Path(scratch) / "child", python)
    out = []
    try:
        for seed in seeds:
            o = run_seed(seed, child, Path(scratch) / "work")
            out.append((o.seed, o.action, o.verdict, o.detail, o.info))
    finally:
        child.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.differential.run", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seeds", type=int, default=200, help="how many seeds (from --start)")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--seed-list", type=int, nargs="*", help="exactly these seeds")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--chunk", type=int, default=100, help="seeds per task handed to a worker")
    parser.add_argument("--hermes-python", help="interpreter that imports the checkout (default: this one)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    from tests.differential.harness import hermes_src

    if hermes_src() is None:
        print(
            "HERMES_WEBUI_SRC is not set to a hermes-webui checkout: nothing to compare with", file=sys.stderr
        )
        return 2
    seeds = args.seed_list if args.seed_list else list(range(args.start, args.start + args.seeds))
    chunks = [seeds[i : i + args.chunk] for i in range(0, len(seeds), args.chunk)]
    started = time.monotonic()
    results: list[tuple] = []
    with tempfile.TemporaryDirectory(prefix="hermes-diff-") as tmp:
        tasks = [(chunk, str(Path(tmp) / f"w{i}"), args.hermes_python) for i, chunk in enumerate(chunks)]
        if args.jobs <= 1:
            for t in tasks:
                results.extend(_worker(t))
        else:
            with mp.get_context("spawn").Pool(args.jobs) as pool:
                for part in pool.imap_unordered(_worker, tasks):
                    results.extend(part)
    elapsed = time.monotonic() - started
    verdicts = Counter(r[2] for r in results)
    classes: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    for r in sorted(results):
        if args.verbose:
            print(f"seed {r[0]}: {r[1]}: {r[2]} {r[3]} {r[4]}".rstrip())
        if r[2] in ("mismatch", "harness"):
            classes[(r[1], r[3])].append(r)
    for (action, detail), rows in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        first = rows[0]
        print(
            f"MISMATCH {len(rows):5d} x  {action}: {detail}  (reproduce: --seed-list {first[0]}; {first[4][:200]})"
        )
    actions = Counter(r[1] for r in results)
    print(
        f"{len(results)} seeds in {elapsed:.0f} s: "
        + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
        + "; actions: "
        + ", ".join(f"{k} {v}" for k, v in sorted(actions.items()))
    )
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
