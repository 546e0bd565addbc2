"""RLlib's PPO (current API stack) on a domino variant: one masked policy shared by every seat.

    pip install "domino-env[ray]"
    python examples/rllib_ppo.py --variant all_fives --iterations 20
    python examples/rllib_ppo.py --variant classic --option num_players=4 --option teams=true --runners 2

Each iteration prints the env steps sampled, the mean episode length and how many sampled
actions were illegal (always 0: the module masks them); every ``--eval-every`` iterations,
the shared policy's win rate against ``random`` (in self-play its mean return is 0).
``--address auto`` joins an existing Ray cluster (``ray start --head`` on one machine,
``ray start --address=<head>:6379`` on the others; see the README).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import ray
import yaml

from domino_env import VARIANTS, raw_env
from domino_env.agents import make_agent
from domino_env.integrations.rllib import SHARED, module_agent, ppo_config
from training.eval.arena import head_to_head, non_negative_int, positive_int


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="all_fives", choices=sorted(VARIANTS))
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="env option, repeatable"
    )
    parser.add_argument("--iterations", type=positive_int, default=20)
    parser.add_argument("--batch", type=positive_int, default=4000, help="env steps per iteration")
    parser.add_argument(
        "--runners", type=non_negative_int, default=1, help="remote env runners (0: sample in the driver)"
    )
    parser.add_argument("--hidden", type=positive_int, nargs="+", default=[256, 256])
    parser.add_argument(
        "--eval-every", type=positive_int, default=5, help="iterations between win-rate checks"
    )
    parser.add_argument("--eval-games", type=positive_int, default=100)
    parser.add_argument("--address", help="an existing Ray cluster (auto or host:port); default: a local one")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    args = parser.parse_args()

    options: dict[str, Any] = {"num_players": 2, "episode": "round"}  # a round: short episodes
    for text in args.option:
        key, _, value = text.partition("=")
        options[key] = yaml.safe_load(value)
    try:
        raw_env(args.variant, **options)  # a bad option fails here, before Ray starts
    except ValueError as err:
        parser.error(str(err))

    ray.init(address=args.address, include_dashboard=False)
    config = (
        ppo_config(args.variant, options, hidden=args.hidden, num_env_runners=args.runners)
        .training(
            train_batch_size_per_learner=args.batch,
            minibatch_size=max(64, args.batch // 8),
            num_epochs=4,
            lr=3e-4,
            entropy_coeff=0.01,
        )
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    try:
        for iteration in range(1, args.iterations + 1):
            start = time.perf_counter()
            runners = algo.train()["env_runners"]
            line = (
                f"iter {iteration:3d}  {runners.get('num_env_steps_sampled', 0):>6,} env steps"
                f" in {time.perf_counter() - start:5.1f}s"
                f"  episode length {runners.get('episode_len_mean', float('nan')):5.1f}"
                f"  illegal actions sampled {int(runners.get('masked_actions_sampled', 0))}"
                f" of {int(runners.get('actions_checked', 0)):,}"
            )
            if args.eval_every and iteration % args.eval_every == 0:
                agent = module_agent(algo.get_module(SHARED))
                summary = head_to_head(
                    args.variant,
                    agent,
                    make_agent("random", args.seed),
                    games=args.eval_games,
                    seed=10_000,
                    **options,
                )
                line += f"  win rate vs random {summary.win_rate:.0%}"
            print(line, flush=True)
    finally:
        algo.stop()
        ray.shutdown()


if __name__ == "__main__":
    main()
