"""Every (variant, players, teams) table the generic tests run on, from ``domino_env.SPECS``."""

import random
from typing import Any

import pytest

import domino_env

CONFIGS = [
    (name, table["num_players"], table["teams"])
    for name, spec in domino_env.SPECS.items()
    for table in spec.tables()
]
CONFIG_IDS = [f"{name}-{n}p{'-teams' if teams else ''}" for name, n, teams in CONFIGS]


def configs(fn):
    """Parametrize a test over ``(name, n, teams)`` for every table."""
    return pytest.mark.parametrize(("name", "n", "teams"), CONFIGS, ids=CONFIG_IDS)(fn)


# Variants played on a grid (3D dominoes) rather than a line of play: checks written for the
# line (ends, arms, opening tiles, rounds) are replaced by grid checks there, each marked.
GRID_VARIANTS = {name for name, spec in domino_env.SPECS.items() if spec.table == "grid"}


def tiles_on_table(game) -> int:
    """The tiles on the table of a game state (a grid's or a line's), as a bitmask of tile ids."""
    return game.on_table if hasattr(game, "grid") else game.line.played


def table_mask(env) -> int:
    """The tiles on an environment's table, as a bitmask of tile ids."""
    return tiles_on_table(env.unwrapped.game)


def seat_zero_split(name: str, n: int, teams: bool) -> tuple[list[str], list[str]]:
    """Seat 0's hand (the first tiles in id order) and the rest, as ``"a-b"`` names; 3D
    dominoes' start tile 3-3, public and fixed, in neither."""
    spec = domino_env.spec(name)
    rules = spec.rules(num_players=n, teams=teams)
    tiles = [f"{a}-{b}" for a, b in rules.tile_set.tiles]
    if spec.table == "grid":
        tiles = [t for t in tiles if t != "3-3"]
    return tiles[: rules.hand_size], tiles[rules.hand_size :]


def seat_zero_deal(name: str, hands: list[list[str]], boneyard: list[str]) -> dict:
    """A fixed deal in which seat 0 leads (3D dominoes: from the start tile 3-3)."""
    deal = {"hands": hands, "boneyard": boneyard, "leader": 0}
    if name in GRID_VARIANTS:
        deal["start"] = (3, 3)
    return deal


def fixed_deal_envs(name: str, n: int, teams: bool, arrangements: int = 3) -> list:
    """Games that differ only in the other hands and the boneyard (seat 0 leads): what seat 0
    cannot know, each with another env seed too."""
    own, rest = seat_zero_split(name, n, teams)
    size = len(own)
    envs = []
    for arrangement in range(arrangements):
        others = rest[:]
        random.Random(arrangement).shuffle(others)
        hands = [own] + [others[i * size : (i + 1) * size] for i in range(n - 1)]
        env = domino_env.make(name, num_players=n, teams=teams)
        env.reset(seed=arrangement, options={"deal": seat_zero_deal(name, hands, others[(n - 1) * size :])})
        envs.append(env)
    return envs


def assert_conserved(u: Any) -> None:
    """Every tile is in exactly one place: a hand, the table or the stock."""
    g = u.game
    ts = u.rules.tile_set
    parts = [*g.hands, tiles_on_table(g)]
    stock = 0
    for t in g.stock:
        assert 0 <= t < ts.size
        assert not stock >> t & 1, f"tile {t} twice in the stock"
        stock |= 1 << t
    parts.append(stock)
    union = 0
    for part in parts:
        assert not union & part, "a tile is in two places at once"
        union |= part
    assert union == ts.all_mask, "a tile went missing"
    if u.rules.name in GRID_VARIANTS:
        assert len(g.grid.placed) == g.on_table.bit_count()
    else:
        assert g.line.count == g.line.played.bit_count()
