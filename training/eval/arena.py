"""Built-in agents against each other in every variant, and the head-to-head of two agents.

    python -m training.eval.arena --games 50 --seed 0
    python -m training.eval.arena --first search:16 --second greedy --variants classic

plays ``--first`` (default ``greedy``) against ``--second`` (default ``random``) in every
variant (2 players, and 4 as partners where the variant allows it) and prints win rates with
95% Wilson intervals. Any built-in agent plays: the baselines, ``search``, ``search:N``,
``advanced`` and ``expert``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from domino_env import VARIANTS, raw_env
from domino_env.agents import AGENTS, SEARCH_NAMES, Agent, is_builtin, make_agent
from training.matches import Match, play_match


def head_to_head(
    variant: str, first: Agent, second: Agent, *, games: int, seed: int = 0, **options: Any
) -> Match:
    """``first`` against ``second`` over ``games`` seeded episodes on a new ``variant`` table,
    seats rotated (see :func:`training.matches.play_match`)."""
    return play_match(raw_env(variant, **options), first, second, games=games, seed=seed)


def positive_int(text: str) -> int:
    """An argparse type whose error reads "must be a positive integer" (not a function's name)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type whose error reads "must be a non-negative integer" (a seed: 0 and up)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def builtin_agent(text: str) -> str:
    """An argparse type: a built-in agent's name (a baseline, ``search``, ``search:N``, a tier)."""
    try:
        known = is_builtin(text)
    except ValueError as err:  # a malformed search:N says what is allowed
        raise argparse.ArgumentTypeError(str(err)) from err
    if not known:
        known_names = f"{', '.join(AGENTS)}, {SEARCH_NAMES}"
        raise argparse.ArgumentTypeError(f"{text!r} is no built-in agent: {known_names}")
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training.eval.arena",
        description="Seeded games between built-in agents (baselines, search, search:N, advanced, "
        "expert) in every variant; for checkpoints use python -m training evaluate.",
    )
    parser.add_argument("--games", type=positive_int, default=50, help="episodes per match-up (default 50)")
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="game g is dealt from seed + g (default 0)"
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        default=list(VARIANTS),
        choices=list(VARIANTS),
        metavar="VARIANT",
        help=f"variants to play, one or more of {', '.join(VARIANTS)} (default all)",
    )
    parser.add_argument(
        "--first", default="greedy", type=builtin_agent, help="agent measured (default greedy)"
    )
    parser.add_argument(
        "--second", default="random", type=builtin_agent, help="its opponents' agent (default random)"
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
                games=args.games,
                seed=args.seed,
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
