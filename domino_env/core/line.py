"""The line of play shared by every chain variant.

The layout is a fixed number of *slots* (arms). A slot is ``UNUSED`` until it becomes an
end, then ``OPEN`` (showing ``value``) or ``CLOSED`` (nothing more attaches there).
Variants differ only in how many slots exist and which rule opens them:

* a linear line (Classic, Blitz, ...) uses slots 0 (east) and 1 (west);
* a spinner line (All Fives, Osel, Cross) adds north (2) and south (3), opened by the
  first double either at once or once both its line sides hold a tile;
* a branching line (Domino-Metro) opens extra slots with :meth:`Line.open_end`.

Everything a rule asks ("which of my tiles fit?", "is this end live?") is a bitmask
operation on the tables of :class:`~domino_env.core.tiles.TileSet`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from domino_env.core.tiles import TileSet, iter_bits

UNUSED, OPEN, CLOSED = 0, 1, 2
EAST, WEST, NORTH, SOUTH = 0, 1, 2, 3
LEAD = 4  # ``spinner_slot`` of a spinner that is the lead tile (no arm holds it)
SPINNER_SLOT_NAMES = ("east", "west", "north", "south")


class Spinner(Enum):
    """When the first double becomes a spinner and opens its north and south arms."""

    NONE = "none"  # doubles are ordinary tiles
    AT_ONCE = "at_once"  # north and south open as soon as the spinner is on the table
    AFTER_SIDES = "after_sides"  # ... once both its east and west sides hold a tile


# Reading a member through the class goes through EnumType.__getattr__ (a call each time): the
# methods run at every tile compare with these names instead.
_NONE, _AT_ONCE, _AFTER_SIDES = Spinner.NONE, Spinner.AT_ONCE, Spinner.AFTER_SIDES


class _SlotMoves(dict[int, tuple[int, ...]]):
    """Tiles that fit one slot (a mask) -> their placements there, ``tile * num_slots + slot``.

    Filled as masks are met: they are the tiles of one suit in a hand, 2**num_values at most
    per suit. A lookup costs a third of walking the mask's bits at every placement query.
    """

    def __init__(self, num_slots: int, slot: int) -> None:
        super().__init__()
        self.num_slots, self.slot = num_slots, slot

    def __missing__(self, fits: int) -> tuple[int, ...]:
        moves = self[fits] = tuple(tile * self.num_slots + self.slot for tile in iter_bits(fits))
        return moves


# Per number of slots (the move tables hold tile ids, whatever the set), shared by its lines: the
# slot numbers, (slot, its moves) and firsts[k], the first k slot numbers (the slots in use:
# ``used``). Loops go over these stored sequences: building a range at every call costs more
# than the loop.
_LAYOUTS: dict[int, tuple[range, list[tuple[int, _SlotMoves]], list[range]]] = {}
_MOST_SLOTS = 64
# A line's attributes that are caches: shared per layout, or worked out again on demand.
_CACHES = frozenset({"slots", "slot_moves", "firsts", "playable"})


class Line:
    """Open ends, arms and the tiles on the table for one round."""

    __slots__ = (
        "arms",
        "count",
        "double_end",
        "firsts",
        "lead_tile",
        "length",
        "num_slots",
        "playable",
        "played",
        "slot_moves",
        "slots",
        "spinner_depth",
        "spinner_rule",
        "spinner_slot",
        "state",
        "tiles",
        "used",
        "value",
    )

    def __init__(self, tiles: TileSet, num_slots: int = 2, spinner: Spinner = Spinner.NONE) -> None:
        if spinner is not Spinner.NONE and num_slots < 4:
            raise ValueError("a spinner line needs 4 slots (east, west, north, south)")
        self.tiles = tiles
        self.num_slots = num_slots
        self.spinner_rule = spinner
        self._share_layout()
        self.reset()

    def _share_layout(self) -> None:
        """Point at the layout's shared slot numbers and move tables (built on first use)."""
        n = self.num_slots
        if not 1 <= n <= _MOST_SLOTS:  # (a saved game names its size: a bound, not a huge one)
            raise ValueError(f"a line has 1 to {_MOST_SLOTS} slots, got {n}")
        if n not in _LAYOUTS:
            slots = range(n)
            moves = [(slot, _SlotMoves(n, slot)) for slot in slots]
            _LAYOUTS[n] = (slots, moves, [range(k) for k in range(n + 1)])
        self.slots, self.slot_moves, self.firsts = _LAYOUTS[n]

    def reset(self) -> None:
        n = self.num_slots
        self.value = [-1] * n
        self.state = [UNUSED] * n
        self.length = [0] * n  # tiles laid on the arm beyond the lead
        self.double_end = [False] * n  # the outermost tile of the arm is a double
        self.arms: list[list[tuple[int, int]]] = [[] for _ in self.slots]  # (inner, outer) halves
        self.played = 0  # bitmask of tiles on the table
        self.count = 0  # number of tiles on the table
        self.lead_tile = -1
        self.spinner_slot = -1  # -1: no spinner yet; EAST/WEST: late spinner on that arm; LEAD: the lead
        self.spinner_depth = 0
        self.used = 0  # slots ever opened this round: they open in order, so 0 .. used-1
        self.playable = -1  # playable_mask() while the ends stay as they are; -1: to work out

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """Pickle the round, not the caches (checkpoints hold games in progress and load with
        torch's weights-only unpickler, which builds no dict subclass such as the move tables)."""
        return None, {name: getattr(self, name) for name in self.__slots__ if name not in _CACHES}

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        """Unpickle: the round as pickled, the caches shared or worked out again (a line
        pickled with its caches, before :meth:`__getstate__`, drops them)."""
        for name, value in state[1].items():
            if name not in _CACHES:
                setattr(self, name, value)
        self._share_layout()
        self.playable = -1

    def clone(self) -> Line:
        other = Line.__new__(Line)
        other.tiles = self.tiles
        other.num_slots = self.num_slots
        other.spinner_rule = self.spinner_rule
        other.slots, other.slot_moves, other.firsts = self.slots, self.slot_moves, self.firsts
        other.value = self.value[:]
        other.state = self.state[:]
        other.length = self.length[:]
        other.double_end = self.double_end[:]
        other.arms = [arm[:] for arm in self.arms]
        other.played = self.played
        other.count = self.count
        other.lead_tile = self.lead_tile
        other.spinner_slot = self.spinner_slot
        other.spinner_depth = self.spinner_depth
        other.used = self.used
        other.playable = self.playable
        return other

    def _key(self) -> tuple[Any, ...]:
        return (
            self.tiles,
            self.num_slots,
            self.spinner_rule,
            self.value,
            self.state,
            self.length,
            self.double_end,
            self.arms,
            self.played,
            self.lead_tile,
            self.spinner_slot,
            self.spinner_depth,
            self.used,
        )

    def __eq__(self, other: object) -> bool:
        """Equal lines show the same table (seat views compare them)."""
        return isinstance(other, Line) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    # --- queries -------------------------------------------------------------------------

    @property
    def empty(self) -> bool:
        return self.count == 0

    @property
    def has_spinner(self) -> bool:
        return self.spinner_slot >= 0

    def spinner_value(self) -> int:
        """The value of the spinner double (-1: no spinner yet): the lead, or the double at
        ``spinner_depth`` on its arm."""
        if self.spinner_slot < 0:
            return -1
        if self.spinner_slot == LEAD:
            return self.tiles.tiles[self.lead_tile][0]
        return self.arms[self.spinner_slot][self.spinner_depth - 1][1]

    def open_slots(self) -> list[int]:
        return [s for s in self.slots if self.state[s] == OPEN]

    def open_values_mask(self) -> int:
        """Bitmask over values (bit v) of the values shown by open ends."""
        mask = 0
        state, value = self.state, self.value
        for s in self.firsts[self.used]:  # slots open in order: the others are unused
            if state[s] == OPEN:
                mask |= 1 << value[s]
        return mask

    def playable_mask(self) -> int:
        """Tiles (bitmask) that fit at least one open end; kept until the ends change (Blind asks
        at every tile turned up)."""
        if self.playable >= 0:
            return self.playable
        suit, state, value = self.tiles.suit_mask, self.state, self.value
        mask = 0
        for s in self.firsts[self.used]:  # slots open in order: the others are unused
            if state[s] == OPEN:
                mask |= suit[value[s]]
        self.playable = mask
        return mask

    def is_live(self, slot: int) -> bool:
        """An open end is live while some tile carrying its value is off the table."""
        return self.state[slot] == OPEN and bool(self.tiles.suit_mask[self.value[slot]] & ~self.played)

    def live_slots(self) -> list[int]:
        return [s for s in self.slots if self.is_live(s)]

    def placements(self, hand: int) -> list[int]:
        """Every placement of a hand's tile at an open end, as ``tile * num_slots + slot`` (a
        chain game's face-up play action ids); in slot order, then tile order."""
        suit, state, value = self.tiles.suit_mask, self.state, self.value
        moves: list[int] = []
        for s, moves_at in self.slot_moves:
            if state[s] == OPEN:
                fits = hand & suit[value[s]]
                if fits:
                    moves += moves_at[fits]
        return moves

    # --- changes -------------------------------------------------------------------------

    def lead(self, tile: int) -> None:
        """Lay the first tile: its halves become the east and west ends."""
        a, b = self.tiles.tiles[tile]
        double = a == b
        self.value[EAST], self.value[WEST] = b, a
        self.state[EAST] = self.state[WEST] = OPEN
        self.double_end[EAST] = self.double_end[WEST] = double
        self.used = 2
        self.played |= 1 << tile
        self.count = 1
        self.playable = -1
        self.lead_tile = tile
        if double and self.spinner_rule is not _NONE:
            self.spinner_slot = LEAD
            if self.spinner_rule is _AT_ONCE:
                self._open_spinner_arms(a)

    def attach(self, tile: int, slot: int) -> int:
        """Attach ``tile`` at the open end ``slot``; return the value it was laid on."""
        inner = self.value[slot]
        outer = self.tiles.other_half[tile][inner]
        double = inner == outer
        self.value[slot] = outer
        self.length[slot] += 1
        self.double_end[slot] = double
        self.arms[slot].append((inner, outer))
        self.played |= 1 << tile
        self.count += 1
        self.playable = -1
        rule = self.spinner_rule
        if rule is not _NONE:
            if double and self.spinner_slot < 0 and slot <= WEST:
                self.spinner_slot = slot
                self.spinner_depth = self.length[slot]
                if rule is _AT_ONCE:
                    self._open_spinner_arms(outer)
            elif (
                rule is _AFTER_SIDES
                and self.state[NORTH] == UNUSED
                and self.spinner_slot >= 0
                and self._spinner_sides_filled()
            ):
                self._open_spinner_arms(self.spinner_value())
        return inner

    def close(self, slot: int) -> None:
        """Close an end for good (a face-down double, a terminal tile)."""
        self.state[slot] = CLOSED
        self.playable = -1

    def open_end(self, value: int) -> int:
        """Open a new end showing ``value`` in the first unused slot; return that slot."""
        for s in self.slots:
            if self.state[s] == UNUSED:
                self.value[s] = value
                self.state[s] = OPEN
                self.double_end[s] = False
                self.used = max(self.used, s + 1)
                self.playable = -1
                return s
        raise RuntimeError("no unused slot left for a new end")

    # --- spinner -------------------------------------------------------------------------

    def _spinner_sides_filled(self) -> bool:
        if self.spinner_slot == LEAD:
            return self.length[EAST] > 0 and self.length[WEST] > 0
        return self.length[self.spinner_slot] > self.spinner_depth

    def _open_spinner_arms(self, value: int) -> None:
        for s in (NORTH, SOUTH):
            self.value[s] = value
            self.state[s] = OPEN
            self.double_end[s] = True  # an empty spinner arm "ends" at the spinner itself
        self.used = 4
        self.playable = -1
