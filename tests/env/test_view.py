"""A seat's view (``env.unwrapped.view(seat)``): what the seat knows, complete and leak-free."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

import domino_env
from domino_env.core.view import HIDDEN
from tests.support.helpers import check_seats_through_play, hidden_deal_positions, play_random
from tests.support.variant_configs import configs, fixed_deal_envs, seat_zero_deal, seat_zero_split


def check_view(env, seat: int) -> None:
    """The view's parts are consistent with each other and with what the env shows the seat."""
    raw = env.unwrapped
    view = raw.view(seat)
    rules, game = raw.rules, raw.game
    assert view.seat == seat and view.variant == rules.name
    assert view.hand == {
        t for t in range(rules.tiles_in_play.bit_length()) if rules.known_hand(game, seat) >> t & 1
    }
    assert view.hand_sizes == tuple(raw.public_state()["hand_sizes"])
    assert view.boneyard_size == raw.public_state()["boneyard_size"]
    assert view.scores == tuple(raw.public_state()["scores"])
    assert view.current_player == raw.public_state()["current_player"]
    # every tile in play is in exactly one of: a hand where it can be named (the seat's own
    # known tiles, or shown to all), the table, or the unseen pool; and the pool is the right size
    named = set().union(*view.known_hands)
    parts = [named, view.table, view.unseen]
    assert sum(len(p) for p in parts) == rules.tiles_in_play.bit_count()
    assert set().union(*parts) == {
        t for t in range(rules.tiles_in_play.bit_length()) if rules.tiles_in_play >> t & 1
    }
    hidden = sum(view.hand_sizes[s] - len(view.known_hands[s]) for s in range(view.num_players))
    assert len(view.unseen) == hidden + view.boneyard_size
    assert view.known_hands[seat] >= view.hand
    # the legal actions are the mask's, and only for the seat to move
    mask = env.observe(raw.possible_agents[seat])["action_mask"]
    assert view.legal_actions == tuple(int(a) for a in np.flatnonzero(mask))
    # no hidden tile in the events: a draw names a tile only the seat can place
    for event in view.events:
        if event[0] == "draw" and event[2] != HIDDEN:
            assert event[2] in view.hand | view.table | view.known_hands[event[1]]


@configs
def test_view_is_consistent_through_play(name, n, teams):
    env = domino_env.make(name, num_players=n, teams=teams)
    check_seats_through_play(env, lambda seat: check_view(env, seat), 3, random.Random(7), 6)


@configs
def test_observation_depends_only_on_what_the_seat_knows(name, n, teams):
    """At choices throughout a round, deals that give seat 0 the same view after the same
    actions give it the same observation: ``hidden_deal_positions`` asserts it for every deal it
    finds, and fails unless it finds four positions with another deal."""
    hidden_deal_positions(name, n, teams, want=4)


@configs
def test_view_depends_only_on_what_the_seat_knows(name, n, teams):
    """Deals that differ only in the other hands and the boneyard give seat 0 equal views."""
    views = [env.unwrapped.view(0) for env in fixed_deal_envs(name, n, teams)]
    for other in views[1:]:
        assert other == views[0]
    # sanity: a different own hand changes it
    own, rest = seat_zero_split(name, n, teams)
    size = len(own)
    swapped = [rest[0], *own[1:]]
    env = domino_env.make(name, num_players=n, teams=teams)
    hands = [swapped] + [[own[0], *rest[1:size]]] + [rest[i * size : (i + 1) * size] for i in range(1, n - 1)]
    env.reset(seed=0, options={"deal": seat_zero_deal(name, hands, rest[(n - 1) * size :])})
    if name != "blind":  # in Blind the seat cannot name its own tiles either
        assert env.unwrapped.view(0) != views[0]


def test_a_draw_is_named_only_to_the_drawer():
    env = domino_env.make("classic")
    # seat 0 holds nothing that fits the 6-6 seat 1 leads: it draws until something fits
    deal = {
        "hands": [
            ["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "1-1"],
            ["6-6", "1-2", "1-3", "1-4", "1-5", "2-2", "2-3"],
        ],
        "boneyard": ["2-4", "3-6"],
        "leader": 1,
    }
    env.reset(options={"deal": deal})
    env.step(next(m["action"] for m in env.unwrapped.legal_moves() if m["tile"] == (6, 6)))
    draws = [e for e in env.unwrapped.view(0).events if e[0] == "draw"]
    assert [e[2] for e in draws] == [
        env.unwrapped.rules.tile_set.id_of("2-4"),
        env.unwrapped.rules.tile_set.id_of("3-6"),
    ]
    assert [e[2] for e in env.unwrapped.view(1).events if e[0] == "draw"] == [HIDDEN, HIDDEN]


def test_view_is_read_only_and_checks_its_seat():
    env = domino_env.make("osel")
    with pytest.raises(ValueError, match="call reset"):
        env.unwrapped.view(0)
    env.reset(seed=0)
    view = env.unwrapped.view("player_1")
    assert view == env.unwrapped.view(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.seat = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        view.public["scores"] = [1, 2]  # type: ignore[index]
    for bad in (2, -1, "player_9", 1.0, True):
        with pytest.raises(ValueError, match=r"seat|agent"):
            env.unwrapped.view(bad)


def test_blind_view_shows_the_row_as_the_seat_knows_it():
    env = domino_env.make("blind_blitz", arrange="dealt")
    env.reset(seed=3)
    row = env.unwrapped.view(0).private["row"]
    assert len(row) == env.unwrapped.view(0).hand_sizes[0]
    assert all(t is not None for t in row)  # blind blitz: the seat looked at its tiles
    blind = domino_env.make("blind")
    blind.reset(seed=3)
    view = blind.unwrapped.view(1)  # seat 1 leads: its rightmost tile is turned up, for all to see
    up = blind.unwrapped.rules.tile_set.id_of(view.public["turned_up"])
    assert view.private["row"] == [None] * (view.hand_sizes[1] - 1)
    assert view.known_hands[1] == {up} and up not in view.unseen and not view.hand


@pytest.mark.parametrize("name", ["classic", "domino3d"])
def test_view_layout_is_a_copy_of_the_table(name):
    env = domino_env.make(name)
    env.reset(seed=5)
    play_random(env, 3, random.Random(0))
    raw = env.unwrapped
    view = raw.view(0)
    layout = raw.rules.layout(raw.game)
    assert view.layout == layout and view.layout is not layout
    before = raw.public_state()
    view.layout.reset()  # a sampler may change its copy freely
    assert raw.public_state() == before and raw.view(0) == view.__class__(**{**vars(view), "layout": layout})


def test_last_round_events_survive_the_next_deal():
    env = domino_env.make("classic", episode="match")
    env.reset(seed=2)
    rnd = random.Random(4)
    while env.unwrapped.view(0).round == 0:
        before = env.unwrapped.view(1).events
        play_random(env, 1, rnd)
    view = env.unwrapped.view(1)
    assert view.events[0] == ("deal", 1)
    assert view.last_round_events[: len(before)] == before  # the finished round, masked the same way
    assert view.last_round_events[-1][0] == "round_end"
    truth = env.unwrapped.game.last_round_events
    for seat in (0, 1):
        seen = env.unwrapped.view(seat).last_round_events
        for real, shown in zip(truth, seen, strict=True):
            if real[0] == "draw":  # named to the drawer only
                assert shown[2] == (real[2] if real[1] == seat else HIDDEN)
            else:
                assert shown == tuple(real)


@configs
def test_seat_text_shows_only_what_the_seat_knows(name, n, teams):
    env = domino_env.make(name, num_players=n, teams=teams)
    env.reset(seed=1)
    play_random(env, 4, random.Random(1))
    raw = env.unwrapped
    names = [f"P{s}" for s in range(n)]
    for seat in range(n):
        view = raw.view(seat)
        text = raw.seat_text(seat, names)
        for other in range(n):
            line = next(x for x in text.splitlines() if x[2:].startswith(f"{names[other]}: "))
            size = view.hand_sizes[other]
            if len(view.known_hands[other]) < size:  # a hand it cannot name whole: only its size
                assert line.endswith("no tiles" if size == 0 else "1 tile" if size == 1 else f"{size} tiles")
    assert raw.table_text(names).startswith(f"{name} - ")
    for event in raw.view(0).events:
        text = raw.event_text(event, names)
        assert text is None or isinstance(text, str)
