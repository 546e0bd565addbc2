"""PettingZoo's parallel API over every variant, and the registry entries ``import domino_env``
makes: PettingZoo's (``"aec"`` and ``"parallel"``) and Gymnasium's (the single-agent view)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import warnings
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper

import domino_env
from domino_env.envs.order import OrderEnforcing
from domino_env.registry import gymnasium_id, pettingzoo_id, register_pettingzoo
from domino_env.wrappers import SingleAgentEnv
from tests.support.variant_configs import configs

VARIANTS = list(domino_env.SPECS)


# --- the parallel API --------------------------------------------------------------------------


@configs
def test_parallel_api(name: str, n: int, teams: bool) -> None:
    table = {"num_players": n, "teams": teams}
    parallel_api_test(pettingzoo.make("parallel", pettingzoo_id(domino_env.spec(name)), **table))
    # PettingZoo's seed test samples actions without the mask, so its first one almost always
    # ends the game (penalized); a whole masked game played twice checks the play itself.
    penalized = {**table, "illegal_action": "penalize"}
    registered = pettingzoo_id(domino_env.spec(name))
    parallel_seed_test(partial(pettingzoo.make, "parallel", registered, **penalized))
    runs = [masked_parallel_game(pettingzoo.make("parallel", registered, **table)) for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0]) > 5


def masked_parallel_game(env: Any, seed: int = 3) -> list[Any]:
    """A whole game on a parallel env, the mover's action drawn from its mask (the waiting
    seats send 0): every step's action, observations, rewards and ends, as bytes and numbers."""
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace: list[Any] = []
    while env.agents:
        (mover,) = [a for a, o in observations.items() if o["action_mask"].any()]
        action = int(rng.choice(np.flatnonzero(observations[mover]["action_mask"])))
        observations, rewards, terminations, truncations, _ = env.step(
            {a: action if a == mover else 0 for a in env.agents}
        )
        seen = sorted(
            (a, o["observation"].tobytes(), o["action_mask"].tobytes()) for a, o in observations.items()
        )
        ends = sorted(terminations.items()), sorted(truncations.items())
        trace.append((action, seen, sorted(rewards.items()), ends))
    return trace


@pytest.mark.parametrize("name", ["all_fives", "domino3d", "blind_blitz"])
def test_a_parallel_game_is_the_aec_game_and_ignores_the_waiting_seats(name: str) -> None:
    """Only the seat to move's action is played (the waiting seats send action 0, which they may
    not play): the same moves give the same game, reward for reward, as the AEC env."""
    options = {"num_players": 2, "episode": "round", "reward": "points"}
    parallel = domino_env.variant_module(domino_env.spec(name)).parallel_env(**options)
    aec = domino_env.make(name, **options)
    observations, infos = parallel.reset(seed=5)
    aec.reset(seed=5)
    rnd = random.Random(0)
    totals = dict.fromkeys(aec.possible_agents, 0.0)
    aec_totals = dict.fromkeys(aec.possible_agents, 0.0)
    steps = 0
    while parallel.agents:
        (mover,) = [a for a, o in observations.items() if o["action_mask"].any()]  # only it has moves
        assert mover == aec.agent_selection
        assert np.array_equal(observations[mover]["observation"], aec.observe(mover)["observation"])
        action = rnd.choice(np.flatnonzero(observations[mover]["action_mask"]).tolist())
        waiting = dict.fromkeys((a for a in parallel.agents if a != mover), 0)
        observations, rewards, terminations, truncations, infos = parallel.step({mover: action, **waiting})
        aec.step(action)
        for agent in aec.possible_agents:
            totals[agent] += rewards[agent]
            aec_totals[agent] += aec.rewards[agent]
        if parallel.agents:
            assert {info["active_agent"] for info in infos.values()} == {aec.agent_selection}
        steps += 1
    assert steps > 5 and all(terminations.values()) and not any(truncations.values())
    assert totals == pytest.approx(aec_totals) and any(totals.values())


# --- PettingZoo's registry ---------------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
def test_pettingzoo_makes_every_variant(name: str) -> None:
    spec = domino_env.spec(name)
    table = dict(spec.benchmark_tables[-1])
    env_id = pettingzoo_id(spec)
    assert env_id == f"domino/{name}-v{spec.version}"
    aec = pettingzoo.make("aec", env_id, **table)
    assert isinstance(aec, OrderEnforcing)
    assert aec.unwrapped.rules.name == name and aec.unwrapped.rules.num_players == table["num_players"]
    aec.reset(seed=0)
    parallel = pettingzoo.make("parallel", env_id, **table)
    assert isinstance(parallel, turn_based_aec_to_parallel_wrapper)
    assert parallel.unwrapped.rules.name == name
    observations, _ = parallel.reset(seed=0)
    assert set(observations) == set(parallel.possible_agents)
    assert pettingzoo.spec("aec", f"domino/{spec.module_name}").id == env_id  # the module's spelling too


def test_pettingzoo_api_through_the_registry() -> None:
    api_test(pettingzoo.make("aec", "domino/all_fives-v0", num_players=4), num_cycles=200)


def test_pettingzoo_make_options_errors() -> None:
    with pytest.raises(ValueError, match=r"all_fives takes no max_cycles: every episode ends by the rules"):
        pettingzoo.make("aec", "domino/all_fives-v0", max_cycles=100)
    with pytest.raises(
        ValueError, match=r"unknown option\(s\) \['colour'\] for classic; allowed: num_players"
    ):
        pettingzoo.make("parallel", "domino/classic-v0", colour="red")
    with pytest.raises(ValueError, match="teams must be False"):
        pettingzoo.make("aec", "domino/domino3d-v0", num_players=4, teams=True)
    with pytest.raises(pettingzoo.env_registry.exceptions.VersionNotFound, match="Available version: v0"):
        pettingzoo.make("aec", "domino/classic-v1")  # old or unknown versions are not kept
    # max_cycles=-1 is PettingZoo's "pass none": the env is made as usual
    assert pettingzoo.make("aec", "domino/classic-v0", max_cycles=-1).unwrapped.rules.name == "classic"


def test_a_pettingzoo_without_a_registry_gets_no_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    for registry in (pettingzoo.aec_registry, pettingzoo.parallel_registry):
        for env_id in [key for key in registry if key.startswith("domino/")]:
            monkeypatch.delitem(registry, env_id)  # put back after the test
    monkeypatch.delattr(pettingzoo, "register")
    assert register_pettingzoo() is False
    assert not [key for key in pettingzoo.aec_registry if key.startswith("domino/")]
    assert not [key for key in pettingzoo.parallel_registry if key.startswith("domino/")]


# --- Gymnasium's registry ----------------------------------------------------------------------


def test_gymnasium_ids_are_the_names_in_camel_case() -> None:
    """One id a spec, each registered: the name in CamelCase (``all_fives`` -> ``AllFives``,
    ``domino3d`` -> ``Domino3D``) and the spec's version, in the package's namespace."""
    ids = {name: gymnasium_id(spec) for name, spec in domino_env.SPECS.items()}
    for name, env_id in ids.items():
        match = re.fullmatch(r"domino_env/([A-Z][A-Za-z0-9]*)-v(\d+)", env_id)
        assert match, env_id
        camel, version = match.groups()
        assert int(version) == domino_env.spec(name).version
        assert camel.lower() == name.replace("_", "").lower()  # the name, its words capitalized
    assert ids["all_fives"] == "domino_env/AllFives-v0" and ids["domino3d"] == "domino_env/Domino3D-v0"
    assert len(set(ids.values())) == len(ids)  # unique
    assert set(ids.values()) <= set(gym.registry)
    registered = {env_id for env_id in gym.registry if env_id.startswith("domino_env/")}
    assert registered == set(ids.values())  # and nothing else under the namespace


@pytest.mark.parametrize("name", VARIANTS)
def test_gymnasium_makes_every_variant(name: str) -> None:
    spec = domino_env.spec(name)
    table = dict(spec.benchmark_tables[-1])
    env = gym.make(gymnasium_id(spec), opponents="greedy", **table)
    inner = env.unwrapped
    assert isinstance(inner, SingleAgentEnv) and inner.aec.rules.name == name
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker gym.make adds has nothing to say
        observation, _ = env.reset(seed=0)
        done = False
        while not done:
            assert observation in env.observation_space
            observation, _, terminated, truncated, _ = env.step(env.action_space.sample())  # a legal move
            done = terminated or truncated


def test_check_env_on_one_made_by_gymnasium() -> None:
    # check_env steps with an action drawn before a reset: penalized, not raised (see LegalDiscrete)
    env = gym.make("domino_env/AllFives-v0", opponents=["greedy"], illegal_action="penalize")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def test_gymnasium_makes_it_without_importing_domino_env_first() -> None:
    """Gymnasium 1.x reads no plugin entry points: the id names the module that registers it."""
    script = (
        "import sys, gymnasium\n"
        "assert 'domino_env' not in sys.modules\n"
        "env = gymnasium.make('domino_env:domino_env/Classic-v0', opponents='random', num_players=3)\n"
        "rules = env.unwrapped.aec.rules\n"
        "print(rules.name, rules.num_players, env.reset(seed=0)[0].shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("classic 3 (")
