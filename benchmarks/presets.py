"""The solved presets' sizes and ground truth: for each variant's tiny, small and medium tables,
the game tree's size and the time to walk it, the mean decisions of a round, and the exact
NashConv of uniform play and of CFR+'s average policy as it converges (with the seconds an
exact NashConv and a CFR+ iteration take).

    python benchmarks/presets.py                    # every preset -> benchmarks/results/presets.csv
    python benchmarks/presets.py --presets small --cfr-iterations 64

The table in docs/guides/ground-truth.md is this script's output.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import domino_env  # noqa: E402
from domino_env.gametree import GameTree  # noqa: E402
from training.cli import OneLineParser, run_script  # noqa: E402
from training.eval.arena import positive_int  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "presets.csv"
PRESETS = ("tiny", "small", "medium")
COLUMNS = (
    "variant",
    "preset",
    "options",
    "information_states",
    "decision_nodes",
    "histories",
    "nodes",
    "walk_seconds",
    "mean_decisions",
    "uniform_nash_conv",
    "nash_conv_seconds",
    "cfr_iterations",
    "cfr_nash_conv",
    "cfr_seconds_per_iteration",
)


def measure(variant: str, preset: str, iterations: int) -> dict[str, object]:
    tree = GameTree.build(variant, preset=preset)
    uniform = tree.uniform()
    started = time.perf_counter()
    value = tree.nash_conv(uniform)
    nash_conv_seconds = time.perf_counter() - started
    started = time.perf_counter()
    _, curve = tree.cfr_plus(iterations, [iterations])
    per_iteration = (time.perf_counter() - started - nash_conv_seconds) / iterations
    size = tree.size
    return {
        "variant": variant,
        "preset": preset,
        "options": " ".join(f"{k}={v}" for k, v in tree.options.items()),
        "information_states": size.information_states,
        "decision_nodes": size.decisions,
        "histories": size.histories,
        "nodes": size.nodes,
        "walk_seconds": round(size.seconds, 1),
        "mean_decisions": round(tree.expected_decisions(uniform), 2),
        "uniform_nash_conv": f"{value:.6f}",
        "nash_conv_seconds": round(nash_conv_seconds, 2),
        "cfr_iterations": iterations,
        "cfr_nash_conv": f"{curve[-1][1]:.6f}",
        "cfr_seconds_per_iteration": round(per_iteration, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--variants", nargs="+", default=list(domino_env.VARIANTS), help="default: every variant"
    )
    parser.add_argument(
        "--presets", nargs="+", default=list(PRESETS), choices=PRESETS, help="default: all three"
    )
    parser.add_argument(
        "--cfr-iterations", type=positive_int, default=64, help="CFR+ iterations on each table (default 64)"
    )
    parser.add_argument(
        "--out", default=str(OUT), help="the CSV written (default benchmarks/results/presets.csv)"
    )
    args = parser.parse_args(argv)
    rows = []
    for variant in args.variants:
        for preset in args.presets:
            if preset not in domino_env.spec(variant).presets:
                continue
            try:
                row = measure(variant, preset, args.cfr_iterations)
            except ValueError as err:  # (a preset the tree cannot walk: Blind's)
                print(f"{variant} {preset}: {err}", file=sys.stderr)
                continue
            rows.append(row)
            print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if not rows:  # (an empty table written over the results would lose them)
        raise ValueError(
            f"no preset of {', '.join(args.variants)} ({', '.join(args.presets)}) is a table the "
            f"game tree walks: nothing measured, {args.out} left as it was"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    run_script(main)
