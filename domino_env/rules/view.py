"""Building a seat's view (:class:`~domino_env.core.view.SeatView`) from a game, through the
rules' hooks (``known_hand``, ``public_hands``, ``private_view``, ``table_mask``, ``layout``):
what the seat can name, what everybody can, and the rest as the unseen pool. Nothing here
reads a hidden tile into the view.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

from domino_env.core.events import DRAW
from domino_env.core.tiles import iter_bits
from domino_env.core.view import HIDDEN, SeatView
from domino_env.rules.table import StateT, TableRules


def seat_view(rules: TableRules[StateT], game: StateT, seat: int, public: dict[str, Any]) -> SeatView:
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
    none_shown = [0] * n  # (the last round's hands are gone: its draws are named to the drawer only)
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
        last_round_events=tuple(
            _masked(event, seat, -1 if rules.names_own_draws else 0, none_shown)
            for event in game.last_round_events
        ),
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
        if tile < 0:  # (a sampled world's events are a view's: a hidden draw stays hidden)
            return tuple(event)
        if not ((drawer == seat and named >> tile & 1) or shown[drawer] >> tile & 1):
            return (*event[:2], HIDDEN, *event[3:])
    return tuple(event)
