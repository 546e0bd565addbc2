"""Classic dominoes (draw or block) as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.classic`.
"""

from domino_env.registry import module_api

env, raw_env = module_api("classic")
