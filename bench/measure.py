"""One measurement in a fresh process: ``python bench/measure.py NAME --home H [...]``.

Prints one JSON line on stdout: ``{"ok": true, "seconds": {...}, "stall_ms": ..., "peak_rss_mb": ..., ...}``
or ``{"ok": false, "error": "..."}``. :mod:`bench.run` starts one process per measurement and repeat,
so each figure includes nothing cached by an earlier run, and the process's own peak RSS (VmHWM) is
the measurement's peak memory. Imports happen before the clock starts: the figures are the work, not
Python's start-up (the ``audit`` command is timed from the outside by the runner, start-up included).

GUI measurements run offscreen (``QT_QPA_PLATFORM=offscreen``). They drive the window's own code when
``inspector.gui.main_window`` provides a window the driver knows how to open (``path: "window"``);
until then they assemble the window's parts the same way the window does (``path: "components"``: the
session list model, proxy and table view fed by the :class:`~inspector.gui.workers.TaskRunner`, the
journal view fed by :func:`~inspector.present.session_data.load_session_data`). While they run, a 5 ms
``QTimer`` records the gaps between its ticks: the longest gap is the longest stall of the event loop.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TICK_MS = 5
PAINT_POLL_MS = 25  # how often the wait for a measured paint looks whether it came
GUI_TIMEOUT_S = 120.0


def peak_rss_mb() -> float | None:
    """This process's peak resident set (VmHWM), in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except (ImportError, OSError):
        return None


def tree_cpu_s() -> float | None:
    """CPU time (user + system) of this process and of the window's child processes (each with
    the children it waited for: the copies a catalogue forks), in seconds; None without /proc.
    Read at two moments, the difference is the work of the whole process tree in between, which
    a loaded machine changes less than the wall time. A detached writer (the fact cache a first
    open leaves) is nobody's waited-for child and is not counted: it is off the clock too."""
    try:
        from inspector.jobs.pool import worker_pids
    except ImportError:
        worker_pids = list
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in ["self", *map(str, worker_pids())]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            if pid == "self":
                return None
            continue
        total += sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
    return total


def _home(path: str):
    from inspector.home import locate_home

    return locate_home(path)


def _manifest(home_path: str) -> dict:
    return json.loads((Path(home_path) / "bench_manifest.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------- core paths (no Qt)


def core_first_rows(args) -> dict:
    """The cheapest catalogue the list can show: sidecars, .bak and index, no state.db, no audit."""
    from inspector.catalogue import build_catalogue

    home = _home(args.home)
    t0 = time.perf_counter()
    cat = build_catalogue(home, now=time.time())
    rows = cat.sorted_rows()
    return {"seconds": {"total": time.perf_counter() - t0}, "rows": len(rows)}


def core_catalogue(args) -> dict:
    """The complete catalogue with every session's health (state.db records and hermes' audit)."""
    from inspector.load import load_catalogue

    home = _home(args.home)
    t0 = time.perf_counter()
    cat = load_catalogue(home, now=time.time())
    rows = cat.sorted_rows()
    health = {}
    for r in rows:
        health[r.health] = health.get(r.health, 0) + 1
    return {"seconds": {"total": time.perf_counter() - t0}, "rows": len(rows), "health": health}


def core_first_open(args) -> dict:
    """The window's catalogue job on a first open (run ``HERMES_INSPECTOR_STATE_DIR`` at an empty
    folder), without Qt or the pool: the CPU of each part of each process, and what they make on
    two idle cores (``estimate_2_cores_s``): this process's serial start (before the copies are
    forked), the reading all of them share (each process's part, this one's state.db thread
    included: on two cores the longest, or half of them all), this process's taking the copies'
    facts, then its tail (the catalogue built, hermes' audit and the journals awaited: the copies'
    work after their hand-over runs on the other core) and the job's last steps (rows flattened,
    sorted, pickled). A model for comparing changes on a loaded machine, where wall times are the
    load's; the window's own part (unpickling, painting) is not in it."""
    import json as _json
    import tempfile

    from inspector import load
    from inspector.jobs import offload, pool
    from inspector.present.rows import flat_row

    home = _home(args.home)
    log = tempfile.NamedTemporaryFile(prefix="measure-first-open-", delete=False).name
    marks: dict[str, float] = {}
    main_pid = os.getpid()

    def noted(kind: str) -> None:
        with open(log, "a") as fh:  # from every process
            fh.write(_json.dumps([kind, os.getpid(), time.process_time()]) + "\n")

    real_job, real_start, real_read = load._aside_job, load._start_aside, load._Aside.read_sidecars
    real_steal = getattr(load, "_Steal", None)

    def job(*a, **k):
        stage = a[3]
        hand = stage.hand_over
        stage.hand_over = lambda data: (noted("hand"), hand(data))[1]
        try:
            return real_job(*a, **k)
        finally:
            noted("end")

    def start(*a, **k):
        got = real_start(*a, **k)
        marks["forked"] = time.thread_time()
        return got

    def read(self, scan):
        got = real_read(self, scan)
        marks["received"] = time.thread_time()
        return got

    load._aside_job, load._start_aside, load._Aside.read_sidecars = job, start, read
    if real_steal is not None:
        real_sidecars = real_steal.sidecars

        def sidecars(self, scan):
            got = real_sidecars(self, scan)
            if os.getpid() == main_pid:
                marks["read"] = time.thread_time()
            return got

        real_steal.sidecars = sidecars
    import gc

    gc.disable()  # as the job has it (offload.catalogue_job)
    try:
        t0, p0, w0 = time.thread_time(), time.process_time(), time.perf_counter()
        cat = load.load_catalogue(home, now=time.time(), save_later=lambda fn: None)
        t1, p1 = time.thread_time(), time.process_time()
        records = [flat_row(r) for r in cat.rows.values()]
        records.sort(key=offload._newest_first_key)
        pool.flat_pickled(records)
        t2, w2 = time.thread_time(), time.perf_counter()
    finally:
        gc.enable()
        load._aside_job, load._start_aside, load._Aside.read_sidecars = real_job, real_start, real_read
        if real_steal is not None:
            real_steal.sidecars = real_sidecars
    with open(log) as fh:
        events = [_json.loads(line) for line in fh]
    os.unlink(log)
    hands = {pid: cpu for kind, pid, cpu in events if kind == "hand"}
    ends = {pid: cpu for kind, pid, cpu in events if kind == "end"}
    if "forked" not in marks or "received" not in marks:
        raise RuntimeError("no forked copy: run it with an empty state folder, outside Qt")
    serial = marks["forked"] - t0
    own = marks.get("read", marks["received"]) - marks["forked"]
    receiving = marks["received"] - marks.get("read", marks["received"])
    thread = (p1 - p0) - (t1 - t0)  # the state.db thread
    shares = [own + thread] + [hands[pid] for pid in sorted(hands)]
    after = [ends[pid] - hands[pid] for pid in sorted(hands)]
    tail = t1 - marks["received"]
    last = t2 - t1
    reading = max(max(shares), sum(shares) / 2)
    estimate = serial + reading + receiving + max(tail, sum(after) / 2) + last
    r = lambda v: round(v, 3)  # noqa: E731
    return {
        "seconds": {"total": w2 - w0, "estimate_2_cores_s": r(estimate)},
        "cpu": {
            "serial_before_fork": r(serial),
            "here_reading": r(own),
            "state_db_thread": r(thread),
            "here_receiving": r(receiving),
            "copies_to_hand_over": [r(v) for v in shares[1:]],
            "copies_after_hand_over": [r(v) for v in after],
            "here_tail": r(tail),
            "last_steps": r(last),
            "tree": r(p1 - p0 + sum(ends.values()) + last),
        },
        "rows": len(cat.rows),
        "load": os.getloadavg()[0],
    }


def _big_journal(args) -> Path:
    return Path(_manifest(args.home)["big_journal"]["path"])


def core_journal(args) -> dict:
    """The big journal as the window reads it, without Qt and without the child process: first its
    head (the glance: the first lines read and 50 of them checked), then the whole file indexed in
    one pass (every line's verdict, seq checks and counts: the child's work) and looked up."""
    from inspector.present.session_data import GLANCE_ROWS, _read_head
    from inspector.store.files import read_regular
    from inspector.store.journal_raw import RawJournal, index_journal

    path = _big_journal(args)
    ids = {"session_id": path.parent.name, "run_id": path.stem}
    t0 = time.perf_counter()
    head = RawJournal(_read_head(path, GLANCE_ROWS), path=path, **ids)
    first = [head.line(i) for i in range(min(50, len(head)))]
    t_first = time.perf_counter()
    data, _ = read_regular(path)
    t_read = time.perf_counter()
    index = index_journal(data, digest=True, **ids)
    t_index = time.perf_counter()
    raw = RawJournal(data, path=path, index=index, **ids)
    stats = raw.stats()
    deep = [raw.line(i) for i in range(len(raw) // 2, len(raw) // 2 + 50)]
    t_full = time.perf_counter()
    return {
        "seconds": {
            "first": t_first - t0,
            "indexed": t_full - t0,
            "read": t_read - t_first,
            "index_journal": t_index - t_read,
        },
        "lines": len(raw),
        "first_lines": len(first) + len(deep),
        "stats": stats,
    }


def core_plan(args) -> dict:
    """One repair planned on the largest sidecar (home-wide actions: for the whole home)."""
    from inspector.actions import default_clock, make_context, plan_action
    from inspector.repair import home_wide

    home = _home(args.home)
    sid = _manifest(args.home)["largest_sidecar"]["session_id"]
    target = None if home_wide(args.action) else sid
    t0 = time.perf_counter()
    ctx = make_context(home, default_clock(home, None, None))
    plans = plan_action(ctx, args.action, target)
    elapsed = time.perf_counter() - t0
    return {
        "seconds": {"total": elapsed},
        "plans": len(plans),
        "refused": sum(1 for p in plans if p.refusal),
        "changes": sum(len(p.changes) for p in plans),
        "bytes_after": sum(len(c.after or b"") for p in plans for c in p.changes),
        "session_id": target,
    }


# ---------------------------------------------------------------- GUI harness


class StallMeter:
    """A repeating 5 ms timer; the longest gap between two ticks is the longest event-loop stall."""

    def __init__(self):
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.last = None
        self.max_gap = 0.0
        self.ticks = 0
        self.gaps: list[float] = []

    def _tick(self) -> None:
        now = time.perf_counter()
        if self.last is not None:
            gap = now - self.last
            self.gaps.append(gap)
            self.max_gap = max(self.max_gap, gap)
        self.last = now
        self.ticks += 1

    def start(self) -> None:
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def result(self) -> dict:
        over = sum(1 for g in self.gaps if g > 0.05)
        return {"stall_ms": round(self.max_gap * 1000, 1), "ticks": self.ticks, "gaps_over_50ms": over}


class PaintProbe:
    """Notes the first paint of a view's viewport after ``ready()`` says it has rows."""

    def __init__(self, view, ready):
        from PySide6.QtCore import QEvent, QObject

        probe = self

        class _Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 - Qt override
                if event.type() == QEvent.Type.Paint and probe.painted_at is None and ready():
                    probe.painted_at = time.perf_counter()
                    if probe.on_paint is not None:
                        probe.on_paint()
                return False

        self.painted_at: float | None = None
        self.on_paint = None
        self._filter = _Filter()
        view.viewport().installEventFilter(self._filter)


def _pin_none_for_pyside_6_12() -> bool:
    """Work around PySide6 6.12.0 on Python < 3.12: every call of a void Qt method drops a reference to
    None (``sys.getrefcount(None)`` falls by one per call), and after a few thousand calls CPython aborts
    with "none_dealloc: deallocating None". Rendering one long transcript is enough. Python 3.12+ makes
    None immortal, and PySide6 6.11 does not have the bug. So that the benchmark measures instead of
    crashing, give None a huge reference count in this process (see profile_notes.md)."""
    import PySide6

    if sys.version_info >= (3, 12) or not PySide6.__version__.startswith("6.12."):
        return False
    import ctypes

    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
    return True


def _app():
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _pin_none_for_pyside_6_12()
    if os.environ.get("BENCH_SWITCH_INTERVAL"):  # experiment: a shorter GIL switch interval for the GUI
        sys.setswitchinterval(float(os.environ["BENCH_SWITCH_INTERVAL"]))
    try:  # the child processes started before Qt is imported, where the app's own start-up starts them
        from inspector.jobs.offload import prestart  # (cli._run_gui); the window starts them otherwise

        prestart()
    except ImportError:
        pass
    try:  # the QApplication exactly as the app's own start-up makes it (GIL switch interval included)
        from inspector.gui.app import application
    except ImportError:
        from PySide6.QtWidgets import QApplication

        return QApplication.instance() or QApplication(["bench"])
    return application(["bench"])


def _run_loop(until_done, timeout: float = GUI_TIMEOUT_S, poll_ms: int = 1) -> None:
    """Run the event loop until ``until_done()`` is true (checked every ``poll_ms``) or the timeout."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    check = QTimer()
    check.setInterval(poll_ms)
    check.timeout.connect(lambda: loop.quit() if until_done() else None)
    check.start()
    QTimer.singleShot(int(timeout * 1000), loop.quit)
    loop.exec()
    check.stop()


def _window_class():
    """The main window class when the GUI provides one (``inspector.gui.main_window``)."""
    try:
        from inspector.gui import main_window
    except ImportError:
        return None
    return getattr(main_window, "MainWindow", None)


class ComponentList:
    """The session list as the window assembles it: TaskRunner -> SessionTableModel -> view."""

    def __init__(self):
        from PySide6.QtWidgets import QTableView

        from inspector.gui.session_model import SessionTableModel
        from inspector.gui.workers import TaskRunner

        self.model = SessionTableModel()
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSortingEnabled(True)
        self.view.resize(1200, 800)
        self.runner = TaskRunner()
        self.view.show()

    def row_count(self) -> int:
        return self.model.rowCount()


def gui_list(args) -> dict:
    """Measurement 1 (``--stage first``) or 2 (``--stage complete``) through the GUI, with the stall meter."""
    app = _app()
    home = _home(args.home)
    window_cls = _window_class()
    if window_cls is not None and args.path != "components":
        return _gui_list_window(app, window_cls, home, args)
    from inspector.catalogue import build_catalogue
    from inspector.load import load_catalogue

    ui = ComponentList()
    _run_loop(lambda: True)  # let the empty window settle before the clock starts
    meter = StallMeter()
    state = {"set_at": None, "error": None}
    probe = PaintProbe(ui.view, lambda: ui.row_count() > 0)

    def work(token, progress):
        if args.stage == "first":
            return build_catalogue(home, now=time.time())
        return load_catalogue(home, now=time.time())

    def done(cat):
        ui.model.set_rows(cat.sorted_rows())
        state["set_at"] = time.perf_counter()

    def failed(message):
        state["error"] = message

    meter.start()
    t0 = time.perf_counter()
    ui.runner.start("catalogue", work, done, on_error=failed)
    _run_loop(lambda: state["error"] is not None or probe.painted_at is not None)
    meter.stop()
    if state["error"]:
        raise RuntimeError(state["error"])
    if probe.painted_at is None:
        raise RuntimeError("the list never painted a row")
    health = {}
    for r in ui.model.rows():
        health[r.health] = health.get(r.health, 0) + 1
    return {
        "seconds": {"total": probe.painted_at - t0, "rows_set": state["set_at"] - t0},
        "rows": ui.row_count(),
        "path": "components",
        "health": health,
        **meter.result(),
    }


def _window(window_cls):
    """A main window with private settings (the benchmark must not touch the user's)."""
    import tempfile

    from PySide6.QtCore import QSettings

    try:
        from inspector.gui.app import application

        application()  # names, icon and stylesheet, as the real start-up sets them
    except ImportError:
        pass
    ini = Path(tempfile.mkdtemp(prefix="bench-gui-")) / "settings.ini"
    win = window_cls(settings=QSettings(str(ini), QSettings.Format.IniFormat))
    win.show()
    _run_loop(lambda: True)
    return win


def _settled(win) -> bool:
    check = getattr(win, "is_settled", None)
    return bool(check()) if callable(check) else True


def _gui_list_window(app, window_cls, home, args) -> dict:
    """Open the home in the real window; first rows = first paint of a row, complete = the catalogue is in."""
    win = _window(window_cls)
    meter = StallMeter()
    complete = args.stage == "complete"

    def ready() -> bool:
        if win.model.rowCount() <= 0:
            return False
        return not complete or getattr(win, "catalogue", None) is not None

    probe = PaintProbe(win.table, ready)
    cpu: dict[str, float | None] = {}
    probe.on_paint = lambda: cpu.update(shown=tree_cpu_s())
    meter.start()
    cpu["start"] = tree_cpu_s()
    t0 = time.perf_counter()
    win.open_home(home)
    # the paint's time is taken at the paint (PaintProbe): the loop only has to end after it, and a
    # check every millisecond cost the window 0.13 s of CPU in a 4 s first open (profile_notes.md)
    _run_loop(lambda: probe.painted_at is not None, poll_ms=PAINT_POLL_MS)
    shown = probe.painted_at
    rss_shown = peak_rss_mb()
    # keep the meter running while the window finishes what opening a home starts (auto-selected
    # session, its plans): those stalls are part of opening the home too
    _run_loop(lambda: _settled(win), timeout=GUI_TIMEOUT_S)
    settled = time.perf_counter()
    meter.stop()
    if shown is None:
        raise RuntimeError("the list never painted a row")
    health = {}
    for r in win.model.rows():
        health[r.health] = health.get(r.health, 0) + 1
    return {
        "seconds": {"total": shown - t0, "settled": settled - t0},
        "rows": win.model.rowCount(),
        "path": "window",
        "health": health,
        "rss_shown_mb": rss_shown,
        # CPU of the window and its children from open_home() to that paint
        "cpu_shown_s": (
            round(cpu["shown"] - cpu["start"], 3)
            if cpu.get("shown") is not None and cpu.get("start") is not None
            else None
        ),
        **meter.result(),
    }


def _children_peak_rss_mb() -> float | None:
    """The largest peak RSS (VmHWM) among this process's children (the window's helper processes)."""
    me = str(os.getpid())
    peak = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("PPid", "").strip() == me and "VmHWM" in fields:
            mb = int(fields["VmHWM"].split()[0]) / 1024
            peak = mb if peak is None else max(peak, mb)
    return peak


def _gui_journal_window(window_cls, home, big: dict) -> dict:
    """Select the big journal's session in the real window (after the list is in); time its journal table.

    The window shows a big journal in two stages: its first lines at once (read from the start of
    the file), then every line once a child process has checked the whole file. ``first`` is the
    first paint of the big run's table with rows; ``indexed`` the first paint of that table with
    every line of the file in it and every line's verdict known (the journal's index)."""
    win = _window(window_cls)
    win.open_home(home)
    _run_loop(lambda: _settled(win) and win.model.rowCount() > 0)
    # start from another session, as a user would (the window may have auto-selected this one)
    other = next(
        (
            r.session_id
            for r in win.model.rows()
            if r.session_id != big["session_id"] and r.sidecar_path is not None
        ),
        None,
    )
    if other is not None and win.current_session_id() in (None, big["session_id"]):
        win.select_session(other)
        _run_loop(lambda: _settled(win) and win.current_session_id() == other)
    journal = win.view.journal

    def ready() -> bool:
        run = journal.current_run()
        return run is not None and run.run_id == big["run_id"] and journal.model.rowCount() > 0

    def complete() -> bool:
        run = journal.current_run()
        raw = run.raw if run is not None else None
        indexed = getattr(raw, "indexed", None) if raw is not None else None
        return ready() and indexed is not None and journal.model.rowCount() == len(raw)

    probe = PaintProbe(journal.table, ready)
    full = PaintProbe(journal.table, complete)
    meter = StallMeter()
    meter.start()
    t0 = time.perf_counter()
    if not win.select_session(big["session_id"]):
        raise RuntimeError(f"the list has no session {big['session_id']}")
    _run_loop(lambda: probe.painted_at is not None)
    shown = probe.painted_at
    _run_loop(lambda: full.painted_at is not None)
    indexed = full.painted_at
    rss_indexed = peak_rss_mb()
    _run_loop(lambda: _settled(win))
    settled = time.perf_counter()
    meter.stop()
    if shown is None:
        raise RuntimeError("the journal table never painted the big run")
    if indexed is None:
        raise RuntimeError("the journal table never showed the whole big run")
    stalls = meter.result()
    scroll = _scroll_through(journal.table)
    seconds = {"first": shown - t0, "indexed": indexed - t0, "settled": settled - t0}
    if scroll["frames"]:  # none when the whole run fits on screen
        seconds.update(scroll_worst=max(scroll["frames"]), scroll_median=statistics.median(scroll["frames"]))
    return {
        "seconds": seconds,
        "rows": journal.model.rowCount(),
        "path": "window",
        "rss_indexed_mb": rss_indexed,
        "children_peak_rss_mb": _children_peak_rss_mb(),
        **stalls,
        "stall_ms": max(stalls["stall_ms"], scroll["stall_ms"]),
        "open_stall_ms": stalls["stall_ms"],
        "scroll_steps": len(scroll["frames"]),
        "scroll_stall_ms": scroll["stall_ms"],
    }


SCROLL_SEED = 7


def _scroll_through(table) -> dict:
    """Scroll a table as a reader does: 40 pages down from the top, 40 small wheel steps (3 lines),
    a drag of the scroll bar to 30 seeded places anywhere in the file, then to the end and back to
    the top. A frame is the time from the scroll to the end of the viewport's paint that shows it
    (the event loop runs between frames, as between a user's inputs); the stall meter runs over all."""
    import functools
    import random

    from PySide6.QtWidgets import QAbstractSlider

    bar = table.verticalScrollBar()
    action = QAbstractSlider.SliderAction
    rng = random.Random(SCROLL_SEED)
    steps: list = [lambda: bar.setValue(bar.minimum())]
    steps += [lambda: bar.triggerAction(action.SliderPageStepAdd)] * 40
    steps += [lambda: bar.setValue(bar.value() + 3)] * 40
    places = [rng.randint(bar.minimum(), bar.maximum()) for _ in range(30)]
    steps += [functools.partial(bar.setValue, place) for place in places]
    steps += [lambda: bar.setValue(bar.maximum()), lambda: bar.setValue(bar.minimum())]
    state = {"painted": False}
    probe = PaintProbe(table, lambda: True)
    probe.on_paint = lambda: state.update(painted=True)
    frames = []
    meter = StallMeter()
    meter.start()
    for step in steps:
        _run_loop(lambda: True)  # a turn of the event loop between inputs
        before = bar.value()
        probe.painted_at = None
        state["painted"] = False
        t0 = time.perf_counter()
        step()
        if bar.value() == before:
            continue  # already there: nothing to paint
        _run_loop(lambda: state["painted"], timeout=10.0)  # checked on the next turn: the paint is done
        if not state["painted"]:
            raise RuntimeError("the journal table did not repaint after a scroll")
        frames.append(time.perf_counter() - t0)
    meter.stop()
    return {"frames": frames, "stall_ms": meter.result()["stall_ms"]}


def gui_journal(args) -> dict:
    """Measurement 4 through the GUI: the session view of the big journal's session, journal tab."""
    _app()
    from inspector.gui.journal_view import JournalView
    from inspector.gui.workers import TaskRunner
    from inspector.present.session_data import load_session_data

    home = _home(args.home)
    big = _manifest(args.home)["big_journal"]
    window_cls = _window_class()
    if window_cls is not None and args.path != "components":
        return _gui_journal_window(window_cls, home, big)
    view = JournalView()
    view.resize(1200, 800)
    view.show()
    table = getattr(view, "table", None) or getattr(view, "_table", None) or getattr(view, "events", None)
    if table is None:
        from PySide6.QtWidgets import QTableView

        tables = view.findChildren(QTableView)
        table = tables[0] if tables else None
    if table is None:
        raise RuntimeError("the journal view has no table")
    runner = TaskRunner()
    _run_loop(lambda: True)
    state = {"set_at": None, "error": None}
    probe = PaintProbe(table, lambda: table.model() is not None and table.model().rowCount() > 0)
    meter = StallMeter()

    def work(token, progress):
        return load_session_data(home, big["session_id"], token.check)

    def done(data):
        view.set_data(data)
        view.select_run(big["run_id"])
        state["set_at"] = time.perf_counter()

    def failed(message):
        state["error"] = message

    meter.start()
    t0 = time.perf_counter()
    runner.start("detail", work, done, on_error=failed)
    _run_loop(lambda: state["error"] is not None or probe.painted_at is not None)
    meter.stop()
    if state["error"]:
        raise RuntimeError(state["error"])
    if probe.painted_at is None:
        raise RuntimeError("the journal table never painted a row")
    rows = table.model().rowCount()
    # This path sets the whole session at once (no glance), so "fully indexed" is the same
    # moment as "first events" here; the window path measures the two stages.
    return {
        "seconds": {
            "first": probe.painted_at - t0,
            "indexed": probe.painted_at - t0,
            "data_set": state["set_at"] - t0,
        },
        "rows": rows,
        "path": "components",
        **meter.result(),
    }


MEASUREMENTS = {
    "core_first_rows": core_first_rows,
    "core_catalogue": core_catalogue,
    "core_first_open": core_first_open,
    "core_journal": core_journal,
    "core_plan": core_plan,
    "gui_list": gui_list,
    "gui_journal": gui_journal,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("name", choices=sorted(MEASUREMENTS))
    ap.add_argument("--home", required=True)
    ap.add_argument("--stage", choices=("first", "complete"), default="first")
    ap.add_argument("--action")
    ap.add_argument("--path", choices=("auto", "window", "components"), default="auto")
    ap.add_argument(
        "--warm-page-cache",
        action="store_true",
        help="read every file of the home once first (not timed), as bench/run.py does: a first "
        "open of a home whose files are not in the page cache costs much more CPU (see "
        "profile_notes.md, seventh session)",
    )
    args = ap.parse_args(argv)
    warmed = None
    if args.warm_page_cache:
        from run import warm_page_cache  # bench/run.py, beside this script

        warmed = round(warm_page_cache(Path(args.home)), 3)
    try:
        result = MEASUREMENTS[args.name](args)
        out = {"ok": True, **result}
    except Exception as exc:  # noqa: BLE001 - reported as a figure the table shows
        out = {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-2000:],
        }
    out["peak_rss_mb"] = peak_rss_mb()
    if warmed is not None:
        out["page_cache_warmed_s"] = warmed
    sys.stdout.write(json.dumps(out, default=str) + "\n")
    sys.stdout.flush()
    if os.environ.get("BENCH_FAST_EXIT"):
        os._exit(0)  # skip Qt/Python teardown: it is not part of any figure (and PySide may crash in it)


if __name__ == "__main__":
    main()
