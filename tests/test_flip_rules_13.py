"""Fast rules for mutants whose earlier kill did not hold when run again (tests/MUTATION.md, thirteenth
session): their killers are tests slower than the mutation run's budget. Expected values by hand."""

from __future__ import annotations

from inspector.plan import _common_edges
from inspector.store.index import rebuild_index


def test_the_common_edges_of_two_line_lists():
    assert _common_edges(["a", "X"], ["a", "Y"]) == (1, 0)  # a common first line, different last ones
    assert _common_edges(["a", "b"], ["a", "b"]) == (2, 0)  # all common: the head takes it, no overlap
    assert _common_edges(["a", "X", "c"], ["a", "Y", "c"]) == (1, 1)
    assert _common_edges(["X", "c"], ["Y", "Z", "c"]) == (0, 1)
    assert _common_edges([], ["a"]) == (0, 0)


def test_an_index_rebuilt_from_no_session_is_an_empty_list():
    assert rebuild_index([]) == b"[]"
