"""Cross (docs/rules/cross.md): four arms from the 6-6, each started by force.

Four players (seats 0+2 against 1+3 with ``teams=True``), 7 tiles each: all 28 tiles are
dealt, there is no boneyard. Scoring and match exactly as Classic (penalty pips in hand to
101, lowest wins).

- **Opening.** Every round the holder of ``6-6`` leads it (a turn of its own). It is the
  spinner: east, west, north and south are open at once, each showing 6.
- **Starting the arms.** While an arm is unstarted (no tile beyond the spinner), a player
  who can start an arm must start one: laying on an arm that already holds tiles is then
  illegal. A player who cannot start any arm plays on the started arms as usual.
- Otherwise as Classic: one tile a turn on any matching open end; a player who cannot play
  passes. The round ends when a player goes out (domino) or nobody can play (blocked: the
  fewest pips in hand wins, a team counting both hands; a tie has no winner).

Decisions (also in docs/rules/cross.md): the must-start rule is general, "an open arm with no
tile yet" (a fixed deal may name another opening tile; the first double then becomes the
spinner and its north/south arms are the unstarted ones). ``RoundResult.next_leader`` is -1:
the next round is led by whoever is dealt ``6-6``. Observation block ``arm_started`` (one
flag per arm: it holds a tile beyond the lead); ``public_state()["unstarted_arms"]`` lists
the open arms that hold no tile yet. Greedy baseline: the heaviest legal tile.

Version history:

- ``cross_v0``: the first release (the rules as in docs/rules/cross.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from domino_env.core.line import OPEN, Spinner
from domino_env.core.state import State
from domino_env.core.tiles import TileSet, tile_set_of
from domino_env.observation.observer import Blocks, Observer
from domino_env.rules.chain import MAX_PIPS
from domino_env.rules.parts import Opening, next_deal_decides
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import ExtraWords
from domino_env.variants.classic import ClassicOptions, ClassicRules


@dataclass(frozen=True)
class CrossOptions(ClassicOptions):
    """Four players by default; ``draw`` is not an option (every tile is dealt)."""

    num_players: int = 4
    draw: bool = field(default=False, init=False)  # every tile is dealt: nothing to draw


def highest_double(tile_set: TileSet) -> list[int]:
    """The highest double (6-6 in the double-six set), dealt every round: every tile is."""
    top = tile_set.max_pip
    return [tile_set.id_of((top, top))]


class CrossRules(ClassicRules):
    name = "cross"
    batched_kernel = "chain"
    opens = Opening("the highest double, which starts the cross", highest_double, every_round=True)
    leads_next = next_deal_decides
    player_counts = (4,)
    num_slots = 4
    spinner = Spinner.AT_ONCE
    extra_words: ClassVar[Mapping[str, ExtraWords]] = {
        "unstarted_arms": lambda arms, _: (
            f"arms not started yet (a player who can start one must): {', '.join(arms)}" if arms else None
        )
    }

    options_type: ClassVar[type[CrossOptions]] = CrossOptions
    options: CrossOptions

    def default_hand_size(self) -> int:
        return self.tile_set.size // self.num_players

    def check_table(self) -> None:
        size, n = self.tile_set.size, self.num_players
        if size % n:
            fits = [f"double-{m}" for m in MAX_PIPS if tile_set_of(m).size % n == 0]
            raise ValueError(
                f"cross deals every tile to the {n} players: the {size} tiles of a "
                f"double-{self.tile_set.max_pip} set cannot be shared out; sets that can: {', '.join(fits)}"
            )
        if self.hand_size * n != size:
            raise ValueError(
                f"cross deals every tile: {n} players share the {size} tiles of a "
                f"double-{self.tile_set.max_pip} set, so hand_size must be {size // n}, got {self.hand_size}"
            )

    placements = ClassicRules.arms_first

    def public_extra(self, state: State) -> dict[str, Any]:
        line = state.line
        return {
            "unstarted_arms": [
                self.slot_names[s]
                for s in range(self.num_slots)
                if line.state[s] == OPEN and not line.length[s]
            ]
        }


class CrossObserver(Observer):
    """``arm_started``: one flag per arm, it holds a tile beyond the lead."""

    blocks = (("arm_started", 4),)

    def write(self, state: State, seat: int, out: Blocks) -> None:
        started, length = out["arm_started"], state.line.length
        for slot in range(4):
            started[slot] = length[slot] > 0


SPECS = (
    VariantSpec(
        name="cross",
        title="Cross",
        shipped=True,
        rules=CrossRules,
        table="chain",
        summary="four players, all tiles dealt, four arms from the 6-6 that must each be started",
        benchmark_tables=({"num_players": 4}, {"num_players": 4, "teams": True}),
        observer=CrossObserver,
    ),
)
