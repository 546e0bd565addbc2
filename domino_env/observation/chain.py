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

then the variant's own blocks (its :class:`~domino_env.observation.observer.Observer`).

Every block is kept once, in table order, in one *world* vector (each seat's hand, hand
size, voids and variant blocks side by side, the public blocks once), brought up to date
from the state's event list when anyone observes; a seat's row is then one numpy gather
through that seat's index table. A step costs a handful of scalar writes for the whole
table, however many seats look at it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from domino_env.core.line import CLOSED, OPEN
from domino_env.core.state import DEAL, DRAW, LAY, PASS, SCORE, State
from domino_env.observation.observer import Blocks, FloatRow, Observer
from domino_env.rules.chain import LineRules

_SLOT_FLAGS = 4  # open, closed, double at the end, live


def block_layout(sizes: Sequence[tuple[str, int]]) -> tuple[dict[str, slice], int]:
    """Blocks (name, size) laid end to end: name -> slice, and the total size."""
    layout: dict[str, slice] = {}
    start = 0
    for name, size in sizes:
        layout[name] = slice(start, start + size)
        start += size
    return layout, start


class ChainEncoder:
    """Keeps the world vector and gathers each seat's observation row from it."""

    def __init__(self, rules: LineRules, observer: Observer | None = None) -> None:
        self.rules, self.observer = rules, observer
        own_blocks = observer.blocks if observer is not None else ()
        ts = rules.tile_set
        n, values, slots = rules.num_players, ts.num_values, rules.num_slots
        tiles, sides, flags = ts.size, rules.num_sides, len(rules.phases)
        self.slot_width = values + _SLOT_FLAGS
        extra = sum(size for _, size in own_blocks)
        sizes = [
            ("hand", tiles),
            ("table", tiles),
            ("ends", slots * self.slot_width),
            ("hand_sizes", n - 1),
            ("boneyard", 1),
            ("voids", (n - 1) * values),
            ("scores", sides),
            ("phase", flags),
            *own_blocks,
        ]
        self.layout, self.size = block_layout(sizes)
        # The world vector's blocks, in absolute seat order.
        at = 0

        def block(size: int) -> int:
            nonlocal at
            at += size
            return at - size

        self._hand = block(n * tiles)  # each seat's known hand
        self._table = block(tiles)
        self._ends = block(slots * self.slot_width)
        self._sizes = block(n)  # each seat's hand size, then the boneyard
        self._stock = block(1)
        self._voids = block(n * values)
        self._scores = block(sides)
        self._phase = block(flags)  # the flags of the seat to move
        self._extra = block(n * extra)  # each seat's variant blocks (seat-relative, from the observer)
        zero = block(1)  # stays 0: an idle seat's phase flags
        self.world = np.zeros(at, dtype=np.float32)
        self._view: FloatRow = self.world.data  # item and slice writes cost a third of numpy's

        # A seat's row is world[index[seat]]: the seat to move and an idle seat differ in the flags.
        def index(seat: int, moving: bool) -> np.ndarray:
            others = [(seat + k) % n for k in range(1, n)]  # next seat first
            own = rules.side_of[seat]
            return np.array(
                [
                    *range(self._hand + seat * tiles, self._hand + (seat + 1) * tiles),
                    *range(self._table, self._table + tiles + slots * self.slot_width),  # table, ends
                    *(self._sizes + other for other in others),
                    self._stock,
                    *(self._voids + other * values + v for other in others for v in range(values)),
                    *(self._scores + (own + k) % sides for k in range(sides)),
                    *(range(self._phase, self._phase + flags) if moving else [zero] * flags),
                    *range(self._extra + seat * extra, self._extra + (seat + 1) * extra),
                ],
                dtype=np.intp,
            )

        self._moving_index = [index(seat, True) for seat in range(n)]
        self._idle_index = [index(seat, False) for seat in range(n)]
        # Each seat's variant blocks, as the observer writes them (None: no observer blocks).
        self._blocks: list[Blocks] | None = None
        if observer is not None and extra:
            self._write = observer.write
            self._blocks = []
            for seat in range(n):
                start = self._extra + seat * extra
                own = self._view[start : start + extra]
                self._blocks.append(
                    Blocks({name: own[part] for name, part in block_layout(own_blocks)[0].items()}, own)
                )
        self._hand_at = [self._hand + seat * tiles for seat in range(n)]
        self._voids_at = [self._voids + seat * values for seat in range(n)]
        # A hand changes only by a lay or a draw (or a deal), and voids only by a draw or a pass,
        # so the events keep those blocks; for rules that hide tiles from their holder
        # (``known_hands``) the hand blocks are compared instead.
        self._hides = type(rules).known_hands is not LineRules.known_hands
        self._serial = -1  # round the world was built for
        self._cursor = 0  # events already applied
        self._shown = [0] * n  # the tiles each hand block shows
        self._shown_voids = [0] * n  # the values each voids block shows
        self._no_flags = (False,) * flags
        self._flags = self._no_flags  # phase flags written in the world
        self._extra_cursor = [-1] * n  # the events each seat's variant blocks were written after
        self._suit = ts.suit_mask
        self._closed_code, self._unused_code = 4 * values, 4 * values + 1
        self._slot_keys = [self._unused_code] * slots  # each slot's features, coded as one int
        self._slot_table = np.zeros((4 * values + 2, self.slot_width), dtype=np.float32)
        for v in range(values):
            for double in (0, 1):
                for live in (0, 1):
                    features = self._slot_table[4 * v + 2 * double + live]
                    features[v] = 1.0
                    features[values:] = (1.0, 0.0, double, live)
        self._slot_table[self._closed_code, values + 1] = 1.0
        self._slot_views = [features.data for features in self._slot_table]
        # _slots_in_use[k]: (slot, where its features start) for the first k slots (the slots in use).
        slot_at = [(slot, self._ends + slot * self.slot_width) for slot in range(slots)]
        self._slots_in_use = [slot_at[:k] for k in range(slots + 1)]
        # value_bits[mask] is the row of V flags of a value bitmask (voids).
        value_bits = ((np.arange(1 << values)[:, None] >> np.arange(values)) & 1).astype(np.float32)
        self._value_views = [bits.data for bits in value_bits]
        self._size_scale = 1.0 / rules.hand_size
        self._stock_scale = 1.0 / ts.size
        self._score_scale = 1.0 / rules.match_target
        # A fresh deal's world before the hands: every player holds hand_size tiles, the rest is
        # the boneyard.
        blank = np.zeros(at, dtype=np.float32)
        blank[self._sizes : self._sizes + n] = rules.hand_size * self._size_scale
        blank[self._stock] = (tiles - n * rules.hand_size) * self._stock_scale
        self._blank = blank.data

    def __reduce__(self) -> tuple[type, tuple[LineRules, Observer | None]]:
        """Copied or pickled as a new encoder of the same rules: its memoryviews cannot be, and
        a fresh one rebuilds the world from the state at the next observation anyway."""
        return type(self), (self.rules, self.observer)

    def forget(self) -> None:
        """Drop the world (a new match restarts the round serials)."""
        self._serial = -1

    def observe(self, state: State, seat: int) -> np.ndarray:
        """The seat's current row (a new array)."""
        if self._serial != state.round_serial:
            self._rebuild(state)
        elif self._cursor < len(state.events):
            self._catch_up(state)
        if self._blocks is not None and self._extra_cursor[seat] != self._cursor:
            self._write(state, seat, self._blocks[seat])
            self._extra_cursor[seat] = self._cursor
        if state.current != seat:
            return self.world[self._idle_index[seat]]
        flags = self.rules.phase_flags(state)
        if flags != self._flags:
            view = self._view
            for i, flag in enumerate(flags, self._phase):
                view[i] = flag
            self._flags = flags
        return self.world[self._moving_index[seat]]

    def _rebuild(self, state: State) -> None:
        """Write the world for a new round: a fresh deal's, then the round's events replayed (the
        deal event writes the scores, the hands are written as known), cheaper than writing
        every block from state."""
        self._view[:] = self._blank
        self._flags = self._no_flags
        self._slot_keys = [self._unused_code] * len(self._slot_keys)
        self._shown = [0] * len(self._shown)
        self._shown_voids = [0] * len(self._shown)
        self._extra_cursor = [-1] * len(self._shown)
        self._serial = state.round_serial
        self._cursor = 0
        self._catch_up(state)

    def _catch_up(self, state: State) -> None:
        """Apply the events since the last write; a block read from state is written once."""
        laid = scores = False
        view, table, hand_at, sizes = self._view, self._table, self._hand_at, self._sizes
        hands, scale, follow = state.hands, self._size_scale, not self._hides
        voids, voids_at, width = state.voids, self._voids_at, self.rules.tile_set.num_values
        shown_voids = self._shown_voids
        events: Sequence[tuple[Any, ...]] = state.events  # any event, read by its kind
        for event in events[self._cursor :]:
            kind = event[0]
            if kind == LAY:
                laid = True
                seat, tile = event[1], event[2]
                view[table + tile] = 1.0
                if follow:
                    view[hand_at[seat] + tile] = 0.0
                view[sizes + seat] = hands[seat].bit_count() * scale
            elif kind == DRAW:
                seat, tile = event[1], event[2]
                if follow and tile >= 0:  # (a sampled world's draws may be hidden: its hands show them)
                    view[hand_at[seat] + tile] = 1.0
                view[sizes + seat] = hands[seat].bit_count() * scale
                view[self._stock] = len(state.stock) * self._stock_scale
                at = voids_at[seat]
                view[at : at + width] = self._value_views[voids[seat]]
                shown_voids[seat] = voids[seat]
            elif kind == PASS:
                seat = event[1]
                if voids[seat] != shown_voids[seat]:  # (Blind's passes, every turn, say nothing new)
                    at = voids_at[seat]
                    view[at : at + width] = self._value_views[voids[seat]]
                    shown_voids[seat] = voids[seat]
            elif kind == SCORE:
                scores = True
            elif kind == DEAL:  # the first event of a round: the world is a fresh deal's (see _rebuild)
                scores = any(state.scores)
                if follow:  # the hands as they are now: the later events replayed leave them so
                    self._show_hands(hands)
        if not follow:
            self._show_hands(self.rules.known_hands(state))
        if laid:  # rewrite the slots whose features changed (each coded as one int, see __init__)
            line = state.line
            status, value, double, unplayed = line.state, line.value, line.double_end, ~line.played
            suit, keys, width = self._suit, self._slot_keys, self.slot_width
            for slot, at in self._slots_in_use[line.used]:
                if status[slot] == OPEN:
                    v = value[slot]
                    code = 4 * v + 2 * double[slot] + (suit[v] & unplayed != 0)
                else:
                    code = self._closed_code if status[slot] == CLOSED else self._unused_code
                if code != keys[slot]:
                    keys[slot] = code
                    view[at : at + width] = self._slot_views[code]
        if scores:
            for k, points in enumerate(state.scores, self._scores):
                view[k] = points * self._score_scale
        self._cursor = len(state.events)

    def _show_hands(self, known: list[int]) -> None:
        """Rewrite the tiles of the hand blocks that differ from ``known`` (per seat)."""
        shown = self._shown
        if known == shown:
            return
        view = self._view
        for seat, at in enumerate(self._hand_at):
            changed = known[seat] ^ shown[seat]
            while changed:
                low = changed & -changed
                view[at + low.bit_length() - 1] = 1.0 if known[seat] & low else 0.0
                changed ^= low
        self._shown = known[:]
