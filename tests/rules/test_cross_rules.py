"""Scenario tests for Cross (docs/rules/cross.md), plus Cross-specific invariants.

Every scenario fixes all four hands (all 28 tiles are dealt, there is no boneyard) and plays a
scripted line of moves through the public AEC interface. Moves in a script are written
``"seat tile arm"``; passes happen inside ``step`` and are not listed (a seat that plays twice
in a row means everyone in between passed).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.core.line import OPEN
from domino_env.core.state import DRAW, LAY, PASS
from tests.support import helpers
from tests.support.helpers import ALL_TILES, pips, play, tile, tiles

ARMS = {"east", "west", "north", "south"}


# --- helpers ---------------------------------------------------------------------------------


def deal(hands: list[str], **extra: Any) -> dict[str, Any]:
    """A Cross deal: all 28 tiles in the hands (no boneyard); the 6-6 opens unless told."""
    assert sorted(t for h in hands for t in tiles(h)) == ALL_TILES, "a Cross deal holds all 28 tiles"
    return helpers.deal(hands, extra.pop("leader", None), **extra)


def new_env(
    the_deal: dict[str, Any] | None = None, deals: list[dict[str, Any]] | None = None, **options: Any
):
    env = domino_env.make("cross", **options)
    env.reset(seed=0, options={"deals": deals} if deals is not None else {"deal": the_deal})
    return env


def state(env) -> dict[str, Any]:
    return env.unwrapped.public_state()


def moves(env) -> set[tuple[tuple[int, int], str]]:
    """(tile, arm) of every legal move of the seat to move."""
    return {(m["tile"], m["arm"]) for m in env.unwrapped.legal_moves()}


def run_script(env, script: list[str]) -> None:
    for line in script:
        seat, text, arm = line.split()
        play(env, text, arm, seat=int(seat))


def events(env, kind: str) -> list[tuple[Any, ...]]:
    return [e for e in env.unwrapped.game.events if e[0] == kind]


def rewards(env) -> list[float]:
    return [env.rewards[a] for a in env.possible_agents]


# --- fixed scenarios ---------------------------------------------------------------------------

# Seat 0 holds 6-6 and no other six; seat 1 holds 3-6 and 4-6 (and 2-5); seat 2 holds four sixes;
# seat 3 holds no six at all, so it can never start an arm.
START = deal(
    [
        "6-6 0-0 0-1 0-2 1-1 1-2 2-2",
        "3-6 4-6 3-4 3-3 0-3 1-3 2-5",
        "5-6 0-6 1-6 2-6 4-4 4-5 5-5",
        "0-4 0-5 1-4 1-5 2-4 2-3 3-5",
    ]
)

# Seat 3 leads 6-6. Blocked with every end at 0 (all seven zeros are out): pips left
# seat 0 1-1 2-2 4-5 5-5 = 25, seat 1 1-3 1-4 1-5 2-5 = 22, seat 2 3-3 3-4 4-6 = 23,
# seat 3 1-6 2-3 3-5 4-4 = 28. Alone seat 1 has the fewest; as teams 0+2 hold 48 against 50.
BLOCKED = deal(
    [
        "0-3 0-4 1-1 2-2 3-6 4-5 5-5",
        "0-2 1-2 1-3 1-4 1-5 2-5 5-6",
        "0-0 0-1 0-5 2-6 3-3 3-4 4-6",
        "0-6 1-6 2-3 2-4 3-5 4-4 6-6",
    ]
)
BLOCKED_SCRIPT = [
    "3 6-6 lead",
    "0 3-6 south",
    "1 5-6 north",
    "2 2-6 east",
    "3 0-6 west",  # the fourth arm is started
    "0 0-3 south",
    "1 0-2 south",
    "2 0-5 north",
    "3 2-4 south",
    "0 0-4 south",
    "1 1-2 east",
    "2 0-1 east",  # every end shows 0; seats 3, 0 and 1 have no zero and pass
    "2 0-0 south",  # then nobody can play: blocked
]

# Seat 2 leads 6-6 and goes out; left: seat 0 0-2 2-3 5-5 = 17, seat 1 0-4 2-5 = 11,
# seat 3 0-0 2-4 3-3 = 12.
DOMINO = deal(
    [
        "0-2 0-3 1-6 2-2 2-3 4-4 5-5",
        "0-1 0-4 0-5 1-2 2-5 3-4 4-6",
        "0-6 1-1 1-3 1-5 2-6 3-6 6-6",
        "0-0 1-4 2-4 3-3 3-5 4-5 5-6",
    ]
)
DOMINO_SCRIPT = [
    "2 6-6 lead",
    "3 5-6 east",
    "0 1-6 north",
    "1 4-6 west",
    "2 2-6 south",
    "3 1-4 west",
    "0 2-2 south",
    "1 1-2 south",
    "2 1-1 north",
    "3 4-5 east",
    "0 4-4 east",
    "1 3-4 east",
    "2 1-3 east",
    "1 0-1 east",  # seats 3 and 0 pass
    "2 0-6 east",
    "2 1-5 south",  # seats 3, 0 and 1 pass
    "3 3-5 south",
    "0 0-3 south",
    "1 0-5 south",
    "2 3-6 east",  # seat 2's last tile
]


def test_scenario_deals_are_complete():
    for spec in (START, BLOCKED, DOMINO):
        assert [len(h) for h in spec["hands"]] == [7, 7, 7, 7]


# --- set-up and options ------------------------------------------------------------------------


def test_four_players_seven_tiles_each_and_no_boneyard():
    env = domino_env.make("cross")
    env.reset(seed=1)
    s = state(env)
    assert s["hand_sizes"] == [7, 7, 7, 7]
    assert s["boneyard_size"] == 0
    assert env.unwrapped.rules.num_slots == 4


def test_options():
    for bad in (2, 3, 5):
        with pytest.raises(ValueError, match="4"):
            domino_env.make("cross", num_players=bad)
    with pytest.raises(ValueError, match="draw"):
        domino_env.make("cross", draw=True)  # there is no boneyard to draw from
    env = domino_env.make("cross", teams=True)
    assert env.unwrapped.rules.side_of == [0, 1, 0, 1]


# --- opening -----------------------------------------------------------------------------------


@pytest.mark.parametrize("holder", [0, 1, 2, 3])
def test_the_holder_of_6_6_leads_it(holder):
    hands = [START["hands"][(seat - holder) % 4] for seat in range(4)]  # seat `holder` gets 6-6
    env = new_env({"hands": hands})
    s = state(env)
    assert s["leader"] == holder and s["current_player"] == holder
    assert env.agent_selection == f"player_{holder}"
    assert moves(env) == {((6, 6), "lead")}


def test_6_6_is_a_spinner_with_four_arms_open_at_once():
    env = new_env(START)
    play(env, "6-6", "lead", seat=0)
    s = state(env)
    assert s["open_ends"] == {"east": 6, "west": 6, "north": 6, "south": 6}
    assert sorted(s["unstarted_arms"]) == sorted(ARMS)
    assert s["current_player"] == 1  # the opening tile is a turn of its own


def test_6_6_leads_every_round_whoever_won():
    second = deal([" ".join(f"{a}-{b}" for a, b in ALL_TILES[7 * s : 7 * s + 7]) for s in range(4)])
    assert (6, 6) in second["hands"][3]
    env = new_env(deals=[BLOCKED, second])
    run_script(env, BLOCKED_SCRIPT)
    s = state(env)
    assert s["scores"] == [25, 0, 23, 28]  # seat 1 won round 0
    assert s["round"] == 1
    assert s["leader"] == 3 and s["current_player"] == 3  # not seat 1, who won round 0
    assert moves(env) == {((6, 6), "lead")}


def test_later_random_rounds_are_led_with_6_6_too():
    env = domino_env.make("cross")
    env.reset(seed=4)
    u = env.unwrapped
    rnd = random.Random(4)
    leads = []
    while not all(env.terminations.values()):
        if u.game.line.empty:
            holder = next(s for s in range(4) if u.game.hands[s] >> 27 & 1)
            assert u.game.current == holder
            leads.append(u.game.round_index)
            assert moves(env) == {((6, 6), "lead")}
        env.step(rnd.choice(u.game.legal))
    assert len(leads) >= 2, "the match should take several rounds"


# --- starting the arms --------------------------------------------------------------------------


def test_a_player_who_can_start_an_arm_must_start_one():
    env = new_env(START)
    play(env, "6-6", "lead", seat=0)
    # seat 1: its two sixes on any of the four unstarted arms, nothing else
    assert moves(env) == {(tile(t), arm) for t in ("3-6", "4-6") for arm in ARMS}
    play(env, "3-6", "east", seat=1)
    assert state(env)["open_ends"] == {"east": 3, "west": 6, "north": 6, "south": 6}
    # seat 2: a six on one of the three arms still unstarted; east (started) is not offered
    assert moves(env) == {
        (tile(t), arm) for t in ("5-6", "0-6", "1-6", "2-6") for arm in ("west", "north", "south")
    }
    play(env, "5-6", "west", seat=2)


def test_a_player_who_cannot_start_an_arm_plays_on_the_started_ones():
    env = new_env(START)
    run_script(env, ["0 6-6 lead", "1 3-6 east", "2 5-6 west"])
    # seat 3 holds no six: north and south stay unstarted, but east 3 and west 5 are open to it
    assert sorted(state(env)["unstarted_arms"]) == ["north", "south"]
    assert moves(env) == {
        ((3, 5), "east"),
        ((2, 3), "east"),
        ((3, 5), "west"),
        ((0, 5), "west"),
        ((1, 5), "west"),
    }
    play(env, "3-5", "east", seat=3)


def test_playing_on_a_started_arm_is_illegal_while_the_player_can_start_one():
    env = new_env(START)
    run_script(env, ["0 6-6 lead", "1 3-6 east", "2 5-6 west", "3 3-5 east"])
    # seat 0 has no six and no five: it passes; seat 1's 2-5 fits east 5 and west 5,
    # but it holds 4-6 and must start north or south with it
    assert events(env, PASS) == [(PASS, 0)]
    assert env.unwrapped.game.current == 1
    assert moves(env) == {((4, 6), "north"), ((4, 6), "south")}
    u = env.unwrapped
    illegal = u.rules.play_action(u.rules.tile_set.id_of((2, 5)), 0)
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)
    play(env, "4-6", "north", seat=1)
    # seat 2: 4-4 and 4-5 fit north, 4-5 and 5-5 fit east/west, but south is unstarted
    assert moves(env) == {(tile(t), "south") for t in ("0-6", "1-6", "2-6")}
    play(env, "0-6", "south", seat=2)
    assert state(env)["unstarted_arms"] == []
    # every arm started: any tile on any matching end
    assert moves(env) == {
        ((0, 4), "north"),
        ((0, 4), "south"),
        ((1, 4), "north"),
        ((2, 4), "north"),
        ((0, 5), "east"),
        ((0, 5), "west"),
        ((0, 5), "south"),
        ((1, 5), "east"),
        ((1, 5), "west"),
    }


def test_arm_started_observation_block():
    env = new_env(START)
    u = env.unwrapped
    layout = u.observation_layout
    assert layout["arm_started"].stop - layout["arm_started"].start == 4
    play(env, "6-6", "lead", seat=0)
    for agent in env.agents:
        assert not env.observe(agent)["observation"][layout["arm_started"]].any()
    run_script(env, ["1 3-6 east", "2 5-6 north"])
    for agent in env.agents:
        assert list(env.observe(agent)["observation"][layout["arm_started"]]) == [1.0, 0.0, 1.0, 0.0]


# --- passing, blocked and domino rounds ---------------------------------------------------------


def test_a_player_who_cannot_play_passes_and_nobody_draws():
    env = new_env(BLOCKED)
    run_script(env, BLOCKED_SCRIPT[:12])
    assert events(env, PASS) == [(PASS, 3), (PASS, 0), (PASS, 1)]
    assert events(env, DRAW) == []
    assert env.unwrapped.game.current == 2
    assert state(env)["ends"] == [0, 0, 0, 0]


def test_blocked_round_fewest_pips_wins_alone():
    env = new_env(BLOCKED, episode="round")
    run_script(env, BLOCKED_SCRIPT)
    u = env.unwrapped
    result = u.game.result
    assert result.blocked and result.winner == 1
    assert result.hand_pips == [25, 22, 23, 28]
    assert u.game.scores == [25, 0, 23, 28]  # everyone but the winner adds their own pips
    assert result.next_leader == -1  # whoever is dealt 6-6 next leads
    assert events(env, PASS)[-4:] == [(PASS, 3), (PASS, 0), (PASS, 1), (PASS, 2)]
    assert state(env)["round_over"] and state(env)["ends"] == [0, 0, 0, 0]


def test_blocked_round_with_teams_sums_both_hands():
    env = new_env(BLOCKED, teams=True, episode="round")
    run_script(env, BLOCKED_SCRIPT)
    u = env.unwrapped
    result = u.game.result
    assert result.blocked
    assert result.winner == 2  # team 0+2 (48) beats 1+3 (50); seat 2 has fewer pips than seat 0
    assert u.game.scores == [0, 50]
    assert state(env)["scores"] == [0, 50, 0, 50]
    assert rewards(env) == [1.0, -1.0, 1.0, -1.0]


def test_domino_scores_as_classic():
    env = new_env(DOMINO, episode="round")
    run_script(env, DOMINO_SCRIPT)
    u = env.unwrapped
    result = u.game.result
    assert not result.blocked and result.winner == 2
    assert u.game.scores == [pips("0-2 2-3 5-5"), pips("0-4 2-5"), 0, pips("0-0 2-4 3-3")] == [17, 11, 0, 12]
    assert rewards(env) == pytest.approx([-1.0, 1 / 3, 1.0, -1 / 3])  # then by pips added: 11, 12, 17


def test_domino_with_teams_charges_only_the_opponents():
    env = new_env(DOMINO, teams=True)
    run_script(env, DOMINO_SCRIPT)
    u = env.unwrapped
    assert u.game.scores == [0, 11 + 12]
    assert state(env)["round"] == 1  # the match goes on to 101


# --- invariants (hypothesis) ------------------------------------------------------------------


def cross_placements(game, rules) -> set[int]:
    """The rule book's legal moves, written out from scratch."""
    line, ts = game.line, rules.tile_set
    hand = [t for t in range(ts.size) if game.hands[game.current] >> t & 1]
    if line.empty:
        return {rules.play_action(game.required_lead, 0)}
    fits = {
        (t, slot)
        for t in hand
        for slot in range(4)
        if line.state[slot] == OPEN and line.value[slot] in ts.tiles[t]
    }
    starts = {(t, slot) for t, slot in fits if not line.arms[slot]}
    return {rules.play_action(t, slot) for t, slot in (starts or fits)}


@pytest.mark.parametrize("teams", [False, True])
@settings(max_examples=15, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=True))
def test_cross_invariants(teams, seed, rnd):
    env = domino_env.make("cross", teams=teams)
    env.reset(seed=seed)
    u = env.unwrapped
    game, rules = u.game, u.rules
    while not all(env.terminations.values()):
        game = u.game
        legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
        assert set(legal) == cross_placements(game, rules)
        assert not game.stock
        if game.line.empty:  # every round opens with 6-6 from its holder
            assert game.hands[game.current] >> 27 & 1 and legal == [rules.play_action(27, 0)]
        action = rnd.choice(legal)
        seat, logged = game.current, len(game.events)
        clone = game.clone()
        rules.apply(clone, action)
        new = clone.events[logged:]
        assert new[0][:3] == (LAY, seat, rules.action_tile[action])
        passed = [e[1] for e in new[1:] if e[0] == PASS]
        kinds = [e[0] for e in new[1:] if e[0] != "score"]
        assert kinds == [PASS] * len(passed) + ["round_end"] * clone.round_over
        assert passed == [(seat + k) % 4 for k in range(1, len(passed) + 1)]
        if clone.round_over:
            assert clone.result is not None
            assert clone.result.blocked == (len(passed) == 4) == all(clone.hands)
        else:
            assert clone.turn_laid == 0  # one tile a turn
            assert clone.current == (seat + len(passed) + 1) % 4
        env.step(action)
