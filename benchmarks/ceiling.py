"""How far above ``search`` can any player get? The ``expert`` search with worlds that cheat.

    python benchmarks/ceiling.py --variant classic --cheat hands --games 400 [--seed 2000]

A fair player's worlds come from what its seat knows (the rules' ``sample_world``).
The *cheating* expert is the same search (the ``expert`` tier's halving, solver and rollouts)
searching worlds that are not fair:

* ``--cheat hands``: every hand is the true one; only the boneyard's order is shuffled anew
  for each world (the tiles in it are then known: they are what no hand holds);
* ``--cheat all``: the true state itself, the boneyard's order too, in every world (the rest
  of the round is then a perfect-information game the solver and rollouts play out).

It plays whole matches on duplicate deals against ``--opponent`` (default ``search``), as
``python -m training evaluate expert search --duplicate --first-only`` plays the fair tier, and
prints the win rate with its 95% Wilson interval over deals. The gap between the fair tier and
``--cheat hands`` is what inferring the hidden hands better could still win; a target above the
cheater's rate is out of reach of any fair player of this search's kind.
"""

from __future__ import annotations

import random
from typing import Any

import domino_env
from domino_env.agents import make_agent
from domino_env.agents.expert import ExpertAgent
from domino_env.agents.solver import solvable
from domino_env.core.view import SeatView
from domino_env.rules.table import TableRules
from training.cli import OneLineParser, run_script
from training.eval.arena import non_negative_int, positive_int
from training.matches import duplicate_summary

CHEATS = ("hands", "all")
# The variants whose 2-player rounds the expert's solver plays, as on the fair tier's tables.
SOLVED = tuple(
    name
    for name, spec in domino_env.SPECS.items()
    if 2 in spec.player_counts and solvable(spec.rules(num_players=2))
)


class CheatingExpert(ExpertAgent):
    """``expert`` searching the true hands (``hands``), or the true state (``all``)."""

    def __init__(self, cheat: str, seed: int | None = None) -> None:
        super().__init__("expert", seed=seed)
        self.cheat = cheat
        self.name = f"expert (cheat: {cheat})"

    def sample(self, rules: TableRules, game: Any, view: SeatView, rng: random.Random) -> Any:
        world = game.clone()
        if self.cheat == "hands":
            world.stock = sorted(world.stock)
            rng.shuffle(world.stock)
        return world


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description="the expert search with worlds that cheat, against search")
    parser.add_argument("--variant", default="classic", choices=SOLVED)
    parser.add_argument("--cheat", default="hands", choices=CHEATS)
    parser.add_argument("--opponent", default="search")
    parser.add_argument(
        "--games", type=positive_int, default=400, help="whole matches, rounded up to whole deals"
    )
    parser.add_argument("--seed", type=non_negative_int, default=2000)
    args = parser.parse_args(argv)
    env = domino_env.raw_env(args.variant, num_players=2)
    cheater = CheatingExpert(args.cheat, seed=args.seed)
    opponent = make_agent(args.opponent, seed=args.seed + 1)
    result = duplicate_summary(env, cheater, opponent, games=args.games, seed=args.seed)
    print(f"{args.variant}: expert cheating ({args.cheat}) against {args.opponent}: {result}")


if __name__ == "__main__":
    run_script(main)
