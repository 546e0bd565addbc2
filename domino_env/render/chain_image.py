"""The picture of a chain table (``render_mode="rgb_array"``): the whole table seen from above,
every hand shown, as :func:`domino_env.render.chain.render_text` tells it in words.

A frame is ``FRAME_HEIGHT`` x ``FRAME_WIDTH`` pixels at every table and in every position (a
recorder's frames must share one size), an (H, W, 3) uint8 array:

* a header: the variant, the round, each side's score (penalty points where the lower total
  wins, said so), and the boneyard (a stack of backs
  and its count);
* the line of play on green felt, laid out as a person lays it: the lead in the middle, each
  arm running out and turning before the edge of the table, then coming back beside itself (a
  snake), so a long line stays on the table; doubles lie across the line (along it where the
  line turns on one); a spinner's north and south arms go up and down from it; a
  Domino-Metro branch leaves the side of the double that opened it; a face-down double (Osel,
  Domino-Metro) is drawn as a tile back and a closed end is capped by a red bar. The tiles
  shrink as the layout grows, never the frame;
* the last events in words, or how the round ended;
* a row per seat: its name (a gold marker at the seat to move), how many tiles it holds, its
  side's score (``penalty 19`` where the lower total wins) and its hand face up, standing.
  Blind and Blind blitz show each row left to right instead: a tile face up where everybody
  can name it or the seat to move can (its own row as it knows it), a back elsewhere, the
  tile just turned up lifted beside the row, and tiles not arranged into a row yet after a
  gap.

The header, the status bar and the seats' rail are the frame every table shares
(:mod:`domino_env.render.frame`, as around 3D dominoes' board); this module lays out the line
and says what the parts show. Tiles are drawn by :mod:`domino_env.render.drawing`; text by
Pillow's default font.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from domino_env.core.events import LAY, ROUND_END
from domino_env.core.line import CLOSED, EAST, NORTH, SOUTH, WEST, Line
from domino_env.core.state import State
from domino_env.core.tiles import TileSet, iter_bits
from domino_env.render.chain import event_text, side_name
from domino_env.render.drawing import draw_back, draw_text, draw_tile, text_width
from domino_env.render.frame import (
    DIM_TEXT,
    Frame,
    Parts,
    Rect,
    SeatRow,
    SeatTiles,
    Shown,
    Sight,
    background,
    draw_parts,
    hand_as_seen,
)
from domino_env.render.scores import header_sides, score_word
from domino_env.rules.chain import LineRules

FRAME_HEIGHT, FRAME_WIDTH = 600, 800
TABLE_MARGIN = 8  # pixels kept free inside the felt's edge
HALF_SIZES = (28, 24, 20, 16, 14, 12, 10, 8)  # pixels per half tile on the table, largest first
CAP = (204, 44, 40)  # the bar across a closed end

# --- the layout, in half-tile units: x to the right, y down, the lead's centre at (0, 0) ----------

Vec = tuple[int, int]
RIGHT, LEFT, DOWN, UP = (1, 0), (-1, 0), (0, 1), (0, -1)


class Piece(NamedTuple):
    """A tile of the layout: its rectangle and its values, the top or left half first."""

    rect: Rect
    values: tuple[int, int]
    face_down: bool = False

    @property
    def vertical(self) -> bool:
        left, top, right, bottom = self.rect
        return bottom - top > right - left


@dataclass(slots=True)
class End:
    """Where an arm goes on: the middle of its open end and the direction of the tile there."""

    x: int
    y: int
    heading: Vec


@dataclass(slots=True)
class Anchor:
    """A double's middle, the direction of its arm and whether it lies across it: where a
    spinner's arms or a Metro branch leave it."""

    x: int
    y: int
    heading: Vec
    across: bool


@dataclass
class Layout:
    """The tiles and the closed ends (end point, direction) of a layout, and how many tiles
    could only be laid over others (0 for a clean layout)."""

    pieces: list[Piece] = field(default_factory=list)
    caps: list[tuple[int, int, Vec]] = field(default_factory=list)
    overlaps: int = 0


def _rect(x: int, y: int, direction: Vec, length: int, half_width: int) -> Rect:
    """The rectangle of a tile starting at (x, y), ``length`` along ``direction``."""
    dx, dy = direction
    if dx:
        left, right = (x, x + length) if dx > 0 else (x - length, x)
        return left, y - half_width, right, y + half_width
    top, bottom = (y, y + length) if dy > 0 else (y - length, y)
    return x - half_width, top, x + half_width, bottom


def _turned(v: Vec, clockwise: bool) -> Vec:
    return (-v[1], v[0]) if clockwise else (v[1], -v[0])


def _moves(end: End, double: bool, clockwise: bool = True) -> Iterator[tuple[Rect, Rect, End]]:
    """The ways the next tile can go from ``end``, the line's choice first: (its rectangle, the
    room it needs, the new end). Straight on while a turn still fits beyond it, else round the
    corner ``clockwise`` (every arm winds the same way, so they go round the table without
    meeting), else the other way."""
    x, y, heading = end.x, end.y, end.heading
    length, width = (2, 2) if double else (4, 1)  # a double lies across its arm
    nx, ny = x + heading[0] * length, y + heading[1] * length
    room = _rect(x, y, heading, length + 2, width)  # a turn after it must fit too
    yield _rect(x, y, heading, length, width), room, End(nx, ny, heading)
    for way in (clockwise, not clockwise):
        # round the corner: the tile's first half beside the last half laid (a double lies
        # along the line there)
        turn = _turned(heading, way)
        sx, sy = x + heading[0] - turn[0], y + heading[1] - turn[1]
        rect = _rect(sx, sy, turn, 4, 1)
        yield rect, rect, End(sx + 4 * turn[0], sy + 4 * turn[1], turn)


class _Table:
    """Lays tiles within ``bounds`` (half the table's width and height), the arms winding
    ``clockwise`` or not, keeping their rectangles to see which ways are free."""

    def __init__(self, bounds: tuple[int, int], clockwise: bool, confined: bool) -> None:
        self.bx, self.by = bounds
        self.clockwise = clockwise
        self.confined = confined  # False: the last resort, tiles may leave the table (clipped)
        self.layout = Layout()
        # The room kept for the first tile of an arm that has none yet (a spinner's, a branch's),
        # so that other arms leave it free.
        self.kept: dict[int, Rect] = {}

    def inside(self, rect: Rect) -> bool:
        left, top, right, bottom = rect
        return left >= -self.bx and right <= self.bx and top >= -self.by and bottom <= self.by

    def free(self, rect: Rect, slot: int = -1) -> bool:
        """No tile lies on ``rect``, nor room kept for another slot's first tile than ``slot``'s."""
        left, top, right, bottom = rect
        taken = [r for r, *_ in self.layout.pieces]
        taken += [r for kept_for, r in self.kept.items() if kept_for != slot]
        return not any(  # (strict: touching tiles do not overlap)
            left < r[2] and r[0] < right and top < r[3] and r[1] < bottom for r in taken
        )

    def fits(self, move: tuple[Rect, Rect, End], slot: int) -> bool:
        """The move's tile is free and its room on the table."""
        return self.inside(move[1]) and self.free(move[0], slot)

    def put(self, rect: Rect, values: tuple[int, int]) -> None:
        self.layout.pieces.append(Piece(rect, values))

    def extend(self, slot: int, end: End, inner: int, outer: int) -> tuple[End, Anchor] | None:
        """Lay the tile (inner, outer) at the end of ``slot``; the new end and the tile's anchor,
        or None when it fits nowhere on the table."""
        double = inner == outer
        moves = list(_moves(end, double, self.clockwise))
        chosen = next((m for m in moves if self.fits(m, slot)), None)
        if chosen is None:
            chosen = next((m for m in moves if self.inside(m[0])), None if self.confined else moves[0])
            if chosen is None:
                return None
            self.layout.overlaps += not self.free(chosen[0], slot)
        self.kept.pop(slot, None)
        rect, _, new_end = chosen
        heading = new_end.heading
        forward = heading in (RIGHT, DOWN)
        self.put(rect, (inner, outer) if forward else (outer, inner))
        left, top, right, bottom = rect
        along = right - left if heading[0] else bottom - top
        return new_end, Anchor((left + right) // 2, (top + bottom) // 2, heading, double and along == 2)

    def side_end(self, anchor: Anchor, side: Vec) -> End:
        """The end of an arm leaving a double's ``side``."""
        reach = 2 if anchor.across else 1
        return End(anchor.x + side[0] * reach, anchor.y + side[1] * reach, side)

    def keep(self, slot: int, end: End) -> None:
        """Keep the room of the first tile ``slot`` will lay at ``end`` (its arm has none yet)."""
        self.kept[slot] = next(_moves(end, False))[0]

    def spinner_ends(self, anchor: Anchor) -> tuple[End, End]:
        """North and south of the spinner: up and down from it (left and right where its arm runs
        up or down), their first tiles' room kept."""
        north = UP if anchor.heading[0] else LEFT
        ends = self.side_end(anchor, north), self.side_end(anchor, (-north[0], -north[1]))
        self.keep(NORTH, ends[0])
        self.keep(SOUTH, ends[1])
        return ends

    def run_length(self, end: End, most: int = 3) -> int:
        """How many tiles (up to ``most``) fit straight on from ``end``."""
        for count in range(most):
            move = next(_moves(end, False))
            if not self.fits(move, -1):
                return count
            end = move[2]
        return most

    def branch_end(self, slot: int, anchor: Anchor) -> End:
        """A Metro branch: out of the side of the double with the more room straight on, kept."""
        sides = [self.side_end(anchor, _turned(anchor.heading, clockwise)) for clockwise in (False, True)]
        end = max(sides, key=self.run_length)  # (the first on a tie)
        self.keep(slot, end)
        return end


def _branch_value(line: Line, slot: int) -> int:
    """The value of the double that opened a branching slot (its first tile's inner half)."""
    return line.arms[slot][0][0] if line.arms[slot] else line.value[slot]


def lay_out(
    line: Line,
    tile_set: TileSet,
    lays: Sequence[tuple[int, int]],
    bounds: tuple[int, int],
    face_down_doubles: bool,
    clockwise: bool = True,
    confined: bool = True,
) -> Layout | None:
    """Where every tile of ``line`` lies, laid in the order played (``lays``: (tile, slot), slot
    -1 for the lead), so a tile laid later never moves the earlier ones; the arms turn
    ``clockwise`` first. None when ``confined`` and some tile fits nowhere within ``bounds``
    (half-tile units from the middle).

    A face-down double is told from the line: with ``face_down_doubles``, a double that closed
    its arm and is neither the round's first double (Metro's is an ordinary tile) nor one that
    opened a branch."""
    table = _Table(bounds, clockwise, confined)
    ends: dict[int, End] = {}
    laid_on = [0] * line.num_slots  # tiles placed on each slot so far
    outermost: dict[int, int] = {}  # slot -> index in pieces of its outermost tile
    spinner = line.spinner_value()
    branch_slot = {} if line.has_spinner else {_branch_value(line, s): s for s in range(2, line.used)}
    first_double = -1
    for tile, slot in lays:
        a, b = tile_set.tiles[tile]
        if slot < 0:  # the lead, in the middle: a double stands across the line
            rect = (-1, -2, 1, 2) if a == b else (-2, -1, 2, 1)
            table.put(rect, (a, b))
            ends[EAST] = End(rect[2], 0, RIGHT)
            ends[WEST] = End(rect[0], 0, LEFT)
            anchor = Anchor(0, 0, RIGHT, a == b)
        else:
            inner, outer = line.arms[slot][laid_on[slot]]
            laid_on[slot] += 1
            placed = table.extend(slot, ends[slot], inner, outer)
            if placed is None:
                return None
            ends[slot], anchor = placed
            outermost[slot] = len(table.layout.pieces) - 1
        if a == b:
            if first_double < 0:
                first_double = a
            if a == spinner:
                ends[NORTH], ends[SOUTH] = table.spinner_ends(anchor)
            elif a in branch_slot:
                ends[branch_slot[a]] = table.branch_end(branch_slot[a], anchor)
    pieces = table.layout.pieces
    for slot, end in ends.items():
        if line.state[slot] != CLOSED:
            continue
        table.layout.caps.append((end.x, end.y, end.heading))
        if face_down_doubles and slot in outermost:
            piece = pieces[outermost[slot]]
            value, other = piece.values
            if value == other and value != first_double and value not in branch_slot:
                pieces[outermost[slot]] = piece._replace(face_down=True)
    return table.layout


def _fitted_layout(rules: LineRules, state: State, width: int, height: int) -> tuple[Layout, int]:
    """The layout at the largest tile size where it fits a felt of ``width`` x ``height`` pixels
    without overlaps, the arms winding clockwise or else the other way (failing that, the first
    that fits at all; failing that, the smallest, clipped); (layout, pixels per half tile)."""
    line = state.line
    lays = [(e[2], e[3] if e[4] >= 0 else -1) for e in state.events if e[0] == LAY]
    crowded: tuple[Layout, int] | None = None
    for half in HALF_SIZES:
        unit = half // 2
        bounds = ((width // 2 - TABLE_MARGIN) // unit, (height // 2 - TABLE_MARGIN) // unit)
        for clockwise in (True, False):
            layout = lay_out(line, rules.tile_set, lays, bounds, rules.face_down_doubles, clockwise)
            if layout is None:
                continue
            if not layout.overlaps:
                return layout, half
            crowded = crowded or (layout, half)
    if crowded is not None:
        return crowded
    layout = lay_out(line, rules.tile_set, lays, bounds, rules.face_down_doubles, confined=False)
    assert layout is not None  # (not confined: every tile is laid)
    return layout, half


def _frame(num_players: int) -> Frame:
    return Frame(FRAME_HEIGHT, FRAME_WIDTH, num_players)


def felt_box(num_players: int) -> Rect:
    """The felt's rectangle in the frame (pixels: left, top, right, bottom) at a table of
    ``num_players``: between the header and the status bar above the seats."""
    return _frame(num_players).felt_box


def table_layout(rules: LineRules, state: State) -> tuple[Layout, int, tuple[int, int]]:
    """The layout the frame draws: (the layout in half-tile units, pixels per half tile, the
    felt's middle in pixels); :func:`pixel_rect` places its pieces."""
    left, top, right, bottom = felt_box(rules.num_players)
    layout, half = _fitted_layout(rules, state, right - left, bottom - top)
    return layout, half, ((left + right) // 2, (top + bottom) // 2)


def pixel_rect(rect: Rect, half: int, centre: tuple[int, int]) -> Rect:
    """A layout rectangle (half-tile units) in the frame's pixels (:func:`table_layout`)."""
    unit, (cx, cy) = half // 2, centre
    left, top, right, bottom = rect
    return cx + left * unit, cy + top * unit, cx + right * unit, cy + bottom * unit


def _draw_layout(image: np.ndarray, layout: Layout, half: int, centre: tuple[int, int]) -> None:
    for piece in layout.pieces:
        left, top, _, _ = pixel_rect(piece.rect, half, centre)
        if piece.face_down:
            draw_back(image, top, left, half, piece.vertical)
        else:
            draw_tile(image, top, left, half, piece.values, piece.vertical)
    thick, reach = max(3, half // 5), max(4, half * 3 // 4)
    for x, y, (dx, dy) in layout.caps:  # a bar across the end, just beyond it
        px, py, _, _ = pixel_rect((x, y, x, y), half, centre)
        if dx:
            x0 = px if dx > 0 else px - thick
            image[max(py - reach, 0) : py + reach, max(x0, 0) : x0 + thick] = CAP
        else:
            y0 = py if dy > 0 else py - thick
            image[max(y0, 0) : y0 + thick, max(px - reach, 0) : px + reach] = CAP


# --- the seats --------------------------------------------------------------------------------


def seat_tiles(rules: LineRules, state: State, sight: Sight | None = None) -> list[SeatTiles]:
    """Each seat's tiles as the picture shows them: the hand face up (drawn for a seat: the tiles
    it cannot name as backs, or revealed and dimmed); in the blind games the row as everybody
    sees it, with the seat to move's own knowledge added (drawn for a seat: that seat's)."""
    tiles = rules.tile_set.tiles
    public = rules.public_extra(state)
    if "rows" not in public:
        if sight is None:
            return [SeatTiles([tiles[t] for t in iter_bits(hand)]) for hand in state.hands]
        return [
            hand_as_seen(
                [tiles[t] for t in iter_bits(hand) if t in known],
                [tiles[t] for t in iter_bits(hand) if t not in known],
                sight.reveal,
            )
            for hand, known in zip(state.hands, sight.known_hands, strict=True)
        ]
    knower = state.current if sight is None else sight.seat
    own_row = rules.private_view(state, knower)["row"]
    up = public["turned_up"]  # (everybody sees the tile turned up by the seat to move)
    out = []
    for seat, row in enumerate(public["rows"]):
        shown: list[Shown] = list(row)
        if seat == knower:
            shown = [mine if mine is not None else theirs for mine, theirs in zip(own_row, row, strict=True)]
        turned = up if seat == state.current else None
        missing = state.hands[seat].bit_count() - len(row) - (turned is not None)
        unplaced: list[Shown] = [None] * missing
        if seat == knower and missing:
            placed = {*own_row, turned}
            unplaced = [tiles[t] for t in iter_bits(state.hands[seat]) if tiles[t] not in placed]
        out.append(SeatTiles(shown, unplaced, turned))
    return out


# --- the frame ----------------------------------------------------------------------------------


def status_text(
    rules: LineRules, state: State, names: list[str], seen: Sequence[tuple[Any, ...]] | None = None
) -> str:
    """How the round ended; else the last events said in words (``seen``: the events as a seat
    saw them, default the game's), the previous round's end on a new deal."""
    result = state.result
    if state.round_over and result is not None:
        how = "blocked" if result.blocked else "domino"
        who = "no winner (tie)" if result.winner is None else f"{names[result.winner]} wins"
        return f"round over ({how}): {who}"
    events = state.events if seen is None else seen
    said = [text for e in events if (text := event_text(rules, e, names))]
    if not state.line.count and state.last_round_events:
        ended = next((e for e in reversed(state.last_round_events) if e[0] == ROUND_END), None)
        if ended is not None:
            _, winner, blocked = ended
            who = "no winner" if winner < 0 else f"{names[winner]} won"
            said.insert(0, f"round {state.round_index} over ({'blocked' if blocked else 'domino'}): {who}")
    return "; ".join(said[-3:]) or "tiles dealt"


def render_rgb(rules: LineRules, state: State, names: list[str], sight: Sight | None = None) -> np.ndarray:
    """The whole table (the module docstring), players called ``names``, drawn as ``sight``'s
    seat sees it where given; a new (FRAME_HEIGHT, FRAME_WIDTH, 3) uint8 array."""
    frame = _frame(rules.num_players)
    image = background(frame).copy()
    layout, half, centre = table_layout(rules, state)
    _draw_layout(image, layout, half, centre)
    if not state.line.count:
        empty = "empty table"
        draw_text(image, centre[0] - text_width(empty, 14) // 2, centre[1] - 8, empty, 14, DIM_TEXT)
    seats = [
        SeatRow(names[seat], tiles, state.hands[seat].bit_count(), state.scores[rules.side_of[seat]])
        for seat, tiles in enumerate(seat_tiles(rules, state, sight))
    ]
    parts = Parts(
        title=f"{rules.name} - round {state.round_index + 1}",
        sides=header_sides(
            rules, [f"{side_name(rules, side, names)}: {points}" for side, points in enumerate(state.scores)]
        ),
        stock=len(state.stock),
        status=[status_text(rules, state, names, None if sight is None else sight.events)],
        seats=seats,
        to_move=None if state.round_over else state.current,
        score_word=score_word(rules),
    )
    draw_parts(image, frame, parts)
    return image
