"""One match's mutable state: hands, stock, layout, turn, scores and the event history.

The rules objects in :mod:`domino_env.variants` read and change it; nothing here knows a
variant's rules. :meth:`State.clone` is cheap (lists of ints and one :class:`Line`), so
tests and search agents can branch from any position.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from domino_env.core.line import Line

# Event kinds in ``State.events``; each event is a tuple starting with its kind.
DEAL = "deal"  # ("deal", round_index)
LAY = "lay"  # ("lay", seat, tile, slot, end_value)  end_value -1 for the lead
DRAW = "draw"  # ("draw", seat, tile)  the tile is known to the drawer only
PASS = "pass"  # ("pass", seat)
SCORE = "score"  # ("score", side, points, reason)
ROUND_END = "round_end"  # ("round_end", winner_seat_or_-1, blocked)


@dataclass
class RoundResult:
    """How a round ended and what it did to the scores."""

    winner: int | None  # seat that won the round (None: blocked with a tie)
    blocked: bool
    hand_pips: list[int]  # pips left in each seat's hand
    score_change: list[int]  # per side, everything this round changed (counts included)
    next_leader: int


@dataclass
class State:
    """Everything about a match in progress; the environment owns one."""

    num_players: int
    line: Line
    rng: np.random.Generator
    scores: list[int]
    hands: list[int] = field(default_factory=list)  # tile bitmask per seat
    stock: list[int] = field(default_factory=list)  # undrawn tiles, next drawn at the end
    current: int = 0
    leader: int = 0
    required_lead: int = -1  # tile id the leader must lead, -1 for any
    passes: int = 0  # consecutive players who could not move
    turn_laid: int = 0  # tiles laid so far in the current turn (multi-tile turns)
    voids: list[int] = field(default_factory=list)  # per seat, values (bitmask) seen missing
    round_index: int = 0
    round_serial: int = 0  # increases at every deal, so encoders know when to rebuild
    round_start_scores: list[int] = field(default_factory=list)
    round_over: bool = False
    match_over: bool = False
    result: RoundResult | None = None
    next_leader: int | None = None  # who leads the next round, set when a round ends
    legal: list[int] = field(default_factory=list)  # legal actions of ``current``
    events: list[tuple[Any, ...]] = field(default_factory=list)  # this round's history
    fixed_deals: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # variant-specific state

    def clone(self) -> State:
        """An independent copy (the RNG too), for branching and tests."""
        other = copy.copy(self)
        other.line = self.line.clone()
        other.rng = copy.deepcopy(self.rng)
        for name in ("scores", "hands", "stock", "voids", "round_start_scores", "legal", "events"):
            setattr(other, name, getattr(self, name)[:])
        other.extra = copy.deepcopy(self.extra)
        return other

    def hand_size(self, seat: int) -> int:
        return self.hands[seat].bit_count()
