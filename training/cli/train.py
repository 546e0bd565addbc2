"""``train``: self-play PPO from a YAML config, on this machine or with Ray actors collecting;
``algorithm=cfr`` and ``algorithm=mccfr`` solve the table's game tree instead (:func:`solve`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from training.cli.arguments import positive_int

if TYPE_CHECKING:  # (no train-extra import at the top: training.cli's rule)
    from domino_env.gametree import GameTree
    from training.eval.exploitability import Observed
    from training.model.config import Config


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "train", help="self-play PPO from a YAML config (algorithm=cfr or mccfr: CFR on the game tree)"
    )
    parser.add_argument("config", help="a YAML file in configs/")
    parser.add_argument(
        "overrides",
        nargs="*",
        default=[],  # (so a missing CONFIG is the one required argument named)
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
    from training.model.config import TREE_ALGORITHMS, load_config
    from training.rl.collect import CollectorFactory
    from training.rl.train import Trainer

    config = load_config(args.config, args.overrides)
    if config.algorithm in TREE_ALGORITHMS:
        return run_cfr(config, args)
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


def run_cfr(config: Config, args: argparse.Namespace) -> int:
    """``train`` with ``algorithm=cfr`` or ``mccfr``: no rollouts (so neither ``--ray`` nor
    ``--resume``)."""
    from training.model.config import ConfigError

    name = config.algorithm
    if uses_ray(args):
        raise ConfigError(f"algorithm={name} plays no games: --ray and --ray-address have nothing to collect")
    if args.resume is not None:
        raise ConfigError(
            f"algorithm={name} cannot --resume (its checkpoints hold the fitted network, not the "
            "solver's regrets): start the run over with --overwrite"
        )
    path = solve(config, overwrite=args.overwrite, progress=not args.no_progress)
    print(f"final checkpoint: {path}")
    return 0


def solve(
    config: Config,
    *,
    overwrite: bool = False,
    progress: bool = True,
    tree: GameTree | None = None,
    observed: Observed | None = None,
) -> Path:
    """An ``algorithm=cfr`` or ``mccfr`` run (:class:`training.rl.cfr.CFRSolver`), given the tree's
    observations (``training.eval.exploitability.observe_all``, read here unless ``observed``)
    and its network reader (``network_policy``); ``tree``: the config's table's, when the caller
    has it (the benchmark). Returns the final checkpoint."""
    from training.eval.exploitability import network_policy, observe_all
    from training.rl.cfr import CFRSolver

    solver = CFRSolver(config, overwrite=overwrite, tree=tree)
    size = solver.tree.size
    print(f"solving {config.env.variant} {config.env.options} ({size}) -> {solver.run_dir}")
    if observed is None:
        observed = observe_all(solver.tree, progress=progress, env=solver.env)
    return solver.train(observed, lambda model: network_policy(solver.tree, model, observed), progress)
