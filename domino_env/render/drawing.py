"""Drawing primitives the table pictures share (3D dominoes' board, the chain tables): colours,
pip patterns, tile faces and tile backs, so every picture draws a domino alike, and text.

Pictures are (H, W, 3) uint8 numpy arrays. A tile is a *sprite* made once per kind, size,
orientation and shade (cached) and copied into the picture, clipped at its edges: a frame of
a hundred tiles costs a hundred slice copies. Text is Pillow's default font, each string
rendered once to a coverage mask (cached) and blended in, so a frame never goes through a
Pillow image.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FELT = (22, 96, 62)
IVORY = np.array((250, 244, 226), dtype=np.float32)
EDGE = (60, 52, 44)  # the border around each tile
DIVIDER = (150, 140, 125)
PIP = (28, 24, 22)
BACK = (120, 32, 38)  # the back of a face-down tile
BACK_MARK = (196, 150, 92)  # the ring and line on a tile's back

# Pip centres in a half of a tile standing upright, as fractions of its height and width (a
# lying tile turns them, so the six's rows run along the tile); 7 to 9 for double-nine sets.
PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    0: (),
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.25, 0.75), (0.75, 0.25), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (0.75, 0.75)),
    6: ((0.25, 0.25), (0.5, 0.25), (0.75, 0.25), (0.25, 0.75), (0.5, 0.75), (0.75, 0.75)),
    7: ((0.25, 0.25), (0.5, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.5, 0.75), (0.75, 0.75)),
    8: tuple((fy, fx) for fy in (0.25, 0.5, 0.75) for fx in (0.25, 0.5, 0.75) if (fy, fx) != (0.5, 0.5)),
    9: tuple((fy, fx) for fy in (0.25, 0.5, 0.75) for fx in (0.25, 0.5, 0.75)),
}


def _outline(half: int, vertical: bool, fill: tuple[int, int, int] | np.ndarray) -> np.ndarray:
    """A tile's rectangle (two ``half`` squares), its border in EDGE and ``fill`` inside."""
    height, width = (2 * half, half) if vertical else (half, 2 * half)
    inset = max(1, half // 12)
    sprite = np.empty((height, width, 3), dtype=np.uint8)
    sprite[:] = EDGE
    sprite[inset : height - inset, inset : width - inset] = fill
    return sprite


@lru_cache(maxsize=4096)
def tile_sprite(values: tuple[int, int], half: int, vertical: bool, shade: float = 1.0) -> np.ndarray:
    """A face-up tile, ``values`` on its top (upright) or left (lying) half first; the ivory
    darkened by ``shade`` (1: none); read-only, shared by every picture."""
    sprite = _outline(half, vertical, (IVORY * shade).astype(np.uint8))
    margin = max(2, half // 8)
    if vertical:  # the line between the halves
        sprite[half - 1 : half + 1, margin : half - margin] = DIVIDER
    else:
        sprite[margin : half - margin, half - 1 : half + 1] = DIVIDER
    radius = max(1.0, half / 10)
    yy, xx = np.mgrid[0:half, 0:half]
    for k, value in enumerate(values):
        part = sprite[k * half : (k + 1) * half] if vertical else sprite[:, k * half : (k + 1) * half]
        for fy, fx in PIPS[value]:
            if not vertical:
                fy, fx = fx, fy
            dot = (yy - fy * (half - 1)) ** 2 + (xx - fx * (half - 1)) ** 2 <= radius * radius
            part[dot] = PIP
    sprite.setflags(write=False)
    return sprite


@lru_cache(maxsize=256)
def back_sprite(half: int, vertical: bool) -> np.ndarray:
    """A face-down tile: a dark back with a light frame inside its border and a dot in the middle."""
    sprite = _outline(half, vertical, BACK)
    height, width = sprite.shape[:2]
    frame, thick = max(2, half // 5), max(1, half // 14)
    sprite[frame : height - frame, frame : width - frame] = BACK_MARK
    sprite[frame + thick : height - frame - thick, frame + thick : width - frame - thick] = BACK
    yy, xx = np.mgrid[0:height, 0:width]
    sprite[np.hypot(yy - (height - 1) / 2, xx - (width - 1) / 2) <= max(1.0, half / 8)] = BACK_MARK
    sprite.setflags(write=False)
    return sprite


def blit(image: np.ndarray, sprite: np.ndarray, top: int, left: int) -> None:
    """Copy ``sprite`` into ``image`` with its top-left corner at (top, left), clipped to the image."""
    height, width = sprite.shape[:2]
    y0, x0 = max(top, 0), max(left, 0)
    y1, x1 = min(top + height, image.shape[0]), min(left + width, image.shape[1])
    if y0 < y1 and x0 < x1:
        image[y0:y1, x0:x1] = sprite[y0 - top : y1 - top, x0 - left : x1 - left]


def draw_tile(
    image: np.ndarray,
    top: int,
    left: int,
    half: int,
    values: tuple[int, int],
    vertical: bool,
    shade: float = 1.0,
) -> None:
    """A face-up tile of two ``half``-pixel squares at (top, left): see :func:`tile_sprite`."""
    blit(image, tile_sprite(values, half, vertical, shade), top, left)


def draw_back(image: np.ndarray, top: int, left: int, half: int, vertical: bool) -> None:
    """A face-down tile of two ``half``-pixel squares at (top, left)."""
    blit(image, back_sprite(half, vertical), top, left)


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's default font at ``size`` pixels (its bitmap font where Pillow lacks FreeType)."""
    return ImageFont.load_default(size)


def text_width(text: str, size: int) -> int:
    return int(font(size).getlength(text))


def fitted(text: str, size: int, width: int) -> str:
    """``text``, cut with an ellipsis to ``width`` pixels."""
    if text_width(text, size) <= width:
        return text
    while text and text_width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


@lru_cache(maxsize=2048)
def text_mask(text: str, size: int) -> np.ndarray:
    """How much of each pixel ``text`` covers (0 to 1, shape (H, W, 1)), its top-left corner
    where :func:`draw_text` puts it."""
    _, _, right, bottom = font(size).getbbox(text)
    canvas = Image.new("L", (max(int(right), 1), max(int(bottom), 1)))
    ImageDraw.Draw(canvas).text((0, 0), text, font=font(size), fill=255)
    mask = np.asarray(canvas, dtype=np.float32)[..., None] / 255
    mask.setflags(write=False)
    return mask


def draw_text(image: np.ndarray, x: int, y: int, text: str, size: int, colour: tuple[int, int, int]) -> None:
    """``text`` in ``colour`` with its top-left corner at (x, y), clipped to the image."""
    mask = text_mask(text, size)
    height, width = mask.shape[:2]
    y1, x1 = min(y + height, image.shape[0]), min(x + width, image.shape[1])
    if y1 <= y or x1 <= x:
        return
    cover = mask[: y1 - y, : x1 - x]
    region = image[y:y1, x:x1]
    region[:] = region * (1 - cover) + np.asarray(colour, dtype=np.float32) * cover
