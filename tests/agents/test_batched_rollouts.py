"""Batched greedy rollouts (``domino_env.vector.rollouts``) give the search agents' own numbers.

For every table a kernel loads, sampled worlds at decisions of random games are rolled out
both ways - ``rollout_value`` (a world at a time in Python, as ``SearchAgent.world_values``) and
:class:`GreedyRollouts` (every world and action in one kernel batch) - and every value must be
equal as a float, ties broken alike by each world's ``random.Random`` stream; worlds with
scores set near the match target check the match-ending value. The agents' decisions are then
the same with batching on and off.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

import domino_env
from domino_env.agents import make_agent
from domino_env.agents.search import SearchAgent, batched_rollouts, rollout_value, standing
from domino_env.vector.rollouts import GreedyRollouts

TABLES: list[tuple[str, dict[str, Any]]] = [
    (name, dict(table)) for name, spec in domino_env.SPECS.items() for table in spec.tables()
]
TABLES += [("blitz", {"num_players": 3, "draw": False}), ("classic", {"num_players": 2, "draw": False})]
TABLES += [  # larger sets (double-nine, Cross's double-seven) and the presets the solvers read
    ("classic", {"num_players": 2, "max_pip": 9}),
    ("all_fives", {"num_players": 3, "max_pip": 9}),
    ("cross", {"num_players": 4, "max_pip": 7}),
    *(
        (name, {"preset": preset})
        for name, spec in domino_env.SPECS.items()
        for preset in spec.presets
        if name != "osel"  # (Osel's tiny hands never pass 12 points: no score is written, no match ends)
    ),
]


def batched_tables() -> list[tuple[str, dict[str, Any]]]:
    return [
        (name, options)
        for name, options in TABLES
        if GreedyRollouts.refusal(domino_env.raw_env(name, **options).rules) is None
    ]


def table_id(table: tuple[str, dict[str, Any]]) -> str:
    name, options = table
    return "-".join([name, *(f"{key}={value}" for key, value in sorted(options.items()))])


def decisions(name: str, options: dict[str, Any], games: int, seed: int):
    """(env, game clone) at random decisions with a choice of random games."""
    env = domino_env.raw_env(name, episode="match", **options)
    rng = np.random.default_rng(seed)
    for game in range(games):
        env.reset(seed=seed + game)
        steps = 0
        while not all(env.terminations.values()) and steps < 400:
            legal = env.game.legal
            if len(legal) > 1 and rng.random() < 0.3:
                yield env, env.game.clone()
            env.step(int(rng.choice(legal)))
            steps += 1


def scalar_values(rules, worlds, seeds, actions, side, before) -> tuple[list[list[float]], int]:
    """Each world's action values by ``rollout_value`` in Python (as ``SearchAgent.world_values``),
    and how many of those rollouts ended the match."""
    values, ended = [], 0
    for world, seed, start in zip(worlds, seeds, before, strict=True):
        row = []
        for action in actions:
            sim = world.clone()
            rules.apply(sim, action)
            row.append(rollout_value(rules, sim, side, start, random.Random(seed)))
            ended += sim.match_over
        values.append(row)
    return values, ended


@pytest.mark.parametrize("table", batched_tables(), ids=table_id)
def test_batched_rollouts_equal_the_scalar_ones(table: tuple[str, dict[str, Any]]) -> None:
    name, options = table
    batched = GreedyRollouts(domino_env.raw_env(name, **options).rules)
    checked = ended_matches = 0
    for k, (env, game) in enumerate(decisions(name, options, games=3, seed=11)):
        rules, view = env.rules, env.view(env.agent_selection)
        rng = random.Random(k)
        worlds = [rules.sample_world(game, view, rng) for _ in range(6)]
        if k % 3 == 0:  # near the target: rollouts that end the match
            for world in worlds:
                world.scores = [
                    max(score, rules.match_target - 1 - side) for side, score in enumerate(world.scores)
                ]
        seeds = [rng.getrandbits(64) for _ in worlds]
        side = rules.side_of[view.seat]
        actions = list(view.legal_actions)
        before = [standing(rules, w) for w in worlds]
        want, ended = scalar_values(rules, worlds, seeds, actions, side, before)
        ended_matches += ended
        got = batched.values(worlds, seeds, actions, side, before)
        assert got.tolist() == want, f"{name} decision {k}"
        checked += len(worlds) * len(actions)
        if checked > 600:
            break
    assert checked > 100
    assert ended_matches, "no rollout ended a match: the match-ending value went unchecked"


def test_a_world_stream_that_runs_out_is_made_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each world's tie-break stream starts at ``_WORDS`` words; a row that reads past them gets
    a longer stream (the same words first): with one word to start, every second tie does."""
    monkeypatch.setattr("domino_env.vector.rollouts._WORDS", 1)
    env, game = next(decisions("classic", {"num_players": 2}, games=1, seed=5))
    rules, view = env.rules, env.view(env.agent_selection)
    rng = random.Random(0)
    worlds = [rules.sample_world(game, view, rng) for _ in range(40)]
    seeds = [rng.getrandbits(64) for _ in worlds]
    side, actions = rules.side_of[view.seat], list(view.legal_actions)
    before = [standing(rules, w) for w in worlds]
    want, _ = scalar_values(rules, worlds, seeds, actions, side, before)
    assert GreedyRollouts(rules).values(worlds, seeds, actions, side, before).tolist() == want


@pytest.mark.parametrize(
    "name, options, agent",
    [
        ("classic", {"num_players": 2}, "expert"),
        ("all_fives", {"num_players": 2}, "advanced"),
        ("osel", {"num_players": 2}, "search:48"),
        ("cross", {"num_players": 4}, "advanced"),
    ],
)
def test_a_search_decides_the_same_with_batched_rollouts(
    monkeypatch: pytest.MonkeyPatch, name: str, options: dict[str, Any], agent: str
) -> None:
    env = domino_env.raw_env(name, **options)
    picks: list[list[int]] = []
    for rows in (10**9, 1):  # batching off, then on for every stage
        monkeypatch.setattr("domino_env.agents.search.MIN_ROWS", rows)
        player = make_agent(agent, seed=3)
        env.reset(seed=5)
        chosen: list[int] = []
        while len(chosen) < 6 and not all(env.terminations.values()):
            action = player(env, env.observe(env.agent_selection))
            if len(env.game.legal) > 1:
                chosen.append(action)
            env.step(action)
        picks.append(chosen)
    assert picks[0] == picks[1]
    assert len(picks[0]) >= 3


def test_tables_without_a_kernel_or_with_rules_of_their_own_roll_out_in_python() -> None:
    for name in ("blind", "blind_blitz", "domino3d", "metro"):
        rules = domino_env.raw_env(name).rules
        assert GreedyRollouts.refusal(rules)
        assert batched_rollouts(rules) is None
        with pytest.raises(ValueError, match=f"no batched rollouts for {rules.name}"):
            GreedyRollouts(rules)
    classic = domino_env.raw_env("classic").rules
    agent = SearchAgent(seed=0)
    assert agent._batched(classic) is not None
    agent.playout_key = lambda state, action: 0
    assert agent._batched(classic) is None

    class OwnValues(SearchAgent):
        def world_values(self, rules, world, seed, actions, side):
            return [0.0] * len(actions)

    assert OwnValues(seed=0)._batched(classic) is None
