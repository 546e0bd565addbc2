"""Shared by the tests: tile notation (``"3-5"``, ``(5, 3)`` or ``"0-0 3-5 6-6"``), fixed deals,
the tile a move lays, and the trainer's tiny configs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from training.config import Config, load_config

if TYPE_CHECKING:  # only the trainer's tests pass models: the rules' tests need no torch
    import torch

Tile = tuple[int, int]


def tile(t: str | Tile) -> Tile:
    """``"a-b"`` or ``(a, b)`` in either order -> ``(min, max)``."""
    a, b = (int(x) for x in t.split("-")) if isinstance(t, str) else t
    return (min(a, b), max(a, b))


def tiles(names: str | Sequence[str | Tile]) -> list[Tile]:
    """A space-separated string or a sequence of tiles -> canonical pairs."""
    return [tile(t) for t in (names.split() if isinstance(names, str) else names)]


def pips(names: str | Sequence[str | Tile]) -> int:
    return sum(a + b for a, b in tiles(names))


ALL_TILES = [(a, b) for a in range(7) for b in range(a, 7)]  # double-six, in id order


def deal(
    hands: Sequence[str | Sequence[str | Tile]], leader: int | None = 0, first: str | Sequence[str] = ()
) -> dict:
    """A fully fixed double-six deal: the hands, then the boneyard (``first`` drawn first, the
    rest in id order), so no randomness is left."""
    fixed = tiles(first)
    used = {t for hand in hands for t in tiles(hand)} | set(fixed)
    assert len(used) == sum(len(tiles(h)) for h in hands) + len(fixed), "a tile is dealt twice"
    out: dict = {
        "hands": [tiles(h) for h in hands],
        "boneyard": fixed + [t for t in ALL_TILES if t not in used],
    }
    if leader is not None:
        out["leader"] = leader
    return out


def laid(rules: Any, action: int) -> str:
    """The tile play ``action`` lays, as ``"a-b"``: read from the rules' ``action_tile``, not
    computed from the action id."""
    a, b = rules.tile_set.tiles[rules.action_tile[action]]
    return f"{a}-{b}"


# --- training ----------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
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
