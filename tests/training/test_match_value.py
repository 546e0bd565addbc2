"""The match-level value of a round's end (``run.match_value``): the dynamic program on a
hand-computed case, the model of a round, and the rewards the collector gives each round."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch

from tests.support.training_helpers import tiny_config
from training.model.config import ConfigError
from training.model.networks import ActorCritic, Architecture
from training.rl.match_value import MatchValue, match_values, round_deltas
from training.rl.rollout import LocalCollector

# A round adds a point to A (0.3), two to B (0.5) or nothing (0.2); a match to 2. Without the
# rounds that change nothing, A's point comes with 0.375 and B's two with 0.625. By hand, for
# penalty scores (lower wins), from the last states back:
#   V(1, 1) = 0.375 * (-1: A reaches 2 first) + 0.625 * (+1: B reaches 3)  =  0.25
#   V(1, 0) = 0.375 * (-1)                    + 0.625 * (+1: 1 < 2)        =  0.25
#   V(0, 1) = 0.375 * V(1, 1)                 + 0.625 * (+1: 0 < 3)        =  0.71875
#   V(0, 0) = 0.375 * V(1, 0)                 + 0.625 * (+1: 0 < 2)        =  0.71875
HAND_DELTAS = {(0, 0): 0.2, (1, 0): 0.3, (0, 2): 0.5}
HAND_VALUES = [[0.71875, 0.71875], [0.25, 0.25]]


def test_match_values_on_a_hand_computed_case() -> None:
    assert match_values(2, True, HAND_DELTAS) == pytest.approx(np.array(HAND_VALUES))
    # points scores (higher wins): every terminal flips, so every value does
    assert match_values(2, False, HAND_DELTAS) == pytest.approx(-np.array(HAND_VALUES))


def test_a_round_that_brings_both_to_the_target_together_is_a_tie() -> None:
    values = match_values(2, True, {(1, 1): 1.0})
    assert values[0, 0] == values[1, 1] == 0.0  # ... to 2-2 together
    assert values[0, 1] == 1.0 and values[1, 0] == -1.0  # 1-2: B got there, A wins


def plain_match_value(
    a: int, b: int, target: int, lower: bool, deltas: dict[tuple[int, int], float]
) -> float:
    """V(a, b) by its definition, recursively: a round that changes nothing is played again,
    so V = (sum over the other changes) / (1 - P(no change))."""

    @functools.cache
    def value(a: int, b: int) -> float:
        if a >= target or b >= target:
            return float((a < b) - (a > b)) if lower else float((a > b) - (a < b))
        moving = sum(p * value(a + da, b + db) for (da, db), p in deltas.items() if (da, db) != (0, 0))
        return moving / (1.0 - deltas.get((0, 0), 0.0))

    return value(a, b)


@pytest.mark.parametrize("seed", range(4))
def test_the_dynamic_program_is_the_recursion_by_definition(seed: int) -> None:
    """Random models of a round (a no-change round among them), a match to 12: the table the
    program fills in one sweep is the value the definition gives, at every score."""
    rng = np.random.default_rng(seed)
    changes = {(int(a), int(b)) for a, b in rng.integers(0, 7, size=(6, 2))} | {(0, 0)}
    weights = rng.random(len(changes))
    deltas = dict(zip(sorted(changes), (weights / weights.sum()).tolist(), strict=True))
    for lower in (True, False):
        values = match_values(12, lower, deltas)
        plain = [[plain_match_value(a, b, 12, lower, deltas) for b in range(12)] for a in range(12)]
        assert values == pytest.approx(np.array(plain), abs=1e-12)


@pytest.mark.parametrize(
    ("deltas", "words"),
    [({(0, 0): 1.0}, "never change"), ({(-1, 0): 1.0}, "0 or more"), ({}, "0 or more")],
)
def test_a_model_without_a_match_end_is_refused(deltas: dict[tuple[int, int], float], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        match_values(5, True, deltas)


def test_the_classic_model_is_symmetric_and_knows_who_leads() -> None:
    deltas = round_deltas("classic", {"num_players": 2})
    assert sum(deltas.values()) == pytest.approx(1.0)
    assert all(deltas[b, a] == pytest.approx(p) for (a, b), p in deltas.items())
    value = MatchValue("classic", {"num_players": 2})
    assert value((0, 0)) == pytest.approx((0.0, 0.0), abs=1e-9)
    behind, ahead = value((90, 20))  # penalty scores: 90 is close to losing at 101
    assert behind < -0.5 < 0.5 < ahead and behind == pytest.approx(-ahead)


def test_the_model_needs_two_sides() -> None:
    with pytest.raises(ValueError, match="two sides"):
        round_deltas("classic", {"num_players": 3})
    with pytest.raises(ConfigError, match="two sides"):
        tiny_config(None, "run.match_value=true", options="{num_players: 3, episode: match}")
    with pytest.raises(ConfigError, match="episode to match"):
        tiny_config(None, "run.match_value=true", options="{num_players: 2, episode: round}")


def test_each_round_is_an_episode_rewarded_by_its_change_in_match_value(
    gae_calls: list[dict[str, np.ndarray]],
) -> None:
    """Random self-play of whole Classic matches in 2 lockstep envs, every step logged: each
    seat's last transition of a round ends there (done) with the change in its side's match
    value, the match's last round with the outcome minus the value it started from."""
    config = tiny_config(
        None, "run.num_envs=2", "run.match_value=true", "run.reward_scale=2.0", options="{num_players: 2}"
    )
    collector = LocalCollector(config, np.random.default_rng(3))
    value = collector.match_value
    assert value is not None
    log: list[list[tuple[int, Any, bool]]] = [[] for _ in collector.envs]
    for e, env in enumerate(collector.envs):
        original = env.step

        def step(action: Any, env: Any = env, original: Any = original, e: int = e) -> None:
            seat, round_index = env.possible_agents.index(env.agent_selection), env.round_index
            original(action)
            over = all(env.terminations.values())
            ended = over or env.round_index != round_index  # the next round has been dealt
            log[e].append((seat, env.outcomes() if over else env.side_scores, ended))

        env.step = step  # type: ignore[method-assign]
    torch.manual_seed(0)
    steps = 400
    collector.collect(
        ActorCritic(Architecture(collector.obs_size, collector.num_actions, hidden=[16])), steps
    )
    (arrays,) = gae_calls

    expected_rewards = np.zeros(2 * steps)
    expected_done = np.zeros(2 * steps, dtype=bool)
    rounds = matches = 0
    for e in range(2):
        pending: dict[int, int] = {}
        start = (0, 0)
        for t, (seat, after, ended) in enumerate(log[e]):
            pending[seat] = t * 2 + e  # no pool: one transition per env and step, env order
            if not ended:
                continue
            rounds += 1
            before = value(start)
            if isinstance(after, list):  # the match's end: each seat's outcome
                matches += 1
                gains = [after[s] - before[s] for s in range(2)]
                start = (0, 0)
            else:
                now = value(after)
                gains = [now[s] - before[s] for s in range(2)]
                start = after
            for s, j in pending.items():
                expected_rewards[j] = gains[s] * 2.0
                expected_done[j] = True
            pending = {}
    assert matches >= 1 and rounds > matches  # whole matches, cut into rounds
    assert arrays["done"].tolist() == expected_done.tolist()
    assert arrays["rewards"] == pytest.approx(expected_rewards, abs=1e-6)
    assert np.all(arrays["rewards"][~arrays["done"]] == 0.0)  # nothing but the rounds' ends
