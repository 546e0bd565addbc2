"""The self-play training loop: collect, update, log, evaluate, checkpoint.

Runs from a :class:`~training.model.config.Config`; writes ``<out_dir>/<name>/`` with TensorBoard
logs (``tb/``), checkpoints (``checkpoints/iter_NNNNN.pt`` and ``latest.pt``) and
``evaluations.csv`` (win rates against the baselines over training).
"""

from __future__ import annotations

import copy
import csv
import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from domino_env import raw_env
from domino_env.agents import parse_search_name
from training.agents import PolicyAgent, resolve_agent
from training.matches import play_match, whole_deals
from training.model import checkpoint
from training.model.config import (
    TREE_ALGORITHMS,
    Config,
    ConfigError,
    acting_epsilon,
    config_differences,
    resolve_device,
)
from training.model.networks import ActorCritic
from training.rl import distributed, dmc, nfsp
from training.rl.collect import CollectorFactory, collector_factory
from training.rl.ppo import Batch, Magnet, policy_magnet, uniform_magnet, update
from training.rl.rollout import Learner

# What a run writes in its folder (training, then demo's evaluation and rating, or exploit's
# result): an earlier run's, and nothing else there, is what --overwrite deletes.
RUN_FILES = (
    "checkpoints",
    "tb",
    "evaluations.csv",
    "final_evaluation.csv",
    "ratings.csv",
    "ratings.png",
    "exploit.json",
)
# Settings the saved games in progress and the run's logs depend on: a resume keeps them.
KEPT_ON_RESUME = ("run.num_envs", "run.rollout_steps", "pool.baselines", "eval.opponents", "run.collector")


EVAL_SEED = 10_000  # the deals of every periodic evaluation


def earlier_run(run_dir: Path) -> list[str]:
    """The files and folders of an earlier run that ``run_dir`` holds (:data:`RUN_FILES`)."""
    return [name for name in RUN_FILES if (run_dir / name).exists()]


def check_own_run(
    run_dir: Path, command: str, overwrite: bool, rename: str, overwrite_flag: str = "--overwrite"
) -> None:
    """Check that ``command`` (``demo``, ``ship``), which starts its run over each time (its
    Trainer's ``overwrite``), may delete what ``run_dir`` holds: no run, a run the command made
    (its mark, :func:`mark_own_run`), or anything where the user said ``overwrite``. A run the
    command did not make (a ``train`` run, or one made before runs were marked) is a
    ConfigError, before anything is deleted or trained; ``rename`` chooses another folder, and
    ``overwrite_flag`` is how the user says overwrite."""
    earlier = earlier_run(run_dir)
    if earlier and not overwrite and not (run_dir / "checkpoints" / f".made-by-{command}").is_file():
        raise ConfigError(
            f"{run_dir} already holds a run ({', '.join(earlier)}) that {command} did not make (or made "
            f"before it marked its runs); start it over with {overwrite_flag}, or choose another {rename}"
        )


def mark_own_run(run_dir: Path, command: str) -> None:
    """Mark ``run_dir``'s run as ``command``'s, which the command may start over next time
    (:func:`check_own_run`). The mark lives in ``checkpoints/``: a run that takes the folder
    over (``train --overwrite``) deletes it with the earlier checkpoints, and a resume there
    removes it (the run is the user's now)."""
    folder = run_dir / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f".made-by-{command}").write_text(
        f"made by python -m training {command}, which starts it over on its next call\n"
    )


def claim_run_dir(
    run_dir: Path, *, overwrite: bool, source: Path | None = None, resumable: bool = True
) -> None:
    """Make ``run_dir`` this run's: as it is when resuming (``source``) a checkpoint of its own,
    else refused when it holds an earlier run's files (:data:`RUN_FILES`; the refusal offers
    ``--resume`` where the run is ``resumable``), or with ``overwrite`` emptied of them."""
    if source is not None and source.resolve().parent.parent == run_dir.resolve():
        for mark in (run_dir / "checkpoints").glob(".made-by-*"):  # (a resumed run is the user's)
            mark.unlink()
        return
    earlier = earlier_run(run_dir)
    if earlier and source is not None:
        raise ConfigError(
            f"{run_dir} already holds another run ({', '.join(earlier)}) than that of {source}: "
            "continue it under another run.name"
        )
    if earlier and not overwrite:
        resume = f"continue it with --resume {run_dir}, " if resumable else ""
        raise ConfigError(
            f"{run_dir} already holds a run ({', '.join(earlier)}); {resume}start it over with "
            "--overwrite, or choose another run.name"
        )
    try:
        for name in earlier:
            path = run_dir / name
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"run.out_dir: cannot write the run folder {run_dir} ({err.strerror})") from None


def network_payload(
    model: ActorCritic, optimizer: torch.optim.Optimizer, config: Config, iteration: int, steps: int
) -> dict[str, Any]:
    """What every algorithm's checkpoint holds (what ``evaluate`` and the other commands load):
    the network, its optimizer, the run's config, the network's shape, the iteration and the
    decisions played (cfr: the decision nodes visited)."""
    return {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "config": config.to_dict(),
        "obs_size": model.architecture.obs_size,
        "num_actions": model.architecture.num_actions,
        "architecture": model.architecture.to_dict(),
        "iteration": iteration,
        "steps": steps,
    }


def save_checkpoint(run_dir: Path, payload: dict[str, Any]) -> Path:
    """Write ``payload`` as the run's ``checkpoints/iter_NNNNN.pt`` (its iteration) and as
    ``latest.pt``; returns the first."""
    folder = run_dir / "checkpoints"
    path = folder / f"iter_{payload['iteration']:05d}.pt"
    checkpoint.save(path, payload)
    checkpoint.save(folder / "latest.pt", payload)
    return path


def evaluation_iterations(every: int, iterations: int) -> set[int]:
    """The iterations after which a run evaluates (0: before the first): none when ``every``
    is 0; else step 0, the log-spaced 1, 4, 16, ... below ``every`` (learning is fastest
    there), every ``every``-th iteration and the last."""
    if not every:
        return set()
    early = {4**k for k in range(every.bit_length()) if 4**k < every}
    return {i for i in (0, *early, *range(every, iterations + 1, every), iterations) if i <= iterations}


class Trainer:
    def __init__(
        self,
        config: Config,
        resume: str | Path | None = None,
        collector: CollectorFactory | None = None,  # or distributed.ray_collector(workers)
        overwrite: bool = False,
    ) -> None:
        """``resume``: a checkpoint or a run folder (its latest). A run goes on in its checkpoint's
        folder; any other run refuses a folder that holds an earlier run (their checkpoints and
        logs would mix) unless ``overwrite``, which deletes that run's files first. ``collector``:
        the factory of the run's collector (default: ``run.collector``'s,
        :func:`~training.rl.collect.collector_factory`). The model, its optimizer and the update
        live on ``run.device`` (a device this machine lacks: ConfigError, before anything starts);
        the collectors play on the CPU and act through the model's numpy interface."""
        if config.algorithm in TREE_ALGORITHMS:
            raise ConfigError(
                f"algorithm={config.algorithm} solves the game tree rather than training here: "
                "training.rl.cfr"
            )
        self.config = config
        self.device = resolve_device(config.run.device)
        self.run_dir = Path(config.run.out_dir) / config.run_name
        torch.set_num_threads(config.run.torch_threads)
        torch.manual_seed(config.run.seed)
        self.rngs = {
            "collect": np.random.default_rng(config.run.seed),
            "update": np.random.default_rng(config.run.seed + 1),
        }
        self.collector = (collector or collector_factory(config))(config, self.rngs["collect"])
        self.model = ActorCritic(self.collector.architecture).to(self.device)
        self.model.epsilon = acting_epsilon(config)  # dmc collects epsilon-greedily; else None: sampling
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
        # algorithm=mmd's moving magnet: a frozen copy of the policy (a deep copy draws no random
        # numbers), refreshed every mmd.magnet_every updates; None for ppo and a uniform magnet
        self.magnet: ActorCritic | None = None
        if config.algorithm == "mmd" and config.mmd.magnet_every:
            self.magnet = copy.deepcopy(self.model).eval().requires_grad_(False)
        # algorithm=nfsp's best response and memories (the model is its average policy)
        self.nfsp: nfsp.Learner | None = None
        if config.algorithm == "nfsp":
            self.nfsp = nfsp.Learner(config, self.model, self.rngs["update"])
        self.iteration = 0
        self.steps = 0
        # the run's wall time so far, evaluations included, carried over resumes (None: resumed
        # from a checkpoint that predates this count, so unknown for good)
        self.seconds: float | None = 0.0
        self.per_iteration = config.run.num_envs * config.run.rollout_steps
        self.iterations = math.ceil(config.run.total_steps / self.per_iteration)
        self.last_good: dict[str, Any] | None = None
        try:
            if config.run.init and resume is None:
                self._start_from(config.run.init)
            source = self._resume(resume) if resume is not None else None
            # last: nothing is deleted for a run that cannot start
            claim_run_dir(self.run_dir, overwrite=overwrite, source=source)
        except Exception:
            self.collector.close()  # Ray workers
            raise

    # --- checkpoints ------------------------------------------------------------------------

    def payload(self) -> dict[str, Any]:
        """Everything needed to continue exactly from the end of the current iteration (its
        tensors where the learner holds them: :func:`checkpoint.save` writes CPU copies). An mmd
        run's moving magnet is saved too (``magnet``), an nfsp run's best response (``nfsp``:
        :meth:`training.rl.nfsp.Learner.state_dict`); the rest is every run's format."""
        extra: dict[str, Any] = {} if self.magnet is None else {"magnet": self.magnet.state_dict()}
        if self.seconds is not None:
            extra["seconds"] = self.seconds
        if self.nfsp is not None:
            extra["nfsp"] = self.nfsp.state_dict()
        return copy.deepcopy(
            {
                **network_payload(self.model, self.optimizer, self.config, self.iteration, self.steps),
                "collector": self.collector.state_dict(),
                "rng": checkpoint.rng_states(self.rngs),
                **extra,
            }
        )

    def _start_from(self, path: str) -> None:
        """``run.init``: the network (and an mmd run's magnet) starts from the checkpoint's
        weights; a checkpoint of another table or network is refused, saying what differs."""
        architecture = self.model.architecture
        try:  # (checked here, not with the config: a run's checkpoints load once the file is gone)
            model, saved = checkpoint.load_model(path, architecture.obs_size, architecture.num_actions)
        except checkpoint.CheckpointError as err:
            raise checkpoint.CheckpointError(f"run.init: {err}") from None
        if model.architecture != architecture:
            changed = config_differences(saved, self.config, ("network",)) or "its layers"
            raise ConfigError(
                f"run.init: {path} holds another network than this run's (checkpoint -> this run: "
                f"{changed}): give the network settings it was trained with"
            )
        self.model.load_state_dict(model.state_dict())
        if self.magnet is not None:
            self.magnet.load_state_dict(model.state_dict())

    def _resume(self, path: str | Path) -> Path:
        """Continue from a checkpoint (returns its path). The table, the network, the settings in
        ``KEPT_ON_RESUME`` and the Ray worker count must match; the rest (run length, evaluation
        games, PPO coefficients) may change, and the run goes on with the new values; so may the
        ``mmd`` settings, but not the ``algorithm``. A run that would play nothing more (its
        ``run.total_steps`` at or below the decisions already played) is a ConfigError."""
        path = checkpoint.resolve(path)
        data = checkpoint.load(path)
        saved: Config = data["config"]
        if saved.algorithm != self.config.algorithm:
            raise checkpoint.CheckpointError(
                f"checkpoint {path} is of a run with algorithm={saved.algorithm}; this run has "
                f"{self.config.algorithm}: resume it with algorithm={saved.algorithm}"
            )
        changed = config_differences(saved, self.config, ("env", "network"))
        if changed:
            raise checkpoint.CheckpointError(
                f"checkpoint {path} was trained on another table or network "
                f"(checkpoint -> this run): {changed}"
            )
        if "collector" not in data:
            raise checkpoint.CheckpointError(f"checkpoint {path} holds weights only and cannot resume a run")
        missing = {"optimizer", "iteration", "steps", "rng"} - set(data)
        if missing:
            raise checkpoint.CheckpointError(
                f"checkpoint {path} lacks {sorted(missing)} and cannot resume a run"
            )
        for key in KEPT_ON_RESUME:
            section, name = key.split(".")
            was, now = getattr(getattr(saved, section), name), getattr(getattr(self.config, section), name)
            if was != now:
                raise checkpoint.CheckpointError(
                    f"checkpoint {path} holds the games in progress of a run with {key}={was}; "
                    f"this run has {now}: resume it with {key}={was}"
                )
        workers = distributed.saved_workers(data["collector"])
        mismatch = distributed.resume_error(path, workers, self.collector.num_workers)
        if mismatch:
            raise checkpoint.CheckpointError(mismatch)
        try:  # (the saved CPU tensors go to the model's device; the optimizer's follow its parameters)
            self.model.load_state_dict(data["model"])
            self.optimizer.load_state_dict(data["optimizer"])
            if self.magnet is not None:  # (saved with mmd.magnet_every=0: none; the policy is the start)
                self.magnet.load_state_dict(data.get("magnet", data["model"]))
            if self.nfsp is not None:
                self.nfsp.load_state_dict(data["nfsp"])
            self.collector.load_state_dict(data["collector"], self.model)
            checkpoint.restore_rngs(data["rng"], self.rngs)
        except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as err:
            raise checkpoint.CheckpointError(
                f"checkpoint {path} is damaged and cannot resume a run ({type(err).__name__}: {err})"
            ) from None
        self.iteration, self.steps = data["iteration"], data["steps"]
        if self.iteration >= self.iterations:  # nothing to play: refused before the run writes anything
            raise ConfigError(
                f"checkpoint {path}: the run has already played {self.steps} decisions (run.total_steps="
                f"{self.config.run.total_steps}); give run.total_steps above {self.steps} to go on"
            )
        self.seconds = data.get("seconds")
        for group in self.optimizer.param_groups:  # this run's rate (annealing sets it anyway)
            group["lr"] = self.config.ppo.learning_rate
        return path

    def save(self, payload: dict[str, Any]) -> Path:
        return save_checkpoint(self.run_dir, payload)

    # --- the loop ---------------------------------------------------------------------------

    def magnet_policy(self) -> Magnet | None:
        """What the update pulls the policy toward: None for ppo; for mmd the frozen magnet, or
        uniform play over the legal actions (``mmd.magnet_every: 0``)."""
        if self.config.algorithm != "mmd":
            return None
        return uniform_magnet if self.magnet is None else policy_magnet(self.magnet)

    def refresh_magnet(self) -> None:
        """mmd's moving magnet becomes the current policy (frozen until the next refresh)."""
        assert self.magnet is not None
        self.magnet.load_state_dict(self.model.state_dict())

    def acting(self) -> Learner:
        """What the learner's seats play with: the model, or for nfsp its
        :class:`~training.rl.nfsp.Player` (the model as the average policy, and the best response)."""
        return self.model if self.nfsp is None else self.nfsp.player(self.model, self.steps)

    def learn(self, batch: Batch) -> dict[str, float]:
        """One update of the model on ``batch`` by ``algorithm``: dmc's Q regression
        (:func:`training.rl.dmc.update`), nfsp's two networks (:meth:`training.rl.nfsp.Learner.update`),
        or PPO's (:func:`training.rl.ppo.update`; mmd's with its magnet). Returns the statistics to log."""
        cfg = self.config
        if self.nfsp is not None:
            return self.nfsp.update(self.model, self.optimizer, batch)
        if cfg.algorithm == "dmc":
            return dmc.update(self.model, self.optimizer, batch=batch, cfg=cfg.ppo, rng=self.rngs["update"])
        return update(
            self.model,
            self.optimizer,
            batch=batch,
            cfg=cfg.ppo,
            rng=self.rngs["update"],
            magnet=self.magnet_policy(),
            magnet_coef=cfg.mmd.magnet_coef,
            distill_coef=cfg.distill.coef,
        )

    def evaluate(self) -> dict[str, float]:
        """Win rates of the current policy against each opponent on duplicate deals (each deal
        once per seating), the same deals at every evaluation: the curve's changes are the
        policy's, not the deals'."""
        cfg = self.config
        agent = PolicyAgent(self.model)
        rates = {}
        for name in cfg.eval.opponents:
            env = raw_env(cfg.env.variant, **{**cfg.env.options, "episode": cfg.eval.episode})
            opponent = resolve_agent(name, env, cfg.run.seed)
            games = cfg.eval.search_games if parse_search_name(name) is not None else cfg.eval.games
            rates[name] = play_match(
                env, agent, opponent, games=whole_deals(games, env.rules), seed=EVAL_SEED, duplicate=True
            ).win_rate
        return rates

    def _evaluate_and_log(self, stats: dict[str, float], postfix: dict[str, str]) -> None:
        self.model.eval()
        rates = self.evaluate()
        self._log_evaluation(self.run_dir / "evaluations.csv", rates)
        for name, rate in rates.items():
            stats[f"eval/win_rate_vs_{name}"] = rate
            postfix[name] = f"{rate:.0%}"

    def train(self, progress: bool = True) -> Path:
        cfg = self.config
        writer = SummaryWriter(str(self.run_dir / "tb"))
        evaluated = evaluation_iterations(cfg.eval.every, self.iterations)
        bar = tqdm(
            total=self.iterations * self.per_iteration, initial=self.steps, unit="step", disable=not progress
        )
        postfix: dict[str, str] = {}
        path = self.run_dir / "checkpoints" / "latest.pt"
        began, seconds_before = time.perf_counter(), self.seconds
        try:
            if self.iteration == 0 and 0 in evaluated:  # the untrained policy: the curve's start
                start_stats: dict[str, float] = {}
                self._evaluate_and_log(start_stats, postfix)
                for key, value in start_stats.items():
                    writer.add_scalar(key, value, 0)
            while self.iteration < self.iterations:
                start = time.perf_counter()
                if cfg.ppo.anneal_lr:
                    lr = cfg.ppo.learning_rate * (1.0 - self.iteration / self.iterations)
                    for group in self.optimizer.param_groups:
                        group["lr"] = lr
                self.model.train()
                batch, episodes = self.collector.collect(self.acting(), cfg.run.rollout_steps)
                stats = self.learn(batch)
                self.iteration += 1
                self.steps += self.per_iteration
                if self.magnet is not None and self.iteration % cfg.mmd.magnet_every == 0:
                    self.refresh_magnet()
                elapsed = time.perf_counter() - start
                stats["speed/steps_per_second"] = self.per_iteration / elapsed
                stats["charts/learning_rate"] = self.optimizer.param_groups[0]["lr"]
                if episodes.lengths:
                    stats["charts/episode_length"] = float(np.mean(episodes.lengths))
                if episodes.pool_games:
                    stats["charts/pool_win_rate"] = episodes.pool_wins / episodes.pool_games
                if self.iteration % cfg.pool.snapshot_every == 0:
                    self.collector.add_snapshot(self.model)
                if self.iteration in evaluated:
                    bar.set_postfix_str("evaluating", refresh=True)
                    self._evaluate_and_log(stats, postfix)
                for key, value in stats.items():
                    writer.add_scalar(key, value, self.steps)
                postfix["steps/s"] = f"{stats['speed/steps_per_second']:,.0f}"
                bar.set_postfix(postfix, refresh=False)
                bar.update(self.per_iteration)
                if seconds_before is not None:
                    self.seconds = seconds_before + time.perf_counter() - began
                self.last_good = self.payload()
                if self.iteration % cfg.run.checkpoint_every == 0 or self.iteration == self.iterations:
                    path = self.save(self.last_good)
        except KeyboardInterrupt:
            if self.last_good is not None:  # the last completed iteration, never a half-collected one
                path = self.save(self.last_good)
                bar.write(
                    f"interrupted: saved {path} (continue with: python -m training train <the same "
                    f"config and overrides> --resume {self.run_dir})"
                )
            else:
                bar.write("interrupted before the first iteration ended: nothing saved")
            raise
        finally:
            bar.close()
            writer.close()
        return path

    def _log_evaluation(self, path: Path, rates: dict[str, float]) -> None:
        """Add this iteration's row. Rows of iterations from here on belong to a stretch of the
        run abandoned by resuming an earlier checkpoint: they go, so the log is one run in order."""
        rows: list[list[str]] = []
        if path.is_file():
            with path.open(newline="") as handle:
                rows = [row for row in list(csv.reader(handle))[1:] if int(row[0]) < self.iteration]
        rows.append([str(self.iteration), str(self.steps), *(f"{r:.4f}" for r in rates.values())])
        with path.open("w", newline="") as handle:
            out = csv.writer(handle)
            out.writerow(["iteration", "steps", *(f"win_rate_vs_{n}" for n in rates)])
            out.writerows(rows)
