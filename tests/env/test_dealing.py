"""The batched dealer draws exactly what numpy's Generators draw (the plain path it must equal).

Each table of a :class:`~domino_env.vector.dealing.Dealer` stands for a scalar env's Generator:
a new episode's ``seeding.np_random(seed)``, then ``Generator.shuffle`` of the tile ids and,
where the rules say so, ``Generator.integers(lot_size)``; a match's next round goes on with the
same Generator. Here numpy's Generators play every table beside the dealer, round after round,
and the orders, the lots and the Generators' states must agree, whether the dealer drew them
in arrays (a wide batch), row by row (a narrow one), or redrew rows that ran past its arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils import seeding
from hypothesis import given, settings
from hypothesis import strategies as st

import domino_env
from domino_env import vector
from domino_env.vector import dealing
from domino_env.vector.dealing import Dealer


def shuffle_ids(num_tiles: int) -> Any:
    """The rules' shuffle (``ChainRules.shuffled_tiles``): ``Generator.shuffle`` of the ids."""

    def shuffle(rng: np.random.Generator) -> list[int]:
        order = list(range(num_tiles))
        rng.shuffle(order)
        return order

    return shuffle


def lot_when_first_is_even(orders: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """A lot rule that draws for some deals and not others (as an opening order does)."""
    return opens & (orders[:, 0] % 2 == 0)


def play_schedule(
    num_envs: int,
    num_tiles: int,
    lot_size: int,
    every_round: bool,
    seeds: list[int],
    next_rounds: Any,
) -> int:
    """Deal every table a new episode by ``seeds``, then the next rounds of the tables
    ``next_rounds(num_envs)`` lists, a batch after another, then new episodes again; compare
    each deal with numpy's. Returns how many deals were compared."""
    dealer = Dealer(
        num_envs, num_tiles, shuffle_ids(num_tiles), lot_size, lot_when_first_is_even, every_round
    )
    assert dealer._arrays  # (the arrays are what is compared: the plain path always agrees)
    tables = np.arange(num_envs)
    generators: list[np.random.Generator] = [np.random.Generator(np.random.PCG64()) for _ in tables]
    compared = 0

    def deal(rows: np.ndarray, fresh: np.ndarray, row_seeds: np.ndarray, next_seeds: Any) -> None:
        nonlocal compared
        orders, lots = dealer.deal(rows, fresh, row_seeds, next_seeds)
        for k, table in enumerate(rows.tolist()):
            if fresh[k]:
                generators[table] = seeding.np_random(int(row_seeds[k]))[0]
            rng = generators[table]
            want = shuffle_ids(num_tiles)(rng)
            opens = np.array([bool(fresh[k]) or every_round])
            drew = bool(lot_when_first_is_even(np.array([want]), opens)[0]) and lot_size > 1
            want_lot = int(rng.integers(lot_size)) if drew else -1
            assert orders[k].tolist() == want, f"table {table}: shuffle differs"
            assert int(lots[k]) == want_lot, f"table {table}: lot differs"
            assert dealer.state(table) == rng.bit_generator.state, f"table {table}: state differs"
            compared += 1

    first = np.asarray(seeds, dtype=object if max(seeds) >= 1 << 63 else np.int64)
    later = None if first.dtype == object else first + num_envs
    deal(tables, np.ones(num_envs, bool), first, later)
    for rows in next_rounds(num_envs):
        deal(rows, np.zeros(len(rows), bool), first[rows], later)
    if later is not None:
        deal(tables, np.ones(num_envs, bool), later, later + num_envs)
    return compared


def half_twice(num_envs: int) -> list[np.ndarray]:
    """Two next rounds of every other table."""
    return [np.arange(0, num_envs, 2)] * 2


def play_rounds(num_envs: int, num_tiles: int, lot_size: int, every_round: bool, seeds: list[int]) -> int:
    return play_schedule(num_envs, num_tiles, lot_size, every_round, seeds, half_twice)


@settings(max_examples=25, deadline=None)
@given(
    start=st.integers(0, 2**64 - 1 - 200),
    num_tiles=st.sampled_from([6, 10, 15, 28, 55]),
    lot_size=st.integers(1, 4),
    every_round=st.booleans(),
    wide=st.booleans(),
)
def test_the_dealer_draws_what_numpy_draws(
    start: int, num_tiles: int, lot_size: int, every_round: bool, wide: bool
) -> None:
    num_envs = 160 if wide else 5  # (wide: the arrays; narrow: numpy row by row)
    seeds = [start + k for k in range(num_envs)]
    assert play_rounds(num_envs, num_tiles, lot_size, every_round, seeds) >= 2 * num_envs


def test_rows_past_the_arrays_draws_are_redrawn_by_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for too few draws every row overruns the arrays; numpy redraws them all."""
    monkeypatch.setattr(dealing, "_draws_held", lambda num_tiles: 3)
    monkeypatch.setattr(Dealer, "_arrays_agree", lambda self: True)  # (the check would overrun too)
    assert play_rounds(160, 28, 2, False, list(range(160))) == 160 * 2 + 80 * 2


@pytest.mark.parametrize("ahead", [True, False])
def test_next_rounds_drawn_ahead_or_by_each_tables_generator_are_numpys(
    ahead: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A match's next rounds: drawn ahead for every table at once (in arrays where many are
    missing, else row by row) from enough tables on, else by each table's own Generator; every
    deal and state is numpy's, tables dealt in any order between new episodes."""
    monkeypatch.setattr(dealing, "_FEWEST_NEXT", 200 if ahead else 201)
    drawn: list[int] = []
    monkeypatch.setattr(Dealer, "_draw_next", _spy(Dealer._draw_next, drawn))

    def schedule(num_envs: int) -> list[np.ndarray]:
        first, second = np.arange(100), np.arange(100, num_envs)
        # 200 missing (arrays), 100 (row by row), none (drawn ahead), then 200 twice
        return [first, first, second, np.arange(num_envs), second]

    for lot_size, every_round in ((1, False), (2, True)):
        drawn.clear()
        assert play_schedule(200, 28, lot_size, every_round, list(range(5, 205)), schedule) == 200 * 2 + 600
        assert drawn == ([200, 100, 200, 200] if ahead else [])


def _spy(method: Any, missing: list[int]) -> Any:
    """``Dealer._draw_next``, noting how many next rounds each call draws."""

    def spied(self: Dealer) -> None:
        missing.append(int(np.count_nonzero(~self._next_drawn)))
        method(self)

    return spied


def kernel_decks() -> list[tuple[int, int]]:
    """(tiles shuffled, seats) of every table a kernel deals: each kernel variant's player
    counts, with and without its presets."""
    decks = set()
    for name, spec in domino_env.SPECS.items():
        for preset in [None, *spec.presets]:
            options = {} if preset is None else {"preset": preset}
            if vector.kernel_refusal(name, **options) is None:
                rules = domino_env.raw_env(name, **options).rules
                size = len(rules.shuffled_tiles(np.random.default_rng(0)))
                decks |= {(size, n) for n in spec.player_counts}
    return sorted(decks)


@pytest.mark.parametrize(("num_tiles", "lot_size"), kernel_decks())
@pytest.mark.parametrize("every_round", [False, True])
def test_the_arrays_agree_with_numpy_here(num_tiles: int, lot_size: int, every_round: bool) -> None:
    """The construction's check passes on this numpy for every deck and lot a kernel deals
    (else every deal takes the plain path: right, but as slow as the scalar env's)."""
    assert Dealer(4, num_tiles, shuffle_ids(num_tiles), lot_size, lot_when_first_is_even, every_round)._arrays
