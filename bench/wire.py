"""The catalogue's rows across the window <-> child boundary (issue 15): as the objects they are
(one plain pickle, or :func:`inspector.jobs.pool.pickle_pieces` in steps) and as flat records
(:mod:`inspector.present.rows`): sizes, unpickling, freeing, a full collection with them alive,
and the child's side. Not a test: a measurement to repeat when the rows or the transport change.

    .venv/bin/python bench/wire.py HOME [REPEAT] [--nogc]

``--nogc``: the garbage collector paused while unpickling, as the window pauses it.
"""

from __future__ import annotations

import gc
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from inspector.home import locate_home
from inspector.jobs import pool
from inspector.load import load_catalogue
from inspector.present.rows import ListRow, flat_finding, flat_row


def main(argv: list[str]) -> None:
    args = [a for a in argv if not a.startswith("--")]
    nogc = "--nogc" in argv
    home = locate_home(Path(args[0]))
    repeat = int(args[1]) if len(args) > 1 else 7
    cat = load_catalogue(home, now=time.time())
    rows = cat.sorted_rows()

    def timed(fn: Callable[[], object]) -> tuple[float, float]:
        """(median, min) milliseconds of ``fn()``."""
        times = []
        for _ in range(repeat):
            gc.collect()
            if nogc:
                gc.disable()
            start = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - start)
            gc.enable()
            del out
        return statistics.median(times) * 1000, min(times) * 1000

    def freeing(make: Callable[[], object]) -> float:
        times = []
        for _ in range(repeat):
            objs = make()
            gc.collect()
            start = time.perf_counter()
            del objs
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    def longest_step(pieces: pool.Pickled) -> float:
        steps = pool.load_steps(pieces)
        if nogc:
            gc.disable()
        worst = 0.0
        try:
            while True:
                start = time.perf_counter()
                try:
                    next(steps)
                except StopIteration:
                    return worst * 1000
                worst = max(worst, time.perf_counter() - start)
        finally:
            gc.enable()

    old = (cat, None, rows, 0, ["default"])  # what the catalogue job returned before issue 15
    old_bytes = pickle.dumps(old, protocol=5)
    old_rows = pickle.dumps(rows, protocol=5)
    pieces = pool.pickle_pieces(old)
    flat = [flat_row(r) for r in rows]
    new_bytes = pickle.dumps(
        (flat, None, 0, ["default"], [flat_finding(f) for f in cat.home_findings]), protocol=5
    )

    print(f"rows: {len(rows)}")
    med, low = timed(lambda: pickle.loads(old_bytes))
    print(
        f"window, old: catalogue + rows as objects, one pickle.loads: {len(old_bytes) / 1e6:.1f} MB, "
        f"median/min {med:.1f}/{low:.1f} ms"
    )
    med = timed(lambda: pool.loads_pieces(pieces))[0]
    print(
        f"window, old: pickle_pieces, all steps: {len(pieces.stream) / 1e6:.1f} MB, median {med:.1f} ms, "
        f"longest step {max(longest_step(pieces) for _ in range(3)):.1f} ms"
    )
    med, low = timed(lambda: pickle.loads(new_bytes))
    print(
        f"window, new: flat records, one pickle.loads: {len(new_bytes) / 1e6:.1f} MB, "
        f"median/min {med:.1f}/{low:.1f} ms"
    )
    print(
        f"window, new: a ListRow per record (the prepare steps): median {timed(lambda: [ListRow(f) for f in flat])[0]:.1f} ms"
    )
    print(
        f"window: freeing the old rows: median {freeing(lambda: pickle.loads(old_rows)):.1f} ms; "
        f"the ListRows: {freeing(lambda: [ListRow(f) for f in pickle.loads(new_bytes)[0]]):.1f} ms"
    )
    keep: object = [ListRow(f) for f in flat]
    with_new = timed(gc.collect)[0]
    keep = pickle.loads(old_rows)
    with_old = timed(gc.collect)[0]
    del keep
    print(
        f"window: a full collection with the rows alive, not frozen: old {with_old:.1f} ms, new {with_new:.1f} ms"
    )
    print(
        f"child, old: pickle_pieces of the result: median {timed(lambda: pool.pickle_pieces(old))[0]:.1f} ms"
    )
    med = timed(lambda: pickle.dumps([flat_row(r) for r in rows], protocol=5))[0]
    print(f"child, new: flat_row + one pickle.dumps: median {med:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
