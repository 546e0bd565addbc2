"""Properties of random games, for every variant and player count (hypothesis).

Each example plays a whole episode from a hypothesis-drawn seed, choosing random legal actions
with a hypothesis-drawn ``random.Random``, and checks an invariant at every decision.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import domino_env
from tests.support.variant_configs import CONFIGS, GRID_VARIANTS, assert_conserved, configs, tiles_on_table

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
RANDOMS = st.randoms(use_true_random=True)
MAX_DECISIONS = 5000  # a safety net: no match comes close


def examples(count: int):
    # No shrinking: a whole random match does not shrink usefully, and it would cost minutes on a
    # failure; the failing seeds are printed as drawn.
    return settings(max_examples=count, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))


def make(name: str, n: int, teams: bool, **opts: Any):
    return domino_env.make(name, num_players=n, teams=teams, **opts)


def play(env, rnd: random.Random, check: Callable[[Any, int], None] | None = None) -> list[int]:
    """Play random legal actions to the end of the episode; ``check(u, action)`` runs before each step."""
    u = env.unwrapped
    actions = []
    while not all(env.terminations.values()):
        assert len(actions) < MAX_DECISIONS, "episode does not end"
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = [int(a) for a in np.flatnonzero(mask)]
        assert legal, "a live agent has no legal action"
        action = rnd.choice(legal)
        if check is not None:
            check(u, action)
        env.step(action)
        actions.append(action)
    return actions


def side_pips(rules, hands: list[int]) -> list[int]:
    pips = [rules.tile_set.mask_pips(h) for h in hands]
    out = [0] * rules.num_sides
    for seat, p in enumerate(pips):
        out[rules.side_of[seat]] += p
    return out


def round_winner_side(rules, state) -> int | None:
    """The side that won a finished round, worked out from the hands alone."""
    out = [seat for seat, hand in enumerate(state.hands) if not hand]
    if out:
        assert len(out) == 1
        return rules.side_of[out[0]]
    pips = side_pips(rules, state.hands)
    fewest = [side for side, p in enumerate(pips) if p == min(pips)]
    return fewest[0] if len(fewest) == 1 else None


def state_fingerprint(env) -> tuple:
    u = env.unwrapped
    g = u.game
    obs = tuple(env.observe(a)["observation"].tobytes() for a in env.agents)
    table = (
        (tuple(g.grid.height), tuple(g.grid.value), tuple(g.grid.keys.items()))
        if u.rules.name in GRID_VARIANTS
        else (tuple(g.line.value), tuple(g.line.state))
    )
    return (
        tuple(g.hands),
        tuple(g.stock),
        tiles_on_table(g),
        table,
        tuple(g.scores),
        g.current,
        tuple(g.legal),
        len(g.events),
        g.round_index,
        env.agent_selection,
        tuple(sorted(env.terminations.items())),
        tuple(sorted(env.rewards.items())),
        obs,
        repr(u.public_state()),
    )


# --- tile conservation -------------------------------------------------------------------------


@configs
@examples(8)
@given(seed=SEEDS, rnd=RANDOMS)
def test_tiles_are_conserved(name, n, teams, seed, rnd):
    env = make(name, n, teams)
    env.reset(seed=seed)

    def check(u, action):
        assert_conserved(u)

    play(env, rnd, check)
    assert_conserved(env.unwrapped)


# --- the mask is exactly what step accepts ----------------------------------------------------


def chain_placements(u) -> set[int]:
    """Every placement of a tile in hand on an open end showing one of its halves (or any lead)."""
    game, rules = u.game, u.rules
    line, ts = game.line, rules.tile_set
    hand = game.hands[game.current]
    in_hand = [t for t in range(ts.size) if hand >> t & 1]
    if line.empty:
        if game.required_lead >= 0:
            return {rules.play_action(game.required_lead, 0)}
        return {rules.play_action(t, 0) for t in in_hand}
    return {
        rules.play_action(t, slot)
        for t in in_hand
        for slot in range(rules.num_slots)
        if line.state[slot] == 1 and line.value[slot] in ts.tiles[t]
    }


def classic_first_lead(u) -> int:
    """The tile Classic's first round opens with: the lowest double dealt, else the lowest tile."""
    ts = u.rules.tile_set
    dealt = set()
    for hand in u.game.hands:
        dealt |= {t for t in range(ts.size) if hand >> t & 1}
    doubles = [t for t in dealt if ts.is_double[t]]
    if doubles:
        return min(doubles, key=lambda t: ts.tiles[t])
    return min(dealt, key=lambda t: (ts.pips[t], ts.tiles[t][0]))


# Variants whose legal placements are exactly "a tile in hand on a matching open end".
PLACEMENT_ORACLES: dict[str, Callable[[Any], set[int]]] = {
    "classic": chain_placements,
    "all_fives": chain_placements,
}


@configs
@examples(6)
@given(seed=SEEDS, rnd=RANDOMS)
def test_mask_equals_accepted_actions(name, n, teams, seed, rnd):
    env = make(name, n, teams)
    env.reset(seed=seed)
    num_actions = env.unwrapped.rules.num_actions

    def check(u, action):
        game, rules = u.game, u.rules
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = [int(a) for a in np.flatnonzero(mask)]
        assert sorted(game.legal) == legal
        seat = game.current
        if name in PLACEMENT_ORACLES:
            assert set(legal) == PLACEMENT_ORACLES[name](u)
        if name == "classic" and game.line.empty and game.round_index == 0:
            assert legal == [rules.play_action(classic_first_lead(u), 0)]
            assert game.hands[seat] >> classic_first_lead(u) & 1
        original = state_fingerprint(env)
        for a in legal:
            clone = game.clone()
            rules.apply(clone, a)  # must not raise
            if rules.action_kind[a] == "play":
                tile = rules.action_tile[a]
                assert game.hands[seat] >> tile & 1
                assert not clone.hands[seat] >> tile & 1
                assert tiles_on_table(clone) >> tile & 1
        assert state_fingerprint(env) == original, "applying to a clone changed the game"
        unmasked = [a for a in range(num_actions) if not mask[a]]
        for a in rnd.sample(unmasked, min(3, len(unmasked))):
            with pytest.raises(ValueError):
                env.step(a)
            assert state_fingerprint(env) == original, f"rejected action {a} changed the state"

    play(env, rnd, check)


LINE_CONFIGS = [c for c in CONFIGS if c[0] not in GRID_VARIANTS]


@pytest.mark.parametrize(
    ("name", "n", "teams"),
    LINE_CONFIGS,
    ids=[f"{c[0]}-{c[1]}p{'-teams' if c[2] else ''}" for c in LINE_CONFIGS],
)
@examples(3)
@given(seed=SEEDS, rnd=RANDOMS)
def test_the_lines_cached_answers_are_a_plain_scan(name, n, teams, seed, rnd):
    """The line keeps its playable tiles until the ends change, walks only the slots opened so
    far and reads placements from move tables filled as hands are met: at every decision of
    every line game each answer equals a scan of every slot and every tile."""
    env = make(name, n, teams)
    env.reset(seed=seed)

    def check(u, action):
        line, ts = u.game.line, u.rules.tile_set
        ends = [s for s in range(line.num_slots) if line.state[s] == 1]
        assert line.open_slots() == ends
        assert line.open_values_mask() == sum({1 << line.value[s] for s in ends})
        assert line.playable_mask() == sum(
            1 << t for t in range(ts.size) if any(line.value[s] in ts.tiles[t] for s in ends)
        )
        for hand in [*u.game.hands, rnd.getrandbits(ts.size)]:
            plain = [
                t * line.num_slots + s
                for s in ends
                for t in range(ts.size)
                if hand >> t & 1 and line.value[s] in ts.tiles[t]
            ]
            assert line.placements(hand) == plain

    play(env, rnd, check)


# --- forced draws and passes ------------------------------------------------------------------


def fits(u, line, hand: int) -> bool:
    ts = u.rules.tile_set
    return any(
        hand >> t & 1 and line.state[slot] == 1 and line.value[slot] in ts.tiles[t]
        for t in range(ts.size)
        for slot in range(u.rules.num_slots)
    )


def check_forced_moves(u, action) -> None:
    """After a tile is laid, the next players draw (from the end of the stock) or pass only while
    nothing in hand fits, and the first player with a fitting tile is asked."""
    game, rules = u.game, u.rules
    n = rules.num_players
    actor = game.current
    logged = len(game.events)
    clone = game.clone()
    rules.apply(clone, action)
    events = clone.events[logged:]
    assert events[0][0] == "lay" and events[0][1] == actor
    line = clone.line  # no tile is laid after the first event, so the ends stay as they are now
    hands = list(game.hands)
    hands[actor] &= ~(1 << rules.action_tile[action])
    stock = list(game.stock)
    continues = rules.continues_turn
    goes_on = continues is not None and continues(clone, actor, rules.action_tile[action])
    seat = actor if goes_on else (actor + 1) % n
    for event in events[1:]:
        kind = event[0]
        if kind == "draw":
            assert rules.draws, "a block game drew a tile"
            assert event[1] == seat, f"seat {event[1]} drew out of turn"
            assert not fits(u, line, hands[seat]), "drew while holding a tile that fits"
            assert stock and event[2] == stock.pop(), "the drawn tile is not the next one in the stock"
            hands[seat] |= 1 << event[2]
        elif kind == "pass":
            assert event[1] == seat, f"seat {event[1]} passed out of turn"
            assert not fits(u, line, hands[seat]), "passed while holding a tile that fits"
            assert not (rules.draws and stock), "passed while the stock had tiles"
            seat = (seat + 1) % n
        else:
            assert kind in ("score", "round_end"), event
    assert hands == clone.hands
    assert stock == clone.stock
    if not clone.round_over:
        assert clone.current == seat
        assert fits(u, line, clone.hands[seat])


FORCED_CASES = [(*c, {}) for c in CONFIGS if c[0] in PLACEMENT_ORACLES] + [
    ("classic", n, False, {"draw": False}) for n in domino_env.VARIANTS["classic"].player_counts
]


@pytest.mark.parametrize(
    ("name", "n", "teams", "opts"),
    FORCED_CASES,
    ids=[f"{c[0]}-{c[1]}p{'-teams' if c[2] else ''}{'-block' if c[3] else ''}" for c in FORCED_CASES],
)
@examples(6)
@given(seed=SEEDS, rnd=RANDOMS)
def test_forced_draws_and_passes(name, n, teams, opts, seed, rnd):
    env = make(name, n, teams, **opts)
    env.reset(seed=seed)
    play(env, rnd, check_forced_moves)


# --- scores ------------------------------------------------------------------------------------


def classic_check(u, action):
    game, rules = u.game, u.rules
    before = game.scores[:]
    clone = game.clone()
    rules.apply(clone, action)
    if not clone.round_over:
        assert clone.scores == before, "classic scores changed in the middle of a round"
        return
    win = round_winner_side(rules, clone)
    pips = side_pips(rules, clone.hands)
    expected = [before[side] + (0 if side == win else pips[side]) for side in range(rules.num_sides)]
    assert clone.scores == expected


def all_fives_check(u, action):
    game, rules = u.game, u.rules
    before = game.scores[:]
    logged = len(game.events)
    clone = game.clone()
    rules.apply(clone, action)
    events = [e for e in clone.events[logged:] if e[0] == "score"]
    per_side = [0] * rules.num_sides
    for _, side, points, _reason in events:
        assert points > 0 and points % 5 == 0, events
        per_side[side] += points
    for side in range(rules.num_sides):
        change = clone.scores[side] - before[side]
        assert change % 5 == 0
        assert change == per_side[side], f"score change {change} of side {side} not logged: {events}"
    counts = [e for e in events if e[3] == "count"]
    assert len(counts) <= 1
    if counts:
        assert clone.events[logged][0] == "lay"
    reached = any(s >= rules.match_target for s in (before[i] + c for i, c in enumerate(per_side)))
    if clone.round_over and not reached:
        win = round_winner_side(rules, clone)
        ends = [e for e in events if e[3] != "count"]
        if win is None:
            assert not ends
        else:
            others = sum(p for side, p in enumerate(side_pips(rules, clone.hands)) if side != win)
            rounded = 5 * ((others + 2) // 5)
            assert sum(e[2] for e in ends if e[1] == win) == rounded
            assert all(e[1] == win for e in ends)


def grid_check(u, action):
    """3D dominoes: a tile scores what describe_action said (0 or 1) for its layer, nothing else
    changes the scores."""
    game, rules = u.game, u.rules
    before, seat = game.scores[:], game.current
    points = u.describe_action(action)["scores"]
    assert points in (0, 1)
    clone = game.clone()
    rules.apply(clone, action)
    expected = before[:]
    expected[seat] += points
    assert clone.scores == expected


def round_points(rules, hand: int) -> int:
    """Pips left in a hand, a hand of just 0-0 counting 10 (Osel's and Domino-Metro's count)."""
    return 10 if hand == 1 << rules.tile_set.ids[(0, 0)] else rules.tile_set.mask_pips(hand)


def osel_check(u, action):
    """Osel (its rule page's Scoring): nothing moves before a round ends; then each player's
    round points are written if its score is open, else open it when over 12 (remembered points
    written with them), else are remembered; going out before opening loses the remembered."""
    game, rules = u.game, u.rules
    before, remembered, opened = game.scores[:], game.extra.remembered[:], game.extra.opened[:]
    clone = game.clone()
    rules.apply(clone, action)
    if not clone.round_over:
        assert (clone.scores, clone.extra.remembered, clone.extra.opened) == (before, remembered, opened)
        return
    for seat, hand in enumerate(clone.hands):
        points = round_points(rules, hand)
        if opened[seat]:
            before[seat] += points
        elif not hand:
            remembered[seat] = 0
        elif points > 12:
            opened[seat], before[seat], remembered[seat] = True, before[seat] + remembered[seat] + points, 0
        else:
            remembered[seat] += points
    assert (clone.scores, clone.extra.remembered, clone.extra.opened) == (before, remembered, opened)


def metro_check(u, action):
    """Domino-Metro (its rule page's places and match): penalties move only when a game ends;
    then the Metro maker takes the last place and ``metro_penalty`` points, every other player
    with the worst place one, and with 3 players a domino-Metro takes its maker's earlier
    Metros' points away; the places left go by pips in hand, fewest first."""
    game, rules = u.game, u.rules
    before, metro_points = game.scores[:], game.extra.metro_points[:]
    clone = game.clone()
    rules.apply(clone, action)
    if not clone.round_over:
        assert clone.scores == before
        return
    n, ex = rules.num_players, clone.extra
    places, maker = ex.places, ex.metro_maker
    assert sorted(places)[0] == 1 and all(1 <= p <= n for p in places)
    holders = [s for s in range(n) if clone.hands[s] and s != maker]
    for s, t in itertools.permutations(holders, 2):  # fewer pips: a place as good or better
        if round_points(rules, clone.hands[s]) < round_points(rules, clone.hands[t]):
            assert places[s] < places[t]
    expected = before[:]
    if ex.domino_metro >= 0 and n == 3:
        expected[ex.domino_metro] -= metro_points[ex.domino_metro]
    for seat in range(n):
        if seat == maker:
            assert places[seat] == n
            expected[seat] += rules.metro_penalty
        elif places[seat] == max(places):
            expected[seat] += 1
    assert clone.scores == expected


SCORE_CHECKS = {
    "osel": osel_check,
    "metro": metro_check,
    "domino3d": grid_check,
    "classic": classic_check,
    "all_fives": all_fives_check,
    "blitz": classic_check,
    "blind_blitz": classic_check,
    "blind": classic_check,
    "cross": classic_check,
}


@configs
@examples(8)
@given(seed=SEEDS, rnd=RANDOMS)
def test_scores_move_by_the_rules(name, n, teams, seed, rnd):
    env = make(name, n, teams)
    env.reset(seed=seed)
    rule_check = SCORE_CHECKS[name]
    u = env.unwrapped
    steps = 0
    while not all(env.terminations.values()):
        assert steps < MAX_DECISIONS
        legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
        action = rnd.choice(legal)
        rule_check(u, action)
        clone = u.game.clone()
        u.rules.apply(clone, action)
        env.step(action)  # the env must score exactly as the rules did on the copy
        assert u.game.scores == clone.scores
        steps += 1
    scores = u.game.scores
    if name in GRID_VARIANTS:  # no target score: the game ends when nobody can move
        assert not u.game.stock
        return
    assert max(scores) >= u.rules.match_target
    if not u.rules.lower_score_wins:  # All Fives stops the moment a side reaches the target
        assert sorted(scores)[-2] < u.rules.match_target, "the match went on after a side reached the target"


# --- observations ------------------------------------------------------------------------------


def assert_rows_match_rebuild(env, u) -> None:
    fresh = u.encoder_class(u.rules, u.observer)
    for seat, agent in enumerate(env.possible_agents):
        expected = fresh.observe(u.game, seat)
        np.testing.assert_array_equal(u.encoder.observe(u.game, seat), expected, err_msg=f"seat {seat}")
        np.testing.assert_array_equal(env.observe(agent)["observation"], expected, err_msg=f"seat {seat}")


@configs
@examples(8)
@given(seed=SEEDS, rnd=RANDOMS, rate=st.floats(0.05, 0.6))
def test_incremental_observation_equals_rebuild(name, n, teams, seed, rnd, rate):
    env = make(name, n, teams)
    env.reset(seed=seed)

    def check(u, action):
        if rnd.random() < rate:
            assert_rows_match_rebuild(env, u)

    play(env, rnd, check)
    assert_rows_match_rebuild(env, env.unwrapped)


@configs
@examples(5)
@given(seeds=st.lists(SEEDS, min_size=2, max_size=3), rnd=RANDOMS, cut=st.integers(0, 60))
def test_incremental_observation_survives_reset(name, n, teams, seeds, rnd, cut):
    """One env reused over several episodes (some cut short) keeps its rows right."""
    env = make(name, n, teams, episode="round")
    u = env.unwrapped
    for seed in seeds:
        env.reset(seed=seed)
        assert_rows_match_rebuild(env, u)
        for _ in range(cut):
            if all(env.terminations.values()):
                break
            legal = [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
            env.step(rnd.choice(legal))
            assert_rows_match_rebuild(env, u)


# --- determinism -------------------------------------------------------------------------------


@configs
@examples(6)
@given(seed=SEEDS, action_seed=SEEDS)
def test_same_seed_same_game(name, n, teams, seed, action_seed):
    envs = [make(name, n, teams) for _ in range(2)]
    rnds = [random.Random(action_seed) for _ in range(2)]
    for env in envs:
        env.reset(seed=seed)
    first, second = envs
    steps = 0
    while True:
        assert first.agent_selection == second.agent_selection
        for agent in first.agents:
            a, b = first.observe(agent), second.observe(agent)
            np.testing.assert_array_equal(a["observation"], b["observation"])
            np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
        assert first.rewards == second.rewards
        assert first.terminations == second.terminations
        assert first.unwrapped.public_state() == second.unwrapped.public_state()
        if all(first.terminations.values()):
            break
        assert steps < MAX_DECISIONS
        actions = []
        for env, rnd in zip(envs, rnds, strict=True):
            mask = env.observe(env.agent_selection)["action_mask"]
            actions.append(rnd.choice([int(a) for a in np.flatnonzero(mask)]))
        assert actions[0] == actions[1]
        for env, action in zip(envs, actions, strict=True):
            env.step(action)
        steps += 1
    # and resetting with the same seed replays the same deal
    first.reset(seed=seed)
    fresh = make(name, n, teams)
    fresh.reset(seed=seed)
    assert first.unwrapped.public_state() == fresh.unwrapped.public_state()
    assert first.unwrapped.game.hands == fresh.unwrapped.game.hands
    assert first.unwrapped.game.stock == fresh.unwrapped.game.stock


# --- outcome rewards ---------------------------------------------------------------------------


@configs
@pytest.mark.parametrize("episode", ["match", "round"])
@examples(8)
@given(seed=SEEDS, rnd=RANDOMS)
def test_outcome_rewards_sum_to_zero(name, n, teams, episode, seed, rnd):
    env = make(name, n, teams, episode=episode)
    env.reset(seed=seed)
    actions = play(env, rnd)
    rules = env.unwrapped.rules
    final = {}
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        assert termination or truncation
        final[agent] = reward
        env.step(None)
    assert set(final) == set(env.possible_agents)
    assert env.unwrapped.outcomes() == [final[agent] for agent in env.possible_agents]
    by_side: dict[int, float] = {}
    for seat, agent in enumerate(env.possible_agents):
        side = rules.side_of[seat]
        assert -1.0 <= final[agent] <= 1.0
        if side in by_side:
            assert by_side[side] == final[agent], "partners got different rewards"
        by_side[side] = final[agent]
    assert len(by_side) == rules.num_sides
    assert abs(sum(by_side.values())) < 1e-9
    # outcomes() ranks the same whatever the env pays: a points env on the same game agrees
    points = make(name, n, teams, episode=episode, reward="points")
    points.reset(seed=seed)
    for action in actions:
        points.step(action)
    assert points.unwrapped.outcomes() == env.unwrapped.outcomes()


# --- points rewards ----------------------------------------------------------------------------


@configs
@pytest.mark.parametrize("episode", ["match", "round"])
@examples(4)
@given(seed=SEEDS, rnd=RANDOMS)
def test_points_rewards_add_up_to_the_scores(name, n, teams, episode, seed, rnd):
    """With reward="points", an agent's rewards over the episode sum to its side's score / target,
    signed so that more is better."""
    env = make(name, n, teams, episode=episode, reward="points")
    env.reset(seed=seed)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(MAX_DECISIONS):
        obs, reward, termination, truncation, _ = env.last()
        total[agent] += reward
        if termination or truncation:
            env.step(None)
        else:
            env.step(rnd.choice([int(a) for a in np.flatnonzero(obs["action_mask"])]))
    assert not env.agents
    u = env.unwrapped
    sign = -1.0 if u.rules.lower_score_wins else 1.0
    for seat, agent in enumerate(env.possible_agents):
        expected = sign * u.game.scores[u.rules.side_of[seat]] / u.rules.match_target
        assert total[agent] == pytest.approx(expected, abs=1e-9), agent
