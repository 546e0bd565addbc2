"""Agents from what a person or a config names: a baseline, ``search[:N]``, a checkpoint file,
a run folder, or a policy-guided search ``search:[N:]<checkpoint>`` (:mod:`training.agents.guided`).

Every place that turns a name into an agent (the commands' contestants, the trainer's pool
baselines, ``SingleAgentEnv``'s opponents, the tests) goes through
``domino_env.agents.make_agent``; :func:`load_agent` is the trainer's agent loader there
(the ``domino_env.agents`` entry point in pyproject.toml), for checkpoints and run folders.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import torch

from domino_env import DominoEnv
from domino_env.agents import Agent, make_agent
from training.agents.guided import GuidedSearchAgent
from training.model import checkpoint
from training.model.names import parse_guided_name, policy_path
from training.model.networks import ActorCritic

AgentName = str | os.PathLike[str]


class PolicyAgent:
    """A trained policy: the most probable legal action (or, with ``sample=True``, a sample drawn
    from ``rng``, seeded with ``seed``: the agent's own random stream, which a training run that
    has it in its pool saves and restores, as it does a baseline's)."""

    def __init__(
        self, model: ActorCritic, name: str = "policy", sample: bool = False, seed: int | None = None
    ) -> None:
        self.model, self.name, self.sample = model, name, sample
        self.rng = random.Random(seed)

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        obs = observation["observation"][None]
        return int(self.moves(obs, observation["action_mask"][None].astype(bool))[0])

    def moves(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """This agent's actions at many tables at once (float32[K, O] observations, bool[K, A]
        masks; :meth:`__call__` is one row of it): one forward pass, then the most probable
        legal action, or samples drawn from ``rng`` row by row."""
        if not self.sample:
            return self.model.greedy(obs, masks)
        device = self.model.device
        with torch.no_grad():
            policy, _ = self.model.legal(torch.from_numpy(obs).to(device), torch.from_numpy(masks).to(device))
        actions, weights = policy.actions.tolist(), policy.dist.probs.tolist()
        return np.array(
            [self.rng.choices(a, weights=w)[0] for a, w in zip(actions, weights, strict=True)], np.int64
        )

    def action_probabilities(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> dict[int, float]:
        """How likely each legal action is as this agent plays: the policy's distribution when it
        samples, else all on the most probable action (what exact exploitability reads)."""
        if not self.sample:
            return {self(env, observation): 1.0}
        device = self.model.device
        obs = torch.from_numpy(observation["observation"][None]).to(device)
        mask = torch.from_numpy(observation["action_mask"][None].astype(bool)).to(device)
        with torch.no_grad():
            policy, _ = self.model.legal(obs, mask)
        return dict(zip(policy.actions[0].tolist(), policy.dist.probs[0].tolist(), strict=True))


def checkpoint_file(spec: AgentName) -> Path | None:
    """None for a baseline name; else the checkpoint ``spec`` names (a run folder: its
    ``checkpoints/latest.pt``; ``search:[N:]<checkpoint>``: that checkpoint). A name that is
    neither raises ValueError."""
    path = policy_path(spec)
    return None if path is None else checkpoint.resolve(path)


def resolve_agent(spec: AgentName, env: DominoEnv, seed: int | None = None) -> Agent:
    """The agent ``spec`` names, ready for ``env``'s table: a baseline seeded with ``seed``, or
    the policy of a checkpoint (a CheckpointError if it was trained on another table)."""
    checkpoint_file(spec)  # a name nobody takes: the trainer's own error, which says what exists
    return make_agent(spec, seed, env=env)


def load_agent(spec: str, env: DominoEnv | None, seed: int | None = None) -> Agent | None:
    """The policy of the checkpoint ``spec`` names (a run folder: its latest), or the
    policy-guided search ``search:[N:]<checkpoint>``, for ``env``'s table; None when no such
    file or folder exists (the name is not the trainer's to load)."""
    guided = parse_guided_name(spec)
    target = spec if guided is None else guided[1]
    if not Path(target).exists():
        return None
    if env is None:
        raise ValueError(
            f"agent {spec!r} is a checkpoint, which plays one table: give make_agent the environment it "
            f"will play, as in make_agent({spec!r}, env=env)"
        )
    path = checkpoint.resolve(Path(target))
    model, _ = checkpoint.load_model(path, env.encoder.size, env.rules.num_actions)
    if guided is not None:
        return GuidedSearchAgent(model, guided[0], seed=seed, name=spec)
    return PolicyAgent(model, name=path.stem, seed=seed)
