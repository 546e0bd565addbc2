"""Classic's tables stepped together in torch tensors, every table under masks: the backend ``"torch"``.

**Why a second kernel.** :class:`~domino_env.vector.chain.ChainKernel` is written for the CPU:
a step picks the tables that need work (the stuck seats, the ended rounds) with
``np.flatnonzero`` and updates them through those indices. On a GPU each such subset has a size
known only on the device, so every one would be a round trip to the host. This kernel plays the
same game as one straight program over all B rows: every table computes every branch (the lay,
the forced draws, up to P passes, the round's scoring) and keeps what applies to it through
``torch.where`` and arithmetic, so the step has no data-dependent shapes (no ``nonzero``, no
boolean-mask indexing, no ``.item()``) and the same code runs on CPU tensors and on a CUDA
device. Tile masks are int64 (at most 62 tiles, bit 63 never set), as torch's uint64 lacks
shifts, addition and ``max``; :func:`_popcount` stands in for the popcount torch lacks.

**What it plays.** Classic's game: 2-4 players (partners at 4), draw or block, one round or a
whole match an episode, ``reward="outcome"`` or ``"points"``, any set up to 62 tiles. The
tables are those :meth:`MaskedKernel.supports` accepts: what the chain kernel plays, with
Classic's own parts (no spinner, no scoring while laying, penalty pips to the winner's
opponents, a plain placement, one tile a turn, the winner leading, an opening order ranking
every tile); anything else is refused with a ValueError. Its lookups (the encoder's floats, the
tiles' halves and pips) are a one-table ChainKernel's own, so its outputs are the chain
kernel's bit for bit (``tests/env/test_vector_masked.py`` steps both side by side).

**The host's part.** Deals come from the chain kernel's
:class:`~domino_env.vector.dealing.Dealer` on the host (numpy's Generators, replayed in arrays),
as they must to be the scalar env's. So each step reads back one small array, per table whether
its round and its episode ended and whether its action was legal: the step's only host sync.
Where rounds ended the host deals them and copies those K rows (the shuffle, the hands, the
opening: int64) to the device in one transfer; every other change of a new deal is a mask over
all rows. The tables' state is
never written in place: each step builds new tensors, so an illegal action (found in that sync)
leaves everything as it was, and a returned tensor is never overwritten later.

**Tensors in, tensors out.** :meth:`MaskedKernel.reset_tensors` and
:meth:`MaskedKernel.step_tensors` take and return torch tensors on ``device`` (what a GPU
learner feeds its network); ``reset``, ``step`` and ``state`` are those with ``.cpu().numpy()``
(on the CPU a view, no copy), so the VectorEnv interface and its tests hold unchanged.
Snapshots hold numpy arrays: one taken on a GPU restores on the CPU and back.
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn

import numpy as np
import torch

from domino_env.core.line import Spinner
from domino_env.registry import raw_env
from domino_env.rules.chain import ChainRules
from domino_env.rules.parts import winner_leads
from domino_env.rules.table import TableRules
from domino_env.vector.base import Info, VectorEnv, base_seed, checked_actions, episode_seed
from domino_env.vector.chain import ChainKernel
from domino_env.vector.dealing import Dealer, read_states

Tensor = torch.Tensor
Tensors = dict[str, Tensor]

PLAYS = (
    "Classic's tables: 2-4 players (partners at 4), draw or block, a round or a match an episode, "
    "outcome or points rewards, at most 62 tiles"
)
# Classic's parts (the rules' class attributes), by identity: any other is refused.
_CLASSIC_PARTS: dict[str, Any] = {
    "seat_after": None,
    "spinner": Spinner.NONE,
    "lay_scoring": None,
    "score_round": ChainRules.penalties_round,
    "placements": ChainRules.placements,
    "continues_turn": None,
    "leads_next": winner_leads,
}
# The observation blocks the kernel writes, in order (the chain encoder's, no variant blocks).
_BLOCKS = ("hand", "table", "ends", "hand_sizes", "boneyard", "voids", "scores", "phase")
# The tables' state (the chain kernel's arrays of the same names and dtypes), on the device.
_TABLES = (
    "hands",
    "order",
    "drawn",
    "played",
    "count",
    "ends",
    "doubled",
    "current",
    "leader",
    "required",
    "passes",
    "voids",
    "scores",
    "start",
    "match_over",
)
_TIE_KEY = 1 << 32  # a round's key: the winner's side first, then the score change


def _popcount(masks: Tensor) -> Tensor:
    """Set bits of each non-negative int64 (torch has no popcount): the SWAR sums over 2, 4 and
    8 bits, then the bytes added by shifts (a multiply would overflow int64)."""
    masks = masks - ((masks >> 1) & 0x5555555555555555)
    masks = (masks & 0x3333333333333333) + ((masks >> 2) & 0x3333333333333333)
    masks = (masks + (masks >> 4)) & 0x0F0F0F0F0F0F0F0F
    masks = masks + (masks >> 8)
    masks = masks + (masks >> 16)
    masks = masks + (masks >> 32)
    return masks & 0x7F


def _spread(masks: Tensor) -> Tensor:
    """int64 masks below 2**32 with bit t moved to bit 2t (the bits between them zero)."""
    for shift, keep in _SPREAD:
        masks = (masks | (masks << shift)) & keep
    return masks


_SPREAD = (
    (16, 0x0000FFFF0000FFFF),
    (8, 0x00FF00FF00FF00FF),
    (4, 0x0F0F0F0F0F0F0F0F),
    (2, 0x3333333333333333),
    (1, 0x5555555555555555),
)


def _no_lot(orders: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """No deal draws a lot: Classic's opening order ranks every tile, so one is always dealt."""
    return np.zeros(len(orders), bool)


def _device(device: str | torch.device) -> torch.device:
    """``device`` as a torch device, refused (ValueError) where torch cannot use it here."""
    try:
        out = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f"device must name a torch device ('cpu', 'cuda', 'cuda:1'...), got {device!r}"
        ) from None
    if out.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: torch.cuda.is_available() is False here")
    if out.type not in ("cpu", "cuda"):
        raise ValueError(f"device {device!r}: the torch kernel runs on 'cpu' or 'cuda'")
    return out


def _host(tensor: Tensor) -> np.ndarray:
    """A tensor as numpy (a view on the CPU: the tensors handed out are never written again)."""
    return tensor.cpu().numpy()


class MaskedKernel(VectorEnv):
    """B Classic tables in torch tensors on ``device``, every table under masks (the module
    docstring); built as the scalar env would be (``name`` and ``options`` as
    :func:`domino_env.make`'s)."""

    backend = "torch"
    _ENV_OPTIONS: ClassVar[tuple[str, ...]] = ("episode", "illegal_action", "render_mode")

    @classmethod
    def supports(cls, rules: TableRules[Any], env_options: dict[str, Any]) -> str | None:
        """None if this kernel plays ``rules``' tables with ``env_options`` exactly, else why not:
        the chain kernel must play them, with Classic's parts."""
        refusal = ChainKernel.supports(rules, env_options)
        if refusal is not None:
            return refusal
        assert isinstance(rules, ChainRules)  # (the chain kernel plays only chain rules)
        kind = type(rules)
        for part, classic in _CLASSIC_PARTS.items():
            own = getattr(kind, part)
            if own is not classic:
                return f"{rules.name} has its own {part} ({getattr(own, '__qualname__', own)}), not Classic's"
        opens = kind.opens
        if (
            opens.order is None
            or opens.every_round
            or len(opens.order(rules.tile_set)) != rules.tile_set.size
        ):
            return f"{rules.name} opens otherwise than Classic (the first round by an order of every tile)"
        return None

    def __init__(self, name: str, num_envs: int, device: str | torch.device = "cpu", **options: Any) -> None:
        probe = raw_env(name, **options)  # validates the options
        refusal = self.supports(probe.rules, {key: getattr(probe, key) for key in self._ENV_OPTIONS})
        if refusal is None and tuple(probe.observation_layout) != _BLOCKS:
            refusal = f"{name} has observation blocks of its own"
        if refusal is not None:
            raise ValueError(f"the torch kernel cannot step this {name} table: {refusal}; it plays {PLAYS}")
        self.device = _device(device)
        # The lookups are a one-table chain kernel's, moved to the device: the same floats.
        chain = ChainKernel(name, 1, **options)
        rules = chain.rules
        self.name, self.options, self.num_envs = name, dict(options), int(num_envs)
        self.num_players, self.observation_size = chain.num_players, chain.observation_size
        self.num_actions, self.state_size = chain.num_actions, chain.state_size
        B, n, T, V, D = self.num_envs, chain.num_players, chain._T, chain._V, chain._D
        self._T, self._V, self._D = T, V, D
        self._hand_size = rules.hand_size
        self._teams, self._draws = rules.teams, bool(rules.draws)
        self._round_episode, self._points = probe.episode == "round", probe.reward_mode == "points"
        self._target, self._sign = rules.match_target, chain._sign
        self._score_scale, self._reward_scale = chain._score_scale, chain._reward_scale
        self._no_end_code = chain._no_end_code
        actions = np.arange(self.num_actions)
        if not (
            np.array_equal(chain._lay_tile, actions // 2) and np.array_equal(chain._lay_slot, actions % 2)
        ):
            raise ValueError(f"{name}'s actions are not tile * 2 + slot, as the torch kernel reads them")
        if list(probe.state_layout) != ["hands", "stock", *(f"seat_{k}" for k in range(n))]:
            raise ValueError(f"{name}'s state layout is not the chain tables' ({list(probe.state_layout)})")
        # The deals' lookups, on the host: each tile's bit, its rank in the opening order.
        assert chain._opening_rank is not None  # (supports: an order ranking every tile)
        self._deal_bit, self._opening_rank = chain._bit, chain._opening_rank

        def put(values: Any, dtype: torch.dtype = torch.int64) -> Tensor:
            return torch.as_tensor(np.asarray(values), dtype=dtype, device=self.device)

        self._seats, self._sides = put(np.arange(n)), put(np.arange(D))
        self._slots, self._tiles = put(np.arange(2)), put(np.arange(T))
        self._next, self._side_of = put(chain._next), put(chain._side_of)
        self._bit, self._lo, self._hi = put(chain._bit), put(chain._lo), put(chain._hi)
        self._is_double = put(chain._is_double, torch.bool)
        self._suit, self._value_bit = put(chain._suit), put(chain._value_bit)
        self._words = -(-T // 32)  # the mask's int64 words: 32 tiles (64 actions) a word
        bits = (np.arange(256)[:, None] >> np.arange(8)) & 1  # each byte's bits
        self._byte_flags, self._byte_floats = put(bits, torch.bool), put(bits, torch.float32)
        nbytes = -(-T // 8)  # the bytes of a mask that hold tiles, and each byte's pips
        self._byte_shifts = put(8 * np.arange(8))
        self._byte_base = put(256 * np.arange(nbytes))
        self._byte_pips = put(chain._byte_pips[:nbytes].reshape(-1))
        self._size_value, self._stock_value = (
            put(chain._size_value, torch.float32),
            put(chain._stock_value, torch.float32),
        )
        self._void_rows, self._slot_rows = (
            put(chain._void_rows, torch.float32),
            put(chain._slot_rows, torch.float32),
        )
        # Constants the step starts from (never written: every step builds new tensors).
        self._no_passes = put(np.zeros(B, np.int64))
        self._nowhere, self._everywhere = (
            put(np.zeros(B, bool), torch.bool),
            put(np.ones(B, bool), torch.bool),
        )
        self._idle_phase = put(np.zeros((B, 1)), torch.float32)
        # The undealt tables (reset deals every row from them).
        self._empty: Tensors = {
            "hands": put(np.zeros((B, n), np.int64)),
            "order": put(np.zeros((B, T), np.int64)),
            "drawn": put(np.full(B, T)),
            "played": self._no_passes,
            "count": self._no_passes,
            "ends": put(np.full((B, 2), V)),
            "doubled": put(np.zeros((B, 2), bool), torch.bool),
            "current": self._no_passes,
            "leader": self._no_passes,
            "required": put(np.full(B, -1)),
            "passes": self._no_passes,
            "voids": put(np.zeros((B, n), np.int64)),
            "scores": put(np.zeros((B, D), np.int64)),
            "start": put(np.zeros((B, D), np.int64)),
            "match_over": self._nowhere,
        }
        self._tables = self._empty
        self._episodes = np.zeros(B, np.int64)  # (the seeds' business: on the host)
        self._base = 0
        self._dealer = Dealer(B, T, rules.shuffled_tiles, n, _no_lot, False)
        self._mask: Tensor | None = None

    # --- the interface: numpy --------------------------------------------------------------

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, Info]:
        obs, mask, info = self.reset_tensors(seed)
        return _host(obs), _host(mask), {"player": _host(info["player"])}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Info]:
        self._dealt("step")
        array = np.asarray(actions)
        if (
            array.shape != (self.num_envs,)
            or array.dtype.kind not in "iu"
            or not ((array >= 0) & (array < self.num_actions)).all()
        ):
            self._refuse(array)
        action = torch.from_numpy(array.astype(np.int64)).to(self.device)
        obs, mask, reward, done, info = self._step(action, array)
        return _host(obs), _host(mask), _host(reward), _host(done), {k: _host(v) for k, v in info.items()}

    def state(self) -> np.ndarray:
        return _host(self.state_tensors())

    def snapshot(self) -> dict[str, Any]:
        self._dealt("snapshot")
        return {
            **self._snapshot_header(),
            "base": self._base,
            "arrays": self._arrays(),
            "rngs": [self._dealer.state(i) for i in range(self.num_envs)],
        }

    def restore(self, snapshot: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, Info]:
        self._check_snapshot(snapshot)
        arrays, rngs = snapshot["arrays"], snapshot["rngs"]
        mine = self._arrays()
        if set(arrays) != set(mine) or len(rngs) != self.num_envs:
            raise ValueError(
                f"the snapshot's tables are not this kernel's: arrays {sorted(arrays)}, "
                f"{len(rngs)} random states (want {sorted(mine)}, {self.num_envs})"
            )
        for name, array in mine.items():
            theirs = np.asarray(arrays[name])
            if theirs.shape != array.shape or theirs.dtype != array.dtype:
                raise ValueError(
                    f"the snapshot's {name} is {theirs.dtype}{list(theirs.shape)}, "
                    f"this kernel's {array.dtype}{list(array.shape)}"
                )
        streams, base = read_states(rngs, self.num_envs), int(snapshot["base"])
        self._tables = {name: torch.tensor(np.asarray(arrays[name]), device=self.device) for name in _TABLES}
        self._episodes = np.array(arrays["episodes"])
        self._dealer.set_states(streams)
        self._base = base
        obs, mask = self._outputs()
        return _host(obs), _host(mask.clone()), {"player": _host(self._tables["current"].clone())}

    # --- the interface: tensors on the device ------------------------------------------------

    def reset_tensors(self, seed: int | None = None) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
        """:meth:`reset`, its outputs torch tensors on ``device`` (the tables' own dtypes)."""
        self._base = base_seed(seed)
        self._episodes[:] = 0
        everywhere = np.ones(self.num_envs, bool)
        self._tables = self._deal(self._empty, everywhere, everywhere, self._everywhere, self._everywhere)
        obs, mask = self._outputs()
        return obs, mask.clone(), {"player": self._tables["current"].clone()}

    def step_tensors(self, actions: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, dict[str, Tensor]]:
        """:meth:`step`, its actions (int[B]) and outputs torch tensors on ``device``: one host
        sync (the ended rounds and the actions' legality, read together) and, where rounds
        ended, one copy of their deals to the device."""
        self._dealt("step")
        if not isinstance(actions, torch.Tensor):
            raise ValueError(f"step_tensors takes a torch tensor of actions, got {type(actions).__name__}")
        kind = actions.dtype
        if (
            actions.shape != (self.num_envs,)
            or kind.is_floating_point
            or kind.is_complex
            or kind == torch.bool
        ):
            self._refuse(actions)
        return self._step(actions.to(self.device, torch.int64), actions)

    def state_tensors(self) -> Tensor:
        """float32[B, S] on ``device``: each table's global state, as the scalar env's ``state()``:
        the hands from the seat to move, the boneyard's tiles, each seat's observation."""
        self._dealt("state")
        t = self._tables
        B, n = self.num_envs, self.num_players
        seats = (t["current"][:, None] + self._seats) % n  # from the seat to move
        hands = self._bits(t["hands"].gather(1, seats)).reshape(B, -1)
        unread = (self._tiles >= t["drawn"][:, None]).to(torch.float32)
        stock = torch.zeros_like(unread).scatter(1, t["order"], unread)
        views = [self._observe(t, seats[:, k], moving=k == 0) for k in range(n)]
        return torch.cat([hands, stock, *views], dim=1)

    # --- the step ----------------------------------------------------------------------------

    def _dealt(self, what: str) -> Tensor:
        """The mask the last reset or step showed (ValueError if the tables were never dealt)."""
        if self._mask is None:
            raise ValueError(f"{what}() needs dealt tables: call reset() first")
        return self._mask

    def _refuse(self, given: np.ndarray | Tensor) -> NoReturn:
        """Raise the interface's ValueError for ``given`` (the actions as the caller gave them):
        :func:`checked_actions`' message, made on the host."""
        shown = given.cpu().numpy() if isinstance(given, torch.Tensor) else given
        checked_actions(shown, _host(self._dealt("step")))
        raise AssertionError("the device and checked_actions disagree on these actions")

    def _step(
        self, action: Tensor, given: np.ndarray | Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, dict[str, Tensor]]:
        """Play ``action`` (int64[B] on the device) at every table; where one is illegal raise
        (:meth:`_refuse` of ``given``) and change nothing. Until the sync says so, an illegal
        row plays its first legal action instead: the step then reads no lookup out of range
        (on a GPU, a device-side assert)."""
        mask = self._dealt("step")
        in_range = (action >= 0) & (action < self.num_actions)
        legal = in_range & mask.gather(1, torch.where(in_range, action, 0)[:, None]).squeeze(1)
        stand_in = mask.max(dim=1).indices  # (every table has a legal action)
        tables, over, done, reward, outcome = self._play(self._tables, torch.where(legal, action, stand_in))
        flags = _host(torch.stack([over, done, ~legal]))  # the step's one host sync
        if flags[2].any():
            self._refuse(given)
        side_scores = tables["scores"].clone()  # (before the deal: a new match zeroes them)
        self._episodes += flags[1]
        self._tables = self._deal(tables, flags[0], flags[1], over, done)
        obs, mask = self._outputs()
        info = {
            "player": self._tables["current"].clone(),
            "round_over": over,
            "side_scores": side_scores,
            "outcome": outcome,
        }
        return obs, mask.clone(), reward, done, info

    def _play(self, t: Tensors, action: Tensor) -> tuple[Tensors, Tensor, Tensor, Tensor, Tensor]:
        """Every table's step but the deal (``action``: legal at each): the tables after it, and
        per table whether its round ended, whether its episode ended, every seat's reward and
        its episode outcome (0 where none ended)."""
        n, T = self.num_players, self._T
        hands, ends, doubled = t["hands"], t["ends"], t["doubled"]
        # Lay: the lead makes the east (its high half) and west ends, else the tile's other half
        # is the end it was laid on.
        seat = t["current"]
        tile, slot = action // 2, action % 2  # (actions are tile * 2 + slot: __init__)
        bit = torch.take(self._bit, tile)
        hand = hands.gather(1, seat[:, None]).squeeze(1) & ~bit
        hands = torch.where(self._seats == seat[:, None], hand[:, None], hands)
        lo, hi, double = (
            torch.take(self._lo, tile),
            torch.take(self._hi, tile),
            torch.take(self._is_double, tile),
        )
        leading = (t["count"] == 0)[:, None]
        at_slot = self._slots == slot[:, None]
        inner = ends.gather(1, slot[:, None])
        ends = torch.where(at_slot, lo[:, None] + hi[:, None] - inner, ends)
        ends = torch.where(leading, torch.stack([hi, lo], dim=1), ends)
        doubled = torch.where(leading | at_slot, double[:, None], doubled)
        played, count = t["played"] | bit, t["count"] + 1
        # The next seat lays, or draws and passes: a seat with nothing that fits draws up to the
        # first tile of the boneyard that fits (all at once); with none left (or no draws) it
        # passes, the next seat tries, and P passes in a row block the round.
        went_out = hand == 0
        fitting = torch.take(self._suit, ends)
        playable = fitting[:, 0] | fitting[:, 1]
        shown = torch.take(self._value_bit, ends)
        open_values = (shown[:, 0] | shown[:, 1])[:, None]
        current = torch.where(went_out, seat, torch.take(self._next, seat))
        held = hands.gather(1, current[:, None]).squeeze(1)
        passing = ((held & playable) == 0) & ~went_out
        voids, drawn = t["voids"], t["drawn"]
        if self._draws:
            stock = torch.take(self._bit, t["order"])  # each tile's bit, in draw order
            unread = self._tiles >= drawn[:, None]
            fit = unread & ((stock & playable[:, None]) != 0)
            found, first = fit.max(dim=1)  # (the first fitting tile's place: max gives the first)
            stop = torch.where(found, first + 1, T)
            drawer = passing & (drawn < T)
            taken = unread & (self._tiles < stop[:, None])
            got = torch.where(taken, stock, 0).sum(dim=1)  # (distinct bits)
            drawing = drawer[:, None] & (self._seats == current[:, None])
            hands = torch.where(drawing, hands | got[:, None], hands)
            voids = torch.where(drawing, open_values, voids)  # (a draw sets them: the rules')
            drawn = torch.where(drawer, stop, drawn)
            passing = passing & ~(drawer & found)
        passes, blocked = self._no_passes, self._nowhere
        for _ in range(n):  # (every row runs all P: a row that stopped passing changes no more)
            voids = torch.where(
                passing[:, None] & (self._seats == current[:, None]), voids | open_values, voids
            )
            passes = passes + passing
            full = passing & (passes >= n)
            blocked = blocked | full
            passing = passing & ~full
            current = torch.where(passing, torch.take(self._next, current), current)
            held = hands.gather(1, current[:, None]).squeeze(1)
            passing = passing & ((held & playable) == 0)
        over = went_out | blocked
        leader, scores, match_over, gained, winners = self._score(hands, t, seat, over, blocked)
        # What the ended rounds pay (the chain kernel's _round_rewards, over every row).
        if self._round_episode:  # the rules' round_keys, signed: (won, the score change)
            done = over.clone()  # (``over`` is handed out too, as round_over)
            outcome = self._outcome(winners * _TIE_KEY + self._sign * (scores - t["start"]))
        else:
            done = over & match_over
            outcome = torch.where(match_over[:, None], self._outcome(self._sign * scores), 0.0)
        by_seat = torch.where(over[:, None], outcome[:, self._side_of], 0.0)
        if self._points:
            reward = (gained.to(torch.float64) * self._reward_scale + 0.0)[:, self._side_of]
        else:
            reward = by_seat
        tables = {
            **t,
            "hands": hands,
            "drawn": drawn,
            "played": played,
            "count": count,
            "ends": ends,
            "doubled": doubled,
            "current": current,
            "leader": leader,
            "passes": passes,
            "voids": voids,
            "scores": scores,
            "match_over": match_over,
        }
        return tables, over, done, reward.to(torch.float32), by_seat

    def _score(
        self, hands: Tensor, t: Tensors, seat: Tensor, over: Tensor, blocked: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """Score the rounds that ended (``over``; ``seat`` went out unless ``blocked``): the next
        leaders, the scores, the matches over, each side's gain and whether it won (bool[B, D])."""
        n, D = self.num_players, self._D
        pips = self._pips(hands)
        side_pips = pips[:, :2] + pips[:, 2:] if self._teams else pips
        fewest = side_pips == side_pips.min(dim=1, keepdim=True).values  # (min: amin is slower on int64)
        single = fewest.sum(dim=1) == 1
        side = torch.where(fewest, self._sides, D).min(dim=1).values  # the first side with fewest pips
        leader = t["leader"]
        best = side
        if self._teams:  # the partner with fewer pips, then the first from the leader
            partner = side + 2
            key_side = pips.gather(1, side[:, None]).squeeze(1) * n + (side - leader) % n
            key_partner = pips.gather(1, partner[:, None]).squeeze(1) * n + (partner - leader) % n
            best = torch.where(key_partner < key_side, partner, side)
        winner = torch.where(blocked, torch.where(single, best, -1), seat)
        leader = torch.where(over, torch.where(winner >= 0, winner, (leader + 1) % n), leader)
        win_side = torch.where(winner >= 0, torch.take(self._side_of, winner.clamp(min=0)), -1)
        winners = self._sides == win_side[:, None]
        gained = torch.where(over[:, None] & ~winners, side_pips, 0)  # every other side's pips
        scores = t["scores"] + gained
        match_over = t["match_over"] | (over & (scores.max(dim=1).values >= self._target))
        return leader, scores, match_over, gained, winners

    def _outcome(self, keys: Tensor) -> Tensor:
        """float64[B, D]: the rules' outcome of ``keys`` (larger is better): rank k of D pays
        1 - 2(k-1)/(D-1), ties sharing the mean rank."""
        better = (keys[:, None, :] > keys[:, :, None]).sum(dim=2)
        tied = (keys[:, None, :] == keys[:, :, None]).sum(dim=2)
        rank = better.to(torch.float64) + (tied.to(torch.float64) + 1) / 2
        return 1.0 - 2.0 * (rank - 1) / (self._D - 1)

    def _pips(self, hands: Tensor) -> Tensor:
        """Pips in each hand (int64 masks [B, P]), a lookup per byte."""
        at = ((hands[..., None] >> self._byte_shifts[: len(self._byte_base)]) & 255) + self._byte_base
        return torch.take(self._byte_pips, at).sum(dim=-1)

    def _deal(
        self, t: Tensors, ended: np.ndarray, fresh: np.ndarray, renew: Tensor, new_match: Tensor
    ) -> Tensors:
        """Deal the next round where ``ended`` (bool[B] on the host; ``renew`` on the device), a
        new episode where ``fresh`` (``new_match``), as the scalar env does. The host's Dealer
        shuffles; the host reads those K rows' hands and opening (a new match's leader holds the
        first dealt tile of the opening order and must lead it; a later round's, named as the
        last one ended, leads any tile) and sends them in one copy; the rest is masks."""
        tables = np.flatnonzero(ended)
        if not tables.size:
            return t
        new = fresh[tables]
        orders, _ = self._dealer.deal(tables, new, *self._seeds(tables))
        n, size, T = self.num_players, self._hand_size, self._T
        dealt = orders[:, : n * size]
        hands = self._deal_bit[dealt].reshape(len(tables), n, size).sum(axis=2)  # (distinct bits)
        first = self._opening_rank[dealt].argmin(axis=1)  # (distinct ranks: one first)
        opening = np.stack(
            [np.where(new, first // size, -1), np.where(new, dealt[np.arange(len(tables)), first], -1)],
            axis=1,
        )
        rows = torch.from_numpy(np.concatenate([tables[:, None], orders, hands, opening], axis=1)).to(
            self.device
        )
        at, named = rows[:, 0], rows[:, -2]
        leader = t["leader"].index_copy(
            0, at, torch.where(named >= 0, named, t["leader"].index_select(0, at))
        )
        scores = torch.where(new_match[:, None], 0, t["scores"])
        reset = renew[:, None]
        return {
            "hands": t["hands"].index_copy(0, at, rows[:, 1 + T : 1 + T + n]),
            "order": t["order"].index_copy(0, at, rows[:, 1 : 1 + T]),
            "drawn": torch.where(renew, n * size, t["drawn"]),
            "played": torch.where(renew, 0, t["played"]),
            "count": torch.where(renew, 0, t["count"]),
            "ends": torch.where(reset, self._V, t["ends"]),
            "doubled": t["doubled"] & ~reset,
            "current": torch.where(renew, leader, t["current"]),
            "leader": leader,
            "required": t["required"].index_copy(0, at, rows[:, -1]),
            "passes": torch.where(renew, 0, t["passes"]),
            "voids": torch.where(reset, 0, t["voids"]),
            "scores": scores,
            "start": torch.where(reset, scores, t["start"]),
            "match_over": t["match_over"] & ~new_match,
        }

    def _seeds(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The seed of each of ``tables``' episode and every table's next episode's seed (None
        where one would not fit int64), as the chain kernel's."""
        B, base = self.num_envs, self._base
        if base + (int(self._episodes.max()) + 2) * B >= 1 << 63:
            return np.array(
                [
                    episode_seed(base, i, k, B)
                    for i, k in zip(tables.tolist(), self._episodes[tables].tolist(), strict=True)
                ],
                object,
            ), None
        seeds = base + np.arange(B) + self._episodes * B
        return seeds[tables], seeds + B

    def _arrays(self) -> dict[str, np.ndarray]:
        """The tables' state as numpy copies (a snapshot's ``arrays``)."""
        arrays = {name: _host(self._tables[name]).copy() for name in _TABLES}
        return {**arrays, "episodes": self._episodes.copy()}

    # --- what a seat sees --------------------------------------------------------------------

    def _outputs(self) -> tuple[Tensor, Tensor]:
        """The seat to move's observation and legal actions at every table (the mask is kept
        for the next step's check)."""
        t = self._tables
        hand = t["hands"].gather(1, t["current"][:, None]).squeeze(1)
        fits = hand[:, None] & torch.take(self._suit, t["ends"])  # [B, 2] (no end: none fit)
        required = t["required"]
        lead_fits = torch.where(required >= 0, hand & torch.take(self._bit, required.clamp(min=0)), hand)
        first = torch.where(t["count"] == 0, lead_fits, fits[:, 0])
        fits = torch.stack([first, fits[:, 1]], dim=1)
        # Action 2t + slot at bit 2t + slot of a word, 32 tiles a word (bit 63 may be set: the
        # unpack reads the bytes as the AND with 255 leaves them).
        parts = [(fits >> (32 * w)) & 0xFFFFFFFF for w in range(self._words)]
        words = torch.stack([_spread(part[:, 0]) | (_spread(part[:, 1]) << 1) for part in parts], dim=1)
        self._mask = self._unpack(words, self._byte_flags, 64).view(self.num_envs, -1)[:, : self.num_actions]
        return self._observe(t, t["current"], moving=True), self._mask

    def _bits(self, masks: Tensor) -> Tensor:
        """float32[..., T]: bit t of each int64 mask."""
        return self._unpack(masks, self._byte_floats, self._T)

    def _unpack(self, masks: Tensor, rows: Tensor, width: int) -> Tensor:
        """[..., width]: bits 0..width-1 of each int64 mask as ``rows`` (a byte's 8 bits, by
        byte) write them: a lookup a byte, cheaper than a shift and an AND a bit."""
        count = -(-width // 8)
        at = (masks[..., None] >> self._byte_shifts[:count]) & 255
        bits = rows.index_select(0, at.reshape(-1))
        return bits.view(*masks.shape, 8 * count)[..., :width]

    def _observe(self, t: Tensors, seat: Tensor, moving: bool) -> Tensor:
        """Each table's observation for ``seat`` (int64[B]), entry for entry as the chain
        kernel (and the scalar encoder) writes it; ``moving``: that seat is the one to move (its
        phase flag shown)."""
        B, n, D, V = self.num_envs, self.num_players, self._D, self._V
        hands, ends, played = t["hands"], t["ends"], t["played"]
        hand = hands.gather(1, seat[:, None]).squeeze(1)
        seen = self._bits(torch.stack([hand, played], dim=1)).reshape(B, -1)
        live = (torch.take(self._suit, ends) & ~played[:, None]) != 0
        code = torch.where(ends < V, 4 * ends + 2 * t["doubled"] + live, self._no_end_code)
        slots = self._slot_rows[code].reshape(B, -1)
        others = (seat[:, None] + self._seats[1:]) % n  # the next seat first
        sizes = torch.take(self._size_value, _popcount(hands.gather(1, others)))
        boneyard = torch.take(self._stock_value, self._T - t["drawn"])[:, None]
        voids = self._void_rows[t["voids"].gather(1, others)].reshape(B, -1)
        sides = (torch.take(self._side_of, seat)[:, None] + self._sides) % D
        scores = (t["scores"].gather(1, sides).to(torch.float64) * self._score_scale).to(torch.float32)
        phase = (t["count"] == 0).to(torch.float32)[:, None] if moving else self._idle_phase
        return torch.cat([seen, slots, sizes, boneyard, voids, scores, phase], dim=1)
