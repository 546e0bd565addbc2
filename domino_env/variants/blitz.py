"""Blitz (docs/rules/blitz.md): Classic with any number of tiles a turn.

Double-six, 2-4 players (4 may play as partners: seats 0+2 against 1+3), 7 tiles each, the
rest is the boneyard; a linear line of play; scoring and match exactly as Classic (penalty
pips in hand to 101, lowest wins).

- **Opening.** First round: the holder of ``0-0`` leads it; if ``0-0`` was not dealt, the
  holder of the tile closest to it by pips (ties: the lower small half, so ``0-2`` before
  ``1-1``) leads that tile - unlike Classic, a double is not preferred. Later rounds as
  Classic: the previous winner leads any tile. The opening tile is a turn of its own.
- **A turn.** The player lays a tile on any open end, then may lay another (on any open
  end, the one just made too) or end the turn (action ``stop``), and so on. When nothing
  more fits, the turn ends by itself; laying the whole hand ends the round (domino).
- **Drawing** as Classic (option ``draw``, default True): only at the start of a turn with
  nothing to lay, one tile at a time until one fits (which must then be laid) or the
  boneyard is empty (pass). After the drawn tile is laid the player may go on from hand.
  ``draw=False`` gives a block game: a player who cannot lay passes.

Decisions (also in docs/rules/blitz.md): ``stop`` is offered only after at least one tile was laid
this turn (a player who can lay must lay, as in Classic); the greedy baseline keeps laying
while it can (``stop`` rates below every tile, so it lays its heaviest fitting tile each
time). Observation: the phase flag ``continuing`` (the seat to move has laid a tile this
turn and may ``stop``); ``public_state()["laid_this_turn"]`` counts the tiles laid so far in
the current turn.

The rules are Classic's with two parts declared: the opening (``FEWEST_PIPS_OPENS``) and the
multi-tile turn (``continues_turn``), plus the ``stop`` action and the ``continuing`` phase.

Version history:

- ``blitz_v0``: the first release (the rules as in docs/rules/blitz.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from domino_env.core.state import State
from domino_env.rules.chain import STOP
from domino_env.rules.parts import FEWEST_PIPS_OPENS, after_the_opening_tile
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import ExtraWords
from domino_env.variants.classic import ClassicRules


def laid_words(count: int, names: list[str]) -> str | None:
    """``public_state()["laid_this_turn"]`` in words (Blind's too), while there are any."""
    return f"tiles laid this turn: {count}" if count else None


class BlitzRules(ClassicRules):
    name = "blitz"
    batched_kernel = "chain"
    opens = FEWEST_PIPS_OPENS
    continues_turn = after_the_opening_tile
    extra_actions = (STOP,)
    phases = ("lead", "continuing")
    extra_words: ClassVar[Mapping[str, ExtraWords]] = {"laid_this_turn": laid_words}

    def public_extra(self, state: State) -> dict[str, Any]:
        return {"laid_this_turn": state.turn_laid}


SPECS = (
    VariantSpec(
        name="blitz",
        title="Blitz",
        shipped=True,
        rules=BlitzRules,
        table="chain",
        summary="Classic with any number of tiles a turn",
        option_help={"draw": "draw from the boneyard when stuck (False: pass instead)"},
        benchmark_tables=({"num_players": 2}, {"num_players": 4, "teams": True}),
        action_names={"stop": "end the turn"},
        presets={
            "tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "draw": False, "episode": "round"},
            "small": {"num_players": 2, "max_pip": 3, "hand_size": 3, "draw": False, "episode": "round"},
        },
    ),
)
