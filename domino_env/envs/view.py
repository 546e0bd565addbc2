"""A seat's view: everything one player knows, as a typed, read-only information state.

``env.unwrapped.view(seat)`` is what search agents sample from, what terminal play and the
browser draw, and what an observation encodes: its own tiles (only those it can name, in
Blind), the table, hand and boneyard sizes, the values each player was seen unable to play,
scores, the public events (a drawn tile is named only to the player who can name it), the
tiles whose place it cannot know, and a copy of the layout (the line or the grid) that a
sampler can deal hidden tiles around. It is built from the game through the rules' hooks
(``known_hand``, ``public_hands``, ``private_view``), never reads a hidden tile, and two
games that differ only in what the seat cannot know give equal views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from domino_env.core.events import DRAW
from domino_env.core.grid import Grid
from domino_env.core.line import Line
from domino_env.core.state import RoundResult
from domino_env.core.tiles import iter_bits
from domino_env.rules.table import TableRules

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
    unseen: frozenset[int]  # tiles whose place it cannot know: some other hand or the boneyard
    public: Mapping[str, Any]  # ``env.public_state()``: the layout and the variant's public facts
    private: Mapping[str, Any]  # what only this seat knows beyond its hand (Blind: its row)
    round_over: bool
    match_over: bool
    result: RoundResult | None  # how the round ended (every hand's pips are shown then)

    @property
    def to_move(self) -> bool:
        return self.current_player == self.seat and not self.round_over


def seat_view(rules: TableRules, game: Any, seat: int, public: dict[str, Any]) -> SeatView:
    """The view of ``seat`` of ``game`` (``public`` is the env's ``public_state()``)."""
    n = rules.num_players
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise ValueError(f"seat must be an int in 0..{n - 1}, got {seat!r}")
    own = rules.known_hand(game, seat)
    shown = list(rules.public_hands(game))
    shown[seat] |= own
    table = rules.table_mask(game)
    unseen = rules.tiles_in_play & ~table
    for tiles in shown:
        unseen &= ~tiles
    return SeatView(
        variant=rules.name,
        seat=seat,
        num_players=n,
        side_of=tuple(rules.side_of),
        current_player=game.current,
        round=game.round_index,
        hand=frozenset(iter_bits(own)),
        hand_sizes=tuple(hand.bit_count() for hand in game.hands),
        boneyard_size=len(game.stock),
        table=frozenset(iter_bits(table)),
        layout=rules.layout(game).clone(),
        known_hands=tuple(frozenset(iter_bits(tiles)) for tiles in shown),
        voids=tuple(getattr(game, "voids", ())),
        scores=tuple(game.scores[rules.side_of[s]] for s in range(n)),
        legal_actions=tuple(sorted(game.legal)) if game.current == seat else (),
        events=tuple(_masked(event, seat, own | table, shown) for event in game.events),
        unseen=frozenset(iter_bits(unseen)),
        public=MappingProxyType(public),
        private=MappingProxyType(rules.private_view(game, seat)),
        round_over=game.round_over,
        match_over=game.match_over,
        result=None if game.result is None else dataclasses.replace(game.result),
    )


def _masked(event: tuple[Any, ...], seat: int, named: int, shown: list[int]) -> tuple[Any, ...]:
    """The event as ``seat`` saw it. A drawn tile is named to the drawer if it can name it now
    (``named``: its known hand and the table; in Blind a tile drawn face down stays unnamed),
    and to everyone while it is in that hand face up (``shown``); else it is HIDDEN."""
    if event[0] == DRAW:
        drawer, tile = event[1], event[2]
        if not ((drawer == seat and named >> tile & 1) or shown[drawer] >> tile & 1):
            return (*event[:2], HIDDEN, *event[3:])
    return tuple(event)
