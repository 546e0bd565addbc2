"""A line-of-play game as a PettingZoo AEC environment: :class:`~domino_env.envs.base.DominoEnv`
for the chain rules (moves are (tile, arm), the table is the line of play).

It draws the table in words (``render_mode="ansi"``, ``"human"``: every hand, the last events)
and as a picture (``render_mode="rgb_array"``, :meth:`table_image`; drawn by
:mod:`domino_env.render.chain_image`): an 800x600 frame at every table and position, with
the scores and the boneyard, the line of play laid out on the felt as a person lays it (a
snake turning before the table's edge, doubles across the line, a spinner's four arms,
Metro's branches, face-down doubles as backs, closed ends capped), the last events, and a row
per seat with its name, tile count, score and hand face up (the blind games: each row as the
table shows it, face down where nobody can name a tile, the seat to move's own knowledge
added)."""

from __future__ import annotations

from typing import Any

import numpy as np

from domino_env.core.line import OPEN
from domino_env.envs.base import DominoEnv
from domino_env.observation.chain import ChainEncoder
from domino_env.render import chain as chain_render
from domino_env.render import chain_image
from domino_env.render.frame import Sight
from domino_env.rules.chain import LineRules
from domino_env.rules.table import PLAY


class ChainEnv(DominoEnv[LineRules]):
    """A line-of-play game: moves are (tile, arm), the table is the line of play."""

    encoder_class = ChainEncoder
    renderer = chain_render

    def _describe(self, action: int) -> dict[str, Any]:
        """Kind, tile, arm, the end value it lands on, face down."""
        rules, a = self.rules, action
        kind = rules.action_kind[a]
        if kind != PLAY:
            return {
                "action": a,
                "kind": kind,
                "tile": rules.tile_set.tiles[rules.action_tile[a]] if rules.action_tile[a] >= 0 else None,
                "arm": None,
                "end_value": None,
                "face_down": False,
            }
        slot = rules.action_slot[a]
        if self.game is None or self.game.line.empty:
            leading, end_value = True, None
        else:
            line = self.game.line
            leading, end_value = False, line.value[slot] if line.state[slot] == OPEN else None
        return {
            "action": a,
            "kind": PLAY,
            "tile": rules.tile_set.tiles[rules.action_tile[a]],
            "arm": "lead" if leading else rules.slot_names[slot],
            "end_value": end_value,
            "face_down": rules.action_face_down[a],
        }

    def _render_rgb(self, names: list[str], sight: Sight | None) -> np.ndarray:
        return chain_image.render_rgb(self.rules, self.game, names, sight)

    def _public_state(self, game: Any) -> dict[str, Any]:
        rules = self.rules
        line = game.line
        return {
            "variant": rules.name,
            "round": game.round_index,
            "leader": game.leader,
            "current_player": game.current,
            "scores": [game.scores[rules.side_of[s]] for s in range(rules.num_players)],
            "ends": [line.value[s] for s in line.open_slots()],
            "open_ends": {rules.slot_names[s]: line.value[s] for s in line.open_slots()},
            "table": [rules.tile_set.tiles[t] for t in range(rules.tile_set.size) if line.played >> t & 1],
            "hand_sizes": [game.hand_size(s) for s in range(rules.num_players)],
            "boneyard_size": len(game.stock),
            "spinner": (spinner, spinner) if (spinner := line.spinner_value()) >= 0 else None,
            "round_over": game.round_over,
            "match_over": game.match_over,
            **rules.public_extra(game),
        }
