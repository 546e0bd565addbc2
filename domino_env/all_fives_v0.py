"""All Fives (straight dominoes) as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.all_fives`.
"""

from domino_env.registry import module_api

env, raw_env = module_api("all_fives")
