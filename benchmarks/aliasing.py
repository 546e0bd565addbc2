"""How much a table's observations alias its information states, and what that costs an
equilibrium played through them.

    python benchmarks/aliasing.py                          # classic small and medium
    python benchmarks/aliasing.py --preset tiny small --iterations 256

For each preset of the variant: the information states (``domino_env.gametree.GameTree``),
the distinct rows of (observation, action mask) among them (``observe_all``: the observation
a network reads at each information state), and the NashConv of CFR+'s average policy after
``--iterations``, as it is (tabular) and **projected onto the observations**: at each
information state, the mean of its observation's states' probabilities, slot by slot (the
states of one observation share the mask, so the slots line up). The projection is the best
a network fitted to the policy with uniform weights can do (``algorithm=cfr``'s fit); it is
not a floor for every policy of the observations. Rows go to ``--out`` (CSV).
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from domino_env.gametree import GameTree  # noqa: E402
from training.cli import OneLineParser, run_script  # noqa: E402
from training.cli.arguments import output_file  # noqa: E402
from training.eval.arena import positive_int  # noqa: E402
from training.eval.exploitability import Observed, observe_all  # noqa: E402

COLUMNS = (
    "variant",
    "preset",
    "information_states",
    "observations",
    "cfr_iterations",
    "tabular_nash_conv",
    "projected_nash_conv",
    "seconds",
)


def projected(tree: GameTree, observed: Observed, policy: np.ndarray) -> tuple[np.ndarray, int]:
    """``policy`` averaged over each observation's information states (uniform weights), and
    the number of distinct (observation, mask) rows."""
    rows = np.concatenate([observed.obs, observed.mask.astype(np.float32)], axis=1)
    _, group, sizes = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    group = group.ravel()
    first = tree.starts[observed.ids]
    counts = np.diff(tree.starts)[observed.ids]
    width = int(counts.max())
    real = np.arange(width) < counts[:, None]
    pairs = np.where(real, first[:, None] + np.arange(width), 0)
    sums = np.zeros((len(sizes), width))
    np.add.at(sums, group, np.where(real, policy[pairs], 0.0))
    mean = sums[group] / sizes[group][:, None]
    out = np.zeros_like(policy)
    out[pairs[real]] = mean[real]
    return out, len(sizes)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--preset", nargs="+", default=["small", "medium"])
    parser.add_argument("--iterations", type=positive_int, default=256, help="CFR+ iterations (default 256)")
    parser.add_argument(
        "--out", type=output_file, default=str(ROOT / "benchmarks" / "results" / "aliasing.csv")
    )
    args = parser.parse_args(argv)
    results = []
    for preset in args.preset:
        started = time.perf_counter()
        tree = GameTree.build(args.variant, preset=preset)
        observed = observe_all(tree, progress=False)
        average, _ = tree.cfr_plus(args.iterations)
        projection, observations = projected(tree, observed, average)
        row = {
            "variant": args.variant,
            "preset": preset,
            "information_states": tree.size.information_states,
            "observations": observations,
            "cfr_iterations": args.iterations,
            "tabular_nash_conv": tree.nash_conv(average),
            "projected_nash_conv": tree.nash_conv(projection),
            "seconds": round(time.perf_counter() - started, 1),
        }
        results.append(row)
        print(
            f"{args.variant} {preset}: {row['information_states']:,} information states, "
            f"{observations:,} observations; CFR+ {args.iterations}: tabular "
            f"{row['tabular_nash_conv']:.6g}, projected {row['projected_nash_conv']:.6g} "
            f"({row['seconds']} s)",
            flush=True,
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(results)
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    run_script(main)
