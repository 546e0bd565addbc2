"""The events of a round's history (``state.events``), one type per event.

Each is a NamedTuple whose first field is its kind, so ``event[0]``, unpacking and
``tuple(event)`` read as the plain tuples they replaced, and an event compares equal to
the tuple of its fields. The kind is passed explicitly (``Lay(LAY, ...)``): the generated
constructor stays the cheapest one (events are made on the hot path), and the ``Literal``
annotation lets the type checker catch a wrong kind.
"""

from __future__ import annotations

from typing import Any, Final, Literal, NamedTuple

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


class Deal(NamedTuple):
    """A round's tiles were dealt (the first event of a round)."""

    kind: Literal["deal"]
    round_index: int


class Lay(NamedTuple):
    """A tile laid on a line of play."""

    kind: Literal["lay"]
    seat: int
    tile: int
    slot: int
    end_value: int  # the value it was laid on, -1 for the lead


class GridLay(NamedTuple):
    """A tile laid on the grid (3D dominoes)."""

    kind: Literal["lay"]
    seat: int  # -1 for the start tile
    tile: int  # physical tile id
    action: int  # the placement (pair and edge)
    level: int
    points: int


class Draw(NamedTuple):
    """A tile drawn from the stock; which one is known to the drawer only."""

    kind: Literal["draw"]
    seat: int
    tile: int


class Pass(NamedTuple):
    kind: Literal["pass"]
    seat: int


class Score(NamedTuple):
    kind: Literal["score"]
    side: int
    points: int
    reason: str


class RoundEnd(NamedTuple):
    kind: Literal["round_end"]
    winner: int  # seat, -1 for none
    blocked: bool


class Up(NamedTuple):
    """Blind: the rightmost tile turned face up, for all to see, and it fits."""

    kind: Literal["up"]
    seat: int
    tile: int


class Miss(NamedTuple):
    """Blind: turned up, it did not fit and went face down to the left end of the row."""

    kind: Literal["miss"]
    seat: int
    tile: int


class Reveal(NamedTuple):
    """Blind: the last three tiles of a row turned face up for good."""

    kind: Literal["reveal"]
    seat: int
    mask: int


class Arranged(NamedTuple):
    """Blind blitz: one more tile placed in a row (which one is private)."""

    kind: Literal["arrange"]
    seat: int


class Place(NamedTuple):
    """Domino-Metro: a player takes a place (how: out, domino_metro, metro, mole, pips)."""

    kind: Literal["place"]
    seat: int
    place: int
    how: str


# Any of the above. Readers dispatch on ``event[0]`` and index the fields (the hot loops of
# the encoders), so the history is typed as tuples rather than as the union.
Event = tuple[Any, ...]
