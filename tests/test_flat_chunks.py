"""A flat job's big list of records crosses to the window in plain chunks, unpickled a chunk per
step on the window's thread (one load of 50,000 sessions' rows held the GIL 30-60 ms: the
window's 54 ms stall), and comes back equal to the one plain pickle it replaces."""

from __future__ import annotations

import pickle
import time

import pytest

from inspector.demo import build_demo_home
from inspector.home import Home, locate_home
from inspector.jobs import pool
from inspector.jobs.offload import CatalogueResult, catalogue_job, quick_rows_job


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory) -> Home:
    return locate_home(build_demo_home(tmp_path_factory.mktemp("chunks") / "demo-home", now=time.time()).home)


def _rows(n: int) -> list[tuple]:
    return [
        (f"s{i}", f"title {i}", float(i), None, [("k", "warning", "m")] if i % 7 else []) for i in range(n)
    ]


def _steps(pickled: pool.Pickled) -> tuple[object, int]:
    """The value and how many steps it took."""
    steps = pool.flat_steps(pickled)
    n = 0
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value, n
        n += 1


def test_a_small_flat_result_is_one_plain_pickle():
    value = _rows(pool.FLAT_CHUNK)
    pickled = pool.flat_pickled(value)
    assert pickled.bulk == [] and pickle.loads(pickled.stream) == value


def test_a_long_list_of_records_comes_back_equal_a_chunk_per_step():
    value = _rows(3 * pool.FLAT_CHUNK + 1)
    pickled = pool.flat_pickled(value)
    assert len(pickled.bulk) == 4
    assert all(len(pickle.loads(chunk)) <= pool.FLAT_CHUNK for chunk in pickled.bulk)
    back, steps = _steps(pickled)
    assert back == value and type(back) is list and steps == 4


def test_a_named_tuple_keeps_its_type_and_its_small_fields():
    rows = _rows(2 * pool.FLAT_CHUNK + 5)
    value = CatalogueResult(rows, "s3", 12, ["default", "work"], [("k", "error", "m")])
    pickled = pool.flat_pickled(value)
    assert len(pickled.bulk) == 3
    back, _ = _steps(pickled)
    assert type(back) is CatalogueResult and back == value
    plain_tuple = (rows, 1, rows[:3])
    back, _ = _steps(pool.flat_pickled(plain_tuple))
    assert type(back) is tuple and back == plain_tuple


def test_the_catalogue_and_the_quick_look_through_the_hand_over_file(demo_home, monkeypatch):
    """With chunks of 3 rows the demo home's results go the chunked way: through the private
    file, as steps, equal to the job's own value; no file left behind."""
    monkeypatch.setattr(pool, "FLAT_CHUNK", 3)
    for job, args in (
        (quick_rows_job, (demo_home.session_dir,)),
        (catalogue_job, (demo_home, 1_800_000_000.0)),
    ):
        kind, name = pool._run_in_child(0, job, args)
        assert kind == "plain-file"
        resume = pool.handed_back(kind, name)
        back = pool.run_steps(resume.steps)
        assert back == job(*args)
        with pytest.raises(FileNotFoundError):
            open(name, "rb")
