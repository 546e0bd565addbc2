"""``run.device``: where the learner lives. The config refuses what is no device and a CUDA
device this torch does not see; ``cpu`` (and ``auto`` without CUDA) trains exactly as before;
the model acts through numpy whatever its device; checkpoints hold CPU tensors. The tests
marked ``cuda`` run only where torch sees a CUDA device."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tests.support.training_helpers import ROOT, parameters, random_masks, tiny_config
from training.__main__ import main
from training.model import checkpoint
from training.model.config import ConfigError, config_from_dict, load_config, resolve_device
from training.model.networks import ActorCritic
from training.rl.ppo import Batch
from training.rl.rollout import LocalCollector
from training.rl.train import Trainer

CUDA = torch.cuda.is_available()
no_cuda = pytest.mark.skipif(CUDA, reason="this torch sees a CUDA device")
cuda = pytest.mark.skipif(not CUDA, reason="this torch sees no CUDA device")


def tensors(tree: Any) -> list[torch.Tensor]:
    """Every tensor in a checkpoint's nested dicts, lists and tuples."""
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, dict):
        return [t for value in tree.values() for t in tensors(value)]
    if isinstance(tree, (list, tuple)):
        return [t for value in tree for t in tensors(value)]
    return []


@pytest.mark.parametrize("device", ["tpu", "gpu", "cuda:", "cuda:x", "CPU", "cuda:-1", ""])
def test_the_config_refuses_what_is_no_device_in_one_line(device: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, [f"run.device='{device}'"])
    message = str(err.value)
    assert len(message.splitlines()) == 1
    assert message == f"run.device must be one of cpu, cuda, cuda:N, auto, got {device!r}"


@no_cuda
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1"])
def test_the_config_refuses_cuda_where_torch_sees_none(device: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, [f"run.device={device}"])
    assert str(err.value) == (
        f"run.device={device}, but this torch ({torch.__version__}) sees no CUDA device; "
        "use run.device=cpu or auto"
    )


@cuda
def test_the_config_refuses_a_cuda_index_past_the_devices() -> None:
    count = torch.cuda.device_count()
    with pytest.raises(ConfigError, match=f"sees {count} CUDA device"):
        load_config(None, [f"run.device=cuda:{count}"])
    assert resolve_device(f"cuda:{count - 1}") == torch.device(f"cuda:{count - 1}")


def test_auto_is_cuda_where_torch_sees_it_else_cpu() -> None:
    assert load_config(None, ["run.device=auto"]).run.device == "auto"  # kept as written
    assert resolve_device("auto") == torch.device("cuda" if CUDA else "cpu")
    assert resolve_device("cpu") == torch.device("cpu")


def test_a_saved_config_naming_cuda_loads_anywhere() -> None:
    """A checkpoint stores the config it was trained with: one trained on a GPU is read on a
    machine without one (only a run that would use the device asks for it)."""
    data = load_config(None).to_dict()
    data["run"]["device"] = "cuda:3"
    assert config_from_dict(data).run.device == "cuda:3"


@no_cuda
def test_a_trainer_refuses_cuda_before_anything_starts(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    config.run.device = "cuda"  # (set directly: past load_config's check)
    with pytest.raises(ConfigError, match="sees no CUDA device"):
        Trainer(config)
    assert not (tmp_path / config.run_name).exists()


@no_cuda
def test_the_cli_says_cuda_is_missing_in_one_line_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["train", str(ROOT / "configs" / "classic.yaml"), "run.device=cuda"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error:") and "run.device=cuda" in err and "sees no CUDA device" in err


def test_the_cli_refuses_an_unknown_device_in_one_line_and_exits_2() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "train",
            "configs/classic.yaml",
            "run.device=tpu",
            "--no-progress",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "run.device must be one of cpu, cuda, cuda:N, auto" in lines[0]


@pytest.mark.parametrize("collector", ["local", "vector"])
def test_a_seeded_run_on_the_cpu_ends_with_the_default_runs_weights(tmp_path: Path, collector: str) -> None:
    """``run.device=cpu`` is the default, and ``auto`` is the CPU here: all three end alike, bit
    for bit (pool snapshots and their games included)."""
    pool = ["pool.snapshot_every=1", "pool.share=0.5", f"run.collector={collector}"]
    devices = ["", "run.device=cpu", *([] if CUDA else ["run.device=auto"])]
    ends = []
    for k, device in enumerate(devices):
        trainer = Trainer(tiny_config(tmp_path / str(k), *pool, *filter(None, [device])))
        assert trainer.model.device == torch.device("cpu")
        trainer.train(progress=False)
        ends.append((parameters(trainer.model), trainer.optimizer.state_dict()["state"]))
    first_weights, first_adam = ends[0]
    for weights, adam in ends[1:]:
        assert weights.keys() == first_weights.keys()
        assert all(torch.equal(weights[k], first_weights[k]) for k in weights)
        for slot, state in adam.items():
            assert all(torch.equal(state[k], first_adam[slot][k]) for k in state)


@pytest.mark.parametrize(
    "network",
    [[], ["network.oracle_critic=true"], ["network.action_traits=false", "network.play_outlook=false"]],
)
def test_act_and_greedy_take_numpy_and_give_numpy_on_the_models_device(network: list[str]) -> None:
    collector = LocalCollector(tiny_config(None, *network), np.random.default_rng(0))
    model = ActorCritic(collector.architecture)
    assert model.device == torch.device("cpu")
    rng = np.random.default_rng(1)
    obs = rng.random((5, collector.obs_size), dtype=np.float32)
    masks = random_masks(rng, 5, collector.num_actions)
    state = None
    if collector.architecture.state_size:
        state = rng.random((5, collector.architecture.state_size), dtype=np.float32)
    actions, logprobs, values = model.act(obs, masks, state)
    for array, dtype in ((actions, np.int64), (logprobs, np.float32), (values, np.float32)):
        assert isinstance(array, np.ndarray) and array.dtype == dtype and array.shape == (5,)
    assert masks[np.arange(5), actions].all()
    best = model.greedy(obs, masks)
    assert isinstance(best, np.ndarray) and best.dtype == np.int64 and masks[np.arange(5), best].all()
    assert model.copy().device == model.device  # a pool snapshot stays with its learner


def test_a_batch_already_on_the_device_moves_nothing() -> None:
    batch = Batch(*(torch.zeros(3) for _ in range(7)))
    moved = batch.to(torch.device("cpu"))
    assert all(getattr(moved, f) is getattr(batch, f) for f in ("obs", "masks", "actions", "returns"))
    assert moved.states is None


def test_checkpoints_hold_cpu_tensors_and_saving_cpu_ones_copies_nothing(tmp_path: Path) -> None:
    trainer = Trainer(tiny_config(tmp_path, "pool.snapshot_every=1"))
    path = trainer.train(progress=False)
    raw = torch.load(path, weights_only=False)  # no map_location: as the file holds them
    found = tensors(raw)
    assert found and all(t.device.type == "cpu" for t in found)
    payload = trainer.payload()
    assert checkpoint.on_cpu(payload) is payload  # every tensor on the CPU already: the same tree
    model = payload["model"]
    assert checkpoint.on_cpu(model) is model and hasattr(model, "_metadata")


def test_a_run_trained_elsewhere_resumes_and_loads_here(tmp_path: Path) -> None:
    """A checkpoint whose config names another device (a GPU run's) resumes on this run's
    device and loads as a policy with no map_location from the user."""
    first = Trainer(tiny_config(tmp_path / "a", "run.total_steps=64"))
    path = first.train(progress=False)
    data = torch.load(path, weights_only=False)
    data["config"]["run"]["device"] = "cuda"
    torch.save(data, path)
    model, config = checkpoint.load_model(path)
    assert config.run.device == "cuda" and model.device == torch.device("cpu")
    resumed = Trainer(tiny_config(tmp_path / "a", "run.total_steps=128"), resume=path)
    assert resumed.iteration == 1 and resumed.model.device == torch.device("cpu")
    resumed.train(progress=False)


@cuda
def test_a_cuda_run_learns_on_the_gpu_and_saves_cpu_checkpoints(tmp_path: Path) -> None:
    trainer = Trainer(
        tiny_config(tmp_path, "run.device=cuda", "run.collector=vector", "pool.snapshot_every=1")
    )
    assert trainer.model.device.type == "cuda"
    path = trainer.train(progress=False)
    assert all(p.device.type == "cuda" for p in trainer.model.parameters())
    assert all(t.device.type == "cpu" for t in tensors(torch.load(path, weights_only=False)))
    model, _ = checkpoint.load_model(path)
    assert model.device == torch.device("cpu")
    again = ("run.device=cuda", "run.collector=vector", "run.total_steps=192")
    resumed = Trainer(tiny_config(tmp_path, *again), resume=path)
    adam = [t for state in resumed.optimizer.state.values() for k, t in state.items() if k != "step"]
    assert adam and all(t.device.type == "cuda" for t in adam)
    resumed.train(progress=False)
