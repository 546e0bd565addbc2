"""Environment speed: random play through the full AEC loop, observations and masks every step.

    python benchmarks/env_speed.py [--seconds 3] [--repeats 5] [--variants classic all_fives]

For each variant (and each configuration in ``CONFIGS``) it reports decision steps per
second, games per second (a game is one round; 3D dominoes is one game), microseconds per
decision and, as ``vs classic``, that time over the time of ``classic`` (default rules) at the same table:
the same number of players, partners or not. Every configuration runs in ``--repeats``
chunks, all of them interleaved, and the best chunk counts, so a busy machine disturbs
them less and alike. If
``open_spiel`` is installed it also plays OpenSpiel's ``python_block_dominoes`` the same way
(observation tensor at each decision), in chunks interleaved with our ``classic`` block game
with 2 players, and prints the ratio of the two. Both sides pick each action (and OpenSpiel
each chance outcome) uniformly as ``int(random() * n)``, cheaper than ``randrange(n)``.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import domino_env
from training.cli import OneLineParser, run_script
from training.eval.arena import positive_int

# Tables beyond each variant's standard ones (``spec.benchmark_tables``): classic at every
# table (the reference of "vs classic"), and options whose speed differs.
EXTRA_CONFIGS: dict[str, list[dict[str, Any]]] = {
    "classic": [{"num_players": 2, "draw": False}, {"num_players": 3}, {"num_players": 4}],
    "blind_blitz": [{"num_players": 2, "arrange": "dealt"}],
    # the grid game at board 32, to show how decision time grows with the board
    "domino3d": [{"num_players": 2, "board_size": 32}],
}
CONFIGS: dict[str, list[dict[str, Any]]] = {
    name: [dict(table) for table in spec.benchmark_tables] + EXTRA_CONFIGS.get(name, [])
    for name, spec in domino_env.SPECS.items()
}


def positive_float(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}")
    return value


class OursRunner:
    """Random play on one of our environments, resumable in chunks."""

    def __init__(self, name: str, options: dict[str, Any], seed: int = 0) -> None:
        self.env = domino_env.make(name, **{"episode": "round", **options})  # (options may say "match")
        self.env.reset(seed=seed)  # seeded once; later resets continue the same random stream
        self.rng = random.Random(seed)

    def run(self, seconds: float) -> tuple[int, int, float]:
        """Play whole games for about ``seconds``; returns (decisions, games, elapsed)."""
        env, rng = self.env, self.rng
        steps = games = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            env.reset()
            while True:
                obs, _reward, terminated, truncated, _info = env.last()
                if terminated or truncated:
                    break
                legal = obs["action_mask"].view(bool).nonzero()[0]  # (int8 nonzero: 15x slower at 25k)
                env.step(int(legal[int(rng.random() * len(legal))]))
                steps += 1
            games += 1
        return steps, games, time.perf_counter() - start


class OpenSpielRunner:
    """The same loop on OpenSpiel's python_block_dominoes."""

    def __init__(self, seed: int = 0) -> None:
        import pyspiel
        from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the game)

        self.game = pyspiel.load_game("python_block_dominoes")
        self.rng = random.Random(seed)

    def run(self, seconds: float) -> tuple[int, int, float]:
        rng = self.rng
        steps = games = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            state = self.game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
                    continue
                state.observation_tensor(state.current_player())
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.random() * len(legal))])
                steps += 1
            games += 1
        return steps, games, time.perf_counter() - start


def best_rates(runners: list[Any], seconds: float, repeats: int) -> list[tuple[float, float]]:
    """Best (steps/s, games/s) of each runner over ``repeats`` interleaved chunks."""
    best = [(0.0, 0.0)] * len(runners)
    for _ in range(repeats):
        for i, runner in enumerate(runners):
            steps, games, elapsed = runner.run(seconds / repeats)
            if steps / elapsed > best[i][0]:
                best[i] = (steps / elapsed, games / elapsed)
    return best


def row(name: str, text: str, rates: tuple[float, float], ratio: str = "") -> str:
    steps, games = rates
    return f"{name:<12} {text:<34} {steps:>10,.0f} {games:>9,.0f} {1e6 / steps:>8.1f} {ratio:>11}"


def reference(options: dict[str, Any]) -> dict[str, Any]:
    """The classic configuration at the same table: as many players, partners or not."""
    table: dict[str, Any] = {"num_players": options.get("num_players", 2)}
    if options.get("teams"):
        table["teams"] = True
    return table


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=positive_float, default=3.0, help="time per configuration")
    parser.add_argument(
        "--repeats", type=positive_int, default=5, help="chunks per configuration; the best counts"
    )
    parser.add_argument("--variants", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    args = parser.parse_args()
    configs = [(name, options) for name in args.variants for options in CONFIGS[name]]
    for _, options in list(configs):  # every reference runs (and is listed) too
        if ("classic", reference(options)) not in configs:
            configs.append(("classic", reference(options)))
    rates = best_rates([OursRunner(name, options) for name, options in configs], args.seconds, args.repeats)
    print(f"{'variant':<12} {'options':<34} {'steps/s':>10} {'games/s':>9} {'us/step':>8} {'vs classic':>11}")
    for (name, options), rate in zip(configs, rates, strict=True):
        ratio = rates[configs.index(("classic", reference(options)))][0] / rate[0]
        print(row(name, ", ".join(f"{k}={v}" for k, v in options.items()), rate, f"{ratio:.2f}x"))
    try:
        spiel = OpenSpielRunner()
    except ImportError:
        print("open_spiel is not installed: skipping the OpenSpiel comparison (pip install open_spiel)")
        return
    ours = OursRunner("classic", {"num_players": 2, "draw": False})
    mine, theirs = best_rates([ours, spiel], 2 * args.seconds, 2 * args.repeats)
    print("interleaved comparison:")
    print(row("classic", "num_players=2, draw=False", mine))
    print(row("open_spiel", "python_block_dominoes", theirs))
    print(f"classic (draw=False, 2 players) vs OpenSpiel python_block_dominoes: {mine[0] / theirs[0]:.1f}x")


if __name__ == "__main__":
    run_script(main)
