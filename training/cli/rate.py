"""``rate``: OpenSkill ratings of a run's checkpoints and the baselines -> ratings.csv and
ratings.png in the run folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from training.cli.arguments import interrupted_says, non_negative_int, positive_int, threads_argument


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "rate",
        help="OpenSkill ratings of a run's checkpoints and the baselines -> ratings.csv, ratings.png",
    )
    parser.add_argument("run_dir", help="a training run folder (<out_dir>/<name>)")
    parser.add_argument(
        "--games", type=positive_int, default=20, help="games per pair of agents (default 20)"
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="game g is dealt from seed + g (default 0)"
    )
    parser.add_argument(
        "--most", type=positive_int, default=8, help="checkpoints sampled over the run (default 8)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    threads_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from training.eval import ratings

    given = Path(args.run_dir)
    if given.is_file():  # (a folder's own checks are rating_plan's)
        hint = f"; to measure one checkpoint: python -m training evaluate {given} random greedy"
        raise ValueError(
            f"rate takes a training run folder (<out_dir>/<name>, holding checkpoints/), and {given} "
            f"is a file{hint if given.suffix == '.pt' else ''}"
        )
    plan = ratings.rating_plan(args.run_dir, args.most)  # checks the run before any game
    # Ratings need every pairing, so there is nothing partial to show.
    with interrupted_says("the rating needs every pairing, nothing written"):
        rated = ratings.rate(plan, args.games, args.seed, progress=not args.no_progress)
    ratings.report_ratings(args.run_dir, plan, ratings=rated, games=args.games, seed=args.seed)
    return 0
