"""Deep Monte Carlo (DouZero, Zha et al., 2021), read top to bottom as :mod:`training.rl.ppo`:
the Monte Carlo returns of finished episodes, and the regression of Q(s, a) on them. Comments
marked ``ALGO`` are DMC itself; the rest is plumbing.

``algorithm: dmc`` reads the policy head's logit of an action as its Q value, so the network and
the checkpoint are PPO's: a dmc checkpoint's greedy play (what evaluations use) is argmax Q.
Collecting, the model plays epsilon-greedily on those Q values (``dmc.epsilon``,
:meth:`LegalPolicy.epsilon_greedy <training.model.networks.LegalPolicy.epsilon_greedy>`, chosen
by :attr:`ActorCritic.epsilon <training.model.networks.ActorCritic.epsilon>`).

The targets are undiscounted Monte Carlo returns (DouZero's: ``ppo.gamma`` and
``ppo.gae_lambda`` are not read). A decision whose episode is still going when the rollout
stops has no return yet: it is left out of the batch (as DouZero learns from finished
episodes only; no bootstrapping), and the decisions of that episode made in the next rollout
are learned there. The update reads ``ppo``'s optimisation settings: ``learning_rate``,
``anneal_lr``, ``update_epochs``, ``num_minibatches``, ``max_grad_norm`` and ``vf_coef``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from training.model.config import PPOConfig
from training.model.networks import ActorCritic
from training.rl.ppo import Batch, backward_waves, explained_variance


def monte_carlo_returns(
    rewards: np.ndarray, *, successor: np.ndarray, done: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Undiscounted returns over per-seat chains of transitions (:func:`training.rl.ppo.gae`'s
    chains: transition ``i`` is followed in its seat's trajectory by ``successor[i]``, a later
    index, or ends the episode, ``done[i]``). Returns (returns, finished): ``returns[i]`` is the
    sum of the seat's rewards from ``i`` to its episode's end, where ``finished[i]``: the chain
    reaches its end within these transitions; elsewhere (cut by the rollout's end) 0."""
    returns = np.zeros_like(rewards)
    finished = np.zeros(len(rewards), dtype=bool)
    for wave in backward_waves(successor, done):
        ends = wave[done[wave]]
        returns[ends], finished[ends] = rewards[ends], True
        going = wave[~done[wave] & (successor[wave] >= 0)]
        going = going[finished[successor[going]]]
        # ALGO: the Monte Carlo return, this transition's rewards plus the rest of the episode's
        returns[going], finished[going] = rewards[going] + returns[successor[going]], True
    return returns, finished


def update(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    *,
    batch: Batch,
    cfg: PPOConfig,
    rng: np.random.Generator,
) -> dict[str, float]:
    """Epochs of Q regression over shuffled minibatches (``batch.returns``: the Monte Carlo
    returns); returns the statistics to log. The batch moves to the model's device once."""
    size = len(batch.actions)
    if size == 0:  # no learner decision's episode finished in this rollout
        return {}
    collected, device = batch, model.device
    batch = batch.to(device)
    parts = min(cfg.num_minibatches, size)
    stats: dict[str, float] = {}
    for _epoch in range(cfg.update_epochs):
        for part in np.array_split(rng.permutation(size), parts):
            # plumbing: one shuffled minibatch, re-evaluated by the current network (legal actions only)
            idx = torch.from_numpy(part).to(device)
            states = None if batch.states is None else batch.states[idx]
            policy, values = model.legal(batch.obs[idx], batch.masks[idx], states)
            returns = batch.returns[idx]

            # ALGO: the stored actions' Q values (their logits) regressed on the returns
            q = policy.logit(batch.actions[idx])
            q_loss = ((q - returns) ** 2).mean()

            # the value head regressed on the same returns (V(s): the epsilon-greedy policy's
            # expected return), so that the checkpoint's value head (or perfect-information critic)
            # is trained too and loss/explained_variance reads as in PPO; ppo.vf_coef weighs it
            value_loss = 0.5 * ((values - returns) ** 2).mean()
            loss = q_loss + cfg.vf_coef * value_loss

            # ALGO: one gradient step, gradients clipped
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            # plumbing: what to log
            stats = {"loss/q": q_loss.item(), "loss/value": value_loss.item()}
    stats["loss/explained_variance"] = explained_variance(collected)
    return stats
