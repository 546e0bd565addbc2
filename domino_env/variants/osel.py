"""Osel / "Donkey" (docs/rules/osel.md).

Double-six, 2-4 players (individual game), 7 tiles each, the rest is the bazaar. The first
double on the table is the spinner and opens all four arms at once (a late spinner when the
lead is not a double: the line grows east and west until the first double).

A turn is any number of doubles, optionally ended by one non-double: after a double (the
lead too) the player may lay another fitting tile or ``stop``; after a non-double the turn
ends. Every double except the spinner may be laid face down (its own actions, offset as in
:class:`~domino_env.rules.chain.ChainRules`): that arm is closed for good. A player with
nothing to lay at the start of a turn draws until a tile fits (then lays it) or the bazaar
is empty (then passes). The round ends when a player lays the last tile or nobody can move
("fish").

Opening: first round, the holder of the lowest double other than ``0-0`` leads it; with no
such double dealt, the holder of the lowest non-double (by pips, then the smaller half).
Later rounds: whoever laid the last tile of the previous round leads any tile.

Scoring, per player: round points = pips in hand, a hand of exactly ``0-0`` counts 10.
A player whose score is not open and who got 12 or fewer *remembers* them (added to earlier
remembered points); more than 12 *opens* the score: remembered + this round are written,
and from then on every round is written directly. A player who went out with the score not
open loses all remembered points. ``state.scores`` are the written scores; the match ends
after a round in which a written score reaches 125; the lowest written score wins (ties:
fewer remembered points; still equal, they share the rank).

Decisions (also in docs/rules/osel.md):

* The "more than 12" test is on the round's points alone; remembered points may grow past
  12 without opening the score.
* A face-down double is still a double: the turn may go on after it. Before the spinner is on
  the table every double laid becomes the spinner, so face-down actions exist only once a
  spinner is down.
* Within a turn, laying stops by itself when nothing more fits (no drawing mid-turn).
* The lone ``0-0`` rule applies after a fish too. In a fish nobody went out, so nobody loses
  remembered points; the round's recorded winner (``RoundResult.winner``, round ranking) is
  the player with the fewest round points (a tie: none). The next round is still led by the
  player who laid the last tile.
* ``reward="points"`` pays written points only (remembered points are not a score yet).

Version history:

- ``osel_v0``: the first release (the rules as in docs/rules/osel.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from domino_env.core.line import Spinner
from domino_env.core.state import State, VariantState
from domino_env.core.tiles import TileSet
from domino_env.observation.observer import Blocks, Observer
from domino_env.render.words import per_seat_text
from domino_env.rules.chain import ChainRules, RememberedPenaltyRules
from domino_env.rules.parts import Opening, after_a_double, by_pips, last_layer_leads
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import ExtraWords


@dataclass(slots=True)
class OselState(VariantState):
    """What Osel keeps across the rounds of a match."""

    remembered: list[int]  # per seat, points remembered and not written yet
    opened: list[bool]  # per seat, its score is open (written)


def doubles_after_blank(tile_set: TileSet) -> list[int]:
    """The doubles from 1-1 up, then the non-doubles by pips (0-0 never opens)."""
    ts = tile_set
    doubles = [t for t in range(ts.size) if ts.is_double[t] and ts.tiles[t] != (0, 0)]
    return doubles + [t for t in by_pips(ts) if not ts.is_double[t]]


class OselRules(RememberedPenaltyRules):
    """Osel: the rules layer's parts (``after_a_double``, ``doubles_face_down``, the
    remembered penalties of :class:`~domino_env.rules.chain.RememberedPenaltyRules`) and its
    own opening."""

    name = "osel"
    batched_kernel = "chain"
    opens = Opening(
        "the lowest double dealt after 0-0 (with none, the non-double with the fewest pips)",
        doubles_after_blank,
    )
    leads_next = last_layer_leads
    continues_turn = after_a_double
    teams_allowed = False
    num_slots = 4
    spinner = Spinner.AT_ONCE
    face_down_doubles = True
    extra_actions = ("stop",)
    phases = ("lead", "continuing")
    match_target = 125
    extra_words: ClassVar[Mapping[str, ExtraWords]] = {
        "remembered": lambda points, names: (
            f"remembered penalty points (not written yet): {per_seat_text(points, names)}"
        ),
        "opened": lambda flags, names: (
            "scores opened: "
            + (", ".join(name for name, flag in zip(names, flags, strict=True) if flag) or "nobody yet")
        ),
    }

    # Face-up placements, plus face-down ones for doubles once the spinner is down.
    placements = ChainRules.doubles_face_down
    greedy_key = ChainRules.doubles_first  # (a tile-laying turn goes on after a double)

    # --- round lifecycle ----------------------------------------------------------------------

    def new_extra(self) -> OselState:
        """The bookkeeping lasts the whole match."""
        return OselState([0] * self.num_players, [False] * self.num_players)

    # --- baseline and observation hooks -----------------------------------------------------

    def public_extra(self, state: State[OselState]) -> dict[str, Any]:
        return {"remembered": list(state.extra.remembered), "opened": list(state.extra.opened)}


class OselObserver(Observer):
    """``remembered`` (points / 125) and ``opened`` (flags), each starting with the observer."""

    def __init__(self, rules: OselRules) -> None:
        super().__init__(rules)
        n = rules.num_players
        self.blocks = (("remembered", n), ("opened", n))
        self._scale = 1.0 / rules.match_target

    def write(self, state: State[OselState], seat: int, out: Blocks) -> None:
        n = self.rules.num_players
        remembered, opened = state.extra.remembered, state.extra.opened
        remembered_out, opened_out = out["remembered"], out["opened"]
        for k in range(n):
            other = (seat + k) % n
            remembered_out[k] = remembered[other] * self._scale
            opened_out[k] = opened[other]


SPECS = (
    VariantSpec(
        name="osel",
        title="Osel",
        shipped=True,
        rules=OselRules,
        table="chain",
        summary="doubles keep the turn and may close an arm face down; remembered points, 125 loses",
        benchmark_tables=({"num_players": 2}, {"num_players": 4}),
        observer=OselObserver,
        action_names={"stop": "end the turn"},
        presets={"tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"}},
    ),
)
