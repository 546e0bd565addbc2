"""Tile sets, canonical tile ids and the bitmask tables every rule lookup uses.

A hand, the table or any other set of tiles is a Python ``int`` used as a bitmask
(bit ``t`` set = tile id ``t`` present): union, intersection and "which of my tiles
carry value v" are single integer operations, so no rule ever scans a list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache

import numpy as np

Tile = tuple[int, int]
TileLike = Tile | list[int] | str

LARGEST_SET = 18  # double-18, the largest set made (the rules play up to double-9)
_TILE_TEXT = re.compile(r"^\s*(\d+)\s*[-|:]\s*(\d+)\s*$")


class TileSet:
    """A double-N set: every unordered pair ``a-b`` with ``0 <= a <= b <= N``.

    Tile ids follow the rule book (docs/rules/index.md): tiles sorted by ``(a, b)`` and numbered from 0.
    """

    def __init__(self, max_pip: int) -> None:
        if not 1 <= max_pip <= LARGEST_SET:  # (a saved game names its set: a bound, not a huge one)
            raise ValueError(f"max_pip must be 1 to {LARGEST_SET} (a double-N set), got {max_pip}")
        self.max_pip = max_pip
        self.num_values = max_pip + 1
        self.tiles: list[Tile] = [(a, b) for a in range(max_pip + 1) for b in range(a, max_pip + 1)]
        self.size = len(self.tiles)
        self.ids: dict[Tile, int] = {tile: i for i, tile in enumerate(self.tiles)}
        self.pips: list[int] = [a + b for a, b in self.tiles]
        self.is_double: list[bool] = [a == b for a, b in self.tiles]
        self.all_mask = (1 << self.size) - 1
        self.bit: list[int] = [1 << t for t in range(self.size)]  # bit[t]: the mask of tile t alone
        # suit_mask[v]: the tiles carrying value v.
        self.suit_mask: list[int] = [
            sum(1 << i for i, (a, b) in enumerate(self.tiles) if v in (a, b)) for v in range(self.num_values)
        ]
        self.doubles_mask = sum(1 << i for i, (a, b) in enumerate(self.tiles) if a == b)
        # other_half[t][v]: the value left open when tile t is attached at an end showing v.
        self.other_half: list[dict[int, int]] = [{a: b, b: a} for a, b in self.tiles]
        # _byte_pips[k][byte]: pips of the tiles 8k..8k+7 selected by that byte of a mask.
        self._byte_pips = [
            [
                sum(self.pips[8 * k + i] for i in range(8) if byte >> i & 1 and 8 * k + i < self.size)
                for byte in range(256)
            ]
            for k in range((self.size + 7) // 8)
        ]

    def __reduce__(self) -> tuple[type[TileSet], tuple[int]]:
        """Pickled as its size, not its tables (a checkpoint's games in progress all name it)."""
        return TileSet, (self.max_pip,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TileSet) and other.max_pip == self.max_pip  # (a set is its size)

    def __hash__(self) -> int:
        return hash((TileSet, self.max_pip))

    def __copy__(self) -> TileSet:
        return self  # (never changed once built: copies share it, as rules and lines do)

    def __deepcopy__(self, memo: dict[int, object]) -> TileSet:
        return self

    def id_of(self, tile: TileLike) -> int:
        """Canonical id of a tile written ``(a, b)``, ``[a, b]`` or ``"a-b"`` (either order)."""
        a, b = parse_tile(tile)
        key = (min(a, b), max(a, b))
        if key not in self.ids:
            raise ValueError(
                f"unknown tile {format_tile(key)}: a double-{self.max_pip} set has values 0..{self.max_pip}"
            )
        return self.ids[key]

    def mask_pips(self, mask: int) -> int:
        """Total pips of the tiles in a bitmask (a table lookup per byte)."""
        total = 0
        for table in self._byte_pips:
            total += table[mask & 255]
            mask >>= 8
        return total

    def names(self, mask: int) -> list[str]:
        return [format_tile(self.tiles[t]) for t in iter_bits(mask)]


def parse_tile(tile: TileLike) -> Tile:
    """Read ``(a, b)``, ``[a, b]`` or ``"a-b"`` into a pair of ints; raise ValueError otherwise."""
    if isinstance(tile, str):
        match = _TILE_TEXT.match(tile)
        if not match:
            raise ValueError(f"cannot read tile {tile!r}: write it as 'a-b' or (a, b)")
        return int(match.group(1)), int(match.group(2))
    if (
        isinstance(tile, (tuple, list))
        and len(tile) == 2
        and all(isinstance(half, (int, np.integer)) and not isinstance(half, bool) for half in tile)
    ):
        return int(tile[0]), int(tile[1])
    raise ValueError(f"cannot read tile {tile!r}: write it as 'a-b' or (a, b)")


def format_tile(tile: Tile) -> str:
    return f"{tile[0]}-{tile[1]}"


def iter_bits(mask: int) -> Iterator[int]:
    """Indices of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_of(ids: Iterable[int]) -> int:
    mask = 0
    for t in ids:
        mask |= 1 << t
    return mask


@cache
def tile_set_of(max_pip: int) -> TileSet:
    """The double-``max_pip`` set, built once (rules of every table of that size share it)."""
    return TileSet(max_pip)


DOUBLE_SIX = tile_set_of(6)
DOUBLE_NINE = tile_set_of(9)
