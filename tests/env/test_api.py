"""The public interface of every variant: PettingZoo conformance, spaces, errors, deals, introspection.

Everything is parametrized over ``domino_env.VARIANTS`` and each variant's player counts (and
teams where allowed), so a variant added to the registry is tested without editing this file.
"""

from __future__ import annotations

import copy
import importlib
import pickle
import random
import re
from functools import partial
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import domino_env
from domino_env.envs.base import DominoEnv
from tests.support.helpers import play_random
from tests.support.variant_configs import GRID_VARIANTS, configs, table_mask

# --- parametrization ---------------------------------------------------------------------------


VARIANT_NAMES = sorted(domino_env.VARIANTS)

DOCUMENTED_LAYOUT = ("hand", "table", "ends", "hand_sizes", "boneyard", "voids", "scores", "phase")
LEGAL_MOVE_KEYS = {"action", "kind", "tile", "arm", "end_value", "face_down"}
PUBLIC_KEYS = {"scores", "ends", "hand_sizes", "boneyard_size", "round", "leader"}
# The grid game (3D dominoes) documents its own (domino_env/grid_observation.py, grid_env.py).
GRID_LAYOUT = ("height", "values", "hand", "table", "hand_sizes", "boneyard", "scores")
GRID_MOVE_KEYS = {"action", "kind", "tile", "cells", "values", "level", "scores"}
GRID_PUBLIC_KEYS = {"scores", "heights", "top_values", "hand_sizes", "boneyard_size", "round", "leader"}


def variants(fn):
    return pytest.mark.parametrize("name", VARIANT_NAMES)(fn)


# --- helpers -----------------------------------------------------------------------------------


def make(name: str, n: int | None = None, teams: bool = False, **opts: Any):
    if n is None:
        n = domino_env.VARIANTS[name].player_counts[0]
    return domino_env.make(name, num_players=n, teams=teams, **opts)


def mask_of(env) -> np.ndarray:
    return env.observe(env.agent_selection)["action_mask"]


def legal(env) -> list[int]:
    return [int(a) for a in np.flatnonzero(mask_of(env))]


def play_to_table(env, steps: int, rnd: random.Random) -> None:
    """``steps`` random moves, then more until a tile is on the table (past an arrange phase, or a
    round that ended and was dealt anew) or the episode is over."""
    play_random(env, steps, rnd)
    while not table_mask(env) and play_random(env, 1, rnd):
        pass


def snapshot(env) -> dict[str, Any]:
    """Everything an agent could read from the env, copied."""
    u = env.unwrapped
    game = u.game
    return {
        "public": u.public_state(),
        "agent_selection": env.agent_selection,
        "obs": {a: {k: v.copy() for k, v in env.observe(a).items()} for a in env.agents},
        "infos": {a: env.infos[a]["action_mask"].copy() for a in env.agents},
        "rewards": dict(env.rewards),
        "cumulative": dict(env._cumulative_rewards),
        "terminations": dict(env.terminations),
        "hands": list(game.hands),
        "stock": list(game.stock),
        "events": list(game.events),
        "legal": list(game.legal),
        "rng": u.np_random.bit_generator.state,
    }


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if key == "obs":
            assert a[key].keys() == b[key].keys()
            for agent in a[key]:
                for part in ("observation", "action_mask"):
                    np.testing.assert_array_equal(a[key][agent][part], b[key][agent][part], err_msg=key)
        elif key == "infos":
            for agent in a[key]:
                np.testing.assert_array_equal(a[key][agent], b[key][agent], err_msg=key)
        else:
            assert a[key] == b[key], key


def rules_of(name: str, n: int, teams: bool = False):
    """The rules object a variant builds for ``n`` players (hand sizes may depend on ``n``)."""
    return domino_env.raw_env(name, num_players=n, teams=teams).rules


def tile_names(name: str) -> list[str]:
    return [f"{a}-{b}" for a, b in domino_env.VARIANTS[name].tile_set.tiles]


def full_deal(name: str, n: int, order: list[str], leader: int | None = 0) -> dict[str, Any]:
    """Hands dealt in order from ``order``, the rest the boneyard (in 3D dominoes, the first
    of the rest is the start tile, small half on the left, so that the table is fixed too)."""
    size = rules_of(name, n).hand_size
    hands = [order[i * size : (i + 1) * size] for i in range(n)]
    deal: dict[str, Any] = {"hands": hands, "boneyard": order[n * size :]}
    if name in GRID_VARIANTS:
        ts = domino_env.VARIANTS[name].tile_set
        deal["start"] = ts.tiles[ts.id_of(order[n * size])]
        deal["boneyard"] = order[n * size + 1 :]
    if leader is not None:
        deal["leader"] = leader
    return deal


# --- PettingZoo conformance -------------------------------------------------------------------


@configs
def test_pettingzoo_api(name, n, teams):
    api_test(make(name, n, teams), num_cycles=200)


@configs
@pytest.mark.parametrize(("episode", "reward"), [("round", "outcome"), ("match", "points")])
def test_pettingzoo_api_other_modes(name, n, teams, episode, reward):
    api_test(make(name, n, teams, episode=episode, reward=reward), num_cycles=100)


@configs
def test_pettingzoo_seed(name, n, teams):
    seed_test(partial(make, name, n, teams), num_cycles=200)


# Options that change a table's spaces or its flow, each through PettingZoo's tests too.
OPTION_TABLES: list[tuple[str, dict[str, Any]]] = [
    ("domino3d", {"open_hands": True}),  # (a longer observation)
    ("domino3d", {"board_size": 8}),  # (fewer actions)
    ("domino3d", {"sets": 2}),
    ("domino3d", {"no_doubles": True}),
    ("domino3d", {"stacking": False}),
    ("blind_blitz", {"arrange": "dealt"}),
    ("metro", {"metro_penalty": 2, "match_target": 3, "episode": "match"}),
    ("classic", {"draw": False, "max_pip": 9}),
    ("cross", {"max_pip": 7}),
    ("blitz", {"draw": False}),
    ("classic", {"draw": False}),
    ("all_fives", {"max_pip": 9, "num_players": 3}),
    ("osel", {"max_pip": 9, "hand_size": 5}),
] + [  # (the tiny presets: tests/rules/test_tiny_tables.py)
    (name, {"preset": preset})
    for name, spec in domino_env.SPECS.items()
    for preset in spec.presets
    if preset != "tiny"
]


@pytest.mark.parametrize(("name", "options"), OPTION_TABLES, ids=[f"{n}-{o}" for n, o in OPTION_TABLES])
def test_pettingzoo_api_with_options(name, options):
    api_test(domino_env.make(name, **options), num_cycles=100)
    seed_test(partial(domino_env.make, name, **options), num_cycles=100)


@configs
def test_pettingzoo_render(name, n, teams):
    render_test(partial(make, name, n, teams))


@variants
def test_variant_module(name):
    module = importlib.import_module(f"domino_env.{name}_v0")
    n = domino_env.VARIANTS[name].player_counts[-1]
    raw = module.raw_env(num_players=n)
    assert isinstance(raw, DominoEnv)
    assert raw.rules.num_players == n
    env = module.env(num_players=n, episode="round")
    assert isinstance(env.unwrapped, DominoEnv)
    assert env.unwrapped.episode == "round"
    assert env.metadata["name"] == f"{name}_v0"
    env.reset(seed=0)
    assert env.agents == [f"player_{i}" for i in range(n)]


# --- observations ------------------------------------------------------------------------------


def documented_sizes(rules, observer) -> dict[str, int]:
    ts = rules.tile_set
    n, values = rules.num_players, ts.num_values
    if rules.name in GRID_VARIANTS:
        cells = rules.board_size**2
        return {
            "height": cells,
            "values": values * cells,
            "points_now": 2 * cells,  # one plane per direction
            "hand": ts.size,
            "table": ts.size,
            "hand_sizes": n - 1,
            "boneyard": 1,
            "scores": n,
        }
    return {
        "hand": ts.size,
        "table": ts.size,
        "ends": rules.num_slots * (values + 4),
        "hand_sizes": n - 1,
        "boneyard": 1,
        "voids": (n - 1) * values,
        "scores": 2 if rules.teams else n,
        "phase": len(rules.phases),
        **dict(observer.blocks if observer else ()),  # variant blocks, after the common layout
    }


@configs
def test_observation_dict(name, n, teams):
    env = make(name, n, teams)
    env.reset(seed=3)
    u = env.unwrapped
    size = sum(documented_sizes(u.rules, u.observer).values())
    rnd = random.Random(0)
    for _ in range(6):
        for agent in env.agents:
            obs = env.observe(agent)
            assert set(obs) == {"observation", "action_mask"}
            assert obs["observation"].dtype == np.float32
            assert obs["observation"].shape == (size,)
            assert obs["action_mask"].dtype == np.int8
            assert obs["action_mask"].shape == (u.rules.num_actions,)
            assert env.observation_space(agent).contains(obs)
            assert env.infos[agent]["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(env.infos[agent]["action_mask"], obs["action_mask"])
            if agent != env.agent_selection:
                assert not obs["action_mask"].any()
        assert mask_of(env).any()
        play_random(env, 1, rnd)


@configs
def test_observation_layout_tiles_the_vector(name, n, teams):
    env = make(name, n, teams)
    env.reset(seed=0)
    u = env.unwrapped
    layout = u.observation_layout
    size = env.observe(env.agent_selection)["observation"].shape[0]
    parts = sorted(layout.items(), key=lambda kv: kv[1].start)
    position = 0
    for part, piece in parts:
        assert piece.step in (None, 1), part
        assert piece.start == position, f"{part} starts at {piece.start}, expected {position}"
        assert piece.stop >= piece.start, part
        position = piece.stop
    assert position == size
    for part, width in documented_sizes(u.rules, u.observer).items():
        assert part in layout, part
        assert layout[part].stop - layout[part].start == width, part
    assert set(GRID_LAYOUT if name in GRID_VARIANTS else DOCUMENTED_LAYOUT) <= set(layout)
    # the layout is a copy: editing it does not corrupt the env
    layout.clear()
    assert u.observation_layout


@configs
def test_observation_hand_and_table_slices(name, n, teams):
    env = make(name, n, teams)
    env.reset(seed=5)
    u = env.unwrapped
    layout = u.observation_layout
    play_random(env, 3, random.Random(1))
    for seat, agent in enumerate(env.agents):
        obs = env.observe(agent)["observation"]
        known = u.rules.known_hand(u.game, seat)  # the whole hand, except where Blind hides tiles
        hand = [t for t in range(u.rules.tile_set.size) if known >> t & 1]
        table = [t for t in range(u.rules.tile_set.size) if table_mask(env) >> t & 1]
        assert list(np.flatnonzero(obs[layout["hand"]])) == hand
        assert list(np.flatnonzero(obs[layout["table"]])) == table


@configs
def test_observation_hides_other_hands(name, n, teams):
    """A seat's first observation depends on its own hand only, not on how the others were dealt."""
    tiles = tile_names(name)
    size = rules_of(name, n, teams).hand_size
    grid = name in GRID_VARIANTS
    for seat in range(n):
        # 3D dominoes: the start tile is public (keep it, and make it one the seat's hand can
        # touch), and a leader who cannot lay draws, showing it: look only at the seat leading
        for leader in (seat,) if grid else (seat, (seat + 1) % n):
            base = tiles[:]
            random.Random(seat).shuffle(base)
            own, rest = base[:size], base[size:]
            start = next(t for t in rest if set(t.split("-")) & set(own[0].split("-")))
            seen = []
            for arrangement in range(3):
                others = [t for t in rest if t != start] if grid else rest[:]
                random.Random(100 + arrangement).shuffle(others)
                order = others[: seat * size] + own + others[seat * size :]
                if grid:
                    order.insert(n * size, start)
                env = make(name, n, teams)
                env.reset(seed=arrangement, options={"deal": full_deal(name, n, order, leader)})
                assert env.agent_selection == f"player_{leader}"
                seen.append(env.observe(f"player_{seat}")["observation"].copy())
            for other in seen[1:]:
                np.testing.assert_array_equal(seen[0], other, err_msg=f"seat {seat}, leader {leader}")
    # sanity: a different own hand does change the observation
    order = tiles[:]
    first = make(name, n, teams)
    first.reset(options={"deal": full_deal(name, n, order)})
    last = rules_of(name, n, teams).hand_size - 1  # seat 0's last listed tile: Blind turns it up first
    order[last], order[-1] = order[-1], order[last]
    second = make(name, n, teams)
    second.reset(options={"deal": full_deal(name, n, order)})
    assert not np.array_equal(
        first.observe("player_0")["observation"], second.observe("player_0")["observation"]
    )


@configs
def test_observation_is_seat_relative(name, n, teams):
    """hand_sizes lists the other seats starting with the next one."""
    env = make(name, n, teams)
    env.reset(options={"deal": full_deal(name, n, tile_names(name), leader=0)})
    u = env.unwrapped
    if name in GRID_VARIANTS:  # the start tile is down; seat 0 lays, then refills to hand_size
        env.step(legal(env)[0])
    while not table_mask(env):  # past an arrange phase (Blind blitz), seat 0 leads: one tile fewer
        env.step(legal(env)[0])  # (the next seat may have drawn)
    counts = [h.bit_count() for h in u.game.hands]
    if name not in GRID_VARIANTS:
        assert counts[0] == u.rules.hand_size - 1
    sizes = u.observation_layout["hand_sizes"]
    for seat in range(n):
        obs = env.observe(f"player_{seat}")["observation"][sizes]
        expected = [counts[(seat + k) % n] / u.rules.hand_size for k in range(1, n)]
        np.testing.assert_allclose(obs, expected, err_msg=f"seat {seat}")


@configs
def test_reset_refreshes_observations(name, n, teams):
    """After reset, every observation describes the new deal (no rows left over from the last match)."""

    env = make(name, n, teams)
    env.reset(seed=1)
    play_random(env, 12, random.Random(0))
    for agent in env.agents:
        env.observe(agent)
    env.reset(seed=2)
    u = env.unwrapped
    fresh = u.encoder_class(u.rules, u.observer)
    for seat, agent in enumerate(env.agents):
        np.testing.assert_array_equal(
            env.observe(agent)["observation"], fresh.observe(u.game, seat), err_msg=f"seat {seat}"
        )


@configs
def test_deep_copies_and_pickles_play_on_like_the_original(name, n, teams):
    """Mid-match copies (random stream and the encoder's world included) see and do exactly what
    the original does, and playing them leaves the original alone."""
    env = make(name, n, teams)
    env.reset(seed=3)
    rnd = random.Random(4)
    play_random(env, 6, rnd)
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    before = snapshot(env)
    play_random(twins[0], 5, random.Random(9))  # a copy's moves are its own
    assert_same(before, snapshot(env))
    twins[0] = copy.deepcopy(env)
    for _ in range(400):
        if all(env.terminations.values()):
            break
        now = snapshot(env)
        for twin in twins:
            assert_same(now, snapshot(twin))
        action = rnd.choice(legal(env))
        for table in (env, *twins):
            table.step(action)
    for twin in twins:
        assert_same(snapshot(env), snapshot(twin))


def test_a_line_pickles_its_round_not_its_caches_and_loads_an_older_pickle():
    """Checkpoints hold games in progress and load with torch's weights-only unpickler, which
    builds no dict subclass: a line pickles without its move tables and ``playable`` cache and
    unpickles sharing its layout's. A line saved by an older version (the caches pickled, no
    ``playable`` slot) loads the same way and then answers as the original."""
    from domino_env.core.line import Line

    env = make("blind", 2)
    env.reset(seed=1)
    play_random(env, 5, random.Random(2))
    line = env.unwrapped.game.line
    _, state = line.__getstate__()
    assert not {"slots", "slot_moves", "firsts", "playable"} & set(state)
    older = {name: getattr(line, name) for name in Line.__slots__ if name != "playable"}
    for saved in (state, older):
        twin = Line.__new__(Line)
        twin.__setstate__((None, saved))
        assert twin.playable == -1 and twin.slot_moves is line.slot_moves
        assert twin.playable_mask() == line.playable_mask() and twin == line
    assert pickle.loads(pickle.dumps(line)) == line and pickle.loads(pickle.dumps(line)).tiles == line.tiles


# --- option errors -----------------------------------------------------------------------------


def test_unknown_variant():
    with pytest.raises(ValueError) as info:
        domino_env.make("no_such_game")
    message = str(info.value)
    assert "no_such_game" in message
    for name in domino_env.VARIANTS:
        assert name in message


@variants
def test_unknown_option(name):
    with pytest.raises(ValueError) as info:
        domino_env.make(name, no_such_option=1)
    message = str(info.value)
    assert "no_such_option" in message
    for option in ("num_players", "teams", "episode", "reward", "illegal_action", "render_mode"):
        assert option in message


@variants
def test_bad_num_players(name):
    counts = domino_env.VARIANTS[name].player_counts
    for bad in (0, 1, min(counts) - 1, max(counts) + 1, 9):
        if bad in counts:
            continue
        with pytest.raises(ValueError, match=str(bad)):
            domino_env.make(name, num_players=bad)
    for bad in (float(counts[0]), str(counts[0]), True):  # equal to an allowed count, not an int
        with pytest.raises(ValueError, match=rf"played by {', '.join(map(str, counts))} players"):
            domino_env.make(name, num_players=bad)
    assert domino_env.make(name, num_players=np.int64(counts[0])).unwrapped.rules.num_players == counts[0]


@variants
def test_teams_need_four_players(name):
    rules = domino_env.VARIANTS[name]
    for n in rules.player_counts:
        if n == 4 and rules.teams_allowed:
            domino_env.make(name, num_players=4, teams=True)
            continue
        message = (
            "partners play only with 4 players" if rules.teams_allowed else "this variant has no partnerships"
        )
        with pytest.raises(ValueError, match=f"{name}: {message};.*teams must be False"):
            domino_env.make(name, num_players=n, teams=True)
    for bad in ("False", "yes", 2, None):  # a truthy word would have built a partnership game
        with pytest.raises(ValueError, match=r"teams must be True or False"):
            domino_env.make(name, num_players=max(rules.player_counts), teams=bad)


@variants
@pytest.mark.parametrize("option", ["episode", "reward", "illegal_action", "render_mode"])
def test_bad_env_option_values(name, option):
    with pytest.raises(ValueError, match=option):
        domino_env.make(name, **{option: "bogus"})


# --- illegal actions ---------------------------------------------------------------------------


def _illegal_candidates(env) -> list[Any]:
    u = env.unwrapped
    mask = mask_of(env)
    rules = u.rules
    hand = u.game.hands[u.game.current]
    unmasked = [a for a in range(rules.num_actions) if not mask[a]]
    in_hand = [a for a in unmasked if rules.action_kind[a] == "play" and hand >> rules.action_tile[a] & 1]
    off_hand = [
        a for a in unmasked if rules.action_kind[a] == "play" and not hand >> rules.action_tile[a] & 1
    ]
    picks: list[Any] = [*in_hand[:2], *off_hand[:2], -1, rules.num_actions, 10**6]
    first = legal(env)[0]  # a legal id in the wrong shape or type is no action
    return [*picks, np.array([first]), np.array([first, first]), str(first), first + 0.5, True, None]


@configs
def test_illegal_action_raises_and_changes_nothing(name, n, teams):
    env = make(name, n, teams)
    env.reset(seed=11)
    play_random(env, 3, random.Random(2))
    u = env.unwrapped
    for action in _illegal_candidates(env):
        before = snapshot(env)
        legal_now = list(u.game.legal)
        with pytest.raises(ValueError) as info:
            env.step(action)
        message = str(info.value)
        if type(action) is int and 0 <= action < u.rules.num_actions:
            a, b = u.describe_action(action)["tile"]
            assert f"{a}-{b}" in message, message
        else:
            assert repr(action) in message, message
        for a in legal_now:
            assert re.search(rf"\b{a}\b", message), f"legal action {a} missing from {message!r}"
            assert f"{a} ({domino_env.move_text(u.describe_action(a))})" in message, message
        assert_same(before, snapshot(env))
    # the env is still usable
    agent = env.agent_selection
    env.step(legal(env)[0])
    assert u.public_state() != before["public"] or env.agent_selection != agent


def test_restore_refuses_what_is_not_a_match_of_its_table() -> None:
    """A game of another table (its players, its kind of state) or no game at all is refused in
    one line, and the env is left on a new match it can play."""
    env = domino_env.make("classic", num_players=2)
    env.reset(seed=0)
    rng = dict(env.unwrapped.np_random.bit_generator.state)
    others = [domino_env.make("classic", num_players=3), domino_env.make("domino3d", num_players=2)]
    for other in others:
        other.reset(seed=0)
    for wrong in (others[0].unwrapped.game, others[1].unwrapped.game, "game"):
        with pytest.raises(ValueError, match=r"not a game in progress of this table \(classic, 2 players\)"):
            env.unwrapped.restore(wrong, rng)
        assert play_random(env, 20, random.Random(1)) > 0  # (still a table to play)


def test_variant_state_reads_by_name_with_a_deprecation_warning() -> None:
    env = make("osel")
    env.reset(seed=0)
    extra = env.unwrapped.game.extra
    with pytest.warns(DeprecationWarning, match=r"state.extra\['remembered'\] is deprecated"):
        assert extra["remembered"] == extra.remembered == [0, 0]


def test_move_text_names_every_kind() -> None:
    move_text = domino_env.move_text
    lay = {"kind": "play", "tile": (3, 4), "arm": "east", "end_value": 4, "face_down": False}
    assert move_text(lay) == "3-4 on east (end 4)"
    assert move_text({**lay, "arm": "lead", "end_value": None}) == "3-4 lead"
    assert move_text({**lay, "face_down": True}) == "3-4 on east (end 4) face down"
    assert move_text({"kind": "stop", "tile": None}) == "stop"
    assert move_text({"kind": "turn_up", "tile": None}) == "turn up"
    assert move_text({"kind": "arrange", "tile": (0, 6)}) == "arrange 0-6"
    grid = {
        "kind": "play",
        "tile": (3, 4),
        "cells": ((8, 9), (8, 10)),
        "values": (3, 4),
        "level": 2,
        "scores": 1,
    }
    assert move_text(grid) == "3-4: 3 on (8,9), 4 on (8,10), floor 2, +1"
    assert move_text({**grid, "level": 1, "scores": 0}) == "3-4: 3 on (8,9), 4 on (8,10)"


@pytest.mark.parametrize("spell", [np.int64, np.array, float], ids=["numpy-int", "0d-array", "float"])
def test_a_legal_id_spelled_as_numpy_or_float_plays_that_action(spell):
    envs = [make("classic", 2), make("classic", 2)]
    for env in envs:
        env.reset(seed=5)
    rnd = random.Random(1)
    while not all(envs[0].unwrapped.terminations.values()):
        action = rnd.choice(legal(envs[0]))
        envs[0].step(action)
        envs[1].step(spell(action))
        assert envs[0].unwrapped.public_state() == envs[1].unwrapped.public_state()


# Each (variant, players, fixed hands or None for a random deal, words): the lead must be one tile.
ILLEGAL_LEADS = [
    ("cross", 4, None, "the round's first tile must be 6-6, the highest double, which starts the cross;"),
    (
        "metro",
        2,
        ["0-0 5-5 0-1 0-2 0-3 0-4 0-5 0-6 0-7 0-8", "1-2 1-3 1-4 1-5 1-6 1-7 1-8 1-9 2-3 2-4"],
        "the round's first tile must be 5-5, the lowest double dealt after 0-0;",
    ),
    (
        "osel",
        2,
        ["0-0 4-4 0-1 0-2 0-3 0-4 0-5", "1-2 1-3 1-4 1-5 1-6 2-3 2-4"],
        "the round's first tile must be 4-4, the lowest double dealt after 0-0 (with none, the non-double "
        "with the fewest pips);",
    ),
    (  # Blitz prefers no double: 0-2 and 1-1 have 2 pips, the lower small half first
        "blitz",
        2,
        ["0-2 1-1 3-4 3-5 3-6 4-5 4-6", "2-2 2-3 2-4 2-5 2-6 5-5 5-6"],
        "the round's first tile must be 0-2, the tile with the fewest pips dealt;",
    ),
    (
        "blind",
        2,
        None,
        "the round's first tile must be {required}, the tile turned up from the leader's row;",
    ),
]


@pytest.mark.parametrize(("name", "n", "hands", "words"), ILLEGAL_LEADS, ids=[c[0] for c in ILLEGAL_LEADS])
def test_an_illegal_lead_says_which_tile_the_opening_rule_requires(name, n, hands, words):
    env = make(name, n)
    env.reset(seed=3, options={"deal": {"hands": [h.split() for h in hands]}} if hands else None)
    u = env.unwrapped
    rules, game = u.rules, u.game
    required = game.required_lead
    assert required >= 0 and not game.line.count
    other = next(t for t in range(rules.tile_set.size) if game.hands[game.current] >> t & 1 and t != required)
    action = rules.play_action(other, 0)
    before = snapshot(env)
    with pytest.raises(ValueError) as info:
        env.step(action)
    a, b = rules.tile_set.tiles[other]
    r = rules.tile_set.tiles[required]
    message = str(info.value)
    assert message.startswith(f"illegal action {action} ({a}-{b} lead) for {env.agent_selection}: "), message
    assert words.format(required=f"{r[0]}-{r[1]}") in message, message
    assert_same(before, snapshot(env))
    env.step(rules.play_action(required, 0))  # the env is still usable: the required lead plays
    assert u.game.line.count == 1


def _reasons(env, actions) -> dict[int, str]:
    """The reason of each illegal action, read from the env's error (each refused, nothing changed)."""
    out = {}
    for action in actions:
        before = snapshot(env)
        with pytest.raises(ValueError) as info:
            env.step(action)
        message = str(info.value)
        out[action] = message.split(f" for {env.agent_selection}: ", 1)[1].rsplit("; legal actions: ", 1)[0]
        assert_same(before, snapshot(env))
    return out


def test_a_spinner_arm_not_open_yet_says_when_it_opens() -> None:
    env = make("all_fives", 2)
    env.reset(seed=0, options={"deal": full_deal("all_fives", 2, tile_names("all_fives"), leader=0)})
    rules = env.unwrapped.rules
    env.step(rules.play_action(rules.tile_set.id_of("0-1"), 0))  # not a double: no spinner yet
    north = rules.play_action(rules.tile_set.id_of("1-2"), 2)
    assert _reasons(env, [north])[north] == (
        "the line has no north end yet: north and south open once the spinner (the first double) "
        "has a tile on both sides"
    )


def test_cross_says_an_unstarted_arm_must_be_started_first() -> None:
    """Cross's own rule (start every arm before extending one), told from the legal moves."""
    env = make("cross", 4)
    rnd = random.Random(0)
    found = []
    for seed in range(10):
        env.reset(seed=seed)
        while not found and not all(env.terminations.values()):
            u = env.unwrapped
            line, rules = u.game.line, u.rules
            fits = [
                a
                for a in range(rules.num_play_actions)
                if not mask_of(env)[a]
                and u.game.hands[u.game.current] >> rules.action_tile[a] & 1
                and line.state[rules.action_slot[a]] == 1  # an open end
                and line.value[rules.action_slot[a]] in rules.tile_set.tiles[rules.action_tile[a]]
            ]
            found = [r for r in _reasons(env, fits).values() if "every legal move starts an arm" in r]
            env.step(rnd.choice(legal(env)))
        if found:
            break
    assert found and re.fullmatch(
        r"\d-\d fits the \w+ end \(\d\), but cross does not allow it now: every legal move starts an arm "
        r"that holds no tile yet \((east|west|north|south)(, (east|west|north|south))*\)",
        found[0],
    ), found


def test_blind_says_the_same_of_a_hidden_tile_and_one_not_held() -> None:
    """A face-down tile of one's own row is refused in the words used for a tile one does not
    hold: the error tells nothing the seat cannot see."""
    env = make("blind", 2)
    env.reset(seed=1)
    play_random(env, 1, random.Random(0))
    u = env.unwrapped
    rules, game, seat = u.rules, u.game, u.game.current
    hidden = next(
        t
        for t in range(rules.tile_set.size)
        if game.hands[seat] >> t & 1 and not rules.known_hand(game, seat) >> t & 1
    )
    elsewhere = next(t for t in range(rules.tile_set.size) if game.hands[1 - seat] >> t & 1)
    reasons = _reasons(env, [rules.play_action(hidden, 0), rules.play_action(elsewhere, 0)])
    for tile, reason in zip((hidden, elsewhere), reasons.values(), strict=True):
        a, b = rules.tile_set.tiles[tile]
        assert reason == f"{a}-{b} is not among the tiles player_{seat} can name in its hand"


def test_domino3d_says_which_cell_breaks_which_rule() -> None:
    env = make("domino3d", 2)
    deal = {
        "hands": [["0-1", "2-4", "5-6", "1-1"], ["0-2", "0-3", "0-4", "0-5"]],
        "start": "3-4",
        "leader": 0,
    }
    env.reset(seed=0, options={"deal": deal})
    rules = env.unwrapped.rules  # the start tile: 3 on (8,7), 4 on (8,8)
    actions = {
        "corner": rules.action(2, 4, 0, 0, 0),
        "edge": rules.action(2, 4, 0, 15, 0),
        "touches_other": rules.action(2, 4, 7, 7, 0),  # 2 on (7,7) over the 3, 4 on (7,8) over the 4
        "on_top_mismatch": rules.action(2, 4, 8, 7, 0),
        "not_held": rules.action(3, 3, 0, 0, 0),
    }
    reasons = _reasons(env, actions.values())
    said = dict(zip(actions, reasons.values(), strict=True))
    assert said["corner"] == (
        "neither (0,0) nor (0,1) touches a tile: a tile laid on the table must touch a half of its own value"
    )
    assert said["edge"] == "(0,16) is off the 16x16 board"
    assert said["touches_other"] == "the 2 on (7,7) would touch 3: a half may touch only its own value"
    assert said["on_top_mismatch"] == (
        "a tile on top must show the values below it, and (8,7) shows 3, (8,8) shows 4 (it would lay 2 and 4)"
    )
    assert said["not_held"] == "player_0 holds no 3-3"


@configs
def test_every_illegal_action_has_a_reason_and_reading_it_changes_nothing(name, n, teams):
    """At several decisions of a random game, every illegal action id (a sample on a grid) gets
    a one-line reason from the rules, which read the game without changing it."""
    env = make(name, n, teams)
    env.reset(seed=5)
    rnd = random.Random(4)
    u = env.unwrapped
    for _ in range(6):
        if all(env.terminations.values()):
            break
        rules, game = u.rules, u.game
        illegal = [a for a in range(rules.num_actions) if a not in game.legal]
        for action in rnd.sample(illegal, min(len(illegal), 400)):
            saved = pickle.dumps(game)
            reason = rules.illegal_reason(game, action, env.agent_selection)
            assert reason and "\n" not in reason and not reason.endswith(";"), reason
            assert not re.search(r"end\d+ end", reason), reason  # Metro's ends read "end4", not "end4 end"
            assert pickle.dumps(game) == saved, (action, reason)
        play_random(env, 3, rnd)


@configs
def test_illegal_action_penalize(name, n, teams):
    env = make(name, n, teams, illegal_action="penalize")
    env.reset(seed=4)
    play_random(env, 2, random.Random(3))
    offender = env.agent_selection
    bad = next(a for a in range(env.unwrapped.rules.num_actions) if not mask_of(env)[a])
    env.step(bad)
    assert all(env.terminations.values())
    for agent in env.agents:
        assert env.rewards[agent] == (-1.0 if agent == offender else 0.0), agent
    seen = {}
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        assert termination or truncation
        seen[agent] = reward
        env.step(None)
    assert seen == {a: (-1.0 if a == offender else 0.0) for a in seen}
    assert set(seen) == {f"player_{i}" for i in range(n)}


# --- deals -------------------------------------------------------------------------------------


def _bad_deals(name: str, n: int) -> list[tuple[str, Any, str]]:
    """(label, deal, regex the message must match)."""
    tiles = tile_names(name)
    size = rules_of(name, n).hand_size
    h0, h1 = tiles[:size], tiles[size : 2 * size]
    room = len(tiles) - n * size
    hands_none = [None] * n
    max_pip = domino_env.VARIANTS[name].tile_set.max_pip
    unknown = f"{max_pip + 1}-{max_pip + 1}"
    if name in GRID_VARIANTS:  # no opening tile from a hand: the start tile comes from the bazaar
        first_tile: list[tuple[str, Any, str]] = [
            ("start tile also in a hand", {"hands": [h0, h1, *hands_none[2:]], "start": h0[0]}, h0[0]),
            ("start tile also in the boneyard", {"boneyard": [h0[0]], "start": h0[0]}, "boneyard"),
            ("unreadable start tile", {"start": "six"}, "six"),
            ("an opening instead of a start", {"leader": 0, "opening": h0[0]}, "start"),
        ]
    else:
        first_tile = [
            (
                "leader without opening tile",
                {"hands": [h0, h1, *hands_none[2:]], "leader": 1, "opening": h0[0]},
                h0[0],
            ),
            ("opening in boneyard", {"boneyard": [h0[0]], "leader": 0, "opening": h0[0]}, "boneyard"),
        ]
    return [
        ("unknown tile", {"hands": [[(max_pip + 1, max_pip + 1), *h0[1:]], *hands_none[1:]]}, unknown),
        ("unknown tile in boneyard", {"boneyard": [unknown]}, unknown),
        ("unreadable tile", {"hands": [["zero-one", *h0[1:]], *hands_none[1:]]}, "zero-one"),
        ("a bool half", {"hands": [[(2, True), *h0[1:]], *hands_none[1:]]}, "(2, True)"),
        ("repeated in a hand", {"hands": [[h0[0], *h0[:-1]], *hands_none[1:]]}, h0[0]),
        ("repeated across hands", {"hands": [h0, [h0[0], *h1[1:]], *hands_none[2:]]}, h0[0]),
        (
            "repeated in boneyard, reversed",
            {"hands": [h0, *hands_none[1:]], "boneyard": [h0[0][::-1]]},
            h0[0],
        ),
        ("short hand", {"hands": [h0[:-1], *hands_none[1:]]}, str(size - 1)),
        ("long hand", {"hands": [[*h0, h1[0]], *hands_none[1:]]}, str(size + 1)),
        ("wrong number of hands", {"hands": [h0]}, "hands"),
        *first_tile,
        ("leader too big", {"leader": n}, "leader"),
        ("negative leader", {"leader": -1}, "leader"),
        ("leader as text", {"leader": "0"}, "leader"),
        ("leader as bool", {"leader": True}, "leader"),
        ("unknown key", {"hands": hands_none, "stock": []}, "stock"),
        ("boneyard too long", {"boneyard": tiles[: room + 1]}, "boneyard"),
        ("not a dict", [h0, h1], "deal"),
    ]


@variants
def test_malformed_deals_raise(name):
    n = domino_env.VARIANTS[name].player_counts[0]
    for label, deal, pattern in _bad_deals(name, n):
        env = make(name, n)
        with pytest.raises(ValueError, match=re.escape(pattern)) as info:
            env.reset(seed=0, options={"deal": deal})
        assert len(str(info.value)) > 20, f"{label}: unhelpful message {info.value!s}"


@variants
def test_bad_reset_options_raise_and_leave_the_game_intact(name):
    n = domino_env.VARIANTS[name].player_counts[0]
    env = make(name, n)
    env.reset(seed=8)
    play_random(env, 3, random.Random(5))
    for options, words in (
        (["deal"], r"reset options must be a dict .*\['deal'\]"),
        ([], r"reset options must be a dict .*\[\]"),
        ("deal", "reset options must be a dict"),
        ({"deal": {}, "deals": []}, "either options\\['deal'\\] or options\\['deals'\\]"),
        ({"deals": {"leader": 0}}, "must be a list of deals"),
    ):
        before = snapshot(env)
        with pytest.raises(ValueError, match=words):
            env.reset(seed=1, options=options)
        assert_same(before, snapshot(env))
    with pytest.warns(UserWarning, match=r"ignoring unknown reset option\(s\) \['colour'\]"):
        env.reset(seed=1, options={"colour": "red"})


def test_a_bad_seed_is_a_value_error_that_changes_nothing():
    """reset takes None or a non-negative int (a numpy integer too); anything else is a
    ValueError saying what is allowed (not gymnasium's error), raised before any state changes,
    and the env plays on as before."""
    env = make("classic", 2)
    env.reset(seed=8)
    play_random(env, 3, random.Random(5))
    for seed in (-1, np.int64(-3), "abc", 1.5, True, np.bool_(False)):
        before = snapshot(env)
        with pytest.raises(ValueError, match=r"^seed must be a non-negative integer or None, got "):
            env.reset(seed=seed)
        assert_same(before, snapshot(env))
    assert legal(env)
    env.step(legal(env)[0])
    env.reset(seed=np.int64(4))
    dealt = snapshot(env)
    env.reset(seed=4)
    assert_same(dealt, snapshot(env))
    fresh = domino_env.raw_env("classic")
    with pytest.raises(ValueError, match="non-negative integer or None, got -1"):
        fresh.reset(seed=-1)
    fresh.reset(seed=0)
    assert fresh.legal_moves()


def test_a_failed_first_reset_leaves_the_env_waiting_for_a_good_one():
    env = make("classic", 2)
    with pytest.raises(ValueError, match="leader"):
        env.reset(seed=0, options={"deal": {"leader": 9}})
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), lambda: list(env.agent_iter())):
        with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before"):
            call()
    with pytest.raises(AttributeError, match="before reset"):
        env.last()
    env.reset(seed=0)
    assert legal(env)


@variants
def test_the_raw_env_before_its_first_reset_says_to_call_reset(name):
    """Unwrapped (no order-enforcing wrapper), every call that reads the game names itself and
    asks for reset() rather than failing inside the engine; the env then plays as usual."""
    env = domino_env.raw_env(name, render_mode="rgb_array")
    calls = {
        "step()": lambda: env.step(0),
        "observe()": lambda: env.observe("player_0"),
        "last()": env.last,
        "state()": env.state,
        "public_state()": env.public_state,
        "outcomes()": env.outcomes,
        "render()": env.render,
        "table_text()": env.table_text,
        "table_image()": env.table_image,
        "legal_moves()": env.legal_moves,
        "view()": lambda: env.view(0),
        "immediate_points()": lambda: env.immediate_points(0),
        "round_index": lambda: env.round_index,
        "side_scores": lambda: env.side_scores,
    }
    for what, call in calls.items():
        said = rf"^{re.escape(what)} needs a game in progress: call reset\(\) first$"
        with pytest.raises(ValueError, match=said):
            call()
    env.reset(seed=0)
    assert env.render().ndim == 3 and env.public_state()["hand_sizes"]
    with pytest.raises(ValueError, match=r"^unknown agent 'player_9'; agents: player_0, player_1"):
        env.observe("player_9")
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))


@variants
def test_malformed_deal_leaves_running_game_intact(name):
    n = domino_env.VARIANTS[name].player_counts[0]
    env = make(name, n)
    env.reset(seed=8)
    rnd = random.Random(5)
    play_random(env, 4, rnd)
    for label, deal, _ in _bad_deals(name, n):
        before = snapshot(env)
        with pytest.raises(ValueError):
            env.reset(seed=123, options={"deal": deal})
        assert_same(before, snapshot(env))
        with pytest.raises(ValueError):  # a bad later round in 'deals' is rejected up front too
            env.reset(seed=123, options={"deals": [{"leader": 0}, deal]})
        assert_same(before, snapshot(env))
        assert play_random(env, 1, rnd) == 1, label


@variants
def test_deal_options_misuse(name):
    env = make(name)
    env.reset(seed=0)
    before = snapshot(env)
    with pytest.raises(ValueError):
        env.reset(options={"deal": {"leader": 0}, "deals": [{"leader": 0}]})
    with pytest.raises(ValueError):
        env.reset(options={"deals": {"leader": 0}})
    assert_same(before, snapshot(env))


@variants
def test_tile_spellings_are_equivalent(name):
    n = domino_env.VARIANTS[name].player_counts[0]
    tiles = domino_env.VARIANTS[name].tile_set.tiles
    order = list(range(len(tiles)))
    random.Random(7).shuffle(order)
    spellings = [
        [f"{tiles[t][0]}-{tiles[t][1]}" for t in order],
        [tuple(tiles[t]) for t in order],
        [(tiles[t][1], tiles[t][0]) for t in order],
        [list(tiles[t]) for t in order],
        [tuple(np.int64(half) for half in tiles[t]) for t in order],
    ]
    results = []
    for spelled in spellings:
        env = make(name, n)
        env.reset(seed=1, options={"deal": full_deal(name, n, spelled, leader=1)})
        results.append((list(env.unwrapped.game.hands), list(env.unwrapped.game.stock), snapshot(env)))
    for hands, stock, snap in results[1:]:
        assert hands == results[0][0]
        assert stock == results[0][1]
        assert_same(results[0][2], snap)
    # the fixed hands are the ones given, and the boneyard's first listed tile is drawn first
    size = rules_of(name, n).hand_size
    game = make(name, n)
    deal = full_deal(name, n, spellings[0], leader=1)
    game.reset(options={"deal": deal})
    g = game.unwrapped.game
    for seat in range(n):
        assert g.hands[seat] == sum(1 << t for t in order[seat * size : (seat + 1) * size])
    boneyard = [domino_env.VARIANTS[name].tile_set.id_of(t) for t in deal["boneyard"]]
    assert sorted(g.stock) == sorted(boneyard)
    if boneyard:  # Cross deals every tile: no boneyard
        assert g.stock[-1] == boneyard[0]


@variants
def test_leader_and_opening(name):
    n = domino_env.VARIANTS[name].player_counts[-1]
    for leader in range(n):
        env = make(name, n)
        if name in GRID_VARIANTS:  # the first tile is the start tile, laid before anyone moves
            env.reset(seed=leader, options={"deal": {"leader": leader, "start": "2-5"}})
            assert env.agent_selection == f"player_{leader}"
            assert env.unwrapped.public_state()["table"] == [(2, 5)]
            assert env.unwrapped.public_state()["leader"] == leader
            continue
        env.reset(seed=leader, options={"deal": {"leader": leader, "opening": "2-5"}})
        assert env.agent_selection == f"player_{leader}"
        moves = env.unwrapped.legal_moves()
        while moves[0]["kind"] == "arrange":  # Blind blitz: every row is arranged first
            env.step(moves[0]["action"])
            moves = env.unwrapped.legal_moves()
        assert env.agent_selection == f"player_{leader}"
        assert [m["tile"] for m in moves] == [(2, 5)]
        assert env.unwrapped.public_state()["leader"] == leader


@variants
def test_deals_fix_successive_rounds(name):
    n = domino_env.VARIANTS[name].player_counts[0]
    tiles = tile_names(name)
    first, second = tiles[:], tiles[:]
    random.Random(1).shuffle(first)
    random.Random(2).shuffle(second)
    deals = [full_deal(name, n, first, leader=0), full_deal(name, n, second, leader=1)]
    if name in GRID_VARIANTS:  # 3D dominoes is one game: a second deal is refused, not ignored
        env = make(name, n)
        with pytest.raises(ValueError, match="single game"):
            env.reset(seed=0, options={"deals": deals})
        env.reset(seed=0, options={"deals": deals[:1]})
        assert env.unwrapped.game.hands[0] == sum(
            1 << domino_env.VARIANTS[name].tile_set.id_of(t) for t in first[:4]
        )
        return
    for seed in range(20):
        env = make(name, n)
        env.reset(seed=seed, options={"deals": deals})
        u = env.unwrapped
        size = u.rules.hand_size
        ids = [u.rules.tile_set.id_of(t) for t in first]
        assert u.game.hands == [sum(1 << t for t in ids[s * size : (s + 1) * size]) for s in range(n)]
        rnd = random.Random(seed)
        while u.public_state()["round"] == 0 and not all(env.terminations.values()):
            play_random(env, 1, rnd)
        if all(env.terminations.values()):
            continue  # the match ended in round 0; try another seed
        ids = [u.rules.tile_set.id_of(t) for t in second]
        assert u.public_state()["round"] == 1
        assert u.public_state()["leader"] == 1
        assert env.agent_selection == "player_1"
        assert u.game.hands == [sum(1 << t for t in ids[s * size : (s + 1) * size]) for s in range(n)]
        assert u.game.stock[::-1] == ids[n * size :]
        return
    pytest.fail("no seed reached a second round")


# --- introspection -----------------------------------------------------------------------------


@configs
def test_legal_moves_match_mask(name, n, teams):
    env = make(name, n, teams)
    env.reset(seed=21)
    u = env.unwrapped
    rnd = random.Random(4)
    for _ in range(40):
        if all(env.terminations.values()):
            break
        moves = u.legal_moves()
        assert moves
        actions = [m["action"] for m in moves]
        assert sorted(actions) == legal(env)
        assert len(set(actions)) == len(actions)
        hand = u.game.hands[u.game.current]
        if name in GRID_VARIANTS:
            check_grid_moves(u, moves, hand)
            play_random(env, 1, rnd)
            continue
        ends = u.public_state()["ends"]
        for move in moves:
            assert set(move) == LEGAL_MOVE_KEYS
            if move["kind"] != "play":
                continue
            a, b = move["tile"]
            assert a <= b
            assert hand >> u.rules.tile_set.id_of((a, b)) & 1
            if move["arm"] == "lead":
                assert move["end_value"] is None
                assert not ends
            else:
                assert move["arm"] in u.rules.slot_names
                assert move["end_value"] in (a, b)
                assert move["end_value"] in ends
            assert isinstance(move["face_down"], bool)
        play_random(env, 1, rnd)


def check_grid_moves(u, moves: list[dict[str, Any]], hand: int) -> None:
    """3D dominoes: each legal move lays a tile in hand, oriented, on two neighbouring cells of
    the board at equal height, and scores 0 or 1 (on top: always 1)."""
    size = u.rules.board_size
    heights = u.public_state()["heights"]
    for move in moves:
        assert set(move) == GRID_MOVE_KEYS
        a, b = move["tile"]
        assert a <= b
        assert hand >> u.rules.tile_set.id_of((a, b)) & 1
        assert sorted(move["values"]) == [a, b]
        (r1, c1), (r2, c2) = move["cells"]
        assert (r2 - r1, c2 - c1) in ((0, 1), (1, 0))
        assert 0 <= r1 <= r2 < size and 0 <= c1 <= c2 < size
        assert heights[r1][c1] == heights[r2][c2] == move["level"] - 1
        assert move["scores"] in (0, 1)
        if move["level"] > 1:
            assert move["scores"] == 1


@configs
def test_describe_action(name, n, teams):
    env = make(name, n, teams)
    env.reset(seed=2)
    u = env.unwrapped
    play_random(env, 2, random.Random(0))
    num = u.rules.num_actions
    for a in range(num):
        for spelled in (a, np.int64(a)):
            move = u.describe_action(spelled)
            assert set(move) == (GRID_MOVE_KEYS if name in GRID_VARIANTS else LEGAL_MOVE_KEYS)
            assert move["action"] == a
            if move["tile"] is not None:
                assert move["tile"][0] <= move["tile"][1]
    for bad in (-1, num, num + 5, 1.5, True, "1", None):
        with pytest.raises(ValueError):
            u.describe_action(bad)


@variants
def test_immediate_points_of_the_legal_moves(name):
    """What front ends show beside a move: 3D dominoes' placement score, All Fives' count, else 0."""
    raw = domino_env.raw_env(name, num_players=domino_env.VARIANTS[name].player_counts[0])
    with pytest.raises(ValueError, match=r"call reset\(\) first"):
        raw.immediate_points(0)
    raw.reset(seed=3)
    rnd = random.Random(0)
    scored = []
    while not all(raw.terminations.values()):
        moves = raw.legal_moves()
        points = [raw.immediate_points(np.int64(m["action"])) for m in moves]
        if name in GRID_VARIANTS:
            assert points == [m["scores"] for m in moves]
        elif name != "all_fives":
            assert not any(points)
        scored += points
        raw.step(rnd.choice(moves)["action"])
    assert any(scored) == (name in GRID_VARIANTS or name == "all_fives")
    raw.reset(seed=3)
    illegal = next(a for a in range(raw.rules.num_actions) if a not in raw.game.legal)
    for bad in (illegal, True, "1"):
        with pytest.raises(ValueError, match="takes a legal action of the agent to move"):
            raw.immediate_points(bad)


@configs
def test_public_state(name, n, teams):
    env = make(name, n, teams)
    env.reset(seed=9)
    u = env.unwrapped
    ps = u.public_state()
    size = u.rules.hand_size
    assert ps["round"] == 0
    assert len(ps["scores"]) == n
    if name in GRID_VARIANTS:  # the start tile is down; the board as lists of lists
        assert set(ps) >= GRID_PUBLIC_KEYS
        assert ps["boneyard_size"] == u.rules.tile_set.size - n * size - 1
        assert sum(map(sum, ps["heights"])) == 2
        assert sum(v is not None for row in ps["top_values"] for v in row) == 2
        assert len(ps["table"]) == 1
        if ps["hand_sizes"] == [size] * n:  # (the leader may have drawn)
            assert ps["scores"] == [0] * n
        return
    assert set(ps) >= PUBLIC_KEYS
    assert ps["hand_sizes"] == [size] * n
    assert ps["boneyard_size"] == u.rules.tile_set.size - n * size
    assert ps["ends"] == []
    assert ps["scores"] == [0] * n
    assert env.agent_selection == f"player_{ps['leader']}"
    play_to_table(env, 5, random.Random(1))
    ps = u.public_state()
    table = ps.get("table")
    if table is not None:
        assert sum(ps["hand_sizes"]) + ps["boneyard_size"] + len(table) == u.rules.tile_set.size
    assert ps["ends"]
    assert all(isinstance(v, int) for v in ps["ends"])
    # the spinner: the first double on the table where the variant has one, else none
    line = u.game.line
    if ps["spinner"] is None:
        assert not line.has_spinner
    else:
        a, b = ps["spinner"]
        assert a == b and (a, b) in table and line.has_spinner


def test_public_state_names_a_late_spinner():
    env = make("all_fives", 2)
    for seed in range(40):  # a game led with a non-double, whose first double is laid later
        env.reset(seed=seed)
        first = None
        while not all(env.terminations.values()) and env.unwrapped.public_state()["spinner"] is None:
            env.step(legal(env)[-1])
            table = env.unwrapped.public_state()["table"]
            first = first or table[0]
            doubles = [t for t in table if t[0] == t[1]]
        if first is not None and first[0] != first[1] and doubles:
            assert env.unwrapped.public_state()["spinner"] == doubles[0]
            return
    raise AssertionError("no late spinner in 40 seeded games")


# --- rendering ---------------------------------------------------------------------------------


@configs
def test_render_ansi_shows_table(name, n, teams):
    env = make(name, n, teams, render_mode="ansi")
    env.reset(seed=6)
    assert isinstance(env.render(), str)
    play_to_table(env, 5, random.Random(6))
    text = env.render()
    assert isinstance(text, str)
    g = env.unwrapped.game
    ts = env.unwrapped.rules.tile_set
    if name in GRID_VARIANTS:  # a grid, row by row: each occupied cell's value is in its row
        heights, values = g.grid.height, g.grid.value
        lines = {line[:5]: line[5:] for line in text.splitlines()}
        size = env.unwrapped.rules.board_size
        for cell in range(size * size):
            if heights[cell]:
                assert str(values[cell]) in lines[f"{cell // size:>4} "], (cell, text)
        return
    table = [ts.tiles[t] for t in range(ts.size) if g.line.played >> t & 1]
    assert table
    for a, b in table:
        assert f"[{a}|{b}]" in text or f"[{b}|{a}]" in text, (a, b, text)


def test_render_words_counts_and_the_round_end():
    from domino_env.render.chain import tiles_text

    assert [tiles_text(k) for k in (0, 1, 5)] == ["no tiles", "1 tile", "5 tiles"]
    env = make("classic", 2, episode="round", render_mode="ansi")
    env.reset(seed=0)
    play_random(env, 10**4, random.Random(0))
    text = env.render()
    pips = env.unwrapped.game.result.hand_pips
    assert text.endswith(f"pips left: player_0 {pips[0]}, player_1 {pips[1]}"), text
    if 0 in pips:  # the winner went out
        assert f"player_{pips.index(0)}: no tiles" in text


@configs
def test_render_every_step_of_whole_matches(name, n, teams):
    """Every state of whole matches renders, round headers included: a log line for a later round's
    deal (``("deal", round_index)``) once crashed Blind, which read the round index as a seat."""
    env = make(name, n, teams, render_mode="ansi")
    rnd = random.Random(1)
    for seed in range(3):
        env.reset(seed=seed)
        while True:
            text = env.render()
            game = env.unwrapped.game
            if name not in GRID_VARIANTS:
                assert text.startswith(f"{name} - round {game.round_index + 1} - scores"), text
            if all(env.terminations.values()):
                break
            env.step(rnd.choice(legal(env)))


@variants
def test_render_human_prints(name, capsys):
    env = make(name, render_mode="human")
    env.reset(seed=0)
    capsys.readouterr()
    assert env.render() is None
    assert capsys.readouterr().out.strip()
    env.step(legal(env)[0])  # human mode also draws after each step
    assert capsys.readouterr().out.strip()
