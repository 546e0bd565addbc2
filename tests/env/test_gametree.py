"""The game tree as arrays (domino_env.gametree) against OpenSpiel walking the same game:
NashConv of uniform and of stochastic policies, CFR+'s iterates, and the partition into
information states, on every tiny and small table (and two 3-player tiny ones); the positions
agents are asked at; and tables it cannot walk refused with the reason."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import domino_env
from domino_env.gametree import GameTree, TooLarge
from tests.support.extras import extra
from tests.support.helpers import assert_killing_ends_them, children

extra("pyspiel")
from open_spiel.python import policy as openspiel_policy  # noqa: E402
from open_spiel.python.algorithms import cfr, exploitability  # noqa: E402

from domino_env.integrations.openspiel import load_game  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TINY = ["classic", "all_fives", "osel", "blitz", "metro"]
SMALL = [variant for variant in domino_env.VARIANTS if "small" in domino_env.spec(variant).presets]
TABLES = [(variant, "tiny", 2) for variant in TINY] + [(variant, "small", 2) for variant in SMALL]
TABLES += [("classic", "tiny", 3), ("all_fives", "tiny", 3)]  # (three sides: NashConv sums three)


def observed_policy(env: Any, observation: dict[str, np.ndarray]) -> dict[int, float]:
    """A stochastic policy of what the seat observes: each legal action weighted by a hash of
    the observation and the action (the same at every history of an information state)."""
    legal = np.flatnonzero(observation["action_mask"])
    seen = observation["observation"].tobytes()
    weights = np.array(
        [1 + hashlib.blake2b(seen + bytes([a % 256, a // 256])).digest()[0] for a in legal], float
    )
    return dict(zip(legal.tolist(), (weights / weights.sum()).tolist(), strict=True))


def policy_table(tree: GameTree, read: Any) -> np.ndarray:
    """The tree's policy of ``read(env, observation)`` at every information state."""
    env = domino_env.raw_env(tree.variant, **tree.options)
    policy = np.zeros(len(tree.actions))
    for ids, states in tree.positions(batch=97):
        for infoset, state in zip(ids, states, strict=True):
            env.restore(state, dict(env.np_random.bit_generator.state))
            read_here = read(env, env.observe(env.agent_selection))
            policy[tree.pairs([infoset] * len(read_here), list(read_here))] = list(read_here.values())
    return policy


class ObservedPolicy(openspiel_policy.Policy):
    """:func:`observed_policy` as OpenSpiel reads a policy."""

    def __init__(self, game: Any) -> None:
        super().__init__(game, list(range(game.num_players())))

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        env = state.env()
        return observed_policy(env, env.observe(env.agent_selection))


@pytest.fixture(scope="module", params=TABLES, ids=[f"{v}-{p}-{n}p" for v, p, n in TABLES])
def table(request: pytest.FixtureRequest) -> tuple[GameTree, Any]:
    variant, preset, players = request.param
    options = {"preset": preset, "num_players": players}
    return GameTree.build(variant, **options), load_game(variant, **options)


def test_uniform_play_has_openspiels_nash_conv(table: tuple[GameTree, Any]) -> None:
    """And each seat's best-response improvement, not only their sum."""
    tree, game = table
    expected = exploitability.nash_conv(game, openspiel_policy.UniformRandomPolicy(game), False)
    assert tree.nash_conv(tree.uniform()) == pytest.approx(expected.nash_conv, abs=1e-12)
    improvements = tree.best_response_values(tree.uniform()) - tree.values(tree.uniform())
    assert improvements == pytest.approx(expected.player_improvements, abs=1e-12)
    assert tree.values(tree.uniform()).sum() == pytest.approx(0.0, abs=1e-12)  # (zero-sum)


def test_a_stochastic_policy_has_openspiels_nash_conv(table: tuple[GameTree, Any]) -> None:
    tree, game = table
    if tree.size.decisions > 20_000:
        pytest.skip("OpenSpiel's walk with an env per state: the tiny tables and the smallest small ones")
    policy = policy_table(tree, observed_policy)
    tree.check_policy(policy)
    expected = exploitability.nash_conv(game, ObservedPolicy(game))
    assert tree.nash_conv(policy) == pytest.approx(expected, abs=1e-12)
    assert tree.nash_conv(policy) != pytest.approx(tree.nash_conv(tree.uniform()), abs=1e-6)


@pytest.mark.parametrize("variant", TINY)
def test_cfr_plus_iterates_as_openspiels(variant: str) -> None:
    tree, game = GameTree.build(variant, preset="tiny"), load_game(variant, preset="tiny")
    marks = [1, 2, 3, 5]
    _, curve = tree.cfr_plus(5, marks)
    solver = cfr.CFRPlusSolver(game)
    expected = []
    for iteration in range(1, 6):
        solver.evaluate_and_update_policy()
        if iteration in marks:
            expected.append(
                (iteration, pytest.approx(exploitability.nash_conv(game, solver.average_policy()), abs=1e-12))
            )
    assert curve == expected
    assert curve[-1][1] < curve[0][1] / 3


def test_cfr_plus_averages_are_cfr_plus_at_its_marks_in_one_run() -> None:
    tree = GameTree.build("classic", preset="tiny")
    marks = [1, 2, 4, 7]
    stepped = list(tree.cfr_plus_averages(7, [*marks, 9]))  # (a mark past the last: never reached)
    assert [t for t, _ in stepped] == marks
    for t, average in stepped:
        expected, curve = tree.cfr_plus(t, [t])
        assert np.array_equal(average, expected)  # bitwise: the same arithmetic
        assert curve == [(t, tree.nash_conv(average))]
    assert np.array_equal(tree.cfr_plus(0)[0], tree.uniform())


def openspiel_histories(game: Any) -> dict[tuple[int, ...], str]:
    """Every decision node of OpenSpiel's walk: its history (chance outcomes and actions) ->
    the information state string of the seat to move."""
    found: dict[tuple[int, ...], str] = {}

    def walk(state: Any) -> None:
        if state.is_terminal():
            return
        if state.is_chance_node():
            for outcome, _ in state.chance_outcomes():
                walk(state.child(outcome))
            return
        found[tuple(state.history())] = state.information_state_string(state.current_player())
        for action in state.legal_actions():
            walk(state.child(action))

    walk(game.new_initial_state())
    return found


def tree_histories(tree: GameTree) -> dict[tuple[int, ...], int]:
    """Every decision node of the tree: its history -> its information state."""
    paths: list[tuple[int, ...]] = [()]
    for node in range(1, len(tree.mover)):
        paths.append((*paths[tree.parent[node]], int(tree.action[node])))
    return {paths[n]: int(tree.infoset[n]) for n in np.flatnonzero(tree.mover >= 0)}


@pytest.mark.parametrize("variant", TINY)
def test_information_states_are_openspiels_partition(variant: str) -> None:
    tree = GameTree.build(variant, preset="tiny")
    strings = openspiel_histories(load_game(variant, preset="tiny"))
    ids = tree_histories(tree)
    assert ids.keys() == strings.keys()
    pairs = {(ids[h], strings[h]) for h in ids}
    assert len(pairs) == len(set(ids.values())) == len(set(strings.values())) == tree.size.information_states


def test_positions_are_one_history_of_each_information_state() -> None:
    tree = GameTree.build("all_fives", preset="tiny")
    got = [(ids, states) for ids, states in tree.positions(batch=100)]
    ids = np.concatenate([i for i, _ in got])
    assert sorted(ids.tolist()) == list(range(tree.size.information_states))
    assert all(len(i) <= 100 for i, _ in got)
    for infoset, state in zip(ids, [s for _, batch in got for s in batch], strict=True):
        assert state.current == tree.infoset_seat[infoset]
        assert sorted(state.legal) == tree.legal_actions(infoset).tolist()


def test_sizes_and_decisions_are_counted() -> None:
    tree = GameTree.build("classic", preset="tiny")
    size = tree.size
    assert (size.nodes, size.histories, size.decisions) == (
        len(tree.mover),
        int((tree.mover == -2).sum()),
        334,
    )
    assert "154 information states" in str(size)
    # every round of the tiny table takes 2 to 4 decisions
    assert 2 <= tree.expected_decisions(tree.uniform()) <= 4


@pytest.mark.parametrize(
    ("variant", "options", "message"),
    [
        ("blind", {"preset": "tiny"}, "seats name their own tiles, not blind"),
        ("domino3d", {}, "not domino3d"),
        ("classic", {"max_pip": 2, "hand_size": 2}, "plays whole matches; add episode=round"),
        ("classic", {"preset": "huge"}, "unknown preset 'huge'"),
    ],
)
def test_tables_it_cannot_walk_are_refused(variant: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GameTree.build(variant, **options)


def test_a_tree_too_large_is_refused_with_its_limit() -> None:
    with pytest.raises(TooLarge, match="more than 500 nodes"):
        GameTree.build("all_fives", preset="tiny", max_nodes=500)


def test_a_malformed_policy_is_refused() -> None:
    tree = GameTree.build("classic", preset="tiny")
    pairs = len(tree.actions)
    with pytest.raises(ValueError, match=rf"a policy is float\[{pairs}\]: one probability per legal"):
        tree.nash_conv(np.ones((3, 3)))
    negative = tree.uniform()
    negative[0] = -negative[0]
    with pytest.raises(ValueError, match="no action a negative probability"):
        tree.nash_conv(negative)
    with pytest.raises(ValueError, match="sum to 1 over each information state"):
        tree.nash_conv(tree.uniform() * 0.5)
    state = int(np.flatnonzero(np.diff(tree.starts) == 1)[0])
    illegal = next(a for a in range(tree.num_actions) if a not in tree.legal_actions(state))
    with pytest.raises(
        ValueError, match=rf"action {illegal} is not legal in information state {state}; legal: \["
    ):
        tree.pairs([state], [illegal])


def test_walking_in_processes_builds_the_same_tree() -> None:
    alone = GameTree.build("osel", preset="tiny", workers=1)
    shared = GameTree.build("osel", preset="tiny", workers=2)
    for name in ("levels", "mover", "parent", "action", "chance", "first", "count", "infoset", "pair"):
        assert np.array_equal(getattr(alone, name), getattr(shared, name)), name
    for name in ("terminals", "returns", "keys", "starts", "actions"):
        assert np.array_equal(getattr(alone, name), getattr(shared, name)), name


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_the_walkers_end_when_the_process_building_the_tree_is_killed() -> None:
    """Classic's medium table takes the two walkers most of a minute: killed a moment in, the
    main process leaves none of them walking on."""
    script = "from domino_env.gametree import GameTree\nGameTree.build('classic', preset='medium', workers=2)"
    main = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while len(walkers := children(main.pid)) < 2:
            assert main.poll() is None and time.monotonic() < deadline, "the walkers did not start"
            time.sleep(0.1)
        time.sleep(1)  # (their subtrees under way)
        assert_killing_ends_them(main, walkers)
    finally:
        main.kill()


TREES: dict[str, GameTree] = {}  # (built once for the examples)


@settings(max_examples=25, deadline=None)
@given(variant=st.sampled_from(TINY), seed=st.integers(0, 2**32 - 1))
def test_a_best_response_never_does_worse_than_the_policy(variant: str, seed: int) -> None:
    tree = TREES.setdefault(variant, GameTree.build(variant, preset="tiny", workers=1))
    weights = np.random.default_rng(seed).exponential(size=len(tree.actions))
    policy = weights / np.add.reduceat(weights, tree.starts[:-1])[tree.pair_state]
    values, best = tree.values(policy), tree.best_response_values(policy)
    assert np.all(best >= values - 1e-12)
    assert tree.nash_conv(policy) == pytest.approx(float((best - values).sum()), abs=1e-12)
    assert values.sum() == pytest.approx(0.0, abs=1e-12)


def test_a_full_table_is_refused_at_once_with_its_deals() -> None:
    with pytest.raises(TooLarge, match="137,680,171,200 deals a round, so more than 60,000,000 nodes"):
        GameTree.build("classic", num_players=2, episode="round")


# --- external-sampling MCCFR ---------------------------------------------------------------------


def random_policy(tree: GameTree, seed: int) -> np.ndarray:
    """A valid policy with every action's probability drawn at random (none zero)."""
    weights = np.random.default_rng(seed).exponential(size=len(tree.actions)) + 0.05
    return weights / np.add.reduceat(weights, tree.starts[:-1])[tree.pair_state]


@pytest.mark.parametrize("seat", [0, 1])
def test_sampled_regrets_are_unbiased_estimates_of_the_counterfactual_regrets(seat: int) -> None:
    tree = TREES.setdefault("all_fives", GameTree.build("all_fives", preset="tiny", workers=1))
    policy = random_policy(tree, seed=seat)
    exact, _ = tree._counterfactual_regrets(policy, seat)
    samples = 3000
    rng = np.random.default_rng(7)
    draws = np.zeros((samples, len(tree.actions)))
    total = np.zeros(len(tree.actions))
    for k in range(samples):  # (regret matching of the policy itself is the policy)
        tree._sampled_traversal(seat, policy, draws[k], total, rng)
    mine = tree.infoset_seat[tree.pair_state] == seat
    assert not draws[:, ~mine].any()  # only the traverser's regrets
    mean, spread = draws.mean(0), draws.std(0, ddof=1)
    single = (np.diff(tree.starts) == 1)[tree.pair_state]  # (no regret either way, up to rounding)
    assert np.abs(draws[:, single]).max() < 1e-12 and np.abs(exact[single]).max() < 1e-12
    varies = spread > 1e-9  # (the rest: one legal action, or states too rare to be sampled here)
    assert varies.sum() > 100
    error = (mean - exact)[varies] / (spread[varies] / np.sqrt(samples))  # in standard errors
    # unbiased: each pair's mean within 5 standard errors of the exact counterfactual regret
    # (the largest of 138 deviations: 2.8), their mean square about 1 (0.9 and 1.1)
    assert np.abs(error).max() < 5 and np.mean(error**2) < 2
    # ... which the sample tells from another policy's regrets (a mean square of hundreds)
    wrong, _ = tree._counterfactual_regrets(tree.uniform(), seat)
    assert np.mean(((mean - wrong)[varies] / (spread[varies] / np.sqrt(samples))) ** 2) > 50
    # the next seat's average-policy sums: its policy at its sampled nodes, nothing elsewhere
    other = tree.infoset_seat[tree.pair_state] == 1 - seat
    assert total[other].sum() > 0 and not total[~other].any()


@pytest.mark.parametrize("variant", ["classic", "all_fives"])
def test_external_sampling_gets_far_below_uniform_play(variant: str) -> None:
    tree = GameTree.build(variant, preset="tiny", workers=1)
    iterations = 2048
    average, curve = tree.external_sampling(iterations, [iterations], seed=1)
    tree.check_policy(average)
    ((t, touched, value),) = curve
    assert t == iterations and value == tree.nash_conv(average)
    assert value < tree.nash_conv(tree.uniform()) / 5  # (classic 0.0008 of 0.022, all_fives 0.04 of 0.29)
    # each traversal touches a sample: far fewer decision nodes than the tree's, per seat
    assert touched < iterations * tree.num_players * tree.size.decisions / 10


def test_external_sampling_repeats_with_its_seed() -> None:
    tree = GameTree.build("classic", preset="tiny", workers=1)
    runs = [list(tree.external_sampling_averages(64, [16, 64], seed)) for seed in (3, 3, 4)]
    assert [t for t, _, _ in runs[0]] == [16, 64]
    for (_, same, touched), (_, again, touched_again) in zip(runs[0], runs[1], strict=True):
        assert np.array_equal(same, again) and touched == touched_again  # bitwise
    assert not np.array_equal(runs[0][-1][1], runs[2][-1][1])
    # the touched counts grow with the iterations, each below the whole tree's per iteration
    (_, _, early), (_, _, late) = runs[0]
    assert 0 < early < late < 64 * tree.num_players * tree.size.decisions
