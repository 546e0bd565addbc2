"""The table of 3D dominoes: a square grid of cells, each with a height and a value.

A tile covers two edge-adjacent cells, so a placement is an *edge* of the grid and the two
values laid on it: ``x`` on its first cell (the left or upper one), ``y`` on the second.
Edge ids are ``d * C + a`` for the edge from cell ``a = r * N + c`` to the right
(``d = 0``) or down (``d = 1``), with ``N`` the board size and ``C = N * N`` cells; the ids
of edges that would leave the board exist but never hold a tile. A *placement id* is
``(x * V + y) * 2C + edge`` (``V`` values): the rules use it as the action id.

A tile lies on top only over halves that show its own values, so every floor of a cell
shows the same value: one value map and one height map describe the whole table, and a
half at level 1 touches exactly the occupied neighbours of its cell.

What the legal placements depend on is kept up to date at each tile, so listing them never
scans the board:

* ``adj[c]``: for an empty cell, the values (a bitmask) of its occupied neighbours - what a
  half laid there at level 1 would touch;
* ``index[key]``: the edges where a tile may go now, each filed under the keys that say
  which value pairs fit there. A pair key ``x * V + y`` holds the edges that take exactly
  (x, y): edges whose two empty cells both touch (x among the first's ``adj``, y among the
  second's), and edges to stack on whose cells show x and y. The key ``V * V + x`` holds
  the empty edges whose first cell touches x and whose second touches nothing (any y goes
  there), and ``V * V + V + y`` the other way round. An edge is filed under one or two keys
  as a rule (never 7 for a free side), so a tile costs a few updates, and the placements
  of a hand are three lookups per value pair it holds, whatever the size of the board;
* ``keys[edge]``: the keys an edge is filed under, as a bitmask;
* ``scoring[edge]``: 1.0 (else 0.0, as the observation shows it) where a tile the rules
  allow there scores a point now - the edges filed under a pair key: both halves would touch
  (a legal tile then touches its values), or on top. Whether a legal placement scores
  depends on its edge alone, not on its values;
* ``flipped``: the edges whose ``scoring`` changed, in order (an edge may come back), so an
  observer catches up on a few edges per tile instead of reading the whole board.
"""

from __future__ import annotations

from functools import cache

from domino_env.core.tiles import LARGEST_SET

RIGHT, DOWN = 0, 1
LARGEST_BOARD = 64  # cells a side (the rules allow 4 to 64)


class Geometry:
    """Read-only tables of an N x N board with V values, shared by every grid of that size."""

    def __init__(self, size: int, num_values: int) -> None:
        if not (
            1 <= size <= LARGEST_BOARD and 1 <= num_values <= LARGEST_SET + 1
        ):  # (a saved game names them)
            raise ValueError(
                f"a board is 1 to {LARGEST_BOARD} cells a side with 1 to {LARGEST_SET + 1} values, "
                f"got {size} and {num_values}"
            )
        n = self.size = size
        self.cells = n * n
        self.num_edges = 2 * self.cells
        self.num_values = num_values
        self.all_values = (1 << num_values) - 1
        # edge id -> (first cell, second cell); (-1, -1) for edges that leave the board
        self.edge_cells: list[tuple[int, int]] = []
        for d in (RIGHT, DOWN):
            for a in range(self.cells):
                r, c = divmod(a, n)
                if d == RIGHT:
                    self.edge_cells.append((a, a + 1) if c < n - 1 else (-1, -1))
                else:
                    self.edge_cells.append((a, a + n) if r < n - 1 else (-1, -1))
        self.cell_edges: list[tuple[int, ...]] = [() for _ in range(self.cells)]
        for edge, (a, b) in enumerate(self.edge_cells):
            if a >= 0:
                self.cell_edges[a] += (edge,)
                self.cell_edges[b] += (edge,)
        # around[cell]: (neighbour, the neighbour's other edges) for each neighbour of a cell
        self.around: list[tuple[tuple[int, tuple[int, ...]], ...]] = []
        for cell in range(self.cells):
            ends = (self.edge_cells[e] for e in self.cell_edges[cell])
            neighbours = [b if a == cell else a for a, b in ends]
            self.around.append(
                tuple(
                    (n, tuple(f for f in self.cell_edges[n] if cell not in self.edge_cells[f]))
                    for n in neighbours
                )
            )
        # tile_edges[edge]: the edges that share a cell with it, itself included
        self.tile_edges: list[tuple[int, ...]] = [
            tuple(dict.fromkeys(self.cell_edges[a] + self.cell_edges[b])) if a >= 0 else ()
            for a, b in self.edge_cells
        ]
        # spread[mask]: bit x * V set for each value x in mask; spread[mx] * my is the set of
        # pairs (x, y) with x in mx and y in my (the V-bit rows do not overlap).
        self.spread = [
            sum(1 << (x * num_values) for x in range(num_values) if mask >> x & 1)
            for mask in range(1 << num_values)
        ]
        # index keys (see Grid): the pairs, then "first cell touches x", then "second touches y"
        pairs = num_values * num_values
        self.first_touches, self.second_touches = pairs, pairs + num_values
        self.num_keys = pairs + 2 * num_values
        self.pair_keys = [
            (pair, self.first_touches + pair // num_values, self.second_touches + pair % num_values)
            for pair in range(pairs)
        ]

    def __reduce__(self) -> tuple[type[Geometry], tuple[int, int]]:
        """Pickled as its size, not its tables (a checkpoint's games in progress all name it)."""
        return Geometry, (self.size, self.num_values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Geometry) and (other.size, other.num_values) == (self.size, self.num_values)

    def __hash__(self) -> int:
        return hash((Geometry, self.size, self.num_values))

    def __copy__(self) -> Geometry:
        return self  # (never changed once built: copies share it, as the rules' tables do)

    def __deepcopy__(self, memo: dict[int, object]) -> Geometry:
        return self

    def edge_coordinates(self, edge: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """((row, col), (row, col)) of an edge's two cells, the second possibly off the board."""
        d, a = divmod(edge, self.cells)
        r, c = divmod(a, self.size)
        return (r, c), ((r, c + 1) if d == RIGHT else (r + 1, c))


@cache
def geometry(size: int, num_values: int) -> Geometry:
    return Geometry(size, num_values)


class Grid:
    """One table: heights, values and the candidate placements, updated tile by tile."""

    def __init__(self, geo: Geometry, stacking: bool = True) -> None:
        self.geo = geo
        self.stacking = stacking
        self.reset()

    def reset(self) -> None:
        geo = self.geo
        self.height = [0] * geo.cells
        self.value = [-1] * geo.cells  # -1: empty
        self.adj = [0] * geo.cells
        self.keys: dict[int, int] = {}  # edge -> the index keys it is filed under (bitmask)
        self.index: list[dict[int, None]] = [{} for _ in range(geo.num_keys)]  # key -> edges (ordered)
        self.placed: list[tuple[int, int, int, int, int]] = []  # (edge, x, y, level, tile) in order
        self.top = [-1] * geo.cells  # index in ``placed`` of the tile on top of each cell
        self.scoring = [0.0] * geo.num_edges  # 1.0: a tile the rules allow on this edge scores now
        self.flipped: list[int] = []  # edges whose ``scoring`` changed, in order

    def clone(self) -> Grid:
        other = Grid.__new__(Grid)
        other.geo, other.stacking = self.geo, self.stacking
        other.height, other.value, other.adj = self.height[:], self.value[:], self.adj[:]
        other.keys = dict(self.keys)
        other.index = [dict(edges) for edges in self.index]
        other.placed, other.top = self.placed[:], self.top[:]
        other.scoring, other.flipped = self.scoring[:], self.flipped[:]
        return other

    def __eq__(self, other: object) -> bool:
        """Equal grids show the same table (seat views compare them); the candidate index follows
        from the tiles placed."""
        return isinstance(other, Grid) and (self.geo, self.stacking, self.placed) == (
            other.geo,
            other.stacking,
            other.placed,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    # --- what may be laid ---------------------------------------------------------------------

    def placements(self, pairs: int) -> list[int]:
        """The placement ids of the value pairs in ``pairs`` (bit ``x * V + y``: x on the
        first cell) that the rules allow now."""
        out: list[int] = []
        append = out.append
        span, index, keys_of = self.geo.num_edges, self.index, self.geo.pair_keys
        while pairs:
            low = pairs & -pairs
            pairs ^= low
            pair = low.bit_length() - 1
            base = pair * span
            for key in keys_of[pair]:
                for edge in index[key]:  # (a plain loop: cheaper than a comprehension per key)
                    append(base + edge)
        return out

    def level_of(self, edge: int) -> int | None:
        """The floor a tile on ``edge`` would lie on (1: the table), None if it cannot lie flat
        there (off the board, or cells of different heights)."""
        a, b = self.geo.edge_cells[edge]
        if a < 0 or self.height[a] != self.height[b]:
            return None
        return self.height[a] + 1

    def points(self, edge: int, x: int, y: int) -> int | None:
        """What laying x, y on ``edge`` would score (0 or 1), None if the rules forbid it."""
        level = self.level_of(edge)
        if level is None:
            return None
        a, b = self.geo.edge_cells[edge]
        if level > 1:
            return 1 if self.stacking and self.value[a] == x and self.value[b] == y else None
        touch_a, touch_b = self.adj[a], self.adj[b]
        if (touch_a and not touch_a >> x & 1) or (touch_b and not touch_b >> y & 1):
            return None  # a half touches only other values
        if not (touch_a or touch_b):
            return None  # neither half touches anything
        return 1 if touch_a and touch_b else 0

    # --- laying a tile ------------------------------------------------------------------------

    def lay(self, edge: int, x: int, y: int, tile: int) -> tuple[int, int]:
        """Lay a tile (already known legal) with x on the edge's first cell; returns its
        (level, points): 1 point on top, or at level 1 when both halves touch."""
        geo = self.geo
        a, b = geo.edge_cells[edge]
        height, adj = self.height, self.adj
        level = height[a] + 1
        points = 1 if level > 1 or (adj[a] and adj[b]) else 0
        height[a] = height[b] = level
        self.value[a], self.value[b] = x, y  # on top: the values it covers, unchanged
        self.top[a] = self.top[b] = len(self.placed)
        self.placed.append((edge, x, y, level, tile))
        edges = geo.tile_edges[edge]  # closed, or now to stack on
        if level == 1:  # and the edges of empty neighbours that now touch x or y
            for cell, v in ((a, x), (b, y)):
                bit = 1 << v
                for n, around in geo.around[cell]:
                    if not height[n] and not adj[n] & bit:
                        adj[n] |= bit
                        edges += around
        self._refresh(edges)  # one pass: the tile's own edges do not depend on adj
        return level, points

    def _refresh(self, edges: tuple[int, ...]) -> None:
        """File each edge under the keys that fit it now (and note a change in what it scores)."""
        geo = self.geo
        height, adj, value, keys, index = self.height, self.adj, self.value, self.keys, self.index
        edge_cells, spread, stacking = geo.edge_cells, geo.spread, self.stacking
        first, second, values = geo.first_touches, geo.second_touches, geo.num_values
        scoring, flipped = self.scoring, self.flipped
        for edge in edges:
            p, q = edge_cells[edge]
            hp = height[p]
            if hp != height[q]:
                new, scores = 0, 0.0  # one cell empty and the other not, or uneven floors
            elif hp:
                new, scores = (1 << (value[p] * values + value[q]), 1.0) if stacking else (0, 0.0)
            else:
                ap, aq = adj[p], adj[q]
                if ap and aq:
                    new, scores = spread[ap] * aq, 1.0  # both halves touch
                elif ap:
                    new, scores = ap << first, 0.0
                else:
                    new, scores = aq << second, 0.0
            changed = keys.get(edge, 0) ^ new
            if not changed:
                continue
            if new:
                keys[edge] = new
            else:
                del keys[edge]
            if scores != scoring[edge]:
                scoring[edge] = scores
                flipped.append(edge)
            while changed:
                low = changed & -changed
                changed ^= low
                if new & low:
                    index[low.bit_length() - 1][edge] = None
                else:
                    del index[low.bit_length() - 1][edge]

    # --- views --------------------------------------------------------------------------------

    def rows(self, values: list[int]) -> list[list[int]]:
        """A per-cell list as rows of the board."""
        n = self.geo.size
        return [values[r * n : (r + 1) * n] for r in range(n)]
