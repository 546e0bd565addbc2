"""An exact double-dummy solver for the rest of a round in one sampled world.

In a world of :meth:`~domino_env.rules.table.TableRules.sample_world` every hand and the boneyard's
order are fixed, so the rest of the round is a deterministic game of perfect information.
:func:`solve` plays it out by alpha-beta over ``rules.apply`` on branched states, moves
ordered by the rules' ``greedy_key``, with a transposition table, and returns the quantity
:func:`~domino_env.agents.search.rollout_value` gives a greedy rollout
(:func:`~domino_env.agents.search.round_value` of the round's end), so exact leaves and
rollouts compare and average alike.

**Sides.** The root ``side`` maximizes and every other side minimizes the root side's value.
With two sides (2 players, or partners) the value is zero-sum and this is exact minimax;
with more (3 single players, Cross's 4) it is the *paranoid* value: the others are taken to
play against the root side together, a lower bound on what it gets.

**Keys.** The rest of a round depends on the hands, the boneyard (within one world only its
length: it is drawn from the end), the line (arms, lead tile, slot states, spinner), whose
turn, passes, tiles laid this turn, scores and the variant's own state (every field of
``state.extra``); voids and events are information only (the rules read the events for the
lay just made and, in Osel, for the next round's leader, on which no value here depends).
:func:`state_key` is that tuple; ``tests/agents/test_expert.py`` checks the solver against plain
minimax, without pruning or table, on tiny tables and end-games of the standard ones.

It plays the line games whose seats name their own tiles (``rules.seats_name_own_tiles``: not
Blind and Blind blitz, whose rows hide a seat's tiles from itself, nor 3D dominoes with its
hundreds of placements a move): :func:`solvable`.
"""

from __future__ import annotations

import copy
from dataclasses import fields
from typing import Any

from domino_env.agents.search import Value, round_value
from domino_env.core.state import State, VariantState
from domino_env.rules.chain import LineRules
from domino_env.rules.table import TableRules

Table = dict[Any, tuple[float, float]]  # state key -> bounds (lower, upper) of its value
INF = float("inf")


class _OverBudget(Exception):
    """The node budget is spent: the solve gives up (its table keeps what it proved)."""


def solvable(rules: TableRules) -> bool:
    """Can :func:`solve` play ``rules``' rounds (a line game whose seats name their tiles)?"""
    return isinstance(rules, LineRules) and rules.seats_name_own_tiles


def tiles_in_hands(state: Any) -> int:
    """Tiles in the hands: what a solve's cost grows with (a draw is a forced move, so the
    boneyard adds depth but no choices)."""
    return sum(hand.bit_count() for hand in state.hands)


def solve(
    rules: TableRules,
    state: Any,
    side: int,
    before: list[int],
    node_budget: int,
    table: Table | None = None,
) -> float | None:
    """The exact value to ``side`` of playing the rest of ``state``'s round out, every seat
    knowing every tile (the rollouts' quantity, from the standing ``before``; paranoid with
    more than two sides), or None when that takes more than ``node_budget`` states. A
    ``table`` kept between calls with the same ``side`` and ``before`` in one world shares
    what was proved."""
    return solve_counted(rules, state, side, before, node_budget, table)[0]


def solve_counted(
    rules: TableRules,
    state: Any,
    side: int,
    before: list[int],
    node_budget: int,
    table: Table | None = None,
    end_value: Value | None = None,
) -> tuple[float | None, int]:
    """:func:`solve`'s value and the states it visited (all ``node_budget`` when it gave up);
    ``end_value`` values a round's end instead of ``round_value`` (a table holds one kind)."""
    end_value = end_value or round_value
    if state.round_over:
        return end_value(rules, state, side, before), 0
    search = _Search(rules, side, before, node_budget, {} if table is None else table, end_value)
    try:
        value = search.value(state, -INF, INF)
    except _OverBudget:
        return None, node_budget
    return value, node_budget - search.budget


class _Search:
    """One solve: fail-soft alpha-beta with a table of proved bounds."""

    __slots__ = ("apply", "before", "budget", "end_value", "greedy_key", "rules", "side", "side_of", "table")

    def __init__(
        self, rules: TableRules, side: int, before: list[int], budget: int, table: Table, end_value: Value
    ) -> None:
        self.rules, self.side, self.before, self.budget, self.table = rules, side, before, budget, table
        self.end_value = end_value
        self.side_of, self.greedy_key, self.apply = rules.side_of, rules.greedy_key, rules.apply

    def value(self, state: Any, alpha: float, beta: float) -> float:
        key = state_key(state)
        bounds = self.table.get(key)
        if bounds is not None:
            low, high = bounds
            if low >= beta or low == high:
                return low
            if high <= alpha:
                return high
            alpha, beta = max(alpha, low), min(beta, high)
        else:
            low, high = -INF, INF
        legal = state.legal
        self.budget -= len(legal)  # (a state per move: what a solve's time grows with)
        if self.budget < 0:
            raise _OverBudget
        if len(legal) > 1:
            greedy_key = self.greedy_key
            legal = sorted(legal, key=lambda a: greedy_key(state, a), reverse=True)
        maximizing = self.side_of[state.current] == self.side
        start_alpha, start_beta = alpha, beta
        best = -INF if maximizing else INF
        for action in legal:
            sim = child(state)
            self.apply(sim, action)
            v = (
                self.end_value(self.rules, sim, self.side, self.before)
                if sim.round_over
                else self.value(sim, alpha, beta)
            )
            if maximizing:
                if v > best:
                    best = v
                    alpha = max(alpha, v)
            elif v < best:
                best = v
                beta = min(beta, v)
            if alpha >= beta:
                break
        # what was proved: at or below the window an upper bound, at or above it a lower one
        if best <= start_alpha:
            high = min(high, best)
        elif best >= start_beta:
            low = max(low, best)
        else:
            low = high = best
        self.table[key] = (low, high)
        return best


_EXTRA_FIELDS: dict[type, tuple[str, ...]] = {}


def _extra_fields(extra: VariantState) -> tuple[str, ...]:
    names = _EXTRA_FIELDS.get(type(extra))
    if names is None:
        names = _EXTRA_FIELDS[type(extra)] = tuple(f.name for f in fields(extra))
    return names


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def state_key(state: State[Any]) -> tuple[Any, ...]:
    """What the rest of a chain round depends on, within one world (the module docstring)."""
    line, extra = state.line, state.extra
    extra_key = (
        tuple(_freeze(getattr(extra, name)) for name in _extra_fields(extra))
        if isinstance(extra, VariantState)
        else extra
    )
    return (
        tuple(state.hands),
        len(state.stock),
        state.current,
        state.passes,
        state.turn_laid,
        state.required_lead,
        tuple(state.scores),
        tuple(line.state),
        tuple(map(tuple, line.arms)),
        line.lead_tile,
        line.spinner_slot,
        line.spinner_depth,
        extra_key,
    )


_STATE_LISTS = State._lists


def child(state: Any) -> Any:
    """A copy of ``state`` to apply one move to: :meth:`State.clone`'s copy made directly, as
    cloning is most of a node's cost."""
    if type(state) is not State:
        return state.clone()
    other = object.__new__(State)
    attributes = other.__dict__
    attributes.update(state.__dict__)
    for name in _STATE_LISTS:
        attributes[name] = attributes[name][:]
    attributes["line"] = state.line.clone()
    extra = state.extra
    if isinstance(extra, VariantState):
        if type(extra).clone is VariantState.clone:  # (its copy, without its per-call field lookup)
            extra = copy.copy(extra)
            for name in _extra_fields(extra):
                value = getattr(extra, name)
                if type(value) is list:
                    setattr(extra, name, [v[:] if type(v) is list else v for v in value])
            attributes["extra"] = extra
        else:
            attributes["extra"] = extra.clone()
    return other
