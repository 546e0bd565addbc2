"""Classic dominoes (docs/rules/classic.md): the draw game, or block dominoes with ``draw=False``.

Double-six, 2-4 players (4 may play as partners: seats 0+2 against 1+3), 7 tiles each. A
linear line of play (doubles keep one value), one tile a turn. A player who cannot play
draws until a tile fits (``draw=False``: passes). The round ends when a player goes out or
nobody can move; everyone but the round's winner (and partner) adds the pips left in hand
to a penalty score, and the match ends when a player or team reaches 101: lowest wins.

First round: the lowest double leads (no double dealt: the lowest-pip tile). Later rounds:
the previous winner leads any tile; after a blocked win by a team, the partner with fewer
pips; after a blocked tie, the seat after that round's leader.

Version history:

- ``classic_v0``: the first release (the rules as in docs/rules/classic.md).
"""

from __future__ import annotations

import numpy as np

from domino_env.core.state import State
from domino_env.core.tiles import TileSet
from domino_env.rules.chain import ChainRules
from domino_env.rules.spec import VariantSpec


def lowest_opening(state: State, tile_set: TileSet, candidates: list[int]) -> tuple[int, int]:
    """(holder, tile) of the first dealt tile in ``candidates`` (a preference order)."""
    dealt = sum(state.hands)  # hands are disjoint: their sum is the tiles dealt
    for tile in candidates:
        if dealt >> tile & 1:
            holder = 0
            while not state.hands[holder] >> tile & 1:
                holder += 1
            return holder, tile
    raise ValueError("no candidate opening tile was dealt")


def by_pips(tile_set: TileSet) -> list[int]:
    """Tile ids ordered by pips, ties by the smaller half."""
    return sorted(range(tile_set.size), key=lambda t: (tile_set.pips[t], tile_set.tiles[t][0]))


class ClassicRules(ChainRules):
    name = "classic"
    opening_rule = "the lowest double dealt (with none, the tile with the fewest pips)"

    def __init__(
        self,
        num_players: int = 2,
        teams: bool = False,
        draw: bool = True,
        *,
        max_pip: int | None = None,
        hand_size: int | None = None,
    ) -> None:
        super().__init__(num_players, teams, max_pip=max_pip, hand_size=hand_size)
        if not isinstance(draw, (bool, np.bool_)):
            raise ValueError(f"{self.name}: draw must be True or False, got {draw!r}")
        self.draws = bool(draw)
        doubles = [t for t in range(self.tile_set.size) if self.tile_set.is_double[t]]
        self._opening_order = doubles + [t for t in by_pips(self.tile_set) if t not in doubles]

    def opening(self, state: State) -> tuple[int, int]:
        if state.round_index == 0:
            return lowest_opening(state, self.tile_set, self._opening_order)
        return super().opening(state)

    def score_round(self, state: State, winner: int | None, blocked: bool, pips: list[int]) -> None:
        win_side = None if winner is None else self.side_of[winner]
        for side, side_pips in enumerate(self.side_pips(pips)):
            if side != win_side:
                self.add_score(state, side, side_pips, "pips in hand")


SPECS = (
    VariantSpec(
        name="classic",
        title="Classic",
        rules=ClassicRules,
        table="chain",
        summary="the draw game (or block dominoes): first out wins, penalty pips in hand to 101",
        option_help={"draw": "draw from the boneyard when stuck (False: block dominoes, pass instead)"},
        benchmark_tables=({"num_players": 2}, {"num_players": 4, "teams": True}),
        presets={"tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "draw": False, "episode": "round"}},
    ),
)
