"""Pictures of a 3D dominoes table: a text grid (``ansi``) and an image (``rgb_array``, numpy only).

The image is the board seen from above (green felt, a faint grid, each floor a shade darker)
in the frame every table's picture shares (:mod:`domino_env.render.frame`): a header with the
board size, each seat's points and the bazaar, a status bar with the last three events in
:func:`event_text`'s words (or who won), and a row per seat with its name (the seat to move
marked), tile count, points and hand face up. The frame is :func:`frame_of`'s size for a table
in every position: the board's square, at least ``MIN_WIDTH`` wide. Tiles are drawn by
:mod:`domino_env.render.drawing`, as on the chain tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from domino_env.core.grid import Grid
from domino_env.core.state import DRAW, LAY, PASS, SCORE, RoundResult
from domino_env.core.tiles import format_tile
from domino_env.core.view import HIDDEN, SeatView
from domino_env.render.chain import players_text, tiles_text
from domino_env.render.drawing import draw_tile
from domino_env.render.frame import (
    Frame,
    Parts,
    SeatRow,
    SeatTiles,
    Sight,
    background,
    draw_parts,
    hand_as_seen,
)
from domino_env.render.scores import header_sides, score_word

if TYPE_CHECKING:
    from domino_env.rules.grid import GridRules, GridState

# --- text --------------------------------------------------------------------------------------


def placement_text(
    cells: tuple[tuple[int, int], tuple[int, int]], values: tuple[int, int], level: int | None = None
) -> str:
    """``3 on (8,9), 4 on (8,10)``, with ``, floor 2`` above the table."""
    (r1, c1), (r2, c2) = cells
    x, y = values
    return f"{x} on ({r1},{c1}), {y} on ({r2},{c2})" + (f", floor {level}" if level and level > 1 else "")


def event_text(rules: GridRules, event: tuple[Any, ...], names: list[str]) -> str | None:
    kind = event[0]
    if kind == LAY:
        _, seat, tile, action, level, points = event
        x, y, edge = rules.decode(action)
        where = placement_text(rules.geometry.edge_coordinates(edge), (x, y), level)
        name = format_tile(rules.tile_set.tiles[rules.kind_of[tile]])
        if seat < 0:
            return f"start tile {name}: {where}"
        return f"{names[seat]} lays {name}: {where}" + (f" (+{points})" if points else "")
    if kind == DRAW:  # the tile named where the event names it (a view's: to the drawer only)
        tile = event[2]
        drawn = "" if tile == HIDDEN else f" {format_tile(rules.tile_set.tiles[rules.kind_of[tile]])}"
        return f"{names[event[1]]} draws{drawn}"
    if kind == PASS:
        return f"{names[event[1]]} passes"
    if kind == SCORE:
        return None  # the lay already says it
    return rules.describe_event(event, names)


def grid_text(rules: GridRules, grid: Grid) -> list[str]:
    """The occupied part of the grid (and one cell around it): each cell shows its value and,
    from the second floor up, ``^height``; ``-`` and ``|`` join the two halves of a top tile."""
    n = rules.board_size
    occupied = [cell for cell in range(rules.cells) if grid.height[cell]]
    rows = [cell // n for cell in occupied]
    cols = [cell % n for cell in occupied]
    r0, r1 = max(min(rows) - 1, 0), min(max(rows) + 1, n - 1)
    c0, c1 = max(min(cols) - 1, 0), min(max(cols) + 1, n - 1)
    placed, top, edge_cells = grid.placed, grid.top, rules.geometry.edge_cells

    def joined(a: int, b: int) -> bool:  # the two halves of the tile on top of both cells
        return top[a] >= 0 and top[a] == top[b] and edge_cells[placed[top[a]][0]] in ((a, b), (b, a))

    lines = ["     " + "".join(f"{c:^4}" for c in range(c0, c1 + 1))]
    for r in range(r0, r1 + 1):
        cells, links = [], []
        for c in range(c0, c1 + 1):
            cell = r * n + c
            h = grid.height[cell]
            text = "." if not h else str(grid.value[cell]) + (f"^{h}" if h > 1 else "")
            right = c < c1 and joined(cell, cell + 1)
            cells.append(f"{text:^3}" + ("-" if right else " "))
            links.append(" | " if r < r1 and joined(cell, cell + n) else "   ")
        lines.append(f"{r:>4} " + "".join(cells).rstrip())
        if any(link.strip() for link in links):
            lines.append("     " + " ".join(links).rstrip())
    return lines


def title_text(rules: GridRules) -> str:
    return f"{rules.name} - board {rules.board_size}x{rules.board_size}"


def winner_text(result: RoundResult, names: list[str]) -> str:
    return "a tie" if result.winner is None else f"{names[result.winner]} wins"


def table_lines(
    rules: GridRules,
    names: list[str],
    scores: list[int],
    grid: Grid,
    hands: list[str],
    current: int | None,
    boneyard: int,
    recent: Sequence[str | None],
    result: RoundResult | None,
) -> list[str]:
    """Scores, the grid, the hands, the bazaar, the last events and the winner: the picture both
    the whole table (``render_text``) and one seat's view (``seat_text``) draw."""
    points = ", ".join(f"{names[s]}: {score}" for s, score in enumerate(scores))
    out = [f"{title_text(rules)} - points {points}"]
    out += grid_text(rules, grid)
    out.append("  (value, ^height from the second floor; - and | join the halves of a tile)")
    out += players_text(current, boneyard, names, hands, recent)
    if result is not None:
        out.append(f"  game over: {winner_text(result, names)}")
    return out


def hand_text(rules: GridRules, hand: int) -> str:
    return " ".join(format_tile(t) for t in rules.kinds_in(hand)) or "no tiles"


def render_text(
    rules: GridRules, state: GridState, names: list[str], hands_of: list[int] | None = None
) -> str:
    """Scores, the grid, the hands (all, or only ``hands_of``), the bazaar and the last events."""
    shown = range(len(state.hands)) if hands_of is None else hands_of
    hands = [
        hand_text(rules, hand) if seat in shown else tiles_text(hand.bit_count())
        for seat, hand in enumerate(state.hands)
    ]
    recent = [event_text(rules, e, names) for e in state.events[-6:]]
    current = None if state.round_over else state.current
    result = state.result if state.round_over else None
    return "\n".join(
        table_lines(rules, names, state.scores, state.grid, hands, current, len(state.stock), recent, result)
    )


def seat_text(rules: GridRules, view: SeatView, names: list[str]) -> str:
    """The table as one seat sees it (every hand with ``open_hands``), without the recent events
    (a running commentary says them), and how a move names its cells."""
    grid = view.layout
    assert isinstance(grid, Grid)
    hands = [
        hand_text(rules, sum(1 << t for t in view.known_hands[seat]))
        if len(view.known_hands[seat]) == size
        else tiles_text(size)
        for seat, size in enumerate(view.hand_sizes)
    ]
    current = None if view.round_over else view.current_player
    lines = table_lines(
        rules, names, list(view.scores), grid, hands, current, view.boneyard_size, [], view.result
    )
    lines.append("  (a move names cells as (row,col): the row on the left, the column on top)")
    return "\n".join(lines)


# --- image -------------------------------------------------------------------------------------

GRID_LINE = (30, 110, 74)
FLOOR_SHADE = 0.14  # each floor above the first is this much darker (down to half)
MIN_WIDTH = 660  # pixels: the header's title and four players' scores fit, and the hands
STATUS_LINES = 3  # the last events, one a line (a lay names its cells: one is a line's worth)


def cell_pixels(board_size: int) -> int:
    """Pixels per cell: 32 up to a 16 board, smaller beyond (at least 12)."""
    return 32 if board_size <= 16 else max(12, 512 // board_size)


def board_pixels(board_size: int) -> int:
    """The board's square: the cells and half a cell of felt around them."""
    s = cell_pixels(board_size)
    return board_size * s + 2 * (s // 2)


def frame_of(rules: GridRules) -> Frame:
    """The frame of a table: the board's square on the felt, at least ``MIN_WIDTH`` wide."""
    side = board_pixels(rules.board_size)
    return Frame.around(side, max(side, MIN_WIDTH), rules.num_players, STATUS_LINES)


def board_origin(rules: GridRules) -> tuple[int, int]:
    """(top, left) of cell (0, 0) in the frame: the board in the middle of the felt."""
    left, top, right, _ = frame_of(rules).felt_box
    margin = cell_pixels(rules.board_size) // 2
    return top + margin, left + (right - left - board_pixels(rules.board_size)) // 2 + margin


def _draw_board(image: np.ndarray, rules: GridRules, state: GridState) -> None:
    """The grid's faint lines, then every tile as it lies, each floor shaded darker."""
    n, s = rules.board_size, cell_pixels(rules.board_size)
    top, left = board_origin(rules)
    for k in range(n + 1):
        image[top + k * s, left : left + n * s + 1] = GRID_LINE
        image[top : top + n * s + 1, left + k * s] = GRID_LINE
    for edge, x, y, level, _tile in state.grid.placed:  # in the order laid: upper floors last
        (r1, c1), (r2, _) = rules.geometry.edge_coordinates(edge)
        shade = max(0.5, 1.0 - FLOOR_SHADE * (level - 1))
        draw_tile(image, top + r1 * s, left + c1 * s, s, (x, y), vertical=r1 != r2, shade=shade)


def status_lines(
    rules: GridRules, state: GridState, names: list[str], seen: Sequence[tuple[Any, ...]] | None = None
) -> list[str]:
    """The last events in words (``seen``: as a seat saw them, default the game's), one a line,
    and at the end who won."""
    result = state.result if state.round_over else None
    events = state.events if seen is None else seen
    recent = filter(None, (event_text(rules, e, names) for e in reversed(events)))
    said = list(islice(recent, STATUS_LINES - (result is not None)))[::-1]
    return said if result is None else [*said, f"game over: {winner_text(result, names)}"]


def seat_tiles(rules: GridRules, state: GridState, sight: Sight | None) -> list[SeatTiles]:
    """Each hand face up; drawn for a seat, the tiles it cannot name as backs (or revealed, dimmed)."""
    if sight is None:
        return [SeatTiles(list(rules.kinds_in(hand))) for hand in state.hands]
    out = []
    for hand, known in zip(state.hands, sight.known_hands, strict=True):
        named = sum(1 << t for t in known) & hand
        hidden = list(rules.kinds_in(hand & ~named))
        out.append(hand_as_seen(list(rules.kinds_in(named)), hidden, sight.reveal))
    return out


def render_rgb(
    rules: GridRules, state: GridState, names: list[str], sight: Sight | None = None
) -> np.ndarray:
    """The whole table, players called ``names``: the board seen from above (green felt with a
    faint grid, the tiles drawn as every table picture draws them, each floor shaded darker)
    in the frame every table shares (:mod:`domino_env.render.frame`: the points, the bazaar,
    the last events, every hand; drawn as ``sight``'s seat sees it where given); (H, W, 3)
    uint8, one size for a table all game."""
    frame = frame_of(rules)
    image = background(frame).copy()
    _draw_board(image, rules, state)
    seats = [
        SeatRow(names[seat], tiles, hand.bit_count(), state.scores[seat])
        for seat, (hand, tiles) in enumerate(zip(state.hands, seat_tiles(rules, state, sight), strict=True))
    ]
    parts = Parts(
        title=title_text(rules),
        sides=header_sides(rules, [f"{names[seat]}: {points}" for seat, points in enumerate(state.scores)]),
        stock=len(state.stock),
        status=status_lines(rules, state, names, None if sight is None else sight.events),
        seats=seats,
        to_move=None if state.round_over else state.current,
        stock_name="bazaar",
        score_word=score_word(rules),
    )
    draw_parts(image, frame, parts)
    return image
