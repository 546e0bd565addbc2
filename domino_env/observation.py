"""Seat-relative observation vectors for chain games, kept up to date incrementally.

Layout (``ChainEncoder.layout``, name -> slice of the flat float32 vector); T tiles,
V values (7 for double-six), S slots, P players, D sides:

=============  ==========  ==============================================================
name           size        meaning
=============  ==========  ==============================================================
hand           T           1 for each tile in the observer's hand
table          T           1 for each tile on the table
ends           S*(V+4)     per slot: value one-hot (V), open, closed, double at the end,
                           live (a tile of that value is still off the table)
hand_sizes     P-1         other players' tile counts / hand size, next seat first
boneyard       1           tiles in the boneyard / T
voids          (P-1)*V     1 where that player was seen unable to play that value
scores         D           side scores / match target, the observer's side first
phase          variant     the rules' phase flags (``lead``: the table is empty, ...)
=============  ==========  ==============================================================

Each seat's row is updated lazily from the state's event list when it is observed, so a
step costs a handful of scalar writes, not a rebuild.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from domino_env.engine.line import CLOSED, OPEN
from domino_env.engine.state import DEAL, DRAW, LAY, PASS, SCORE, State
from domino_env.variants.base import ChainRules

_SLOT_FLAGS = 4  # open, closed, double at the end, live

# A float32 row written through a memoryview (typeshed types memoryview items as int).
FloatRow = Any


def block_layout(sizes: list[tuple[str, int]]) -> tuple[dict[str, slice], int]:
    """Blocks (name, size) laid end to end: name -> slice, and the total size."""
    layout: dict[str, slice] = {}
    start = 0
    for name, size in sizes:
        layout[name] = slice(start, start + size)
        start += size
    return layout, start


class ChainEncoder:
    """Builds and caches one observation row per seat."""

    def __init__(self, rules: ChainRules) -> None:
        self.rules = rules
        ts = rules.tile_set
        n, values, slots = rules.num_players, ts.num_values, rules.num_slots
        self.slot_width = values + _SLOT_FLAGS
        sizes = [
            ("hand", ts.size),
            ("table", ts.size),
            ("ends", slots * self.slot_width),
            ("hand_sizes", n - 1),
            ("boneyard", 1),
            ("voids", (n - 1) * values),
            ("scores", rules.num_sides),
            ("phase", len(rules.phases)),
            *rules.extra_features,
        ]
        self.layout, self.size = block_layout(sizes)
        self._hand = self.layout["hand"].start
        self._table = self.layout["table"].start
        self._ends = self.layout["ends"].start
        self._phase = self.layout["phase"].start
        self._sizes = self.layout["hand_sizes"].start  # the boneyard follows the hand sizes
        self._voids = self.layout["voids"].start
        self._extra = slice(self.layout["phase"].stop, self.size)
        self.rows = np.zeros((n, self.size), dtype=np.float32)
        self._others = [[(seat + k) % n for k in range(1, n)] for seat in range(n)]  # next seat first
        self._serial = [-1] * n  # round the row was built for
        self._shown = [0] * n  # the tiles each row's hand block shows
        self._cursor = [0] * n  # events already applied to the row
        self._no_flags = (False,) * len(rules.phases)
        self._flags = [self._no_flags] * n  # phase flags written in each row
        self._slot_keys: list[list[int]] = [[] for _ in range(n)]
        self._suit = ts.suit_mask
        self._closed_code, self._unused_code = 4 * values, 4 * values + 1
        self._unused_keys = [self._unused_code] * slots  # the keys of all-zero slot features
        self._slot_table = np.zeros((4 * values + 2, self.slot_width), dtype=np.float32)
        for v in range(values):
            for double in (0, 1):
                for live in (0, 1):
                    features = self._slot_table[4 * v + 2 * double + live]
                    features[v] = 1.0
                    features[values:] = (1.0, 0.0, double, live)
        self._slot_table[self._closed_code, values + 1] = 1.0
        # Rows are written through memoryviews: item and slice writes cost a third of numpy's.
        self._arrays = list(self.rows)  # (indexing ``rows`` makes a new view at every call)
        self._views: list[FloatRow] = [row.data for row in self.rows]
        self._slot_views = [features.data for features in self._slot_table]
        self._slot_at = [(slot, self._ends + slot * self.slot_width) for slot in range(slots)]
        # Each row's extra blocks, the numpy view the rules' ``encode_extra`` writes (None: none).
        self._extra_out = [row[self._extra] for row in self.rows] if rules.extra_features else None
        # value_bits[mask] is the row of V flags of a value bitmask (voids).
        value_bits = ((np.arange(1 << values)[:, None] >> np.arange(values)) & 1).astype(np.float32)
        self._value_views = [bits.data for bits in value_bits]
        self._size_scale = 1.0 / rules.hand_size
        self._stock_scale = 1.0 / ts.size
        self._score_scale = 1.0 / rules.match_target
        # A fresh deal's row before its hand: every player holds hand_size tiles, the rest is the boneyard.
        blank = np.zeros(self.size, dtype=np.float32)
        blank[self._sizes : self._sizes + n - 1] = rules.hand_size * self._size_scale
        blank[self._sizes + n - 1] = (ts.size - n * rules.hand_size) * self._stock_scale
        self._blank = blank.data

    def forget(self) -> None:
        """Drop every cached row (a new match restarts the round serials)."""
        self._serial = [-1] * self.rules.num_players

    def observe(self, state: State, seat: int) -> np.ndarray:
        """The seat's current row (a view into the cache: copy it before keeping it)."""
        row = self._views[seat]
        if self._serial[seat] != state.round_serial:
            self._rebuild(state, seat, row)
        elif self._cursor[seat] < len(state.events):
            self._catch_up(state, seat, row)
        flags = self.rules.phase_flags(state) if state.current == seat else self._no_flags
        if flags != self._flags[seat]:
            for i, flag in enumerate(flags):
                row[self._phase + i] = flag
            self._flags[seat] = flags
        return self._arrays[seat]

    def _rebuild(self, state: State, seat: int, row: FloatRow) -> None:
        """Write a row for a new round: a fresh deal's row and the hand, then the round's events
        replayed (the deal event writes the scores), cheaper than writing every block from state."""
        row[:] = self._blank
        self._flags[seat] = self._no_flags
        self._slot_keys[seat] = self._unused_keys[:]
        self._shown[seat] = 0
        self._serial[seat] = state.round_serial
        self._cursor[seat] = 0
        self._catch_up(state, seat, row)

    def _catch_up(self, state: State, seat: int, row: FloatRow) -> None:
        """Apply the events since the row's last write; a block read from state is written once."""
        laid = counts = voids = scores = False
        table = self._table
        for event in state.events[self._cursor[seat] :]:
            kind = event[0]
            if kind == LAY:
                laid = True
                row[table + event[2]] = 1.0
            elif kind == DRAW:
                counts = voids = True
            elif kind == PASS:
                voids = True
            elif kind == SCORE:
                scores = True
            elif kind == DEAL:  # the first event of a round: the row is a fresh deal's (see _rebuild)
                scores = any(state.scores)
        known, shown = self.rules.known_hand(state, seat), self._shown[seat]
        if known != shown:  # rewrite the hand block's changed tiles
            self._shown[seat] = known
            changed, hand = known ^ shown, self._hand
            while changed:
                low = changed & -changed
                row[hand + low.bit_length() - 1] = 1.0 if known & low else 0.0
                changed ^= low
        if laid:  # rewrite the slots whose features changed (each coded as one int, see __init__)
            line = state.line
            status, value, double, unplayed = line.state, line.value, line.double_end, ~line.played
            suit, keys = self._suit, self._slot_keys[seat]
            for slot, at in self._slot_at:
                if status[slot] == OPEN:
                    v = value[slot]
                    code = 4 * v + 2 * double[slot] + (suit[v] & unplayed != 0)
                else:
                    code = self._closed_code if status[slot] == CLOSED else self._unused_code
                if code != keys[slot]:
                    keys[slot] = code
                    row[at : at + self.slot_width] = self._slot_views[code]
        if laid or counts:  # other players' hand sizes, then the boneyard (the block right after them)
            at, hands, scale = self._sizes, state.hands, self._size_scale
            for other in self._others[seat]:
                row[at] = hands[other].bit_count() * scale
                at += 1
            row[at] = len(state.stock) * self._stock_scale
        if voids:
            self._write_voids(state, seat, row)
        if scores:
            self._write_scores(state, seat, row)
        if self._extra_out is not None:
            self.rules.encode_extra(state, seat, self._extra_out[seat])
        self._cursor[seat] = len(state.events)

    def _write_voids(self, state: State, seat: int, row: FloatRow) -> None:
        at, width = self._voids, self.rules.tile_set.num_values
        for other in self._others[seat]:
            row[at : at + width] = self._value_views[state.voids[other]]
            at += width

    def _write_scores(self, state: State, seat: int, row: FloatRow) -> None:
        sides = self.rules.num_sides
        own = self.rules.side_of[seat]
        base = self.layout["scores"].start
        for k in range(sides):
            row[base + k] = state.scores[(own + k) % sides] * self._score_scale
