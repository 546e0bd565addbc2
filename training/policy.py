"""Agents for evaluation and play: the baselines by name, or a trained checkpoint."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from domino_env.agents import AGENTS, Agent, make_agent
from domino_env.env import DominoEnv
from training.checkpoint import load_model
from training.networks import ActorCritic


class PolicyAgent:
    """A trained policy: the most probable legal action (or a sample, with ``sample=True``)."""

    def __init__(self, model: ActorCritic, name: str = "policy", sample: bool = False) -> None:
        self.model, self.name, self.sample = model, name, sample

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        obs = observation["observation"][None]
        mask = observation["action_mask"][None].astype(bool)
        if self.sample:
            return int(self.model.act(obs, mask)[0][0])
        return int(self.model.greedy(obs, mask)[0])


def load_agent(spec: str, env: DominoEnv, seed: int | None = None) -> Agent:
    """``random``/``greedy``, or the path of a checkpoint trained on this environment's tables."""
    if spec in AGENTS:
        return make_agent(spec, seed)
    if not Path(spec).exists():
        raise ValueError(f"agent {spec!r} is neither a baseline ({', '.join(AGENTS)}) nor a checkpoint file")
    model, _ = load_model(spec, env.encoder.size, env.rules.num_actions)
    return PolicyAgent(model, name=Path(spec).stem)
