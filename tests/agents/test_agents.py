"""Agents by name: the baselines, and the agent loaders that packages plug in by entry point."""

from __future__ import annotations

import pytest

import domino_env
from domino_env import agents
from domino_env.agents import GreedyAgent, RandomAgent, make_agent


@pytest.fixture
def loaders(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Replace the installed loaders with a dict the test fills."""
    found: dict = {}
    monkeypatch.setattr(agents, "agent_loaders", lambda: found)
    return found


def test_baselines_by_name_are_seeded() -> None:
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert isinstance(make_agent("greedy"), GreedyAgent)
    env = domino_env.raw_env("all_fives")

    def choices(seed: int) -> list[int]:
        """``random``'s actions (seeded ``seed``) in every seat of a round, where it had a choice."""
        agent, chosen = make_agent("random", seed=seed), []
        env.reset(seed=0)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            action = agent(env, obs)
            if obs["action_mask"].sum() > 1:
                chosen.append(action)
            env.step(action)
        return chosen

    assert len(choices(3)) >= 5 and choices(3) == choices(3) != choices(4)


def test_other_names_go_to_the_loaders(loaders: dict) -> None:
    env = domino_env.raw_env("classic")
    calls = []

    def load(name, env_, seed):
        calls.append((name, env_, seed))
        return make_agent("greedy", seed) if name == "mine" else None

    loaders["mine"] = load
    assert isinstance(make_agent("mine", seed=4, env=env), GreedyAgent)
    assert calls == [("mine", env, 4)]
    with pytest.raises(
        ValueError, match=r"unknown agent 'theirs': neither a baseline .* agent loaders: mine"
    ):
        make_agent("theirs")


def test_a_loader_that_cannot_import_says_so(loaders: dict) -> None:
    loaders["checkpoint"] = ImportError("No module named 'torch'")
    with pytest.raises(ValueError, match=r"checkpoint \(unavailable: No module named 'torch'; pip install"):
        make_agent("agents/classic.pt")
    with pytest.raises(ValueError, match="must be a string or a path"):
        make_agent(3)  # type: ignore[arg-type]


def test_the_trainer_registers_its_checkpoint_loader() -> None:
    pytest.importorskip("torch")
    found = agents.agent_loaders()
    assert "checkpoint" in found and callable(found["checkpoint"])
    env = domino_env.raw_env("classic", num_players=2)
    agent = make_agent("agents/classic.pt", env=env)
    assert type(agent).__name__ == "PolicyAgent"
    with pytest.raises(ValueError, match=r"give make_agent the environment .* env=env\)"):
        make_agent("agents/classic.pt")
