"""The events of a round's history (``state.events``), one type per event.

An event is a plain tuple whose first item is its kind; each kind has its tuple type below,
and ``Event`` is their union, so the type checker checks the shape of every event appended.
Plain tuples, not NamedTuples: events are made on the hot path (a lay, a draw, a pass at
every step), where building a NamedTuple cost about 10% of a step of Classic; readers
dispatch on ``event[0]`` and unpack.
"""

from __future__ import annotations

from typing import Final, Literal

DEAL: Final = "deal"
LAY: Final = "lay"
DRAW: Final = "draw"
PASS: Final = "pass"
SCORE: Final = "score"
ROUND_END: Final = "round_end"
# Blind and Blind blitz
UP: Final = "up"
MISS: Final = "miss"
REVEAL: Final = "reveal"
ARRANGED: Final = "arrange"
# Domino-Metro
PLACE: Final = "place"

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
# Blind: ("up", seat, tile) the rightmost tile turned face up for all to see, and it fits;
# ("miss", seat, tile) turned up, it did not fit and went face down to the left end of the row;
# ("reveal", seat, mask) the last three tiles turned face up for good; ("arrange", seat) one
# more tile placed in a row (which one is private)
Up = tuple[Literal["up"], int, int]
Miss = tuple[Literal["miss"], int, int]
Reveal = tuple[Literal["reveal"], int, int]
Arranged = tuple[Literal["arrange"], int]
# Domino-Metro: ("place", seat, place, how), how one of out, domino_metro, metro, mole, pips
Place = tuple[Literal["place"], int, int, str]

Event = Deal | Lay | GridLay | Draw | Pass | Score | RoundEnd | Up | Miss | Reveal | Arranged | Place
