"""The variant registry, built once from the ``SPECS`` of the modules in :mod:`domino_env.variants`.

A new variant is a new module there: it is found, its spec read, and ``make``, the
``<name>_v0`` module, the CLI's choices and the generic tests' tables follow from it.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from types import ModuleType
from typing import Any

from domino_env import variants
from domino_env.envs.base import DominoEnv
from domino_env.envs.chain import ChainEnv
from domino_env.envs.grid import Domino3DEnv
from domino_env.envs.order import OrderEnforcing
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import TableRules

# The environment class of each kind of table.
ENV_CLASSES: dict[str, type[DominoEnv[Any]]] = {"chain": ChainEnv, "grid": Domino3DEnv}
ENV_OPTIONS = ("episode", "reward", "render_mode", "illegal_action")


def _discover() -> dict[str, VariantSpec]:
    """Every spec of every module in :mod:`domino_env.variants`, by name (sorted)."""
    found: dict[str, VariantSpec] = {}
    for info in pkgutil.iter_modules(variants.__path__):
        module = importlib.import_module(f"{variants.__name__}.{info.name}")
        for spec in getattr(module, "SPECS", ()):
            if spec.name in found:
                raise RuntimeError(f"variant {spec.name!r} is registered twice")
            found[spec.name] = spec
    return dict(sorted(found.items()))


SPECS: dict[str, VariantSpec] = _discover()
# name -> rules class, the registry's older face (kept: users read ``VARIANTS[name].tile_set``).
VARIANTS: dict[str, type[TableRules]] = {name: spec.rules for name, spec in SPECS.items()}


def spec(name: str) -> VariantSpec:
    """The spec of a variant; unknown names raise ValueError listing the known ones."""
    if name not in SPECS:
        raise ValueError(f"unknown variant {name!r}; available: {', '.join(SPECS)}")
    return SPECS[name]


def rules_options(name: str) -> list[str]:
    """The keyword options a variant's rules accept (num_players, teams, ...)."""
    return [option.name for option in spec(name).options]


def raw_env(name: str, **options: Any) -> DominoEnv[Any]:
    """The unwrapped environment of a variant; unknown names and options raise ValueError."""
    variant = spec(name)
    allowed = rules_options(name)
    unknown = set(options) - set(allowed) - set(ENV_OPTIONS)
    if unknown:
        raise ValueError(
            f"unknown option(s) {sorted(unknown)} for {name}; "
            f"allowed: {', '.join(allowed + list(ENV_OPTIONS))}"
        )
    rules = variant.rules(**{k: v for k, v in options.items() if k in allowed})
    env_class = ENV_CLASSES[variant.table]
    return env_class(
        rules, observer=variant.observer, **{k: v for k, v in options.items() if k in ENV_OPTIONS}
    )


def make(name: str, **options: Any) -> OrderEnforcing:
    """The environment of a variant, wrapped with PettingZoo's order checks."""
    return OrderEnforcing(raw_env(name, **options))


def variant_module(variant: VariantSpec) -> ModuleType:
    """The PettingZoo-style ``domino_env.<name>_v<version>`` module of a variant: ``env`` and
    ``raw_env`` (options as in :func:`make`), the rules' documentation as its docstring."""
    name = variant.name
    rules_doc = sys.modules[variant.rules.__module__].__doc__ or ""
    module = ModuleType(
        f"domino_env.{variant.module_name}",
        f"{variant.title} as a PettingZoo AEC environment.\n\n{rules_doc}",
    )

    def env(**options: Any) -> OrderEnforcing:
        return make(name, **options)

    def raw(**options: Any) -> DominoEnv[Any]:
        return raw_env(name, **options)

    env.__doc__ = f"The {name} environment, wrapped; options as in domino_env.make."
    raw.__doc__ = f"The unwrapped {name} environment."
    module.env, module.raw_env, module.SPEC = env, raw, variant  # type: ignore[attr-defined]
    return module
