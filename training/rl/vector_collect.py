"""Self-play rollouts on one batched engine: ``domino_env.vector.make(variant, run.num_envs)``.

The same games and transitions as :class:`training.rl.rollout.LocalCollector` (turn-based
chains per table and seat, :class:`~training.rl.rollout.Transitions`), but the tables live in
one :class:`domino_env.vector.VectorEnv` (a numpy kernel where the variant has one, else
scalar tables behind the same interface) that steps them all in one call, and every model that
acts does so in one forward pass per step: the learner over every table whose seat to move is
its own, each pool snapshot over the tables where it plays the seat to move.

What it does not do (``run.collector=vector`` refuses them in the config, see
:func:`training.model.config.check_collector`): ``pool.baselines`` (a baseline agent plays a
scalar env object, which a batched engine does not have) and ``run.match_value`` (it needs each
table's round and scores, which the engine does not report).

Deals: the engine deals table ``i``'s ``k``-th episode with the seed ``base + i + k * B``
(:func:`domino_env.vector.episode_seed`); ``base`` is one draw from the run's collection RNG
(below ``2**31``) plus ``lane * LANE``: a run's deals are a run of consecutive seeds from
``base``, so collectors in different lanes (the Ray workers of one run, :mod:`training.rl.distributed`)
never deal the same game until one of them has dealt ``LANE - 2**31`` games.
(The local collector draws every new game's seed from that RNG as games end, so the two
collectors play different deals from the same run seed; on identical deals they build
identical batches, as tests/training/test_vector_collect.py checks.)

A pool game's win share comes from the seats' summed rewards over the episode (what the
engine reports): each seat's outcome with ``reward=outcome``, its points with ``reward=points``.

Resume is exact, as the local collector's: a checkpoint keeps the engine's snapshot of every
table's game in progress (:meth:`domino_env.vector.VectorEnv.snapshot`: its state, seeds,
episode counters and random state), the deal base and each table's episode count, length and
summed rewards, the pool and who plays each table, so a resumed run finishes the games in
progress and deals the next ones as the uninterrupted run would (the open transitions need no
saving: a rollout's last open transitions stay out of its batch, and the next rollout starts
new chains). A checkpoint saved before the engine had snapshots deals every table a fresh
game (seeds no table has played yet). The games go on in the engine that saved them (scalar
tables or the kernel, whichever this run would choose). A checkpoint of the other collector is refused
(``run.collector`` is kept on resume).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from domino_env import raw_env, vector
from training.model.config import Config, check_collector
from training.model.networks import ActorCritic, Architecture
from training.rl.ppo import Batch
from training.rl.rollout import (
    EpisodeStats,
    Opponent,
    Transitions,
    add_to_pool,
    pick_opponent,
    pool_state,
    record_game,
    restore_pool,
)

LANE = 2**40  # the seeds between two lanes' first deals (the module docstring)


class VectorCollector:
    """Steps ``run.num_envs`` tables of one batched engine (``backend``: ``domino_env.vector.make``'s)
    and assembles PPO batches from them (a :class:`training.rl.collect.Collector`); ``lane``: the
    stretch of deal seeds it starts in (the module docstring; a Ray worker's index)."""

    num_workers = 0  # no Ray workers: a local run
    kind = "vector"  # what its checkpoints say they hold

    def __init__(
        self, config: Config, rng: np.random.Generator, backend: str = "auto", lane: int = 0
    ) -> None:
        check_collector(config, self.kind)
        self.config = config
        self.rng = rng
        table = raw_env(config.env.variant, **config.env.options)
        self.rules = table.rules
        self.architecture = Architecture.for_table(table, config.network)
        self.num_envs, self.num_players = config.run.num_envs, table.rules.num_players
        self.side_of = np.array(table.rules.side_of)
        self.venv = vector.make(config.env.variant, self.num_envs, backend=backend, **config.env.options)
        self.pool: list[ActorCritic] = []
        # per table: the snapshot playing the other side (None: self-play), the learner's side
        self.opponent: list[Opponent | None] = [None] * self.num_envs
        self.learner_side = np.zeros(self.num_envs, dtype=np.int64)
        self.lengths = np.zeros(self.num_envs, dtype=np.int64)
        self.returns = np.zeros((self.num_envs, self.num_players))  # each seat's rewards this episode
        self._deal(int(rng.integers(2**31)) + lane * LANE)
        for e in range(self.num_envs):
            self._seat(e)

    def _deal(self, base: int) -> None:
        """Deal every table afresh from ``base`` (the engine's reset)."""
        self.base = base
        self.episodes = np.zeros(self.num_envs, dtype=np.int64)  # each table's episodes since then
        self.obs, self.mask, info = self.venv.reset(seed=base)
        self.player = info["player"]
        self.lengths[:] = 0
        self.returns[:] = 0.0

    def _seat(self, e: int) -> None:
        """Table ``e``'s new game: self-play, or a pool snapshot on one side."""
        members: list[Opponent] = [*self.pool]
        self.opponent[e], self.learner_side[e] = pick_opponent(
            self.rng, members, self.config, self.rules.num_sides, int(self.learner_side[e])
        )

    def add_snapshot(self, model: ActorCritic) -> None:
        """A frozen copy of ``model`` joins the pool (:func:`~training.rl.rollout.add_to_pool`)."""
        add_to_pool(self.pool, model, self.config)

    def collect(self, model: ActorCritic, steps: int) -> tuple[Batch, EpisodeStats]:
        """Play ``steps`` decisions at every table; returns the learner's transitions."""
        chains = Transitions(
            self.config, self.architecture, num_envs=self.num_envs, num_players=self.num_players, steps=steps
        )
        stats = EpisodeStats()
        pooled = np.array([o is not None for o in self.opponent])
        for _ in range(steps):
            obs, mask, seats = self.obs, self.mask, self.player
            learner = ~pooled | (self.side_of[seats] == self.learner_side)
            chosen = np.zeros(self.num_envs, dtype=np.int64)
            rows = np.flatnonzero(learner)
            if len(rows):
                states = self.venv.state()[rows] if chains.state_size else None
                acted = model.act(obs[rows], mask[rows], states)
                chosen[rows] = acted[0]
                chains.add(rows, seats[rows], obs[rows], mask[rows], acted, states)
            groups: dict[int, list[int]] = {}  # the snapshot playing each remaining table
            for e in np.flatnonzero(~learner).tolist():
                groups.setdefault(id(self.opponent[e]), []).append(e)
            for tables in groups.values():
                snapshot = self.opponent[tables[0]]
                assert isinstance(snapshot, ActorCritic)  # (no baselines: check_collector)
                chosen[tables] = snapshot.act(obs[tables], mask[tables])[0]
            self.obs, self.mask, reward, done, info = self.venv.step(chosen)
            self.player = info["player"]
            self.lengths += 1
            self.returns += reward
            for e in np.flatnonzero(reward.any(axis=1)).tolist():
                chains.reward(e, reward[e].tolist())
            for e in np.flatnonzero(done).tolist():
                side = int(self.learner_side[e])
                record_game(
                    stats, int(self.lengths[e]), bool(pooled[e]), self.rules, side, self.returns[e].tolist
                )
                chains.close(e)
                self.episodes[e] += 1
                self.lengths[e] = 0
                self.returns[e] = 0.0
                self._seat(e)
                pooled[e] = self.opponent[e] is not None
        batch, stats.decisions = chains.batch()
        return batch, stats

    def close(self) -> None:
        """Release the engine."""
        self.venv.close()

    def state_dict(self) -> dict[str, Any]:
        """What an exact resume needs (the module docstring): every table's game as the engine
        holds it, the deals' seeds and counters, who plays each table, the pool."""
        return {
            "collector": self.kind,
            **pool_state(self.pool, self.opponent, {}),
            "learner_side": self.learner_side.tolist(),
            "engine": self.venv.snapshot(),
            "base": self.base,
            "episodes": self.episodes.tolist(),
            "lengths": self.lengths.tolist(),
            "returns": self.returns.tolist(),
            # the next fresh deal: past every seed a table of this run has played
            "next_base": self.base + (int(self.episodes.max()) + 1) * self.num_envs,
        }

    def load_state_dict(self, state: dict[str, Any], model: ActorCritic) -> None:
        """Go on from :meth:`state_dict`'s ``state``: the same games, pool and seating (from a
        checkpoint without the engine's snapshot: fresh deals)."""
        kind = state.get("collector", "local")
        if kind != self.kind:
            raise ValueError(
                f"the checkpoint's games were collected by the {kind} collector, not the vector one"
            )
        self.pool, self.opponent = restore_pool(state, model, {})
        self.learner_side = np.array(state["learner_side"], dtype=np.int64)
        if "engine" not in state:
            self._deal(int(state["next_base"]))
            return
        engine = state["engine"]
        if engine.get("backend") != self.venv.backend:  # (both play the scalar game exactly)
            self.venv.close()
            backend = "scalar" if engine.get("backend") == "scalar" else "kernel"
            self.venv = vector.make(
                self.config.env.variant, self.num_envs, backend=backend, **self.config.env.options
            )
        self.obs, self.mask, info = self.venv.restore(engine)
        self.player = info["player"]
        self.base = int(state["base"])
        self.episodes = np.array(state["episodes"], dtype=np.int64)
        self.lengths = np.array(state["lengths"], dtype=np.int64)
        self.returns = np.array(state["returns"], dtype=np.float64).reshape(self.num_envs, self.num_players)


def vector_collector(backend: str = "auto") -> Callable[[Config, np.random.Generator], VectorCollector]:
    """A collector factory for :class:`training.rl.train.Trainer` with the engine's ``backend``
    (``"auto"``: the kernel where there is one; ``"scalar"``: scalar tables)."""

    def make(config: Config, rng: np.random.Generator) -> VectorCollector:
        return VectorCollector(config, rng, backend)

    return make
