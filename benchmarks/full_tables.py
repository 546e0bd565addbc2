"""The algorithm benchmark on a full table: each training algorithm's agents, several seeds,
scored by the protocol-v2 benchmark against the ladder, aggregated per algorithm.

    python benchmarks/full_tables.py                        # classic, ppo and mmd, 5 seeds, 1M decisions
    python benchmarks/full_tables.py --variant all_fives --algorithms ppo mmd dmc nfsp
    python benchmarks/full_tables.py --steps 10000000 --workers 2 --exploit-steps 0

Each (algorithm, seed) run trains the variant's shipped training config (``--config``, default
``configs/<variant>.yaml``) with ``algorithm=<name>``, ``run.seed=<seed>``,
``run.total_steps=--steps``, ``run.collector=vector`` and no evaluations during training
(``eval.every=0``), then any ``--set KEY=VALUE``, into ``--runs/<algorithm>/<variant>-<seed>``;
a run whose last checkpoint already has those decisions is not trained again. Then each
algorithm's runs play the benchmark together (``python -m training benchmark RUN... --group
<algorithm> --variants <variant>``: every run against the ladder, whole matches on duplicate
deals, the score 0 like ``random`` and 1 level with ``expert``), which gives each run's score
and the group's interquartile mean with its 95% stratified bootstrap interval over the runs (on
the protocol's deals, which every run shares), and with the deals redrawn too. Then a
best-response exploiter is trained against each run's last checkpoint (``python -m training
exploit RUN run.collector=vector --steps --exploit-steps --games --exploit-games``: PPO
against the frozen agent alone) and its win rate against it measured (``--exploit-steps 0``:
none). A benchmark already in ``--runs`` for the same runs (their checkpoints as they are now)
and games, or an exploit of at least the steps and games asked made since the run's last
checkpoint, is read, not played again, and a benchmark cut off goes on from the
pairings it finished (``--resume``), so an interrupted run of this script goes on where it stopped.

Outputs: ``--runs/benchmark-<algorithm>-<variant>/`` and ``--runs/exploit-<algorithm>/`` (the
commands' own files; each group's ``pairings.json``, every deal's result, is also copied beside
``--json`` as ``full_tables_<variant>_<algorithm>_pairings.json``), a row per algorithm in
``--csv`` (default ``benchmarks/results/full_tables.csv``, replacing the row of the same
variant, algorithm and decisions: each seed's score and exploiter win rate, the group's IQM and
interval, the training time from the run's log to its last checkpoint, and the commands), and
the raw runs in marl-eval's layout (as ``benchmarks/algorithms.py`` writes them) in ``--json``
(default ``benchmarks/results/full_tables_<variant>.json``, merged with what it holds), and a
picture of the variant's rows at these decisions (``--plot``, default
``docs/assets/full_tables_<variant>.png``)::

    {"<variant>": {"standard": {"<algorithm>": {"run_<seed>": {
        "step_1": {"step_count": <decisions>, "score": [<score>], "seconds": [<training s>],
                   "exploiter_win_rate": [<win rate>]}}}}}}
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import matplotlib
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from training.cli import OneLineParser, run_script  # noqa: E402
from training.cli.arguments import output_file, picture_file  # noqa: E402
from training.eval.arena import non_negative_int, positive_int  # noqa: E402
from training.eval.benchmark import contestant, identity  # noqa: E402
from training.eval.report import replace_rows  # noqa: E402
from training.model import checkpoint  # noqa: E402
from training.model.config import config_differences, load_config  # noqa: E402
from training.rl.train import Trainer  # noqa: E402

CSV_FIELDS = (
    "variant",
    "algorithm",
    "decisions",
    "seeds",
    "games",
    "iqm",
    "ci_low",
    "ci_high",
    "ci_deals_low",  # (the group's interval with the deals redrawn too; empty in rows written before it)
    "ci_deals_high",
    "scores",
    "exploiter_win_rates",
    "exploiter_intervals",  # (each seed's 95% interval, low-high; empty in rows written before it)
    "exploit_games",
    "train_minutes",
    "command",
)


def train(algorithm: str, seed: int, args: argparse.Namespace) -> Path:
    """Train one run, unless its folder holds it already (the same config, every decision
    played); its folder. A folder that holds a run of other settings (another ``--steps`` or
    ``--set``) is refused rather than trained over."""
    overrides = [
        f"algorithm={algorithm}",
        f"run.seed={seed}",
        f"run.total_steps={args.steps}",
        "run.collector=vector",
        "eval.every=0",
        *args.set,
    ]
    config = load_config(args.config, overrides)
    if config.env.variant != args.variant:
        raise SystemExit(f"{args.config} trains {config.env.variant}, not --variant {args.variant}")
    config.run.out_dir = str(Path(args.runs) / algorithm)  # (a path: set directly, not as YAML)
    run_dir = Path(config.run.out_dir) / config.run_name
    latest = run_dir / "checkpoints" / "latest.pt"
    if latest.exists():
        saved = checkpoint.load(latest)
        was = saved["config"]
        was.run.out_dir, was.run.torch_threads = config.run.out_dir, config.run.torch_threads  # (not play)
        other = config_differences(was, config, tuple(config.to_dict()))
        if other:
            raise SystemExit(
                f"{run_dir} holds a run of other settings (saved -> asked: {other}); "
                "give another --runs folder to train these"
            )
        if saved["steps"] >= args.steps:
            return run_dir
    Trainer(config, overwrite=True).train(progress=not args.no_progress)  # (an unfinished run: anew)
    return run_dir


def training_seconds(run: Path) -> float:
    """From the run's TensorBoard log's creation (its file name's time) to its last checkpoint."""
    started = min(int(log.name.split(".")[3]) for log in (run / "tb").glob("events.out.tfevents.*"))
    return (run / "checkpoints" / "latest.pt").stat().st_mtime - started


def command_line(*words: str) -> list[str]:
    """``python -m training WORDS...`` for this interpreter."""
    return [sys.executable, "-m", "training", *words]


def benchmarked(summary: dict[str, Any], algorithm: str, runs: list[Path], games: int, out: Path) -> bool:
    """Whether ``summary`` (in ``out``) is the benchmark of these runs as they are now: the same
    group of runs, the same games asked, and every run's checkpoint (by its content) among the
    pairings played."""
    group = summary["agents"].get(algorithm, {})
    if summary.get("games_asked") != games or group.get("runs") != [str(run) for run in runs]:
        return False
    if "iqm_ci_with_deals" not in group or not (out / "pairings.json").exists():  # (an older summary)
        return False
    played = json.loads((out / "pairings.json").read_text())["pairings"]
    names = {name for entry in played for name in (entry["first"], entry["second"])}
    return all(identity(contestant(str(run))) in names for run in runs)


def benchmark(algorithm: str, runs: list[Path], args: argparse.Namespace) -> dict[str, Any]:
    """The benchmark of the runs as one group (played unless ``--runs/benchmark-<algorithm>-
    <variant>`` holds it already: :func:`benchmarked`): its summary. A benchmark played again
    reads the pairings the folder holds (their keys are the checkpoints' contents and the
    games: a run trained since plays its pairings again, the others are read), and its
    ``pairings.json`` is kept beside ``--json`` (every deal's result: what any statistic is
    recomputed from)."""
    out = Path(args.runs) / f"benchmark-{algorithm}-{args.variant}"
    command = command_line(
        "benchmark",
        *map(str, runs),
        "--group",
        algorithm,
        "--variants",
        args.variant,
        "--games",
        str(args.games),
        "--workers",
        str(args.workers),
        "--out",
        str(out),
        "--resume",  # (the pairings an interrupted benchmark finished are not played again)
        *(["--no-progress"] if args.no_progress else []),
    )
    done = out / "summary.json"
    summary = json.loads(done.read_text()) if done.exists() else None
    if summary is None or not benchmarked(summary, algorithm, runs, args.games, out):
        played, partial = out / "pairings.json", out / "pairings.partial.json"
        if played.exists() and not partial.exists():  # (what is still valid is read, not replayed)
            shutil.copyfile(played, partial)
        subprocess.run(command, check=True, cwd=ROOT)
        summary = json.loads(done.read_text())
    shutil.copyfile(
        out / "pairings.json",
        raw_path(args).with_name(f"full_tables_{args.variant}_{algorithm}_pairings.json"),
    )
    return summary


def raw_path(args: argparse.Namespace) -> Path:
    """``--json``: the raw runs in marl-eval's layout."""
    return Path(args.json or ROOT / "benchmarks" / "results" / f"full_tables_{args.variant}.json")


def exploit(algorithm: str, run: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The best-response exploiter's result against the run's last checkpoint (trained unless
    ``--runs/exploit-<algorithm>/<run>`` holds it already: at least the steps and games asked,
    written after the run's last checkpoint): its exploit.json."""
    out = Path(args.runs) / f"exploit-{algorithm}" / run.name
    command = command_line(
        "exploit",
        str(run),
        "run.collector=vector",
        "--steps",
        str(args.exploit_steps),
        "--games",
        str(args.exploit_games),
        "--out-dir",
        str(out),
        "--overwrite",
        *(["--no-progress"] if args.no_progress else []),
    )
    found = sorted(out.glob("*/exploit.json"))
    result = json.loads(found[0].read_text()) if found else None
    newer = bool(found) and found[0].stat().st_mtime > (run / "checkpoints" / "latest.pt").stat().st_mtime
    if (
        result is None
        or not newer  # (an exploit of the run before it was trained again)
        or result["steps"] < args.exploit_steps
        or result["games"] < args.exploit_games  # (played: rounded up to whole deals)
    ):
        subprocess.run(command, check=True, cwd=ROOT)
        result = json.loads(next(out.glob("*/exploit.json")).read_text())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic", help="the variant (default classic)")
    parser.add_argument("--config", default=None, help="the training config (default configs/<variant>.yaml)")
    parser.add_argument("--algorithms", nargs="+", default=["ppo", "mmd"], help="default: ppo mmd")
    parser.add_argument(
        "--seeds", type=positive_int, default=5, help="seeds 1..N of each algorithm (default 5)"
    )
    parser.add_argument(
        "--steps", type=positive_int, default=1_000_000, help="decisions per run (default 1,000,000)"
    )
    parser.add_argument("--games", type=positive_int, default=200, help="games a pairing (default 200)")
    parser.add_argument("--workers", type=positive_int, default=1, help="benchmark processes (default 1)")
    parser.add_argument(
        "--exploit-steps",
        type=non_negative_int,
        default=500_000,
        help="the exploiter's training (default 500,000; 0: none)",
    )
    parser.add_argument(
        "--exploit-games", type=positive_int, default=1000, help="its matches (default 1,000)"
    )
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="more config overrides")
    parser.add_argument("--runs", default="runs/full", help="where the runs go (default runs/full)")
    parser.add_argument(
        "--csv", type=output_file, default=str(ROOT / "benchmarks" / "results" / "full_tables.csv")
    )
    parser.add_argument(
        "--json", type=output_file, default=None, help="default benchmarks/results/full_tables_<variant>.json"
    )
    parser.add_argument(
        "--plot", type=picture_file, default=None, help="default docs/assets/full_tables_<variant>.png"
    )
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    args.config = args.config or str(ROOT / "configs" / f"{args.variant}.yaml")
    json_path = raw_path(args)
    torch.set_num_threads(1)
    for algorithm in args.algorithms:
        runs = [train(algorithm, seed, args) for seed in range(1, args.seeds + 1)]
        summary = benchmark(algorithm, runs, args)
        group = summary["agents"][algorithm]
        scores = [summary["agents"][str(run)]["scores"][args.variant] for run in runs]
        seconds = [training_seconds(run) for run in runs]
        exploits = [exploit(algorithm, run, args) for run in runs] if args.exploit_steps else []
        runs_json = {}
        for seed, (score, spent) in enumerate(zip(scores, seconds, strict=True), start=1):
            point = {"step_count": args.steps, "score": [score], "seconds": [spent]}
            if exploits:
                point["exploiter_win_rate"] = [exploits[seed - 1]["win_rate"]]
            runs_json[f"run_{seed}"] = {"step_1": point}
        row = {
            "variant": args.variant,
            "algorithm": algorithm,
            "decisions": args.steps,
            "seeds": args.seeds,
            "games": summary["games_per_pairing"],
            "iqm": f"{group['iqm']:.4f}",
            "ci_low": f"{group['iqm_ci'][0]:.4f}",
            "ci_high": f"{group['iqm_ci'][1]:.4f}",
            "ci_deals_low": f"{group['iqm_ci_with_deals'][0]:.4f}",
            "ci_deals_high": f"{group['iqm_ci_with_deals'][1]:.4f}",
            "scores": " ".join(f"{s:.4f}" for s in scores),
            "exploiter_win_rates": " ".join(f"{e['win_rate']:.4f}" for e in exploits),
            "exploiter_intervals": " ".join(f"{e['low']:.4f}-{e['high']:.4f}" for e in exploits),
            "exploit_games": exploits[0]["games"] if exploits else "",
            "train_minutes": f"{sum(seconds) / 60:.1f}",
            "command": " ".join(
                [
                    "python benchmarks/full_tables.py",
                    f"--variant {args.variant} --algorithms {algorithm} --seeds {args.seeds}",
                    f"--steps {args.steps} --games {args.games} --exploit-steps {args.exploit_steps}",
                    f"--exploit-games {args.exploit_games}",
                    *(f"--set {' '.join(args.set)}" for _ in args.set[:1]),
                ]
            ),
        }
        replace_rows(Path(args.csv), CSV_FIELDS, ("variant", "algorithm", "decisions"), [row])
        raw = json.loads(json_path.read_text()) if json_path.exists() else {}  # (read late: others may write)
        raw.setdefault(args.variant, {}).setdefault("standard", {})[algorithm] = runs_json
        json_path.write_text(json.dumps(raw, indent=1) + "\n")
        print(f"{algorithm}: IQM {row['iqm']} [{row['ci_low']}, {row['ci_high']}] over {scores}", flush=True)
        plot(
            Path(args.csv),
            args.variant,
            args.steps,
            Path(args.plot or ROOT / "docs" / "assets" / f"full_tables_{args.variant}.png"),
        )
    return 0


def plot(csv_path: Path, variant: str, decisions: int, path: Path) -> None:
    """The variant's rows at these decisions: each seed's benchmark score and the group's IQM
    with its interval, and beside them each seed's exploiter win rate."""
    rows = [
        r
        for r in csv.DictReader(csv_path.open())
        if r["variant"] == variant and int(r["decisions"]) == decisions
    ]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 0.9 * len(rows) + 1.6), sharey=True)
    for y, row in enumerate(rows):
        scores = [float(s) for s in row["scores"].split()]
        iqm, low, high = float(row["iqm"]), float(row["ci_low"]), float(row["ci_high"])
        left.errorbar(iqm, y, xerr=[[iqm - low], [high - iqm]], fmt="s", color=f"C{y}", capsize=4)
        left.plot(scores, [y] * len(scores), "o", color=f"C{y}", alpha=0.4)
        rates = [float(w) for w in row["exploiter_win_rates"].split()]
        right.plot(rates, [y] * len(rates), "o", color=f"C{y}", alpha=0.6)
    left.set_yticks(range(len(rows)), [r["algorithm"] for r in rows])
    left.axvline(1.0, color="grey", linewidth=0.8)
    left.set_xlabel("benchmark score (0: random, 1: level with expert); IQM, 95% CI, seeds")
    right.axvline(0.5, color="grey", linewidth=0.8)
    right.set_xlabel("exploiter's win rate against each seed")
    fig.suptitle(f"{variant}, {decisions:,} decisions a run")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    run_script(main)
