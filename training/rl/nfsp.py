"""Neural fictitious self-play (Heinrich and Silver, 2016), read top to bottom as
:mod:`training.rl.ppo`: two networks, two memories, two losses. Comments marked ``ALGO`` are
NFSP itself; the rest is plumbing.

* The **average policy** is the run's model (an :class:`ActorCritic`, the checkpoint's network,
  what evaluations play): it imitates the best response's own plays, a uniform sample of all of
  them kept in a reservoir (:class:`Reservoir`), by maximum likelihood. It is the part of NFSP
  that approaches a Nash equilibrium.
* The **best response** is a second network of the same shape whose policy logits are read as
  Q values (as ``algorithm: dmc`` reads them), learned by DQN: regressed on ``r + max_a' Q'(s',
  a')`` over the legal ``a'`` (undiscounted, as OpenSpiel's NFSP; ``Q'``: a target copy
  refreshed every ``nfsp.target_every`` steps) from the newest transitions (:class:`Replay`).
* **Acting** (:class:`Player`): at each new game every seat plays the whole game by its best
  response (epsilon-greedy on Q, epsilon falling from ``nfsp.epsilon_start`` to ``epsilon_end``
  over the run) with probability ``nfsp.anticipatory``, else by the average policy (sampled).
  The collectors draw these modes (:func:`training.rl.rollout.draw_modes`) and keep them with
  their games.

One model plays every seat (parameter sharing, as every algorithm here); pool snapshots and
evaluations are the average policy's. A step of each network follows every ``nfsp.learn_every``
learner decisions, once its memory holds ``nfsp.min_memory``. The average policy's step reads
``ppo.learning_rate`` (and ``ppo.anneal_lr``), the best response's ``nfsp.rl_learning_rate``;
both clip gradients at ``ppo.max_grad_norm``. A transition still open when a rollout stops (its
seat has not decided again) is left out, as in every algorithm's batch.

A checkpoint keeps both networks, the target and the best response's optimizer (``nfsp``), so a
resumed run goes on with them; the memories are not saved (they would make every checkpoint up
to hundreds of MB), so a resumed run refills them from its own play.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn

from training.model.config import Config
from training.model.networks import ActorCritic
from training.rl.ppo import Batch


class Replay:
    """The RL memory: the newest ``capacity`` transitions (circular), as columns."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.size, self.next = capacity, 0, 0
        self.columns: dict[str, np.ndarray] = {}

    def add(self, **columns: np.ndarray) -> None:
        """Append rows (each column the same length), overwriting the oldest once full."""
        count = len(next(iter(columns.values())))
        if count > self.capacity:  # (only the newest fit)
            columns, count = {name: rows[-self.capacity :] for name, rows in columns.items()}, self.capacity
        if not self.columns:  # (allocated on first use, shaped by what arrives; pages fill as used)
            self.columns = {k: np.zeros((self.capacity, *v.shape[1:]), v.dtype) for k, v in columns.items()}
        slots = (self.next + np.arange(count)) % self.capacity
        for name, rows in columns.items():
            self.columns[name][slots] = rows
        self.next = int((self.next + count) % self.capacity)
        self.size = min(self.capacity, self.size + count)

    def sample(self, count: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
        """``count`` rows drawn uniformly with replacement."""
        picked = rng.integers(self.size, size=count)
        return {name: torch.from_numpy(column[picked]) for name, column in self.columns.items()}


class Reservoir(Replay):
    """The SL memory: a uniform sample of every row ever offered (reservoir sampling, Vitter's
    algorithm R), so the average policy imitates the best response of every stage of the run,
    not only the newest."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.seen = 0  # rows offered so far

    def offer(self, rng: np.random.Generator, **columns: np.ndarray) -> None:
        """Offer rows: while there is room they are kept; after that, the ``n``-th row offered
        replaces a uniformly chosen kept row with probability ``capacity / n``."""
        count = len(next(iter(columns.values())))
        if not count:
            return
        room = min(count, self.capacity - self.size)
        if room:
            self.add(**{name: rows[:room] for name, rows in columns.items()})
        rest = np.arange(room, count)
        # ALGO: reservoir sampling: row number n (1-based, over the whole run) lands in slot j < n
        # drawn uniformly, and is kept if j falls inside the reservoir
        n = self.seen + rest + 1
        slot = rng.integers(n)
        kept = slot < self.capacity
        # (a later row wins a slot drawn twice, as in the one-at-a-time algorithm)
        slots, last = np.unique(slot[kept][::-1], return_index=True)
        chosen = rest[kept][::-1][last]
        for name, rows in columns.items():
            self.columns[name][slots] = rows[chosen]
        self.seen += count


class Player:
    """What the collectors act with under ``algorithm: nfsp``: each row by its seat's mode this
    game, the best response (epsilon-greedy on the Q network) or the average policy (sampled)."""

    def __init__(self, average: ActorCritic, best_response: ActorCritic, epsilon: float) -> None:
        self.average, self.best_response, self.epsilon = average, best_response, epsilon

    @torch.no_grad()
    def act(
        self, obs: np.ndarray, mask: np.ndarray, state: np.ndarray | None, best_response: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(actions, log-probabilities under the policy that chose them, the average policy's
        values) for rows whose seats play by ``best_response`` (bool per row) or not."""
        actions, logprobs, values = self.average.act(obs, mask, state)
        rows = np.flatnonzero(best_response)
        if len(rows):
            device = self.best_response.device
            q = self.best_response.legal(
                torch.from_numpy(obs[rows]).to(device), torch.from_numpy(mask[rows]).to(device).bool()
            )[0]
            greedy, logprob = q.epsilon_greedy(self.epsilon)
            actions[rows], logprobs[rows] = greedy.cpu().numpy(), logprob.cpu().numpy()
        return actions, logprobs, values


class Learner:
    """The best-response network, its target copy and optimizer, and both memories."""

    def __init__(self, config: Config, model: ActorCritic, rng: np.random.Generator) -> None:
        self.config, self.cfg, self.rng = config, config.nfsp, rng
        self.q = ActorCritic(model.architecture).to(model.device)
        self.q_target = copy.deepcopy(self.q).eval().requires_grad_(False)
        self.q_optimizer = torch.optim.Adam(self.q.parameters(), lr=self.cfg.rl_learning_rate, eps=1e-5)
        self.q_steps = 0
        self.replay = Replay(self.cfg.replay_size)
        self.reservoir = Reservoir(self.cfg.reservoir_size)

    def epsilon(self, steps: int) -> float:
        """The best response's exploration after ``steps`` of the run's decisions (linear)."""
        share = min(1.0, steps / self.config.run.total_steps)
        return self.cfg.epsilon_start + (self.cfg.epsilon_end - self.cfg.epsilon_start) * share

    def player(self, model: ActorCritic, steps: int) -> Player:
        return Player(model, self.q, self.epsilon(steps))

    def remember(self, batch: Batch) -> None:
        """A rollout's learner transitions into the replay, and its best-response plays into the reservoir."""
        assert batch.best_response is not None and batch.next_obs is not None
        assert batch.next_masks is not None and batch.done is not None and batch.rewards is not None
        obs, masks, actions = batch.obs.numpy(), batch.masks.numpy(), batch.actions.numpy()
        self.replay.add(
            obs=obs,
            masks=masks,
            actions=actions,
            rewards=batch.rewards.numpy(),
            next_obs=batch.next_obs.numpy(),
            next_masks=batch.next_masks.numpy(),
            done=batch.done.numpy(),
        )
        mine = batch.best_response.numpy()
        self.reservoir.offer(self.rng, obs=obs[mine], masks=masks[mine], actions=actions[mine])

    def update(self, model: ActorCritic, optimizer: torch.optim.Optimizer, batch: Batch) -> dict[str, float]:
        """Remember ``batch``, then one step of each network per ``nfsp.learn_every`` of its
        decisions; returns the statistics to log."""
        self.remember(batch)
        cfg, device, clip = self.cfg, model.device, self.config.ppo.max_grad_norm
        ready = max(cfg.min_memory, 1)
        stats: dict[str, float] = {}
        for _ in range(len(batch.actions) // cfg.learn_every):
            if self.replay.size >= ready:
                rows = {k: v.to(device) for k, v in self.replay.sample(cfg.batch_size, self.rng).items()}
                # ALGO: DQN: Q(s, a) regressed on r + max over the next decision's legal a' of Q'(s', a')
                with torch.no_grad():
                    following = self.q_target.heads(rows["next_obs"])[0]
                    best = following.masked_fill(~rows["next_masks"], -torch.inf).max(dim=1).values
                    target = rows["rewards"] + torch.where(rows["done"], 0.0, best)
                q = self.q.legal(rows["obs"], rows["masks"])[0].logit(rows["actions"])
                q_loss = ((q - target) ** 2).mean()
                step(self.q_optimizer, q_loss, self.q, clip)
                self.q_steps += 1
                if self.q_steps % cfg.target_every == 0:  # ALGO: the target copy catches up
                    self.q_target.load_state_dict(self.q.state_dict())
                stats["loss/q"] = q_loss.item()
            if self.reservoir.size >= ready:
                rows = {k: v.to(device) for k, v in self.reservoir.sample(cfg.batch_size, self.rng).items()}
                # ALGO: the average policy imitates the best response's plays (maximum likelihood)
                policy = model.legal(rows["obs"], rows["masks"])[0]
                sl_loss = -policy.log_prob(rows["actions"]).mean()
                step(optimizer, sl_loss, model, clip)
                stats["loss/average_policy"] = sl_loss.item()
        stats["nfsp/replay"], stats["nfsp/reservoir"] = float(self.replay.size), float(self.reservoir.size)
        return stats

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps (not the memories: the module docstring)."""
        return {
            "q": self.q.state_dict(),
            "q_target": self.q_target.state_dict(),
            "q_optimizer": self.q_optimizer.state_dict(),
            "q_steps": self.q_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.q.load_state_dict(state["q"])
        self.q_target.load_state_dict(state["q_target"])
        self.q_optimizer.load_state_dict(state["q_optimizer"])
        self.q_steps = int(state["q_steps"])


def step(optimizer: torch.optim.Optimizer, loss: torch.Tensor, model: nn.Module, clip: float) -> None:
    """One gradient step on ``loss``, gradients clipped at ``clip``."""
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
