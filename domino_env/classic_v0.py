"""Classic dominoes (draw or block) as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.classic`.
"""

from typing import Any

from domino_env import registry
from domino_env.env import DominoEnv, OrderEnforcing


def raw_env(**options: Any) -> DominoEnv:
    return registry.raw_env("classic", **options)


def env(**options: Any) -> OrderEnforcing:
    return registry.make("classic", **options)
