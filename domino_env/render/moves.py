"""A move in words: the one function for what ``describe_action`` says of an action, on any table.

The environments' error messages list the legal moves with it, and terminal play and the
browser offer them with it, so a person reads the same words everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domino_env.core.tiles import format_tile
from domino_env.render.grid import placement_text
from domino_env.rules.table import PLAY


def move_text(move: Mapping[str, Any]) -> str:
    """``3-4 on east (end 4)``, ``3-4 lead``, ``6-6 on north (end 6) face down``, ``stop``,
    ``turn up``, ``arrange 0-6``; on a grid ``3-4: 3 on (8,9), 4 on (8,10), floor 2, +1``."""
    tile = "" if move["tile"] is None else format_tile(move["tile"])
    if "cells" in move:  # the grid
        where = placement_text(move["cells"], move["values"], move["level"])
        return f"{tile}: {where}" + (f", +{move['scores']}" if move["scores"] else "")
    if move["kind"] != PLAY:
        return f"{move['kind'].replace('_', ' ')} {tile}".strip()  # turn_up: "turn up"
    if move["arm"] == "lead":
        where = "lead"
    else:
        where = f"on {move['arm']}" + ("" if move["end_value"] is None else f" (end {move['end_value']})")
    return f"{tile} {where}" + (" face down" if move["face_down"] else "")
