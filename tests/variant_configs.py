"""Every (variant, players, teams) table the generic tests run on, from ``domino_env.VARIANTS``."""

import pytest

import domino_env


def _configs() -> list[tuple[str, int, bool]]:
    out = []
    for name, rules in domino_env.VARIANTS.items():
        for n in rules.player_counts:
            out.append((name, n, False))
            if n == 4 and rules.teams_allowed:
                out.append((name, n, True))
    return out


CONFIGS = _configs()
CONFIG_IDS = [f"{name}-{n}p{'-teams' if teams else ''}" for name, n, teams in CONFIGS]


def configs(fn):
    """Parametrize a test over ``(name, n, teams)`` for every table."""
    return pytest.mark.parametrize(("name", "n", "teams"), CONFIGS, ids=CONFIG_IDS)(fn)
