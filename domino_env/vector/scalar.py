"""The scalar backend: B scalar environments behind the batched interface, exact by definition.

Each table is a raw :func:`domino_env.raw_env` built with the batch's options, reset with the
seed :func:`~domino_env.vector.base.episode_seed` names and stepped with its table's action;
the batch only copies each table's observation, mask, seat to move and rewards into its
arrays. It steps any variant and table: Blind, Blind blitz and 3D dominoes (no kernel), and
any table a kernel does not support.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from domino_env.envs.base import DominoEnv
from domino_env.registry import raw_env
from domino_env.vector.base import Info, VectorEnv, base_seed, checked_actions, episode_seed


class ScalarVectorEnv(VectorEnv):
    """``num_envs`` scalar tables of ``name`` built with ``options`` (as :func:`domino_env.make`'s;
    validated by the first table's construction). Every call returns new arrays."""

    backend = "scalar"

    def __init__(self, name: str, num_envs: int, **options: Any) -> None:
        self.name, self.options, self.num_envs = name, dict(options), num_envs
        self.envs: list[DominoEnv[Any]] = [raw_env(name, **options) for _ in range(num_envs)]
        first = self.envs[0]
        self.agents = list(first.possible_agents)
        self.num_players = len(self.agents)
        self.observation_size = int(first.encoder.size)
        self.num_actions = int(first.rules.num_actions)
        self.state_size = int(first.state_space.shape[0])
        self._num_sides = int(first.rules.num_sides)
        self._seat = {agent: seat for seat, agent in enumerate(self.agents)}
        self._base = 0
        self._episodes = [0] * num_envs
        # The legal actions now, what step checks against: the batch's own copy of the last mask
        # it returned (the caller may write into that one); None before the first reset.
        self._mask: np.ndarray | None = None

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, Info]:
        self._base = base = base_seed(seed)
        self._episodes = [0] * self.num_envs
        obs, mask, player = self._outputs()
        for i, env in enumerate(self.envs):
            env.reset(seed=episode_seed(base, i, 0, self.num_envs))
            self._show(i, env, obs, mask, player)
        self._mask = mask.copy()
        return obs, mask, {"player": player}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Info]:
        if self._mask is None:
            raise ValueError("step() needs dealt tables: call reset() first")
        chosen = checked_actions(actions, self._mask).tolist()  # python ints: the env's fast path
        obs, mask, player = self._outputs()
        reward = np.zeros((self.num_envs, self.num_players), np.float32)
        done = np.zeros(self.num_envs, bool)
        round_over = np.zeros(self.num_envs, bool)
        side_scores = np.empty((self.num_envs, self._num_sides), np.int64)
        outcome = np.zeros((self.num_envs, self.num_players), np.float64)
        agents, seat, base, episodes = self.agents, self._seat, self._base, self._episodes
        for i, env in enumerate(self.envs):
            round_index = env.round_index
            env.step(chosen[i])
            rewards = env.rewards
            row = [rewards[agent] for agent in agents]
            if any(row):
                reward[i] = row
            side_scores[i] = env.side_scores
            agent = env.agent_selection
            if (env.terminations[agent] or env.truncations[agent]) and all(
                env.terminations[a] or env.truncations[a] for a in agents
            ):
                done[i] = round_over[i] = True
                outcome[i] = env.outcomes()
                episodes[i] += 1
                env.reset(seed=episode_seed(base, i, episodes[i], self.num_envs))
                agent = env.agent_selection
            else:
                round_over[i] = env.round_index != round_index
            seen = env.observe(agent)
            obs[i] = seen["observation"]
            mask[i] = seen["action_mask"]
            player[i] = seat[agent]
        np.copyto(self._mask, mask)
        info = {"player": player, "round_over": round_over, "side_scores": side_scores, "outcome": outcome}
        return obs, mask, reward, done, info

    def state(self) -> np.ndarray:
        return np.stack([env.state() for env in self.envs])

    def snapshot(self) -> dict[str, Any]:
        if self._mask is None:
            raise ValueError("snapshot() needs dealt tables: call reset() first")
        return {
            **self._snapshot_header(),
            "base": self._base,
            "episodes": list(self._episodes),
            "games": [copy.deepcopy(env.game) for env in self.envs],
            "rngs": [env.np_random.bit_generator.state for env in self.envs],
        }

    def restore(self, snapshot: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, Info]:
        self._check_snapshot(snapshot)
        games, rngs = snapshot["games"], snapshot["rngs"]
        if len(games) != self.num_envs or len(rngs) != self.num_envs:
            raise ValueError(f"the snapshot holds {len(games)} games, not one per table ({self.num_envs})")
        self._base = int(snapshot["base"])
        self._episodes = [int(k) for k in snapshot["episodes"]]
        obs, mask, player = self._outputs()
        for i, env in enumerate(self.envs):
            env.restore(copy.deepcopy(games[i]), rngs[i])  # (a copy: the snapshot replays again)
            self._show(i, env, obs, mask, player)
        self._mask = mask.copy()
        return obs, mask, {"player": player}

    def _outputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New observation, mask and seat arrays for every table (rows written as the tables step)."""
        return (
            np.empty((self.num_envs, self.observation_size), np.float32),
            np.empty((self.num_envs, self.num_actions), bool),
            np.empty(self.num_envs, np.int64),
        )

    def _show(
        self, i: int, env: DominoEnv[Any], obs: np.ndarray, mask: np.ndarray, player: np.ndarray
    ) -> None:
        """Write table ``i``'s seat to move, its observation and its legal actions into row ``i``."""
        agent = env.agent_selection
        seen = env.observe(agent)
        obs[i] = seen["observation"]
        mask[i] = seen["action_mask"]
        player[i] = self._seat[agent]
