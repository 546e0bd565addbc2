"""A fair determinized search agent (``search``, ``search:N``) for every variant, 3D dominoes too.

At each decision with more than one legal action the agent samples N *worlds*: full game
states consistent with everything its seat knows (the rules' own sampler,
:meth:`~domino_env.rules.table.TableRules.sample_world`, built on the seat's
:class:`~domino_env.core.view.SeatView`). In every world it plays each legal action, then the
rest of the round (3D dominoes: the rest of the game, which is the match) by a cheap default
policy, the rules' greedy rule for every seat (``greedy_key``, ties at random). The action
with the best mean value over the N worlds is played; every action meets the same N worlds
and the same rollout seeds (common random numbers), so actions are compared on alike futures.

**Value.** A rollout is worth, to the agent's side, the round's score change against the
mean of the other sides' (signed by ``lower_score_wins``: penalty points count against,
points for), plus ``match_target`` times the match outcome (+1 first ... -1 last, the rules'
``outcome`` of ``match_keys``) when the rollout's round ends the match - so points lead while
the match is far from over and the match result dominates when it is at stake. In Osel the
points a player *remembers* (not yet written) count as its score here, since they are written
the moment its score opens. In 3D dominoes one game is the match: the game's points
difference plus 10 (its ``match_target``, the points scale) times the outcome.

**Fairness by construction.** The decision is a function of the seat's view and the agent's
own RNG only. A world starts as ``game.clone()`` for the rules' public bookkeeping (the line
or grid, scores, whose turn, passes, the variant's public state), and then *every* part that
could hold hidden information is overwritten from the view and the agent's RNG, each part by
the rules that know it (``TableRules.sample_world``; the voids ``LineRules.sample_bans``,
Blind's rows ``BlindBlitzRules.place_hidden`` in its module):

* the hands: each seat keeps the tiles the view names in it (``known_hands``: its own hand,
  tiles shown to everybody, Blind's misses and open hands), and the rest of its hand size is
  dealt from the unseen tiles, put in canonical (sorted) order and then shuffled by the
  agent's RNG; a seat gets no tile carrying a value it was seen unable to play (``voids``;
  but the seat to move, which may have just drawn the tile that fits)
  where the rules make that mean "holds none" (``LineRules.voids_hold_none``; not in
  Domino-Metro, where it means "could not legally lay"), falling back to any tile when the
  constraint cannot be met;
* the stock (boneyard, bazaar): the unseen tiles left, in the shuffled order, which decides
  the world's draws (``state.shuffled``: a rollout's draws are no chance points, and a rollout
  stops at the round's end, never dealing another);
* Blind and Blind blitz: every row is rebuilt from what the seat knows (its own row from
  ``view.private["row"]``, the others' from ``view.public["rows"]``), the places it cannot
  name filled from that seat's dealt tiles, the rest of them outside the row (not yet
  arranged); ``known`` and ``seen`` consistent with it; a first-round opening tile the seat
  cannot name (Blind blitz's arrange phase) is chosen in the world by the opening rule;
* the events by the view's (hidden draws as ``HIDDEN``: the rules read only lays from them),
  and fixed deals of later rounds dropped (``LineRules.place_hidden``).

Nothing else in a game state depends on a hidden tile: ``tests/agents/test_search.py`` checks that
two deals differing only in what the seat cannot know give the same decisions with the same
seed. Budget: ``search`` uses :data:`DEFAULT_WORLDS`, chosen with ``benchmarks/search_speed.py``
so that a chain-game decision takes about 20 ms or less on one core; 3D dominoes, with its
hundreds of placements, searches at most :data:`GRID_CANDIDATES` of them (the greedy rule's
best first, ties at random).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from domino_env.agents.baselines import legal_actions
from domino_env.core.view import SeatView
from domino_env.envs.base import DominoEnv
from domino_env.rules.chain import LineRules
from domino_env.rules.table import TableRules
from domino_env.vector.rollouts import MIN_ROWS, GreedyRollouts

NAME = "search"
# How a round's end is valued for a side (``round_value``), and how a rollout's seat rates a
# legal action (the rules' ``greedy_key``): ``benchmarks/leaf_ideas.py`` measures others.
Value = Callable[[TableRules, Any, int, list[int]], float]
Key = Callable[[Any, int], Any]
DEFAULT_WORLDS = 8  # the ``search`` budget: N sampled worlds per legal action
# The largest N a name may ask for: 512 times the default, about 10 s a chain-game decision on
# one core (the ``expert`` tier meets at most 384 worlds an action); more is a typo, not a budget.
MOST_WORLDS = 4096
GRID_CANDIDATES = 12  # 3D dominoes: the most placements one decision searches


def parse_search_name(name: str) -> int | None:
    """The budget N of ``search`` (the default) or ``search:N``; None for any other name (a
    loader may take ``search:<checkpoint>``, the trainer's policy-guided search). A budget
    that is no integer from 1 to :data:`MOST_WORLDS` (``search:0``, ``search:-2``,
    ``search:1.5``, ``search:99999``) raises ValueError saying what is allowed."""
    if name == NAME:
        return DEFAULT_WORLDS
    if not name.startswith(NAME + ":"):
        return None
    text = name[len(NAME) + 1 :]
    if text and not _looks_numeric(text):
        return None
    if not is_worlds_count(text):
        raise ValueError(
            f"agent {name!r}: the search budget must be an integer from 1 to {MOST_WORLDS}, as in "
            f"'search:16' (N sampled worlds per legal action); plain 'search' uses {DEFAULT_WORLDS}"
        )
    return int(text)


def is_worlds_count(text: str) -> bool:
    """Is ``text`` a worlds count a name may give: decimal digits, 1 to :data:`MOST_WORLDS`?"""
    return text.isascii() and text.isdigit() and 1 <= int(text) <= MOST_WORLDS


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class SearchAgent:
    """Determinized Monte Carlo search from the seat's information (see the module docstring)."""

    def __init__(self, worlds: int = DEFAULT_WORLDS, seed: int | None = None) -> None:
        if isinstance(worlds, bool) or not isinstance(worlds, int) or worlds < 1:
            raise ValueError(f"worlds must be a positive integer, got {worlds!r}")
        self.worlds = worlds
        self.name = NAME if worlds == DEFAULT_WORLDS else f"{NAME}:{worlds}"
        self.rng = random.Random(seed)
        self.leaf_value: Value | None = None  # None: ``round_value``
        self.playout_key: Key | None = None  # None: the rules' greedy rule

    def __call__(self, env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        legal = legal_actions(observation).tolist()
        if len(legal) == 1:
            return int(legal[0])
        view = env.view(env.agent_selection)
        return self.choose(env.rules, env.game, view)

    def choose(self, rules: TableRules, game: Any, view: SeatView) -> int:
        """The action to play for ``view.seat``; ``game`` is read only through
        :meth:`sample`, which keeps of it nothing the seat cannot know.

        The engine every search tier shares: a first batch of :attr:`worlds` sampled worlds
        meets every candidate action, then :meth:`next_stage` may keep some candidates and
        give them more worlds (``search`` stops after the first batch); the candidate with
        the best total over the worlds they all met wins, the first in action order on a tie."""
        legal = list(view.legal_actions)
        if len(legal) == 1:
            return legal[0]
        rng = self.rng
        side = rules.side_of[view.seat]
        choices = len(legal) if isinstance(rules, LineRules) else min(len(legal), GRID_CANDIDATES)
        candidates, count, met = legal, self.first_batch(rules, view, choices), 0
        samples: dict[int, list[float]] = {a: [] for a in legal}  # per action, its value in each world met
        while True:
            batch = [(self.sample(rules, game, view, rng), rng.getrandbits(64)) for _ in range(count)]
            if not met and not isinstance(rules, LineRules) and len(legal) > GRID_CANDIDATES:
                candidates = grid_candidates(rules, batch[0][0], legal, rng)
            for values in self.batch_values(rules, batch, candidates, side):
                for action, value in zip(candidates, values, strict=True):
                    samples[action].append(value)
            met += count
            stage = self.next_stage(candidates, samples, met)
            if stage is None:
                break
            candidates, count = stage
        totals = {a: sum(samples[a]) for a in candidates}
        best = max(totals.values())
        return next(a for a in candidates if totals[a] == best)

    def batch_values(
        self, rules: TableRules, batch: list[tuple[Any, int]], actions: list[int], side: int
    ) -> list[list[float]]:
        """:meth:`world_values` of every (world, seed) of a stage, in order (``search``: all
        by rollouts, :meth:`rollout_values`)."""
        return self.rollout_values(rules, batch, actions, side)

    def rollout_values(
        self, rules: TableRules, batch: list[tuple[Any, int]], actions: list[int], side: int
    ) -> list[list[float]]:
        """:meth:`world_values` of every (world, seed) by rollouts: on the table's batched
        kernel where it has one and the batch is large enough to pay
        (:class:`~domino_env.vector.rollouts.GreedyRollouts`, the same numbers), else a world
        at a time."""
        batched = self._batched(rules) if len(batch) * len(actions) >= MIN_ROWS else None
        if batched is None:
            return [self.world_values(rules, world, seed, actions, side) for world, seed in batch]
        worlds = [world for world, _ in batch]
        before = [standing(rules, world) for world in worlds]
        values = batched.values(worlds, [seed for _, seed in batch], actions, side, before)
        return [row.tolist() for row in values]

    def _batched(self, rules: TableRules) -> GreedyRollouts | None:
        """The batched rollouts of this table (built once a table), or None where the rules
        have none or this agent rolls out by a rule, values or worlds' values of its own."""
        own = self.playout_key is not None or self.leaf_value is not None
        if own or type(self).world_values is not SearchAgent.world_values:
            return None
        return batched_rollouts(rules)

    def world_values(
        self, rules: TableRules, world: Any, seed: int, actions: list[int], side: int
    ) -> list[float]:
        """The value to ``side`` of each action in one sampled ``world``: a greedy rollout
        after it, seeded alike for every action (common random numbers)."""
        before = standing(rules, world)
        values = []
        for action in actions:
            sim = world.clone()
            rules.apply(sim, action)
            values.append(
                rollout_value(
                    rules, sim, side, before, random.Random(seed), self.playout_key, self.leaf_value
                )
            )
        return values

    def sample(self, rules: TableRules, game: Any, view: SeatView, rng: random.Random) -> Any:
        """One world to search: the rules' ``sample_world``, which keeps of ``game`` nothing the
        seat cannot know (``benchmarks/ceiling.py`` overrides it with worlds that cheat, to measure
        what knowing the hidden tiles is worth)."""
        return rules.sample_world(game, view, rng)

    def first_batch(self, rules: TableRules, view: SeatView, choices: int) -> int:
        """How many worlds every one of ``choices`` candidate actions meets first at the
        decision of ``view`` (``search``: :attr:`worlds`)."""
        return self.worlds

    def next_stage(
        self, candidates: list[int], samples: dict[int, list[float]], met: int
    ) -> tuple[list[int], int] | None:
        """After the candidates met the same ``met`` worlds (``samples``: each action's value
        in each, in order): the candidates to go on with and how many more worlds they meet,
        or None to decide now (``search``: always; the stronger tiers halve,
        :mod:`domino_env.agents.expert`)."""
        return None


def batched_rollouts(rules: TableRules) -> GreedyRollouts | None:
    """The batched rollouts of ``rules``' table (one per table kind and options, kept), or None
    where :class:`~domino_env.vector.rollouts.GreedyRollouts` refuses it."""
    key = (rules.name, tuple(sorted(dataclasses.asdict(rules.options).items())))
    if key not in _BATCHED:
        _BATCHED[key] = None if GreedyRollouts.refusal(rules) else GreedyRollouts(rules)
    return _BATCHED[key]


_BATCHED: dict[tuple[str, tuple[tuple[str, Any], ...]], GreedyRollouts | None] = {}


def grid_candidates(rules: TableRules, world: Any, legal: list[int], rng: random.Random) -> list[int]:
    """The :data:`GRID_CANDIDATES` placements the greedy rule rates best in a sampled ``world``
    (what they score now, then the tile's pips: both public), ties in an order shuffled by ``rng``."""
    shuffled = legal[:]
    rng.shuffle(shuffled)
    shuffled.sort(key=lambda a: rules.greedy_key(world, a), reverse=True)  # (stable: ties stay shuffled)
    return sorted(shuffled[:GRID_CANDIDATES])


def standing(rules: TableRules, state: Any) -> list[int]:
    """Per side, the score a rollout's value compares: the written score, plus in Osel the
    points remembered (written once the score opens)."""
    scores: list[int] = state.scores[:]
    remembered = getattr(getattr(state, "extra", None), "remembered", None)
    if remembered is not None:
        for seat, points in enumerate(remembered):
            scores[rules.side_of[seat]] += points
    return scores


def rollout_value(
    rules: TableRules,
    sim: Any,
    side: int,
    before: list[int],
    rng: random.Random,
    key: Key | None = None,
    value: Value | None = None,
) -> float:
    """Play ``sim`` out (:func:`play_out`) and return its value to ``side`` (the module
    docstring; or ``value``'s): the score change against the other sides' mean, signed, plus
    ``match_target`` times the match outcome if it ended."""
    play_out(rules, sim, rng, key)
    return (value or round_value)(rules, sim, side, before)


def play_out(rules: TableRules, sim: Any, rng: random.Random, key: Key | None = None) -> None:
    """Play ``sim`` to the end of its round by the greedy rule (or ``key``) for every seat, ties
    broken by ``rng``."""
    greedy_key, choice = key or rules.greedy_key, rng.choice
    while not sim.round_over:
        legal = sim.legal
        if len(legal) == 1:
            move = legal[0]
        else:
            keys = [greedy_key(sim, a) for a in legal]
            best = max(keys)
            ties = [a for a, k in zip(legal, keys, strict=True) if k == best]
            move = ties[0] if len(ties) == 1 else choice(ties)
        rules.apply(sim, move)


def round_value(rules: TableRules, sim: Any, side: int, before: list[int]) -> float:
    """The value to ``side`` of ``sim``, a state whose round is over: its score change since
    ``before`` against the other sides' mean (signed by ``lower_score_wins``), plus
    ``match_target`` times the match outcome if the match ended."""
    after = standing(rules, sim)
    change = [a - b for a, b in zip(after, before, strict=True)]
    others = (sum(change) - change[side]) / (len(change) - 1)
    value = float(change[side] - others)
    if rules.lower_score_wins:
        value = -value
    if sim.match_over:
        value += rules.match_target * rules.outcome(rules.match_keys(sim))[side]
    return value
