"""Classic dominoes (docs/rules/classic.md): the draw game, or block dominoes with ``draw=False``.

Double-six, 2-4 players (4 may play as partners: seats 0+2 against 1+3), 7 tiles each. A
linear line of play (doubles keep one value), one tile a turn. A player who cannot play
draws until a tile fits (``draw=False``: passes). The round ends when a player goes out or
nobody can move; everyone but the round's winner (and partner) adds the pips left in hand
to a penalty score, and the match ends when a player or team reaches 101: lowest wins.

First round: the lowest double leads (no double dealt: the lowest-pip tile). Later rounds:
the previous winner leads any tile; after a blocked win by a team, the partner with fewer
pips; after a blocked tie, the seat after that round's leader.

Version history:

- ``classic_v0``: the first release (the rules as in docs/rules/classic.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from domino_env.rules.chain import ChainOptions, ChainRules
from domino_env.rules.parts import LOWEST_DOUBLE_OPENS
from domino_env.rules.spec import VariantSpec


@dataclass(frozen=True)
class ClassicOptions(ChainOptions):
    """Classic's own option: drawing from the boneyard."""

    draw: bool = True  # False: block dominoes

    def check(self, name: str) -> None:
        if not isinstance(self.draw, (bool, np.bool_)):
            raise ValueError(f"{name}: draw must be True or False, got {self.draw!r}")


class ClassicRules(ChainRules):
    name = "classic"
    opens = LOWEST_DOUBLE_OPENS
    batched_kernel = "chain"
    options_type: ClassVar[type[ClassicOptions]] = ClassicOptions
    options: ClassicOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.draws = bool(self.options.draw)

    score_round = ChainRules.penalties_round


SPECS = (
    VariantSpec(
        name="classic",
        title="Classic",
        shipped=True,
        rules=ClassicRules,
        table="chain",
        summary="the draw game (or block dominoes): first out wins, penalty pips in hand to 101",
        option_help={"draw": "draw from the boneyard when stuck (False: block dominoes, pass instead)"},
        benchmark_tables=({"num_players": 2}, {"num_players": 4, "teams": True}),
        presets={
            "tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "draw": False, "episode": "round"},
            "small": {"num_players": 2, "max_pip": 3, "hand_size": 3, "draw": False, "episode": "round"},
            "medium": {"num_players": 2, "max_pip": 3, "hand_size": 3, "draw": True, "episode": "round"},
        },
    ),
)
