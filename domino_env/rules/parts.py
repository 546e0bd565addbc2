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
from domino_env.core.line import NORTH, OPEN, SOUTH, Line
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


def after_a_double(rules: Any, state: State[Any], seat: int, tile: int) -> bool:
    """A double (the lead too) keeps the turn; any other tile ends it (Osel)."""
    return bool(rules.tile_set.is_double[tile])


def end_value(line: Line, slot: int) -> int:
    """What one end adds to All Fives' count: a double there counts both halves; an empty north
    or south arm adds nothing."""
    if line.state[slot] != OPEN or (slot in (NORTH, SOUTH) and not line.length[slot]):
        return 0
    return line.value[slot] * (2 if line.double_end[slot] else 1)


def end_count(line: Line) -> int:
    """Sum of the open ends as All Fives counts them (a lone first tile: all its pips)."""
    if line.count == 1:
        return line.tiles.pips[line.lead_tile]
    return sum(end_value(line, slot) for slot in range(line.num_slots))


def count_after(line: Line, tile: int, slot: int, ends_total: int) -> int:
    """The count once ``tile`` is laid at ``slot``, without laying it; ``ends_total`` is the
    sum of ``end_value`` over the slots now (only the end it covers changes)."""
    tiles = line.tiles
    if not line.count:
        return tiles.pips[tile]
    outer = tiles.other_half[tile][line.value[slot]]
    return ends_total - end_value(line, slot) + outer * (2 if tiles.is_double[tile] else 1)


def points_now(count: int) -> int:
    """What a count scores at once: itself if a multiple of 5, else nothing."""
    return count if count % 5 == 0 else 0


def count_points(rules: Any, state: State[Any], action: int) -> int:
    """An ``immediate_points`` (All Fives'): what ``action`` would score at once by the count."""
    line = state.line
    total = sum(end_value(line, slot) for slot in range(line.num_slots))
    return points_now(count_after(line, rules.action_tile[action], rules.action_slot[action], total))


def score_the_count(rules: Any, state: State[Any], seat: int, tile: int) -> None:
    """A count of the open ends that is a positive multiple of 5 scores at once; reaching the
    target ends the match there (All Fives)."""
    count = end_count(state.line)
    if count and count % 5 == 0:
        side = rules.side_of[seat]
        rules.add_score(state, side, count, "count")
        if state.scores[side] >= rules.match_target:
            state.match_over = True
            rules.end_round(state, seat, blocked=False)
