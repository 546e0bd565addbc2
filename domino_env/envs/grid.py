"""3D dominoes as a PettingZoo AEC environment: :class:`~domino_env.envs.base.DominoEnv` on a grid.

The generic environment does the RL interface (spaces, masks, rewards, episodes); this
subclass says what an action means on the grid, what the table shows, and draws it: in words
(``render_mode="ansi"``, ``"human"``) and as a picture (``render_mode="rgb_array"``,
:meth:`table_image`; drawn by :mod:`domino_env.render.grid`): the board seen from above in the
frame the chain tables' pictures have too (each seat's points, the bazaar, the last events or
who won, and a row per seat with its name, the seat to move marked, and its hand face up), one
size for a table all game (larger boards shrink the cells; a 64 board widens the frame).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from domino_env.envs.base import DominoEnv
from domino_env.observation.grid import GridEncoder
from domino_env.render import grid as grid_render
from domino_env.render.frame import Sight
from domino_env.rules.grid import GridRules


class Domino3DEnv(DominoEnv[GridRules]):
    """3D dominoes; options as :class:`DominoEnv`."""

    encoder_class = GridEncoder
    renderer = grid_render

    def _read_options(self, options: Mapping[str, Any] | None) -> list[Any]:
        deals = super()._read_options(options)
        if len(deals) > 1:
            raise ValueError(
                f"domino3d is a single game (no rounds): options['deals'] lists {len(deals)} deals; "
                "give one (or options['deal'])"
            )
        return deals

    def _describe(self, action: int) -> dict[str, Any]:
        """``tile``, ``cells`` ((r1, c1), (r2, c2)), ``values`` laid on them, ``level`` it would
        lie on (None: off the board or uneven) and ``scores`` (points it earns; None where the
        rules forbid it whoever holds the tile)."""
        return self.rules.describe(self.game, action)

    def _public_state(self, game: Any) -> dict[str, Any]:
        """(``hands`` with ``open_hands``.)"""
        rules = self.rules
        grid = game.grid
        state: dict[str, Any] = {
            "variant": rules.name,
            "round": 0,
            "leader": game.leader,
            "current_player": game.current,
            "scores": list(game.scores),
            "heights": grid.rows(grid.height),
            "top_values": [[v if v >= 0 else None for v in row] for row in grid.rows(grid.value)],
            "table": [rules.tile_set.tiles[rules.kind_of[tile]] for *_, tile in grid.placed],
            "hand_sizes": [game.hand_size(s) for s in range(rules.num_players)],
            "boneyard_size": len(game.stock),
            "round_over": game.round_over,
            "match_over": game.match_over,
        }
        if rules.open_hands:
            state["hands"] = [rules.kinds_in(hand) for hand in game.hands]
        return state

    def _render_rgb(self, names: list[str], sight: Sight | None) -> np.ndarray:
        """The board in the frame every table shares: points, bazaar, last events, hands."""
        return grid_render.render_rgb(self.rules, self.game, names, sight)
