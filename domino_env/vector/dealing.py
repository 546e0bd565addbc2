"""Every table's shuffles and lots, drawn as the scalar env draws them, for many tables at once.

The scalar env seeds a numpy Generator (PCG64) for each episode (``seeding.np_random(seed)``),
shuffles the tile ids with it (``rules.shuffled_tiles``: ``Generator.shuffle``) and, where the
first leader is by lot, draws the lot from it (``Generator.integers``); a match's later rounds
go on with the same Generator. Seeding a Generator and shuffling with it, one table at a time
in Python, was about 40% of a batched Classic step where every episode is one round. Here a new
episode's Generator is six words in arrays (numpy's PCG64 state: the 128-bit state and
increment, and the buffered half of a 64-bit draw), and numpy's own algorithms are replayed on
them in array operations: SeedSequence's hash, the PCG64 step and its XSL-RR output,
``Generator.shuffle``'s Fisher-Yates with masked rejection, and Lemire's bounded integers for
the lot.

An array operation pays off only over many tables, and a step deals few. But a new episode's
deal is fixed by its seed, whatever the play, and a match's next round by the stream its last
deal left (nothing else draws from a table's Generator): so both are drawn ahead, and when a
table needs one that is not drawn yet, every table's missing one is drawn at once. Where the
tables are too few for that to pay (about a step's worth of next rounds goes missing at a
time), a match's next round comes from the table's own numpy Generator instead (set from the
arrays once a match), as do new episodes too few at once, a seed past 2**63 and a stream a
shuffle overran (the arrays hold a fixed number of draws): the plain path the arrays must
equal (checked at construction, on new streams and on streams a deal left: where they
differ, every deal takes it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium.utils import seeding

u32, u64 = np.uint32, np.uint64
_M32 = u64(0xFFFFFFFF)

# numpy's SeedSequence and PCG64 constants (numpy/random/bit_generator.pyx, pcg64.h)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _MASK32 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF
_PCG_MULT_HI, _PCG_MULT_LO = u64(2549297995355413924), u64(4865540595714422341)
# Below this many new deals at once, numpy's Generators row by row are as fast as the arrays
# (about 20 us a deal either way at 128 on this project's machine; 11 against 22 at 256).
_FEWEST = 128
# From this many tables on, a match's next rounds are drawn ahead in arrays; with fewer, too
# few go missing at once for that to pay, and each table's own Generator draws its next round
# (Classic and All Fives, whole matches: 12-50% more decisions/s at 4,096 and 16,384 tables in
# alternating runs on a loaded machine; drawing ahead at 1,024 was 6-11% slower).
_FEWEST_NEXT = 2048


def _hash_constants() -> list[tuple[int, int]]:
    """The hash constant before and after each of ``mix_entropy``'s 16 hashmix calls (they
    never depend on the entropy)."""
    out, constant = [], _INIT_A
    for _ in range(16):
        after = constant * _MULT_A & _MASK32
        out.append((constant, after))
        constant = after
    return out


_HASH = _hash_constants()


def _mulhi(a: np.ndarray, b: np.uint64) -> np.ndarray:
    """The high 64 bits of each ``a * b`` (uint64, exact: the 32-bit halves' partial products,
    their carries folded in as Hacker's Delight's ``mulhu`` does, in fewer operations)."""
    a0, a1 = a & _M32, a >> u64(32)
    b0, b1 = b & _M32, b >> u64(32)
    low = a1 * b0 + ((a0 * b0) >> u64(32))
    middle = (low & _M32) + a0 * b1
    return a1 * b1 + (low >> u64(32)) + (middle >> u64(32))


def _step(
    hi: np.ndarray,
    lo: np.ndarray,
    inc_hi: np.ndarray,
    inc_lo: np.ndarray,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The 128-bit LCG step ``state * MULT + inc`` (mod 2**128) on (high, low) word pairs, into
    ``out`` (high, low; not ``hi`` or ``lo`` themselves) if given: summed in place, fewer
    temporaries to allocate."""
    new_hi, new_lo = out if out is not None else (np.empty_like(hi), np.empty_like(lo))
    np.multiply(lo, _PCG_MULT_LO, out=new_lo)
    new_lo += inc_lo
    np.multiply(hi, _PCG_MULT_LO, out=new_hi)
    new_hi += lo * _PCG_MULT_HI
    new_hi += _mulhi(lo, _PCG_MULT_LO)
    new_hi += inc_hi
    new_hi += new_lo < inc_lo  # (the low word's carry)
    return new_hi, new_lo


def pcg64_states(seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(state high, state low, inc high, inc low) words of ``PCG64(SeedSequence(seed))`` for
    each seed (uint64[K]): what gymnasium's ``seeding.np_random`` seeds. SeedSequence's hash
    runs on all K at once (a seed below 2**64 is two 32-bit entropy words, the pool's other two
    zero); then ``pcg64_srandom_r``: ``inc = seq << 1 | 1``, ``state = (inc + init) * MULT + inc``."""
    words = [(seeds & _M32).astype(u32), (seeds >> u64(32)).astype(u32)]
    words += [np.zeros(len(seeds), u32)] * 2
    calls = iter(_HASH)

    def hashmix(value: np.ndarray) -> np.ndarray:
        before, after = next(calls)
        value = (value ^ u32(before)) * u32(after)
        return value ^ (value >> u32(16))

    pool = [hashmix(word) for word in words]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                mixed = u32(_MIX_L) * pool[dst] - u32(_MIX_R) * hashmix(pool[src])
                pool[dst] = mixed ^ (mixed >> u32(16))
    constant, state = _INIT_B, []
    for i in range(8):  # generate_state(4, uint64): 8 words, little-endian pairs
        value = pool[i % 4] ^ u32(constant)
        constant = constant * _MULT_B & _MASK32
        value = value * u32(constant)
        state.append((value ^ (value >> u32(16))).astype(u64))
    init_hi, init_lo, seq_hi, seq_lo = (state[2 * j] | (state[2 * j + 1] << u64(32)) for j in range(4))
    inc_hi, inc_lo = (seq_hi << u64(1)) | (seq_lo >> u64(63)), (seq_lo << u64(1)) | u64(1)
    sum_lo = inc_lo + init_lo
    sum_hi = inc_hi + init_hi + (sum_lo < inc_lo).astype(u64)
    hi, lo = _step(sum_hi, sum_lo, inc_hi, inc_lo)
    return hi, lo, inc_hi, inc_lo


class Streams:
    """N Generators' PCG64 states as arrays: ``hi``/``lo`` the state, ``inc_hi``/``inc_lo`` the
    increment, ``has`` and ``buf`` numpy's buffered upper half of the last 64-bit draw."""

    FIELDS = ("hi", "lo", "inc_hi", "inc_lo", "has", "buf")

    def __init__(self, n: int) -> None:
        self.hi, self.lo = np.zeros(n, u64), np.zeros(n, u64)
        self.inc_hi, self.inc_lo = np.zeros(n, u64), np.ones(n, u64)
        self.has, self.buf = np.zeros(n, bool), np.zeros(n, u64)

    def __len__(self) -> int:
        return len(self.hi)

    def take(self, rows: np.ndarray) -> Streams:
        out = Streams.__new__(Streams)
        for name in self.FIELDS:
            setattr(out, name, getattr(self, name).take(rows))
        return out

    def put(self, rows: np.ndarray, other: Streams) -> None:
        for name in self.FIELDS:
            getattr(self, name)[rows] = getattr(other, name)

    @classmethod
    def seeded(cls, seeds: np.ndarray) -> Streams:
        out = cls(len(seeds))
        out.hi, out.lo, out.inc_hi, out.inc_lo = pcg64_states(seeds.astype(u64))
        return out

    def state(self, row: int) -> dict[str, Any]:
        """Row ``row`` as numpy's ``bit_generator.state``."""
        return {
            "bit_generator": "PCG64",
            "state": {
                "state": int(self.hi[row]) << 64 | int(self.lo[row]),
                "inc": int(self.inc_hi[row]) << 64 | int(self.inc_lo[row]),
            },
            "has_uint32": int(self.has[row]),
            "uinteger": int(self.buf[row]),
        }

    def set_state(self, row: int, state: Mapping[str, Any]) -> None:
        words = state["state"]
        self.hi[row], self.lo[row] = words["state"] >> 64, words["state"] & 0xFFFFFFFFFFFFFFFF
        self.inc_hi[row], self.inc_lo[row] = words["inc"] >> 64, words["inc"] & 0xFFFFFFFFFFFFFFFF
        self.has[row], self.buf[row] = bool(state["has_uint32"]), state["uinteger"]


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


def _draws_held(num_tiles: int) -> int:
    """How many 64-bit draws the arrays hold for a shuffle of ``num_tiles`` and a lot: the
    uint32 reads' mean plus six standard deviations (each position's masked rejection takes a
    geometric number), halved; a row that needs more is redrawn by numpy."""
    mean = var = 1.0  # (the lot: about one read)
    for i in range(1, num_tiles):
        accept = (i + 1) / (1 << i.bit_length())
        mean, var = mean + 1 / accept, var + (1 - accept) / accept**2
    return int(mean + 6 * var**0.5) // 2 + 2


def _draw(
    streams: Streams, num_tiles: int, lot_size: int, opens: np.ndarray, needs_lot: LotRule
) -> tuple[np.ndarray, np.ndarray, Streams, np.ndarray]:
    """Each stream's shuffle of ``range(num_tiles)`` and, where ``needs_lot(orders, opens)``,
    its lot among ``lot_size`` (else -1), in array operations; returns the orders int64[N, T],
    the lots, the streams after them, and which rows ran past the draws the arrays hold (their
    results are not numpy's: redraw them by :func:`_draw_plain`). The arrays are laid out a
    draw (or a tile) a row, the tables along it, so each step reads and writes whole rows."""
    n, steps = len(streams), _draws_held(num_tiles)
    his, los = np.empty((steps, n), u64), np.empty((steps, n), u64)
    # The uint32 stream numpy's next_uint32 reads: the buffered half, then each draw's low and
    # high halves; a table starts past the buffer unless it holds one.
    halves = np.empty((2 * steps + 1, n), u64)
    halves[0] = streams.buf
    hi, lo = streams.hi, streams.lo
    for s in range(steps):
        hi, lo = _step(hi, lo, streams.inc_hi, streams.inc_lo, out=(his[s], los[s]))
        value, rotation = hi ^ lo, hi >> u64(58)  # XSL-RR
        value = (value >> rotation) | (value << ((u64(64) - rotation) & u64(63)))
        np.bitwise_and(value, _M32, out=halves[2 * s + 1])
        np.right_shift(value, u64(32), out=halves[2 * s + 2])
    flat, last, columns = halves.reshape(-1), 2 * steps, np.arange(n)
    at = np.where(streams.has, 0, 1) * n + columns  # (flat index of each table's next read)
    end = last * n
    limit = end + columns  # (each table's last read)

    def read(rows: np.ndarray) -> np.ndarray:
        """The next uint32 of ``rows``, advancing them (past the end: the last one again; the
        table is then marked overrun)."""
        here = at[rows]
        at[rows] = here + n
        return flat[np.minimum(here, end + rows)]

    # (the smallest dtype while shuffled: a byte a tile id, an eighth of the memory the swaps move)
    orders = np.repeat(np.arange(num_tiles, dtype=np.min_scalar_type(num_tiles)), n).reshape(num_tiles, n)
    tiles = orders.reshape(-1)
    for i in range(num_tiles - 1, 0, -1):  # random_interval(i): masked rejection
        mask = u64((1 << int(i).bit_length()) - 1)
        j = flat[np.minimum(at, limit)] & mask
        at += n
        rejected = np.flatnonzero(j > u64(i))
        while rejected.size:  # (a row past its draws reads its last again: let it through)
            j[rejected] = read(rejected) & mask
            rejected = rejected[(j[rejected] > u64(i)) & (at[rejected] <= end + rejected)]
        where = np.minimum(j, u64(i)).astype(np.int64) * n + columns  # (an overrun row's j: any)
        swapped = tiles[where]
        tiles[where] = orders[i]
        orders[i] = swapped
    orders = np.ascontiguousarray(orders.T, dtype=np.int64)
    lots = np.full(n, -1, np.int64)
    drawn = np.flatnonzero(needs_lot(orders, opens)) if lot_size > 1 else np.empty(0, np.int64)
    if drawn.size:  # buffered_bounded_lemire_uint32(lot_size - 1)
        size, threshold = u64(lot_size), u64(((1 << 32) - lot_size) % lot_size)
        scaled = read(drawn) * size
        retry = drawn[(scaled & _M32) < threshold]
        while retry.size:
            scaled[np.searchsorted(drawn, retry)] = again = read(retry) * size
            retry = retry[((again & _M32) < threshold) & (at[retry] <= end + retry)]
        lots[drawn] = (scaled >> u64(32)).astype(np.int64)
    # The state after the last uint32 read (index L = read - 1): (L + 1) // 2 draws; an odd L
    # leaves that draw's high half buffered, an even one the half it read still stored (numpy
    # keeps ``uinteger`` once read).
    read_count = at // n
    overrun = read_count > last
    read_count = np.minimum(read_count, last)
    draws = read_count // 2
    after = streams.take(columns)
    taken = np.flatnonzero(draws > 0)
    after.hi[taken], after.lo[taken] = his[draws[taken] - 1, taken], los[draws[taken] - 1, taken]
    after.has = read_count % 2 == 0
    after.buf = halves[np.where(after.has, read_count, np.maximum(read_count - 1, 0)), columns]
    return orders, lots, after, overrun


def _draw_plain(
    generators: list[np.random.Generator],
    shuffle: Callable[[np.random.Generator], list[int]],
    lot_size: int,
    opens: np.ndarray,
    needs_lot: LotRule,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_draw`'s orders and lots by numpy's Generators themselves, one row at a time
    (each Generator moves past them)."""
    orders = np.array([shuffle(rng) for rng in generators], np.int64).reshape(len(generators), -1)
    lots = np.full(len(generators), -1, np.int64)
    for k in np.flatnonzero(needs_lot(orders, opens)).tolist() if lot_size > 1 else ():
        lots[k] = int(generators[k].integers(lot_size))
    return orders, lots


def _states(generators: list[np.random.Generator]) -> Streams:
    """The Generators' states as :class:`Streams`."""
    out = Streams(len(generators))
    for k, rng in enumerate(generators):
        out.set_state(k, rng.bit_generator.state)
    return out


LotRule = Callable[[np.ndarray, np.ndarray], np.ndarray]


class Dealer:
    """The next deal of each of ``num_envs`` tables, as its scalar env's Generator draws it.

    ``shuffle`` is the rules' shuffle (``rules.shuffled_tiles``, for the plain path: the arrays
    replay ``Generator.shuffle`` of the ``num_tiles`` ids); ``needs_lot(orders, opens)`` says
    which deals the rules follow with a lot among ``lot_size`` seats (``opens``: the round
    opens a match, or opens by the rules' order every round: ``every_round``).
    """

    def __init__(
        self,
        num_envs: int,
        num_tiles: int,
        shuffle: Callable[[np.random.Generator], list[int]],
        lot_size: int,
        needs_lot: LotRule,
        every_round: bool,
    ) -> None:
        self.num_envs, self.num_tiles, self.lot_size = num_envs, num_tiles, lot_size
        self._shuffle, self._needs_lot, self._every_round = shuffle, needs_lot, every_round
        # Each table's next episode's deal, drawn ahead (by its seed: -1 none), and its match's
        # next round, drawn ahead from ``_streams`` where there are enough tables for that to
        # pay (``_next_drawn``: still from the current stream), else drawn by each table's own
        # numpy Generator (``_live``: the table's stream is there, not in ``_streams``).
        self._fresh = _Ahead(num_envs, num_tiles)
        self._fresh_seed = np.full(num_envs, -1, np.int64)
        self._ahead_next = num_envs >= _FEWEST_NEXT
        self._next = _Ahead(num_envs if self._ahead_next else 0, num_tiles)
        self._next_drawn = np.zeros(num_envs, bool)
        generators = 0 if self._ahead_next else num_envs
        self._generators = [np.random.Generator(np.random.PCG64(0)) for _ in range(generators)]
        self._live = np.zeros(num_envs, bool)
        # Each table's Generator state, as its last deal left it (where not ``_live``).
        self._streams = Streams(num_envs)
        self._scratch = np.random.Generator(np.random.PCG64(0))  # (the plain path's, set per row)
        self._arrays = self._arrays_agree()

    def _arrays_agree(self) -> bool:
        """Whether the arrays deal new episodes as numpy does here (a few seeds, a lot after
        each shuffle), leaving each Generator's state as numpy leaves it."""
        seeds = np.array([0, 1, 12345, (1 << 63) - 1], u64)
        opens = np.ones(len(seeds), bool)
        streams = Streams.seeded(seeds)
        generators = [seeding.np_random(int(seed))[0] for seed in seeds]
        for _ in range(3):  # (a new stream, then streams a deal left: some hold half a draw)
            orders, lots, streams, overrun = _draw(
                streams, self.num_tiles, self.lot_size, opens, self._needs_lot
            )
            plain = _draw_plain(generators, self._shuffle, self.lot_size, opens, self._needs_lot)
            states = _states(generators)
            same = np.array_equal(orders, plain[0]) and np.array_equal(lots, plain[1])
            if (
                not same
                or overrun.any()
                or any(streams.state(k) != states.state(k) for k in range(len(seeds)))
            ):
                return False
        return True

    def state(self, table: int) -> dict[str, Any]:
        """Table ``table``'s Generator state, as numpy's ``bit_generator.state``."""
        if self._live[table]:
            return dict(self._generators[table].bit_generator.state)
        return self._streams.state(table)

    def set_states(self, streams: Streams) -> None:
        """Put back every table's state (a restore: :func:`read_states` of what :meth:`state` gave)."""
        self._streams.put(np.arange(self.num_envs), streams)
        self._next_drawn[:] = self._live[:] = False

    def deal(
        self, tables: np.ndarray, fresh: np.ndarray, seeds: np.ndarray, next_seeds: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The deals of ``tables`` (int64[K], distinct): a new episode's where ``fresh`` (its
        Generator seeded by ``seeds``, read there), else the next round of the table's match;
        returns the orders int64[K, T] and the lots int64[K] (-1: none), and moves each table's
        Generator past them. ``next_seeds`` (int64[B], or None where unknown) is every table's
        next episode's seed, so that the deals drawn ahead are the ones they will need."""
        orders = np.empty((len(tables), self.num_tiles), np.int64)
        lots = np.empty(len(tables), np.int64)
        rows, row_seeds = tables[fresh], seeds[fresh]
        if rows.size:
            lacking = self._fresh_seed[rows] != row_seeds
            if lacking.any():
                self._draw_ahead(tables, rows[lacking], row_seeds[lacking], next_seeds)
            orders[fresh], lots[fresh] = self._fresh.orders.take(rows, axis=0), self._fresh.lots.take(rows)
            self._streams.put(rows, self._fresh.after.take(rows))
            self._fresh_seed[rows] = -1
            self._live[rows] = self._next_drawn[rows] = False  # (their next rounds: from these)
        later = np.flatnonzero(~fresh)  # (a match's next round)
        rows = tables[later]
        if rows.size and self._ahead_next:
            if not self._next_drawn[rows].all():
                self._draw_next()
            orders[later], lots[later] = self._next.orders.take(rows, axis=0), self._next.lots.take(rows)
            self._streams.put(rows, self._next.after.take(rows))
        elif rows.size:
            generators = []
            for table in rows.tolist():
                if not self._live[table]:
                    self._generators[table].bit_generator.state = self._streams.state(table)
                    self._live[table] = True
                generators.append(self._generators[table])
            opens = np.full(len(rows), self._every_round)
            orders[later], lots[later] = _draw_plain(
                generators, self._shuffle, self.lot_size, opens, self._needs_lot
            )
        self._next_drawn[tables[later]] = False  # (their streams moved on)
        return orders, lots

    def _draw_next(self) -> None:
        """Draw every table's next round that is not drawn yet, from the stream its last deal
        left (the next deal of a match that ends first is not used: it changes nothing)."""
        rows = np.flatnonzero(~self._next_drawn)
        opens = np.full(len(rows), self._every_round)
        plain = np.ones(len(rows), bool)
        if self._arrays and len(rows) >= _FEWEST:
            orders, lots, after, plain = _draw(
                self._streams.take(rows), self.num_tiles, self.lot_size, opens, self._needs_lot
            )
            self._next.orders[rows], self._next.lots[rows] = orders, lots
            self._next.after.put(rows, after)
        for k in np.flatnonzero(plain).tolist():  # (numpy's own Generator, set to the row's stream)
            row = int(rows[k])
            self._scratch.bit_generator.state = self._streams.state(row)
            orders, lots = _draw_plain(
                [self._scratch], self._shuffle, self.lot_size, opens[k : k + 1], self._needs_lot
            )
            self._next.orders[row], self._next.lots[row] = orders[0], lots[0]
            self._next.after.set_state(row, self._scratch.bit_generator.state)
        self._next_drawn[rows] = True

    def _draw_ahead(
        self, tables: np.ndarray, rows: np.ndarray, seeds: np.ndarray, next_seeds: np.ndarray | None
    ) -> None:
        """Draw the new episodes' deals that ``rows`` (of ``tables``, dealt now) lack, by
        ``seeds``, and, while at it, every other table's next episode's (by ``next_seeds``)."""
        if next_seeds is not None:
            busy = np.zeros(self.num_envs, bool)
            busy[tables] = True
            idle = np.flatnonzero(~busy & (self._fresh_seed != next_seeds) & (next_seeds >= 0))
            rows, seeds = np.concatenate([rows, idle]), np.concatenate([seeds, next_seeds[idle]])
        fits = seeds < 1 << 63  # (int64 seeds fit; larger ones come as Python ints)
        plain = np.ones(len(rows), bool)
        if self._arrays and len(rows) >= _FEWEST:
            opens = np.ones(len(rows), bool)
            streams = Streams.seeded(np.where(fits, seeds, 0))
            orders, lots, after, overrun = _draw(
                streams, self.num_tiles, self.lot_size, opens, self._needs_lot
            )
            self._fresh.orders[rows], self._fresh.lots[rows] = orders, lots
            self._fresh.after.put(rows, after)
            plain = overrun | ~fits
        slow = np.flatnonzero(plain)
        if slow.size:
            generators = [seeding.np_random(int(seeds[k]))[0] for k in slow.tolist()]
            opens = np.ones(len(slow), bool)
            orders, lots = _draw_plain(generators, self._shuffle, self.lot_size, opens, self._needs_lot)
            self._fresh.orders[rows[slow]], self._fresh.lots[rows[slow]] = orders, lots
            self._fresh.after.put(rows[slow], _states(generators))
        self._fresh_seed[rows] = np.where(fits, seeds, -1)  # (-1: not kept)


class _Ahead:
    """New episodes' deals drawn ahead, one a table: the order, the lot and the stream after them."""

    def __init__(self, num_envs: int, num_tiles: int) -> None:
        self.orders = np.zeros((num_envs, num_tiles), np.int64)
        self.lots = np.full(num_envs, -1, np.int64)
        self.after = Streams(num_envs)
