"""Pictures of a 3D dominoes table: a text grid (``ansi``) and an image (``rgb_array``, numpy only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from domino_env.core.grid import Grid
from domino_env.core.state import DRAW, LAY, PASS, SCORE, RoundResult
from domino_env.core.tiles import format_tile
from domino_env.core.view import SeatView
from domino_env.render.chain import players_text, tiles_text

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
    if kind == DRAW:
        return f"{names[event[1]]} draws"
    if kind == PASS:
        return f"{names[event[1]]} passes"
    if kind == SCORE:
        return None  # the lay already says it
    return None


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
    out = [f"{rules.name} - board {rules.board_size}x{rules.board_size} - points {points}"]
    out += grid_text(rules, grid)
    out.append("  (value, ^height from the second floor; - and | join the halves of a tile)")
    out += players_text(current, boneyard, names, hands, recent)
    if result is not None:
        who = "a tie" if result.winner is None else f"{names[result.winner]} wins"
        out.append(f"  game over: {who}")
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

FELT = (22, 96, 62)
GRID_LINE = (30, 110, 74)
IVORY = np.array((250, 244, 226), dtype=np.float32)
EDGE = (60, 52, 44)  # the border around each tile
DIVIDER = (150, 140, 125)
PIP = (28, 24, 22)
FLOOR_SHADE = 0.14  # each floor above the first is this much darker (down to half)

# Pip centres in a half, as fractions of its width and height.
PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    0: (),
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.25, 0.75), (0.75, 0.25), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (0.75, 0.75)),
    6: ((0.25, 0.25), (0.5, 0.25), (0.75, 0.25), (0.25, 0.75), (0.5, 0.75), (0.75, 0.75)),
}


def cell_pixels(board_size: int) -> int:
    """Pixels per cell: 32 up to a 16 board, smaller beyond (at least 12)."""
    return 32 if board_size <= 16 else max(12, 512 // board_size)


def render_rgb(rules: GridRules, state: GridState) -> np.ndarray:
    """The table seen from above: green felt with a faint grid, ivory tiles with dark pips and a
    dark border, each floor shaded darker; (H, W, 3) uint8."""
    n, s = rules.board_size, cell_pixels(rules.board_size)
    margin = s // 2
    side = n * s + 2 * margin
    image = np.empty((side, side, 3), dtype=np.uint8)
    image[:] = FELT
    for k in range(n + 1):  # grid lines
        at = margin + k * s
        image[at, margin : margin + n * s + 1] = GRID_LINE
        image[margin : margin + n * s + 1, at] = GRID_LINE
    radius = max(1.0, s / 10)
    yy, xx = np.mgrid[0:s, 0:s]
    for edge, x, y, level, _tile in state.grid.placed:  # in the order laid: upper floors last
        (r1, c1), (r2, c2) = rules.geometry.edge_coordinates(edge)
        top, left = margin + r1 * s, margin + c1 * s
        bottom, right = margin + (r2 + 1) * s, margin + (c2 + 1) * s
        shade = max(0.5, 1.0 - FLOOR_SHADE * (level - 1))
        image[top:bottom, left:right] = EDGE
        image[top + 2 : bottom - 2, left + 2 : right - 2] = (IVORY * shade).astype(np.uint8)
        if r1 == r2:  # the line between the halves
            image[top + 4 : bottom - 4, left + s - 1 : left + s + 1] = DIVIDER
        else:
            image[top + s - 1 : top + s + 1, left + 4 : right - 4] = DIVIDER
        for (r, c), value in (((r1, c1), x), ((r2, c2), y)):
            half = image[margin + r * s : margin + (r + 1) * s, margin + c * s : margin + (c + 1) * s]
            for fy, fx in PIPS[value]:
                dot = (yy - fy * (s - 1)) ** 2 + (xx - fx * (s - 1)) ** 2 <= radius * radius
                half[dot] = PIP
    return image
