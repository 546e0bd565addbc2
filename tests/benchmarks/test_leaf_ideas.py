"""``benchmarks/leaf_ideas.py``: its leaves are what they claim, and its players play legally."""

from __future__ import annotations

import copy

import pytest

import domino_env
from domino_env.agents import expert, make_agent
from domino_env.agents.search import round_value
from tests.support.helpers import assert_decides_alike, hidden_deal_positions, load_script, play_with

ideas = load_script("leaf_ideas")


def test_the_fit_rule_prefers_a_move_that_keeps_the_hand_playable() -> None:
    env = domino_env.raw_env("classic", num_players=2, hand_size=4)
    deal = {
        "hands": [["3-5", "1-2", "5-6", "5-5"], ["0-0", "0-1", "0-2", "0-3"]],
        "leader": 0,
        "opening": "3-5",
    }
    env.reset(seed=0, options={"deal": deal})
    rules, game = env.rules, env.game
    key = ideas.fit_rule(rules)
    # leading 3-5 leaves ends 3 and 5: 5-6 and 5-5 fit (two), so its key counts 8 on its 8 pips
    (lead,) = game.legal
    assert key(game, lead)[:2] == (0, 8 + 2 * ideas.FIT_WEIGHT)


def test_the_match_value_leaf_is_the_change_in_match_value() -> None:
    env = domino_env.raw_env("classic", num_players=2)
    env.reset(seed=4)
    leaf = ideas.match_value_leaf("classic", {"num_players": 2})
    rules, game = env.rules, env.game
    before = game.scores[:]
    assert leaf(rules, game, 0, before) == 0.0  # no change: worth nothing
    later = game.clone()
    later.scores = [0, 40]  # side 1 took 40 penalty points: side 0 gains, side 1 loses alike
    assert leaf(rules, later, 0, before) > 0 > leaf(rules, later, 1, before)
    assert leaf(rules, later, 0, before) == pytest.approx(-leaf(rules, later, 1, before))
    assert round_value(rules, later, 0, before) > 0  # (the points leaf agrees on the sign)


@pytest.mark.parametrize("idea", ideas.IDEAS)
def test_an_idea_plays_legal_moves(monkeypatch: pytest.MonkeyPatch, idea: str) -> None:
    small = expert.Tier(budget=4, max_worlds=2, min_worlds=1, solve_tiles=6, node_budget=200, solve_nodes=400)
    monkeypatch.setattr(expert, "TIERS", {**expert.TIERS, "expert": small})
    players = [
        ideas.LeafIdeaExpert(idea, "classic", {"num_players": 2}, seed=0),
        make_agent("greedy", seed=1),
    ]
    _, env = play_with("classic", players, seed=1, num_players=2)  # (every action checked legal)
    assert all(env.terminations.values())


@pytest.mark.parametrize("variant", ideas.CHAIN_VARIANTS)
def test_the_ideas_and_the_rule_do_not_peek(monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    """At choices throughout a round, in deals seat 0 cannot tell apart, each idea's expert and
    the rule itself decide alike with the same seed."""
    small = expert.Tier(budget=4, max_worlds=2, min_worlds=1, solve_tiles=6, node_budget=200, solve_nodes=400)
    monkeypatch.setattr(expert, "TIERS", {**expert.TIERS, "expert": small})
    positions = hidden_deal_positions(variant, 2, False, want=3)
    assert_decides_alike(positions, lambda env: ideas.FitRulePlayer(seed=11))
    for idea in ideas.IDEAS:  # (built once: the match-value leaf models rounds first; copies alike)
        player = ideas.LeafIdeaExpert(idea, variant, {"num_players": 2}, seed=11)
        assert_decides_alike(positions, lambda env, player=player: copy.deepcopy(player))
