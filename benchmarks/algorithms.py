"""The algorithm benchmark on solved tables: exact NashConv against experience for every
training algorithm, several seeds each, aggregated as the IQM with a 95% stratified bootstrap
band, beside uniform play and CFR+.

    python benchmarks/algorithms.py                      # classic small, ppo and mmd, 5 seeds
    python benchmarks/algorithms.py --seeds 3 --steps 300000 --algorithms ppo
    python benchmarks/algorithms.py --preset tiny --config configs/classic_tiny.yaml \\
        --out docs/assets/algorithms_classic_tiny
    python benchmarks/algorithms.py --algorithms ppo cfr --seeds 3 --set cfr.iterations=256

Each (algorithm, seed) run trains with the table's config (``--config``, overridden with
``algorithm=<name>``, ``run.seed=<seed>``, ``run.total_steps=--steps`` and
``run.out_dir=--runs/<algorithm>``, then any ``--set KEY=VALUE``). Of its checkpoints, about
``--points`` log-spaced ones (always the last) are measured: the exact NashConv
(``GameTree.nash_conv``) of the checkpoint's action distribution (the ``"(policy)"`` reading of
``training.eval.exploitability``; for ``dmc``, whose network gives Q values, its greedy play,
the ``"(argmax)"`` reading) over the table's whole game tree, which is built once, its
observations read once (``observe_all``), and each checkpoint one batched forward pass
(``network_policy``). The checkpoints not measured are deleted (``--keep-checkpoints`` keeps
them). Every point records the decisions played so far (every seat's moves: the checkpoint's
``steps``) and the wall-clock seconds since the run started (training and the measurements
before it; measurements are made after training, so this is training time). Each run's points
are kept in its folder as it ends (``measured.json``, with its whole config and ``--points``),
and a later benchmark whose run has the same reads them rather than training it again: a
benchmark cut off (hours, on a medium table) goes on from the runs it finished.

``--algorithms cfr`` (``algorithm=cfr``, :mod:`training.rl.cfr`) plays no games: it runs CFR+
on the same tree for ``cfr.iterations`` (the config's, or ``--set cfr.iterations=N``;
``--steps`` is ignored) and fits its average policy into the network at the powers of two and
the last iteration. Its ``decisions`` are the decision nodes CFR+ has visited (the
checkpoint's ``steps``: iteration x players x decision nodes, each iteration walking the whole
tree once per seat), the work in the other algorithms' unit; its points are the fitted
network's NashConv (the network reads observations, which can alias information states, so it
stays above the tabular policy's), and each also records the tabular average policy's own
NashConv (the JSON's ``tabular_nash_conv``, the CSV's ``cfr (tabular)`` rows). The seeds change the
network's initialisation and minibatches, not CFR+ (deterministic).

``--algorithms mccfr`` (``algorithm=mccfr``) goes the same way with external-sampling MCCFR for
``mccfr.iterations`` (checkpoints at the powers of two from 64 and the last): its
``decisions`` are the decision nodes its sampled traversals touched (a few dozen per traversal),
and the seed also seeds the sampling.

Aggregation, per algorithm at the decisions its runs have points at (the runs of one config
checkpoint at the same decisions; runs that do not are interpolated in log-log onto the first
run's points inside their common range): the interquartile mean, rliable's IQM,
``scipy.stats.trim_mean(scores, 0.25)``: the mean after dropping ``floor(n / 4)`` scores at
each end (5 seeds: the mean of the middle 3; 2 or 3 seeds: the plain mean). The band is the
95% percentile interval of the IQM over 50,000 stratified bootstrap resamples of the runs
(rliable's ``get_interval_estimates`` defaults: the runs of each task resampled with
replacement within the task; here one task, the table). rliable is not a dependency: this is
that computation written in numpy (:func:`iqm`, :func:`bootstrap_band`), seeded, so the bands
are reproducible.

Outputs (``--out``, default ``docs/assets/algorithms_<variant>_<preset>``):

* ``<out>.json``: the raw runs in marl-eval's layout (instadeepai/marl-eval's README, "Data
  Structure for Raw Experiment data")::

      {"<variant>": {"<preset>": {"<algorithm>": {"run_<seed>": {
          "step_1": {"step_count": <decisions>, "nash_conv": [<value>], "seconds": [<s>]},
                                                  # cfr: also "tabular_nash_conv": [<value>]
          ...,
          "step_k": {...},
          "absolute_metrics": {"nash_conv": [<the last point's value>]}}}}}}

  environment = the variant, task = the preset (or the options as ``k=v,...`` when the table
  is not a preset), one ``run_<seed>`` per seed, ``step_1`` ... ``step_k`` in order of
  decisions, each metric a list of one value (NashConv is exact, not a mean over evaluation
  episodes). The metric is ``nash_conv``, LOWER IS BETTER (0: a Nash equilibrium): marl-eval's
  tools assume higher is better, so negate it (or plot as is) when using them. ``seconds`` is
  wall-clock time, not a score. The reference lines (uniform play, CFR+) are in the CSV only:
  the layout has no place for them.
* ``<out>.csv``: one row per point: ``algorithm, seed, decisions, iteration, seconds,
  nash_conv`` (``iteration``: the trainer's iteration of the checkpoint, cfr's CFR+ iteration;
  a cfr point has a twin row, algorithm ``cfr (tabular)``, its tabular NashConv); and the reference
  rows: ``uniform`` (one row, nash_conv only) and ``cfr+`` (one row per measured CFR+ iteration
  in ``iteration``, ``seconds`` the CFR+ run's time so far, up to that mark's NashConv).
* ``<out>.png``: NashConv against decisions, log-log, the IQM line and its band per algorithm
  and uniform play dotted; CFR+ against its iterations on a second panel.

tqdm counts the runs; a summary table at the end gives each algorithm's final NashConv IQM
[band], its decisions and minutes (its runs' training time, summed).

``--merge OUTPUT ...`` trains nothing: it reads earlier outputs of the same table (their CSVs,
which hold every point and the reference lines) and writes them as one output to ``--out``,
each algorithm from the one output that has it; so algorithms run apart (or by others, in
this format) are aggregated, pictured and tabled together::

    python benchmarks/algorithms.py --preset medium --merge runs/a.csv runs/b.csv \\
        --out docs/assets/algorithms_classic_medium
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from domino_env.gametree import GameTree  # noqa: E402
from training.cli import OneLineParser, run_script  # noqa: E402
from training.cli.train import solve  # noqa: E402
from training.eval.arena import non_negative_int, positive_int  # noqa: E402
from training.eval.exploitability import log_spaced, network_policy, observe_all  # noqa: E402
from training.model import checkpoint  # noqa: E402
from training.model.config import ALGORITHMS, load_config  # noqa: E402
from training.rl.train import Trainer  # noqa: E402

METRIC = "nash_conv"
REPS = 50_000  # bootstrap resamples (rliable's default)
# Algorithms measured by their greedy play rather than their action distribution: dmc's
# network is Q values (its softmax is no policy of its), and it plays argmax Q.
GREEDY = frozenset({"dmc"})
TABULAR = "tabular_nash_conv"  # cfr's points: its tabular average policy's NashConv too
COLUMNS = ("algorithm", "seed", "decisions", "iteration", "seconds", METRIC)

Point = dict[str, Any]  # {"decisions", "iteration", "seconds", "nash_conv"} (cfr: and TABULAR)
Runs = dict[str, dict[int, list[Point]]]  # algorithm -> seed -> its points, in order


# --- statistics (rliable's definitions, in numpy) ------------------------------------------------


def iqm(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """The interquartile mean along ``axis``: rliable's ``aggregate_iqm``,
    ``scipy.stats.trim_mean(scores, proportiontocut=0.25)``: sorted, ``floor(n / 4)`` dropped at
    each end, the rest averaged (n = 5: the middle 3; n < 4: the mean)."""
    ordered = np.sort(np.asarray(scores, float), axis=axis)
    n = ordered.shape[axis]
    cut = int(0.25 * n)
    return np.asarray(np.take(ordered, range(cut, n - cut), axis=axis).mean(axis=axis))


def bootstrap_band(
    scores: np.ndarray, reps: int = REPS, size: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """The ``size`` percentile interval of the IQM of ``scores`` (float[runs, tasks]) over
    ``reps`` stratified bootstrap resamples: each task's runs drawn with replacement within the
    task (rliable's ``StratifiedBootstrap``), the IQM taken over all the resampled scores."""
    scores = np.asarray(scores, float)
    if scores.ndim == 1:
        scores = scores[:, None]
    runs, tasks = scores.shape
    rng = np.random.default_rng(seed)
    picks = rng.integers(runs, size=(reps, runs, tasks))
    resampled = scores[picks, np.arange(tasks)]  # (reps, runs, tasks)
    values = iqm(resampled.reshape(reps, runs * tasks), axis=1)
    low, high = np.percentile(values, [100 * (1 - size) / 2, 100 * (1 + size) / 2])
    return float(low), float(high)


def aggregate(runs: dict[int, list[Point]], reps: int = REPS) -> list[dict[str, float]]:
    """One algorithm's runs (seed -> points) at common decisions: ``decisions``, ``iqm``,
    ``low``, ``high`` (the band) and ``seconds`` (the mean). Runs logged at the same decisions
    are taken as they are; otherwise each is interpolated (log-log) onto the first run's
    points inside the range every run covers."""
    curves = list(runs.values())
    if all([p["decisions"] for p in c] == [p["decisions"] for p in curves[0]] for c in curves):
        xs = np.array([p["decisions"] for p in curves[0]], float)
        table = np.array([[_at(c, x, METRIC) for x in xs] for c in curves])
        seconds = np.array([[_at(c, x, "seconds") for x in xs] for c in curves])
    else:  # runs with different points: log-log interpolation onto the first run's
        lo = max(c[0]["decisions"] for c in curves)
        hi = min(c[-1]["decisions"] for c in curves)
        xs = np.array([p["decisions"] for p in curves[0] if lo <= p["decisions"] <= hi], float)
        table = np.array([_interpolate(c, xs, METRIC, log=True) for c in curves])
        seconds = np.array([_interpolate(c, xs, "seconds", log=False) for c in curves])
    out = []
    for k, x in enumerate(xs):
        low, high = bootstrap_band(table[:, k], reps=reps, seed=k)
        out.append(
            {
                "decisions": float(x),
                "iqm": float(iqm(table[:, k])),
                "low": low,
                "high": high,
                "seconds": float(seconds[:, k].mean()),
            }
        )
    return out


def _at(curve: list[Point], decisions: float, key: str) -> float:
    return float(next(p[key] for p in curve if p["decisions"] == decisions))


def _interpolate(curve: list[Point], xs: np.ndarray, key: str, *, log: bool) -> np.ndarray:
    x = np.log([p["decisions"] for p in curve])
    y = np.array([p[key] for p in curve], float)
    if log:
        return np.exp(np.interp(np.log(xs), x, np.log(np.maximum(y, 1e-12))))
    return np.interp(np.log(xs), x, y)


# --- the runs ------------------------------------------------------------------------------------


def measured(iterations: list[int], points: int) -> list[int]:
    """About ``points`` of the checkpoints' ``iterations``, log-spaced (the nearest one to each
    mark, no repeats), the first and the last always among them."""
    if len(iterations) <= points:
        return list(iterations)
    its = np.array(iterations, float)
    marks = np.geomspace(its[0], its[-1], points)
    chosen = {int(its[np.argmin(np.abs(np.log(its) - np.log(m)))]) for m in marks}
    return sorted(chosen | {iterations[0], iterations[-1]})


def run(
    algorithm: str,
    seed: int,
    args: argparse.Namespace,
    tree: GameTree,
    observed: Any,
) -> list[Point]:
    """Train one (algorithm, seed) run and measure its log-spaced checkpoints; or, where its
    folder holds the curve of a run with the same config and ``--points`` (``measured.json``,
    written as each run ends), read that."""
    overrides = [
        f"algorithm={algorithm}",
        f"run.seed={seed}",
        f"run.total_steps={args.steps}",
        *args.set,
    ]
    config = load_config(args.config, overrides)
    config.run.out_dir = str(Path(args.runs) / algorithm)  # (a path: set directly, not as YAML)
    if (config.env.variant, config.env.options.get("preset")) != (args.variant, args.preset):
        raise SystemExit(
            f"{args.config} trains on {config.env.variant} {config.env.options}, "
            f"not the table measured ({args.variant}, preset {args.preset})"
        )
    kept = Path(config.run.out_dir) / config.run_name / "measured.json"
    identity = json.loads(json.dumps({"config": config.to_dict(), "points": args.points}))
    if kept.exists():  # (a run measured before, by a benchmark cut off later: not trained again)
        stored = json.loads(kept.read_text())
        if stored.get("identity") == identity:
            return list(stored["curve"])
    started = time.time()
    if algorithm in ("cfr", "mccfr"):  # (the tree and its observations: this table's, read once)
        run_dir = solve(config, overwrite=True, progress=False, tree=tree, observed=observed).parent.parent
    else:
        trainer = Trainer(config, overwrite=True)
        trainer.train(progress=False)
        run_dir = trainer.run_dir
    paths = {int(p.stem.split("_")[1]): p for p in (run_dir / "checkpoints").glob("iter_*.pt")}
    chosen = measured(sorted(paths), args.points)
    curve = []
    for it in chosen:
        path = paths[it]
        data = checkpoint.load(path)
        point = {
            "decisions": int(data["steps"]),
            "iteration": it,
            "seconds": path.stat().st_mtime - started,  # when the trainer wrote it
            METRIC: tree.nash_conv(network_policy(tree, path, observed, greedy=algorithm in GREEDY)),
        }
        if "tabular" in data.get("nash_conv", {}):  # (cfr's and mccfr's)
            point[TABULAR] = float(data["nash_conv"]["tabular"])
        curve.append(point)
    if not args.keep_checkpoints:
        for it, path in paths.items():
            if it not in chosen:
                path.unlink()
    kept.write_text(json.dumps({"identity": identity, "curve": curve}, indent=1) + "\n")
    return curve


def task_name(tree: GameTree, preset: str | None) -> str:
    return preset if preset else ",".join(f"{k}={v}" for k, v in tree.options.items())


# --- the outputs ---------------------------------------------------------------------------------


def marl_eval_json(variant: str, task: str, runs: dict[str, dict[int, list[Point]]]) -> dict[str, Any]:
    """The raw runs in marl-eval's layout (the module docstring)."""
    algorithms: dict[str, Any] = {}
    for algorithm, seeds in runs.items():
        algorithms[algorithm] = {}
        for seed, curve in seeds.items():
            entry: dict[str, Any] = {
                f"step_{k}": {
                    "step_count": p["decisions"],
                    METRIC: [p[METRIC]],
                    "seconds": [p["seconds"]],
                    **({TABULAR: [p[TABULAR]]} if TABULAR in p else {}),
                }
                for k, p in enumerate(curve, start=1)
            }
            entry["absolute_metrics"] = {METRIC: [curve[-1][METRIC]]}
            algorithms[algorithm][f"run_{seed}"] = entry
    return {variant: {task: algorithms}}


def csv_rows(
    runs: dict[str, dict[int, list[Point]]],
    uniform: float,
    cfr: list[tuple[int, float]],
    cfr_seconds: list[float],
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for algorithm, seeds in runs.items():
        for seed, curve in seeds.items():
            for p in curve:
                row = {"algorithm": algorithm, "seed": seed, **{k: p[k] for k in COLUMNS[2:]}}
                rows.append(row)
                if TABULAR in p:  # (cfr's twin row: the tabular average policy's NashConv)
                    rows.append({**row, "algorithm": f"{algorithm} (tabular)", METRIC: p[TABULAR]})
    rows.append({"algorithm": "uniform", METRIC: uniform})
    rows.extend(
        {"algorithm": "cfr+", "iteration": it, "seconds": s, METRIC: v}
        for (it, v), s in zip(cfr, cfr_seconds, strict=True)
    )
    return rows


def label(seeds: int) -> str:
    """How a line's seeds are named in the legend."""
    return "1 seed" if seeds == 1 else f"IQM of {seeds} seeds"


def plot(
    aggregated: dict[str, list[dict[str, float]]],
    seeds: dict[str, int],
    uniform: float,
    cfr: list[tuple[int, float]],
    title: str,
    path: Path,
) -> None:
    fig, (learn, solve) = plt.subplots(1, 2, figsize=(11, 4.4), gridspec_kw={"width_ratios": [3, 2]})
    for k, (algorithm, curve) in enumerate(aggregated.items()):
        xs = [p["decisions"] for p in curve]
        name = f"{algorithm} ({label(seeds[algorithm])})"
        learn.plot(xs, [p["iqm"] for p in curve], color=f"C{k}", label=name)
        learn.fill_between(
            xs, [p["low"] for p in curve], [p["high"] for p in curve], color=f"C{k}", alpha=0.2
        )
    learn.axhline(uniform, color="grey", linestyle=":", label=f"uniform random: {uniform:.3g}")
    learn.set_xscale("log")
    learn.set_yscale("log")
    learn.set_xlabel("decisions played (every seat; cfr, mccfr: decision nodes visited)")
    learn.set_ylabel("NashConv (exact; lower is better)")
    learn.set_title("against experience (band: 95% stratified bootstrap)", fontsize="medium")
    learn.legend(fontsize=8)
    if cfr:
        its, values = zip(*cfr, strict=True)
        solve.plot(its, np.maximum(values, 1e-9), "o-", color="black", label="CFR+ average policy")
        solve.set_xscale("log", base=2)
        solve.xaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:.0f}"))
        solve.legend(fontsize=8)
    solve.axhline(uniform, color="grey", linestyle=":")
    solve.set_yscale("log")
    solve.set_xlabel("CFR+ iterations (each walks the whole tree)")
    solve.set_title("solving the tree", fontsize="medium")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(
    args: argparse.Namespace,
    tree: GameTree,
    task: str,
    out: Path,
    runs: dict[str, dict[int, list[Point]]],
    uniform: float,
    cfr: list[tuple[int, float]],
    cfr_seconds: list[float],
) -> None:
    """Aggregate the runs, write the JSON, CSV and picture, and print the summary table (an
    algorithm's minutes: its runs' last points' seconds, summed)."""
    aggregated = {a: aggregate(curves, reps=args.reps) for a, curves in runs.items()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(marl_eval_json(args.variant, task, runs), indent=1) + "\n")
    with out.with_suffix(".csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(runs, uniform, cfr, cfr_seconds))
    title = f"{args.variant}, preset={task}: {tree.size.information_states:,} information states"
    seeds = {algorithm: len(curves) for algorithm, curves in runs.items()}
    plot(aggregated, seeds, uniform, cfr, title, out.with_suffix(".png"))
    print(f"\n{'algorithm':<10} {'final NashConv IQM [95% band]':<34} {'decisions':>10} {'minutes':>8}")
    for algorithm, curve in aggregated.items():
        last = curve[-1]
        band = f"{last['iqm']:.4f} [{last['low']:.4f}, {last['high']:.4f}]"
        minutes = sum(points[-1]["seconds"] for points in runs[algorithm].values()) / 60
        print(f"{algorithm:<10} {band:<34} {int(last['decisions']):>10,} {minutes:>8.1f}")
    for algorithm, seeds_runs in runs.items():  # (cfr's: its tabular average policy, beside the network)
        tabular = [curve[-1][TABULAR] for curve in seeds_runs.values() if TABULAR in curve[-1]]
        if tabular:
            print(f"{algorithm + ' (tab.)':<10} {float(np.mean(tabular)):<34.6g} (tabular average policy)")
    print(f"{'uniform':<10} {uniform:<34.4f}")
    if cfr:
        print(f"{'cfr+':<10} {cfr[-1][1]:<34.6f} ({cfr[-1][0]} iterations, {cfr_seconds[-1]:.1f} s)")
    written = ", ".join(str(out.with_suffix(s)) for s in (".json", ".csv", ".png"))
    print(f"written: {written}", flush=True)


def read_results(
    path: Path,
) -> tuple[dict[str, dict[int, list[Point]]], float, list[tuple[int, float]], list[float]]:
    """An earlier output's runs and reference lines from its CSV (:func:`csv_rows`' rows: the
    runs' points, cfr's tabular twins, uniform play and CFR+), for ``--merge``."""
    runs: Runs = {}
    uniform, cfr, cfr_seconds = math.nan, [], []
    twins: list[dict[str, str]] = []
    if not path.is_file():
        raise SystemExit(f"error: {path} does not exist: give an earlier output of this benchmark")
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            name = row["algorithm"]
            if name == "uniform":
                uniform = float(row[METRIC])
            elif name == "cfr+":
                cfr.append((int(row["iteration"]), float(row[METRIC])))
                cfr_seconds.append(float(row["seconds"]))
            elif name.endswith(" (tabular)"):
                twins.append(row)
            else:
                point: Point = {
                    "decisions": int(row["decisions"]),
                    "iteration": int(row["iteration"]),
                    "seconds": float(row["seconds"]),
                    METRIC: float(row[METRIC]),
                }
                runs.setdefault(name, {}).setdefault(int(row["seed"]), []).append(point)
    for row in twins:  # (each onto its point: the same algorithm, seed and iteration)
        curve = runs[row["algorithm"].removesuffix(" (tabular)")][int(row["seed"])]
        (point,) = [p for p in curve if p["iteration"] == int(row["iteration"])]
        point[TABULAR] = float(row[METRIC])
    if math.isnan(uniform):
        raise SystemExit(f"error: {path} has no uniform row: not an output of this benchmark")
    return runs, uniform, cfr, cfr_seconds


def merge(args: argparse.Namespace, tree: GameTree, task: str, out: Path) -> None:
    """``--merge``: the runs of earlier outputs of the same table (their CSVs) as one output,
    each algorithm from the one file that has it; CFR+'s line: the longest."""
    runs: dict[str, dict[int, list[Point]]] = {}
    found: dict[str, Path] = {}
    uniform = tree.nash_conv(tree.uniform())
    cfr: list[tuple[int, float]] = []
    cfr_seconds: list[float] = []
    for path in map(Path, args.merge):
        theirs, their_uniform, their_cfr, their_seconds = read_results(path.with_suffix(".csv"))
        if abs(their_uniform - uniform) > 1e-9:
            raise SystemExit(
                f"error: {path} is another table's (uniform play's NashConv {their_uniform:.6g}, "
                f"{args.variant} {task}'s is {uniform:.6g})"
            )
        for algorithm, seeds in theirs.items():
            if algorithm in runs:
                raise SystemExit(f"error: {algorithm} is in both {found[algorithm]} and {path}: merge one")
            runs[algorithm], found[algorithm] = seeds, path
        if len(their_cfr) > len(cfr):
            cfr, cfr_seconds = their_cfr, their_seconds
    known = {name: k for k, name in enumerate(ALGORITHMS)}  # (the trainer's order: stable colours)
    ordered = dict(sorted(runs.items(), key=lambda item: known.get(item[0], len(known))))
    report(args, tree, task, out, ordered, uniform, cfr, cfr_seconds)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic", help="the table's variant (default classic)")
    parser.add_argument("--preset", default="small", help="the table's preset (default small)")
    parser.add_argument(
        "--config", default=None, help="the training config (default configs/<variant>_<preset>.yaml)"
    )
    parser.add_argument("--algorithms", nargs="+", default=["ppo", "mmd"], help="default: ppo mmd")
    parser.add_argument(
        "--seeds", type=positive_int, default=5, help="seeds 1..N of each algorithm (default 5)"
    )
    parser.add_argument(
        "--steps", type=positive_int, default=1_000_000, help="decisions per run (default 1,000,000)"
    )
    parser.add_argument(
        "--points", type=positive_int, default=25, help="checkpoints measured per run (default 25)"
    )
    parser.add_argument(
        "--cfr-iterations", type=non_negative_int, default=256, help="CFR+ iterations (default 256; 0: none)"
    )
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="more config overrides")
    parser.add_argument("--runs", default="runs/algorithms", help="where the runs go")
    parser.add_argument(
        "--out", default=None, help="the .json/.csv/.png (default docs/assets/algorithms_...)"
    )
    parser.add_argument("--keep-checkpoints", action="store_true", help="keep the checkpoints not measured")
    parser.add_argument(
        "--reps", type=positive_int, default=REPS, help="bootstrap resamples (default 50,000)"
    )
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="OUTPUT",
        help="train nothing: merge earlier outputs of this table (their .csv) into --out",
    )
    args = parser.parse_args(argv)
    if args.config is None:
        args.config = ROOT / "configs" / f"{args.variant}_{args.preset}.yaml"
    torch.set_num_threads(1)
    started = time.time()
    options = {"preset": args.preset} if args.preset else {}
    tree = GameTree.build(args.variant, **options)
    task = task_name(tree, args.preset)
    out = Path(args.out or ROOT / "docs" / "assets" / f"algorithms_{args.variant}_{task}")
    print(f"{args.variant} {task}: {tree.size}", flush=True)
    if args.merge:
        merge(args, tree, task, out)
        return 0
    observed = observe_all(tree, progress=not args.no_progress)
    print(f"observations: {observed.nbytes / 2**20:.1f} MiB in {observed.seconds:.1f} s", flush=True)
    uniform = tree.nash_conv(tree.uniform())
    cfr_started = time.perf_counter()
    marks = log_spaced(args.cfr_iterations) if args.cfr_iterations > 0 else []
    cfr: list[tuple[int, float]] = tree.cfr_plus(args.cfr_iterations, marks)[1] if marks else []
    cfr_total = time.perf_counter() - cfr_started
    cfr_seconds = [cfr_total * it / args.cfr_iterations for it, _ in cfr]  # (its time, iterations alike)
    runs: dict[str, dict[int, list[Point]]] = {a: {} for a in args.algorithms}
    jobs = [(a, s) for a in args.algorithms for s in range(1, args.seeds + 1)]
    for algorithm, seed in tqdm(jobs, desc="runs", unit=" run", disable=args.no_progress):
        runs[algorithm][seed] = run(algorithm, seed, args, tree, observed)
    report(args, tree, task, out, runs, uniform, cfr, cfr_seconds)
    print(f"written in {(time.time() - started) / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    run_script(main)
