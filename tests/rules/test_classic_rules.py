"""Scenario tests for Classic dominoes (docs/rules/index.md and docs/rules/classic.md).

Every scenario uses a fixed deal (hands, boneyard order, optional leader/opening) and a
scripted sequence of plays, so each test is deterministic and checks one rule. Moves in a
script are written ``"seat tile [arm]"``: the arm is only needed when the tile fits two ends.
Forced draws and passes happen inside ``step``; the scripts list only real decisions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import domino_env
from domino_env.core.state import DRAW, LAY, PASS
from tests.support.helpers import ALL_TILES, pips, play, tile, tiles

TARGET = 101


# --- helpers ---------------------------------------------------------------------------------


def rest(*used: str, first: str = "") -> list[tuple[int, int]]:
    """A boneyard: ``first`` in that draw order, then every tile not in ``used``, sorted."""
    head = tiles(first)
    taken = {t for group in used for t in tiles(group)} | set(head)
    return head + [t for t in ALL_TILES if t not in taken]


def deal(hands: list[str], boneyard: list[tuple[int, int]] | None = None, **extra: Any) -> dict[str, Any]:
    """A fixed deal; a 2- or 3-player boneyard defaults to every other tile in sorted order."""
    spec: dict[str, Any] = {"hands": [tiles(h) for h in hands]}
    if boneyard is None and len(hands) < 4:
        boneyard = rest(*hands)
    if boneyard is not None:
        spec["boneyard"] = boneyard
    spec.update({k: v for k, v in extra.items() if v is not None})
    return spec


def new_env(
    num_players: int = 2,
    the_deal: dict[str, Any] | None = None,
    deals: list[dict[str, Any]] | None = None,
    **options: Any,
):
    env = domino_env.make("classic", num_players=num_players, **options)
    env.reset(seed=0, options={"deals": deals} if deals is not None else {"deal": the_deal})
    return env


def hand(env, seat: int) -> list[tuple[int, int]]:
    game = env.unwrapped.game
    return [t for i, t in enumerate(ALL_TILES) if game.hands[seat] >> i & 1]


def state(env) -> dict[str, Any]:
    return env.unwrapped.public_state()


def moves_of(env, text: str) -> list[dict[str, Any]]:
    return [m for m in env.unwrapped.legal_moves() if m["tile"] == tile(text)]


def lead_actions(env) -> set[tuple[int, int]]:
    moves = env.unwrapped.legal_moves()
    assert all(m["arm"] == "lead" for m in moves)
    return {m["tile"] for m in moves}


def run_script(env, script: list[str]) -> None:
    for line in script:
        seat, text, *arm = line.split()
        play(env, text, arm[0] if arm else None, seat=int(seat))


def events_since_last_lay(env) -> list[tuple[Any, ...]]:
    events = env.unwrapped.game.events
    last = max(i for i, e in enumerate(events) if e[0] == LAY)
    return events[last + 1 :]


def assert_layout_dead_for_everyone(env) -> None:
    """No hand matches an open end and the boneyard is empty: the round really is blocked."""
    u = env.unwrapped
    ends = set(state(env)["ends"])
    for seat in range(u.rules.num_players):
        assert not [t for t in hand(env, seat) if ends & set(t)]
    assert not u.game.stock


def rewards(env) -> list[float]:
    return [env.rewards[a] for a in env.possible_agents]


def assert_episode_over(env) -> None:
    assert all(env.terminations[a] for a in env.possible_agents)
    assert not env.unwrapped.game.legal


# --- fixed scenarios ---------------------------------------------------------------------------

# 2 players, seat 0 goes out with 1-4; seat 1 is left with 3-6 (9 pips).
DOMINO_2P = deal(["0-0 1-2 3-4 5-6 2-6 2-4 1-4", "0-1 2-3 4-5 6-6 2-2 4-4 3-6"])
DOMINO_2P_SCRIPT = [
    "0 0-0",
    "1 0-1 east",
    "0 1-2",
    "1 2-3",
    "0 3-4",
    "1 4-5",
    "0 5-6",
    "1 6-6",
    "0 2-6",
    "1 2-2",
    "0 2-4",
    "1 4-4",
    "0 1-4",
]

# 3 players, draw=False: seat 1 holds 0-0, leads it and goes out; seat 0 keeps 30 pips, seat 2 19.
DOMINO_3P = deal(
    ["5-6 3-5 1-6 1-5 3-6 0-6 3-3", "0-0 4-4 4-5 2-4 0-4 0-3 2-3", "6-6 1-2 1-1 5-5 1-3 1-4 2-2"],
)
DOMINO_3P_SCRIPT = [
    "1 0-0",
    "0 0-6 east",
    "1 0-3",
    "2 6-6",
    "0 5-6",
    "1 2-3",
    "2 2-2",
    "0 1-5",
    "1 2-4",
    "2 1-4 east",
    "1 0-4 east",
    "1 4-4",
    "1 4-5",
]

# 4 players (all 28 tiles dealt), leader 1; seat 1 goes out, partner seat 3 keeps 13 pips,
# seats 0 and 2 keep 16 and 21.
DOMINO_4P = deal(
    [
        "4-5 1-4 1-3 2-4 2-3 0-6 2-6",
        "5-6 6-6 0-5 1-1 3-6 1-6 4-6",
        "0-3 3-4 3-3 3-5 2-5 4-4 0-1",
        "5-5 1-5 0-2 1-2 0-4 2-2 0-0",
    ],
    leader=1,
)
DOMINO_4P_SCRIPT = [
    "1 1-1",
    "2 0-1 west",
    "3 1-5",
    "0 0-6",
    "1 0-5",
    "2 0-3",
    "0 2-6",  # seat 3 cannot play and passes (the boneyard is empty)
    "1 3-6",
    "2 2-5",
    "3 5-5",
    "0 4-5",
    "1 4-6 west",
    "1 5-6 east",  # seats 2, 3 and 0 all passed
    "2 3-5",
    "0 1-3",
    "1 1-6 east",
    "1 6-6 east",
]

# 4 players, leader 1, blocked. Pips left: [20, 28, 35, 25]. Seat 0 has the fewest alone, but
# team 1+3 (53) beats team 0+2 (55); seat 3 has fewer pips than its partner.
BLOCKED_4P_FEWER = deal(
    [
        "0-6 0-1 0-2 2-4 1-1 3-6 0-5",
        "1-2 4-4 3-4 2-5 4-6 0-3 5-6",
        "2-6 1-3 2-2 6-6 1-4 1-6 0-4",
        "4-5 3-5 2-3 5-5 1-5 3-3 0-0",
    ],
    leader=1,
)
BLOCKED_4P_FEWER_SCRIPT = [
    "1 3-4",
    "2 1-4",
    "3 2-3",
    "0 0-2",
    "1 0-3",
    "2 1-3 east",
    "3 3-3 east",
    "0 3-6 east",
    "1 5-6",
    "3 3-5 east",
]

# 4 players, leader 1, blocked. Pips left: [25, 35, 25, 35]: team 0+2 wins, partners equal;
# counting from the leader (1, 2, 3, 0) seat 2 comes first.
BLOCKED_4P_EQUAL = deal(
    [
        "3-4 1-3 0-3 2-4 0-6 0-5 0-4",
        "1-6 1-4 3-3 5-6 5-5 2-6 0-1",
        "2-5 3-5 0-0 4-5 0-2 2-3 4-4",
        "4-6 3-6 1-2 6-6 1-1 2-2 1-5",
    ],
    leader=1,
)
BLOCKED_4P_EQUAL_SCRIPT = [
    "1 1-4",
    "2 4-5",
    "3 1-5 east",
    "0 1-3 east",
    "1 1-6",
    "2 2-3",
    "3 1-2",
    "0 0-6",
    "1 0-1 west",
    "3 1-1 east",
]

# 4 players, leader 1, blocked. Pips left: [19, 21, 32, 30]: both teams hold 51 - a tie.
BLOCKED_4P_TIE = deal(
    [
        "0-1 6-6 1-1 2-2 0-0 4-5 1-3",
        "1-2 1-4 2-5 1-5 2-6 2-3 0-4",
        "5-5 0-5 5-6 4-4 0-3 3-5 3-4",
        "2-4 0-2 0-6 3-6 1-6 4-6 3-3",
    ],
    leader=1,
)
BLOCKED_4P_TIE_SCRIPT = [
    "1 0-4",
    "2 0-5",
    "3 4-6",
    "0 4-5",
    "1 2-6",
    "2 3-4",
    "3 2-4",
    "0 1-3",
    "1 1-4 west",
    "2 4-4 west",
]

# A plain second-round deal for 4 players: seat s holds tiles 7s..7s+6 in id order
# (so seat 0 holds 0-0, the first-round opening double).
ROUND2_4P = deal([" ".join(f"{a}-{b}" for a, b in ALL_TILES[7 * s : 7 * s + 7]) for s in range(4)])

# "Lead 0-0 and nobody can follow" (draw=False): 0-0's holder leads it, the other six zeros
# lie in the boneyard, so the round is blocked at once and decided by the pips in hand.
SMALL = "1-1 1-2 1-3 1-4 2-2 2-3"  # 23 pips
BIG = "6-6 5-6 5-5 4-6 4-5 3-6 4-4"  # 69 pips
MID = "1-6 2-4 2-5 2-6 3-3 3-4 3-5"  # 49 pips
MID_52 = "1-6 2-4 2-5 2-6 3-3 3-4 5-6"  # 52 pips
ZEROS = "0-1 0-2 0-3 0-4 0-5 0-6"


def zero_block_deal(hands: list[str]) -> dict[str, Any]:
    """A deal where 0-0 is led and every other zero is in the boneyard."""
    return deal(hands, rest(*hands, first=ZEROS))


# --- set-up ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("num_players", "boneyard"), [(2, 14), (3, 7), (4, 0)])
def test_seven_tiles_each_and_the_rest_is_the_boneyard(num_players, boneyard):
    env = domino_env.make("classic", num_players=num_players)
    env.reset(seed=3)
    s = state(env)
    assert s["hand_sizes"] == [7] * num_players
    assert s["boneyard_size"] == boneyard
    assert s["scores"] == [0] * num_players and s["round"] == 0


def test_player_counts_and_partnerships():
    for bad in (1, 5):
        with pytest.raises(ValueError):
            domino_env.make("classic", num_players=bad)
    for num_players in (2, 3):
        with pytest.raises(ValueError):
            domino_env.make("classic", num_players=num_players, teams=True)
    env = new_env(4, DOMINO_4P, teams=True)
    assert env.unwrapped.rules.side_of == [0, 1, 0, 1]


# --- opening (first round) ------------------------------------------------------------------


def test_double_zero_holder_leads_it():
    env = new_env(2, deal(["1-1 1-2 1-3 1-4 1-5 1-6 2-2", "0-0 0-1 0-2 0-3 0-4 0-5 0-6"]))
    s = state(env)
    assert s["leader"] == 1 and s["current_player"] == 1
    assert env.agent_selection == "player_1"
    assert lead_actions(env) == {(0, 0)}, "the holder of 0-0 must lead 0-0, nothing else"
    assert env.unwrapped.legal_moves()[0]["action"] == env.unwrapped.rules.tile_set.id_of((0, 0)) * 2


def test_lowest_double_leads_when_double_zero_is_not_dealt():
    hands = ["2-2 0-1 0-2 0-3 0-4 0-5 0-6", "3-3 1-2 1-3 1-4 1-5 1-6 2-3", "1-1 2-4 2-5 2-6 3-4 3-5 3-6"]
    env = new_env(3, deal(hands, rest(*hands, first="0-0")))
    assert state(env)["current_player"] == 2
    assert lead_actions(env) == {(1, 1)}


def test_any_double_beats_a_lower_non_double():
    # Only one double is dealt (6-6); 0-1, the lowest tile of all, is not a double.
    hands = ["0-1 0-2 0-3 0-4 0-5 0-6 1-2", "6-6 1-3 1-4 1-5 1-6 2-3 2-4"]
    doubles = "0-0 1-1 2-2 3-3 4-4 5-5"
    env = new_env(2, deal(hands, rest(*hands, first=doubles)))
    assert state(env)["current_player"] == 1
    assert lead_actions(env) == {(6, 6)}


def test_no_double_dealt_lowest_pip_tile_leads_ties_by_smaller_half():
    # No doubles and neither 0-1 nor 0-2 is dealt: the lowest pips are 3, held as 1-2 by
    # seat 0 and as 0-3 by seat 1; the smaller half decides: 0-3.
    hands = ["1-2 1-3 1-4 2-3 2-4 3-4 4-5", "0-3 0-4 0-5 0-6 1-5 1-6 2-5"]
    bone = rest(*hands, first="0-0 1-1 2-2 3-3 4-4 5-5 6-6 0-1 0-2")
    env = new_env(2, deal(hands, bone))
    assert state(env)["current_player"] == 1
    assert lead_actions(env) == {(0, 3)}


def test_no_double_dealt_the_lowest_tile_leads_whoever_holds_it():
    hands = ["1-2 1-3 1-4 2-3 2-4 3-4 0-1", "0-3 0-4 0-5 0-6 1-5 1-6 2-5"]
    bone = rest(*hands, first="0-0 1-1 2-2 3-3 4-4 5-5 6-6")
    env = new_env(2, deal(hands, bone))
    assert state(env)["current_player"] == 0
    assert lead_actions(env) == {(0, 1)}


def test_a_given_leader_may_lead_any_tile():
    hands = ["0-0 1-1 0-1 0-2 0-3 0-4 0-5", "2-3 2-4 2-5 3-4 4-5 5-6 6-6"]
    env = new_env(2, deal(hands, leader=1))
    assert state(env)["current_player"] == 1
    assert lead_actions(env) == set(tiles(hands[1]))
    play(env, "4-5", seat=1)
    assert state(env)["open_ends"] == {"east": 5, "west": 4}


def test_opening_option_forces_the_lead_tile():
    hands = ["0-0 1-1 0-1 0-2 0-3 3-4 0-5", "2-3 2-4 2-5 1-4 4-5 5-6 6-6"]
    env = new_env(2, deal(hands, leader=0, opening="3-4"))
    assert state(env)["current_player"] == 0
    assert lead_actions(env) == {(3, 4)}


def test_opening_without_leader_is_led_by_its_holder():
    hands = ["0-0 1-1 0-1 0-2 0-3 3-4 0-5", "2-3 2-4 2-5 1-4 4-5 5-6 6-6"]
    env = new_env(2, deal(hands, opening="5-6"))
    assert state(env)["current_player"] == 1
    assert lead_actions(env) == {(5, 6)}


def test_one_tile_a_turn_and_play_passes_to_the_left():
    hands = ["2-2 0-1 0-2 0-3 0-4 0-5 0-6", "3-3 1-2 1-3 1-4 1-5 1-6 2-3", "1-1 2-4 2-5 2-6 3-4 3-5 3-6"]
    env = new_env(3, deal(hands, rest(*hands, first="0-0")))
    play(env, "1-1", seat=2)  # a double does not give another turn in Classic
    assert state(env)["current_player"] == 0
    play(env, "0-1", "east", seat=0)
    assert state(env)["current_player"] == 1
    assert state(env)["hand_sizes"] == [6, 7, 6]


# --- the line of play -------------------------------------------------------------------------


def test_action_ids_are_tile_times_two_plus_end():
    env = new_env(2, DOMINO_2P)
    rules = env.unwrapped.rules
    assert rules.num_actions == 28 * 2, "Classic has only placements: no draw or pass actions"
    play(env, "0-0", seat=0)
    moves = moves_of(env, "0-1")
    tid = rules.tile_set.id_of((0, 1))
    assert {(m["action"], m["arm"]) for m in moves} == {(2 * tid, "east"), (2 * tid + 1, "west")}
    assert rules.play_action(tid, 1) == 2 * tid + 1


def test_double_played_on_an_arm_keeps_its_value():
    hands = ["3-4 1-4 0-1 0-2 0-5 0-6 1-2", "4-4 3-3 2-3 1-5 4-5 5-6 6-6"]
    env = new_env(2, deal(hands, leader=0, opening="3-4"))
    play(env, "3-4", seat=0)
    assert state(env)["open_ends"] == {"east": 4, "west": 3}
    move = play(env, "4-4", seat=1)
    assert (move["arm"], move["end_value"]) == ("east", 4)
    assert state(env)["open_ends"] == {"east": 4, "west": 3}
    play(env, "1-4", seat=0)
    assert state(env)["open_ends"] == {"east": 1, "west": 3}
    move = play(env, "3-3", seat=1)
    assert (move["arm"], move["end_value"]) == ("west", 3)
    assert state(env)["open_ends"] == {"east": 1, "west": 3}
    assert state(env)["table"] == [(1, 4), (3, 3), (3, 4), (4, 4)]


def test_double_lead_has_two_ends_and_no_spinner():
    hands = ["6-6 0-0 0-1 0-2 0-3 0-4 0-5", "0-6 1-6 2-6 3-6 4-6 5-6 1-1"]
    env = new_env(2, deal(hands, leader=0, opening="6-6"))
    play(env, "6-6", seat=0)
    assert state(env)["open_ends"] == {"east": 6, "west": 6}
    moves = env.unwrapped.legal_moves()
    assert len(moves) == 2 * 6, "each 6-x fits east or west - never north or south"
    assert {m["arm"] for m in moves} == {"east", "west"}
    play(env, "5-6", "east", seat=1)
    play(env, "0-5", seat=0)
    play(env, "4-6", "west", seat=1)
    assert state(env)["open_ends"] == {"east": 0, "west": 4}
    assert len(state(env)["ends"]) == 2


def test_a_later_double_does_not_become_a_spinner():
    hands = ["3-4 0-1 0-2 0-5 0-6 1-2 1-5", "4-4 3-3 2-3 1-4 4-5 5-6 6-6"]
    env = new_env(2, deal(hands, leader=0, opening="3-4"))
    play(env, "3-4", seat=0)
    play(env, "4-4", seat=1)
    assert set(state(env)["open_ends"]) == {"east", "west"}
    # Two ends only: 4-x tiles go on the east end (4), nothing can branch off the 4-4.
    assert all(m["arm"] in ("east", "west") for m in env.unwrapped.legal_moves())


def test_a_tile_that_does_not_fit_is_masked_and_rejected():
    hands = ["3-4 1-4 0-1 0-2 0-5 0-6 1-2", "4-4 3-3 2-3 1-5 4-5 5-6 6-6"]
    env = new_env(2, deal(hands, leader=0, opening="3-4"))
    play(env, "3-4", seat=0)  # ends 4 and 3
    u = env.unwrapped
    assert {m["tile"] for m in u.legal_moves()} == {(4, 4), (3, 3), (2, 3), (4, 5)}
    mask = env.last()[0]["action_mask"]
    ids = u.rules.tile_set.id_of
    assert mask[u.rules.play_action(ids((5, 6)), 0)] == 0  # fits neither end
    assert mask[u.rules.play_action(ids((4, 5)), 1)] == 0  # 4-5 fits east (4), not west (3)
    assert mask[u.rules.play_action(ids((4, 5)), 0)] == 1
    before = state(env)
    with pytest.raises(ValueError):
        env.step(u.rules.play_action(ids((4, 5)), 1))
    assert state(env) == before


def test_two_ends_with_the_same_value_are_two_choices():
    hands = ["5-5 0-1 0-2 0-3 0-4 0-6 1-2", "1-5 2-5 1-3 1-4 2-3 2-4 3-4"]
    env = new_env(2, deal(hands, leader=0, opening="5-5"))
    play(env, "5-5", seat=0)
    moves = moves_of(env, "1-5")
    assert [m["arm"] for m in moves] == ["east", "west"]
    assert [m["end_value"] for m in moves] == [5, 5]
    assert moves[0]["action"] != moves[1]["action"]
    play(env, "1-5", "west", seat=1)
    assert state(env)["open_ends"] == {"east": 5, "west": 1}


def test_a_tile_fitting_two_different_ends_is_a_choice_of_end():
    hands = ["2-5 2-4 0-0 0-1 0-2 0-3 0-6", "4-5 1-1 1-2 1-3 1-4 1-5 1-6"]
    env = new_env(2, deal(hands, leader=0, opening="2-5"))
    play(env, "2-5", seat=0)
    assert state(env)["open_ends"] == {"east": 5, "west": 2}
    play(env, "4-5", seat=1)
    assert state(env)["open_ends"] == {"east": 4, "west": 2}
    moves = moves_of(env, "2-4")
    assert {(m["arm"], m["end_value"]) for m in moves} == {("east", 4), ("west", 2)}
    play(env, "2-4", "west", seat=0)
    assert state(env)["open_ends"] == {"east": 4, "west": 4}


# --- drawing and passing ---------------------------------------------------------------------

DRAW_HANDS = ["5-6 3-3 3-4 4-4 4-5 5-5 6-6", "0-0 0-1 0-2 0-3 0-4 1-1 1-2"]
DRAW_DEAL = deal(DRAW_HANDS, rest(*DRAW_HANDS, first="1-3 2-2 2-6 1-6"), leader=0, opening="5-6")


def test_forced_draw_one_tile_at_a_time_until_one_fits():
    env = new_env(2, DRAW_DEAL)
    play(env, "5-6", seat=0)  # ends 6 (east) and 5 (west); seat 1 holds no 5 or 6
    u = env.unwrapped
    drawn = [e for e in events_since_last_lay(env) if e[0] == DRAW]
    assert [(seat, ALL_TILES[t]) for _, seat, t in drawn] == [(1, (1, 3)), (1, (2, 2)), (1, (2, 6))]
    assert not [e for e in events_since_last_lay(env) if e[0] == PASS]
    assert hand(env, 1) == sorted([*tiles(DRAW_HANDS[1]), (1, 3), (2, 2), (2, 6)])
    s = state(env)
    assert s["hand_sizes"] == [6, 10] and s["boneyard_size"] == 14 - 3
    # It stopped at 2-6 (1-6 would fit too but stays in the boneyard) and must play it:
    # the only legal move, yet the agent is still asked.
    assert env.agent_selection == "player_1"
    action = u.rules.play_action(u.rules.tile_set.id_of((2, 6)), 0)
    assert u.game.legal == [action]
    observation, _, _, _, _ = env.last()
    assert observation["action_mask"].nonzero()[0].tolist() == [action]
    play(env, "2-6", seat=1)
    assert state(env)["open_ends"] == {"east": 2, "west": 5}


def test_a_drawn_tile_that_fits_both_ends_may_go_on_either():
    hands = ["6-6 3-3 3-4 4-4 4-5 5-5 5-6", "0-0 0-1 0-2 0-3 0-4 1-1 1-2"]
    env = new_env(2, deal(hands, rest(*hands, first="1-3 2-6"), leader=0, opening="6-6"))
    play(env, "6-6", seat=0)
    assert [ALL_TILES[e[2]] for e in events_since_last_lay(env)] == [(1, 3), (2, 6)]
    assert [(m["tile"], m["arm"]) for m in env.unwrapped.legal_moves()] == [
        ((2, 6), "east"),
        ((2, 6), "west"),
    ]
    play(env, "2-6", "west", seat=1)
    assert state(env)["open_ends"] == {"east": 6, "west": 2}


def test_a_player_who_can_play_does_not_draw():
    env = new_env(2, DRAW_DEAL)
    play(env, "5-6", seat=0)
    play(env, "2-6", seat=1)  # ends 2 and 5; seat 0 holds 4-5 and 5-5
    assert state(env)["boneyard_size"] == 11
    assert state(env)["hand_sizes"] == [6, 9]
    assert {m["tile"] for m in env.unwrapped.legal_moves()} == {(4, 5), (5, 5)}
    assert not events_since_last_lay(env)


def test_drawn_tiles_are_seen_only_by_the_drawer():
    # Two deals with the same public story (seat 1 draws three tiles, then plays 2-6) but
    # different private tiles for seat 1: seat 0 cannot tell them apart.
    seen = []
    for own, first in [
        ("0-0 0-1 0-2 0-3 0-4 1-1 1-2", "1-3 2-2 2-6"),
        ("0-0 0-1 0-2 0-3 1-3 1-1 1-2", "0-4 2-2 2-6"),
    ]:
        hands = [DRAW_HANDS[0], own]
        env = new_env(2, deal(hands, rest(*hands, first=first), leader=0, opening="5-6"))
        play(env, "5-6", seat=0)
        hand_slice = env.unwrapped.observation_layout["hand"]
        row = env.observe("player_1")["observation"][hand_slice]
        assert [ALL_TILES[i] for i in row.nonzero()[0]] == hand(env, 1)  # the drawer sees its draws
        play(env, "2-6", seat=1)
        seen.append(env.observe("player_0")["observation"].copy())
    np.testing.assert_array_equal(seen[0], seen[1])


def test_block_dominoes_pass_instead_of_drawing():
    env = new_env(2, DRAW_DEAL, draw=False)
    play(env, "5-6", seat=0)
    assert events_since_last_lay(env) == [(PASS, 1)]
    s = state(env)
    assert s["boneyard_size"] == 14 and s["hand_sizes"] == [6, 7]
    assert s["current_player"] == 0 and not s["round_over"]
    play(env, "6-6", seat=0)
    assert events_since_last_lay(env) == [(PASS, 1)]
    assert state(env)["current_player"] == 0


def test_draws_the_whole_boneyard_then_passes():
    hands = ["0-6 1-6 2-6 3-6 4-6 5-6 6-6", "0-0 0-1 0-2 0-3 0-4 0-5 1-1"]
    env = new_env(2, deal(hands, leader=0, opening="6-6"))
    play(env, "6-6", seat=0)  # every other 6 is in seat 0's hand
    after = events_since_last_lay(env)
    assert [e[0] for e in after] == [DRAW] * 14 + [PASS]
    assert [ALL_TILES[e[2]] for e in after[:-1]] == rest(*hands)
    s = state(env)
    assert s["boneyard_size"] == 0 and s["hand_sizes"] == [6, 21]
    assert s["current_player"] == 0 and not s["round_over"], "a pass is not a block"
    play(env, "0-6", "east", seat=0)
    assert state(env)["current_player"] == 1  # seat 1 can follow on the 0 now


def test_dead_layout_is_drawn_out_before_the_round_is_blocked():
    hands = ["0-5 2-4 0-1 5-5 0-4 0-2 1-1", "2-6 2-3 0-0 0-3 1-3 4-5 6-6"]
    bone = tiles("0-6 1-2 1-6 3-4 4-4 5-6 1-5 2-5 1-4 3-3 3-5 3-6 4-6 2-2")
    env = new_env(2, deal(hands, bone, leader=1))
    script = ["1 4-5", "0 0-5", "1 0-3", "0 0-4", "1 0-0", "0 0-2", "1 1-3", "0 0-1", "1 2-6"]
    run_script(env, script)
    assert state(env)["boneyard_size"] == 13  # seat 0 drew 0-6 for its last 0-x
    play(env, "0-6", "west", seat=0)
    # Both ends show 0 and all seven zeros are on the table: nobody can ever play again,
    # but the stock is not empty, so seat 1 draws all of it before it passes.
    assert state(env)["open_ends"] == {"east": 0, "west": 0}
    after = events_since_last_lay(env)
    kinds = [e[0] for e in after if e[0] in (DRAW, PASS)]
    assert kinds == [DRAW] * 13 + [PASS, PASS]
    assert [e[1] for e in after if e[0] == PASS] == [1, 0]
    assert_layout_dead_for_everyone(env)
    result = env.unwrapped.game.result
    assert result.blocked and result.winner == 0
    assert result.hand_pips == [18, 108]
    assert state(env)["scores"] == [0, 108]


def test_four_players_pass_when_the_boneyard_is_empty():
    env = new_env(4, DOMINO_4P)
    assert state(env)["boneyard_size"] == 0
    run_script(env, DOMINO_4P_SCRIPT[:12])  # ... "1 4-6 west"
    assert events_since_last_lay(env) == [(PASS, 2), (PASS, 3), (PASS, 0)]
    s = state(env)
    assert s["current_player"] == 1 and not s["round_over"]
    assert s["hand_sizes"] == [4, 3, 4, 5]


# --- domino (a player goes out) -------------------------------------------------------------


def test_domino_two_players_loser_adds_own_pips():
    env = new_env(2, DOMINO_2P, episode="round")
    run_script(env, DOMINO_2P_SCRIPT)
    u = env.unwrapped
    result = u.game.result
    assert result.winner == 0 and not result.blocked
    assert result.hand_pips == [0, 9]  # 3-6 left
    assert result.score_change == [0, 9]
    assert result.next_leader == 0
    assert state(env)["scores"] == [0, 9]
    assert_episode_over(env)
    assert rewards(env) == [1.0, -1.0]


def test_domino_three_players_others_add_their_own_pips():
    env = new_env(3, DOMINO_3P, draw=False, episode="round")
    assert state(env)["current_player"] == 1  # first round: 0-0 leads
    run_script(env, DOMINO_3P_SCRIPT)
    result = env.unwrapped.game.result
    assert result.winner == 1 and not result.blocked
    assert result.hand_pips == [pips("3-5 1-6 3-6 3-3"), 0, pips("1-2 1-1 5-5 1-3")] == [30, 0, 19]
    assert state(env)["scores"] == [30, 0, 19]


def test_domino_with_teams_partner_of_winner_adds_nothing():
    env = new_env(4, DOMINO_4P, teams=True, episode="round")
    run_script(env, DOMINO_4P_SCRIPT)
    result = env.unwrapped.game.result
    assert result.winner == 1 and not result.blocked
    assert result.hand_pips == [16, 0, 21, 13]  # seat 3 (partner) still holds 13 pips
    assert result.score_change == [16 + 21, 0]
    assert state(env)["scores"] == [37, 0, 37, 0], "partners show their team's score"
    assert rewards(env) == [-1.0, 1.0, -1.0, 1.0]


def test_domino_without_teams_four_players_each_adds_own_pips():
    env = new_env(4, DOMINO_4P, episode="round")
    run_script(env, DOMINO_4P_SCRIPT)
    assert state(env)["scores"] == [16, 0, 21, 13]
    # Round ranking: the winner, then by pips added (13 < 16 < 21).
    assert rewards(env) == pytest.approx([-1 / 3, 1.0, -1.0, 1 / 3])


# --- blocked rounds --------------------------------------------------------------------------


def test_blocked_fewest_pips_wins_and_the_loser_adds_own_pips():
    hands = ["0-0 " + SMALL, BIG]
    env = new_env(2, zero_block_deal(hands), draw=False, episode="round")
    play(env, "0-0", seat=0)
    assert_episode_over(env)
    assert events_since_last_lay(env)[:2] == [(PASS, 1), (PASS, 0)]
    result = env.unwrapped.game.result
    assert result.blocked and result.winner == 0
    assert result.hand_pips == [23, 69]
    assert state(env)["scores"] == [0, 69], "the loser adds its own pips, not the difference"
    assert result.next_leader == 0
    assert rewards(env) == [1.0, -1.0]


def test_blocked_the_non_leader_can_win_with_fewer_pips():
    hands = ["0-0 1-6 2-4 2-5 2-6 3-3 3-4", SMALL + " 1-5"]  # 41 and 29 pips after the lead
    env = new_env(2, zero_block_deal(hands), draw=False, episode="round")
    play(env, "0-0", seat=0)
    result = env.unwrapped.game.result
    assert result.blocked and result.winner == 1
    assert result.hand_pips == [41, 29]
    assert state(env)["scores"] == [41, 0]
    assert result.next_leader == 1
    assert rewards(env) == [-1.0, 1.0]


# Seat 2 leads 0-0 and is left with 36 pips, seat 1 also holds 36, seat 0 holds 63.
TIE_3P_HANDS = ["2-5 3-4 3-6 4-5 4-6 5-5 5-6", "1-3 2-2 1-4 2-3 1-5 2-4 3-3", "0-0 1-1 1-2 1-6 2-6 3-5 4-4"]
TIE_3P = zero_block_deal(TIE_3P_HANDS)


def test_blocked_tie_has_no_winner_and_everybody_adds_own_pips():
    env = new_env(3, TIE_3P, draw=False, episode="round")
    assert state(env)["current_player"] == 2
    play(env, "0-0", seat=2)
    result = env.unwrapped.game.result
    assert result.blocked and result.winner is None
    assert result.hand_pips == [63, 36, 36]
    assert state(env)["scores"] == [63, 36, 36]
    assert result.next_leader == 0, "after a blocked tie the seat after the round's leader (2) leads"
    # Round ranking without a winner: by pips added; the two 36s share ranks 1 and 2.
    assert rewards(env) == pytest.approx([-1.0, 0.5, 0.5])


def test_blocked_team_sum_decides_not_the_single_lowest_hand():
    env = new_env(4, BLOCKED_4P_FEWER, teams=True, episode="round")
    run_script(env, BLOCKED_4P_FEWER_SCRIPT)
    assert_layout_dead_for_everyone(env)
    result = env.unwrapped.game.result
    assert result.blocked
    assert result.hand_pips == [20, 28, 35, 25]
    assert result.winner == 3, "team 1+3 (53) beats 0+2 (55); seat 3 is the partner with fewer pips"
    assert result.score_change == [55, 0]
    assert state(env)["scores"] == [55, 0, 55, 0]
    assert rewards(env) == [-1.0, 1.0, -1.0, 1.0]


def test_blocked_same_deal_without_teams_the_lowest_hand_wins():
    env = new_env(4, BLOCKED_4P_FEWER, episode="round")
    run_script(env, BLOCKED_4P_FEWER_SCRIPT)
    result = env.unwrapped.game.result
    assert result.blocked and result.winner == 0
    assert state(env)["scores"] == [0, 28, 35, 25]
    assert rewards(env) == pytest.approx([1.0, -1 / 3, -1.0, 1 / 3])  # then 25, 28, 35


def test_blocked_team_win_with_equal_partners():
    env = new_env(4, BLOCKED_4P_EQUAL, teams=True, episode="round")
    run_script(env, BLOCKED_4P_EQUAL_SCRIPT)
    assert_layout_dead_for_everyone(env)
    result = env.unwrapped.game.result
    assert result.blocked and result.hand_pips == [25, 35, 25, 35]
    assert result.score_change == [0, 70]
    # Equal partners: the first counting from the leader (seat 1) - seat 2, not seat 0.
    assert result.winner == 2 and result.next_leader == 2
    assert rewards(env) == [1.0, -1.0, 1.0, -1.0]


def test_blocked_team_tie_everybody_adds_own_pips():
    env = new_env(4, BLOCKED_4P_TIE, teams=True, episode="round")
    run_script(env, BLOCKED_4P_TIE_SCRIPT)
    assert_layout_dead_for_everyone(env)
    result = env.unwrapped.game.result
    assert result.blocked and result.winner is None
    assert result.hand_pips == [19, 21, 32, 30]
    assert result.score_change == [19 + 32, 21 + 30]
    assert state(env)["scores"] == [51, 51, 51, 51]
    assert rewards(env) == [0.0, 0.0, 0.0, 0.0]


# --- later rounds: who leads -------------------------------------------------------------------


def test_round_winner_leads_any_tile_next_round():
    round2 = deal(["1-1 1-2 1-3 2-2 2-3 3-3 4-6", "0-0 0-1 0-2 0-3 0-4 0-5 0-6"])
    env = new_env(2, deals=[DOMINO_2P, round2])
    run_script(env, DOMINO_2P_SCRIPT)
    s = state(env)
    assert s["round"] == 1 and not s["round_over"] and s["scores"] == [0, 9]
    assert not any(env.terminations.values())
    # Seat 0 went out, so it leads round 2 with any tile - although seat 1 holds 0-0.
    assert s["leader"] == 0 and s["current_player"] == 0
    assert lead_actions(env) == set(tiles("1-1 1-2 1-3 2-2 2-3 3-3 4-6"))
    assert env.last()[0]["action_mask"].sum() == 7
    play(env, "4-6", seat=0)
    assert state(env)["open_ends"] == {"east": 6, "west": 4}


def test_blocked_team_win_partner_with_fewer_pips_leads_next_round():
    env = new_env(4, teams=True, deals=[BLOCKED_4P_FEWER, ROUND2_4P])
    run_script(env, BLOCKED_4P_FEWER_SCRIPT)
    s = state(env)
    assert s["round"] == 1 and s["scores"] == [55, 0, 55, 0]
    assert s["leader"] == 3 and s["current_player"] == 3  # 25 pips against partner's 28
    assert lead_actions(env) == set(ALL_TILES[21:28])  # any tile, though seat 0 holds 0-0


def test_blocked_team_win_equal_partners_first_from_the_leader_leads_next_round():
    env = new_env(4, teams=True, deals=[BLOCKED_4P_EQUAL, ROUND2_4P])
    run_script(env, BLOCKED_4P_EQUAL_SCRIPT)
    s = state(env)
    assert s["round"] == 1 and s["scores"] == [0, 70, 0, 70]
    # Seats 0 and 2 both kept 25; counting from round 1's leader (seat 1): 2 comes before 0.
    assert s["leader"] == 2 and s["current_player"] == 2
    assert lead_actions(env) == set(ALL_TILES[14:21])


def test_blocked_team_tie_next_round_led_by_seat_after_leader():
    env = new_env(4, teams=True, deals=[BLOCKED_4P_TIE, ROUND2_4P])
    run_script(env, BLOCKED_4P_TIE_SCRIPT)
    s = state(env)
    assert s["round"] == 1 and s["scores"] == [51, 51, 51, 51]
    assert s["leader"] == 2 and s["current_player"] == 2  # round 1 was led by seat 1
    assert lead_actions(env) == set(ALL_TILES[14:21])


def test_blocked_tie_next_round_led_by_seat_after_leader_three_players():
    round2 = deal(
        ["1-1 1-2 1-3 2-2 2-3 3-3 4-6", "0-0 0-1 0-2 0-3 0-4 0-5 0-6", "5-5 5-6 6-6 4-4 4-5 3-4 3-5"]
    )
    env = new_env(3, draw=False, deals=[TIE_3P, round2])
    play(env, "0-0", seat=2)
    s = state(env)
    assert s["round"] == 1 and s["scores"] == [63, 36, 36]
    assert s["leader"] == 0 and s["current_player"] == 0
    assert lead_actions(env) == set(tiles("1-1 1-2 1-3 2-2 2-3 3-3 4-6"))


# --- the match -------------------------------------------------------------------------------


def two_round_match_2p() -> list[dict[str, Any]]:
    """Seat 1 adds 52, then 49: exactly 101 after round 2."""
    return [zero_block_deal(["0-0 " + SMALL, MID_52]), zero_block_deal(["0-0 " + SMALL, MID])]


def test_match_goes_on_below_101_and_ends_on_reaching_it():
    env = new_env(2, draw=False, deals=two_round_match_2p())
    play(env, "0-0", seat=0)
    s = state(env)
    assert s["scores"] == [0, 52] and s["round"] == 1
    assert not s["match_over"] and not any(env.terminations.values())
    assert rewards(env) == [0.0, 0.0], "outcome rewards come only at the end of the match"
    assert s["current_player"] == 0  # seat 0 won the blocked round and leads
    play(env, "0-0", seat=0)
    s = state(env)
    assert s["scores"] == [0, TARGET]
    assert s["match_over"] and s["round_over"]
    assert_episode_over(env)
    assert rewards(env) == [1.0, -1.0]
    assert env._cumulative_rewards == {"player_0": 1.0, "player_1": -1.0}


def test_match_three_players_ranked_by_lowest_penalty():
    # Seat 0 leads 0-0 and wins both blocked rounds; seat 1 adds 49 twice, seat 2 adds 69 twice.
    one = zero_block_deal(["0-0 " + SMALL, MID, BIG])
    env = new_env(3, draw=False, deals=[one, one])
    play(env, "0-0", seat=0)
    assert state(env)["scores"] == [0, 49, 69] and not state(env)["match_over"]
    play(env, "0-0", seat=0)
    assert state(env)["scores"] == [0, 98, 138] and state(env)["match_over"]
    assert_episode_over(env)
    assert rewards(env) == pytest.approx([1.0, 0.0, -1.0])


def test_match_tied_sides_share_the_mean_of_their_ranks():
    first = zero_block_deal(["0-0 " + SMALL, MID, BIG])
    second = zero_block_deal(["0-0 " + SMALL, BIG, MID])
    env = new_env(3, draw=False, deals=[first, second])
    play(env, "0-0", seat=0)
    play(env, "0-0", seat=0)
    assert state(env)["scores"] == [0, 118, 118]
    assert_episode_over(env)
    assert rewards(env) == pytest.approx([1.0, -0.5, -0.5])


def test_team_match_ends_when_a_team_reaches_101():
    # The same blocked round twice (both deals name seat 1 as leader): team 0+2 adds 55 each time.
    env = new_env(4, teams=True, deals=[BLOCKED_4P_FEWER, BLOCKED_4P_FEWER])
    run_script(env, BLOCKED_4P_FEWER_SCRIPT)
    assert state(env)["scores"] == [55, 0, 55, 0] and not any(env.terminations.values())
    run_script(env, BLOCKED_4P_FEWER_SCRIPT)
    assert state(env)["scores"] == [110, 0, 110, 0] and state(env)["match_over"]
    assert_episode_over(env)
    assert rewards(env) == [-1.0, 1.0, -1.0, 1.0]


def test_points_reward_is_score_change_over_101_negative_for_penalties():
    env = new_env(2, draw=False, deals=two_round_match_2p(), reward="points")
    play(env, "0-0", seat=0)
    assert rewards(env) == pytest.approx([0.0, -52 / TARGET])
    play(env, "0-0", seat=0)
    assert rewards(env) == pytest.approx([0.0, -49 / TARGET])
    assert_episode_over(env)
    # Seat 1 never acted, so both rounds' rewards are still in its cumulative reward.
    assert env._cumulative_rewards["player_1"] == pytest.approx(-101 / TARGET)
    assert env._cumulative_rewards["player_0"] == 0.0


def test_points_reward_is_shared_by_partners():
    env = new_env(4, BLOCKED_4P_FEWER, teams=True, episode="round", reward="points")
    run_script(env, BLOCKED_4P_FEWER_SCRIPT)
    assert_episode_over(env)
    assert rewards(env) == pytest.approx([-55 / TARGET, 0.0, -55 / TARGET, 0.0])


def test_round_episode_ranks_winner_first_then_by_pips_added():
    env = new_env(3, DOMINO_3P, draw=False, episode="round")
    run_script(env, DOMINO_3P_SCRIPT)
    assert_episode_over(env)
    assert state(env)["scores"] == [30, 0, 19]
    assert rewards(env) == pytest.approx([-1.0, 1.0, 0.0])


def test_round_episode_uses_the_first_round_opening_rule_every_reset():
    env = domino_env.make("classic", num_players=2, episode="round")
    for _ in range(2):
        env.reset(seed=0, options={"deal": DOMINO_2P})
        assert state(env)["round"] == 0
        assert lead_actions(env) == {(0, 0)}
        run_script(env, DOMINO_2P_SCRIPT)
        assert_episode_over(env)
    # Seat 1 would lead a match's second round only if it had won; a fresh round always
    # starts from the lowest double again, here held by seat 1.
    swapped = deal(["0-1 2-3 4-5 6-6 2-2 4-4 3-6", "0-0 1-2 3-4 5-6 2-6 2-4 1-4"])
    env.reset(seed=0, options={"deal": swapped})
    assert state(env)["current_player"] == 1 and lead_actions(env) == {(0, 0)}


# --- illegal actions say why ---------------------------------------------------------------------


def _refused(env, text: str, slot: int = 0) -> str:
    """Step the action laying ``text`` on ``slot`` (0 east / the lead, 1 west), which must be
    refused and change nothing; the error message."""
    u = env.unwrapped
    action = u.rules.play_action(u.rules.tile_set.id_of(text), slot)
    agent = env.agent_selection
    before = (
        u.public_state(),
        list(u.game.hands),
        list(u.game.legal),
        env.observe(agent)["action_mask"].copy(),
    )
    with pytest.raises(ValueError) as info:
        env.step(action)
    after = (u.public_state(), list(u.game.hands), list(u.game.legal), env.observe(agent)["action_mask"])
    assert before[:3] == after[:3] and np.array_equal(before[3], after[3]) and env.agent_selection == agent
    message = str(info.value)
    assert message.startswith(f"illegal action {action} (") and "; legal actions: " in message
    return message


def test_an_illegal_lead_says_what_the_opening_rule_requires() -> None:
    # the lowest double dealt is 1-1 (0-0 is in the boneyard): seat 0 must lead it
    env = new_env(the_deal=deal(["1-1 2-3 3-4 4-5 5-6 2-6 2-4", "3-3 0-1 0-2 1-3 1-4 3-5 3-6"]))
    assert env.agent_selection == "player_0"
    held = _refused(env, "2-3")
    assert (
        "(2-3 lead) for player_0: the round's first tile must be 1-1, the lowest double dealt "
        "(with none, the tile with the fewest pips);" in held
    )
    assert held.endswith("legal actions: 14 (1-1 lead)")
    assert "must be 1-1, the lowest double dealt (" in _refused(env, "0-1")  # not even held
    west = _refused(env, "1-1", slot=1)  # the opening tile, but named on an end
    assert (
        "(1-1 lead) for player_0: the round's first tile is laid as the lead (action 14), not on an end"
        in west
    )
    play(env, "1-1", seat=0)  # the env is still usable
    assert state(env)["table"] == [(1, 1)]
    # a fixed deal's opening names the tile
    env = new_env(
        the_deal=deal(["1-1 2-3 3-4 4-5 5-6 2-6 2-4", "3-3 0-1 0-2 1-3 1-4 3-5 3-6"], opening="2-3")
    )
    assert "the round's first tile must be 2-3, the opening tile the deal names;" in _refused(env, "1-1")


def test_an_illegal_play_mid_round_says_which_end_and_why() -> None:
    env = new_env(the_deal=deal(["1-1 2-3 3-4 4-5 5-6 2-6 2-4", "3-3 0-1 0-2 1-3 1-4 3-5 3-6"]))
    play(env, "1-1", seat=0)
    mismatch = _refused(env, "3-5")
    assert "(3-5 on east (end 1)) for player_1: the east end shows 1, and 3-5 has no 1;" in mismatch
    assert "the west end shows 1, and 3-6 has no 1;" in _refused(env, "3-6", slot=1)
    assert "(2-3 on east (end 1)) for player_1: player_1 holds no 2-3;" in _refused(env, "2-3")
    play(env, "1-3", "east", seat=1)  # still usable: a legal move plays
    assert state(env)["ends"] == [3, 1]
