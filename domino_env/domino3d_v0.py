"""3D dominoes (tiles on a grid, stacked in floors) as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.domino3d`.
"""

from domino_env.registry import module_api

env, raw_env = module_api("domino3d")
