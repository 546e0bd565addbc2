"""Shared by the rules and API tests: tile notation (``"3-5"``, ``(5, 3)`` or ``"0-0 3-5 6-6"``),
fixed deals, making a move, and the tile a move lays; by the search tests: games played in
lockstep to show a seat's decisions do not depend on what it cannot know, and an episode
played by given agents; by the tests of ``benchmarks/`` scripts: loading one; and by the
tests of worker processes: whether a process still runs."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

import domino_env

Tile = tuple[int, int]


def tile(t: str | Tile) -> Tile:
    """``"a-b"`` or ``(a, b)`` in either order -> ``(min, max)``."""
    a, b = (int(x) for x in t.split("-")) if isinstance(t, str) else t
    return (min(a, b), max(a, b))


def tiles(names: str | Sequence[str | Tile]) -> list[Tile]:
    """A space-separated string or a sequence of tiles -> canonical pairs."""
    return [tile(t) for t in (names.split() if isinstance(names, str) else names)]


def pips(names: str | Sequence[str | Tile]) -> int:
    return sum(a + b for a, b in tiles(names))


ALL_TILES = [(a, b) for a in range(7) for b in range(a, 7)]  # double-six, in id order


def deal(
    hands: Sequence[str | Sequence[str | Tile]],
    leader: int | None = 0,
    first: str | Sequence[str] = (),
    **extra: Any,
) -> dict:
    """A fully fixed double-six deal: the hands (rows, in the blind games), then the boneyard
    (``first`` drawn first, the rest in id order), so no randomness is left; ``leader`` None
    leaves the opening to the rules; ``extra`` adds deal keys (``opening``)."""
    fixed = tiles(first)
    used = {t for hand in hands for t in tiles(hand)} | set(fixed)
    assert len(used) == sum(len(tiles(h)) for h in hands) + len(fixed), "a tile is dealt twice"
    out: dict = {
        "hands": [tiles(h) for h in hands],
        "boneyard": fixed + [t for t in ALL_TILES if t not in used],
    }
    if leader is not None:
        out["leader"] = leader
    out.update(extra)
    return out


def play(
    env, move: str | Tile, arm: str | None = None, seat: int | None = None, face_down: bool = False
) -> dict:
    """Make the one legal move of the seat to move that lays tile ``move`` (on ``arm``, face up
    unless ``face_down``), or whose kind is ``move`` (``"stop"``, ``"draw"``...); ``seat``, when
    given, must be the seat to move. Returns the move (as ``legal_moves()`` describes it)."""
    u = env.unwrapped
    if seat is not None:
        assert u.game.current == seat, f"expected seat {seat} to move, seat {u.game.current} is to move"
        assert env.agent_selection == f"player_{seat}"
    legal = u.legal_moves()
    if isinstance(move, str) and "-" not in move:
        options = [m for m in legal if m["kind"] == move]
    else:
        want = tile(move)
        options = [
            m
            for m in legal
            if m["tile"] == want and (arm is None or m["arm"] == arm) and m["face_down"] == face_down
        ]
    described = sorted(
        str((m["tile"], m["arm"], m["face_down"]) if m["kind"] == "play" else m["kind"]) for m in legal
    )
    assert len(options) == 1, f"{move} {arm or ''}: not exactly one legal move among {described}"
    env.step(options[0]["action"])
    return options[0]


def laid(rules: Any, action: int) -> str:
    """The tile play ``action`` lays, as ``"a-b"``: read from the rules' ``action_tile``, not
    computed from the action id."""
    a, b = rules.tile_set.tiles[rules.action_tile[action]]
    return f"{a}-{b}"


def play_random(env, steps: int, rnd: Any) -> int:
    """Make up to ``steps`` random legal moves (``rnd``: a ``random.Random``); stop at the end of
    the episode. Returns the moves made."""
    done = 0
    for _ in range(steps):
        if all(env.terminations.values()):
            break
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(rnd.choice(legal)))
        done += 1
    return done


def check_seats_through_play(env, check: Any, games: int, rnd: Any, most_moves: int) -> None:
    """Play ``games`` episodes (seeds 0, 1, ...) by random legal moves, calling ``check(seat)``
    for every seat before each random run of 1 to ``most_moves - 1`` moves."""
    for game in range(games):
        env.reset(seed=game)
        while not all(env.terminations.values()):
            for seat in range(env.unwrapped.rules.num_players):
                check(seat)
            play_random(env, rnd.randrange(1, most_moves), rnd)


def decide_in_lockstep(envs, agents, steps: int = 60) -> int:
    """Play games that differ only in what seat 0 cannot know in lockstep: seat 0 by its agent
    in each game (seeded alike), the others by the same action in every game, while it is legal
    in all of them and seat 0's views stay equal; assert that seat 0 decides alike in every
    game. Returns the decisions with a choice checked."""
    raws = [env.unwrapped for env in envs]
    decisions = 0
    for _ in range(steps):
        if any(all(env.terminations.values()) for env in envs):
            break
        views = [raw.view(0) for raw in raws]
        if any(v != views[0] for v in views[1:]):
            break
        current = {raw.game.current for raw in raws}
        assert len(current) == 1  # (equal views: the same seat to move)
        if current == {0}:
            actions = [
                agent(raw, env.observe("player_0"))
                for agent, raw, env in zip(agents, raws, envs, strict=True)
            ]
            assert len(set(actions)) == 1, actions
            decisions += len(views[0].legal_actions) > 1
            action = actions[0]
        else:
            legal = [set(raw.game.legal) for raw in raws]
            common = set.intersection(*legal)
            if any(lg != legal[0] for lg in legal) or not common:
                break
            action = min(common)
        for env in envs:
            env.step(action)
    return decisions


def play_with(name: str, agents: Sequence[Any], seed: int, **options: Any) -> tuple[list[int], Any]:
    """One episode of ``name`` with ``agents[i]`` in seat i, every action checked legal: the
    actions played and the finished env."""
    env = domino_env.make(name, **options)
    env.reset(seed=seed)
    played = []
    while not all(env.terminations.values()):
        agent = env.agent_selection
        obs = env.observe(agent)
        action = agents[env.possible_agents.index(agent)](env.unwrapped, obs)
        assert obs["action_mask"][action], (name, action)
        played.append(action)
        env.step(action)
    return played, env


def load_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (the scripts are no package)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not); reads /proc."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that still run (its threads' children, from /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
    return [child for child in found if alive(child)]


def assert_killing_ends_them(main: subprocess.Popen[Any], workers: list[int]) -> None:
    """SIGTERM ``main`` (no clean-up runs in it: it is just gone) and assert that every one of
    ``workers``, its processes, ends within 10 s rather than work on for nobody."""
    assert all(alive(pid) for pid in workers)
    main.send_signal(signal.SIGTERM)
    main.wait(timeout=30)
    assert all_end(workers), "a worker outlived the main process"


def all_end(pids: list[int], within: float = 10) -> bool:
    """Whether every one of the processes ``pids`` has ended ``within`` seconds from now."""
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(alive(pid) for pid in pids)
