"""Policy-guided search (``search:[N:]<checkpoint>``): names, fairness, play, bad input."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import domino_env
from domino_env.agents import DEFAULT_WORLDS, MOST_WORLDS, legal_actions, make_agent
from tests.support.helpers import assert_decides_alike, hidden_deal_positions, play_with
from training.agents.guided import GuidedSearchAgent
from training.agents.loader import PolicyAgent
from training.eval.evaluate import contestant
from training.model.names import parse_guided_name
from training.model.networks import ActorCritic

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = {name: str(ROOT / "agents" / f"{name}.pt") for name in domino_env.SPECS}


def test_names() -> None:
    path = SHIPPED["classic"]
    assert parse_guided_name(f"search:{path}") == (DEFAULT_WORLDS, path)
    assert parse_guided_name(f"search:3:{path}") == (3, path)
    for other in ("search", "search:8", "greedy", path):
        assert parse_guided_name(other) is None
    for worlds in (0, MOST_WORLDS + 1, 10**20):  # 1 to MOST_WORLDS, as search:N
        with pytest.raises(
            ValueError, match=f"search:N:CHECKPOINT must be an integer from 1 to {MOST_WORLDS}"
        ):
            parse_guided_name(f"search:{worlds}:{path}")
    assert parse_guided_name(f"search:{MOST_WORLDS}:{path}") == (MOST_WORLDS, path)
    env = domino_env.raw_env("classic")
    agent = make_agent(f"search:3:{path}", seed=0, env=env)
    assert isinstance(agent, GuidedSearchAgent) and agent.worlds == 3
    c = contestant(f"search:{path}")  # an evaluation contestant keeps the name, and the policy's table
    assert c.label == f"search:{path}" and c.config is not None and c.config.env.variant == "classic"
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("search:agents/nobody.pt", env=env)


def test_a_policy_of_another_table_is_refused() -> None:
    with pytest.raises(ValueError, match="obs_size"):  # a policy of another table
        make_agent(f"search:{SHIPPED['classic']}", env=domino_env.raw_env("all_fives"))


@pytest.mark.parametrize("name", sorted(domino_env.SPECS))
def test_shipped_policies_do_not_peek(name: str) -> None:
    """At choices throughout a round, in deals seat 0 cannot tell apart (on the shipped policy's
    table), the policy decides alike (the search it guides: the next test)."""
    table = domino_env.spec(name).tables()[0]
    positions = hidden_deal_positions(name, table["num_players"], table["teams"], want=2, alternatives=1)
    assert_decides_alike(positions, lambda env: make_agent(SHIPPED[name], seed=5, env=env))


def policy_model(name: str) -> ActorCritic:
    """The shipped policy's network, loaded once for the many agents a test makes."""
    agent = make_agent(SHIPPED[name], seed=0, env=domino_env.raw_env(name))
    assert isinstance(agent, PolicyAgent)
    return agent.model


class Recording(GuidedSearchAgent):
    """A guided search that keeps every worlds x actions matrix it picks from in ``seen``."""

    def __init__(self, model: ActorCritic, worlds: int, *, seed: int, seen: list[np.ndarray]) -> None:
        super().__init__(model, worlds, seed=seed)
        self.seen = seen

    def pick(self, values: np.ndarray) -> int:
        self.seen.append(values)
        return super().pick(values)


@pytest.mark.parametrize("name", sorted(domino_env.SPECS))
def test_guided_search_values_every_world_alike_whatever_the_hidden_deal(name: str) -> None:
    """Stronger than the same decision (the gate keeps the policy's favourite in most positions,
    so a peeking search could hide behind it): in deals seat 0 cannot tell apart, the same seed
    gives the same worlds x actions values, every one."""
    table = domino_env.spec(name).tables()[0]
    model = policy_model(name)
    for games in hidden_deal_positions(name, table["num_players"], table["teams"], want=2):
        seen: list[np.ndarray] = []
        for env in games:
            agent = Recording(model, 2, seed=5, seen=seen)
            agent(env.unwrapped, env.observe("player_0"))
        assert len(seen) == len(games)
        for values in seen[1:]:
            np.testing.assert_array_equal(values, seen[0])


def test_a_sampling_policy_does_not_peek() -> None:
    """``PolicyAgent(sample=True)``: its draws come from its own seeded stream, its
    probabilities from the observation alone."""
    table = domino_env.spec("all_fives").tables()[0]
    positions = hidden_deal_positions("all_fives", table["num_players"], table["teams"])

    model = policy_model("all_fives")
    assert_decides_alike(positions, lambda env: PolicyAgent(model, sample=True, seed=5))


@pytest.mark.parametrize("name", ["all_fives", "blind", "cross", "domino3d", "metro"])
def test_rollouts_in_lockstep_are_each_rollout_played_alone(name: str) -> None:
    """``play_out`` batches every rollout into one forward pass a step and reuses its encoders
    from decision to decision: each sim ends as it ends played alone by a fresh agent."""
    env = domino_env.raw_env(name)
    env.reset(seed=3)
    rules, rng = env.rules, random.Random(0)
    batched = make_agent(f"search:{SHIPPED[name]}", seed=0, env=env)
    assert isinstance(batched, GuidedSearchAgent)
    for _decision in range(2):  # (the same agent each time: encoders left by the last decision)
        view = env.view(env.agent_selection)
        sims = []
        for _ in range(2):
            world = rules.sample_world(env.game, view, rng)
            for action in legal_actions(env.observe(env.agent_selection))[:3].tolist():
                sims.append(world.clone())
                rules.apply(sims[-1], action)
        alone = [sim.clone() for sim in sims]
        batched.play_out(env, sims)
        for sim, single in zip(sims, alone, strict=True):
            GuidedSearchAgent(batched.model).play_out(env, [single])  # (its own new encoder)
            assert sim.round_over and single.events == sim.events and single.scores == sim.scores
        env.step(int(legal_actions(env.observe(env.agent_selection))[0]))


def test_guided_search_plays_a_whole_match_alike_with_the_same_seed() -> None:
    runs = []
    for _ in range(2):
        env = domino_env.raw_env("blitz")
        agents = [make_agent(f"search:2:{SHIPPED['blitz']}", seed=1, env=env), make_agent("greedy", seed=2)]
        played, finished = play_with("blitz", agents, seed=4)
        assert finished.unwrapped.game.match_over
        runs.append(played)
    assert runs[0] == runs[1]


def test_an_action_overrules_the_policy_only_when_it_is_clearly_better() -> None:
    """Worlds x searched actions (the policy's favourite first): a small gain buried in noise
    keeps the favourite, a steady one in the same worlds wins, and the best of two sure ones."""
    agent = make_agent(f"search:4:{SHIPPED['classic']}", seed=0, env=domino_env.raw_env("classic"))
    assert isinstance(agent, GuidedSearchAgent) and agent.confidence == 1.0
    noisy = np.array([[0.0, 9.0], [0.0, -8.0], [0.0, 7.0], [0.0, -6.0]])  # mean gain 0.5, se 4.3
    steady = np.array([[0.0, 1.0], [5.0, 6.5], [-3.0, -2.0], [2.0, 3.0]])  # gain 1.0-1.5 in every world
    assert agent.pick(noisy) == 0 and agent.pick(steady) == 1
    both = np.hstack([steady, steady[:, 1:] + 0.5])
    assert agent.pick(both) == 2
    agent.confidence = 0.0  # no gate: the best mean, as plain search plays
    assert agent.pick(noisy) == 1
