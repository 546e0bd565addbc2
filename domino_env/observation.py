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

import numpy as np

from domino_env.engine.line import CLOSED, OPEN
from domino_env.engine.state import DEAL, DRAW, LAY, PASS, SCORE, State
from domino_env.tiles import iter_bits
from domino_env.variants.base import ChainRules

_SLOT_FLAGS = 4  # open, closed, double at the end, live


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
        self._extra = slice(self.layout["phase"].stop, start)
        self.rows = np.zeros((n, self.size), dtype=np.float32)
        self._serial = [-1] * n  # round the row was built for
        self._cursor = [0] * n  # events already applied to the row
        self._no_flags = (False,) * len(rules.phases)
        self._flags = [self._no_flags] * n  # phase flags written in each row
        self._slot_keys: list[list[tuple[int, int, bool, bool]]] = [[] for _ in range(n)]
        self._slot_rows: dict[tuple[int, int, bool, bool], np.ndarray] = {}
        # value_bits[mask] is the row of V flags of a value bitmask (voids).
        self._value_bits = ((np.arange(1 << values)[:, None] >> np.arange(values)) & 1).astype(np.float32)
        self._eye = np.eye(values, dtype=np.float32)
        self._size_scale = 1.0 / rules.hand_size
        self._stock_scale = 1.0 / ts.size
        self._score_scale = 1.0 / rules.match_target

    def forget(self) -> None:
        """Drop every cached row (a new match restarts the round serials)."""
        self._serial = [-1] * self.rules.num_players

    def observe(self, state: State, seat: int) -> np.ndarray:
        """The seat's current row (a view into the cache: copy it before keeping it)."""
        row = self.rows[seat]
        if self._serial[seat] != state.round_serial:
            self._rebuild(state, seat, row)
        elif self._cursor[seat] < len(state.events):
            self._catch_up(state, seat, row)
        flags = self.rules.phase_flags(state) if state.current == seat else self._no_flags
        if flags != self._flags[seat]:
            for i, flag in enumerate(flags):
                row[self._phase + i] = flag
            self._flags[seat] = flags
        return row

    def _rebuild(self, state: State, seat: int, row: np.ndarray) -> None:
        row[:] = 0.0
        self._flags[seat] = self._no_flags
        self._slot_keys[seat] = [(-1, -1, False, False)] * self.rules.num_slots
        for t in iter_bits(state.hands[seat]):
            row[self._hand + t] = 1.0
        for t in iter_bits(state.line.played):
            row[self._table + t] = 1.0
        self._write_ends(state, seat, row)
        self._write_counts(state, seat, row)
        self._write_voids(state, seat, row)
        self._write_scores(state, seat, row)
        if self.rules.extra_features:
            self.rules.encode_extra(state, seat, row[self._extra])
        self._serial[seat] = state.round_serial
        self._cursor[seat] = len(state.events)

    def _catch_up(self, state: State, seat: int, row: np.ndarray) -> None:
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
            self._write_counts(state, seat, row)
        if voids:
            self._write_voids(state, seat, row)
        if scores:
            self._write_scores(state, seat, row)
        if self.rules.extra_features:
            self.rules.encode_extra(state, seat, row[self._extra])
        self._cursor[seat] = len(state.events)

    def _write_ends(self, state: State, seat: int, row: np.ndarray) -> None:
        """Rewrite the slots whose (status, value, double, live) changed since the row's last write."""
        line = state.line
        keys = self._slot_keys[seat]
        width = self.slot_width
        for slot in range(line.num_slots):
            status = line.state[slot]
            key = (status, line.value[slot], status == OPEN and line.double_end[slot], line.is_live(slot))
            if key != keys[slot]:
                base = self._ends + slot * width
                row[base : base + width] = self._slot_row(key)
                keys[slot] = key

    def _slot_row(self, key: tuple[int, int, bool, bool]) -> np.ndarray:
        """The feature block of one slot: value one-hot (when open), open, closed, double, live."""
        features = self._slot_rows.get(key)
        if features is None:
            status, value, double, live = key
            features = np.zeros(self.slot_width, dtype=np.float32)
            values = self.slot_width - _SLOT_FLAGS
            if status == OPEN:
                features[value] = 1.0
            features[values:] = (status == OPEN, status == CLOSED, double, live)
            self._slot_rows[key] = features
        return features

    def _write_counts(self, state: State, seat: int, row: np.ndarray) -> None:
        n = self.rules.num_players
        base = self.layout["hand_sizes"].start
        for k in range(1, n):
            row[base + k - 1] = state.hands[(seat + k) % n].bit_count() * self._size_scale
        row[self.layout["boneyard"].start] = len(state.stock) * self._stock_scale

    def _write_voids(self, state: State, seat: int, row: np.ndarray) -> None:
        n = self.rules.num_players
        values = self.rules.tile_set.num_values
        base = self.layout["voids"].start
        for k in range(1, n):
            start = base + (k - 1) * values
            row[start : start + values] = self._value_bits[state.voids[(seat + k) % n]]

    def _write_scores(self, state: State, seat: int, row: np.ndarray) -> None:
        sides = self.rules.num_sides
        own = self.rules.side_of[seat]
        base = self.layout["scores"].start
        for k in range(sides):
            row[base + k] = state.scores[(own + k) % sides] * self._score_scale
