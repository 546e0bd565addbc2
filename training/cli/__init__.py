"""Command line: ``python -m training <command> ...`` (also ``domino-train``): train, evaluate,
exploit, exploitability, rate, ladder, play, record, serve, demo, ship and benchmark.

This module imports nothing of the train extra at its top, so that without it (a plain
``pip install -e .``) :func:`main` can say so in one line instead of a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import domino_env

# The import names of each extra's packages (pyproject.toml). Every command needs the train
# extra; a few need one more (COMMAND_EXTRAS, and `train --ray` the ray extra).
EXTRA_MODULES = {
    "train": ("torch", "yaml", "tqdm", "tensorboard", "matplotlib", "openskill", "scipy", "choix"),
    "openspiel": ("pyspiel",),
    "serve": ("fastapi", "uvicorn"),
    "ray": ("ray",),
}
COMMAND_EXTRAS = {"exploitability": "openspiel", "serve": "serve"}


def missing_extra(extra: str) -> str | None:
    """One line naming the extra's modules that are not installed (looked up, not imported) and
    how to install them; None when every one is there."""
    missing = [name for name in EXTRA_MODULES[extra] if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"the {extra} extra is missing (no module {', '.join(missing)}): install it with "
        f'pip install -e ".[{extra}]" in a checkout, or pip install "domino-env[{extra}]"'
    )


def extras_needed(args: argparse.Namespace) -> list[str]:
    """The extras a parsed command needs beyond the train extra."""
    extra = COMMAND_EXTRAS.get(args.command)
    ray = args.command == "train" and (args.ray is not None or args.ray_address)
    return [e for e in (extra, "ray" if ray else None) if e is not None]


def train_command(args: argparse.Namespace) -> int:
    import numpy as np

    from training.model.checkpoint import CheckpointError
    from training.model.config import Config, ConfigError, load_config
    from training.rl.rollout import Collector
    from training.rl.train import Trainer

    collector: Callable[[Config, np.random.Generator], Any] = Collector
    if args.ray is not None or args.ray_address:
        from training.rl.distributed import ray_collector

        collector = ray_collector(args.ray or 0, args.ray_address)
    try:
        config = load_config(args.config, args.overrides)
        trainer = Trainer(config, resume=args.resume, collector=collector, overwrite=args.overwrite)
    except (ConfigError, CheckpointError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"training {config.env.variant} {config.env.options} -> {trainer.run_dir}")
    try:
        path = trainer.train(progress=not args.no_progress)
    except KeyboardInterrupt:
        return 130
    finally:
        getattr(trainer.collector, "close", lambda: None)()  # Ray workers
    print(f"final checkpoint: {path}")
    return 0


def demo_command(args: argparse.Namespace) -> int:
    """The README's main job: a short run on the default config, then its evaluation."""
    from training.eval import evaluate, ratings
    from training.model.config import load_config
    from training.rl.train import Trainer

    # 100 matches per baseline at each evaluation: the curve, not the final verdict, which the
    # 500-match evaluation gives. A checkpoint every 40 iterations, not 10: over the default
    # 600,000 steps 8 (and latest.pt) of about 5 MB, 45 MB not 157, as many as the rating samples.
    overrides = [
        f"run.total_steps={args.steps}",
        f"run.name={args.name}",
        "eval.games=100",
        "run.checkpoint_every=40",
        *args.overrides,
    ]
    try:
        config = load_config(args.config, overrides)
        trainer = Trainer(config, overwrite=True)  # the demo run is replaced each time
    except ValueError as err:
        return _fail(err)
    print(  # the config's steps: a run.total_steps= override wins over --steps
        f"1/3 training {config.env.variant} {config.env.options} for {config.run.total_steps:,} steps"
        f" -> {trainer.run_dir}"
    )
    progress = not args.no_progress
    try:
        trainer.train(progress=progress)
        print(f"2/3 the latest checkpoint against the baselines, {args.games} whole matches each")
        evaluate.evaluate_final(trainer.run_dir, games=args.games, seed=args.seed, progress=progress)
        print("3/3 ratings of the run's checkpoints and the baselines, with the learning curve")
        ratings.rate_run(trainer.run_dir, games=args.rating_games, seed=args.seed, progress=progress)
    except KeyboardInterrupt:
        return 130
    run = trainer.run_dir
    print(f"next{_activate_hint()}: watch the curves with tensorboard --logdir {run / 'tb'},")
    print(f"  play the agent with python -m training play --opponent {run},")
    print(f"  or measure it against search with python -m training evaluate {run} search --games 20")
    return 0


def _activate_hint() -> str:
    """`` (source .venv/bin/activate first)`` when this runs in a virtual environment, so that the
    commands suggested after it find this interpreter and its packages; empty otherwise."""
    script = Path(sys.prefix) / "bin" / "activate"
    if sys.prefix == sys.base_prefix or not script.is_file():
        return ""
    with contextlib.suppress(ValueError):  # shown relative to here when it is below here
        script = script.relative_to(Path.cwd())
    return f" (source {script} first)"


def ship_command(args: argparse.Namespace) -> int:
    from training.eval.ship import ship

    try:
        ship(
            args.config,
            args.overrides,
            args.agents_dir,
            args.games,
            args.seed,
            not args.no_progress,
            args.opponents,
            search_games=args.search_games,
            measure_only=args.measure_only,
            guided=args.guided,
        )
    except ValueError as err:
        return _fail(err)
    except KeyboardInterrupt:
        return 130
    print(f"written: {Path(args.agents_dir) / 'results.csv'} and {Path(args.agents_dir) / 'README.md'}")
    return 0


def benchmark_command(args: argparse.Namespace) -> int:
    import math

    from training.eval.benchmark import PROTOCOL_GAMES, REFERENCE, benchmark, two_places

    try:
        summary = benchmark(
            args.agents,
            args.variants,
            args.games,
            args.out,
            args.group,
            args.agents_dir,
            not args.no_progress,
            args.workers,
            None if args.fresh else args.reference or REFERENCE,
            args.record,
            overwrite=args.overwrite,
        )
    except ValueError as err:
        return _fail(err)
    except KeyboardInterrupt:
        print("interrupted: nothing written", file=sys.stderr)
        return 130
    if summary["exploratory"]:
        few = summary["games_per_pairing"] < PROTOCOL_GAMES
        rough = ", and a bootstrap over so few deals gives IQM intervals too narrow to trust" if few else ""
        print(f"{summary['label']}: not comparable with the reference{rough}")
    for label, entry in summary["agents"].items():
        low, high = entry["iqm_ci"]
        interval = (
            "n/a (too few distinct outcomes)"
            if math.isnan(low)
            else f"[{two_places(low, sign=True)}, {two_places(high, sign=True)}]"
        )
        print(f"{label:<24} IQM score {two_places(entry['iqm'], sign=True)}  95% CI {interval}")
    for agent, variants in summary["skipped"].items():
        print(f"{agent}: not played on {', '.join(variants)} (a checkpoint plays only its own table)")
    pairings = summary["pairings"]
    read = f", {pairings['read']} read from {pairings['reference']}" if pairings["read"] else ""
    print(f"pairings: {pairings['played']} played{read}")
    written = Path(args.out) / "benchmark.csv"
    also = "benchmark.md, summary.json, benchmark.png, pairings.json"
    print(f"written: {written}, {also} ({summary['label']})")
    if args.record:
        print(f"game records: {args.record} (a JSON file per game played; --fresh plays every pairing)")
    return 0


def ladder_command(args: argparse.Namespace) -> int:
    from training.eval import ladder

    if args.rate is None and args.against is not None:
        return _fail(ValueError("--against goes with --rate AGENT: the ladder file to rate it against"))
    if args.rate is not None:
        return _rate_on_ladder(args)
    try:
        plan = ladder.prepare_ladder(
            args.agents,
            args.variant,
            args.option,
            args.config,
            args.games,
            args.seed,
            args.out,
            args.workers,
            args.overwrite,
            args.reference,
        )
    except ValueError as err:
        return _fail(err)
    print(plan.header())
    try:
        played = ladder.play_ladder(plan, progress=not args.no_progress)
    except KeyboardInterrupt:  # the fit needs every pairing
        print("interrupted: the ladder needs every pairing, nothing written", file=sys.stderr)
        return 130
    print("\n".join(ladder.report_lines(played)))
    print(f"method: {ladder.METHOD}")
    paths = ladder.write_ladder(played, plan.folder)
    print(f"written: {', '.join(str(p) for p in paths)}")
    return 0


def _rate_on_ladder(args: argparse.Namespace) -> int:
    from training.eval import ladder

    try:
        if args.against is None:
            raise ValueError("--rate needs --against DIR/ladder.json: the ladder to rate the agent on")
        if args.agents:
            raise ValueError(
                f"--rate rates one agent against a ladder's rungs: leave out {' '.join(args.agents)}"
            )
        if args.variant or args.option or args.config or args.seed is not None:
            raise ValueError(
                "--rate plays on the ladder's own table and deals: leave out --variant, --option, "
                "--config and --seed"
            )
        plan = ladder.prepare_rating(
            args.rate, args.against, args.games, args.out, args.workers, args.overwrite
        )
    except ValueError as err:
        return _fail(err)
    print(plan.header())
    try:
        rated = ladder.play_rating(plan, progress=not args.no_progress)
    except KeyboardInterrupt:
        print("interrupted: the rating needs every rung, nothing written", file=sys.stderr)
        return 130
    print("\n".join(ladder.rating_lines(plan, rated)))
    print(f"written: {ladder.write_rating(plan, rated)}")
    return 0


def _fail(err: Exception) -> int:
    """A setup problem (unknown agent, bad checkpoint, wrong table) as one line, without a traceback."""
    print(f"error: {err}", file=sys.stderr)
    return 2


def evaluate_command(args: argparse.Namespace) -> int:
    from training.eval import evaluate, report

    try:
        plan = evaluate.prepare([args.agent, *args.opponents], args.variant, args.option, args.config)
        csv_path = report.writable_file(args.csv) if args.csv else None  # before any game
        record = report.writable_folder(args.record) if args.record else None
        played = evaluate.evaluate_pairings(
            plan,
            args.games,
            args.seed,
            args.first_only,
            progress=not args.no_progress,
            duplicate=args.duplicate,
            record=record,
        )
    except ValueError as err:  # CheckpointError and ConfigError are ValueErrors too
        return _fail(err)
    print(plan.header(plan.games(args.games, args.duplicate), args.seed, args.duplicate))
    results: list[evaluate.Result] = []
    try:
        for result in played:
            results.append(result)
    except KeyboardInterrupt:  # say so, and keep what finished
        total = len(plan.pairs(args.first_only))
        print(f"interrupted: {len(results)} of {total} pairings finished", file=sys.stderr)
        if results:
            print(report.format_results(results, plan.score_label))
        return 130
    print(report.format_results(results, plan.score_label))
    if args.duplicate:
        print(report.duplicate_gain(results))
    if csv_path is not None:
        report.write_rows(csv_path, report.RESULT_COLUMNS, [r.row() for r in results])
        print(f"written: {csv_path}")
    if record is not None:
        print(f"game records: {record} (a JSON file per game)")
    return 0


def exploit_command(args: argparse.Namespace) -> int:
    from training.eval import report
    from training.eval.exploit import RESULT_FILE, prepare_exploit, run_exploit

    try:
        plan = prepare_exploit(
            args.agent,
            args.variant,
            args.steps,
            args.games,
            args.seed,
            args.config,
            args.overrides,
            args.out_dir,
            args.overwrite,
        )
    except ValueError as err:  # CheckpointError and ConfigError are ValueErrors too
        return _fail(err)
    trainer = plan.trainer
    table = report.table_text(trainer.config.env.variant, trainer.config.env.options)
    print(
        f"exploiting {plan.opponent.label} on {table}: a best response trained for "
        f"{trainer.config.run.total_steps:,} steps -> {trainer.run_dir}"
    )
    try:
        outcome = run_exploit(plan, progress=not args.no_progress)
    except KeyboardInterrupt:
        return 130
    evaluation, result = outcome.evaluation, outcome.result
    print(evaluation.header(result.games, args.seed, duplicate=True))
    print(report.format_results([result], evaluation.score_label))
    print(f"written: {trainer.run_dir / RESULT_FILE} ({outcome.summary['minutes']:.1f} min in all)")
    return 0


def exploitability_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from training.eval import evaluate
    from training.eval.exploitability import measure

    try:
        contestants = [evaluate.contestant(name) for name in args.agents]
        texts = [*(args.option or []), *([f"preset={args.preset}"] if args.preset else [])]
        if args.config is not None or any(c.config is not None for c in contestants):
            variant, options = evaluate.resolve_table(contestants, args.variant, texts, args.config)
        elif args.variant is None:
            raise ValueError(
                "give --variant (and --preset or --option): no checkpoint or config names the table"
            )
        else:  # the table as given, nothing from a default config (its whole matches)
            variant, options = args.variant, evaluate.parse_options(texts)
        evaluate.check_fits(contestants, variant, options)
        report = measure(args.agents, variant, options, args.cfr_iterations, args.seed, not args.no_progress)
    except ValueError as err:
        return _fail(err)
    print(f"exact NashConv on {variant} {report.options} (0: a Nash equilibrium)")
    width = max(len(label) for label in [*report.agents, "CFR+"])
    for label, value in report.agents.items():
        print(f"  {label:<{width}}  {value:.6f}")
    for iteration, value in report.cfr:
        print(f"  {'CFR+':<{width}}  {value:.6f}  after {iteration} iterations")
    table, picture = report.write(Path(args.out_dir))
    print(f"written: {table}, {picture}")
    return 0


def rate_command(args: argparse.Namespace) -> int:
    from training.eval import ratings, report

    try:
        plan = ratings.rating_plan(args.run_dir, args.most)  # checks the run before any game
    except ValueError as err:
        return _fail(err)
    try:
        rated = ratings.rate(plan, args.games, args.seed, progress=not args.no_progress)
    except KeyboardInterrupt:  # ratings need every pairing, so there is nothing partial to show
        print("interrupted: the rating needs every pairing, nothing written", file=sys.stderr)
        return 130
    report.report_ratings(args.run_dir, plan, rated, args.games, args.seed)
    return 0


def play_command(args: argparse.Namespace) -> int:
    from training.apps.play import PERSON, check_seat, play
    from training.eval import evaluate, report
    from training.matches import RecordFolder

    try:
        plan = evaluate.prepare([args.opponent], args.variant, args.option, args.config)
        env = plan.env()
        opponent = plan.contestants[0]
        agent = opponent.agent(env, 0 if args.seed is None else args.seed + 1)
        check_seat(env, args.seat)
        folder = report.writable_folder(args.record) if args.record else None
    except ValueError as err:
        return _fail(err)
    records = recorder = None
    if folder is not None:
        records = RecordFolder(folder, plan.variant, plan.options, (PERSON, opponent.label))
        recorder = records.recorder(env, [args.seat])
    print(f"{report.table_text(plan.variant, plan.options)}: you are P{args.seat}, against {opponent.label}")
    try:
        play(env, args.seat, agent, opponent.label, args.seed, recorder=recorder)
    except (KeyboardInterrupt, EOFError):
        return 130
    if records is not None and recorder is not None:  # a game left unfinished too (its result is null)
        deal = time.strftime("%Y%m%d-%H%M%S") if args.seed is None else f"seed{args.seed}"
        path = domino_env.write_record(recorder.record(), records.path(f"seat{args.seat}-{deal}"))
        print(f"game record: {path}")
    return 0


def record_command(args: argparse.Namespace) -> int:
    from training.apps.record import prepare_recording, record
    from training.eval import report

    try:
        recording = prepare_recording(args.variant, args.agents, args.option, args.seed)
        path = report.writable_file(args.out)  # (after the agents: a bad name creates no folder)
        print(f"recording {recording.header}")
        frames = record(recording, path, args.fps, args.max_frames)
    except ValueError as err:
        return _fail(err)
    except KeyboardInterrupt:
        return 130
    print(f"written: {path} ({frames} frames)")
    return 0


def serve_command(args: argparse.Namespace) -> int:
    from training.apps.serve import listen, serve  # (main checked the serve extra)

    try:  # the port and the bind are checked before the address is announced
        listener = listen(args.host, args.port)
    except ValueError as err:
        return _fail(err)
    serve(listener, args.agents_dir)
    return 0


def _table_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variant",
        help=f"one of {', '.join(domino_env.SPECS)} (default: the checkpoint's, else all_fives)",
    )
    parser.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="table option, repeatable (num_players=4)"
    )
    parser.add_argument("--config", help="take variant and options from this training YAML")


def _threads_argument(parser: argparse.ArgumentParser) -> None:
    from training.eval.arena import positive_int

    # Agents act on small batches, where more threads only fight over the cores (a 2,000-game
    # evaluation of a board agent took 8 minutes with torch's default threads, 25 s with one).
    parser.add_argument("--torch-threads", type=positive_int, default=1, help="torch threads (default 1)")


def main(argv: list[str] | None = None) -> int:
    missing = missing_extra("train")
    if missing is not None:
        return _fail(ValueError(missing))
    from training.eval.arena import positive_int

    parser = argparse.ArgumentParser(
        prog="python -m training",
        description="Train, evaluate, rate, play and ship domino agents (also installed as domino-train).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="self-play PPO from a YAML config")
    train.add_argument("config", help="a YAML file in configs/")
    train.add_argument(
        "overrides",
        nargs="*",
        help="dotted overrides, e.g. ppo.learning_rate=1e-3 (right after the config, before any --option)",
    )
    start = train.add_mutually_exclusive_group()
    start.add_argument("--resume", help="continue from this checkpoint, or from a run folder's latest")
    start.add_argument(
        "--overwrite", action="store_true", help="delete an earlier run in the same run folder and start over"
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.add_argument(
        "--ray",
        type=positive_int,
        metavar="N",
        help="collect rollouts on N Ray actors (the learner stays here)",
    )
    train.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="join an existing Ray cluster (auto, host:port); without --ray, one worker per CPU but one",
    )
    train.set_defaults(run=train_command)

    evaluate = commands.add_parser(
        "evaluate",
        help="agents against each other, seats rotated: win rate with 95%% CI, reward, final score",
        description="Every pair of the agents plays --games seeded games with the seats rotated "
        "(both orders at 3-4 single seats, where one agent sits against copies of the other). "
        "Agents: random, greedy, search, search:N (N worlds per legal action), advanced, expert "
        "(the stronger search tiers), a checkpoint file or a run folder (its latest.pt).",
    )
    evaluate.add_argument(
        "agent", help="random, greedy, search[:N], advanced, expert, a checkpoint file or a run folder"
    )
    evaluate.add_argument("opponents", nargs="+", metavar="AGENT", help="more agents, the same kinds")
    _table_arguments(evaluate)
    evaluate.add_argument("--games", type=positive_int, default=100, help="games per pairing (default 100)")
    evaluate.add_argument("--seed", type=int, default=0, help="game g is dealt from seed + g (default 0)")
    evaluate.add_argument("--first-only", action="store_true", help="only the first agent against each other")
    evaluate.add_argument(
        "--duplicate",
        action="store_true",
        help="play every deal once per seating (2 players: twice, seats swapped), so the deal's luck "
        "cancels; --games is rounded up to whole deals, intervals are taken over deals",
    )
    evaluate.add_argument("--csv", help="also write the table to this CSV file")
    evaluate.add_argument(
        "--record", metavar="DIR", help="also write every game to DIR as a game record (a JSON file per game)"
    )
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    _threads_argument(evaluate)
    evaluate.set_defaults(run=evaluate_command)

    exploit = commands.add_parser(
        "exploit",
        help="how exploitable is an agent: train a best response against it, its win rate with 95%% CI",
        description="PPO trains a fresh policy with AGENT, frozen, in every seat of the other side "
        "in every training game (no self-play, no snapshots), then plays it against AGENT on "
        "duplicate deals (whole matches, each deal once per seating): the win rate with its 95% "
        "interval, also written to exploit.json in the run folder.",
    )
    exploit.add_argument(
        "agent", help="random, greedy, search[:N], advanced, expert, a checkpoint file or a run folder"
    )
    exploit.add_argument(
        "overrides",
        nargs="*",
        help="dotted training overrides right after AGENT, e.g. run.num_envs=16 (exploit sets pool, "
        "eval.opponents, env.variant, run.total_steps, run.seed and run.out_dir itself)",
    )
    exploit.add_argument(
        "--variant",
        help=f"one of {', '.join(domino_env.SPECS)} (default: the checkpoint's; needed for any other AGENT)",
    )
    exploit.add_argument("--config", help="training YAML (default configs/<variant>.yaml)")
    exploit.add_argument(
        "--steps",
        type=int,
        default=500_000,
        help="training decisions, both sides' moves (default 500,000)",
    )
    exploit.add_argument(
        "--games",
        type=int,
        default=1000,
        help="evaluation matches against AGENT, rounded up to whole deals (default 1000)",
    )
    exploit.add_argument(
        "--seed", type=int, default=1, help="training seed, and deal seed of the evaluation (default 1)"
    )
    exploit.add_argument("--out-dir", default="runs", help="where the run folder goes (default runs)")
    exploit.add_argument(
        "--overwrite", action="store_true", help="delete an earlier run in the same run folder and start over"
    )
    exploit.add_argument("--no-progress", action="store_true", help="no progress bars")
    exploit.set_defaults(run=exploit_command)

    exploitability = commands.add_parser(
        "exploitability",
        help="exact NashConv of agents on a tiny table (through OpenSpiel), with CFR+'s curve",
        description="Walks every deal and move of a small table (OpenSpiel's exploitability.nash_conv "
        "through domino_env.integrations.openspiel): how much best responses gain against each agent "
        "(0 at a Nash equilibrium), and the same for CFR+'s average policy as it converges. A table "
        "too large for an exact walk is refused with its size.",
    )
    exploitability.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help="random, greedy, search[:N], advanced, expert, checkpoints, run folders",
    )
    _table_arguments(exploitability)
    exploitability.add_argument("--preset", help="a named table, e.g. tiny (same as --option preset=tiny)")
    exploitability.add_argument(
        "--cfr-iterations",
        type=int,
        default=64,
        help="CFR+ iterations for the reference (default 64; 0: none)",
    )
    exploitability.add_argument(
        "--seed", type=int, default=0, help="seed of the agents that draw (default 0)"
    )
    exploitability.add_argument(
        "--out-dir", default="runs/exploitability", help="where exploitability.csv and .png go"
    )
    exploitability.add_argument("--no-progress", action="store_true", help="no progress bar")
    exploitability.set_defaults(run=exploitability_command)

    rate = commands.add_parser(
        "rate",
        help="OpenSkill ratings of a run's checkpoints and the baselines -> ratings.csv, ratings.png",
    )
    rate.add_argument("run_dir", help="a training run folder (<out_dir>/<name>)")
    rate.add_argument("--games", type=positive_int, default=20, help="games per pair of agents (default 20)")
    rate.add_argument("--seed", type=int, default=0, help="game g is dealt from seed + g (default 0)")
    rate.add_argument(
        "--most", type=positive_int, default=8, help="checkpoints sampled over the run (default 8)"
    )
    rate.add_argument("--no-progress", action="store_true", help="no progress bar")
    _threads_argument(rate)
    rate.set_defaults(run=rate_command)

    play = commands.add_parser("play", help="play in the terminal against an agent")
    _table_arguments(play)
    play.add_argument(
        "--opponent",
        default="greedy",
        help="greedy, random, search[:N], advanced, expert, checkpoint or run folder",
    )
    play.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1 (default 0)")
    play.add_argument("--seed", type=int, help="deal seed (default: a new deal each time)")
    play.add_argument(
        "--record",
        metavar="DIR",
        help="write the game to DIR as a game record (a JSON file), finished or not",
    )
    _threads_argument(play)
    play.set_defaults(run=play_command)

    demo = commands.add_parser("demo", help="the main job: a short training run, then its evaluation")
    demo.add_argument("--config", default="configs/all_fives.yaml", help="default: configs/all_fives.yaml")
    demo.add_argument("overrides", nargs="*", help="dotted overrides, e.g. run.out_dir=/tmp/runs")
    demo.add_argument(
        "--steps", type=positive_int, default=600_000, help="training decisions (default 600,000)"
    )
    demo.add_argument("--name", default="demo", help="run folder name (default demo)")
    demo.add_argument(
        "--games", type=positive_int, default=500, help="evaluation matches per baseline (default 500)"
    )
    demo.add_argument(
        "--rating-games", type=positive_int, default=10, help="games per pair in the rating (default 10)"
    )
    demo.add_argument(
        "--seed",
        type=int,
        default=0,
        help="deal seed of the evaluation and rating games (default 0; training uses run.seed)",
    )
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.set_defaults(run=demo_command)

    ship = commands.add_parser(
        "ship",
        help="train a config and export it to agents/<variant>.pt with its win rates (agents/results.csv)",
    )
    ship.add_argument("config", help="a YAML file in configs/")
    ship.add_argument("overrides", nargs="*", help="dotted overrides, e.g. run.total_steps=2000000")
    ship.add_argument("--agents-dir", default="agents", help="where shipped agents live (default agents)")
    ship.add_argument(
        "--opponents",
        nargs="+",
        default=["random", "greedy"],
        metavar="AGENT",
        help="agents it is measured against, e.g. random greedy search (default random greedy)",
    )
    ship.add_argument(
        "--games", type=positive_int, default=2000, help="matches against each baseline (default 2000)"
    )
    ship.add_argument(
        "--search-games",
        type=positive_int,
        default=1000,
        help="matches against each search opponent (default 1000)",
    )
    ship.add_argument(
        "--measure-only",
        action="store_true",
        help="no training: measure the agent already shipped against --opponents (its other columns stay)",
    )
    ship.add_argument(
        "--guided",
        action="store_true",
        help="measure the policy-guided search search:agents/<variant>.pt instead (a row of its own)",
    )
    ship.add_argument(
        "--seed",
        type=int,
        default=0,
        help="deal seed of the evaluation games (default 0; training uses run.seed)",
    )
    ship.add_argument(
        "--no-progress", action="store_true", help="no progress bars (the final table is still printed)"
    )
    ship.set_defaults(run=ship_command)

    record = commands.add_parser(
        "record",
        help="record a game between agents as an animated GIF, a frame per move",
        description="One episode (a round; --option episode=match for a whole match) drawn as the "
        "table's rgb_array picture after the deal and after every move. Agents take the seats in "
        "turn: random, greedy, search[:N], advanced, expert, a checkpoint file or a run folder.",
    )
    record.add_argument("variant", help=f"one of {', '.join(domino_env.SPECS)}")
    record.add_argument(
        "agents", nargs="+", metavar="AGENT", help="an agent per seat, or fewer taking the seats in turn"
    )
    record.add_argument("--out", required=True, help="the GIF file to write")
    record.add_argument(
        "--seed", type=int, default=0, help="deal seed; seat s's agent is seeded SEED+1+s (default 0)"
    )
    record.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="table option, repeatable (num_players=4, episode=match; default episode=round)",
    )
    record.add_argument("--fps", type=float, default=2.0, help="frames a second (default 2)")
    record.add_argument(
        "--max-frames", type=positive_int, help="stop the game after this many frames (default: all)"
    )
    _threads_argument(record)
    record.set_defaults(run=record_command)

    bench = commands.add_parser(
        "benchmark",
        help="agents against the ladder (random, greedy, search, advanced, expert, the shipped agent) "
        "on every variant, protocol v2 -> benchmark.csv, summary.json, benchmark.png",
        description="Each agent plays the ladder on each variant's standard table, whole matches, "
        "duplicate deals from the protocol's fixed deal seeds. Scores, from the win rate against "
        "expert: 0 plays like random, 1 holds its own against expert; summary.json holds their "
        "interquartile mean with a stratified bootstrap interval. Fewer than 200 games a pairing "
        "or only some variants is an exploratory run, labelled so.",
    )
    bench.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help="baselines, search[:N], advanced, expert, checkpoints, run folders, shipped",
    )
    bench.add_argument("--variants", nargs="+", help="variants to play (default all)")
    bench.add_argument(
        "--games", type=positive_int, default=200, help="games per pairing (default 200, the protocol's)"
    )
    bench.add_argument("--out", default="runs/benchmark", help="output folder (default runs/benchmark)")
    bench.add_argument("--group", help="the agents are runs (seeds) of one algorithm: aggregate them as NAME")
    bench.add_argument("--agents-dir", default="agents", help="where the shipped agents are (default agents)")
    bench.add_argument(
        "--workers", type=positive_int, help="processes playing pairings at once (default: one per core)"
    )
    bench.add_argument(
        "--reference",
        help="a pairings.json whose pairings are read instead of played again (default: the shipped "
        "training/eval/benchmark_reference_v2.json, this version's ladder under the protocol)",
    )
    bench.add_argument("--fresh", action="store_true", help="play every pairing, reading none")
    bench.add_argument(
        "--record",
        metavar="DIR",
        help="also write every game played to DIR as a game record, a JSON file per game (pairings "
        "read from the reference are not played: add --fresh to record them)",
    )
    bench.add_argument(
        "--overwrite", action="store_true", help="replace the benchmark already in --out (refused without)"
    )
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")
    _threads_argument(bench)
    bench.set_defaults(run=benchmark_command)

    ladder = commands.add_parser(
        "ladder",
        help="rate reference agents on one scale (Bradley-Terry, Elo points, bootstrap intervals) "
        "-> ladder.json, ladder.csv, ladder.png; or rate a new agent against a ladder's fixed rungs",
        description="Every pair of the rungs plays --games whole matches on duplicate deals; a "
        "Bradley-Terry model is fitted over all pairings (choix; a shared first place half a win each "
        "way, one virtual draw per pairing), in Elo points with the first rung at 0, with 95%% "
        "bootstrap intervals over deals. --rate AGENT --against DIR/ladder.json plays AGENT against "
        "every rung of that ladder and fits its rating alone, the rungs' ratings fixed.",
    )
    ladder.add_argument(
        "agents",
        nargs="*",
        metavar="AGENT",
        help="the rungs, in order (the first is 0): random, greedy, search[:N], advanced, expert, "
        "checkpoints, run folders",
    )
    _table_arguments(ladder)
    ladder.add_argument(
        "--games",
        type=positive_int,
        help="games per pairing, rounded up to whole deals (default 200; with --rate: the ladder's)",
    )
    ladder.add_argument(
        "--seed", type=int, help="deal d is dealt from seed + d (default 0; with --rate: the ladder's)"
    )
    ladder.add_argument(
        "--out", help="output folder (default runs/ladder-<variant>; with --rate: the ladder's)"
    )
    ladder.add_argument(
        "--workers", type=positive_int, help="processes playing pairings at once (default: one per core)"
    )
    ladder.add_argument(
        "--rate", metavar="AGENT", help="rate this agent against the fixed rungs of --against"
    )
    ladder.add_argument("--against", metavar="LADDER_JSON", help="the ladder.json that --rate plays")
    ladder.add_argument(
        "--reference",
        metavar="PAIRINGS_JSON",
        help="a benchmark's pairings.json (training/eval/benchmark_reference_v2.json: the ladder under the "
        "protocol): its pairings of the same games (the variant's standard table, --seed 1000000, "
        "the same --games) are read, not played",
    )
    ladder.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the ladder (or rating) already there (refused without)",
    )
    ladder.add_argument("--no-progress", action="store_true", help="no progress bar")
    _threads_argument(ladder)
    ladder.set_defaults(run=ladder_command)

    serve = commands.add_parser(
        "serve", help="a local web app to watch agents, replay game records and play against agents"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this host)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--agents-dir", default="agents", help="where shipped agents are (default agents)")
    serve.set_defaults(run=serve_command)

    args = parser.parse_args(argv)
    for extra in extras_needed(args):  # before any work, in one line
        missing = missing_extra(extra)
        if missing is not None:
            return _fail(ValueError(missing))
    if getattr(args, "torch_threads", None):  # train, demo and ship take theirs from the config
        import torch

        torch.set_num_threads(args.torch_threads)
    return int(args.run(args))
