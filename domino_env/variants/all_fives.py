"""All Fives / "straight dominoes" (RULES.md section 2, seed 002).

Double-six, 2-4 players (4 may play as partners), 7 tiles each, one tile a turn, draw
until a tile fits. The first double is the spinner; its north and south arms open once
its east and west sides both hold a tile. After every tile the open ends are counted
(a double at an end counts both halves, a lone first tile counts all its pips, an empty
north/south arm does not count); a positive multiple of 5 scores at once. Going out
scores the opponents' pips, a blocked round scores the others' pips for the side with
fewest; both rounded to the nearest 5. The match ends the moment a side reaches 250.

First round: a random seat leads any tile. Later rounds: the previous round's winner
leads (after a blocked team win, the partner with fewer pips - our choice, as in Classic;
after a blocked tie, the seat after the previous leader).
"""

from __future__ import annotations

from domino_env.engine.line import NORTH, OPEN, SOUTH, Line, Spinner
from domino_env.engine.state import State
from domino_env.variants.base import ChainRules, round_to_five


def end_count(line: Line) -> int:
    """Sum of the open ends as All Fives counts them."""
    if line.count == 1:
        return line.tiles.pips[line.lead_tile]
    total = 0
    for slot in range(line.num_slots):
        if line.state[slot] != OPEN or (slot in (NORTH, SOUTH) and not line.length[slot]):
            continue
        total += line.value[slot] * (2 if line.double_end[slot] else 1)
    return total


class AllFivesRules(ChainRules):
    name = "all_fives"
    num_slots = 4
    spinner = Spinner.AFTER_SIDES
    match_target = 250
    lower_score_wins = False

    def opening(self, state: State) -> tuple[int, int]:
        if state.round_index == 0:
            return int(state.rng.integers(self.num_players)), -1
        return super().opening(state)

    def after_lay(self, state: State, seat: int, tile: int) -> None:
        count = end_count(state.line)
        if count and count % 5 == 0:
            side = self.side_of[seat]
            self.add_score(state, side, count, "count")
            if state.scores[side] >= self.match_target:
                state.match_over = True
                self.end_round(state, seat, blocked=False)

    def immediate_points(self, state: State, action: int) -> int:
        line = state.line.clone()
        tile = self.action_tile[action]
        if line.empty:
            line.lead(tile)
        else:
            line.attach(tile, self.action_slot[action])
        count = end_count(line)
        return count if count % 5 == 0 else 0

    def score_round(self, state: State, winner: int | None, blocked: bool, pips: list[int]) -> None:
        if winner is None or state.match_over:
            return
        win_side = self.side_of[winner]
        others = sum(p for side, p in enumerate(self.side_pips(pips)) if side != win_side)
        self.add_score(state, win_side, round_to_five(others), "domino" if not blocked else "blocked")
