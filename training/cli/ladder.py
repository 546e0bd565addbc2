"""``ladder``: rate reference agents on one Bradley-Terry scale in Elo points, or rate a new agent
against a ladder's fixed rungs (``--rate AGENT --against DIR/ladder.json``)."""

from __future__ import annotations

import argparse

from training.cli.arguments import (
    interrupted_says,
    non_negative_int,
    positive_int,
    table_arguments,
    threads_argument,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "ladder",
        help="rate reference agents on one scale (Bradley-Terry, Elo points, bootstrap intervals) "
        "-> ladder.json, ladder.csv, ladder.png; or rate a new agent against a ladder's fixed rungs",
        description="Every pair of the rungs plays --games whole matches on duplicate deals (at "
        "3-4 single seats once in each order: one alone against copies of the other); a "
        "Bradley-Terry model (at 3-4 single seats, Luce's choice of the first place: one agent alone "
        "against copies of another) is fitted over all pairings by maximum likelihood (scipy; a shared "
        "first place counted as its share, one virtual game per pairing won in the even share), in Elo "
        "points with the first rung at 0, with 95%% "
        "bootstrap intervals over deals. --rate AGENT --against DIR/ladder.json plays AGENT against "
        "every rung of that ladder and fits its rating alone, the rungs' ratings fixed.",
    )
    parser.add_argument(
        "agents",
        nargs="*",
        metavar="AGENT",
        help="the rungs, in order (the first is 0): random, greedy, search[:N], advanced, expert, "
        "checkpoints, run folders",
    )
    table_arguments(parser)
    parser.add_argument(
        "--games",
        type=positive_int,
        help="games per pairing, rounded up to whole deals (default 200; with --rate: the ladder's)",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        help="deal d is dealt from seed + d (default 0; with --rate: the ladder's)",
    )
    parser.add_argument(
        "--out", help="output folder (default runs/ladder-<variant>; with --rate: the ladder's)"
    )
    parser.add_argument(
        "--workers", type=positive_int, help="processes playing pairings at once (default: one per core)"
    )
    parser.add_argument(
        "--rate", metavar="AGENT", help="rate this agent against the fixed rungs of --against"
    )
    parser.add_argument("--against", metavar="LADDER_JSON", help="the ladder.json that --rate plays")
    parser.add_argument(
        "--reference",
        metavar="PAIRINGS_JSON",
        help="a benchmark's pairings.json (training/eval/benchmark_reference_v2.json: the ladder under the "
        "protocol): its pairings of the same games (the variant's standard table, --seed 1000000, "
        "the same --games) are read, not played",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the ladder (or rating) already there (refused without)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    threads_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from training.eval import ladder

    if args.rate is None and args.against is not None:
        raise ValueError("--against goes with --rate AGENT: the ladder file to rate it against")
    if args.rate is not None:
        return rate_on_ladder(args)
    plan = ladder.prepare_ladder(
        args.agents,
        args.variant,
        option_texts=args.option,
        config_path=args.config,
        games=args.games,
        seed=args.seed,
        out=args.out,
        workers=args.workers,
        overwrite=args.overwrite,
        reference=args.reference,
    )
    print(plan.header())
    with interrupted_says("the ladder needs every pairing, nothing written"):
        played = ladder.play_ladder(plan, progress=not args.no_progress)
    print("\n".join(ladder.report_lines(played)))
    print(f"method: {ladder.METHOD}")
    paths = ladder.write_ladder(played, plan.folder)
    print(f"written: {', '.join(str(p) for p in paths)}")
    return 0


def rate_on_ladder(args: argparse.Namespace) -> int:
    """``--rate AGENT --against DIR/ladder.json``: the agent against the ladder's fixed rungs."""
    from training.eval import ladder

    if args.against is None:
        raise ValueError("--rate needs --against DIR/ladder.json: the ladder to rate the agent on")
    if args.agents:
        raise ValueError(
            f"--rate rates one agent against a ladder's rungs: leave out {' '.join(args.agents)}"
        )
    if args.variant or args.option or args.config or args.seed is not None or args.reference:
        raise ValueError(
            "--rate plays on the ladder's own table and deals, against the rungs' fixed ratings: "
            "leave out --variant, --option, --config, --seed and --reference"
        )
    plan = ladder.prepare_rating(
        args.rate,
        args.against,
        games=args.games,
        out=args.out,
        workers=args.workers,
        overwrite=args.overwrite,
    )
    print(plan.header())
    with interrupted_says("the rating needs every rung, nothing written"):
        rated = ladder.play_rating(plan, progress=not args.no_progress)
    print("\n".join(ladder.rating_lines(plan, rated)))
    print(f"written: {ladder.write_rating(plan, rated)}")
    return 0
