"""The cheating Monte Carlo oracle of ``benchmarks/oracle.py``: it leaves the real game alone
and beats ``random``."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest

from domino_env.core.line import Line
from domino_env.core.state import State
from domino_env.core.tiles import mask_of
from domino_env.registry import raw_env
from domino_env.rules.chain import LineRules
from tests.support.helpers import load_script

oracle = load_script("oracle")


def snapshot(state: State) -> dict[str, Any]:
    """Everything about a state, by value."""
    values = {name: copy.deepcopy(value) for name, value in vars(state).items() if name != "line"}
    shared = ("tiles", "slots", "slot_moves", "firsts")  # the layout's constant tables
    values["line"] = {
        name: copy.deepcopy(getattr(state.line, name)) for name in Line.__slots__ if name not in shared
    }
    return values


@pytest.mark.parametrize("variant", ["classic", "blind", "metro"])
def test_rollouts_leave_the_real_state_untouched(variant: str) -> None:
    rules = oracle.variant_rules(variant)
    state = oracle.dealt_match(rules, 3)
    player = oracle.Oracle(rollouts=3)
    rng = random.Random(0)
    checked = 0
    while not state.round_over:
        before = snapshot(state)
        action = player(rules, state, rng)
        assert snapshot(state) == before
        assert action in state.legal
        checked += len(state.legal) > 1
        rules.apply(state, action)
    assert checked  # some decision had a choice, so rollouts ran


def test_oracle_beats_random_in_short_matches() -> None:
    rules = oracle.variant_rules("classic")
    wins, _ = oracle.head_to_head(rules, oracle.Oracle(rollouts=4), oracle.random_move, 6, seed=0)
    assert wins >= 5


def test_match_loop_deals_as_the_env() -> None:
    """A whole match runs to its target, and a seed deals what the env's reset(seed=...) deals."""
    rules = oracle.variant_rules("classic")
    state = oracle.play_match(rules, [oracle.random_move] * 2, 5, [random.Random(0), random.Random(1)])
    assert state.match_over
    assert max(state.scores) >= rules.match_target
    fresh = oracle.dealt_match(rules, 5)
    env = raw_env("classic", num_players=2)
    env.reset(seed=5)
    assert env.game.hands == fresh.hands and env.game.stock == fresh.stock


def fair_decisions(variant: str, deal_seed: int, seed: int) -> Iterator[tuple[LineRules, State, State]]:
    """Each decision of a round the fair oracle plays: (rules, the state, a determinized copy).
    After each, checks that the oracle's search left the state as it was."""
    rules = oracle.variant_rules(variant)
    state = oracle.dealt_match(rules, deal_seed)
    rng = random.Random(seed)
    while not state.round_over:
        sim = oracle.determinize(rules, state, rng)
        yield rules, state, sim
        before = snapshot(state)
        action = oracle.Oracle(rollouts=2, fair=True)(rules, state, rng)
        assert snapshot(state) == before
        rules.apply(state, action)


@pytest.mark.parametrize("variant", ["classic", "metro"])
def test_fair_determinization_keeps_what_the_player_sees(variant: str) -> None:
    checked = 0
    for rules, state, sim in fair_decisions(variant, 11, 2):
        seat, other = state.current, 1 - state.current
        assert sim.hands[seat] == state.hands[seat]
        assert sim.hands[other].bit_count() == state.hands[other].bit_count()
        assert len(sim.stock) == len(state.stock)
        assert sim.hands[other] | mask_of(sim.stock) == state.hands[other] | mask_of(state.stock)
        banned = 0  # tiles carrying a value the opponent was seen to lack
        for v in range(rules.tile_set.num_values):
            if state.voids[other] >> v & 1:
                banned |= rules.tile_set.suit_mask[v]
        held = state.hands[other]
        if rules.voids_hold_none and not held & banned:  # honoured whenever the truth honours them
            checked += bool(banned)
            assert (
                not sim.hands[other] & banned
                or ((mask_of(sim.stock) | sim.hands[other]) & ~banned).bit_count()
                < sim.hands[other].bit_count()
            )
    assert checked or not rules.voids_hold_none  # (Domino-Metro's voids: could not legally lay)


@pytest.mark.parametrize("variant", ["blind", "blind_blitz"])
def test_fair_determinization_of_rows_keeps_what_the_player_can_name(variant: str) -> None:
    changed = 0
    for rules, state, sim in fair_decisions(variant, 3, 4):
        seat, x = state.current, state.extra
        mover_row, new_mover_row = mask_of(x.rows[seat]), mask_of(sim.extra.rows[seat])
        assert state.hands[seat] & ~mover_row == sim.hands[seat] & ~new_mover_row  # turned up, arranging
        assert mask_of(state.stock) | sum(state.hands) == mask_of(sim.stock) | sum(sim.hands)
        assert len(sim.stock) == len(state.stock)
        for p in range(rules.num_players):
            rows, new_rows = x.rows[p], sim.extra.rows[p]
            assert len(new_rows) == len(rows)
            assert sim.hands[p].bit_count() == state.hands[p].bit_count()
            assert mask_of(new_rows) & ~sim.hands[p] == 0
            named = x.known[seat] if p == seat else x.seen[p]
            assert [t for t in rows if named >> t & 1] == [t for t in new_rows if named >> t & 1]
            if x.open[p]:
                assert new_rows == rows and sim.hands[p] == state.hands[p]
            changed += new_rows != rows
        if not state.line.count and state.required_lead >= 0:  # the world's opening tile is its leader's
            assert sim.leader == state.leader and sim.hands[sim.leader] >> sim.required_lead & 1
    assert changed


def test_the_fair_oracle_deals_by_the_rules_sampler(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fair player's worlds are the rules' own (``rules.sample_world``, the search agents'
    sampler), from the view of the seat to move: one per rollout."""
    rules = oracle.variant_rules("blind_blitz")
    state = oracle.dealt_match(rules, 3)
    while len(state.legal) < 2:
        rules.apply(state, state.legal[0])
    asked: list[int] = []
    sample_world = rules.sample_world

    def spy(world: State, view: Any, rng: random.Random) -> State:
        asked.append(view.seat)
        return sample_world(world, view, rng)

    monkeypatch.setattr(rules, "sample_world", spy)
    oracle.Oracle(rollouts=2, fair=True)(rules, state, random.Random(0))
    assert asked == [state.current] * 2 * len(state.legal)
