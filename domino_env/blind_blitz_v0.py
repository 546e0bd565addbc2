"""Blind blitz dominoes as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.blind`.
"""

from domino_env.registry import module_api

env, raw_env = module_api("blind_blitz")
