"""The match-level value of a round's end, for variants trained one round at a time.

Training on single rounds (Classic, Domino-Metro) keeps the next deals' luck out of each move's
return, but a round scored in points ignores the match: 20 penalty pips cost the same at 0-0
as at 95-90, and a policy trained on rounds from 0-0 has never seen a match score at all.
With ``run.match_value`` the collector plays whole matches and cuts them at the deals: each
round is an episode of its own (no value flows across a deal), whose reward for a side is the
change the round makes to that side's **match value** ``V`` - its expected match outcome (+1
win, -1 loss, 0 tie) from the scores before a round. The rounds' rewards add up to the
match's outcome (``V`` is 0 at 0-0 by symmetry and the outcome at the end, and the sum
telescopes), so nothing of the match is lost; and each round's return holds an expectation
over the deals to come, not their luck.

``V`` is a dynamic program over the scores of two sides, from a model of one round's score
changes: :func:`round_deltas` counts them in rounds of ``greedy`` against itself, seats
mirrored so that either side may win them (:class:`MatchValue`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from domino_env import raw_env
from domino_env.agents import make_agent

MODEL_ROUNDS = 2000  # greedy rounds behind the model of a round's score changes
MODEL_SEED = 0


def match_values(target: int, lower_score_wins: bool, deltas: dict[tuple[int, int], float]) -> np.ndarray:
    """``V[a, b]``: side A's expected match outcome before a round at scores ``(a, b)`` (each
    below ``target``), when a round adds ``(da, db)`` with probability ``deltas[da, db]``. The
    match ends once a score reaches ``target``; the lower (``lower_score_wins``) or higher
    score wins it, equal scores tie."""
    if any(da < 0 or db < 0 for da, db in deltas) or not deltas:
        raise ValueError(f"a round's score changes must be 0 or more, got {sorted(deltas)}")
    stay = deltas.get((0, 0), 0.0)
    if stay >= 1.0:
        raise ValueError("rounds never change the score: the match value is undefined")
    moves = [(da, db, p / (1.0 - stay)) for (da, db), p in deltas.items() if (da, db) != (0, 0)]
    sign = -1.0 if lower_score_wins else 1.0
    values = np.zeros((target, target))
    for total in range(2 * target - 2, -1, -1):  # a round only adds: later states first
        for a in range(max(0, total - target + 1), min(total, target - 1) + 1):
            b = total - a
            expected = 0.0
            for da, db, p in moves:
                na, nb = a + da, b + db
                if na >= target or nb >= target:
                    expected += p * sign * ((na > nb) - (na < nb))
                else:
                    expected += p * values[na, nb]
            values[a, b] = expected
    return values


def round_deltas(
    variant: str, options: dict[str, Any], rounds: int = MODEL_ROUNDS, seed: int = MODEL_SEED
) -> dict[tuple[int, int], float]:
    """The distribution of one round's score changes ``(side A, side B)`` at the table
    ``variant`` and ``options`` make (two sides), from ``rounds`` seeded rounds of ``greedy``
    in every seat, each counted both ways round so the model favours neither side."""
    table = raw_env(variant, **{**options, "episode": "round"})
    sides = table.rules.num_sides
    if sides != 2:
        raise ValueError(f"the match value models a table of two sides; this one has {sides}")
    players = [make_agent("greedy", seed + seat, env=table) for seat in range(table.rules.num_players)]
    counts: Counter[tuple[int, int]] = Counter()
    for r in range(rounds):
        table.reset(seed=seed + r)
        while not all(table.terminations.values()):
            agent = table.agent_selection
            table.step(players[table.possible_agents.index(agent)](table, table.observe(agent)))
        da, db = table.side_scores
        counts[da, db] += 1
        counts[db, da] += 1
    total = sum(counts.values())
    return {delta: n / total for delta, n in counts.items()}


class MatchValue:
    """Each side's match value at a table, looked up by the sides' scores."""

    def __init__(self, variant: str, options: dict[str, Any]) -> None:
        deltas = round_deltas(variant, options)
        rules = raw_env(variant, **options).rules
        self.values = match_values(rules.match_target, rules.lower_score_wins, deltas)

    def __call__(self, scores: tuple[int, ...]) -> tuple[float, float]:
        """(side A's value, side B's) before a round at ``scores``; the model is symmetric, so
        they sum to 0."""
        a, b = scores
        return float(self.values[a, b]), float(self.values[b, a])

    def credit(
        self,
        side_of: Sequence[int],
        start: tuple[int, ...],
        end: tuple[int, ...],
        outcomes: Sequence[float] | None = None,
    ) -> list[float]:
        """Each seat's reward for a round that took the sides' scores from ``start`` to
        ``end``: the change in its side's match value, or, where the round ended the match
        (``outcomes``, per seat), its outcome less the value at ``start``."""
        before = self(start)
        if outcomes is None:
            value = self(end)
            outcomes = [value[side] for side in side_of]
        return [outcomes[seat] - before[side] for seat, side in enumerate(side_of)]
