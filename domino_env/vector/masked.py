"""Classic's, Blitz's, All Fives', Osel's, Cross's and Domino-Metro's tables stepped together in
torch tensors, every table under masks: the backend ``"torch"``.

**Why a second kernel.** :class:`~domino_env.vector.chain.ChainKernel` is written for the CPU:
a step picks the tables that need work (the stuck seats, the ended rounds) with
``np.flatnonzero`` and updates them through those indices. On a GPU each such subset has a size
known only on the device, so every one would be a round trip to the host. This kernel plays the
same game as one straight program over all B rows: every table computes every branch (the lay,
the spinner, the count, the forced draws, up to P passes, the round's scoring) and keeps what
applies to it through ``torch.where`` and arithmetic, so the step has no data-dependent shapes
(no ``nonzero``, no boolean-mask indexing, no ``.item()``) and the same code runs on CPU tensors
and on a CUDA device. Tile masks are int64 (at most 62 tiles, bit 63 never set), as torch's
uint64 lacks shifts, addition and ``max``; :func:`_popcount` stands in for the popcount torch
lacks.

**What it plays.** Six games, each a set of the rules' declared parts (``_GAMES``, known by
identity as the chain kernel knows them): Classic's (no spinner, no scoring while laying,
penalty pips to the winner's opponents, the lowest double opening, the winner leading the next
round); Blitz's (Classic's, the fewest pips opening, and a turn that lays on after any tile but
the round's first until the seat plays ``stop`` or nothing more fits, shown by the phase flag
``continuing``); All Fives' (the first double a spinner whose north and south arms open once
both its sides hold a tile, the open ends' count scored as it comes when a multiple of 5,
reaching the target there ending the match, the winner scoring the others' pips to the nearest
5, a lot for the first leader, the ``points_now`` observation block); Osel's (the first
double a spinner opening all four arms at once, a turn laying on after each double, a double
laid face down closing its end once the spinner is down, the lowest double but 0-0 opening,
the last layer leading the next round, each seat's penalty pips (a lone 0-0: 10) remembered
until more than 12 in a round open its score, a seat going out losing what it remembered, the
``remembered`` and ``opened`` observation blocks); Cross's (Classic's penalties with every tile
dealt, the highest double opening every round as a spinner whose four arms open at once, a
seat that can start an empty arm made to start one, the ``arm_started`` block); and
Domino-Metro's, the places game of :mod:`domino_env.rules.places`, in a step of its own
(``_play_places``, as the chain kernel's ``_step_places``): 2 + max_pip ends, a later double
laid open opening a new end of its value or face down closing its end, an end whose value is
used up closed at once, the line read per value (``_places_line``: the tiles that fit a live
end, those whose move would leave none) so that such a Metro move is offered only where
nothing else is and the boneyard is empty, a seat going out taking the next place and being
skipped, the game ending at a dead line or with one seat left holding tiles, the holders
placed by pips (a lone 0-0: 10) and the Metro maker last, the last place paying (a Metro its
penalty, a domino-Metro at 3 players clearing its maker's Metros) and leading the next game,
the ``places``, ``metros`` and ``doubles_open`` blocks. Each on the tables its variant offers:
2-4 players (partners at 4 where the variant has them; Cross 4, Metro 2 or 3), draw or block
where it offers both, one round or a whole match an episode, ``reward="outcome"`` or
``"points"``, any set up to 62 tiles: the tables :meth:`MaskedKernel.supports` accepts;
anything else is refused with a ValueError. The parts a game lacks cost nothing: ``__init__``
reads which it has (a spinner and when its arms open, the count, the rounding to 5, the
multi-tile turn, the face-down doubles, the remembered points, the last layer leading, the
arms to start, the places game) and the step skips the others' code. Its lookups (the
encoder's floats, the tiles' halves and pips, the places game's value-mask tables) are a
one-table ChainKernel's own, so its outputs are the chain kernel's bit for bit
(``tests/env/test_vector_masked.py`` steps both side by side).

**The host's part.** Deals come from the chain kernel's
:class:`~domino_env.vector.dealing.Dealer` on the host (numpy's Generators, replayed compiled),
as they must to be the scalar env's; so do the lots for a match's first leader (All Fives',
and Metro's where a deal holds no double from 1-1 up). So each step reads back one small
array, per table whether its round and its episode ended and whether its action was legal: the
step's only host sync. Where rounds ended the host deals them and
copies those K rows (the shuffle, the hands, the opening: int64) to the device in one transfer;
every other change of a new deal is a mask over all rows. The tables' state is
never written in place: each step builds new tensors, so an illegal action (found in that sync)
leaves everything as it was, and a returned tensor is never overwritten later.

**Tensors in, tensors out.** :meth:`MaskedKernel.reset_tensors` and
:meth:`MaskedKernel.step_tensors` take and return torch tensors on ``device`` (what a GPU
learner feeds its network); ``reset``, ``step`` and ``state`` are those with ``.cpu().numpy()``
(on the CPU a view, no copy), so the VectorEnv interface and its tests hold unchanged.
Snapshots hold numpy arrays: one taken on a GPU restores on the CPU and back.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple, NoReturn

import numpy as np
import torch

from domino_env.core.line import Spinner
from domino_env.registry import raw_env
from domino_env.rules.chain import LONE_BLANK, OPEN_ABOVE, ChainRules, RememberedPenaltyRules
from domino_env.rules.parts import (
    after_a_double,
    after_the_opening_tile,
    last_layer_leads,
    next_deal_decides,
    score_the_count,
    winner_leads,
)
from domino_env.rules.places import PlacesRules, last_place_leads
from domino_env.rules.table import TableRules
from domino_env.vector.base import Info, VectorEnv, base_seed, checked_actions, episode_seeds
from domino_env.vector.chain import _LEAD, _NORTH, _POINTS_SCALE, ChainKernel
from domino_env.vector.dealing import Dealer, read_states

Tensor = torch.Tensor
Tensors = dict[str, Tensor]

PLAYS = (
    "Classic's, Blitz's, All Fives', Osel's, Cross's and Domino-Metro's tables: 2-4 players "
    "(partners at 4 where the variant has them; Cross 4, Metro 2 or 3), draw or block where it "
    "offers both, a round or a match an episode, outcome or points rewards, at most 62 tiles"
)
# The games the kernel plays: each one's parts (the rules' class attributes), by identity. A
# table must have one game's parts, every one: any other part, or a mix, is refused.
_CLASSIC: dict[str, Any] = {
    "seat_after": None,
    "spinner": Spinner.NONE,
    "lay_scoring": None,
    "score_round": ChainRules.penalties_round,
    "placements": ChainRules.placements,
    "continues_turn": None,
    "leads_next": winner_leads,
}
_GAMES: dict[str, dict[str, Any]] = {
    "Classic": _CLASSIC,
    "Blitz": {**_CLASSIC, "continues_turn": after_the_opening_tile},
    "All Fives": {
        **_CLASSIC,
        "spinner": Spinner.AFTER_SIDES,
        "lay_scoring": score_the_count,
        "score_round": ChainRules.pips_to_the_winner,
    },
    "Osel": {
        **_CLASSIC,
        "spinner": Spinner.AT_ONCE,
        "score_round": RememberedPenaltyRules.score_round,
        "placements": ChainRules.doubles_face_down,
        "continues_turn": after_a_double,
        "leads_next": last_layer_leads,
    },
    "Cross": {
        **_CLASSIC,
        "spinner": Spinner.AT_ONCE,
        "placements": ChainRules.arms_first,
        "leads_next": next_deal_decides,
    },
    # (the places game: the chain kernel's supports has checked every part PlacesRules declares)
    "Metro": {
        **_CLASSIC,
        "seat_after": PlacesRules.skip_players_out,
        "lay_scoring": PlacesRules.score_lay,
        "score_round": PlacesRules.score_round,
        "placements": PlacesRules.placements,
        "leads_next": last_place_leads,
    },
}
_NAMES = "Classic's, Blitz's, All Fives', Osel's, Cross's or Metro's"  # (_GAMES in the refusals' words)
# The observation blocks the kernel writes, in order: the chain encoder's (``phase`` one flag,
# or two with a multi-tile turn: lead, continuing), then All Fives' points_now where the count
# scores, Osel's remembered and opened where penalties are remembered, Cross's arm_started
# where the arms must be started, Metro's places, metros and doubles_open in the places game.
_BLOCKS = ("hand", "table", "ends", "hand_sizes", "boneyard", "voids", "scores", "phase")
_COUNT_BLOCKS = ("points_now",)
_REMEMBERED_BLOCKS = ("remembered", "opened")
_ARM_BLOCKS = ("arm_started",)
_PLACES_BLOCKS = ("places", "metros", "doubles_open")
# The tables' state (the chain kernel's arrays of the same names and dtypes), on the device;
# the others only where the rules have their parts: a spinner's, a multi-tile turn's (the seat
# to move laid a tile this turn), the remembered penalties', the places game's (per seat its
# place, its uncleared Metros and their points; the ends in use, the first double down).
# (Not the chain kernel's ``last_layer``: a round ends in the step of its last tile, or of a
# ``stop`` after it, so the last layer is that step's seat.)
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
_SPINNER_TABLES = ("length", "spinner", "depth", "spin_value")
_TURN_TABLES = ("continuing",)
_REMEMBERED_TABLES = ("remembered", "opened")
_PLACES_TABLES = ("places", "metros", "metro_points", "used", "doubles_open")
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


def _or_columns(masks: Tensor) -> Tensor:
    """The OR of the columns of int64[B, S] (a plain loop: S is 2 or 4)."""
    out = masks[:, 0]
    for s in range(1, masks.shape[1]):
        out = out | masks[:, s]
    return out


class _PlacesLine(NamedTuple):
    """What each table's line offers in the places game, whoever holds the tiles: the chain
    kernel's ``_Line`` (its fields' meanings), as int64[B] tensors (tile masks but ``shown``,
    ``low`` and ``high``, value masks): :meth:`MaskedKernel._places_line`."""

    fit: Tensor
    fine: Tensor
    shown: Tensor
    low: Tensor
    high: Tensor
    low_metro: Tensor
    high_metro: Tensor
    down: Tensor
    down_metro: Tensor


def _points_table(chain: ChainKernel, R: int) -> np.ndarray:
    """float32[(V + 1) * R + 1, T]: All Fives' ``points_now`` of each tile laid on an end
    showing v (row v * R + r, r: the other ends' count, below R), as the chain kernel writes it
    (the count where a multiple of 5, times 1/20 in float64, stored as float32); 0 where the
    tile does not fit or no end is open (v = V); the last row: each tile laid as the lead."""
    T, V = chain._T, chain._V
    lo, hi, double, pips = chain._lo[:T], chain._hi[:T], chain._is_double[:T], chain._pips[:T]
    value, rest = np.arange(V)[:, None, None], np.arange(R)[None, :, None]
    count = rest + (lo + hi - value) * (1 + double)  # [V, R, T]
    fits = (lo == value) | (hi == value)
    laid = np.where(fits & (count % 5 == 0), count, 0).reshape(V * R, T)
    lead = np.where(pips % 5 == 0, pips, 0)[None]
    table = np.concatenate([laid, np.zeros((R, T), np.int64), lead]) * _POINTS_SCALE
    return table.astype(np.float32)


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
    """B Classic, Blitz, All Fives, Osel, Cross or Metro tables in torch tensors on ``device``,
    every table under masks (the module docstring); built as the scalar env would be (``name``
    and ``options`` as :func:`domino_env.make`'s)."""

    backend = "torch"
    _ENV_OPTIONS: ClassVar[tuple[str, ...]] = ("episode", "illegal_action", "render_mode")

    @classmethod
    def supports(cls, rules: TableRules[Any], env_options: dict[str, Any]) -> str | None:
        """None if this kernel plays ``rules``' tables with ``env_options`` exactly, else why not:
        the chain kernel must play them, with one game's parts (``_GAMES``). Any opening the
        chain kernel deals is dealt here too (an order's first dealt tile in a match's first
        round or every round, else a lot)."""
        refusal = ChainKernel.supports(rules, env_options)
        if refusal is not None:
            return refusal
        assert isinstance(rules, ChainRules)  # (the chain kernel plays only chain rules)
        kind = type(rules)
        own = {part: getattr(kind, part) for part in _CLASSIC}
        for part, value in own.items():
            if all(value is not game[part] for game in _GAMES.values()):
                return (
                    f"{rules.name} has its own {part} ({getattr(value, '__qualname__', value)}), not {_NAMES}"
                )
        if not any(all(own[part] is value for part, value in game.items()) for game in _GAMES.values()):
            return f"{rules.name} mixes the parts of different games ({_NAMES})"
        return None

    def __init__(self, name: str, num_envs: int, device: str | torch.device = "cpu", **options: Any) -> None:
        probe = raw_env(name, **options)  # validates the options
        rules = probe.rules
        refusal = self.supports(rules, {key: getattr(probe, key) for key in self._ENV_OPTIONS})
        kind = type(rules)
        if refusal is None:
            blocks = (
                _BLOCKS
                + (_COUNT_BLOCKS if kind.lay_scoring is score_the_count else ())
                + (_REMEMBERED_BLOCKS if kind.score_round is RememberedPenaltyRules.score_round else ())
                + (_ARM_BLOCKS if kind.placements is ChainRules.arms_first else ())
                + (_PLACES_BLOCKS if kind.seat_after is PlacesRules.skip_players_out else ())
            )
            if tuple(probe.observation_layout) != blocks:
                refusal = f"{name} has observation blocks of its own"
        if refusal is not None:
            raise ValueError(f"the torch kernel cannot step this {name} table: {refusal}; it plays {PLAYS}")
        self.device = _device(device)
        # The lookups are a one-table chain kernel's, moved to the device: the same floats.
        chain = ChainKernel(name, 1, **options)
        self.name, self.options, self.num_envs = name, dict(options), int(num_envs)
        self.num_players, self.observation_size = chain.num_players, chain.observation_size
        self.num_actions, self.state_size = chain.num_actions, chain.state_size
        B, n, T, V, D, S = self.num_envs, chain.num_players, chain._T, chain._V, chain._D, chain._S
        A = self.num_actions
        self._T, self._V, self._D, self._S = T, V, D, S
        self._hand_size = rules.hand_size
        self._teams, self._draws = rules.teams, bool(rules.draws)
        self._round_episode, self._points = probe.episode == "round", probe.reward_mode == "points"
        self._target, self._sign = rules.match_target, chain._sign
        self._score_scale, self._reward_scale = chain._score_scale, chain._reward_scale
        # The game's parts (supports: one game's of _GAMES), read once: a spinner (its arms
        # opening at once, or after its sides), the count scored while laying, the round's pips
        # rounded to 5, a multi-tile turn (laying on after any tile but the first, or after a
        # double) with its ``stop`` action (-1: none), doubles laid face down, the last layer
        # leading the next round, the remembered penalties, Cross's arms to start, the places
        # game (its own step: _play_places), and an opening every round (Cross's).
        self._spinner = kind.spinner is not Spinner.NONE
        self._at_once = kind.spinner is Spinner.AT_ONCE
        self._counts = kind.lay_scoring is score_the_count
        self._fives = kind.score_round is ChainRules.pips_to_the_winner
        self._continues = kind.continues_turn is not None
        self._after_lead = kind.continues_turn is after_the_opening_tile
        self._stop = chain._stop
        self._face_down = kind.face_down_doubles
        self._last_layer_leads = kind.leads_next is last_layer_leads
        self._remembered = kind.score_round is RememberedPenaltyRules.score_round
        self._blank_bit = chain._blank_bit  # (remembered penalties: a lone 0-0 counts LONE_BLANK)
        self._arms_first = kind.placements is ChainRules.arms_first
        self._places = kind.seat_after is PlacesRules.skip_players_out
        self._every_round = bool(kind.opens.every_round)
        self._names = (
            _TABLES
            + (_SPINNER_TABLES if self._spinner else ())
            + (_TURN_TABLES if self._continues else ())
            + (_REMEMBERED_TABLES if self._remembered else ())
            + (_PLACES_TABLES if self._places else ())
        )
        # The actions: tile * S + slot face up, then (face-down doubles) T * S more laid face
        # down, then ``stop`` (whose tile T lays nothing): the tile is action // S, less T from
        # the face-down ones on.
        actions = np.arange(A)
        tiles = actions // S
        down = (tiles >= T) & (actions != self._stop)
        if self._face_down:
            tiles = np.where(tiles >= T, tiles - T, tiles)
        if not (
            np.array_equal(chain._lay_tile, tiles)
            and np.array_equal(chain._lay_slot, actions % S)
            and np.array_equal(chain._lay_down, down)
            and self._stop in (-1, A - 1)
        ):
            raise ValueError(
                f"{name}'s actions are not tile * {S} + slot (face down after face up, stop last), "
                "as the torch kernel reads them"
            )
        if list(probe.state_layout) != ["hands", "stock", *(f"seat_{k}" for k in range(n))]:
            raise ValueError(f"{name}'s state layout is not the chain tables' ({list(probe.state_layout)})")
        # The deals' lookups, on the host: each tile's bit, its rank in the opening order (None:
        # a lot draws the first leader).
        self._deal_bit, self._opening_rank = chain._bit, chain._opening_rank

        def put(values: Any, dtype: torch.dtype = torch.int64) -> Tensor:
            return torch.as_tensor(np.asarray(values), dtype=dtype, device=self.device)

        self._seats, self._sides = put(np.arange(n)), put(np.arange(D))
        self._slots, self._tiles = put(np.arange(S)), put(np.arange(T))
        self._east_west = self._slots < 2  # (the lead's ends)
        self._next, self._side_of = put(chain._next), put(chain._side_of)
        # The outcome of each rank a side can take (1, 1.5, ..., D: ties share the mean), by twice
        # the rank less 2: numpy's quotients, since a GPU divides by a number as a product by its
        # reciprocal, a last bit off numpy's (seen on an H100 at 4 players).
        rank = np.arange(2 * D - 1) / 2 + 1
        self._pay_of_rank = put(1.0 - 2.0 * (rank - 1) / (D - 1), torch.float64)
        self._bit, self._lo, self._hi = put(chain._bit), put(chain._lo), put(chain._hi)
        self._is_double, self._pips = put(chain._is_double, torch.bool), put(chain._pips)
        self._suit, self._value_bit = put(chain._suit), put(chain._value_bit)
        if self._face_down:  # value -> its double's bit (no end, a closed end: 0); a closed end
            self._double_bit, self._closed = put(chain._double_bit), chain._closed
        if self._places:  # the chain kernel's value-mask lookups (_init_places), and the scoring's
            self._pair_tiles, self._suits_in = put(chain._pair_tiles), put(chain._suits_in)
            self._doubles_in = put(chain._doubles_in)
            self._low_value, self._high_value = put(chain._low_value), put(chain._high_value)
            self._penalty, self._lone_zero = chain._penalty, chain._lone_zero
            self._value_suits, self._value_bits = self._suit[:V], self._value_bit[:V]  # (value v < V's)
        else:
            # The mask's int64 words: action tile * S + slot at bit S*t + slot, 64 // S tiles a
            # word (each slot's mask spread once for S = 2, twice for S = 4); the face-down
            # actions the same, in words of their own; ``stop`` the bit after the plays of the
            # last words. (The places game's S ends, 2 + max_pip, unpack slot by slot instead.)
            self._per_word, self._spreads = 64 // S, {2: 1, 4: 2}[S]
            self._words = -(-(S * T + self._continues) // 64)
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
        voids = np.arange(1 << V)[:, None] >> np.arange(V) & 1  # value mask -> its V flags
        self._void_rows, self._slot_rows = put(voids, torch.float32), put(chain._slot_rows, torch.float32)
        if self._counts:  # points_now's floats, read by (the end's value, the other ends' count)
            # (the other ends' count is below R: an end counts at most a double's 2 * (V - 1))
            self._rest_values = R = 2 * (S - 1) * (V - 1) + 1
            self._points_after = put(_points_table(chain, R), torch.float32)
            self._no_points = put(np.zeros((B, A)), torch.float32)  # (an idle seat's)
        # Constants the step starts from (never written: every step builds new tensors).
        self._no_passes = put(np.zeros(B, np.int64))
        self._nowhere, self._everywhere = (
            put(np.zeros(B, bool), torch.bool),
            put(np.ones(B, bool), torch.bool),
        )
        self._idle_phase = put(np.zeros((B, 1 + self._continues)), torch.float32)
        # The undealt tables (reset deals every row from them).
        self._empty: Tensors = {
            "hands": put(np.zeros((B, n), np.int64)),
            "order": put(np.zeros((B, T), np.int64)),
            "drawn": put(np.full(B, T)),
            "played": self._no_passes,
            "count": self._no_passes,
            "ends": put(np.full((B, S), V)),
            "doubled": put(np.zeros((B, S), bool), torch.bool),
            "current": self._no_passes,
            "leader": self._no_passes,
            "required": put(np.full(B, -1)),
            "passes": self._no_passes,
            "voids": put(np.zeros((B, n), np.int64)),
            "scores": put(np.zeros((B, D), np.int64)),
            "start": put(np.zeros((B, D), np.int64)),
            "match_over": self._nowhere,
        }
        if self._spinner:  # each arm's tiles beyond the lead; where the spinner lies, its value
            self._empty.update(
                length=put(np.zeros((B, S), np.int64)),
                spinner=put(np.full(B, -1)),
                depth=self._no_passes,
                spin_value=self._no_passes,
            )
        if self._continues:
            self._empty["continuing"] = self._nowhere
        if self._remembered:  # per seat: the points remembered, its score opened
            self._empty.update(
                remembered=put(np.zeros((B, n), np.int64)),
                opened=put(np.zeros((B, n), bool), torch.bool),
            )
        if self._places:  # per seat: its place, its Metros and their points; the ends in use
            self._empty.update(
                places=put(np.zeros((B, n), np.int64)),
                metros=put(np.zeros((B, n), np.int64)),
                metro_points=put(np.zeros((B, n), np.int64)),
                used=self._no_passes,
                doubles_open=self._nowhere,
            )
        self._tables = self._empty
        self._episodes = np.zeros(B, np.int64)  # (the seeds' business: on the host)
        self._base = 0
        self._dealer = Dealer(B, T, rules.shuffled_tiles, n)
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
        self._tables = {
            name: torch.tensor(np.asarray(arrays[name]), device=self.device) for name in self._names
        }
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
        mask = self._dealt("state")
        t = self._tables
        B, n = self.num_envs, self.num_players
        seats = (t["current"][:, None] + self._seats) % n  # from the seat to move
        hands = self._bits(t["hands"].gather(1, seats)).reshape(B, -1)
        unread = (self._tiles >= t["drawn"][:, None]).to(torch.float32)
        stock = torch.zeros_like(unread).scatter(1, t["order"], unread)
        views = [self._observe(t, seats[:, k], mask if k == 0 else None) for k in range(n)]
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
        (on a GPU, a device-side assert). The places game's line, as the step left it, goes on to
        the next mask."""
        mask = self._dealt("step")
        in_range = (action >= 0) & (action < self.num_actions)
        legal = in_range & mask.gather(1, torch.where(in_range, action, 0)[:, None]).squeeze(1)
        stand_in = mask.max(dim=1).indices  # (every table has a legal action)
        chosen, line = torch.where(legal, action, stand_in), None
        if self._places:
            tables, over, done, reward, outcome, line = self._play_places(self._tables, chosen)
        else:
            tables, over, done, reward, outcome = self._play(self._tables, chosen)
        flags = _host(torch.stack([over, done, ~legal]))  # the step's one host sync
        if flags[2].any():
            self._refuse(given)
        side_scores = tables["scores"].clone()  # (before the deal: a new match zeroes them)
        self._episodes += flags[1]
        self._tables = self._deal(tables, flags[0], flags[1], over, done)
        obs, mask = self._outputs(line)
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
        n, T, S = self.num_players, self._T, self._S
        hands, ends, doubled = t["hands"], t["ends"], t["doubled"]
        # Lay: the lead makes the east (its high half) and west ends, else the tile's other half
        # is the end it was laid on (a double laid face down closes it). A ``stop`` lays nothing
        # (tile T: no bit, no halves, not a double) and leaves the ends as they are.
        seat = t["current"]
        tile, slot = action // S, action % S  # (actions are tile * S + slot: __init__)
        if self._face_down:  # (face down: T * S on; stop's tile 2T is T then)
            down = (tile >= T) & (action != self._stop)
            tile = torch.where(tile >= T, tile - T, tile)
        bit = torch.take(self._bit, tile)
        hand = hands.gather(1, seat[:, None]).squeeze(1) & ~bit
        hands = torch.where(self._seats == seat[:, None], hand[:, None], hands)
        lo, hi, double = (
            torch.take(self._lo, tile),
            torch.take(self._hi, tile),
            torch.take(self._is_double, tile),
        )
        lead = t["count"] == 0
        leading = lead[:, None]
        at_slot = self._slots == slot[:, None]
        laying = None if self._stop < 0 else action != self._stop
        if laying is not None:
            at_slot = at_slot & laying[:, None]
        inner = ends.gather(1, slot[:, None])
        outer = lo[:, None] + hi[:, None] - inner
        if self._face_down:
            outer = torch.where(down[:, None], self._closed, outer)
        ends = torch.where(at_slot, outer, ends)
        ends = torch.where(leading, torch.cat([torch.stack([hi, lo], dim=1), ends[:, 2:]], dim=1), ends)
        doubled = torch.where(at_slot | (leading & self._east_west), double[:, None], doubled)
        played, count = t["played"] | bit, t["count"] + (1 if laying is None else laying)
        tables = {**t, "hands": hands, "played": played, "count": count, "ends": ends, "doubled": doubled}
        if self._spinner:
            tables.update(self._spin(tables, at_slot & ~leading, lead, slot, double, lo))
            ends, doubled = tables["ends"], tables["doubled"]
        # All Fives: the open ends' count scores at once where a multiple of 5, and reaching the
        # target there ends the match (the round with it, unscored).
        scores, match_over, reached = t["scores"], t["match_over"], self._nowhere
        if self._counts:
            total = self._end_values(ends, doubled, tables["length"]).sum(dim=1)
            total = torch.where(lead, torch.take(self._pips, tile), total)  # (a lone lead: its pips)
            at_side = self._sides == torch.take(self._side_of, seat)[:, None]
            scores = scores + torch.where(at_side & (total % 5 == 0)[:, None], total[:, None], 0)
            reached = torch.where(at_side, scores, 0).sum(dim=1) >= self._target
            match_over = match_over | reached
        # The next seat lays, or draws and passes: a seat with nothing that fits draws up to the
        # first tile of the boneyard that fits (all at once); with none left (or no draws) it
        # passes, the next seat tries, and P passes in a row block the round. In a multi-tile
        # turn the same seat lays on while the rules let it (after any tile but the round's
        # first, or after a double) and a tile fits, else its turn ends by itself; a ``stop``
        # ends it.
        went_out = hand == 0
        ended = went_out | reached
        playable = _or_columns(torch.take(self._suit, ends))
        open_values = _or_columns(torch.take(self._value_bit, ends))[:, None]
        stays = ended
        if laying is not None:
            keeps = laying & ((count > 1) if self._after_lead else double)
            keeps = keeps & ~ended & ((hand & playable) != 0)
            tables["continuing"] = keeps
            stays = ended | keeps
        current = torch.where(stays, seat, torch.take(self._next, seat))
        held = hands.gather(1, current[:, None]).squeeze(1)
        passing = ((held & playable) == 0) & ~ended
        voids, drawn = t["voids"], t["drawn"]
        if self._draws:
            drawer = passing & (drawn < T)
            hands, voids, drawn, found, _ = self._draw(t, hands, current, drawer, playable, open_values)
            passing = passing & ~(drawer & found)
        current, voids, passes, blocked = self._pass_on(
            hands, current, passing, voids, playable, open_values, n, skip_out=False
        )
        over = ended | blocked
        tables.update(hands=hands, scores=scores, match_over=match_over)
        scored, keys = self._score(tables, seat, over, blocked)
        tables.update(scored)
        tables.update(drawn=drawn, current=current, passes=passes, voids=voids)
        return tables, over, *self._pay(t, tables, over, keys)

    def _pay(self, t: Tensors, tables: Tensors, over: Tensor, keys: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """What the ended rounds (``over``) pay, the tables ``t`` before the step and ``tables``
        after it (``keys``: each side's, the rules' round or match keys, larger better): per
        table whether its episode ended, every seat's reward and its episode outcome (0 where
        none ended): the chain kernel's _round_rewards, over every row."""
        scores, match_over = tables["scores"], tables["match_over"]
        if self._round_episode:
            done = over.clone()  # (``over`` is handed out too, as round_over)
            outcome = self._outcome(keys)
        else:
            done = over & match_over
            outcome = torch.where(match_over[:, None], self._outcome(keys), 0.0)
        by_seat = torch.where(over[:, None], outcome[:, self._side_of], 0.0)
        if self._points:  # the step's points: the count's and the round's
            gained = (scores - t["scores"]).to(torch.float64)
            reward = (gained * self._reward_scale + 0.0)[:, self._side_of]
        else:
            reward = by_seat
        return done, reward.to(torch.float32), by_seat

    def _spin(
        self, t: Tensors, grows: Tensor, lead: Tensor, slot: Tensor, double: Tensor, lo: Tensor
    ) -> Tensors:
        """The spinner of the tiles just laid on ``t``'s ends (the chain kernel's ``_spin``): the
        first double is it, laid as the lead or on the east or west arm; its north and south
        arms open (showing its value, a double at their end) at once (Osel's rule) or once both
        its sides hold a tile (All Fives'). ``grows``: the arm each tile was laid on beyond the
        lead. The tables' line after it."""
        ends, length = t["ends"], t["length"] + grows
        spinner = t["spinner"]
        made = double & (spinner < 0) & (lead | (slot <= 1))
        spinner = torch.where(made, torch.where(lead, _LEAD, slot), spinner)
        depth = torch.where(made, length.gather(1, slot[:, None]).squeeze(1), t["depth"])
        spin_value = torch.where(made, lo, t["spin_value"])
        if self._at_once:
            opening = made
        else:  # its sides both hold a tile: as the lead, both arms do; on an arm, that arm beyond it
            beyond = length.gather(1, spinner.clamp(0, 1)[:, None]).squeeze(1) > depth
            sides = torch.where(spinner == _LEAD, (length[:, 0] > 0) & (length[:, 1] > 0), beyond)
            opening = ~made & ~lead & (spinner >= 0) & (ends[:, _NORTH] == self._V) & sides
        arms = opening[:, None] & ~self._east_west
        return {
            "ends": torch.where(arms, spin_value[:, None], ends),
            "doubled": t["doubled"] | arms,
            "length": length,
            "spinner": spinner,
            "depth": depth,
            "spin_value": spin_value,
        }

    def _end_values(self, ends: Tensor, doubled: Tensor, length: Tensor) -> Tensor:
        """int64[B, S]: what each end adds to All Fives' count (a double there both halves, an
        empty north or south arm nothing)."""
        counted = (ends < self._V) & (self._east_west | (length > 0))
        return torch.where(counted, ends * (1 + doubled.long()), 0)

    def _score(self, t: Tensors, seat: Tensor, over: Tensor, blocked: Tensor) -> tuple[Tensors, Tensor]:
        """Score the rounds that ended (``over``; ``seat`` went out or reached the target unless
        ``blocked``) on the tables ``t`` (their hands, scores and matches over after the step's
        lay; a match the count ended scores no round): the tables' next leaders, scores, matches
        over (and remembered penalties), and each side's key for the episode's outcome (the
        rules' round_keys or match_keys, signed: larger is better)."""
        n, D = self.num_players, self._D
        hands, leader, scores, match_over = t["hands"], t["leader"], t["scores"], t["match_over"]
        pips = self._pips_in(hands)
        if self._remembered:  # round points: a lone 0-0 counts LONE_BLANK (and a block goes by them)
            pips = torch.where(hands == self._blank_bit, LONE_BLANK, pips)
        side_pips = pips[:, :2] + pips[:, 2:] if self._teams else pips
        fewest = side_pips == side_pips.min(dim=1, keepdim=True).values  # (min: amin is slower on int64)
        single = fewest.sum(dim=1) == 1
        side = torch.where(fewest, self._sides, D).min(dim=1).values  # the first side with fewest pips
        best = side
        if self._teams:  # the partner with fewer pips, then the first from the leader
            partner = side + 2
            key_side = pips.gather(1, side[:, None]).squeeze(1) * n + (side - leader) % n
            key_partner = pips.gather(1, partner[:, None]).squeeze(1) * n + (partner - leader) % n
            best = torch.where(key_partner < key_side, partner, side)
        winner = torch.where(blocked, torch.where(single, best, -1), seat)
        if self._last_layer_leads:  # the last layer: the step's seat (it laid, or stopped after laying)
            leader = torch.where(over, seat, leader)
        else:
            leader = torch.where(over, torch.where(winner >= 0, winner, (leader + 1) % n), leader)
        win_side = torch.where(winner >= 0, torch.take(self._side_of, winner.clamp(min=0)), -1)
        winners = self._sides == win_side[:, None]
        scoring = (over & ~match_over)[:, None]
        out: Tensors = {}
        if self._remembered:  # an open score writes; else the seat that went out loses what it
            # remembered, more than OPEN_ABOVE opens the score (remembered + this round), the rest
            # is remembered (no partners: a side is its seat)
            opened, remembered = t["opened"], t["remembered"]
            closed = ~opened & ~(winners & ~blocked[:, None])  # (not open, and did not go out)
            opens = closed & (pips > OPEN_ABOVE)
            gained = torch.where(opened, pips, torch.where(opens, remembered + pips, 0))
            gained = torch.where(scoring, gained, 0)
            kept = torch.where(closed & ~opens, remembered + pips, 0)
            out["remembered"] = remembered = torch.where(scoring, kept, remembered)
            out["opened"] = opened | (opens & scoring)
        elif self._fives:  # the winner's side scores the others' pips, to the nearest 5
            others = torch.where(winners, 0, side_pips).sum(dim=1, keepdim=True)
            gained = torch.where(winners & scoring, 5 * ((others + 2) // 5), 0)
        else:  # every other side adds its pips in hand as penalties
            gained = torch.where(~winners & scoring, side_pips, 0)
        scores = scores + gained
        match_over = match_over | (over & (scores.max(dim=1).values >= self._target))
        out.update(leader=leader, scores=scores, match_over=match_over)
        if self._remembered:  # (won, fewer round points), or (a lower score, fewer remembered)
            keys = winners * _TIE_KEY - pips if self._round_episode else -scores * _TIE_KEY - remembered
        elif self._round_episode:  # (won, the score change)
            keys = winners * _TIE_KEY + self._sign * (scores - t["start"])
        else:
            keys = self._sign * scores
        return out, keys

    def _outcome(self, keys: Tensor) -> Tensor:
        """float64[B, D]: the rules' outcome of ``keys`` (larger is better): rank k of D pays
        1 - 2(k-1)/(D-1), ties sharing the mean rank."""
        better = (keys[:, None, :] > keys[:, :, None]).sum(dim=2)
        tied = (keys[:, None, :] == keys[:, :, None]).sum(dim=2)  # (itself included)
        return torch.take(self._pay_of_rank, 2 * better + tied - 1)  # (2 * rank - 2)

    def _pips_in(self, hands: Tensor) -> Tensor:
        """Pips in each hand (int64 masks [B, P]), a lookup per byte."""
        at = ((hands[..., None] >> self._byte_shifts[: len(self._byte_base)]) & 255) + self._byte_base
        return torch.take(self._byte_pips, at).sum(dim=-1)

    # --- the places game (Metro) -------------------------------------------------------------

    def _play_places(
        self, t: Tensors, action: Tensor
    ) -> tuple[Tensors, Tensor, Tensor, Tensor, Tensor, _PlacesLine]:
        """:meth:`_play` in the places game (the chain kernel's ``_step_places``), and the line
        the step left (:meth:`_places_line`; the draws and passes leave it as it is, and the
        next mask reads it)."""
        T, S = self._T, self._S
        seat = t["current"]
        tile, slot = action // S, action % S  # (face down: T * S on)
        down = tile >= T
        tile = torch.where(down, tile - T, tile)
        bit = torch.take(self._bit, tile)
        hand = t["hands"].gather(1, seat[:, None]).squeeze(1) & ~bit
        at_seat = self._seats == seat[:, None]
        hands = torch.where(at_seat, hand[:, None], t["hands"])
        lo, hi, double = (
            torch.take(self._lo, tile),
            torch.take(self._hi, tile),
            torch.take(self._is_double, tile),
        )
        lead = t["count"] == 0
        played = t["played"] | bit
        # Lay: the tile's other half shows at its end, or the end closes (the tile face down, or
        # that value used up); a double laid open once the first double is down also opens an
        # end of its value (the same) at the first unused slot. The lead makes the east (its
        # high half) and west ends.
        inner = t["ends"].gather(1, slot[:, None]).squeeze(1)
        outer = torch.where(lead, 0, lo + hi - inner)  # (a lead's slot shows no value yet)
        used_up = (torch.take(self._suit, outer) & ~played) == 0
        shows = torch.where(down | used_up, self._closed, outer)[:, None]
        laid = (self._slots == slot[:, None]) & ~lead[:, None]
        opened = ~lead & ~down & double & t["doubles_open"]
        new_end = (self._slots == t["used"][:, None]) & opened[:, None]
        ends = torch.where(laid | new_end, shows, t["ends"])
        doubled = torch.where(laid, double[:, None], t["doubled"]) | new_end
        leading = lead[:, None]
        ends = torch.where(leading, torch.cat([torch.stack([hi, lo], dim=1), ends[:, 2:]], dim=1), ends)
        doubled = torch.where(leading & self._east_west, double[:, None], doubled)
        tables = {
            **t,
            "hands": hands,
            "played": played,
            "count": t["count"] + 1,
            "ends": ends,
            "doubled": doubled,
            "used": torch.where(lead, 2, t["used"] + opened),
            "doubles_open": t["doubles_open"] | double,
        }
        line = self._places_line(tables)
        # A seat going out takes the next place. The game ends with no live end left (an open
        # double blocks it; else the mover made a Metro, or going out a domino-Metro), or with
        # one seat left holding tiles; elsewhere the next seat holding tiles moves on.
        out = hand == 0
        dead = line.fit == 0
        next_place = 1 + (t["places"] > 0).sum(dim=1, keepdim=True)
        places = torch.where(out[:, None] & at_seat, next_place, t["places"])
        maker = torch.where(dead & ~out & ~opened, seat, -1)
        cleared = torch.where(dead & out & ~opened, seat, -1)
        over = dead | (out & ((hands != 0).sum(dim=1) <= 1))
        current = torch.where(over, seat, self._skip_out(hands, seat))
        hands, current, drawn, voids, passes, blocked = self._advance_places(
            tables, hands, current, ~over, line
        )
        over = over | blocked
        tables.update(hands=hands, current=current, drawn=drawn, voids=voids, passes=passes, places=places)
        scored, keys = self._end_places(tables, over, maker, cleared)
        tables.update(scored)
        done, reward, outcome = self._pay(t, tables, over, keys)
        return tables, over, done, reward, outcome, line

    def _places_line(self, t: Tensors) -> _PlacesLine:
        """What each table's line offers in the places game, whoever holds the tiles (the chain
        kernel's ``_places_line``, where its reasons are), read per value: the values the open
        ends show (and those two ends show), the live ones (a tile of theirs off the table), the
        tiles that fit a live end; per extreme live value (the lowest, the highest: only they
        may have such tiles, only while at most two values are live) the tiles whose placement
        on an end of it leaves no live end; the doubles that may go face down, and those of
        them that leave no live end."""
        V, played, doubles_open = self._V, t["played"], t["doubles_open"]
        shown = torch.take(self._value_bit, t["ends"])  # (closed and unused ends: 0)
        seen, many = shown[:, 0], self._no_passes
        for s in range(1, self._S):
            many = many | (seen & shown[:, s])
            seen = seen | shown[:, s]
        left = _popcount(self._value_suits & ~played[:, None])  # [B, V] each value's tiles left
        single = torch.where(left == 1, self._value_bits, 0).sum(dim=1)  # (distinct bits)
        live = seen & torch.where(left != 0, self._value_bits, 0).sum(dim=1)
        fit = torch.take(self._suits_in, live) & ~played
        count = _popcount(live)
        lone = count == 1
        # the values w whose last tile u-w leaves no live end: any other (u alone), the other
        # live one (two live values), none (three)
        partner = torch.where(lone, -1, torch.where(count == 2, live, 0))
        on = []
        for u in (torch.take(self._low_value, live), torch.take(self._high_value, live)):
            bit, here = torch.take(self._value_bit, u), torch.take(self._suit, u) & fit
            left_u = _popcount(here)
            kept = ((many & bit) != 0) & (left_u >= 2)  # another end showing u stays live
            tiles = torch.take(self._pair_tiles, (u << V) | (single & ~bit & partner))
            first_double = ~doubles_open & lone & (left_u == 1)  # (its last tile: no new end)
            tiles = tiles | torch.where(first_double, torch.take(self._double_bit, u), 0)
            tiles = torch.where(kept, 0, tiles)
            on.append((bit, tiles, kept, here & ~tiles))
        (low, low_metro, low_kept, low_fine), (high, high_metro, _, high_fine) = on
        fine = (fit & ~(low_metro | high_metro)) | low_fine | high_fine
        down = torch.where(doubles_open, torch.take(self._doubles_in, live), 0)
        down_metro = torch.where(lone & ~low_kept, down, 0)
        return _PlacesLine(fit, fine, seen, low, high, low_metro, high_metro, down, down_metro)

    def _skip_out(self, hands: Tensor, seat: Tensor) -> Tensor:
        """The next seat after ``seat`` (int64[B]) still holding tiles (none: the next seat)."""
        n = self.num_players
        after, found = torch.take(self._next, seat), self._nowhere
        for k in range(1, n):
            other = (seat + k) % n
            holds = (hands.gather(1, other[:, None]).squeeze(1) != 0) & ~found
            after = torch.where(holds, other, after)
            found = found | holds
        return after

    def _draw(
        self, t: Tensors, hands: Tensor, current: Tensor, drawer: Tensor, wanted: Tensor, open_values: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """The seat to move draws where ``drawer`` (bool[B]), all at once, up to the first tile
        of the boneyard in ``wanted`` (int64[B] tile masks; none there: the whole boneyard), its
        voids set to ``open_values`` (int64[B, 1]). The hands, voids and draws after it, whether
        such a tile was found, and the tiles drawn."""
        drawn = t["drawn"]
        stock = torch.take(self._bit, t["order"])  # each tile's bit, in draw order
        unread = self._tiles >= drawn[:, None]
        found, first = (unread & ((stock & wanted[:, None]) != 0)).max(dim=1)  # (max: the first)
        stop = torch.where(found, first + 1, self._T)
        got = torch.where(unread & (self._tiles < stop[:, None]), stock, 0).sum(dim=1)  # (distinct bits)
        drawing = drawer[:, None] & (self._seats == current[:, None])
        hands = torch.where(drawing, hands | got[:, None], hands)
        voids = torch.where(drawing, open_values, t["voids"])  # (a draw sets them: the rules')
        return hands, voids, torch.where(drawer, stop, drawn), found, got

    def _advance_places(
        self, t: Tensors, hands: Tensor, current: Tensor, go: Tensor, line: _PlacesLine
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
        """Forced draws and passes where ``go`` until the seat to move has a legal move (the
        chain kernel's ``_advance_places``): a seat with no tile that fits a live end, or only
        Metro moves while it holds two tiles or more and the boneyard has some, draws up to the
        first tile with a move that leaves a live end (``line.fine``), all at once; with the
        boneyard empty any tile that fits will do, and a seat with none passes: as many passes
        in a row as seats holding tiles block the game. The tables' hands, seat to move, draws,
        voids and passes after them, and which are blocked."""
        T = self._T
        fit, shown = line.fit, line.shown[:, None]
        hand = hands.gather(1, current[:, None]).squeeze(1)
        empty = t["drawn"] >= T
        ok = ((hand & fit) != 0) & ((_popcount(hand) < 2) | ((hand & line.fine) != 0) | empty)
        waiting = go & ~ok
        drawer = waiting & ~empty
        hands, voids, drawn, found, got = self._draw(t, hands, current, drawer, line.fine, shown)
        waiting = (waiting & empty) | (drawer & ~found & (((hand | got) & fit) == 0))
        holding = (hands != 0).sum(dim=1)
        current, voids, passes, blocked = self._pass_on(
            hands, current, waiting, voids, fit, shown, holding, skip_out=True
        )
        return hands, current, drawn, voids, passes, blocked

    def _pass_on(
        self,
        hands: Tensor,
        current: Tensor,
        passing: Tensor,
        voids: Tensor,
        fit: Tensor,
        shown: Tensor,
        limit: int | Tensor,
        *,
        skip_out: bool,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """The passes of the rows ``passing`` (their seat to move has no tile in ``fit``), for the
        line games' step and the places games' alike: each passing seat is void in ``shown``,
        the turn goes to the next seat (``skip_out``: the next still holding tiles,
        :meth:`_skip_out`), and ``limit`` passes in a row block the round; a row stops at the
        first seat with a tile that fits. The seat to move, voids, passes and which rows are
        blocked after them."""
        passes, blocked = self._no_passes, self._nowhere
        for _ in range(self.num_players):  # (every row runs them all: one that stopped changes no more)
            voids = torch.where(passing[:, None] & (self._seats == current[:, None]), voids | shown, voids)
            passes = passes + passing
            full = passing & (passes >= limit)
            blocked = blocked | full
            passing = passing & ~full
            after = self._skip_out(hands, current) if skip_out else torch.take(self._next, current)
            current = torch.where(passing, after, current)
            held = hands.gather(1, current[:, None]).squeeze(1)
            passing = passing & ((held & fit) == 0)
        return current, voids, passes, blocked

    def _end_places(self, t: Tensors, over: Tensor, maker: Tensor, cleared: Tensor) -> tuple[Tensors, Tensor]:
        """Score the games that ended (``over``) on the tables ``t`` (the chain kernel's
        ``_end_places``): the seats still holding tiles take the free places by pips in hand
        (a lone 0-0: 10; equal pips share the better place), the Metro ``maker`` (-1: none) the
        last; the last place pays 1 (a Metro maker the Metro penalty, as one more Metro) and
        leads next (tied, the first from this game's leader); at 3 players a domino-Metro
        clears its maker's (``cleared``, -1: none) Metros and their points. The tables'
        places, next leaders, scores, Metros and matches over, and each seat's key (larger is
        better): a better place (a round episode), fewer penalties (a match)."""
        n = self.num_players
        places, leader = t["places"], t["leader"]
        is_maker = self._seats == maker[:, None]
        holders = (places == 0) & ~is_maker
        first_free = 1 + (places > 0).sum(dim=1, keepdim=True)
        counts = torch.where(t["hands"] == self._lone_zero, 10, self._pips_in(t["hands"]))
        fewer = ((counts[:, None, :] < counts[:, :, None]) & holders[:, None, :]).sum(dim=2)
        ranked = torch.where(is_maker, n, torch.where(holders, first_free + fewer, places))
        worst = ranked.max(dim=1, keepdim=True).values
        from_leader = (leader[:, None] + self._seats) % n
        first_worst = (ranked.gather(1, from_leader) == worst).max(dim=1).indices  # (max: the first)
        scores, metros, points = t["scores"], t["metros"], t["metro_points"]
        if n == 3:
            clears = (self._seats == cleared[:, None]) & (metros > 0)
            scores = scores - torch.where(clears, points, 0)
            metros, points = torch.where(clears, 0, metros), torch.where(clears, 0, points)
        scores = scores + torch.where(is_maker, self._penalty, (ranked == worst).long())
        ending = over[:, None]
        out = {
            "places": torch.where(ending, ranked, places),
            "leader": torch.where(over, from_leader.gather(1, first_worst[:, None]).squeeze(1), leader),
            "scores": torch.where(ending, scores, t["scores"]),
            "metros": torch.where(ending, metros + is_maker, t["metros"]),
            "metro_points": torch.where(ending, points + is_maker * self._penalty, t["metro_points"]),
        }
        out["match_over"] = t["match_over"] | (over & (out["scores"].max(dim=1).values >= self._target))
        return out, -out["places"] if self._round_episode else -out["scores"]

    def _places_mask(self, t: Tensors, line: _PlacesLine) -> Tensor:
        """bool[B, A]: the places game's legal actions of each table's seat to move (the chain
        kernel's ``_places_legal``): a tile in hand on an end showing its value (a value with a
        tile in hand is live); once the first double is down each such double face down too; a
        move that would leave no live end (not the last tile in hand, not the lead) only where
        nothing else fits and the boneyard is empty. Per slot a mask of tiles face up and one
        face down, unpacked to action tile * S + slot, then T * S on. (A new deal's rows read
        nothing of ``line``, their last game's: unopened ends offer no tile and no double, and
        a lead is never a Metro move.)"""
        T, ends = self._T, t["ends"]
        hand = t["hands"].gather(1, t["current"][:, None]).squeeze(1)
        checked = (t["count"] != 0) & (_popcount(hand) >= 2)
        metro = hand & (line.low_metro | line.high_metro | line.down_metro)
        drop = checked & (metro != 0) & (((hand & line.fine) != 0) | (t["drawn"] < T))
        shown = torch.take(self._value_bit, ends)
        on_high = torch.where(shown == line.high[:, None], line.high_metro[:, None], 0)
        metros = torch.where(shown == line.low[:, None], line.low_metro[:, None], on_high)
        up = hand[:, None] & torch.take(self._suit, ends)
        up = torch.where(drop[:, None], up & ~metros, up)
        first = torch.where(t["count"] == 0, self._lead_fits(t, hand), up[:, 0])
        up = torch.cat([first[:, None], up[:, 1:]], dim=1)
        down = hand & torch.where(drop, line.down & ~line.down_metro, line.down)
        doubles = torch.take(self._double_bit, ends) & down[:, None]
        bits = self._unpack(torch.stack([up, doubles], dim=1), self._byte_flags, T)  # [B, 2, S, T]
        return bits.transpose(2, 3).reshape(self.num_envs, -1)

    def _deal(
        self, t: Tensors, ended: np.ndarray, fresh: np.ndarray, renew: Tensor, new_match: Tensor
    ) -> Tensors:
        """Deal the next round where ``ended`` (bool[B] on the host; ``renew`` on the device), a
        new episode where ``fresh`` (``new_match``), as the scalar env does. The host's Dealer
        shuffles (and draws the lots); the host reads those K rows' hands and opening (a round
        that opens, a new match's or every round where the rules say so, is led by the holder
        of the first dealt tile of the opening order, who must lead it, or with none dealt or
        no order by the lot's seat, leading any tile; any other round's leader, named as the
        last one ended, leads any tile) and sends them in one copy; the rest is masks."""
        tables = np.flatnonzero(ended)
        if not tables.size:
            return t
        new = fresh[tables]
        orders = self._dealer.shuffle(tables, new, episode_seeds(self._base, self._episodes, tables))
        K, n, size, T = len(tables), self.num_players, self._hand_size, self._T
        dealt = orders[:, : n * size]
        hands = self._deal_bit[dealt].reshape(K, n, size).sum(axis=2)  # (distinct bits)
        leader, required = np.full(K, -1), np.full(K, -1)  # (leader -1: the last one named leads)
        opens = new | self._every_round
        if self._opening_rank is not None:
            ranks = self._opening_rank[dealt]
            first = ranks.argmin(axis=1)
            named = opens & (ranks.min(axis=1) < T)
            leader = np.where(named, first // size, leader)
            required = np.where(named, dealt[np.arange(K), first], -1)
            opens &= ~named  # (none dealt: the lot)
        by_lot = np.flatnonzero(opens)
        leader[by_lot] = self._dealer.lots(tables[by_lot])
        rows = torch.from_numpy(
            np.concatenate([tables[:, None], orders, hands, leader[:, None], required[:, None]], axis=1)
        ).to(self.device)
        at, named = rows[:, 0], rows[:, -2]
        leader_now = t["leader"].index_copy(
            0, at, torch.where(named >= 0, named, t["leader"].index_select(0, at))
        )
        scores = torch.where(new_match[:, None], 0, t["scores"])
        reset = renew[:, None]
        out = {
            "hands": t["hands"].index_copy(0, at, rows[:, 1 + T : 1 + T + n]),
            "order": t["order"].index_copy(0, at, rows[:, 1 : 1 + T]),
            "drawn": torch.where(renew, n * size, t["drawn"]),
            "played": torch.where(renew, 0, t["played"]),
            "count": torch.where(renew, 0, t["count"]),
            "ends": torch.where(reset, self._V, t["ends"]),
            "doubled": t["doubled"] & ~reset,
            "current": torch.where(renew, leader_now, t["current"]),
            "leader": leader_now,
            "required": t["required"].index_copy(0, at, rows[:, -1]),
            "passes": torch.where(renew, 0, t["passes"]),
            "voids": torch.where(reset, 0, t["voids"]),
            "scores": scores,
            "start": torch.where(reset, scores, t["start"]),
            "match_over": t["match_over"] & ~new_match,
        }
        if self._spinner:  # (the spinner's place and value stay: a spinner of -1 reads neither)
            out.update(
                length=torch.where(reset, 0, t["length"]),
                spinner=torch.where(renew, -1, t["spinner"]),
                depth=t["depth"],
                spin_value=t["spin_value"],
            )
        if self._continues:  # (False where a round ended: a seat lays on only in a round going on)
            out["continuing"] = t["continuing"]
        if self._remembered:  # a new match remembers nothing, and no score is open
            out.update(
                remembered=torch.where(new_match[:, None], 0, t["remembered"]),
                opened=t["opened"] & ~new_match[:, None],
            )
        if self._places:  # a new game has no places, no ends in use, no double down; a new
            # match no Metros
            out.update(
                places=torch.where(reset, 0, t["places"]),
                metros=torch.where(new_match[:, None], 0, t["metros"]),
                metro_points=torch.where(new_match[:, None], 0, t["metro_points"]),
                used=torch.where(renew, 0, t["used"]),
                doubles_open=t["doubles_open"] & ~renew,
            )
        return out

    def _arrays(self) -> dict[str, np.ndarray]:
        """The tables' state as numpy copies (a snapshot's ``arrays``)."""
        arrays = {name: _host(self._tables[name]).copy() for name in self._names}
        return {**arrays, "episodes": self._episodes.copy()}

    # --- what a seat sees --------------------------------------------------------------------

    def _outputs(self, line: _PlacesLine | None = None) -> tuple[Tensor, Tensor]:
        """The seat to move's observation and legal actions at every table (the mask is kept
        for the next step's check); ``line``: the places game's line as the step left it (None:
        read now)."""
        t = self._tables
        if self._places:
            self._mask = self._places_mask(t, self._places_line(t) if line is None else line)
        else:
            self._mask = self._line_mask(t)
        return self._observe(t, t["current"], self._mask), self._mask

    def _lead_fits(self, t: Tensors, hand: Tensor) -> Tensor:
        """The tiles of ``hand`` (each table's seat to move's) it may lead: the required one, else
        any."""
        required = t["required"]
        return torch.where(required >= 0, hand & torch.take(self._bit, required.clamp(min=0)), hand)

    def _line_mask(self, t: Tensors) -> Tensor:
        """bool[B, A]: the legal actions of each table's seat to move, but the places game's."""
        hand = t["hands"].gather(1, t["current"][:, None]).squeeze(1)
        fits = hand[:, None] & torch.take(self._suit, t["ends"])  # [B, S] (no end: none fit)
        first = torch.where(t["count"] == 0, self._lead_fits(t, hand), fits[:, 0])
        fits = torch.cat([first[:, None], fits[:, 1:]], dim=1)
        if self._arms_first:  # Cross: while an open arm holds no tile, a seat that can start one must
            unstarted = (t["ends"] < self._V) & (t["length"] == 0)
            starts = _or_columns(torch.where(unstarted, fits, 0)) != 0
            fits = torch.where(starts[:, None] & ~unstarted, 0, fits)
        regions = [fits]
        if self._face_down:  # each double that fits an open end, laid face down there (once the
            # spinner is down): per slot the double of its value where the hand holds it
            down = hand[:, None] & torch.take(self._double_bit, t["ends"])
            regions.append(torch.where((t["spinner"] >= 0)[:, None], down, 0))
        # Action S*t + slot at bit S*t + slot of a word, 64 // S tiles a word: each slot's mask
        # spread (bit t to bit S*t) and shifted by its slot, the slots' distinct bits summed (bit
        # 63 may be set: the unpack reads the bytes as the AND with 255 leaves them); ``stop``
        # (while the seat is in a multi-tile turn) the bit after the last region's plays.
        per, plays = self._per_word, self._S * self._T
        words = []
        for region in regions:
            for w in range(self._words):
                part = (region >> (per * w)) & ((1 << per) - 1)
                for _ in range(self._spreads):
                    part = _spread(part)
                words.append((part << self._slots).sum(dim=1))
        if self._continues:
            w, at = divmod(plays, 64)
            words[-self._words + w] = words[-self._words + w] | (t["continuing"].long() << at)
        bits = self._unpack(torch.stack(words, dim=1), self._byte_flags, 64)
        bits = bits.view(self.num_envs, len(regions), -1)
        if len(regions) == 1:
            return bits[:, 0, : self.num_actions]
        # (face up, then face down and stop)
        return torch.cat([bits[:, 0, :plays], bits[:, 1, : self.num_actions - plays]], dim=1)

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

    def _observe(self, t: Tensors, seat: Tensor, mask: Tensor | None) -> Tensor:
        """Each table's observation for ``seat`` (int64[B]), entry for entry as the chain
        kernel (and the scalar encoder) writes it; ``mask``: that seat is the one to move and
        these are its legal actions (its phase flags and All Fives' points shown), None: an idle
        seat."""
        B, n, D = self.num_envs, self.num_players, self._D
        hands, ends, played = t["hands"], t["ends"], t["played"]
        hand = hands.gather(1, seat[:, None]).squeeze(1)
        seen = self._bits(torch.stack([hand, played], dim=1)).reshape(B, -1)
        live = (torch.take(self._suit, ends) & ~played[:, None]) != 0
        # (an end not open yet, V, reads an all-zero row; a closed one, V + 1, the closed flag)
        code = 4 * ends + 2 * t["doubled"] + live
        slots = self._slot_rows[code].reshape(B, -1)
        others = (seat[:, None] + self._seats[1:]) % n  # the next seat first
        sizes = torch.take(self._size_value, _popcount(hands.gather(1, others)))
        boneyard = torch.take(self._stock_value, self._T - t["drawn"])[:, None]
        voids = self._void_rows[t["voids"].gather(1, others)].reshape(B, -1)
        sides = (torch.take(self._side_of, seat)[:, None] + self._sides) % D
        scores = (t["scores"].gather(1, sides).to(torch.float64) * self._score_scale).to(torch.float32)
        if mask is None:
            phase = self._idle_phase
        elif self._continues:  # lead, continuing (in a multi-tile turn)
            phase = torch.stack([t["count"] == 0, t["continuing"]], dim=1).to(torch.float32)
        else:
            phase = (t["count"] == 0).to(torch.float32)[:, None]
        blocks = [seen, slots, sizes, boneyard, voids, scores, phase]
        if self._counts:
            blocks.append(self._no_points if mask is None else self._points_now(t, mask))
        if self._remembered:  # Osel's remembered points (/ the target) and opened flags, from seat on
            seats = (seat[:, None] + self._seats) % n
            remembered = t["remembered"].gather(1, seats).to(torch.float64) * self._score_scale
            blocks += [remembered.to(torch.float32), t["opened"].gather(1, seats).to(torch.float32)]
        if self._arms_first:  # Cross's arm_started: each arm holds a tile beyond the lead
            blocks.append((t["length"] > 0).to(torch.float32))
        if self._places:  # Metro's places (/ players) and Metros (/ the target) from seat on, doubles_open
            seats = (seat[:, None] + self._seats) % n
            places = t["places"].gather(1, seats).to(torch.float64) * (1.0 / n)
            metros = t["metros"].gather(1, seats).to(torch.float64) * self._score_scale
            opened = t["doubles_open"].to(torch.float32)[:, None]
            blocks += [places.to(torch.float32), metros.to(torch.float32), opened]
        return torch.cat(blocks, dim=1)

    def _points_now(self, t: Tensors, mask: Tensor) -> Tensor:
        """All Fives' ``points_now`` (float32[B, A]): for each legal action (``mask``) the count
        it would make where that is a multiple of 5 (/20), else 0: per slot the row of
        ``_points_after`` for its end's value and the other ends' count (a lead: the lead's
        row), one float per tile, laid out tile by tile as the actions are."""
        B, S, T, R = self.num_envs, self._S, self._T, self._rest_values
        values = self._end_values(t["ends"], t["doubled"], t["length"])
        rest = values.sum(dim=1, keepdim=True) - values
        row = torch.where((t["count"] == 0)[:, None], (self._V + 1) * R, t["ends"] * R + rest)
        points = self._points_after.index_select(0, row.reshape(-1)).view(B, S, T)
        return torch.where(mask.view(B, T, S), points.transpose(1, 2), 0.0).reshape(B, -1)
