"""The suite's Hypothesis settings hold no time limit (tests/conftest.py): speed targets live in bench/."""

from hypothesis import given, settings
from hypothesis import strategies as st


def test_no_property_test_has_a_deadline() -> None:
    # Hypothesis' own default is 200 ms per example: a loaded machine failed a correct property with it
    assert settings().deadline is None


@given(st.integers())
def test_a_given_test_runs_under_the_same_settings(n: int) -> None:
    assert settings().deadline is None and isinstance(n, int)
