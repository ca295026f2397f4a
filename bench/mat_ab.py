"""A/B of ``repair --action materialize --all --write --json``: two source trees, whole processes, interleaved.

    .venv/bin/python bench/mat_ab.py --a /tmp/main-src --b . \
        --home $PWD/bench/out/home-n10000-seed1-j200000-v1.materialize1000 --runs 4

Each run writes into a fresh hard-linked copy of the home (as ``bench/run.py --only materialize``
does; both tools write by replacing files, so the copied home is never changed) with a fresh
state folder, ``PYTHONPATH`` set to the tree's folder and the clock fixed (``--now``). Prints each
run's wall time, the CPU time (user + system) of the process and the copies it waited for
(``wait4``) and the load average, then the medians and the per-pair ratios b/a.

Every run's written files (each new sidecar and ``_index.json``) and its output are compared with
the first run of tree a: the output with the scratch folder's path, the write id, the backup
folder and the write's time masked (they differ on every run, of either tree); any other
difference is reported and the exit status is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from against import link_tree  # noqa: E402

NOW = "1780000000"
_WRITE_ID = re.compile(rb"\d{8}T\d{6}-[0-9a-f]{8}")
_TIME = re.compile(rb'"time": [0-9.e+]+')


def written(home: Path, before: set[str], scratch: Path) -> tuple[dict[str, str], dict[str, str]]:
    """sha256 of each file of the sessions folder that is new or rewritten (the index), the scratch
    folder's path masked (hermes writes the working folder as the workspace of a row without one),
    and each of those by the sha256 of the file as written (the output names that one)."""
    sessions = home / "webui" / "sessions"
    mask = str(scratch).encode()
    out, real = {}, {}
    for entry in os.scandir(sessions):
        if entry.name not in before or entry.name == "_index.json":
            raw = Path(entry.path).read_bytes()
            out[entry.name] = hashlib.sha256(raw.replace(mask, b"SCRATCH")).hexdigest()
            real[hashlib.sha256(raw).hexdigest()] = out[entry.name]
    return out, real


def run_once(
    src: Path, home: Path, work: Path, python: str, nice: int = 0
) -> tuple[float, float, bytes, dict[str, str], int]:
    scratch = Path(tempfile.mkdtemp(prefix="ab-", dir=work))
    target = scratch / "home"
    link_tree(home, target)
    before = set(os.listdir(target / "webui" / "sessions"))
    state = scratch / "state"
    fake_home = scratch / "user-home"
    state.mkdir()
    fake_home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "HERMES_INSPECTOR_NO_CACHE")
    }
    env.update(PYTHONPATH=str(src), HERMES_INSPECTOR_STATE_DIR=str(state), HOME=str(fake_home))
    cmd = [python, "-m", "inspector", "repair", "--home", str(target), "--action", "materialize", "--all",
           "--write", "--json", "--now", NOW]  # fmt: skip
    try:
        with tempfile.TemporaryFile(dir=work) as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                cmd,
                stdout=out,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=target,
                preexec_fn=(lambda: os.nice(nice)) if nice else None,
            )
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            out.seek(0)
            data = out.read()
        files, real = written(target, before, scratch)
        masked = _TIME.sub(
            b'"time": T', _WRITE_ID.sub(b"WRITE_ID", data.replace(str(scratch).encode(), b"SCRATCH"))
        )
        for sha, same in real.items():  # a file holding the scratch path: its hash named by the masked one
            if sha != same:
                masked = masked.replace(sha.encode(), b"masked:" + same.encode())
        return wall, usage.ru_utime + usage.ru_stime, masked, files, os.waitstatus_to_exitcode(status)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", type=Path, required=True, help="the folder holding inspector/ of tree a")
    ap.add_argument("--b", type=Path, required=True, help="the same for tree b")
    ap.add_argument("--home", type=Path, required=True, help="<home>.materialize1000 (absolute)")
    ap.add_argument("--runs", type=int, default=3, help="pairs (the order alternates)")
    ap.add_argument(
        "--work", type=Path, default=None, help="where scratch copies go (default: beside the home)"
    )
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run both trees' commands at this niceness (negative, as root: the machine's other work "
        "gives way, about as on a quiet machine; keep such runs few and short)",
    )
    ap.add_argument("--keep-outputs", type=Path, default=None, help="write each run's masked output here")
    args = ap.parse_args()
    home = args.home.resolve()
    work = Path(tempfile.mkdtemp(prefix="mat-ab-", dir=args.work or home.parent))
    results: dict[str, list[tuple[float, float]]] = {"a": [], "b": []}
    reference: tuple[bytes, dict[str, str]] | None = None
    differ = 0
    try:
        for i in range(args.runs):
            for name in ("a", "b") if i % 2 == 0 else ("b", "a"):
                src = (args.a if name == "a" else args.b).resolve()
                load = os.getloadavg()[0]
                wall, cpu, out, files, code = run_once(src, home, work, args.python, args.nice)
                results[name].append((wall, cpu))
                if args.keep_outputs is not None:
                    args.keep_outputs.mkdir(parents=True, exist_ok=True)
                    (args.keep_outputs / f"{i}-{name}.json").write_bytes(out)
                note = ""
                if reference is None:
                    reference = (out, files)
                elif (out, files) != reference:
                    differ += 1
                    bad = sorted(
                        k for k in set(files) | set(reference[1]) if files.get(k) != reference[1].get(k)
                    )
                    note = (
                        f"  DIFFERS: output {'same' if out == reference[0] else 'differs'}, files {bad[:5]}"
                    )
                print(
                    f"run {i} {name}: wall {wall:.3f} s, cpu {cpu:.3f} s, exit {code}, "
                    f"{len(files)} files, load {load:.1f}{note}",
                    flush=True,
                )
        for name in ("a", "b"):
            walls = [w for w, _ in results[name]]
            cpus = [c for _, c in results[name]]
            print(
                f"{name}: median wall {statistics.median(walls):.3f} s, median cpu {statistics.median(cpus):.3f} s"
            )
        ratios_w = [b[0] / a[0] for a, b in zip(results["a"], results["b"], strict=True)]
        ratios_c = [b[1] / a[1] for a, b in zip(results["a"], results["b"], strict=True)]
        print(
            f"b/a per pair: wall {', '.join(f'{r:.2f}' for r in ratios_w)} (median {statistics.median(ratios_w):.2f}x); "
            f"cpu {', '.join(f'{r:.2f}' for r in ratios_c)} (median {statistics.median(ratios_c):.2f}x)"
        )
        print("outputs and written files: " + ("all equal" if not differ else f"{differ} run(s) differ"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
