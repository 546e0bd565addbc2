"""The agent names that point at a trained policy: a checkpoint file, a run folder, or a
policy-guided search ``search:[N:]<checkpoint>``. Below everything that loads them, so that a
config can check the names it holds without importing the loader (which reads configs)."""

from __future__ import annotations

import os
from pathlib import Path

from domino_env.agents import AGENTS, DEFAULT_WORLDS, MOST_WORLDS, SEARCH_NAMES, is_builtin, is_worlds_count

GUIDED_PREFIX = "search:"


def parse_guided_name(name: str) -> tuple[int, str] | None:
    """(worlds, checkpoint) of ``search:<checkpoint>`` or ``search:N:<checkpoint>``; None for a
    name of another form (a baseline, ``search:N``, a checkpoint). N outside 1 to
    :data:`~domino_env.agents.MOST_WORLDS` raises ValueError saying what is allowed."""
    if not name.startswith(GUIDED_PREFIX):
        return None
    rest = name[len(GUIDED_PREFIX) :]
    head, sep, tail = rest.partition(":")
    if sep and head.isascii() and head.isdigit():
        if not is_worlds_count(head):
            raise ValueError(
                f"agent {name!r}: the number of worlds N in search:N:CHECKPOINT must be an integer "
                f"from 1 to {MOST_WORLDS} (plain search:CHECKPOINT uses {DEFAULT_WORLDS})"
            )
        return int(head), tail
    return None if not rest or rest.isdigit() else (DEFAULT_WORLDS, rest)


def policy_path(spec: str | os.PathLike[str]) -> Path | None:
    """None for a built-in agent's name; else the checkpoint file or run folder ``spec`` names.
    A name that is neither raises ValueError saying what is allowed."""
    if is_builtin(str(spec)):  # a baseline, search or search:N (a malformed search:... raises)
        return None
    guided = parse_guided_name(str(spec))
    path = Path(spec if guided is None else guided[1])
    if not path.exists():
        raise ValueError(
            f"agent {str(spec)!r} is not {' or '.join(AGENTS)} (nor {SEARCH_NAMES}, nor "
            "search:[N:]CHECKPOINT), and no checkpoint file or run folder of that name exists"
        )
    return path
