"""The events of a round's history (``state.events``), one type per event.

An event is a plain tuple whose first item is its kind. The kinds every table shares have
their tuple types below; a variant's own kinds (Blind's ``up``, Domino-Metro's ``place`` ...)
are declared in its module, with their words (``rules.describe_event``), and enter ``Event``
as a :data:`VariantEvent`.
Plain tuples, not NamedTuples: events are made on the hot path (a lay, a draw, a pass at
every step), where building a NamedTuple cost about 10% of a step of Classic; readers
dispatch on ``event[0]`` and unpack.
"""

from __future__ import annotations

from typing import Any, Final, Literal

DEAL: Final = "deal"
LAY: Final = "lay"
DRAW: Final = "draw"
PASS: Final = "pass"
SCORE: Final = "score"
ROUND_END: Final = "round_end"

# ("deal", round_index): a round's tiles were dealt (the first event of a round)
Deal = tuple[Literal["deal"], int]
# ("lay", seat, tile, slot, end_value): a tile laid on a line of play; end_value -1 for the lead
Lay = tuple[Literal["lay"], int, int, int, int]
# ("lay", seat, tile, action, level, points): a tile laid on the grid (3D dominoes); seat -1
# for the start tile, tile a physical id
GridLay = tuple[Literal["lay"], int, int, int, int, int]
# ("draw", seat, tile): the tile is known to the drawer only
Draw = tuple[Literal["draw"], int, int]
# ("pass", seat)
Pass = tuple[Literal["pass"], int]
# ("score", side, points, reason)
Score = tuple[Literal["score"], int, int, str]
# ("round_end", winner seat or -1, blocked)
RoundEnd = tuple[Literal["round_end"], int, bool]
# A variant's own kind, (kind, seat, ...): its module declares the kind, the tuple type and
# the words (``rules.describe_event``), e.g. Blind's ``up`` or Domino-Metro's ``place``.
VariantEvent = tuple[Any, ...]

Event = Deal | Lay | GridLay | Draw | Pass | Score | RoundEnd | VariantEvent
