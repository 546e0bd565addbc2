"""One match's mutable state: hands, stock, layout, turn, scores and the event history.

The rules objects in :mod:`domino_env.variants` read and change it; nothing here knows a
variant's rules. :class:`TableState` holds what every table shares, :class:`State` adds the
line of play and a variant's own typed state (:class:`VariantState`); ``clone`` is cheap
(lists of ints and one :class:`Line`), so tests and search agents can branch from any position.
No RNG lives here: chance is the rules' chance points (``state.chance``), which the
environment resolves from its own RNG (:meth:`~domino_env.rules.table.TableRules.resolve`).
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Generic, TypeVar

from domino_env.core.events import DEAL, DRAW, LAY, PASS, ROUND_END, SCORE, Event
from domino_env.core.line import Line

# (the event kinds are re-exported: callers import them from here)
__all__ = [
    "DEAL",
    "DRAW",
    "LAY",
    "PASS",
    "ROUND_END",
    "SCORE",
    "RoundResult",
    "State",
    "TableState",
    "VariantState",
]

TableStateT = TypeVar("TableStateT", bound="TableState")
VariantStateT = TypeVar("VariantStateT", bound="VariantState")
ExtraT = TypeVar("ExtraT")


@dataclass
class RoundResult:
    """How a round ended and what it did to the scores."""

    winner: int | None  # seat that won the round (None: blocked with a tie)
    blocked: bool
    hand_pips: list[int]  # pips left in each seat's hand
    score_change: list[int]  # per side, everything this round changed (counts included)
    next_leader: int


@dataclass
class TableState:
    """What a match in progress holds on any table (a line of play or the grid)."""

    num_players: int
    scores: list[int]
    hands: list[int] = field(default_factory=list)  # tile bitmask per seat
    stock: list[int] = field(default_factory=list)  # undrawn tiles, next drawn at the end
    # The chance point the game waits on (``rules.chance_outcomes``): "deal", "lot", "draw" (3D
    # dominoes: "start", "side", "leader" too); None at a decision or the end.
    chance: str | None = None
    # The stock lies in an order chance already made (the environment's shuffle, a sampled
    # world's): a deal or a draw takes its last tile without stopping. False: each is a chance point.
    shuffled: bool = False
    current: int = 0
    leader: int = 0
    passes: int = 0  # consecutive players who could not move
    round_index: int = 0
    round_serial: int = 0  # increases at every deal, so encoders know when to rebuild
    round_over: bool = False
    match_over: bool = False
    result: RoundResult | None = None
    legal: list[int] = field(default_factory=list)  # legal actions of ``current``
    events: list[Event] = field(default_factory=list)  # this round's history (core.events)
    # The finished round's history, kept when the next is dealt (the env deals it within the
    # step that ends a round, so a commentary would otherwise miss how that round ended).
    last_round_events: list[Event] = field(default_factory=list)

    # The list fields a clone copies (a subclass adds its own).
    _lists: ClassVar[tuple[str, ...]] = ("scores", "hands", "stock", "legal", "events")

    def clone(self: TableStateT) -> TableStateT:
        """An independent copy, for branching and tests; a subclass copies its table on top."""
        other = copy.copy(self)
        for name in self._lists:
            setattr(other, name, getattr(self, name)[:])
        return other

    def hand_size(self, seat: int) -> int:
        return self.hands[seat].bit_count()


@dataclass(slots=True)
class VariantState:
    """A variant's own state (a dataclass per variant); fields are plain values, lists of them
    or lists of lists, which is what :meth:`clone` copies."""

    def clone(self: VariantStateT) -> VariantStateT:
        other = copy.copy(self)
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, list):
                setattr(other, f.name, [v[:] if isinstance(v, list) else v for v in value])
        return other

    def __getitem__(self, name: str) -> Any:
        """Deprecated (for one version): a field by name, as the dict this replaced was read;
        read the attribute (``state.extra.rows``) instead."""
        warnings.warn(
            f"state.extra[{name!r}] is deprecated: read state.extra.{name}", DeprecationWarning, stacklevel=2
        )
        return getattr(self, name)


@dataclass(kw_only=True)
class State(TableState, Generic[ExtraT]):
    """Everything about a chain match in progress; the environment owns one. ``extra`` is the
    variant's own state (a :class:`VariantState`, or None for variants without one)."""

    line: Line
    required_lead: int = -1  # tile id the leader must lead, -1 for any
    turn_laid: int = 0  # tiles laid so far in the current turn (multi-tile turns)
    voids: list[int] = field(default_factory=list)  # per seat, values (bitmask) seen missing
    round_start_scores: list[int] = field(default_factory=list)
    next_leader: int | None = None  # who leads the next round, set when a round ends
    fixed_deals: list[Any] = field(default_factory=list)
    extra: ExtraT

    _lists = (*TableState._lists, "voids", "round_start_scores")

    def clone(self) -> State[ExtraT]:
        other = super().clone()
        other.line = self.line.clone()
        if isinstance(self.extra, VariantState):
            other.extra = self.extra.clone()
        return other
