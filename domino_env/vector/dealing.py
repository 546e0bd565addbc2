"""Every table's shuffles and lots, drawn as the scalar env draws them, for many tables at once.

The scalar env seeds a numpy Generator (PCG64) for each episode (``seeding.np_random(seed)``),
shuffles the tile ids with it (``rules.shuffled_tiles``: ``Generator.shuffle``) and, where the
first leader is by lot, draws the lot from it (``Generator.integers``); a match's later rounds
go on with the same Generator. Seeding a Generator and shuffling with it, one table at a time
in Python, costs about 20 us a deal: more than a whole batched Classic step spends a table. So
here a table's Generator is six words in arrays (numpy's PCG64 state: the 128-bit state and
increment, and the buffered half of a 64-bit draw), and numpy's own algorithms are replayed on
them in a loop compiled by numba: SeedSequence's hash, the PCG64 step and its XSL-RR output,
``Generator.shuffle``'s Fisher-Yates with masked rejection, and Lemire's bounded integers for
the lot (about 0.2 us a deal). A loop, not array operations: each table's shuffle draws a
different number of words, and a step deals a few hundred tables at scattered rows.

numpy's own Generators are the plain path the compiled one must equal: every deal takes them
where a seed does not fit 64 bits, or where the compiled loop did not deal as numpy does on a
few seeds when the Dealer was built (a numpy that changed its algorithms).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from domino_env.vector.base import compiled

u64 = np.uint64
_M32 = u64(0xFFFFFFFF)
_S16, _S32, _S58, _S63, _ONE = u64(16), u64(32), u64(58), u64(63), u64(1)

# numpy's SeedSequence and PCG64 constants (numpy/random/bit_generator.pyx, pcg64.h)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = u64(0xCA01F9DD), u64(0x4973F715)
_PCG_MULT_HI, _PCG_MULT_LO = u64(2549297995355413924), u64(4865540595714422341)


def _hash_constants(start: int, multiplier: int, count: int) -> np.ndarray:
    """SeedSequence's running hash constant before and after each of ``count`` calls (it never
    depends on the entropy): uint64[count, 2]."""
    out, constant = [], start
    for _ in range(count):
        after = constant * multiplier & 0xFFFFFFFF
        out.append((constant, after))
        constant = after
    return np.array(out, u64)


# mix_entropy's 16 hashmix calls, and generate_state's 8 words
_HASH, _OUTPUT = _hash_constants(_INIT_A, _MULT_A, 16), _hash_constants(_INIT_B, _MULT_B, 8)


@compiled
def _mulhi(a: np.uint64, b: np.uint64) -> np.uint64:
    """The high 64 bits of ``a * b`` (the 32-bit halves' partial products, as Hacker's
    Delight's ``mulhu``)."""
    a0, a1, b0, b1 = a & _M32, a >> _S32, b & _M32, b >> _S32
    low = a1 * b0 + ((a0 * b0) >> _S32)
    middle = (low & _M32) + a0 * b1
    return a1 * b1 + (low >> _S32) + (middle >> _S32)


@compiled
def _step(hi: np.uint64, lo: np.uint64, inc_hi: np.uint64, inc_lo: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The 128-bit LCG step ``state * MULT + inc`` (mod 2**128) on (high, low) words."""
    new_lo = lo * _PCG_MULT_LO + inc_lo
    carry = u64(1) if new_lo < inc_lo else u64(0)
    return hi * _PCG_MULT_LO + lo * _PCG_MULT_HI + _mulhi(lo, _PCG_MULT_LO) + inc_hi + carry, new_lo


@compiled
def _seed(seed: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """(state high, state low, inc high, inc low) of ``PCG64(SeedSequence(seed))``: what
    gymnasium's ``seeding.np_random`` seeds. SeedSequence's ``mix_entropy`` (a seed below
    2**64 is two 32-bit words, the pool's other two zero) and ``generate_state(4, uint64)``,
    then ``pcg64_srandom_r``: ``inc = seq << 1 | 1``, ``state = (inc + init) * MULT + inc``."""
    pool = np.empty(4, np.uint64)
    words = (seed & _M32, seed >> _S32, u64(0), u64(0))
    call = 0
    for i in range(4):
        value = ((words[i] ^ _HASH[call, 0]) * _HASH[call, 1]) & _M32
        pool[i] = value ^ (value >> _S16)
        call += 1
    for src in range(4):
        for dst in range(4):
            if src != dst:
                value = ((pool[src] ^ _HASH[call, 0]) * _HASH[call, 1]) & _M32
                call += 1
                mixed = (_MIX_L * pool[dst] - _MIX_R * (value ^ (value >> _S16))) & _M32
                pool[dst] = mixed ^ (mixed >> _S16)
    state = np.empty(4, np.uint64)  # (init high, init low, seq high, seq low)
    for j in range(4):  # (8 uint32 words, little-endian pairs)
        low = ((pool[(2 * j) % 4] ^ _OUTPUT[2 * j, 0]) * _OUTPUT[2 * j, 1]) & _M32
        high = ((pool[(2 * j + 1) % 4] ^ _OUTPUT[2 * j + 1, 0]) * _OUTPUT[2 * j + 1, 1]) & _M32
        state[j] = (low ^ (low >> _S16)) | ((high ^ (high >> _S16)) << _S32)
    inc_hi = (state[2] << _ONE) | (state[3] >> _S63)
    inc_lo = (state[3] << _ONE) | _ONE
    sum_lo = inc_lo + state[1]
    sum_hi = inc_hi + state[0] + (u64(1) if sum_lo < inc_lo else u64(0))
    hi, lo = _step(sum_hi, sum_lo, inc_hi, inc_lo)
    return hi, lo, inc_hi, inc_lo


@compiled
def _next32(
    hi: np.uint64, lo: np.uint64, inc_hi: np.uint64, inc_lo: np.uint64, has: np.uint64, buf: np.uint64
) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """numpy's ``next_uint32``: the buffered upper half of the last draw, else a new draw's
    lower half (its upper half buffered); returns it and the stream after it (``hi``, ``lo``,
    ``has``, ``buf``). A buffer once read stays stored, as numpy leaves ``uinteger``."""
    if has:
        return buf, hi, lo, u64(0), buf
    hi, lo = _step(hi, lo, inc_hi, inc_lo)
    value, rotation = hi ^ lo, hi >> _S58  # XSL-RR
    value = (value >> rotation) | (value << ((u64(64) - rotation) & _S63))
    return value & _M32, hi, lo, u64(1), value >> _S32


@compiled
def _load(streams: np.ndarray, row: int) -> tuple[np.uint64, ...]:
    """Stream ``row``'s six words."""
    return (
        streams[row, 0],
        streams[row, 1],
        streams[row, 2],
        streams[row, 3],
        streams[row, 4],
        streams[row, 5],
    )


@compiled
def _shuffle(
    rows: np.ndarray, fresh: np.ndarray, seeds: np.ndarray, streams: np.ndarray, orders: np.ndarray
) -> None:
    """Row k of ``orders`` (int64[K, T]): ``Generator.shuffle`` of ``range(T)`` by stream
    ``rows[k]`` of ``streams`` (:class:`Streams` words; seeded by ``seeds[k]`` first where
    ``fresh[k]``), which moves past it. The shuffle is Fisher-Yates from the last position
    down, each swap's index drawn by ``random_interval``: a uint32 masked to the bits the
    position needs, redrawn while it is past the position."""
    num_tiles = orders.shape[1]
    for k in range(len(rows)):
        row = rows[k]
        if fresh[k]:
            streams[row, 0], streams[row, 1], streams[row, 2], streams[row, 3] = _seed(seeds[k])
            streams[row, 4] = streams[row, 5] = 0
        high, low, step_hi, step_lo, held, half = _load(streams, row)
        for t in range(num_tiles):
            orders[k, t] = t
        for i in range(num_tiles - 1, 0, -1):
            top = u64(i)
            mask = top | (top >> _ONE)
            mask |= mask >> u64(2)
            mask |= mask >> u64(4)
            mask |= mask >> u64(8)
            mask |= mask >> _S16
            while True:
                value, high, low, held, half = _next32(high, low, step_hi, step_lo, held, half)
                value &= mask
                if value <= top:
                    break
            j = np.int64(value)
            orders[k, i], orders[k, j] = orders[k, j], orders[k, i]
        streams[row, 0], streams[row, 1], streams[row, 4], streams[row, 5] = high, low, held, half


@compiled
def _lots(rows: np.ndarray, lot_size: int, streams: np.ndarray, lots: np.ndarray) -> None:
    """``lots[k]``: ``Generator.integers(lot_size)`` by stream ``rows[k]`` of ``streams``, which
    moves past it (``buffered_bounded_lemire_uint32``: a uint32 times the size, its high word,
    redrawn while the low word is under ``2**32 mod size``)."""
    size = u64(lot_size)
    threshold = (u64(1 << 32) - size) % size
    for k in range(len(rows)):
        row = rows[k]
        high, low, step_hi, step_lo, held, half = _load(streams, row)
        while True:
            value, high, low, held, half = _next32(high, low, step_hi, step_lo, held, half)
            scaled = value * size
            if (scaled & _M32) >= threshold:
                break
        lots[k] = np.int64(scaled >> _S32)
        streams[row, 0], streams[row, 1], streams[row, 4], streams[row, 5] = high, low, held, half


class Streams:
    """N Generators' PCG64 states as ``words``, uint64[N, 6], a row a Generator: the 128-bit
    state (high, low word), the increment (high, low), and numpy's buffered upper half of the
    last 64-bit draw (whether it holds one, and the half)."""

    def __init__(self, n: int) -> None:
        self.words = np.zeros((n, 6), u64)
        self.words[:, 3] = 1

    def __len__(self) -> int:
        return len(self.words)

    def state(self, row: int) -> dict[str, Any]:
        """Row ``row`` as numpy's ``bit_generator.state``."""
        hi, lo, inc_hi, inc_lo, has, buf = (int(word) for word in self.words[row])
        return {
            "bit_generator": "PCG64",
            "state": {"state": hi << 64 | lo, "inc": inc_hi << 64 | inc_lo},
            "has_uint32": has,
            "uinteger": buf,
        }

    def set_state(self, row: int, state: Mapping[str, Any]) -> None:
        """Set row ``row`` to numpy's ``bit_generator.state``; ValueError where it holds what no
        PCG64 state holds (ints: a 128-bit state and increment, a 0/1 flag, a 32-bit half)."""
        whole, inc = state["state"]["state"], state["state"]["inc"]
        has, half = state["has_uint32"], state["uinteger"]
        ints = all(isinstance(value, (int, np.integer)) for value in (whole, inc, has, half))
        if not (
            ints and 0 <= whole < 1 << 128 and 0 <= inc < 1 << 128 and has in (0, 1) and 0 <= half < 1 << 32
        ):
            raise ValueError(f"not a PCG64 state: {dict(state)!r}")
        low = 0xFFFFFFFFFFFFFFFF
        self.words[row] = (whole >> 64, whole & low, inc >> 64, inc & low, has, half)


def read_states(states: Any, count: int) -> Streams:
    """``count`` numpy PCG64 ``bit_generator.state`` dicts as :class:`Streams`; ValueError, and
    nothing read, where they are not that."""
    try:
        if len(states) != count:
            raise ValueError
        out = Streams(count)
        for row, state in enumerate(states):
            if state["bit_generator"] != "PCG64":
                raise ValueError
            out.set_state(row, state)
    except (KeyError, TypeError, ValueError, OverflowError, IndexError):
        raise ValueError(f"the snapshot's random states are not {count} PCG64 states") from None
    return out


Shuffle = Callable[[np.random.Generator], list[int]]


class Dealer:
    """The deals of ``num_envs`` tables, each drawn by its scalar env's Generator: a round's
    :meth:`shuffle`, then, where the rules draw the leader by lot, its :meth:`lots` from the
    same Generator. ``shuffle`` is the rules' own (``rules.shuffled_tiles``, the plain path;
    the compiled one replays ``Generator.shuffle`` of the ``num_tiles`` ids); a lot is
    ``Generator.integers(lot_size)``."""

    def __init__(self, num_envs: int, num_tiles: int, shuffle: Shuffle, lot_size: int) -> None:
        self.num_envs, self.num_tiles, self.lot_size, self._shuffle = num_envs, num_tiles, lot_size, shuffle
        self._streams = Streams(num_envs)  # (each table's Generator, as its last draw left it)
        self._generator = np.random.Generator(np.random.PCG64(0))  # (the plain path's, set per row)
        self.compiled = True  # (what the check runs)
        self.compiled = self._compiled_agrees()

    def _compiled_agrees(self) -> bool:
        """Whether the compiled loop deals as numpy does here: a few seeds, a lot after each
        shuffle, a new stream and then streams a deal left (some hold half a draw)."""
        seeds = np.array([0, 1, 12345, (1 << 64) - 1], u64)
        rows, fresh = np.arange(len(seeds)), np.ones(len(seeds), bool)
        generators = [seeding.np_random(int(seed))[0] for seed in seeds]
        tables, self._streams = self._streams, Streams(len(seeds))  # (the check's own streams)
        try:
            for _ in range(3):
                orders, lots = self.shuffle(rows, fresh, seeds), self.lots(rows)
                fresh[:] = False
                for k, rng in enumerate(generators):
                    if orders[k].tolist() != self._shuffle(rng) or lots[k] != rng.integers(self.lot_size):
                        return False
                    if self.state(k) != rng.bit_generator.state:
                        return False
            return True
        finally:
            self._streams = tables

    def state(self, table: int) -> dict[str, Any]:
        """Table ``table``'s Generator state, as numpy's ``bit_generator.state``."""
        return self._streams.state(table)

    def set_states(self, streams: Streams) -> None:
        """Put back every table's state (a restore: :func:`read_states` of what :meth:`state` gave)."""
        self._streams.words[:] = streams.words

    def shuffle(self, tables: np.ndarray, fresh: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """The shuffles of ``tables`` (int64[K], distinct), int64[K, T]: a new episode's where
        ``fresh`` (its Generator seeded by ``seeds``, uint64 or, past 64 bits, Python ints; read
        there), else the next round of the table's match; each table's Generator moves past it."""
        orders = np.empty((len(tables), self.num_tiles), np.int64)
        s = self._streams
        if self.compiled and seeds.dtype == u64:
            _shuffle(tables, fresh, seeds, s.words, orders)
            return orders
        for k, table in enumerate(tables.tolist()):
            rng = seeding.np_random(int(seeds[k]))[0] if fresh[k] else self._plain(table)
            orders[k] = self._shuffle(rng)
            s.set_state(table, rng.bit_generator.state)
        return orders

    def lots(self, tables: np.ndarray) -> np.ndarray:
        """Each of ``tables``' lot, int64[K] (``Generator.integers(lot_size)``, which draws
        nothing for a lot of one); each table's Generator moves past it."""
        lots = np.zeros(len(tables), np.int64)
        s = self._streams
        if self.lot_size == 1:
            return lots
        if self.compiled:
            _lots(tables, self.lot_size, s.words, lots)
            return lots
        for k, table in enumerate(tables.tolist()):
            rng = self._plain(table)
            lots[k] = rng.integers(self.lot_size)
            s.set_state(table, rng.bit_generator.state)
        return lots

    def _plain(self, table: int) -> np.random.Generator:
        """numpy's Generator, set to the table's stream (the plain path)."""
        self._generator.bit_generator.state = self._streams.state(table)
        return self._generator
