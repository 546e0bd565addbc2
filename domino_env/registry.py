"""The variant registry, built once from the ``SPECS`` of the modules in :mod:`domino_env.variants`,
and every variant's entries in PettingZoo's and Gymnasium's registries.

A new variant is a new module there: it is found, its spec read, and ``make``, the
``<name>_v0`` module, the CLI's choices, the registry entries and the generic tests' tables
follow from it.

**Registry entries** (made when ``domino_env`` is imported):

* PettingZoo (where it has a registry, ``pettingzoo.register``, as 1.27 has; else none):
  ``pettingzoo.make("aec", "domino/all_fives-v0", num_players=4)`` is
  ``domino_env.make("all_fives", num_players=4)``, and ``pettingzoo.make("parallel", ...)`` the
  same env turned parallel. Options are those of :func:`make`; an unknown one raises its
  ``ValueError``. ``pettingzoo.make(..., max_cycles=N)`` is refused: every episode ends by
  the rules (a round when a hand is empty or play is blocked, a match at its target), so there
  is nothing to truncate.
* Gymnasium: ``gymnasium.make("domino_env/AllFives-v0", opponents=["greedy"])`` is
  :class:`domino_env.wrappers.SingleAgentEnv` on ``all_fives`` (the id is the name in
  CamelCase: ``Classic``, ``Domino3D``, ``BlindBlitz`` ...), options as for that class. Its
  observation is the learner's flat vector, not the AEC dict: the mask is in
  ``info["action_mask"]`` and ``env.action_masks()`` (``gymnasium.make`` wraps the env in
  Gymnasium's checks, which forward no attribute; each id's ``additional_wrappers`` puts
  :class:`domino_env.wrappers.ActionMasks` outermost to bring ``action_masks()`` back).
  Without importing ``domino_env`` first, name the module in the id:
  ``gymnasium.make("domino_env:domino_env/AllFives-v0")`` (Gymnasium 1.x reads no plugin
  entry points).

**The parallel API.** Dominoes are turn-based: the ``"parallel"`` entries are PettingZoo's
``turn_based_aec_to_parallel`` over the AEC env (also ``domino_env.<name>_v0.parallel_env``).
Each ``step(actions)`` plays the action of the seat to move (``infos[agent]["active_agent"]``
names it; its observation's ``action_mask`` is its legal moves, the others' masks are all
zero) and ignores the rest; observations, rewards and flags come for every seat.

**Version policy.** ``spec.version`` is the ``vN`` of every name above (``classic_v0``,
``domino/classic-v0``, ``domino_env/Classic-v0``). A change of the rules or of the
observation (its layout or meaning) raises it, with a line in the variant module's
``Version history``; older versions are not kept, so an id that names an old version fails
to make instead of building a different game.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import sys
from enum import Enum
from types import ModuleType
from typing import Any

import gymnasium
import pettingzoo
from gymnasium.envs.registration import WrapperSpec
from pettingzoo.utils.conversions import turn_based_aec_to_parallel
from pettingzoo.utils.env import ParallelEnv

from domino_env import variants
from domino_env.core.grid import Geometry, Grid
from domino_env.core.line import Line, Spinner
from domino_env.core.state import RoundResult, State, VariantState
from domino_env.core.tiles import TileSet
from domino_env.envs.base import DominoEnv
from domino_env.envs.chain import ChainEnv
from domino_env.envs.grid import Domino3DEnv
from domino_env.envs.order import OrderEnforcing
from domino_env.rules.grid import GridState
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import TableRules

# The environment class of each kind of table.
ENV_CLASSES: dict[str, type[DominoEnv[Any]]] = {"chain": ChainEnv, "grid": Domino3DEnv}
ENV_OPTIONS = ("episode", "reward", "render_mode", "illegal_action")
PETTINGZOO_NAMESPACE = "domino"  # pettingzoo.make("aec", "domino/classic-v0")
GYMNASIUM_NAMESPACE = "domino_env"  # gymnasium.make("domino_env/Classic-v0"), the package's name


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


def shipped() -> list[str]:
    """The released variants (``spec.shipped``): those whose artifacts the release checks demand
    (``make release-check``: a shipped agent, the benchmark reference's pairings, the README's
    picture). A variant being written is registered and tested, but not shipped."""
    return [name for name, variant in SPECS.items() if variant.shipped]


SPECS: dict[str, VariantSpec] = _discover()
# name -> rules class, the registry's older face (kept: users read ``VARIANTS[name].tile_set``).
VARIANTS: dict[str, type[TableRules]] = {name: spec.rules for name, spec in SPECS.items()}


def state_classes() -> tuple[type, ...]:
    """The classes a game in progress (``env.game``) is built of, so the names a pickled game
    may hold: the engine's table states, line, grid and tile set, and each variant module's own
    state (:class:`~domino_env.core.state.VariantState`) and enums. The trainer loads
    checkpoints' games in progress with these allowed and nothing else (no code runs)."""
    own = [
        kind
        for module in {sys.modules[variant.rules.__module__] for variant in SPECS.values()}
        for kind in vars(module).values()
        if isinstance(kind, type)
        and kind.__module__ == module.__name__
        and issubclass(kind, VariantState | Enum)
    ]
    engine = (State, RoundResult, Line, Spinner, TileSet, Grid, Geometry, GridState)
    return (*engine, *sorted(own, key=lambda kind: kind.__qualname__))


def spec(name: str) -> VariantSpec:
    """The spec of a variant; unknown names raise ValueError listing the known ones."""
    if name not in SPECS:
        raise ValueError(f"unknown variant {name!r}; available: {', '.join(SPECS)}")
    return SPECS[name]


def rules_options(name: str) -> list[str]:
    """The keyword options a variant's rules accept (num_players, teams, ...)."""
    return [option.name for option in spec(name).options]


def preset_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with a ``preset`` replaced by the options it names (those given beside it
    win); unknown presets raise ValueError listing the variant's."""
    if "preset" not in options:
        return options
    variant = spec(name)
    options = dict(options)
    preset = options.pop("preset")
    if preset not in variant.presets:
        known = ", ".join(map(repr, variant.presets)) or "none"
        raise ValueError(f"unknown preset {preset!r} for {name}; its presets: {known}")
    return {**variant.presets[preset], **options}


def raw_env(name: str, **options: Any) -> DominoEnv[Any]:
    """The unwrapped environment of a variant; unknown names and options raise ValueError.
    ``preset`` names one of the variant's standard tables (``VariantSpec.presets``)."""
    variant = spec(name)
    options = preset_options(name, options)
    allowed = rules_options(name)
    unknown = set(options) - set(allowed) - set(ENV_OPTIONS)
    if "max_cycles" in unknown:  # what pettingzoo.make passes when asked to
        raise ValueError(
            f"{name} takes no max_cycles: every episode ends by the rules (a round when a hand is "
            "empty or play is blocked, a match at its target score); leave max_cycles unset"
        )
    if unknown:
        raise ValueError(
            f"unknown option(s) {sorted(unknown)} for {name}; "
            f"allowed: {', '.join(allowed + list(ENV_OPTIONS))}, preset"
        )
    rules = variant.rules(**{k: v for k, v in options.items() if k in allowed})
    env_class = ENV_CLASSES[variant.table]
    env = env_class(
        rules, observer=variant.observer, **{k: v for k, v in options.items() if k in ENV_OPTIONS}
    )
    env.metadata["name"] = variant.module_name
    return env


def make(name: str, **options: Any) -> OrderEnforcing:
    """The environment of a variant, wrapped with PettingZoo's order checks."""
    return OrderEnforcing(raw_env(name, **options))


def variant_module(variant: VariantSpec) -> ModuleType:
    """The PettingZoo-style ``domino_env.<name>_v<version>`` module of a variant: ``env``,
    ``raw_env`` and ``parallel_env`` (options as in :func:`make`), the rules' documentation as
    its docstring."""
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

    def parallel(**options: Any) -> ParallelEnv:
        return turn_based_aec_to_parallel(make(name, **options))

    env.__doc__ = f"The {name} environment, wrapped; options as in domino_env.make."
    raw.__doc__ = f"The unwrapped {name} environment."
    parallel.__doc__ = f"The {name} environment through PettingZoo's parallel API (turn-based)."
    module.env, module.raw_env, module.parallel_env = env, raw, parallel  # type: ignore[attr-defined]
    module.SPEC = variant  # type: ignore[attr-defined]
    return module


# --- PettingZoo's and Gymnasium's registries ---------------------------------------------------


def pettingzoo_id(variant: VariantSpec) -> str:
    """The variant's id in PettingZoo's registry, e.g. ``domino/all_fives-v0``."""
    return f"{PETTINGZOO_NAMESPACE}/{variant.name}-v{variant.version}"


def gymnasium_id(variant: VariantSpec) -> str:
    """The variant's id in Gymnasium's registry, its name in CamelCase, e.g. ``domino_env/AllFives-v0``
    (``str.title`` also capitalizes after a digit: ``domino3d`` -> ``Domino3D``)."""
    return f"{GYMNASIUM_NAMESPACE}/{variant.name.title().replace('_', '')}-v{variant.version}"


def register_pettingzoo() -> bool:
    """Register every variant's ``"aec"`` and ``"parallel"`` env with PettingZoo; False (and
    nothing registered) where the installed PettingZoo has no registry (older releases)."""
    register = getattr(pettingzoo, "register", None)
    if register is None:
        return False
    for variant in SPECS.values():
        _register_pettingzoo(register, variant)
    return True


def _register_pettingzoo(register: Any, variant: VariantSpec) -> None:
    module = f"domino_env.{variant.module_name}"  # the entry points load lazily, by name
    register("aec", pettingzoo_id(variant), entry_point=f"{module}:env")
    register("parallel", pettingzoo_id(variant), entry_point=f"{module}:parallel_env")


# Outermost on every env gymnasium.make builds: ``action_masks()`` on the env it returns.
ACTION_MASKS = WrapperSpec(name="ActionMasks", entry_point="domino_env.wrappers:ActionMasks", kwargs={})


def register_gymnasium() -> None:
    """Register every variant's single-agent view (:class:`domino_env.wrappers.SingleAgentEnv`,
    a layer above, named and imported only when made) with Gymnasium, wrapped last in
    :class:`domino_env.wrappers.ActionMasks` so that ``env.action_masks()`` works on what
    ``gymnasium.make`` returns (its own wrappers forward no attribute)."""
    for variant in SPECS.values():
        _register_gymnasium(variant)


def _register_gymnasium(variant: VariantSpec) -> None:
    gymnasium.register(
        gymnasium_id(variant),
        entry_point="domino_env.wrappers:SingleAgentEnv",
        kwargs={"variant": variant.name},
        additional_wrappers=(ACTION_MASKS,),
    )


register_pettingzoo()
register_gymnasium()


# --- a variant from elsewhere ------------------------------------------------------------------

PACKAGE = __name__.rpartition(".")[0]  # domino_env, where the <name>_v<N> modules live
_ADDED: set[str] = set()  # the variants register() added


def register(module: ModuleType) -> list[VariantSpec]:
    """Add the variants a module outside :mod:`domino_env.variants` declares (its ``SPECS``), as
    if they had been found there: ``make``, ``spec``, ``SPECS``/``VARIANTS``, the
    ``domino_env.<name>_v<N>`` module and the PettingZoo and Gymnasium entries. For a variant
    kept in another package, or one being written somewhere else (``python -m training
    new-variant NAME --root DIR`` writes one into ``DIR``; ``tests/training/test_scaffold.py`` registers
    it). The module must be importable as named (in ``sys.modules``). A name already registered
    is refused (ValueError), and so is a module without ``SPECS``; :func:`unregister` undoes it."""
    declared = list(getattr(module, "SPECS", ()))
    if not declared:
        raise ValueError(f"{module.__name__} declares no SPECS")
    taken = [variant.name for variant in declared if variant.name in SPECS]
    if taken:
        raise ValueError(f"variant(s) {taken} are already registered")
    package = sys.modules[PACKAGE]
    for variant in declared:
        _ADDED.add(variant.name)
        SPECS[variant.name] = variant
        VARIANTS[variant.name] = variant.rules
        generated = variant_module(variant)
        sys.modules[generated.__name__] = generated
        setattr(package, variant.module_name, generated)
        if getattr(pettingzoo, "register", None) is not None:
            _register_pettingzoo(pettingzoo.register, variant)
        _register_gymnasium(variant)
    _sort(SPECS)
    _sort(VARIANTS)
    return declared


def unregister(name: str) -> None:
    """Remove a variant that :func:`register` added (and its module and registry entries); the
    variants found in :mod:`domino_env.variants` stay (ValueError)."""
    if name not in _ADDED:
        raise ValueError(f"{name!r} was not added by register(): only those can be removed")
    variant = SPECS[name]
    _ADDED.discard(name)
    del SPECS[name], VARIANTS[name]
    sys.modules.pop(f"{PACKAGE}.{variant.module_name}", None)
    with contextlib.suppress(AttributeError):
        delattr(sys.modules[PACKAGE], variant.module_name)
    for registry in (getattr(pettingzoo, "aec_registry", {}), getattr(pettingzoo, "parallel_registry", {})):
        registry.pop(pettingzoo_id(variant), None)
    gymnasium.registry.pop(gymnasium_id(variant), None)


def _sort(table: dict[str, Any]) -> None:
    """Keep a by-name table sorted, in place (others hold the same dict)."""
    items = sorted(table.items())
    table.clear()
    table.update(items)
