"""sb3-contrib's MaskablePPO on one seat of a domino variant, the other seats played by fixed agents.

    pip install "domino-env[dev]"   # or: pip install domino-env sb3-contrib
    python examples/sb3_maskable_ppo.py --variant all_fives --opponents greedy --steps 100000

``SingleAgentEnv`` is a real ``gymnasium.Env`` with an ``action_masks()`` method, which is all
MaskablePPO needs (it finds the method itself, also through sb3-contrib's ``ActionMasker``).
Opponents are baseline names (``random``, ``greedy``), callables ``agent(env, observation)``
or checkpoint paths of our own trainer. The script trains, then plays ``--games`` seeded
episodes with the greedy policy and prints its mean reward and win rate.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from sb3_contrib import MaskablePPO

from domino_env import VARIANTS
from domino_env.wrappers import SingleAgentEnv


def smallest_table(variant: str) -> int:
    """The fewest players the variant allows (2, or Cross's 4)."""
    return VARIANTS[variant].player_counts[0]


def train(
    variant: str = "all_fives",
    opponents: str = "random",
    steps: int = 50_000,
    seed: int = 0,
    **options: Any,
) -> MaskablePPO:
    options = {"num_players": smallest_table(variant), "episode": "round", **options}
    env = SingleAgentEnv(variant, opponents=opponents, **options)
    model = MaskablePPO("MlpPolicy", env, n_steps=1024, batch_size=256, seed=seed, device="cpu", verbose=0)
    return model.learn(total_timesteps=steps)


def play(model: MaskablePPO, env: SingleAgentEnv, games: int, seed: int = 10_000) -> tuple[float, float]:
    """Mean episode reward and share of episodes won (positive reward) of the greedy policy."""
    totals = []
    for game in range(games):
        obs, _ = env.reset(seed=seed + game)
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            assert mask[int(action)], "MaskablePPO chose a masked action"
            obs, reward, done, _, _ = env.step(action)
            total += float(reward)
        totals.append(total)
    return float(np.mean(totals)), float(np.mean(np.array(totals) > 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="all_fives", choices=sorted(VARIANTS))
    parser.add_argument("--opponents", default="random", help="random, greedy or a checkpoint path")
    parser.add_argument("--steps", type=int, default=50_000, help="the learner's decisions")
    parser.add_argument("--games", type=int, default=200, help="evaluation episodes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for flag, value, least in (
        ("--steps", args.steps, 1),
        ("--games", args.games, 1),
        ("--seed", args.seed, 0),
    ):
        if value < least:  # (this example needs nothing of the trainer's extra, so no types from it)
            parser.error(f"argument {flag}: must be an integer of at least {least}, got {value}")
    model = train(args.variant, args.opponents, args.steps, args.seed)
    table = {"num_players": smallest_table(args.variant), "episode": "round"}
    env = SingleAgentEnv(args.variant, opponents=args.opponents, **table)
    reward, wins = play(model, env, args.games)
    print(f"{args.steps:,} steps against {args.opponents}: mean reward {reward:+.2f}, won {wins:.0%}")


if __name__ == "__main__":
    main()
