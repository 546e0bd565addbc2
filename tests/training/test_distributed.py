"""Rollouts on Ray actors (``--ray``): the same batches as a local collector, exact resume with
the same worker count, clear refusals otherwise, and a short CLI run that never samples a
masked action. Runs on the session's local Ray instance (2 CPUs)."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch

from tests.support.extras import extra
from training.model.checkpoint import CheckpointError
from training.model.config import Config, load_config
from training.model.networks import ActorCritic
from training.rl.distributed import RayCollector, merge, ray_collector, resume_error, split, worker_seeds
from training.rl.ppo import Batch
from training.rl.rollout import EpisodeStats, LocalCollector
from training.rl.train import Trainer
from training.rl.vector_collect import LANE, VectorCollector

pytestmark = pytest.mark.ray


def small_config(tmp_path: Path, *overrides: str) -> Config:
    return load_config(
        "configs/all_fives.yaml",
        [
            f"run.out_dir={tmp_path}",
            "run.num_envs=4",
            "run.rollout_steps=16",
            "run.total_steps=192",
            "network.hidden=[16]",
            "eval.every=0",
            "pool.snapshot_every=1",
            "pool.share=0.5",
            *overrides,
        ],
    )


def test_split_and_seeds() -> None:
    assert split(32, 3) == [11, 11, 10]
    assert split(4, 4) == [1, 1, 1, 1]
    rng = np.random.default_rng(5)
    assert worker_seeds(rng, 3) == worker_seeds(np.random.default_rng(5), 3)


def test_merge_concatenates_batches_and_stats() -> None:
    def part(n: int, value: float) -> tuple[Batch, EpisodeStats]:
        batch = Batch(**{f.name: torch.full((n,), value) for f in fields(Batch)})
        return batch, EpisodeStats(decisions=n + 1, self_play=n, pool_games=1, pool_wins=value, lengths=[n])

    batch, stats = merge([part(2, 1.0), part(3, 0.5)])
    assert batch.actions.tolist() == [1.0, 1.0, 0.5, 0.5, 0.5]
    assert batch.states is not None and batch.states.tolist() == [1.0, 1.0, 0.5, 0.5, 0.5]
    no_states = [(replace(b, states=None), s) for b, s in (part(1, 1.0), part(1, 0.0))]
    assert merge(no_states)[0].states is None  # (no perfect-information critic: no states)
    assert (stats.decisions, stats.self_play, stats.pool_games, stats.pool_wins) == (7, 5, 2, 1.5)
    assert stats.lengths == [2, 3]


def test_resume_messages() -> None:
    assert resume_error("c.pt", 2, 2) is None
    assert resume_error("c.pt", 0, 0) is None
    assert "resume it --ray 2" in (resume_error("c.pt", 2, 0) or "")
    assert "resume it without --ray" in (resume_error("c.pt", 0, 3) or "")


def test_one_worker_gives_a_local_collectors_batches(ray_local: ModuleType, tmp_path: Path) -> None:
    config = small_config(tmp_path)
    (seed,) = worker_seeds(np.random.default_rng(config.run.seed), 1)
    remote = RayCollector(config, np.random.default_rng(config.run.seed), workers=1)
    local = LocalCollector(config, np.random.default_rng(seed))  # seeded as the worker's collector
    assert remote.architecture == local.architecture
    assert (remote.obs_size, remote.num_actions) == (local.obs_size, local.num_actions)
    model = ActorCritic(local.architecture)
    torch.manual_seed(seed)  # and the worker's torch stream
    try:
        for _ in range(2):
            theirs, their_stats = remote.collect(model, 16)
            mine, my_stats = local.collect(model, 16)
            for f in fields(Batch):
                a, b = getattr(theirs, f.name), getattr(mine, f.name)
                assert (a is None and b is None) or torch.equal(a, b), f.name  # (states: no oracle here)
            assert their_stats == my_stats
            remote.add_snapshot(model)  # the pool is broadcast: games against it follow too
            local.add_snapshot(model)
    finally:
        remote.close()


def legal_batches(trainer: Trainer) -> list[int]:
    """Wrap the trainer's collector so every batch is checked for masked actions; returns the
    list the batch sizes are appended to."""
    sizes: list[int] = []
    collect = trainer.collector.collect

    def checked(*args: Any, **kwargs: Any) -> Any:
        batch, stats = collect(*args, **kwargs)
        assert batch.masks[torch.arange(len(batch.actions)), batch.actions].all(), "a masked action"
        sizes.append(len(batch.actions))
        return batch, stats

    trainer.collector.collect = checked
    return sizes


def run(config: Config, **kwargs: Any) -> Trainer:
    trainer = Trainer(config, **kwargs)
    try:
        trainer.train(progress=False)
    finally:
        getattr(trainer.collector, "close", lambda: None)()
    return trainer


def test_two_workers_train_and_resume_exactly(ray_local: ModuleType, tmp_path: Path) -> None:
    config = small_config(tmp_path)  # 192 steps: 3 iterations of 4 envs x 16 decisions
    whole = Trainer(config, collector=ray_collector(2))
    sizes = legal_batches(whole)
    try:
        whole.train(progress=False)
    finally:
        whole.collector.close()
    assert len(sizes) == 3 and all(s > 0 for s in sizes)

    # the same run stopped after its first iteration, then resumed on 2 workers: the same weights
    run(small_config(tmp_path, "run.name=first", "run.total_steps=64"), collector=ray_collector(2))
    checkpoint = tmp_path / "first" / "checkpoints" / "latest.pt"
    # (it goes on in its own folder: the whole run's holds another run)
    resumed = run(small_config(tmp_path, "run.name=first"), resume=checkpoint, collector=ray_collector(2))
    for name, value in whole.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[name]), name

    with pytest.raises(CheckpointError, match=r"collected on 2 Ray workers.*--ray 2"):
        Trainer(config, resume=checkpoint)
    run(small_config(tmp_path, "run.name=local", "run.total_steps=64"))
    with pytest.raises(CheckpointError, match=r"collected locally.*without --ray"):
        Trainer(config, resume=tmp_path / "local" / "checkpoints" / "latest.pt", collector=ray_collector(1))


def test_cli_ray_run(ray_local: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from training.__main__ import main

    code = main(
        [
            "train",
            "configs/all_fives.yaml",
            f"run.out_dir={tmp_path}",
            "run.num_envs=4",
            "run.rollout_steps=16",
            "run.total_steps=128",
            "network.hidden=[16]",
            "eval.every=2",
            "eval.games=2",
            "eval.search_games=2",
            "--ray",
            "2",
            "--no-progress",
        ]
    )
    assert code == 0
    assert "final checkpoint" in capsys.readouterr().out
    assert (tmp_path / "all_fives-1" / "checkpoints" / "latest.pt").is_file()
    assert ray_local.is_initialized()  # the CLI leaves a Ray instance it did not start running
    assert main(["train", "configs/all_fives.yaml", "run.num_envs=4", "--ray", "5"]) == 2


def test_vector_workers_batches_are_their_collectors_merged(ray_local: ModuleType, tmp_path: Path) -> None:
    """With run.collector=vector each worker steps its own VectorCollector: the merged batch is
    theirs end to end (seeded as the workers), and each deals in its own lane of seeds."""
    rounds = ["run.collector=vector", "env.options={num_players: 2, episode: round, reward: points}"]
    config = small_config(tmp_path, *rounds)  # (rounds: games end, and pool games begin)
    seeds = worker_seeds(np.random.default_rng(config.run.seed), 2)
    remote = RayCollector(config, np.random.default_rng(config.run.seed), workers=2)
    mine: list[VectorCollector] = []
    torch_states = []
    for lane, (envs, seed) in enumerate(zip(split(4, 2), seeds, strict=True)):
        share = small_config(tmp_path, *rounds, f"run.num_envs={envs}")
        mine.append(VectorCollector(share, np.random.default_rng(seed), lane=lane))
        torch.manual_seed(seed)  # each worker's torch stream
        torch_states.append(torch.get_rng_state())
    model = ActorCritic(mine[0].architecture)

    def as_worker(k: int, call: Any) -> Any:
        """``call()`` on worker ``k``'s torch stream (a snapshot's copy draws from it too)."""
        torch.set_rng_state(torch_states[k])
        result = call()
        torch_states[k] = torch.get_rng_state()
        return result

    try:
        assert remote.architecture == mine[0].architecture
        pool_games = 0
        for _ in range(3):
            theirs, their_stats = remote.collect(model, 16)
            parts = [as_worker(k, lambda c=c: c.collect(model, 16)) for k, c in enumerate(mine)]
            assert all(stats.decisions > 0 and len(batch.actions) > 0 for batch, stats in parts)
            merged, merged_stats = merge(parts)  # every worker's decisions, in worker order
            for f in fields(Batch):
                a, b = getattr(theirs, f.name), getattr(merged, f.name)
                assert (a is None and b is None) or torch.equal(a, b), f.name
            assert their_stats == merged_stats
            pool_games += their_stats.pool_games
            remote.add_snapshot(model)
            for k, collector in enumerate(mine):
                as_worker(k, lambda c=collector: c.add_snapshot(model))
        assert pool_games > 0
        assert [c.base // LANE for c in mine] == [0, 1]  # deals apart: each lane's own seeds
        saved = remote.state_dict()["ray_workers"]
        assert [w["collector"]["collector"] for w in saved] == ["vector", "vector"]
        assert [w["collector"]["next_base"] // LANE for w in saved] == [0, 1]
    finally:
        remote.close()
        for collector in mine:
            collector.close()


def test_a_vector_ray_run_trains_checkpoints_and_resumes_its_games(
    ray_local: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--ray 2`` with run.collector=vector trains and checkpoints; a resume keeps each worker's
    pool, seating, RNG states and games in progress (deterministic: the same weights each time),
    with as many workers and the vector collector only."""
    from training.__main__ import main

    vector = ["run.collector=vector", "run.name=first"]
    small = ["run.num_envs=4", "run.rollout_steps=16", "network.hidden=[16]", "eval.every=0"]
    pool = ["pool.snapshot_every=1", "pool.share=0.5", "run.total_steps=64", f"run.out_dir={tmp_path}"]
    code = main(["train", "configs/all_fives.yaml", *small, *pool, *vector, "--ray", "2", "--no-progress"])
    assert code == 0 and "final checkpoint" in capsys.readouterr().out
    checkpoint = tmp_path / "first" / "checkpoints" / "iter_00001.pt"
    assert checkpoint.is_file()

    resumed = []
    for _ in range(2):
        trainer = Trainer(small_config(tmp_path, *vector), resume=checkpoint, collector=ray_collector(2))
        sizes = legal_batches(trainer)
        try:
            trainer.train(progress=False)
            workers = trainer.collector.state_dict()["ray_workers"]
        finally:
            trainer.collector.close()
        assert len(sizes) == 2 and all(s > 0 for s in sizes)  # iterations 2 and 3
        assert [w["collector"]["next_base"] // LANE for w in workers] == [0, 1]
        resumed.append(trainer.model.state_dict())
    for name, value in resumed[0].items():  # the resumed games are the same each time
        assert torch.equal(value, resumed[1][name]), name

    with pytest.raises(CheckpointError, match=r"run\.collector=vector"):
        Trainer(small_config(tmp_path, "run.name=first"), resume=checkpoint, collector=ray_collector(2))
    with pytest.raises(CheckpointError, match=r"collected on 2 Ray workers.*--ray 2"):
        Trainer(small_config(tmp_path, *vector), resume=checkpoint)


def test_ray_extra_is_required_here() -> None:
    extra("ray")  # in .venv-extras (DOMINO_REQUIRE_EXTRAS=1) a missing Ray fails instead of skipping
