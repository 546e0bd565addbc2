"""Osel ("Donkey") as a PettingZoo AEC environment.

The rules and their documentation: :mod:`domino_env.variants.osel`.
"""

from domino_env.registry import module_api

env, raw_env = module_api("osel")
