"""Classic's tables stepped together in numpy arrays: the batched kernel ``"chain"``.

B tables of one Classic table size (2-4 players, partners, draw or block, any set and hand
size) live in fixed-shape arrays, one row per table (P seats, D sides, T tiles, V values):

===========  ============  ===============================================================
array        shape         meaning
===========  ============  ===============================================================
hands        int64[B, P]   each seat's tiles as a bitmask (bit t: tile id t)
order        int64[B, T]   the round's deal as the scalar rules shuffled it: the hands, then
                           the boneyard in draw order
drawn        int64[B]      where the next draw is in ``order`` (T: the boneyard is empty)
played       int64[B]      the tiles on the table (a bitmask); ``count`` how many
ends         int64[B, 2]   the values the east and west ends show (-1 before the lead: a
                           Classic line has two ends and no spinner, doubles lie in line)
doubled      bool[B, 2]    the outermost tile of that end is a double
current      int64[B]      the seat to move; ``leader`` the round's leader, ``required``
                           the tile it must lead (-1: any), ``passes`` passes in a row
voids        int64[B, P]   per seat, the values (bit v) it was seen unable to play
scores       int64[B, D]   the match scores by side; ``start`` as the round began
===========  ============  ===============================================================

**A step** lays each table's tile (the lead sets both ends, a tile on an end leaves its
other half open there), ends the round of a table whose seat went out, and moves the rest on
to the next seat that can lay: a seat with nothing that fits draws (all the draws it needs
at once: up to the first tile of the boneyard that fits) or, with an empty boneyard or
``draw=False``, passes, and a full circle of passes blocks the round. Those are masked loops
over only the tables that need them (at most P passes). Round ends score by the rules
(pips in hand as penalties; a blocked round's winner the side with fewest pips), pay the
rewards as :class:`~domino_env.envs.base.DominoEnv` does, and deal the next round or episode
(autoreset, :mod:`domino_env.vector.base`). Observations are rebuilt from the arrays for the
seat to move, entry for entry as :class:`~domino_env.observation.chain.ChainEncoder` writes
them.

**Deals** are the scalar rules' own: each table keeps its scalar env's numpy Generator, seeded
at each episode as ``DominoEnv.reset`` seeds it (``seeding.np_random``: :func:`pcg64_states`
runs numpy's SeedSequence hash for all the new episodes at once and is checked against numpy
at construction), and at a round's start the rules shuffle the tiles with it
(``shuffled_tiles``, the only draw Classic's deal makes); the hands are the shuffle's first
tiles, a hand after another, the boneyard the rest in draw order (``deal_in_order``), and the
first round's leader holds the first dealt tile of ``opens.order`` (``opening``). That is the
only Python per table, once a round; an ordinary step is whole-array numpy.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import seeding

from domino_env.core.line import Spinner
from domino_env.registry import raw_env
from domino_env.rules.chain import ChainRules
from domino_env.rules.parts import LOWEST_DOUBLE_OPENS, winner_leads
from domino_env.rules.table import TableRules
from domino_env.vector.base import Info, VectorEnv, base_seed, checked_actions, episode_seed

_NO_END = -1  # an end not made yet (before the lead)
_TIE_KEY = 1 << 32  # a round's key: the winner's side first, then the score change


# numpy's SeedSequence and PCG64 seeding constants (numpy/random/bit_generator.pyx, pcg64.h)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _MASK32, _MASK128 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF, (1 << 128) - 1
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341


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


def pcg64_states(seeds: np.ndarray) -> list[tuple[int, int]]:
    """``(state, inc)`` of ``np.random.PCG64(np.random.SeedSequence(seed))`` for each seed
    (uint64[K]): what gymnasium's ``seeding.np_random`` seeds, the SeedSequence hash run on
    all K seeds at once (a seed below 2**64 is two 32-bit entropy words, the pool's other two
    zero). The kernel checks it against numpy at construction."""
    u32 = np.uint32
    words = [(seeds & _MASK32).astype(u32), (seeds >> np.uint64(32)).astype(u32)]
    words += [np.zeros(len(seeds), u32)] * 2
    calls = iter(_HASH)

    def hashmix(value: np.ndarray) -> np.ndarray:
        before, after = next(calls)
        value = (value ^ u32(before)) * u32(after)
        return value ^ (value >> u32(16))

    with np.errstate(over="ignore"):  # (uint32 arithmetic wraps, as numpy's C does)
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
            state.append((value ^ (value >> u32(16))).astype(np.uint64))
    halves = [(state[2 * j] | (state[2 * j + 1] << np.uint64(32))).tolist() for j in range(4)]
    out = []
    for high, low, seq_high, seq_low in zip(*halves, strict=True):  # pcg64_srandom_r
        inc = (((seq_high << 64) | seq_low) << 1 | 1) & _MASK128
        out.append((((inc + ((high << 64) | low)) * _PCG_MULT + inc) & _MASK128, inc))
    return out


def _spread(masks: np.ndarray) -> np.ndarray:
    """int64 masks below 2**32 with bit t moved to bit 2t (the bits between them zero)."""
    for shift, keep in _SPREAD:
        masks = (masks | (masks << shift)) & keep
    return masks


_SPREAD = [
    (16, 0x0000FFFF0000FFFF),
    (8, 0x00FF00FF00FF00FF),
    (4, 0x0F0F0F0F0F0F0F0F),
    (2, 0x3333333333333333),
    (1, 0x5555555555555555),
]


def _bits(masks: np.ndarray, width: int) -> np.ndarray:
    """uint8[..., width]: bit t of each int64 mask (``masks`` of any shape)."""
    masks = np.ascontiguousarray(masks, dtype=np.int64)
    as_bytes = masks.view(np.uint8).reshape(*masks.shape, 8)  # (little-endian: bit t is byte t//8)
    return np.unpackbits(as_bytes, axis=-1, bitorder="little")[..., :width]


class ChainKernel(VectorEnv):
    """B Classic tables in numpy arrays (the module docstring); built as the scalar env would be
    (``name`` and ``options`` as :func:`domino_env.make`'s). Every call returns new arrays."""

    backend = "chain"
    # The rule parts this kernel plays (rules.parts); a rules class with any other is refused.
    _PARTS: ClassVar[dict[str, Any]] = {
        "opens": LOWEST_DOUBLE_OPENS,
        "leads_next": winner_leads,
        "lay_scoring": None,
        "continues_turn": None,
        "seat_after": None,
        "spinner": Spinner.NONE,
        "face_down_doubles": False,
        "extra_actions": (),
        "tile_actions": (),
        "phases": ("lead",),
        "lower_score_wins": True,
        "voids_hold_none": True,
        "names_own_draws": True,
        "ordered_hands": False,
    }
    # Methods whose LineRules/ChainRules/TableRules versions the arrays replay: a rules class
    # that overrides one plays another game.
    _ENGINE_METHODS: ClassVar[tuple[str, ...]] = (
        "advance",
        "apply",
        "apply_extra",
        "blocked_winner",
        "can_draw",
        "end_round",
        "end_turn",
        "known_hands",
        "lay",
        "legal_actions",
        "match_finished",
        "match_keys",
        "next_seat",
        "outcome",
        "phase_flags",
        "placements",
        "players_in",
        "public_hands",
        "round_keys",
        "side_pips",
        "take_drawn",
        "went_out",
        # the deal (the kernel shuffles with the rules' ``shuffled_tiles`` and deals in order)
        "new_match",
        "start_round",
        "deal_from",
        "_deal",
        "deal_in_order",
        "dealt_from",
        "_dealt_out",
        "opening",
        "fixed_deal",
        "resolve",
    )

    @classmethod
    def supports(cls, rules: TableRules[Any], env_options: dict[str, Any]) -> str | None:
        """None if this kernel plays ``rules``' tables with ``env_options`` exactly, else why not."""
        kind = type(rules)
        if kind.__dict__.get("batched_kernel") != "chain":
            return f"{rules.name}'s rules class does not itself declare batched_kernel = 'chain'"
        if not isinstance(rules, ChainRules):
            return f"{rules.name} is not a chain game"
        for part, value in cls._PARTS.items():
            if getattr(kind, part) != value:
                return (
                    f"{rules.name} has its own {part} ({getattr(kind, part)!r}); the kernel plays Classic's"
                )
        for method in cls._ENGINE_METHODS:
            if getattr(kind, method) is not getattr(ChainRules, method):
                return f"{rules.name} overrides {method}: the chain kernel plays Classic's turn loop"
        if rules.num_slots != 2 or rules.tile_set.size > 62:
            return f"{rules.name}'s table is larger than the chain kernel's (2 ends, at most 62 tiles)"
        if env_options.get("illegal_action", "raise") != "raise":
            return 'the chain kernel raises on an illegal action: illegal_action="raise" only'
        if env_options.get("render_mode") is not None:
            return "the chain kernel renders nothing"
        return None

    def __init__(self, name: str, num_envs: int, **options: Any) -> None:
        probe = raw_env(name, **options)  # validates the options; the layouts are its own
        rules = probe.rules
        refusal = self.supports(
            rules,
            {
                "episode": probe.episode,
                "illegal_action": probe.illegal_action,
                "render_mode": probe.render_mode,
            },
        )
        blocks = ("hand", "table", "ends", "hand_sizes", "boneyard", "voids", "scores", "phase")
        if refusal is None and (probe.observer is not None or tuple(probe.observation_layout) != blocks):
            refusal = f"{name} has observation blocks of its own, which the chain kernel does not write"
        if refusal is not None:
            raise ValueError(f"the chain kernel cannot step this {name} table: {refusal}")
        assert isinstance(rules, ChainRules)
        self.name, self.options, self.num_envs = name, dict(options), int(num_envs)
        self.rules = rules
        ts = rules.tile_set
        n, T, V, D = rules.num_players, ts.size, ts.num_values, rules.num_sides
        self.num_players, self._T, self._V, self._D = n, T, V, D
        self.observation_size = int(probe.encoder.size)
        self.num_actions = int(rules.num_actions)
        self.state_size = int(probe.state_space.shape[0])
        self._layout = probe.observation_layout
        self._hand_then_table = self._layout["hand"].stop == self._layout["table"].start
        self._state_layout = probe.state_layout
        self._round_episode = probe.episode == "round"
        self._points = probe.reward_mode == "points"
        self._draws = bool(rules.draws)
        self._teams = rules.teams
        self._target = rules.match_target
        self._hand_size = rules.hand_size

        # --- lookup tables, once ---------------------------------------------------------
        self._seats = np.arange(n)
        self._next = (self._seats + 1) % n
        self._side_of = np.asarray(rules.side_of, np.int64)
        self._bit = np.asarray(ts.bit, np.int64)  # tile -> its mask
        self._lo = np.asarray([a for a, _ in ts.tiles], np.int64)
        self._hi = np.asarray([b for _, b in ts.tiles], np.int64)
        self._suit = np.asarray(ts.suit_mask, np.int64)  # value -> the tiles carrying it
        self._value_bit = np.left_shift(1, np.arange(V, dtype=np.int64))
        # action -> (tile, slot): the rules' own table
        self._action_tile = np.asarray(rules.action_tile, np.int64)
        self._action_slot = np.asarray(rules.action_slot, np.int64)
        # pips of the tiles a byte of a mask selects, per byte of the int64
        pips = np.zeros(64, np.int64)
        pips[:T] = ts.pips
        byte = np.arange(256)
        self._byte_pips = np.stack(
            [((byte[:, None] >> np.arange(8)) & 1) @ pips[8 * k : 8 * k + 8] for k in range(8)]
        )  # [8, 256]
        # The encoder's floats (its scales in float64, stored as float32, as it writes them).
        self._size_value = (np.arange(T + 1) * (1.0 / rules.hand_size)).astype(np.float32)
        self._stock_value = (np.arange(T + 1) * (1.0 / T)).astype(np.float32)
        self._score_scale = 1.0 / rules.match_target
        self._reward_scale = (-1.0 if rules.lower_score_wins else 1.0) / rules.match_target
        self._void_rows = _bits(np.arange(1 << V), V).astype(np.float32)  # value mask -> V flags
        # An end's features coded as one int: 4*value + 2*double + live; the last code: no end.
        width = V + 4
        self._slot_width = width
        slot_rows = np.zeros((4 * V + 1, width), np.float32)
        for v in range(V):
            for double in (0, 1):
                for live in (0, 1):
                    row = slot_rows[4 * v + 2 * double + live]
                    row[v], row[V], row[V + 2], row[V + 3] = 1.0, 1.0, double, live
        self._slot_rows = slot_rows
        self._no_end_code = 4 * V
        # The opening order's rank of each tile (``opens.order``: the lowest double first).
        opening = rules.opens.order(ts)  # type: ignore[misc]
        self._opening_rank = np.empty(T, np.int64)
        self._opening_rank[opening] = np.arange(T)

        # --- the tables --------------------------------------------------------------------
        B = self.num_envs
        self._rows = np.arange(B)
        self.hands = np.zeros((B, n), np.int64)
        self.order = np.zeros((B, T), np.int64)
        self.drawn = np.full(B, T, np.int64)
        self.played = np.zeros(B, np.int64)
        self.count = np.zeros(B, np.int64)
        self.ends = np.full((B, 2), _NO_END, np.int64)
        self.doubled = np.zeros((B, 2), bool)
        self.current = np.zeros(B, np.int64)
        self.leader = np.zeros(B, np.int64)
        self.required = np.full(B, -1, np.int64)
        self.passes = np.zeros(B, np.int64)
        self.voids = np.zeros((B, n), np.int64)
        self.scores = np.zeros((B, D), np.int64)
        self.start = np.zeros((B, D), np.int64)
        self.match_over = np.zeros(B, bool)
        self.episodes = np.zeros(B, np.int64)
        # Flat views and row offsets, for ``take`` on (table, seat) and (table, side).
        self._flat_hands, self._flat_voids = self.hands.reshape(-1), self.voids.reshape(-1)
        self._flat_scores = self.scores.reshape(-1)
        self._flat_ends, self._flat_doubled = self.ends.reshape(-1), self.doubled.reshape(-1)
        self._seat_base, self._side_base, self._end_base = self._rows * n, self._rows * D, self._rows * 2
        self._sides = np.arange(D)
        self._base = 0
        # Each table's scalar env's np_random (a PCG64 Generator, reseeded at each episode).
        self._rngs = [np.random.Generator(np.random.PCG64(0)) for _ in range(B)]
        # Seed them by pcg64_states where it agrees with numpy here (else seeding.np_random).
        probe_seeds = [0, 1, 12345, (1 << 64) - 1]
        self._fast_seeding = all(
            seeding.np_random(seed)[0].bit_generator.state["state"] == {"state": state, "inc": inc}
            for seed, (state, inc) in zip(
                probe_seeds, pcg64_states(np.asarray(probe_seeds, np.uint64)), strict=True
            )
        )
        self._mask: np.ndarray | None = None

    # --- the interface -------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, Info]:
        self._base = base_seed(seed)
        B = self.num_envs
        self.episodes[:] = 0
        self._deal(self._rows, new_match=np.ones(B, bool))
        obs, mask = self._outputs()
        return obs, mask, {"player": self.current.copy()}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Info]:
        if self._mask is None:
            raise ValueError("step() needs dealt tables: call reset() first")
        action = checked_actions(actions, self._mask)
        B, n = self.num_envs, self.num_players
        before = self.scores.copy()

        # Lay: the lead makes both ends (east the high half), else the tile's other half is the end.
        seat = self.current
        tile, slot = self._action_tile.take(action), self._action_slot.take(action)
        at_seat, at_end = self._seat_base + seat, self._end_base + slot  # (flat indices)
        hand = self._flat_hands.take(at_seat) & ~self._bit.take(tile)
        self._flat_hands[at_seat] = hand
        lo, hi = self._lo.take(tile), self._hi.take(tile)
        inner = self._flat_ends.take(at_end)
        outer = lo + hi - inner
        self._flat_ends[at_end] = outer
        self._flat_doubled[at_end] = inner == outer
        leads = np.flatnonzero(self.count == 0)
        if leads.size:
            self.ends[leads, 0], self.ends[leads, 1] = hi[leads], lo[leads]
            self.doubled[leads] = (lo[leads] == hi[leads])[:, None]
        self.played |= self._bit.take(tile)
        self.count += 1
        self.passes[:] = 0

        went_out = hand == 0
        self.current = np.where(went_out, seat, self._next.take(seat))
        # Every line has both ends now: the next seat lays, or draws and passes (_advance).
        fitting = self._suit.take(self.ends)
        playable = fitting[:, 0] | fitting[:, 1]
        held = self._flat_hands.take(self._seat_base + self.current)
        stuck = np.flatnonzero(((held & playable) == 0) & ~went_out)
        blocked = self._advance(stuck, playable[stuck])

        reward = np.zeros((B, n), np.float32)
        done = np.zeros(B, bool)
        over = went_out.copy()
        over[blocked] = True
        ended = np.flatnonzero(over)
        if ended.size:
            winner = np.where(went_out[ended], seat[ended], -1)
            is_blocked = ~went_out[ended]
            done_now, reward_rows = self._end_round(ended, winner, is_blocked, before[ended])
            reward[ended] = reward_rows
            done[ended] = done_now
            self.episodes[ended[done_now]] += 1
            self._deal(ended, new_match=done_now)
        obs, mask = self._outputs()
        return obs, mask, reward, done, {"player": self.current.copy()}

    def state(self) -> np.ndarray:
        if self._mask is None:
            raise ValueError("state() needs dealt tables: call reset() first")
        B, n, T = self.num_envs, self.num_players, self._T
        out = np.zeros((B, self.state_size), np.float32)
        layout, rows = self._state_layout, self._rows
        order = (self.current[:, None] + self._seats) % n  # seats from the one to move
        out[:, layout["hands"]] = _bits(self.hands[rows[:, None], order], T).reshape(B, n * T)
        stock = out[:, layout["stock"]]  # (a view: written through)
        left = np.arange(T) >= self.drawn[:, None]
        stock[np.repeat(rows, T)[left.ravel()], self.order[left]] = 1.0
        for k in range(n):
            out[:, layout[f"seat_{k}"]] = self._observe(order[:, k], moving=k == 0)
        return out

    # --- the game --------------------------------------------------------------------------

    def _open_values(self, tables: np.ndarray) -> np.ndarray:
        ends = self.ends[tables]
        return self._value_bit[ends[:, 0]] | self._value_bit[ends[:, 1]]

    def _advance(self, tables: np.ndarray, playable: np.ndarray) -> np.ndarray:
        """Move ``tables``, whose seat to move holds nothing that fits (``playable``: the tiles
        that would), on to a seat that can lay: forced draws, then passes; return the tables
        whose round is blocked."""
        if not tables.size:
            return tables
        T = self._T
        if self._draws:
            can = self.drawn[tables] < T
            drawers, dplay = tables[can], playable[can]
            if drawers.size:
                # Draw up to the first tile of the boneyard that fits (or all of it), at once.
                start = self.drawn[drawers]
                order = self.order[drawers]
                unread = np.arange(T) >= start[:, None]
                fit = unread & ((dplay[:, None] >> order) & 1).astype(bool)
                found = fit.any(axis=1)
                stop = np.where(found, fit.argmax(axis=1) + 1, T)
                taken = unread & (np.arange(T) < stop[:, None])
                got = np.bitwise_or.reduce(np.where(taken, self._bit[order], 0), axis=1)
                seat = self.current[drawers]
                self.hands[drawers, seat] |= got
                self.drawn[drawers] = stop
                self.voids[drawers, seat] = self._open_values(drawers)  # (a draw sets them: the rules')
                left = ~found  # the boneyard ran out before a tile fitted: that seat passes
                tables = np.concatenate([tables[~can], drawers[left]])
                playable = np.concatenate([playable[~can], dplay[left]])
        blocked = []
        for _ in range(self.num_players):  # passes: the ends stay, so no seat after them draws
            if not tables.size:
                break
            seat = self.current[tables]
            self.voids[tables, seat] |= self._open_values(tables)
            self.passes[tables] += 1
            full = self.passes[tables] >= self.num_players
            blocked.append(tables[full])
            tables, playable = tables[~full], playable[~full]
            self.current[tables] = self._next[self.current[tables]]
            stuck = (self.hands[tables, self.current[tables]] & playable) == 0
            tables, playable = tables[stuck], playable[stuck]
        return np.concatenate(blocked) if blocked else tables

    def _hand_pips(self, hands: np.ndarray) -> np.ndarray:
        """Pips in each hand (int64 masks of any shape), a table lookup per byte."""
        as_bytes = np.ascontiguousarray(hands).view(np.uint8).reshape(*hands.shape, 8)
        return self._byte_pips[np.arange(8), as_bytes].sum(axis=-1)

    def _end_round(
        self, tables: np.ndarray, winner: np.ndarray, blocked: np.ndarray, before: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Score the round of ``tables`` (``winner``: the seat that went out, -1 where
        ``blocked``); return which episodes ended and each seat's reward."""
        n = self.num_players
        pips = self._hand_pips(self.hands[tables])  # [K, P]
        side_pips = pips[:, :2] + pips[:, 2:] if self._teams else pips
        fewest = side_pips.min(axis=1)
        single = (side_pips == fewest[:, None]).sum(axis=1) == 1
        side = side_pips.argmin(axis=1)
        if self._teams:  # the partner with fewer pips, then the first from the leader
            leader = self.leader[tables]
            key = [pips[np.arange(len(tables)), s] * n + (s - leader) % n for s in (side, side + 2)]
            best = np.where(key[1] < key[0], side + 2, side)
        else:
            best = side
        winner = np.where(blocked, np.where(single, best, -1), winner)
        self.leader[tables] = np.where(winner >= 0, winner, (self.leader[tables] + 1) % n)  # next round's
        win_side = np.where(winner >= 0, self._side_of[np.maximum(winner, 0)], -1)
        losers = np.arange(self._D) != win_side[:, None]
        self.scores[tables] += np.where(losers, side_pips, 0)
        scores = self.scores[tables]
        self.match_over[tables] |= scores.max(axis=1) >= self._target
        done = np.ones(len(tables), bool) if self._round_episode else self.match_over[tables]
        if self._points:
            by_side = (scores - before) * self._reward_scale + 0.0
        else:
            # the rules' round_keys (won, -change) and match_keys (-score): lower scores win
            keys = (~losers) * _TIE_KEY - (scores - self.start[tables]) if self._round_episode else -scores
            by_side = np.where(done[:, None], self._outcome(keys), 0.0)
        return done, by_side[:, self._side_of]

    def _outcome(self, keys: np.ndarray) -> np.ndarray:
        """Per side, the rules' outcome of ``keys`` (larger is better): rank k of D pays
        1 - 2(k-1)/(D-1), ties sharing the mean rank."""
        better = (keys[:, None, :] > keys[:, :, None]).sum(axis=2)
        tied = (keys[:, None, :] == keys[:, :, None]).sum(axis=2)
        rank = better + (tied + 1) / 2
        return 1.0 - 2.0 * (rank - 1) / (keys.shape[1] - 1)

    def _seed(self, tables: list[int], seeds: list[int]) -> None:
        """Seed each table's Generator with its seed, as ``seeding.np_random(seed)`` would."""
        rngs = self._rngs
        if not self._fast_seeding or max(seeds) >= 1 << 64:
            for i, seed in zip(tables, seeds, strict=True):
                rngs[i] = seeding.np_random(seed)[0]
            return
        for i, (state, inc) in zip(tables, pcg64_states(np.asarray(seeds, np.uint64)), strict=True):
            rngs[i].bit_generator.state = {
                "bit_generator": "PCG64",
                "state": {"state": state, "inc": inc},
                "has_uint32": 0,
                "uinteger": 0,
            }

    def _deal(self, tables: np.ndarray, new_match: np.ndarray) -> None:
        """Deal the next round of ``tables`` (a new episode where ``new_match``) as the scalar
        env does: the rules shuffle the tiles with the table's own Generator (a new episode's
        seeded as ``DominoEnv.reset`` seeds it), the hands are the shuffle's first tiles, a
        hand after another, the boneyard the rest, drawn in that order (``deal_in_order``)."""
        rngs, shuffled = self._rngs, self.rules.shuffled_tiles
        fresh = tables[new_match]
        if fresh.size:  # a new episode's Generator, as DominoEnv.reset seeds it (seeding.np_random)
            base, B, which = self._base, self.num_envs, fresh.tolist()
            self._seed(
                which,
                [
                    episode_seed(base, i, k, B)
                    for i, k in zip(which, self.episodes[fresh].tolist(), strict=True)
                ],
            )
        orders: list[int] = []
        for i in tables.tolist():
            orders += shuffled(rngs[i])  # (one flat list: numpy reads it at twice the speed)
        order = np.array(orders, np.int64).reshape(len(tables), self._T)
        n, size = self.num_players, self._hand_size
        dealt = order[:, : n * size]
        self.hands[tables] = self._bit[dealt].reshape(len(tables), n, size).sum(axis=2)  # (distinct bits)
        self.order[tables] = order
        self.drawn[tables] = n * size
        # The leader: a new match's holds the first dealt tile of the opening order and must lead
        # it (``opening``); a later round's is the one the last round named (``leads_next``).
        leader, required = self.leader[tables], np.full(len(tables), -1, np.int64)
        if new_match.any():
            first = self._opening_rank[dealt[new_match]].argmin(axis=1)
            required[new_match] = dealt[new_match][np.arange(len(first)), first]
            leader[new_match] = first // size
        self.current[tables] = self.leader[tables] = leader
        self.required[tables] = required
        self.played[tables] = 0
        self.count[tables] = 0
        self.ends[tables] = _NO_END
        self.doubled[tables] = False
        self.passes[tables] = 0
        self.voids[tables] = 0
        self.scores[fresh] = 0
        self.match_over[fresh] = False
        self.start[tables] = self.scores[tables]

    # --- what a seat sees ------------------------------------------------------------------

    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        """The seat to move's observation and legal actions at every table (kept for step)."""
        T = self._T
        hand = self._flat_hands.take(self._seat_base + self.current)
        leading = self.count == 0
        fits = np.empty((self.num_envs, 2), np.int64)
        fits[:, 0] = np.where(self.ends[:, 0] >= 0, hand & self._suit[self.ends[:, 0]], hand)
        fits[:, 1] = np.where(leading, 0, hand & self._suit[self.ends[:, 1]])
        lead_one = leading & (self.required >= 0)
        fits[lead_one, 0] &= self._bit[self.required[lead_one]]
        # Action tile * 2 + slot: with T <= 32 both slots' bits interleave into one int64 (bit
        # 2t east, 2t+1 west), one unpack; else the two unpacked side by side.
        if T <= 32:
            both = _spread(fits[:, 0]) | _spread(fits[:, 1]) << 1
            mask = _bits(both, 2 * T).view(bool)
        else:
            mask = _bits(fits, T).transpose(0, 2, 1).reshape(self.num_envs, 2 * T).view(bool)
        self._mask = mask
        return self._observe(self.current, moving=True), mask.copy()

    def _observe(self, seat: np.ndarray, moving: bool) -> np.ndarray:
        """Each table's observation for ``seat`` (int64[B]), as the scalar encoder writes it;
        ``moving``: that seat is the one to move (its phase flags shown). (Gathers go through
        ``take`` on flat indices: a third of the cost of fancy indexing.)"""
        B, n, T, D = self.num_envs, self.num_players, self._T, self._D
        layout = self._layout
        out = np.empty((B, self.observation_size), np.float32)  # (every block is written)
        hand = self._flat_hands.take(self._seat_base + seat)
        if self._hand_then_table:  # (one unpack and one write for both)
            seen = np.stack([hand, self.played], axis=1)
            out[:, layout["hand"].start : layout["table"].stop] = _bits(seen, T).reshape(B, 2 * T)
        else:
            out[:, layout["hand"]] = _bits(hand, T)
            out[:, layout["table"]] = _bits(self.played, T)
        value = self.ends
        live = (self._suit.take(np.maximum(value, 0)) & ~self.played[:, None]) != 0
        code = np.where(value >= 0, 4 * value + 2 * self.doubled + live, self._no_end_code)
        out[:, layout["ends"]] = self._slot_rows.take(code.reshape(-1), axis=0).reshape(B, -1)
        others = self._seat_base[:, None] + (seat[:, None] + self._seats[1:]) % n  # next seat first
        out[:, layout["hand_sizes"]] = self._size_value.take(np.bitwise_count(self._flat_hands.take(others)))
        out[:, layout["boneyard"]] = self._stock_value.take(T - self.drawn)[:, None]
        voids = self._flat_voids.take(others.reshape(-1))
        out[:, layout["voids"]] = self._void_rows.take(voids, axis=0).reshape(B, -1)
        sides = self._side_base[:, None] + (self._side_of.take(seat)[:, None] + self._sides) % D
        out[:, layout["scores"]] = (
            self._flat_scores.take(sides) * self._score_scale
        )  # (float64, then float32)
        out[:, layout["phase"]] = ((self.count == 0) & moving)[:, None]  # (an idle seat's: 0)
        return out
