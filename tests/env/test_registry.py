"""The registry is built from the variants' specs: every variant module registers itself once."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import gymnasium as gym
import numpy as np
import pytest

import domino_env
import domino_env.registry
from domino_env import variants
from domino_env.rules.spec import VariantSpec
from domino_env.variants.classic import ClassicRules


def test_every_variant_module_registers_its_specs() -> None:
    found = set()
    for info in pkgutil.iter_modules(variants.__path__):
        module = importlib.import_module(f"domino_env.variants.{info.name}")
        assert module.SPECS, f"{info.name} declares no SPECS"
        found |= {spec.name for spec in module.SPECS}
    assert found == set(domino_env.SPECS) == set(domino_env.VARIANTS)
    assert len(found) == 9


@pytest.mark.parametrize("name", list(domino_env.SPECS))
def test_spec_options_are_the_rules_options_dataclass(name: str) -> None:
    spec = domino_env.spec(name)
    settable = [f for f in dataclasses.fields(spec.rules.options_type) if f.init]
    assert [(o.name, o.default) for o in spec.options] == [(f.name, f.default) for f in settable]
    defaults = {o.name: o.default for o in spec.options}
    assert spec.rules(**defaults).options == spec.rules().options
    assert all(o.help for o in spec.options), "every option says what it does"
    assert all(o.type is not None for o in spec.options)
    # the defaults build the rules, and every standard table is a legal one
    spec.rules()
    tables = [(t["num_players"], t["teams"]) for t in spec.tables()]
    for table in spec.benchmark_tables:
        assert (table["num_players"], table.get("teams", False)) in tables
        domino_env.make(name, **table).reset(seed=0)
    # extra actions have display names
    rules = spec.rules(**spec.benchmark_tables[0])
    extras = {kind for kind in rules.action_kind if kind != "play"}
    assert extras <= set(spec.action_names), f"{name}: no display name for {extras - set(spec.action_names)}"


@pytest.mark.parametrize("name", list(domino_env.SPECS))
def test_variant_modules_are_generated(name: str) -> None:
    spec = domino_env.spec(name)
    module = importlib.import_module(f"domino_env.{spec.module_name}")
    assert getattr(domino_env, spec.module_name) is module
    assert module.SPEC is spec
    assert spec.title in (module.__doc__ or "")
    env = module.env()
    env.reset(seed=1)
    assert env.metadata["name"] == spec.module_name
    assert type(module.raw_env()) is type(env.unwrapped)


@pytest.mark.parametrize("name", list(domino_env.SPECS))
def test_every_gymnasium_id_gives_action_masks_on_the_made_env(name: str) -> None:
    """Gymnasium's wrappers forward no attribute: each id wraps its env last in ActionMasks, so
    ``action_masks()`` is on what ``gymnasium.make`` returns, the mask ``info`` carries."""
    spec = domino_env.spec(name)
    env_id = domino_env.registry.gymnasium_id(spec)
    assert gym.spec(env_id).additional_wrappers == (domino_env.registry.ACTION_MASKS,)
    env = gym.make(env_id, opponents="random", **spec.benchmark_tables[0])
    _, info = env.reset(seed=0)
    mask = env.action_masks()
    assert mask.any() and np.array_equal(mask, info["action_mask"])


def test_unknown_variant_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown variant 'dominoes'; available: all_fives, blind"):
        domino_env.spec("dominoes")
    with pytest.raises(ValueError, match="unknown variant"):
        domino_env.make("dominoes")


def test_a_spec_checks_what_it_declares() -> None:
    with pytest.raises(ValueError, match="table must be one of"):
        VariantSpec("x", "X", ClassicRules, "hex", "s", option_help={"draw": "d"})
    with pytest.raises(ValueError, match=r"undocumented: \['draw'\]"):
        VariantSpec("x", "X", ClassicRules, "chain", "s")
    with pytest.raises(ValueError, match=r"unknown: \['drow'\]"):
        VariantSpec("x", "X", ClassicRules, "chain", "s", option_help={"draw": "d", "drow": "?"})
