"""Rollouts on Ray actors; the learner stays in the driver.

    python -m training train configs/all_fives.yaml --ray 2                  # a local Ray instance
    python -m training train configs/all_fives.yaml --ray 16 --ray-address auto  # an existing cluster

:class:`RayCollector` is a :class:`training.rl.collect.Collector`. Each of its ``workers`` Ray
actors holds an ordinary collector of ``run.collector``'s kind (a
:class:`~training.rl.rollout.LocalCollector`, or with ``run.collector=vector`` a
:class:`~training.rl.vector_collect.VectorCollector` stepping its own batched engine) over its
share of ``run.num_envs`` (32 envs on 3 workers: 11, 11, 10) with its own seed stream (numpy
and torch, drawn from the run's seed; a vector worker deals in its own lane of seeds, its
index, so no two workers deal the same game). Every iteration the driver puts the current
weights in Ray's object store once, every worker plays ``run.rollout_steps`` decisions in each
of its envs and computes GAE on its own transitions (a seat's transitions never cross
workers), and the driver concatenates the batches in worker order for one PPO update.
Opponent-pool snapshots are broadcast the same way.
Per iteration the update sees the same number of transitions from the same distribution as a
local run, so learning curves agree within noise; with one worker the batches are identical to
a ``LocalCollector`` (or ``VectorCollector``) seeded as that worker.

Checkpoints hold every worker's games, pool and RNG states, so ``--resume`` continues exactly,
but only with the same number of workers: a checkpoint collected with ``--ray N`` resumes only
with ``--ray N`` and a local one only locally (both refused with a clear error otherwise).
With ``run.collector=vector`` each worker resumes as a local vector run does, exactly: its
pool, seating, RNG states and its engine's games in progress as saved; ``run.collector`` is
kept on resume.

On a cluster every node needs this project's dependencies (numpy, torch, pettingzoo,
gymnasium, ray); the driver ships its own ``domino_env`` and ``training`` packages to the
workers (Ray ``py_modules``), so the code they run is the driver's.
"""

from __future__ import annotations

import copy
import os
from dataclasses import fields
from typing import Any

import numpy as np
import torch

from training.model.config import Config, ConfigError, acting_epsilon
from training.model.networks import ActorCritic, Architecture
from training.rl.collect import CollectorFactory, collector_factory
from training.rl.ppo import Batch
from training.rl.rollout import EpisodeStats, Learner


def split(total: int, parts: int) -> list[int]:
    """``total`` envs over ``parts`` workers, as evenly as possible, larger shares first."""
    return [total // parts + (k < total % parts) for k in range(parts)]


def worker_seeds(rng: np.random.Generator, workers: int) -> list[int]:
    """One seed per worker, drawn from the run's collection RNG (reproducible from ``run.seed``)."""
    return [int(s) for s in rng.integers(2**63, size=workers)]


class RolloutWorker:
    """``run.collector``'s collector over ``num_envs`` envs with its own numpy and torch seeds
    (a Ray actor); ``lane``: its index (a vector collector's lane of deal seeds). It acts on the
    CPU whatever ``run.device`` the learner is on (the driver sends CPU weights)."""

    def __init__(self, config: Config, num_envs: int, seed: int, lane: int = 0) -> None:
        config = copy.deepcopy(config)
        config.run.num_envs = num_envs
        torch.set_num_threads(config.run.torch_threads)
        self.rng = np.random.default_rng(seed)
        self.collector = collector_factory(config, lane)(config, self.rng)
        self.model = ActorCritic(self.collector.architecture)
        self.model.epsilon = acting_epsilon(config)  # (dmc: epsilon-greedy, as the learner's model)
        torch.manual_seed(seed)  # the actions' stream starts here: as a collector seeded alike

    def architecture(self) -> Architecture:
        return self.collector.architecture

    def collect(self, weights: dict[str, torch.Tensor], steps: int) -> tuple[Batch, EpisodeStats]:
        self.model.load_state_dict(weights)
        return self.collector.collect(self.model, steps)

    def add_snapshot(self, weights: dict[str, torch.Tensor]) -> None:
        self.model.load_state_dict(weights)
        self.collector.add_snapshot(self.model)

    def state_dict(self) -> dict[str, Any]:
        return {
            "collector": self.collector.state_dict(),
            "rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.collector.load_state_dict(state["collector"], self.model)
        self.rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])


def merge(parts: list[tuple[Batch, EpisodeStats]]) -> tuple[Batch, EpisodeStats]:
    """The workers' batches end to end (each already has its advantages) and their summed stats."""
    merged: dict[str, Any] = {}
    for f in fields(Batch):
        part = [getattr(b, f.name) for b, _ in parts]
        merged[f.name] = None if any(x is None for x in part) else torch.cat(part)  # (states: optional)
    batch = Batch(**merged)
    stats = EpisodeStats()
    for _, s in parts:
        stats.self_play += s.self_play
        stats.decisions += s.decisions
        stats.pool_games += s.pool_games
        stats.pool_wins += s.pool_wins
        stats.lengths.extend(s.lengths)
    return batch, stats


class RayCollector:
    """A :class:`training.rl.collect.Collector` over ``workers`` Ray actors.

    Uses the Ray instance already running in this process, else connects to ``address``
    (``"auto"``, ``"host:port"``, ``"ray://host:10001"``), else starts a local one.
    ``workers=0`` with an address: one worker per CPU of the cluster, less one for the learner.
    """

    def __init__(
        self, config: Config, rng: np.random.Generator, workers: int, address: str | None = None
    ) -> None:
        if config.algorithm == "nfsp":
            raise ConfigError(
                "algorithm=nfsp collects on this machine only (run.collector local or vector): "
                "its best-response network and each game's modes are not sent to Ray workers; drop --ray"
            )
        try:
            import ray
        except ImportError:
            raise ConfigError('--ray needs Ray: pip install "domino-env[ray]"') from None

        if workers < 0 or (workers == 0 and address is None):
            raise ConfigError(f"--ray needs at least 1 worker, got {workers}")
        if workers > config.run.num_envs:
            raise ConfigError(f"--ray {workers} needs run.num_envs >= {workers}, got {config.run.num_envs}")
        self._started_ray = not ray.is_initialized()
        if self._started_ray:
            if address is None:  # a local instance: room for every worker even on a small machine
                ray.init(num_cpus=max(os.cpu_count() or 1, workers), include_dashboard=False)
            else:
                import domino_env
                import training

                ray.init(address=address, runtime_env={"py_modules": [domino_env, training]})
        if workers == 0:  # one per CPU of the cluster, less one for the learner
            cpus = int(ray.cluster_resources().get("CPU", 1))
            workers = max(1, min(cpus - 1, config.run.num_envs))
        self.num_workers = workers
        actor = ray.remote(num_cpus=1)(RolloutWorker)
        seeds = worker_seeds(rng, workers)
        shares = split(config.run.num_envs, workers)
        self.workers = [
            actor.remote(config, envs, seed, lane)
            for lane, (envs, seed) in enumerate(zip(shares, seeds, strict=True))
        ]
        try:
            self.architecture: Architecture = ray.get(self.workers[0].architecture.remote())
        except Exception:  # (a config the workers refuse): stop what was started before saying so
            self.close()
            raise
        self.obs_size, self.num_actions = self.architecture.obs_size, self.architecture.num_actions

    def _broadcast(self, model: ActorCritic) -> Any:
        import ray

        # CPU copies: the workers act on the CPU, whatever run.device the learner is on
        return ray.put({k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()})

    def collect(self, model: Learner, steps: int) -> tuple[Batch, EpisodeStats]:
        import ray

        assert isinstance(model, ActorCritic)  # (nfsp's Player: refused in __init__)
        weights = self._broadcast(model)
        return merge(ray.get([w.collect.remote(weights, steps) for w in self.workers]))

    def add_snapshot(self, model: ActorCritic) -> None:
        import ray

        weights = self._broadcast(model)
        ray.get([w.add_snapshot.remote(weights) for w in self.workers])

    def state_dict(self) -> dict[str, Any]:
        import ray

        return {"ray_workers": ray.get([w.state_dict.remote() for w in self.workers])}

    def load_state_dict(self, state: dict[str, Any], model: ActorCritic) -> None:
        import ray

        states = state["ray_workers"]
        ray.get([w.load_state_dict.remote(s) for w, s in zip(self.workers, states, strict=True)])

    def close(self) -> None:
        """Stop the workers, and Ray itself if this collector started it."""
        import ray

        for w in self.workers:
            ray.kill(w)
        self.workers = []
        if self._started_ray:
            ray.shutdown()


def saved_workers(collector_state: dict[str, Any]) -> int:
    """How many Ray workers collected a checkpoint (0: a local run)."""
    return len(collector_state.get("ray_workers", ()))


def resume_error(path: Any, saved: int, workers: int) -> str | None:
    """Why a checkpoint collected with ``saved`` workers cannot resume a run with ``workers``."""
    if saved == workers:
        return None
    was = f"collected on {saved} Ray workers" if saved else "collected locally"
    now = f"with --ray {workers}" if workers else "locally"
    fix = f"--ray {saved}" if saved else "without --ray"
    return f"checkpoint {path} was {was} and cannot resume exactly {now}: resume it {fix}"


def ray_collector(workers: int, address: str | None = None) -> CollectorFactory:
    """A collector factory for :class:`training.rl.train.Trainer` (``--ray`` / ``--ray-address``)."""

    def make(config: Config, rng: np.random.Generator) -> RayCollector:
        return RayCollector(config, rng, workers, address)

    return make
