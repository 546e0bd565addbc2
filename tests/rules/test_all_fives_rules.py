"""Scenario tests for All Fives (docs/rules/index.md and docs/rules/all_fives.md), each on a hand-built deal.

Every scenario fixes the hands, the boneyard order and the leader, plays a scripted line of
moves through the public AEC interface and checks what the rule book says must happen: who
leads, which arms are open, what the count is and who scores it, forced draws and passes,
how a round ends and what it scores, when the match ends, who leads the next round, and the
two reward modes.

Long scenarios are written as a *path*: the lead and then tiles laid one after another on the
east end, dealt to the seats in turn (tile ``i`` to seat ``i % n``), so every seat always holds
the tile it is asked to lay. Expected counts in the comments are worked out by hand from the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import domino_env
from domino_env.variants.all_fives import end_count
from tests.support.helpers import deal, play, tile, tiles

Tile = tuple[int, int]
ALL_TILES: list[Tile] = [(a, b) for a in range(7) for b in range(a, 7)]
TARGET = 250


# --- helpers -----------------------------------------------------------------------------------


def start(
    hands: Sequence[Sequence[str | Tile]], leader: int | None = 0, first: Sequence[str] = (), **kw: Any
):
    env = domino_env.make("all_fives", num_players=len(hands), **kw)
    env.reset(seed=0, options={"deal": deal(hands, leader, first)})
    return env


def current(env) -> int:
    return env.unwrapped.game.current


def play_path(env, path: Sequence[str]) -> None:
    """Lead ``path[0]`` and lay every following tile on the east end, each by the seat to move."""
    play(env, path[0], "lead")
    for t in path[1:]:
        play(env, t, "east")


def arms(env, t: str | Tile) -> set[str]:
    """The arms on which the seat to move may lay tile ``t``."""
    want = tile(t)
    return {m["arm"] for m in env.unwrapped.legal_moves() if m["tile"] == want}


def all_arms(env) -> set[str]:
    return {m["arm"] for m in env.unwrapped.legal_moves()}


def count(env) -> int:
    return end_count(env.unwrapped.game.line)


def scores(env) -> list[int]:
    return list(env.unwrapped.game.scores)


def score_events(env, reason: str | None = None) -> list[tuple[int, int, str]]:
    """(side, points, reason) of this round's score events."""
    return [
        (e[1], e[2], e[3])
        for e in env.unwrapped.game.events
        if e[0] == "score" and (reason is None or e[3] == reason)
    ]


def events_of(env, kind: str) -> list[tuple]:
    return [e for e in env.unwrapped.game.events if e[0] == kind]


def hand_tiles(env, seat: int) -> set[Tile]:
    u = env.unwrapped
    hand = u.game.hands[seat]
    return {t for i, t in enumerate(u.rules.tile_set.tiles) if hand >> i & 1}


def rewards(env) -> list[float]:
    return [env.rewards[a] for a in env.possible_agents]


def all_terminated(env) -> bool:
    return all(env.terminations[a] for a in env.possible_agents)


# --- scenarios ---------------------------------------------------------------------------------

# Two players, seat 0 goes out. The lead 0-1 leaves the west end at 0, so the count is the
# east end: 5 after 4-5 (seat 0) and after 3-5 (seat 0's last tile). Seat 1 keeps 6-6 = 12.
PATH_2P = ["0-1", "1-2", "2-3", "3-4", "4-5", "5-6", "0-6", "0-2", "2-4", "4-6", "1-6", "1-3", "3-5"]
HANDS_2P = [PATH_2P[0::2], [*PATH_2P[1::2], "6-6"]]

# Three players, seat 0 goes out. West stays 5 (lead 5-6); seat 1 counts 5 (0-6), 10 (3-5),
# 5 (0-3) and 10 (2-5) = 30; seats 0 and 2 never count. Left in hand: 0-5 (5) and 4-4 (8).
PATH_3P = [
    "5-6", "0-6", "0-4", "4-6", "2-6", "2-4", "3-4", "3-5", "1-5", "1-3",
    "0-3", "0-2", "1-2", "1-6", "3-6", "2-3", "2-5", "4-5", "1-4",
]  # fmt: skip
HANDS_3P = [PATH_3P[0::3], [*PATH_3P[1::3], "0-5"], [*PATH_3P[2::3], "4-4"]]

# Three players with two forced draws: seat 0 cannot lay at its 6th turn (ends 2 and 1) and draws
# 1-5, seat 1 cannot at its 6th (ends 2 and 5) and draws 4-5, so seat 2 goes out first. West stays
# 2 (lead 2-3): seat 0 counts 5 (lead) and 5 (3-6), seat 1 counts 5 (0-3). Left: 5-5 and 1-1.
PATH_3P_DRAWS = [
    "2-3", "3-4", "2-4", "0-2", "0-6", "5-6", "0-5", "0-3", "3-5", "2-5", "2-6",
    "1-6", "0-1", "0-4", "1-4", "1-5", "4-5", "4-6", "3-6", "1-3", "1-2",
]  # fmt: skip
HANDS_3P_DRAWS = [
    [t for i, t in enumerate(PATH_3P_DRAWS) if i % 3 == 0 and i != 15] + ["5-5"],
    [t for i, t in enumerate(PATH_3P_DRAWS) if i % 3 == 1 and i != 16] + ["1-1"],
    PATH_3P_DRAWS[2::3],
]
FIRST_3P_DRAWS = ["1-5", "4-5"]

# Four players, seat 0 goes out with the 25th tile; doubles on the way (2-2 is a late spinner).
# Team 1 counts 5 (4-5 by seat 1) and 5 (1-5 by seat 3). Left: seat 1 2-5, seat 2 5-5, seat 3 0-5.
PATH_4P = [
    "0-1", "1-3", "3-4", "0-4", "0-6", "2-6", "2-2", "2-4", "4-4", "4-5", "5-6", "6-6", "3-6",
    "2-3", "1-2", "1-4", "4-6", "1-6", "1-1", "1-5", "3-5", "3-3", "0-3", "0-0", "0-2",
]  # fmt: skip
HANDS_4P = [PATH_4P[0::4], [*PATH_4P[1::4], "2-5"], [*PATH_4P[2::4], "5-5"], [*PATH_4P[3::4], "0-5"]]

# Four players, a blocked round: all seven 0-tiles end up on the table and every open end shows 0
# (east 0-3 3-1 1-0, west 0-5 5-2 2-0, north 0-4 4-6 6-0, south empty at the 0-0 spinner).
# No count along the way is a multiple of 5 (3, 8, 6, 3, 7, 6, 4, 6, 0).
BLOCK_MOVES = [
    ("0-0", "lead"), ("0-3", "east"), ("0-5", "west"), ("1-3", "east"), ("2-5", "west"),
    ("0-4", "north"), ("0-1", "east"), ("0-2", "west"), ("4-6", "north"), ("0-6", "north"),
]  # fmt: skip
BLOCK_PLAYED = [["0-0", "2-5", "4-6"], ["0-3", "0-4", "0-6"], ["0-5", "0-1"], ["1-3", "0-2"]]


def block_hands(extras: Sequence[Sequence[str]], rotate: int = 0) -> list[list[str]]:
    """The blocked scenario's hands with the given leftovers (4, 4, 5, 5 tiles); seat k -> k + rotate."""
    hands = [[*played, *extra] for played, extra in zip(BLOCK_PLAYED, extras, strict=True)]
    return [hands[(seat - rotate) % 4] for seat in range(4)]


def play_block(env, rotate: int = 0) -> None:
    for i, (t, arm) in enumerate(BLOCK_MOVES):
        play(env, t, arm, seat=(i + rotate) % 4)


# Seat 3 holds the fewest pips (19); the others hold 27 + 30 + 50 = 107.
BLOCK_SEAT3_WINS = [
    ["1-5", "1-6", "2-4", "2-6"],
    ["3-3", "3-4", "3-5", "3-6"],
    ["4-4", "4-5", "5-5", "5-6", "6-6"],
    ["1-1", "1-2", "2-2", "1-4", "2-3"],
]
# Seat 1 alone holds the fewest (14), but team 0+2 holds 24 + 38 = 62 against 14 + 50 = 64.
BLOCK_TEAM0_WINS = [
    ["1-5", "1-6", "2-3", "2-4"],
    ["1-1", "1-2", "1-4", "2-2"],
    ["2-6", "3-3", "3-4", "3-5", "3-6"],
    ["4-4", "4-5", "5-5", "5-6", "6-6"],
]
# Seats 0 and 1 tie for the fewest pips: 19 each (38 and 50 for the others).
BLOCK_TIE = [
    ["1-1", "1-4", "2-4", "3-3"],
    ["1-2", "2-2", "1-6", "2-3"],
    ["1-5", "2-6", "3-4", "3-5", "3-6"],
    ["4-4", "4-5", "5-5", "5-6", "6-6"],
]
# Both teams hold 63 pips.
BLOCK_TEAM_TIE = [
    ["1-1", "1-2", "1-4", "2-2"],
    ["1-5", "2-3", "2-4", "2-6"],
    ["6-6", "5-6", "5-5", "4-5", "1-6"],
    ["3-3", "3-4", "3-5", "3-6", "4-4"],
]

# Four players as teams; one scoring tile for each of seats 0, 2 and 3.
HANDS_TEAMS = [
    ["2-3", "0-0", "0-1", "0-2", "0-3", "0-4", "0-5"],
    ["3-4", "0-6", "1-1", "1-2", "1-3", "1-4", "1-5"],
    ["2-6", "2-2", "2-4", "2-5", "3-3", "3-5", "3-6"],
    ["1-6", "4-4", "4-5", "4-6", "5-5", "5-6", "6-6"],
]


def play_teams_counts(env) -> None:
    play(env, "2-3", "lead", seat=0)  # 2 + 3 = 5: team 0
    play(env, "3-4", "east", seat=1)  # 2 + 4 = 6
    play(env, "2-6", "west", seat=2)  # 6 + 4 = 10: team 0
    play(env, "1-6", "west", seat=3)  # 1 + 4 = 5: team 1


def test_scenario_decks_are_consistent():
    for hands in (HANDS_2P, HANDS_3P, HANDS_3P_DRAWS, HANDS_4P, HANDS_TEAMS):
        assert all(len(h) == 7 for h in hands)
        deal(hands)  # no tile twice
    for extras in (BLOCK_SEAT3_WINS, BLOCK_TEAM0_WINS, BLOCK_TIE, BLOCK_TEAM_TIE):
        hands = block_hands(extras)
        assert all(len(h) == 7 for h in hands)
        assert sorted(t for h in hands for t in tiles(h)) == ALL_TILES


# --- opening -----------------------------------------------------------------------------------


def test_given_leader_leads_any_tile_of_its_hand():
    env = start(HANDS_TEAMS, leader=2)
    u = env.unwrapped
    assert u.public_state()["leader"] == 2
    assert u.public_state()["current_player"] == 2
    assert env.agent_selection == "player_2"
    moves = u.legal_moves()
    assert {m["arm"] for m in moves} == {"lead"}
    assert {m["tile"] for m in moves} == set(tiles(HANDS_TEAMS[2]))
    assert all(m["action"] == u.rules.play_action(u.rules.tile_set.id_of(m["tile"]), 0) for m in moves)
    play(env, "3-6", "lead", seat=2)  # not a double, not the lowest tile: any tile may lead
    assert u.public_state()["ends"] == [6, 3]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_first_round_leader_is_random_and_leads_any_tile(num_players):
    hands = [ALL_TILES[7 * s : 7 * s + 7] for s in range(num_players)]
    leaders = set()
    for seed in range(30):
        env = domino_env.make("all_fives", num_players=num_players)
        env.reset(seed=seed, options={"deal": {"hands": hands}})  # same hands, no leader
        u = env.unwrapped
        leader = u.public_state()["leader"]
        assert u.public_state()["current_player"] == leader
        moves = u.legal_moves()
        assert {m["arm"] for m in moves} == {"lead"}
        assert {m["tile"] for m in moves} == set(hands[leader])
        leaders.add(leader)
    assert leaders == set(range(num_players))  # the 0-0 holder (seat 0) does not always lead


def test_random_deals_without_options_also_vary_the_leader():
    leaders = set()
    for seed in range(20):
        env = domino_env.make("all_fives", num_players=4)
        env.reset(seed=seed)
        u = env.unwrapped
        leader = u.public_state()["leader"]
        assert {m["tile"] for m in u.legal_moves()} == hand_tiles(env, leader)
        leaders.add(leader)
    assert len(leaders) >= 3


# --- the count ---------------------------------------------------------------------------------


def test_count_examples_lead_2_3_then_3_5():
    env = start(
        [["2-3", "0-0", "0-1", "0-2", "0-4", "1-1", "1-2"], ["3-5", "4-4", "4-6", "5-5", "5-6", "6-6", "3-3"]]
    )
    play(env, "2-3", "lead", seat=0)
    assert count(env) == 5
    assert scores(env) == [5, 0]
    assert score_events(env) == [(0, 5, "count")]
    assert arms(env, "3-5") == {"east"}  # 3-5 fits the 3 only
    play(env, "3-5", "east", seat=1)
    assert sorted(env.unwrapped.public_state()["ends"]) == [2, 5]
    assert count(env) == 7
    assert scores(env) == [5, 0]  # 7 is not a multiple of 5
    assert score_events(env) == [(0, 5, "count")]


def test_count_examples_5_5_alone_and_with_5_0():
    env = start(
        [["5-5", "1-1", "1-2", "1-3", "1-4", "2-2", "2-3"], ["0-5", "3-3", "3-4", "4-4", "4-6", "6-6", "3-6"]]
    )
    play(env, "5-5", "lead", seat=0)
    assert count(env) == 10  # a lone double counts both halves once: 5 + 5
    assert scores(env) == [10, 0]
    # one tile that fits two ends showing the same value: two choices; north and south stay shut
    assert arms(env, "0-5") == {"east", "west"}
    play(env, "0-5", "east", seat=1)
    assert count(env) == 10  # 0 + the spinner's open west side (5 + 5)
    assert scores(env) == [10, 10]
    assert score_events(env) == [(0, 10, "count"), (1, 10, "count")]


def test_double_at_an_end_counts_both_halves_and_late_spinner_arms():
    env = start(
        [
            ["3-6", "2-6", "2-2", "1-4", "0-0", "0-1", "0-2"],
            ["6-6", "1-6", "4-6", "3-3", "3-4", "3-5", "5-5"],
        ]
    )
    play(env, "3-6", "lead", seat=0)  # 3 + 6 = 9
    assert scores(env) == [0, 0]
    play(env, "6-6", "east", seat=1)  # 3 + (6 + 6) = 15: the first double is the (late) spinner
    assert count(env) == 15
    assert scores(env) == [0, 15]
    assert all_arms(env) <= {"east", "west"}  # its outer side is still empty: no north/south yet
    play(env, "2-6", "east", seat=0)  # 3 + 2 = 5; the spinner's outer side now holds a tile
    assert count(env) == 5
    assert scores(env) == [5, 15]
    assert env.unwrapped.public_state()["open_ends"] == {"east": 2, "west": 3, "north": 6, "south": 6}
    assert arms(env, "1-6") == {"north", "south"}
    play(env, "1-6", "north", seat=1)  # 3 + 2 + 1 = 6: south is still empty and does not count
    assert count(env) == 6
    play(env, "2-2", "east", seat=0)  # 3 + (2 + 2) + 1 = 8: a second double is an ordinary tile
    assert count(env) == 8
    assert env.unwrapped.public_state()["open_ends"] == {"east": 2, "west": 3, "north": 1, "south": 6}
    play(env, "4-6", "south", seat=1)  # 3 + 4 + 1 + 4 = 12
    assert count(env) == 12
    play(env, "1-4", "north", seat=0)  # 3 + 4 + 4 + 4 = 15
    assert count(env) == 15
    assert scores(env) == [20, 15]
    assert score_events(env) == [(1, 15, "count"), (0, 5, "count"), (0, 15, "count")]


def test_count_of_zero_does_not_score():
    env = start(
        [["0-0", "1-1", "1-2", "1-3", "2-2", "2-3", "3-3"], ["0-5", "0-6", "4-4", "4-5", "4-6", "5-5", "6-6"]]
    )
    play(env, "0-0", "lead", seat=0)
    assert count(env) == 0
    assert scores(env) == [0, 0]
    assert score_events(env) == []
    play(env, "0-5", "west", seat=1)  # 5 + (0 + 0) = 5
    assert scores(env) == [0, 5]


def test_a_count_that_is_not_a_multiple_of_five_does_not_score():
    env = start(
        [["4-6", "1-1", "1-2", "1-3", "2-2", "2-3", "3-3"], ["0-6", "0-0", "4-4", "4-5", "0-5", "5-5", "6-6"]]
    )
    play(env, "4-6", "lead", seat=0)  # 10
    assert scores(env) == [10, 0]
    play(env, "0-6", "east", seat=1)  # 4 + 0 = 4
    assert count(env) == 4
    assert scores(env) == [10, 0]


# --- the spinner -------------------------------------------------------------------------------


def test_lead_double_is_the_spinner_north_south_open_after_east_and_west():
    env = start(
        [
            ["5-5", "1-5", "4-4", "0-0", "0-1", "0-2", "0-3"],
            ["0-5", "4-5", "5-6", "2-2", "2-3", "3-3", "6-6"],
        ]
    )
    u = env.unwrapped
    play(env, "5-5", "lead", seat=0)  # 10
    assert all_arms(env) == {"east", "west"}
    play(env, "0-5", "east", seat=1)  # 0 + 10 = 10
    assert scores(env) == [10, 10]
    assert arms(env, "1-5") == {"west"}  # only the west side is left; north/south still shut
    assert set(u.public_state()["open_ends"]) == {"east", "west"}
    play(env, "1-5", "west", seat=0)  # 0 + 1 = 1: both sides hold a tile, north and south open
    assert count(env) == 1
    assert u.public_state()["open_ends"] == {"east": 0, "west": 1, "north": 5, "south": 5}
    assert arms(env, "4-5") == {"north", "south"}
    assert arms(env, "5-6") == {"north", "south"}
    play(env, "4-5", "north", seat=1)  # 0 + 1 + 4 = 5: north counts once it holds a tile
    assert count(env) == 5
    assert scores(env) == [10, 15]
    play(env, "4-4", "north", seat=0)  # 0 + 1 + (4 + 4) = 9: a double at an end counts both halves
    assert count(env) == 9
    assert scores(env) == [10, 15]
    play(env, "5-6", "south", seat=1)  # 0 + 1 + 8 + 6 = 15
    assert count(env) == 15
    assert scores(env) == [10, 30]
    assert u.public_state()["open_ends"] == {"east": 0, "west": 1, "north": 4, "south": 6}


def test_second_double_is_not_a_spinner():
    env = start(
        [
            ["2-3", "2-2", "0-0", "0-1", "0-4", "1-1", "1-4"],
            ["3-3", "3-4", "0-3", "5-5", "5-6", "6-6", "4-4"],
        ]
    )
    u = env.unwrapped
    play(env, "2-3", "lead", seat=0)  # 5
    play(env, "3-3", "east", seat=1)  # 2 + 6 = 8: 3-3 is the spinner, its outer side empty
    assert count(env) == 8
    assert all_arms(env) <= {"east", "west"}
    play(env, "2-2", "west", seat=0)  # (2 + 2) + (3 + 3) = 10: a second double, not a spinner
    assert count(env) == 10
    assert scores(env) == [15, 0]
    assert set(u.public_state()["open_ends"]) == {"east", "west"}  # 2-2 opened no arms
    assert arms(env, "0-3") == {"east"}
    play(env, "3-4", "east", seat=1)  # 4 + 4 = 8: the outer side of 3-3 holds a tile
    assert count(env) == 8
    # north and south belong to the spinner 3-3 (value 3), not to the later double 2-2
    assert u.public_state()["open_ends"] == {"east": 4, "west": 2, "north": 3, "south": 3}
    assert arms(env, "0-4") == {"east"}
    assert arms(env, "1-1") == set()


def test_late_spinner_on_the_west_arm():
    env = start(
        [
            ["1-4", "2-4", "0-0", "0-2", "0-3", "0-5", "0-6"],
            ["1-1", "1-2", "1-3", "3-3", "3-5", "5-5", "6-6"],
        ]
    )
    u = env.unwrapped
    play(env, "1-4", "lead", seat=0)  # 5
    play(env, "1-1", "west", seat=1)  # (1 + 1) + 4 = 6: the spinner, on the west arm
    assert count(env) == 6
    assert all_arms(env) == {"east"}  # seat 0: 2-4 on the 4; nothing north or south
    play(env, "2-4", "east", seat=0)  # 2 + 2 = 4: the spinner's outer side is still empty
    assert set(u.public_state()["open_ends"]) == {"east", "west"}
    play(env, "1-2", "west", seat=1)  # 2 + 2 = 4: now it is
    assert u.public_state()["open_ends"] == {"east": 2, "west": 2, "north": 1, "south": 1}
    assert count(env) == 4  # empty north/south do not count
    assert scores(env) == [5, 0]


def test_late_spinner_deep_in_an_arm_opens_with_its_own_value():
    env = start(HANDS_4P)
    u = env.unwrapped
    play_path(env, PATH_4P[:7])  # ... 0-6, 6-2, then 2-2: the first double, six tiles out on the east arm
    assert u.public_state()["open_ends"] == {"east": 2, "west": 0}
    assert count(env) == 4  # 0 + (2 + 2)
    play(env, "2-4", "east", seat=3)
    assert u.public_state()["open_ends"] == {"east": 4, "west": 0, "north": 2, "south": 2}
    assert count(env) == 4
    play(env, "4-4", "east", seat=0)  # second double: 0 + (4 + 4) = 8, no new arms
    assert count(env) == 8
    assert u.public_state()["open_ends"] == {"east": 4, "west": 0, "north": 2, "south": 2}


# --- teams -------------------------------------------------------------------------------------


def test_teams_count_scores_for_the_players_team():
    env = start(HANDS_TEAMS, teams=True)
    play_teams_counts(env)
    assert score_events(env) == [(0, 5, "count"), (0, 10, "count"), (1, 5, "count")]
    assert scores(env) == [15, 5]
    assert env.unwrapped.public_state()["scores"] == [15, 5, 15, 5]  # partners show the team score


def test_individual_four_players_count_scores_for_the_seat():
    env = start(HANDS_TEAMS)
    play_teams_counts(env)
    assert scores(env) == [5, 0, 10, 5]
    assert env.unwrapped.public_state()["scores"] == [5, 0, 10, 5]


# --- drawing and passing -----------------------------------------------------------------------


def test_forced_draw_until_a_tile_fits():
    env = start(
        [
            ["6-6", "0-6", "1-6", "3-6", "4-6", "5-6", "0-0"],
            ["0-1", "0-2", "0-3", "0-4", "1-3", "1-4", "1-5"],
        ],
        first=["1-1", "1-2", "0-5", "2-6"],
    )
    u = env.unwrapped
    play(env, "6-6", "lead", seat=0)
    # seat 1 holds no 6: it draws 1-1, 1-2, 0-5 (no fit), then 2-6 fits and it must lay it
    assert env.agent_selection == "player_1"
    draws = events_of(env, "draw")
    assert [(e[1], u.rules.tile_set.tiles[e[2]]) for e in draws] == [
        (1, (1, 1)),
        (1, (1, 2)),
        (1, (0, 5)),
        (1, (2, 6)),
    ]
    assert events_of(env, "pass") == []
    state = u.public_state()
    assert state["hand_sizes"] == [6, 11]
    assert state["boneyard_size"] == 10
    assert {(m["tile"], m["arm"]) for m in u.legal_moves()} == {((2, 6), "east"), ((2, 6), "west")}
    mask = env.last()[0]["action_mask"]
    assert {int(a) for a in mask.nonzero()[0]} == {m["action"] for m in u.legal_moves()}
    play(env, "2-6", "west", seat=1)
    assert count(env) == 14


def test_draws_the_whole_boneyard_then_passes():
    sixes = ["6-6", "0-6", "1-6", "2-6", "3-6", "4-6", "5-6"]
    env = start([sixes, ["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "1-1"]])
    u = env.unwrapped
    play(env, "6-6", "lead", seat=0)  # nobody else has a 6
    draws = events_of(env, "draw")
    assert len(draws) == 14 and all(e[1] == 1 for e in draws)
    assert events_of(env, "pass") == [("pass", 1)]
    state = u.public_state()
    assert state["boneyard_size"] == 0
    assert state["hand_sizes"] == [6, 21]
    assert not state["round_over"]
    assert env.agent_selection == "player_0"  # back to seat 0, which can lay
    play(env, "0-6", "east", seat=0)  # 0 + 12 = 12
    assert env.agent_selection == "player_1"  # seat 1 has 0-tiles now
    assert arms(env, "0-5") == {"east"}


def test_three_players_forced_draws_mid_round_and_domino_by_a_non_leader():
    env = start(HANDS_3P_DRAWS, first=FIRST_3P_DRAWS, episode="round")
    u = env.unwrapped
    ts = u.rules.tile_set
    play_path(env, PATH_3P_DRAWS[:14])
    assert events_of(env, "draw") == []
    play(env, PATH_3P_DRAWS[14], "east", seat=2)
    # seat 0 holds 3-6 and 5-5 against the ends 2 and 1: it draws 1-5, which fits, and must lay it
    assert [(e[1], ts.tiles[e[2]]) for e in events_of(env, "draw")] == [(0, (1, 5))]
    assert env.agent_selection == "player_0"
    assert {(m["tile"], m["arm"]) for m in u.legal_moves()} == {((1, 5), "east")}
    assert u.public_state()["boneyard_size"] == 6
    play(env, PATH_3P_DRAWS[15], "east", seat=0)
    # seat 1 holds 1-3 and 1-1 against the ends 2 and 5: it draws 4-5
    assert [(e[1], ts.tiles[e[2]]) for e in events_of(env, "draw")] == [(0, (1, 5)), (1, (4, 5))]
    play(env, PATH_3P_DRAWS[16], "east", seat=1)
    for t in PATH_3P_DRAWS[17:]:
        play(env, t, "east")
    result = u.game.result
    assert result.winner == 2 and not result.blocked
    assert result.hand_pips == [10, 2, 0]  # 5-5 and 1-1
    assert score_events(env, "domino") == [(2, 10, "domino")]  # 12 -> 10
    assert scores(env) == [10, 5, 10]
    assert result.score_change == [10, 5, 10]
    assert result.next_leader == 2


# --- domino (going out) --------------------------------------------------------------------------


def test_domino_two_players_scores_opponent_pips_rounded_down():
    env = start(HANDS_2P, episode="round")
    u = env.unwrapped
    play_path(env, PATH_2P)
    result = u.game.result
    assert result.winner == 0 and not result.blocked
    assert result.hand_pips == [0, 12]
    assert score_events(env) == [(0, 5, "count"), (0, 5, "count"), (0, 10, "domino")]  # 12 -> 10
    assert scores(env) == [20, 0]
    assert result.score_change == [20, 0]
    assert u.public_state()["round_over"]


def test_domino_three_players_scores_all_opponents_pips_rounded_up():
    env = start(HANDS_3P, episode="round")
    u = env.unwrapped
    play_path(env, PATH_3P)
    result = u.game.result
    assert result.winner == 0
    assert result.hand_pips == [0, 5, 8]
    assert score_events(env, "domino") == [(0, 15, "domino")]  # 5 + 8 = 13 -> 15
    assert score_events(env, "count") == [
        (1, 5, "count"),
        (1, 10, "count"),
        (1, 5, "count"),
        (1, 10, "count"),
    ]
    assert scores(env) == [15, 30, 0]


def test_domino_with_teams_excludes_the_partners_pips():
    env = start(HANDS_4P, teams=True, episode="round")
    u = env.unwrapped
    play_path(env, PATH_4P)
    result = u.game.result
    assert result.winner == 0
    assert result.hand_pips == [0, 7, 10, 5]
    # opponents 7 + 5 = 12 -> 10; the partner's 5-5 is not counted (22 -> 20 would be wrong)
    assert score_events(env, "domino") == [(0, 10, "domino")]
    assert score_events(env, "count") == [(1, 5, "count"), (1, 5, "count")]
    assert scores(env) == [10, 10]
    assert result.score_change == [10, 10]


# --- blocked rounds ------------------------------------------------------------------------------


def test_blocked_fewest_pips_scores_the_others_rounded():
    env = start(block_hands(BLOCK_SEAT3_WINS), episode="round")
    u = env.unwrapped
    play_block(env)
    assert [e[1] for e in events_of(env, "pass")] == [2, 3, 0, 1]
    assert sorted(u.public_state()["ends"]) == [0, 0, 0, 0]
    result = u.game.result
    assert result.blocked
    assert result.hand_pips == [27, 30, 50, 19]
    assert result.winner == 3
    assert score_events(env) == [(3, 105, "blocked")]  # 27 + 30 + 50 = 107 -> 105
    assert scores(env) == [0, 0, 0, 105]
    assert result.next_leader == 3


def test_dead_layout_with_stock_is_drawn_out_before_the_block():
    # two players play the blocked scenario's ten tiles alternately; 14 tiles are still in the stock
    hands = [
        ["0-0", "0-5", "2-5", "0-1", "4-6", "1-4", "1-5"],
        ["0-3", "1-3", "0-4", "0-2", "0-6", "1-1", "1-2"],
    ]
    env = start(hands, episode="round")
    u = env.unwrapped
    for i, (t, arm) in enumerate(BLOCK_MOVES):
        play(env, t, arm, seat=i % 2)
    # every end shows 0 and every 0 is down: seat 0 (next to move) draws the stock out, then both pass
    draws = events_of(env, "draw")
    assert len(draws) == 14 and {e[1] for e in draws} == {0}
    assert events_of(env, "pass") == [("pass", 0), ("pass", 1)]
    result = u.game.result
    assert result.blocked
    assert result.hand_pips == [121, 5]  # 1-4 + 1-5 + the 14 drawn tiles; 1-1 + 1-2
    assert result.winner == 1
    assert score_events(env) == [(1, 120, "blocked")]  # 121 -> 120
    assert scores(env) == [0, 120]


def test_blocked_teams_compare_both_hands():
    env = start(block_hands(BLOCK_TEAM0_WINS), teams=True, episode="round")
    u = env.unwrapped
    play_block(env)
    result = u.game.result
    assert result.blocked
    assert result.hand_pips == [24, 14, 38, 50]
    assert u.rules.side_of[result.winner] == 0  # 24 + 38 = 62 beats 14 + 50 = 64
    assert score_events(env) == [(0, 65, "blocked")]  # the other team's 64 -> 65
    assert scores(env) == [65, 0]
    assert u.public_state()["scores"] == [65, 0, 65, 0]


def test_blocked_tie_scores_nothing():
    env = start(block_hands(BLOCK_TIE), episode="round")
    u = env.unwrapped
    play_block(env)
    result = u.game.result
    assert result.blocked
    assert result.hand_pips == [19, 19, 38, 50]
    assert result.winner is None
    assert score_events(env) == []
    assert scores(env) == [0, 0, 0, 0]


def test_blocked_team_tie_scores_nothing():
    env = start(block_hands(BLOCK_TEAM_TIE), teams=True, episode="round")
    u = env.unwrapped
    play_block(env)
    result = u.game.result
    assert result.blocked
    assert result.hand_pips == [14, 25, 49, 38]  # 63 against 63
    assert result.winner is None
    assert score_events(env) == []
    assert scores(env) == [0, 0]


# --- later rounds ------------------------------------------------------------------------------


def test_next_round_is_led_by_the_domino_winner():
    env = domino_env.make("all_fives", num_players=3)
    env.reset(seed=0, options={"deals": [deal(HANDS_3P_DRAWS, 0, FIRST_3P_DRAWS), {}]})
    u = env.unwrapped
    play_path(env, PATH_3P_DRAWS)
    state = u.public_state()
    assert state["round"] == 1
    assert not any(env.terminations.values())
    assert state["scores"] == [10, 5, 10]  # scores carry over
    assert state["leader"] == 2  # the winner, not the previous leader (0) nor the seat after it (1)
    assert state["current_player"] == 2 and env.agent_selection == "player_2"
    assert state["hand_sizes"] == [7, 7, 7]
    moves = u.legal_moves()
    assert {m["arm"] for m in moves} == {"lead"}
    assert {m["tile"] for m in moves} == hand_tiles(env, 2)


def test_next_round_is_led_by_the_blocked_winner():
    env = domino_env.make("all_fives", num_players=4)
    env.reset(seed=0, options={"deals": [deal(block_hands(BLOCK_SEAT3_WINS)), {}]})
    u = env.unwrapped
    play_block(env)
    state = u.public_state()
    assert state["round"] == 1
    assert state["scores"] == [0, 0, 0, 105]
    assert state["leader"] == 3 and state["current_player"] == 3


def test_next_round_after_a_blocked_team_win_is_led_by_the_partner_with_fewer_pips():
    env = domino_env.make("all_fives", num_players=4, teams=True)
    env.reset(seed=0, options={"deals": [deal(block_hands(BLOCK_TEAM0_WINS)), {}]})
    u = env.unwrapped
    play_block(env)
    state = u.public_state()
    assert state["round"] == 1
    assert state["leader"] == 0  # seat 0 (24 pips) rather than its partner seat 2 (38)


@pytest.mark.parametrize("leader", [0, 2])
def test_next_round_after_a_blocked_tie_is_led_by_the_seat_after_the_previous_leader(leader):
    env = domino_env.make("all_fives", num_players=4)
    hands = block_hands(BLOCK_TIE, rotate=leader)
    env.reset(seed=0, options={"deals": [deal(hands, leader), {}]})
    u = env.unwrapped
    play_block(env, rotate=leader)
    state = u.public_state()
    assert state["round"] == 1
    assert state["scores"] == [0, 0, 0, 0]
    assert state["leader"] == (leader + 1) % 4
    assert state["current_player"] == (leader + 1) % 4


def test_match_continues_below_target_with_scores_carried():
    env = domino_env.make("all_fives", num_players=2)
    env.reset(seed=0, options={"deal": deal(HANDS_2P)})  # the second round is dealt at random
    play_path(env, PATH_2P)
    state = env.unwrapped.public_state()
    assert state["round"] == 1
    assert not state["match_over"] and not any(env.terminations.values())
    assert state["scores"] == [20, 0]
    assert state["leader"] == 0
    assert state["hand_sizes"] == [7, 7]
    assert state["boneyard_size"] == 14


# --- match end at 250 ----------------------------------------------------------------------------


def test_match_ends_mid_round_when_a_count_reaches_250():
    env = start(HANDS_2P)
    u = env.unwrapped
    u.game.scores[0] = 245
    play(env, "0-1", "lead", seat=0)  # count 1: nothing
    play(env, "1-2", "east", seat=1)
    play(env, "2-3", "east", seat=0)
    play(env, "3-4", "east", seat=1)
    assert not any(env.terminations.values())
    play(env, "4-5", "east", seat=0)  # count 5: 250
    assert scores(env) == [250, 0]
    assert all_terminated(env)
    state = u.public_state()
    assert state["match_over"] and state["round_over"]
    assert state["round"] == 0  # no new round was dealt
    assert state["hand_sizes"] == [4, 5]  # mid-round: both still hold tiles
    assert score_events(env, "domino") == []
    assert rewards(env) == [1.0, -1.0]
    assert env._cumulative_rewards == {"player_0": 1.0, "player_1": -1.0}
    assert u.legal_moves() == []


def test_match_ends_on_the_lead_when_it_reaches_250():
    env = start(HANDS_TEAMS)
    env.unwrapped.game.scores[0] = 245
    play(env, "2-3", "lead", seat=0)
    assert scores(env) == [250, 0, 0, 0]
    assert all_terminated(env)
    assert rewards(env)[0] == 1.0
    assert all(r < 1.0 for r in rewards(env)[1:])


def test_match_end_with_teams_both_partners_win():
    env = start(HANDS_TEAMS, teams=True)
    env.unwrapped.game.scores[1] = 245
    play(env, "2-3", "lead", seat=0)  # team 0: 5
    play(env, "3-4", "east", seat=1)
    play(env, "2-6", "west", seat=2)  # team 0: 15
    assert not any(env.terminations.values())
    play(env, "1-6", "west", seat=3)  # team 1: 245 + 5 = 250
    assert scores(env) == [15, 250]
    assert all_terminated(env)
    assert rewards(env) == [-1.0, 1.0, -1.0, 1.0]


def test_match_ends_when_domino_points_reach_250():
    env = start(HANDS_2P)
    u = env.unwrapped
    u.game.scores[0] = 235
    play_path(env, PATH_2P[:-1])
    assert scores(env) == [240, 0]
    assert not any(env.terminations.values())
    play(env, PATH_2P[-1], "east", seat=0)  # count 5 (245), then the domino: 12 -> 10
    assert scores(env) == [255, 0]
    assert all_terminated(env)
    assert u.public_state()["match_over"]
    assert u.public_state()["round"] == 0
    assert rewards(env) == [1.0, -1.0]


# --- episode="round" and rewards -----------------------------------------------------------------


def test_round_episode_ranks_the_winner_first_then_points_gained():
    env = start(HANDS_3P, episode="round")
    play_path(env, PATH_3P)
    assert all_terminated(env)
    assert not env.unwrapped.public_state()["match_over"]
    # seat 0 won the round with 15 points; seat 1 gained 30 but did not win: still second
    assert scores(env) == [15, 30, 0]
    assert rewards(env) == [1.0, 0.0, -1.0]


def test_round_episode_blocked_winner_first_others_tied():
    env = start(block_hands(BLOCK_SEAT3_WINS), episode="round")
    play_block(env)
    assert all_terminated(env)
    r = rewards(env)
    assert r[3] == 1.0
    assert r[0] == r[1] == r[2] == pytest.approx(-1 / 3)  # ranks 2-4 shared: mean rank 3


def test_round_episode_blocked_tie_ranks_by_points_gained():
    env = start(block_hands(BLOCK_TIE), episode="round")
    play_block(env)
    assert all_terminated(env)
    assert rewards(env) == [0.0, 0.0, 0.0, 0.0]  # no winner, nobody gained: all tied


def test_round_episode_with_teams_partners_share_the_outcome():
    env = start(HANDS_4P, teams=True, episode="round")
    play_path(env, PATH_4P)
    assert all_terminated(env)
    # team 1 gained 10 by counts, the same as team 0's domino; the round's winner still ranks first
    assert rewards(env) == [1.0, -1.0, 1.0, -1.0]


def test_points_reward_is_score_change_over_250():
    env = start(HANDS_2P, reward="points", episode="round")
    play(env, "0-1", "lead", seat=0)
    assert rewards(env) == [0.0, 0.0]
    play(env, "1-2", "east", seat=1)
    play(env, "2-3", "east", seat=0)
    play(env, "3-4", "east", seat=1)
    play(env, "4-5", "east", seat=0)  # count 5
    assert rewards(env) == pytest.approx([5 / TARGET, 0.0])
    assert env._cumulative_rewards["player_0"] == pytest.approx(5 / TARGET)
    for t in PATH_2P[5:]:
        play(env, t, "east")
    assert all_terminated(env)
    # the last tile counts 5 and goes out: 10 for seat 1's 6-6
    assert rewards(env) == pytest.approx([15 / TARGET, 0.0])


def test_points_reward_with_teams_goes_to_both_partners():
    env = start(HANDS_TEAMS, teams=True, reward="points")
    play(env, "2-3", "lead", seat=0)
    assert rewards(env) == pytest.approx([5 / TARGET, 0.0, 5 / TARGET, 0.0])
    play(env, "3-4", "east", seat=1)
    play(env, "2-6", "west", seat=2)
    assert rewards(env) == pytest.approx([10 / TARGET, 0.0, 10 / TARGET, 0.0])
    play(env, "1-6", "west", seat=3)
    assert rewards(env) == pytest.approx([0.0, 5 / TARGET, 0.0, 5 / TARGET])


def test_points_reward_at_a_blocked_round_end():
    env = start(block_hands(BLOCK_SEAT3_WINS), reward="points", episode="round")
    play_block(env)
    assert all_terminated(env)
    assert rewards(env) == pytest.approx([0.0, 0.0, 0.0, 105 / TARGET])


def test_points_reward_when_the_match_ends_mid_round():
    env = start(HANDS_TEAMS, reward="points")
    env.unwrapped.game.scores[0] = 245
    play(env, "2-3", "lead", seat=0)
    assert all_terminated(env)
    assert rewards(env) == pytest.approx([5 / TARGET, 0.0, 0.0, 0.0])


def test_points_reward_at_a_round_end_inside_a_match():
    env = domino_env.make("all_fives", num_players=2, reward="points")
    env.reset(seed=0, options={"deal": deal(HANDS_2P)})
    play_path(env, PATH_2P)
    assert env.unwrapped.public_state()["round"] == 1
    assert not any(env.terminations.values())
    # the last tile: count 5 and the domino 10, reported although a new round has begun
    assert rewards(env) == pytest.approx([15 / TARGET, 0.0])
    assert env._cumulative_rewards["player_0"] == pytest.approx(15 / TARGET)
