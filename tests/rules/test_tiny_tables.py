"""The smaller tables (``max_pip``, ``hand_size``, ``preset="tiny"``): the generic checks the full
tables pass (PettingZoo's API, seed, parallel and state tests, tiles conserved, the mask equal to
the actions the rules accept, search legal and blind to hidden tiles) on every tiny preset and on
other small sets, and the options' errors."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test, seed_test
from pettingzoo.test.state_test import test_state as pettingzoo_state_test
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_test

import domino_env
from domino_env.agents import make_agent
from tests.support.variant_configs import assert_conserved

TINY = [name for name, spec in domino_env.SPECS.items() if "tiny" in spec.presets]
SMALL = [  # other small sets, with a boneyard to draw from
    ("classic", {"max_pip": 3, "hand_size": 3}),
    ("all_fives", {"max_pip": 4, "hand_size": 4, "num_players": 3}),
    ("osel", {"max_pip": 3, "hand_size": 2}),
    ("metro", {"max_pip": 4, "hand_size": 5}),
    ("blitz", {"max_pip": 3, "hand_size": 3, "num_players": 3}),
    ("blind_blitz", {"max_pip": 3, "hand_size": 3}),
    ("blind", {"max_pip": 4, "hand_size": 3, "num_players": 4, "teams": True}),
    ("cross", {"max_pip": 7}),
]
TABLES = [(name, {"preset": "tiny"}) for name in TINY] + SMALL
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items())}" for name, options in TABLES]


def test_every_line_game_but_cross_has_a_tiny_preset() -> None:
    chain = [name for name, spec in domino_env.SPECS.items() if spec.table == "chain"]
    assert sorted(TINY) == sorted(set(chain) - {"cross"})


@pytest.mark.parametrize(("name", "options"), TABLES, ids=IDS)
def test_pettingzoo_tests(name: str, options: dict[str, Any]) -> None:
    api_test(domino_env.make(name, **options), num_cycles=100)
    seed_test(lambda: domino_env.make(name, **options), num_cycles=100)
    parallel_api_test(domino_env.variant_module(domino_env.spec(name)).parallel_env(**options))
    env = domino_env.make(name, illegal_action="penalize", **options)
    pettingzoo_state_space_test(env)
    pettingzoo_state_test(env, num_cycles=20)


@pytest.mark.parametrize(("name", "options"), TABLES, ids=IDS)
def test_the_table_is_the_smaller_set(name: str, options: dict[str, Any]) -> None:
    env = domino_env.make(name, **options).unwrapped
    rules = env.rules
    table = {**domino_env.spec(name).presets.get(options.get("preset", ""), {}), **options}
    pips = table["max_pip"]
    assert rules.tile_set.max_pip == pips and rules.tile_set.size == (pips + 1) * (pips + 2) // 2
    env.reset(seed=0)
    dealt = [hand.bit_count() for hand in env.game.hands]
    if name != "blind_blitz" or rules.arrange == "dealt":  # (arranging seats hold their rows already)
        assert dealt == [rules.hand_size] * rules.num_players or env.game.events[1][0] != "deal"
    assert env.observation_space("player_0")["observation"].shape == (env.encoder.size,)
    assert env.action_space("player_0").n == rules.num_actions


@pytest.mark.parametrize(("name", "options"), TABLES, ids=IDS)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), rnd=st.randoms(use_true_random=False))
def test_tiles_are_conserved_and_the_mask_is_what_the_rules_accept(
    name: str, options: dict[str, Any], seed: int, rnd: random.Random
) -> None:
    env = domino_env.make(name, **options)
    env.reset(seed=seed)
    raw = env.unwrapped
    while not all(env.terminations.values()):
        assert_conserved(raw)
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = [a for a in range(len(mask)) if mask[a]]
        assert legal == sorted(raw.game.legal)
        env.step(rnd.choice(legal))
    assert_conserved(raw)


@pytest.mark.parametrize(("name", "options"), TABLES, ids=IDS)
def test_search_plays_whole_episodes_legally(name: str, options: dict[str, Any]) -> None:
    env = domino_env.make(name, **options)
    env.reset(seed=5)
    raw = env.unwrapped
    agents = [make_agent("search:2", seed=seat) for seat in range(raw.rules.num_players)]
    while not all(env.terminations.values()):
        action = agents[raw.game.current](raw, env.observe(env.agent_selection))
        assert action in raw.game.legal
        env.step(action)


def test_search_sees_only_its_seat_on_a_small_table() -> None:
    """Deals that differ only in the other hand and the boneyard (double-3, 3 tiles each): search
    with the same seed makes the same first decision."""
    own = ["0-0", "0-3", "2-3"]
    rest = [t for t in ("0-1", "0-2", "1-1", "1-2", "1-3", "2-2", "3-3") if t not in own]
    decisions = set()
    for arrangement in range(4):
        others = rest[:]
        random.Random(arrangement).shuffle(others)
        env = domino_env.make("classic", max_pip=3, hand_size=3, episode="round")
        deal = {"hands": [own, others[:3]], "boneyard": others[3:], "leader": 0}
        env.reset(seed=arrangement, options={"deal": deal})
        observation = env.observe("player_0")
        assert observation["action_mask"].sum() > 1
        decisions.add(make_agent("search:4", seed=2)(env.unwrapped, observation))
    assert len(decisions) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_pip": 0}, r"max_pip must be an int 1\.\.9"),
        ({"max_pip": 10}, r"max_pip must be an int 1\.\.9"),
        ({"max_pip": 2.0}, r"max_pip must be an int"),
        ({"max_pip": True}, r"max_pip must be an int"),
        ({"hand_size": 0}, r"hand_size must be an int 1\.\.14"),
        ({"max_pip": 2}, r"2 hands of 7 need 14 tiles; a double-2 set has 6: hand_size can be at most 3"),
        ({"max_pip": 2, "hand_size": 4}, r"hand_size must be an int 1\.\.3"),
        ({"preset": "huge"}, r"unknown preset 'huge' for classic; its presets: 'tiny'"),
    ],
)
def test_bad_table_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        domino_env.make("classic", **options)


def test_cross_deals_every_tile() -> None:
    with pytest.raises(ValueError, match="sets that can: double-6, double-7"):
        domino_env.make("cross", max_pip=5)
    with pytest.raises(ValueError, match="hand_size must be 9, got 8"):
        domino_env.make("cross", max_pip=7, hand_size=8)
    env = domino_env.make("cross", max_pip=7).unwrapped
    env.reset(seed=1)
    assert env.rules.hand_size == 9 and not env.game.stock
    top = env.rules.tile_set.id_of("7-7")  # the highest double leads, as 6-6 does in double-six
    assert env.game.required_lead == top and env.game.hands[env.game.current] >> top & 1


def test_preset_options_are_overridden_by_options_beside_it() -> None:
    env = domino_env.make("classic", preset="tiny", draw=True, hand_size=2).unwrapped
    assert env.rules.draws and env.rules.hand_size == 2 and env.rules.tile_set.max_pip == 2
    assert env.episode == "round"
    assert domino_env.preset_options("classic", {"preset": "tiny"}) == dict(
        domino_env.spec("classic").presets["tiny"]
    )


def test_metro_line_has_an_end_per_double() -> None:
    env = domino_env.make("metro", max_pip=4, hand_size=5).unwrapped
    assert env.rules.num_slots == 2 + 4
    assert env.rules.num_actions == 2 * 15 * 6  # (tile, end) face up and face down
