"""``train``: self-play PPO from a YAML config, on this machine or with Ray actors collecting."""

from __future__ import annotations

import argparse

from training.cli.arguments import positive_int


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("train", help="self-play PPO from a YAML config")
    parser.add_argument("config", help="a YAML file in configs/")
    parser.add_argument(
        "overrides",
        nargs="*",
        help="dotted overrides, e.g. ppo.learning_rate=1e-3 (right after the config, before any --option)",
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--resume", help="continue from this checkpoint, or from a run folder's latest")
    start.add_argument(
        "--overwrite", action="store_true", help="delete an earlier run in the same run folder and start over"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--ray",
        type=positive_int,
        metavar="N",
        help="collect rollouts on N Ray actors (the learner stays here)",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="join an existing Ray cluster (auto, host:port); without --ray, one worker per CPU but one",
    )
    return parser


def uses_ray(args: argparse.Namespace) -> bool:
    """Whether the rollouts are collected on Ray actors (which needs the ray extra)."""
    return args.ray is not None or bool(args.ray_address)


def run(args: argparse.Namespace) -> int:
    from training.model.config import load_config
    from training.rl.collect import CollectorFactory
    from training.rl.train import Trainer

    config = load_config(args.config, args.overrides)
    collector: CollectorFactory | None = None  # run.collector's
    if uses_ray(args):  # each worker runs run.collector's collector
        from training.rl.distributed import ray_collector

        collector = ray_collector(args.ray or 0, args.ray_address)
    trainer = Trainer(config, resume=args.resume, collector=collector, overwrite=args.overwrite)
    print(f"training {config.env.variant} {config.env.options} -> {trainer.run_dir}")
    try:
        path = trainer.train(progress=not args.no_progress)
    finally:
        trainer.collector.close()  # Ray workers
    print(f"final checkpoint: {path}")
    return 0
