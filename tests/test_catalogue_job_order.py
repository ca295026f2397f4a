"""The catalogue job's last steps in the child (issue 18, the window's first open): the rows
flattened as they are and sorted once as flat records, the session to show first picked without
sorting every row. The rule they keep: the same records, in the same order, and the same first
session as the walk over ``Catalogue.sorted_rows()`` they replace (kept below as the reference),
for every column and direction of the list's sort, on catalogues with ties, missing and NaN
times, findings and pending turns whose journals hold output or not."""

from __future__ import annotations

import math
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inspector.load
from inspector.catalogue import Catalogue, SessionRow, SidecarSummary
from inspector.findings import ERROR, INFO, WARNING, Finding
from inspector.home import locate_home
from inspector.jobs.offload import catalogue_job
from inspector.present.columns import Column, sorted_records, sorted_rows
from inspector.present.rows import ListRow, flat_row
from inspector.present.session_data import first_needing_attention
from inspector.store.journal import RUN_JOURNAL_DIR, is_valid_journal_id, journal_path

TIMES = st.one_of(
    st.none(),
    st.sampled_from([1.0e9, 1.7e9, 1.7e9 + 1, 0.0]),  # ties, and 0 ("no time") among them
    st.floats(min_value=0, max_value=2e9),
    st.just(math.nan),
)
SEVERITIES = st.sampled_from([INFO, WARNING, ERROR])


@st.composite
def catalogues(draw):
    """Rows as the catalogue holds them (sidecar, state.db record, findings, a pending turn
    waiting for its journal), and which of those journals hold output (size > 0) or are empty."""
    count = draw(st.integers(min_value=0, max_value=30))
    ids = draw(
        st.lists(
            st.sampled_from([f"s{i:02d}" for i in range(40)] + ["../x", "bad id"]),
            min_size=count,
            max_size=count,
            unique=True,
        )
    )
    rows: dict[str, SessionRow] = {}
    journals: dict[str, int] = {}  # "<sid>/<run>" -> size
    for sid in ids:
        meta = {
            "updated_at": draw(TIMES),
            "title": draw(st.sampled_from(["", "Alpha", "alpha", "Beta", "zeta"])),
        }
        if draw(st.booleans()):
            meta["message_count"] = draw(st.integers(0, 50))
        marker = None
        if draw(st.integers(0, 3)) == 0:
            stream = draw(st.sampled_from(["run1", "run2", "bad/run", 7]))
            marker = {"_journal_retry_stream_id": stream}
            if isinstance(stream, str) and draw(st.booleans()):
                journals[f"{sid}/{stream}"] = draw(st.sampled_from([0, 10]))
        sidecar = None
        if draw(st.integers(0, 4)) != 0:
            sidecar = SidecarSummary(sid, f"/nowhere/{sid}.json", 1, 1.0, meta=meta, pending_marker=marker)
        state_db = None
        if draw(st.booleans()):
            state_db = {"id": sid, "messages": draw(st.integers(0, 60)), "last_activity": draw(TIMES)}
        findings = [Finding("k", sev, "m", session_id=sid) for sev in draw(st.lists(SEVERITIES, max_size=2))]
        row = SessionRow(
            sid,
            title=meta["title"],
            profile=draw(st.sampled_from(["default", "Work", "work"])),
            sidecar=sidecar,
            has_bak=draw(st.booleans()),
            state_db=state_db,
            findings=findings,
        )
        row.complete = True
        rows[sid] = row
    return Catalogue(rows, []), journals


def _reference_first(home, cat: Catalogue) -> str | None:
    """The walk over sorted_rows() that first_needing_attention replaced."""
    rows = cat.sorted_rows()
    for row in rows:
        marker = row.sidecar.pending_marker if row.sidecar is not None else None
        stream = marker.get("_journal_retry_stream_id") if isinstance(marker, dict) else None
        if isinstance(stream, str) and is_valid_journal_id(stream) and is_valid_journal_id(row.session_id):
            try:
                if journal_path(home.session_dir, row.session_id, stream).stat().st_size > 0:
                    return row.session_id
            except (OSError, ValueError):
                pass
    for row in rows:
        if row.needs_attention:
            return row.session_id
    return rows[0].session_id if rows else None


def _reference_records(cat: Catalogue, sort) -> list:
    """The job's rows as it made them before: newest first, then sorted as ListRows."""
    records = [flat_row(r) for r in cat.sorted_rows()]
    if sort is not None:
        by_id = {f[0]: f for f in records}
        records = [by_id[r.session_id] for r in sorted_rows([ListRow(f) for f in records], *sort)]
    return records


def _same(a: list, b: list) -> bool:
    """Equal record lists, NaN times counted equal to themselves (as `is` does in `==` of a list)."""
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b, strict=True))


def _home(tmp_path_factory, journals: dict[str, int]):
    base = tmp_path_factory.mktemp("home")
    home = locate_home(base)
    home.session_dir.mkdir(parents=True)
    for key, size in journals.items():
        sid, run = key.split("/", 1)
        if not (is_valid_journal_id(sid) and is_valid_journal_id(run)):
            continue
        path = home.session_dir / RUN_JOURNAL_DIR / sid / f"{run}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
    return home


SORTS = [None] + [(c, d) for c in range(len(Column.HEADERS)) for d in (False, True)]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(catalogues())
def test_the_first_session_is_the_one_the_walk_over_sorted_rows_finds(tmp_path_factory, drawn):
    cat, journals = drawn
    home = _home(tmp_path_factory, journals)
    assert first_needing_attention(home, cat) == _reference_first(home, cat)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(catalogues(), st.sampled_from(SORTS))
def test_the_job_sends_the_rows_in_the_order_the_slow_path_gave(tmp_path_factory, monkeypatch, drawn, sort):
    cat, journals = drawn
    home = _home(tmp_path_factory, journals)
    monkeypatch.setattr(inspector.load, "load_catalogue", lambda home, now, **kw: cat)
    result = catalogue_job(home, time.time(), sort)
    assert _same(result.rows, _reference_records(cat, sort))
    assert result.first == _reference_first(home, cat)
    assert result.attention == sum(1 for r in cat.rows.values() if r.needs_attention)


@settings(max_examples=60)
@given(catalogues(), st.sampled_from(SORTS[1:]))
def test_flat_records_sort_as_their_list_rows_do(drawn, sort):
    cat, _ = drawn
    records = [flat_row(r) for r in cat.rows.values()]
    by_rows = [r.flat() for r in sorted_rows([ListRow(f) for f in records], *sort)]
    assert _same(sorted_records(records, *sort), by_rows)


def test_a_row_without_findings_is_flattened_as_healthy():
    row = SessionRow("s1", sidecar=SidecarSummary("s1", "/x/s1.json", 1, 1.0, meta={"updated_at": 5.0}))
    healthy = flat_row(row)
    row.findings = [Finding("k", WARNING, "m", session_id="s1")]
    flagged = flat_row(row)
    assert healthy[:12] == flagged[:12]
    assert healthy[12:] == ("ok", False, "", ())
    assert flagged[12:14] == (WARNING, True) and flagged[14] and len(flagged[15]) == 1


def test_the_first_session_without_nan_times_prefers_journal_output_then_attention(tmp_path_factory):
    """The path without a NaN time (the drawn catalogues above mostly hold one, which walks the
    sorted rows): an older session waiting for its journal's output comes first, before a newer
    one needing attention; with no output waiting, the newest one needing attention (a newer row
    whose only finding is INFO does not need it)."""

    def row(sid: str, when: float, marker: dict | None = None, severity: str | None = None) -> SessionRow:
        meta = {"updated_at": when, "title": sid}
        sidecar = SidecarSummary(sid, f"/nowhere/{sid}.json", 1, 1.0, meta=meta, pending_marker=marker)
        findings = [Finding("k", severity, "m", session_id=sid)] if severity else []
        made = SessionRow(sid, title=sid, sidecar=sidecar, findings=findings)
        made.complete = True
        return made

    rows = [
        row("s01", 1.7e9 + 3, severity=INFO),
        row("s02", 1.7e9 + 2, severity=WARNING),
        row("s03", 1.7e9 + 1, marker={"_journal_retry_stream_id": "run1"}),
        row("s04", 1.7e9),
    ]
    cat = Catalogue({r.session_id: r for r in rows}, [])
    with_output = _home(tmp_path_factory, {"s03/run1": 10})
    assert first_needing_attention(with_output, cat) == "s03" == _reference_first(with_output, cat)
    without = _home(tmp_path_factory, {"s03/run1": 0})
    assert first_needing_attention(without, cat) == "s02" == _reference_first(without, cat)


# flat records as the child sorts them: every field the list's sort keys read, with ties in each,
# times as floats, ints or None (NaN only where drawn: the tuple-key path then decides)
_FLAT_TIMES = st.one_of(
    st.none(),
    st.sampled_from([0, 5, 1.7e9, 1.7e9 + 1, 5.0, -0.0, 0.0]),
    st.floats(min_value=-1e10, max_value=1e10),
    st.integers(min_value=-(2**60), max_value=2**60),
)


@st.composite
def flat_records(draw, nan: bool = False):
    count = draw(st.integers(min_value=0, max_value=40))
    ids = draw(
        st.lists(
            st.sampled_from([f"s{i:02d}" for i in range(30)] + ["S01", "a", "é"]),
            min_size=count,
            max_size=count,
        )
    )
    times = _FLAT_TIMES | st.just(math.nan) if nan else _FLAT_TIMES
    out = []
    for sid in ids:
        out.append(
            (
                sid,
                draw(st.sampled_from(["", "Alpha", "alpha", "ALPHA", "Beta", "ß", "ss"])),
                draw(st.sampled_from(["default", "Work", "work"])),
                draw(st.sampled_from(["sidecar", "both", "state.db", ".bak only"])),
                draw(st.one_of(st.none(), st.integers(0, 9))),
                draw(st.one_of(st.none(), st.integers(0, 9))),
                draw(times),
                False,
                False,
                None,
                None,
                (),
                draw(st.sampled_from(["ok", "info", "warning", "error", "other"])),
                False,
                draw(st.sampled_from(["", "gone", "cut off"])),
                (),
            )
        )
    return out


@settings(max_examples=300)
@given(flat_records(), st.sampled_from(SORTS[1:]))
def test_flat_records_sort_by_value_then_id_as_the_tuple_keys_do(records, sort):
    """The sort by the column's value alone after one by id (no NaN): the order of the tuple keys,
    ties, equal records (duplicate ids) and numbers of both kinds included."""
    from inspector.present.columns import _record_key

    expected = sorted(records, key=_record_key(sort[0]), reverse=sort[1])
    got = sorted_records(records, *sort)
    assert [id(r) for r in got] == [id(r) for r in expected]


@settings(max_examples=150)
@given(flat_records(nan=True), st.sampled_from(SORTS[1:]))
def test_flat_records_with_nan_times_sort_as_the_tuple_keys_do(records, sort):
    from inspector.present.columns import _record_key

    expected = sorted(records, key=_record_key(sort[0]), reverse=sort[1])
    assert [id(r) for r in sorted_records(records, *sort)] == [id(r) for r in expected]


def test_times_are_compared_as_floats_as_the_tuple_keys_compare_them():
    """Two integer times a float cannot tell apart are a tie (broken by the id), as in the
    tuple key (``float(time)``), not ordered as the integers they are."""
    row = ("", "", "default", "sidecar", None, None, 0, False, False, None, None, (), "ok", False, "", ())
    a = ("a",) + row[1:6] + (2**60 + 1,) + row[7:]
    b = ("b",) + row[1:6] + (2**60,) + row[7:]
    for descending in (False, True):
        got = sorted_records([a, b], Column.LAST_ACTIVITY, descending)
        assert got == ([b, a] if descending else [a, b])


@settings(max_examples=100)
@given(catalogues(), st.data())
def test_early_flat_records_are_made_again_for_rows_that_gained_findings(drawn, data):
    """The job's records made (a step at a time) while it waited for the copies, then taken where
    the row gained no finding since and made again where it did: the records of flattening the
    rows at the end, however many steps ran (none included) and whichever rows gained findings."""
    from inspector.jobs.offload import EarlyRecords

    cat, _ = drawn
    early = EarlyRecords()
    early.STEP = data.draw(st.integers(1, 7))
    step = early.start(cat)
    for _ in range(data.draw(st.integers(0, 8))):
        if not step():
            break
    for row in cat.rows.values():
        if data.draw(st.booleans()):
            row.findings.append(Finding("late", data.draw(SEVERITIES), "m", session_id=row.session_id))
    got = early.records(cat)
    assert _same(got, [flat_row(r) for r in cat.rows.values()])


def test_early_flat_records_are_not_used_for_a_catalogue_that_changed_otherwise():
    from inspector.jobs.offload import EarlyRecords

    rows = {f"s{i}": SessionRow(f"s{i}", title=f"t{i}") for i in range(5)}
    cat = Catalogue(dict(rows), [])
    early = EarlyRecords()
    step = early.start(cat)
    while step():
        pass
    cat.rows["s2"] = SessionRow("s2", title="another row object")
    assert early.records(cat)[2][1] == "another row object"
    cat.rows["s9"] = SessionRow("s9")
    assert [r[0] for r in early.records(cat)] == [*rows, "s9"]
    assert EarlyRecords().records(cat) == [flat_row(r) for r in cat.rows.values()]  # never started
