"""The PPO algorithm: the update re-evaluates stored actions and splits batches as configured;
GAE over interleaved per-seat chains."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.training_helpers import acted_batch, parameters, random_masks, tiny_config
from training.model.networks import ActorCritic, Architecture
from training.rl.dmc import monte_carlo_returns
from training.rl.ppo import gae, update


def test_update_reevaluates_stored_actions_under_the_same_mask() -> None:
    """With a zero learning rate the update's log-probabilities equal the acting ones: ratio 1,
    no KL, nothing clipped. Unmasked re-evaluation would give other log-probabilities."""
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    model = ActorCritic(Architecture(16, 10, hidden=[32]))
    with torch.no_grad():
        model.policy.weight.mul_(200.0)  # a peaked policy, so masking matters a lot
    obs = rng.normal(size=(256, 16)).astype(np.float32)
    masks = random_masks(rng, 256, 10)
    actions, logprobs, values = model.act(obs, masks)
    unmasked = model.distribution(torch.from_numpy(obs), torch.ones(256, 10, dtype=torch.bool))[0]
    assert not np.allclose(unmasked.log_prob(torch.from_numpy(actions)).detach().numpy(), logprobs, atol=1e-3)

    batch = acted_batch(obs, masks, (actions, logprobs, values), rng)
    cfg = tiny_config().ppo
    cfg.update_epochs, cfg.num_minibatches = 1, 4
    before = parameters(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0)
    stats = update(model, optimizer, batch=batch, cfg=cfg, rng=np.random.default_rng(0))
    assert abs(stats["loss/approx_kl"]) < 1e-6
    assert stats["loss/clip_fraction"] == 0.0
    assert all(torch.equal(before[k], v) for k, v in parameters(model).items())

    # a real update keeps everything finite (masked logits never turn into NaN gradients)
    cfg.update_epochs = 3
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    update(model, optimizer, batch=batch, cfg=cfg, rng=np.random.default_rng(0))
    assert all(torch.isfinite(p).all() for p in model.parameters())
    probs = model.distribution(batch.obs, batch.masks)[0].probs.detach()
    assert torch.all(probs[~batch.masks] == 0.0)


def test_update_splits_any_batch_into_exactly_num_minibatches_per_epoch() -> None:
    """With a pool a batch holds any number of learner decisions: 10 rows in 4 minibatches are
    3+3+2+2, every row once an epoch - never a fifth, tiny minibatch of the remainder."""
    torch.manual_seed(2)
    rng = np.random.default_rng(2)
    model = ActorCritic(Architecture(8, 5, hidden=[16]))
    obs = rng.normal(size=(10, 8)).astype(np.float32)
    masks = random_masks(rng, 10, 5)
    batch = acted_batch(obs, masks, model.act(obs, masks), rng)
    cfg = tiny_config().ppo
    cfg.update_epochs, cfg.num_minibatches, cfg.target_kl = 2, 4, 0.0
    seen: list[list[float]] = []
    legal = model.legal

    def recorded(obs: torch.Tensor, masks: torch.Tensor, states: torch.Tensor | None) -> Any:
        assert states is None  # (no perfect-information critic)
        seen.append(obs[:, 0].tolist())
        return legal(obs, masks, states)

    model.legal = recorded  # type: ignore[method-assign]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    update(model, optimizer, batch=batch, cfg=cfg, rng=np.random.default_rng(0))
    assert [len(rows) for rows in seen] == [3, 3, 2, 2] * 2
    for epoch in (seen[:4], seen[4:]):
        assert sorted(x for rows in epoch for x in rows) == sorted(obs[:, 0].tolist())


# --- GAE -------------------------------------------------------------------------------------------


def test_gae_hand_computed_over_interleaved_seat_chains() -> None:
    """Seat A: 0 -> 2 -> 4 (4 ends the episode); seat B: 1 -> 3 (3 still open: it only lends
    its value to 1, whose estimate stops there)."""
    rewards = np.array([0.0, 0.5, 0.0, 0.0, 1.0], dtype=np.float32)
    values = np.array([0.1, 0.2, 0.3, 0.4, 0.5], dtype=np.float32)
    successor = np.array([2, 3, 4, -1, -1])
    done = np.array([False, False, False, False, True])
    advantages, returns = gae(rewards, values, successor=successor, done=done, gamma=0.9, lam=0.8)
    # A4: 1 - .5 = .5                         B3: open, no estimate
    # A2: .9*.5 - .3 + .72*.5 = .51           B1: .5 + .9*.4 - .2 = .66
    # A0: .9*.3 - .1 + .72*.51 = .5372
    assert advantages == pytest.approx([0.5372, 0.66, 0.51, 0.0, 0.5], abs=1e-6)
    assert returns == pytest.approx([0.6372, 0.86, 0.81, 0.4, 1.0], abs=1e-6)


def test_gae_with_gamma_and_lambda_one_is_the_monte_carlo_return_along_each_chain() -> None:
    """Each finished transition's return: its chain's rewards up to the episode's end, or up to
    the open transition that ends the chain, plus that one's value."""
    rng = np.random.default_rng(3)
    n = 40
    seats = rng.integers(3, size=n)
    successor, done = np.full(n, -1), np.zeros(n, dtype=bool)
    for i in range(n):
        later = [j for j in range(i + 1, n) if seats[j] == seats[i]]
        if later:
            successor[i] = later[0]
        else:
            done[i] = rng.random() < 0.5  # the others stay open
    rewards = rng.normal(size=n).astype(np.float64)
    values = rng.normal(size=n).astype(np.float64)
    advantages, returns = gae(rewards, values, successor=successor, done=done, gamma=1.0, lam=1.0)
    for i in range(n):
        if not done[i] and successor[i] < 0:
            assert advantages[i] == 0.0  # open: no estimate
            continue
        total, j = 0.0, i
        while True:
            total += rewards[j]
            if done[j]:
                break
            if successor[successor[j]] < 0 and not done[successor[j]]:
                total += values[successor[j]]  # the open transition's value ends the chain
                break
            j = successor[j]
        assert returns[i] == pytest.approx(total)
        assert advantages[i] == pytest.approx(total - values[i])


# --- the wave passes against the plain backward loops ------------------------------------------


Chains = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # rewards, values, successor, done


@st.composite
def seat_chains(draw: st.DrawFn) -> Chains:
    """A rollout's transitions as the collectors lay them out: interleaved per-seat chains,
    each ending its episode (done, later transitions of the seat start a new chain) or open."""
    n = draw(st.integers(0, 60))
    seats = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    ends = draw(st.lists(st.booleans(), min_size=n, max_size=n))  # where a chain ends its episode
    successor, done = np.full(n, -1), np.zeros(n, dtype=bool)
    for i in range(n):
        later = [j for j in range(i + 1, n) if seats[j] == seats[i]]
        done[i] = ends[i] or (not later and draw(st.booleans()))
        if later and not done[i]:
            successor[i] = later[0]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rewards, values = rng.normal(size=(2, n)).astype(np.float32)
    return rewards, values, successor, done


def plain_gae(
    rewards: np.ndarray, values: np.ndarray, successor: np.ndarray, done: np.ndarray, gamma: float, lam: float
) -> np.ndarray:
    """GAE one transition at a time, from the last back."""
    advantages = np.zeros_like(rewards)
    for i in range(len(rewards) - 1, -1, -1):
        if done[i]:
            next_value, next_advantage = 0.0, 0.0
        elif successor[i] >= 0:
            next_value, next_advantage = values[successor[i]], advantages[successor[i]]
        else:
            continue
        delta = rewards[i] + gamma * next_value - values[i]
        advantages[i] = delta + gamma * lam * next_advantage
    return advantages


@settings(max_examples=200, deadline=None)
@given(seat_chains(), st.sampled_from([(0.99, 0.95), (1.0, 1.0), (0.9, 0.0)]))
def test_gae_by_waves_equals_the_plain_loop(chains: Chains, discounts: tuple[float, float]) -> None:
    rewards, values, successor, done = chains
    gamma, lam = discounts
    advantages, returns = gae(rewards, values, successor=successor, done=done, gamma=gamma, lam=lam)
    expected = plain_gae(rewards, values, successor, done, gamma, lam)
    np.testing.assert_array_equal(advantages, expected)  # (the same float32 operations, in order)
    assert advantages.dtype == np.float32
    np.testing.assert_array_equal(returns, advantages + values)


@settings(max_examples=200, deadline=None)
@given(seat_chains())
def test_monte_carlo_returns_by_waves_equal_the_plain_loop(chains: Chains) -> None:
    rewards, _, successor, done = chains
    returns, finished = monte_carlo_returns(rewards, successor=successor, done=done)
    for i in range(len(rewards) - 1, -1, -1):  # a chain is finished where it reaches a done
        j, total = i, 0.0
        while not done[j] and successor[j] >= 0:
            total, j = total + float(rewards[j]), successor[j]
        assert finished[i] == done[j]
        assert returns[i] == pytest.approx(total + float(rewards[j]) if done[j] else 0.0, abs=1e-5)
