"""Search tiers above ``search``: ``advanced`` and ``expert``.

Both run :class:`~domino_env.agents.search.SearchAgent`'s engine - the same sampled worlds,
values and common random numbers - with a larger budget, spent where the decision is close,
and exact leaves where a round's end fits:

* **successive halving**: every candidate action meets a first batch of worlds, then the
  better half meets more, and so on until two are left, each stage about the same number of
  action-world evaluations (:class:`Tier`); ``search`` gives every action the same 8;
* **double-dummy leaves** (:mod:`domino_env.agents.solver`): once few tiles are left in the
  hands and the boneyard (a public count) each world's rest of the round is solved exactly,
  every seat knowing every tile, instead of played out by the greedy rule; a world whose solve
  passes its node budget, and every world once the decision's nodes are spent, is rolled out
  as in ``search`` (all its actions alike). Solved and rolled-out values are the same
  quantity, so worlds of both kinds average.

**Fair by construction**, as ``search``: the worlds come from
:meth:`~domino_env.rules.table.TableRules.sample_world` and the solver and the rollouts read nothing
but a world, so a decision is a function of the seat's view and the agent's seed.

Blind, Blind blitz and 3D dominoes get no solver (:func:`~domino_env.agents.solver.solvable`):
there the tiers are the halving search alone. The budgets keep ``expert`` at or under about
100 ms a 2-player chain-game decision on one core and ``advanced`` about a quarter of that
(``benchmarks/search_speed.py``; a table whose rollouts cost more, as Domino-Metro's longer
rounds and 3D dominoes' grid, divides the budget by its ``rollout_cost``). What was tried
and did not pay is in docs/guides/agents.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from domino_env.agents.search import SearchAgent, standing
from domino_env.agents.solver import Table, solvable, solve_counted
from domino_env.core.view import SeatView
from domino_env.rules.table import TableRules


@dataclass(frozen=True)
class Tier:
    """A search tier's budget (see the module docstring)."""

    budget: int  # action-world evaluations a decision, over every stage
    max_worlds: int  # the most worlds one action meets
    solve_tiles: int = 0  # solve the worlds once hands and boneyard hold at most this many tiles
    node_budget: int = 0  # the most states one world's solve visits (all its actions together)
    solve_nodes: int = 0  # the most states a decision's solves visit, all worlds together
    min_worlds: int = 8  # the fewest worlds a stage gives each candidate

    def __post_init__(self) -> None:
        counts = (self.budget, self.max_worlds, self.min_worlds)
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in counts):
            raise ValueError(f"a tier's budgets, max_worlds and min_worlds must be positive integers: {self}")
        limits = (self.solve_tiles, self.node_budget, self.solve_nodes)
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in limits):
            raise ValueError(f"a tier's solver limits must be integers >= 0: {self}")

    def table_budget(self, rules: TableRules) -> int:
        """The budget on this table: a costlier rollout (``rules.rollout_cost``) gets fewer,
        so that a decision takes about the same time on every table."""
        return round(self.budget / rules.rollout_cost)


TIERS: Mapping[str, Tier] = MappingProxyType(
    {
        "advanced": Tier(
            budget=240,
            max_worlds=96,
            solve_tiles=8,
            node_budget=500,
            solve_nodes=3000,
        ),
        "expert": Tier(
            budget=960,
            max_worlds=384,
            solve_tiles=10,
            node_budget=2000,
            solve_nodes=12000,
        ),
    }
)
TIER_NAMES = tuple(TIERS)  # weakest first


def parse_tier_name(name: str) -> str | None:
    """The tier ``name`` names (``advanced``, ``expert``); None for a name of another kind.
    A tier with anything after it (``expert:16``) raises ValueError naming the allowed forms."""
    if name in TIERS:
        return name
    head, colon, _ = name.partition(":")
    if colon and head in TIERS:
        raise ValueError(
            f"agent {name!r}: the search tiers take no budget; allowed: {', '.join(TIER_NAMES)} "
            "(or search:N for N sampled worlds per legal action)"
        )
    return None


class ExpertAgent(SearchAgent):
    """A halving search with exact end-game leaves (see the module docstring): ``tier`` names
    its budget, or is a :class:`Tier` (the tests use small ones)."""

    def __init__(self, tier: str | Tier = "expert", seed: int | None = None) -> None:
        if isinstance(tier, Tier):
            name, budget = "expert*", tier
        elif isinstance(tier, str) and tier in TIERS:
            name, budget = tier, TIERS[tier]
        else:
            raise ValueError(f"unknown search tier {tier!r}; allowed: {', '.join(TIER_NAMES)} or a Tier")
        super().__init__(budget.min_worlds, seed=seed)
        self.tier = budget
        self.name = name
        self._share = budget.budget  # a stage's evaluations, at this decision
        self._solving = False  # this decision's worlds are solved
        self._nodes_left = 0  # of this decision's solves

    def first_batch(self, rules: TableRules, view: SeatView, choices: int) -> int:
        """The first stage's worlds: a stage's share of the budget (there are log2(choices)
        stages) split among the ``choices``. The worlds are solved once few enough tiles are
        left in the hands and the boneyard (a public count: every world has it)."""
        tier = self.tier
        self._solving = sum(view.hand_sizes) + view.boneyard_size <= tier.solve_tiles and solvable(rules)
        self._nodes_left = tier.solve_nodes
        self._share = tier.table_budget(rules) // max(1, math.ceil(math.log2(choices)))
        return max(tier.min_worlds, min(tier.max_worlds, self._share // choices))

    def next_stage(
        self, candidates: list[int], samples: dict[int, list[float]], met: int
    ) -> tuple[list[int], int] | None:
        """Halve: the better half of the candidates (ties: the first in action order) meets
        as many new worlds as a stage's share allows; decide once two have had theirs."""
        tier = self.tier
        if len(candidates) <= 2 or met >= tier.max_worlds:
            return None
        totals = {a: sum(samples[a]) for a in candidates}
        ranked = sorted(candidates, key=lambda a: -totals[a])  # (stable)
        keep = sorted(ranked[: (len(candidates) + 1) // 2])
        count = min(tier.max_worlds - met, max(tier.min_worlds, self._share // len(keep)))
        return keep, count

    def batch_values(
        self, rules: TableRules, batch: list[tuple[Any, int]], actions: list[int], side: int
    ) -> list[list[float]]:
        """Each world's action values: solved exactly at a solving decision while the world's
        and the decision's node budgets last (:meth:`solved_values`), the rest rolled out
        (:meth:`~domino_env.agents.search.SearchAgent.rollout_values`, batched where it pays)."""
        solved = [self.solved_values(rules, world, actions, side) for world, _ in batch]
        unsolved = [pair for pair, values in zip(batch, solved, strict=True) if values is None]
        rolled = iter(self.rollout_values(rules, unsolved, actions, side))
        return [values if values is not None else next(rolled) for values in solved]

    def solved_values(
        self, rules: TableRules, world: Any, actions: list[int], side: int
    ) -> list[float] | None:
        """Each action's exact value in ``world``, or None where this decision does not solve
        or a solve passes its budget (the world is then rolled out, every action alike)."""
        if not (self._solving and self._nodes_left > 0):
            return None
        before = standing(rules, world)
        table: Table = {}  # (shared by the actions: same world, side and standing)
        allowance = min(self.tier.node_budget, self._nodes_left)
        values: list[float] = []
        for action in actions:
            sim = world.clone()
            rules.apply(sim, action)
            value, used = solve_counted(rules, sim, side, before, allowance, table, self.leaf_value)
            self._nodes_left -= used
            allowance -= used
            if value is None:
                return None
            values.append(value)
        return values
