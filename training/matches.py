"""Seeded games between two agents, with the seats rotated: the one loop that
:func:`training.eval.arena.head_to_head`, the evaluation's pairings and the trainer's own
evaluations all play, so their numbers agree game for game.

Game ``g`` is dealt from ``seed + g`` whoever plays, and the first agent takes seat ``g % n``
(at a partnership table, the partnership ``g % 2``), so neither side keeps the lead or a seat.
With ``duplicate=True`` every deal is played once per seating instead (2 players: twice,
seats swapped; 3-4 single seats: each rotation; partners: both partnerships): game ``g`` is
dealt from ``seed + g // k`` with seating ``g % k``, and a match's later rounds are dealt by
the same shuffles whatever is played, so the luck of the deal falls on both agents alike and
cancels. Its intervals are then taken over deals (each deal's mean), not over games.
Wins and rewards are outcomes (the rank at the end), whatever reward the env is built with;
the margin is the first agent's final score less the mean of the other sides', signed so
that more is better. With a :class:`RecordFolder` every game is also written down as a game
record (:mod:`domino_env.records`), one JSON file each.
"""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scipy import stats
from tqdm import tqdm

from domino_env import DominoEnv, GameRecorder, write_record
from domino_env.agents import Agent
from domino_env.records import start_game


@dataclass
class Summary:
    games: int
    wins: float  # a shared first place counts as a fraction
    mean_reward: float
    mean_rounds: float
    steps: int

    @property
    def win_rate(self) -> float:
        return self.wins / self.games

    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games)


# Below this many deals' worth of wins (or of losses) a duplicate match's win rate takes Wilson's
# interval over the deals rather than a t-interval (the usual n*p >= 5 of a normal approximation).
EDGE_DEALS = 5


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def seatings(num_players: int, teams: bool) -> int:
    """How many seatings the first agent rotates through: partnerships 2, else one per seat."""
    return 2 if teams else num_players


def whole_deals(games: int, rules: Any) -> int:
    """``games`` rounded up to whole deals under duplicate deals (each deal once per seating)."""
    k = seatings(rules.num_players, rules.teams)
    return -(-games // k) * k


def mean_interval(values: list[float], level: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the mean of independent ``values`` at confidence ``level`` (nan
    with fewer than two)."""
    count = len(values)
    if count < 2:
        return math.nan, math.nan
    mean = sum(values) / count
    spread = statistics.stdev(values) / math.sqrt(count)
    half = float(stats.t.ppf((1 + level) / 2, count - 1)) * spread
    return mean - half, mean + half


def seats_of_first(num_players: int, teams: bool, game_index: int) -> list[int]:
    """Seats played by the first agent in game ``game_index`` (rotating through the table)."""
    if teams:
        return [game_index % 2, game_index % 2 + 2]
    return [game_index % num_players]


class Timed:
    """An agent with a stopwatch: its decisions and the seconds they took."""

    def __init__(self, agent: Agent) -> None:
        self.agent, self.name = agent, getattr(agent, "name", "agent")
        self.decisions, self.seconds = 0, 0.0

    def __call__(self, env: Any, observation: Any) -> int:
        start = time.perf_counter()
        action = self.agent(env, observation)
        self.seconds += time.perf_counter() - start
        self.decisions += 1
        return action


def play_game(
    env: Any, agents: list[Agent], seed: int, recorder: GameRecorder | None = None
) -> tuple[int, int]:
    """Play one episode (through ``recorder``, a recorder of ``env``, to write it down); returns
    (rounds played, decisions)."""
    move = start_game(env, seed, recorder)
    raw = env.unwrapped
    steps = 0
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        move(agents[raw.possible_agents.index(agent)](raw, env.observe(agent)))
        steps += 1
    return raw.public_state()["round"] + 1, steps


@dataclass(frozen=True)
class RecordFolder:
    """Where a pairing's games are written as game records, one JSON file a game, named so that
    they sort and say what they are: ``<variant>-<first>-vs-<second>-<game>.json``, e.g.
    ``classic-greedy-vs-random-deal0003-seat1.json`` (deal 3, dealt from seed + 3, the first
    agent in seat 1)."""

    folder: Path
    variant: str
    options: dict[str, Any]  # the table's, as the env was made with them
    labels: tuple[str, str] = ("first", "second")  # the two agents' names

    def pairing(self, first: str, second: str) -> RecordFolder:
        """The same folder and table for the games of ``first`` against ``second``."""
        return replace(self, labels=(first, second))

    @property
    def stem(self) -> str:
        """The pairing's part of the file names (a name's characters outside letters, digits,
        ``.``, ``_``, ``+`` and ``-`` become ``_``)."""
        first, second = (re.sub(r"[^\w.+-]+", "_", label, flags=re.ASCII) for label in self.labels)
        return f"{self.variant}-{first}-vs-{second}"

    def recorder(self, env: Any, mine: list[int]) -> GameRecorder:
        """A recorder of a game where the first agent holds the seats ``mine``."""
        first, second = self.labels
        names = [first if seat in mine else second for seat in range(len(env.possible_agents))]
        return GameRecorder(env, self.options, names)

    def path(self, game: str) -> Path:
        """The file of the pairing's game ``game`` (``deal0003-seat1``)."""
        return self.folder / f"{self.stem}-{game}.json"


def win_share(rules: Any, outcomes: list[float], mine: list[int]) -> float:
    """1 for first place, 1/k for first place shared with k-1 other sides, else 0."""
    best = max(outcomes)
    if outcomes[mine[0]] != best:
        return 0.0
    tied = {rules.side_of[s] for s, r in enumerate(outcomes) if r == best and s not in mine}
    return 1.0 / (1 + len(tied))


@dataclass
class Match(Summary):
    """A match's :class:`Summary`, with the first agent's mean final score, and game by game its
    win share (1 won, 0 lost, a fraction for a shared first place) and margin; ``per_deal``
    games in a row share a deal (1: every game its own deal; duplicate: the seatings); each
    agent's decisions and the seconds they took (``[first, second]``)."""

    mean_score: float = 0.0
    shares: list[float] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)
    per_deal: int = 1
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])

    def ms_per_decision(self, side: int = 0) -> float:
        """Milliseconds per decision of the first agent (``side`` 1: the second)."""
        return 1000 * self.seconds[side] / self.decisions[side] if self.decisions[side] else math.nan

    def _by_deal(self, values: list[float]) -> list[float]:
        k = self.per_deal
        return [sum(values[i : i + k]) / k for i in range(0, len(values), k)]

    def deal_shares(self) -> list[float]:
        """Each deal's mean win share (a game's own, without duplicate deals)."""
        return self._by_deal(self.shares)

    def interval(self) -> tuple[float, float]:
        """95% interval of the win rate: Wilson's over independent games; with duplicate deals a
        t-interval over the deals' mean shares (the games of one deal are not independent), or
        Wilson's over the deals (a deal's share lies in [0, 1], so its variance is at most
        Wilson's) where the t-interval fails: every deal went the same way (it would have no
        width: ten deals all won are not a certainty), or fewer than ``EDGE_DEALS`` deals'
        worth of wins or of losses (near 0% or 100% it covers far less than 95%: 85% at a true
        98.5% over 100 deals, in simulation)."""
        if self.per_deal == 1:
            return wilson_interval(self.wins, self.games)
        shares = self.deal_shares()
        won = sum(shares)
        if len(set(shares)) <= 1 or min(won, len(shares) - won) < EDGE_DEALS:
            return wilson_interval(won, len(shares))
        return mean_interval(shares)  # (inside [0, 1]: with EDGE_DEALS' worth each way it cannot leave it)

    @property
    def margin(self) -> float:
        return sum(self.margins) / max(len(self.margins), 1)

    def margin_interval(self) -> tuple[float, float]:
        """95% interval of the mean margin, paired by deal under duplicate deals."""
        return mean_interval(self._by_deal(self.margins))


def play_match(
    env: DominoEnv,
    first: Agent,
    second: Agent,
    *,
    games: int,
    seed: int,
    on_game: Callable[[], object] | None = None,
    duplicate: bool = False,
    records: RecordFolder | None = None,
) -> Match:
    """``first`` (one seat, or one partnership) against ``second`` in every other seat over
    ``games`` seeded episodes, seats rotated (``duplicate``: each deal once per seating, so
    ``games`` must be a multiple of :func:`seatings`); ``on_game`` is called after every game (a
    progress bar's tick); ``records``: each game is written there too."""
    rules = env.rules
    n = rules.num_players
    k = seatings(n, rules.teams) if duplicate else 1
    if games % k:
        raise ValueError(f"duplicate deals play each deal {k} times here: games must be a multiple of {k}")
    sign = -1.0 if rules.lower_score_wins else 1.0
    timed = Timed(first), Timed(second)
    shares: list[float] = []
    margins: list[float] = []
    reward = score = rounds = steps = 0.0
    for g in range(games):
        deal, seating = (g // k, g % k) if duplicate else (g, g)
        mine = seats_of_first(n, rules.teams, seating)
        recorder = None if records is None else records.recorder(env, mine)
        played, decisions = play_game(
            env, [timed[0] if s in mine else timed[1] for s in range(n)], seed + deal, recorder
        )
        if records is not None and recorder is not None:
            write_record(recorder.record(), records.path(f"deal{deal:04d}-seat{mine[0]}"))
        outcomes = env.outcomes()
        shares.append(win_share(rules, outcomes, mine))
        reward += outcomes[mine[0]]
        scores = env.public_state()["scores"]  # per seat, each its side's
        others = {rules.side_of[s]: scores[s] for s in range(n) if s not in mine}
        margins.append(sign * (scores[mine[0]] - sum(others.values()) / len(others)))
        score += scores[mine[0]]
        rounds += played
        steps += decisions
        if on_game is not None:
            on_game()
    count = max(games, 1)
    return Match(
        games=games,
        wins=sum(shares),
        mean_reward=reward / count,
        mean_rounds=rounds / count,
        steps=int(steps),
        mean_score=score / count,
        shares=shares,
        margins=margins,
        per_deal=k,
        decisions=[t.decisions for t in timed],
        seconds=[t.seconds for t in timed],
    )


def duplicate_summary(env: DominoEnv, first: Agent, second: Agent, *, games: int, seed: int) -> str:
    """``first`` against ``second`` over ``games`` whole matches on duplicate deals (rounded up
    to whole deals), with a progress bar: the win rate and its 95% Wilson interval over deals,
    in a line (the benchmark scripts' measurement)."""
    games = whole_deals(games, env.rules)
    with tqdm(total=games, unit="game") as bar:
        match = play_match(
            env, first, second, games=games, seed=seed, on_game=lambda: bar.update(1), duplicate=True
        )
    shares = match.deal_shares()
    low, high = wilson_interval(sum(shares), len(shares))
    return (
        f"{match.win_rate:.1%} [{low:.1%}, {high:.1%}] of {match.games} whole matches "
        f"({len(shares)} duplicate deals, seed {seed})"
    )
