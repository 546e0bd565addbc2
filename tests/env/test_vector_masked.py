"""The torch kernel (``backend="torch"``, ``domino_env.vector.masked``) steps exactly as the chain kernel.

Both kernels are dealt with the same seed and stepped with the same random legal actions; every
step's outputs (observations bit for bit, masks, rewards, ``done``, every info array), the
tables' arrays (the torch kernel's snapshot against the chain kernel's arrays of the same names)
and, every few steps, the global state must agree, over every kind of Classic, Blitz, All
Fives, Osel, Cross and Metro table it plays; each game's own events are checked to happen (All
Fives' spinner arms, a count ending the match, the lot; Blitz's and Osel's multi-tile turns and
``stop``; Osel's face-down doubles, its scores opening, remembered points lost by going out,
a lone 0-0, a fish; Cross's four arms and a seat made to start one; Metro's new and closed
ends, Metros, domino-Metros clearing Metros, open doubles leaving no live end, moles and the
lot for a deal with no double from 1-1 up); forced scores (set through both kernels'
snapshots) end Blitz's and Osel's matches and make Osel's remembered points open or be lost. A
few runs go against the scalar env itself (``tests/env/test_vector.py``'s harness). CUDA runs
only where ``torch.cuda.is_available()``.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from domino_env import vector
from domino_env.core.line import Spinner
from domino_env.registry import raw_env
from domino_env.rules.chain import ChainRules
from domino_env.rules.parts import Opening, after_a_double, winner_leads
from domino_env.vector.chain import ChainKernel
from tests.env.test_vector import (
    STEP_INFO,
    STEP_OUTPUTS,
    assert_all_same,
    assert_same,
    assert_same_stream,
    legal_choice,
    play_both,
    replay,
    table_id,
)

torch = pytest.importorskip("torch")

NUM_ENVS = 24
STEPS = 250
STATE_EVERY = 25
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")

# Every kind of table the torch kernel plays, for Classic, All Fives, Blitz and Osel: 2, 3 and
# 4 players, partners (not in Osel), draw and block (All Fives and Osel always draw), a round or
# a match an episode, both reward modes, and the smallest and largest sets; Cross's 4 players
# (every tile dealt: no draws) with and without partners on its two sets (double-six and
# double-seven: the sets 4 players share out; a match without partners, slower to end, in
# test_a_round_that_writes_the_target_ends_the_match); Metro's 2 and 3 players (always drawing, no
# partners), the Metro penalty of 2, a match to 3 (so that 3 players finish some), the
# double-two and double-three presets.
TABLES: list[tuple[str, dict[str, Any]]] = [
    ("classic", {"num_players": 2, "episode": "round", "reward": "outcome"}),
    ("classic", {"num_players": 2, "draw": False, "episode": "match", "reward": "points"}),
    ("classic", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("classic", {"num_players": 3, "draw": False, "episode": "round", "reward": "points"}),
    ("classic", {"num_players": 4, "episode": "round", "reward": "outcome"}),
    ("classic", {"num_players": 4, "draw": False, "episode": "match", "reward": "points"}),
    ("classic", {"num_players": 4, "teams": True, "episode": "match", "reward": "outcome"}),
    ("classic", {"num_players": 4, "teams": True, "draw": False, "episode": "round", "reward": "points"}),
    ("classic", {"num_players": 2, "max_pip": 2, "hand_size": 2, "draw": False, "episode": "round"}),
    ("classic", {"num_players": 3, "max_pip": 9, "hand_size": 9, "episode": "match", "reward": "points"}),
    ("all_fives", {"num_players": 2, "episode": "round", "reward": "outcome"}),
    ("all_fives", {"num_players": 2, "episode": "match", "reward": "points"}),
    ("all_fives", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("all_fives", {"num_players": 3, "episode": "round", "reward": "points"}),
    ("all_fives", {"num_players": 4, "episode": "round", "reward": "outcome"}),
    ("all_fives", {"num_players": 4, "episode": "match", "reward": "points"}),
    ("all_fives", {"num_players": 4, "teams": True, "episode": "match", "reward": "outcome"}),
    ("all_fives", {"num_players": 4, "teams": True, "episode": "round", "reward": "points"}),
    ("all_fives", {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"}),
    ("all_fives", {"num_players": 3, "max_pip": 9, "hand_size": 9, "episode": "match", "reward": "points"}),
    ("blitz", {"num_players": 2, "episode": "round", "reward": "outcome"}),
    ("blitz", {"num_players": 2, "draw": False, "episode": "match", "reward": "points"}),
    ("blitz", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("blitz", {"num_players": 4, "draw": False, "episode": "round", "reward": "outcome"}),
    ("blitz", {"num_players": 4, "teams": True, "episode": "match", "reward": "points"}),
    ("blitz", {"num_players": 4, "teams": True, "draw": False, "episode": "round", "reward": "points"}),
    ("blitz", {"num_players": 2, "max_pip": 2, "hand_size": 2, "draw": False, "episode": "round"}),
    ("blitz", {"num_players": 3, "max_pip": 9, "hand_size": 9, "episode": "match", "reward": "points"}),
    ("osel", {"num_players": 2, "episode": "round", "reward": "outcome"}),
    ("osel", {"num_players": 2, "episode": "match", "reward": "points"}),
    ("osel", {"num_players": 3, "episode": "match", "reward": "outcome"}),
    ("osel", {"num_players": 3, "episode": "round", "reward": "points"}),
    ("osel", {"num_players": 4, "episode": "round", "reward": "outcome"}),
    ("osel", {"num_players": 4, "episode": "match", "reward": "points"}),
    ("osel", {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"}),
    ("osel", {"num_players": 3, "max_pip": 9, "hand_size": 9, "episode": "match", "reward": "points"}),
    ("cross", {"num_players": 4, "episode": "round", "reward": "outcome"}),
    ("cross", {"num_players": 4, "teams": True, "episode": "match", "reward": "points"}),
    ("cross", {"num_players": 4, "max_pip": 7, "episode": "round", "reward": "points"}),
    ("cross", {"num_players": 4, "teams": True, "max_pip": 7, "episode": "match", "reward": "outcome"}),
    ("metro", {"num_players": 2, "episode": "round", "reward": "outcome"}),
    ("metro", {"num_players": 2, "episode": "match", "reward": "points"}),
    ("metro", {"num_players": 3, "match_target": 3, "episode": "match", "reward": "outcome"}),
    ("metro", {"num_players": 3, "metro_penalty": 2, "episode": "round", "reward": "points"}),
    ("metro", {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"}),
    ("metro", {"num_players": 3, "max_pip": 3, "hand_size": 3, "episode": "match", "reward": "points"}),
]
IDS = [table_id(table) for table in TABLES]
# (each game's 4 players: Classic's and All Fives' partners and a match with points, Blitz's
# partners, Osel's match with points, Cross's partners; Metro's 3 players, a match)
ON_CUDA = [4, 6, 11, 16, 24, 33, 37, 42]
METRO_TINY = TABLES[44]  # (double-two, 2 tiles a hand: 1 deal in 15 holds no 1-1 nor 2-2)
# (4 players without partners: a match to 101 ends later than 250 steps; with forced scores)
CROSS_MATCH = ("cross", {"num_players": 4, "episode": "match", "reward": "points"})


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """One intra-op thread: small batches gain nothing from more, and on a shared machine torch's
    thread pool makes every op wait on the busiest core."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def play_kernels(
    name: str,
    options: dict[str, Any],
    num_envs: int = NUM_ENVS,
    steps: int = STEPS,
    seed: int = 0,
    device: str = "cpu",
    arrays: dict[str, Any] | None = None,
) -> Counter[str]:
    """Step the torch and the chain kernel side by side, comparing everything; what happened
    (``_events``: episodes ended, rounds ended inside a match, each game's own events...).
    ``arrays``: tables' arrays (``scores``, ``remembered``...) set to these values after the
    reset, in both kernels through their snapshots."""
    chain: Any = vector.make(name, num_envs, backend="kernel", **options)
    masked = vector.make(name, num_envs, backend="torch", device=device, **options)
    assert masked.backend == "torch" and chain.backend == "chain"
    want, got = chain.reset(seed=seed), masked.reset(seed=seed)
    if arrays is not None:
        snaps = [chain.snapshot(), masked.snapshot()]
        for snap in snaps:
            for key, value in arrays.items():
                snap["arrays"][key][:] = value
        want, got = chain.restore(snaps[0]), masked.restore(snaps[1])
    reset_outputs = (("obs", np.float32), ("mask", bool), ("player", np.int64))
    assert_all_same(
        reset_outputs,
        (got[0], got[1], got[2]["player"]),
        (want[0], want[1], want[2]["player"]),
        "after reset",
    )
    rng = np.random.default_rng(seed)
    mask, seen = want[1], _spy_round_ends(chain)
    for t in range(steps):
        actions = legal_choice(rng, mask)
        when = f"at step {t} (seed {seed}, actions {actions.tolist()})"
        watched = _watch(chain, actions)
        theirs, mine = chain.step(actions), masked.step(actions)
        shown = [(*outputs[:4], *(outputs[4][key] for key in STEP_INFO)) for outputs in (mine, theirs)]
        assert_all_same(STEP_OUTPUTS, shown[0], shown[1], when)
        for key, array in masked.snapshot()["arrays"].items():
            assert np.array_equal(array, getattr(chain, key)), f"the tables' {key} differ {when}"
        if t % STATE_EVERY == 0 or t == steps - 1:
            assert_same("state", masked.state(), chain.state(), np.float32, when)
        mask = theirs[1]
        seen += _events(chain, theirs, watched)
    return seen


def _watch(chain: Any, actions: np.ndarray) -> dict[str, np.ndarray]:
    """Per table, what ``actions`` are about to do (bool[B]): ``reaching``, All Fives: a count
    that takes the mover's side to the target while the mover keeps a tile (the rules'
    immediate points: ``legal_points``); ``stop``; ``face_down``, Osel and Metro: a double laid face down;
    ``out_on``: the mover lays its last tile in a multi-tile turn, after a tile of the turn."""
    rules, B = chain.rules, chain.num_envs
    mover = chain.current
    held = np.bitwise_count(chain.hands[np.arange(B), mover])
    watched = {
        "reaching": np.zeros(B, bool),
        "stop": actions == chain._stop,
        "face_down": chain._lay_down[actions],
        "out_on": chain.continuing & (actions != chain._stop) & (held == 1),
    }
    if rules.name == "all_fives":
        rows, legal, points = chain.legal_points()
        made = points[legal == actions[rows]]  # (one legal action a row is the one played)
        side = np.asarray(rules.side_of)[mover]
        watched["reaching"] = (chain.scores[np.arange(B), side] + made >= rules.match_target) & (held >= 2)
    return watched


def _spy_round_ends(chain: Any) -> Counter[str]:
    """Count, in the chain kernel's round scoring as it goes (the returned Counter), Osel's and
    Metro's events (:func:`_spy_osel`, :func:`_spy_metro`)."""
    seen = Counter[str]()
    if chain.rules.name == "osel":
        _spy_osel(chain, seen)
    elif chain.rules.name == "metro":
        _spy_metro(chain, seen)
    return seen


def _spy_metro(chain: Any, seen: Counter[str]) -> None:
    """Metro: count in ``seen`` the Metros made (``metro``), the domino-Metros (``domino_metro``)
    and those that clear their maker's Metros (``cleared``, 3 players), the games a dead line
    ended with neither (``dead_double``: an open double left no live end) and those that ended
    with one seat left holding tiles (``mole``)."""
    end_places = chain._end_places

    def spied(tables: np.ndarray, maker: np.ndarray, cleared: np.ndarray, before: np.ndarray) -> Any:
        n, dead = chain.num_players, chain._line.fit[tables] == 0
        placed = (chain.places[tables] > 0).sum(axis=1)
        seen["metro"] += int((maker >= 0).sum())
        seen["domino_metro"] += int((cleared >= 0).sum())
        clears = (cleared >= 0) & (chain.metros[tables, np.maximum(cleared, 0)] > 0)
        seen["cleared"] += int(clears.sum()) if n == 3 else 0
        seen["dead_double"] += int((dead & (maker < 0) & (cleared < 0)).sum())
        seen["mole"] += int((~dead & (placed == n - 1)).sum())
        return end_places(tables, maker, cleared, before)

    chain._end_places = spied


def _spy_osel(chain: Any, seen: Counter[str]) -> None:
    """Osel: count in ``seen`` the rounds blocked (``fish``), the hands of a lone 0-0
    (``lone_blank``), the remembered points lost by going out before opening (``lost``) and
    the scores opened (``opens``)."""
    end_round = chain._end_round

    def spied(tables: np.ndarray, winner: np.ndarray, blocked: np.ndarray, before: np.ndarray) -> Any:
        hands = chain.hands[tables]
        opened, remembered = chain.opened[tables].copy(), chain.remembered[tables].copy()
        out = end_round(tables, winner, blocked, before)
        rows, seat = np.arange(len(tables)), np.maximum(winner, 0)  # (winner -1: blocked)
        seen["fish"] += int(blocked.sum())
        seen["lone_blank"] += int((hands == chain._blank_bit).sum())
        seen["lost"] += int(((winner >= 0) & ~opened[rows, seat] & (remembered[rows, seat] > 0)).sum())
        seen["opens"] += int((chain.opened[tables] & ~opened).sum())
        return out

    chain._end_round = spied


def _events(chain: Any, outputs: tuple[Any, ...], watched: dict[str, np.ndarray]) -> Counter[str]:
    """What a step of ``chain`` (``outputs``) showed: episodes ended, rounds ended inside a
    match, matches a count ended mid-round (``reaching``: they must), what ``_watch`` saw
    coming, the spinner's arms open and holding tiles, the seats laying on in a multi-tile
    turn, closed ends (once the step's rounds are dealt again), new matches led by lot where
    the rules have an opening order, Cross's seats made to start an arm though other tiles
    fit, Metro's lines with an end a double opened."""
    done, round_over = outputs[3], outputs[4]["round_over"]
    assert done[watched["reaching"]].all(), "a count reached the target and the match went on"
    assert round_over[watched["out_on"]].all(), "a seat laid its last tile and the round went on"
    seen = Counter(episodes=int(done.sum()), rounds=int((round_over & ~done).sum()))
    seen["count_ends"] = int(watched["reaching"].sum())
    for key in ("stop", "face_down", "out_on"):
        seen[key] = int(watched[key].sum())
    V = chain.rules.tile_set.num_values
    if chain.rules.spinner is not Spinner.NONE:
        seen["arms_open"] = int((chain.ends[:, 2] < V).sum())
        seen["arm_tiles"] = int((chain.length[:, 2:] > 0).any(axis=1).sum())
    seen["laying_on"] = int(chain.continuing.sum())
    seen["closed"] = int((chain.ends == V + 1).any(axis=1).sum())
    seen["lots"] = int((done & (chain.required == -1)).sum())
    if chain._arms_first:
        hand = chain.hands[np.arange(chain.num_envs), chain.current]
        fits = hand[:, None] & chain._suit[chain.ends]
        unstarted = (chain.ends < V) & (chain.length == 0)
        starts = (np.where(unstarted, fits, 0) != 0).any(axis=1)
        elsewhere = (np.where(unstarted, 0, fits) != 0).any(axis=1)
        seen["must_start"] = int((starts & elsewhere).sum())
    if chain._places:
        seen["opened_ends"] = int((chain.used > 2).sum())
    return seen


# --- exactness -----------------------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES, ids=IDS)
def test_the_torch_kernel_steps_exactly_as_the_chain_kernel(table: tuple[str, dict[str, Any]]) -> None:
    name, options = table
    seen = play_kernels(name, options)
    if options["episode"] == "round":
        assert seen["episodes"] > NUM_ENVS, "too few episodes ended: the autoreset went untested"
    else:
        assert seen["rounds"] > 0 and seen["episodes"] > 0, "no round ended inside a match, or no match ended"
    if name in ("all_fives", "osel"):  # the spinner's north and south arms opened, and tiles went on them
        assert seen["arms_open"] > 0, seen
        # (in All Fives' double-two set the spinner and its two sides hold every tile of its value)
        assert seen["arm_tiles"] > 0 or (name, options.get("max_pip")) == ("all_fives", 2), seen
    if name in ("blitz", "osel"):  # turns laid on, were stopped, and a seat went out in one
        assert seen["laying_on"] > 0 and seen["stop"] > 0 and seen["out_on"] > 0, seen
    if name == "cross":  # (the spinner's four arms open at once: the lead's)
        assert seen["arms_open"] > 0 and seen["arm_tiles"] > 0 and seen["must_start"] > 0, seen
    if name == "metro":  # doubles went face down, opened ends, closed ends; every way a game ends
        assert seen["face_down"] > 0 and seen["opened_ends"] > 0 and seen["closed"] > 0, seen
        assert seen["domino_metro"] > 0 and seen["dead_double"] > 0 and seen["mole"] > 0, seen
        assert seen["metro"] > 0 or options.get("max_pip") == 2, seen  # (two tiles a hand: rare)
        if options.get("max_pip") == 3:  # (3 players, a match: Metros made, then cleared)
            assert seen["cleared"] > 0, seen
        if (name, options) == METRO_TINY:
            assert seen["lots"] > 0, seen
    if name == "osel":  # doubles went face down and closed ends; rounds were fished, scores opened
        assert seen["face_down"] > 0 and seen["closed"] > 0 and seen["fish"] > 0, seen
        assert seen["opens"] > 0 or options.get("max_pip") == 2, seen  # (two tiles: at most 8 pips)
        assert seen["lone_blank"] > 0 or options.get("max_pip") == 9, seen
        if options["episode"] == "match":  # (a round episode starts with nothing remembered)
            assert seen["lost"] > 0, seen


@pytest.mark.parametrize("table", [TABLES[11], TABLES[16]], ids=[IDS[11], IDS[16]])
def test_a_count_that_reaches_the_target_ends_the_match_mid_round(table: tuple[str, dict[str, Any]]) -> None:
    """All Fives: every side 5 short of the target, so the first count of 5 or more ends the
    match there (unscored, the next match dealt), the mover still holding tiles."""
    name, options = table
    target = raw_env(name, **options).rules.match_target
    seen = play_kernels(name, options, steps=60, arrays={"scores": target - 5, "start": target - 5})
    assert seen["count_ends"] > NUM_ENVS // 2, seen


@pytest.mark.parametrize(
    ("table", "arrays"),
    [
        (TABLES[24], {"scores": 100, "start": 100}),
        (TABLES[30], {"scores": 120, "start": 120, "opened": True}),
        (TABLES[30], {"scores": 125, "start": 125, "remembered": [0, 7, 7]}),
        (CROSS_MATCH, {"scores": 100, "start": 100}),
    ],
    ids=[
        f"{IDS[24]}-1-short",
        f"{IDS[30]}-5-short-opened",
        f"{IDS[30]}-at-target-closed",
        f"{table_id(CROSS_MATCH)}-1-short",
    ],
)
def test_a_round_that_writes_the_target_ends_the_match(
    table: tuple[str, dict[str, Any]], arrays: dict[str, Any]
) -> None:
    """Blitz's and Cross's penalties (every side 1 short of 101) and Osel's written scores
    (every seat 5 short of 125, its score open) end most matches at their first round; with
    every written score at 125 and none open, the first round ends every match, the written
    scores tied unless a seat opens: the remembered points rank the seats."""
    name, options = table
    seen = play_kernels(name, options, steps=60, arrays=arrays)
    assert seen["episodes"] > NUM_ENVS // 2, seen


def test_osel_remembered_points_are_lost_going_out_or_open_a_score() -> None:
    """Osel: every seat remembers 12 points, its score not open: the seat that goes out loses
    them, a seat left with more than 12 pips writes them with its round's, the others
    remember more."""
    seen = play_kernels("osel", TABLES[29][1], steps=60, arrays={"remembered": 12})
    assert seen["lost"] > NUM_ENVS // 2 and seen["opens"] > NUM_ENVS // 2, seen


def test_all_fives_first_leader_is_drawn_by_lot() -> None:
    """All Fives' first round has no opening tile: a lot (the Dealer's, from each table's
    Generator, as the scalar env draws it) picks the leader, who leads any tile."""
    masked = vector.make("all_fives", 64, backend="torch", num_players=4)
    _, mask, info = masked.reset(seed=5)
    assert set(info["player"].tolist()) == {0, 1, 2, 3}
    snap = masked.snapshot()["arrays"]
    assert (snap["required"] == -1).all() and (snap["leader"] == info["player"]).all()
    hands = snap["hands"][np.arange(64), info["player"]]
    tiles = np.array([np.bitwise_count(hand) for hand in hands])
    assert (mask.sum(axis=1) == tiles).all()  # (every tile in hand, laid on the east end)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("classic", {"num_players": 2, "episode": "round"}),
        ("classic", {"num_players": 4, "teams": True, "episode": "match", "reward": "points"}),
        ("all_fives", {"num_players": 3, "episode": "round", "reward": "points"}),
        ("all_fives", {"num_players": 4, "teams": True, "episode": "match"}),
        ("blitz", {"num_players": 4, "teams": True, "episode": "match", "reward": "points"}),
        ("osel", {"num_players": 3, "episode": "match"}),
        ("cross", {"num_players": 4, "teams": True, "episode": "match", "reward": "points"}),
        ("metro", {"num_players": 2, "episode": "round"}),
        ("metro", {"num_players": 3, "max_pip": 3, "hand_size": 3, "episode": "match", "reward": "points"}),
    ],
    ids=[
        "classic-2p-round",
        "classic-4p-teams-match-points",
        "all_fives-3p-round-points",
        "all_fives-4p-teams-match",
        "blitz-4p-teams-match-points",
        "osel-3p-match",
        "cross-4p-teams-match-points",
        "metro-2p-round",
        "metro-3p-pip3-match-points",
    ],
)
def test_the_torch_kernel_plays_exactly_the_scalar_game(name: str, options: dict[str, Any]) -> None:
    ended, rounds = play_both(name, options, "torch", num_envs=4, steps=80)
    assert ended + rounds > 0


@pytest.mark.parametrize("name", ["classic", "all_fives"])
@pytest.mark.parametrize("seed", [0, 2**64 - 400], ids=["compiled-deals", "seeds-past-64-bits"])
def test_many_tables_deal_exactly_the_chain_kernels_deals(name: str, seed: int) -> None:
    """Many tables' deals (and All Fives' lots) at once by the compiled dealer; seeds that run
    past 64 bits go through numpy's Generators."""
    seen = play_kernels(name, {"num_players": 2, "episode": "round"}, num_envs=160, steps=50, seed=seed)
    assert seen["episodes"] > 160


@CUDA
@pytest.mark.parametrize("table", [TABLES[k] for k in ON_CUDA], ids=[IDS[k] for k in ON_CUDA])
def test_on_cuda_the_torch_kernel_steps_exactly_as_the_chain_kernel(
    table: tuple[str, dict[str, Any]],
) -> None:
    name, options = table
    play_kernels(name, options, steps=150, device="cuda")


# --- tensors on the device -----------------------------------------------------------------------

DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]


@pytest.mark.parametrize("device", DEVICES)
def test_the_tensor_methods_keep_everything_on_the_device(device: str) -> None:
    """reset_tensors / step_tensors / state_tensors give tensors on the device, the dtypes of the
    numpy interface, the same values as a twin batch stepped through it; a later step leaves
    the tensors an earlier one gave as they were."""
    options = {"num_players": 3, "episode": "match", "reward": "points"}
    masked = vector.make("classic", 8, backend="torch", device=device, **options)
    twin = vector.make("classic", 8, backend="torch", device=device, **options)
    obs, mask, info = masked.reset_tensors(seed=4)
    want = twin.reset(seed=4)
    for tensor, array in zip((obs, mask, info["player"]), (want[0], want[1], want[2]["player"]), strict=True):
        assert tensor.device.type == device and tensor.cpu().numpy().dtype == array.dtype
        assert np.array_equal(tensor.cpu().numpy(), array)
    rng = np.random.default_rng(4)
    for _ in range(60):
        kept = [tensor.clone() for tensor in (obs, mask, info["player"])]
        actions = legal_choice(rng, mask.cpu().numpy())
        outputs = masked.step_tensors(torch.from_numpy(actions).to(device))
        theirs = twin.step(actions)
        for got, array in zip(
            (*outputs[:4], *(outputs[4][key] for key in STEP_INFO)),
            (*theirs[:4], *(theirs[4][key] for key in STEP_INFO)),
            strict=True,
        ):
            assert got.device.type == device and got.cpu().numpy().dtype == array.dtype
            assert np.array_equal(got.cpu().numpy(), array)
        for old, copy in zip((obs, mask, info["player"]), kept, strict=True):
            assert torch.equal(old, copy), "a step overwrote the tensors the step before returned"
        obs, mask, _, _, info = outputs
    state = masked.state_tensors()
    assert state.device.type == device and np.array_equal(state.cpu().numpy(), twin.state())


def test_writing_into_a_returned_mask_changes_no_rule() -> None:
    masked = vector.make("classic", 3, backend="torch")
    mask = masked.reset_tensors(seed=0)[1]
    illegal = torch.tensor([int(np.flatnonzero(~row)[0]) for row in mask.numpy()])
    mask[:] = True
    with pytest.raises(ValueError, match="illegal actions at 3 of 3 tables"):
        masked.step_tensors(illegal)


# --- snapshots -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table",
    [TABLES[k] for k in (0, 6, 16, 24, 33, 38, 41)],
    ids=[IDS[k] for k in (0, 6, 16, 24, 33, 38, 41)],
)
def test_a_restored_snapshot_replays_exactly(table: tuple[str, dict[str, Any]]) -> None:
    """A snapshot restored into a fresh batch, into the same one and after pickling replays the
    same actions exactly, and as the batch went on without it."""
    name, options = table
    masked = vector.make(name, 5, backend="torch", **options)
    _, mask, _ = masked.reset(seed=11)
    rng = np.random.default_rng(11)
    for _ in range(50):
        mask = masked.step(legal_choice(rng, mask))[1]
    snap = masked.snapshot()
    state = masked.state()
    actions = []
    for _ in range(100):
        actions.append(legal_choice(rng, mask))
        mask = masked.step(actions[-1])[1]
    want = [*replay_from(masked, snap, actions, state)]
    for target, source in [
        (vector.make(name, 5, backend="torch", **options), snap),
        (masked, pickle.loads(pickle.dumps(snap))),
    ]:
        assert_same_stream(replay_from(target, source, actions, state), want, "restore")
    assert np.array_equal(want[-1], masked.state())


def replay_from(
    venv: vector.VectorEnv, snap: dict[str, Any], actions: list[np.ndarray], state: np.ndarray
) -> list[np.ndarray]:
    """Everything ``venv`` shows once ``snap`` is restored (showing ``state``) and ``actions`` play."""
    obs, mask, info = venv.restore(snap)
    assert np.array_equal(venv.state(), state)
    return [obs, mask, info["player"], *replay(venv, actions)]


def test_a_chain_kernels_snapshot_is_refused_and_changes_nothing() -> None:
    options = {"num_players": 2, "episode": "round"}
    chain = vector.make("classic", 3, backend="kernel", **options)
    chain.reset(seed=1)
    masked = vector.make("classic", 3, backend="torch", **options)
    masked.reset(seed=2)
    state = masked.state()
    with pytest.raises(ValueError, match="another batch: its backend"):
        masked.restore(chain.snapshot())
    broken = masked.snapshot()
    broken["arrays"]["hands"] = broken["arrays"]["hands"].astype(np.int32)
    with pytest.raises(ValueError, match="the snapshot's hands is int32"):
        masked.restore(broken)
    with pytest.raises(ValueError, match="not 3 PCG64 states"):
        masked.restore({**masked.snapshot(), "rngs": ["PCG64", *broken["rngs"][1:]]})
    assert np.array_equal(masked.state(), state)


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("classic", {"num_players": 2, "episode": "round"}),
        ("all_fives", {"num_players": 2, "episode": "round"}),
        ("blitz", {"num_players": 2, "episode": "round"}),
        ("osel", {"num_players": 2, "episode": "round"}),
        ("cross", {"num_players": 4, "episode": "round"}),
        ("metro", {"num_players": 2, "max_pip": 3, "hand_size": 3, "episode": "round"}),
    ],
    ids=["classic", "all_fives", "blitz", "osel", "cross", "metro-pip3"],
)
def test_bad_actions_raise_and_change_nothing(name: str, options: dict[str, Any]) -> None:
    """Illegal actions (every one at times, so Metro on double-three: 100 actions, not 1,210),
    actions of the wrong shape or type, raise; the tables change only with good ones."""
    masked = vector.make(name, 4, backend="torch", **options)
    twin = vector.make(name, 4, backend="torch", **options)  # steps only the good actions
    _, mask, _ = masked.reset(seed=3)
    twin.reset(seed=3)
    rng = np.random.default_rng(3)
    for t in range(30):
        actions = legal_choice(rng, mask)
        illegal = actions.copy()
        illegal[2] = np.flatnonzero(~mask[2])[0]
        legal = re.escape(str(np.flatnonzero(mask[2]).tolist()))
        for step, bad in [(masked.step, illegal), (masked.step_tensors, torch.from_numpy(illegal))]:
            with pytest.raises(ValueError, match=rf"table 2: {illegal[2]}, legal {legal}"):
                step(bad)
        for bad, why in [
            (actions[:3], r"shape \(4,\)"),
            (actions.reshape(4, 1), r"shape \(4,\)"),
            (actions.astype(np.float64), "integers"),
            (actions.astype(bool), "integers"),
            (np.full(4, 10_000), "illegal actions at 4 of 4 tables"),
            (np.full(4, -1), "illegal"),
        ]:
            with pytest.raises(ValueError, match=why):
                masked.step(bad)
            with pytest.raises(ValueError, match=why):
                masked.step_tensors(torch.from_numpy(bad))
        if t % 10 == 5:  # every illegal action (tiles that fit no end included) at every table
            for table in range(4):
                for action in np.flatnonzero(~mask[table]):
                    bad = actions.copy()
                    bad[table] = action
                    with pytest.raises(
                        ValueError, match=rf"illegal actions at 1 of 4 tables: table {table}:"
                    ):
                        masked.step_tensors(torch.from_numpy(bad))
        with pytest.raises(ValueError, match="takes a torch tensor"):
            masked.step_tensors(actions)
        got, want = masked.step(actions), twin.step(actions)
        for a, b in zip(got[:4], want[:4], strict=True):
            assert np.array_equal(a, b), f"a refused step changed the tables (step {t})"
        assert np.array_equal(got[4]["player"], want[4]["player"])
        mask = got[1]
    assert np.array_equal(masked.state(), twin.state())


def test_nothing_before_reset() -> None:
    masked = vector.make("classic", 2, backend="torch")
    for call in (lambda: masked.step(np.zeros(2, np.int64)), masked.state, masked.snapshot):
        with pytest.raises(ValueError, match="reset"):
            call()


@pytest.mark.parametrize(
    ("name", "options", "why"),
    [
        ("domino3d", {}, "the torch kernel cannot step this domino3d table: domino3d is not a chain game"),
        ("blind", {}, "blind is not a chain game"),
        ("metro", {"illegal_action": "penalize"}, "raises on an illegal action"),
        ("cross", {"render_mode": "ansi"}, "render_mode"),
        ("classic", {"illegal_action": "penalize"}, "raises on an illegal action"),
        ("classic", {"render_mode": "ansi"}, "render_mode"),
        ("all_fives", {"illegal_action": "penalize"}, "raises on an illegal action"),
        ("classic", {"device": "gpu"}, "device must name a torch device"),
        ("classic", {"device": "meta"}, "runs on 'cpu' or 'cuda'"),
    ],
)
def test_other_tables_are_refused_saying_what_it_plays(name: str, options: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why) as refused:
        vector.make(name, 2, backend="torch", **options)
    from domino_env.vector.masked import PLAYS

    if "cannot step" in str(refused.value):
        assert str(refused.value).endswith(f"; it plays {PLAYS}")
        assert PLAYS.startswith("Classic's, Blitz's, All Fives', Osel's, Cross's and Domino-Metro's tables")


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("all_fives", {"score_round": ChainRules.penalties_round}),
        ("blitz", {"continues_turn": after_a_double}),
        ("osel", {"leads_next": winner_leads}),
        ("cross", {"placements": ChainRules.placements}),
    ],
    ids=[
        "all_fives-with-penalties",
        "blitz-laying-on-after-doubles",
        "osel-with-the-winner-leading",
        "cross-without-arms-to-start",
    ],
)
def test_a_mix_of_the_games_parts_is_refused(name: str, parts: dict[str, Any]) -> None:
    """Each game's parts go together: All Fives' spinner and count with Classic's penalties,
    Blitz with Osel's turn, Osel with Classic's next leader, Cross with Classic's placements
    are games the chain kernel plays but the torch kernel does not."""
    from domino_env.vector.masked import MaskedKernel

    rules = raw_env(name).rules
    rules.__class__ = type(
        "MixedRules", (type(rules),), {"name": "mixed", "batched_kernel": "chain", **parts}
    )
    assert ChainKernel.supports(rules, {}) is None
    assert MaskedKernel.supports(rules, {}) == (
        "mixed mixes the parts of different games "
        "(Classic's, Blitz's, All Fives', Osel's, Cross's or Metro's)"
    )


def test_an_opening_order_some_deals_miss_draws_a_lot() -> None:
    """An opening order that a deal may hold no tile of is dealt as the chain kernel deals it:
    that deal's leader is drawn by lot and leads any tile. Metro's first game opens with the
    lowest double from 1-1 up, which double-two with 2 tiles a hand misses once in 15 deals,
    on enough tables that many deals draw lots. Any such order is
    the torch kernel's (a Classic opened by 0-0 alone)."""
    from domino_env.vector.masked import MaskedKernel

    rules = raw_env("classic").rules
    only_blank = Opening("0-0", lambda tile_set: [tile_set.ids[(0, 0)]])
    rules.__class__ = type(
        "BlankRules", (type(rules),), {"name": "blank", "batched_kernel": "chain", "opens": only_blank}
    )
    assert ChainKernel.supports(rules, {}) is None and MaskedKernel.supports(rules, {}) is None
    seen = play_kernels(*METRO_TINY, num_envs=160, steps=40, seed=7)
    assert seen["lots"] > 10, seen


def test_device_is_the_torch_backends_option_only() -> None:
    for backend in ("auto", "kernel", "scalar"):
        with pytest.raises(ValueError, match='device is for backend="torch" only'):
            vector.make("classic", 2, backend=backend, device="cpu")
    assert vector.make("classic", 2, backend="torch", device=torch.device("cpu")).device.type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is here")
def test_cuda_without_a_device_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("torch.cuda.is_available() is False")):
        vector.make("classic", 2, backend="torch", device="cuda")


def test_without_torch_the_backend_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # (import torch now raises ModuleNotFoundError)
    monkeypatch.delitem(sys.modules, "domino_env.vector.masked")
    with pytest.raises(
        ValueError, match=re.escape("""backend="torch" needs torch (pip install 'domino-env[train]')""")
    ):
        vector.make("classic", 2, backend="torch")


def test_domino_env_imports_and_plays_without_torch() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np, domino_env\n"
        "from domino_env import vector\n"
        "venv = vector.make('classic', 2)\n"
        "mask = venv.reset(seed=0)[1]\n"
        "venv.step(mask.argmax(axis=1))\n"
        "assert 'domino_env.vector.masked' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the bit tricks ------------------------------------------------------------------------------


def test_popcount_and_spread_are_the_plain_ones() -> None:
    from domino_env.vector.masked import _popcount, _spread

    rng = np.random.default_rng(0)
    masks = rng.integers(0, 1 << 62, 2000, dtype=np.int64)
    masks[:4] = [0, 1, (1 << 62) - 1, 1 << 61]
    counts = _popcount(torch.from_numpy(masks)).numpy()
    assert counts.tolist() == [bin(int(m)).count("1") for m in masks]
    low = masks & 0xFFFFFFFF
    spread = _spread(torch.from_numpy(low)).numpy()
    assert spread.tolist() == [sum(((int(m) >> t) & 1) << (2 * t) for t in range(32)) for m in low]
