"""A function run in a forked copy of the process."""

from __future__ import annotations

import os

import pytest

from inspector.forked import Forked, ForkedError

BIG = list(range(300_000))  # inherited by the copy, never sent to it


def test_result_comes_back_and_memory_is_inherited():
    marker = {"set here": [1, 2.5, "é"]}
    assert Forked(lambda: (sum(BIG), marker)).result() == (sum(BIG), marker)


def test_a_big_result_is_read_whole():
    data = os.urandom(3 << 20)
    assert Forked(lambda: data).result() == data


def test_an_error_in_the_copy_is_raised_here():
    def boom():
        raise ValueError("nope")

    with pytest.raises(ForkedError, match="ValueError: nope"):
        Forked(boom).result()


def test_a_copy_that_dies_is_reported():
    with pytest.raises(ForkedError, match="without a result"):
        Forked(lambda: os._exit(3)).result()


def test_an_unpicklable_result_is_an_error():
    with pytest.raises(ForkedError, match="pickle|Pickl"):
        Forked(lambda: lambda: None).result()


def test_an_error_in_the_copy_keeps_its_traceback_and_is_logged(caplog):
    """The callers fall back to working in-process, so the copy's traceback must reach the log."""

    def deep_failure():
        raise KeyError("the copy's own frame")

    caplog.set_level("WARNING", logger="inspector")
    with pytest.raises(ForkedError) as info:
        Forked(deep_failure).result()
    assert "Traceback" in info.value.details and "deep_failure" in info.value.details
    (record,) = [r for r in caplog.records if r.name == "inspector.forked"]
    assert record.levelname == "WARNING" and "deep_failure" in record.getMessage()


def _cut_short(keep: int):
    """In the copy: its result's write sends only the first ``keep`` bytes, then the copy dies."""

    def work():
        def write(fd, data):
            os.write_real(fd, bytes(data)[:keep]) if keep else None
            os._exit(0)

        os.write_real = os.write
        os.write = write
        return list(range(200_000))

    return work


@pytest.mark.parametrize("keep", [1, 5, 70_000, 500_000])
def test_a_result_cut_short_is_reported_as_no_result(keep):
    """Rule: the result is unpickled as it arrives through the pipe; a copy that dies partway
    through sending it (in its first frame, or after several pipe-fulls) is "without a result",
    never a half-read value nor an unpickling error of its own."""
    with pytest.raises(ForkedError, match="without a result"):
        Forked(_cut_short(keep)).result()


def test_results_of_many_frames_and_large_objects_arrive_whole():
    """Rule: a result of many small objects (many pickle frames) and of large ones (written outside
    the frames) arrives equal, whatever the pipe's chunks."""
    value = ([str(i) * (i % 50) for i in range(50_000)], os.urandom(1 << 20), b"x" * 70_000)
    assert Forked(lambda: value).result() == value


def test_a_result_that_fails_to_pickle_partway_is_no_result():
    """Rule: the copy pickles its result straight into the pipe; when pickling fails after part of
    it went out, the parent gets "without a result" (never a partial value); when it fails before
    anything went out, the pickling error's own words (see the unpicklable test above)."""
    with pytest.raises(ForkedError, match="without a result"):
        Forked(lambda: [list(range(100_000)), lambda: None]).result()


def _reaped(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` (a child of this process) is gone and reaped: waiting on it is refused."""
    import time

    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)  # a zombie still answers; a reaped pid does not
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("lingers", [False, True])
def test_the_result_need_not_wait_for_the_copy_to_leave_and_the_copy_is_reaped(lingers):
    """``wait_for_exit=False``: the result is handed back once it is read; a copy still leaving
    after it (here it holds on for a second after its result, as a big copy's exit takes a while)
    is reaped by a thread. By default the copy is reaped before the result is handed back."""
    import time

    def work():
        return os.getpid()

    if lingers:
        import inspector.forked as forked_mod

        real_sink = forked_mod._PipeSink

        class SlowToLeave(real_sink):  # the copy's last write returns, then it waits before leaving
            def write(self, data):
                n = super().write(data)
                if data[-1:] == b".":  # the pickle's STOP opcode: the last byte of the result
                    os.close(self._fd)
                    time.sleep(1.0)
                return n

        forked_mod._PipeSink = SlowToLeave
        try:
            copy = Forked(work)
        finally:
            forked_mod._PipeSink = real_sink
    else:
        copy = Forked(work)
    started = time.monotonic()
    pid = copy.result(wait_for_exit=False)
    if lingers:
        assert time.monotonic() - started < 0.9  # not held until the copy left
    assert _reaped(pid)


def test_by_default_the_copy_is_reaped_before_its_result_is_handed_back():
    pid = Forked(os.getpid).result()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
