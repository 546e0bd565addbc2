"""Rule parts a line-of-play variant declares instead of overriding the engine.

:class:`~domino_env.rules.chain.LineRules` runs the round and
:class:`~domino_env.rules.chain.ChainRules` the turn loop once; a variant names its parts as
class attributes: ``opens`` (an :class:`Opening`: who leads a round and which tile),
``leads_next`` (who leads the round after), and the optional ``lay_scoring``,
``continues_turn`` and ``seat_after`` (None: the plain rule, skipped on the hot path). A part is
a function whose first argument is the rules, so a variant's method can be a part too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domino_env.core.events import LAY
from domino_env.core.state import State
from domino_env.core.tiles import TileSet

# (rules, state, seat, tile): what laying ``tile`` scores (All Fives' count), after it is laid.
LayScoring = Callable[[Any, State[Any], int, int], None]
# (rules, state, seat, tile): may ``seat`` lay again after ``tile`` (then ``stop`` is offered)?
ContinuesTurn = Callable[[Any, State[Any], int, int], bool]
# (rules, state, seat): who moves after ``seat`` (Metro skips the players who went out).
SeatAfter = Callable[[Any, State[Any], int], int]
# (rules, state, winner): who leads the next round (-1: the next deal decides).
LeadsNext = Callable[[Any, State[Any], "int | None"], int]


@dataclass(frozen=True)
class Opening:
    """Who leads a round: the holder of the first dealt tile of ``order`` leads it; with none
    of them dealt (or no order) a lot draws the leader, who leads any tile. Only the first
    round unless ``every_round``: later rounds the previous round's ``leads_next`` seat leads
    any tile."""

    rule: str  # why that tile, for an illegal lead: "the round's first tile must be 1-1, <rule>"
    order: Callable[[TileSet], list[int]] | None = None
    every_round: bool = False


def by_pips(tile_set: TileSet) -> list[int]:
    """Tile ids ordered by pips, ties by the smaller half."""
    return sorted(range(tile_set.size), key=lambda t: (tile_set.pips[t], tile_set.tiles[t][0]))


def doubles_first(tile_set: TileSet) -> list[int]:
    """The doubles from the lowest, then the other tiles by pips."""
    doubles = [t for t in range(tile_set.size) if tile_set.is_double[t]]
    return doubles + [t for t in by_pips(tile_set) if t not in doubles]


LOWEST_DOUBLE_OPENS = Opening(
    "the lowest double dealt (with none, the tile with the fewest pips)", doubles_first
)
FEWEST_PIPS_OPENS = Opening("the tile with the fewest pips dealt", by_pips)  # 0-0 first, unlike Classic
LOT_OPENS = Opening("the tile the rules name to open this round")  # a lot draws the first leader


def winner_leads(rules: Any, state: State[Any], winner: int | None) -> int:
    """The round's winner; with none (a blocked tie), the seat after the round's leader."""
    return winner if winner is not None else (state.leader + 1) % rules.num_players


def last_layer_leads(rules: Any, state: State[Any], winner: int | None) -> int:
    """Whoever laid the round's last tile (Osel)."""
    return next(event[1] for event in reversed(state.events) if event[0] == LAY)


def next_deal_decides(rules: Any, state: State[Any], winner: int | None) -> int:
    """Nobody yet: the next deal's opening tile names the leader (Cross's 6-6)."""
    return -1


def after_the_opening_tile(rules: Any, state: State[Any], seat: int, tile: int) -> bool:
    """Any tile but the round's first lets the player lay again (Blitz)."""
    return state.line.count > 1
