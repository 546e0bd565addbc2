"""Training ideas compared at equal wall time: each arm (a list of config overrides) trained on
several seeds for about the same wall-clock budget, each run scored as the benchmark scores it.

    python benchmarks/equal_time.py --config configs/classic.yaml --steps 1000000 --seeds 3 \\
        --arm ppo= --arm distill=distill.share=0.05

**Equal wall time.** An idea that costs time per decision (a search labelling positions, a
larger network) must be compared at the same wall time, not the same decisions. Time here is
the training process's CPU time (user and system, one torch thread): on one core it is the wall
time, and unlike wall time it does not stretch when other jobs share the machine. First every
arm trains ``--calibrate`` decisions (seed 0); the first arm then trains ``--steps`` decisions a
run, and every other arm ``--steps`` times the first arm's calibration seconds over its own,
rounded down to whole rollouts. Each run's own CPU seconds are measured too and printed beside
its score, so the table shows how equal the budgets came out (a cost that changes as the policy
learns, as a search's does, moves them apart).

**The score.** Every run plays the benchmark's pairing against ``expert`` (protocol v2: the
variant's standard table, ``--games`` whole matches on the protocol's duplicate deals, the
run seeded as the benchmark seeds a first agent): its win rate with the 95% Wilson interval
over deals, and the benchmark's normalized score ``(W - W(random)) / (1/sides - W(random))``,
``W(random)`` read from the benchmark reference (played here if the reference lacks it). The
other rungs of the ladder do not enter the score, so they are not played.

Runs go to ``--out/<arm>-<seed>``; a run whose last checkpoint has its decisions is not trained
again, and its CPU seconds and its pairing are kept beside it (``equal_time.json``), as are
the arms' calibrations (``calibration_<decisions>.json``, one file per ``--calibrate``: an arm
is timed once per size), so an interrupted comparison goes on where it stopped. A row per run
goes to ``--csv`` (replacing rows of the same config, arm and seed), and a table per arm is
printed.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import domino_env  # noqa: E402
from training.cli import OneLineParser, run_script  # noqa: E402
from training.cli.arguments import output_file  # noqa: E402
from training.eval.arena import positive_int  # noqa: E402
from training.eval.benchmark import (  # noqa: E402
    BOTTOM,
    REFERENCE,
    TOP,
    Store,
    Task,
    key_of,
    normalized,
    play_task,
    standard_table,
    win_rate_interval,
)
from training.eval.evaluate import rules_table  # noqa: E402
from training.eval.report import replace_rows  # noqa: E402
from training.matches import whole_deals  # noqa: E402
from training.model import checkpoint  # noqa: E402
from training.model.config import load_config  # noqa: E402

CSV_FIELDS = (
    "config",
    "arm",
    "overrides",
    "seed",
    "decisions",
    "cpu_seconds",
    "games",
    "win_rate",
    "ci_low",
    "ci_high",
    "score",
    "command",
)


def parse_arm(text: str) -> tuple[str, list[str]]:
    """``NAME=KEY=VALUE,KEY=VALUE`` (``NAME=``: the config as it is) -> name, overrides; a comma
    inside brackets belongs to its value (``network.hidden=[512,512]``)."""
    name, _, rest = text.partition("=")  # (a bare NAME: the config as it is, as NAME=)
    if not name:
        raise argparse.ArgumentTypeError(f"an arm is NAME=OVERRIDES (NAME= for none), got {text!r}")
    overrides = [o for o in re.split(r",(?![^\[]*\])", rest) if o]
    for override in overrides:
        if "=" not in override:
            raise argparse.ArgumentTypeError(
                f"arm {name}: override {override!r} must look like section.key=value"
            )
        if override.partition("=")[0].strip().startswith("env."):  # (the score plays the standard table)
            raise argparse.ArgumentTypeError(
                f"arm {name}: {override} changes the table; arms train the config's"
            )
    return name, overrides


def train(config: str, overrides: list[str], steps: int, run: Path) -> float:
    """Train ``run`` for ``steps`` decisions (a subprocess, so runs share nothing, on one torch
    thread); its seconds of CPU time."""
    command = [
        sys.executable,
        "-m",
        "training",
        "train",
        config,
        *overrides,
        f"run.total_steps={steps}",
        "eval.every=0",
        f"run.out_dir={run.parent}",
        f"run.name={run.name}",
        "--overwrite",
        "--no-progress",
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bottom_share(variant: str, games: int, out: Path) -> float:
    """``random``'s win rate against ``expert`` on the protocol's pairing: the score's 0 (read
    from the reference, else played once and kept in ``out``)."""
    kept = out / f"random_vs_expert_{games}.json"
    if kept.exists():
        return float(json.loads(kept.read_text()))
    match = Store.load(REFERENCE).matches.get(key_of(variant, "expert", "random", games))
    if match is None:
        match = play_task(Task(variant, "expert", "random", games))
    share = 1.0 - float(np.mean(match.deal_shares()))
    kept.write_text(json.dumps(share) + "\n")
    return share


def measured(run: Path, games: int, variant: str) -> dict[str, Any]:
    """The run's pairing against ``expert`` (played unless kept in its equal_time.json)."""
    path = run / "equal_time.json"
    kept = json.loads(path.read_text())
    if kept.get("games") != games:
        match = play_task(Task(variant, str(run), "expert", games))
        low, high = win_rate_interval(match)
        kept |= {"games": games, "win_rate": float(np.mean(match.deal_shares())), "ci": [low, high]}
        path.write_text(json.dumps(kept, indent=1) + "\n")
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "classic.yaml"))
    parser.add_argument("--arm", action="append", type=parse_arm, required=True, help="NAME=K=V,K=V")
    parser.add_argument("--seeds", type=positive_int, default=3, help="seeds 1..N an arm (default 3)")
    parser.add_argument(
        "--steps", type=positive_int, default=1_000_000, help="the first arm's decisions a run"
    )
    parser.add_argument(
        "--calibrate", type=positive_int, default=100_000, help="decisions of each arm's timing run"
    )
    parser.add_argument(
        "--games", type=positive_int, default=200, help="matches against expert a run (default 200)"
    )
    parser.add_argument("--out", default="runs/equal_time")
    parser.add_argument(
        "--csv", type=output_file, default=str(ROOT / "benchmarks" / "results" / "equal_time.csv")
    )
    args = parser.parse_args(argv)
    arms: dict[str, list[str]] = dict(args.arm)
    if len(arms) < len(args.arm):
        raise ValueError(f"--arm names each arm once: {', '.join(name for name, _ in args.arm)}")
    out = Path(args.out)
    base = load_config(args.config, [])
    for overrides in arms.values():  # (every arm's config checked before the first one trains)
        load_config(args.config, overrides)
    variant, rollout = base.env.variant, base.run.num_envs * base.run.rollout_steps
    if rules_table(variant, base.env.options) != rules_table(variant, standard_table(variant)):
        raise SystemExit(f"{args.config} does not train {variant}'s standard table, which the score plays")
    rules = domino_env.raw_env(variant, **base.env.options).rules
    games, sides = whole_deals(args.games, rules), 2 if rules.teams else rules.num_players
    calibration = out / f"calibration_{args.calibrate}.json"
    timing = json.loads(calibration.read_text()) if calibration.exists() else {}
    for name, overrides in arms.items():
        if name not in timing:
            run = out / f"calibrate-{name}"
            timing[name] = train(args.config, [*overrides, "run.seed=0"], args.calibrate, run)
            out.mkdir(parents=True, exist_ok=True)
            calibration.write_text(json.dumps(timing, indent=1) + "\n")
    first = next(iter(arms))
    budget = {n: max(rollout, int(args.steps * timing[first] / timing[n]) // rollout * rollout) for n in arms}
    for seed in range(1, args.seeds + 1):
        for name, overrides in arms.items():
            run = out / f"{name}-{seed}"
            latest, kept = run / "checkpoints" / "latest.pt", run / "equal_time.json"
            if kept.exists() and int(checkpoint.load(latest)["steps"]) >= budget[name]:
                continue
            seconds = train(args.config, [*overrides, f"run.seed={seed}"], budget[name], run)
            kept.write_text(json.dumps({"cpu_seconds": seconds}) + "\n")
    low = bottom_share(variant, games, out)
    config = Path(args.config).resolve()
    shown = config.relative_to(ROOT) if config.is_relative_to(ROOT) else config
    command = (
        f"python benchmarks/equal_time.py --config {shown} --steps {args.steps} --seeds {args.seeds} "
        f"--calibrate {args.calibrate} --games {args.games}"
        + "".join(f" --arm {n}={','.join(o)}" for n, o in arms.items())
    )
    rows: list[dict[str, Any]] = []
    for name, overrides in arms.items():
        for seed in range(1, args.seeds + 1):
            run = out / f"{name}-{seed}"
            result = measured(run, games, variant)
            # (the protocol's own formula: random's share is the 0, expert's mirror 1/sides the 1)
            score = normalized({BOTTOM: [low], TOP: [1 / sides], "run": [result["win_rate"]]})["run"][0]
            rows.append(
                {
                    "config": Path(args.config).name,
                    "arm": name,
                    "overrides": " ".join(overrides),
                    "seed": seed,
                    "decisions": budget[name],
                    "cpu_seconds": f"{result['cpu_seconds']:.1f}",
                    "games": games,
                    "win_rate": f"{result['win_rate']:.4f}",
                    "ci_low": f"{result['ci'][0]:.4f}",
                    "ci_high": f"{result['ci'][1]:.4f}",
                    "score": f"{score:.4f}",
                    "command": command,
                }
            )
    replace_rows(Path(args.csv), CSV_FIELDS, ("config", "arm", "seed"), rows)
    print(f"{variant}: {games} matches a run against expert; W(random) = {low:.3f}")
    print(
        "| arm | decisions | CPU minutes (each seed) | win rate vs expert (each seed) | score (each) | mean |"
    )
    print("|---|---|---|---|---|---|")
    for name in arms:
        mine = [r for r in rows if r["arm"] == name]
        minutes = " ".join(f"{float(r['cpu_seconds']) / 60:.1f}" for r in mine)
        rates = " ".join(f"{float(r['win_rate']):.1%}" for r in mine)
        scores = [float(r["score"]) for r in mine]
        mean = sum(scores) / len(scores) if scores else math.nan
        listed = " ".join(f"{s:.2f}" for s in scores)
        print(f"| {name} | {budget[name]:,} | {minutes} | {rates} | {listed} | {mean:.2f} |")
    return 0


if __name__ == "__main__":
    run_script(main)
