"""Cross dominoes as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.cross`.
"""

from domino_env.registry import module_api

env, raw_env = module_api("cross")
