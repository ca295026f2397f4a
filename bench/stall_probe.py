"""What runs in the window's longest gaps: ``python bench/stall_probe.py --home H [--stage complete]``.

Runs ``measure.py gui_list`` in this process with its stall meter replaced by one that notes, for each
gap of the event loop, the GUI thread's own CPU (``time.thread_time`` read in the tick, which runs on
that thread) and the whole process's (every thread); the garbage collector's passes (generation, thread,
duration: ``gc.callbacks``); each turn of the window's steps (``TaskRunner._run_steps``) and each
finished task handed to the window (``TaskRunner._on_finished``, by channel) with their durations; and
what every thread was running, sampled every millisecond by a thread of its own (``sys._current_frames``:
the innermost frames of the inspector's code). For every gap longer than ``--over`` ms it prints those
to stderr; the measurement's own JSON line goes to stdout as ``measure.py``'s does. A diagnostic, not a
figure: the sampler itself takes the GIL.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # bench/measure.py, beside this script

EVENTS: list[tuple[float, float, str]] = []  # (start, end, what) on any thread
SAMPLES: list[tuple[float, str, str]] = []  # (time, thread name, innermost inspector frames)
_gc_start: dict[int, float] = {}


def _gc_callback(phase, info):
    ident = threading.get_ident()
    if phase == "start":
        _gc_start[ident] = time.perf_counter()
    else:
        t0 = _gc_start.pop(ident, None)
        if t0 is not None:
            name = threading.current_thread().name
            EVENTS.append(
                (
                    t0,
                    time.perf_counter(),
                    f"gc gen{info['generation']} [{name}] collected={info['collected']}",
                )
            )


def _where(frame) -> str:
    parts = []
    while frame is not None and len(parts) < 4:
        code = frame.f_code
        file = code.co_filename
        if "inspector" in file or "bench" in file:
            parts.append(f"{Path(file).stem}.{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(parts) or "(no inspector frame)"


def _sampler(stop: threading.Event, period: float) -> None:
    names = {}
    while not stop.is_set():
        now = time.perf_counter()
        for ident, frame in sys._current_frames().items():
            if ident == threading.get_ident():
                continue
            name = names.get(ident)
            if name is None:
                for t in threading.enumerate():
                    names[t.ident] = t.name
                name = names.get(ident, str(ident))
            SAMPLES.append((now, name, _where(frame)))
        time.sleep(period)


def _wrap(cls, attr: str, label) -> None:
    original = getattr(cls, attr)

    def wrapper(self, *args, **kwargs):
        t0, c0 = time.perf_counter(), time.thread_time()
        what = label(self, args)
        try:
            return original(self, *args, **kwargs)
        finally:
            EVENTS.append(
                (t0, time.perf_counter(), f"{what} (CPU {(time.thread_time() - c0) * 1000:.1f} ms)")
            )

    wrapper.__name__ = original.__name__
    setattr(cls, attr, wrapper)


class ProbeMeter(measure.StallMeter):
    def __init__(self):
        super().__init__()
        self.rows: list[tuple[float, float, float, float]] = []  # (start, end, gui cpu, process cpu)
        self._cpu = (time.thread_time(), time.process_time())

    def _tick(self) -> None:
        last = self.last
        super()._tick()
        cpu = (time.thread_time(), time.process_time())
        if last is not None:
            self.rows.append((last, self.last, cpu[0] - self._cpu[0], cpu[1] - self._cpu[1]))
        self._cpu = cpu

    def start(self) -> None:
        super().start()
        self._cpu = (time.thread_time(), time.process_time())


METERS: list[ProbeMeter] = []


def _meter():
    m = ProbeMeter()
    METERS.append(m)
    return m


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", required=True)
    ap.add_argument("--stage", choices=("first", "complete"), default="complete")
    ap.add_argument("--over", type=float, default=25.0, help="report gaps longer than this (ms)")
    ap.add_argument("--top", type=int, default=5, help="also report the gaps with the most process CPU")
    ap.add_argument("--sample-ms", type=float, default=1.0)
    ap.add_argument("--no-sampler", action="store_true")
    args = ap.parse_args()

    from inspector.gui.workers import TaskRunner

    _wrap(TaskRunner, "_run_steps", lambda s, a: "steps " + ",".join(s._stepping))
    _wrap(TaskRunner, "_on_finished", lambda s, a: f"finished {a[0]}")
    gc.callbacks.append(_gc_callback)
    measure.StallMeter = _meter
    stop = threading.Event()
    if not args.no_sampler:
        threading.Thread(
            target=_sampler, args=(stop, args.sample_ms / 1000), name="probe", daemon=True
        ).start()
    ns = argparse.Namespace(home=args.home, stage=args.stage, path="auto")
    result = measure.gui_list(ns)
    stop.set()
    rows = [r for m in METERS for r in m.rows]
    # a gap the process spent not running (the machine's load) is not the window's: the most CPU
    # the process (every thread) had in one gap, capped at the gap, is what a quiet machine would see
    result["cpu_stall_ms"] = round(max((min(r[1] - r[0], r[3]) for r in rows), default=0) * 1000, 1)
    result["gui_cpu_max_ms"] = round(max((r[2] for r in rows), default=0) * 1000, 1)
    if rows:  # the turn that opens the home: its gap and the GUI thread's CPU in it
        result["open_gap_ms"] = round((rows[0][1] - rows[0][0]) * 1000, 1)
        result["open_gui_cpu_ms"] = round(rows[0][2] * 1000, 1)
    since = rows[0][0] if rows else 0.0  # the collections of the start-up are not the figure's
    result["gc_max_ms"] = round(
        max((t1 - t0 for t0, t1, w in EVENTS if w.startswith("gc ") and t1 > since), default=0) * 1000, 1
    )
    print(json.dumps(result, default=str), flush=True)
    for meter in METERS:
        rows = meter.rows
        busiest = sorted(rows, key=lambda r: r[3], reverse=True)[: args.top]
        print(
            f"\n{len(rows)} gaps; longest {max((r[1] - r[0] for r in rows), default=0) * 1000:.1f} ms; "
            f"most process CPU in one gap {busiest[0][3] * 1000 if busiest else 0:.1f} ms, "
            f"most GUI thread CPU {max((r[2] for r in rows), default=0) * 1000:.1f} ms",
            file=sys.stderr,
        )
        for start, end, gui_cpu, proc_cpu in rows:
            gap = (end - start) * 1000
            if gap < args.over and (start, end, gui_cpu, proc_cpu) not in busiest:
                continue
            print(
                f"\ngap {gap:.1f} ms at +{(start - meter.rows[0][0]) * 1000:.0f} ms: GUI thread CPU "
                f"{gui_cpu * 1000:.1f} ms, process CPU {proc_cpu * 1000:.1f} ms",
                file=sys.stderr,
            )
            for t0, t1, what in EVENTS:
                if t1 > start and t0 < end:
                    print(
                        f"  {what}: {(t1 - t0) * 1000:.1f} ms from +{(t0 - start) * 1000:.1f}",
                        file=sys.stderr,
                    )
            seen = collections.Counter((name, where) for t, name, where in SAMPLES if start <= t <= end)
            for (name, where), n in seen.most_common(12):
                print(f"  {n:3d} x [{name}] {where}", file=sys.stderr)
    t_first = METERS[0].rows[0][0] if METERS and METERS[0].rows else 0.0
    print("\nevents of 5 ms or more (gc passes, steps, hand-overs):", file=sys.stderr)
    for t0, t1, what in sorted(EVENTS):
        if t1 - t0 >= 0.005:
            print(f"  +{(t0 - t_first) * 1000:7.0f} ms {(t1 - t0) * 1000:6.1f} ms  {what}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # skip Qt/Python teardown, as measure.py's BENCH_FAST_EXIT does
