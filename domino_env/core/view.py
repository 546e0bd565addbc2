"""A seat's view: everything one player knows, as a typed, read-only information state.

``env.unwrapped.view(seat)`` (built by :func:`domino_env.rules.view.seat_view`) is what
search agents sample from and what terminal play and the browser draw: its own tiles (only
those it can name, in Blind), the table, hand and boneyard sizes, the values each player was
seen unable to play, scores, the public events (a drawn tile is named only to the player who
can name it), the tiles whose place it cannot know, and a copy of the layout (the line or
the grid) that a sampler can deal hidden tiles around. Two games that differ only in what
the seat cannot know give equal views.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from domino_env.core.grid import Grid
from domino_env.core.line import Line
from domino_env.core.state import RoundResult

HIDDEN = -1  # the tile of an event the seat cannot name


@dataclass(frozen=True)
class SeatView:
    """What ``seat`` knows now. Tiles are ids of the variant's tile set (``tiles`` names them)."""

    variant: str
    seat: int
    num_players: int
    side_of: tuple[int, ...]  # each seat's side (partners share one)
    current_player: int
    round: int
    hand: frozenset[int]  # the tiles of its own hand it can name
    hand_sizes: tuple[int, ...]  # per seat
    boneyard_size: int
    table: frozenset[int]  # tiles on the table
    layout: Line | Grid  # a copy of the table's engine object (the line of play, or the grid)
    known_hands: tuple[frozenset[int], ...]  # per seat, tiles of that hand it can name (others: shown to all)
    voids: tuple[int, ...]  # per seat, values it was seen unable to play (bitmask; () on a grid)
    scores: tuple[int, ...]  # per seat (its side's score)
    legal_actions: tuple[int, ...]  # the seat's legal actions, ascending (empty while another moves)
    events: tuple[tuple[Any, ...], ...]  # this round's events, hidden tiles as HIDDEN
    last_round_events: tuple[tuple[Any, ...], ...]  # the previous round's, the same way (or ())
    unseen: frozenset[int]  # tiles whose place it cannot know: some other hand or the boneyard
    public: Mapping[str, Any]  # ``env.public_state()``: the layout and the variant's public facts
    private: Mapping[str, Any]  # what only this seat knows beyond its hand (Blind: its row)
    round_over: bool
    match_over: bool
    result: RoundResult | None  # how the round ended (every hand's pips are shown then)

    @property
    def to_move(self) -> bool:
        return self.current_player == self.seat and not self.round_over
