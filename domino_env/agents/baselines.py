"""The baselines: ``random`` (uniform over the legal actions) and ``greedy`` (the move the
rules rate highest now), and the :class:`Agent` protocol every agent follows."""

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

    def action_probabilities(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> dict[int, float]:
        """Every legal action equally likely (what exact exploitability reads)."""
        legal = legal_actions(observation).tolist()
        return dict.fromkeys(legal, 1.0 / len(legal))


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
