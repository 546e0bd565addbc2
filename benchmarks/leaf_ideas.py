"""Would better leaves lift ``expert``? Two policy-free ideas, measured against ``search``.

    python benchmarks/leaf_ideas.py --variant classic --idea match-value --games 400 [--seed 2000]

The ``expert`` tier values a sampled world by the round's points (plus the match outcome when
the round ends the match): exactly once few tiles are left, by a greedy rollout before. Each
idea changes one of the two and keeps the rest of the tier (worlds, halving, budgets):

* ``match-value``: a round's end is worth the change it makes to the side's **match value**,
  its expected match outcome at the scores after the round less the one before (the dynamic
  program of :mod:`training.rl.match_value`, from greedy rounds; two sides only), times
  ``match_target`` - so 20 points count for more at 95-90 than at 0-0;
* ``heuristic-rollouts``: every seat of a rollout plays by a rule stronger than greedy: the
  heaviest tile, plus :data:`FIT_WEIGHT` points for every tile of its hand that the ends left
  by the move take, plus :data:`DOUBLE_WEIGHT` for a double (points scored now first, as the
  greedy rule; ties by the rules' greedy rule). As a player (``--play-rule --opponent
  greedy``) it beats ``greedy`` in 75.3% of 1,000 Classic matches and 62.7% of 600 All
  Fives ones (seed 9000).

It plays whole matches on duplicate deals, as ``python -m training evaluate expert search
--duplicate --first-only`` plays the tier itself, and prints the win rate with its 95% Wilson
interval over deals: compare with the tier's own row in ``benchmarks/results/tiers.csv``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

import domino_env
from domino_env.agents import make_agent
from domino_env.agents.baselines import legal_actions
from domino_env.agents.expert import ExpertAgent
from domino_env.agents.search import Key, Value, standing
from domino_env.agents.solver import solvable
from training.cli import OneLineParser, run_script
from training.eval.arena import non_negative_int, positive_int
from training.matches import duplicate_summary
from training.rl.match_value import MatchValue

IDEAS = ("match-value", "heuristic-rollouts")
FIT_WEIGHT = 4  # points a tile of the hand that fits the ends after the move is worth
DOUBLE_WEIGHT = 20  # points a double is worth (it fits one value only: shed it early)
# The variants whose 2-player rounds the expert's solver plays: its leaves are the ideas' subject.
CHAIN_VARIANTS = tuple(
    name
    for name, spec in domino_env.SPECS.items()
    if 2 in spec.player_counts and solvable(spec.rules(num_players=2))
)


def match_value_leaf(variant: str, options: dict[str, Any]) -> Value:
    """A round's end valued by the change in the side's match value (two sides)."""
    values = MatchValue(variant, options).values
    top = values.shape[0] - 1

    def value(rules: Any, sim: Any, side: int, before: list[int]) -> float:
        after, other = standing(rules, sim), 1 - side
        if sim.match_over:
            now = rules.outcome(rules.match_keys(sim))[side]
        else:
            now = values[min(after[side], top), min(after[other], top)]
        then = values[min(before[side], top), min(before[other], top)]
        return rules.match_target * float(now - then)

    return value


def fit_rule(rules: Any) -> Key:
    """The heuristic rule (module docstring) for a line game: a key per legal action."""
    ts = rules.tile_set
    suits = ts.suit_mask
    fits_any = [0] * (1 << len(suits))  # values mask -> the tiles carrying any of them
    for values in range(1, len(fits_any)):
        low = (values & -values).bit_length() - 1
        fits_any[values] = fits_any[values & values - 1] | suits[low]
    pips, doubles, halves = ts.pips, ts.is_double, ts.tiles
    tile_of, slot_of, greedy = rules.action_tile, rules.action_slot, rules.greedy_key

    def key(state: Any, action: int) -> tuple[Any, ...]:
        tile, now = tile_of[action], rules.immediate_points(state, action)
        if tile < 0:
            return (now, -1.0, *greedy(state, action))
        line, (a, b) = state.line, halves[tile]
        if not line.count:
            ends = 1 << a | 1 << b
        else:
            slot = slot_of[action]
            ends = 1 << (b if a == line.value[slot] else a)
            for other in line.open_slots():
                if other != slot:
                    ends |= 1 << line.value[other]
        fits = (state.hands[state.current] & ~(1 << tile) & fits_any[ends]).bit_count()
        return (now, pips[tile] + FIT_WEIGHT * fits + DOUBLE_WEIGHT * doubles[tile], *greedy(state, action))

    return key


class LeafIdeaExpert(ExpertAgent):
    """``expert`` with one idea's leaves (module docstring)."""

    def __init__(self, idea: str, variant: str, options: dict[str, Any], seed: int | None = None) -> None:
        super().__init__("expert", seed=seed)
        self.name = f"expert ({idea})"
        if idea == "match-value":
            self.leaf_value = match_value_leaf(variant, options)
        self.idea = idea

    def choose(self, rules: Any, game: Any, view: Any) -> int:
        if self.idea == "heuristic-rollouts" and self.playout_key is None:
            self.playout_key = fit_rule(rules)
        return super().choose(rules, game, view)


class FitRulePlayer:
    """The heuristic rule itself as a player (``--play-rule``), ties at random."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.name = "fit rule"
        self.key: Key | None = None

    def __call__(self, env: Any, observation: dict[str, np.ndarray]) -> int:
        legal = legal_actions(observation).tolist()
        if self.key is None:
            self.key = fit_rule(env.rules)
        keys = [self.key(env.game, a) for a in legal]
        best = max(keys)
        return int(self.rng.choice([a for a, k in zip(legal, keys, strict=True) if k == best]))


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description="expert with other leaves, against search")
    parser.add_argument("--variant", default="classic", choices=CHAIN_VARIANTS)
    parser.add_argument("--idea", default="match-value", choices=IDEAS)
    parser.add_argument("--play-rule", action="store_true", help="play the heuristic rule itself")
    parser.add_argument("--opponent", default="search")
    parser.add_argument(
        "--games", type=positive_int, default=400, help="whole matches, rounded up to whole deals"
    )
    parser.add_argument("--seed", type=non_negative_int, default=2000)
    args = parser.parse_args(argv)
    options = {"num_players": 2}
    env = domino_env.raw_env(args.variant, **options)
    player: Any = (
        FitRulePlayer(seed=args.seed)
        if args.play_rule
        else LeafIdeaExpert(args.idea, args.variant, options, seed=args.seed)
    )
    opponent = make_agent(args.opponent, seed=args.seed + 1)
    result = duplicate_summary(env, player, opponent, games=args.games, seed=args.seed)
    print(f"{args.variant}: {player.name} against {args.opponent}: {result}")


if __name__ == "__main__":
    run_script(main)
