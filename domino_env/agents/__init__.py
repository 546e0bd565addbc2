"""Agents by name (no torch): the ``random`` and ``greedy`` baselines, the fair ``search``
agent (``search:N``: N sampled worlds per legal action; :mod:`domino_env.agents.search`), its
stronger tiers ``advanced`` and ``expert`` (:mod:`domino_env.agents.expert`), and what
plug-ins load.

An agent is called as ``agent(env, observation) -> action`` with the *unwrapped*
environment and the current agent's observation dict; ``random`` needs only the mask,
``greedy`` asks the rules what each legal move is worth right now.

:func:`make_agent` is the one place names become agents. A name that is no baseline goes to
the *agent loaders*: functions ``(name, env, seed) -> Agent | None`` that packages register
under the entry-point group ``domino_env.agents``. The trainer registers one for checkpoint
files and run folders (``pip install -e ".[train]"``), so ``domino_env`` imports nothing of
it and needs no torch, yet ``SingleAgentEnv(opponents="agents/classic.pt")`` works.

The baselines live in :mod:`domino_env.agents.baselines`; every public name is importable
from here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from importlib.metadata import entry_points

from domino_env.agents.baselines import Agent, GreedyAgent, RandomAgent, greedy_choice, legal_actions
from domino_env.agents.expert import TIER_NAMES, ExpertAgent, parse_tier_name
from domino_env.agents.search import (
    DEFAULT_WORLDS,
    MOST_WORLDS,
    SearchAgent,
    is_worlds_count,
    parse_search_name,
)
from domino_env.envs.base import DominoEnv

__all__ = [
    "AGENTS",
    "DEFAULT_WORLDS",
    "LOADER_GROUP",
    "MOST_WORLDS",
    "SEARCH_NAMES",
    "TIER_NAMES",
    "Agent",
    "AgentLoader",
    "ExpertAgent",
    "GreedyAgent",
    "RandomAgent",
    "SearchAgent",
    "agent_loaders",
    "greedy_choice",
    "is_builtin",
    "is_worlds_count",
    "legal_actions",
    "make_agent",
    "parse_search_name",
    "parse_tier_name",
]

AGENTS: dict[str, type[RandomAgent] | type[GreedyAgent]] = {"random": RandomAgent, "greedy": GreedyAgent}
# (the baselines; ``search``, ``search:N`` and the tiers are built in too, but kept out of
# AGENTS: what lists every baseline - a run's final evaluation, the ratings - should not start
# searching)
SEARCH_NAMES = f"search, search:N, {', '.join(TIER_NAMES)}"


def is_builtin(name: object) -> bool:
    """Is ``name`` an agent :func:`make_agent` builds itself (a baseline, ``search``,
    ``search:N``, ``advanced`` or ``expert``), needing no loader? A malformed ``search:...``
    or ``expert:...`` raises ValueError."""
    return isinstance(name, str) and (
        name in AGENTS or parse_search_name(name) is not None or parse_tier_name(name) is not None
    )


LOADER_GROUP = "domino_env.agents"  # the entry-point group of agent loaders
AgentLoader = Callable[[str, DominoEnv | None, int | None], Agent | None]


@cache
def agent_loaders() -> dict[str, AgentLoader | ImportError]:
    """The installed agent loaders by entry-point name (read once); a loader whose package
    cannot be imported (the trainer without the train extra) is kept as its ImportError."""
    loaders: dict[str, AgentLoader | ImportError] = {}
    for point in entry_points(group=LOADER_GROUP):
        try:
            loaders[point.name] = point.load()
        except ImportError as err:
            loaders[point.name] = err
    return loaders


def make_agent(name: str | os.PathLike[str], seed: int | None = None, env: DominoEnv | None = None) -> Agent:
    """The agent ``name`` names: a baseline, ``search``/``search:N`` or a search tier
    (``advanced``, ``expert``) seeded with ``seed``, or
    what an installed loader makes of it for ``env``'s table (the trainer's: a checkpoint file
    or a run folder).
    A name nobody takes raises ValueError listing what is known."""
    if isinstance(name, str) and name in AGENTS:
        return AGENTS[name](seed=seed)
    if isinstance(name, str) and (worlds := parse_search_name(name)) is not None:
        return SearchAgent(worlds, seed=seed)
    if isinstance(name, str) and (tier := parse_tier_name(name)) is not None:
        return ExpertAgent(tier, seed=seed)
    if not isinstance(name, (str, os.PathLike)):
        raise ValueError(f"an agent name must be a string or a path, got {name!r}")
    loaders = agent_loaders()
    for load in loaders.values():
        if not isinstance(load, ImportError) and (agent := load(str(name), env, seed)) is not None:
            return agent
    known = [
        f"{point} (unavailable: {load}; pip install -e '.[train]')"
        if isinstance(load, ImportError)
        else point
        for point, load in loaders.items()
    ]
    takes = f"; agent loaders: {', '.join(known)}" if known else ""
    raise ValueError(
        f"unknown agent {str(name)!r}: neither a baseline ({', '.join(AGENTS)}), "
        f"nor {SEARCH_NAMES} (N worlds per legal action, 1 to {MOST_WORLDS}, default "
        f"{DEFAULT_WORLDS}; the tiers stronger and slower), nor loaded{takes}"
    )
