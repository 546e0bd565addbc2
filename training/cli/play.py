"""``play``: a person plays in the terminal against an agent, the game optionally written as a
game record."""

from __future__ import annotations

import argparse
import time

import domino_env
from training.cli.arguments import non_negative_int, table_arguments, threads_argument


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("play", help="play in the terminal against an agent")
    table_arguments(parser)
    parser.add_argument(
        "--opponent",
        default="greedy",
        help="greedy, random, search[:N], advanced, expert, checkpoint or run folder",
    )
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1 (default 0)")
    parser.add_argument("--seed", type=non_negative_int, help="deal seed (default: a new deal each time)")
    parser.add_argument(
        "--record",
        metavar="DIR",
        help="write the game to DIR as a game record (a JSON file), finished or not",
    )
    threads_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from training.apps.play import PERSON, check_seat, play
    from training.eval import evaluate, report
    from training.matches import RecordFolder

    plan = evaluate.prepare([args.opponent], args.variant, args.option, args.config)
    env = plan.env()
    opponent = plan.contestants[0]
    agent = opponent.agent(env, 0 if args.seed is None else args.seed + 1)
    check_seat(env, args.seat)
    folder = report.writable_folder(args.record) if args.record else None
    records = recorder = None
    if folder is not None:
        records = RecordFolder(folder, plan.variant, plan.options, (PERSON, opponent.label))
        recorder = records.recorder(env, [args.seat])
    print(f"{report.table_text(plan.variant, plan.options)}: you are P{args.seat}, against {opponent.label}")
    try:
        play(env, args.seat, opponent=agent, opponent_label=opponent.label, seed=args.seed, recorder=recorder)
    except EOFError:  # the input closed (Ctrl-D), as Ctrl-C
        return 130
    if records is not None and recorder is not None:  # a game left unfinished too (its result is null)
        deal = time.strftime("%Y%m%d-%H%M%S") if args.seed is None else f"seed{args.seed}"
        path = domino_env.write_record(recorder.record(), records.path(f"seat{args.seat}-{deal}"))
        print(f"game record: {path}")
    return 0
