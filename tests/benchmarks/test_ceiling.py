"""``benchmarks/ceiling.py``: its cheating worlds are what they claim (the true hands, the
boneyard reshuffled; or the true state), and the cheater plays legal moves."""

from __future__ import annotations

import random

import pytest

import domino_env
from domino_env.agents import expert, make_agent
from tests.support.helpers import load_script, play_with

ceiling = load_script("ceiling")


def test_cheating_worlds_hold_the_true_hands() -> None:
    env = domino_env.raw_env("classic", num_players=2)
    env.reset(seed=3)
    game, view = env.game, env.view(env.agent_selection)
    rng = random.Random(0)
    hands = ceiling.CheatingExpert("hands", seed=0).sample(env.rules, game, view, rng)
    assert hands.hands == game.hands and sorted(hands.stock) == sorted(game.stock)
    orders = {
        tuple(ceiling.CheatingExpert("hands", seed=0).sample(env.rules, game, view, rng).stock)
        for _ in range(5)
    }
    assert len(orders) > 1  # the boneyard's order is dealt anew
    everything = ceiling.CheatingExpert("all", seed=0).sample(env.rules, game, view, rng)
    assert everything.hands == game.hands and everything.stock == game.stock
    assert everything is not game  # a branch: searching it leaves the game alone


def test_the_cheater_plays_legal_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    small = expert.Tier(budget=4, max_worlds=2, min_worlds=1)
    monkeypatch.setattr(expert, "TIERS", {**expert.TIERS, "expert": small})
    players = [ceiling.CheatingExpert("all", seed=0), make_agent("greedy", seed=1)]
    _, env = play_with("classic", players, seed=1, num_players=2)  # (every action checked legal)
    assert all(env.terminations.values())
