"""RLlib integration: the multi-agent env against the AEC game, the masked-action check, and a
short PPO run on a local Ray instance (2 CPUs) in which no masked action may be sampled."""

from __future__ import annotations

import random
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

import domino_env
from tests.support.extras import extra

pytestmark = pytest.mark.ray
extra("ray.rllib")

from domino_env.integrations.rllib import (  # noqa: E402 - after the skip
    MASK,
    OBS,
    SHARED,
    DominoMultiAgentEnv,
    MaskedActionCounter,
    env_name,
    module_agent,
    ppo_config,
    register_envs,
)

TABLES = [
    (name, {"num_players": rules.player_counts[0]}) for name, rules in sorted(domino_env.VARIANTS.items())
] + [("all_fives", {"num_players": 4, "teams": True}), ("blitz", {"num_players": 3})]


def play_both(variant: str, options: dict[str, Any], seed: int) -> None:
    """The same random game through DominoMultiAgentEnv and the AEC env: the same decisions,
    observations and, per seat, the same total reward; only the mover observes."""
    env = DominoMultiAgentEnv({"variant": variant, **options})
    aec = domino_env.make(variant, **options)
    rnd = random.Random(seed)
    obs, infos = env.reset(seed=seed)
    aec.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    aec_totals = dict.fromkeys(env.possible_agents, 0.0)
    done = False
    while not done:
        (mover,) = obs  # exactly one seat observes: the one to move
        assert mover == aec.agent_selection and set(infos) == {mover}
        assert obs[mover] in env.observation_spaces[mover]
        expected = aec.observe(mover)
        assert np.array_equal(obs[mover][OBS], expected["observation"])
        assert np.array_equal(obs[mover][MASK], expected["action_mask"])
        action = rnd.choice(np.flatnonzero(obs[mover][MASK]).tolist())
        obs, rewards, terminated, truncated, infos = env.step({mover: action})
        aec.step(action)
        assert set(rewards) == set(env.possible_agents)  # every seat, every step
        for agent in env.possible_agents:
            totals[agent] += rewards[agent]
            aec_totals[agent] += aec.rewards[agent]
        assert not truncated["__all__"]
        done = terminated["__all__"]
    assert set(obs) == set(env.possible_agents)  # a last observation for every seat
    assert all(terminated[a] for a in env.possible_agents)
    assert all(not o[MASK].any() for o in obs.values())
    assert totals == pytest.approx(aec_totals)
    assert any(totals.values())


@pytest.mark.parametrize(("variant", "options"), TABLES, ids=[f"{v}-{o}" for v, o in TABLES])
@pytest.mark.parametrize("episode", ["round", "match"])
def test_multi_agent_env_matches_the_aec_game(variant: str, options: dict[str, Any], episode: str) -> None:
    for seed in range(2 if episode == "round" else 1):
        play_both(variant, {**options, "episode": episode, "reward": "points"}, seed)


def test_action_space_samples_legal_moves_and_errors() -> None:
    env = DominoMultiAgentEnv({"variant": "all_fives", "num_players": 2})
    obs, _ = env.reset(seed=1)
    (mover,) = obs
    for _ in range(20):
        assert obs[mover][MASK][env.action_spaces[mover].sample()] == 1
    with pytest.raises(ValueError, match="is to move"):
        env.step({"nobody": 0})
    illegal = int(np.flatnonzero(obs[mover][MASK] == 0)[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step({mover: illegal})
    with pytest.raises(ValueError, match="unknown option"):
        DominoMultiAgentEnv({"variant": "all_fives", "colour": "red"})
    with pytest.raises(ValueError, match="unknown variant"):
        ppo_config("chess")


def test_every_variant_is_registered() -> None:
    from ray.tune.registry import ENV_CREATOR, _global_registry

    names = register_envs()
    assert names == [env_name(v) for v in domino_env.VARIANTS]
    for variant in domino_env.VARIANTS:
        env = _global_registry.get(ENV_CREATOR, env_name(variant))({})
        assert env.variant == variant
        env.reset(seed=0)


class FakeAgentEpisode:
    def __init__(self, masks: list[list[int]], actions: list[int]) -> None:
        self.observations = [{OBS: np.zeros(3, np.float32), MASK: np.array(m, np.float32)} for m in masks]
        self.actions = actions

    def __len__(self) -> int:
        return len(self.actions)

    def get_observations(self, indices: slice) -> list[dict[str, np.ndarray]]:
        return self.observations[indices]

    def get_actions(self, indices: slice) -> list[int]:
        return self.actions[indices]


def test_masked_action_counter_finds_masked_actions() -> None:
    logged: dict[str, float] = {}
    logger = SimpleNamespace(log_value=lambda key, value, reduce: logged.__setitem__(key, value))
    finished = SimpleNamespace(
        agent_episodes={
            # the second action is masked
            "player_0": FakeAgentEpisode([[1, 0, 0], [0, 1, 1], [0, 0, 1]], [0, 0, 2]),
            "player_1": FakeAgentEpisode([[1, 1, 0]], [1]),
            "player_2": FakeAgentEpisode([], []),
        }
    )
    running = SimpleNamespace(agent_episodes={"player_0": FakeAgentEpisode([[0, 1, 0], [1, 1, 0]], [2, 1])})
    MaskedActionCounter().on_sample_end(samples=[finished, running], metrics_logger=logger)
    assert logged == {"actions_checked": 6, "masked_actions_sampled": 2}  # the running episode's chunk too


def test_ppo_config_takes_the_variant_once() -> None:
    with pytest.raises(ValueError, match="give the variant once"):
        ppo_config("cross", {"variant": "all_fives", "num_players": 2})


# With 0 runners the learner trains on the sampler's own chunks and appends a bootstrap step to
# each (the last action repeated): a count made after that read 2 masked actions per iteration.
@pytest.mark.parametrize("num_env_runners", [0, 1])
def test_rllib_ppo_trains_without_sampling_masked_actions(
    ray_local: ModuleType, num_env_runners: int
) -> None:
    options = {"num_players": 2, "episode": "round"}
    config = ppo_config("all_fives", options, hidden=(32, 32), num_env_runners=num_env_runners)
    config = config.training(train_batch_size_per_learner=256, minibatch_size=64, num_epochs=1)
    config = config.debugging(seed=0)
    algo = config.build_algo()
    try:
        for _ in range(3):
            runners = algo.train()["env_runners"]
        module = algo.get_module(SHARED)
    finally:
        algo.stop()
    steps = runners["num_env_steps_sampled_lifetime"]
    assert steps >= 3 * 256
    # every sampled action was checked once (one per env step, but those of the two seats that
    # may still wait for their next observation)...
    assert steps - 2 <= runners["actions_checked"] <= steps
    assert runners["masked_actions_sampled"] == 0  # ...and none was masked
    assert runners["num_episodes_lifetime"] > 10
    # the trained module plays through our agent interface
    from training.eval.arena import head_to_head

    summary = head_to_head(
        "all_fives", module_agent(module), domino_env.agents.make_agent("random", 0), games=4
    )
    assert summary.games == 4
