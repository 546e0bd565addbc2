"""``demo``: the README's main job, a short training run on the default config, then its
evaluation against the baselines and the ratings of its checkpoints. Each call starts its run
folder (``runs/demo``, or ``--name``) over where that folder holds a run demo made (``make demo``
twice), or none; a run demo did not make (a ``train`` run, say) is refused, before any
training, unless ``--overwrite``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from training.cli.arguments import activate_hint, non_negative_int, positive_int


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("demo", help="the main job: a short training run, then its evaluation")
    parser.add_argument("--config", default="configs/all_fives.yaml", help="default: configs/all_fives.yaml")
    parser.add_argument("overrides", nargs="*", help="dotted overrides, e.g. run.out_dir=/tmp/runs")
    parser.add_argument(
        "--steps", type=positive_int, default=600_000, help="training decisions (default 600,000)"
    )
    parser.add_argument(
        "--name",
        default="demo",
        help="run folder name (default demo); a run demo made there is replaced, another refused",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="delete an earlier run in the run folder that demo did not make (a train run's) and start over",
    )
    parser.add_argument(
        "--games", type=positive_int, default=500, help="evaluation matches per baseline (default 500)"
    )
    parser.add_argument(
        "--rating-games", type=positive_int, default=10, help="games per pair in the rating (default 10)"
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="deal seed of the evaluation and rating games (default 0; training uses run.seed)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def run(args: argparse.Namespace) -> int:
    from training.eval import evaluate, ratings
    from training.model.config import load_config
    from training.rl.train import Trainer, check_own_run, mark_own_run

    # 100 matches per baseline at each evaluation: the curve, not the final verdict, which the
    # 500-match evaluation gives. A checkpoint every 40 iterations, not 10: over the default
    # 600,000 steps 8 (and latest.pt) of about 5 MB, 45 MB not 157, as many as the rating samples.
    if not args.name.strip():
        raise ValueError("--name must be a folder name for the run, got an empty one (default demo)")
    overrides = [
        f"run.total_steps={args.steps}",
        f"run.name={json.dumps(args.name)}",  # (a string as typed: --name 123 or true is a folder too)
        "eval.games=100",
        "run.checkpoint_every=40",
        *args.overrides,
    ]
    config = load_config(args.config, overrides)
    # the demo's own run is replaced each time; another run there only with --overwrite
    run_dir = Path(config.run.out_dir) / config.run_name
    check_own_run(run_dir, "demo", args.overwrite, "--name", "--overwrite (make demo DEMO_ARGS=--overwrite)")
    trainer = Trainer(config, overwrite=True)
    mark_own_run(trainer.run_dir, "demo")
    print(  # the config's steps: a run.total_steps= override wins over --steps
        f"1/3 training {config.env.variant} {config.env.options} for {config.run.total_steps:,} steps"
        f" -> {trainer.run_dir}"
    )
    progress = not args.no_progress
    trainer.train(progress=progress)
    print(f"2/3 the latest checkpoint against the baselines, {args.games} whole matches each")
    evaluate.evaluate_final(trainer.run_dir, games=args.games, seed=args.seed, progress=progress)
    print("3/3 ratings of the run's checkpoints and the baselines, with the learning curve")
    ratings.rate_run(trainer.run_dir, games=args.rating_games, seed=args.seed, progress=progress)
    folder = trainer.run_dir
    print(f"next{activate_hint()}: watch the curves with tensorboard --logdir {folder / 'tb'},")
    print(f"  play the agent with python -m training play --opponent {folder},")
    print(f"  or measure it against search with python -m training evaluate {folder} search --games 20")
    return 0
