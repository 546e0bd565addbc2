"""Shared by the trainer's tests: tiny configs, model parameters, random masks, config files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from training.model.config import Config, load_config

if TYPE_CHECKING:  # torch only for the type of a model
    import torch

    from training.rl.ppo import Batch
    from training.rl.train import Trainer


ROOT = Path(__file__).resolve().parents[2]
CLASSIC_ROUND = "{num_players: 2, episode: round}"
TINY = [
    "network.hidden=[32]",
    "run.num_envs=4",
    "run.rollout_steps=16",
    "run.total_steps=128",  # two iterations
    "run.checkpoint_every=1",
    "ppo.update_epochs=2",
    "ppo.num_minibatches=2",
    "eval.every=0",
    "eval.search_games=2",  # (when a test turns evaluations on)
]


def tiny_config(
    out_dir: Path | None = None, *overrides: str, variant: str = "classic", options: str = CLASSIC_ROUND
) -> Config:
    config = load_config(None, [f"env.variant={variant}", f"env.options={options}", *TINY, *overrides])
    if out_dir is not None:  # set directly: a tmp path is not always a plain YAML scalar
        config.run.out_dir = str(out_dir)
    return config


def parameters(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.state_dict().items()}


def random_masks(rng: np.random.Generator, rows: int, actions: int) -> np.ndarray:
    masks = rng.random((rows, actions)) < 0.2
    masks[np.arange(rows), rng.integers(actions, size=rows)] = True  # at least one legal action
    return masks


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def resumed_halfway(
    tmp_path: Path, overrides: list[str], variant: str, options: str
) -> tuple[Trainer, Trainer]:
    """Four iterations straight (``overrides`` set ``run.total_steps=256`` and
    ``run.checkpoint_every=2``), against two, a checkpoint, and two more in a fresh trainer
    resumed from it: both trainers, checked to end with bitwise-identical weights."""
    import torch

    from training.rl.train import Trainer

    straight = Trainer(tiny_config(tmp_path / "a", *overrides, variant=variant, options=options))
    straight.train(progress=False)
    halfway = straight.run_dir / "checkpoints" / "iter_00002.pt"
    assert halfway.exists()
    torch.manual_seed(123)  # the resumed trainer must not depend on the process's state
    np.random.seed(123)
    resumed = Trainer(
        tiny_config(tmp_path / "b", *overrides, variant=variant, options=options), resume=halfway
    )
    assert (resumed.iteration, resumed.steps) == (2, 128)
    resumed.train(progress=False)
    assert resumed.iteration == straight.iteration == 4
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), f"{name} differs after resuming"
    return straight, resumed


def acted_batch(
    obs: np.ndarray, masks: np.ndarray, acted: tuple[np.ndarray, ...], rng: np.random.Generator
) -> Batch:
    """A batch of what the model did (actions, log-probabilities, values), random advantages and
    returns."""
    import torch

    from training.rl.ppo import Batch

    actions, logprobs, values = acted
    return Batch(
        obs=torch.from_numpy(obs),
        masks=torch.from_numpy(masks),
        actions=torch.from_numpy(actions),
        logprobs=torch.from_numpy(logprobs),
        values=torch.from_numpy(values),
        advantages=torch.from_numpy(rng.normal(size=len(obs)).astype(np.float32)),
        returns=torch.from_numpy(rng.normal(size=len(obs)).astype(np.float32)),
    )
