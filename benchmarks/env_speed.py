"""Environment speed: random play through the full AEC loop, observations and masks every step.

    python benchmarks/env_speed.py [--seconds 3] [--variants classic all_fives]

For each variant (and each configuration listed below) it reports decision steps per
second and games per second. If ``open_spiel`` is installed it also plays OpenSpiel's
``python_block_dominoes`` the same way (observation tensor at each decision) and prints
the ratio against our ``classic`` block game with 2 players.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import domino_env

CONFIGS: dict[str, list[dict[str, Any]]] = {
    "classic": [
        {"num_players": 2, "draw": False},
        {"num_players": 2},
        {"num_players": 4, "teams": True},
    ],
    "all_fives": [{"num_players": 2}, {"num_players": 4, "teams": True}],
}


def bench_ours(name: str, options: dict[str, Any], seconds: float, seed: int = 0) -> tuple[float, float]:
    """(decision steps/s, games/s) for random play, one game = one round."""
    env = domino_env.make(name, episode="round", **options)
    rng = random.Random(seed)
    steps = games = 0
    env.reset(seed=seed)  # seeded once; later resets continue the same random stream
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset()
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[rng.randrange(len(legal))]))
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def bench_open_spiel(seconds: float, seed: int = 0) -> tuple[float, float] | None:
    """The same loop on OpenSpiel's python_block_dominoes, or None when it is not installed."""
    try:
        import pyspiel
        from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the game)
    except ImportError:
        return None
    game = pyspiel.load_game("python_block_dominoes")
    rng = random.Random(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per configuration")
    parser.add_argument("--variants", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    args = parser.parse_args()
    print(f"{'variant':<12} {'options':<34} {'steps/s':>10} {'games/s':>9} {'us/step':>8}")
    baseline = None
    for name in args.variants:
        for options in CONFIGS[name]:
            steps, games = bench_ours(name, options, args.seconds)
            text = ", ".join(f"{k}={v}" for k, v in options.items())
            print(f"{name:<12} {text:<34} {steps:>10,.0f} {games:>9,.0f} {1e6 / steps:>8.1f}")
            if name == "classic" and options == {"num_players": 2, "draw": False}:
                baseline = steps
    spiel = bench_open_spiel(args.seconds)
    if spiel is None:
        print("open_spiel is not installed: skipping the OpenSpiel comparison (pip install open_spiel)")
        return
    print(
        f"{'open_spiel':<12} {'python_block_dominoes':<34} "
        f"{spiel[0]:>10,.0f} {spiel[1]:>9,.0f} {1e6 / spiel[0]:>8.1f}"
    )
    if baseline is not None:
        print(
            f"classic (draw=False, 2 players) vs OpenSpiel python_block_dominoes: {baseline / spiel[0]:.1f}x"
        )


if __name__ == "__main__":
    main()
