"""The PPO update's compute ceiling: how many rows a second a bare network of the learner's
shape trains on, against this machine's matrix-multiply rate.

    python benchmarks/update_ceiling.py [--variant classic] [--hidden 256 256] [--batch 512 2048 8192]
                                        [--threads 1] [--epochs 4]

Training decisions per second can never exceed (rows a second forward and backward) /
``update_epochs``, whatever collects them: this measures that bound for a plain tanh MLP
(observation -> hidden -> policy logits and a value) with Adam, the variant's own observation
and action sizes, on ``--threads`` torch threads, next to a 1024 x 1024 matmul's GFLOP/s (the
rate the processor reaches on large products). The learner's real network adds action blocks,
traits and the play outlook, so it is slower than this bound, never faster.
"""

from __future__ import annotations

import itertools
import time

import torch

import domino_env
from training.cli import OneLineParser, run_script
from training.eval.arena import positive_int


def matmul_gflops(size: int = 1024, repeats: int = 20) -> float:
    """GFLOP/s of ``size`` x ``size`` float32 matrix products."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(3):
        a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * size**3 * repeats / (time.perf_counter() - start) / 1e9


def mlp_rows(
    inputs: int, hidden: list[int], outputs: int, batch: int, repeats: int = 50
) -> tuple[float, float]:
    """(rows a second, GFLOP/s) of Adam steps on a tanh MLP, forward and backward."""
    layers: list[torch.nn.Module] = []
    width = inputs
    for size in hidden:
        layers += [torch.nn.Linear(width, size), torch.nn.Tanh()]
        width = size
    net = torch.nn.Sequential(*layers, torch.nn.Linear(width, outputs))
    optimizer = torch.optim.Adam(net.parameters())
    x = torch.randn(batch, inputs)
    for _ in range(3):
        net(x).square().mean().backward()
    start = time.perf_counter()
    for _ in range(repeats):
        optimizer.zero_grad()
        net(x).square().mean().backward()
        optimizer.step()
    elapsed = time.perf_counter() - start
    widths = [inputs, *hidden, outputs]
    flops = 2 * sum(a * b for a, b in itertools.pairwise(widths)) * 3 * batch * repeats
    return batch * repeats / elapsed, flops / elapsed / 1e9


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description="the PPO update's compute ceiling on this machine")
    parser.add_argument("--variant", default="classic", choices=list(domino_env.SPECS))
    parser.add_argument("--hidden", type=positive_int, nargs="+", default=[256, 256])
    parser.add_argument(
        "--batch", type=positive_int, nargs="+", default=[512, 2048, 8192], help="minibatch sizes"
    )
    parser.add_argument("--threads", type=positive_int, default=1, help="torch threads (default 1)")
    parser.add_argument("--epochs", type=positive_int, default=4, help="the config's ppo.update_epochs")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    env = domino_env.raw_env(args.variant, **dict(domino_env.spec(args.variant).benchmark_tables[0]))
    inputs, actions = env.encoder.size, env.rules.num_actions
    print(f"{args.threads} torch thread(s); 1024^3 matmul: {matmul_gflops():.0f} GFLOP/s")
    for batch in args.batch:
        rows, gflops = mlp_rows(inputs, args.hidden, actions + 1, batch)
        print(
            f"{args.variant} MLP {inputs}-{'-'.join(map(str, args.hidden))}-{actions + 1}, "
            f"minibatch {batch}: "
            f"{rows:,.0f} rows/s forward+backward ({gflops:.0f} GFLOP/s): at most "
            f"{rows / args.epochs:,.0f} training decisions/s with {args.epochs} epochs"
        )


if __name__ == "__main__":
    run_script(main)
