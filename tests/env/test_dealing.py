"""The batched dealer draws exactly what numpy's Generators draw (the plain path it must equal).

Each table of a :class:`~domino_env.vector.dealing.Dealer` stands for a scalar env's Generator:
a new episode's ``seeding.np_random(seed)``, then ``Generator.shuffle`` of the tile ids and,
where the rules say so, ``Generator.integers(lot_size)``; a match's next round goes on with the
same Generator. Here numpy's Generators play every table beside the dealer, round after round,
and the orders, the lots and the Generators' states must agree, whether the dealer drew them in
its compiled loop or (seeds past 64 bits, a compiled loop that failed its check) by numpy.
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
from domino_env.vector.base import compiled, episode_seed, episode_seeds
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
    compiled: bool = True,
) -> int:
    """Deal every table a new episode by ``seeds``, then the next rounds of the tables
    ``next_rounds(num_envs)`` lists, a batch after another, then new episodes again; compare
    each deal with numpy's. Returns how many deals were compared."""
    dealer = Dealer(num_envs, num_tiles, shuffle_ids(num_tiles), lot_size)
    assert dealer.compiled  # (the compiled loop is what is compared: the plain path is numpy's)
    dealer.compiled = compiled
    tables = np.arange(num_envs)
    generators: list[np.random.Generator] = [np.random.Generator(np.random.PCG64()) for _ in tables]
    compared = 0

    def deal(rows: np.ndarray, fresh: np.ndarray, row_seeds: np.ndarray) -> None:
        """A round's shuffles, then the lots the rule asks for, as a kernel deals them."""
        nonlocal compared
        orders = dealer.shuffle(rows, fresh, row_seeds)
        by_lot = np.flatnonzero(lot_when_first_is_even(orders, fresh | every_round))
        lots = np.full(len(rows), -1)
        lots[by_lot] = dealer.lots(rows[by_lot])
        for k, table in enumerate(rows.tolist()):
            if fresh[k]:
                generators[table] = seeding.np_random(int(row_seeds[k]))[0]
            rng = generators[table]
            want = shuffle_ids(num_tiles)(rng)
            opens = np.array([bool(fresh[k]) or every_round])
            drew = bool(lot_when_first_is_even(np.array([want]), opens)[0])
            want_lot = int(rng.integers(lot_size)) if drew else -1
            assert orders[k].tolist() == want, f"table {table}: shuffle differs"
            assert int(lots[k]) == want_lot, f"table {table}: lot differs"
            assert dealer.state(table) == rng.bit_generator.state, f"table {table}: state differs"
            compared += 1

    def as_seeds(values: list[int]) -> np.ndarray:  # (as the kernels' episode_seeds give them)
        return np.array(values, dtype=object if max(values, default=0) >= 1 << 64 else np.uint64)

    deal(tables, np.ones(num_envs, bool), as_seeds(seeds))
    for rows in next_rounds(num_envs):
        deal(rows, np.zeros(len(rows), bool), as_seeds([seeds[k] for k in rows.tolist()]))
    later = as_seeds([seed + num_envs for seed in seeds])
    deal(tables[::-1], np.ones(num_envs, bool), later[::-1])  # (in another order)
    return compared


def half_twice(num_envs: int) -> list[np.ndarray]:
    """Two next rounds of every other table, then one of the rest, in another order."""
    return [np.arange(0, num_envs, 2)] * 2 + [np.arange(num_envs - 1, 0, -2)]


@settings(max_examples=40, deadline=None)
@given(
    start=st.integers(0, 2**64 + 100),
    num_tiles=st.sampled_from([6, 10, 15, 28, 55]),
    lot_size=st.integers(1, 4),
    every_round=st.booleans(),
    num_envs=st.integers(1, 40),
)
def test_the_dealer_draws_what_numpy_draws(
    start: int, num_tiles: int, lot_size: int, every_round: bool, num_envs: int
) -> None:
    """Seeds up to past 64 bits (numpy's Generators deal those), any table count."""
    seeds = [start + k for k in range(num_envs)]
    compared = play_schedule(num_envs, num_tiles, lot_size, every_round, seeds, half_twice)
    assert compared == 2 * num_envs + len(range(0, num_envs, 2)) * 2 + len(range(num_envs - 1, 0, -2))


def test_the_plain_path_deals_what_numpy_draws() -> None:
    """With the compiled loop turned off (its check failed), numpy's Generators deal every row
    and the tables' streams move on as numpy's do."""
    for lot_size, every_round in ((1, False), (3, True)):
        assert (
            play_schedule(30, 28, lot_size, every_round, list(range(7, 37)), half_twice, compiled=False) > 60
        )


def test_a_compiled_loop_that_deals_otherwise_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """The construction's check catches a loop that is not numpy's (here, every lot one seat
    on), so every deal takes numpy's Generators instead."""
    lots = dealing._lots

    def one_on(rows: np.ndarray, lot_size: int, streams: np.ndarray, out: np.ndarray) -> None:
        lots(rows, lot_size, streams, out)
        out[:] = (out + 1) % lot_size

    monkeypatch.setattr(dealing, "_lots", one_on)
    assert not Dealer(4, 28, shuffle_ids(28), 2).compiled
    monkeypatch.setattr(dealing, "_lots", lots)
    assert Dealer(4, 28, shuffle_ids(28), 2).compiled


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
def test_the_compiled_loop_agrees_with_numpy_here(num_tiles: int, lot_size: int) -> None:
    """The construction's check passes on this numpy for every deck and lot a kernel deals
    (else every deal takes the plain path: right, but as slow as the scalar env's)."""
    assert Dealer(4, num_tiles, shuffle_ids(num_tiles), lot_size).compiled


@pytest.mark.parametrize("num_envs", [1, 3, 4])
def test_episode_seeds_stay_64_bits_up_to_the_last_seed_that_fits(num_envs: int) -> None:
    """Each table's seed as ``episode_seed`` names it; uint64 while the largest fits 64 bits
    (``2**64 - 1``), Python ints from one past it (``2**64`` would wrap to 0)."""
    episodes, tables = np.array([2] * num_envs), np.arange(num_envs)
    for base, fits in ((2**64 - 3 * num_envs, True), (2**64 - 3 * num_envs + 1, False)):
        seeds = episode_seeds(base, episodes, tables)
        assert seeds.dtype == (np.uint64 if fits else object)
        assert [int(seed) for seed in seeds] == [episode_seed(base, i, 2, num_envs) for i in range(num_envs)]
    assert max(int(seed) for seed in episode_seeds(2**64 - 3 * num_envs, episodes, tables)) == 2**64 - 1


def test_a_lot_redraws_a_word_below_the_threshold_as_numpy_does() -> None:
    """Lemire's rejection (a lot of 3 refuses a low word under 2**32 mod 3 = 1): a stream whose
    buffered half is 0 draws again, to numpy's lot and state."""
    dealer = Dealer(1, 28, shuffle_ids(28), 3)
    rng = seeding.np_random(5)[0]
    rng.bit_generator.state = {**rng.bit_generator.state, "has_uint32": 1, "uinteger": 0}
    dealer.set_states(dealing.read_states([rng.bit_generator.state], 1))
    assert dealer.lots(np.array([0]))[0] == rng.integers(3)
    assert dealer.state(0) == rng.bit_generator.state


def test_loops_compile_uncached_where_no_cache_is_writable(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba refuses ``cache=True`` at decoration where no cache folder is writable (a
    read-only install with no home): the loop is then compiled without a cache."""
    import numba

    njit = numba.njit

    def no_locator(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function 'add': no locator available for file 'x.py'")
        return njit(*args, **kwargs)

    monkeypatch.setattr(numba, "njit", no_locator)

    def add(a: int, b: int) -> int:
        return a + b

    assert compiled(add)(2, 3) == 5
