"""A cheating reference player: how often can a player who sees everything beat ``random``?

    python benchmarks/oracle.py --variants classic blind metro --matches 400 --rollouts 16 [--seed 0] [--fair]

The *oracle* sees the full :class:`~domino_env.core.state.State`: every hand (in Blind every
face-down row) and the order of the boneyard. At each decision with more than one legal
move it tries every legal action in ``--rollouts`` (K) Monte Carlo rollouts: clone the
state, apply the action, then play the round to its end - the oracle's own later moves by
the rules' greedy rule (``greedy_key``, ties at random: cheap, and what a sensible player
does with a penalty-pip count), every opponent's move uniformly at random, exactly as the
``random`` baseline plays. Because the clone keeps the stock order, the rollouts see the
true future draws: that is the cheat, and it is intended. An action's value is the mean
over its rollouts of the oracle side's score change for the round against the opponent's
(the variant's own scoring, signed so that more is better: ``lower_score_wins`` flips it),
plus ``--win-bonus`` for a won round and, when the rollout's round ends the match,
``match_target`` times the match outcome (+1 won, -1 lost) - so near the end of a match
the oracle plays to win the match rather than to gain points. The best mean is played.
The same rollout seeds serve every action of a decision (common random numbers), so
actions are compared on alike random futures.

The table then plays whole matches (the env's loop: ``apply`` until the round is over,
``start_round`` until the match is over; the match winner by ``match_keys``/``outcome``;
a shared first place counts as half a win) of the oracle against ``random``, seats rotated
(the oracle in seat 0 in even matches, seat 1 in odd ones), and for reference ``greedy``
against ``random`` on the same match seeds (the same deals: each round's deal is one
shuffle of the match's RNG whatever is played). Options are the env defaults of
``configs/<variant>.yaml`` (``env.options``) for 2 players.

Why this bounds a fair agent (approximately, not formally): a fair agent sees only its own
hand and the public history, so any policy it can follow the oracle could follow too, and
the oracle additionally knows the opponent's tiles, the draws to come, and the opponent's
exact (random) policy it is playing against. What the oracle cannot remove is the luck of
the deal and of the draws, which a fair player cannot remove either. The oracle is not an
optimal player - its search is one ply of K noisy rollouts with a greedy continuation and
a round-level (not match-level) value - so its win rate is not a strict upper bound; but
if even this cheating player stays clearly below 90% against ``random``, 90% is very
unlikely to be in reach of a fair agent, and if it clears 90% comfortably there is room
for a fair agent to improve. Raising K (``--rollouts``) shows whether more search would
change the answer.

``--fair`` adds a line for the same search made fair: before each rollout the tiles the
player cannot see (the opponent's hand and the stock) are dealt anew at random by the rules'
own sampler, the search agents' (:func:`determinize`; "perfect-information Monte Carlo"):
consistent with hand sizes and, where the rules say it means "holds none", the values the
opponent was seen to lack when it drew or passed; in Blind and Blind blitz the places of the
face-down rows whose tiles the mover cannot name (its own too, in Blind). It still knows the
opponent plays uniformly at random, which is fair game against the ``random`` baseline.
Whatever it reaches, a fair player can reach, so it bounds the target from the other side: a
constructive lower bound, where the oracle gives an approximate upper one.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from domino_env.agents import greedy_choice
from domino_env.core.state import State
from domino_env.registry import VARIANTS, raw_env
from domino_env.rules.chain import LineRules
from domino_env.rules.view import seat_view
from training.cli import OneLineParser, run_script
from training.eval.arena import non_negative_int, positive_int
from training.matches import wilson_interval, win_share
from training.model.config import load_config

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

# A player: (rules, state, its rng) -> a legal action of ``state.current``.
Policy = Callable[[LineRules, State, random.Random], int]


def random_move(rules: LineRules, state: State, rng: random.Random) -> int:
    """The ``random`` baseline: uniform over the legal actions."""
    legal = state.legal
    return legal[rng.randrange(len(legal))]


def greedy_move(rules: LineRules, state: State, rng: random.Random) -> int:
    """The ``greedy`` baseline: the best ``greedy_key``, ties at random."""
    legal = state.legal
    return legal[0] if len(legal) == 1 else greedy_choice(rules, state, legal, rng)


class Oracle:
    """Chooses by K rollouts per legal action from the true state (see the module docstring)."""

    def __init__(
        self, rollouts: int = 16, win_bonus: float = 0.0, match_bonus: bool = True, fair: bool = False
    ) -> None:
        if rollouts < 1:
            raise ValueError(f"rollouts must be at least 1, got {rollouts}")
        self.rollouts = rollouts
        self.win_bonus = win_bonus
        self.match_bonus = match_bonus
        self.fair = fair  # sample the unseen tiles for each rollout instead of seeing them
        self.decisions = 0  # decisions with a choice (rollouts made)

    def __call__(self, rules: LineRules, state: State, rng: random.Random) -> int:
        legal = state.legal
        if len(legal) == 1:
            return legal[0]
        self.decisions += 1
        seeds = [rng.getrandbits(64) for _ in range(self.rollouts)]  # shared by every action
        best_action, best_value = legal[0], -float("inf")
        for action in legal:
            value = sum(self.rollout(rules, state, action, seed) for seed in seeds)
            if value > best_value:
                best_action, best_value = action, value
        return best_action

    def rollout(self, rules: LineRules, state: State, action: int, seed: int) -> float:
        """Value for the seat to move of ``action`` followed by one random playout of the round;
        ``state`` is not changed (the playout runs on a clone, with its own RNGs)."""
        me = rules.side_of[state.current]
        rng = random.Random(seed)
        sim = determinize(rules, state, rng) if self.fair else state.clone()
        rules.apply(sim, action)
        side_of = rules.side_of
        while not sim.round_over:
            legal = sim.legal
            if len(legal) == 1:
                move = legal[0]
            elif side_of[sim.current] == me:
                move = greedy_move(rules, sim, rng)
            else:
                move = legal[rng.randrange(len(legal))]
            rules.apply(sim, move)
        return self.value(rules, sim, me)

    def value(self, rules: LineRules, state: State, me: int) -> float:
        """A finished round's worth to side ``me``: its score change against the others' mean,
        signed so more is better, plus the round-win and match-end bonuses."""
        result = state.result
        assert result is not None
        change = result.score_change
        others = [c for side, c in enumerate(change) if side != me]
        diff = change[me] - sum(others) / len(others)
        value = -diff if rules.lower_score_wins else float(diff)
        if self.win_bonus and result.winner is not None and rules.side_of[result.winner] == me:
            value += self.win_bonus
        if self.match_bonus and state.match_over:
            outcome = rules.outcome(rules.match_keys(state))
            value += rules.match_target * outcome[me]
        return value


def determinize(rules: LineRules, state: State, rng: random.Random) -> State:
    """A copy of ``state`` with the tiles the seat to move cannot name dealt anew at random by
    the rules' own sampler (:meth:`~domino_env.rules.table.TableRules.sample_world`, the search
    agents' worlds): hand sizes kept, the voids honoured where they mean "holds none", in
    Blind and Blind blitz the face-down places of the rows refilled.

    Against a ``random`` opponent its plays tell nothing more about its hand than that they
    were legal, so in a 2-player draw game (Classic, All Fives, Metro) this is close to a
    sample from the true posterior of the hidden tiles."""
    view = seat_view(rules, state, state.current, rules.public_extra(state))
    world: State = rules.sample_world(state, view, rng)
    return world


def play_match(rules: LineRules, players: list[Policy], seed: int, rngs: list[random.Random]) -> State:
    """One whole match, seat ``i`` played by ``players[i]`` with ``rngs[i]``; the env's loop:
    apply until the round is over, deal the next round until the match is over."""
    deals = np.random.default_rng(seed)  # the env's reset(seed=seed) stream
    state = dealt_match(rules, deals)
    while True:
        seat = state.current
        rules.apply(state, players[seat](rules, state, rngs[seat]))
        if state.round_over:
            if state.match_over:
                return state
            rules.start_round(state, deals)
            rules.resolve(state, deals)


def dealt_match(rules: LineRules, seed: int | np.random.Generator) -> State:
    """A new match dealt as the env's ``reset(seed=seed)`` deals it (its chance resolved by
    ``seed``, or by that generator)."""
    rng = np.random.default_rng(seed)
    state = rules.new_match(rng=rng)
    rules.resolve(state, rng)
    return state


def head_to_head(
    rules: LineRules, first: Policy, second: Policy, matches: int, seed: int
) -> tuple[float, float]:
    """(wins of ``first`` - a shared first place counts 1/k - , mean rounds a match) over
    ``matches`` seeded matches, ``first`` in seat ``g % num_players`` of match ``g``."""
    n = rules.num_players
    wins = rounds = 0.0
    for g in range(matches):
        mine = g % n
        players = [first if seat == mine else second for seat in range(n)]
        rngs = [random.Random(seed * 1_000_003 + g * 17 + seat) for seat in range(n)]
        state = play_match(rules, players, seed + g, rngs)
        by_side = rules.outcome(rules.match_keys(state))
        outcomes = [by_side[rules.side_of[s]] for s in range(n)]
        wins += win_share(rules, outcomes, [mine])
        rounds += state.round_index + 1
    return wins, rounds / max(matches, 1)


def variant_rules(name: str) -> LineRules:
    """The rules of ``name`` with ``configs/<name>.yaml``'s env options (2 players)."""
    options: dict[str, Any] = {"num_players": 2}
    config_path = CONFIGS / f"{name}.yaml"
    if config_path.exists():
        options = {**load_config(config_path).env.options, "num_players": 2}
    rules = raw_env(name, **options).rules
    if not isinstance(rules, LineRules):
        raise ValueError(f"{name} is not a line-of-play game; the oracle plays only those")
    return rules


def report(label: str, wins: float, matches: int, rounds: float, seconds: float) -> str:
    low, high = wilson_interval(wins, matches)
    rate = wins / matches
    return (
        f"  {label:<22} {rate:>7.1%}  95% CI [{low:.1%}, {high:.1%}]  "
        f"{rounds:5.1f} rounds/match  {seconds:7.1f} s"
    )


def main(argv: list[str] | None = None) -> None:
    chain = [name for name, cls in VARIANTS.items() if issubclass(cls, LineRules)]
    parser = OneLineParser(description="A cheating Monte Carlo oracle against random.")
    parser.add_argument("--variants", nargs="+", default=["classic", "blind", "metro"], choices=chain)
    parser.add_argument(
        "--matches", type=positive_int, default=400, help="whole matches per line (default 400)"
    )
    parser.add_argument(
        "--rollouts", type=positive_int, default=16, help="rollouts per legal action (default 16)"
    )
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--win-bonus", type=float, default=0.0, help="value of a won round (default 0)")
    parser.add_argument("--no-match-bonus", action="store_true", help="value rounds by points only")
    parser.add_argument("--no-greedy", action="store_true", help="skip the greedy reference line")
    parser.add_argument(
        "--fair",
        action="store_true",
        help="also play a fair Monte Carlo player: the same search, the unseen tiles sampled per rollout",
    )
    args = parser.parse_args(argv)
    print(
        f"oracle (K={args.rollouts} rollouts/action) and greedy vs random: {args.matches} whole matches, "
        f"2 players, seats rotated, seed {args.seed}"
    )
    for name in args.variants:
        rules = variant_rules(name)
        print(f"{name}:")
        lines: list[tuple[str, Policy]] = [
            (f"oracle K={args.rollouts}", Oracle(args.rollouts, args.win_bonus, not args.no_match_bonus))
        ]
        if args.fair:
            fair = Oracle(args.rollouts, args.win_bonus, not args.no_match_bonus, fair=True)
            lines.append((f"fair MC K={args.rollouts}", fair))
        if not args.no_greedy:
            lines.append(("greedy", greedy_move))
        for label, player in lines:
            start = time.perf_counter()
            wins, rounds = head_to_head(rules, player, random_move, args.matches, args.seed)
            print(report(label, wins, args.matches, rounds, time.perf_counter() - start), flush=True)


if __name__ == "__main__":
    run_script(main)
