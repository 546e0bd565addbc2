"""Seeded games between agents, with seats rotated, and a summary a person can read.

    python -m training.arena --games 50 --seed 0

plays ``greedy`` against ``random`` in every variant (2 players, and 4 as partners where
the variant allows it) and prints win rates with 95% Wilson intervals.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from typing import Any

from domino_env.agents import AGENTS, Agent, make_agent
from domino_env.envs.base import DominoEnv
from domino_env.registry import VARIANTS, raw_env
from domino_env.rules.chain import ChainRules


@dataclass
class Summary:
    games: int
    wins: float  # a shared first place counts as a fraction
    mean_reward: float
    mean_rounds: float
    steps: int

    @property
    def win_rate(self) -> float:
        return self.wins / self.games

    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games)


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def seats_of_first(num_players: int, teams: bool, game_index: int) -> list[int]:
    """Seats played by the first agent in game ``game_index`` (rotating through the table)."""
    if teams:
        return [game_index % 2, game_index % 2 + 2]
    return [game_index % num_players]


def play_game(env: Any, agents: list[Agent], seed: int) -> tuple[int, int]:
    """Play one episode; returns (rounds played, decisions)."""
    env.reset(seed=seed)
    raw = env.unwrapped
    steps = 0
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(agents[raw.possible_agents.index(agent)](raw, env.observe(agent)))
        steps += 1
    return raw.game.round_index + 1, steps


def seat_outcomes(env: DominoEnv) -> list[float]:
    """Each seat's outcome reward for the finished episode (+1 first ... -1 last, as the env's
    ``reward="outcome"`` gives it), whatever reward the env was built with."""
    rules, game = env.rules, env.game
    by_side = rules.outcome(rules.round_keys(game) if env.episode == "round" else rules.match_keys(game))
    return [by_side[rules.side_of[seat]] for seat in range(rules.num_players)]


def win_share(rules: ChainRules, outcomes: list[float], mine: list[int]) -> float:
    """1 for first place, 1/k for first place shared with k-1 other sides, else 0."""
    best = max(outcomes)
    if outcomes[mine[0]] != best:
        return 0.0
    tied = {rules.side_of[s] for s, r in enumerate(outcomes) if r == best and s not in mine}
    return 1.0 / (1 + len(tied))


def head_to_head(
    variant: str, first: Agent, second: Agent, games: int, seed: int = 0, **options: Any
) -> Summary:
    """``first`` against ``second`` over ``games`` seeded episodes, seats rotated; wins and
    rewards are outcomes (rank at the end), whatever reward the env is built with."""
    env = raw_env(variant, **options)
    n, teams = env.rules.num_players, env.rules.teams
    wins = reward_sum = rounds = steps = 0.0
    for g in range(games):
        mine = seats_of_first(n, teams, g)
        played, decisions = play_game(env, [first if seat in mine else second for seat in range(n)], seed + g)
        outcomes = seat_outcomes(env)
        wins += win_share(env.rules, outcomes, mine)
        reward_sum += outcomes[mine[0]]
        rounds += played
        steps += decisions
    return Summary(games, wins, reward_sum / games, rounds / games, int(steps))


def positive_int(text: str) -> int:
    """An argparse type whose error reads "must be a positive integer" (not a function's name)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training.arena",
        description="Seeded games between the baseline agents in every variant. Only baselines are "
        "accepted here; for checkpoints use python -m training evaluate.",
    )
    parser.add_argument("--games", type=positive_int, default=50, help="episodes per match-up (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="game g is dealt from seed + g (default 0)")
    parser.add_argument(
        "--variants",
        nargs="+",
        default=list(VARIANTS),
        choices=list(VARIANTS),
        metavar="VARIANT",
        help=f"variants to play, one or more of {', '.join(VARIANTS)} (default all)",
    )
    baselines = list(AGENTS)
    parser.add_argument(
        "--first", default="greedy", choices=baselines, help="baseline measured (default greedy)"
    )
    parser.add_argument(
        "--second", default="random", choices=baselines, help="its opponents' baseline (default random)"
    )
    args = parser.parse_args(argv)
    print(
        f"{args.first} vs {args.second}: {args.games} whole matches per line, seats rotated, seed {args.seed}"
    )
    print(
        f"{'variant':<11} {'table':<16} {'win rate':>8} {'95% CI':>15} "
        f"{'reward':>7} {'rounds':>6} {'secs':>5}"
    )
    for name in args.variants:
        rules_cls = VARIANTS[name]
        tables: list[dict[str, Any]] = [{"num_players": rules_cls.player_counts[0]}]
        if rules_cls.teams_allowed and 4 in rules_cls.player_counts:
            tables.append({"num_players": 4, "teams": True})
        for options in tables:
            start = time.perf_counter()
            summary = head_to_head(
                name,
                make_agent(args.first, args.seed),
                make_agent(args.second, args.seed + 1),
                args.games,
                args.seed,
                **options,
            )
            low, high = summary.interval()
            table = "4, partners" if options.get("teams") else f"{options['num_players']} players"
            print(
                f"{name:<11} {table:<16} {summary.win_rate:>8.1%} {f'[{low:.1%}, {high:.1%}]':>15} "
                f"{summary.mean_reward:>+7.2f} {summary.mean_rounds:>6.1f} "
                f"{time.perf_counter() - start:>5.1f}"
            )


if __name__ == "__main__":
    main()
