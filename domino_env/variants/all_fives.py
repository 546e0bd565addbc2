"""All Fives / "straight dominoes" (docs/rules/all_fives.md).

Double-six, 2-4 players (4 may play as partners), 7 tiles each, one tile a turn, draw
until a tile fits. The first double is the spinner; its north and south arms open once
its east and west sides both hold a tile. After every tile the open ends are counted
(a double at an end counts both halves, a lone first tile counts all its pips, an empty
north/south arm does not count); a positive multiple of 5 scores at once. Going out
scores the opponents' pips, a blocked round scores the others' pips for the side with
fewest; both rounded to the nearest 5. The match ends the moment a side reaches 250.

Observation: besides the common blocks, ``points_now`` holds, for the seat to move, the
points each legal play would score at once (/20) - information any player can work out,
given so that a policy does not have to learn the count's arithmetic.

First round: a random seat leads any tile. Later rounds: the previous round's winner
leads (after a blocked team win, the partner with fewer pips - our choice, as in Classic;
after a blocked tie, the seat after the previous leader).

Version history:

- ``all_fives_v0``: the first release (the rules as in docs/rules/all_fives.md).
"""

from __future__ import annotations

from domino_env.core.line import Spinner
from domino_env.core.state import State
from domino_env.observation.observer import Blocks, Observer
from domino_env.rules.chain import ChainRules
from domino_env.rules.parts import (
    LOT_OPENS,
    count_after,
    count_points,
    end_value,
    points_now,
    score_the_count,
)
from domino_env.rules.parts import end_count as end_count  # (the count, read by the tests here)
from domino_env.rules.spec import VariantSpec

POINTS_SCALE = 1 / 20  # the points_now block: a count of 20 reads 1.0


class AllFivesRules(ChainRules):
    name = "all_fives"
    batched_kernel = "chain"
    opens = LOT_OPENS  # a random seat leads the first round, any tile
    lay_scoring = score_the_count
    num_slots = 4
    spinner = Spinner.AFTER_SIDES
    match_target = 250
    lower_score_wins = False
    action_blocks = ("points_now",)

    immediate_points = count_points  # (what a lay scores now: the greedy rule's first key)
    score_round = ChainRules.pips_to_the_winner


class AllFivesObserver(Observer):
    """``points_now``: for each play action, the points it would score at once (/20, for the seat
    to move only), so a policy need not learn the count."""

    rules: AllFivesRules

    def __init__(self, rules: AllFivesRules) -> None:
        super().__init__(rules)
        self.blocks = (("points_now", rules.num_play_actions),)

    def write(self, state: State, seat: int, out: Blocks) -> None:
        out.zero()
        if state.current != seat or state.round_over:
            return
        points_out = out["points_now"]
        line, rules = state.line, self.rules
        total = sum(end_value(line, slot) for slot in range(line.num_slots))
        tile_of, slot_of = rules.action_tile, rules.action_slot
        for action in state.legal:
            points = points_now(count_after(line, tile_of[action], slot_of[action], total))
            if points:
                points_out[action] = points * POINTS_SCALE


SPECS = (
    VariantSpec(
        name="all_fives",
        title="All Fives",
        shipped=True,
        rules=AllFivesRules,
        table="chain",
        summary="score the open ends whenever they sum to a multiple of 5; first to 250",
        benchmark_tables=({"num_players": 2}, {"num_players": 4, "teams": True}),
        observer=AllFivesObserver,
        presets={
            "tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"},
            "medium": {"num_players": 2, "max_pip": 3, "hand_size": 3, "episode": "round"},
        },
    ),
)
