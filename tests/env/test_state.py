"""PettingZoo's global ``state()``: its space, layout and contents on every table, and that it
never reaches an observation."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.test.state_test import test_state as pettingzoo_state_test
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_test

import domino_env
from tests.support.helpers import play_random
from tests.support.variant_configs import configs


def make(name: str, n: int, teams: bool, **options: object):
    return domino_env.make(name, num_players=n, teams=teams, **options)


@configs
def test_pettingzoo_state_tests_pass(name: str, n: int, teams: bool) -> None:
    # (its random actions ignore the mask: an illegal one ends the episode with a penalty)
    env = make(name, n, teams, illegal_action="penalize")
    pettingzoo_state_space_test(env)
    pettingzoo_state_test(env, num_cycles=20)


@configs
def test_state_holds_the_whole_table(name: str, n: int, teams: bool) -> None:
    env = make(name, n, teams)
    raw = env.unwrapped
    layout = raw.state_layout
    tiles = raw.rules.tile_set.size
    assert list(layout) == ["hands", "stock", *(f"seat_{k}" for k in range(n))]
    assert layout["hands"].stop - layout["hands"].start == n * tiles
    assert layout[f"seat_{n - 1}"].stop == raw.state_space.shape[0]
    env.reset(seed=3)
    rnd = random.Random(3)
    for _ in range(12):
        state = env.state()  # through the wrappers too
        assert state.dtype == np.float32 and raw.state_space.contains(state)
        game = raw.game
        order = [(game.current + k) % n for k in range(n)]
        hands = state[layout["hands"]].reshape(n, tiles)
        for row, seat in enumerate(order):
            assert set(np.flatnonzero(hands[row])) == {t for t in range(tiles) if game.hands[seat] >> t & 1}
        assert set(np.flatnonzero(state[layout["stock"]])) == set(game.stock)
        for k, seat in enumerate(order):
            observed = env.observe(raw.possible_agents[seat])["observation"]
            np.testing.assert_array_equal(state[layout[f"seat_{k}"]], observed)
        if not play_random(env, 3, rnd):
            break


@pytest.mark.parametrize("name", sorted(domino_env.SPECS))
def test_state_never_reaches_an_observation(name: str) -> None:
    """Two tables that differ only in hidden tiles: the state tells them apart, the observations
    do not, and reading the state changes no observation."""
    envs = [domino_env.raw_env(name) for _ in range(2)]
    envs[0].reset(seed=5)
    game = envs[0].game
    n = envs[0].rules.num_players
    seat = game.current
    other = (seat + 1) % n
    if getattr(getattr(game, "extra", None), "rows", None) is not None:
        pytest.skip("the blind rows fix where each tile lies: a swapped tile is a different table")
    envs[1].reset(seed=5)
    swapped = envs[1].game

    def first_tile(hand: int) -> int:
        return (hand & -hand).bit_length() - 1

    hidden = first_tile(swapped.hands[other])
    if swapped.stock:  # the other seat's tile for the boneyard's next one
        given = swapped.stock[-1]
        swapped.stock[-1] = hidden
    else:  # no boneyard (four players): for a third seat's tile
        third = (seat + 2) % n
        given = first_tile(swapped.hands[third])
        swapped.hands[third] ^= 1 << given | 1 << hidden
    swapped.hands[other] ^= 1 << hidden | 1 << given
    envs[1].encoder.forget()
    agent = envs[0].possible_agents[seat]
    before = envs[0].observe(agent)["observation"].copy()
    assert not np.array_equal(envs[0].state(), envs[1].state())
    np.testing.assert_array_equal(envs[0].observe(agent)["observation"], before)
    np.testing.assert_array_equal(envs[1].observe(agent)["observation"], before)


def test_state_needs_a_game() -> None:
    with pytest.raises(ValueError, match=r"call reset\(\) first"):
        domino_env.raw_env("classic").state()
