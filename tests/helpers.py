"""Tile notation shared by the scenario tests: ``"3-5"``, ``(5, 3)`` or ``"0-0 3-5 6-6"``."""

from collections.abc import Sequence

Tile = tuple[int, int]


def tile(t: str | Tile) -> Tile:
    """``"a-b"`` or ``(a, b)`` in either order -> ``(min, max)``."""
    a, b = (int(x) for x in t.split("-")) if isinstance(t, str) else t
    return (min(a, b), max(a, b))


def tiles(names: str | Sequence[str | Tile]) -> list[Tile]:
    """A space-separated string or a sequence of tiles -> canonical pairs."""
    return [tile(t) for t in (names.split() if isinstance(names, str) else names)]


def pips(names: str | Sequence[str | Tile]) -> int:
    return sum(a + b for a, b in tiles(names))
