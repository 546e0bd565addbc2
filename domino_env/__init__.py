"""Domino games as PettingZoo AEC environments with action masks.

``domino_env.make(name, **options)`` builds any variant in ``VARIANTS``; each variant also
has a PettingZoo-style module, e.g. ``domino_env.classic_v0.env(num_players=4, teams=True)``.
"""

from domino_env.env import DominoEnv
from domino_env.registry import VARIANTS, make, raw_env

__all__ = ["VARIANTS", "DominoEnv", "make", "raw_env"]
