"""Masked PPO, read top to bottom (after CleanRL's ppo.py): a batch of transitions, their
advantages (GAE over per-seat chains), and the clipped update. The networks are in
:mod:`training.model.networks`; the read path through the whole algorithm is in
:mod:`training.rl`. Comments marked ``ALGO`` are PPO itself; the rest is plumbing.

``algorithm: mmd`` (magnetic mirror descent, Sokota et al., 2023, in its deep-RL form) is this
update plus one marked step: ``mmd.magnet_coef`` times the KL of the new policy to a *magnet*
policy over each row's legal actions (a :data:`Magnet`: a frozen copy of the policy that the
trainer refreshes every ``mmd.magnet_every`` updates, or :func:`uniform_magnet`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from training.model.config import PPOConfig
from training.model.networks import ActorCritic


@dataclass
class Batch:
    """One iteration's transitions, flattened."""

    obs: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    states: torch.Tensor | None = None  # the env's global state: the perfect-information critic's input
    # algorithm: nfsp's DQN and reservoir (training/rl/nfsp.py), None otherwise: each transition's
    # own rewards, its episode's end, its seat's next decision (zeros after the end) and whether
    # the seat played this game by its best response
    rewards: torch.Tensor | None = None
    done: torch.Tensor | None = None
    next_obs: torch.Tensor | None = None
    next_masks: torch.Tensor | None = None
    best_response: torch.Tensor | None = None
    # distill.share > 0: the guided search's choice at the rows it labelled, -1 at the others
    targets: torch.Tensor | None = None

    def to(self, device: torch.device) -> Batch:
        """The batch on ``device`` (itself, every tensor unmoved, where it is there already)."""
        moved: dict[str, Any] = {
            f.name: None if (tensor := getattr(self, f.name)) is None else tensor.to(device)
            for f in dataclasses.fields(self)
        }
        return dataclasses.replace(self, **moved)


def backward_waves(successor: np.ndarray, done: np.ndarray) -> list[np.ndarray]:
    """The transitions in the order a backward pass along per-seat chains needs, a wave at a
    time (as CleanRL's GAE steps back through time, every env at once): the first wave ends
    its chain (``done``, or open: no successor), each later one is the predecessors of the
    wave before. So every transition comes after its successor, and a wave is computed whole."""
    linked = np.flatnonzero(~done & (successor >= 0))
    predecessor = np.full(len(successor), -1)
    predecessor[successor[linked]] = linked
    waves, wave = [], np.flatnonzero(done | (successor < 0))
    while len(wave):
        waves.append(wave)
        wave = predecessor[wave]
        wave = wave[wave >= 0]
    return waves


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    *,
    successor: np.ndarray,
    done: np.ndarray,
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimates over per-seat chains of transitions.

    Transition ``i`` is followed, in its own seat's trajectory, by ``successor[i]`` (a later
    index) or ends the episode (``done[i]``). One with neither is still open when the rollout
    stops (its seat has not decided again): it gets no estimate (0) and only lends its value -
    that of a real decision of its seat - to the transition before it, whose estimate is cut
    there (truncated GAE); the caller leaves it out of the batch. Returns (advantages, returns).
    """
    advantages = np.zeros_like(rewards)
    for wave in backward_waves(successor, done):
        wave = wave[done[wave] | (successor[wave] >= 0)]  # (open: no estimate)
        going = ~done[wave]
        after = np.where(going, successor[wave], wave)  # (at the episode's end: zeroed below)
        next_value = np.where(going, values[after], 0)
        next_advantage = np.where(going, advantages[after], 0)
        # ALGO: the TD error, and the advantage as its discounted sum along the seat's chain
        delta = rewards[wave] + gamma * next_value - values[wave]
        advantages[wave] = delta + gamma * lam * next_advantage
    return advantages, advantages + values


# (observations, masks, global states or None) of a minibatch -> the magnet's log-probabilities
# in its LegalPolicy's layout: (rows, widest row), each row's legal actions in id order, padded
Magnet = Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor]


def uniform_magnet(
    obs: torch.Tensor, masks: torch.Tensor, states: torch.Tensor | None = None
) -> torch.Tensor:
    """The magnet of ``mmd.magnet_every: 0``: uniform play over each row's legal actions
    (the KL to it is log(#legal) minus the entropy)."""
    counts = masks.sum(-1)
    return (-counts.to(torch.float32).log())[:, None].expand(-1, int(counts.max()))


def policy_magnet(magnet: ActorCritic) -> Magnet:
    """A frozen copy of the policy network as a :data:`Magnet`."""

    def log_probs(obs: torch.Tensor, masks: torch.Tensor, states: torch.Tensor | None) -> torch.Tensor:
        return magnet.legal(obs, masks, states)[0].log_probs()

    return log_probs


def update(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    *,
    batch: Batch,
    cfg: PPOConfig,
    rng: np.random.Generator,
    magnet: Magnet | None = None,
    magnet_coef: float = 0.0,
    distill_coef: float = 0.0,
) -> dict[str, float]:
    """PPO epochs over shuffled minibatches; returns the statistics to log. The batch moves to
    the model's device once (``run.device``), the minibatches are cut from it there. With a
    ``magnet`` (``algorithm: mmd``) the loss adds ``magnet_coef`` times KL(new policy || magnet);
    with the search's labels (``batch.targets``, ``distill``) ``distill_coef`` times the
    cross-entropy of the policy to the search's choice over the labelled rows."""
    size = len(batch.actions)
    if size == 0:  # every decision of the rollout was a pool member's
        return {}
    collected, device = batch, model.device
    batch = batch.to(device)
    parts = min(cfg.num_minibatches, size)  # (with a pool, a batch may be any size)
    clip_fractions, approx_kl = [], 0.0
    stats: dict[str, float] = {}
    for _epoch in range(cfg.update_epochs):
        for part in np.array_split(rng.permutation(size), parts):  # sizes differ by one at most
            # plumbing: one shuffled minibatch, re-evaluated by the current policy (legal actions only)
            idx = torch.from_numpy(part).to(device)
            states = None if batch.states is None else batch.states[idx]
            policy, new_values = model.legal(batch.obs[idx], batch.masks[idx], states)
            # ALGO: the probability ratio of the stored actions, new policy over old
            new_logprob = policy.log_prob(batch.actions[idx])
            entropy = policy.entropy().mean()
            log_ratio = new_logprob - batch.logprobs[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = float(((ratio - 1) - log_ratio).mean())
                clip_fractions.append(float(((ratio - 1.0).abs() > cfg.clip_coef).float().mean()))

            # ALGO: the clipped policy loss on (normalised) advantages
            advantages = batch.advantages[idx]
            if cfg.norm_adv and len(idx) > 1:
                advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
            policy_loss = torch.max(
                -advantages * ratio, -advantages * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
            ).mean()

            # ALGO: the value loss, clipped around the old values
            returns, old_values = batch.returns[idx], batch.values[idx]
            if cfg.clip_vloss:
                clipped = old_values + (new_values - old_values).clamp(-cfg.clip_coef, cfg.clip_coef)
                value_loss = 0.5 * torch.max((new_values - returns) ** 2, (clipped - returns) ** 2).mean()
            else:
                value_loss = 0.5 * ((new_values - returns) ** 2).mean()

            # ALGO: the total loss (entropy bonus)
            loss = policy_loss - cfg.ent_coef * entropy + cfg.vf_coef * value_loss

            # ALGO (mmd only): the magnet's pull, KL(new policy || magnet) over the legal actions
            if magnet is not None:
                log_probs = policy.log_probs()  # (padding slots: probability 0, so they add 0)
                with torch.no_grad():
                    magnet_log_probs = magnet(batch.obs[idx], batch.masks[idx], states)
                magnet_kl = (log_probs.exp() * (log_probs - magnet_log_probs)).sum(-1).mean()
                loss = loss + magnet_coef * magnet_kl

            # ALGO (distill only): the policy pulled toward the search's choice where it labelled
            distill_loss = None
            if batch.targets is not None:
                targets = batch.targets[idx]
                labelled = targets >= 0
                if bool(labelled.any()):  # (an unlabelled row asks for its own action: a legal one)
                    chosen = torch.where(labelled, targets, batch.actions[idx])
                    distill_loss = -policy.log_prob(chosen)[labelled].mean()
                    loss = loss + distill_coef * distill_loss

            # ALGO: one gradient step, gradients clipped
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            # plumbing: what to log
            stats = {
                "loss/policy": policy_loss.item(),
                "loss/value": value_loss.item(),
                "loss/entropy": entropy.item(),
            }
            if magnet is not None:
                stats["loss/magnet_kl"] = magnet_kl.item()
            if distill_loss is not None:
                stats["loss/distill"] = distill_loss.item()
        if cfg.target_kl and approx_kl > cfg.target_kl:  # ALGO: early stop once the policy moved far
            break
    stats["loss/approx_kl"] = approx_kl
    stats["loss/clip_fraction"] = float(np.mean(clip_fractions)) if clip_fractions else 0.0
    stats["loss/explained_variance"] = explained_variance(collected)
    if batch.targets is not None:
        stats["distill/labels"] = float((batch.targets >= 0).sum())
    return stats


def explained_variance(batch: Batch) -> float:
    """How much of the returns' variance the collected values explain (1: all; 0 or less: none)."""
    predicted, target = batch.values.numpy(), batch.returns.numpy()  # (the CPU's copies)
    variance = float(np.var(target))
    return 1.0 - float(np.var(target - predicted)) / variance if variance > 0 else 0.0
