"""``benchmarks/ismcts.py``: the tree's counts are what UCB reads, its decisions do not peek, and
it plays whole matches legally."""

from __future__ import annotations

import pytest

import domino_env
from domino_env.agents import expert, make_agent
from tests.support.helpers import assert_decides_alike, hidden_deal_positions, load_script, play_with
from tests.support.variant_configs import configs

ismcts = load_script("ismcts")


def test_every_walk_visits_one_root_move_legal_in_every_world() -> None:
    env = domino_env.raw_env("all_fives", num_players=2)
    env.reset(seed=3)
    while len(env.game.legal) < 2:
        env.step(env.game.legal[0])
    view = env.view(env.game.current)
    root = ismcts.ISMCTSAgent(50, seed=0).tree(env.rules, env.game, view)
    assert sum(root.visits.values()) == 50
    assert set(root.visits) == set(view.legal_actions)  # each tried once before any twice
    assert all(root.available[m] == 50 for m in view.legal_actions)  # the seat's own moves: always legal
    child = max(root.children.values(), key=lambda n: sum(n.visits.values()))
    assert all(child.available[m] >= child.visits[m] for m in child.visits)  # others' moves: by world


@configs
def test_it_does_not_peek(name: str, n: int, teams: bool) -> None:
    """At choices throughout a round, in deals seat 0 cannot tell apart, the same seed decides
    alike, on every table (with the endgame solver too, where it solves: the tiny tables)."""
    positions = hidden_deal_positions(name, n, teams, want=2)
    assert_decides_alike(positions, lambda env: ismcts.ISMCTSAgent(30, seed=11))


@pytest.mark.parametrize("name", ["classic", "all_fives", "osel", "blitz", "metro"])
def test_with_endgame_it_does_not_peek(name: str) -> None:
    positions = hidden_deal_positions(name, 2, False, want=2, preset="tiny")
    assert_decides_alike(positions, lambda env: ismcts.ISMCTSAgent(30, seed=11, endgame=True))


def test_it_plays_a_whole_match_legally() -> None:
    players = [ismcts.ISMCTSAgent(20, seed=0), make_agent("greedy", seed=1)]
    _, env = play_with("blitz", players, seed=2, num_players=2)  # (every action checked legal)
    assert all(env.terminations.values())


def test_with_endgame_a_solved_decision_is_experts() -> None:
    """On the tiny table every decision is one expert solves: the choice is expert's own."""
    env = domino_env.raw_env("classic", num_players=2, preset="tiny")
    env.reset(seed=1)
    while len(env.game.legal) < 2:
        env.step(env.game.legal[0])
    view = env.view(env.game.current)
    agent = ismcts.ISMCTSAgent(10, seed=5, endgame=True)
    assert agent.choose(env.rules, env.game, view) == expert.ExpertAgent("expert", seed=7).choose(
        env.rules, env.game, view
    )
    assert agent.rng.random() == ismcts.ISMCTSAgent(10, seed=5).rng.random()  # (no walk was made)
