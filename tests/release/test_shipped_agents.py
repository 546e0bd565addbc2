"""Release check: every variant marked shipped (``shipped=True`` in its spec; ``make
release-check``) ships its trained agent ``agents/<name>.pt`` with its results row, and that agent
still loads and plays on its table. A variant being written (not marked) is not asked for one; an
agent for a variant that is not marked fails too (mark it, or remove the file)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from domino_env import raw_env
from domino_env.registry import shipped
from training.agents import resolve_agent
from training.model.checkpoint import load_model

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "agents"
SHIPPED = shipped()


def test_the_shipped_agents_are_those_of_the_shipped_variants() -> None:
    marked = set(shipped())  # (read now: tests/training/test_scaffold.py marks a variant of its own)
    found = {p.stem for p in AGENTS.glob("*.pt")}
    assert not marked - found, (
        f"marked shipped without agents/<name>.pt: {sorted(marked - found)} "
        "(python -m training ship configs/<name>.yaml)"
    )
    stray = sorted(found - marked)
    assert not stray, f"agents of variants not marked shipped (mark them, or remove the files): {stray}"
    with (AGENTS / "results.csv").open() as handle:
        rows = {row["variant"]: row for row in csv.DictReader(handle) if row["agent"] == "policy"}
    assert set(rows) == marked
    assert all(row["agent"] == "policy" and int(row["vs_greedy_games"]) >= 2000 for row in rows.values())


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_agent_loads_on_its_table_and_plays(name: str) -> None:
    """A change to the network or the observation that would break a shipped agent fails here."""
    path = AGENTS / f"{name}.pt"
    assert path.is_file(), f"{name} is marked shipped but has no agents/{name}.pt"
    _, config = load_model(path)
    assert config.env.variant == name and path.stat().st_size < 4_000_000
    env = raw_env(config.env.variant, **config.env.options)
    agent = resolve_agent(str(path), env)
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent(env, observation)]
