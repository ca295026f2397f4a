"""Same bytes as hermes-webui on randomized real-shaped homes (a few dozen seeds).

Skipped unless ``HERMES_WEBUI_SRC`` names a hermes-webui checkout (commit df65251d5) that this
interpreter (or ``HERMES_WEBUI_PYTHON``) can import. Many seeds: ``python -m tests.differential.run``.
"""

from __future__ import annotations

import pytest

from tests.differential.harness import HermesChild, hermes_src, run_seed
from tests.differential.homes import ACTIONS, make_case

# and two that found defects: 41 (a sidecar nested too deeply: hermes' audit fails), 386 (a journal
# line of two objects and a blank line)
# 852, 990: a stream id stored as a number (repair-interrupted, recover-journal), whose journal
# hermes reads as str(id) and the inspector once refused
SEEDS = [*range(24), 41, 386, 1910, 852, 990]  # 1910: restore-backup, a file too deep for hermes

needs_hermes = pytest.mark.skipif(
    hermes_src() is None, reason="HERMES_WEBUI_SRC is not set to a hermes-webui checkout"
)


@pytest.fixture(scope="module")
def child(tmp_path_factory):
    proc = HermesChild(hermes_src(), tmp_path_factory.mktemp("hermes-child"))
    yield proc
    proc.close()


@pytest.fixture(autouse=True)
def _private_write_log(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / "inspector-log"))


@needs_hermes
@pytest.mark.parametrize("seed", SEEDS)
def test_the_inspector_writes_what_hermes_writes(seed: int, child: HermesChild, tmp_path) -> None:
    outcome = run_seed(seed, child, tmp_path / "work")
    assert outcome.verdict in ("same", "both refuse", "known refusal"), (
        f"seed {seed} ({outcome.action}): {outcome.detail} {outcome.info}"
    )


def test_the_seeds_cover_every_action() -> None:
    assert {make_case(s).action for s in SEEDS} == set(ACTIONS)
