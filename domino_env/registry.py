"""Variant registry: names -> rules classes, and the option split between rules and env."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from domino_env.env import ChainEnv, DominoEnv, OrderEnforcing
from domino_env.grid_env import Domino3DEnv
from domino_env.variants.all_fives import AllFivesRules
from domino_env.variants.blind import BlindBlitzRules, BlindRules
from domino_env.variants.blitz import BlitzRules
from domino_env.variants.classic import ClassicRules
from domino_env.variants.cross import CrossRules
from domino_env.variants.domino3d import Domino3DRules
from domino_env.variants.metro import MetroRules
from domino_env.variants.osel import OselRules
from domino_env.variants.table import TableRules

VARIANTS: dict[str, type[TableRules]] = {
    "classic": ClassicRules,
    "blind_blitz": BlindBlitzRules,
    "blind": BlindRules,
    "all_fives": AllFivesRules,
    "blitz": BlitzRules,
    "cross": CrossRules,
    "metro": MetroRules,
    "osel": OselRules,
    "domino3d": Domino3DRules,
}

# The environment class of each variant that is not a line-of-play game (those use ChainEnv).
ENV_CLASSES: dict[str, type[DominoEnv[Any]]] = {"domino3d": Domino3DEnv}

ENV_OPTIONS = ("episode", "reward", "render_mode", "illegal_action")


def rules_options(name: str) -> list[str]:
    """The keyword options a variant's rules accept (num_players, teams, ...)."""
    return [p for p in inspect.signature(VARIANTS[name].__init__).parameters if p != "self"]


def raw_env(name: str, **options: Any) -> DominoEnv[Any]:
    """The unwrapped environment of a variant; unknown names and options raise ValueError."""
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; available: {', '.join(sorted(VARIANTS))}")
    allowed = rules_options(name)
    unknown = set(options) - set(allowed) - set(ENV_OPTIONS)
    if unknown:
        raise ValueError(
            f"unknown option(s) {sorted(unknown)} for {name}; "
            f"allowed: {', '.join(allowed + list(ENV_OPTIONS))}"
        )
    rules = VARIANTS[name](**{k: v for k, v in options.items() if k in allowed})
    env_class = ENV_CLASSES.get(name, ChainEnv)
    return env_class(rules, **{k: v for k, v in options.items() if k in ENV_OPTIONS})


def make(name: str, **options: Any) -> OrderEnforcing:
    """The environment of a variant, wrapped with PettingZoo's order checks."""
    return OrderEnforcing(raw_env(name, **options))


def module_api(name: str) -> tuple[Callable[..., OrderEnforcing], Callable[..., DominoEnv[Any]]]:
    """``(env, raw_env)`` for a PettingZoo-style ``<name>_v0`` module."""

    def env(**options: Any) -> OrderEnforcing:
        return make(name, **options)

    def raw(**options: Any) -> DominoEnv[Any]:
        return raw_env(name, **options)

    env.__doc__ = f"The {name} environment, wrapped; options as in domino_env.make."
    raw.__doc__ = f"The unwrapped {name} environment."
    return env, raw
