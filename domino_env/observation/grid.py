"""Seat-relative observation vectors for 3D dominoes, kept up to date incrementally.

Layout (``GridEncoder.layout``, name -> slice of the flat float32 vector); N board size,
C = N * N cells, V = 7 values, K = 28 tile kinds, P players:

==========  ==========  ===============================================================
name        size        meaning
==========  ==========  ===============================================================
height      C           floors on each cell / 4 (0: empty), row-major (cell r * N + c)
values      V * C       one plane per value: 1 where a cell's top half shows it
points_now  2 * C       one plane per direction (right, then down), entry d * C + cell:
                        1 where a tile the rules allow on that edge scores a point now
hand        K           own tiles by kind (double-six ids), copies / ``sets``
table       K           tiles on the board by kind, copies / ``sets``
hands       (P-1) * K   only with ``open_hands``: the other hands, next seat first
hand_sizes  P-1         other players' tile counts / ``hand_size``, next seat first
boneyard    1           tiles in the bazaar / all tiles
scores      P           points / 10, the observer first
==========  ==========  ===============================================================

The board comes first, plane by plane, so a convolutional policy can take
``obs[: 10 * C].reshape(10, N, N)`` (height, the seven value planes, the two ``points_now``
planes) and the rest as a flat vector. Sizes: 2,620 floats at board 16 with 2 players,
10,300 at board 32.

``points_now`` is indexed like the edges of the action ids (``edge = action % 2C``): whether a
legal placement scores depends on its edge alone - on top always, at level 1 when both halves
touch a half (the legality rule makes those their own values) - so the entry for edge ``e``
says it for all 49 value pairs laid there. Information any player can work out, given so that
a policy sees "this placement scores" at its anchor cell (the last two board planes are the
network's ``action_planes``) instead of learning the touch rule first. It is 1 also where the
hand to move holds no tile that fits: the action mask says what is legal.

Each seat's row is updated from the game's event list when the seat observes, so a step
costs a few writes per tile laid, not a rebuild; ``points_now`` follows the edges the grid
lists as changed (``Grid.flipped``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from domino_env.core.state import DRAW, LAY, SCORE
from domino_env.observation.chain import block_layout

if TYPE_CHECKING:
    from domino_env.rules.grid import GridRules, GridState

HEIGHT_SCALE = 0.25  # the height plane holds floors / 4
BOARD_PLANES = 10  # height, one plane per value, then points_now (one plane per direction)
ACTION_PLANES = 2  # the last board planes, entry (d, cell) about the placements on edge d * C + cell

FloatRow = Any  # a float32 row written through a memoryview


class GridEncoder:
    """Builds and caches one observation row per seat."""

    def __init__(self, rules: GridRules, observer: None = None) -> None:
        """``observer`` is always None (3D dominoes declares no blocks of its own); the environment
        passes one to every encoder."""
        self.rules = rules
        n, cells, kinds = rules.num_players, rules.cells, rules.kind_size
        sizes = [
            ("height", cells),
            ("values", rules.num_values * cells),
            ("points_now", rules.num_edges),
            ("hand", kinds),
            ("table", kinds),
            *([("hands", (n - 1) * kinds)] if rules.open_hands else []),
            ("hand_sizes", n - 1),
            ("boneyard", 1),
            ("scores", n),
        ]
        self.layout, self.size = block_layout(sizes)
        self.board_shape = (BOARD_PLANES, rules.board_size)  # (planes, side) at the vector's start
        self.action_planes = ACTION_PLANES
        self._height = self.layout["height"].start
        self._values = self.layout["values"].start
        self._points_now = self.layout["points_now"].start
        self._hand = self.layout["hand"].start
        self._table = self.layout["table"].start
        self._hands = self.layout["hands"].start if rules.open_hands else -1
        self._sizes = self.layout["hand_sizes"].start  # the boneyard follows the hand sizes
        self._scores = self.layout["scores"].start
        self.rows = np.zeros((n, self.size), dtype=np.float32)
        self._arrays = list(self.rows)
        self._views: list[FloatRow] = [row.data for row in self.rows]
        self._others = [[(seat + k) % n for k in range(1, n)] for seat in range(n)]  # next seat first
        self._serial = [-1] * n
        self._cursor = [0] * n
        self._flipped = [0] * n  # per row: how much of the grid's ``flipped`` it has applied
        self._shown = [[0] * n for _ in range(n)]  # per row: the hand of each seat it shows
        self._copy_scale = 1.0 / rules.sets
        self._size_scale = 1.0 / rules.hand_size
        self._stock_scale = 1.0 / rules.num_tiles
        self._score_scale = 1.0 / rules.match_target
        self._blank = np.zeros(self.size, dtype=np.float32).data

    def __reduce__(self) -> tuple[type, tuple[GridRules]]:
        """Copied or pickled as a new encoder of the same rules: its memoryviews cannot be, and
        a fresh one rebuilds the world from the state at the next observation anyway."""
        return type(self), (self.rules,)

    def forget(self) -> None:
        """Drop every cached row (a new game)."""
        self._serial = [-1] * self.rules.num_players

    def observe(self, state: GridState, seat: int) -> np.ndarray:
        """The seat's current row (a new array)."""
        row = self._views[seat]
        if self._serial[seat] != state.round_serial:
            row[:] = self._blank
            self._shown[seat] = [0] * self.rules.num_players
            self._serial[seat] = state.round_serial
            self._cursor[seat] = self._flipped[seat] = 0
            self._catch_up(state, seat, row, fresh=True)
        elif self._cursor[seat] < len(state.events):
            self._catch_up(state, seat, row, fresh=False)
        return self._arrays[seat].copy()

    def _catch_up(self, state: GridState, seat: int, row: FloatRow, fresh: bool) -> None:
        """Apply the events since the row's last write; blocks read from state are written once."""
        rules = self.rules
        counts = scores = fresh
        cells, edges = rules.cells, rules.num_edges
        edge_cells, values = rules.geometry.edge_cells, rules.num_values
        height, planes, table = self._height, self._values, self._table
        kind_of, copies, on_table = rules.kind_of, rules.copies, state.on_table
        events: Sequence[tuple[Any, ...]] = state.events  # any event, read by its kind
        for event in events[self._cursor[seat] :]:
            kind = event[0]
            if kind == LAY:
                _, _, tile, action, level, _ = event
                pair, edge = divmod(action, edges)
                a, b = edge_cells[edge]
                row[height + a] = row[height + b] = level * HEIGHT_SCALE
                if level == 1:
                    x, y = divmod(pair, values)
                    row[planes + x * cells + a] = 1.0
                    row[planes + y * cells + b] = 1.0
                k = kind_of[tile]
                row[table + k] = (on_table & copies[k]).bit_count() * self._copy_scale
                counts = True
            elif kind == DRAW:
                counts = True
            elif kind == SCORE:
                scores = True
        flipped, scoring, at = state.grid.flipped, state.grid.scoring, self._points_now
        for edge in flipped[self._flipped[seat] :]:
            row[at + edge] = scoring[edge]
        self._flipped[seat] = len(flipped)
        self._write_hand(row, self._hand, seat, rules.known_hand(state, seat), seat)
        if self._hands >= 0:
            at = self._hands
            for other in self._others[seat]:
                self._write_hand(row, at, seat, state.hands[other], other)
                at += rules.kind_size
        if counts:  # other players' hand sizes, then the bazaar (the entry right after them)
            at, hands, scale = self._sizes, state.hands, self._size_scale
            for other in self._others[seat]:
                row[at] = hands[other].bit_count() * scale
                at += 1
            row[at] = len(state.stock) * self._stock_scale
        if scores:
            n, base = rules.num_players, self._scores
            for k in range(n):
                row[base + k] = state.scores[(seat + k) % n] * self._score_scale
        self._cursor[seat] = len(state.events)

    def _write_hand(self, row: FloatRow, at: int, seat: int, hand: int, owner: int) -> None:
        """Rewrite the kinds of a hand block whose tiles changed since the row last showed it."""
        shown = self._shown[seat]
        changed = hand ^ shown[owner]
        if not changed:
            return
        shown[owner] = hand
        kind_of, copies, scale = self.rules.kind_of, self.rules.copies, self._copy_scale
        while changed:
            low = changed & -changed
            k = kind_of[low.bit_length() - 1]
            row[at + k] = (hand & copies[k]).bit_count() * scale
            changed ^= low
