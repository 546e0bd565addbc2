"""A training run's learning curve: its network from step 0 to the end against fixed opponents.

    python benchmarks/learning_curve.py runs/long/all_fives-vec --opponents search advanced expert \\
        --games 200 --final-games 1000 --csv benchmarks/results/long_all_fives_vec.csv \\
        --plot docs/assets/long_all_fives_vec.png

**The points.** Step 0 (the run's untrained network, rebuilt exactly: its trainer is built again
from the run's config in a scratch folder, and the trainer seeds torch before it builds the
model), then the checkpoints at log-spaced iterations (10, 40, 160, 640, ...: every fourth
power of 4 times 10 that the run saved) and the last one. A checkpoint must be saved at those
iterations: ``run.checkpoint_every`` 10 keeps every one of them.

**The games.** Each point plays each opponent on the run's evaluation table, whole episodes on
duplicate deals held out from training and from the benchmark (``--seed``, 2000 by default:
``python -m training evaluate CHECKPOINT OPPONENT --games G --duplicate --first-only --seed
2000`` plays the same games), ``--games`` each and ``--final-games`` for the last checkpoint;
the 95% intervals are over deals. ``--iterations`` plays only the points named (0: step 0),
for the early points while the run goes on. A row per (checkpoint, opponent) goes to ``--csv`` as it
lands, so an interrupted curve goes on where it stopped (rows of the same checkpoint, opponent
and games are not played again), and the picture, win rate against decisions, is drawn from the
CSV's rows.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from training.cli import OneLineParser, run_script  # noqa: E402
from training.cli.arguments import output_file, picture_file  # noqa: E402
from training.eval.arena import non_negative_int, positive_int  # noqa: E402
from training.eval.evaluate import evaluate_pairings, prepare  # noqa: E402
from training.eval.report import replace_rows  # noqa: E402
from training.model import checkpoint  # noqa: E402
from training.model.config import Config  # noqa: E402
from training.rl.train import Trainer  # noqa: E402

COLUMNS = (
    "checkpoint",
    "decisions",
    "opponent",
    "games",
    "win_rate",
    "ci_low",
    "ci_high",
    "margin",
    "margin_ci_low",
    "margin_ci_high",
    "seed",
)
STEP_ZERO = "iter_00000"


def curve_points(run: Path, iterations: list[int] | None = None) -> list[Path]:
    """The run's checkpoints at ``iterations`` (default: 10 * 4**k and the last one), in order."""
    saved = {int(p.stem.removeprefix("iter_")): p for p in (run / "checkpoints").glob("iter_*.pt")}
    if not saved:
        raise SystemExit(f"{run} holds no checkpoints/iter_*.pt: give a training run's folder")
    last = max(saved)
    if iterations is not None:
        missing = sorted(set(iterations) - set(saved))
        if missing:
            raise SystemExit(f"{run} saved no checkpoint at iteration(s) {missing}; it has {sorted(saved)}")
        return [saved[i] for i in sorted(iterations)]
    spaced = [10 * 4**k for k in range(last.bit_length()) if 10 * 4**k < last]
    return [saved[i] for i in [*spaced, last] if i in saved]


def step_zero(run: Path, folder: Path) -> Path:
    """The run's network before its first update, saved in ``folder`` as a checkpoint."""
    config: Config = checkpoint.load(checkpoint.latest(run))["config"]
    config = replace(config, run=replace(config.run, out_dir=str(folder), name="step0"))
    trainer = Trainer(config)
    try:
        path = folder / f"{STEP_ZERO}.pt"
        checkpoint.save(path, trainer.payload())
        return path
    finally:
        trainer.collector.close()


def kept_rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def play_point(point: Path, label: str, opponent: str, games: int, seed: int) -> dict[str, Any]:
    """One checkpoint against one opponent: the CSV row."""
    plan = prepare([str(point), opponent])
    (result,) = evaluate_pairings(plan, games, seed=seed, first_only=True, duplicate=True, progress=True)
    low, high = result.interval()
    margin_low, margin_high = result.margin_interval()
    return {
        "checkpoint": label,
        "decisions": int(checkpoint.load(point).get("steps") or 0),
        "opponent": opponent,
        "games": result.games,
        "win_rate": f"{result.win_rate:.4f}",
        "ci_low": f"{low:.4f}",
        "ci_high": f"{high:.4f}",
        "margin": f"{result.margin:.4f}",
        "margin_ci_low": f"{margin_low:.4f}",
        "margin_ci_high": f"{margin_high:.4f}",
        "seed": seed,
    }


def plot(rows: list[dict[str, str]], path: Path, title: str) -> None:
    """Win rate (with its interval) against decisions, a line per opponent; step 0 drawn at the
    left edge of the log axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trained = [int(r["decisions"]) for r in rows if int(r["decisions"]) > 0]
    origin = min(trained) / 4 if trained else 1.0
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for opponent in dict.fromkeys(r["opponent"] for r in rows):
        mine = sorted((r for r in rows if r["opponent"] == opponent), key=lambda r: int(r["decisions"]))
        x = [max(int(r["decisions"]), origin) for r in mine]
        y = [float(r["win_rate"]) for r in mine]
        axes.plot(x, y, marker="o", label=f"against {opponent}")
        low, high = [float(r["ci_low"]) for r in mine], [float(r["ci_high"]) for r in mine]
        axes.fill_between(x, low, high, alpha=0.2)
    axes.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    axes.set_xscale("log")
    axes.set_xlabel("training decisions (step 0 at the left edge)")
    axes.set_ylabel("win rate, whole matches (95% interval)")
    axes.set_ylim(0, 1)
    axes.set_title(title)
    axes.legend(loc="lower right")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a training run's folder")
    parser.add_argument("--opponents", nargs="+", default=["search", "advanced", "expert"])
    parser.add_argument("--games", type=positive_int, default=200, help="matches a point and opponent")
    parser.add_argument(
        "--final-games", type=positive_int, default=1000, help="matches for the last checkpoint"
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=2000, help="the deals (default 2000: held out)"
    )
    parser.add_argument("--csv", type=output_file, required=True)
    parser.add_argument("--plot", type=picture_file, help="the picture (PNG) to draw from the CSV")
    parser.add_argument("--no-step-zero", action="store_true", help="leave out the untrained network")
    parser.add_argument(
        "--iterations",
        type=non_negative_int,
        nargs="+",
        help="only these points (0: the untrained network), e.g. the early ones while the run goes on",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # one decision at a time: more threads only fight over the cores
    chosen = None if args.iterations is None else [i for i in args.iterations if i != 0]
    points = curve_points(args.run, chosen)
    last = max((args.run / "checkpoints").glob("iter_*.pt"))  # the run's last: --final-games
    if args.iterations is not None and 0 not in args.iterations:
        args.no_step_zero = True
    rows = kept_rows(args.csv)
    done = {(r["checkpoint"], r["opponent"], r["games"]) for r in rows}
    with tempfile.TemporaryDirectory() as scratch:
        labelled = [(p.stem, p) for p in points]
        if not args.no_step_zero:
            labelled.insert(0, (STEP_ZERO, Path(scratch) / f"{STEP_ZERO}.pt"))
        # the last point first: the number a reader wants most
        for label, point in [labelled[-1], *labelled[:-1]]:
            for opponent in args.opponents:
                games = args.final_games if point == last else args.games
                # (an odd count is rounded up to whole deals: look for the count it becomes)
                if any(key[:2] == (label, opponent) and int(key[2]) >= games for key in done):
                    continue
                if label == STEP_ZERO and not point.exists():
                    step_zero(args.run, Path(scratch))
                row = play_point(point, label, opponent, games, args.seed)
                print(
                    f"{label} ({row['decisions']:,} decisions) vs {opponent}: {float(row['win_rate']):.1%} "
                    f"[{float(row['ci_low']):.1%}, {float(row['ci_high']):.1%}] of {row['games']}"
                )
                replace_rows(args.csv, COLUMNS, ("checkpoint", "opponent", "games"), [row])
                done.add((label, opponent, str(row["games"])))
    if args.plot is not None:
        plot(kept_rows(args.csv), args.plot, f"{args.run.name}: the policy alone against fixed opponents")
        print(f"written: {args.plot}")
    return 0


if __name__ == "__main__":
    run_script(main)
