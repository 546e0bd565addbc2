"""Search agent speed: milliseconds per decision of every search tier on every variant.

    python benchmarks/search_speed.py [--agents search advanced expert search:32] [--decisions 40]
                                      [--variants classic ...] [--python]

For each variant (its benchmark table: 2 players, Cross 4 single players) and each agent
(``search``, ``search:N``, ``advanced``, ``expert``: any built-in search name; or a
policy-guided search ``search:[N:]<checkpoint>``, timed on its checkpoint's variant only, to
compare with ``expert`` at equal time) it plays seeded matches with the agent in seat 0 and
``greedy`` elsewhere, and times the agent's decisions that have a choice (more than one legal
action: with one the agent answers at once, which is not what this measures) until
``--decisions`` of them are timed. It prints the mean and the slowest ms per decision, one row
per variant, one column pair per agent: the table the budgets are chosen from
(``DEFAULT_WORLDS`` in ``domino_env.agents.search``, about 20 ms or less a chain-game decision
on one core; ``TIERS`` in ``domino_env.agents.expert``, about 100 ms for ``expert`` and a
quarter of that for ``advanced``).

Rollouts run in batches on the variant's kernel where it has one and a search stage has at
least ``domino_env.vector.rollouts.MIN_ROWS`` (world, action) rows (the same values, so the
same decisions). ``--python`` adds a column pair per agent with every rollout in Python, on
the same decisions, for the before-and-after (and for choosing ``MIN_ROWS``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import domino_env
from domino_env.agents import SEARCH_NAMES, is_builtin, make_agent, search
from domino_env.agents.search import DEFAULT_WORLDS
from training.cli import OneLineParser, run_script
from training.eval.arena import non_negative_int, positive_int
from training.eval.benchmark.protocol import fits
from training.eval.evaluate import contestant
from training.model.names import parse_guided_name

AGENTS = ["search", "advanced", "expert"]


def decision_times(
    name: str, agent_name: str, decisions: int, seed: int, batched: bool = True
) -> list[float]:
    """Seconds of each of ``decisions`` decisions with a choice of ``agent_name`` in seat 0
    (``batched=False``: every rollout in Python)."""
    threshold = search.MIN_ROWS
    search.MIN_ROWS = threshold if batched else 1 << 62
    try:
        return _times(name, agent_name, decisions, seed)
    finally:
        search.MIN_ROWS = threshold


def _times(name: str, agent_name: str, decisions: int, seed: int) -> list[float]:
    spec = domino_env.spec(name)
    options = dict(spec.benchmark_tables[0])
    env = domino_env.raw_env(name, **options)
    searcher = make_agent(agent_name, seed=seed, env=env)
    others = make_agent("greedy", seed=seed + 1)
    times: list[float] = []
    game = 0
    while len(times) < decisions:
        env.reset(seed=seed + game)
        game += 1
        while not all(env.terminations.values()) and len(times) < decisions:
            agent = env.agent_selection
            obs = env.observe(agent)
            if agent == env.possible_agents[0]:
                choices = int(obs["action_mask"].sum())
                start = time.perf_counter()
                action = searcher(env, obs)
                if choices > 1:
                    times.append(time.perf_counter() - start)
            else:
                action = others(env, obs)
            env.step(action)
    return times


def agent_name(text: str) -> str:
    """An argparse type: a built-in search agent's name, or a policy-guided search's whose
    checkpoint exists."""
    try:
        known = is_builtin(text) and text not in ("random", "greedy")
        guided = parse_guided_name(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if guided is not None and not Path(guided[1]).exists():
        raise argparse.ArgumentTypeError(f"{text!r}: no checkpoint file or run folder {guided[1]!r}")
    if not known and guided is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a search agent ({SEARCH_NAMES}, or search:[N:]CHECKPOINT)"
        )
    return text


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description="ms per decision of the search tiers, per variant")
    parser.add_argument(
        "--agents", nargs="+", type=agent_name, default=AGENTS, help=f"{SEARCH_NAMES}, search:[N:]CHECKPOINT"
    )
    parser.add_argument(
        "--decisions", type=positive_int, default=40, help="timed decisions per cell (default 40)"
    )
    variants = list(domino_env.SPECS)
    parser.add_argument("--variants", nargs="+", default=variants, choices=variants)
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--python", action="store_true", help="also time every rollout in Python")
    args = parser.parse_args(argv)
    # (a guided search plays only its checkpoint's table: the benchmark's own test of that)
    contestants = {agent: contestant(agent) for agent in args.agents}
    columns = [(agent, True) for agent in args.agents]
    if args.python:
        columns = [(agent, batched) for agent in args.agents for batched in (True, False)]
    print(
        f"ms per decision with a choice (mean, slowest), {args.decisions} per cell, seat 0 against "
        f"greedy; search = search:{DEFAULT_WORLDS}"
    )
    heads = [agent if batched else f"{agent} (python)" for agent, batched in columns]
    print(f"{'variant':<12}" + "".join(f" {head:>17}" for head in heads))
    print(f"{'':<12}" + "".join(f" {'mean':>8} {'max':>8}" for _ in columns))
    for name in args.variants:
        cells = []
        for agent, batched in columns:
            if not fits(contestants[agent], name):
                cells.append(f" {'-':>8} {'-':>8}")
                continue
            times = decision_times(name, agent, args.decisions, args.seed, batched)
            cells.append(f" {1000 * sum(times) / len(times):>8.1f} {1000 * max(times):>8.1f}")
        print(f"{name:<12}" + "".join(cells), flush=True)


if __name__ == "__main__":
    run_script(main)
