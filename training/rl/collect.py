"""What the trainer needs of a collector: the seam between the PPO loop and whatever plays
the games.

:class:`training.rl.rollout.LocalCollector` steps its environments in this process,
:class:`training.rl.vector_collect.VectorCollector` its tables on one batched engine (the
one ``run.collector`` names: :func:`collector_factory`);
:class:`training.rl.distributed.RayCollector` spreads either over Ray actors. The trainer is
given a :data:`CollectorFactory` (default ``collector_factory(config)``, or
``distributed.ray_collector(workers)``) and calls nothing on the collector but what
:class:`Collector` lists.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from training.model.config import Config
from training.model.networks import ActorCritic, Architecture
from training.rl.ppo import Batch
from training.rl.rollout import EpisodeStats, Learner, LocalCollector
from training.rl.vector_collect import VectorCollector


class Collector(Protocol):
    """Plays the run's games with the current policy and hands back PPO batches."""

    @property
    def architecture(self) -> Architecture:
        """The network a model trained on these games is built with (its table's)."""
        ...

    @property
    def num_workers(self) -> int:
        """The Ray workers collecting (0: this process); a checkpoint resumes only with as many."""
        ...

    def collect(self, model: Learner, steps: int) -> tuple[Batch, EpisodeStats]:
        """Play ``steps`` decisions in every environment with ``model`` (nfsp: its
        :class:`~training.rl.nfsp.Player`): the learner's transitions, their advantages
        computed (GAE), and the finished games' outcomes."""
        ...

    def add_snapshot(self, model: ActorCritic) -> None:
        """A frozen copy of ``model`` joins the opponent pool."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Everything an exact resume needs: the games in progress, the pool, the RNG states."""
        ...

    def load_state_dict(self, state: dict[str, Any], model: ActorCritic) -> None:
        """Go on from :meth:`state_dict`'s ``state``; ``model`` has the run's architecture."""
        ...

    def close(self) -> None:
        """Release what the collector holds (Ray workers); nothing for a local one."""
        ...


CollectorFactory = Callable[[Config, np.random.Generator], Collector]
"""Builds a run's collector from its config and the run's collection RNG."""


def collector_factory(config: Config, lane: int = 0) -> CollectorFactory:
    """The collector ``run.collector`` names: ``local`` (:class:`~training.rl.rollout.LocalCollector`,
    scalar envs) or ``vector`` (:class:`~training.rl.vector_collect.VectorCollector`, one batched
    engine, dealing in its ``lane`` of seeds: a Ray worker's index, 0 for a local run)."""
    if config.run.collector == "vector":
        return functools.partial(VectorCollector, lane=lane)
    return LocalCollector
