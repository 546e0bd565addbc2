"""TorchRL PPO on a domino variant: one masked policy for every seat, Monte-Carlo advantages.

    pip install "domino-env[torchrl]"
    python examples/torchrl_ppo.py --variant all_fives --iterations 30

The env is TorchRL's ``PettingZooWrapper`` over our AEC env (all seats in one group), the
policy a ``ProbabilisticActor`` with a ``MaskedCategorical`` and the update TorchRL's
``ClipPPOLoss``. Episodes are single rounds with outcome rewards (+1 / -1), so each decision's
return is its seat's final result (``turn_returns``) and its advantage that minus the critic's
value. Every ``--eval-every`` iterations it prints the greedy policy's win rate against ``random``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from torchrl.objectives import ClipPPOLoss

from domino_env import VARIANTS
from domino_env.agents import make_agent
from domino_env.integrations.torchrl import (
    ACTING_KEY,
    ACTION_KEY,
    LOG_PROB_KEY,
    MASK_KEY,
    VALUE_KEY,
    make_env,
    masked_actor,
    turn_returns,
    value_net,
)
from training.eval.arena import head_to_head, non_negative_int, positive_int


def greedy_agent(actor: Any) -> Any:
    """The policy's most probable legal action, as a domino ``agent(env, observation)``."""
    logits_module = actor.module[0]  # the TensorDictModule writing the logits

    def agent(env: Any, observation: dict[str, np.ndarray]) -> int:
        with torch.no_grad():
            logits = logits_module.module(torch.from_numpy(observation["observation"]))
        mask = torch.from_numpy(observation["action_mask"].astype(bool))
        return int(logits.masked_fill(~mask, -torch.inf).argmax())

    return agent


def train(
    variant: str = "all_fives",
    iterations: int = 30,
    steps: int = 1000,
    epochs: int = 4,
    hidden: tuple[int, ...] = (256, 256),
    eval_every: int = 10,
    eval_games: int = 100,
    seed: int = 0,
    **options: Any,
) -> list[dict[str, float]]:
    """PPO iterations; returns one line of statistics per iteration."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)  # tiny batches: more threads only cost
    options = {"num_players": 2, "episode": "round", "reward": "outcome", **options}
    env = make_env(variant, seed=seed, **options)
    actor, critic = masked_actor(env, hidden), value_net(env, hidden)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5)
    loss.set_keys(action=ACTION_KEY, sample_log_prob=LOG_PROB_KEY, value=VALUE_KEY)
    optimizer = torch.optim.Adam(loss.parameters(), lr=3e-4)
    log = []
    for iteration in range(1, iterations + 1):
        start = time.perf_counter()
        with torch.no_grad():
            rollout = env.rollout(steps, actor, break_when_any_done=False)
        legal = rollout[MASK_KEY].gather(-1, rollout[ACTION_KEY].unsqueeze(-1)).squeeze(-1)
        masked = int((~legal & rollout[ACTING_KEY]).sum())  # actions the seat to move could not play
        batch = turn_returns(rollout)
        with torch.no_grad():
            critic(batch)
        batch["value_target"] = batch["return"].unsqueeze(-1)
        batch["advantage"] = batch["value_target"] - batch[VALUE_KEY]
        for _ in range(epochs):
            for rows in torch.randperm(len(batch)).split(max(1, len(batch) // 4)):
                losses = loss(batch[rows])
                total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        line = {
            "iteration": iteration,
            "decisions": len(batch),
            "masked_actions": masked,
            "seconds": time.perf_counter() - start,
        }
        if eval_every and iteration % eval_every == 0:
            summary = head_to_head(
                variant,
                greedy_agent(actor),
                make_agent("random", seed),
                games=eval_games,
                seed=10_000,
                **options,
            )
            line["win_rate_vs_random"] = summary.win_rate
        log.append(line)
        print("  ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in line.items()))
    return log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="all_fives", choices=sorted(VARIANTS))
    parser.add_argument("--iterations", type=positive_int, default=30)
    parser.add_argument("--steps", type=positive_int, default=1000, help="env steps per iteration")
    parser.add_argument("--eval-every", type=positive_int, default=10)
    parser.add_argument("--seed", type=non_negative_int, default=0)
    args = parser.parse_args()
    train(args.variant, args.iterations, args.steps, eval_every=args.eval_every, seed=args.seed)


if __name__ == "__main__":
    main()
