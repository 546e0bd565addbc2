"""``evaluate``: agents against each other, seats rotated or on duplicate deals: win rate with
its 95% interval, reward and final score per pairing."""

from __future__ import annotations

import argparse
import sys

from training.cli.arguments import non_negative_int, positive_int, table_arguments, threads_argument


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "evaluate",
        help="agents against each other, seats rotated: win rate with 95%% CI, reward, final score",
        description="Every pair of the agents plays --games seeded games with the seats rotated "
        "(both orders at 3-4 single seats, where one agent sits against copies of the other). "
        "Agents: random, greedy, search, search:N (N worlds per legal action), advanced, expert "
        "(the stronger search tiers), a checkpoint file or a run folder (its latest.pt).",
    )
    parser.add_argument(
        "agent", help="random, greedy, search[:N], advanced, expert, a checkpoint file or a run folder"
    )
    parser.add_argument("opponents", nargs="+", metavar="AGENT", help="more agents, the same kinds")
    table_arguments(parser)
    parser.add_argument("--games", type=positive_int, default=100, help="games per pairing (default 100)")
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="game g is dealt from seed + g (default 0)"
    )
    parser.add_argument("--first-only", action="store_true", help="only the first agent against each other")
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="play every deal once per seating (2 players: twice, seats swapped), so the deal's luck "
        "cancels; --games is rounded up to whole deals, intervals are taken over deals",
    )
    parser.add_argument("--csv", help="also write the table to this CSV file")
    parser.add_argument(
        "--record", metavar="DIR", help="also write every game to DIR as a game record (a JSON file per game)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    threads_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from training.eval import evaluate, report

    plan = evaluate.prepare([args.agent, *args.opponents], args.variant, args.option, args.config)
    csv_path = report.writable_file(args.csv) if args.csv else None  # before any game
    record = report.writable_folder(args.record) if args.record else None
    played = evaluate.evaluate_pairings(
        plan,
        args.games,
        seed=args.seed,
        first_only=args.first_only,
        progress=not args.no_progress,
        duplicate=args.duplicate,
        record=record,
    )
    print(plan.header(plan.games(args.games, args.duplicate), args.seed, args.duplicate))
    results: list[evaluate.Result] = []
    try:
        for result in played:
            results.append(result)
    except KeyboardInterrupt:  # say so, and keep what finished
        total = len(plan.pairs(args.first_only))
        print(f"interrupted: {len(results)} of {total} pairings finished", file=sys.stderr)
        if results:
            print(evaluate.format_results(results, plan.score_label))
        raise
    print(evaluate.format_results(results, plan.score_label))
    if args.duplicate:
        print(evaluate.duplicate_gain(results))
    if csv_path is not None:
        report.write_rows(csv_path, evaluate.RESULT_COLUMNS, [r.row() for r in results])
        print(f"written: {csv_path}")
    if record is not None:
        print(f"game records: {record} (a JSON file per game)")
    return 0
