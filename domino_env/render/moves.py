"""A move in words: one function for what ``describe_action`` says of an action, on any table.

The environments' error messages list the legal moves with it. (``training/play.py``'s
``move_text`` writes the same dicts for people at the keyboard in a longer form: the
messages' texts are part of the environments' behaviour and stay as they are.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domino_env.core.tiles import format_tile
from domino_env.render.grid import placement_text
from domino_env.rules.table import PLAY


def action_text(move: Mapping[str, Any]) -> str:
    """``3-4 on east end 4``, ``3-4 on lead``, ``6-6 on north end 6 face down``, ``stop``,
    ``arrange 0-6``; on a grid ``3-4 as 3 on (8,9), 4 on (8,10)``."""
    tile = move["tile"]
    if "cells" in move:  # the grid
        return f"{format_tile(tile)} as {placement_text(move['cells'], move['values'])}"
    if move["kind"] != PLAY:
        return str(move["kind"]) + ("" if tile is None else f" {format_tile(tile)}")
    where = "lead" if move["end_value"] is None else f"{move['arm']} end {move['end_value']}"
    face = " face down" if move["face_down"] else ""
    return f"{format_tile(tile)} on {where}{face}"
