"""The window's heavy work (the catalogue, reading a session, indexing a run journal, planning
repairs) in child processes, so the window's Python never waits for it.

A thread of the window that parses a 200,000-line journal or plans a repair holds the GIL most
of the time, and every call Qt makes into Python while painting then waits for it: the window
stalls (``bench/profile_notes.md``, "The GUI stalls are GIL starvation"). Here a job runs in a
small pool of ``spawn``-ed children (a process that has a QApplication must never be forked; the
children import only the core) and the waiting thread of the window only polls.

Handing the result back must not stall either. What the window lists (the catalogue's rows, the
quick rows, search hits) crosses as flat records (:mod:`inspector.present.rows`): jobs marked
:func:`flat` come back as one plain pickle, decoded with one ``pickle.loads`` of a few
milliseconds (a list of more than :data:`FLAT_CHUNK` records in plain chunks, a chunk per step on
the window's thread: one load of 50,000 sessions' rows held the GIL 30-60 ms). Richer results (a session's data with its transcript, a journal's index, plan
summaries, a crosscheck's result) still come back in pieces, as follows: that still earns its
place because a session has no size bound but the sidecar's (128 MB). Measured on the bench home's
biggest session (5,000 messages, 11.1 MB pickled, load ~5 on 2 cores): one plain ``pickle.loads``
holds the GIL 12-21 ms, in pieces the steps take about 1 ms each; a session ten times as big would
stall the window past the 50 ms budget in one plain load. Any Python a thread of the window runs, even a
C call like ``pickle.loads``, makes each of the few hundred calls a paint of the session list
makes into Python wait for the GIL: one busy thread tripled a paint (``bench/profile_notes.md``,
"Fourth pass"). So the result is pickled in the child as a series of small pickles sharing one
memo (:func:`pickle_pieces`: the big lists and dicts of the result first, a few thousand objects
per piece, then the result itself, whose pickle mostly refers back to them), comes back as
bytes (through a private temporary file when it is large: reading a file releases the GIL), and
the window's own thread unpickles it a piece per step (:func:`load_steps`, run in small slices
between paints by ``workers.TaskRunner``; see :class:`Resume`).

Cancelling: ``check()`` in the window's thread raises; the job's slot in a shared flag array is
set, and the job's own ``check()`` (called between its steps in the child) raises there too.

``HERMES_INSPECTOR_NO_SUBPROCESS=1`` runs every job in the calling thread (debugging; the same
switch as :mod:`inspector.jobs.offload`). No Qt here.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import io
import multiprocessing
import os
import pickle
import struct
import tempfile
import threading
import time
import types
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, NamedTuple

from inspector import portable
from inspector.gcpause import gc_paused

WORKERS = 2  # a session's data and its big journal's index are read at the same time
SLOTS = 64  # cancel flags, reused round-robin
POLL_S = 0.02
PARENT_POLL_S = 0.2
INLINE_MAX = 1 << 20  # bigger results come back through a temporary file (the pool's own thread
# receives an inline result here and copies it holding the GIL; a file is read without it)
SHM = portable.SHM  # memory, never a disk, for such a file when the system has it (portable.handover_dir)
CHILD_NICE = 10
PIECE_WEIGHT = 3000  # objects (or kilobytes of text and bytes) per piece of a result's pickle
IN_PROCESS_ENV = "HERMES_INSPECTOR_NO_SUBPROCESS"  # "1": run jobs in the calling thread (debugging)

Check = Callable[[], None]


class JobCancelled(Exception):
    """Raised by a job's ``check()`` in the child when the window no longer wants its result."""


_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_flags: Any = None  # multiprocessing Array("b", SLOTS): 1 = cancel the job in that slot
_next_slot = 0
_child_flags: Any = None  # the same array, in a child


def _forget_the_parents_pool() -> None:
    """In a process forked from one that has a pool: that pool's children and its manager thread
    belong to the parent (threads are not forked), so a job sent to it here would wait for ever.
    This process starts its own pool when it first needs one."""
    global _lock, _pool, _flags, _next_slot, _relay
    _lock = threading.Lock()  # the parent's may have been held by another thread at the fork
    _pool, _flags, _next_slot = None, None, 0
    _relay = None  # the log relay's listener thread is the parent's too


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_forget_the_parents_pool)


# ---------------------------------------------------------------- in the child


def _child_init(parent: int, flags: Any, log_queue: Any = None) -> None:
    """In a child: keep the cancel flags, send its log records to the window (``log_queue``: the
    window's log file is written by the window alone), let go of the parent's stdout (a reader
    waiting for its end must not wait for us) and end when the parent is gone (``os._exit`` or a
    kill cannot tell the pool to stop)."""
    global _child_flags
    _child_flags = flags
    if log_queue is not None:
        import logging
        import logging.handlers

        root = logging.getLogger("inspector")
        root.addHandler(logging.handlers.QueueHandler(log_queue))
        root.setLevel(logging.DEBUG)  # the window's handlers decide what they keep
    try:
        os.nice(CHILD_NICE)  # background work: the window's own thread comes first for the CPU
    except OSError:
        pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


_MAGIC = b"HIJ1"  # a job result file: magic, count, sizes (u64), the bulk values, then the stream


def _run_in_child(slot: int, fn: Callable[..., Any], args: tuple) -> tuple[str, Any]:
    try:
        return _reply(slot, fn, args)
    finally:
        if _after_reply:  # what the job left for after its reply (see after_reply)
            later, _after_reply[:] = list(_after_reply), []
            threading.Thread(target=_run_later, args=(later,), name="after-reply", daemon=True).start()


def _reply(slot: int, fn: Callable[..., Any], args: tuple) -> tuple[str, Any]:
    def check() -> None:
        if _child_flags is not None and _child_flags[slot]:
            raise JobCancelled()

    value = fn(*args, check=check)
    plain = getattr(fn, FLAT, False)
    pickled = flat_pickled(value) if plain else pickle_pieces(value)
    if not pickled.bulk and len(pickled.stream) <= INLINE_MAX:
        return ("plain" if plain else "inline"), pickled.stream
    folder = portable.handover_dir()  # /dev/shm, else tempfile's folder (macOS, Windows)
    fd, name = tempfile.mkstemp(prefix="hermes-inspector-job-", suffix=".pickle", dir=folder)  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            sizes = [len(value) for value in pickled.bulk] + [len(pickled.stream)]
            fh.write(_MAGIC + struct.pack(f"<I{len(sizes)}Q", len(sizes), *sizes))
            for value in pickled.bulk:
                fh.write(value)
            fh.write(pickled.stream)
    except BaseException:
        os.unlink(name)
        raise
    return ("plain-file" if plain else "file"), name


FLAT = "flat_result"


_after_reply: list[Callable[[], None]] = []
AFTER_REPLY_DELAY_S = 0.05  # for the child's main thread to send the result (pickled, in its file)


def after_reply(fn: Callable[[], None]) -> None:
    """In a job running in a child of the pool: ``fn()`` once the job's result is handed back
    (a thread of the child calls it :data:`AFTER_REPLY_DELAY_S` after the result is pickled and
    written, by which time it is sent; the child's next job may already be running).
    Anywhere else (the job run in the calling thread, a test calling it): ``fn()`` now.

    For what nothing waits for but would delay the window's result: the catalogue's fact cache
    is written by a detached copy of the child, whose two forks (each copies the page tables of
    the child: a few hundred megabytes of heap at 50,000 sessions) and the copy-on-write faults
    while it lives cost the child 0.25 s there, before its rows were sent. Errors are logged."""
    if in_child():
        _after_reply.append(fn)
    else:
        fn()


def _run_later(todo: list[Callable[[], None]]) -> None:
    time.sleep(AFTER_REPLY_DELAY_S)
    for fn in todo:
        try:
            fn()
        except Exception:  # noqa: BLE001 - nobody waits for it: logged, never raised
            from inspector.log import get_logger

            get_logger(__name__).warning("work after a job's reply failed", exc_info=True)
    todo.clear()


def flat(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a job whose result is flat records (tuples, lists and dicts of builtins, as
    :mod:`inspector.present.rows` makes them): it comes back as one plain pickle and is decoded
    with one ``pickle.loads`` in the waiting thread, no pieces, no steps; but for a big list of
    records, which comes back in plain chunks unpickled a chunk per step (:func:`flat_pickled`).

    Measured on the 10,000-session bench home (11,500 rows, 2 shared cores, garbage collector
    paused as the window pauses it; ``bench/wire.py HOME --nogc``): as flat records the rows are
    2.1 MB and one ``pickle.loads`` takes 2.4-3.0 ms (at a load of 9: 2.4-6.5 ms); as the objects
    they were (the catalogue and its SessionRows) 4.8 MB and 38-43 ms (45-101 ms), or 39 ms in
    5 ms pieces with :func:`pickle_pieces`. A C call holds the GIL: the window's thread waits that
    long at most, well inside the 50 ms stall budget. In the child, flattening and one
    ``pickle.dumps`` cost 57 ms where :func:`pickle_pieces` of the objects cost 71 ms."""
    setattr(fn, FLAT, True)
    return fn


FLAT_CHUNK = 4000  # records per pickle of a big flat result: about a megabyte, 1-3 ms to unpickle


def flat_pickled(value: Any) -> Pickled:
    """A :func:`flat` job's result pickled: plainly (``stream``), or, where it is a list of more
    than :data:`FLAT_CHUNK` records or a tuple holding such lists (the catalogue's rows, the
    quick look's), each such list as plain pickles of :data:`FLAT_CHUNK` records (``bulk``) and
    ``stream`` the pickle of ``(the rest, where each list goes and in how many chunks)``.

    One ``pickle.loads`` of 57,500 rows (50,000 sessions, 11 MB) holds the GIL 22 ms with the
    collector paused and 30-60 ms with it running (load ~6 on 2 cores), in the window's waiting
    thread: the list's paints wait for it (the 54 ms stall at 50,000 sessions). In chunks, the
    window's own thread unpickles them a chunk per step (:func:`flat_steps`), with the
    collector paused, between paints; pickling them costs the child no more than one pickle."""
    if type(value) is list:
        spots = [-1] if len(value) > FLAT_CHUNK else []
    elif type(value) is tuple or (isinstance(value, tuple) and hasattr(type(value), "_make")):
        spots = [i for i, v in enumerate(value) if type(v) is list and len(v) > FLAT_CHUNK]
    else:
        spots = []
    if not spots:
        return Pickled(pickle.dumps(value, protocol=5), [])
    bulk: list[bytes] = []
    layout: list[tuple[int, int]] = []
    for at in spots:
        records = value if at < 0 else value[at]
        starts = range(0, len(records), FLAT_CHUNK)
        bulk += (pickle.dumps(records[i : i + FLAT_CHUNK], protocol=5) for i in starts)
        layout.append((at, len(starts)))
    rest = None if spots == [-1] else tuple(None if i in spots else v for i, v in enumerate(value))
    kind = type(value) if spots != [-1] else list
    return Pickled(pickle.dumps((kind, rest, layout), protocol=5), bulk)


def flat_steps(pickled: Pickled) -> Steps:
    """:func:`flat_pickled`'s result back, one chunk of records per step."""
    kind, rest, layout = pickle.loads(pickled.stream)
    chunks = iter(pickled.bulk)
    lists: dict[int, list] = {}
    for at, count in layout:
        records: list = []
        for _ in range(count):
            yield
            records += pickle.loads(next(chunks))
        lists[at] = records
    if rest is None:
        return lists[-1]
    fields = [lists.get(i, v) for i, v in enumerate(rest)]
    return kind._make(fields) if hasattr(kind, "_make") else kind(fields)


WARM_MODULES = ("inspector.jobs.offload", "inspector.jobs.session", "inspector.present.session_data")


def _warm(modules: tuple[str, ...]) -> None:
    """Import the jobs' modules: it only makes the pool start one more child, which imports the
    core meanwhile. The modules are named, not imported here: they import this module."""
    import importlib

    for name in modules:
        importlib.import_module(name)


# ---------------------------------------------------------------- in the window


def _executor() -> tuple[ProcessPoolExecutor, Any]:
    global _pool, _flags
    fresh = False
    with _lock:
        if _pool is None:
            ctx = multiprocessing.get_context("spawn")
            _flags = ctx.Array("b", SLOTS, lock=False)
            _pool = ProcessPoolExecutor(
                max_workers=WORKERS,
                mp_context=ctx,
                initializer=_child_init,
                initargs=(os.getpid(), _flags, _log_relay(ctx)),
            )
            fresh = True
        pool, flags = _pool, _flags
    if fresh:
        # A pool starts a child per job while none is idle. Start them all now, each importing the
        # core, so the first time two jobs run side by side the second does not wait for that.
        for _ in range(WORKERS):
            pool.submit(_warm, WARM_MODULES)
    return pool, flags


def start_pool() -> None:
    """Start the children now (the window calls this while it builds itself)."""
    if not in_process():
        _executor()


def _drop_pool(pool: ProcessPoolExecutor) -> None:
    """Forget a broken pool; the next job starts a fresh one."""
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


_relay: Any = None  # (queue, QueueListener): the children's log records, handled here


def _log_relay(ctx: Any) -> Any:
    """The queue the children's log records come back through (made once): a thread of the window
    hands each to the logger of its name here, so a job that logs its failure with
    ``logger.exception`` in a child (a planner's, a journal's) lands in the window's log file with
    its traceback. None when the queue cannot be made (the records are then dropped, as before)."""
    global _relay
    if _relay is None:
        import logging
        from logging.handlers import QueueListener

        class _ToLogger:
            def handle(self, record: logging.LogRecord) -> None:
                logging.getLogger(record.name).handle(record)

        try:
            queue = ctx.Queue()
        except (OSError, ImportError):
            return None
        listener = QueueListener(queue, _ToLogger())
        listener.start()
        _relay = (queue, listener)
    return _relay[0]


@atexit.register
def _shutdown() -> None:
    global _pool
    if _relay is not None:
        _relay[1].stop()
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def in_process() -> bool:
    return os.environ.get(IN_PROCESS_ENV) == "1"


def in_child() -> bool:
    """Whether this process is one of the pool's children (not the window, not a test running a
    job's function itself)."""
    return _child_flags is not None


def worker_pids() -> list[int]:
    """The children's process ids (for measurements)."""
    with _lock:
        pool = _pool
    procs = getattr(pool, "_processes", None) or {}
    return sorted(procs)


class Job:
    """A job started in a child; :meth:`wait` for its result."""

    def __init__(self, fn: Callable[..., Any], args: tuple):
        self._fn = fn
        self._args = args
        self._future: Future | None = None
        if in_process():
            return  # runs in wait(), in the calling thread
        global _next_slot
        try:
            pool, flags = _executor()
        except (OSError, ImportError, NotImplementedError):  # no processes here (a sandbox): do it in wait()
            return
        with _lock:
            self._slot = _next_slot
            _next_slot = (_next_slot + 1) % SLOTS
        flags[self._slot] = 0
        try:
            self._future = pool.submit(_run_in_child, self._slot, fn, args)
        except RuntimeError:  # shut down or broken since: start a fresh pool
            _drop_pool(pool)
            pool, flags = _executor()
            flags[self._slot] = 0
            self._future = pool.submit(_run_in_child, self._slot, fn, args)
        self._pool, self._flags = pool, flags

    def cancel(self) -> None:
        if self._future is not None:
            self._flags[self._slot] = 1
            self._future.cancel()
            self._future.add_done_callback(_discard)

    def wait(self, check: Check = lambda: None) -> Any:
        """The job's result. ``check`` raises to cancel (the child stops at its next ``check()``);
        an error in the child is raised here with its message."""
        return finish(self.wait_steps(check))

    def wait_steps(self, check: Check = lambda: None) -> Resume:
        """:meth:`wait` for the job's pickled result (here, in the calling thread), and leave its
        unpickling to whoever runs the returned steps (the window's thread, between paints)."""
        if self._future is None:
            return Resume.done(self._fn(*self._args, check=check))
        while True:
            try:
                check()
            except BaseException:
                self.cancel()
                raise
            try:
                kind, payload = self._future.result(timeout=POLL_S)
                break
            except FutureTimeout:
                continue
            except JobCancelled:
                check()  # cancelled from here: raises the caller's own exception
                raise
            except Exception as exc:
                if type(exc).__name__ == "BrokenProcessPool":
                    _log().error(
                        "a child process died; its pool is dropped (the next job starts a fresh one)"
                    )
                    _drop_pool(self._pool)
                raise  # the caller logs it (the window's TaskRunner, with the child's traceback chained)
        return handed_back(kind, payload)


def handed_back(kind: str, payload: Any) -> Resume:
    """What :func:`_run_in_child` sent, as the steps still to run here."""
    if kind == "plain":
        return Resume.done(pickle.loads(payload))
    if kind == "plain-file":
        pickled = _take_file(payload)
        if pickled.bulk:  # a big list of records, in chunks: unpickled a chunk per step
            return Resume(flat_steps(pickled))
        return Resume.done(pickle.loads(pickled.stream))
    return Resume(load_steps(_take_file(payload) if kind == "file" else payload))


def _log():
    from inspector.log import get_logger  # lazily: a child imports logging only when it logs

    return get_logger(__name__)


def start_job(fn: Callable[..., Any], *args: Any) -> Job:
    """Start ``fn(*args, check=...)`` in a child. ``fn`` must be a module-level function, its
    arguments and result picklable; ``check()`` raises :class:`JobCancelled` once cancelled."""
    return Job(fn, args)


def run_job(fn: Callable[..., Any], *args: Any, check: Check = lambda: None) -> Any:
    """``start_job(fn, *args).wait(check)``."""
    return start_job(fn, *args).wait(check)


def run_job_steps(fn: Callable[..., Any], *args: Any, check: Check = lambda: None) -> Resume:
    """``start_job(fn, *args).wait_steps(check)``: the result still to be unpickled, in steps."""
    return start_job(fn, *args).wait_steps(check)


def _discard(future: Future) -> None:
    """A result nobody waits for any more: remove its temporary file."""
    try:
        kind, payload = future.result()
    except BaseException:  # noqa: BLE001 - cancelled or failed: nothing to clean up
        return
    if kind in ("file", "plain-file"):
        try:
            os.unlink(payload)
        except OSError:
            pass


def _take_file(name: str) -> Pickled:
    """A result file's values, each read into a ``bytes`` of its own (a read runs without the
    GIL: a thread of the window copies tens of megabytes without holding up its paints)."""
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | portable.O_BINARY)
        try:
            head = portable.pread(fd, 8, 0)
            if len(head) != 8 or head[:4] != _MAGIC:
                raise OSError(errno.EINVAL, "not a job result", name)
            (count,) = struct.unpack("<I", head[4:])
            sizes = struct.unpack(f"<{count}Q", _pread_all(fd, 8 * count, 8))
            offset = 8 + 8 * count
            values = []
            for size in sizes:
                values.append(_pread_all(fd, size, offset))
                offset += size
        finally:
            os.close(fd)
    finally:
        try:
            os.unlink(name)
        except OSError:
            pass
    return Pickled(values[-1], values[:-1])


def _pread_all(fd: int, size: int, offset: int) -> bytes:
    data = portable.pread(fd, size, offset)
    if len(data) == size:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = portable.pread(fd, size - got, offset + got)
        if not more:
            raise OSError(errno.EIO, "a job result file is shorter than it says")
        parts.append(more)
        got += len(more)
    return b"".join(parts)


@contextlib.contextmanager
def no_collections() -> Iterator[None]:
    """For a result becoming objects in the window's process (rows, a session): the garbage
    collector waits meanwhile (the many new objects would start it again and again).

    What was made is no longer frozen (``gc.freeze``) afterwards. With the list's rows flat
    records, a full collection with 11,500 rows alive takes 2 ms (16 ms as objects), with the
    biggest session (5,000 messages) alive 3 ms (``bench/wire.py``); and on the 10,000-session
    bench home (load ~5 on 2 cores) the catalogue figure's longest stall was 25-46 ms without the
    freeze against 51-62 ms with it, in four alternating runs each. The window's ``TaskRunner``
    freezes what each turn of its steps made all the same (issue 18, eighth session): at 50,000
    sessions the rows' young collections took 6-7.5 ms after every turn and a middle one 45 ms."""
    with gc_paused():
        yield


# ---------------------------------------------------------------- a result in pieces

Steps = Generator[None, None, Any]


class Resume:
    """What is left of a job when its bytes are in: ``steps``, a generator whose every ``next()``
    is a small piece of work (a millisecond or so) and whose return value is the result. The
    window's :class:`~inspector.gui.workers.TaskRunner` runs a task's steps on its own thread, a
    few milliseconds' worth per turn of the event loop; :func:`finish` runs them all at once."""

    def __init__(self, steps: Steps):
        self.steps = steps

    @classmethod
    def done(cls, value: Any) -> Resume:
        """A result with nothing left to do."""
        return cls(_value(value))

    def then(self, more: Callable[[Any], Steps]) -> Resume:
        """These steps, then ``more(result)``'s (a generator function); its return value is the result."""
        return Resume(_chain(self.steps, more))


def _value(value: Any) -> Steps:
    return value
    yield  # a generator that returns at once


def _chain(first: Steps, more: Callable[[Any], Steps]) -> Steps:
    value = yield from first
    return (yield from more(value))


def finish(value: Any) -> Any:
    """A :class:`Resume`'s result, every step run now (other values are their own result)."""
    if not isinstance(value, Resume):
        return value
    with no_collections():
        return run_steps(value.steps)


def run_steps(steps: Steps) -> Any:
    """Every step of ``steps`` now, in this thread; their return value."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


_LEAVES = (str, bytes, bytearray)
_ATOMS = (int, float, complex, bool, type(None))
LEAF_BYTES = 1024  # a string or bytes value weighs one per kilobyte
BULK_BYTES = 1 << 20  # a bytes value this big travels beside the pickle (see pickle_pieces)
SAMPLE_OVER = 64  # a container with more children is cut into pieces by the weight of a few of them
SAMPLES = 16
_NEXT_BUFFER, _MEMOIZE, _POP = b"\x97", b"\x94", b"0"
_BY_NAME = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType)


def _pieces(root: Any, bulk: list[bytes] | None = None) -> list[list]:
    """The pieces :func:`pickle_pieces` pickles before ``root``: lists of objects found inside it,
    each weighing about :data:`PIECE_WEIGHT` (its objects and kilobytes not in an earlier piece),
    deepest first, so that no piece and not ``root``'s own pickle is big. Walks lists, tuples,
    sets, dicts (their values) and the attributes of plain objects and dataclasses; of a
    container with more than :data:`SAMPLE_OVER` children all of one type, only a sample. ``bytes`` values of
    :data:`BULK_BYTES` or more that it walks go to ``bulk`` instead (when given), once each."""
    seen: set[int] = set()
    out: list[list] = []

    def walk(obj: Any) -> int:
        kind = type(obj)
        if kind in _ATOMS:
            return 0
        if kind in _LEAVES:
            if bulk is not None and kind is bytes and len(obj) >= BULK_BYTES:
                if id(obj) not in seen:
                    seen.add(id(obj))
                    bulk.append(obj)
                return 0
            return 1 + len(obj) // LEAF_BYTES
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        if kind in (list, tuple, set, frozenset):
            children = obj
            weight = 1
        elif kind is dict:
            children = obj.values()
            weight = 1 + len(obj)  # the keys
        else:
            children = _attributes(obj)
            if children is None:
                return 1  # something else (an array, a path...): pickled where it is found
            if isinstance(obj, (list, tuple, set, frozenset)):
                children = [*obj, *children]
            elif isinstance(obj, dict):
                children = [*obj.values(), *children]
            weight = 1
        if not isinstance(children, (list, tuple)):
            children = list(children)
        if len(children) > SAMPLE_OVER and _alike(children):
            return weight + sampled(children)
        pending: list = []
        pending_weight = 0
        for child in children:
            w = walk(child)
            if not w:
                continue
            pending.append(child)
            pending_weight += w
            if pending_weight >= PIECE_WEIGHT:
                out.append(pending)
                pending, pending_weight = [], 0
        return weight + pending_weight

    def sampled(children: list) -> int:
        # Many children of one kind (rows, messages) are much alike: weigh a few, evenly spread, and cut
        # them all into pieces of about PIECE_WEIGHT by that average. The others are not
        # walked (that cost the child as much as pickling everything twice): a big value
        # deep in one of them makes its piece heavier, and a big bytes value there is
        # pickled in place instead of going to ``bulk``.
        n = len(children)
        picked = range(0, n, max(1, n // SAMPLES))
        if sum(1 for i in picked if type(children[i]) in _ATOMS) * 2 > len(picked):
            return 1 + n // 16  # numbers, mostly: not memoized, so a piece would only copy them
        weights = [w for w in (walk(children[i]) for i in picked) if w]  # (0: seen before)
        average = sum(weights) / len(weights) if weights else 1.0
        per_piece = max(1, int(PIECE_WEIGHT / max(average, 1.0)))
        for start in range(0, n, per_piece):
            out.append(children[start : start + per_piece])
        return 0

    try:
        walk(root)
    except RecursionError:  # nested deeper than Python walks: one pickle, as pickle itself does it
        return []
    return out


def _alike(children: list) -> bool:
    """Whether a few children, evenly spread, are all of one type (rows, messages: not the
    values of a record, where one of them may be a list of thousands)."""
    step = max(1, len(children) // SAMPLES)
    kinds = {type(children[i]) for i in range(0, len(children), step)}
    return len(kinds) == 1


def _attributes(obj: Any) -> list | None:
    """The attribute values a plain object is pickled with (``__dict__`` and ``__slots__``), or
    None for an object pickled some other way."""
    kind = type(obj)
    if isinstance(obj, _BY_NAME):
        return None  # pickled by reference (its module and name), not by what it holds
    if (
        getattr(kind, "__reduce__", None) is not object.__reduce__
        or getattr(kind, "__reduce_ex__", None) is not object.__reduce_ex__
        or getattr(kind, "__getstate__", None) is not getattr(object, "__getstate__", None)
    ):
        return None
    values = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    for klass in kind.__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                values.append(getattr(obj, name))
    return values


class Pickled(NamedTuple):
    """A result as :func:`pickle_pieces` makes it: the pickles, and the big ``bytes`` values they
    refer to (their memo's first entries), kept apart so that they can be read straight from a
    file into their own ``bytes`` (the copy runs without the GIL) instead of being unpickled."""

    stream: bytes
    bulk: list[bytes]


def pickle_pieces(obj: Any) -> Pickled:
    """``obj`` pickled as a series of pickles with one memo: first a pickle that puts each
    :attr:`Pickled.bulk` value in the memo (handed to the unpickler as out-of-band buffers, no
    copy), then :func:`_pieces`, then ``obj`` itself (whose pickle refers to what the pieces
    hold). :func:`load_steps` reads them back one per step."""
    bulk: list[bytes] = []
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    with gc_paused():
        pieces = _pieces(obj, bulk)
        if bulk:
            pickler.memo = {id(value): (i, value) for i, value in enumerate(bulk)}
            # PROTO 5, then for each value NEXT_BUFFER MEMOIZE POP (memo index i), then None
            buffer.write(b"\x80\x05" + (_NEXT_BUFFER + _MEMOIZE + _POP) * len(bulk) + b"N.")
        for piece in pieces:
            pickler.dump(piece)
        pickler.dump(obj)
    return Pickled(buffer.getvalue(), bulk)


def load_steps(pickled: Pickled | bytes) -> Steps:
    """Unpickle :func:`pickle_pieces`' result (or one plain pickle), one pickle per step; the
    last one is the result."""
    stream, bulk = (pickled, []) if isinstance(pickled, (bytes, bytearray)) else pickled
    reader = io.BytesIO(stream)
    unpickler = pickle.Unpickler(reader, buffers=iter(bulk))
    end = len(stream)
    while True:
        value = unpickler.load()
        if reader.tell() >= end:
            return value
        yield


def loads_pieces(pickled: Pickled | bytes) -> Any:
    """:func:`load_steps`, all at once."""
    return finish(Resume(load_steps(pickled)))
