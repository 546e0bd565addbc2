"""Batched engine speed: decisions per second, observations included, against the scalar env.

    python benchmarks/vector_speed.py [--sizes 1 16 256 4096 16384] [--variants classic blind]
                                      [--seconds 1] [--repeats 3] [--scalar-max 4096] [--csv PATH]
                                      [--plot PATH] [--backends kernel scalar torch]
                                      [--device cpu] [--torch-threads 1] [--episode round]

For each variant (default: every variant whose standard table has a kernel, and the first one
without) it plays ``domino_env.vector.make(name, B, episode="round")`` at each batch size B on
each backend that can step the table (the kernel where ``vector.kernel_refusal`` allows it;
the scalar backend always, up to ``--scalar-max`` tables: its rate per table does not grow
with B), every table's action drawn uniformly from its mask in a few vectorised numpy calls.
The reference (``x scalar`` = 1) is the scalar env, measured as ``benchmarks/env_speed.py``
measures it: the AEC loop, ``env.last()`` (the next seat's observation and mask) then
``env.step`` of a random legal action. A decision is one table's action. Each cell runs
``--repeats`` chunks of ``--seconds / --repeats`` alternating with as many chunks of the scalar
env, and keeps each one's best: a cell's ``x scalar`` is over the scalar env measured in the
same minutes (``env decisions/s``), so a machine whose speed drifts moves both. The ``env`` row
is the scalar env's best over the variant's cells.
``--episode match`` plays whole matches as episodes instead, both engines (what training
plays: a match's next rounds are dealt from the stream its last deal left, not seeded anew).

``--backends`` picks the backends (default: ``kernel scalar``). ``torch`` (the masked kernel of
``domino_env.vector.masked``, on ``--device``; ``--torch-threads`` sets torch's intra-op threads)
plays the tables the torch kernel plays, always beside the numpy kernel in the same run; it
steps through ``step_tensors`` and picks its actions on the device (a random score a legal
action, the best taken), so that on a GPU nothing but the step's own sync reaches the host.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import domino_env
from domino_env import vector

sys.path.insert(0, str(Path(__file__).resolve().parent))  # env_speed, beside this script

from env_speed import OursRunner, best_rates, positive_float

from training.cli import OneLineParser, run_script
from training.cli.arguments import output_file, picture_file
from training.eval.arena import positive_int

SIZES = (1, 16, 256, 4096, 16384)
BACKENDS = ("kernel", "scalar", "torch")


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """One action per row of ``mask``, uniform among its legal ones: the flat index of every
    legal (row, column) in row order, each row's count of them (where its run ends: their
    running sum), and one random offset into each run. (``flatnonzero`` and ``bincount`` read
    the masks once; a binary search for the runs' starts took twice as long alone on Classic's
    56 actions, a third longer in the stepping loop, and ``nonzero``'s row and column arrays
    or ``count_nonzero`` by row 3-10 times as long on Domino-Metro's 1,210.)"""
    legal = np.flatnonzero(mask)
    counts = np.bincount(legal // mask.shape[1], minlength=len(mask))
    starts = np.cumsum(counts) - counts
    return legal[starts + (rng.random(len(mask)) * counts).astype(np.int64)] % mask.shape[1]


class VectorRunner:
    """Random play on a batch of tables, resumable in chunks (the interface of env_speed's runners)."""

    def __init__(self, name: str, options: dict[str, Any], backend: str, size: int, seed: int = 0) -> None:
        self.venv = vector.make(name, size, backend=backend, **{"episode": "round", **options})
        self.mask = self.venv.reset(seed=seed)[1]
        self.rng = np.random.default_rng(seed)
        self.label = self.venv.backend  # the kernel's own name: "chain", ...

    def run(self, seconds: float) -> tuple[int, int, float]:
        """Step the batch for about ``seconds``; returns (decisions, episodes ended, elapsed)."""
        venv, rng, mask = self.venv, self.rng, self.mask
        decisions = episodes = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            _obs, mask, _reward, done, _info = venv.step(random_legal(rng, mask))
            decisions += len(mask)
            episodes += int(done.sum())
        self.mask = mask
        return decisions, episodes, time.perf_counter() - start


class TorchRunner:
    """Random play on the torch kernel's tables, kept on ``device`` (VectorRunner's interface)."""

    def __init__(self, name: str, options: dict[str, Any], size: int, device: str, seed: int = 0) -> None:
        import torch

        from domino_env.vector.masked import MaskedKernel

        venv = vector.make(name, size, backend="torch", device=device, **{"episode": "round", **options})
        assert isinstance(venv, MaskedKernel)
        self.venv = venv
        self.mask = venv.reset_tensors(seed=seed)[1]
        self.rng = torch.Generator(device=device).manual_seed(seed)
        self.label = f"torch:{venv.device.type}"

    def run(self, seconds: float) -> tuple[int, int, float]:
        """Step the batch for about ``seconds``; returns (decisions, episodes ended, elapsed)."""
        import torch

        venv, mask = self.venv, self.mask
        decisions, episodes = 0, torch.zeros((), dtype=torch.int64, device=mask.device)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            scores = torch.where(mask, torch.rand(mask.shape, generator=self.rng, device=mask.device), -1.0)
            _obs, mask, _reward, done, _info = venv.step_tensors(scores.argmax(dim=1))
            decisions += len(mask)
            episodes += done.sum()  # (on the device: no sync of its own)
        self.mask = mask
        return decisions, int(episodes), time.perf_counter() - start


def standard_table(name: str) -> dict[str, Any]:
    """The variant's first standard table (``spec.benchmark_tables``)."""
    return dict(domino_env.spec(name).benchmark_tables[0])


def has_kernel(name: str) -> bool:
    """Whether a kernel steps the variant's standard table."""
    return vector.kernel_refusal(name, **standard_table(name)) is None


def plays_torch(name: str) -> bool:
    """Whether the torch kernel steps the variant's standard table."""
    from domino_env.vector.masked import MaskedKernel

    probe = domino_env.make(name, **standard_table(name)).unwrapped
    env_options = {"episode": "round", "illegal_action": probe.illegal_action, "render_mode": None}
    return MaskedKernel.supports(probe.rules, env_options) is None


def default_variants() -> list[str]:
    """Every variant whose standard table a kernel steps, and the first one no kernel steps."""
    kernel = [name for name in domino_env.SPECS if has_kernel(name)]
    return kernel + [name for name in domino_env.SPECS if name not in kernel][:1]


def cells(
    name: str, sizes: list[int], scalar_max: int, backends: tuple[str, ...] = BACKENDS[:2]
) -> list[tuple[str, int]]:
    """The (backend, B) pairs measured for a variant (the torch kernel's beside the numpy one's)."""
    torch = "torch" in backends and plays_torch(name)
    out = [("kernel", size) for size in sizes if has_kernel(name) and ("kernel" in backends or torch)]
    out += [("torch", size) for size in sizes if torch]
    return out + [("scalar", size) for size in sizes if size <= scalar_max and "scalar" in backends]


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=positive_int, nargs="+", default=list(SIZES), help="batch sizes B")
    parser.add_argument("--variants", nargs="+", choices=list(domino_env.SPECS), help="default: see above")
    parser.add_argument("--seconds", type=positive_float, default=1.0, help="time per cell (default 1)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="chunks per cell; the best counts")
    parser.add_argument(
        "--scalar-max", type=positive_int, default=4096, help="largest B on the scalar backend (default 4096)"
    )
    parser.add_argument("--csv", type=output_file, help="also write the rows to this CSV file")
    parser.add_argument("--plot", type=picture_file, help="also draw the rows (a PNG): x scalar against B")
    parser.add_argument(
        "--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS[:2]), help="default: kernel scalar"
    )
    parser.add_argument("--device", default="cpu", help="the torch backend's device (default cpu)")
    parser.add_argument(
        "--episode", choices=("round", "match"), default="round", help="an episode (default: one round)"
    )
    parser.add_argument(
        "--torch-threads", type=positive_int, help="torch's intra-op threads (default: torch's)"
    )
    args = parser.parse_args()
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    header = ("variant", "table", "backend", "B", "decisions/s", "env decisions/s", "x scalar")
    variant, table, backend, size, rate, _, ratio = header
    print(f"{variant:<12} {table:<18} {backend:<10} {size:>6} {rate:>12} {'env':>9} {ratio:>9}")
    rows: list[tuple[Any, ...]] = []
    for name in args.variants or default_variants():
        options = {**standard_table(name), "episode": args.episode}
        table = ", ".join(f"{k}={v}" for k, v in options.items() if (k, v) != ("episode", "round"))
        env = OursRunner(name, options)
        measured = []
        for backend, size in cells(name, args.sizes, args.scalar_max, tuple(args.backends)):
            runner: VectorRunner | TorchRunner = (
                TorchRunner(name, options, size, args.device)
                if backend == "torch"
                else VectorRunner(name, options, backend, size)
            )
            (scalar, _), (rate, _) = best_rates([env, runner], args.seconds, args.repeats)
            measured.append((runner.label, size, rate, scalar))
            del runner  # (a big batch's tables go before the next is built)
        best = (
            max((scalar for *_, scalar in measured), default=0.0)
            or best_rates([env], args.seconds, args.repeats)[0][0]
        )
        for backend, size, rate, scalar in [("env", 1, best, best), *measured]:
            rows.append((name, table, backend, size, round(rate), round(scalar), round(rate / scalar, 2)))
            print(
                f"{name:<12} {table:<18} {backend:<10} {size:>6} {rate:>12,.0f} {scalar:>9,.0f} "
                f"{rate / scalar:>8.2f}x"
            )
    if args.csv:
        with args.csv.open("w", newline="") as file:
            csv.writer(file).writerows([header, *rows])
        print(f"wrote {args.csv}")
    if args.plot:
        plot(rows, args.plot)
        print(f"wrote {args.plot}")


def plot(rows: list[tuple[Any, ...]], path: Path) -> None:
    """Each variant's rate over its scalar env's (``x scalar``) against B, one line a backend,
    log-log, the scalar env at 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for k, name in enumerate(dict.fromkeys(row[0] for row in rows)):
        for backend in dict.fromkeys(r[2] for r in rows if r[0] == name and r[2] != "env"):
            mine = [r for r in rows if r[0] == name and r[2] == backend]
            style = ":x" if backend == "scalar" else "--s" if backend.startswith("torch") else "-o"
            xs, ys = [r[3] for r in mine], [r[6] for r in mine]
            ax.plot(xs, ys, style, color=f"C{k}", label=f"{name} ({backend})")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tables in the batch (B)")
    ax.set_ylabel("decisions/s over the scalar env's")
    ax.set_title("domino_env.vector: random play with observations, one core")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    run_script(main)
