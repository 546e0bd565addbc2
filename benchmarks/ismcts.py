"""Would information-set MCTS make a stronger policy-free tier? Measured against the ladder.

    python benchmarks/ismcts.py --variant classic --iterations 480 --opponent expert --games 400 [--endgame]

Single-observer information-set MCTS (Cowling, Powley and Whitehouse, 2012) from the seat's
information: every iteration samples one world with the rules' fair sampler (as ``search``
and ``expert`` do, so the decision depends on the seat's view and the seed only), walks one
tree whose nodes are the public histories of moves from the decision on (every seat's moves:
the other seats' nodes too), choosing among the moves legal *in that world* by UCB1 with
availability counts, adds one node, rolls the round out by the greedy rule for every seat and
backs the round's value up, each node's statistics from the point of view of the side that
moved into it. The move played is the root's most visited. Where ``search`` and ``expert``
value each first move by what follows it under greedy play, the tree also searches the replies
(the seats' later choices), at the price of a tree over histories that mix worlds.

With ``--endgame`` the decisions where ``expert`` solves its worlds exactly (few enough tiles
left in the hands and the boneyard, a public count) are ``expert``'s, the rest the tree's.

The value is ``search``'s (the round's score change against the other sides' mean, signed,
plus ``match_target`` times the match outcome when the round ends the match). UCB's
exploration is scaled by the spread of the values met at the root (their standard deviation),
since a value's scale differs by variant and score.

It plays whole matches on duplicate deals, as ``python -m training evaluate expert search
--duplicate --first-only`` does, and prints the win rate and the margin a match with their 95%
intervals over deals and both sides' milliseconds a decision (for equal time: compare with
``expert``'s in the same run). Measured (``benchmarks/results/tiers.csv``): at ``expert``'s time
it is level with ``expert`` in Classic (with or without ``--endgame``) and Osel, and below it
in All Fives.
"""

from __future__ import annotations

import argparse
import math
import random
from typing import Any

import numpy as np
from tqdm import tqdm

import domino_env
from domino_env.agents import make_agent
from domino_env.agents.baselines import legal_actions
from domino_env.agents.expert import ExpertAgent
from domino_env.agents.search import play_out, round_value, standing
from domino_env.agents.solver import solvable
from domino_env.rules.chain import LineRules
from training.cli import OneLineParser, run_script
from training.eval.arena import non_negative_int, positive_int
from training.matches import play_match, whole_deals

# The 2-player line-of-play games: the tiers' home ground (3D dominoes' hundreds of placements
# a move want a prior to grow a tree over).
LINE_VARIANTS = tuple(
    name
    for name, spec in domino_env.SPECS.items()
    if 2 in spec.player_counts and isinstance(spec.rules(num_players=2), LineRules)
)
EXPLORATION = 0.7  # UCB1's constant, in standard deviations of the root's values


class Node:
    """A public history's statistics: per move from it, the visits, the value to the side that
    played it (summed) and how often the move was legal when a walk reached this node."""

    __slots__ = ("available", "children", "totals", "visits")

    def __init__(self) -> None:
        self.children: dict[int, Node] = {}
        self.visits: dict[int, int] = {}
        self.totals: dict[int, float] = {}
        self.available: dict[int, int] = {}


class ISMCTSAgent:
    """Single-observer IS-MCTS with greedy rollouts (the module docstring)."""

    def __init__(
        self,
        iterations: int,
        exploration: float = EXPLORATION,
        seed: int | None = None,
        endgame: bool = False,
    ) -> None:
        self.iterations = iterations
        self.exploration = exploration
        self.rng = random.Random(seed)
        self.name = f"ismcts:{iterations}" + (" + expert's end games" if endgame else "")
        # ``endgame``: the decisions where expert solves its worlds exactly are expert's
        self.endgame = ExpertAgent("expert", seed=None if seed is None else seed + 2) if endgame else None

    def __call__(self, env: Any, observation: dict[str, np.ndarray]) -> int:
        legal = legal_actions(observation).tolist()
        if len(legal) == 1:
            return int(legal[0])
        return self.choose(env.rules, env.game, env.view(env.agent_selection))

    def choose(self, rules: Any, game: Any, view: Any) -> int:
        """The root's most visited move (the lowest on a tie); with :attr:`endgame`, expert's
        choice once few enough tiles are left for it to solve (a public count)."""
        expert, left = self.endgame, sum(view.hand_sizes) + view.boneyard_size
        if expert is not None and solvable(rules) and left <= expert.tier.solve_tiles:
            return expert.choose(rules, game, view)
        root = self.tree(rules, game, view)
        return max(view.legal_actions, key=lambda m: (root.visits.get(m, 0), -m))

    def tree(self, rules: Any, game: Any, view: Any) -> Node:
        """The root of :attr:`iterations` walks from the decision of ``view``."""
        rng, root = self.rng, Node()
        sides, own = max(rules.side_of) + 1, rules.side_of[view.seat]
        mean, square = 0.0, 0.0  # the root's values: Welford's running mean and variance
        for count in range(1, self.iterations + 1):
            world = rules.sample_world(game, view, rng)
            before = standing(rules, world)
            spread = math.sqrt(square / (count - 1)) if count > 2 and square > 0 else 1.0
            node, path = root, []  # (node, move, the side that made it)
            while not world.round_over:
                legal = world.legal
                for move in legal:
                    node.available[move] = node.available.get(move, 0) + 1
                side = rules.side_of[world.current]
                fresh = [m for m in legal if m not in node.children]
                move = rng.choice(fresh) if fresh else self._ucb(node, legal, spread)
                path.append((node, move, side))
                rules.apply(world, move)
                if fresh:
                    node.children[move] = Node()
                    break
                node = node.children[move]
            if not world.round_over:  # (the greedy rollout)
                play_out(rules, world, random.Random(rng.getrandbits(64)))
            values = [round_value(rules, world, s, before) for s in range(sides)]
            for parent, move, side in path:
                parent.visits[move] = parent.visits.get(move, 0) + 1
                parent.totals[move] = parent.totals.get(move, 0.0) + values[side]
            delta = values[own] - mean
            mean += delta / count
            square += delta * (values[own] - mean)
        return root

    def _ucb(self, node: Node, legal: list[int], spread: float) -> int:
        scale = self.exploration * spread

        def score(move: int) -> float:
            n = node.visits[move]
            return node.totals[move] / n + scale * math.sqrt(math.log(node.available[move]) / n)

        return max(legal, key=score)


def exploration_constant(text: str) -> float:
    """An argparse type: UCB's constant, a finite number of 0 or more (0: no exploring)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of 0 or more, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description="information-set MCTS against a rung of the ladder")
    parser.add_argument("--variant", default="classic", choices=LINE_VARIANTS)
    parser.add_argument(
        "--iterations", type=positive_int, default=600, help="sampled worlds (tree walks) a decision"
    )
    parser.add_argument("--exploration", type=exploration_constant, default=EXPLORATION)
    parser.add_argument(
        "--endgame",
        action="store_true",
        help="leave the decisions expert solves exactly (few tiles left) to expert",
    )
    parser.add_argument("--opponent", default="expert")
    parser.add_argument(
        "--games", type=positive_int, default=200, help="whole matches, rounded up to whole deals"
    )
    parser.add_argument("--seed", type=non_negative_int, default=2000)
    args = parser.parse_args(argv)
    env = domino_env.raw_env(args.variant, num_players=2)
    player = ISMCTSAgent(args.iterations, args.exploration, seed=args.seed, endgame=args.endgame)
    opponent = make_agent(args.opponent, seed=args.seed + 1)
    games = whole_deals(args.games, env.rules)
    with tqdm(total=games, unit="game") as bar:
        match = play_match(
            env, player, opponent, games=games, seed=args.seed, duplicate=True, on_game=lambda: bar.update(1)
        )
    low, high = match.interval()
    margin_low, margin_high = match.margin_interval()
    print(
        f"{args.variant}: {player.name} (exploration {args.exploration}) against {args.opponent}: "
        f"{match.win_rate:.1%} [{low:.1%}, {high:.1%}] of {match.games} whole matches (seed {args.seed}), "
        f"margin {match.margin:+.1f} [{margin_low:+.1f}, {margin_high:+.1f}] points a match; "
        f"ms a decision {match.ms_per_decision(0):.1f} against {match.ms_per_decision(1):.1f}"
    )


if __name__ == "__main__":
    run_script(main)
