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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from domino_env import DominoEnv, raw_env
from domino_env.agents import Agent
from training.agents import resolve_agent
from training.agents.guided import GuidedSearchAgent
from training.matches import win_share
from training.model.config import Config
from training.model.networks import ActorCritic, Architecture
from training.rl.dmc import monte_carlo_returns
from training.rl.match_value import MatchValue
from training.rl.nfsp import Player
from training.rl.ppo import Batch, gae

Opponent = ActorCritic | Agent  # a pool member: a frozen snapshot or a baseline
Learner = ActorCritic | Player  # what the learner's seats act with (nfsp: both its networks)


@dataclass
class EpisodeStats:
    """Outcomes of finished games, from the learner's side."""

    # the learner's decisions (the batch leaves out the open ones; for dmc, all of unfinished episodes)
    decisions: int = 0
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


def pick_opponent(
    rng: np.random.Generator, members: list[Opponent], config: Config, sides: int, side: int
) -> tuple[Opponent | None, int]:
    """A new game's pool member and learner side: (None, ``side`` as it was) for self-play (no
    draw at all while the pool is empty), else a member drawn with probability ``pool.share``
    and a side."""
    if members and rng.random() < config.pool.share:
        return members[int(rng.integers(len(members)))], int(rng.integers(sides))
    return None, side


def game_modes(config: Config, num_envs: int, num_players: int) -> np.ndarray | None:
    """Each table's seats' NFSP modes this game (``algorithm: nfsp``; True: the seat plays it
    by its best response), to draw with :func:`draw_modes` as games start; None otherwise."""
    return np.zeros((num_envs, num_players), dtype=bool) if config.algorithm == "nfsp" else None


def draw_modes(rng: np.random.Generator, config: Config, modes: np.ndarray | None, e: int) -> None:
    """Table ``e``'s new game: each seat plays it by its best response with probability
    ``nfsp.anticipatory`` (NFSP's anticipatory mixture; no draw for other algorithms)."""
    if modes is not None:
        modes[e] = rng.random(modes.shape[1]) < config.nfsp.anticipatory


def learner_act(
    model: Learner,
    obs: np.ndarray,
    masks: np.ndarray,
    states: np.ndarray | None,
    modes: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The learner's (actions, log-probabilities, values) for these rows (``modes``: their
    seats' NFSP modes, for an nfsp :class:`~training.rl.nfsp.Player`)."""
    if isinstance(model, Player):
        assert modes is not None
        return model.act(obs, masks, states, modes)
    return model.act(obs, masks, states)


def add_to_pool(pool: list[ActorCritic], model: ActorCritic, config: Config) -> None:
    """A frozen copy of ``model`` joins ``pool``, which keeps the newest ``pool.size`` (0: none)."""
    if config.pool.size:
        pool.append(model.copy())
        del pool[: -config.pool.size]


class Transitions:
    """One rollout's learner transitions, each linked to its seat's next one: a chain per table
    and seat (the module docstring). Both collectors fill it the same way: :meth:`add` a step's
    decisions, :meth:`reward` tables' step rewards or :meth:`credit` a table's amounts to their
    seats' open transitions, :meth:`close` them all where a table's episode ends, and
    :meth:`batch`."""

    def __init__(
        self, config: Config, architecture: Architecture, *, num_envs: int, num_players: int, steps: int
    ) -> None:
        self.config, self.num_players = config, num_players
        cap = num_envs * steps
        self.obs = np.zeros((cap, architecture.obs_size), dtype=np.float32)
        self.masks = np.zeros((cap, architecture.num_actions), dtype=bool)
        self.actions = np.zeros(cap, dtype=np.int64)
        self.logprobs = np.zeros(cap, dtype=np.float32)
        self.values = np.zeros(cap, dtype=np.float32)
        self.state_size = state_size = architecture.state_size  # the perfect-information critic's input
        self.states = np.zeros((cap, state_size), dtype=np.float32) if state_size else None
        self.rewards = np.zeros(cap, dtype=np.float32)
        self.successor = np.full(cap, -1, dtype=np.int64)
        self.done = np.zeros(cap, dtype=bool)
        self.best_response = np.zeros(cap, dtype=bool)  # (nfsp: played by the seat's best response)
        self.targets = np.full(cap, -1, dtype=np.int64)  # (distill: the search's choice; -1: none)
        self.pending = np.full((num_envs, num_players), -1, dtype=np.int64)  # each seat's open transition
        self.count = 0

    def add(
        self,
        rows: np.ndarray,
        seats: np.ndarray,
        obs: np.ndarray,
        masks: np.ndarray,
        acted: tuple[np.ndarray, np.ndarray, np.ndarray],
        states: np.ndarray | None,
        modes: np.ndarray | None = None,
        targets: np.ndarray | None = None,
    ) -> None:
        """The decisions of tables ``rows`` (their seats ``seats``; nfsp: their ``modes``;
        distill: the search's ``targets``, -1 where it did not label): each seat's last
        transition links to its new one, which stays open until the seat decides again or the
        episode ends."""
        start = self.count
        self.count += len(rows)
        span = slice(start, self.count)
        if self.states is not None:
            self.states[span] = states
        if modes is not None:
            self.best_response[span] = modes
        if targets is not None:
            self.targets[span] = targets
        self.obs[span], self.masks[span] = obs, masks
        self.actions[span], self.logprobs[span], self.values[span] = acted
        new = np.arange(start, self.count)
        previous = self.pending[rows, seats]
        linked = previous >= 0
        self.successor[previous[linked]] = new[linked]
        self.pending[rows, seats] = new

    def reward(self, tables: np.ndarray, step_rewards: np.ndarray) -> None:
        """Tables ``tables``' step rewards (``step_rewards``: [tables, seats]) to their seats'
        open transitions, less each table's mean with ``run.zero_sum`` (summed seat by seat in
        float64), times ``run.reward_scale``: each amount rounded to float32 as it is added."""
        amounts = step_rewards.astype(np.float64)
        if self.config.run.zero_sum:
            total = amounts[:, 0].copy()
            for s in range(1, self.num_players):
                total += amounts[:, s]
            amounts -= (total / self.num_players)[:, None]
        pending = self.pending[tables]
        held = pending >= 0  # (distinct transitions: one add each)
        self.rewards[pending[held]] += (amounts[held] * self.config.run.reward_scale).astype(np.float32)

    def credit(self, e: int, amounts: list[float]) -> None:
        """Add each seat's amount, times ``run.reward_scale``, to its open transition at table ``e``."""
        for s in range(self.num_players):
            if self.pending[e, s] >= 0:
                self.rewards[self.pending[e, s]] += amounts[s] * self.config.run.reward_scale

    def close(self, e: int) -> None:
        """Table ``e``'s episode ended: every seat's open transition is its last (done)."""
        for s in range(self.num_players):
            if self.pending[e, s] >= 0:
                self.done[self.pending[e, s]] = True
                self.pending[e, s] = -1

    def batch(self) -> tuple[Batch, int]:
        """(the batch, with GAE advantages and returns; the decisions made): the transitions
        still open (one per seat and table at most) lend their values and stay out of it. For
        ``algorithm: dmc`` the returns are Monte Carlo returns instead, and only the decisions
        whose episode ended in this rollout are kept (:func:`training.rl.dmc.monte_carlo_returns`)."""
        count = self.count
        rewards, values = self.rewards[:count], self.values[:count]
        successor, done = self.successor[:count], self.done[:count]
        if self.config.algorithm == "dmc":
            returns, kept = monte_carlo_returns(rewards, successor=successor, done=done)
            advantages = returns - values  # (not read by dmc's update)
        else:
            advantages, returns = gae(
                rewards,
                values,
                successor=successor,
                done=done,
                gamma=self.config.ppo.gamma,
                lam=self.config.ppo.gae_lambda,
            )
            kept = done | (successor >= 0)
        finished = np.flatnonzero(kept)
        states = self.states
        nfsp: dict[str, torch.Tensor] = {}
        if self.config.algorithm == "nfsp":  # (the DQN's next decisions: zeros after the episode's end)
            following = successor[finished]
            after = np.where(following >= 0, following, 0)
            ends = following < 0
            nfsp = {
                "rewards": torch.from_numpy(rewards[finished]),
                "done": torch.from_numpy(ends),
                "next_obs": torch.from_numpy(np.where(ends[:, None], np.float32(0), self.obs[after])),
                "next_masks": torch.from_numpy(~ends[:, None] & self.masks[after]),
                "best_response": torch.from_numpy(self.best_response[finished]),
            }
        batch = Batch(
            obs=torch.from_numpy(self.obs[finished]),
            masks=torch.from_numpy(self.masks[finished]),
            actions=torch.from_numpy(self.actions[finished]),
            logprobs=torch.from_numpy(self.logprobs[finished]),
            values=torch.from_numpy(self.values[finished]),
            advantages=torch.from_numpy(advantages[finished]),
            returns=torch.from_numpy(returns[finished]),
            states=None if states is None else torch.from_numpy(states[finished]),
            targets=torch.from_numpy(self.targets[finished]) if self.config.distill.share > 0 else None,
            **nfsp,
        )
        return batch, count


def record_game(
    stats: EpisodeStats,
    length: int,
    pooled: bool,
    rules: Any,
    learner_side: int,
    outcomes: Callable[[], list[float]],
) -> None:
    """A finished game of ``length`` decisions in ``stats``: self-play, or (``pooled``) a pool
    game won by the learner's side as far as ``outcomes()`` (each seat's outcome) gives it first place."""
    stats.lengths.append(length)
    if not pooled:
        stats.self_play += 1
        return
    mine = [seat for seat, side in enumerate(rules.side_of) if side == learner_side]
    stats.pool_games += 1
    stats.pool_wins += win_share(rules, outcomes(), mine)


def pool_state(
    pool: list[ActorCritic], opponents: list[Opponent | None], baselines: dict[str, Agent]
) -> dict:
    """The pool and each table's pool member, as a checkpoint keeps them: the snapshots'
    weights (``models``: the pool's, then any a table still plays after it left the pool), and
    each table's member by its index in ``models`` (a baseline by its name; None: self-play)."""
    models = pool + [o for o in dict.fromkeys(opponents) if isinstance(o, ActorCritic) and o not in pool]
    names = {id(agent): name for name, agent in baselines.items()}
    return {
        "models": [model.state_dict() for model in models],
        "pool_size": len(pool),
        "opponents": [
            o if o is None else models.index(o) if isinstance(o, ActorCritic) else names[id(o)]
            for o in opponents
        ],
    }


def restore_pool(
    state: dict, model: ActorCritic, baselines: dict[str, Agent]
) -> tuple[list[ActorCritic], list[Opponent | None]]:
    """(the pool, each table's member) from :func:`pool_state`'s keys in ``state``; the snapshots
    are built like ``model``."""
    models = []
    for weights in state["models"]:
        snapshot = model.copy()
        snapshot.load_state_dict(weights)
        models.append(snapshot)
    opponents: list[Opponent | None] = [
        None if o is None else baselines[o] if isinstance(o, str) else models[o] for o in state["opponents"]
    ]
    return models[: state["pool_size"]], opponents


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
        self.num_sides = rules.num_sides
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
        self.modes = game_modes(config, len(self.envs), self.num_players)  # nfsp's, per table and seat
        for env in self.envs:
            self._new_game(self.envs.index(env))

    def _new_game(self, e: int) -> None:
        env = self.envs[e]
        env.reset(seed=int(self.rng.integers(2**31)))
        self.lengths[e] = 0
        self.round_starts[e] = (env.round_index, env.side_scores)
        members: list[Opponent] = [*self.pool, *self.baselines.values()]
        self.opponent[e], self.learner_side[e] = pick_opponent(
            self.rng, members, self.config, self.num_sides, self.learner_side[e]
        )
        draw_modes(self.rng, self.config, self.modes, e)

    def add_snapshot(self, model: ActorCritic) -> None:
        """A frozen copy of ``model`` joins the pool (:func:`add_to_pool`)."""
        add_to_pool(self.pool, model, self.config)

    def collect(self, model: Learner, steps: int) -> tuple[Batch, EpisodeStats]:
        """Play ``steps`` decisions in every environment; returns the learner's transitions."""
        num_envs = len(self.envs)
        chains = Transitions(
            self.config, self.architecture, num_envs=num_envs, num_players=self.num_players, steps=steps
        )
        step_obs = np.zeros((num_envs, self.obs_size), dtype=np.float32)
        step_masks = np.zeros((num_envs, self.num_actions), dtype=bool)
        stats = EpisodeStats()
        seat_of = {agent: seat for seat, agent in enumerate(self.envs[0].possible_agents)}
        search = self._teacher(model)
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
                row_states = None if not chains.state_size else np.stack([self.envs[e].state() for e in rows])
                modes = None if self.modes is None else self.modes[rows, seats[rows]]
                acted = learner_act(model, step_obs[rows], step_masks[rows], row_states, modes)
                chosen[rows] = acted[0]
                targets = None if search is None else self._label(search, rows, step_obs, step_masks)
                chains.add(
                    rows, seats[rows], step_obs[rows], step_masks[rows], acted, row_states, modes, targets
                )
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
                        self._end_round(e, over, chains)
                elif any(step_rewards := [env.rewards[agent] for agent in env.possible_agents]):
                    chains.reward(np.array([e]), np.array([step_rewards]))
                if over:
                    self._record(e, env, stats)
                    chains.close(e)
                    self._new_game(e)
        batch, stats.decisions = chains.batch()
        return batch, stats

    def _teacher(self, model: Learner) -> GuidedSearchAgent | None:
        """The search that labels this rollout's decisions (``distill.share`` > 0): guided by
        the policy as it plays, seeded from the collection's random stream."""
        distill = self.config.distill
        if distill.share <= 0:
            return None
        assert isinstance(model, ActorCritic)  # (ppo or mmd: validate refuses the others)
        return GuidedSearchAgent(model, distill.worlds, seed=int(self.rng.integers(2**63)))

    def _label(
        self, search: GuidedSearchAgent, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray
    ) -> np.ndarray:
        """The search's choice at each of ``rows`` it labels (each with probability
        ``distill.share``), -1 at the others."""
        targets = np.full(len(rows), -1, dtype=np.int64)
        for k in np.flatnonzero(self.rng.random(len(rows)) < self.config.distill.share).tolist():
            e = int(rows[k])
            targets[k] = search(self.envs[e], {"observation": obs[e], "action_mask": masks[e]})
        return targets

    def _end_round(self, e: int, over: bool, chains: Transitions) -> None:
        """Close every seat's last transition of env ``e``'s round that just ended, rewarded by
        the change in its side's match value (at the match's end: to its outcome)."""
        assert self.match_value is not None
        env = self.envs[e]
        outcomes = env.outcomes() if over else None
        chains.credit(
            e, self.match_value.credit(self.side_of, self.round_starts[e][1], env.side_scores, outcomes)
        )
        chains.close(e)
        self.round_starts[e] = (env.round_index, env.side_scores)

    def _record(self, e: int, env: DominoEnv, stats: EpisodeStats) -> None:
        record_game(
            stats,
            self.lengths[e],
            self.opponent[e] is not None,
            env.rules,
            self.learner_side[e],
            env.outcomes,
        )

    def close(self) -> None:
        """Nothing to release: the envs live in this process."""

    def state_dict(self) -> dict:
        """What an exact resume needs: every game in progress, who plays it, the pool."""
        return {
            "games": [env.game for env in self.envs],
            "env_rngs": [env.np_random.bit_generator.state for env in self.envs],
            **pool_state(self.pool, self.opponent, self.baselines),
            "baseline_rngs": {
                name: random_stream(agent).getstate() for name, agent in self.baselines.items()
            },
            "learner_side": list(self.learner_side),
            "lengths": list(self.lengths),
            "round_starts": list(self.round_starts),
            "modes": None if self.modes is None else self.modes.copy(),
        }

    def load_state_dict(self, state: dict, model: ActorCritic) -> None:
        self.pool, self.opponent = restore_pool(state, model, self.baselines)
        for e, env in enumerate(self.envs):
            env.restore(state["games"][e], state["env_rngs"][e])
        for name, rng_state in state["baseline_rngs"].items():
            random_stream(self.baselines[name]).setstate(rng_state)
        self.learner_side = list(state["learner_side"])
        self.lengths = list(state["lengths"])
        # (a run saved before run.match_value existed: its rounds start where they stand)
        starts = state.get("round_starts") or [(env.round_index, env.side_scores) for env in self.envs]
        self.round_starts = [(r, tuple(scores)) for r, scores in starts]
        if self.modes is not None and state.get("modes") is not None:
            self.modes[:] = state["modes"]
