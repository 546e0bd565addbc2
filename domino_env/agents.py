"""Agents by name (no torch): the ``random`` and ``greedy`` baselines, and what plug-ins load.

An agent is called as ``agent(env, observation) -> action`` with the *unwrapped*
environment and the current agent's observation dict; ``random`` needs only the mask,
``greedy`` asks the rules what each legal move is worth right now.

:func:`make_agent` is the one place names become agents. A name that is no baseline goes to
the *agent loaders*: functions ``(name, env, seed) -> Agent | None`` that packages register
under the entry-point group ``domino_env.agents``. The trainer registers one for checkpoint
files and run folders (``pip install -e ".[train]"``), so ``domino_env`` imports nothing of
it and needs no torch, yet ``SingleAgentEnv(opponents="agents/classic.pt")`` works.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Protocol

import numpy as np

from domino_env.envs.base import DominoEnv
from domino_env.rules.table import TableRules


class Agent(Protocol):
    name: str

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int: ...


def legal_actions(observation: dict[str, np.ndarray]) -> np.ndarray:
    """The legal action ids in an observation's mask (as bools first: numpy's nonzero on int8
    costs 15 times more, which shows with 3D dominoes' 25,088 actions)."""
    return np.flatnonzero(observation["action_mask"].astype(bool, copy=False))


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        legal = legal_actions(observation)
        return int(legal[self.rng.randrange(len(legal))])


class GreedyAgent:
    """The move the rules rate highest now (points scored, then the heaviest tile); ties at random."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        return int(greedy_choice(env.rules, env.game, legal_actions(observation).tolist(), self.rng))


def greedy_choice(rules: TableRules, game: Any, legal: list[int], rng: random.Random) -> int:
    """Among ``legal``, an action with the highest ``rules.greedy_key`` now, ties by ``rng``."""
    keys = [rules.greedy_key(game, a) for a in legal]
    best = max(keys)
    return rng.choice([a for a, k in zip(legal, keys, strict=True) if k == best])


AGENTS: dict[str, type[RandomAgent] | type[GreedyAgent]] = {"random": RandomAgent, "greedy": GreedyAgent}


LOADER_GROUP = "domino_env.agents"  # the entry-point group of agent loaders
AgentLoader = Callable[[str, DominoEnv | None, int | None], Agent | None]


@cache
def agent_loaders() -> dict[str, AgentLoader | ImportError]:
    """The installed agent loaders by entry-point name (read once); a loader whose package
    cannot be imported (the trainer without the train extra) is kept as its ImportError."""
    loaders: dict[str, AgentLoader | ImportError] = {}
    for point in entry_points(group=LOADER_GROUP):
        try:
            loaders[point.name] = point.load()
        except ImportError as err:
            loaders[point.name] = err
    return loaders


def make_agent(name: str | os.PathLike[str], seed: int | None = None, env: DominoEnv | None = None) -> Agent:
    """The agent ``name`` names: a baseline seeded with ``seed``, or what an installed loader
    makes of it for ``env``'s table (the trainer's: a checkpoint file or a run folder).
    A name nobody takes raises ValueError listing what is known."""
    if isinstance(name, str) and name in AGENTS:
        return AGENTS[name](seed=seed)
    if not isinstance(name, (str, os.PathLike)):
        raise ValueError(f"an agent name must be a string or a path, got {name!r}")
    loaders = agent_loaders()
    for load in loaders.values():
        if not isinstance(load, ImportError) and (agent := load(str(name), env, seed)) is not None:
            return agent
    known = [
        f"{point} (unavailable: {load}; pip install -e '.[train]')"
        if isinstance(load, ImportError)
        else point
        for point, load in loaders.items()
    ]
    takes = f"; agent loaders: {', '.join(known)}" if known else ""
    raise ValueError(
        f"unknown agent {str(name)!r}: neither a baseline ({', '.join(AGENTS)}) nor loaded{takes}"
    )
