"""All Fives (straight dominoes) as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.all_fives`.
"""

from typing import Any

from domino_env import registry
from domino_env.env import DominoEnv, OrderEnforcing


def raw_env(**options: Any) -> DominoEnv:
    return registry.raw_env("all_fives", **options)


def env(**options: Any) -> OrderEnforcing:
    return registry.make("all_fives", **options)
