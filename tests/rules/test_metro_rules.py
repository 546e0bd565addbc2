"""Scenario tests for Domino-Metro (docs/rules/index.md and docs/rules/metro.md), each on a hand-built deal.

Most scenarios use one of two shapes:

* a *drain*: one player is dealt every tile carrying 0 and leads ``0-0``; nobody else can
  lay on a 0 end, so the next player draws the whole bazaar at once (optionally finding one
  fitting tile last) and the rest of the game is played with an empty bazaar. The 0 player
  then lays ``0-a`` on the east end, the big hand answers ``a-b``, the 0 player covers it with
  ``0-b`` (east shows 0 again) - until the last 0 tile, laid on a non-0 end, is a *terminal
  tile* that closes east for good;
* a *script*: every tile laid is listed with the arm it goes to, the seats alternating.

In the 3-player drains seat 2 holds exactly the ten tiles made of the values 1, 3, 5 and 7,
and the big hand only ever shows it even values, 9 or 0, so seat 2 passes throughout.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.core.line import CLOSED, OPEN
from domino_env.render.chain import event_text
from domino_env.variants.metro import MetroRules
from tests.support.helpers import play, tile, tiles

Tile = tuple[int, int]
ALL_TILES: list[Tile] = [(a, b) for a in range(10) for b in range(a, 10)]
ZEROS = [f"0-{v}" for v in range(10)]
ODDS = ["1-1", "1-3", "1-5", "1-7", "3-3", "3-5", "3-7", "5-5", "5-7", "7-7"]  # seat 2 in 3p drains


# --- helpers -----------------------------------------------------------------------------------


def deal(
    hands: Sequence[Sequence[str | Tile] | None],
    leader: int | None = 0,
    first: Sequence[str] = (),
    last: Sequence[str] = (),
    opening: str | None = None,
) -> dict[str, Any]:
    """A fully fixed deal. ``None`` hands get the lowest free tiles without a 0; the boneyard is
    ``first``, then every other tile in id order, then ``last`` (drawn last)."""
    fixed = [tile(t) for hand in hands if hand for t in hand] + tiles(first) + tiles(last)
    assert len(set(fixed)) == len(fixed), "a tile is dealt twice"
    free = [t for t in ALL_TILES if t not in fixed]
    out_hands = []
    for hand in hands:
        if hand is None:
            hand = [t for t in free if 0 not in t][:10]
            free = [t for t in free if t not in hand]
        out_hands.append(tiles(hand))
    out: dict[str, Any] = {"hands": out_hands, "boneyard": tiles(first) + free + tiles(last)}
    if leader is not None:
        out["leader"] = leader
    if opening is not None:
        out["opening"] = opening
    return out


def start(hands: Sequence[Sequence[str | Tile] | None], **kw: Any):
    """An env (one game: ``episode="round"`` unless told) on a fixed deal."""
    env_kw = {k: kw.pop(k) for k in list(kw) if k in ("metro_penalty", "match_target", "episode", "reward")}
    env_kw.setdefault("episode", "round")
    env = domino_env.make("metro", num_players=len(hands), **env_kw)
    env.reset(seed=0, options={"deal": deal(hands, **kw)})
    return env


def game(env):
    return env.unwrapped.game


def current(env) -> int:
    return game(env).current


def moves(env) -> list[tuple[Tile, str, bool]]:
    return [(m["tile"], m["arm"], m["face_down"]) for m in env.unwrapped.legal_moves()]


def action_of(env, t: str | Tile, arm: str, face_down: bool = False) -> int:
    for move in env.unwrapped.legal_moves():
        if move["tile"] == tile(t) and move["arm"] == arm and move["face_down"] == face_down:
            return int(move["action"])
    raise AssertionError(
        f"{t} on {arm} (face down {face_down}) is not legal for seat {current(env)}: {moves(env)}"
    )


def play_last(env, t: str | Tile, arm: str, face_down: bool = False):
    """Lay a game's last tile; return a copy of the state at the end of that game (in a match the
    env deals the next game at once)."""
    u = env.unwrapped
    action = action_of(env, t, arm, face_down)
    clone = u.game.clone()
    u.rules.apply(clone, action)
    assert clone.round_over
    env.step(action)
    return clone


def run(env, script: Sequence[tuple[int, str, str] | tuple[int, str, str, bool]]) -> None:
    for step in script:
        play(env, step[1], step[2], seat=step[0], face_down=bool(step[3]) if len(step) > 3 else False)


def public(env) -> dict[str, Any]:
    return env.unwrapped.public_state()


def hand_of(env, seat: int) -> set[Tile]:
    ts = env.unwrapped.rules.tile_set
    return {ts.tiles[t] for t in range(ts.size) if game(env).hands[seat] >> t & 1}


def events(env, kind: str) -> list[tuple]:
    return [e for e in game(env).events if e[0] == kind]


def east(env) -> tuple[int, int]:
    line = game(env).line
    return line.state[0], line.value[0]


def cycles(
    pairs: Sequence[tuple[int, int]], zero_seat: int = 0, big_seat: int = 1
) -> list[tuple[int, str, str]]:
    """The drain rhythm on east: ``0-a`` by the 0 player, ``a-b`` by the big hand, ``0-b`` again."""
    out = []
    for a, b in pairs:
        out += [(zero_seat, f"0-{a}", "east"), (big_seat, f"{a}-{b}", "east"), (zero_seat, f"0-{b}", "east")]
    return out


# --- set-up, options, action table -------------------------------------------------------------


def test_a_large_metro_penalty_stays_inside_the_observation_space():
    """metro_penalty 1000 with match_target 1: a Metro puts a score at 1000 / 1, far above the
    tile count that bounds the other blocks; the Box's upper bound follows the option."""
    env = domino_env.make("metro", num_players=2, metro_penalty=1000, match_target=1)
    space = env.observation_space("player_0")["observation"]
    rnd = random.Random(0)
    highest = 0.0
    for seed in range(60):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, done, _, _ = env.last()
            assert space.contains(observation["observation"]), (seed, agent)
            highest = max(highest, float(observation["observation"].max()))
            env.step(None if done else rnd.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    assert highest == 1000.0  # a Metro was made and scored while someone still observed


def test_rules_constants_and_options():
    rules = MetroRules(num_players=3)
    assert rules.tile_set.size == 55 and rules.hand_size == 10
    assert rules.face_down_doubles and rules.num_slots == 11
    assert rules.num_actions == 55 * 11 * 2
    assert rules.match_target == 5 and rules.metro_penalty == 1
    assert MetroRules(num_players=2, metro_penalty=2, match_target=9).match_target == 9
    for bad in (0, -1, 1.5, "2", True, None):
        with pytest.raises(ValueError, match="metro_penalty"):
            MetroRules(num_players=2, metro_penalty=bad)
        with pytest.raises(ValueError, match="match_target"):
            MetroRules(num_players=2, match_target=bad)
    for n in (1, 4):
        with pytest.raises(ValueError, match=str(n)):
            MetroRules(num_players=n)
    with pytest.raises(ValueError, match="teams"):
        domino_env.make("metro", num_players=2, teams=True)
    env = domino_env.make("metro", num_players=3, metro_penalty=2, match_target=7)
    assert env.unwrapped.rules.metro_penalty == 2 and env.unwrapped.rules.match_target == 7


def test_deal_sizes_and_bazaar():
    for n in (2, 3):
        env = domino_env.make("metro", num_players=n)
        env.reset(seed=n)
        ps = public(env)
        assert ps["hand_sizes"] == [10] * n
        assert ps["boneyard_size"] == 55 - 10 * n
        assert ps["places"] == [None] * n and ps["penalties"] == [0] * n and ps["metros"] == [0] * n
        assert ps["live_ends"] == {} and ps["doubles_open"] is False


# --- opening -----------------------------------------------------------------------------------


def test_first_game_lowest_double_from_one_one_leads_it():
    # 0-0 (seat 0) does not count; 1-1 is in the bazaar; seat 2 holds 2-2 and leads it.
    hands = [
        ["0-0", *[f"0-{v}" for v in range(1, 10)]],
        ["1-2", "1-3", "1-4", "1-5", "1-6", "1-7", "1-8", "1-9", "2-3", "2-4"],
        ["2-2", "3-3", "2-5", "2-6", "2-7", "2-8", "2-9", "3-4", "3-5", "3-6"],
    ]
    env = start(hands, leader=None)
    assert env.agent_selection == "player_2"
    assert moves(env) == [((2, 2), "lead", False)]
    play(env, "2-2", "lead")
    line = game(env).line
    assert [line.value[s] for s in line.open_slots()] == [2, 2]  # the first tile has two ends, a double too
    assert public(env)["doubles_open"] is True


def test_first_game_without_doubles_a_random_player_leads_any_tile():
    no_doubles = [t for t in ALL_TILES if t[0] != t[1]]
    hands = [no_doubles[:10], no_doubles[10:20]]
    leaders = set()
    for seed in range(12):
        env = domino_env.make("metro", num_players=2)
        env.reset(seed=seed, options={"deal": deal(hands, leader=None)})
        seat = current(env)
        leaders.add(seat)
        assert sorted(m[0] for m in moves(env)) == sorted(tiles(hands[seat]))
        assert all(m[1] == "lead" for m in moves(env))
    assert leaders == {0, 1}


# --- ends: first double, open and closed doubles, terminal tiles, live ends --------------------


SCRIPT_16 = [  # lead 0-1 by seat 0, then seats 1 and 0 alternate; the last 0-0 laid open is dead
    (1, "1-1", "east"),  # the first double: like any tile, east still shows 1
    (0, "0-2", "west"),
    (1, "2-3", "west"),
    (0, "0-3", "west"),
    (1, "1-4", "east"),
    (0, "4-4", "east", True),  # a later double face down closes east
    (1, "0-4", "west"),
    (0, "4-5", "west"),
    (1, "0-5", "west"),
    (0, "0-6", "west"),
    (1, "6-7", "west"),
    (0, "0-7", "west"),
    (1, "0-8", "west"),
    (0, "8-9", "west"),
    (1, "0-9", "west"),
]
HANDS_16 = (
    ["0-1", "0-2", "0-3", "4-4", "4-5", "0-6", "0-7", "8-9", "0-0"],
    ["1-1", "2-3", "1-4", "0-4", "0-5", "6-7", "0-8", "0-9"],
)


def start_16(extra0: Sequence[str], extra1: Sequence[str], **kw: Any):
    hands = [[*HANDS_16[0], *extra0], [*HANDS_16[1], *extra1]]
    return start(hands, opening="0-1", **kw)


def test_first_double_is_face_up_and_acts_like_any_tile_later_doubles_open_or_close():
    env = start_16(["5-5"], ["1-2", "3-5"])
    play(env, "0-1", "lead", seat=0)
    assert public(env)["doubles_open"] is False
    assert ((1, 1), "east", False) in moves(env)
    assert not any(face for _, _, face in moves(env)), "the first double is never face down"
    run(env, SCRIPT_16[:1])
    line = game(env).line
    assert line.open_slots() == [0, 1] and line.value[0] == 1  # covered the end, one new end
    assert public(env)["doubles_open"] is True
    run(env, SCRIPT_16[1:5])
    # seat 0 may now lay 4-4 open (two ends of 4) or closed (no end)
    assert {m for m in moves(env) if m[0] == (4, 4)} == {((4, 4), "east", False), ((4, 4), "east", True)}
    open_env = env.unwrapped  # try the open face on a copy
    clone = open_env.game.clone()
    open_env.rules.apply(clone, action_of(env, "4-4", "east"))
    assert clone.line.state[0] == OPEN and clone.line.value[0] == 4
    assert clone.line.state[2] == OPEN and clone.line.value[2] == 4  # net +1 end
    run(env, SCRIPT_16[5:6])
    assert east(env)[0] == CLOSED  # net -1
    assert "east" not in public(env)["live_ends"]


def test_live_ends_in_public_state_and_observation():
    env = start_16(["5-5"], ["1-2", "3-5"])
    play(env, "0-1", "lead")
    run(env, SCRIPT_16[:14])
    # west shows 9 after 8-9; 9 tiles are still off the table, so it is live
    assert public(env)["live_ends"] == {"west": 9}
    run(env, SCRIPT_16[14:])
    # 0-9 was not the last 0 tile (0-0 is in seat 0's hand): west shows 0 and is live
    assert public(env)["live_ends"] == {"west": 0}
    obs = env.observe("player_0")["observation"]
    ends = env.unwrapped.observation_layout["ends"]
    width = 10 + 4
    west = obs[ends][width : 2 * width]
    assert west[0] == 1 and west[10] == 1 and west[13] == 1  # value 0, open, live
    east_block = obs[ends][:width]
    assert east_block[11] == 1 and east_block[13] == 0  # closed, not live


# --- blocked: an open double that leaves no live end -------------------------------------------


def test_open_double_leaving_no_live_end_blocks_the_game_even_with_tiles_in_the_bazaar():
    env = start_16(["5-5"], ["1-2", "3-5"])  # seat 0 keeps 5-5 (10), seat 1 keeps 1-2 + 3-5 (11)
    play(env, "0-1", "lead")
    run(env, SCRIPT_16)
    # 0-0 is the last 0 tile: open it is never Metro (offered), closed it would be (masked)
    assert moves(env) == [((0, 0), "west", False)]
    assert env.unwrapped.rules.is_metro_move(game(env), action_of(env, "0-0", "west") + 55 * 11)
    assert public(env)["boneyard_size"] == 35
    play(env, "0-0", "west", seat=0)
    g = game(env)
    assert g.round_over and g.result is not None and g.result.blocked
    assert g.extra.ending == "blocked"
    assert not g.line.live_slots()
    assert g.extra.places == [1, 2]  # by pips: 10 against 11
    assert g.scores == [0, 1]
    assert g.next_leader == 1 and g.result.winner == 0
    assert len(g.stock) == 35  # nobody drew


def test_blocked_game_with_equal_pips_shares_the_place_and_both_lose():
    env = start_16(["5-5"], ["1-2", "3-4"], episode="round")  # 10 pips each
    play(env, "0-1", "lead")
    run(env, SCRIPT_16)
    play(env, "0-0", "west")
    g = game(env)
    assert g.extra.places == [1, 1]
    assert public(env)["places"] == [1, 1]
    assert g.scores == [1, 1]  # everyone tied for last is a loser
    assert g.result is not None and g.result.winner is None
    assert g.next_leader == 0  # the first loser in turn order from this game's leader
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}


# --- Metro -------------------------------------------------------------------------------------


SCRIPT_A = [  # lead 0-0 by seat 0; seat 1 closes west; the bazaar keeps its tiles
    (1, "0-9", "west"),
    (0, "0-1", "east"),
    (1, "9-9", "west", True),
    (0, "1-2", "east"),
    (1, "0-2", "east"),
    (0, "0-3", "east"),
    (1, "3-4", "east"),
    (0, "0-4", "east"),
    (1, "0-5", "east"),
    (0, "5-6", "east"),
    (1, "0-6", "east"),
    (0, "0-7", "east"),
    (1, "7-8", "east"),
]
HANDS_A = (
    ["0-0", "0-1", "1-2", "0-3", "0-4", "5-6", "0-7", "0-8", "2-3", "5-5"],
    ["0-9", "9-9", "0-2", "3-4", "0-5", "0-6", "7-8", "1-3", "4-6", "3-3"],
)


def test_metro_move_is_hidden_while_the_bazaar_has_tiles_the_player_draws():
    env = start(list(HANDS_A), first=["1-1", "8-9"])
    play(env, "0-0", "lead")
    run(env, SCRIPT_A)
    g = game(env)
    # seat 0's only placement was 0-8 on east 8: the last 0 tile, closing the last live end.
    # It is a Metro move, so seat 0 drew 1-1 (no fit) and 8-9 (fits) and must lay that.
    assert [e[2] for e in events(env, "draw")] == [g.line.tiles.id_of("1-1"), g.line.tiles.id_of("8-9")]
    assert all(e[1] == 0 for e in events(env, "draw"))
    assert current(env) == 0
    assert moves(env) == [((8, 9), "east", False)]
    metro_action = env.unwrapped.rules.play_action(g.line.tiles.id_of("0-8"), 0)
    assert env.unwrapped.rules.is_metro_move(g, metro_action)
    assert metro_action not in g.legal
    play(env, "8-9", "east")
    assert not g.round_over and public(env)["live_ends"] == {"east": 9}


def test_a_closed_double_on_the_last_live_end_is_a_metro_move():
    env = start(list(HANDS_A), first=["1-1", "8-9"])
    play(env, "0-0", "lead")
    run(env, SCRIPT_A[:6])
    assert current(env) == 1 and public(env)["live_ends"] == {"east": 3}
    rules, g = env.unwrapped.rules, game(env)
    down = rules.play_action(g.line.tiles.id_of("3-3"), 0, face_down=True)
    assert rules.is_metro_move(g, down)
    # the open face is never Metro and always allowed, so the closed one stays masked
    assert ((3, 3), "east", False) in moves(env)
    assert ((3, 3), "east", True) not in moves(env)
    # laid anyway (bypassing the mask), it makes Metro: the maker is last
    clone = g.clone()
    rules.apply(clone, down)
    assert clone.round_over and clone.extra.ending == "metro"
    assert clone.extra.places == [1, 2] and clone.scores == [0, 1]


BIG_2P_METRO = [["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "0-7", "0-8", "5-5"], None]


def metro_game_2p(env) -> None:
    """Seat 0 leads 0-0; seat 1 draws the bazaar (0-9 last) and is forced into nothing; seat 0's
    last 0 tile ends as a terminal tile on the last live end: a forced Metro."""
    play(env, "0-0", "lead", seat=0)
    assert current(env) == 1 and public(env)["boneyard_size"] == 0
    assert len(events(env, "draw")) == 35
    run(env, [(1, "0-9", "west"), (0, "0-1", "east"), (1, "9-9", "west", True)])
    # seat 0 holds nothing with 1 and the bazaar is empty: it passes
    assert current(env) == 1 and events(env, "pass")[-1] == ("pass", 0)
    run(env, [(1, "1-2", "east"), (0, "0-2", "east")])
    assert current(env) == 0 and events(env, "pass")[-1] == ("pass", 1)
    run(env, cycles([(3, 4), (5, 6)]))
    run(env, [(0, "0-7", "east"), (1, "7-8", "east")])


def test_metro_by_a_terminal_tile_is_offered_when_forced_and_the_maker_is_last():
    env = start(BIG_2P_METRO, last=["0-9"], metro_penalty=2)
    metro_game_2p(env)
    g = game(env)
    assert hand_of(env, 0) == {(0, 8), (5, 5)}
    assert not g.stock
    assert moves(env) == [((0, 8), "east", False)]  # only a Metro move: it is offered
    assert env.unwrapped.rules.is_metro_move(g, g.legal[0])
    play(env, "0-8", "east")
    assert east(env)[0] == CLOSED  # terminal: every 0 is on the table
    assert g.round_over and g.extra.ending == "metro"
    assert g.extra.places == [2, 1]  # the maker is last, though it holds far fewer pips
    assert g.scores == [2, 0] and g.extra.metros == [1, 0]
    assert public(env)["metros"] == [1, 0] and public(env)["penalties"] == [2, 0]
    assert g.next_leader == 0
    assert ("place", 0, 2, "metro") in g.events


# --- domino-Metro ------------------------------------------------------------------------------


def domino_metro_game(env):
    """Seat 0 holds every 0 tile and leads 0-0 (any tile); its last tile closes the last live end."""
    play(env, "0-0", "lead", seat=0)
    assert public(env)["boneyard_size"] == 0
    script = [(0, "0-9", "west"), (1, "9-9", "west", True)]
    script += cycles([(1, 2), (3, 4), (5, 6)])
    script += [(0, "0-7", "east"), (1, "7-8", "east")]
    run(env, script)
    assert current(env) == 0 and hand_of(env, 0) == {(0, 8)}
    assert moves(env) == [((0, 8), "east", False)]  # the last tile is never a forbidden Metro move
    return play_last(env, "0-8", "east")


def metro_game_3p(env):
    """3 players: seat 0 leads 0-0 and keeps 2-2; 0-8 comes last out of the bazaar to seat 1."""
    play(env, "0-0", "lead", seat=0)
    assert current(env) == 1 and public(env)["boneyard_size"] == 0
    script: list[Any] = [(1, "0-8", "west"), (0, "0-1", "east"), (1, "1-2", "east"), (0, "0-2", "east")]
    script += [(1, "8-8", "west", True)]
    script += cycles([(3, 4), (5, 6)])
    script += [(0, "0-7", "east"), (1, "7-9", "east")]
    run(env, script)
    assert moves(env) == [((0, 9), "east", False)]
    return play_last(env, "0-9", "east")


def test_domino_metro_takes_first_place_and_clears_earlier_metros_with_three_players():
    deals = [
        deal(
            [["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "0-7", "0-9", "2-2"], None, ODDS], last=["0-8"]
        ),
        deal([ZEROS, None, ODDS], leader=None),  # led by the loser of game 1
    ]
    env = domino_env.make("metro", num_players=3, metro_penalty=2)
    env.reset(seed=0, options={"deals": deals})
    end = metro_game_3p(env)
    assert end.extra.ending == "metro" and end.extra.places == [3, 2, 1]
    g = game(env)
    assert g.round_index == 1, "game 1 ended at Metro"
    first = [e for e in g.events if e[0] == "deal"]
    assert first == [("deal", 1)]
    assert g.scores == [2, 0, 0] and g.extra.metros == [1, 0, 0]
    assert env.agent_selection == "player_0"  # the Metro maker lost and leads game 2 with any tile
    assert sorted(m[0] for m in moves(env)) == tiles(ZEROS)
    g = domino_metro_game(env)
    assert g.extra.ending == "domino_metro"
    # seat 0 first; seat 2 (80 pips) second; seat 1 (its big hand) last
    assert g.extra.places == [1, 3, 2]
    assert ("score", 0, -2, "domino-metro clears metros") in g.events
    assert g.scores == [0, 1, 0] and g.extra.metros == [0, 0, 0]


def test_domino_metro_with_two_players_clears_nothing():
    deals = [deal(BIG_2P_METRO, last=["0-9"]), deal([ZEROS, None], leader=None)]
    env = domino_env.make("metro", num_players=2, metro_penalty=2)
    env.reset(seed=0, options={"deals": deals})
    metro_game_2p(env)
    play(env, "0-8", "east")
    assert game(env).round_index == 1 and game(env).scores == [2, 0]
    assert env.agent_selection == "player_0"
    g = domino_metro_game(env)
    assert g.extra.ending == "domino_metro" and g.extra.places == [1, 2]
    assert g.scores == [2, 1] and g.extra.metros == [1, 0]
    assert not [e for e in g.events if e[0] == "score" and e[2] < 0]


# --- places: going out, the game goes on, the mole ---------------------------------------------


PATH_29 = [
    "0-1", "1-2", "2-3", "3-4", "4-5", "5-6", "6-7", "7-8", "8-9", "9-0", "0-2", "2-4", "4-6", "6-8", "8-0",
    "0-3", "3-5", "5-7", "7-9", "9-1", "1-3", "3-6", "6-9", "9-2", "2-5", "5-8", "8-1", "1-4", "4-7",
]  # fmt: skip


def test_places_in_order_of_going_out_and_the_mole():
    hands = [[PATH_29[i] for i in range(s, 29, 3)] for s in range(3)]
    hands[2].append("9-9")
    env = start(hands)
    play(env, PATH_29[0], "lead")
    for i, t in enumerate(PATH_29[1:27], start=1):
        play(env, t, "east", seat=i % 3)
    assert game(env).extra.places == [0, 0, 0]
    play(env, PATH_29[27], "east", seat=0)  # seat 0's last tile: 1st, the game goes on
    g = game(env)
    assert not g.round_over and g.extra.places == [1, 0, 0] and public(env)["places"] == [1, None, None]
    assert ("place", 0, 1, "out") in g.events
    play(env, PATH_29[28], "east", seat=1)  # 2nd; seat 2 is the only one holding tiles: the mole
    assert g.round_over and g.extra.ending == "mole"
    assert g.extra.places == [1, 2, 3]
    assert ("place", 2, 3, "mole") in g.events
    assert g.scores == [0, 0, 1] and g.next_leader == 2
    log = [event_text(env.unwrapped.rules, e, env.possible_agents) for e in g.events]
    assert "player_0 takes place 1 (went out)" in log
    assert "player_2 takes place 3 (the mole, left holding tiles)" in log


def test_a_player_who_went_out_is_skipped_and_the_game_goes_on():
    env = start([ZEROS, None, ODDS])
    play(env, "0-0", "lead", seat=0)
    script: list[Any] = [(0, "0-9", "west"), (1, "9-9", "west")]  # open: west 9 and a new end 9
    run(env, script)
    assert public(env)["live_ends"] == {"east": 0, "west": 9, "end2": 9}
    script = [(0, "0-1", "east"), (1, "1-2", "east"), (0, "0-2", "east"), (1, "8-9", "west")]
    script += [(0, "0-3", "east"), (1, "3-4", "east"), (0, "0-4", "east"), (1, "6-9", "end2")]
    script += [(0, "0-5", "east"), (1, "5-6", "east"), (0, "0-6", "east"), (1, "4-8", "west")]
    script += [(0, "0-7", "east"), (1, "7-8", "east"), (0, "0-8", "east")]
    run(env, script)
    g = game(env)
    assert not g.round_over and g.extra.places == [1, 0, 0]  # west 4 and end2 6 are live
    assert public(env)["live_ends"] == {"west": 4, "end2": 6}
    rnd = random.Random(0)
    seen = []
    while not g.round_over:
        seen.append(current(env))
        env.step(rnd.choice(g.legal))
    assert 0 not in seen
    assert g.extra.places[0] == 1 and sorted(g.extra.places[1:]) in ([2, 3], [2, 2])


# --- placing by pips ---------------------------------------------------------------------------


def test_holders_placed_by_pips_lone_double_blank_counts_ten_first_loser_leads():
    env = domino_env.make("metro", num_players=3)
    env.reset(seed=0)
    rules, base = env.unwrapped.rules, game(env)
    ids = base.line.tiles.id_of
    for leader, expected_next in ((1, 1), (2, 0), (0, 0)):
        g = base.clone()
        g.hands = [1 << ids("0-0"), (1 << ids("1-2")) | (1 << ids("3-4")), 1 << ids("4-5")]  # 10, 10, 9
        g.leader = leader
        rules.end_round(g, None, blocked=True)
        assert g.extra.places == [2, 2, 1]
        assert g.scores == [1, 1, 0]
        assert g.next_leader == expected_next
    g = base.clone()
    g.hands = [(1 << ids("0-0")) | (1 << ids("0-1")), 1 << ids("0-2"), 1 << ids("0-3")]  # 0-0 with others: 0
    rules.end_round(g, None, blocked=True)
    assert g.extra.places == [1, 2, 3]


def test_match_penalties_and_end():
    def tied() -> dict[str, Any]:
        return deal([[*HANDS_16[0], "5-5"], [*HANDS_16[1], "1-2", "3-4"]], leader=None)

    def seat1_loses() -> dict[str, Any]:
        return deal([[*HANDS_16[0], "5-5"], [*HANDS_16[1], "1-2", "3-5"]], leader=None)

    first = deal([[*HANDS_16[0], "5-5"], [*HANDS_16[1], "1-2", "3-4"]], opening="0-1")
    env = domino_env.make("metro", num_players=2, match_target=3)
    env.reset(seed=0, options={"deals": [first, tied(), seat1_loses()]})
    for round_index, expected in ((0, [1, 1]), (1, [2, 2]), (2, [2, 3])):
        g = game(env)
        assert g.round_index == round_index and env.agent_selection == "player_0"
        assert public(env)["penalties"] == [*g.scores]
        play(env, "0-1", "lead")
        run(env, SCRIPT_16)
        play(env, "0-0", "west")
        assert game(env).scores == expected
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


# --- observation and public state --------------------------------------------------------------


def test_observation_blocks_are_seat_relative():
    env = start(BIG_2P_METRO, last=["0-9"], episode="match")
    metro_game_2p(env)
    play(env, "0-8", "east")
    # a new game began: places reset, the Metro count stays
    layout = env.unwrapped.observation_layout
    for seat in range(2):
        obs = env.observe(f"player_{seat}")["observation"]
        mine = [0.2, 0.0] if seat == 0 else [0.0, 0.2]
        np.testing.assert_allclose(obs[layout["metros"]], mine, rtol=1e-6)
        np.testing.assert_allclose(obs[layout["scores"]], mine, rtol=1e-6)
        assert not obs[layout["places"]].any()
        assert obs[layout["doubles_open"]][0] == 0
    lead = next(m for m in env.unwrapped.legal_moves() if m["tile"][0] != m["tile"][1])
    env.step(lead["action"])
    assert env.observe("player_1")["observation"][layout["doubles_open"]][0] == 0


def test_public_state_live_ends_and_places():
    env = start_16(["5-5"], ["1-2", "3-5"])
    play(env, "0-1", "lead")
    ps = public(env)
    assert ps["live_ends"] == {"east": 1, "west": 0}
    assert ps["ending"] is None
    run(env, SCRIPT_16)
    play(env, "0-0", "west")
    ps = public(env)
    assert ps["places"] == [1, 2] and ps["ending"] == "blocked" and ps["live_ends"] == {}


# --- hypothesis invariants ---------------------------------------------------------------------


def examples(count: int):
    return settings(max_examples=count, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))


@pytest.mark.parametrize("n", [2, 3])
@examples(12)
@given(seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=True))
def test_metro_invariants(n, seed, rnd):
    env = domino_env.make("metro", num_players=n, metro_penalty=2)
    env.reset(seed=seed)
    u = env.unwrapped
    rules = u.rules
    steps = 0
    while not all(env.terminations.values()):
        steps += 1
        assert steps < 5000
        g = u.game
        seat = g.current
        assert g.hands[seat], "a player who went out is never asked to move"
        if g.line.count:
            assert g.line.live_slots(), "the game goes on only while a live end is left"
        assert set(g.legal) == oracle_legal(rules, g)
        metro = [a for a in g.legal if rules.is_metro_move(g, a)]
        if metro:
            assert not g.stock, "a Metro move is offered while the bazaar has tiles"
            assert metro == g.legal, "a Metro move is offered beside another placement"
        for a in g.legal:
            if rules.action_face_down[a]:
                assert g.extra.doubles_open and rules.tile_set.is_double[rules.action_tile[a]]
        before = g.scores[:]
        metros_before = list(g.extra.metros)
        action = rnd.choice(g.legal)
        clone = g.clone()
        rules.apply(clone, action)
        env.step(action)
        if clone.round_over:
            check_game_end(rules, clone, before, metros_before, action, seat)


def oracle_legal(rules, g) -> set[int]:
    """The mask worked out the slow way: lay each candidate on a copy and look for a live end."""
    hand, line = g.hands[g.current], g.line
    if not line.count:
        return set(rules.placements(g))
    candidates = [
        rules.play_action(t, s)
        for t in range(55)
        for s in range(11)
        if hand >> t & 1 and line.state[s] == OPEN and line.value[s] in rules.tile_set.tiles[t]
    ]
    if g.extra.doubles_open:
        candidates += [a + 55 * 11 for a in candidates if rules.tile_set.is_double[rules.action_tile[a]]]
    fine, metro = set(), set()
    for a in candidates:
        open_double = (
            rules.tile_set.is_double[rules.action_tile[a]]
            and g.extra.doubles_open
            and not rules.action_face_down[a]
        )
        clone = g.clone()
        rules.apply(clone, a)
        leaves_none = not clone.line.live_slots()
        if leaves_none and hand.bit_count() > 1 and not open_double:
            metro.add(a)
        else:
            fine.add(a)
    return fine if fine or g.stock else metro


def check_game_end(rules, g, before, metros_before, action, mover) -> None:
    n = rules.num_players
    places = g.extra.places
    # a competition ranking: each place is 1 + the number of players placed strictly better
    assert all(1 <= p <= n for p in places)
    for p in places:
        assert p == 1 + sum(1 for q in places if q < p)
    outs = [e[1] for e in g.events if e[0] == "place" and e[3] in ("out", "domino_metro")]
    assert [places[s] for s in outs] == list(range(1, len(outs) + 1)), "places follow the order of going out"
    ending = g.extra.ending
    holders = [s for s in range(n) if g.hands[s]]
    if ending != "mole":
        assert not g.line.live_slots()
    else:
        assert len(holders) == 1 and places[holders[0]] == n
    if ending == "metro":
        assert places[mover] == n and places.count(n) == 1 and g.hands[mover]
    if len(set(places)) == n:
        assert sorted(places) == list(range(1, n + 1))  # a permutation when nobody ties
    # penalties: every loser +1, the Metro maker metro_penalty; domino-Metro (3p) clears
    worst = max(places)
    expected = before[:]
    if ending == "domino_metro" and n == 3:
        expected[mover] -= rules.metro_penalty * metros_before[mover]
    for s in range(n):
        if places[s] == worst:
            expected[s] += rules.metro_penalty if ending == "metro" and s == mover else 1
    assert g.scores == expected
    order = [(g.leader + k) % n for k in range(n)]
    assert g.next_leader == next(s for s in order if places[s] == worst)


def test_metro_appears_in_random_play():
    """Sanity: random games reach every ending the rules describe."""
    endings = set()
    for seed in range(150):
        env = domino_env.make("metro", num_players=2 + seed % 2, episode="round")
        env.reset(seed=seed)
        rnd = random.Random(seed)
        while not all(env.terminations.values()):
            env.step(
                rnd.choice([int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])])
            )
        endings.add(game(env).extra.ending)
    assert endings == {"mole", "metro", "domino_metro", "blocked"}


def test_the_first_double_is_an_ordinary_tile_and_can_be_a_metro_move():
    """A hand-made position: west shows 3 and 3-3 is the last 3 off the table; east shows 4, used up."""
    env = domino_env.make("metro", num_players=2)
    env.reset(seed=0)
    rules = env.unwrapped.rules
    ts = rules.tile_set
    g = game(env).clone()
    g.line.reset()
    g.line.lead(ts.id_of("3-4"))  # east 4, west 3
    g.line.played |= (ts.suit_mask[3] & ~(1 << ts.id_of("3-3"))) | ts.suit_mask[4]
    g.extra.ends = 2
    assert rules.refresh_ends(g) == 1 << 3  # west 3 is live, east 4 is not
    seat = g.current
    g.hands[seat] = (1 << ts.id_of("3-3")) | (1 << ts.id_of("7-8"))
    first_double = rules.play_action(ts.id_of("3-3"), 1)
    for doubles_open, stock, expected in (
        (False, [ts.id_of("1-2")], []),  # a Metro move and the bazaar has tiles: draw
        (False, [], [first_double]),  # forced: offered
        (True, [ts.id_of("1-2")], [first_double]),  # a later double laid open is never Metro
    ):
        g.extra.doubles_open = doubles_open
        g.stock = stock
        assert rules.legal_actions(g) == expected
        assert rules.is_metro_move(g, first_double) is not doubles_open
    g.extra.doubles_open = False
    g.stock = []
    end = g.clone()
    rules.apply(end, first_double)
    assert end.round_over and end.extra.ending == "metro" and end.extra.places[seat] == 2
    g.extra.doubles_open = True
    rules.apply(g, first_double)
    assert g.round_over and g.extra.ending == "blocked"
