"""Search agent speed: milliseconds per decision of ``search:N`` on every variant.

    python benchmarks/search_speed.py [--budgets 8 16 32 64] [--decisions 40] [--variants classic ...]

For each variant (its benchmark table: 2 players, Cross 4 single players) and each budget
N it plays seeded matches with ``search:N`` in seat 0 and ``greedy`` elsewhere, and times the
search agent's decisions that have a choice (more than one legal action: with one the agent
answers at once, which is not what this measures) until ``--decisions`` of them are timed.
It prints decisions per second and mean ms per decision, one row per variant, one column
pair per budget: the table ``DEFAULT_WORLDS`` (``domino_env.agents.search``) is chosen from,
so that a chain-game decision takes about 20 ms or less on one core.
"""

from __future__ import annotations

import argparse
import time

import domino_env
from domino_env.agents import make_agent
from domino_env.agents.search import DEFAULT_WORLDS


def decision_ms(name: str, budget: int, decisions: int, seed: int) -> float:
    """Mean milliseconds of ``search:budget``'s decisions with a choice, over ``decisions`` of them."""
    spec = domino_env.spec(name)
    options = dict(spec.benchmark_tables[0])
    env = domino_env.raw_env(name, **options)
    searcher = make_agent(f"search:{budget}", seed=seed)
    others = make_agent("greedy", seed=seed + 1)
    spent, timed, game = 0.0, 0, 0
    while timed < decisions:
        env.reset(seed=seed + game)
        game += 1
        while not all(env.terminations.values()):
            agent = env.agent_selection
            obs = env.observe(agent)
            if agent == env.possible_agents[0]:
                choices = int(obs["action_mask"].sum())
                start = time.perf_counter()
                action = searcher(env, obs)
                if choices > 1:
                    spent += time.perf_counter() - start
                    timed += 1
            else:
                action = others(env, obs)
            env.step(action)
            if timed >= decisions:
                break
    return 1000 * spent / timed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="ms per decision of search:N, per variant and budget")
    parser.add_argument("--budgets", nargs="+", type=int, default=[8, 16, 32, 64])
    parser.add_argument("--decisions", type=int, default=40, help="timed decisions per cell (default 40)")
    variants = list(domino_env.SPECS)
    parser.add_argument("--variants", nargs="+", default=variants, choices=variants)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"search:N, decisions with a choice, {args.decisions} per cell; default N = {DEFAULT_WORLDS}")
    head = "".join(f" {'N=' + str(b):>8} {'dec/s':>7}" for b in args.budgets)
    print(f"{'variant':<12}{head}")
    print(f"{'':<12}" + "".join(f" {'ms':>8} {'':>7}" for _ in args.budgets))
    for name in args.variants:
        cells = []
        for budget in args.budgets:
            ms = decision_ms(name, budget, args.decisions, args.seed)
            cells.append(f" {ms:>8.1f} {1000 / ms:>7.1f}")
        print(f"{name:<12}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
