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
from domino_env.tiles import iter_bits
from domino_env.variants.base import ChainRules

_SLOT_FLAGS = 4  # open, closed, double at the end, live

# A float32 row written through a memoryview (typeshed types memoryview items as int).
FloatRow = Any


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
        self.layout: dict[str, slice] = {}
        start = 0
        for name, size in sizes:
            self.layout[name] = slice(start, start + size)
            start += size
        self.size = start
        self._hand = self.layout["hand"].start
        self._table = self.layout["table"].start
        self._ends = self.layout["ends"].start
        self._phase = self.layout["phase"].start
        self._sizes = self.layout["hand_sizes"].start  # the boneyard follows the hand sizes
        self._extra = slice(self.layout["phase"].stop, start)
        self.rows = np.zeros((n, self.size), dtype=np.float32)
        self._serial = [-1] * n  # round the row was built for
        self._cursor = [0] * n  # events already applied to the row
        self._no_flags = (False,) * len(rules.phases)
        self._flags = [self._no_flags] * n  # phase flags written in each row
        self._slot_keys: list[list[int]] = [[] for _ in range(n)]
        self._suit = ts.suit_mask
        self._closed_code, self._unused_code = 4 * values, 4 * values + 1
        self._slot_table = np.zeros((4 * values + 2, self.slot_width), dtype=np.float32)
        for v in range(values):
            for double in (0, 1):
                for live in (0, 1):
                    features = self._slot_table[4 * v + 2 * double + live]
                    features[v] = 1.0
                    features[values:] = (1.0, 0.0, double, live)
        self._slot_table[self._closed_code, values + 1] = 1.0
        # Rows are written through memoryviews: item and slice writes cost a third of numpy's.
        self._views: list[FloatRow] = [row.data for row in self.rows]
        self._slot_views = [features.data for features in self._slot_table]
        # value_bits[mask] is the row of V flags of a value bitmask (voids).
        value_bits = ((np.arange(1 << values)[:, None] >> np.arange(values)) & 1).astype(np.float32)
        self._value_views = [bits.data for bits in value_bits]
        self._size_scale = 1.0 / rules.hand_size
        self._stock_scale = 1.0 / ts.size
        self._score_scale = 1.0 / rules.match_target

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
        return self.rows[seat]

    def _rebuild(self, state: State, seat: int, row: FloatRow) -> None:
        """Write a row from scratch (a new round); blocks that are still zero are skipped."""
        self.rows[seat].fill(0.0)
        self._flags[seat] = self._no_flags
        self._slot_keys[seat] = [self._unused_code] * self.rules.num_slots  # all-zero features
        for t in iter_bits(state.hands[seat]):
            row[self._hand + t] = 1.0
        for t in iter_bits(state.line.played):
            row[self._table + t] = 1.0
        self._write_ends(state, seat, row)
        self._write_counts(state, seat, row)
        if any(state.voids):
            self._write_voids(state, seat, row)
        if any(state.scores):
            self._write_scores(state, seat, row)
        if self.rules.extra_features:
            self.rules.encode_extra(state, seat, self.rows[seat][self._extra])
        self._serial[seat] = state.round_serial
        self._cursor[seat] = len(state.events)

    def _catch_up(self, state: State, seat: int, row: FloatRow) -> None:
        laid = counts = voids = scores = False
        for event in state.events[self._cursor[seat] :]:
            kind = event[0]
            if kind == LAY:
                laid = counts = True
                row[self._table + event[2]] = 1.0
                if event[1] == seat:
                    row[self._hand + event[2]] = 0.0
            elif kind == DRAW:
                counts = voids = True
                if event[1] == seat:
                    row[self._hand + event[2]] = 1.0
            elif kind == PASS:
                voids = True
            elif kind == SCORE:
                scores = True
            elif kind == DEAL:  # pragma: no cover - a new deal changes round_serial
                self._rebuild(state, seat, row)
                return
        if laid:
            self._write_ends(state, seat, row)
        if counts:
            n = len(state.hands)
            for k in range(1, n):
                row[self._sizes + k - 1] = state.hands[(seat + k) % n].bit_count() * self._size_scale
            row[self._sizes + n - 1] = len(state.stock) * self._stock_scale
        if voids:
            self._write_voids(state, seat, row)
        if scores:
            self._write_scores(state, seat, row)
        if self.rules.extra_features:
            self.rules.encode_extra(state, seat, self.rows[seat][self._extra])
        self._cursor[seat] = len(state.events)

    def _write_ends(self, state: State, seat: int, row: FloatRow) -> None:
        """Rewrite the slots whose features changed since the row's last write.

        A slot's features are coded as one int (open: 4 * value + 2 * double + live;
        closed and unused after those) indexing the precomputed ``_slot_table``.
        """
        line = state.line
        status, value, double = line.state, line.value, line.double_end
        unplayed = ~line.played
        suit = self._suit
        keys = self._slot_keys[seat]
        width = self.slot_width
        for slot in range(line.num_slots):
            s = status[slot]
            if s == OPEN:
                v = value[slot]
                code = 4 * v + 2 * double[slot] + (suit[v] & unplayed != 0)
            else:
                code = self._closed_code if s == CLOSED else self._unused_code
            if code != keys[slot]:
                keys[slot] = code
                base = self._ends + slot * width
                row[base : base + width] = self._slot_views[code]

    def _write_counts(self, state: State, seat: int, row: FloatRow) -> None:
        """Other players' hand sizes, then the boneyard size (the block right after them)."""
        n = len(state.hands)
        for k in range(1, n):
            row[self._sizes + k - 1] = state.hands[(seat + k) % n].bit_count() * self._size_scale
        row[self._sizes + n - 1] = len(state.stock) * self._stock_scale

    def _write_voids(self, state: State, seat: int, row: FloatRow) -> None:
        n = self.rules.num_players
        values = self.rules.tile_set.num_values
        base = self.layout["voids"].start
        for k in range(1, n):
            start = base + (k - 1) * values
            row[start : start + values] = self._value_views[state.voids[(seat + k) % n]]

    def _write_scores(self, state: State, seat: int, row: FloatRow) -> None:
        sides = self.rules.num_sides
        own = self.rules.side_of[seat]
        base = self.layout["scores"].start
        for k in range(sides):
            row[base + k] = state.scores[(own + k) % sides] * self._score_scale
