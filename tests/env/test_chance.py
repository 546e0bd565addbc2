"""Chance points in the open (``rules.chance_outcomes`` / ``rules.apply_chance``), on every table
of the behaviour digest: the outcomes the environment picks from its shuffled stock and its RNG
are among the chance point's outcomes, the probabilities sum to 1, a draw's outcomes are exactly
the tiles of the stock, and applying the environment's pick gives exactly the environment's state.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.rules.table import DEAL_TILE, DRAW_TILE, LEADER, LOT, SIDE, START
from tests.support.helpers import load_script

TABLES = load_script("behaviour_digest").TABLES
MAX_DECISIONS = 5000
# No shrinking (as in test_properties): a whole random match does not shrink usefully.
EXAMPLES = settings(max_examples=3, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))


def ids(tables: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items())}" for name, options in tables]


def by_value(state: Any) -> dict[str, Any]:
    """Everything about a state but whether its stock is shuffled (the env's is, an open one not)."""
    return {name: value for name, value in vars(state).items() if name != "shuffled"}


def check_point(rules: Any, state: Any) -> list[tuple[int, float]]:
    outcomes = rules.chance_outcomes(state)
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    assert all(p > 0 for _, p in outcomes)
    if state.chance == DRAW_TILE:
        assert sorted(o for o, _ in outcomes) == sorted(state.stock)
    return outcomes


def deal_picks(rules: Any, game: Any) -> dict[str, list[int]]:
    """The outcomes the environment's deal of ``game``'s round amounts to, per kind of chance
    point: each hand's tiles (in id order, or as dealt where the order is part of the game), a
    3D game's start tile, its side and first player, the leader (a lot's outcome) and the draws
    in order."""
    hands, boneyard = rules.undrawn(game)
    if rules.ordered_hands:  # Blind's rows, as dealt
        dealt = rules.dealt(game)["hands"]
        tiles = [t for hand in dealt for t in (rules.tile_set.id_of(name) for name in hand)]
    else:
        tiles = [t for hand in hands for t in sorted(bits(hand))]
    picks = {DEAL_TILE: tiles, LOT: [game.leader], LEADER: [game.leader], DRAW_TILE: boneyard}
    if hasattr(game, "grid"):
        _, left, _, _, start = game.grid.placed[0]
        a, _ = rules.tile_set.tiles[rules.kind_of[start]]
        picks.update({START: [start], SIDE: [int(left != a)]})
    return picks


def bits(mask: int) -> list[int]:
    return [t for t in range(mask.bit_length()) if mask >> t & 1]


@pytest.mark.parametrize(("name", "options"), TABLES, ids=ids(TABLES))
@EXAMPLES
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), rnd=st.randoms(use_true_random=True))
def test_chance_points_give_what_the_env_does(
    name: str, options: dict[str, Any], seed: int, rnd: random.Random
) -> None:
    """Seeded play on the table: the deal of every round met at its chance points with the
    environment's outcomes deals what the environment dealt; and before every action, the game
    with its stock left open stops at each draw that action makes, and the environment's tile
    (the top of its shuffled stock) leads to exactly the environment's state."""
    env = domino_env.make(name, **options)
    env.reset(seed=seed)
    raw = env.unwrapped
    rules = raw.rules
    serial = -1
    for _ in range(MAX_DECISIONS):
        game = raw.game
        if game.round_serial != serial:  # a new round: its deal at chance points
            serial = game.round_serial
            check_deal(rules, game)
        if all(env.terminations.values()):
            return
        legal = [int(a) for a in env.observe(env.agent_selection)["action_mask"].nonzero()[0]]
        action = legal[rnd.randrange(len(legal))]
        other = game.clone()
        other.shuffled = False
        rules.apply(other, action)
        while other.chance is not None:
            assert other.chance == DRAW_TILE
            check_point(rules, other)
            rules.apply_chance(other, other.stock[-1])  # the env's: the top of its shuffled stock
        env.step(action)
        if game.round_serial == serial:  # (not when the env has dealt the next round)
            assert by_value(other) == by_value(game)
    raise AssertionError("the episode did not end")


def check_deal(rules: Any, game: Any) -> None:
    """A round dealt at chance points with the env's outcomes: the env's hands, leader and draws."""
    picks = deal_picks(rules, game)
    if game.round_index == 0:
        other = rules.new_match(game.fixed_deals if hasattr(game, "line") else [game.fixed_deal])
    else:
        other = game.clone()  # back to the end of the round before
        other.round_index -= 1
        other.round_serial -= 1
        other.round_over = True
        other.events = game.last_round_events
        rules.start_round(other)
    while other.chance is not None:
        outcomes = check_point(rules, other)
        queue = picks[other.chance]
        while other.chance == DEAL_TILE and queue[0] not in other.stock:
            queue.pop(0)  # (a fixed deal's tile: in its hand already)
        pick = queue.pop(0)
        assert pick in [o for o, _ in outcomes]
        rules.apply_chance(other, pick)
    assert sorted(other.stock) == sorted(game.stock)  # (an open stock's order is no one's)
    other.stock = game.stock
    assert by_value(other) == by_value(game)


# Fixed deals with random parts: a hand, the boneyard, an opening owed to a random hand.
FIXED = [
    ("classic", {"num_players": 2}, {"hands": [["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6"], None]}),
    ("metro", {"num_players": 2}, {"hands": [None, None], "boneyard": ["9-9", "0-9"]}),
    ("blind", {"num_players": 2}, {"hands": [None, None], "leader": 1, "opening": "3-3"}),
    (
        "blind_blitz",
        {"num_players": 2, "arrange": "dealt"},
        {"hands": [["6-6", "5-6", "4-6", "3-6", "2-6", "1-6", "0-6", "5-5"], None]},
    ),
    ("domino3d", {"num_players": 2}, {"hands": [None, ["0-0", "1-1", "2-2", "3-3"]]}),
    ("domino3d", {"num_players": 2}, {"start": "2-1", "boneyard": ["6-6"]}),
]


@pytest.mark.parametrize(("name", "options", "deal"), FIXED, ids=[name for name, _, _ in FIXED])
@pytest.mark.parametrize("seed", range(3))
def test_fixed_deals_at_chance_points(name: str, options: dict[str, Any], deal: Any, seed: int) -> None:
    """A fixed deal's random parts are the chance points: with the env's outcomes they deal
    what ``reset(options={"deal": ...})`` dealt."""
    env = domino_env.make(name, **options)
    env.reset(seed=seed, options={"deal": deal})
    check_deal(env.unwrapped.rules, env.unwrapped.game)
