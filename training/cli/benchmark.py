"""``benchmark``: agents against the ladder on every variant under the protocol, their scores'
interquartile mean with bootstrap intervals -> benchmark.csv, summary.json, benchmark.png."""

from __future__ import annotations

import argparse
from pathlib import Path

from training.cli.arguments import interrupted_says, positive_int, threads_argument


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "benchmark",
        help="agents against the ladder (random, greedy, search, advanced, expert, the shipped agent) "
        "on every variant, protocol v2 -> benchmark.csv, summary.json, benchmark.png",
        description="Each agent plays the ladder on each variant's standard table, whole matches, "
        "duplicate deals from the protocol's fixed deal seeds. Scores, from the win rate against "
        "expert: 0 plays like random, 1 holds its own against expert; summary.json holds their "
        "interquartile mean with a bootstrap interval over the deals (a --group's: over its runs, "
        "and over its runs and the deals). Fewer than 200 games a pairing "
        "or only some variants is an exploratory run, labelled so.",
    )
    parser.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help="baselines, search[:N], advanced, expert, checkpoints, run folders, shipped",
    )
    parser.add_argument("--variants", nargs="+", help="variants to play (default all)")
    parser.add_argument(
        "--games", type=positive_int, default=200, help="games per pairing (default 200, the protocol's)"
    )
    parser.add_argument("--out", default="runs/benchmark", help="output folder (default runs/benchmark)")
    parser.add_argument(
        "--group", help="the agents are runs (seeds) of one algorithm: aggregate them as NAME"
    )
    parser.add_argument(
        "--agents-dir", default="agents", help="where the shipped agents are (default agents)"
    )
    parser.add_argument(
        "--workers", type=positive_int, help="processes playing pairings at once (default: one per core)"
    )
    reading = parser.add_mutually_exclusive_group()  # (--fresh reads no reference: one or the other)
    reading.add_argument(
        "--reference",
        help="a pairings.json whose pairings are read instead of played again (default: the shipped "
        "training/eval/benchmark_reference_v2.json, this version's ladder under the protocol)",
    )
    reading.add_argument(
        "--fresh", action="store_true", help="play every pairing, reading none (so no --reference)"
    )
    parser.add_argument(
        "--record",
        metavar="DIR",
        help="also write every game played to DIR as a game record, a JSON file per game (pairings "
        "read from the reference are not played: add --fresh to record them)",
    )
    start = parser.add_mutually_exclusive_group()  # (as train's: one or the other)
    start.add_argument(
        "--overwrite", action="store_true", help="replace the benchmark already in --out (refused without)"
    )
    start.add_argument(
        "--resume",
        action="store_true",
        help="go on with an interrupted run in --out: the pairings it finished (pairings.partial.json, "
        "written as each pairing ends) are read, the rest played, its files replaced",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    threads_argument(parser)
    return parser


# Below this many runs a group's bootstrap over them rarely leaves its extremes out: its interval
# is about the lowest and highest run's score (3 runs on one variant: exactly, the percentile
# bounds being hit with probability 1/27 each).
FEW_RUNS = 5


def run(args: argparse.Namespace) -> int:
    import math
    import sys

    from training.eval.benchmark import PARTIAL, PROTOCOL_GAMES, REFERENCE, benchmark, protocol, two_places

    kept = Path(args.out) / PARTIAL
    with interrupted_says(f"any pairing finished is kept in {kept} (--resume goes on from it)"):
        summary = benchmark(
            args.agents,
            args.variants,
            games=args.games,
            out=args.out,
            group=args.group,
            agents_dir=args.agents_dir,
            progress=not args.no_progress,
            workers=args.workers,
            reference=None if args.fresh else args.reference or REFERENCE,
            record=args.record,
            overwrite=args.overwrite,
            resume=args.resume,
            say=lambda line: print(line, file=sys.stderr, flush=True),  # (a rung left out: before any game)
        )
    if summary["exploratory"]:
        few = summary["games_per_pairing"] < PROTOCOL_GAMES
        rough = ", and a bootstrap over so few deals gives IQM intervals too narrow to trust" if few else ""
        print(f"{summary['label']}: not comparable with the reference{rough}")
    for label, entry in summary["agents"].items():
        low, high = entry["iqm_ci"]
        if label in (protocol.BOTTOM, protocol.TOP):
            interval = "n/a (the scale's ends: 0 and 1 in every resample)"
        elif math.isnan(low):
            interval = "n/a (too few distinct outcomes)"
        else:
            interval = f"[{two_places(low, sign=True)}, {two_places(high, sign=True)}]"
        if "runs" in entry:  # (a group: its runs resampled, on these deals; then the deals too)
            few = ": about their range" if len(entry["runs"]) < FEW_RUNS and not math.isnan(low) else ""
            interval += f" over {len(entry['runs'])} runs on these deals{few}"
            deals_low, deals_high = entry["iqm_ci_with_deals"]
            if not math.isnan(deals_low):
                interval += (
                    f"; [{two_places(deals_low, sign=True)}, {two_places(deals_high, sign=True)}] "
                    "with the deals redrawn too"
                )
        counted = entry.get("variants")
        if counted is not None and len(counted) < len(summary["variants"]):
            interval += (
                f"; over {len(counted)} variant(s) only ({', '.join(counted) or 'none'}): not comparable"
            )
        print(f"{label:<24} IQM score {two_places(entry['iqm'], sign=True)}  95% CI {interval}")
    for agent, variants in summary["skipped"].items():
        why = (
            "no shipped agent there (the note above)"
            if agent == "shipped"
            else "a checkpoint plays only its own table"
        )
        print(f"{agent}: not played on {', '.join(variants)} ({why})")
    pairings = summary["pairings"]
    resumed = f", {pairings['resumed']} resumed from {kept.name}" if pairings["resumed"] else ""
    read = f", {pairings['read']} read from {pairings['reference']}" if pairings["read"] else ""
    print(f"pairings: {pairings['played']} played{resumed}{read}")
    written = Path(args.out) / "benchmark.csv"
    also = "benchmark.md, summary.json, benchmark.png, pairings.json"
    print(f"written: {written}, {also} ({summary['label']})")
    if args.record:
        print(f"game records: {args.record} (a JSON file per game played; --fresh plays every pairing)")
    return 0
