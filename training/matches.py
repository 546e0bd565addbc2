"""Seeded games between two agents, with the seats rotated: the one loop that
:func:`training.arena.head_to_head`, the evaluation's pairings and the trainer's own
evaluations all play, so their numbers agree game for game.

Game ``g`` is dealt from ``seed + g`` whoever plays, and the first agent takes seat ``g % n``
(at a partnership table, the partnership ``g % 2``), so neither side keeps the lead or a seat.
Wins and rewards are outcomes (the rank at the end), whatever reward the env is built with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from domino_env import DominoEnv
from domino_env.agents import Agent


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


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def seats_of_first(num_players: int, teams: bool, game_index: int) -> list[int]:
    """Seats played by the first agent in game ``game_index`` (rotating through the table)."""
    if teams:
        return [game_index % 2, game_index % 2 + 2]
    return [game_index % num_players]


def play_game(env: Any, agents: list[Agent], seed: int) -> tuple[int, int]:
    """Play one episode; returns (rounds played, decisions)."""
    env.reset(seed=seed)
    raw = env.unwrapped
    steps = 0
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(agents[raw.possible_agents.index(agent)](raw, env.observe(agent)))
        steps += 1
    return raw.public_state()["round"] + 1, steps


def win_share(rules: Any, outcomes: list[float], mine: list[int]) -> float:
    """1 for first place, 1/k for first place shared with k-1 other sides, else 0."""
    best = max(outcomes)
    if outcomes[mine[0]] != best:
        return 0.0
    tied = {rules.side_of[s] for s, r in enumerate(outcomes) if r == best and s not in mine}
    return 1.0 / (1 + len(tied))


@dataclass
class Match(Summary):
    """A match's :class:`Summary`, with the first agent's mean final score and its win share game
    by game (1 won, 0 lost, a fraction for a shared first place)."""

    mean_score: float = 0.0
    shares: list[float] = field(default_factory=list)


def play_match(
    env: DominoEnv,
    first: Agent,
    second: Agent,
    games: int,
    seed: int,
    on_game: Callable[[], object] | None = None,
) -> Match:
    """``first`` (one seat, or one partnership) against ``second`` in every other seat over
    ``games`` seeded episodes, seats rotated; ``on_game`` is called after every game (a
    progress bar's tick)."""
    rules = env.rules
    n = rules.num_players
    shares: list[float] = []
    reward = score = rounds = steps = 0.0
    for g in range(games):
        mine = seats_of_first(n, rules.teams, g)
        played, decisions = play_game(env, [first if s in mine else second for s in range(n)], seed + g)
        outcomes = env.outcomes()
        shares.append(win_share(rules, outcomes, mine))
        reward += outcomes[mine[0]]
        score += env.public_state()["scores"][mine[0]]
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
    )
