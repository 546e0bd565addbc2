"""The OpenSpiel adapter (domino_env.integrations.openspiel): OpenSpiel's own random-simulation
test on every variant and tiny table, move-for-move agreement with the environment on seeded
games, information states that hide what a seat cannot know, and NashConv of the uniform
policy against a best response computed here, independently, on the environment itself."""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest

import domino_env
from tests.support.extras import extra

pyspiel = extra("pyspiel")
openspiel = pytest.importorskip("domino_env.integrations.openspiel")

DEFAULT_TABLES = [(name, {"episode": "round"}) for name in domino_env.SPECS]
TINY_TABLES = [
    (name, {"preset": "tiny"}) for name, spec in domino_env.SPECS.items() if "tiny" in spec.presets
]
MATCH_TABLES = [
    ("classic", {"preset": "tiny", "episode": "match"}),
    ("metro", {"preset": "tiny", "episode": "match"}),
]
ALL_TABLES = DEFAULT_TABLES + TINY_TABLES + MATCH_TABLES
# 3D dominoes' tile ids across several sets, and without doubles (ids that skip kinds)
GRID_TABLES = [
    ("domino3d", {"episode": "round", "sets": 2, "board_size": 8}),
    ("domino3d", {"episode": "round", "no_doubles": True}),
]


def ids(tables: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items())}" for name, options in tables]


@pytest.mark.parametrize(("name", "options"), ALL_TABLES + GRID_TABLES, ids=ids(ALL_TABLES + GRID_TABLES))
def test_random_simulation(name: str, options: dict[str, Any]) -> None:
    """OpenSpiel's check of a game: random playouts, legal actions, chance, returns, observations."""
    game = openspiel.load_game(name, **options)
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
    info = game.get_type()
    assert info.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert info.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert info.utility == pyspiel.GameType.Utility.ZERO_SUM


def tile_id(rules: Any, name: str) -> int:
    return rules.tile_set.id_of(name)


def chance_kind(state: Any) -> str:
    outcome = state.chance_outcomes()[0][0]
    return state.action_to_string(pyspiel.PlayerId.CHANCE, outcome).split(":")[0]


def deal_outcomes(rules: Any, deal: dict[str, Any], grid: bool) -> list[int]:
    """The chance outcomes that deal ``deal`` (as ``rules.dealt`` writes it): each hand's tiles
    (in id order, or as listed where the order is part of the game), then a 3D game's start."""
    outcomes = []
    for hand in deal["hands"]:
        tiles = [tile_id(rules, t) for t in hand]
        outcomes += tiles if rules.ordered_hands else sorted(tiles)
    if grid:
        left, right = (int(v) for v in deal["start"].split("-"))
        outcomes.append(tile_id(rules, deal["start"]))
        if left != right:
            outcomes.append(int(left > right))  # the side it lies: turned when the larger value is left
        outcomes.append(deal["leader"])
    return outcomes


@pytest.mark.parametrize(("name", "options"), ALL_TABLES, ids=ids(ALL_TABLES))
def test_agrees_with_the_environment(name: str, options: dict[str, Any]) -> None:
    """The same seeded game in the env and in the adapter: same player, legal actions,
    observations for every seat, and returns, move for move."""
    rng = random.Random(7)
    for seed in range(3):
        env = domino_env.make(name, **options)
        env.reset(seed=seed)
        raw = env.unwrapped
        rules, grid = raw.rules, domino_env.spec(name).table == "grid"
        game = openspiel.load_game(name, **options)
        state = game.new_initial_state()
        deal: dict[str, Any] = {}
        queued: list[int] = []
        drawn = 0  # draws so far this round: chance gives the env's boneyard in its order
        while True:
            if not deal:  # a new round: read the env's deal at its first decision
                deal = rules.dealt(raw.game)
                queued, drawn = deal_outcomes(rules, deal, grid), 0
            while state.is_chance_node():  # (the last move may draw before the round ends)
                kind = chance_kind(state)
                if queued:
                    outcome = queued.pop(0)
                elif kind == "lot":
                    outcome = deal["leader"]
                else:
                    assert kind == "draw", kind
                    outcome, drawn = tile_id(rules, deal["boneyard"][drawn]), drawn + 1
                state.apply_action(outcome)
            if env.terminations[env.agent_selection]:
                break
            assert state.current_player() == raw.game.current
            assert state.legal_actions() == sorted(raw.game.legal)
            for p, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(state.observation_tensor(p), env.observe(agent)["observation"])
                np.testing.assert_array_equal(state.information_state_tensor(p), state.observation_tensor(p))
            action = rng.choice(sorted(raw.game.legal))
            round_before = raw.game.round_index
            env.step(action)
            state.apply_action(action)
            if raw.game.round_index != round_before:
                deal = {}
        assert state.is_terminal()
        assert state.returns() == pytest.approx(raw.outcomes())


def walk(state: Any, visit: Any) -> None:
    """Every decision node below ``state`` (each chance outcome, each legal action)."""
    if state.is_terminal():
        return
    if state.is_chance_node():
        assert sum(p for _, p in state.chance_outcomes()) == pytest.approx(1.0)
        for outcome, _ in state.chance_outcomes():
            walk(state.child(outcome), visit)
        return
    visit(state)
    for action in state.legal_actions():
        walk(state.child(action), visit)


@pytest.mark.parametrize(("name", "options"), TINY_TABLES, ids=ids(TINY_TABLES))
def test_information_states_are_consistent(name: str, options: dict[str, Any]) -> None:
    """Every state of an information state has the same player and legal actions, and the
    information state tensor is the env's observation of that seat."""
    if name in ("blind", "blind_blitz"):
        pytest.skip("a tree of ~20,000 decisions: covered by the random simulations")
    game = openspiel.load_game(name, **options)
    seen: dict[str, tuple[int, list[int]]] = {}

    def visit(state: Any) -> None:
        key = state.information_state_string()
        now = (state.current_player(), state.legal_actions())
        assert seen.setdefault(key, now) == now, key
        assert key.startswith(f"p{state.current_player()} ")

    walk(game.new_initial_state(), visit)
    assert len(seen) > 100


def test_information_state_hides_the_other_hand() -> None:
    """Two deals that differ only in the opponent's hand and the boneyard give the leader the
    same information state and tensor, until the opponent's moves tell them apart."""
    game = openspiel.load_game("classic", max_pip=3, hand_size=2, draw=False, episode="round")
    rules = game.rules
    states = []
    for theirs in (["1-1", "2-3"], ["0-2", "3-3"]):
        state = game.new_initial_state()
        for hand in (["0-0", "0-3"], theirs):
            for t in sorted(tile_id(rules, x) for x in hand):
                state.apply_action(t)
        states.append(state)
    first, second = states
    assert first.current_player() == second.current_player() == 0  # 0-0: the lowest double leads
    assert first.information_state_string(0) == second.information_state_string(0)
    assert first.information_state_tensor(0) == second.information_state_tensor(0)
    assert first.information_state_string(1) != second.information_state_string(1)
    lead = rules.play_action(tile_id(rules, "0-0"), 0)
    for state in states:
        state.apply_action(lead)
    # seat 1 holds no 0 in the first deal (it passes), 0-2 in the second (it lays it)
    assert first.current_player() == 0 and second.current_player() == 1
    second.apply_action(second.legal_actions()[0])
    assert first.information_state_string(0) != second.information_state_string(0)


def uniform_best_response(name: str, options: dict[str, Any], seat: int) -> float:
    """The value to ``seat`` of its best response to a uniformly random opponent, computed on the
    environment alone: every deal (equally likely), the opponent's moves averaged, and at each of
    ``seat``'s decisions the action that is best over every deal it cannot tell apart (its hand
    and the moves so far: in a block game with every tile dealt, nothing else is hidden)."""
    env = domino_env.make(name, **options)
    rules = env.unwrapped.rules
    tiles = [f"{a}-{b}" for a, b in rules.tile_set.tiles]
    size = rules.hand_size
    deals = []
    for hand in itertools.combinations(tiles, size):
        rest = [t for t in tiles if t not in hand]
        deals.append({"hands": [list(hand), rest[:size]], "boneyard": rest[size:]})

    def position(deal: dict[str, Any], moves: tuple[int, ...]) -> Any:
        env.reset(options={"deal": deal})
        for move in moves:
            env.step(move)
        return env.unwrapped

    def value(group: list[tuple[dict[str, Any], float]], moves: tuple[int, ...]) -> float:
        """Sum over the deals of ``group`` (each with its reach weight) of the best response's value."""
        total = 0.0
        by_mover: dict[int, list[tuple[dict[str, Any], float, list[int]]]] = {}
        for deal, weight in group:
            raw = position(deal, moves)
            if raw.terminations[raw.agent_selection]:
                total += weight * raw.outcomes()[seat]
                continue
            by_mover.setdefault(raw.game.current, []).append((deal, weight, sorted(raw.game.legal)))
        for mover, entries in by_mover.items():
            if mover == seat:  # the same hand and moves: one decision for all of them
                legal = entries[0][2]
                assert all(e[2] == legal for e in entries)
                total += max(value([(d, w) for d, w, _ in entries], (*moves, a)) for a in legal)
            else:
                children: dict[int, list[tuple[dict[str, Any], float]]] = {}
                for deal, weight, legal in entries:
                    for a in legal:
                        children.setdefault(a, []).append((deal, weight / len(legal)))
                total += sum(value(child, (*moves, a)) for a, child in children.items())
        return total

    by_hand: dict[tuple[str, ...], list[tuple[dict[str, Any], float]]] = {}
    for deal in deals:
        by_hand.setdefault(tuple(deal["hands"][seat]), []).append((deal, 1.0 / len(deals)))
    return sum(value(group, ()) for group in by_hand.values())


def test_nash_conv_of_uniform_play_matches_an_independent_best_response() -> None:
    """OpenSpiel's NashConv of the uniform policy on a small block table with every tile dealt
    equals the sum of the two best-response values computed on the environment (zero-sum)."""
    exploitability = pytest.importorskip("open_spiel.python.algorithms.exploitability")
    policy = pytest.importorskip("open_spiel.python.policy")
    dealt = {"max_pip": 2, "hand_size": 3, "draw": False, "episode": "round"}
    game = openspiel.load_game("classic", **dealt)
    expected = sum(uniform_best_response("classic", dealt, seat) for seat in (0, 1))
    got = exploitability.nash_conv(game, policy.UniformRandomPolicy(game))
    assert got == pytest.approx(expected, abs=1e-9)
    assert got > 0.1  # a real game: uniform play is far from an equilibrium


def test_cfr_plus_converges_on_the_tiny_table() -> None:
    cfr = pytest.importorskip("open_spiel.python.algorithms.cfr")
    exploitability = pytest.importorskip("open_spiel.python.algorithms.exploitability")
    game = openspiel.load_game("classic", preset="tiny")
    solver = cfr.CFRPlusSolver(game)
    first = None
    for _ in range(20):
        solver.evaluate_and_update_policy()
        if first is None:
            first = exploitability.nash_conv(game, solver.average_policy())
    last = exploitability.nash_conv(game, solver.average_policy())
    assert first is not None and last < first / 5 and last < 0.01


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        openspiel.load_game("chess")
    with pytest.raises(ValueError, match="unknown option"):
        openspiel.load_game("classic", colour="red")
    with pytest.raises(ValueError, match="unknown preset"):
        openspiel.load_game("cross", preset="tiny")
    game = openspiel.load_game("classic", preset="tiny")
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="chance outcome"):
        state.apply_action(99)
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    legal = state.legal_actions()
    illegal = next(a for a in range(game.num_distinct_actions()) if a not in legal)
    with pytest.raises(ValueError, match="illegal action"):
        state.apply_action(illegal)
    assert state.legal_actions() == legal  # nothing changed
    state.apply_action(legal[0])


def test_env_at_a_state_lets_project_agents_act() -> None:
    """``state.env()`` positions the environment there: a project agent picks a legal move."""
    from domino_env.agents import GreedyAgent

    game = openspiel.load_game("all_fives", preset="tiny")
    state = game.new_initial_state()
    agent = GreedyAgent(seed=0)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[-1][0])
            continue
        env = state.env()
        action = agent(env, env.observe(env.agent_selection))
        assert action in state.legal_actions()
        state.apply_action(action)
    assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])


@pytest.mark.parametrize(
    ("name", "options"), [("classic", {"episode": "round"}), ("blind_blitz", {"episode": "round"})]
)
def test_resampled_states_keep_the_information_state(name: str, options: dict[str, Any]) -> None:
    """IS-MCTS's resampling: the seat to move cannot tell the new state from the true one."""
    game = openspiel.load_game(name, **options)
    rng = np.random.RandomState(4)
    state = game.new_initial_state()
    checked = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, chances = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=chances)))
            continue
        player = state.current_player()
        for k in range(3):
            other = state.resample_from_infostate(player, lambda k=k: (k + 0.5) / 3)
            assert other.information_state_string(player) == state.information_state_string(player)
            assert other.legal_actions() == state.legal_actions()
            checked += 1
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert checked > 5


@pytest.mark.parametrize("name", list(domino_env.SPECS))
def test_each_variant_declares_the_action_kinds_the_adapter_hides(name: str) -> None:
    """``rules.private_action_kinds``: Blind blitz's ``arrange`` (which tile went where in the
    row), nothing elsewhere; another seat's information state names such a move by its kind
    alone, the mover's own by its action id."""
    game = openspiel.load_game(name, episode="round")
    rules = game.rules
    assert rules.private_action_kinds == ({"arrange"} if name == "blind_blitz" else set())
    assert rules.private_action_kinds <= set(rules.action_kind)
    if not rules.private_action_kinds:
        return
    rng = np.random.RandomState(2)
    state = game.new_initial_state()
    while state.is_chance_node() or rules.action_kind[state.legal_actions()[0]] != "arrange":
        outcomes, chances = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=chances)))
    mover = state.current_player()
    action = state.legal_actions()[-1]
    state.apply_action(action)
    assert f"({mover}, {action})" in state.information_state_string(mover)
    other = state.information_state_string(1 - mover)
    assert f"({mover}, 'arrange')" in other and f"({mover}, {action})" not in other


def test_resampling_asks_the_rules_sampler(monkeypatch: pytest.MonkeyPatch) -> None:
    """``resample_from_infostate`` deals by the rules' own sampler (``rules.sample_world``), the
    one the search agents use, with the view of the seat asked for."""
    game = openspiel.load_game("blind", episode="round")
    rules, asked = game.rules, []
    sample_world = rules.sample_world

    def spy(world: Any, view: Any, rng: random.Random) -> Any:
        asked.append(view.seat)
        return sample_world(world, view, rng)

    monkeypatch.setattr(rules, "sample_world", spy)
    rng = np.random.RandomState(0)
    state = game.new_initial_state()
    while state.is_chance_node():
        outcomes, chances = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=chances)))
    player = state.current_player()
    other = state.resample_from_infostate(player, lambda: 0.25)
    assert asked == [player]
    assert other.information_state_string(player) == state.information_state_string(player)


def test_openspiel_algorithms_run_unchanged() -> None:
    """IS-MCTS plays a whole round of All Fives; external-sampling MCCFR learns the tiny table."""
    ismcts = pytest.importorskip("open_spiel.python.algorithms.ismcts")
    mcts = pytest.importorskip("open_spiel.python.algorithms.mcts")
    mccfr = pytest.importorskip("open_spiel.python.algorithms.external_sampling_mccfr")
    exploitability = pytest.importorskip("open_spiel.python.algorithms.exploitability")
    policy = pytest.importorskip("open_spiel.python.policy")
    game = openspiel.load_game("all_fives", episode="round")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(
        game, evaluator, uct_c=2.0, max_simulations=20, random_state=np.random.RandomState(1)
    )
    rng = np.random.RandomState(2)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, chances = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=chances)))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])
    tiny = openspiel.load_game("classic", preset="tiny")
    np.random.seed(0)  # (the sampling solver draws from numpy's global stream)
    solver = mccfr.ExternalSamplingSolver(tiny, mccfr.AverageType.SIMPLE)
    for _ in range(500):
        solver.iteration()
    uniform = exploitability.nash_conv(tiny, policy.UniformRandomPolicy(tiny))
    assert exploitability.nash_conv(tiny, solver.average_policy()) < uniform / 4
