"""Training speed: learner decisions per second of our PPO, sb3-contrib's MaskablePPO and RLlib's PPO.

    python benchmarks/train_speed.py [--config configs/all_fives.yaml] [--steps 40000] [--repeats 3]
        [--set run.num_envs=256 ...] [--no-vector] [--no-scalar] [--ray 2]

What is counted, for both: decisions made by the policy being trained, per second of
wall-clock training (collection *and* PPO updates), one torch thread, CPU. Our learner moves
to a GPU with ``--set run.device=cuda`` (the games stay on the CPU cores; the header line names
the learner's device): how fast a GPU learner trains is measured so, and only so.

* Ours (``training.rl.train.Trainer`` on ``--config``; evaluation games off, TensorBoard and
  checkpoints as configured): one shared policy plays every seat of self-play, so every
  seat's decision is a learner decision and a PPO row; in the share of games where a frozen
  pool snapshot plays the other side, those seats' moves are *not* counted (they are shown
  separately as all env steps).
* Ours with the vector collector (``run.collector=vector``, ``training.rl.vector_collect``): the
  same trainer and settings, the games on one batched ``domino_env.vector`` engine - "ours
  vector" on the default engine (the variant's kernel where it has one; the note names it),
  "ours vector scalar" on scalar tables behind the same interface. Left out, saying why, where
  the config asks for what the vector collector refuses (``pool.baselines``: override it with
  ``--set``). With ``--ray N``, also "ours vector ray N":
  the vector collector on each of N Ray workers (``training.rl.distributed``; a local Ray
  instance, started before the timing), the learner here - on a small machine the workers
  compete with the learner for the cores, and the CPU column counts the learner's process only.
* MaskablePPO (if ``sb3_contrib`` is installed): ``SingleAgentEnv(variant, opponents="random",
  **env options)`` from the same config, so the learner plays one seat and the other seats'
  random moves happen inside ``env.step`` uncounted. Settings mirror the config:
  ``--sb3-envs`` envs in a ``DummyVecEnv`` (default ``run.num_envs``, batched inference like
  ours), ``n_steps = num_envs * rollout_steps / sb3-envs`` (same batch per update),
  ``batch_size = batch / num_minibatches``, ``n_epochs = update_epochs``, the same
  learning rate, gamma, GAE lambda, clip, entropy/value coefficients, grad-norm and
  target KL, and the same network: a shared ``network.hidden`` tanh trunk (as a features
  extractor) with linear policy and value heads.
* With ``--sb3-defaults``, also MaskablePPO as its documentation uses it: one env, every
  setting at its default (n_steps 2048, minibatches of 64, 10 epochs, a 64x64 MLP) - more
  gradient steps per decision on a smaller network.

* RLlib's PPO (if ``ray`` is installed: ``pip install "domino-env[ray]"``), current API stack:
  ``domino_env.integrations.rllib.ppo_config`` on the config's variant and options (one masked
  module shared by every seat, so every env step is a learner decision, as in ours), the same
  network, batch per update (``train_batch_size_per_learner``), minibatch size, epochs and PPO
  coefficients, ``--rllib-runners`` remote env runners (default 1) with one env each, on a local
  Ray instance. Its CPU column counts the driver only (the learner), not the runners' sampling.

Runs alternate (ours, theirs, ours, ...) ``--repeats`` times so that a busy machine
disturbs both alike; it prints every run, the median and range of each, and the ratio,
both per wall-clock second and per second of this process's CPU time (with one thread the
CPU rate barely moves when other jobs share the cores; the wall rate is what a user sees).
"""

from __future__ import annotations

import copy
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from training.cli import OneLineParser, run_script
from training.eval.arena import non_negative_int, positive_int
from training.model.config import Config, ConfigError, load_config, resolve_device
from training.rl.collect import CollectorFactory
from training.rl.distributed import ray_collector
from training.rl.train import Trainer
from training.rl.vector_collect import VectorCollector, vector_collector


def ours_config(config_path: str, steps: int, out_dir: str, extra: tuple[str, ...] = ()) -> Config:
    """The config as given (and ``extra`` overrides), sized to ``steps``, one torch thread, no
    evaluation games."""
    overrides = [
        *extra,
        f"run.total_steps={steps}",
        "run.torch_threads=1",
        "eval.every=0",  # evaluation games are not training
        f"run.out_dir={out_dir}",
    ]
    return load_config(config_path, overrides)


@dataclass
class Run:
    """One training run: learner decisions, wall-clock and process CPU seconds."""

    decisions: int
    wall: float
    cpu: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.decisions / self.wall

    @property
    def cpu_rate(self) -> float:
        return self.decisions / self.cpu


def run_ours(config: Config, collector: CollectorFactory | None = None) -> Run:
    """Train from scratch (``collector``: the factory, default ``run.collector``'s); the note
    gives all env steps, the share of time spent collecting and a vector collector's engine."""
    trainer = Trainer(copy.deepcopy(config), collector=collector, overwrite=True)  # from scratch
    learner_decisions = 0
    collecting = 0.0
    collect = trainer.collector.collect

    def counting_collect(*args: Any, **kwargs: Any) -> Any:
        nonlocal learner_decisions, collecting
        start = time.perf_counter()
        batch, episodes = collect(*args, **kwargs)
        collecting += time.perf_counter() - start
        learner_decisions += episodes.decisions
        return batch, episodes

    trainer.collector.collect = counting_collect  # type: ignore[method-assign]
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        trainer.train(progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        trainer.collector.close()  # (Ray workers)
    engine = trainer.collector.venv.backend if isinstance(trainer.collector, VectorCollector) else ""
    note = f"{trainer.steps:,} env steps, {collecting / wall:.0%} collecting"
    return Run(learner_decisions, wall, cpu, f"{note}, {engine} engine" if engine else note)


def make_sb3(config: Config, num_envs: int) -> Any:
    """A MaskablePPO mirroring the config's PPO settings and network (see the module docstring)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    from domino_env.wrappers import SingleAgentEnv

    hidden = config.network.hidden

    class Trunk(BaseFeaturesExtractor):
        """The shared tanh MLP our ActorCritic has, so both train the same network."""

        def __init__(self, observation_space: Any) -> None:
            super().__init__(observation_space, features_dim=hidden[-1])
            layers: list[nn.Module] = []
            width = int(observation_space.shape[0])
            for size in hidden:
                layers += [nn.Linear(width, size), nn.Tanh()]
                width = size
            self.net = nn.Sequential(*layers)

        def forward(self, observations: torch.Tensor) -> torch.Tensor:
            return self.net(observations)

    run, ppo = config.run, config.ppo
    batch = run.num_envs * run.rollout_steps
    if batch % num_envs:
        raise SystemExit(f"--sb3-envs must divide num_envs * rollout_steps = {batch}")
    env = make_vec_env(
        lambda: SingleAgentEnv(config.env.variant, opponents="random", **config.env.options),
        n_envs=num_envs,
        seed=run.seed,
    )
    return MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=ppo.learning_rate,
        n_steps=batch // num_envs,
        batch_size=batch // ppo.num_minibatches,
        n_epochs=ppo.update_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_coef,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        target_kl=ppo.target_kl or None,
        normalize_advantage=ppo.norm_adv,
        policy_kwargs={"features_extractor_class": Trunk, "net_arch": {"pi": [], "vf": []}},
        seed=run.seed,
        device="cpu",
        verbose=0,
    )


def make_sb3_defaults(config: Config) -> Any:
    """MaskablePPO as its documentation shows it: one env, every setting at its default
    (n_steps 2048, batch 64, 10 epochs, 64x64 MLP)."""
    from sb3_contrib import MaskablePPO

    from domino_env.wrappers import SingleAgentEnv

    env = SingleAgentEnv(config.env.variant, opponents="random", **config.env.options)
    return MaskablePPO("MlpPolicy", env, seed=config.run.seed, device="cpu", verbose=0)


def run_sb3(config: Config, steps: int, num_envs: int, defaults: bool = False) -> Run:
    """Train a fresh MaskablePPO (built outside the timing)."""
    model = make_sb3_defaults(config) if defaults else make_sb3(config, num_envs)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return Run(int(model.num_timesteps), wall, cpu, "1 env, defaults" if defaults else f"{num_envs} envs")


def make_rllib(config: Config, runners: int) -> Any:
    """RLlib's PPO (current API stack) on the same variant, options, network and PPO settings:
    one masked module shared by every seat (``domino_env.integrations.rllib.ppo_config``)."""
    from domino_env.integrations.rllib import ppo_config

    run, ppo = config.run, config.ppo
    batch = run.num_envs * run.rollout_steps
    rllib = ppo_config(config.env.variant, config.env.options, config.network.hidden, num_env_runners=runners)
    rllib = rllib.env_runners(num_envs_per_env_runner=1).training(
        train_batch_size_per_learner=batch,
        minibatch_size=batch // ppo.num_minibatches,
        num_epochs=ppo.update_epochs,
        lr=ppo.learning_rate,
        gamma=ppo.gamma,
        lambda_=ppo.gae_lambda,
        clip_param=ppo.clip_coef,
        entropy_coeff=ppo.ent_coef,
        vf_loss_coeff=ppo.vf_coef,
        grad_clip=ppo.max_grad_norm,
    )
    return rllib.debugging(seed=run.seed).build_algo()


def run_rllib(config: Config, steps: int, runners: int) -> Run:
    """Train a fresh RLlib PPO (built outside the timing) until ``steps`` env steps were sampled.

    Every env step is a decision of the shared policy, so env steps = learner decisions. The
    CPU column counts this process only: with remote runners their sampling is not in it.
    """
    algo = make_rllib(config, runners)
    sampled = 0
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        while sampled < steps:
            sampled = int(algo.train()["env_runners"]["num_env_steps_sampled_lifetime"])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        algo.stop()
    return Run(sampled, wall, cpu, f"{runners} env runner{'s' * (runners != 1)}")


def report(name: str, runs: list[Run]) -> None:
    for label, rates in (("wall", [r.rate for r in runs]), ("CPU ", [r.cpu_rate for r in runs])):
        median, low, high = statistics.median(rates), min(rates), max(rates)
        print(
            f"{name:<20} {label}: median {median:>7,.0f}/s  range {low:,.0f}-{high:,.0f}  ({len(runs)} runs)"
        )


def ratio(ours: list[float], theirs: list[float]) -> str:
    pairs = sorted(a / b for a, b in zip(ours, theirs, strict=True))
    return (
        f"{statistics.median(ours) / statistics.median(theirs):.1f}x "
        f"(run pairs {pairs[0]:.1f}x-{pairs[-1]:.1f}x)"
    )


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/all_fives.yaml")
    parser.add_argument(
        "--steps",
        type=positive_int,
        default=40_000,
        help="learner decisions per run (rounded up)",
    )
    parser.add_argument("--repeats", type=positive_int, default=3, help="runs of each, alternating")
    parser.add_argument(
        "--sb3-envs", type=non_negative_int, default=0, help="MaskablePPO envs (default: run.num_envs)"
    )
    parser.add_argument("--no-sb3", action="store_true", help="measure only our trainer")
    parser.add_argument(
        "--sb3-defaults",
        action="store_true",
        help="also run MaskablePPO with its default settings (one env, 10 epochs of batch 64)",
    )
    parser.add_argument(
        "--rllib-runners", type=non_negative_int, default=1, help="RLlib env runners (0: in the driver)"
    )
    parser.add_argument("--no-rllib", action="store_true", help="skip RLlib's PPO")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a dotted override for our runs (repeatable), e.g. --set run.num_envs=256",
    )
    parser.add_argument("--no-vector", action="store_true", help="skip our runs with the vector collector")
    parser.add_argument(
        "--no-scalar",
        action="store_true",
        help="skip our runs on scalar tables (ours, ours vector scalar) and the ratios to them",
    )
    parser.add_argument(
        "--ray", type=positive_int, metavar="N", help="also the vector collector on N Ray workers"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        config = load_config(args.config)
    except ConfigError as err:
        parser.error(str(err))
    sb3 = not args.no_sb3
    if sb3:
        try:
            import sb3_contrib  # noqa: F401
        except ImportError:
            print("sb3_contrib is not installed: measuring only our trainer (pip install sb3-contrib)")
            sb3 = False
    rllib = not args.no_rllib
    if rllib or args.ray:
        try:
            import ray

            cpus = max(2, args.rllib_runners + 1, args.ray or 0)
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        except ImportError:
            if args.ray:  # (asked for: refused, as train --ray refuses it)
                raise ValueError(
                    '--ray needs Ray, which is not installed: pip install "domino-env[ray]"'
                ) from None
            print('Ray is not installed: no RLlib runs (pip install "domino-env[ray]")')
            rllib = False
    sb3_envs = args.sb3_envs or config.run.num_envs
    print(
        f"{config.env.variant} {config.env.options}, at least {args.steps:,} learner decisions per run "
        "(each trainer rounds up to whole updates; rates count the decisions made), 1 torch thread"
    )
    results: dict[str, list[Run]] = {
        "ours": [],
        "ours vector": [],
        "ours vector scalar": [],
        f"ours vector ray {args.ray}": [],
        "MaskablePPO": [],
        "MaskablePPO defaults": [],
        "RLlib PPO": [],
    }
    with tempfile.TemporaryDirectory() as out_dir:
        # read once: every run trains the same
        try:
            mine = ours_config(args.config, args.steps, out_dir, (*args.set, "run.collector=local"))
        except ConfigError as err:  # a --set the config refuses (run.device=cuda without CUDA)
            parser.error(str(err))
        print(f"our learner (model, optimizer, PPO update) on {resolve_device(mine.run.device)}")
        batched: Config | None = None
        if not args.no_vector:
            try:
                batched = ours_config(args.config, args.steps, out_dir, (*args.set, "run.collector=vector"))
            except ConfigError as err:
                print(f"no vector collector runs: {err}")
        for r in range(args.repeats):
            runs = [] if args.no_scalar else [("ours", run_ours(mine))]
            if batched is not None:
                runs.append(("ours vector", run_ours(batched)))
            if batched is not None and not args.no_scalar:
                runs.append(("ours vector scalar", run_ours(batched, vector_collector("scalar"))))
            if batched is not None and args.ray:
                runs.append((f"ours vector ray {args.ray}", run_ours(batched, ray_collector(args.ray))))
            if sb3:
                runs.append(("MaskablePPO", run_sb3(config, args.steps, sb3_envs)))
            if sb3 and args.sb3_defaults:
                runs.append(("MaskablePPO defaults", run_sb3(config, args.steps, 1, defaults=True)))
            if rllib:
                runs.append(("RLlib PPO", run_rllib(config, args.steps, args.rllib_runners)))
            for name, run in runs:
                print(
                    f"run {r + 1} {name:<20} {run.decisions:>7,} learner decisions in {run.wall:5.1f}s wall "
                    f"= {run.rate:>6,.0f}/s, {run.cpu:5.1f}s CPU = {run.cpu_rate:>6,.0f}/s ({run.note})"
                )
                results[name].append(run)
    ours = results["ours"]
    if ours:
        report("ours", ours)
    for name in ("ours vector", "ours vector scalar", f"ours vector ray {args.ray}"):
        if results[name]:
            report(name, results[name])
        if results[name] and ours:
            print(f"{name} / ours, wall: {ratio([r.rate for r in results[name]], [r.rate for r in ours])}")
    for name in ("MaskablePPO", "MaskablePPO defaults", "RLlib PPO"):
        theirs = results[name]
        if theirs:
            report(name, theirs)
        if theirs and ours:
            print(f"ours / {name}, wall: {ratio([r.rate for r in ours], [r.rate for r in theirs])}")
            print(f"ours / {name}, CPU:  {ratio([r.cpu_rate for r in ours], [r.cpu_rate for r in theirs])}")


if __name__ == "__main__":
    run_script(main)
