"""``ship``: train a config and export the policy to ``agents/<variant>.pt`` with its measured
win rates (``agents/results.csv``), or only measure the agent already shipped. Nothing in the
agents folder changes unless every measurement succeeds. A config trains in a run folder of its
own (``ship-<run name>``, or ``run.name``): one that holds a run ship did not make is refused
without ``--overwrite``."""

from __future__ import annotations

import argparse
from pathlib import Path

from training.cli.arguments import non_negative_int, positive_int


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "ship",
        help="train a config and export it to agents/<variant>.pt with its win rates (agents/results.csv)",
    )
    parser.add_argument("config", nargs="?", help="a YAML file in configs/ (none with --from)")
    parser.add_argument("overrides", nargs="*", help="dotted overrides, e.g. run.total_steps=2000000")
    parser.add_argument(
        "--from",
        dest="source",
        metavar="RUN",
        help="ship this trained run (a checkpoint, or a run folder's latest) instead of training a config",
    )
    parser.add_argument("--agents-dir", default="agents", help="where shipped agents live (default agents)")
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=["random", "greedy"],
        metavar="AGENT",
        help="agents it is measured against, e.g. random greedy search (default random greedy)",
    )
    parser.add_argument(
        "--games", type=positive_int, default=2000, help="matches against each baseline (default 2000)"
    )
    parser.add_argument(
        "--search-games",
        type=positive_int,
        default=1000,
        help="matches against each search opponent (default 1000)",
    )
    parser.add_argument(
        "--measure-only",
        action="store_true",
        help="no training: measure the agent already shipped against --opponents (its other columns stay)",
    )
    parser.add_argument(
        "--guided",
        action="store_true",
        help="measure the policy-guided search search:agents/<variant>.pt instead (a row of its own)",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="deal seed of the evaluation games (default 0; training uses run.seed)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="delete an earlier run in the run folder that ship did not make (a train run's) and start over "
        "(ship starts its own run over anyway)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bars (the final table is still printed)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from training.eval.ship import ship
    from training.model.config import ConfigError

    if (args.config is None) == (args.source is None):
        raise ConfigError("ship takes a config to train, or --from RUN to ship a trained run: one of the two")
    ship(
        args.config,
        args.overrides,
        source=args.source,
        agents_dir=args.agents_dir,
        games=args.games,
        seed=args.seed,
        progress=not args.no_progress,
        opponents=args.opponents,
        search_games=args.search_games,
        measure_only=args.measure_only,
        guided=args.guided,
        overwrite=args.overwrite,
    )
    print(f"written: {Path(args.agents_dir) / 'results.csv'} and {Path(args.agents_dir) / 'README.md'}")
    return 0
