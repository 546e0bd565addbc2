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


ALL_TILES = [(a, b) for a in range(7) for b in range(a, 7)]  # double-six, in id order


def deal(
    hands: Sequence[str | Sequence[str | Tile]], leader: int | None = 0, first: str | Sequence[str] = ()
) -> dict:
    """A fully fixed double-six deal: the hands, then the boneyard (``first`` drawn first, the
    rest in id order), so no randomness is left."""
    fixed = tiles(first)
    used = {t for hand in hands for t in tiles(hand)} | set(fixed)
    assert len(used) == sum(len(tiles(h)) for h in hands) + len(fixed), "a tile is dealt twice"
    out: dict = {
        "hands": [tiles(h) for h in hands],
        "boneyard": fixed + [t for t in ALL_TILES if t not in used],
    }
    if leader is not None:
        out["leader"] = leader
    return out
