"""The frame every table's picture shares, around the felt where a renderer draws its layout
(the chain tables' line of play, 3D dominoes' board), top to bottom:

* a header: the game, each side's score (a penalty where the lower total wins, said so), and
  the stock (the boneyard, 3D dominoes' bazaar: a stack of backs and its count);
* the felt, which the table's renderer fills;
* a status bar: the last events in words, or how the round ended (one line or several);
* a wooden rail with a row per seat: its name (a gold marker at the seat to move), how many
  tiles it holds, its side's score (``penalty 19`` where the lower total wins) and its tiles
  standing (a back for a tile nobody may name, tiles not in a row yet after a gap, a tile just
  turned up lifted and outlined).

A picture drawn for one seat (:class:`Sight`) draws the tiles that seat cannot name as backs,
or, revealed, face up but dimmed after a gap (marked as unseen), and says the events as the
seat saw them (another's drawn tile unnamed).

A renderer says what goes in each part (:class:`Parts`) and where the felt lies
(:class:`Frame`); :func:`draw_parts` draws them, so every table's frame looks alike. The empty
frame of one :class:`Frame` is drawn once (cached) and copied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from domino_env.render.chain import tiles_text
from domino_env.render.drawing import FELT, draw_back, draw_text, draw_tile, fitted, text_width

HEADER, SEAT_ROW, LABEL_WIDTH = 30, 48, 180  # pixels
STATUS, STATUS_LINE = 24, 18  # the status bar's height with one line, and each further line's
HAND_HALF = 18  # pixels per half tile in a hand (fewer when the hand is long)

TOP_BAR = (14, 62, 40)
RAIL = (64, 44, 30)  # the wooden rail where the seats sit
STATUS_BAR = (16, 74, 48)
TEXT = (240, 236, 222)
DIM_TEXT = (178, 196, 180)
HIGHLIGHT = (246, 196, 66)  # the seat to move, the tile it turned up
UNSEEN_SHADE = 0.6  # a revealed tile the seat could not see: its ivory this much darker

Rect = tuple[int, int, int, int]  # left, top, right, bottom
Shown = tuple[int, int] | None  # a tile face up, or None for its back


def _below_felt(num_players: int, status_lines: int) -> int:
    """Pixels below the felt: the status bar and a row per seat."""
    return STATUS + STATUS_LINE * (status_lines - 1) + num_players * SEAT_ROW


@dataclass(frozen=True)
class Frame:
    """A frame of ``height`` x ``width`` pixels with a rail row for each of ``num_players`` seats
    and ``status_lines`` lines of events; the felt takes the rest."""

    height: int
    width: int
    num_players: int
    status_lines: int = 1

    @classmethod
    def around(cls, felt_height: int, width: int, num_players: int, status_lines: int = 1) -> Frame:
        """The frame whose felt is ``felt_height`` pixels high."""
        height = HEADER + felt_height + _below_felt(num_players, status_lines)
        return cls(height, width, num_players, status_lines)

    @property
    def felt_box(self) -> Rect:
        """The felt's rectangle: between the header and the status bar."""
        return 0, HEADER, self.width, self.height - _below_felt(self.num_players, self.status_lines)

    def seat_top(self, seat: int) -> int:
        """The top of ``seat``'s row on the rail."""
        return self.height - (self.num_players - seat) * SEAT_ROW


@dataclass
class SeatTiles:
    """What a seat's row holds: tiles (None: a back), then after a gap tiles not in a row yet,
    and a tile turned up (drawn lifted)."""

    tiles: list[Shown]
    unplaced: list[Shown] = field(default_factory=list)
    turned_up: Shown = None
    unseen: list[tuple[int, int]] = field(default_factory=list)  # revealed tiles the seat could not see


@dataclass(frozen=True)
class Sight:
    """What one seat sees, for a picture drawn as that seat sees it (its view's ``known_hands``
    as tile ids per seat, and its ``events``); ``reveal``: draw the tiles it cannot name face
    up, dimmed, instead of as backs."""

    seat: int
    known_hands: tuple[frozenset[int], ...]
    events: tuple[tuple[Any, ...], ...]
    reveal: bool = False


def hand_as_seen(known: list[tuple[int, int]], hidden: list[tuple[int, int]], reveal: bool) -> SeatTiles:
    """A hand of the tiles a seat can name (``known``) and those it cannot: backs, or revealed."""
    if reveal:
        return SeatTiles(list(known), unseen=list(hidden))
    return SeatTiles([*known, *[None] * len(hidden)])


@dataclass
class SeatRow:
    """A seat's row on the rail: its name, its tiles, how many it holds, its side's score."""

    name: str
    tiles: SeatTiles
    held: int
    score: int


@dataclass
class Parts:
    """What a frame says around the felt: the header's ``title``, ``sides`` (a "name: points"
    per side, after what they are, e.g. "penalty points, lower wins:") and the ``stock`` count
    (called ``stock_name``), the ``status`` lines, a row per seat with its total called
    ``score_word`` (``score``, or ``penalty`` where the lower total wins), and the seat to move
    (None: nobody)."""

    title: str
    sides: list[str]
    stock: int
    status: list[str]
    seats: list[SeatRow]
    to_move: int | None
    stock_name: str = "boneyard"
    score_word: str = "score"


@cache
def background(frame: Frame) -> np.ndarray:
    """The empty frame: header, felt, status bar, the seats' rail with a line between the seats;
    read-only (copy it to draw)."""
    image = np.empty((frame.height, frame.width, 3), dtype=np.uint8)
    felt_bottom = frame.felt_box[3]
    rail_top = frame.seat_top(0)
    image[:HEADER] = TOP_BAR
    image[HEADER:felt_bottom] = FELT
    image[felt_bottom:rail_top] = STATUS_BAR
    image[rail_top:] = RAIL
    for seat in range(frame.num_players):
        image[frame.seat_top(seat)] = TOP_BAR
    image.setflags(write=False)
    return image


def draw_hand(image: np.ndarray, seat: SeatTiles, top: int, left: int, width: int) -> Rect | None:
    """Draw a seat's tiles standing in a row of ``width`` pixels; the rectangle of the turned-up
    tile, if any."""
    count = len(seat.tiles) + len(seat.unplaced) + len(seat.unseen) + (seat.turned_up is not None)
    gaps = bool(seat.unplaced) + bool(seat.unseen) + (seat.turned_up is not None)
    if not count:
        return None
    half = max(6, min(HAND_HALF, int(width / (count + gaps / 2)) - 4))
    step = half + max(2, half // 4)
    y = top + (SEAT_ROW - 2 * half) // 2
    x = left

    def put(tile: Shown, lift: int = 0, shade: float = 1.0) -> None:
        nonlocal x
        if tile is None:
            draw_back(image, y - lift, x, half, vertical=True)
        else:
            draw_tile(image, y - lift, x, half, tile, vertical=True, shade=shade)
        x += step

    for tile in seat.tiles:
        put(tile)
    if seat.unplaced:
        x += step // 2 if seat.tiles else 0
        for tile in seat.unplaced:
            put(tile)
    if seat.unseen:
        x += step // 2 if x > left else 0
        for face in seat.unseen:
            put(face, shade=UNSEEN_SHADE)
    if seat.turned_up is None:
        return None
    x += step // 2 if x > left else 0
    lifted = (x - 2, y - 6, x + half + 2, y - 4 + 2 * half + 2)
    put(seat.turned_up, lift=4)
    return lifted


def draw_outline(image: np.ndarray, rect: Rect, colour: tuple[int, int, int], width: int = 2) -> None:
    left, top, right, bottom = rect
    image[top : top + width, left:right] = colour
    image[bottom - width : bottom, left:right] = colour
    image[top:bottom, left : left + width] = colour
    image[top:bottom, right - width : right] = colour


def marker(image: np.ndarray, x: int, y: int, size: int) -> None:
    """A triangle pointing right, its point at (x + size, y): the seat to move."""
    for k in range(size):
        reach = (size - k) * 3 // 4
        image[y - reach : y + reach + 1, x + k] = HIGHLIGHT


def draw_header(
    image: np.ndarray, width: int, title: str, sides: Sequence[str], stock: int, stock_name: str
) -> None:
    """The title, the sides' scores after it (cut to fit) and the stock's stack at the right."""
    draw_text(image, 10, 7, title, 15, TEXT)
    for k in range(min(stock, 3)):  # the stock's stack
        draw_back(image, 6 - 2 * k, width - 118 + 2 * k, 9, vertical=False)
    draw_text(image, width - 88, 8, f"{stock_name} {stock}", 13, TEXT)
    after_title = 10 + text_width(title, 15) + 24
    draw_text(image, after_title, 8, fitted("   ".join(sides), 13, width - after_title - 130), 13, DIM_TEXT)


def draw_seats(
    image: np.ndarray, frame: Frame, seats: Sequence[SeatRow], to_move: int | None, score_word: str = "score"
) -> None:
    """A row per seat on the rail: marker, name, tile count and total (``score_word`` names it:
    ``score 19``, ``penalty 19``), then its tiles."""
    for seat, row in enumerate(seats):
        top = frame.seat_top(seat)
        lifted = draw_hand(image, row.tiles, top, LABEL_WIDTH, frame.width - LABEL_WIDTH - 10)
        if lifted is not None:
            draw_outline(image, lifted, HIGHLIGHT)
        if seat == to_move:
            marker(image, 6, top + 15, 8)
        name = fitted(row.name, 14, LABEL_WIDTH - 28)
        draw_text(image, 20, top + 7, name, 14, HIGHLIGHT if seat == to_move else TEXT)
        draw_text(image, 20, top + 27, f"{tiles_text(row.held)} - {score_word} {row.score}", 12, DIM_TEXT)


def draw_parts(image: np.ndarray, frame: Frame, parts: Parts) -> None:
    """Everything around the felt (the module docstring) into ``image``, a copy of
    :func:`background`."""
    draw_header(image, frame.width, parts.title, parts.sides, parts.stock, parts.stock_name)
    status_top = frame.felt_box[3] + 5
    for k, line in enumerate(parts.status[: frame.status_lines]):
        draw_text(image, 10, status_top + k * STATUS_LINE, fitted(line, 13, frame.width - 20), 13, TEXT)
    draw_seats(image, frame, parts.seats, parts.to_move, parts.score_word)
