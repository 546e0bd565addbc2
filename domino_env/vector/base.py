"""What every batch of tables offers, whichever engine steps it.

B tables of one variant and one table size step together: each table shows the seat to move,
takes one action for it, and reports every seat's reward for that step. Table ``i`` after
``reset(seed=s)`` plays the deal that ``domino_env.make(name, **options).reset(seed=s + i)``
plays; when its episode ends it starts the next one at once (the batch stays full) with the seed
:func:`episode_seed` names, so the ``k``-th episode of table ``i`` is the scalar env's
``reset(seed=s + i + k * B)``. The step's outputs for a finished table are those of its new
episode (observation, mask, player), with ``done`` set and the old episode's final rewards.
A step also says where rounds ended (``info["round_over"]``: a new round inside a match is no
episode end), each side's match score as the step left it (``info["side_scores"]``; at a
finished table the ended match's, before the next deal zeroes them) and each seat's outcome
of every episode that ended (``info["outcome"]``, the scalar env's ``outcomes()``): what a
trainer needs to value each round by the match score (``run.match_value``).

``snapshot()`` takes every table's game, the seeds and episode counters and each table's
random state as a picklable dict; ``restore(snapshot)`` on a batch built with the same name,
options and ``num_envs`` (the same one, or a new one) puts them back, so the same actions then
replay exactly what the batch did after the snapshot.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np

from domino_env.envs.base import checked_seed

Info = dict[str, np.ndarray]


Function = TypeVar("Function", bound=Callable[..., Any])


def compiled(function: Function) -> Function:
    """``function`` compiled by numba (the kernels' loops), its machine code cached beside the
    module or in numba's user cache (``NUMBA_CACHE_DIR``); where none of those is writable,
    compiled afresh at each start rather than refused."""
    try:
        return cast(Function, numba.njit(cache=True)(function))
    except RuntimeError:  # ("cannot cache function ...: no locator available")
        return cast(Function, numba.njit(function))


def episode_seed(base: int, table: int, episode: int, num_envs: int) -> int:
    """The seed of table ``table``'s ``episode``-th episode (from 0) after ``reset(seed=base)``."""
    return base + table + episode * num_envs


def episode_seeds(base: int, episodes: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """What a kernel's dealer takes: the seed of each of ``tables``' current episode
    (``episodes``: every table's episode count), uint64; Python ints (an object array) where
    one would not fit 64 bits."""
    num_envs = len(episodes)
    if base + (int(episodes.max()) + 1) * num_envs > 1 << 64:
        return np.array(
            [
                episode_seed(base, i, k, num_envs)
                for i, k in zip(tables.tolist(), episodes[tables].tolist(), strict=True)
            ],
            object,
        )
    u64 = np.uint64
    return u64(base) + tables.astype(u64) + episodes.take(tables).astype(u64) * u64(num_envs)


class VectorEnv(ABC):
    """B tables of one variant stepped together (see the module docstring).

    ``observation_size``, ``num_actions``, ``state_size`` and ``num_players`` are those of the
    scalar env built with the same options; ``backend`` says which engine steps the tables
    (``"scalar"``: scalar tables behind this interface).
    """

    backend: str
    name: str
    options: dict[str, Any]
    num_envs: int
    num_players: int
    observation_size: int
    num_actions: int
    state_size: int

    @abstractmethod
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, Info]:
        """Deal every table: ``obs`` float32[B, O] of the seat to move, ``mask`` bool[B, A] of
        its legal actions, ``info["player"]`` int64[B] (the seat to move). ``seed=None``: a
        base seed drawn from the operating system's entropy."""

    @abstractmethod
    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Info]:
        """One action per table (int[B], legal for its seat to move): ``obs``, ``mask``,
        ``reward`` float32[B, P] (every seat's reward of this step, as the AEC env's
        ``rewards``), ``done`` bool[B] (the table's episode ended: it shows its next one),
        ``info``: ``player`` int64[B] (the seat to move, as :meth:`reset`'s), ``round_over``
        bool[B] (a round ended at the table this step: every ``done`` table's too),
        ``side_scores`` int64[B, D] (each side's match score, as the scalar env's
        ``side_scores``, after the step; where a round ended, once it was scored, and at a
        ``done`` table the ended match's final scores, not the next deal's), ``outcome``
        float64[B, P] (each seat's outcome of the episode that ended at a ``done`` table, as
        the scalar env's ``outcomes()`` then; 0 elsewhere). An action of the wrong shape or
        dtype, or illegal at its table, raises ValueError and changes nothing."""

    @abstractmethod
    def state(self) -> np.ndarray:
        """float32[B, S]: each table's global state, as the scalar env's ``state()``."""

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """Every table as it stands (its game, the seeds and episode counters, its random
        state): a picklable dict of copies, for :meth:`restore`. Needs dealt tables."""

    @abstractmethod
    def restore(self, snapshot: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, Info]:
        """Put back the tables of :meth:`snapshot` (taken by a batch of this backend, name,
        options and ``num_envs``; else ValueError, changing nothing) and show them as
        :meth:`reset` does: ``obs``, ``mask``, ``info["player"]`` of the seat to move. The
        snapshot stays usable: restoring it again replays the same games again."""

    def _snapshot_header(self) -> dict[str, Any]:
        """What a snapshot says it was taken of: the backend and the batch's table."""
        return {
            "backend": self.backend,
            "name": self.name,
            "options": dict(self.options),
            "num_envs": self.num_envs,
        }

    def _check_snapshot(self, snapshot: Any) -> None:
        """ValueError unless ``snapshot`` was taken of a batch like this one."""
        if not isinstance(snapshot, dict) or "backend" not in snapshot:
            raise ValueError(f"not a snapshot of a vector env: {type(snapshot).__name__}")
        for key, mine in self._snapshot_header().items():
            theirs = snapshot.get(key)
            if theirs != mine:
                raise ValueError(
                    f"the snapshot was taken of another batch: its {key} is {theirs!r}, this one's {mine!r}"
                    " (restore into a batch built with the same backend, name, options and num_envs)"
                )

    def close(self) -> None:  # noqa: B027  (a hook: nothing to release unless an engine overrides it)
        """Release what the engine holds (nothing, unless it says otherwise)."""


def base_seed(seed: int | None) -> int:
    """The base seed of a reset: ``seed``, or one from the operating system's entropy."""
    seed = checked_seed(seed)
    if seed is None:
        return int(np.random.SeedSequence().entropy % (1 << 62))  # type: ignore[operator]
    return seed


def checked_actions(actions: Any, mask: np.ndarray) -> np.ndarray:
    """``actions`` as int64[B] if it is one legal action per table; else ValueError saying which
    tables got what, and what is legal there."""
    num_envs = mask.shape[0]
    array = np.asarray(actions)
    if array.shape != (num_envs,):
        raise ValueError(f"actions must have shape ({num_envs},): one per table, got shape {array.shape}")
    if array.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers (an int array), got dtype {array.dtype}")
    array = array.astype(np.int64, copy=False)
    in_range = (array >= 0) & (array < mask.shape[1])
    legal = in_range & mask[np.arange(num_envs), np.where(in_range, array, 0)]
    if not legal.all():
        bad = np.flatnonzero(~legal)
        shown = "; ".join(
            f"table {i}: {int(array[i])}, legal {np.flatnonzero(mask[i]).tolist()}" for i in bad[:5]
        )
        more = f" (and {len(bad) - 5} more tables)" if len(bad) > 5 else ""
        raise ValueError(f"illegal actions at {len(bad)} of {num_envs} tables: {shown}{more}")
    return array
