"""The search tiers above ``search`` (``advanced``, ``expert``) and their double-dummy solver:
the solver equals plain minimax, the tiers do not peek, repeat themselves with a seed, play
whole matches legally, and are named like the other built-in agents."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from typing import Any

import numpy as np
import pytest

import domino_env
from domino_env import agents as agents_module
from domino_env.agents import SEARCH_NAMES, is_builtin, make_agent
from domino_env.agents.expert import TIERS, ExpertAgent, Tier, parse_tier_name
from domino_env.agents.search import SearchAgent, round_value, standing
from domino_env.agents.solver import solvable, solve, solve_counted, tiles_in_hands
from domino_env.rules.chain import ChainRules
from tests.support.helpers import assert_decides_alike, hidden_deal_positions, play_with
from tests.support.variant_configs import configs

SOLVED = [name for name, spec in domino_env.SPECS.items() if solvable(spec.rules())]
TINY = [name for name in SOLVED if "tiny" in domino_env.spec(name).presets]
# a small tier for the tests: few worlds, the solver tried at every decision on a small budget
SMALL = Tier(budget=12, max_worlds=6, solve_tiles=99, node_budget=60, solve_nodes=400, min_worlds=2)


def minimax(rules, state, side: int, before: list[int], leaf: Any = round_value) -> float:
    """The reference: every move of every seat, no pruning, no table; the root side maximizes,
    every other side minimizes (paranoid with more than two sides); a round's end is worth
    ``leaf``."""
    if state.round_over:
        return leaf(rules, state, side, before)
    values = []
    for action in state.legal:
        sim = state.clone()
        rules.apply(sim, action)
        values.append(minimax(rules, sim, side, before, leaf))
    return max(values) if rules.side_of[state.current] == side else min(values)


def positions(state, rules):
    """Every decision of the round from ``state`` on (a tree walk)."""
    if state.round_over:
        return
    yield state
    for action in state.legal:
        sim = state.clone()
        rules.apply(sim, action)
        yield from positions(sim, rules)


def check_solves(rules, state, leaf: Any = round_value) -> int:
    """The solver against minimax at ``state`` for every side, a round's end worth ``leaf``
    (the solver's ``end_value``); returns the checks made."""
    before = standing(rules, state)
    end_value = None if leaf is round_value else leaf  # (the default: solve's own leaf)
    for side in range(rules.num_sides):
        exact = minimax(rules, state, side, before, leaf)
        assert solve_counted(rules, state, side, before, 10**6, end_value=end_value)[0] == exact
        # a table shared by the root's actions (as the tiers share it) proves the same values
        table: dict = {}
        for action in state.legal:
            sim = state.clone()
            rules.apply(sim, action)
            value = solve_counted(rules, sim, side, before, 10**6, table, end_value)[0]
            assert value == minimax(rules, sim, side, before, leaf)
    return rules.num_sides


def scrambled(rules, state, side: int, before: list[int]) -> float:
    """A leaf that is no monotone function of the points (alpha-beta must be exact whatever
    the leaves are worth), as ``end_value`` hooks give (a match value, another leaf idea)."""
    return (round_value(rules, state, side, before) * 7 + 3) % 11 - 5 + 0.25 * state.scores[0]


@pytest.mark.parametrize("leaf", [round_value, scrambled], ids=["points", "own-leaf"])
@pytest.mark.parametrize("name", TINY)
def test_solver_is_minimax_on_tiny_tables(name, leaf):
    """Every position of the round of 12 tiny deals, with the solver's own leaf and with one
    given as ``end_value`` (the leaf ideas' hook)."""
    env = domino_env.make(name, preset="tiny")
    rules = env.unwrapped.rules
    checks = 0
    for seed in range(12):
        env.reset(seed=seed)
        for state in positions(env.unwrapped.game.clone(), rules):
            checks += check_solves(rules, state, leaf)
    assert checks >= 24


@pytest.mark.parametrize(
    ("name", "n", "teams", "left"),
    [
        ("classic", 2, False, 11),
        ("all_fives", 2, False, 11),
        ("osel", 2, False, 10),
        ("blitz", 2, False, 9),
        ("metro", 2, False, 7),
        ("all_fives", 4, True, 9),
        ("classic", 3, False, 8),
        ("cross", 4, False, 8),
        ("cross", 4, True, 8),
        ("osel", 3, False, 8),
        ("osel", 4, False, 8),
        ("metro", 3, False, 6),
        ("blitz", 4, True, 8),
    ],
)
def test_solver_is_minimax_in_end_games(name, n, teams, left):
    """Standard tables, random play until at most ``left`` tiles are in the hands and the
    boneyard together (else plain minimax takes too long); there and at the next positions
    of its tree."""
    env = domino_env.make(name, num_players=n, teams=teams)
    rules = env.unwrapped.rules
    rnd = random.Random(7)
    checks = 0
    for seed in range(6):
        env.reset(seed=seed)
        game = env.unwrapped.game
        while not game.round_over and tiles_in_hands(game) + len(game.stock) > left:
            env.step(rnd.choice(game.legal))
            game = env.unwrapped.game
        if not game.round_over:
            for state in itertools.islice(positions(game.clone(), rules), 12):
                checks += check_solves(rules, state)
    assert checks >= 12


def test_solver_gives_up_past_its_budget():
    env = domino_env.make("classic")
    env.reset(seed=1)
    rules, game = env.unwrapped.rules, env.unwrapped.game
    assert solve(rules, game.clone(), 0, standing(rules, game), 50) is None


def test_solver_plays_only_line_games_whose_seats_name_their_tiles():
    assert set(SOLVED) == {"all_fives", "blitz", "classic", "cross", "metro", "osel"}
    assert all(isinstance(domino_env.spec(name).rules(), ChainRules) for name in SOLVED)


@configs
def test_tiers_do_not_peek(name, n, teams):
    """A small tier that tries the solver at every decision, as search is checked."""
    assert_decides_alike(hidden_deal_positions(name, n, teams), lambda env: ExpertAgent(SMALL, seed=11))


@pytest.mark.parametrize("name", sorted(domino_env.SPECS))
@pytest.mark.parametrize("tier", sorted(TIERS))
def test_named_tiers_do_not_peek(name, tier):
    """Each variant's first table, two positions: the tiers as shipped."""
    table = domino_env.spec(name).tables()[0]
    positions = hidden_deal_positions(name, table["num_players"], table["teams"], want=2, alternatives=1)
    assert_decides_alike(positions, lambda env: make_agent(tier, seed=5))


@pytest.mark.parametrize("name", TINY)
@pytest.mark.parametrize("tier", sorted(TIERS))
def test_tiers_do_not_peek_in_tiny_end_games(name, tier):
    """Tiny tables, where the named tiers solve every world exactly."""
    positions = hidden_deal_positions(name, 2, False, want=2, preset="tiny")
    assert_decides_alike(positions, lambda env: make_agent(tier, seed=2))


def test_same_seed_same_decisions():
    for name, agent in (("classic", "advanced"), ("blind_blitz", SMALL), ("domino3d", SMALL)):
        runs = []
        for _ in range(2):
            first = make_agent(agent, seed=3) if isinstance(agent, str) else ExpertAgent(agent, seed=3)
            runs.append(play_with(name, [first, make_agent("greedy", seed=4)], seed=9)[0])
        assert runs[0] == runs[1]


@configs
def test_tiers_play_whole_matches_legally(name, n, teams):
    tiny = Tier(budget=4, max_worlds=2, solve_tiles=10, node_budget=40, solve_nodes=100, min_worlds=1)
    agents = [ExpertAgent(tiny, seed=seat) for seat in range(n)]
    _, env = play_with(name, agents, seed=2, num_players=n, teams=teams)
    assert env.unwrapped.game.match_over


def test_names(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(agents_module, "agent_loaders", dict)  # (no loader: torch stays unloaded)
    for name in TIERS:
        agent = make_agent(name, seed=0)
        assert isinstance(agent, ExpertAgent) and agent.name == name and agent.tier == TIERS[name]
        assert is_builtin(name) and parse_tier_name(name) == name
        assert name in SEARCH_NAMES
    assert parse_tier_name("search") is None and parse_tier_name("experts") is None
    for bad in ("expert:abc", "expert:0", "expert:16", "advanced:", "expert:agents/classic.pt"):
        with pytest.raises(ValueError, match="allowed: advanced, expert"):
            make_agent(bad)
        with pytest.raises(ValueError, match="allowed: advanced, expert"):
            is_builtin(bad)
    with pytest.raises(ValueError, match=r"search, search:N, advanced, expert"):
        make_agent("expret")
    with pytest.raises(ValueError, match="allowed: advanced, expert"):
        ExpertAgent("master")
    base = Tier(budget=8, max_worlds=4)
    changes: list[dict[str, Any]] = [
        {"budget": 0},
        {"max_worlds": -1},
        {"min_worlds": 0},
        {"budget": 2.5},
    ]
    for change in changes:
        with pytest.raises(ValueError, match="positive integers"):
            dataclasses.replace(base, **change)
    with pytest.raises(ValueError, match=">= 0"):
        Tier(budget=8, max_worlds=4, node_budget=-1)


def test_a_costlier_table_divides_the_budgets():
    """A table's ``rollout_cost`` keeps a decision's time: Domino-Metro's and 3D dominoes' budgets
    (``expert``'s as before the tables declared their cost: its stored games replay)."""
    own = {"metro": (96, 384), "domino3d": (72, 288)}
    for name, spec in domino_env.SPECS.items():
        rules = spec.rules(**spec.benchmark_tables[0])
        budgets = (TIERS["advanced"].table_budget(rules), TIERS["expert"].table_budget(rules))
        assert budgets == own.get(name, (240, 960)), name


def test_tiers_are_opponent_names_like_the_baselines():
    from domino_env.wrappers import SingleAgentEnv

    env = SingleAgentEnv("classic", opponents="advanced", num_players=2)
    opponent = env.agents[1]
    assert isinstance(opponent, ExpertAgent) and opponent.name == "advanced"
    env.reset(seed=0)
    terminated = truncated = False
    steps = 0
    while not (terminated or truncated) and steps < 6:
        action = int(np.flatnonzero(env.action_masks())[0])
        _, _, terminated, truncated, _ = env.step(action)
        steps += 1
    assert env.aec.game.line.count > steps  # (the opponent laid tiles too)


def decision_at(name: str, wanted, seed: int = 0):
    """A 2-player game (greedy play) at seat 0's first decision for which ``wanted(game)``."""
    env = domino_env.make(name, num_players=2)
    greedy = make_agent("greedy", seed=0)
    for episode in range(20):
        env.reset(seed=seed + episode)
        while not all(env.terminations.values()):
            game = env.unwrapped.game
            if game.current == 0 and wanted(game):
                return env
            env.step(greedy(env.unwrapped, env.observe(env.agent_selection)))
    raise AssertionError("no such decision")


def count_worlds(monkeypatch: pytest.MonkeyPatch, agent: ExpertAgent, env) -> tuple[dict[int, int], int]:
    """Per action, the worlds it met at one decision of ``agent``; and the worlds rolled out."""
    met: dict[int, int] = {}
    rolled = [0]
    batch_values, rollouts = ExpertAgent.batch_values, SearchAgent.rollout_values

    def counted(self, rules, batch, actions, side):
        for action in actions:
            met[action] = met.get(action, 0) + len(batch)
        return batch_values(self, rules, batch, actions, side)

    def rolled_out(self, rules, batch, actions, side):
        rolled[0] += len(batch)
        return rollouts(self, rules, batch, actions, side)

    monkeypatch.setattr(ExpertAgent, "batch_values", counted)
    monkeypatch.setattr(SearchAgent, "rollout_values", rolled_out)
    agent(env.unwrapped, env.observe(env.agent_selection))
    monkeypatch.undo()
    return met, rolled[0]


def test_halving_gives_the_better_actions_more_worlds(monkeypatch: pytest.MonkeyPatch):
    env = decision_at("all_fives", lambda game: len(game.legal) >= 5)
    choices = len(env.unwrapped.game.legal)
    tier = Tier(budget=120, max_worlds=40, min_worlds=2)
    met, rolled = count_worlds(monkeypatch, ExpertAgent(tier, seed=0), env)
    assert set(met) == set(env.unwrapped.game.legal)
    first = 120 // math.ceil(math.log2(choices)) // choices
    assert min(met.values()) == first  # every action meets the first batch
    counts = sorted(met.values(), reverse=True)
    assert counts[0] == counts[1] > first  # the two finalists met the most, alike
    assert counts[0] <= tier.max_worlds
    assert sum(met.values()) <= 2 * tier.budget
    assert rolled == max(met.values())  # (no solver: every world rolled out)


def test_solving_decisions_solve_within_their_node_budgets(monkeypatch: pytest.MonkeyPatch):
    env = decision_at(
        "classic", lambda game: len(game.legal) >= 2 and tiles_in_hands(game) + len(game.stock) <= 9
    )
    ample = Tier(budget=16, max_worlds=8, solve_tiles=9, node_budget=10**6, solve_nodes=10**7)
    met, rolled = count_worlds(monkeypatch, ExpertAgent(ample, seed=0), env)
    assert max(met.values()) >= 8 and rolled == 0  # every world solved
    spent = ExpertAgent(dataclasses.replace(ample, solve_nodes=1), seed=0)
    met, rolled = count_worlds(monkeypatch, spent, env)
    assert rolled >= max(met.values()) - 1  # the decision's nodes spent: the worlds roll out
    assert spent._nodes_left <= 0
    rollouts_only = Tier(budget=8, max_worlds=8, min_worlds=8)
    assert count_worlds(monkeypatch, ExpertAgent(rollouts_only, seed=0), env)[1] == max(met.values())
