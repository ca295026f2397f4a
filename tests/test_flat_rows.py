"""The session list's rows cross from a child to the window as flat records (issue 15): tuples of
builtins that one plain ``pickle.loads`` decodes, with no class to look up, and that say in the
window what the catalogue's rows said."""

from __future__ import annotations

import pickle
import pickletools
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.demo import build_demo_home
from inspector.findings import ERROR, Finding
from inspector.home import Home, locate_home
from inspector.jobs import pool
from inspector.jobs.offload import catalogue_job, quick_rows_job
from inspector.load import load_catalogue
from inspector.present.columns import Column, sort_key
from inspector.present.rows import ListRow, finding_of, flat_finding, flat_row

_BUILTINS = (str, int, float, bool, type(None))


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory) -> Home:
    return locate_home(build_demo_home(tmp_path_factory.mktemp("flat") / "demo-home", now=time.time()).home)


def _builtins_only(value) -> bool:
    if isinstance(value, _BUILTINS):
        return True
    if type(value) in (tuple, list):
        return all(_builtins_only(v) for v in value)
    if type(value) is dict:
        return all(_builtins_only(k) and _builtins_only(v) for k, v in value.items())
    return False


def _globals_in(data: bytes) -> list[str]:
    """The classes and functions a pickle names (what unpickling must import and call)."""
    return [
        str(arg) for op, arg, _ in pickletools.genops(data) if op.name in ("GLOBAL", "STACK_GLOBAL", "INST")
    ]


def test_the_catalogue_rows_cross_as_builtins_only(demo_home):
    result = catalogue_job(demo_home, time.time())
    assert result.rows and _builtins_only(result.rows) and _builtins_only(result.home_findings)
    assert _globals_in(pickle.dumps(result.rows, protocol=5)) == []  # one plain loads, no class looked up


def test_a_list_row_says_what_the_catalogue_row_says(demo_home):
    cat = load_catalogue(demo_home, now=time.time())
    assert any(row.findings for row in cat.rows.values())
    for row in cat.rows.values():
        listed = ListRow(pickle.loads(pickle.dumps(flat_row(row))))
        assert (listed.session_id, listed.title, listed.profile, listed.where) == (
            row.session_id,
            row.title or "",
            row.profile,
            row.where,
        )
        assert (listed.sidecar_messages, listed.state_db_messages, listed.last_activity) == (
            row.sidecar_messages,
            row.state_db_messages,
            row.last_activity,
        )
        assert (listed.has_bak, listed.in_index, listed.state_db_profile) == (
            row.has_bak,
            row.in_index,
            row.state_db_profile,
        )
        assert listed.sidecar_path == (row.sidecar.location if row.sidecar is not None else None)
        assert (listed.health, listed.needs_attention) == (row.health, row.needs_attention)
        assert listed.findings == row.findings
        for column in range(len(Column.HEADERS)):
            if column != Column.PROBLEM:  # (a SessionRow has no worked-out problem words)
                assert sort_key(listed, column) == sort_key(row, column)


def test_a_sorted_catalogue_comes_in_the_order_asked_for(demo_home):
    newest = catalogue_job(demo_home, time.time())
    by_title = catalogue_job(demo_home, time.time(), (Column.TITLE, False))
    assert sorted(newest.rows) == sorted(by_title.rows)
    titles = [ListRow(f).title.casefold() for f in by_title.rows]
    assert titles == sorted(titles)


def test_new_findings_work_out_health_attention_and_problem_again(demo_home):
    row = ListRow(flat_row(next(iter(load_catalogue(demo_home, now=time.time()).rows.values()))))
    broken = Finding(
        "sidecar_unreadable", ERROR, "cannot be parsed", session_id=row.session_id, action="restore-backup"
    )
    row.findings = [broken]
    assert (row.health, row.needs_attention) == ("error", True) and row.problem
    assert row.flat()[-1] == (flat_finding(broken),)
    row.findings = []
    assert (row.health, row.needs_attention, row.problem) == ("ok", False, "")


def test_a_finding_survives_the_trip():
    f = Finding("k", "warning", "m", session_id="s", action="a", path="/p", origin="hermes")
    assert finding_of(pickle.loads(pickle.dumps(flat_finding(f)))) == f


def test_a_flat_job_comes_back_as_one_plain_pickle(demo_home, monkeypatch):
    """A job marked ``pool.flat`` is pickled once, plainly (no pieces, no steps)."""
    kind, payload = pool._run_in_child(0, quick_rows_job, (demo_home.session_dir,))
    assert kind == "plain" and pickle.loads(payload) == quick_rows_job(demo_home.session_dir)
    monkeypatch.setattr(pool, "INLINE_MAX", 10)  # a big one goes through the hand-over file, still plain
    kind, name = pool._run_in_child(0, quick_rows_job, (demo_home.session_dir,))
    assert kind == "plain-file"
    assert pickle.loads(pool._take_file(name).stream) == quick_rows_job(demo_home.session_dir)


def test_a_flat_job_through_the_pool_needs_no_steps(demo_home):
    resume = pool.run_job_steps(quick_rows_job, demo_home.session_dir)
    assert pool.run_steps(resume.steps) == quick_rows_job(demo_home.session_dir)


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(0, 2e9), st.text(max_size=3))


@st.composite
def _rows(draw):
    """Catalogue rows of every shape the list meets: a sidecar (read or not, any metadata value
    where a number or a stream id is expected, with or without a pending marker), a state.db
    record (with or without a message count), a .bak, findings or none."""
    from inspector.catalogue import SessionRow, SidecarSummary

    row = SessionRow(draw(st.text(min_size=1, max_size=4)), title=draw(st.sampled_from(["", "t"])))
    row.has_bak = draw(st.booleans())
    row.in_index = draw(st.booleans())
    if draw(st.booleans()):
        meta = {
            k: draw(_VALUES)
            for k in ("message_count", "active_stream_id", "updated_at")
            if draw(st.booleans())
        }
        marker = draw(st.one_of(st.none(), st.fixed_dictionaries({"_journal_retry_stream_id": _VALUES})))
        error = draw(st.sampled_from([None, "", "cannot read: gone"]))
        row.sidecar = SidecarSummary(row.session_id, f"/s/{row.session_id}.json", 1, 2.0, meta, error, marker)
    if draw(st.booleans()):
        row.state_db = {k: draw(_VALUES) for k in ("messages", "last_activity") if draw(st.booleans())}
        row.state_db_profile = "default"
    if draw(st.booleans()):
        row.findings.append(Finding("stale_pending_turn", ERROR, "m", row.session_id))
    row.complete = True
    return row


@given(_rows())
def test_a_flat_row_reads_what_the_row_s_own_properties_say(row):
    """flat_row works out where the row lives, its message counts and its stream hints itself
    (each attribute read once: the child flattens 57,500 rows at 50,000 sessions); the same
    answers as the row's properties and stream_hints, on any row."""
    from inspector.present.rows import stream_hints

    by_properties = (
        row.session_id,
        row.title or "",
        row.profile,
        row.where,
        row.sidecar_messages,
        row.state_db_messages,
        row.last_activity,
        row.has_bak,
        row.in_index,
        row.state_db_profile,
        row.sidecar.location if row.sidecar is not None else None,
        stream_hints(row.sidecar),
    )
    flat = flat_row(row)
    assert flat[: len(by_properties)] == by_properties
    assert [type(v) for v in flat[: len(by_properties)]] == [type(v) for v in by_properties]
