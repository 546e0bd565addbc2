"""Every (variant, players, teams) table the generic tests run on, from ``domino_env.SPECS``."""

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
