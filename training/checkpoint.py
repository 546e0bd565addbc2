"""Checkpoints: weights, optimizer, config, counters and RNG states in one file.

A checkpoint is refused with a :class:`CheckpointError` when it cannot be read, was not
written by this trainer, or does not fit the environment it is asked to play.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from training.config import Config, ConfigError, config_from_dict
from training.networks import ActorCritic

FORMAT = "domino-ppo/1"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used, and why."""


def save(path: Path, payload: dict[str, Any]) -> None:
    """Write atomically: a crash or Ctrl-C mid-write never leaves a half checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    torch.save({"format": FORMAT, **payload}, partial)
    partial.replace(path)


def latest(run_dir: str | Path) -> Path:
    """``RUN_DIR/checkpoints/latest.pt``, or a CheckpointError saying the folder is not a run."""
    path = Path(run_dir) / "checkpoints" / "latest.pt"
    if not path.is_file():
        raise CheckpointError(f"{run_dir} holds no checkpoints/latest.pt (not a training run folder)")
    return path


def resolve(path: str | Path) -> Path:
    """A checkpoint file as given, or a run folder's latest."""
    return latest(path) if Path(path).is_dir() else Path(path)


def load(path: str | Path) -> dict[str, Any]:
    """The checkpoint's contents, checked for the keys every checkpoint has."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        data = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # torch raises many kinds for a damaged file
        raise CheckpointError(f"checkpoint {path} cannot be read ({type(err).__name__}: {err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a checkpoint of this trainer (expected format {FORMAT})")
    missing = {"model", "architecture", "config", "obs_size", "num_actions"} - set(data)
    if missing:
        raise CheckpointError(f"checkpoint {path} lacks {sorted(missing)}")
    try:
        data["config"] = config_from_dict(data["config"])
    except ConfigError as err:
        raise CheckpointError(f"checkpoint {path} holds an invalid config: {err}") from None
    return data


def load_model(
    path: str | Path, obs_size: int | None = None, num_actions: int | None = None
) -> tuple[ActorCritic, Config]:
    """The policy stored in a checkpoint; sizes, when given, must match the environment's."""
    data = load(path)
    for name, want in (("obs_size", obs_size), ("num_actions", num_actions)):
        if want is not None and data[name] != want:
            raise CheckpointError(
                f"checkpoint {path} was trained with {name}={data[name]}, but this environment has {want} "
                f"(variant {data['config'].env.variant} with {data['config'].env.options})"
            )
    config: Config = data["config"]
    try:
        model = ActorCritic(**data["architecture"])
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint {path} describes no network this trainer builds: {err}") from None
    try:
        model.load_state_dict(data["model"])
    except RuntimeError as err:
        raise CheckpointError(f"checkpoint {path} weights do not fit its network: {err}") from None
    model.eval()
    return model, config


def rng_states(rngs: dict[str, np.random.Generator]) -> dict[str, Any]:
    return {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": {name: rng.bit_generator.state for name, rng in rngs.items()},
    }


def restore_rngs(states: dict[str, Any], rngs: dict[str, np.random.Generator]) -> None:
    torch.set_rng_state(states["torch"])
    random.setstate(states["python"])
    for name, rng in rngs.items():
        rng.bit_generator.state = states["numpy"][name]


def export(source: str | Path, target: str | Path) -> Path:
    """A weights-only copy of a checkpoint (no optimizer, games or pool): small enough to ship."""
    data = load(source)
    kept = ("model", "architecture", "obs_size", "num_actions", "iteration", "steps")
    slim: dict[str, Any] = {key: data[key] for key in kept if key in data}
    slim["config"] = data["config"].to_dict()
    target = Path(target)
    save(target, slim)
    return target
