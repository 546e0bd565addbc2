"""A loaded kernel plays the loaded scalar games' rounds exactly: ``ChainKernel.load`` and its records.

Seeded random scalar games of every table the harness (``test_vector.py``) runs on the chain
kernel (and Classic's block game) give positions at random decisions: the env's own
games (``env.game`` clones: a shuffled deal, the stock in draw order) and worlds sampled for
the seat to move (``rules.sample_world``). A batch of them (with repeats) is loaded, then the
kernel and ``rules.apply`` on clones take the same random legal actions until every row's round
ends: at every step the mask, the seat to move, its hand and the observation (the scalar
encoder's, built afresh from the clone) agree, and where a round ends the kernel's
``round_standing``, ``round_match_over`` and ``round_outcome`` are the scalar state's
``search.standing``, ``match_over`` and ``rules.outcome(rules.match_keys(...))``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

import domino_env
from domino_env import vector
from domino_env.agents.search import standing
from domino_env.core.state import State
from domino_env.vector.chain import ChainKernel
from tests.env.test_vector import TABLES

ROWS = 96  # tables a load fills
LOADS = 3  # loads per table: ROWS * LOADS positions
POSITIONS = 96  # distinct positions collected per table (the rows repeat them)


def kernel_tables() -> list[tuple[str, dict[str, Any]]]:
    """The harness's kernel tables, one per table (the episode and reward modes do not change
    a round), and Classic's block game."""
    tables: list[tuple[str, dict[str, Any]]] = []
    for name, options in [*TABLES, ("classic", {"num_players": 2, "draw": False})]:
        table = {k: v for k, v in options.items() if k not in ("episode", "reward", "teams") or v is True}
        if vector.kernel_refusal(name, **table) is None and (name, table) not in tables:
            tables.append((name, table))
    return tables


KERNEL_TABLES = kernel_tables()


def table_id(table: tuple[str, dict[str, Any]]) -> str:
    name, options = table
    return name + "".join(f"-{k}={v}" for k, v in sorted(options.items()))


def positions(name: str, options: dict[str, Any], seed: int, count: int = POSITIONS) -> list[State]:
    """``count`` positions at random decisions of seeded random matches: the env's game (a
    clone) or a world sampled for the seat to move, half and half."""
    env = domino_env.make(name, **options)
    env.reset(seed=seed)
    rng = random.Random(seed)
    found: list[State] = []
    while len(found) < count:
        game = env.game
        if all(env.terminations.values()):
            env.reset(seed=rng.getrandbits(32))
            continue
        if rng.random() < 0.15:
            assert game.shuffled and game.chance is None and game.legal
            if rng.random() < 0.5:
                found.append(game.clone())
            else:
                found.append(env.rules.sample_world(game, env.view(game.current), random.Random(len(found))))
        env.step(rng.choice(game.legal))
    return found


def scalar_obs(env: Any, game: State) -> np.ndarray:
    """The scalar env's observation of ``game`` for its seat to move (a fresh encoder)."""
    env.encoder.forget()
    return np.asarray(env.encoder.observe(game, game.current))


def check_records(kernel: ChainKernel, rules: Any, row: int, sim: State, when: str) -> None:
    want_outcome = rules.outcome(rules.match_keys(sim)) if sim.match_over else [0.0] * rules.num_sides
    assert kernel.round_standing[row].tolist() == standing(rules, sim), f"round_standing of row {row} {when}"
    assert bool(kernel.round_match_over[row]) == sim.match_over, f"round_match_over of row {row} {when}"
    assert kernel.round_outcome[row].tolist() == want_outcome, f"round_outcome of row {row} {when}"


def play_loaded(name: str, options: dict[str, Any], games: list[State], seed: int) -> tuple[int, int]:
    """Load ``games`` and play every row's round out beside ``rules.apply`` on clones,
    comparing as the module docstring says; (rounds ended, matches ended)."""
    kernel = ChainKernel(name, len(games), episode="round", **options)  # (done: a round ended)
    env = domino_env.make(name, **options)
    rules = kernel.rules
    sims = [game.clone() for game in games]
    obs, mask, info = kernel.load(games)
    assert all(game == sim for game, sim in zip(games, sims, strict=True)), "load() changed a game"
    # (what no step of the round shows: the leader breaks a blocked tie between partners)
    assert kernel.leader.tolist() == [game.leader for game in games]
    rng = np.random.default_rng(seed)
    live = np.ones(len(games), bool)
    rounds = matches = 0
    for t in range(400):
        when = f"at step {t} of {name} {options}"
        for row in np.flatnonzero(live).tolist():
            sim = sims[row]
            want = np.zeros(kernel.num_actions, bool)
            want[sim.legal] = True
            assert np.array_equal(mask[row], want), f"mask of row {row} {when}"
            assert info["player"][row] == sim.current, f"player of row {row} {when}"
            assert kernel.hands[row].tolist() == sim.hands, f"hands of row {row} {when}"
            assert np.array_equal(obs[row], scalar_obs(env, sim)), f"observation of row {row} {when}"
        if not live.any():
            return rounds, matches
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int64)
        obs, mask, reward, done, info = kernel.step(actions)
        for row in np.flatnonzero(live).tolist():
            sim = sims[row]
            rules.apply(sim, int(actions[row]))
            assert done[row] == sim.round_over, f"done of row {row} {when}"
            by_side = rules.outcome(rules.round_keys(sim)) if sim.round_over else [0.0] * rules.num_sides
            want_reward = np.array([by_side[side] for side in rules.side_of], np.float32)
            assert np.array_equal(reward[row], want_reward), f"reward of row {row} {when}"
            if sim.round_over:
                live[row] = False
                check_records(kernel, rules, row, sim, when)
                rounds += 1
                matches += sim.match_over
    raise AssertionError(f"rounds still going after 400 steps: rows {np.flatnonzero(live).tolist()}")


@pytest.mark.parametrize("table", KERNEL_TABLES, ids=[table_id(t) for t in KERNEL_TABLES])
def test_loaded_games_play_their_rounds_exactly(table: tuple[str, dict[str, Any]]) -> None:
    name, options = table
    found = positions(name, options, seed=len(name) + options["num_players"])
    rng = random.Random(1)
    rounds = 0
    for load in range(LOADS):
        picks = [rng.choice(found) for _ in range(ROWS)]  # (repeats: one game in several rows)
        ended, _ = play_loaded(name, options, picks, seed=load)
        rounds += ended
    assert rounds == ROWS * LOADS


def test_a_match_ending_round_is_recorded() -> None:
    """Positions late in All Fives and Classic matches: some rounds end the match (by the count
    mid-round too), and the records say so."""
    for name in ("all_fives", "classic"):
        options = {"num_players": 2}
        env = domino_env.make(name, **options)
        rng = random.Random(5)
        late: list[State] = []
        for seed in range(40):
            env.reset(seed=seed)
            kept: list[State] = []
            while not all(env.terminations.values()):
                kept.append(env.game.clone())
                env.step(rng.choice(env.game.legal))
            late += kept[-6:]
        _, matches = play_loaded(name, options, late, seed=0)
        assert matches > 10, f"{name}: only {matches} of the {len(late)} loaded rounds ended the match"


def test_legal_points_are_the_rules_immediate_points() -> None:
    for name, zero in (("all_fives", False), ("classic", True)):
        options = {"num_players": 3}
        games = positions(name, options, seed=3, count=80)
        kernel = ChainKernel(name, len(games), **options)
        _, mask, _ = kernel.load(games)
        rows, actions, points = kernel.legal_points()
        assert points.dtype == np.int64
        assert np.array_equal(np.stack([rows, actions]), np.stack(np.nonzero(mask)))
        want = [
            kernel.rules.immediate_points(games[r], a)
            for r, a in zip(rows.tolist(), actions.tolist(), strict=True)
        ]
        assert points.tolist() == want
        assert (not any(want)) == zero
        rng = np.random.default_rng(0)  # after a step too (new rounds included)
        for _ in range(10):
            mask = kernel.step(np.array([rng.choice(np.flatnonzero(row)) for row in mask]))[1]
        rows, actions, points = kernel.legal_points()
        assert np.array_equal(np.stack([rows, actions]), np.stack(np.nonzero(mask))) and (points >= 0).all()


def test_legal_points_need_dealt_tables() -> None:
    with pytest.raises(ValueError, match=r"legal_points\(\) needs dealt tables"):
        ChainKernel("all_fives", 4, num_players=2).legal_points()


def test_without_observing_the_game_is_the_same() -> None:
    name, options = "osel", {"num_players": 3}
    games = positions(name, options, seed=4, count=40)
    seen, blind = ChainKernel(name, 40, **options), ChainKernel(name, 40, **options)
    blind.observing = False
    obs, mask, info = seen.load(games)
    no_obs, same_mask, same_info = blind.load(games)
    assert obs.shape == (40, seen.observation_size)
    assert no_obs.shape == (40, 0) and no_obs.dtype == np.float32
    assert np.array_equal(mask, same_mask) and np.array_equal(info["player"], same_info["player"])
    rng = np.random.default_rng(4)
    for _ in range(60):  # (rounds end and new ones are dealt on the way)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        obs, mask, reward, done, info = seen.step(actions)
        no_obs, same_mask, same_reward, same_done, same_info = blind.step(actions)
        assert obs.shape == (40, seen.observation_size) and no_obs.shape == (40, 0)
        assert np.array_equal(mask, same_mask) and np.array_equal(reward, same_reward)
        assert np.array_equal(done, same_done) and np.array_equal(info["player"], same_info["player"])
    assert np.array_equal(seen.state(), blind.state())
    no_obs, same_mask, _ = blind.restore(seen.snapshot())
    assert no_obs.shape == (40, 0) and np.array_equal(same_mask, mask)


def test_bad_games_are_refused_and_change_nothing() -> None:
    options = {"num_players": 2}
    rules = ChainKernel("classic", 1, **options).rules
    games = positions("classic", options, seed=6, count=4)
    kernel, twin = ChainKernel("classic", 4, **options), ChainKernel("classic", 4, **options)
    _, mask, _ = kernel.reset(seed=0)
    twin.reset(seed=0)
    over = games[0].clone()
    while not over.round_over:
        rules.apply(over, over.legal[0])
    chance = rules.new_match()  # dealt at chance points: every draw is one too
    while chance.chance is None or chance.chance != "draw":
        if chance.chance is not None:
            rules.apply_chance(chance, rules.chance_outcomes(chance)[0][0])
        else:
            assert not chance.round_over, "no draw in the first round: pick another deal"
            rules.apply(chance, chance.legal[-1])
    unfixed = next(game for game in positions("classic", options, seed=7, count=20) if game.stock)
    unfixed = unfixed.clone()
    unfixed.shuffled = False
    fives = positions("all_fives", options, seed=6, count=1)[0]
    three = positions("classic", {"num_players": 3}, seed=6, count=1)[0]
    lying = games[1].clone()
    lying.legal = [a for a in range(kernel.num_actions) if a not in lying.legal][:1]
    for bad, why in [
        (games[:3], "one game a table: 3 games for 4 tables"),
        ([*games[:3], over], "game 3 is at the end of its round"),
        ([chance, *games[1:]], "game 0 waits on a chance point"),
        ([unfixed, *games[1:]], "game 0 has a stock whose order is not fixed"),
        ([games[0], fives, *games[2:]], "game 1 is not a game of this classic table"),
        ([*games[:2], three, games[3]], "game 2 is not a game of this classic table"),
        ([*games[:3], "a game"], "game 3 is a str"),
        ([games[0], lying, *games[2:]], "game 1's legal actions"),
    ]:
        with pytest.raises(ValueError, match=why):
            kernel.load(bad)  # type: ignore[arg-type]
        assert np.array_equal(kernel.state(), twin.state()), f"a refused load ({why}) changed the tables"
    rng = np.random.default_rng(6)  # the tables play on as if nothing was asked
    for _ in range(30):
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        got, want = kernel.step(actions), twin.step(actions)
        for a, b in zip(got[:4], want[:4], strict=True):
            assert np.array_equal(a, b)
        mask = got[1]
