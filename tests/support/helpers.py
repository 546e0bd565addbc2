"""Shared by the rules and API tests: tile notation (``"3-5"``, ``(5, 3)`` or ``"0-0 3-5 6-6"``),
fixed deals, making a move, and the tile a move lays; by the fairness tests: positions seat 0
cannot tell apart, dealt differently in what it cannot know; by the search tests: an episode
played by given agents; by the tests of ``benchmarks/`` scripts: loading one; and by the
tests of worker processes: whether a process still runs."""

from __future__ import annotations

import importlib.util
import random
import signal
import subprocess
import sys
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


def hidden_deal_positions(
    name: str, n: int, teams: bool, want: int = 4, alternatives: int = 2, **options: Any
) -> list[list[Any]]:
    """``want`` positions of random rounds where seat 0 chooses among several actions, each as a
    list of envs seat 0 cannot tell apart: the round as dealt and up to ``alternatives`` others
    dealt differently in every slot whose tile seat 0 cannot name now (another hand's, the
    boneyard's; in Blind its own unturned ones), played through the same actions to the same
    view of seat 0. Other deals are found by shuffling those tiles and replaying, kept where
    every action was legal and the view came out equal; each kept one is also asserted to show
    seat 0 the same observation. Fails unless ``want`` such positions are found in 12 rounds."""
    found: list[list[Any]] = []
    for seed in range(12):
        found += _positions_of_a_round(name, n, teams, seed, alternatives, {"episode": "round", **options})
        if len(found) >= want:
            return found[:want]
    raise AssertionError(f"{name} ({n} players, teams={teams}): {len(found)} of {want} positions found")


def _positions_of_a_round(
    name: str, n: int, teams: bool, seed: int, alternatives: int, options: dict[str, Any], tries: int = 200
) -> list[list[Any]]:
    """:func:`hidden_deal_positions` in one random round (seed ``seed``): up to four of seat
    0's choices, spread over the round, that have another deal."""
    rnd = random.Random(seed)
    rules = domino_env.make(name, num_players=n, teams=teams, **options).unwrapped.rules
    names = [f"{a}-{b}" for a, b in rules.tile_set.tiles]
    grid = domino_env.spec(name).table == "grid"
    order = [t for t in names if not (grid and t == "3-3")]  # (3D dominoes: 3-3 starts, public)
    rnd.shuffle(order)

    def start(order: list[str], actions: list[int]) -> Any:
        """A new env dealt ``order`` (hands one after another, then the boneyard; seat 0 leads),
        then ``actions`` played; None where one is not legal."""
        size = rules.hand_size
        deal: dict[str, Any] = {"hands": [order[i * size : (i + 1) * size] for i in range(n)]}
        deal.update(boneyard=order[n * size :], leader=0, **({"start": (3, 3)} if grid else {}))
        env = domino_env.make(name, num_players=n, teams=teams, **options)
        env.reset(seed=seed, options={"deal": deal})
        for action in actions:
            if all(env.terminations.values()) or not env.observe(env.agent_selection)["action_mask"][action]:
                return None
            env.step(action)
        return env

    env, actions, choices = start(order, []), [], []
    while not all(env.terminations.values()):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        if env.agent_selection == "player_0" and len(legal) > 1:
            choices.append(len(actions))
        actions.append(int(rnd.choice(legal)))
        env.step(actions[-1])
    picked = sorted({choices[i * (len(choices) - 1) // 3] for i in range(4)}) if choices else []
    positions = []
    for k in picked:
        first = start(order, actions[:k])
        view, observation = first.unwrapped.view(0), first.observe("player_0")
        named = view.hand | view.table | frozenset().union(*view.known_hands)
        slots = [i for i, t in enumerate(order) if names.index(t) not in named]
        games = [first]
        for _ in range(tries if len(slots) > 1 else 0):
            moved = [order[i] for i in slots]
            rnd.shuffle(moved)
            other = order[:]
            for i, t in zip(slots, moved, strict=True):
                other[i] = t
            alike = None if other == order else start(other, actions[:k])
            if alike is not None and alike.unwrapped.view(0) == view:
                seen = alike.observe("player_0")
                assert all(np.array_equal(seen[key], observation[key]) for key in observation), (
                    f"{name}: seat 0's observation differs between deals it cannot tell apart"
                )
                games.append(alike)
                if len(games) > alternatives:
                    break
        if len(games) > 1:
            positions.append(games)
    return positions


def assert_decides_alike(positions: list[list[Any]], make: Any) -> None:
    """At each position (:func:`hidden_deal_positions`), an agent made by ``make(env)`` in each
    env (the same seed each time) chooses the same action for seat 0."""
    for games in positions:
        actions = {make(env.unwrapped)(env.unwrapped, env.observe("player_0")) for env in games}
        assert len(actions) == 1, (games[0].unwrapped.rules.name, actions)


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
    sys.modules[spec.name] = module  # (as an import does: a dataclass looks its module up there)
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
