"""Checkpoints: weights, optimizer, config, counters and RNG states in one file.

A checkpoint is refused with a :class:`CheckpointError` when it cannot be read, was not
written by this trainer, or does not fit the environment it is asked to play. Every file that
cannot be read as one (truncated, empty, random bytes, another program's torch file or pickle,
a folder that is no run) gets one line: the file, that it is damaged or not a checkpoint of
this trainer, what to give instead, and the underlying reason, short, at the end.

Checkpoints are shared, so loading one never runs code from it: a file is read once and
unpickled by torch's weights-only unpickler, which builds nothing but tensors, plain
containers and the classes :func:`allowed_globals` names: numpy arrays and the classes a game
in progress is built of (``domino_env.state_classes()``), which a run's games are saved as. A
file that names anything else is refused, unread.
"""

from __future__ import annotations

import copy
import io
import random
import threading
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

import domino_env
from training.model.config import Config, ConfigError, config_from_dict
from training.model.networks import ActorCritic, Architecture

FORMAT = "domino-ppo/1"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used, and why."""


# What to do about a file that is not a readable checkpoint of this trainer.
REMEDY = (
    "give a checkpoint this trainer wrote (a run folder, or its checkpoints/latest.pt), "
    "or re-export one with python -m training ship"
)
REASON_LENGTH = 100  # the underlying reason is cut to this many characters


def short_reason(err: BaseException, named: bool = True) -> str:
    """``Type: message`` of an exception (``named=False``: the message alone), on one line and
    short: an OSError's own words (``OSError: Invalid argument``), else the message's first
    sentence, cut to ``REASON_LENGTH`` characters."""
    strerror = getattr(err, "strerror", None)
    if isinstance(err, OSError) and strerror:
        text = str(strerror)
    else:
        text = " ".join(str(err).split())  # one line
        text = text.split(". ", 1)[0].strip().rstrip(".")
    if len(text) > REASON_LENGTH:
        text = text[: REASON_LENGTH - 3].rstrip() + "..."
    if not named:
        return text
    name = type(err).__name__
    return f"{name}: {text}" if text else name


def unreadable(path: str | Path, reason: str) -> CheckpointError:
    """The one-line error for a file that is not a usable checkpoint of this trainer."""
    return CheckpointError(
        f"checkpoint {path} cannot be read: it is damaged or not a checkpoint of this trainer; "
        f"{REMEDY} ({reason})"
    )


# What a batched engine's games in progress are saved as, besides torch's own allowlist: numpy
# arrays of plain dtypes (a dtype's class is built without being named in the file, so every
# plain one is allowed, not only those a file names).
_NUMPY_KINDS: list[Any] = [
    np.ndarray,
    np.dtype,
    np.empty(0).__reduce__()[0],  # what an array is rebuilt with (numpy's _reconstruct)
    *(type(np.dtype(code)) for code in "?bBhHiIlLqQefdgFDGSU"),
]
# A line pickled before checkpoints loaded weights-only held its move tables (this dict subclass).
_OLD_LINE_CACHE = "domino_env.core.line._SlotMoves"
# torch's allowlist is the process's: one load at a time adds ours to it and takes them away.
_LOADING = threading.Lock()


@cache
def allowed_globals() -> dict[str, Any]:
    """What a checkpoint may name beyond torch's own allowlist, by the name a pickle gives it:
    numpy's array globals and ``domino_env.state_classes()``."""
    kinds = [*_NUMPY_KINDS, *domino_env.state_classes()]
    return {f"{kind.__module__}.{kind.__qualname__}": kind for kind in kinds}


def unpickle(path: Path) -> Any:
    """The file's contents, read once and unpickled weights-only with :func:`allowed_globals`;
    a file that names anything else (a function, another class) is a CheckpointError before
    any of it is unpickled: no checkpoint of this trainer holds one, and it could run code."""
    data = io.BytesIO(path.read_bytes())
    allowed = allowed_globals()
    foreign = [
        name for name in torch.serialization.get_unsafe_globals_in_checkpoint(data) if name not in allowed
    ]
    if _OLD_LINE_CACHE in foreign:
        raise unreadable(
            path,
            "saved before checkpoints loaded without running code; if you trust it, save it again: "
            "torch.save(torch.load(PATH, weights_only=False), PATH)",
        )
    if foreign:
        raise unreadable(path, f"it names {foreign[0]}, which could run code: not loaded")
    data.seek(0)
    with _LOADING, torch.serialization.safe_globals(list(allowed.values())):
        return torch.load(data, map_location="cpu", weights_only=True)


def on_cpu(tree: Any) -> Any:
    """``tree`` (dicts, lists and tuples of whatever) with every tensor on the CPU: where every
    tensor is there already, ``tree`` itself (nothing copied); else a copy of the containers on
    the way to each tensor elsewhere, that tensor copied to the CPU (a dict keeps its type and
    attributes: a state dict's ``_metadata``)."""
    if isinstance(tree, torch.Tensor):
        return tree.cpu()
    if isinstance(tree, dict):
        moved = {key: new for key, value in tree.items() if (new := on_cpu(value)) is not value}
        if not moved:
            return tree
        twin = copy.copy(tree)
        twin.update(moved)
        return twin
    if isinstance(tree, list) or type(tree) is tuple:  # (a named tuple is kept whole)
        items = [on_cpu(value) for value in tree]
        if all(new is old for new, old in zip(items, tree, strict=True)):
            return tree
        return items if isinstance(tree, list) else tuple(items)
    return tree


def save(path: Path, payload: dict[str, Any]) -> None:
    """Write atomically: a crash or Ctrl-C mid-write never leaves a half checkpoint. Tensors are
    written from the CPU (a run trained on a GPU loads on a machine without one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    torch.save(on_cpu({"format": FORMAT, **payload}), partial)
    partial.replace(path)


def latest(run_dir: str | Path) -> Path:
    """``RUN_DIR/checkpoints/latest.pt``, or a CheckpointError saying the folder is not a run."""
    path = Path(run_dir) / "checkpoints" / "latest.pt"
    if not Path(run_dir).exists():
        raise CheckpointError(f"run folder {run_dir} does not exist; {REMEDY}")
    if not path.is_file():
        raise unreadable(run_dir, "a folder that holds no checkpoints/latest.pt: not a training run folder")
    return path


def resolve(path: str | Path) -> Path:
    """A checkpoint file as given, or a run folder's latest."""
    return latest(path) if Path(path).is_dir() else Path(path)


def load(path: str | Path) -> dict[str, Any]:
    """The checkpoint's contents, checked for the keys every checkpoint has (a run folder: its
    latest). Whatever is not a readable checkpoint of this trainer raises :func:`unreadable`'s
    one-line CheckpointError."""
    path = Path(path)
    if path.is_dir():
        path = latest(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist; {REMEDY}")
    try:
        data = unpickle(path)
    except CheckpointError:
        raise
    except Exception as err:  # torch raises many kinds for a damaged or foreign file
        raise unreadable(path, short_reason(err)) from None
    if not isinstance(data, dict):
        raise unreadable(path, f"it holds a {type(data).__name__}, not a {FORMAT} checkpoint")
    if "format" not in data:
        keys = ", ".join(map(repr, list(data)[:4])) + (", ..." if len(data) > 4 else "")
        raise unreadable(path, f"it holds a dict of {keys or 'nothing'} without the format {FORMAT!r}")
    if data["format"] != FORMAT:
        raise unreadable(path, f"its format is {data['format']!r}, not {FORMAT!r}")
    missing = {"model", "architecture", "config", "obs_size", "num_actions"} - set(data)
    if missing:
        raise unreadable(path, f"it lacks {sorted(missing)}")
    counts = [(key, 1) for key in ("obs_size", "num_actions")]
    counts += [(key, 0) for key in ("steps", "iteration") if data.get(key) is not None]  # (may be left out)
    for key, least in counts:
        if type(data[key]) is not int or data[key] < least:
            raise unreadable(path, f"it holds {key}={data[key]!r}, not an int of at least {least}")
    try:
        data["config"] = config_from_dict(data["config"])
    except ConfigError as err:
        raise unreadable(path, f"it holds an invalid config: {short_reason(err, named=False)}") from None
    return data


def load_model(
    path: str | Path, obs_size: int | None = None, num_actions: int | None = None
) -> tuple[ActorCritic, Config]:
    """The policy stored in a checkpoint (a run folder: its latest); sizes, when given, must
    match the environment's."""
    path = resolve(path)
    data = load(path)
    for name, want in (("obs_size", obs_size), ("num_actions", num_actions)):
        if want is not None and data[name] != want:
            raise CheckpointError(
                f"checkpoint {path} was trained on {data['config'].env.variant} with "
                f"{data['config'].env.options} ({name}={data[name]}), but this environment has "
                f"{name}={want}: a checkpoint plays only the table it was trained on"
            )
    config: Config = data["config"]
    try:
        model = ActorCritic(Architecture.from_dict(data["architecture"]))
    except (TypeError, ValueError) as err:
        raise unreadable(path, f"it describes no network this trainer builds: {short_reason(err)}") from None
    try:
        model.load_state_dict(data["model"])
    except (RuntimeError, TypeError, AttributeError) as err:
        raise unreadable(path, f"its weights do not fit its network: {short_reason(err)}") from None
    diverged = [name for name, tensor in model.state_dict().items() if not torch.isfinite(tensor).all()]
    if diverged:  # (it would play, every action from nan logits: a policy that means nothing)
        raise unreadable(path, f"its weights hold nan or inf ({diverged[0]}...): the run diverged")
    model.eval()
    return model, config


def rng_states(rngs: dict[str, np.random.Generator]) -> dict[str, Any]:
    """The random states a resume restores; with CUDA in use (a learner on a GPU samples its
    actions there) also every CUDA device's."""
    states = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": {name: rng.bit_generator.state for name, rng in rngs.items()},
    }
    if torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_rngs(states: dict[str, Any], rngs: dict[str, np.random.Generator]) -> None:
    """Put back :func:`rng_states`' states (the CUDA ones where this machine has as many devices)."""
    cuda = states.get("cuda")
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
    torch.set_rng_state(states["torch"])
    random.setstate(states["python"])
    for name, rng in rngs.items():
        rng.bit_generator.state = states["numpy"][name]


def export(source: str | Path, target: str | Path) -> Path:
    """A weights-only copy of a checkpoint (no optimizer, games or pool): small enough to ship."""
    data = load(source)
    kept = ("model", "architecture", "obs_size", "num_actions", "iteration", "steps", "seconds")
    slim: dict[str, Any] = {key: data[key] for key in kept if key in data}
    slim["config"] = data["config"].to_dict()
    target = Path(target)
    save(target, slim)
    return target
