"""Self-play rollouts on one batched engine: ``domino_env.vector.make(variant, run.num_envs)``.

The same games and transitions as :class:`training.rl.rollout.LocalCollector` (turn-based
chains per table and seat, :class:`~training.rl.rollout.Transitions`), but the tables live in
one :class:`domino_env.vector.VectorEnv` (a numpy kernel where the variant has one, else
scalar tables behind the same interface) that steps them all in one call, and every model that
acts does so in one forward pass per step: the learner over every table whose seat to move is
its own, each pool snapshot over the tables where it plays the seat to move.

``pool.baselines`` may name ``random`` and trained policies (checkpoint files or run folders)
only (``run.collector=vector`` refuses the others in the config,
:func:`training.model.config.check_collector`: a search or rule agent plays a scalar env
object, which a batched engine does not have, and the local collector plays them). They join
the pool as the local collector's baselines do (the same seating draws). Where ``random`` plays
the seat to move, its move is a uniform legal action drawn for all those tables in one call
from the collection RNG (so a resume, which restores that RNG, replays it); a trained policy
moves as it plays anywhere (:meth:`~training.agents.loader.PolicyAgent.moves`: its most
probable legal action), in one forward pass over its tables. Neither is learned from.

``run.match_value`` (:mod:`training.rl.match_value`) is learned as the local collector learns
it: the engine says where a round ended and the sides' scores then (``info["round_over"]``,
``info["side_scores"]``), and at each round's end every seat's open transition is closed with
the change in its side's match value since the round began (at the match's end: to the
match's outcome, ``info["outcome"]``), the step's own rewards unused.

Deals: the engine deals table ``i``'s ``k``-th episode with the seed ``base + i + k * B``
(:func:`domino_env.vector.episode_seed`); ``base`` is one draw from the run's collection RNG
(below ``2**31``) plus ``lane * LANE``: a run's deals are a run of consecutive seeds from
``base``, so collectors in different lanes (the Ray workers of one run, :mod:`training.rl.distributed`)
never deal the same game until one of them has dealt ``LANE - 2**31`` games.
(The local collector draws every new game's seed from that RNG as games end, so the two
collectors play different deals from the same run seed; on identical deals they build
identical batches, as tests/training/test_vector_collect.py checks.)

A pool game's win share comes from each seat's outcome of the game (``info["outcome"]``, the
scalar env's ``outcomes()``), as the local collector's does.

Resume is exact, as the local collector's: a checkpoint keeps the engine's snapshot of every
table's game in progress (:meth:`domino_env.vector.VectorEnv.snapshot`: its state, seeds,
episode counters and random state), the deal base and each table's episode count, length and
scores at its round's start, the pool and who plays each table, so a resumed run finishes the games in
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
from domino_env.agents import Agent
from training.agents import resolve_agent
from training.agents.loader import PolicyAgent
from training.model.config import Config, check_collector
from training.model.networks import ActorCritic, Architecture
from training.rl.match_value import MatchValue
from training.rl.ppo import Batch
from training.rl.rollout import (
    EpisodeStats,
    Learner,
    Opponent,
    Transitions,
    add_to_pool,
    draw_modes,
    game_modes,
    learner_act,
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
        # pool members beside the snapshots, as the local collector's (``random``: its moves are
        # drawn here, the agent object only names it in the seating and checkpoints; trained
        # policies: their networks move in batches)
        self.baselines: dict[str, Agent] = {
            name: resolve_agent(name, table, config.run.seed) for name in config.pool.baselines
        }
        # per table: the pool member playing the other side (None: self-play), the learner's side
        self.opponent: list[Opponent | None] = [None] * self.num_envs
        self.learner_side = np.zeros(self.num_envs, dtype=np.int64)
        self.lengths = np.zeros(self.num_envs, dtype=np.int64)
        # run.match_value: the value model and each table's side scores as its round began
        self.match_value = (
            MatchValue(config.env.variant, config.env.options) if config.run.match_value else None
        )
        self.round_start = np.zeros((self.num_envs, table.rules.num_sides), dtype=np.int64)
        self.modes = game_modes(config, self.num_envs, self.num_players)  # nfsp's, per table and seat
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
        self.round_start[:] = 0  # (new matches: 0-0)

    def _seat(self, e: int) -> None:
        """Table ``e``'s new game: self-play, or a pool member (a snapshot or a baseline) on one side."""
        members: list[Opponent] = [*self.pool, *self.baselines.values()]
        self.opponent[e], self.learner_side[e] = pick_opponent(
            self.rng, members, self.config, self.rules.num_sides, int(self.learner_side[e])
        )
        draw_modes(self.rng, self.config, self.modes, e)

    def add_snapshot(self, model: ActorCritic) -> None:
        """A frozen copy of ``model`` joins the pool (:func:`~training.rl.rollout.add_to_pool`)."""
        add_to_pool(self.pool, model, self.config)

    def collect(self, model: Learner, steps: int) -> tuple[Batch, EpisodeStats]:
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
                # (every table's seat is the learner's in pure self-play: the arrays themselves)
                mine = slice(None) if len(rows) == self.num_envs else rows
                mine_obs, mine_mask = obs[mine], mask[mine]
                states = self.venv.state()[mine] if chains.state_size else None
                modes = None if self.modes is None else self.modes[rows, seats[rows]]
                acted = learner_act(model, mine_obs, mine_mask, states, modes)
                chosen[rows] = acted[0]
                chains.add(rows, seats[rows], mine_obs, mine_mask, acted, states, modes)
            groups: dict[int, list[int]] = {}  # the pool member playing each remaining table
            for e in np.flatnonzero(~learner).tolist():
                groups.setdefault(id(self.opponent[e]), []).append(e)
            randomly: list[int] = []  # the tables where the random baseline moves
            for tables in groups.values():
                member = self.opponent[tables[0]]
                if isinstance(member, ActorCritic):
                    chosen[tables] = member.act(obs[tables], mask[tables])[0]
                elif isinstance(member, PolicyAgent):  # (a trained policy among the baselines)
                    chosen[tables] = member.moves(obs[tables], mask[tables])
                else:  # (the random baseline: check_collector allows no other)
                    randomly += tables
            if randomly:
                chosen[randomly] = self._random_moves(mask[randomly])
            self.obs, self.mask, reward, done, info = self.venv.step(chosen)
            self.player = info["player"]
            self.lengths += 1
            if self.match_value is None:
                rewarded = np.flatnonzero(reward.any(axis=1))
                chains.reward(rewarded, reward[rewarded])
            else:
                self._end_rounds(np.flatnonzero(info["round_over"]), done, info, chains)
            for e in np.flatnonzero(done).tolist():
                side = int(self.learner_side[e])
                outcomes = info["outcome"][e].tolist
                record_game(stats, int(self.lengths[e]), bool(pooled[e]), self.rules, side, outcomes)
                chains.close(e)
                self.episodes[e] += 1
                self.lengths[e] = 0
                self._seat(e)
                pooled[e] = self.opponent[e] is not None
        batch, stats.decisions = chains.batch()
        return batch, stats

    def _random_moves(self, mask: np.ndarray) -> np.ndarray:
        """A uniform legal action per row of ``mask``, all drawn in one call from the collection RNG."""
        nth = self.rng.integers(mask.sum(axis=1))  # which legal action, counted from the left
        return (mask.cumsum(axis=1) <= nth[:, None]).sum(axis=1)

    def _end_rounds(
        self, tables: np.ndarray, done: np.ndarray, info: dict[str, np.ndarray], chains: Transitions
    ) -> None:
        """Close every seat's last transition of the rounds that just ended at ``tables``,
        rewarded by the change in its side's match value (at the match's end: to its outcome),
        as :meth:`training.rl.rollout.LocalCollector._end_round` does."""
        assert self.match_value is not None
        side_of, scores = self.side_of.tolist(), info["side_scores"]
        for e in tables.tolist():
            start, end = tuple(self.round_start[e].tolist()), tuple(scores[e].tolist())
            outcomes = info["outcome"][e].tolist() if done[e] else None
            chains.credit(e, self.match_value.credit(side_of, start, end, outcomes))
            chains.close(e)
        self.round_start[tables] = np.where(done[tables, None], 0, scores[tables])

    def close(self) -> None:
        """Release the engine."""
        self.venv.close()

    def state_dict(self) -> dict[str, Any]:
        """What an exact resume needs (the module docstring): every table's game as the engine
        holds it, the deals' seeds and counters, who plays each table, the pool."""
        return {
            "collector": self.kind,
            **pool_state(self.pool, self.opponent, self.baselines),
            "learner_side": self.learner_side.tolist(),
            "engine": self.venv.snapshot(),
            "base": self.base,
            "episodes": self.episodes.tolist(),
            "lengths": self.lengths.tolist(),
            "round_starts": self.round_start.tolist(),
            # the next fresh deal: past every seed a table of this run has played
            "next_base": self.base + (int(self.episodes.max()) + 1) * self.num_envs,
            "modes": None if self.modes is None else self.modes.copy(),
        }

    def load_state_dict(self, state: dict[str, Any], model: ActorCritic) -> None:
        """Go on from :meth:`state_dict`'s ``state``: the same games, pool and seating (from a
        checkpoint without the engine's snapshot: fresh deals)."""
        kind = state.get("collector", "local")
        if kind != self.kind:
            raise ValueError(
                f"the checkpoint's games were collected by the {kind} collector, not the vector one"
            )
        self.pool, self.opponent = restore_pool(state, model, self.baselines)
        self.learner_side = np.array(state["learner_side"], dtype=np.int64)
        if self.modes is not None and state.get("modes") is not None:
            self.modes[:] = state["modes"]
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
        # (a checkpoint from before run.match_value was played here: its rounds start at 0-0)
        starts = state.get("round_starts", np.zeros_like(self.round_start))
        self.round_start = np.array(starts, dtype=np.int64).reshape(self.round_start.shape)


def vector_collector(backend: str = "auto") -> Callable[[Config, np.random.Generator], VectorCollector]:
    """A collector factory for :class:`training.rl.train.Trainer` with the engine's ``backend``
    (``"auto"``: the kernel where there is one; ``"scalar"``: scalar tables)."""

    def make(config: Config, rng: np.random.Generator) -> VectorCollector:
        return VectorCollector(config, rng, backend)

    return make
