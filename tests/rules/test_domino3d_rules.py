"""3D dominoes (docs/rules/domino3d.md): every rule on a fixed deal, options, errors, properties, rendering.

Board 16 unless said: the start tile lies on (8, 7) and (8, 8). ``at(x, y, r, c, d)`` is the
action laying x on (r, c) and y to its right (d = RIGHT) or below it (d = DOWN).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.agents import GreedyAgent
from domino_env.core.grid import DOWN, RIGHT
from domino_env.observation.grid import BOARD_PLANES
from domino_env.render import grid as grid_render
from tests.support.helpers import ALL_TILES, tiles

START = (3, 5)  # 3 on (8, 7), 5 on (8, 8)


def fixed(hands: list[str], start=START, first: str = "", leader: int = 0, sets: int = 1) -> dict:
    """A deal with nothing left to chance: hands, the start tile as given (a on the left), the
    boneyard ``first`` drawn first, then every other tile in id order."""
    named = [t for hand in hands for t in tiles(hand)] + [tuple(sorted(start))] + tiles(first)
    rest = []
    for t in ALL_TILES * sets:
        if t in named:
            named.remove(t)
        else:
            rest.append(t)
    return {
        "hands": [tiles(h) for h in hands],
        "start": start,
        "boneyard": tiles(first) + rest,
        "leader": leader,
    }


def make(hands: list[str], first: str = "", start=START, **options: Any):
    env = domino_env.make("domino3d", num_players=len(hands), **options)
    env.reset(seed=0, options={"deal": fixed(hands, start, first, sets=options.get("sets", 1))})
    return env


def at(env, x: int, y: int, r: int, c: int, d: int) -> int:
    return env.unwrapped.rules.action(x, y, r, c, d)


def legal(env) -> list[int]:
    return [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]


def hand_of(env, seat: int) -> list[tuple[int, int]]:
    return env.unwrapped.rules.kinds_in(env.unwrapped.game.hands[seat])


# The position most scenarios start from: 3-5 in the middle; seat 0 lays 3-6 down from (9, 7),
# a half touching its value (the 3 under the start's 3) and the other free.
SCENE = ["3-6 0-0 0-1 1-1", "5-6 2-5 1-2 2-2"]
SCENE_FIRST = "6-6 4-4"  # seat 0 refills with 6-6, seat 1 with 4-4


def scene(**options: Any):
    env = make(SCENE, SCENE_FIRST, **options)
    env.step(at(env, 3, 6, 9, 7, DOWN))
    return env


# --- the opening -------------------------------------------------------------------------------


def test_fixed_start_lies_in_the_middle_as_written():
    for start, size in (((3, 5), 16), ((5, 3), 16), ((2, 2), 32), ((6, 0), 5)):
        env = domino_env.make("domino3d", board_size=size)
        env.reset(seed=1, options={"deal": {"start": start}})
        ps = env.unwrapped.public_state()
        mid = size // 2
        assert ps["top_values"][mid][mid - 1 : mid + 1] == list(start)
        assert ps["heights"][mid][mid - 1 : mid + 1] == [1, 1]
        assert sum(map(sum, ps["heights"])) == 2
        assert ps["table"] == [tuple(sorted(start))]
        assert env.agent_selection == "player_0"  # a fixed deal's leader: seat 0 by default


def test_random_start_same_cells_random_tile_and_flip():
    seen_tiles, flips, leaders = set(), set(), set()
    for seed in range(60):
        env = domino_env.make("domino3d")
        env.reset(seed=seed)
        ps = env.unwrapped.public_state()
        a, b = ps["top_values"][8][7], ps["top_values"][8][8]
        assert ps["heights"][8][7:9] == [1, 1]
        seen_tiles.add((min(a, b), max(a, b)))
        if a != b:
            flips.add(a < b)
        leaders.add(ps["leader"])
    assert len(seen_tiles) > 15
    assert flips == {True, False}
    assert leaders == {0, 1}


def test_boneyard_top_is_the_start_without_start():
    env = domino_env.make("domino3d")
    deal = {
        "hands": [tiles("0-0 0-1 0-2 0-3"), tiles("1-1 1-2 1-3 1-4")],
        "boneyard": ["4-6", "5-5"],
        "leader": 1,
    }
    env.reset(seed=0, options={"deal": deal})
    assert env.unwrapped.public_state()["table"] == [(4, 6)]
    assert env.unwrapped.game.stock[-1] == env.unwrapped.rules.tile_set.id_of("5-5")
    assert env.agent_selection == "player_1"


# --- laying on the table -----------------------------------------------------------------------


def test_one_half_touching_its_value_other_free_is_legal_for_no_point():
    env = make(SCENE, SCENE_FIRST)
    action = at(env, 3, 6, 9, 7, DOWN)
    assert action in legal(env)
    move = env.unwrapped.describe_action(action)
    assert move["cells"] == ((9, 7), (10, 7))
    assert move["values"] == (3, 6)
    assert (move["tile"], move["level"], move["scores"]) == ((3, 6), 1, 0)
    # the same tile the other way round puts 6 next to the 3: illegal
    assert at(env, 6, 3, 9, 7, DOWN) not in legal(env)
    env.step(action)
    assert env.unwrapped.public_state()["scores"] == [0, 0]


def test_both_halves_touching_their_values_score_a_point():
    env = scene(reward="points")
    action = at(env, 5, 6, 9, 8, DOWN)  # 5 under the start's 5 (and next to 3), 6 next to the 6
    assert env.agent_selection == "player_1"
    assert action in legal(env)
    assert env.unwrapped.describe_action(action)["scores"] == 1
    env.step(action)
    assert env.unwrapped.public_state()["scores"] == [0, 1]
    assert env.rewards == {"player_0": 0.0, "player_1": pytest.approx(0.1)}  # points / 10


def test_a_half_touching_only_other_values_is_illegal():
    env = scene()
    u = env.unwrapped
    illegal = [
        at(env, 6, 5, 9, 8, DOWN),  # 6 touches 5 and 3 only
        at(env, 5, 2, 9, 8, DOWN),  # 5 is fine, but the 2 touches only the 6
        at(env, 2, 1, 11, 7, DOWN),  # the 2 touches only the 6 above it
        at(env, 1, 2, 8, 10, RIGHT),  # touches nothing at all
    ]
    for action in illegal:
        assert action not in legal(env)
        assert u.describe_action(action)["scores"] is None
        before = (list(u.game.hands), list(u.game.stock), list(u.game.events))
        with pytest.raises(ValueError, match="illegal action"):
            env.step(action)
        assert before == (list(u.game.hands), list(u.game.stock), list(u.game.events))


# --- laying on top -----------------------------------------------------------------------------


def test_on_top_only_on_matching_halves_at_equal_height_for_a_point():
    env = scene()
    env.step(at(env, 5, 6, 9, 8, DOWN))  # now (10, 7) and (10, 8) both show 6 at height 1
    assert hand_of(env, 0) == tiles("0-0 0-1 1-1 6-6")
    u = env.unwrapped
    on_top = at(env, 6, 6, 10, 7, RIGHT)
    assert on_top in legal(env)
    assert u.describe_action(on_top) | {"action": 0} == {
        "action": 0,
        "kind": "play",
        "tile": (6, 6),
        "cells": ((10, 7), (10, 8)),
        "values": (6, 6),
        "level": 2,
        "scores": 1,
    }
    mismatched = at(env, 6, 6, 9, 8, DOWN)  # (9, 8) shows 5
    assert mismatched not in legal(env)
    assert u.describe_action(mismatched)["level"] == 2
    assert u.describe_action(mismatched)["scores"] is None
    env.step(on_top)
    ps = u.public_state()
    assert ps["scores"] == [1, 1]
    assert ps["heights"][10][7:9] == [2, 2]
    assert ps["top_values"][10][7:9] == [6, 6]
    # cells of different heights take no tile
    uneven = at(env, 5, 6, 9, 8, DOWN)
    assert u.describe_action(uneven)["level"] is None
    assert all(u.describe_action(a)["level"] in (1, 3) for a in legal(env))


def test_stacking_off_is_2d_dominoes():
    env = scene(stacking=False)
    env.step(at(env, 5, 6, 9, 8, DOWN))
    on_top = at(env, 6, 6, 10, 7, RIGHT)
    assert on_top not in legal(env)
    assert env.unwrapped.describe_action(on_top)["scores"] is None
    assert all(env.unwrapped.describe_action(a)["level"] == 1 for a in legal(env))
    assert at(env, 6, 6, 11, 7, RIGHT) in legal(env)  # the 6-6 still goes on the table


def test_floors_go_up_with_two_sets():
    hands = ["3-6 0-0 0-1 6-6", "5-6 2-5 1-2 6-6"]
    env = make(hands, "0-2 0-3", sets=2)
    env.step(at(env, 3, 6, 9, 7, DOWN))
    env.step(at(env, 5, 6, 9, 8, DOWN))
    env.step(at(env, 6, 6, 10, 7, RIGHT))
    third = at(env, 6, 6, 10, 7, RIGHT)
    assert third in legal(env)
    assert env.unwrapped.describe_action(third)["level"] == 3
    env.step(third)
    ps = env.unwrapped.public_state()
    assert ps["heights"][10][7:9] == [3, 3]
    assert ps["scores"] == [1, 2]


# --- turns: refill, forced draws, the end ------------------------------------------------------


def test_refill_to_hand_size_after_laying():
    env = make(SCENE, SCENE_FIRST)
    env.step(at(env, 3, 6, 9, 7, DOWN))
    assert hand_of(env, 0) == tiles("0-0 0-1 1-1 6-6")  # 6-6 drawn from the top of the bazaar
    events = env.unwrapped.game.events
    assert events[-1] == ("draw", 0, env.unwrapped.rules.tile_set.id_of("6-6"))
    env.step(at(env, 5, 6, 9, 8, DOWN))
    assert hand_of(env, 1) == tiles("1-2 2-2 2-5 4-4")
    assert env.unwrapped.public_state()["boneyard_size"] == 28 - 8 - 1 - 2


def test_draw_until_a_tile_can_be_laid():
    hands = ["0-0 0-1 1-1 1-2", "0-2 0-4 1-4 2-6"]  # nothing with a 3 or a 5
    env = make(hands, "2-2 4-4 2-4 3-6")
    u = env.unwrapped
    assert env.agent_selection == "player_0"
    assert [e for e in u.game.events if e[0] == "draw"] == [
        ("draw", 0, u.rules.tile_set.id_of(t)) for t in ("2-2", "4-4", "2-4", "3-6")
    ]
    assert len(hand_of(env, 0)) == 8
    assert {u.describe_action(a)["tile"] for a in legal(env)} == {(3, 6)}
    env.step(legal(env)[0])
    assert len(hand_of(env, 0)) == 7  # more than hand_size: no refill
    obs = env.observe("player_1")["observation"]
    assert obs[u.observation_layout["hand_sizes"]][0] == pytest.approx(7 / 4)


def play_out(env, choose=lambda actions: actions[0]) -> None:
    while not all(env.terminations.values()):
        env.step(choose(legal(env)))


def test_the_end_and_the_winner():
    outcomes = set()
    for seed in range(40):
        env = domino_env.make("domino3d", num_players=2)
        env.reset(seed=seed)
        play_out(env)
        u = env.unwrapped
        game, rules = u.game, u.rules
        assert not game.stock
        for hand in game.hands:  # nobody can move
            assert not game.grid.placements(rules.hand_pairs(hand))
        assert [e[0] for e in game.events[-3:]] == ["pass", "pass", "round_end"]
        scores = game.scores
        rewards = [env.rewards[f"player_{s}"] for s in range(2)]
        if scores[0] == scores[1]:
            assert rewards == [0.0, 0.0]
            assert game.result.winner is None
        else:
            win = scores.index(max(scores))
            assert rewards[win] == 1.0 and rewards[1 - win] == -1.0
            assert game.result.winner == win
        outcomes.add(tuple(rewards))
        assert u.public_state()["match_over"]
    assert outcomes == {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}


def test_ties_share_with_more_players():
    rules = domino_env.raw_env("domino3d", num_players=4).rules
    assert rules.outcome([3, 5, 5, 1]) == pytest.approx([-1 / 3, 2 / 3, 2 / 3, -1.0])


def test_round_and_match_episodes_are_the_same_game():
    finals = []
    for episode in ("match", "round"):
        env = domino_env.make("domino3d", num_players=3, episode=episode)
        env.reset(seed=4)
        play_out(env, choose=lambda actions: actions[len(actions) // 2])
        finals.append((env.unwrapped.public_state(), dict(env.rewards)))
    assert finals[0] == finals[1]


# --- options -----------------------------------------------------------------------------------


def test_no_doubles():
    env = domino_env.make("domino3d", no_doubles=True)
    u = env.unwrapped
    assert u.rules.num_tiles == 21
    for seed in range(5):
        env.reset(seed=seed)
        play_out(env, choose=lambda actions: actions[-1])
        assert all(a != b for a, b in u.public_state()["table"])
        assert sum(u.public_state()["hand_sizes"]) + len(u.public_state()["table"]) == 21
    with pytest.raises(ValueError, match="3-3 is not in play: no_doubles"):
        env.reset(options={"deal": {"hands": [tiles("0-1 0-2 0-3 3-3"), None]}})
    with pytest.raises(ValueError, match="no_doubles"):
        env.reset(options={"deal": {"start": "4-4"}})


def test_two_sets():
    env = domino_env.make("domino3d", sets=2)
    u = env.unwrapped
    assert u.rules.num_tiles == 56
    env.reset(seed=0, options={"deal": {"hands": [tiles("3-6 3-6 0-1 1-1"), None], "start": (3, 5)}})
    layout = u.observation_layout
    hand = env.observe("player_0")["observation"][layout["hand"]]
    ids = u.rules.tile_set.ids
    assert hand[ids[(3, 6)]] == 1.0 and hand[ids[(0, 1)]] == 0.5  # copies / sets
    env.step(at(env, 3, 6, 9, 7, DOWN))
    assert hand_of(env, 0).count((3, 6)) == 1  # one copy laid, the other kept
    assert env.observe("player_1")["observation"][layout["table"]][ids[(3, 6)]] == 0.5
    with pytest.raises(ValueError, match="more than 2 times"):
        env.reset(options={"deal": {"hands": [tiles("3-6 3-6 0-1 1-1"), None], "start": (3, 6)}})
    play_out(env)
    assert sum(u.public_state()["hand_sizes"]) + len(u.public_state()["table"]) == 56


def test_open_hands():
    hidden = make(SCENE, SCENE_FIRST)
    shown = make(SCENE, SCENE_FIRST, open_hands=True)
    layout = shown.unwrapped.observation_layout
    assert "hands" not in hidden.unwrapped.observation_layout
    assert "hands" not in hidden.unwrapped.public_state()
    ids = shown.unwrapped.rules.tile_set.ids
    for seat, other in ((0, 1), (1, 0)):
        block = shown.observe(f"player_{seat}")["observation"][layout["hands"]]
        assert [k for k in np.flatnonzero(block)] == sorted(ids[t] for t in tiles(SCENE[other]))
    assert shown.unwrapped.public_state()["hands"] == [sorted(tiles(h)) for h in SCENE]
    shown.step(at(shown, 3, 6, 9, 7, DOWN))
    block = shown.observe("player_1")["observation"][layout["hands"]]
    assert sorted(np.flatnonzero(block)) == sorted(ids[t] for t in tiles("0-0 0-1 1-1 6-6"))


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("board_size", 3, "board_size must be an int in 4..64"),
        ("board_size", 65, "4..64"),
        ("board_size", "16", "board_size"),
        ("board_size", True, "board_size"),
        ("sets", 0, "sets must be an int in 1..8"),
        ("hand_size", 0, "hand_size must be an int in 1..13"),
        ("hand_size", 14, "1..13"),
        ("stacking", "yes", "stacking must be True or False"),
        ("no_doubles", 1, "no_doubles"),
        ("open_hands", None, "open_hands"),
        ("teams", True, "teams"),
        ("num_players", 5, "2, 3, 4 players"),
    ],
)
def test_bad_options(option, value, words):
    with pytest.raises(ValueError, match=words):
        domino_env.make("domino3d", **{option: value})


@pytest.mark.parametrize(
    ("deal", "words"),
    [
        ({"start": (3, 5), "boneyard": [(5, 3)]}, "3-5 appears twice in the deal"),
        ({"hands": [tiles("0-1 0-2 0-3 0-4"), None], "start": "0-2"}, "hand 0 and the start tile"),
        ({"hands": [tiles("0-1 0-2 0-3"), None]}, "hand 0 has 3 tiles; domino3d deals 4"),
        ({"start": (7, 1)}, "unknown tile 1-7"),
        ({"start": (6, 6), "boneyard": ALL_TILES[:20]}, "only 19 are left after the hands and the start"),
        ({"opening": "1-2"}, "allowed: hands, boneyard, start, leader"),
        ({"leader": 2}, "seat 0..1"),
    ],
)
def test_malformed_deals(deal, words):
    env = domino_env.make("domino3d")
    env.reset(seed=3)
    before = env.unwrapped.public_state()
    with pytest.raises(ValueError, match=words):
        env.reset(seed=4, options={"deal": deal})
    assert env.unwrapped.public_state() == before


# --- observation -------------------------------------------------------------------------------


def test_observation_planes_and_blocks():
    env = scene()
    env.step(at(env, 5, 6, 9, 8, DOWN))
    env.step(at(env, 6, 6, 10, 7, RIGHT))
    u = env.unwrapped
    n = u.rules.board_size
    obs = env.observe("player_1")["observation"]
    layout = u.observation_layout
    assert layout["height"] == slice(0, n * n)
    planes = obs[: BOARD_PLANES * n * n].reshape(BOARD_PLANES, n, n)
    heights = np.array(u.public_state()["heights"])
    np.testing.assert_array_equal(planes[0], heights / 4)
    for value in range(7):
        expected = np.array([[v == value for v in row] for row in u.public_state()["top_values"]])
        np.testing.assert_array_equal(planes[1 + value], expected)
    # points_now, by direction (right, down): 3-5, 3-6, 5-6 at level 1, 6-6 on (10, 7)-(10, 8)
    assert layout["points_now"] == slice(8 * n * n, 10 * n * n)
    points_now = planes[8:]
    assert points_now[RIGHT, 8, 7] == points_now[DOWN, 8, 7] == 1  # on top of 3-5, of the 3s
    assert points_now[RIGHT, 10, 7] == 1  # on top of 6-6: a third floor
    assert points_now[DOWN, 9, 7] == 0  # floors 1 and 2: uneven
    assert points_now[RIGHT, 7, 7] == 1  # both halves would touch (the 3 and the 5 below)
    assert points_now[RIGHT, 7, 6] == 0  # only one half would touch: no point
    assert points_now[DOWN, 8, 6] == 1  # next to the 3s of 3-5 and 3-6
    assert points_now[RIGHT, 0, 0] == points_now[RIGHT, 2, n - 1] == points_now[DOWN, n - 1, 3] == 0
    np.testing.assert_array_equal(points_now.reshape(-1), brute_force_points_now(u))
    assert obs[layout["scores"]].tolist() == pytest.approx([0.1, 0.1])  # own score first
    ids = u.rules.tile_set.ids
    table = obs[layout["table"]]
    assert sorted(np.flatnonzero(table)) == sorted(ids[t] for t in tiles("3-5 3-6 5-6 6-6"))
    assert obs[layout["boneyard"]][0] == pytest.approx(len(u.game.stock) / 28)
    assert u.encoder.size == 2620 and u.encoder.action_planes == 2
    assert domino_env.raw_env("domino3d", board_size=32).encoder.size == 10300


# --- baselines, rendering ----------------------------------------------------------------------


def test_greedy_takes_the_point_then_the_heaviest_tile():
    env = scene()
    greedy = GreedyAgent(seed=0)
    u = env.unwrapped
    assert greedy(u, env.observe("player_1")) == at(env, 5, 6, 9, 8, DOWN)  # the only scoring move
    env = make(["0-3 5-6 1-3 2-5", "1-1 1-2 2-2 2-4"], "")  # nothing scores: 5-6 is the heaviest
    assert u is not env.unwrapped
    choice = GreedyAgent(seed=1)(env.unwrapped, env.observe("player_0"))
    assert env.unwrapped.describe_action(choice)["tile"] == (5, 6)


def test_saved_game_resumes_exactly():
    """What a training checkpoint does: pickle the game and the RNG, restore, play on."""
    import pickle

    env = domino_env.raw_env("domino3d", num_players=3)  # unwrapped, as training holds them
    env.reset(seed=5)
    rnd = random.Random(0)
    for _ in range(6):
        env.step(rnd.choice(legal(env)))
    saved = pickle.dumps(
        (env.unwrapped.game, env.unwrapped.np_random.bit_generator.state, env.unwrapped.game.clone())
    )
    game, rng_state, twin = pickle.loads(saved)
    assert twin is not game
    # the board's tables pickle as its size: built again once per file, shared by its games
    assert game.grid.geo == env.unwrapped.game.grid.geo and game.grid.geo is twin.grid.geo
    other = domino_env.raw_env("domino3d", num_players=3)
    other.restore(game, rng_state)
    while not all(env.terminations.values()):
        assert legal(env) == legal(other)
        for agent in env.agents:
            np.testing.assert_array_equal(
                env.observe(agent)["observation"], other.observe(agent)["observation"]
            )
        action = rnd.choice(legal(env))
        env.step(action)
        other.step(action)
    assert env.unwrapped.public_state() == other.unwrapped.public_state()
    assert env.rewards == other.rewards


def test_describe_off_the_board():
    env = make(SCENE, SCENE_FIRST)
    move = env.unwrapped.describe_action(at(env, 1, 2, 3, 15, RIGHT))
    assert move["cells"] == ((3, 15), (3, 16))
    assert move["level"] is None and move["scores"] is None


def test_ansi_shows_values_heights_and_tiles():
    env = scene(render_mode="ansi")
    env.step(at(env, 5, 6, 9, 8, DOWN))
    env.step(at(env, 6, 6, 10, 7, RIGHT))
    text = env.render()
    rows = {line[:5].strip(): line[5:] for line in text.splitlines() if line[:5].strip().isdigit()}
    assert rows["8"].split() == [".", "3", "-", "5", "."]  # the start: 3 joined to 5
    assert "6^2-6^2" in rows["10"]
    assert "player_0 lays 6-6: 6 on (10,7), 6 on (10,8), floor 2 (+1)" in text


def test_rgb_array_draws_dominoes(tmp_path):
    env = scene(render_mode="rgb_array")
    env.step(at(env, 5, 6, 9, 8, DOWN))
    env.step(at(env, 6, 6, 10, 7, RIGHT))
    image = env.render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.shape == (730, 660, 3)
    s, (top, left) = 32, grid_render.board_origin(env.unwrapped.rules)  # the board below the header

    def pixel(r, c, dy, dx):
        return image[top + r * s + dy, left + c * s + dx].astype(int)

    felt = pixel(2, 2, 10, 10)
    ivory = pixel(8, 8, 4, 16)  # the start's 5-half, between pips
    floor2 = pixel(10, 7, 4, 16)
    assert felt[1] > felt[0] and felt[1] > felt[2]  # green table
    assert ivory.min() > 200  # a light tile
    assert (floor2 < ivory).all() and floor2.min() > 150  # the second floor a shade darker
    assert pixel(8, 7, 16, 16).max() < 60  # the 3's centre pip is dark
    assert pixel(8, 7, 0, 16).max() < 80  # the tile's border
    plt = pytest.importorskip("matplotlib.pyplot")
    plt.imsave(tmp_path / "domino3d.png", image)  # a sample picture, left in pytest's tmp folder


# --- properties of random games ----------------------------------------------------------------


def brute_force_legal(u) -> set[int]:
    """The placements the rules allow, worked out from the height and value maps alone."""
    rules, game = u.rules, u.game
    n = rules.board_size
    heights = np.array(u.public_state()["heights"])
    values = u.public_state()["top_values"]
    hand = {t for t in rules.kinds_in(game.hands[game.current])}
    pairs = {(a, b) for a, b in hand} | {(b, a) for a, b in hand}

    def touched(r, c, other):  # values of the halves at level 1 next to (r, c), not the other half
        out = set()
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < n and 0 <= cc < n and (rr, cc) != other and heights[rr, cc] >= 1:
                out.add(values[rr][cc])
        return out

    found = set()
    for r in range(n):
        for c in range(n):
            for d, (r2, c2) in ((RIGHT, (r, c + 1)), (DOWN, (r + 1, c))):
                if r2 >= n or c2 >= n or heights[r, c] != heights[r2, c2]:
                    continue
                for x, y in pairs:
                    if heights[r, c] == 0:
                        t1, t2 = touched(r, c, (r2, c2)), touched(r2, c2, (r, c))
                        ok = (x in t1 and (not t2 or y in t2)) or (y in t2 and (not t1 or x in t1))
                    else:
                        ok = rules.stacking and values[r][c] == x and values[r2][c2] == y
                    if ok:
                        found.add(rules.action(x, y, r, c, d))
    return found


def brute_force_points_now(u) -> np.ndarray:
    """Per edge (d * C + r * N + c): 1 where a tile the rules allow there scores - on two
    occupied cells of equal height (on top; with stacking), or on two empty cells whose halves
    both touch a half (a legal tile's halves then touch their own values) - from the maps alone."""
    rules = u.rules
    n = rules.board_size
    heights = np.array(u.public_state()["heights"])

    def touches(r, c):
        return any(
            0 <= rr < n and 0 <= cc < n and heights[rr, cc] >= 1
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
        )

    out = np.zeros((2, n, n), dtype=np.float32)
    for d, (dr, dc) in ((RIGHT, (0, 1)), (DOWN, (1, 0))):
        for r in range(n - dr):
            for c in range(n - dc):
                h1, h2 = heights[r, c], heights[r + dr, c + dc]
                if h1 == h2 and h1 >= 1:
                    out[d, r, c] = rules.stacking
                elif h1 == h2 == 0:
                    out[d, r, c] = touches(r, c) and touches(r + dr, c + dc)
    return out.reshape(-1)


def assert_invariants(env) -> None:
    u = env.unwrapped
    rules, game = u.rules, u.game
    # tiles conserved: hands, bazaar and table partition the set
    parts = [*game.hands, game.on_table, sum(1 << t for t in game.stock)]
    assert sum(p.bit_count() for p in parts) == rules.num_tiles == len(set(rules.tile_ids))
    union = 0
    for part in parts:
        assert not union & part
        union |= part
    assert union == sum(1 << t for t in rules.tile_ids)
    # the height and value maps are the tiles stacked, in the order laid
    n = rules.board_size
    heights, values = np.zeros((n, n), int), np.full((n, n), -1)
    for edge, x, y, level, _tile in game.grid.placed:
        (r1, c1), (r2, c2) = rules.geometry.edge_coordinates(edge)
        assert heights[r1, c1] == heights[r2, c2] == level - 1
        heights[r1, c1] = heights[r2, c2] = level
        values[r1, c1], values[r2, c2] = x, y
    ps = u.public_state()
    np.testing.assert_array_equal(heights, ps["heights"])
    np.testing.assert_array_equal(values, [[-1 if v is None else v for v in row] for row in ps["top_values"]])
    assert len(game.grid.placed) == game.on_table.bit_count()


TABLES = st.fixed_dictionaries(
    {
        "num_players": st.sampled_from([2, 3, 4]),
        "board_size": st.sampled_from([5, 8, 16]),
        "stacking": st.booleans(),
        "no_doubles": st.booleans(),
        "sets": st.sampled_from([1, 2]),
        "hand_size": st.sampled_from([3, 4, 5]),
        "open_hands": st.booleans(),
    }
)


@settings(max_examples=25, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(options=TABLES, seed=st.integers(0, 2**32 - 1), rnd=st.randoms(use_true_random=True))
def test_random_games_keep_the_invariants(options, seed, rnd):
    """Tiles conserved, the mask equals what the rules allow and what step accepts, the height
    map equals the tiles stacked, points as described and as ``points_now`` shows them, the
    incremental observation right."""
    env = domino_env.make("domino3d", **options)
    env.reset(seed=seed)
    u = env.unwrapped
    fresh = type(u.encoder)(u.rules)
    while not all(env.terminations.values()):
        assert_invariants(env)
        actions = legal(env)
        assert actions and set(actions) == brute_force_legal(u) == set(u.game.legal)
        points_now = env.observe(env.agent_selection)["observation"][u.observation_layout["points_now"]]
        np.testing.assert_array_equal(points_now, brute_force_points_now(u))
        edges = u.rules.num_edges
        assert [u.describe_action(a)["scores"] for a in actions] == [points_now[a % edges] for a in actions]
        for action in rnd.sample(actions, min(3, len(actions))):
            clone = u.game.clone()
            u.rules.apply(clone, action)  # accepted
        action = rnd.choice(actions)
        seat, before = u.game.current, list(u.game.scores)
        points = u.describe_action(action)["scores"]
        env.step(action)
        assert u.game.scores[seat] == before[seat] + points
        if rnd.random() < 0.3:
            for s, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(env.observe(agent)["observation"], fresh.observe(u.game, s))
    assert_invariants(env)
    assert not u.game.stock


def test_edges_never_hold_a_tile_off_the_board():
    for seed in range(8):
        env = domino_env.make("domino3d", board_size=4, num_players=3)
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            for move in env.unwrapped.legal_moves():
                (r1, c1), (r2, c2) = move["cells"]
                assert min(r1, c1, r2, c2) >= 0 and max(r1, c1, r2, c2) < 4
            env.step(random.Random(seed).choice(legal(env)))
