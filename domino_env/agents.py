"""Baseline agents (no torch): ``random`` and ``greedy``, for any variant.

An agent is called as ``agent(env, observation) -> action`` with the *unwrapped*
environment and the current agent's observation dict; ``random`` needs only the mask,
``greedy`` asks the rules what each legal move is worth right now.
"""

from __future__ import annotations

import random
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


def make_agent(name: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """A baseline agent by name; unknown names raise ValueError listing the known ones."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; baselines: {', '.join(AGENTS)}")
    return AGENTS[name](seed=seed, **kwargs)
