"""Scenario tests for Blitz (docs/rules/blitz.md), plus Blitz-specific invariants.

Every scenario fixes the hands and the boneyard order and plays a scripted line of moves
through the public AEC interface. Moves in a script are written ``"seat tile [arm]"`` (the
arm only where the tile fits two ends) or ``"seat stop"``; forced draws and passes happen
inside ``step`` and are not listed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.agents import GreedyAgent
from domino_env.core.line import OPEN
from domino_env.core.state import DRAW, LAY, PASS
from tests.support import helpers
from tests.support.helpers import ALL_TILES, pips, play, tile

# --- helpers ---------------------------------------------------------------------------------


def deal(hands: list[str], first: str = "", **extra: Any) -> dict[str, Any]:
    """A fixed deal: the hands, then the boneyard (``first`` drawn first, the rest in id order);
    the rules choose the opening unless ``leader`` is given."""
    return helpers.deal(hands, extra.pop("leader", None), first, **extra)


def new_env(
    the_deal: dict[str, Any] | None = None, deals: list[dict[str, Any]] | None = None, **options: Any
):
    num_players = len((the_deal or deals[0])["hands"])  # type: ignore[index]
    env = domino_env.make("blitz", num_players=num_players, **options)
    env.reset(seed=0, options={"deals": deals} if deals is not None else {"deal": the_deal})
    return env


def state(env) -> dict[str, Any]:
    return env.unwrapped.public_state()


def current(env) -> int:
    return env.unwrapped.game.current


def moves(env) -> set[tuple[tuple[int, int], str] | str]:
    """(tile, arm) of every legal placement of the seat to move, and "stop" when offered."""
    return {(m["tile"], m["arm"]) if m["kind"] == "play" else m["kind"] for m in env.unwrapped.legal_moves()}


def run_script(env, script: list[str]) -> None:
    for line in script:
        seat, text, *arm = line.split()
        play(env, text, arm[0] if arm else None, seat=int(seat))


def stop_action(env) -> int:
    return env.unwrapped.rules.extra_action_id["stop"]


def tid(text: str) -> int:
    return ALL_TILES.index(tile(text))


def events(env, kind: str) -> list[tuple[Any, ...]]:
    return [e for e in env.unwrapped.game.events if e[0] == kind]


def phase(env) -> list[float]:
    """The phase flags (lead, continuing) in the observation of the seat to move."""
    layout = env.unwrapped.observation_layout
    return list(env.observe(env.agent_selection)["observation"][layout["phase"]])


def hand(env, seat: int) -> set[tuple[int, int]]:
    h = env.unwrapped.game.hands[seat]
    return {t for i, t in enumerate(ALL_TILES) if h >> i & 1}


def rewards(env) -> list[float]:
    return [env.rewards[a] for a in env.possible_agents]


# --- fixed scenarios ---------------------------------------------------------------------------

# Two players. Seat 0 leads 0-0; seat 1 can run 0-1 1-2 2-3 3-3 east and 0-5 west. Seat 0 holds
# nothing with 0, 1 or 2, and its first draws are 3-6 (no fit on 2/0) and 2-4; from 2-4 it can
# run 4-4 4-5 5-5 5-6 6-6 3-6 3-4 east and go out.
RUN_2P = deal(["0-0 3-4 4-4 4-5 5-5 5-6 6-6", "0-1 1-2 2-3 0-5 1-1 2-2 3-3"], first="3-6 2-4")

# Four players, all 28 tiles dealt. Seat 0 leads 0-0; seats 1-3 each lay one tile on the west end
# and stop; seat 0 then runs 0-1 1-2 2-3 3-4 4-5 5-5 east and goes out in one turn. Left in
# hand: seat 1 0-2 0-3 1-1 1-3 2-2 2-4 = 21, seat 2 0-4 0-5 1-4 1-5 2-5 3-3 = 33,
# seat 3 1-6 2-6 3-5 4-4 4-6 5-6 = 52.
TEAM_4P = deal(
    [
        "0-0 0-1 1-2 2-3 3-4 4-5 5-5",
        "0-6 0-2 0-3 1-1 1-3 2-2 2-4",
        "6-6 0-4 0-5 1-4 1-5 2-5 3-3",
        "3-6 1-6 2-6 3-5 4-4 4-6 5-6",
    ]
)
TEAM_4P_SCRIPT = [
    "0 0-0",
    "1 0-6 west",
    "1 stop",
    "2 6-6 west",
    "2 stop",
    "3 3-6 west",
    "3 stop",
    "0 0-1 east",
    "0 1-2 east",
    "0 2-3 east",
    "0 3-4 east",
    "0 4-5 east",
    "0 5-5 east",
]


# --- set-up ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("num_players", "boneyard"), [(2, 14), (3, 7), (4, 0)])
def test_seven_tiles_each_and_the_rest_is_the_boneyard(num_players, boneyard):
    env = domino_env.make("blitz", num_players=num_players)
    env.reset(seed=3)
    s = state(env)
    assert s["hand_sizes"] == [7] * num_players
    assert s["boneyard_size"] == boneyard
    assert env.unwrapped.rules.num_slots == 2  # a linear line of play


def test_options():
    for bad in (1, 5):
        with pytest.raises(ValueError):
            domino_env.make("blitz", num_players=bad)
    with pytest.raises(ValueError, match="teams"):
        domino_env.make("blitz", num_players=3, teams=True)
    with pytest.raises(ValueError, match=r"^blitz: draw must be True or False"):
        domino_env.make("blitz", draw="yes")
    assert domino_env.make("blitz", num_players=4, teams=True).unwrapped.rules.side_of == [0, 1, 0, 1]


# --- opening -----------------------------------------------------------------------------------


@pytest.mark.parametrize("holder", [0, 1, 2])
def test_the_holder_of_0_0_leads_it(holder):
    hands = ["1-1 1-2 1-3 1-4 1-5 1-6 2-2", "0-1 0-2 0-3 0-4 0-5 0-6 2-3", "2-4 2-5 2-6 3-3 3-4 3-5 3-6"]
    hands[holder] = hands[holder].replace("2-2", "0-0").replace("2-3", "0-0").replace("3-6", "0-0")
    env = new_env(deal(hands))
    s = state(env)
    assert s["leader"] == holder and s["current_player"] == holder
    assert moves(env) == {((0, 0), "lead")}


@pytest.mark.parametrize(
    ("hands", "leader", "opening"),
    [
        # no 0-0: 0-1 (1 pip) is the closest
        (["1-1 1-2 1-3 1-4 1-5 1-6 2-2", "0-1 3-3 3-4 3-5 3-6 4-4 4-5"], 1, "0-1"),
        # no 0-0 or 0-1: 0-2 and 1-1 both have 2 pips; the lower small half (0) wins - no preference
        # for doubles as in Classic
        (["1-1 1-3 1-4 1-5 1-6 3-3 3-4", "0-2 2-2 2-3 2-4 2-5 2-6 4-4"], 1, "0-2"),
        (["0-3 4-4 4-5 4-6 5-5 5-6 6-6", "1-2 2-2 2-3 2-4 2-5 2-6 3-3"], 0, "0-3"),  # 3 pips: 0-3 before 1-2
        (["0-4 4-4 4-5 4-6 5-5 5-6 6-6", "1-2 2-2 2-3 2-4 2-5 2-6 3-3"], 1, "1-2"),
    ],
)
def test_without_0_0_the_closest_tile_by_pips_leads(hands, leader, opening):
    closer = "0-0" if opening == "0-1" else "0-0 0-1"
    env = new_env(deal(hands, first=closer))  # the tiles closer to 0-0 lie in the boneyard
    s = state(env)
    assert s["leader"] == leader and s["current_player"] == leader
    assert moves(env) == {(tile(opening), "lead")}


def test_the_opening_tile_is_a_turn_of_its_own():
    env = new_env(RUN_2P)
    assert phase(env) == [1.0, 0.0]
    play(env, "0-0", seat=0)
    # seat 0 could not go on anyway, but the turn passes at once, and seat 1 starts a fresh turn
    assert current(env) == 1
    assert state(env)["laid_this_turn"] == 0
    assert "stop" not in moves(env)
    assert phase(env) == [0.0, 0.0]
    with pytest.raises(ValueError, match="illegal"):
        env.step(stop_action(env))


def test_a_later_round_is_led_by_the_previous_winner_with_any_tile():
    env = new_env(deals=[TEAM_4P])  # the second round is dealt at random
    run_script(env, TEAM_4P_SCRIPT)
    s = state(env)
    assert s["round"] == 1 and s["leader"] == 0 and current(env) == 0
    assert moves(env) == {(t, "lead") for t in hand(env, 0)}


# --- multi-tile turns --------------------------------------------------------------------------


def test_after_each_tile_the_player_continues_or_stops():
    env = new_env(RUN_2P)
    play(env, "0-0", seat=0)
    assert moves(env) == {((0, 1), "east"), ((0, 1), "west"), ((0, 5), "east"), ((0, 5), "west")}
    play(env, "0-1", "east", seat=1)
    assert current(env) == 1  # still seat 1's turn
    assert state(env)["laid_this_turn"] == 1
    assert phase(env) == [0.0, 1.0]
    # any open end: the new one (1) or the other (0)
    assert moves(env) == {((1, 2), "east"), ((1, 1), "east"), ((0, 5), "west"), "stop"}
    play(env, "1-2", "east", seat=1)
    assert moves(env) == {((2, 3), "east"), ((2, 2), "east"), ((0, 5), "west"), "stop"}
    assert state(env)["laid_this_turn"] == 2
    play(env, "stop", seat=1)
    assert events(env, LAY)[-2:] == [(LAY, 1, tid("0-1"), 0, 0), (LAY, 1, tid("1-2"), 0, 1)]
    assert state(env)["laid_this_turn"] == 0
    assert current(env) == 0 and phase(env)[1] == 0.0
    assert state(env)["ends"] == [2, 0]


def test_the_turn_ends_by_itself_when_nothing_more_fits():
    env = new_env(RUN_2P)
    run_script(env, ["0 0-0", "1 0-1 east", "1 1-2", "1 2-3", "1 3-3"])
    assert moves(env) == {((0, 5), "west"), "stop"}
    play(env, "0-5", "west", seat=1)
    # 1-1 and 2-2 fit neither 3 nor 5: seat 0 is asked next, without a stop from seat 1
    assert state(env)["ends"] == [3, 5]
    assert hand(env, 1) == {(1, 1), (2, 2)}
    assert current(env) == 0 and state(env)["laid_this_turn"] == 0
    assert moves(env) == {((3, 4), "east"), ((4, 5), "west"), ((5, 5), "west"), ((5, 6), "west")}


def test_a_player_with_nothing_to_lay_draws_until_a_tile_fits_then_goes_on_from_hand():
    env = new_env(RUN_2P)
    run_script(env, ["0 0-0", "1 0-1 east", "1 1-2", "1 stop"])
    # ends 2 and 0: seat 0 draws 3-6 (no fit), then 2-4, which must be laid - no stop yet
    assert events(env, DRAW) == [(DRAW, 0, tid("3-6")), (DRAW, 0, tid("2-4"))]
    assert state(env)["boneyard_size"] == 12
    assert moves(env) == {((2, 4), "east")}
    assert phase(env) == [0.0, 0.0]
    play(env, "2-4", "east", seat=0)
    # after the drawn tile the turn goes on from hand
    assert current(env) == 0
    assert moves(env) == {((3, 4), "east"), ((4, 4), "east"), ((4, 5), "east"), "stop"}
    play(env, "4-4", seat=0)
    assert len(events(env, DRAW)) == 2  # no draw in the middle of a turn
    play(env, "stop", seat=0)
    assert current(env) == 1


def test_laying_the_whole_hand_in_one_turn_ends_the_round():
    env = new_env(RUN_2P, episode="round")
    run_script(env, ["0 0-0", "1 0-1 east", "1 1-2", "1 stop", "0 2-4"])
    for t in ["4-4", "4-5", "5-5", "5-6", "6-6", "3-6", "3-4"]:
        assert current(env) == 0
        play(env, t, "east", seat=0)
    u = env.unwrapped
    result = u.game.result
    assert result.winner == 0 and not result.blocked
    assert hand(env, 0) == set()
    assert u.game.scores == [0, pips("2-3 0-5 1-1 2-2 3-3")] == [0, 22]
    assert all(env.terminations.values())
    assert rewards(env) == [1.0, -1.0]


def test_going_out_with_teams_charges_both_opponents():
    env = new_env(TEAM_4P, teams=True, episode="round")
    run_script(env, TEAM_4P_SCRIPT[:7])
    assert current(env) == 0 and state(env)["ends"] == [0, 3]
    run_script(env, TEAM_4P_SCRIPT[7:])
    u = env.unwrapped
    assert u.game.result.winner == 0
    assert u.game.scores == [0, 21 + 52]
    assert state(env)["scores"] == [0, 73, 0, 73]
    assert rewards(env) == [1.0, -1.0, 1.0, -1.0]


def test_going_out_without_teams_charges_everyone_else():
    env = new_env(TEAM_4P, episode="round")
    run_script(env, TEAM_4P_SCRIPT)
    assert env.unwrapped.game.scores == [0, 21, 33, 52]
    assert rewards(env) == pytest.approx([1.0, 1 / 3, -1 / 3, -1.0])


def test_block_blitz_without_drawing_ends_blocked_on_pips():
    hands = ["0-0 1-1 1-2 1-3 2-2 2-3 3-3", "4-4 4-5 4-6 5-5 5-6 6-6 1-4"]
    env = new_env(deal(hands), draw=False, episode="round")
    play(env, "0-0", seat=0)
    # nobody holds a zero: seat 1 passes (no drawing), seat 0 passes, blocked
    assert events(env, PASS) == [(PASS, 1), (PASS, 0)]
    assert events(env, DRAW) == []
    u = env.unwrapped
    assert u.game.result.blocked and u.game.result.winner == 0
    assert u.game.scores == [0, pips(hands[1]) - 0] == [0, 65]
    # with drawing, seat 1 would have drawn instead
    env = new_env(deal(hands, first="0-1"))
    play(env, "0-0", seat=0)
    assert events(env, DRAW) == [(DRAW, 1, tid("0-1"))] and current(env) == 1


# --- greedy baseline ---------------------------------------------------------------------------


def test_greedy_keeps_laying_its_heaviest_tile_while_it_can():
    env = new_env(RUN_2P)
    run_script(env, ["0 0-0", "1 0-1 east"])
    u = env.unwrapped
    agent = GreedyAgent(seed=0)
    while current(env) == 1:
        action = agent(u, env.observe(env.agent_selection))
        assert u.rules.action_kind[action] == "play", "greedy stopped while a tile fitted"
        env.step(action)
    # 0-5 (5 pips) west first, then 1-2 (3), 2-3 (5), 3-3 (6) east; 1-1 and 2-2 are left
    assert [e[2] for e in events(env, LAY)[2:]] == [
        u.rules.tile_set.id_of(t) for t in ("0-5", "1-2", "2-3", "3-3")
    ]
    assert hand(env, 1) == {(1, 1), (2, 2)}


# --- invariants (hypothesis) ------------------------------------------------------------------


def fits(rules, line, hand_mask: int) -> bool:
    ts = rules.tile_set
    return any(
        hand_mask >> t & 1 and line.state[s] == OPEN and line.value[s] in ts.tiles[t]
        for t in range(ts.size)
        for s in range(rules.num_slots)
    )


def blitz_legal(game, rules) -> set[int]:
    """The rule book's legal actions, written out from scratch."""
    line, ts = game.line, rules.tile_set
    in_hand = [t for t in range(ts.size) if game.hands[game.current] >> t & 1]
    if line.empty:
        if game.required_lead >= 0:
            return {rules.play_action(game.required_lead, 0)}
        return {rules.play_action(t, 0) for t in in_hand}
    plays = {
        rules.play_action(t, s)
        for t in in_hand
        for s in range(2)
        if line.state[s] == OPEN and line.value[s] in ts.tiles[t]
    }
    return plays | ({rules.extra_action_id["stop"]} if game.turn_laid else set())


def closest_to_0_0(game, rules) -> int:
    ts = rules.tile_set
    dealt = [t for t in range(ts.size) if any(h >> t & 1 for h in game.hands)]
    return min(dealt, key=lambda t: (ts.pips[t], ts.tiles[t][0]))


CONFIGS = [(2, False), (3, False), (4, False), (4, True)]


@pytest.mark.parametrize(("num_players", "teams"), CONFIGS, ids=["2p", "3p", "4p", "4p-teams"])
@settings(max_examples=10, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=True), draw=st.booleans())
def test_blitz_invariants(num_players, teams, seed, rnd, draw):
    env = domino_env.make("blitz", num_players=num_players, teams=teams, draw=draw)
    env.reset(seed=seed)
    u = env.unwrapped
    game, rules = u.game, u.rules
    stop = rules.extra_action_id["stop"]
    while not all(env.terminations.values()):
        legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
        assert set(legal) == blitz_legal(game, rules)
        assert legal != [stop], "stop alone is forced, never asked"
        assert phase(env)[1] == (game.turn_laid > 0)
        seat = game.current
        if game.line.empty and game.round_index == 0:  # 0-0, else the closest tile by pips
            assert legal == [rules.play_action(closest_to_0_0(game, rules), 0)]
        action = rnd.choice(legal)
        logged = len(game.events)
        clone = game.clone()
        rules.apply(clone, action)
        new = clone.events[logged:]
        hands = list(game.hands)
        if action == stop:
            assert clone.turn_laid == 0
        else:
            tile = rules.action_tile[action]
            assert new[0][:3] == (LAY, seat, tile)
            hands[seat] &= ~(1 << tile)
            new = new[1:]
            goes_on = not game.line.empty and fits(rules, clone.line, hands[seat])
            if clone.round_over:
                assert not hands[seat] or all(e[0] != LAY for e in new)
            elif goes_on:  # a tile fits: the same player continues or stops
                assert not new
                assert clone.current == seat and clone.turn_laid == game.turn_laid + 1
                assert stop in clone.legal
            else:  # the lead, or nothing more fits: the turn ends by itself
                assert clone.turn_laid == 0
        # forced draws and passes: the next seats draw only with nothing to lay, at a turn's start
        nxt = (
            seat if (action != stop and not clone.round_over and clone.current == seat and not new) else None
        )
        who = (seat + 1) % num_players
        stock = list(game.stock)
        for event in new:
            if event[0] == DRAW:
                assert draw and event[1] == who and event[2] == stock.pop()
                assert not fits(rules, clone.line, hands[who]), "drew while holding a tile that fits"
                hands[who] |= 1 << event[2]
            elif event[0] == PASS:
                assert event[1] == who and not fits(rules, clone.line, hands[who])
                assert not (draw and stock), "passed while the boneyard had tiles"
                who = (who + 1) % num_players
        if not clone.round_over and nxt is None:
            assert clone.current == who and clone.turn_laid == 0
        env.step(action)
