"""Thousands of tables of one variant stepped together, exactly as the scalar game plays them.

::

    from domino_env import vector

    venv = vector.make("all_fives", num_envs=4096, num_players=2)  # options as domino_env.make's
    obs, mask, info = venv.reset(seed=0)  # obs float32[B, O] (the seat to move's), mask bool[B, A]
    obs, mask, reward, done, info = venv.step(actions)  # actions int[B]; reward float32[B, P]
    state = venv.state()  # float32[B, S]: each table's global state, as the scalar env's state()

``info["player"]`` (int64[B]) is each table's seat to move; ``reward[i, p]`` is seat ``p``'s
reward for table ``i``'s step, as the scalar env's ``rewards["player_<p>"]`` right after it.

**Exactness.** Table ``i`` plays exactly the scalar game: after ``reset(seed=s)`` its ``k``-th
episode is ``domino_env.make(name, **options).reset(seed=s + i + k * B)`` (:func:`episode_seed`)
stepped with the same actions, observation for observation, bit for bit (``seed=None``: ``s``
from the operating system's entropy). ``tests/env/test_vector.py`` checks every backend on every
variant's tables against B scalar envs, step by step.

**Autoreset.** A table whose episode ends starts its next one within the same ``step``: that
step returns the old episode's last rewards with ``done[i]`` set, and the new episode's first
observation, mask and seat to move; the batch never holds a finished table.

**Bad input.** Actions of the wrong shape or dtype, or illegal at their table, raise
ValueError naming the tables, their actions and what is legal there, and change nothing.
``illegal_action="penalize"`` and ``render_mode`` are refused.

**Backends.** ``"scalar"`` (:class:`ScalarVectorEnv`) runs B scalar envs behind the interface:
any variant, any table. A kernel steps every table at once in numpy arrays: a variant's rules
class names its kernel in ``batched_kernel`` (a key of :data:`KERNELS`), and the kernel's
``supports(rules, env_options)`` says whether it plays a given table (None) or why not.
``backend="auto"`` takes the kernel where there is one and it supports the table, else the
scalar backend; ``"kernel"`` demands the kernel (ValueError saying why there is none);
``"scalar"`` always takes the scalar backend. ``venv.backend`` says which one was chosen.
The kernels: ``"chain"`` (:class:`~domino_env.vector.chain.ChainKernel`), the tables of
Classic, All Fives, Cross, Blitz, Osel and Metro.

``"torch"`` (:class:`~domino_env.vector.masked.MaskedKernel`, never chosen by ``"auto"``) steps
the same six games' tables in torch tensors under masks, on ``device`` (``"cpu"``, the default,
or ``"cuda"``), bit for bit as the chain kernel; any other table is refused (ValueError saying what
it plays). Its ``reset_tensors`` and ``step_tensors`` keep the outputs on the device for a GPU
learner. torch is optional (``pip install 'domino-env[train]'``): it is imported only when this
backend is asked for. ``device`` is this backend's option only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domino_env.registry import preset_options, raw_env
from domino_env.vector.base import VectorEnv, episode_seed
from domino_env.vector.chain import ChainKernel
from domino_env.vector.scalar import ScalarVectorEnv

BACKENDS = ("auto", "kernel", "scalar", "torch")

# A kernel's key (a rules class's ``batched_kernel``) -> its class: ``cls(name, num_envs,
# **options)`` builds it, ``cls.supports(rules, env_options)`` says None or why it cannot.
KERNELS: dict[str, type] = {"chain": ChainKernel}


def kernel_refusal(name: str, **options: Any) -> str | None:
    """None if a kernel steps the table ``name`` with ``options`` (as :func:`make`'s), else why
    not. Unknown variants and options raise the scalar registry's ValueError."""
    return _kernel(name, preset_options(name, options))[1]


def make(name: str, num_envs: int, *, backend: str = "auto", device: Any = None, **options: Any) -> VectorEnv:
    """``num_envs`` tables of ``name`` with ``options`` (as :func:`domino_env.make`'s) on the
    chosen ``backend`` (the module docstring); ``device`` (a torch device, default ``"cpu"``)
    for ``backend="torch"`` only."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    if device is not None and backend != "torch":
        raise ValueError(f'device is for backend="torch" only (got device={device!r}, backend={backend!r})')
    if isinstance(num_envs, bool) or not hasattr(num_envs, "__index__") or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    options = preset_options(name, options)
    kernel, refusal = _kernel(name, options)  # (builds a scalar env: unknown options raise its error)
    if options.get("render_mode") is not None:
        raise ValueError("the vector engine renders nothing: leave render_mode unset (render a scalar env)")
    if options.get("illegal_action") == "penalize":
        raise ValueError(
            'illegal_action="penalize" is not offered: the vector engine raises on an illegal action '
            "and changes nothing"
        )
    if backend == "torch":
        return _masked_kernel()(name, int(num_envs), device="cpu" if device is None else device, **options)
    if backend == "kernel" and kernel is None:
        raise ValueError(f"no kernel steps this {name} table: {refusal}")
    if backend != "scalar" and kernel is not None:
        venv: VectorEnv = kernel(name, int(num_envs), **options)
        return venv
    return ScalarVectorEnv(name, int(num_envs), **options)


def _masked_kernel() -> Callable[..., VectorEnv]:
    """The torch kernel's class, its module (and torch, an optional dependency) imported only now."""
    try:
        from domino_env.vector.masked import MaskedKernel
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
        raise ValueError("backend=\"torch\" needs torch (pip install 'domino-env[train]')") from None
    return MaskedKernel


def _kernel(name: str, options: dict[str, Any]) -> tuple[type | None, str | None]:
    """The kernel class that steps this table and None, or None and why none does (``options``
    with any preset resolved; a scalar env is built to validate them)."""
    probe = raw_env(name, **options)
    key = getattr(probe.rules, "batched_kernel", None)
    if key is None:
        return None, f"{name} has no batched kernel (its rules declare no batched_kernel)"
    if key not in KERNELS:
        known = ", ".join(KERNELS) or "none"
        return None, f"{name}'s kernel {key!r} is not available (known kernels: {known})"
    env_options = {option: getattr(probe, attribute) for option, attribute in _ENV_ATTRIBUTES.items()}
    kernel: Any = KERNELS[key]
    refusal = kernel.supports(probe.rules, env_options)
    return (kernel, None) if refusal is None else (None, refusal)


# The environment options a kernel is asked about, with defaults filled: the env's attributes.
_ENV_ATTRIBUTES = {"episode": "episode", "reward": "reward_mode", "illegal_action": "illegal_action"}

__all__ = [
    "BACKENDS",
    "KERNELS",
    "ChainKernel",
    "ScalarVectorEnv",
    "VectorEnv",
    "episode_seed",
    "kernel_refusal",
    "make",
]
