"""Scenario tests for Blind blitz and Blind (docs/rules/blind_blitz.md and blind.md), plus their invariants.

Every scenario fixes the rows (listed left to right: the last tile listed is turned up first)
and the bazaar order, and plays a scripted line of moves through the public AEC interface.
Turning up, misses, forced ends of a turn and automatic passes happen inside ``step``.
Blind blitz scenarios use ``arrange="dealt"`` (rows as listed) except where the arrange phase
itself is tested.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.render.chain import event_text
from domino_env.variants.blind import ARRANGE, MISS, REVEAL, UP, BlindState
from tests.support import helpers
from tests.support.helpers import ALL_TILES, pips, tile, tiles

# The main two-player deal. Seat 0 holds 0-0 in the middle of its row; seat 1's row, read from
# the right, is the chain 0-1 1-2 2-3 3-4 4-5 and then 5-5 5-6 1-1; 1-6 is drawn first.
S0 = "0-6 6-6 4-4 0-0 1-3 2-2 3-3 2-4"
S1 = "1-1 5-6 5-5 4-5 3-4 2-3 1-2 0-1"
S0_BLIND = "0-6 6-6 4-4 1-3 2-2 3-3 2-4 0-0"  # Blind: the leader opens with its rightmost tile


# --- helpers ---------------------------------------------------------------------------------


def tid(text: str) -> int:
    return ALL_TILES.index(tile(text))


def deal(rows: list[str], first: str = "", **extra: Any) -> dict[str, Any]:
    """Rows listed left to right, then the bazaar (``first`` drawn first, the rest in id order);
    the rules choose the opening unless ``leader`` is given."""
    return helpers.deal(rows, extra.pop("leader", None), first, **extra)


def new_env(name: str, rows: list[str], first: str = "", deals: list | None = None, **options: Any):
    extra = {k: options.pop(k) for k in ("leader", "opening") if k in options}
    if name == "blind_blitz":
        options.setdefault("arrange", "dealt")
    options.setdefault("episode", "round")  # the finished round stays on the table
    env = domino_env.make(name, num_players=len(rows), **options)
    if deals is None:
        env.reset(seed=0, options={"deal": deal(rows, first, **extra)})
    else:
        env.reset(seed=0, options={"deals": deals})
    return env


def current(env) -> int:
    return env.unwrapped.game.current


def legal(env) -> list[tuple[str, tuple[int, int] | None, str | None]]:
    return [(m["kind"], m["tile"], m["arm"]) for m in env.unwrapped.legal_moves()]


def kinds(env) -> set[str]:
    return {m["kind"] for m in env.unwrapped.legal_moves()}


def do(env, seat: int, kind: str, t: str | None = None, arm: str | None = None) -> None:
    """Make the legal move of that kind (tile, arm); the seat must be the one to move."""
    assert current(env) == seat, f"seat {current(env)} is to move, expected seat {seat}"
    assert env.agent_selection == f"player_{seat}"
    want = None if t is None else tile(t)
    found = [
        m
        for m in env.unwrapped.legal_moves()
        if m["kind"] == kind and (want is None or m["tile"] == want) and (arm is None or m["arm"] == arm)
    ]
    assert len(found) == 1, f"{kind} {t} {arm} for seat {seat}: matches {found}; legal: {legal(env)}"
    env.step(found[0]["action"])


def lay(env, seat: int, t: str, arm: str | None = None) -> None:
    do(env, seat, "play", t, arm)


def game(env):
    return env.unwrapped.game


def extra(env) -> BlindState:
    return env.unwrapped.game.extra


def row(env, seat: int) -> list[tuple[int, int]]:
    return [ALL_TILES[t] for t in extra(env).rows[seat]]


def public(env) -> dict[str, Any]:
    return env.unwrapped.public_state()


def events(env, kind: str) -> list[tuple]:
    return [e for e in game(env).events if e[0] == kind]


def block(env, seat: int, name: str) -> np.ndarray:
    return env.observe(f"player_{seat}")["observation"][env.unwrapped.observation_layout[name]]


def hand_block(env, seat: int) -> list[tuple[int, int]]:
    return [ALL_TILES[t] for t in np.flatnonzero(block(env, seat, "hand"))]


def rows_block(env, observer: int, of: int) -> dict[tuple[int, int], float]:
    """The observer's ``rows`` entries for a player: tile -> 1/(places from the right + 1)."""
    n = env.unwrapped.rules.num_players
    k = (of - observer) % n
    part = block(env, observer, "rows")[k * 28 : (k + 1) * 28]
    return {ALL_TILES[t]: float(part[t]) for t in np.flatnonzero(part)}


def log(env) -> list[str | None]:
    """The game log's lines, as rendering and terminal play show them."""
    return [event_text(env.unwrapped.rules, e, env.possible_agents) for e in game(env).events]


def phase(env, seat: int) -> dict[str, bool]:
    names = env.unwrapped.rules.phases
    return dict(zip(names, (bool(v) for v in block(env, seat, "phase")), strict=True))


def hands_of(env) -> list[set[tuple[int, int]]]:
    return [{ALL_TILES[t] for t in range(28) if h >> t & 1} for h in game(env).hands]


def lead_and_run_seat1(env) -> None:
    """Main deal: 0-0 leads, seat 1 lays its chain 0-1 .. 4-5 on east in one turn (Blind blitz)."""
    lay(env, 0, "0-0")
    lay(env, 1, "0-1", "east")
    for t in ("1-2", "2-3", "3-4", "4-5"):
        do(env, 1, "turn_up")
        lay(env, 1, t)


# --- deal, options, action table ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["blind_blitz", "blind"])
@pytest.mark.parametrize(("n", "size", "bazaar"), [(2, 8, 12), (3, 8, 4), (4, 7, 0)])
def test_hand_sizes_and_bazaar(name, n, size, bazaar):
    env = domino_env.make(name, num_players=n)
    env.reset(seed=1)
    ps = public(env)
    assert ps["hand_sizes"] == [size] * n
    assert ps["boneyard_size"] == bazaar


def test_options_and_action_table():
    with pytest.raises(ValueError, match="arrange"):
        domino_env.make("blind_blitz", arrange="bogus")
    with pytest.raises(ValueError, match="arrange"):
        domino_env.make("blind", arrange="dealt")  # Blind has no arrange phase at all
    rules = domino_env.make("blind_blitz").unwrapped.rules
    arrange = [a for a in range(rules.num_actions) if rules.action_kind[a] == ARRANGE]
    assert [rules.action_tile[a] for a in arrange] == list(range(28))
    assert {"stop", "turn_up", "draw"} <= set(rules.action_kind)
    blind = domino_env.make("blind").unwrapped.rules
    assert ARRANGE not in blind.action_kind and "turn_up" not in blind.action_kind
    assert {"stop", "draw"} <= set(blind.action_kind)


# --- the arrange phase ----------------------------------------------------------------------------


def test_arrange_phase_places_each_row_from_right_to_left():
    env = new_env("blind_blitz", [S0, S1], first="1-6", arrange="choose")
    # the opener (seat 0 holds 0-0) arranges first, one tile at a time, choosing among all it holds
    assert env.agent_selection == "player_0"
    assert kinds(env) == {ARRANGE}
    assert {m[1] for m in legal(env)} == set(tiles(S0))
    assert phase(env, 0)["arrange"] and not phase(env, 0)["lead"]
    order0 = list(reversed(tiles(S0)))  # right to left: 2-4 first
    for i, t in enumerate(order0[:-1]):
        do(env, 0, ARRANGE, f"{t[0]}-{t[1]}")
        count = i + 2 if i == len(order0) - 2 else i + 1  # (the last tile follows by itself)
        placed = rows_block(env, 0, 0)  # its own memory, in order
        assert placed == pytest.approx({order0[j]: 1.0 / (j + 1) for j in range(count)})
        assert rows_block(env, 1, 0) == {}  # nobody else learns anything
        assert hand_block(env, 0) == sorted(tiles(S0))
    # the last tile is placed by the environment; seat 1 arranges next
    assert current(env) == 1 and kinds(env) == {ARRANGE}
    assert row(env, 0) == tiles(S0)
    assert {m[1] for m in legal(env)} == set(tiles(S1))
    for t in list(reversed(tiles(S1)))[:-1]:
        do(env, 1, ARRANGE, f"{t[0]}-{t[1]}")
    assert row(env, 1) == tiles(S1)
    assert [e for e in game(env).events if e[0] == ARRANGE] == [(ARRANGE, 0)] * 8 + [(ARRANGE, 1)] * 8
    # then the opening: 0-0 from the middle of seat 0's row
    assert current(env) == 0 and legal(env) == [("play", (0, 0), "lead")]
    assert phase(env, 0)["lead"]
    lay(env, 0, "0-0")
    assert row(env, 0) == [t for t in tiles(S0) if t != (0, 0)]
    # seat 1's first choice is its rightmost tile, turned up first
    assert public(env)["turned_up"] == (0, 1)
    assert set(legal(env)) == {("play", (0, 1), "east"), ("play", (0, 1), "west")}


def test_arrange_dealt_skips_the_phase():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    assert legal(env) == [("play", (0, 0), "lead")]
    assert not events(env, ARRANGE)
    assert row(env, 1) == tiles(S1)
    # the seat knows its whole row, in order
    assert hand_block(env, 1) == sorted(tiles(S1))
    assert rows_block(env, 1, 1) == pytest.approx(
        {t: 1.0 / (k + 1) for k, t in enumerate(reversed(tiles(S1)))}
    )


def arrange_as_listed(env, rows: list[str]) -> None:
    """Every seat, from the opener on, arranges its row as listed (so the last listed is rightmost)."""
    for _ in range(len(rows)):
        seat = current(env)
        for t in list(reversed(tiles(rows[seat])))[:-1]:
            do(env, seat, ARRANGE, f"{t[0]}-{t[1]}")


def test_every_round_has_an_arrange_phase_from_its_leader():
    second = ["0-0 0-1 0-2 0-3 0-4 0-5 0-6", "1-1 1-2 1-3 1-4 1-5 1-6 2-2",
              "2-3 2-4 2-5 2-6 3-3 3-4 3-5", "3-6 4-4 4-5 4-6 5-5 5-6 6-6"]  # fmt: skip
    env = domino_env.make("blind_blitz", num_players=4)
    env.reset(seed=0, options={"deals": [deal(BLOCK_ROWS), deal(second)]})
    arrange_as_listed(env, BLOCK_ROWS)
    assert [row(env, seat) for seat in range(4)] == [tiles(r) for r in BLOCK_ROWS]
    play_to_block(env)  # seat 1 wins the blocked round and leads the next one
    assert game(env).round_index == 1
    assert current(env) == 1 and kinds(env) == {ARRANGE} and public(env)["arranging"]
    arrange_as_listed(env, second)
    assert current(env) == 1 and kinds(env) == {"play"}
    assert {m[1] for m in legal(env)} == set(tiles(second[1]))  # the winner leads any tile


# --- opening --------------------------------------------------------------------------------------


def test_the_opening_tile_is_led_from_the_middle_and_is_a_turn_of_its_own():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    lay(env, 0, "0-0")
    assert row(env, 0) == tiles("0-6 6-6 4-4 1-3 2-2 3-3 2-4")  # the rest keep their places
    assert current(env) == 1  # no turn_up for the opener
    assert events(env, UP) == [(UP, 1, tid("0-1"))]


@pytest.mark.parametrize(
    ("rows", "holder", "opening"),
    [
        # 0-0 is in the bazaar: 0-1 is the closest by pips
        (["1-1 2-2 3-3 4-4 5-5 6-6 1-2 1-3", "0-1 0-3 2-3 2-4 3-4 1-4 1-5 2-5"], 1, "0-1"),
        # 0-0 and 0-1 in the bazaar: 0-2 and 1-1 both have 2 pips, the lower small half wins
        (["1-1 2-2 3-3 4-4 5-5 6-6 1-2 1-3", "0-3 2-3 2-4 3-4 1-4 1-5 2-5 0-2"], 1, "0-2"),
        (["0-2 2-2 3-3 4-4 5-5 6-6 1-2 1-3", "0-3 2-3 2-4 3-4 1-4 1-5 2-5 1-1"], 0, "0-2"),
    ],
)
def test_blind_blitz_opening_without_0_0(rows, holder, opening):
    env = new_env("blind_blitz", rows)
    assert env.agent_selection == f"player_{holder}"
    assert legal(env) == [("play", tile(opening), "lead")]


def test_blind_opens_with_a_random_seat_and_its_rightmost_tile():
    leaders = set()
    for seed in range(24):
        env = domino_env.make("blind", num_players=3)
        rows = ["0-0 0-1 0-2 0-3 0-4 0-5 0-6 1-1", "1-2 1-3 1-4 1-5 1-6 2-2 2-3 2-4",
                "2-5 2-6 3-3 3-4 3-5 3-6 4-4 4-5"]  # fmt: skip
        env.reset(seed=seed, options={"deal": deal(rows)})
        leader = current(env)
        leaders.add(leader)
        rightmost = ["1-1", "2-4", "4-5"][leader]
        assert legal(env) == [("play", tile(rightmost), "lead")]
        assert public(env)["turned_up"] == tile(rightmost)
        assert block(env, leader, "up")[tid(rightmost)] == 1.0  # the leader sees what it leads
        assert hand_block(env, leader) == []  # ... and nothing else of its row
    assert leaders == {0, 1, 2}


def test_blind_deal_opening_must_be_the_rightmost_tile():
    env = domino_env.make("blind", num_players=2)
    with pytest.raises(ValueError, match="rightmost"):
        env.reset(options={"deal": deal([S0_BLIND, S1], leader=0, opening="2-4")})
    env.reset(options={"deal": deal([S0_BLIND, S1], leader=0, opening="0-0")})
    assert legal(env) == [("play", (0, 0), "lead")]
    env.reset(seed=3, options={"deal": {"leader": 1, "opening": "3-5"}})  # a random row: put rightmost
    assert legal(env) == [("play", (3, 5), "lead")] and public(env)["turned_up"] == (3, 5)
    assert len(row(env, 1)) == 7 and (3, 5) not in row(env, 1)  # turned up: off the row


# --- a turn ---------------------------------------------------------------------------------------


def test_a_fitting_tile_must_be_laid_then_turn_up_or_stop():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    lay(env, 0, "0-0")
    # 0-1 is turned up for everybody; it fits both ends (a choice of end), nothing else is legal
    assert public(env)["turned_up"] == (0, 1)
    assert set(legal(env)) == {("play", (0, 1), "east"), ("play", (0, 1), "west")}
    lay(env, 1, "0-1", "east")
    assert kinds(env) == {"turn_up", "stop"} and phase(env, 1)["continuing"]
    do(env, 1, "turn_up")
    assert legal(env) == [("play", (1, 2), "east")]  # asked even with one placement
    lay(env, 1, "1-2")
    do(env, 1, "stop")
    assert current(env) == 0
    assert public(env)["open_ends"] == {"east": 2, "west": 0}
    assert row(env, 1) == tiles("1-1 5-6 5-5 4-5 3-4 2-3")
    assert not events(env, "pass")  # tiles were laid: not a quiet turn
    assert public(env)["quiet_turns"] == 0


def test_blind_ends_the_turn_after_a_fitting_tile():
    env = new_env("blind", [S0_BLIND, S1], first="1-6", leader=0)
    assert legal(env) == [("play", (0, 0), "lead")]
    lay(env, 0, "0-0")
    assert set(legal(env)) == {("play", (0, 1), "east"), ("play", (0, 1), "west")}
    lay(env, 1, "0-1", "east")
    # no turn_up: seat 0's turn, its 2-4 is turned up, misses (ends 0 and 1), and it may draw
    assert current(env) == 0
    assert events(env, MISS) == [(MISS, 0, tid("2-4"))]
    assert kinds(env) == {"draw", "stop"}


def test_a_miss_goes_face_down_to_the_left_end_and_everybody_saw_it():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    lay(env, 0, "0-0")
    lay(env, 1, "0-1", "east")
    do(env, 1, "stop")
    # seat 0 turns up 2-4: no end shows 2 or 4
    assert events(env, MISS) == [(MISS, 0, tid("2-4"))]
    assert row(env, 0) == tiles("2-4 0-6 6-6 4-4 1-3 2-2 3-3")
    assert public(env)["rows"][0] == [(2, 4)] + [None] * 6
    assert public(env)["turned_up"] is None
    # seat 1 knows where it lies: 7th from the right
    assert rows_block(env, 1, 0) == pytest.approx({(2, 4): 1.0 / 7})
    # nothing was laid this turn and the bazaar has tiles: draw or stop
    assert current(env) == 0 and kinds(env) == {"draw", "stop"} and phase(env, 0)["draw"]
    assert "player_0 turns up 2-4: no fit, to the left end of the row" in log(env)


def test_the_draw_after_a_miss_is_unseen_and_goes_to_the_right_end():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    lay(env, 0, "0-0")
    lay(env, 1, "0-1", "east")
    do(env, 1, "stop")
    do(env, 0, "draw")
    assert current(env) == 1  # the turn ended
    assert row(env, 0)[-1] == (1, 6) and (1, 6) in hands_of(env)[0]
    assert public(env)["rows"][0][-1] is None and public(env)["boneyard_size"] == 11
    # seat 0 does not know what it drew: not in its hand block, counted as unknown
    assert (1, 6) not in hand_block(env, 0)
    assert block(env, 0, "unknown")[0] == pytest.approx(1 / 8)
    assert public(env)["quiet_turns"] == 0  # a draw is not a quiet turn
    lay(env, 1, "1-2")  # 1-2 fits east (1)
    do(env, 1, "stop")
    # seat 0's next turn turns up the drawn tile first: 1-6 misses (ends 0 and 2) and is now known
    assert events(env, MISS)[-1] == (MISS, 0, tid("1-6"))
    assert (1, 6) in hand_block(env, 0)
    assert public(env)["rows"][0][0] == (1, 6)
    assert kinds(env) == {"draw", "stop"}


def test_no_draw_after_a_miss_when_a_tile_was_laid_this_turn():
    s1 = "1-1 5-6 5-5 4-5 3-4 2-3 3-5 0-1"
    env = new_env("blind_blitz", [S0, s1], first="1-6")
    lay(env, 0, "0-0")
    lay(env, 1, "0-1", "east")
    do(env, 1, "turn_up")  # 3-5 misses (ends 0 and 1): to the left end, and the turn is over
    assert events(env, MISS)[0] == (MISS, 1, tid("3-5"))
    assert row(env, 1)[0] == (3, 5)
    assert public(env)["hand_sizes"] == [7, 7] and public(env)["boneyard_size"] == 12
    assert not [e for e in game(env).events if e[0] == "pass" and e[1] == 1]
    assert current(env) == 0  # seat 0's 2-4 missed in turn: it is asked draw or stop
    assert kinds(env) == {"draw", "stop"}


def test_stop_declines_the_draw_and_is_a_quiet_turn():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    lay(env, 0, "0-0")
    lay(env, 1, "0-1", "east")
    do(env, 1, "stop")
    do(env, 0, "stop")
    assert events(env, "pass") == [("pass", 0)]
    assert public(env)["quiet_turns"] == 1 and public(env)["boneyard_size"] == 12
    assert public(env)["hand_sizes"] == [7, 7]
    assert block(env, 1, "quiet")[0] == pytest.approx(0.5)


# --- three tiles: face up, then an open hand ------------------------------------------------------


def test_three_tiles_are_turned_face_up_and_played_open_from_the_next_turn():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    lead_and_run_seat1(env)
    # 4-5 left three tiles: face up for everybody at once, and the turn is over (no turn_up)
    assert events(env, REVEAL) == [(REVEAL, 1, sum(1 << tid(t) for t in ("1-1", "5-6", "5-5")))]
    assert public(env)["open_hands"] == [False, True]
    assert public(env)["rows"][1] == tiles("1-1 5-6 5-5")
    assert rows_block(env, 0, 1) == {t: 1.0 for t in tiles("1-1 5-6 5-5")}
    assert block(env, 0, "open")[1] == 1.0
    assert current(env) == 0
    assert "player_1 turns the last three tiles face up: 1-1 5-5 5-6" in log(env)
    assert "player_1 turns up 4-5" in log(env)
    do(env, 0, "stop")  # seat 0's 2-4 missed (ends 0 and 5)
    # seat 1's open hand: any fitting tile, no turn_up, no stop before a tile is laid
    assert set(legal(env)) == {("play", (5, 5), "east"), ("play", (5, 6), "east")}
    lay(env, 1, "5-5")
    assert set(legal(env)) == {("play", (5, 6), "east"), ("stop", None, None)}
    lay(env, 1, "5-6")
    # 1-1 does not fit (ends 0 and 6): the turn ends by itself
    assert current(env) == 0 and public(env)["open_ends"] == {"east": 6, "west": 0}


def test_blind_plays_several_tiles_a_turn_only_from_the_open_hand():
    env = new_env("blind", [S0_BLIND, S1], first="1-6", leader=0)
    lay(env, 0, "0-0")
    for t, arm in (("0-1", "east"), ("1-2", None), ("2-3", None), ("3-4", None)):
        lay(env, 1, t, arm)
        assert current(env) == 0  # one tile a turn from the row
        do(env, 0, "stop")  # seat 0's tiles keep missing (2-4, 3-3, 2-2, 1-3)
    assert hand_block(env, 1) == []  # seat 1 never looked at its row
    lay(env, 1, "4-5")
    assert public(env)["open_hands"] == [False, True]
    assert hand_block(env, 1) == sorted(tiles("1-1 5-6 5-5"))
    assert current(env) == 0
    do(env, 0, "stop")  # 4-4 misses (ends 0 and 5)
    lay(env, 1, "5-5")
    assert set(legal(env)) == {("play", (5, 6), "east"), ("stop", None, None)}
    lay(env, 1, "5-6")
    assert current(env) == 0


def test_open_hand_draw_joins_face_up_and_ends_the_turn():
    env = new_env("blind_blitz", [S0, S1], first="1-6")
    lead_and_run_seat1(env)
    do(env, 0, "stop")
    lay(env, 1, "5-5")
    lay(env, 1, "5-6")
    do(env, 0, "stop")  # 3-3 misses
    # seat 1: 1-1 does not fit: draw or stop
    assert kinds(env) == {"draw", "stop"} and current(env) == 1
    do(env, 1, "draw")
    # 1-6 joins the open hand face up; it fits east (6) but the turn is over
    assert current(env) == 0
    assert public(env)["rows"][1] == tiles("1-1 1-6")
    assert (1, 6) in hand_block(env, 1)
    assert rows_block(env, 0, 1) == {(1, 1): 1.0, (1, 6): 1.0}
    do(env, 0, "stop")  # 2-2 misses
    lay(env, 1, "1-6")
    lay(env, 1, "1-1")  # the last tile: seat 1 wins the round
    result = game(env).result
    assert result is not None and result.winner == 1 and not result.blocked
    assert game(env).scores == [pips("0-6 6-6 4-4 1-3 2-2 3-3 2-4"), 0] == [46, 0]


def test_an_open_hand_with_nothing_to_lay_and_no_bazaar_passes():
    rows = ["2-2 2-4 2-5 2-6 3-3 1-5 0-0", "5-5 5-6 6-6 3-4 2-3 1-2 0-1",
            "1-1 1-3 1-4 1-6 3-6 0-4 4-4", "0-3 0-5 0-6 3-5 4-5 4-6 0-2"]  # fmt: skip
    env = new_env("blind_blitz", rows)
    lay(env, 0, "0-0")
    lay(env, 1, "0-1", "east")
    for t in ("1-2", "2-3", "3-4"):
        do(env, 1, "turn_up")
        lay(env, 1, t)
    assert public(env)["open_hands"] == [False, True, False, False]  # 5-5 5-6 6-6 face up
    lay(env, 2, "4-4")
    do(env, 2, "stop")
    lay(env, 3, "0-2")
    do(env, 3, "stop")
    # ends 2 and 4. Seat 0 turns up 1-5: a miss, no bazaar, the turn ends; seat 1's open hand
    # cannot lay and cannot draw: it passes. Seat 2's 0-4 fits.
    assert events(env, MISS) == [(MISS, 0, tid("1-5"))]
    assert events(env, "pass") == [("pass", 0), ("pass", 1)]
    assert public(env)["quiet_turns"] == 2
    assert current(env) == 2 and legal(env) == [("play", (0, 4), "east")]


# --- round end and blocks ---------------------------------------------------------------------------

BLOCK_ROWS = [
    "2-4 2-5 2-6 3-3 3-5 3-6 0-0",
    "1-1 1-3 1-4 0-5 0-2 1-2 0-1",
    "2-2 2-3 1-5 3-4 0-3 0-6 5-6",
    "1-6 4-4 4-5 4-6 5-5 6-6 0-4",
]


def play_to_block(env) -> None:
    """All seven 0-tiles reach the table and both ends show 0: nothing anyone holds fits."""
    lay(env, 0, "0-0")
    lay(env, 1, "0-1", "east")
    for t, arm in (("1-2", None), ("0-2", "east"), ("0-5", "east")):
        do(env, 1, "turn_up")
        lay(env, 1, t, arm)
    lay(env, 2, "5-6")
    for t, arm in (("0-6", "east"), ("0-3", "west"), ("3-4", None)):
        do(env, 2, "turn_up")
        lay(env, 2, t, arm)
    lay(env, 3, "0-4", "west")


def test_blocked_when_nothing_fits_anywhere_and_the_bazaar_is_empty():
    env = new_env("blind_blitz", BLOCK_ROWS)
    play_to_block(env)
    # the round ends at once (seat 3 is not asked turn_up or stop)
    result = game(env).result
    assert game(env).round_over and all(env.terminations.values())
    assert result is not None and result.blocked and result.winner == 1
    assert result.hand_pips == [44, 11, 15, 56]
    assert game(env).scores == [44, 0, 15, 56]


def test_blocked_with_teams_scores_the_losing_team():
    env = new_env("blind_blitz", BLOCK_ROWS, teams=True)
    play_to_block(env)
    result = game(env).result
    assert result is not None and result.blocked
    assert result.winner == 2  # team 0+2 holds 59 against 67; its partner with fewer pips
    assert game(env).scores == [0, 67]


def test_a_full_circle_without_a_tile_laid_or_drawn_blocks_the_round():
    rows = ["1-1 1-2 1-3 1-4 1-5 1-6 0-0", "0-1 0-2 2-2 2-3 2-4 2-5 2-6",
            "0-3 0-4 3-3 3-4 3-5 3-6 4-4", "0-5 0-6 4-5 4-6 5-5 5-6 6-6"]  # fmt: skip
    env = new_env("blind", rows, leader=0, episode="round")
    lay(env, 0, "0-0")
    # 2-6, 4-4, 6-6 and then seat 0's 1-6 miss (both ends 0), no bazaar: four quiet turns
    assert [e[1:] for e in events(env, MISS)] == [
        (1, tid("2-6")),
        (2, tid("4-4")),
        (3, tid("6-6")),
        (0, tid("1-6")),
    ]
    assert events(env, "pass") == [("pass", s) for s in (1, 2, 3, 0)]
    result = game(env).result
    assert result is not None and result.blocked and result.winner == 0
    assert game(env).scores == [0, 33, 45, 63]
    assert all(env.terminations.values())


def test_a_draw_restarts_the_circle():
    s1 = "0-1 1-2 2-3 3-4 4-5 5-5 5-6 1-1"
    env = new_env("blind_blitz", [S0, s1], first="2-5")
    lay(env, 0, "0-0")
    do(env, 1, "draw")  # 1-1 missed; 2-5 drawn: not a quiet turn
    assert public(env)["quiet_turns"] == 0
    do(env, 0, "stop")  # 2-4 missed, no draw: quiet 1
    assert public(env)["quiet_turns"] == 1 and not game(env).round_over
    # seat 1 turns up the drawn 2-5: it misses (ends 0 and 0); declining the draw closes the circle
    assert events(env, MISS)[-1] == (MISS, 1, tid("2-5"))
    do(env, 1, "stop")
    result = game(env).result
    assert result is not None and result.blocked and result.winner == 0
    assert public(env)["boneyard_size"] == 11
    assert game(env).scores == [0, pips(s1) + pips("2-5")] == [0, 55]


# --- later rounds -----------------------------------------------------------------------------------


def test_later_rounds_blind_blitz_winner_leads_any_tile_and_blind_its_rightmost():
    second = ["0-0 0-1 0-2 0-3 0-4 0-5 0-6", "1-1 1-2 1-3 1-4 1-5 1-6 2-2",
              "2-3 2-4 2-5 2-6 3-3 3-4 3-5", "3-6 4-4 4-5 4-6 5-5 5-6 6-6"]  # fmt: skip
    env = domino_env.make("blind_blitz", num_players=4, arrange="dealt")
    env.reset(seed=0, options={"deals": [deal(BLOCK_ROWS), deal(second)]})
    play_to_block(env)  # seat 1 wins the blocked round
    assert game(env).round_index == 1 and current(env) == 1
    assert {m[1] for m in legal(env)} == set(tiles(second[1])) and kinds(env) == {"play"}
    circle = ["1-1 1-2 1-3 1-4 1-5 1-6 0-0", "0-1 0-2 2-2 2-3 2-4 2-5 2-6",
              "0-3 0-4 3-3 3-4 3-5 3-6 4-4", "0-5 0-6 4-5 4-6 5-5 5-6 6-6"]  # fmt: skip
    env = domino_env.make("blind", num_players=4)
    env.reset(seed=0, options={"deals": [deal(circle, leader=0), deal(second)]})
    lay(env, 0, "0-0")  # the round blocks at once: seat 0 wins with 27 pips
    assert game(env).round_index == 1 and current(env) == 0
    assert legal(env) == [("play", (0, 6), "lead")]


# --- hidden information -------------------------------------------------------------------------------


def observations(env) -> list[np.ndarray]:
    return [env.observe(a)["observation"].copy() for a in env.possible_agents]


def test_blind_seat_cannot_tell_deals_that_differ_in_its_unseen_tiles():
    # seat 1's 1-1 changes places with the bazaar's last tile (6-6 is dealt, 4-6 is the last left),
    # and its 5-6 and 5-5 swap: none of them is turned up before the reveal
    other = "4-6 5-5 5-6 4-5 3-4 2-3 1-2 0-1"
    a = new_env("blind", [S0_BLIND, S1], first="1-6", leader=0)
    b = new_env("blind", [S0_BLIND, other], first="1-6", leader=0)
    assert game(a).hands[1] != game(b).hands[1]
    script = [(0, "0-0", None), (1, "0-1", "east"), (0, "stop", None), (1, "1-2", None), (0, "draw", None),
              (1, "2-3", None), (0, "stop", None), (1, "3-4", None), (0, "stop", None)]  # fmt: skip
    for seat, move, arm in script:
        for x, y in zip(observations(a), observations(b), strict=True):
            np.testing.assert_array_equal(x, y)
        assert public(a) == public(b)
        for env in (a, b):
            if move in ("stop", "draw"):
                do(env, seat, move)
            else:
                lay(env, seat, move, arm)
    for x, y in zip(observations(a), observations(b), strict=True):
        np.testing.assert_array_equal(x, y)
    # the next tile of seat 1 makes the row three: the reveal shows the difference to everybody
    lay(a, 1, "4-5")
    lay(b, 1, "4-5")
    assert not np.array_equal(observations(a)[1], observations(b)[1])


def test_blind_blitz_seat_does_not_know_the_tile_it_drew():
    a = new_env("blind_blitz", [S0, S1], first="1-6")
    b = new_env("blind_blitz", [S0, S1], first="3-6")
    for env in (a, b):
        lay(env, 0, "0-0")
        lay(env, 1, "0-1", "east")
        do(env, 1, "stop")
        do(env, 0, "draw")
    assert game(a).hands[0] != game(b).hands[0]
    for x, y in zip(observations(a), observations(b), strict=True):
        np.testing.assert_array_equal(x, y)


# --- invariants (hypothesis) --------------------------------------------------------------------------

CONFIGS = [
    (name, n, teams, opts)
    for name, opts_list in (("blind_blitz", [{}, {"arrange": "dealt"}]), ("blind", [{}]))
    for opts in opts_list
    for n, teams in ((2, False), (3, False), (4, False), (4, True))
]
IDS = [f"{c[0]}-{c[1]}p{'-teams' if c[2] else ''}{'-dealt' if c[3] else ''}" for c in CONFIGS]


def check_invariants(u) -> None:
    g, rules = u.game, u.rules
    x = g.extra
    n = rules.num_players
    table, stock = g.line.played, 0
    for t in g.stock:
        assert not stock >> t & 1
        stock |= 1 << t
    union = table | stock
    assert not table & stock
    arranging = u.public_state()["arranging"]
    for seat in range(n):
        hand = g.hands[seat]
        assert not union & hand, "a tile is in two places"
        union |= hand
        row_tiles = x.rows[seat]
        assert len(set(row_tiles)) == len(row_tiles)
        in_row = sum(1 << t for t in row_tiles)
        pending = 1 << x.up if x.up >= 0 and seat == g.current else 0
        if arranging:
            assert not in_row & ~hand
        else:
            assert in_row | pending == hand and not in_row & pending, "rows and hands disagree"
            if not x.open[seat] and not g.round_over:
                assert len(row_tiles) + bool(pending) >= 4, "a face-down row of three"
        known, seen = x.known[seat], x.seen[seat]
        assert not seen & ~known and not known & ~hand
        for mask in (known, seen):  # a row is the tiles a seat knows, then those it does not
            flags = [bool(mask >> t & 1) for t in row_tiles]
            assert flags == sorted(flags, reverse=True), "a known tile right of an unknown one"
        if rules.blind:
            assert known == seen
        if x.open[seat]:
            assert seen == hand
    assert union == rules.tile_set.all_mask, "a tile went missing"
    assert x.quiet < n or g.round_over


def check_mask(env, rnd: random.Random) -> None:
    u = env.unwrapped
    g, rules = u.game, u.rules
    x = g.extra
    mask = env.observe(env.agent_selection)["action_mask"]
    acts = [int(a) for a in np.flatnonzero(mask)]
    assert acts == sorted(g.legal) and acts
    kinds_now = {rules.action_kind[a] for a in acts}
    plays = {a for a in acts if rules.action_kind[a] == "play"}
    if x.up >= 0 and g.line.count:  # a turned-up tile must be laid, nothing else
        assert plays == set(g.line.placements(1 << x.up)) and kinds_now == {"play"}
    elif g.line.count and x.open[g.current]:
        assert plays == set(g.line.placements(g.hands[g.current]))
    if not plays:
        assert kinds_now in ({"draw", "stop"}, {"turn_up", "stop"}, {ARRANGE})
    obs = env.observe(env.agent_selection)["observation"]
    known_obs = np.flatnonzero(obs[u.observation_layout["hand"]])
    assert sum(1 << int(t) for t in known_obs) == rules.known_hand(g, g.current)
    n = rules.num_players
    expected = np.zeros((n, 28), dtype=np.float32)  # the rows block read from the state
    for k in range(n):
        p = (g.current + k) % n
        named = x.known[p] if k == 0 else x.seen[p]
        row_tiles = x.rows[p]
        for i, t in enumerate(row_tiles):
            if named >> t & 1:
                expected[k, t] = 1.0 if x.open[p] else 1.0 / (len(row_tiles) - i)
    np.testing.assert_allclose(obs[u.observation_layout["rows"]], expected.ravel(), rtol=1e-6)
    for a in acts:
        clone = g.clone()
        rules.apply(clone, a)  # must not raise
    unmasked = [a for a in range(rules.num_actions) if not mask[a]]
    for a in rnd.sample(unmasked, min(2, len(unmasked))):
        with pytest.raises(ValueError):
            env.step(a)


@pytest.mark.parametrize(("name", "n", "teams", "opts"), CONFIGS, ids=IDS)
@settings(max_examples=10, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=True))
def test_blind_invariants(name, n, teams, opts, seed, rnd):
    env = domino_env.make(name, num_players=n, teams=teams, **opts)
    env.reset(seed=seed)
    u = env.unwrapped
    steps = 0
    while not all(env.terminations.values()):
        assert steps < 5000
        check_invariants(u)
        check_mask(env, rnd)
        legal_now = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
        env.step(rnd.choice(legal_now))
        steps += 1
    check_invariants(u)
