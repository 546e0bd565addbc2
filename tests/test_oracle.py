"""The cheating Monte Carlo oracle of ``benchmarks/oracle.py``: it leaves the real game alone
and beats ``random``."""

from __future__ import annotations

import copy
import importlib.util
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from domino_env.engine.line import Line
from domino_env.engine.state import State
from domino_env.registry import raw_env


def load_oracle() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "oracle.py"
    spec = importlib.util.spec_from_file_location("benchmarks_oracle", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oracle = load_oracle()


def snapshot(state: State) -> dict[str, Any]:
    """Everything about a state, by value (the RNG by its bit generator's state)."""
    values = {
        name: copy.deepcopy(value) for name, value in vars(state).items() if name not in ("line", "rng")
    }
    shared = ("tiles", "slots", "slot_moves", "firsts")  # the layout's constant tables
    values["line"] = {
        name: copy.deepcopy(getattr(state.line, name)) for name in Line.__slots__ if name not in shared
    }
    values["rng"] = copy.deepcopy(state.rng.bit_generator.state)
    return values


@pytest.mark.parametrize("variant", ["classic", "blind", "metro"])
def test_rollouts_leave_the_real_state_untouched(variant: str) -> None:
    rules = oracle.variant_rules(variant)
    state = rules.new_match(np.random.default_rng(3))
    player = oracle.Oracle(rollouts=3)
    rng = random.Random(0)
    checked = 0
    while not state.round_over:
        before = snapshot(state)
        action = player(rules, state, rng)
        assert snapshot(state) == before
        assert action in state.legal
        checked += len(state.legal) > 1
        rules.apply(state, action)
    assert checked  # some decision had a choice, so rollouts ran


def test_oracle_beats_random_in_short_matches() -> None:
    rules = oracle.variant_rules("classic")
    wins, _ = oracle.head_to_head(rules, oracle.Oracle(rollouts=4), oracle.random_move, 6, seed=0)
    assert wins >= 5


def test_match_loop_deals_as_the_env() -> None:
    """A whole match runs to its target, and a seed deals what the env's reset(seed=...) deals."""
    rules = oracle.variant_rules("classic")
    state = oracle.play_match(rules, [oracle.random_move] * 2, 5, [random.Random(0), random.Random(1)])
    assert state.match_over
    assert max(state.scores) >= rules.match_target
    fresh = rules.new_match(np.random.default_rng(5))
    env = raw_env("classic", num_players=2)
    env.reset(seed=5)
    assert env.game.hands == fresh.hands and env.game.stock == fresh.stock


@pytest.mark.parametrize("variant", ["classic", "metro"])
def test_fair_determinization_keeps_what_the_player_sees(variant: str) -> None:
    rules = oracle.variant_rules(variant)
    state = rules.new_match(np.random.default_rng(11))
    rng = random.Random(2)
    checked = 0
    while not state.round_over:
        seat, other = state.current, 1 - state.current
        sim = state.clone()
        oracle.determinize(rules, sim, rng)
        assert sim.hands[seat] == state.hands[seat]
        assert sim.hands[other].bit_count() == state.hands[other].bit_count()
        assert len(sim.stock) == len(state.stock)
        assert sim.hands[other] | sum(1 << t for t in sim.stock) == state.hands[other] | sum(
            1 << t for t in state.stock
        )
        banned = 0  # tiles carrying a value the opponent was seen to lack
        for v in range(rules.tile_set.num_values):
            if state.voids[other] >> v & 1:
                banned |= rules.tile_set.suit_mask[v]
        held = state.hands[other]
        if not held & banned:  # the voids are honoured whenever the truth honours them
            checked += bool(banned)
            assert (
                not sim.hands[other] & banned
                or ((sum(1 << t for t in sim.stock) | sim.hands[other]) & ~banned).bit_count()
                < sim.hands[other].bit_count()
            )
        before = snapshot(state)
        action = oracle.Oracle(rollouts=2, fair=True)(rules, state, rng)
        assert snapshot(state) == before
        rules.apply(state, action)
    assert checked


def test_fair_player_refuses_blind_rows() -> None:
    rules = oracle.variant_rules("blind")
    state = rules.new_match(np.random.default_rng(0))
    with pytest.raises(ValueError, match="face-down rows"):
        oracle.determinize(rules, state, random.Random(0))
