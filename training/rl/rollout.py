"""Self-play rollouts: many environments stepped in lockstep, one batched forward per step.

Turn-based transitions: a seat's transition runs from one of its decisions to its next
decision and collects every reward the seat receives in between (including the final
reward that arrives after the other players' moves). A seat's last transition of a rollout
has no next decision yet: it lends the value of its own decision to the transition before
it (whose estimate stops there) and is left out of the batch, so every value target rests
on a real decision of its seat, never on an idle seat's view. With ``run.zero_sum`` a seat learns
from its reward minus the table's mean (points scored against the others, for
``reward="points"``; outcome rewards are zero-sum already). One policy plays every seat
(parameter sharing); in a configurable share of games, a member of the opponent pool -
a frozen snapshot of the policy, or one of the baselines named in ``pool.baselines`` -
takes the seats of the other side, and its moves are not learned from.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import torch

from domino_env import DominoEnv, raw_env
from domino_env.agents import Agent
from training.agents import resolve_agent
from training.matches import win_share
from training.model.config import Config
from training.model.networks import ActorCritic, Architecture
from training.rl.match_value import MatchValue
from training.rl.ppo import Batch, gae

Opponent = ActorCritic | Agent  # a pool member: a frozen snapshot or a baseline


@dataclass
class EpisodeStats:
    """Outcomes of finished games, from the learner's side."""

    decisions: int = 0  # the learner's decisions (the batch leaves out the ones still open)
    self_play: int = 0
    pool_games: int = 0
    pool_wins: float = 0.0  # the learner side's first places in pool games (a shared one: a fraction)
    lengths: list[int] = field(default_factory=list)


def random_stream(agent: Agent) -> random.Random:
    """A pool baseline's random stream, which an exact resume saves and restores."""
    rng = getattr(agent, "rng", None)
    if not isinstance(rng, random.Random):
        raise TypeError(f"pool baseline {agent.name!r} has no random.Random to save with the run")
    return rng


class LocalCollector:
    """Steps ``num_envs`` environments in this process and assembles PPO batches from them
    (a :class:`training.rl.collect.Collector`)."""

    num_workers = 0  # no Ray workers: a local run

    def __init__(self, config: Config, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.envs: list[DominoEnv] = [
            raw_env(config.env.variant, **config.env.options) for _ in range(config.run.num_envs)
        ]
        rules = self.envs[0].rules
        self.side_of = rules.side_of
        self.num_players = rules.num_players
        self.obs_size = self.envs[0].encoder.size
        self.num_actions = rules.num_actions
        # what a model trained here must be built with
        self.architecture = Architecture.for_table(self.envs[0], config.network)
        self.pool: list[ActorCritic] = []
        self.baselines: dict[str, Agent] = {
            name: resolve_agent(name, self.envs[0], config.run.seed) for name in config.pool.baselines
        }
        # per env: the pool member playing the other side (None: pure self-play), learner side
        self.opponent: list[Opponent | None] = [None] * len(self.envs)
        self.learner_side = [0] * len(self.envs)
        self.lengths = [0] * len(self.envs)
        # run.match_value: each env's current round (its index, the sides' scores at its start)
        self.match_value = (
            MatchValue(config.env.variant, config.env.options) if config.run.match_value else None
        )
        self.round_starts: list[tuple[int, tuple[int, ...]]] = [(0, ())] * len(self.envs)
        for env in self.envs:
            self._new_game(self.envs.index(env))

    def _new_game(self, e: int) -> None:
        env = self.envs[e]
        env.reset(seed=int(self.rng.integers(2**31)))
        self.lengths[e] = 0
        self.round_starts[e] = (env.round_index, env.side_scores)
        members: list[Opponent] = [*self.pool, *self.baselines.values()]
        if members and self.rng.random() < self.config.pool.share:
            self.opponent[e] = members[int(self.rng.integers(len(members)))]
            self.learner_side[e] = int(self.rng.integers(len(set(self.side_of))))
        else:
            self.opponent[e] = None

    def add_snapshot(self, model: ActorCritic) -> None:
        """A frozen copy of ``model`` joins the pool, which keeps the newest ``pool.size`` (0: none)."""
        if self.config.pool.size:
            self.pool.append(model.copy())
            del self.pool[: -self.config.pool.size]

    def collect(self, model: ActorCritic, steps: int) -> tuple[Batch, EpisodeStats]:
        """Play ``steps`` decisions in every environment; returns the learner's transitions."""
        num_envs, n = len(self.envs), self.num_players
        cap = num_envs * steps
        obs = np.zeros((cap, self.obs_size), dtype=np.float32)
        masks = np.zeros((cap, self.num_actions), dtype=bool)
        actions = np.zeros(cap, dtype=np.int64)
        logprobs = np.zeros(cap, dtype=np.float32)
        values = np.zeros(cap, dtype=np.float32)
        state_size = self.architecture.state_size  # the perfect-information critic's input, if any
        states = np.zeros((cap, state_size), dtype=np.float32) if state_size else None
        rewards = np.zeros(cap, dtype=np.float32)
        successor = np.full(cap, -1, dtype=np.int64)
        done = np.zeros(cap, dtype=bool)
        pending = np.full((num_envs, n), -1, dtype=np.int64)  # each seat's open transition
        step_obs = np.zeros((num_envs, self.obs_size), dtype=np.float32)
        step_masks = np.zeros((num_envs, self.num_actions), dtype=bool)
        stats = EpisodeStats()
        seat_of = {agent: seat for seat, agent in enumerate(self.envs[0].possible_agents)}
        count = 0
        for _ in range(steps):
            seats = np.array([seat_of[env.agent_selection] for env in self.envs])
            for e, env in enumerate(self.envs):
                observation = env.observe(env.agent_selection)
                step_obs[e] = observation["observation"]
                step_masks[e] = observation["action_mask"]
            learner = np.array(
                [
                    self.opponent[e] is None or self.side_of[s] == self.learner_side[e]
                    for e, s in enumerate(seats)
                ]
            )
            chosen = np.zeros(num_envs, dtype=np.int64)
            rows = np.flatnonzero(learner)
            if len(rows):
                row_states = None if states is None else np.stack([self.envs[e].state() for e in rows])
                a, lp, v = model.act(step_obs[rows], step_masks[rows], row_states)
                chosen[rows] = a
                start = count
                count += len(rows)
                if states is not None:
                    states[start:count] = row_states
                obs[start:count], masks[start:count] = step_obs[rows], step_masks[rows]
                actions[start:count], logprobs[start:count], values[start:count] = a, lp, v
                new = np.arange(start, count)
                row_seats = seats[rows]
                previous = pending[rows, row_seats]  # each seat's last transition links to this one
                linked = previous >= 0
                successor[previous[linked]] = new[linked]
                pending[rows, row_seats] = new
            for e in np.flatnonzero(~learner).tolist():
                opponent = self.opponent[e]
                if isinstance(opponent, ActorCritic):
                    chosen[e] = opponent.act(step_obs[e : e + 1], step_masks[e : e + 1])[0][0]
                else:
                    assert opponent is not None
                    chosen[e] = opponent(
                        self.envs[e], {"observation": step_obs[e], "action_mask": step_masks[e]}
                    )
            for e, env in enumerate(self.envs):
                env.step(int(chosen[e]))
                self.lengths[e] += 1
                over = all(env.terminations.values())
                if self.match_value is not None:
                    if over or env.round_index != self.round_starts[e][0]:
                        self._end_round(e, over, rewards=rewards, pending=pending, done=done)
                elif any(step_rewards := [env.rewards[agent] for agent in env.possible_agents]):
                    offset = sum(step_rewards) / n if self.config.run.zero_sum else 0.0
                    for s in range(n):
                        if pending[e, s] >= 0:
                            rewards[pending[e, s]] += (
                                step_rewards[s] - offset
                            ) * self.config.run.reward_scale
                if over:
                    self._record(e, env, stats)
                    for s in range(n):
                        if pending[e, s] >= 0:
                            done[pending[e, s]] = True
                            pending[e, s] = -1
                    self._new_game(e)
        advantages, returns = gae(
            rewards[:count],
            values[:count],
            successor=successor[:count],
            done=done[:count],
            gamma=self.config.ppo.gamma,
            lam=self.config.ppo.gae_lambda,
        )
        # the transitions still open (one per seat and env at most) lent their values above; the
        # rest is the batch
        stats.decisions = count
        finished = np.flatnonzero(done[:count] | (successor[:count] >= 0))
        batch = Batch(
            obs=torch.from_numpy(obs[finished]),
            masks=torch.from_numpy(masks[finished]),
            actions=torch.from_numpy(actions[finished]),
            logprobs=torch.from_numpy(logprobs[finished]),
            values=torch.from_numpy(values[finished]),
            advantages=torch.from_numpy(advantages[finished]),
            returns=torch.from_numpy(returns[finished]),
            states=None if states is None else torch.from_numpy(states[finished]),
        )
        return batch, stats

    def _end_round(
        self, e: int, over: bool, *, rewards: np.ndarray, pending: np.ndarray, done: np.ndarray
    ) -> None:
        """Close every seat's last transition of env ``e``'s round that just ended, rewarded by
        the change in its side's match value (at the match's end: to its outcome)."""
        assert self.match_value is not None
        env = self.envs[e]
        before = self.match_value(self.round_starts[e][1])
        after = env.outcomes() if over else [self.match_value(env.side_scores)[side] for side in self.side_of]
        for s in range(self.num_players):
            if pending[e, s] >= 0:
                rewards[pending[e, s]] += (after[s] - before[self.side_of[s]]) * self.config.run.reward_scale
                done[pending[e, s]] = True
                pending[e, s] = -1
        self.round_starts[e] = (env.round_index, env.side_scores)

    def _record(self, e: int, env: DominoEnv, stats: EpisodeStats) -> None:
        stats.lengths.append(self.lengths[e])
        if self.opponent[e] is None:
            stats.self_play += 1
            return
        mine = [seat for seat, side in enumerate(self.side_of) if side == self.learner_side[e]]
        stats.pool_games += 1
        stats.pool_wins += win_share(env.rules, env.outcomes(), mine)

    def close(self) -> None:
        """Nothing to release: the envs live in this process."""

    def state_dict(self) -> dict:
        """What an exact resume needs: every game in progress, who plays it, the pool."""
        # an env may still play a snapshot that has left the pool: keep those weights too
        models = self.pool + [
            o for o in dict.fromkeys(self.opponent) if isinstance(o, ActorCritic) and o not in self.pool
        ]
        names = {id(agent): name for name, agent in self.baselines.items()}
        return {
            "games": [env.game for env in self.envs],
            "env_rngs": [env.np_random.bit_generator.state for env in self.envs],
            "models": [model.state_dict() for model in models],
            "pool_size": len(self.pool),
            # a snapshot by its index in models, a baseline by its name
            "opponents": [
                o if o is None else models.index(o) if isinstance(o, ActorCritic) else names[id(o)]
                for o in self.opponent
            ],
            "baseline_rngs": {
                name: random_stream(agent).getstate() for name, agent in self.baselines.items()
            },
            "learner_side": list(self.learner_side),
            "lengths": list(self.lengths),
            "round_starts": list(self.round_starts),
        }

    def load_state_dict(self, state: dict, model: ActorCritic) -> None:
        models = []
        for weights in state["models"]:
            snapshot = model.copy()
            snapshot.load_state_dict(weights)
            models.append(snapshot)
        self.pool = models[: state["pool_size"]]
        for e, env in enumerate(self.envs):
            env.restore(state["games"][e], state["env_rngs"][e])
        self.opponent = [
            None if o is None else self.baselines[o] if isinstance(o, str) else models[o]
            for o in state["opponents"]
        ]
        for name, rng_state in state["baseline_rngs"].items():
            random_stream(self.baselines[name]).setstate(rng_state)
        self.learner_side = list(state["learner_side"])
        self.lengths = list(state["lengths"])
        # (a run saved before run.match_value existed: its rounds start where they stand)
        starts = state.get("round_starts") or [(env.round_index, env.side_scores) for env in self.envs]
        self.round_starts = [(r, tuple(scores)) for r, scores in starts]
