"""The mutation profile's number of examples holds for every property (tests/conftest.py).

Rule: under ``--hypothesis-profile=mutation`` a property whose own ``@settings`` asks for more examples
than the profile runs the profile's number (Hypothesis lets an explicit ``max_examples`` win over any
profile, so such properties were slower than the mutation run's fast-first cap and never ran for a
mutant); one asking fewer keeps its number, and outside that profile nothing changes.
"""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from tests import conftest


def _config(profile):
    return SimpleNamespace(
        getoption=lambda name, default=None: profile if name == "hypothesis_profile" else default
    )


def _property(examples: int, seen: list[int]):
    @settings(max_examples=examples, database=None, derandomize=True)
    @given(st.integers())
    def prop(n):
        seen.append(n)

    return prop


class _Methods:
    @settings(max_examples=400, database=None, derandomize=True)
    @given(st.integers())
    def test_prop(self, n):
        _Methods.seen.append(n)

    seen: list[int] = []


def test_under_the_mutation_profile_a_larger_own_count_runs_the_profiles() -> None:
    cap = settings.get_profile("mutation").max_examples
    seen: list[int] = []
    many, few = _property(400, seen), _property(3, [])
    items = [SimpleNamespace(obj=many), SimpleNamespace(obj=few), SimpleNamespace(obj=object())]
    conftest.pytest_collection_modifyitems(_config("mutation"), items)
    assert many._hypothesis_internal_use_settings.max_examples == cap
    assert few._hypothesis_internal_use_settings.max_examples == 3
    many()
    assert 0 < len(seen) <= cap  # the property runs the profile's number, not its own 400
    assert many._hypothesis_internal_use_settings.derandomize  # the property's other settings stay


def test_a_methods_settings_are_capped_too() -> None:
    cap = settings.get_profile("mutation").max_examples
    bound = _Methods().test_prop
    conftest.pytest_collection_modifyitems(_config("mutation"), [SimpleNamespace(obj=bound)])
    assert _Methods.test_prop._hypothesis_internal_use_settings.max_examples == cap


def test_outside_the_mutation_profile_nothing_changes() -> None:
    many = _property(400, [])
    for profile in (None, "project", "ci"):
        conftest.pytest_collection_modifyitems(_config(profile), [SimpleNamespace(obj=many)])
        assert many._hypothesis_internal_use_settings.max_examples == 400
