"""Scenario tests for Osel / "Donkey" (docs/rules/index.md and docs/rules/osel.md), each on a hand-built deal,
and Osel-specific hypothesis invariants over random matches.

Every scenario fixes the hands, the bazaar order and (where the opening rule is not under test)
the leader, plays a scripted line of moves through the public AEC interface and checks what the
rule book says: who leads, the late spinner and its four arms, multi-double turns with ``stop``,
face-down doubles, forced draws, fish, the remembered-points scoring, the match end and ranks.

Most rounds are written along the *trail* ``TRAIL`` (all 21 non-doubles, each fitting the east
end left by the one before): laid one after another on the east end, a deal that gives the seats
these tiles in turn lets the first seat go out while the others keep one tile each.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.agents import GreedyAgent
from domino_env.core.line import CLOSED, OPEN, UNUSED
from domino_env.variants.osel import OselRules
from tests.support.helpers import deal, play, tile, tiles

Tile = tuple[int, int]
ALL_TILES: list[Tile] = [(a, b) for a in range(7) for b in range(a, 7)]
TARGET = 125

# Every non-double once; each tile fits the east end the previous one leaves (lead 0-1: east 1).
TRAIL = [
    "0-1", "1-2", "2-3", "3-4", "4-5", "5-6", "0-6", "0-2", "2-4", "4-6", "1-6",
    "1-3", "3-5", "0-5", "0-3", "3-6", "2-6", "2-5", "1-5", "1-4", "0-4",
]  # fmt: skip


# --- helpers -----------------------------------------------------------------------------------


def start(
    hands: Sequence[Sequence[str | Tile]], leader: int | None = 0, first: Sequence[str] = (), **kw: Any
):
    env = domino_env.make("osel", num_players=len(hands), **kw)
    env.reset(seed=0, options={"deal": deal(hands, leader, first)})
    return env


def start_match(deals: Sequence[dict], num_players: int = 2, **kw: Any):
    env = domino_env.make("osel", num_players=num_players, **kw)
    env.reset(seed=0, options={"deals": list(deals)})
    return env


def current(env) -> int:
    return env.unwrapped.game.current


def stop(env, seat: int | None = None) -> None:
    u = env.unwrapped
    if seat is not None:
        assert current(env) == seat
    assert can_stop(env), "stop is not legal now"
    env.step(u.rules.extra_action_id["stop"])


def can_stop(env) -> bool:
    return any(m["kind"] == "stop" for m in env.unwrapped.legal_moves())


def play_east(env, path: Sequence[str]) -> None:
    """Lead ``path[0]`` and lay every following tile on the east end, each by the seat to move."""
    play(env, path[0], "lead")
    for t in path[1:]:
        play(env, t, "east")


def faces(env, t: str | Tile) -> set[tuple[str, bool]]:
    """(arm, face_down) of every legal placement of tile ``t``."""
    want = tile(t)
    return {(m["arm"], m["face_down"]) for m in env.unwrapped.legal_moves() if m["tile"] == want}


def hand_tiles(env, seat: int) -> set[Tile]:
    u = env.unwrapped
    hand = u.game.hands[seat]
    return {t for i, t in enumerate(u.rules.tile_set.tiles) if hand >> i & 1}


def public(env) -> dict[str, Any]:
    return env.unwrapped.public_state()


def book(env) -> tuple[list[int], list[int], list[bool]]:
    """(written scores, remembered points, opened flags) per seat."""
    state = public(env)
    return state["scores"], state["remembered"], state["opened"]


def rewards(env) -> list[float]:
    return [env.rewards[a] for a in env.possible_agents]


def all_terminated(env) -> bool:
    return all(env.terminations[a] for a in env.possible_agents)


def preset(env, written: list[int], remembered: list[int], opened: list[bool]) -> None:
    """Start the (first) round of a scenario from a given score book, as if earlier rounds were played."""
    game = env.unwrapped.game
    game.scores[:] = written
    game.round_start_scores[:] = written
    game.extra.remembered[:] = remembered
    game.extra.opened[:] = opened


# Two players, the leader goes out along the trail; the other keeps one tile.
OUT_2P = TRAIL[:13]


def out_2p(kept: str, leader: int | None = 0) -> dict:
    """Seat 0 leads 0-1 and goes out with the 13th trail tile; seat 1 keeps ``kept``."""
    return deal([OUT_2P[0::2], [*OUT_2P[1::2], kept]], leader)


# Two players, seat 0 leads 0-1 but seat 1 goes out: its 1-1 (a late spinner) and 1-2 are one
# turn. Seat 0 keeps ``kept``.
TEMPO_LATE = [
    ("0-1", "lead", 0), ("1-1", "east", 1), ("1-2", "east", 1), ("2-3", "east", 0), ("3-4", "east", 1),
    ("4-5", "east", 0), ("5-6", "east", 1), ("0-6", "east", 0), ("0-2", "east", 1), ("2-4", "east", 0),
    ("4-6", "east", 1), ("1-6", "east", 0), ("1-3", "east", 1),
]  # fmt: skip


def tempo_late(kept: str, leader: int | None = 0) -> dict:
    seat0 = [t for t, _, s in TEMPO_LATE if s == 0]
    seat1 = [t for t, _, s in TEMPO_LATE if s == 1]
    return deal([[*seat0, kept], seat1], leader)


# Two players, seat 0 leads the spinner 1-1 and lays 1-2 in the same turn, then goes out with its
# 7th tile after 6 turns; seat 1 lays 5 tiles and keeps the two ``kept``.
TEMPO_LEAD = [
    ("1-1", "lead", 0), ("1-2", "east", 0), ("2-3", "east", 1), ("3-4", "east", 0), ("4-5", "east", 1),
    ("5-6", "east", 0), ("0-6", "east", 1), ("0-2", "east", 0), ("2-4", "east", 1), ("4-6", "east", 0),
    ("1-6", "east", 1), ("1-3", "east", 0),
]  # fmt: skip


def tempo_lead(kept: Sequence[str], leader: int | None = 0) -> dict:
    seat0 = [t for t, _, s in TEMPO_LEAD if s == 0]
    seat1 = [t for t, _, s in TEMPO_LEAD if s == 1]
    return deal([seat0, [*seat1, *kept]], leader)


def play_moves(env, moves: Sequence[tuple[str, str, int]]) -> None:
    for t, arm, seat in moves:
        play(env, t, arm, seat=seat)


# Three players along the trail: seat 1 leads and goes out with the 19th tile; seat 2 keeps
# ``kept2`` and seat 0 keeps ``kept0``.
OUT_3P = TRAIL[:19]


def out_3p(kept0: str, kept2: str) -> dict:
    return deal([[*OUT_3P[2::3], kept0], OUT_3P[0::3], [*OUT_3P[1::3], kept2]], leader=1)


# Four players, no bazaar: the lowest double (1-1, seat 0) leads; every arm of the spinner gets
# one tile and is then closed by a face-down double, and the round is a fish. Seat 0 lays the last
# tile although seat 1 ends with the fewest points (0-0 0-1 0-2 0-3 0-4 = 10).
FISH_4P = [
    ["1-1", "1-2", "5-5", "6-6", "5-6", "4-6", "3-6"],
    ["2-2", "1-3", "0-0", "0-1", "0-2", "0-3", "0-4"],
    ["3-3", "1-4", "0-5", "0-6", "1-6", "2-3", "2-4"],
    ["4-4", "1-5", "2-5", "2-6", "3-4", "3-5", "4-5"],
]


def play_fish(env) -> None:
    play(env, "1-1", "lead", seat=0)
    assert can_stop(env) and current(env) == 0  # the opening double: the turn goes on
    play(env, "1-2", "east", seat=0)
    play(env, "2-2", "east", seat=1, face_down=True)
    play(env, "1-3", "west", seat=1)
    play(env, "3-3", "west", seat=2, face_down=True)
    play(env, "1-4", "north", seat=2)
    play(env, "4-4", "north", seat=3, face_down=True)
    play(env, "1-5", "south", seat=3)
    play(env, "5-5", "south", seat=0, face_down=True)  # all four arms closed: nobody can move


def test_scenario_decks_are_consistent():
    assert sorted(tiles(TRAIL)) == sorted(t for t in ALL_TILES if t[0] != t[1])
    for a, b in itertools.pairwise(TRAIL):
        assert set(tile(a)) & set(tile(b))
    for d in (
        out_2p("2-5"),
        tempo_late("0-3"),
        tempo_lead(["6-6", "0-1"]),
        out_3p("6-6", "0-0"),
        deal(FISH_4P),
    ):
        assert all(len(h) == 7 for h in d["hands"])
    assert sorted(t for h in FISH_4P for t in tiles(h)) == ALL_TILES


# --- opening -----------------------------------------------------------------------------------


LOWEST_DOUBLE_CASES = [
    # (hands, drawn first from the bazaar, the tile that must lead, its holder)
    (
        [
            ["0-0", "4-4", "0-1", "0-2", "0-3", "0-4", "0-5"],
            ["2-2", "3-3", "0-6", "1-2", "1-3", "1-4", "1-5"],
        ],
        ["1-1"],
        "2-2",
        1,
    ),
    (
        [
            ["0-0", "4-4", "0-1", "0-2", "0-3", "0-4", "0-5"],
            ["0-6", "1-2", "1-3", "1-4", "1-5", "1-6", "2-3"],
            ["2-2", "3-3", "2-4", "2-5", "2-6", "3-4", "3-5"],
        ],
        ["1-1"],
        "2-2",
        2,
    ),
    (
        [
            ["0-0", "4-4", "0-1", "0-2", "0-3", "0-4", "0-5"],
            ["1-1", "0-6", "1-2", "1-3", "1-4", "1-5", "1-6"],
            ["2-3", "2-4", "2-5", "2-6", "3-4", "3-5", "3-6"],
            ["2-2", "3-3", "4-5", "4-6", "5-5", "5-6", "6-6"],
        ],
        [],
        "1-1",
        1,
    ),
]


@pytest.mark.parametrize(("hands", "first", "lead", "holder"), LOWEST_DOUBLE_CASES, ids=["2p", "3p", "4p"])
def test_first_round_lowest_double_other_than_blank_leads(hands, first, lead, holder):
    env = start(hands, leader=None, first=first)  # seat 0 holds 0-0: it does not lead
    assert public(env)["leader"] == holder
    assert env.agent_selection == f"player_{holder}"
    moves = env.unwrapped.legal_moves()
    assert [(m["tile"], m["arm"], m["face_down"]) for m in moves] == [(tile(lead), "lead", False)]


def test_first_round_blank_alone_does_not_lead_the_lowest_non_double_does():
    # only 0-0 among the doubles is dealt (seat 0); seat 1 holds 0-1
    doubles = [f"{v}-{v}" for v in range(1, 7)]
    hands = [
        ["0-0", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5"],
        ["0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "1-2"],
    ]
    env = start(hands, leader=None, first=doubles)
    assert public(env)["leader"] == 1
    assert [m["tile"] for m in env.unwrapped.legal_moves()] == [(0, 1)]


def test_first_round_lowest_non_double_by_pips_then_small_half():
    # no double other than 0-0 dealt, 0-1 and 0-2 in the bazaar: 0-3 (3 pips, small half 0)
    # leads before 1-2 (3 pips, small half 1)
    bazaar = ["0-1", "0-2", *[f"{v}-{v}" for v in range(1, 7)]]
    hands = [
        ["1-2", "1-4", "1-5", "1-6", "2-4", "2-5", "2-6"],
        ["0-3", "0-4", "0-5", "0-6", "0-0", "3-5", "3-6"],
    ]
    env = start(hands, leader=None, first=bazaar)
    assert public(env)["leader"] == 1
    assert [m["tile"] for m in env.unwrapped.legal_moves()] == [(0, 3)]
    # and with the hands swapped the holder moves with the tile
    env = start(hands[::-1], leader=None, first=bazaar)
    assert public(env)["leader"] == 0
    assert [m["tile"] for m in env.unwrapped.legal_moves()] == [(0, 3)]


def test_round_episode_uses_the_first_round_rule():
    hands = [
        ["0-0", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5"],
        ["0-1", "5-5", "0-3", "0-4", "0-5", "0-6", "1-2"],
    ]
    env = start(hands, leader=None, episode="round")
    assert public(env)["leader"] == 1
    assert [m["tile"] for m in env.unwrapped.legal_moves()] == [(5, 5)]


def test_later_round_is_led_by_the_last_layer_with_any_tile():
    # seat 1 goes out thanks to a two-tile turn although seat 0 led the round
    env = start_match([tempo_late("0-3"), {}])
    play_moves(env, TEMPO_LATE)
    state = public(env)
    assert state["round"] == 1
    assert state["leader"] == 1 and env.agent_selection == "player_1"
    moves = env.unwrapped.legal_moves()
    assert {m["arm"] for m in moves} == {"lead"}
    assert {m["tile"] for m in moves} == hand_tiles(env, 1)  # any tile, not the lowest double


def test_later_round_after_a_fish_is_led_by_the_last_layer_not_the_fewest_points():
    env = start_match([deal(FISH_4P, leader=None), {}], num_players=4)
    play_fish(env)
    state = public(env)
    assert state["round"] == 1
    assert state["leader"] == 0  # seat 0 laid 5-5 last; seat 1 had the fewest points
    assert {m["tile"] for m in env.unwrapped.legal_moves()} == hand_tiles(env, 0)


# --- spinner and turns ---------------------------------------------------------------------------


def test_lead_double_is_the_spinner_with_four_arms_at_once_and_no_face_down():
    env = start(FISH_4P, leader=None)
    assert public(env)["leader"] == 0
    assert faces(env, "1-1") == {("lead", False)}
    obs = env.observe("player_0")["observation"]
    phase = env.unwrapped.observation_layout["phase"]
    assert list(obs[phase]) == [1.0, 0.0]  # lead, not continuing
    play(env, "1-1", "lead", seat=0)
    assert public(env)["open_ends"] == {"east": 1, "west": 1, "north": 1, "south": 1}
    assert faces(env, "1-2") == {("east", False), ("west", False), ("north", False), ("south", False)}
    obs = env.observe("player_0")["observation"]
    assert list(obs[phase]) == [0.0, 1.0]  # continuing the turn after the opening double


def test_late_spinner_opens_four_arms_at_once():
    hands = [
        ["2-3", "3-5", "4-6", "1-4", "0-6", "1-6", "0-1"],
        ["3-3", "2-2", "3-6", "0-4", "1-5", "0-5", "2-6"],
    ]
    env = start(hands)
    play(env, "2-3", "lead", seat=0)
    game = env.unwrapped.game
    assert public(env)["open_ends"] == {"east": 3, "west": 2}
    assert game.line.state[2] == game.line.state[3] == UNUSED
    assert not env.unwrapped.game.line.has_spinner
    # 3-3 fits east only and will be the spinner: face up only; 2-2 likewise on the west
    assert faces(env, "3-3") == {("east", False)}
    assert faces(env, "2-2") == {("west", False)}
    play(env, "3-3", "east", seat=1)
    assert public(env)["open_ends"] == {"east": 3, "west": 2, "north": 3, "south": 3}
    assert env.unwrapped.game.line.has_spinner
    # the second double is an ordinary double: face up or face down
    assert faces(env, "2-2") == {("west", False), ("west", True)}
    play(env, "2-2", "west", seat=1)
    assert public(env)["open_ends"] == {"east": 3, "west": 2, "north": 3, "south": 3}
    stop(env, seat=1)
    assert current(env) == 0
    play(env, "3-5", "north", seat=0)
    assert public(env)["open_ends"] == {"east": 3, "west": 2, "north": 5, "south": 3}


def test_multi_double_turn_ended_by_stop():
    hands = [
        ["2-3", "3-5", "4-6", "1-4", "0-6", "1-6", "0-1"],
        ["3-3", "2-2", "3-6", "0-4", "1-5", "0-5", "2-6"],
    ]
    env = start(hands)
    play(env, "2-3", "lead", seat=0)
    assert not can_stop(env)  # a turn starts with a tile, never with stop
    play(env, "3-3", "east", seat=1)
    assert current(env) == 1 and can_stop(env)
    play(env, "2-2", "west", seat=1)
    assert current(env) == 1 and can_stop(env)
    assert faces(env, "3-6") and faces(env, "2-6")  # still tiles to lay, but the player may stop
    phase = env.unwrapped.observation_layout["phase"]
    assert list(env.observe("player_1")["observation"][phase]) == [0.0, 1.0]
    stop(env, seat=1)
    assert current(env) == 0
    assert not can_stop(env)
    assert list(env.observe("player_1")["observation"][phase]) == [0.0, 0.0]
    assert list(env.observe("player_0")["observation"][phase]) == [0.0, 0.0]
    assert public(env)["hand_sizes"] == [6, 5]


def test_multi_double_turn_ended_by_a_non_double():
    hands = [
        ["2-3", "3-5", "4-6", "1-4", "0-6", "1-6", "0-1"],
        ["3-3", "2-2", "3-6", "0-4", "1-5", "0-5", "2-6"],
    ]
    env = start(hands)
    play(env, "2-3", "lead", seat=0)
    play(env, "3-3", "east", seat=1)
    play(env, "2-2", "west", seat=1)
    play(env, "3-6", "north", seat=1)  # a non-double ends the turn although 2-6 still fits
    assert current(env) == 0
    assert public(env)["hand_sizes"] == [6, 4]
    assert not can_stop(env)


def test_a_non_double_first_ends_the_turn_even_with_doubles_in_hand():
    hands = [
        ["2-3", "3-5", "4-6", "1-4", "0-6", "1-6", "0-1"],
        ["3-3", "2-2", "3-6", "0-4", "1-5", "0-5", "2-6"],
    ]
    env = start(hands)
    play(env, "2-3", "lead", seat=0)  # a non-double lead ends the leader's turn
    assert current(env) == 1
    play(env, "3-6", "east", seat=1)
    assert current(env) == 0


def test_turn_after_a_double_ends_by_itself_when_nothing_more_fits():
    hands = [
        ["2-3", "3-5", "4-6", "1-4", "0-6", "1-6", "0-1"],
        ["3-3", "0-0", "0-4", "1-5", "0-5", "1-1", "4-5"],
    ]
    env = start(hands, first=["2-2"])
    play(env, "2-3", "lead", seat=0)
    play(env, "3-3", "east", seat=1)  # ends 3, 2, 3, 3: nothing else of seat 1 fits, no draw mid-turn
    assert current(env) == 0
    assert not can_stop(env)
    assert public(env)["hand_sizes"] == [6, 6]
    assert public(env)["boneyard_size"] == 14


def test_draw_until_a_tile_fits_and_lay_it():
    # seat 1 holds nothing with 5 or 6; it draws 1-4 (no fit) then 5-5 and must lay it on the west
    hands = [
        ["5-6", "0-1", "0-2", "0-3", "1-2", "1-3", "2-3"],
        ["0-0", "0-4", "1-1", "2-2", "2-4", "3-3", "3-4"],
    ]
    env = start(hands, first=["1-4", "5-5", "4-5"])
    play(env, "5-6", "lead", seat=0)
    u = env.unwrapped
    draws = [e for e in u.game.events if e[0] == "draw"]
    assert [(e[1], u.rules.tile_set.tiles[e[2]]) for e in draws] == [(1, (1, 4)), (1, (5, 5))]
    assert current(env) == 1
    assert {(m["tile"], m["arm"], m["face_down"]) for m in u.legal_moves()} == {((5, 5), "west", False)}
    play(env, "5-5", "west", seat=1)  # the late spinner: north and south open at 5
    assert public(env)["open_ends"] == {"east": 6, "west": 5, "north": 5, "south": 5}
    # nothing else of seat 1 fits and there is no draw mid-turn: the turn ended; seat 0 holds no
    # 5 or 6 either and draws 4-5
    assert current(env) == 0
    assert [u.rules.tile_set.tiles[e[2]] for e in u.game.events if e[0] == "draw"][-1] == (4, 5)
    assert public(env)["boneyard_size"] == 14 - 3
    assert {(m["tile"], m["arm"]) for m in u.legal_moves()} == {
        ((4, 5), a) for a in ("west", "north", "south")
    }


# --- face-down doubles ---------------------------------------------------------------------------


def test_face_down_double_closes_its_arm_for_good():
    env = start(FISH_4P, leader=None)
    u = env.unwrapped
    play(env, "1-1", "lead", seat=0)
    play(env, "1-2", "east", seat=0)
    a_up = u.rules.play_action(u.rules.tile_set.id_of("2-2"), 0)
    a_down = u.rules.play_action(u.rules.tile_set.id_of("2-2"), 0, face_down=True)
    mask = env.observe("player_1")["action_mask"]
    assert mask[a_up] == 1 and mask[a_down] == 1  # both faces in the mask
    assert faces(env, "2-2") == {("east", False), ("east", True)}
    play(env, "2-2", "east", seat=1, face_down=True)
    assert u.game.line.state[0] == CLOSED
    assert public(env)["open_ends"] == {"west": 1, "north": 1, "south": 1}
    assert current(env) == 1 and can_stop(env)  # a face-down double is still a double
    # the closed arm is visible to everybody in the observation
    ends = u.observation_layout["ends"]
    width = u.rules.tile_set.num_values + 4
    for agent in env.possible_agents:
        east = env.observe(agent)["observation"][ends][:width]
        assert list(east[-4:]) == [0.0, 1.0, 0.0, 0.0]  # open, closed, double end, live
    play(env, "1-3", "west", seat=1)
    # seat 2 holds 2-3 and 2-4, but nothing attaches to the closed east arm
    assert all(arm != "east" for arm, _ in faces(env, "2-3") | faces(env, "2-4"))
    assert faces(env, "3-3") == {("west", False), ("west", True)}


def test_face_up_double_keeps_its_arm_open():
    env = start(FISH_4P, leader=None)
    play(env, "1-1", "lead", seat=0)
    play(env, "1-2", "east", seat=0)
    play(env, "2-2", "east", seat=1)
    assert env.unwrapped.game.line.state[0] == OPEN
    assert public(env)["open_ends"]["east"] == 2


def test_fish_all_arms_closed():
    env = start(FISH_4P, leader=None, episode="round")
    play_fish(env)
    assert all_terminated(env)
    game = env.unwrapped.game
    assert game.line.state == [CLOSED] * 4
    assert [e[1] for e in game.events if e[0] == "pass"] == [1, 2, 3, 0]
    assert game.result is not None and game.result.blocked
    assert game.result.winner == 1  # fewest round points
    # seat 0: 42 (opens), seat 1: 10 remembered, seat 2: 29, seat 3: 39; nobody went out
    assert book(env) == ([42, 0, 29, 39], [0, 10, 0, 0], [True, False, True, True])
    assert rewards(env) == pytest.approx([-1.0, 1.0, 1 / 3, -1 / 3])


# --- scoring -------------------------------------------------------------------------------------


def test_remembered_points_across_three_rounds_and_lost_by_going_out():
    env = start_match([out_2p("2-5"), out_2p("1-4", leader=None), tempo_late("0-3", leader=None), {}])
    u = env.unwrapped
    play_east(env, OUT_2P)  # round 1: seat 1 keeps 2-5 = 7
    assert public(env)["round"] == 1
    assert book(env) == ([0, 0], [0, 7], [False, False])
    assert public(env)["leader"] == 0  # seat 0 laid the last tile
    # the remembered points are public and in both observations, seat-relative
    layout = u.observation_layout
    obs0 = env.observe("player_0")["observation"]
    obs1 = env.observe("player_1")["observation"]
    np.testing.assert_allclose(obs0[layout["remembered"]], [0, 7 / TARGET])
    np.testing.assert_allclose(obs1[layout["remembered"]], [7 / TARGET, 0])
    assert list(obs0[layout["opened"]]) == [0.0, 0.0]
    play_east(env, OUT_2P)  # round 2: seat 1 keeps 1-4 = 5, remembered 12 (12 does not open)
    assert public(env)["round"] == 2
    assert book(env) == ([0, 0], [0, 12], [False, False])
    play_moves(env, TEMPO_LATE)  # round 3: seat 1 goes out before opening: loses its 12
    assert public(env)["round"] == 3
    assert book(env) == ([0, 0], [3, 0], [False, False])
    assert not any(env.terminations.values())
    np.testing.assert_allclose(env.observe("player_1")["observation"][layout["remembered"]], [0, 3 / TARGET])


def test_score_opens_above_12_with_the_remembered_points_then_writes_directly():
    deals = [
        out_2p("2-5"),  # 7 remembered
        out_2p("6-6", leader=None),  # 12: still remembered (19)
        tempo_lead(["6-6", "0-1"], leader=None),  # 13 > 12: opens with 19 + 13 = 32
        out_2p("2-5", leader=None),  # written directly: 39
        tempo_late("0-3", leader=None),  # seat 1 goes out with an open score: keeps 39
        {},
    ]
    env = start_match(deals, reward="points")
    u = env.unwrapped
    play_east(env, OUT_2P)
    play_east(env, OUT_2P)
    assert book(env) == ([0, 0], [0, 19], [False, False])
    assert rewards(env) == [0.0, 0.0]
    play_moves(env, TEMPO_LEAD)
    assert book(env) == ([0, 32], [0, 0], [False, True])
    assert rewards(env) == pytest.approx([0.0, -32 / TARGET])  # points reward: written points only
    layout = u.observation_layout
    assert list(env.observe("player_0")["observation"][layout["opened"]]) == [0.0, 1.0]
    assert list(env.observe("player_1")["observation"][layout["opened"]]) == [1.0, 0.0]
    play_east(env, OUT_2P)
    assert book(env) == ([0, 39], [0, 0], [False, True])
    play_moves(env, TEMPO_LATE)
    assert book(env) == ([0, 39], [3, 0], [False, True])


def test_score_events_name_the_opening():
    env = start_match([tempo_lead(["6-6", "0-1"])], episode="round")
    preset(env, [0, 0], [0, 7], [False, False])
    play_moves(env, TEMPO_LEAD)
    assert all_terminated(env)
    assert [e for e in env.unwrapped.game.events if e[0] == "score"] == [("score", 1, 7 + 13, "score opened")]
    assert book(env) == ([0, 20], [0, 0], [False, True])


def test_lone_blank_counts_10_but_blank_with_another_tile_only_its_pips():
    env = start_match([out_2p("0-0"), tempo_lead(["0-0", "0-1"], leader=None), {}])
    play_east(env, OUT_2P)
    assert book(env) == ([0, 0], [0, 10], [False, False])
    play_moves(env, TEMPO_LEAD)
    assert book(env) == ([0, 0], [0, 11], [False, False])


def test_round_points_lone_blank_only():
    rules = OselRules(num_players=2)
    blank = 1 << rules.tile_set.id_of("0-0")
    six = 1 << rules.tile_set.id_of("6-6")
    assert rules.round_points([blank, 0]) == [10, 0]
    assert rules.round_points([blank | six, six]) == [12, 12]


# --- match end and ranking -----------------------------------------------------------------------


@pytest.mark.parametrize(("before", "ends"), [(112, False), (113, True)])
def test_match_ends_when_a_written_score_reaches_125(before, ends):
    env = start_match([out_3p("6-6", "0-0")], num_players=3)
    preset(env, [before, 0, 0], [0, 8, 0], [True, False, False])
    play_east(env, OUT_3P)
    written, remembered, _ = book(env)
    assert written == [before + 12, 0, 0]
    assert remembered == [0, 0, 10]  # seat 1 went out (loses 8), seat 2's lone 0-0 counts 10
    assert all_terminated(env) == ends
    assert public(env)["match_over"] == ends
    if ends:
        assert public(env)["round"] == 0
        # seats 1 and 2 both have 0 written: fewer remembered points ranks first
        assert rewards(env) == [-1.0, 1.0, 0.0]
    else:
        assert public(env)["round"] == 1


def test_match_end_equal_written_and_remembered_share_the_rank():
    env = start_match([out_3p("6-6", "1-4")], num_players=3)
    preset(env, [113, 40, 35], [0, 0, 0], [True, True, True])
    play_east(env, OUT_3P)
    assert book(env) == ([125, 40, 40], [0, 0, 0], [True, True, True])
    assert all_terminated(env)
    assert rewards(env) == [-1.0, 0.5, 0.5]


def test_match_keys_lowest_written_then_fewest_remembered():
    rules = OselRules(num_players=4)
    env = domino_env.make("osel", num_players=4)
    env.reset(seed=0)
    game = env.unwrapped.game
    game.scores[:] = [130, 20, 0, 0]
    game.extra.remembered[:] = [0, 0, 9, 3]
    keys = rules.match_keys(game)
    assert rules.outcome(keys) == pytest.approx([-1.0, -1 / 3, 1 / 3, 1.0])


def test_round_episode_ranks_the_winner_first_then_fewest_round_points():
    env = start_match([out_3p("6-6", "0-0")], num_players=3, episode="round")
    play_east(env, OUT_3P)
    assert all_terminated(env)
    assert rewards(env) == [-1.0, 1.0, 0.0]  # seat 1 out; seat 2: 10 (lone 0-0); seat 0: 12


def test_round_episode_equal_round_points_share():
    env = start_match([out_3p("0-4", "2-2")], num_players=3, episode="round")
    play_east(env, OUT_3P)
    assert all_terminated(env)
    assert rewards(env) == [-0.5, 1.0, -0.5]


# --- greedy baseline ----------------------------------------------------------------------------


def test_greedy_sheds_doubles_first_then_heavy_tiles_face_up_and_stops_last():
    hands = [
        ["2-3", "3-5", "4-6", "1-4", "0-6", "1-6", "0-1"],
        ["3-3", "2-2", "3-6", "0-4", "1-5", "0-5", "2-6"],
    ]
    env = start(hands)
    play(env, "2-3", "lead", seat=0)
    greedy = GreedyAgent(seed=0)
    u = env.unwrapped
    choice = greedy(u, env.observe("player_1"))
    assert u.describe_action(choice)["tile"] == (3, 3)  # a double before the heavier 3-6 / 2-6
    env.step(choice)
    choice = greedy(u, env.observe("player_1"))
    move = u.describe_action(choice)
    assert (move["tile"], move["face_down"]) == ((2, 2), False)
    env.step(choice)
    choice = greedy(u, env.observe("player_1"))
    assert u.describe_action(choice)["tile"] == (3, 6)  # laying beats stopping


# --- public state and options ------------------------------------------------------------------


def test_public_state_and_options():
    env = domino_env.make("osel", num_players=3)
    env.reset(seed=1)
    state = public(env)
    assert state["remembered"] == [0, 0, 0] and state["opened"] == [False, False, False]
    u = env.unwrapped
    assert u.rules.num_actions == 28 * 4 * 2 + 1
    assert u.rules.extra_action_id["stop"] == 224
    assert u.observation_layout["remembered"].stop - u.observation_layout["remembered"].start == 3
    with pytest.raises(ValueError, match="teams"):
        domino_env.make("osel", num_players=4, teams=True)
    with pytest.raises(ValueError, match="5"):
        domino_env.make("osel", num_players=5)


# --- hypothesis invariants -----------------------------------------------------------------------

MAX_DECISIONS = 5000


def fitting_placements(game, rules) -> set[int]:
    """The oracle for the mask: every tile on a matching open end face up; face down for doubles
    once the spinner is down; plus stop while a turn goes on."""
    line, ts = game.line, rules.tile_set
    hand = game.hands[game.current]
    held = [t for t in range(ts.size) if hand >> t & 1]
    if line.empty:
        if game.required_lead >= 0:
            return {rules.play_action(game.required_lead, 0)}
        return {rules.play_action(t, 0) for t in held}
    out = set()
    for t in held:
        for slot in range(4):
            if line.state[slot] == OPEN and line.value[slot] in ts.tiles[t]:
                out.add(rules.play_action(t, slot))
                if ts.is_double[t] and line.has_spinner:
                    out.add(rules.play_action(t, slot, face_down=True))
    if out and game.turn_laid:
        out.add(rules.extra_action_id["stop"])
    return out


def check_step(u, action: int, face_downs: list[int]) -> None:
    game, rules = u.game, u.rules
    ts = rules.tile_set
    assert set(game.legal) == fitting_placements(game, rules)
    if rules.action_face_down[action]:
        assert game.line.has_spinner, "the spinner laid face down"
    seat = game.current
    written, remembered = game.scores[:], game.extra.remembered[:]
    opened = game.extra.opened[:]
    clone = game.clone()
    logged = len(game.events)
    rules.apply(clone, action)
    after_w, after_r, after_o = clone.scores, clone.extra.remembered, clone.extra.opened
    for s in range(rules.num_players):
        assert after_o[s] or not opened[s], "an opened score closed again"
        assert (after_w[s] > 0) == after_o[s], "written points without an open score"
        assert not after_o[s] or after_r[s] == 0, "remembered points beside an open score"
    closed = sum(1 for status in clone.line.state if status == CLOSED)
    assert closed == len(face_downs) + rules.action_face_down[action], (
        "an arm closed without a face-down double"
    )
    if not clone.round_over:
        assert after_w == written and after_r == remembered, "scores moved in the middle of a round"
        if rules.action_kind[action] == "play" and ts.is_double[rules.action_tile[action]]:
            # after a double the same turn goes on exactly when another tile of the hand fits
            goes_on = bool(clone.hands[seat] & clone.line.playable_mask())
            assert (clone.current == seat and clone.turn_laid == game.turn_laid + 1) == goes_on
        else:  # a non-double or stop ends the turn
            assert clone.turn_laid == 0
            assert clone.events[logged + (rules.action_kind[action] == "play") :] == [] or (
                clone.events[logged + (rules.action_kind[action] == "play")][1] != seat
            )
        return
    # the round ended: the bookkeeping per seat
    result = clone.result
    assert result is not None
    points = rules.round_points(clone.hands)
    went_out = None if result.blocked else result.winner
    for s in range(rules.num_players):
        if s == went_out and not opened[s]:
            assert after_w[s] == written[s] == 0 and after_r[s] == 0
        else:
            assert after_w[s] + after_r[s] == written[s] + remembered[s] + points[s]
            if not opened[s] and points[s] <= 12:
                assert after_r[s] == remembered[s] + points[s] and not after_o[s]
            if not opened[s] and points[s] > 12:
                assert after_o[s] and after_w[s] == remembered[s] + points[s]
    last = [e[1] for e in clone.events if e[0] == "lay"][-1]
    assert result.next_leader == clone.next_leader == last
    assert clone.match_over == (max(after_w) >= TARGET)


@pytest.mark.parametrize("num_players", [2, 3, 4])
@settings(max_examples=12, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=True))
def test_osel_invariants_over_random_matches(num_players, seed, rnd):
    env = domino_env.make("osel", num_players=num_players)
    env.reset(seed=seed)
    u = env.unwrapped
    face_downs: list[int] = []
    serial = u.game.round_serial
    steps = 0
    while not all_terminated(env):
        assert steps < MAX_DECISIONS
        if u.game.round_serial != serial:
            serial, face_downs = u.game.round_serial, []
            # a later round: the leader may lead any tile of its hand
            assert u.game.current == u.game.leader and u.game.required_lead == -1
        legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
        action = rnd.choice(legal)
        check_step(u, action, face_downs)
        if u.rules.action_face_down[action]:
            face_downs.append(action)
        env.step(action)
        steps += 1
    assert max(u.game.scores) >= TARGET


@pytest.mark.parametrize("num_players", [2, 4])
@settings(max_examples=10, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=True))
def test_osel_draws_only_with_nothing_to_lay(num_players, seed, rnd):
    env = domino_env.make("osel", num_players=num_players, episode="round")
    env.reset(seed=seed)
    u = env.unwrapped
    while not all_terminated(env):
        game, rules = u.game, u.rules
        legal = list(game.legal)
        action = rnd.choice(legal)
        clone = game.clone()
        logged = len(game.events)
        rules.apply(clone, action)
        hands = list(game.hands)
        line = clone.line
        for event in clone.events[logged:]:
            if event[0] in ("draw", "pass"):
                seat = event[1]
                assert not (hands[seat] & line.playable_mask()), "drew or passed holding a fitting tile"
                if event[0] == "pass":
                    assert not clone.stock, "passed while the bazaar had tiles"
                else:
                    hands[seat] |= 1 << event[2]
            elif event[0] == "lay":
                hands[event[1]] &= ~(1 << event[2])
        env.step(action)


def test_greedy_and_random_matches_finish():
    from domino_env.agents import RandomAgent

    for n in (2, 3, 4):
        env = domino_env.make("osel", num_players=n)
        env.reset(seed=n)
        agents = [GreedyAgent(seed=1), RandomAgent(seed=2)]
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = int(agent.split("_")[1])
            env.step(agents[seat % 2](env.unwrapped, obs))
        assert max(env.unwrapped.game.scores) >= TARGET
