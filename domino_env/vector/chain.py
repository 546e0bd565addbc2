"""The chain variants' tables stepped together in numpy arrays: the batched kernel ``"chain"``.

It plays Classic (2-4 players, partners, draw or block), All Fives (a spinner whose arms open
once both its sides hold a tile, the open ends' count scored as it comes, a lot for the first
leader, higher scores win), Cross (four arms from the highest double, opened at once and
started by force, that double leading every round), Blitz (Classic's game, the fewest pips
opening, a turn laying on after any tile but the round's first until the seat stops) and Osel
(a spinner opening its arms at once, a turn laying on after each double, doubles laid face
down closing an arm, the last layer leading the next round, penalty points remembered until a
score opens) and Metro (the places game of :mod:`domino_env.rules.places`, in its own step:
below), any set and hand size. B tables of one
table size (P seats, D sides, T tiles, V values, S slots) live in fixed-shape arrays, one row
a table:

===========  ============  ===============================================================
array        shape         meaning
===========  ============  ===============================================================
hands        int64[B, P]   each seat's tiles as a bitmask (bit t: tile id t)
order        int64[B, T]   the round's deal as the scalar rules shuffled it: the hands, then
                           the boneyard in draw order
drawn        int64[B]      where the next draw is in ``order`` (T: the boneyard is empty)
played       int64[B]      the tiles on the table (a bitmask); ``count`` how many,
                           ``lead_tile`` the first
ends         int64[B, S]   the value each slot's end shows (east, west, then a spinner's
                           north and south: ``core.line``'s slots); V: not open (yet),
                           V + 1: closed (a face-down double)
doubled      bool[B, S]    the outermost tile of that end is a double (an empty spinner arm
                           ends at the spinner: a double)
length       int64[B, S]   the tiles laid on each arm beyond the lead (kept for a spinner,
                           All Fives' count and Cross's arms)
spinner      int64[B]      where the spinner lies (-1: none yet; 0/1: on the east/west arm,
                           ``depth`` tiles out; 4: the lead), ``spin_value`` its value
current      int64[B]      the seat to move; ``leader`` the round's leader, ``required``
                           the tile it must lead (-1: any), ``passes`` passes in a row
voids        int64[B, P]   per seat, the values (bit v) it was seen unable to play
continuing   bool[B]       the seat to move laid a tile this turn and may lay on or ``stop``
last_layer   int64[B]      who laid the round's last tile (``last_layer_leads``)
remembered   int64[B, P]   remembered penalties per seat, not written yet; ``opened`` bool
                           [B, P]: that seat's score is open
scores       int64[B, D]   the match scores by side; ``start`` as the round began
places       int64[B, P]   Metro: per seat its place (0: in play); ``metros`` and
                           ``metro_points`` [B, P] its uncleared Metros and their points;
                           ``used`` [B] the slots in use, ``doubles_open`` [B] the first
                           double is down
===========  ============  ===============================================================

**A variant** is the rules' declared parts, read in ``__init__`` (``supports`` refuses any
other): ``spinner`` (``_spin``: none, arms at once, arms after the sides), ``lay_scoring``
(All Fives' count, ``_count``), ``score_round`` (penalty pips, the winner scoring the others'
pips to the nearest 5, or remembered penalties with their ranking and blocked winner),
``placements`` (Cross: a seat that can start an empty arm must; Osel: doubles face down too,
with ``face_down_doubles``), ``continues_turn`` (a multi-tile turn, with the ``stop`` action
and the ``continuing`` phase: after any tile but the first, or after a double),
``opens``/``leads_next`` (the opening order's first dealt tile, the first round or every
round, else a lot; the winner or the last layer leads the next round) and
``lower_score_wins``; the variant's observer blocks (``points_now``, ``arm_started``,
``remembered``, ``opened``) are ``_block_<name>`` methods. The parts a variant's rules take
from the rules layer are known by identity (``score_the_count``, ``after_a_double``,
``ChainRules.pips_to_the_winner``, ``ChainRules.arms_first``, ``ChainRules.doubles_face_down``,
``RememberedPenaltyRules``' methods...): ``domino_env.vector`` does not import the variants,
and refuses a part of their own.

**A step** lays each table's tile (the lead sets the east and west ends, a tile on an end
leaves its other half open there, a face-down double closes it; the first double becomes the
spinner and opens its arms as the rules say; ``stop`` lays nothing), scores the count where
the rules do (reaching the target there ends the match), ends the round of a table whose seat
went out, keeps a seat that may lay on in a multi-tile turn and holds a tile that fits (else
its turn ends by itself), and moves the rest on to the next seat that can lay: a seat with
nothing that fits draws (all the draws it needs at once: up to the first tile of the boneyard
that fits) or, with an empty boneyard or ``draw=False``, passes, and a full circle of passes
blocks the round. Those are masked loops over only the tables that need them (at most P
passes). Round ends score by the rules (a blocked round's winner the side with fewest pips, or
the seat with fewest round points), pay the rewards as :class:`~domino_env.envs.base.DominoEnv` does, and
deal the next round or episode (autoreset, :mod:`domino_env.vector.base`; the step's ``info``
says where rounds ended, the scores they left and the ended episodes' outcomes). Observations are
rebuilt from the arrays for the seat to move, entry for entry as
:class:`~domino_env.observation.chain.ChainEncoder` and the variant's observer write them.

**Metro** (``seat_after`` is :class:`~domino_env.rules.places.PlacesRules`' ``skip_players_out``,
and then every part ``PlacesRules`` declares must be its own: ``_places_refusal``) steps in
``_step_places``: a tile laid face up leaves its other half at its end, a double laid open
once the first double is down also opens a new end of its value at the first unused slot, a
double laid face down closes its end, and an end whose value has every tile on the table
closes at once. :meth:`_places_line` reads each table's line as integer masks, per value
rather than per slot (every end showing a value offers the same tiles): the tiles that fit a
live end and those whose placement would leave no live end (they are the few tiles u-w whose
w is used up with them, while u and w are the only live values: two values at most), so the
mask keeps such a move only where nothing else fits and the boneyard is empty, and the
forced draws take, at once, up to the first tile that has another move. The mask is set at
the seat's few legal actions (of a double-nine table's 1,210), not unpacked whole. A seat
that goes out takes the next place and is skipped; no live end left ends the game (blocked by
an open double, a domino-Metro for a seat that went out, else a Metro), as does a lone seat
left holding tiles; the holders then take the free places by pips (a lone 0-0: 10), the Metro maker the
last, the last place pays (a Metro ``metro_penalty``, a domino-Metro at 3 players clearing
its maker's Metros) and leads the next game; the outcome ranks by places (a round) or by
fewer penalties (a match).

**Loading.** :meth:`ChainKernel.load` puts B scalar games (``State`` objects at a decision whose
draws are fixed: a real game's or a sampled world's) into the rows, read field by field (the
line's slots, the stock in draw order, the variant's remembered points or places and Metros);
the next steps then play each row's round in progress exactly as ``rules.apply`` plays it on a
clone, and where a round ends the kernel writes what the search agents value it by
(``round_standing``, ``round_match_over``, ``round_outcome``: records, not state, outside
snapshots). Only that round is the loaded game's: what follows it (the row's next deal, from
its own Generator) is the kernel's own. ``observing = False`` skips the observations (``obs``
then has no columns) where only masks are read; :meth:`legal_points` gives what each legal play
scores at once (All Fives' count), as the rules' ``immediate_points``.

**Deals** are the scalar rules' own: each table keeps its scalar env's numpy Generator, seeded
at each episode as ``DominoEnv.reset`` seeds it (``seeding.np_random``), and at a round's start
the rules shuffle the tiles with it (``shuffled_tiles``); the hands are the shuffle's first
tiles, a hand after another, the boneyard the rest in draw order (``deal_in_order``). The
leader of a round that opens by the rules' ``opens`` holds the first dealt tile of
``opens.order`` and must lead it (``opening``); with no order (All Fives' first round) a lot
draws it from the same Generator after the shuffle, as ``rules.resolve`` does. The
:class:`~domino_env.vector.dealing.Dealer` keeps every table's Generator as arrays and deals the
tables whose rounds ended in one compiled loop (numpy's algorithms replayed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, ClassVar, NamedTuple

import numpy as np

from domino_env.core.line import CLOSED, OPEN, Spinner
from domino_env.core.state import State
from domino_env.registry import raw_env
from domino_env.rules.chain import LONE_BLANK, OPEN_ABOVE, STOP, ChainRules, RememberedPenaltyRules
from domino_env.rules.parts import (
    after_a_double,
    after_the_opening_tile,
    count_points,
    last_layer_leads,
    next_deal_decides,
    score_the_count,
    winner_leads,
)
from domino_env.rules.places import PlacesRules
from domino_env.rules.table import TableRules
from domino_env.vector.base import Info, VectorEnv, base_seed, checked_actions, compiled, episode_seeds
from domino_env.vector.dealing import Dealer, read_states

_TIE_KEY = 1 << 32  # a round's key: the winner's side first, then the score change


def _spread_rounds(by: int) -> list[tuple[int, int]]:
    """The (shift, keep) rounds that move bit t of a mask below 2**(64 // by) to bit by*t (the
    bits between them zero): each round moves the upper half of every block of bits ``by``
    times as far apart as the lower one (by = 2: 16 then 8, 4, 2, 1; by = 4: 24, 12, 6, 3)."""
    rounds, block = [], 64 // by
    while block > 1:
        half = block // 2
        keep = sum(((1 << half) - 1) << start for start in range(0, 64, by * half))
        rounds.append(((by - 1) * half, keep))
        block = half
    return rounds


def _spread(masks: np.ndarray, rounds: list[tuple[int, int]]) -> np.ndarray:
    """``masks`` (int64) spread by :func:`_spread_rounds`' ``rounds`` (in place after the first
    shift: one new array a round)."""
    for shift, keep in rounds:
        spread = masks << shift
        spread |= masks
        spread &= keep
        masks = spread
    return masks


def _bits(masks: np.ndarray, width: int) -> np.ndarray:
    """uint8[..., width]: bit t of each int64 mask (``masks`` of any shape), contiguous (``count``
    unpacks only the bits wanted: no slice of a wider unpack to copy later)."""
    masks = np.ascontiguousarray(masks, dtype=np.int64)
    as_bytes = masks.view(np.uint8).reshape(*masks.shape, 8)  # (little-endian: bit t is byte t//8)
    return np.unpackbits(as_bytes, axis=-1, count=width, bitorder="little")


def _or_columns(masks: np.ndarray) -> np.ndarray:
    """The OR of the columns of int64[K, S] (a plain loop: faster than ``reduce`` for small S)."""
    out = masks[:, 0].copy()
    for s in range(1, masks.shape[1]):
        out |= masks[:, s]
    return out


def _sum_columns(values: np.ndarray) -> np.ndarray:
    """The sum of the columns of int64[K, S], S >= 2 (a plain loop, as :func:`_or_columns`: a tenth of
    ``sum(axis=1)``'s time at 4,096 rows of 4)."""
    out = values[:, 0] + values[:, 1]
    for s in range(2, values.shape[1]):
        out += values[:, s]
    return out


@compiled
def _index_rows(
    tables: np.ndarray,
    order: np.ndarray,
    bit: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    hand_size: int,
    hands: np.ndarray,
    dealt_before: np.ndarray,
    suit_places: np.ndarray,
) -> None:
    """For each of ``tables`` and its deal ``order[k]``: ``dealt_before[table, p]``, the union of
    the bits of the tiles at places before p (p = 0..T); ``suit_places[table, v]``, the bits
    1 << p of the places whose tile carries value v (where ``suit_places`` has rows); and with a
    ``hand_size``, each seat's hand: the tiles between two hands' starts."""
    num_tiles = order.shape[1]
    for k in range(len(tables)):
        table, union = tables[k], 0
        dealt_before[table, 0] = 0
        if len(suit_places):
            suit_places[table, :] = 0
        for place in range(num_tiles):
            tile = order[k, place]
            union |= bit[tile]
            dealt_before[table, place + 1] = union
            if len(suit_places):
                suit_places[table, lo[tile]] |= 1 << place
                suit_places[table, hi[tile]] |= 1 << place
        if hand_size:
            for seat in range(hands.shape[1]):
                start = seat * hand_size
                hands[table, seat] = dealt_before[table, start + hand_size] ^ dealt_before[table, start]


class _Line(NamedTuple):
    """What each table's line offers in the places game, whoever holds the tiles (int64[B] tile
    masks but ``shown``, ``low`` and ``high``, value masks): :meth:`ChainKernel._places_line`.
    A new deal's rows are zeros: an empty line offers nothing."""

    fit: np.ndarray  # the tiles off the table that fit a live end
    fine: np.ndarray  # those with a placement that leaves a live end
    shown: np.ndarray  # the values the open ends show
    low: np.ndarray  # the lowest live value (its bit), and ``high`` the highest
    high: np.ndarray
    low_metro: np.ndarray  # the tiles whose placement face up on an end showing ``low`` leaves
    high_metro: np.ndarray  # no live end, and on an end showing ``high``
    down: np.ndarray  # the doubles that may be laid face down (on an end showing their value)
    down_metro: np.ndarray  # those whose placement face down leaves no live end


_LEAD = 4  # ``spinner``: the lead tile is the spinner (as core.line's LEAD)
_NORTH = 2  # the spinner's arms: slots 2 (north) and 3 (south)
# The parts of the rules layer the kernel plays (rules.parts, the rules' methods) -> its piece.
_LAY_SCORING: dict[Any, str | None] = {None: None, score_the_count: "count"}
# What a lay scores at once (``immediate_points``: legal_points): nothing, or All Fives' count.
_IMMEDIATE_POINTS: dict[Any, str | None] = {TableRules.immediate_points: None, count_points: "count"}
_ROUND_SCORING: dict[Any, str] = {
    ChainRules.penalties_round: "penalty",
    ChainRules.pips_to_the_winner: "fives",
    RememberedPenaltyRules.score_round: "remembered",
}
# A round scoring's ranking and blocked winner: the class whose methods the tables must have.
_SCORING_METHODS: dict[str, type] = {
    "penalty": ChainRules,
    "fives": ChainRules,
    "remembered": RememberedPenaltyRules,
}
_RANKING = ("blocked_winner", "match_keys", "round_keys")
_PLACEMENTS: dict[Any, str | None] = {
    ChainRules.placements: None,
    ChainRules.arms_first: "arms_first",
    ChainRules.doubles_face_down: "face_down",
}
# A multi-tile turn (``continues_turn``, with the ``stop`` action and the ``continuing`` phase).
_CONTINUES: dict[Any, str] = {after_the_opening_tile: "after_lead", after_a_double: "after_double"}
_LEADS_NEXT = (winner_leads, last_layer_leads)  # (and next_deal_decides where every round opens)
# The observer blocks the kernel writes (``_block_<name>``), by name -> their size.
_OBSERVER_BLOCKS: dict[str, Callable[[ChainRules], int]] = {
    "points_now": lambda rules: rules.num_play_actions,
    "arm_started": lambda rules: 4,
    "remembered": lambda rules: rules.num_players,
    "opened": lambda rules: rules.num_players,
    "places": lambda rules: rules.num_players,
    "metros": lambda rules: rules.num_players,
    "doubles_open": lambda rules: 1,
}
# The places game (players who go out take places and are skipped, branching live ends, moves
# that may leave no live end: ``rules.places``): its ``seat_after`` chooses the kernel's places
# step (``_step_places``), and the tables must have all of PlacesRules' parts.
_PLACES_PARTS: dict[Any, str] = {PlacesRules.skip_players_out: "skip_out"}
_PLACES_METHODS = (
    "seat_after",
    "leads_next",
    "lay_scoring",
    "placements",
    "went_out",
    "end_round",
    "players_in",
    "score_round",
    "round_keys",
    "match_keys",
    "blocked_winner",
    "hand_count",
    "refresh_ends",
    "skip_players_out",
    "score_lay",
    "_is_metro",
    "_next_place",
    "_place",
)
_SLOTS = {Spinner.NONE: 2, Spinner.AT_ONCE: 4, Spinner.AFTER_SIDES: 4}  # the line's slots per spinner rule
_POINTS_SCALE = 1 / 20  # All Fives' points_now block: a count of 20 reads 1.0
_BASE_BLOCKS = ("hand", "table", "ends", "hand_sizes", "boneyard", "voids", "scores", "phase")
# What a round's end leaves for the search agents' values (records, not the tables' state).
_RECORDS = ("round_standing", "round_match_over", "round_outcome")


class ChainKernel(VectorEnv):
    """B tables of a chain variant in numpy arrays (the module docstring); built as the scalar
    env would be (``name`` and ``options`` as :func:`domino_env.make`'s). Every call returns
    new arrays."""

    backend = "chain"
    # The rule parts every kernel table has as Classic does (rules.parts); any other is refused.
    _PARTS: ClassVar[dict[str, Any]] = {
        "seat_after": None,
        "tile_actions": (),
        "voids_hold_none": True,
        "names_own_draws": True,
        "ordered_hands": False,
    }
    # Methods whose LineRules/ChainRules/TableRules versions the arrays replay: a rules class
    # that overrides one plays another game (``placements``: see _PLACEMENTS).
    _ENGINE_METHODS: ClassVar[tuple[str, ...]] = (
        "advance",
        "apply",
        "apply_extra",
        "can_draw",
        "end_round",
        "end_turn",
        "known_hands",
        "lay",
        "legal_actions",
        "match_finished",
        "next_seat",
        "outcome",
        "phase_flags",
        "players_in",
        "public_hands",
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
        if not isinstance(rules, ChainRules):
            return f"{rules.name} is not a chain game"
        kind = type(rules)
        if kind.__dict__.get("batched_kernel") != "chain":
            return f"{rules.name}'s rules class does not itself declare batched_kernel = 'chain'"
        if kind.seat_after in _PLACES_PARTS:
            return cls._places_refusal(rules, env_options)
        for part, value in cls._PARTS.items():
            if getattr(kind, part) != value:
                return (
                    f"{rules.name} has its own {part} ({getattr(kind, part)!r}); the kernel plays Classic's"
                )
        known: list[tuple[str, Any, dict[Any, Any]]] = [
            ("lay_scoring", kind.lay_scoring, _LAY_SCORING),
            ("score_round", kind.score_round, _ROUND_SCORING),
            ("placements", kind.placements, _PLACEMENTS),
        ]
        for part, own, pieces in known:
            if own not in pieces:
                return f"{rules.name} has its own {part} ({own!r}): not one the chain kernel plays"
        turn = (kind.continues_turn, kind.extra_actions, kind.phases)
        if turn != (None, (), ("lead",)) and (
            kind.continues_turn not in _CONTINUES or turn[1:] != ((STOP,), ("lead", "continuing"))
        ):
            return (
                f"{rules.name} has its own turn (continues_turn {kind.continues_turn!r}, extra "
                f"actions {kind.extra_actions!r}, phases {kind.phases!r}): not one the chain kernel plays"
            )
        face_down = _PLACEMENTS[kind.placements] == "face_down"
        if kind.face_down_doubles != face_down or (face_down and kind.spinner is Spinner.NONE):
            return f"{rules.name}'s face-down doubles are not the kernel's (doubles_face_down, a spinner)"
        scoring = _ROUND_SCORING[kind.score_round]
        owner = _SCORING_METHODS[scoring]
        for method in _RANKING:
            if getattr(kind, method) is not getattr(owner, method):
                return f"{rules.name} overrides {method}: not the one its round scoring comes with"
        if scoring == "remembered" and rules.teams:
            return f"{rules.name}'s remembered penalties are individual: the chain kernel plays no partners"
        if kind.leads_next not in _LEADS_NEXT and not (
            kind.leads_next is next_deal_decides and kind.opens.every_round
        ):
            return f"{rules.name} has its own leads_next ({kind.leads_next!r}); the kernel plays the winner's"
        if rules.num_slots != _SLOTS[kind.spinner] or rules.tile_set.size > 62:
            return (
                f"{rules.name}'s line is not the chain kernel's (2 ends, or 4 with a spinner; "
                "at most 62 tiles)"
            )
        return cls._turn_loop_refusal(rules, env_options, own=())

    @classmethod
    def _turn_loop_refusal(
        cls, rules: ChainRules, env_options: dict[str, Any], own: tuple[str, ...]
    ) -> str | None:
        """Why not, if ``rules`` override an engine method other than ``own`` (those the
        kernel knows from the rules' parts), or the env options are not the kernel's."""
        kind = type(rules)
        for method in cls._ENGINE_METHODS:
            if method not in own and getattr(kind, method) is not getattr(ChainRules, method):
                return f"{rules.name} overrides {method}: the chain kernel plays Classic's turn loop"
        if env_options.get("illegal_action", "raise") != "raise":
            return 'the chain kernel raises on an illegal action: illegal_action="raise" only'
        if env_options.get("render_mode") is not None:
            return "the chain kernel renders nothing"
        return None

    @classmethod
    def _places_refusal(cls, rules: ChainRules, env_options: dict[str, Any]) -> str | None:
        """None if the kernel's places step plays ``rules``' tables exactly, else why not: every
        part :class:`~domino_env.rules.places.PlacesRules` declares, the rest Classic's."""
        kind = type(rules)
        for part in _PLACES_METHODS:
            if getattr(kind, part) is not getattr(PlacesRules, part):
                return f"{rules.name} has its own {part}: not the places game's the kernel plays"
        for part, value in cls._PARTS.items():
            if part not in ("seat_after", "voids_hold_none") and getattr(kind, part) != value:
                return (
                    f"{rules.name} has its own {part} ({getattr(kind, part)!r}); the kernel plays Classic's"
                )
        turn = (kind.continues_turn, kind.extra_actions, kind.phases)
        if turn != (None, (), ("lead",)) or not kind.face_down_doubles or kind.spinner is not Spinner.NONE:
            return (
                f"{rules.name}'s turn is not the places game's (one tile a turn, doubles face down, "
                "no spinner)"
            )
        if not rules.draws or rules.teams or rules.num_slots != 2 + rules.tile_set.max_pip:
            return f"{rules.name}'s table is not the places game's (draws, no partners, 2 + max_pip ends)"
        if rules.tile_set.size > 62:
            return f"{rules.name}'s set is larger than the chain kernel's (at most 62 tiles)"
        return cls._turn_loop_refusal(rules, env_options, own=("end_round", "went_out", "players_in"))

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
        own = () if probe.observer is None else tuple(probe.observer.blocks)
        own_blocks = tuple(block for block, _ in own)
        if refusal is None and (
            tuple(probe.observation_layout) != _BASE_BLOCKS + own_blocks
            or any(
                block not in _OBSERVER_BLOCKS or size != _OBSERVER_BLOCKS[block](rules) for block, size in own
            )
        ):
            refusal = f"{name} has observation blocks of its own, which the chain kernel does not write"
        if refusal is not None:
            raise ValueError(f"the chain kernel cannot step this {name} table: {refusal}")
        assert isinstance(rules, ChainRules)
        self.name, self.options, self.num_envs = name, dict(options), int(num_envs)
        self.rules = rules
        kind = type(rules)
        ts = rules.tile_set
        n, T, V, D, S = rules.num_players, ts.size, ts.num_values, rules.num_sides, rules.num_slots
        self.num_players, self._T, self._V, self._D, self._S = n, T, V, D, S
        self.observation_size = int(probe.encoder.size)
        self.num_actions = int(rules.num_actions)
        self.state_size = int(probe.state_space.shape[0])
        self._layout = probe.observation_layout
        self._state_layout = probe.state_layout
        self._round_episode = probe.episode == "round"
        self._points = probe.reward_mode == "points"
        self._draws = bool(rules.draws)
        self._teams = rules.teams
        self._target = rules.match_target
        self._hand_size = rules.hand_size
        # The variant's pieces (the rules' declared parts, see supports).
        self._spinner = kind.spinner
        self._counts = _LAY_SCORING.get(kind.lay_scoring) == "count"
        self._lay_points = _IMMEDIATE_POINTS.get(kind.immediate_points, "own")
        self._fives = _ROUND_SCORING.get(kind.score_round) == "fives"
        self._arms_first = _PLACEMENTS.get(kind.placements) == "arms_first"
        self._blocks = own_blocks
        self._every_round = kind.opens.every_round
        self._sign = -1 if kind.lower_score_wins else 1
        self._lengths = self._spinner is not Spinner.NONE or self._counts  # arms' lengths kept
        # A multi-tile turn: who may lay on ("after_lead": after any tile but the round's first;
        # "after_double": after a double), and the ``stop`` action that ends it (-1: none).
        self._continues = _CONTINUES.get(kind.continues_turn)
        self._stop = rules.extra_action_id[STOP] if self._continues else -1
        self._face_down = _PLACEMENTS.get(kind.placements) == "face_down"
        self._places = kind.seat_after in _PLACES_PARTS
        self._remembered = _ROUND_SCORING.get(kind.score_round) == "remembered"
        self._last_layer_leads = kind.leads_next is last_layer_leads

        # --- lookup tables, once ---------------------------------------------------------
        self._seats, self._sides = np.arange(n), np.arange(D)
        self._next = (self._seats + 1) % n
        self._side_of = np.asarray(rules.side_of, np.int64)
        # seat -> the seats from it on, the others (the next first), the sides from its own
        self._seats_from = (self._seats[:, None] + self._seats) % n
        self._others_from = np.ascontiguousarray(self._seats_from[:, 1:])
        self._sides_from = (self._side_of[:, None] + np.arange(D)) % D
        # tile -> its mask, halves, pips, double; tile T: none (what ``stop`` lays: nothing)
        self._bit = np.append(np.asarray(ts.bit, np.int64), 0)
        self._lo = np.asarray([a for a, _ in ts.tiles] + [0], np.int64)
        self._hi = np.asarray([b for _, b in ts.tiles] + [0], np.int64)
        self._pips = np.asarray([*ts.pips, 0], np.int64)
        self._is_double = np.append(self._lo[:T] == self._hi[:T], False)
        # value -> the tiles carrying it, value -> its bit, value -> its double's bit; value V
        # is "no end" (not open yet), V + 1 a closed end (a face-down double): none, 0
        self._suit = np.append(np.asarray(ts.suit_mask, np.int64), [0, 0])
        self._value_bit = np.append(np.left_shift(1, np.arange(V, dtype=np.int64)), [0, 0])
        self._double_of = np.asarray([ts.ids[(v, v)] for v in range(V)], np.int64)  # value -> v-v
        self._double_bit = np.append(self._bit.take(self._double_of), [0, 0])
        self._closed = V + 1
        # action -> (tile, slot): the rules' own table; what it lays (an extra: tile T, slot 0)
        self._action_tile = np.asarray(rules.action_tile, np.int64)
        self._action_slot = np.asarray(rules.action_slot, np.int64)
        self._lay_tile = np.where(self._action_tile >= 0, self._action_tile, T)
        self._lay_slot = np.maximum(self._action_slot, 0)
        self._lay_down = np.asarray(rules.action_face_down, bool)
        # action -> its tile's halves' sum, 2 for a double (else 1), pips: All Fives' count
        self._action_halves = self._lo.take(self._action_tile) + self._hi.take(self._action_tile)
        self._action_times = 1 + self._is_double.take(self._action_tile)
        self._action_pips = self._pips.take(self._action_tile)
        # pips of the tiles a byte of a mask selects, per byte of the int64
        pips = np.zeros(64, np.int64)
        pips[:T] = ts.pips
        byte = np.arange(256)
        self._byte_pips = np.stack(
            [((byte[:, None] >> np.arange(8)) & 1) @ pips[8 * k : 8 * k + 8] for k in range(8)]
        )  # [8, 256]
        self._tile_bytes = -(-T // 8)  # the bytes of a mask that hold tiles
        self._flat_byte_pips = self._byte_pips.reshape(-1)
        self._byte_base = np.arange(self._tile_bytes) * 256
        # The encoder's floats (its scales in float64, stored as float32, as it writes them).
        self._size_value = (np.arange(T + 1) * (1.0 / rules.hand_size)).astype(np.float32)
        self._stock_value = (np.arange(T + 1) * (1.0 / T)).astype(np.float32)
        self._score_scale = 1.0 / rules.match_target
        self._reward_scale = self._sign / rules.match_target
        # An end's features by the code 4*value + 2*double + live (value V: no end, all zeros;
        # V + 1, a closed end: the closed flag only).
        width = V + 4
        slot_rows = np.zeros((4 * (V + 2), width), np.float32)
        for v in range(V):
            for double in (0, 1):
                for live in (0, 1):
                    row = slot_rows[4 * v + 2 * double + live]
                    row[v], row[V], row[V + 2], row[V + 3] = 1.0, 1.0, double, live
        slot_rows[4 * (V + 1) :, V + 1] = 1.0
        self._slot_rows = slot_rows
        self._slot_bits = slot_rows.astype(np.int64) @ np.left_shift(1, np.arange(width))  # (as bits)
        self._obs_words = -(-self.observation_size // 64)  # _observe's bit string: int64 words a row
        self._blank_bit = ts.bit[ts.ids[(0, 0)]]  # (remembered penalties: a lone 0-0 counts LONE_BLANK)
        # The mask's words: action tile * S + slot, 64 // S tiles a word (S = 2, 4: bit t of a
        # slot's mask spread to bit S*t; the places game sets its few legal actions instead).
        self._spread_by = _spread_rounds(S) if S in (2, 4) else []
        self._per_word = 64 // S
        self._words = -(-T // self._per_word)
        self._mask_words = -(-self.num_actions // 64)  # (the plays' words, then the extras')
        # The opening order's rank of each tile (``opens.order``; T for a tile not in it); None:
        # a lot draws the leader.
        order = kind.opens.order
        self._opening_rank: np.ndarray | None = None
        if order is not None:
            opening = order(ts)
            self._opening_rank = np.full(T, T, np.int64)
            self._opening_rank[opening] = np.arange(len(opening))

        # --- the tables --------------------------------------------------------------------
        B = self.num_envs
        self._rows = np.arange(B)
        self.hands = np.zeros((B, n), np.int64)
        self.order = np.zeros((B, T), np.int64)
        self.drawn = np.full(B, T, np.int64)
        self.played = np.zeros(B, np.int64)
        self.count = np.zeros(B, np.int64)
        self.ends = np.full((B, S), V, np.int64)
        self.doubled = np.zeros((B, S), bool)
        self.length = np.zeros((B, S), np.int64)
        # each table's east and west slots (a constant: a whole-array OR with it is a twentieth
        # of the time of one that broadcasts a row of S)
        self._east_west = np.zeros((B, S), bool)
        self._east_west[:, :_NORTH] = True
        self.lead_tile = np.zeros(B, np.int64)
        self.spinner = np.full(B, -1, np.int64)
        self.depth = np.zeros(B, np.int64)  # a spinner on an arm: its place there (1: first)
        self.spin_value = np.zeros(B, np.int64)
        self.current = np.zeros(B, np.int64)
        self.leader = np.zeros(B, np.int64)
        self.required = np.full(B, -1, np.int64)
        self.passes = np.zeros(B, np.int64)
        self.voids = np.zeros((B, n), np.int64)
        self.scores = np.zeros((B, D), np.int64)
        self.start = np.zeros((B, D), np.int64)
        self.match_over = np.zeros(B, bool)
        self.episodes = np.zeros(B, np.int64)
        self.continuing = np.zeros(B, bool)  # the seat to move laid a tile this turn (may stop)
        self.last_layer = np.zeros(B, np.int64)  # who laid the round's last tile
        self.remembered = np.zeros((B, n), np.int64)  # remembered penalties: per seat, not written
        self.opened = np.zeros((B, n), bool)  # ... and whose score is open
        # Each table's deal read for its draws (_index_deals): the tiles dealt before each place
        # p = 0..T (a mask), and per value the places (bit p) of the tiles carrying it (V, V + 1:
        # none).
        self._dealt_before = np.zeros((B, T + 1), np.int64)
        self._suit_places = np.zeros((B, V + 2), np.int64)
        # Flat views and row offsets, for ``take`` on (table, seat), (table, side), (table, slot).
        self._flat_hands, self._flat_voids = self.hands.reshape(-1), self.voids.reshape(-1)
        self._flat_scores = self.scores.reshape(-1)
        self._flat_ends, self._flat_doubled = self.ends.reshape(-1), self.doubled.reshape(-1)
        self._flat_length = self.length.reshape(-1)
        self._flat_before = self._dealt_before.reshape(-1)
        self._flat_suit_places = self._suit_places.reshape(-1)
        self._seat_base, self._side_base, self._end_base = self._rows * n, self._rows * D, self._rows * S
        # the same repeated along a row of seats, of the other seats, of sides: an add of a whole
        # array takes half the time of one broadcasting a column
        self._seats_base = np.repeat(self._seat_base[:, None], n, axis=1)
        self._others_base = np.ascontiguousarray(self._seats_base[:, 1:])
        self._sides_base = np.repeat(self._side_base[:, None], D, axis=1)
        self._action_base = self._rows * self.num_actions
        self._base = 0
        # Each table's scalar env's np_random (a PCG64 Generator, reseeded at each episode).
        self._dealer = Dealer(B, T, rules.shuffled_tiles, n)
        self._mask: np.ndarray | None = None
        self._line: _Line | None = None  # the places line of every table, this step
        self._legal = np.empty(0, np.int64)  # the places tables' legal actions, set in _mask
        if self._places:
            self._init_places(rules)
        # Written where a table's round ends (_record), before the next deal: per side the
        # score plus remembered points (``search.standing``), whether the match ended, and then
        # the rules' outcome of ``match_keys`` (else 0).
        self.round_standing = np.zeros((B, D), np.int64)
        self.round_match_over = np.zeros(B, bool)
        self.round_outcome = np.zeros((B, D), np.float64)
        # The tables' state (snapshot, restore): every public array but the records (the rest
        # are lookups).
        self._state_names = tuple(
            name
            for name, value in vars(self).items()
            if isinstance(value, np.ndarray) and name[0] != "_" and name not in _RECORDS
        )
        self.observing = True  # False: no observations (``obs`` has no columns), masks only
        # True: a finished table deals its last deal again, its last leader leading (no
        # Generator, no Python a table): for batches whose later rounds nobody reads (rollouts).
        self.redealing = False
        # (load: a game of these rules has this extra; its per-seat lists are these arrays)
        self._extra_type = type(rules.new_extra())
        self._seat_extras = (
            ("remembered", "opened")
            if self._remembered
            else ("places", "metros", "metro_points")
            if self._places
            else ()
        )

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
        action = self._checked(actions, self._mask)
        if self._places:
            return self._step_places(action)
        B, n = self.num_envs, self.num_players
        before = self.scores.copy()

        # Lay: the lead makes the east and west ends (east the high half), else the tile's
        # other half is the end it was laid on (a face-down double closes it). A ``stop`` lays
        # nothing (tile T: no bits, no halves, not a double) and leaves the ends as they are.
        seat, tile, slot, hand = self._take_tiles(action)
        lo, hi, double = self._lo.take(tile), self._hi.take(tile), self._is_double.take(tile)
        at_end = self._end_base + slot  # (flat indices)
        inner = self._flat_ends.take(at_end)
        outer = lo + hi - inner
        if self._face_down:
            outer = np.where(self._lay_down.take(action), self._closed, outer)
        leading = self.count == 0
        if self._continues is None:
            laying = None
            self._flat_ends[at_end] = outer
            self._flat_doubled[at_end] = double
            grows = ~leading
        else:
            laying = action != self._stop
            self._flat_ends[at_end] = np.where(laying, outer, inner)
            self._flat_doubled[at_end] = np.where(laying, double, self._flat_doubled.take(at_end))
            grows = laying & ~leading
        if self._lengths:
            self._flat_length[at_end] += grows
        self._lead(np.flatnonzero(leading), tile, lo, hi, double)
        if self._spinner is not Spinner.NONE:
            self._spin(leading, slot, double, lo)
        self.played |= self._bit.take(tile)
        self.count += 1 if laying is None else laying
        self.passes[:] = 0
        if self._last_layer_leads:
            self.last_layer = seat.copy() if laying is None else np.where(laying, seat, self.last_layer)

        reward = np.zeros((B, n), np.float32)
        reached = np.zeros(B, bool)
        if self._counts:  # the open ends' count scores at once; the target ends the match there
            count = self._count()
            points = np.where((count % 5 == 0) if laying is None else (count % 5 == 0) & laying, count, 0)
            at_side = self._side_base + self._side_of.take(seat)
            self._flat_scores[at_side] += points
            reached = self._flat_scores.take(at_side) >= self._target
            self.match_over |= reached
            if self._points:
                reward[:] = ((self.scores - before) * self._reward_scale + 0.0)[:, self._side_of]

        went_out = (hand == 0) & ~reached
        over = went_out | reached
        # Every line has its ends now: the next seat lays, or draws and passes (_advance); in a
        # multi-tile turn the same seat lays on while the rules let it and a tile fits (else
        # the turn ends by itself), and a ``stop`` ends it.
        playable = _or_columns(self._suit.take(self.ends))
        if laying is None:
            self.current = np.where(over, seat, self._next.take(seat))
        else:
            keeps = laying & (self.count > 1) if self._continues == "after_lead" else double
            keeps &= ~over & ((hand & playable) != 0)
            self.continuing = keeps
            self.current = np.where(over | keeps, seat, self._next.take(seat))
        held = self._flat_hands.take(self._seat_base + self.current)
        stuck = np.flatnonzero(((held & playable) == 0) & ~over)
        blocked = self._advance(stuck, playable[stuck])

        is_blocked = np.zeros(B, bool)
        is_blocked[blocked] = True
        over |= is_blocked
        ended = np.flatnonzero(over)
        is_blocked = is_blocked[ended]
        winner = np.where(is_blocked, -1, seat[ended])
        return self._finish_step(
            ended, lambda: self._end_round(ended, winner, is_blocked, before[ended]), reward
        )

    def snapshot(self) -> dict[str, Any]:
        if self._mask is None:
            raise ValueError("snapshot() needs dealt tables: call reset() first")
        return {
            **self._snapshot_header(),
            "base": self._base,
            "arrays": {name: getattr(self, name).copy() for name in self._state_names},
            "rngs": [self._dealer.state(i) for i in range(self.num_envs)],
        }

    def restore(self, snapshot: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, Info]:
        self._check_snapshot(snapshot)
        arrays, rngs = snapshot["arrays"], snapshot["rngs"]
        if set(arrays) != set(self._state_names) or len(rngs) != self.num_envs:
            raise ValueError(
                f"the snapshot's tables are not this kernel's: arrays {sorted(arrays)}, "
                f"{len(rngs)} random states (want {sorted(self._state_names)}, {self.num_envs})"
            )
        for name in self._state_names:
            mine, theirs = getattr(self, name), np.asarray(arrays[name])
            if theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                raise ValueError(
                    f"the snapshot's {name} is {theirs.dtype}{list(theirs.shape)}, "
                    f"this kernel's {mine.dtype}{list(mine.shape)}"
                )
        streams, base = read_states(rngs, self.num_envs), int(snapshot["base"])
        for name in self._state_names:  # (in place: the flat views stay views)
            np.copyto(getattr(self, name), arrays[name])
        self._dealer.set_states(streams)
        self._index_deals(self._rows, self.order)
        self._base = base
        self._line = None
        obs, mask = self._outputs()
        return obs, mask, {"player": self.current.copy()}

    def load(self, games: Sequence[State]) -> tuple[np.ndarray, np.ndarray, Info]:
        """Put game ``i`` (a scalar ``State`` of these rules, at a decision, its draws fixed:
        ``shuffled`` or an empty stock) into row ``i`` and show the rows as :meth:`reset` does.
        The next steps play each row's round in progress exactly as ``rules.apply`` on a clone
        (the draws from the end of its stock first); after that round the row deals its own.
        The games are only read, each distinct one once (a rollout loads a world in a row per
        candidate action); a game that is none of these, or whose legal actions the kernel does
        not find, raises ValueError, changing nothing."""
        B, n, T, V, D, S = self.num_envs, self.num_players, self._T, self._V, self._D, self._S
        if len(games) != B:
            raise ValueError(f"load() takes one game a table: {len(games)} games for {B} tables")
        first: dict[int, int] = {}  # id(game) -> its index among the distinct games
        which = np.array([first.setdefault(id(game), len(first)) for game in games], np.int64)
        distinct = list({id(game): game for game in games}.values())  # (in first's order)
        U = len(distinct)
        shape = (n, D, S, T, self._spinner, self._extra_type)
        hands: list[int] = []
        stock: list[int] = []
        left: list[int] = []
        line_ints: list[int] = []  # per game: played, count, lead tile, spinner, depth, spinner value
        slots: list[int] = []  # per game and slot: value, status, double at the end, length
        turn: list[int] = []  # per game: current, leader, required lead, passes, tiles laid this turn
        voids: list[int] = []
        scores: list[int] = []
        legal: list[int] = []
        legal_count: list[int] = []
        seat_extras: list[int] = []  # per game, its extra's per-seat lists (_seat_extras)
        branching: list[int] = []  # per game (the places game): the first double is down, slots in use
        spinner, is_places = self._spinner is not Spinner.NONE, self._places
        read_extras = attrgetter(*self._seat_extras) if self._seat_extras else None
        for u, game in enumerate(distinct):
            line = game.line if isinstance(game, State) else None
            if (
                line is None
                or game.round_over
                or game.chance is not None
                or not game.legal
                or not (game.shuffled or not game.stock)
                or (
                    len(game.hands),
                    len(game.scores),
                    line.num_slots,
                    line.tiles.size,
                    line.spinner_rule,
                    type(game.extra),
                )
                != shape
            ):
                raise ValueError(f"load(): game {which.tolist().index(u)} {self._load_refusal(game)}")
            hands += game.hands
            stock += game.stock
            left.append(len(game.stock))
            line_ints += (line.played, line.count, line.lead_tile, line.spinner_slot, line.spinner_depth)
            line_ints.append(line.spinner_value() if spinner and line.spinner_slot >= 0 else 0)
            slots += line.value
            slots += line.state
            slots += line.double_end
            slots += line.length
            turn += (game.current, game.leader, game.required_lead, game.passes, game.turn_laid)
            voids += game.voids
            scores += game.scores
            scores += game.round_start_scores
            scores.append(game.match_over)
            legal += game.legal
            legal_count.append(len(game.legal))
            if read_extras is not None:
                for values in read_extras(game.extra):
                    seat_extras += values
            if is_places:
                branching += (game.extra.doubles_open, game.extra.ends)
        # The stock in draw order at the end of ``order`` (its last tile first, at ``drawn``),
        # the other tiles before it in id order.
        left_at = np.array(left, np.int64)
        drawn = T - left_at
        in_row = np.arange(len(stock)) - np.repeat(np.cumsum(left_at) - left_at, left_at)
        stock_rows = np.repeat(np.arange(U), left_at)
        order = np.zeros((U, T), np.int64)
        order[stock_rows, T - 1 - in_row] = stock
        in_stock = np.zeros((U, T), bool)
        in_stock[stock_rows, stock] = True
        rest_rows, rest_tiles = np.nonzero(~in_stock)
        order[rest_rows, np.arange(len(rest_rows)) - np.repeat(np.cumsum(drawn) - drawn, drawn)] = rest_tiles
        hand_masks = np.array(hands, np.int64).reshape(U, n)
        line_arr = np.array(line_ints, np.int64).reshape(U, 6)
        slot_arr = np.array(slots, np.int64).reshape(U, 4, S)
        turn_arr = np.array(turn, np.int64).reshape(U, 5)
        score_arr = np.array(scores, np.int64).reshape(U, 2 * D + 1)
        # Every tile once: in a hand, on the table or in the stock.
        held = np.bitwise_count(hand_masks).sum(axis=1) + np.bitwise_count(line_arr[:, 0]) + left_at
        union = _or_columns(hand_masks) | line_arr[:, 0] | (in_stock @ self._bit[:T])
        wrong = (held != T) | (union != self._bit[:T].sum()) | (in_stock.sum(axis=1) != left_at)
        if wrong.any():
            raise ValueError(
                f"load(): game {np.flatnonzero(wrong[which])[0]}'s hands, table and stock are not "
                f"the set's {T} tiles, once each"
            )
        saved = {name: getattr(self, name).copy() for name in self._state_names}
        self.hands[:] = hand_masks[which]
        self.order[:] = order[which]
        self._index_deals(self._rows, self.order)
        self.drawn[:] = drawn[which]
        line_arr, slot_arr = line_arr[which], slot_arr[which]
        turn_arr, score_arr = turn_arr[which], score_arr[which]
        self.played[:], self.count[:] = line_arr[:, 0], line_arr[:, 1]
        self.lead_tile[:] = np.maximum(line_arr[:, 2], 0)
        self.spinner[:], self.depth[:], self.spin_value[:] = line_arr[:, 3], line_arr[:, 4], line_arr[:, 5]
        value, status = slot_arr[:, 0], slot_arr[:, 1]
        self.ends[:] = np.where(status == OPEN, value, np.where(status == CLOSED, self._closed, V))
        self.doubled[:] = slot_arr[:, 2] != 0
        self.length[:] = slot_arr[:, 3] if self._lengths else 0
        self.current[:], self.leader[:], self.required[:] = turn_arr[:, 0], turn_arr[:, 1], turn_arr[:, 2]
        self.passes[:] = turn_arr[:, 3]
        self.continuing[:] = (turn_arr[:, 4] > 0) if self._continues else False
        self.last_layer[:] = self.current  # (it names only the next round's leader: the kernel's own)
        self.voids[:] = np.array(voids, np.int64).reshape(U, n)[which]
        self.scores[:], self.start[:] = score_arr[:, :D], score_arr[:, D : 2 * D]
        self.match_over[:] = score_arr[:, 2 * D] != 0
        if read_extras is not None:
            extras = np.array(seat_extras, np.int64).reshape(U, len(self._seat_extras), n)[which]
            for k, name in enumerate(self._seat_extras):
                getattr(self, name)[:] = extras[:, k]
        if is_places:
            self.doubles_open[:], self.used[:] = np.array(branching, np.int64).reshape(U, 2)[which].T
        self._line = None
        legal_at = self._places_legal() if self._places else None
        mask = self._legal_mask() if legal_at is None else self._mask_of(legal_at)
        want = np.zeros((U, self.num_actions), bool)
        want[np.repeat(np.arange(U), legal_count), legal] = True
        want = want[which]
        if not np.array_equal(mask, want):
            for name, before in saved.items():  # (in place: the flat views stay views)
                np.copyto(getattr(self, name), before)
            self._index_deals(self._rows, self.order)
            i = int(np.flatnonzero((mask != want).any(axis=1))[0])
            raise ValueError(
                f"load(): game {i}'s legal actions {np.flatnonzero(want[i]).tolist()} are not the "
                f"kernel's {np.flatnonzero(mask[i]).tolist()}: not a game of this {self.name} table?"
            )
        self._mask = mask
        if legal_at is not None:
            self._legal = legal_at
        obs = self._observe(self.current, moving=True) if self.observing else np.zeros((B, 0), np.float32)
        return obs, mask.copy(), {"player": self.current.copy()}

    def _load_refusal(self, game: Any) -> str:
        """Why :meth:`load` refuses ``game``, in words."""
        if not isinstance(game, State):
            return f"is a {type(game).__name__}, not a chain game's State"
        if game.round_over:
            return "is at the end of its round: no decision to play from"
        if game.chance is not None:
            return f"waits on a chance point ({game.chance}), not a decision"
        if not game.legal:
            return "lists no legal action: nobody to move"
        if not game.shuffled and game.stock:
            return "has a stock whose order is not fixed (shuffled is False): its draws are chance points"
        line = game.line
        return (
            f"is not a game of this {self.name} table: {len(game.hands)} hands, {len(game.scores)} sides, "
            f"{line.num_slots} slots, {line.tiles.size} tiles, spinner {line.spinner_rule.value}, "
            f"extra {type(game.extra).__name__} (want {self.num_players}, {self._D}, {self._S}, "
            f"{self._T}, {self._spinner.value}, {self._extra_type.__name__})"
        )

    def _checked(self, actions: Any, mask: np.ndarray) -> np.ndarray:
        """``actions`` as int64[B] where each is legal at its table in ``mask`` (the kept one),
        found by a flat ``take`` on it; anything else goes to :func:`checked_actions` for its
        ValueError (a third of its cost: no two-array fancy index on the mask)."""
        array = np.asarray(actions)
        if array.shape == (self.num_envs,) and array.dtype.kind in "iu":
            action = array.astype(np.int64, copy=False)
            in_range = (action.view(np.uint64) < self.num_actions).all()  # (a negative one: past it)
            if in_range and mask.reshape(-1).take(self._action_base + action).all():
                return action
        return checked_actions(actions, mask)

    def _take_tiles(self, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each table's seat to move, the tile and slot of its action, and its hand once the
        tile left it (written back): the start of every lay."""
        seat = self.current.copy()
        tile, slot = self._lay_tile.take(action), self._lay_slot.take(action)
        at_seat = self._seat_base + seat  # (flat indices)
        hand = self._flat_hands.take(at_seat) & ~self._bit.take(tile)
        self._flat_hands[at_seat] = hand
        return seat, tile, slot, hand

    def _lead(
        self, leads: np.ndarray, tile: np.ndarray, lo: np.ndarray, hi: np.ndarray, double: np.ndarray
    ) -> None:
        """The first tile of the round at ``leads``: it makes the east (its high half) and west
        ends, and is the lead tile."""
        if leads.size:
            east = self._end_base.take(leads)  # (flat indices: east, then west at + 1)
            self._flat_ends[east], self._flat_ends[east + 1] = hi.take(leads), lo.take(leads)
            self._flat_doubled[east] = self._flat_doubled[east + 1] = double.take(leads)
            self.lead_tile[leads] = tile.take(leads)

    def _finish_step(
        self,
        ended: np.ndarray,
        end: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]],
        reward: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Info]:
        """A step's outputs: the rounds of ``ended`` scored (``end``: which episodes ended, each
        seat's reward and episode outcome there) and the next round or episode dealt, then what
        each table shows (the scores as the rounds were scored: before a new match zeroes them)."""
        B = self.num_envs
        done, round_over = np.zeros(B, bool), np.zeros(B, bool)
        outcome = np.zeros((B, self.num_players), np.float64)
        if ended.size:
            done_now, reward_rows, outcome_rows = end()
            reward[ended] = reward_rows
            done[ended] = done_now
            round_over[ended] = True
            outcome[ended] = outcome_rows
        side_scores = self.scores.copy()  # (before the deal: a new match zeroes them)
        if ended.size:
            self.episodes[ended[done[ended]]] += 1
            self._deal(ended, new_match=done[ended])
        obs, mask = self._outputs()
        info = {
            "player": self.current.copy(),
            "round_over": round_over,
            "side_scores": side_scores,
            "outcome": outcome,
        }
        return obs, mask, reward, done, info

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

    def _spin(self, leading: np.ndarray, slot: np.ndarray, double: np.ndarray, lo: np.ndarray) -> None:
        """The spinner of the tiles just laid (``core.line``): the first double is it, laid as the
        lead or on the east or west arm; its north and south arms open (showing its value, a
        double at their end) at once (``Spinner.AT_ONCE``) or once both its sides hold a tile
        (``AFTER_SIDES``)."""
        made = double & (self.spinner < 0) & (leading | (slot <= 1))
        new = np.flatnonzero(made)
        if new.size:
            self.spinner[new] = np.where(leading[new], _LEAD, slot[new])
            self.depth[new] = self.length[new, slot[new]]
            self.spin_value[new] = lo[new]
        if self._spinner is Spinner.AT_ONCE:
            opening = new
        else:
            waiting = np.flatnonzero(
                ~made & ~leading & (self.spinner >= 0) & (self.ends[:, _NORTH] == self._V)
            )
            if not waiting.size:
                return
            where = self.spinner[waiting]
            lengths = self.length[waiting]
            on_arm = lengths[np.arange(len(waiting)), np.minimum(where, 1)] > self.depth[waiting]
            both = (lengths[:, 0] > 0) & (lengths[:, 1] > 0)
            opening = waiting[np.where(where == _LEAD, both, on_arm)]
        if opening.size:
            self.ends[opening, _NORTH:] = self.spin_value[opening, None]
            self.doubled[opening, _NORTH:] = True

    def _count(self) -> np.ndarray:
        """All Fives' count of the open ends (a double at an end counts both halves, an empty
        north or south arm nothing, a lone lead tile all its pips)."""
        return np.where(self.count == 1, self._pips.take(self.lead_tile), _sum_columns(self._end_values()))

    def _end_values(self) -> np.ndarray:
        """int64[B, S]: what each end adds to All Fives' count."""
        counted = self.length > 0  # (a north or south end: once its arm holds a tile)
        counted |= self._east_west
        counted &= self.ends < self._V
        values = self.ends << self.doubled  # (a double: twice the value)
        values *= counted
        return values

    def _open_values(self, ends: np.ndarray) -> np.ndarray:
        """The values the ``ends`` (int64[K, S]: tables' ends) show, as a mask a table."""
        return _or_columns(self._value_bit.take(ends))

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
                # Draw up to the first tile of the boneyard that fits (or all of it), at once: the
                # places from ``start`` on of the tiles carrying an end's value, the lowest of them,
                # the tiles dealt between (_index_deals).
                start = self.drawn.take(drawers)
                ends = self.ends.take(drawers, axis=0)
                suits = self._flat_suit_places.take(drawers[:, None] * (self._V + 2) + ends)
                fit = _or_columns(suits) & np.left_shift(-1, start)
                found = fit != 0
                # (the lowest set bit's place, + 1: the bits below it, counted)
                stop = np.where(found, np.bitwise_count((fit & -fit) - 1) + 1, T)
                row = drawers * (T + 1)
                got = self._flat_before.take(row + stop) ^ self._flat_before.take(row + start)
                at = self._seat_base.take(drawers) + self.current.take(drawers)
                self._flat_hands[at] = self._flat_hands.take(at) | got
                self.drawn[drawers] = stop
                # (a draw sets the seat's voids to the values open: the rules')
                self._flat_voids[at] = self._open_values(ends)
                left = ~found  # the boneyard ran out before a tile fitted: that seat passes
                tables = np.concatenate([tables[~can], drawers[left]])
                playable = np.concatenate([playable[~can], dplay[left]])
        blocked = []
        for _ in range(self.num_players):  # passes: the ends stay, so no seat after them draws
            if not tables.size:
                break
            seat = self.current[tables]
            self.voids[tables, seat] |= self._open_values(self.ends[tables])
            self.passes[tables] += 1
            full = self.passes[tables] >= self.num_players
            blocked.append(tables[full])
            tables, playable = tables[~full], playable[~full]
            self.current[tables] = self._next[self.current[tables]]
            stuck = (self.hands[tables, self.current[tables]] & playable) == 0
            tables, playable = tables[stuck], playable[stuck]
        return np.concatenate(blocked) if blocked else tables

    def _hand_pips(self, hands: np.ndarray) -> np.ndarray:
        """Pips in each hand (int64 masks of any shape), a table lookup per byte of the set's
        (``take`` on the flat table, byte k's at k * 256)."""
        as_bytes = np.ascontiguousarray(hands).view(np.uint8).reshape(*hands.shape, 8)
        return self._flat_byte_pips.take(as_bytes[..., : self._tile_bytes] + self._byte_base).sum(axis=-1)

    def _end_round(
        self, tables: np.ndarray, winner: np.ndarray, blocked: np.ndarray, before: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Score the round of ``tables`` (``winner``: the seat that went out or reached the
        target, -1 where ``blocked``); return which episodes ended, each seat's reward and its
        episode outcome (:meth:`_round_rewards`)."""
        n = self.num_players
        hands = self.hands.take(tables, axis=0)
        pips = self._hand_pips(hands)  # [K, P]
        if self._remembered:  # round points: a lone 0-0 counts LONE_BLANK (and a block goes by them)
            pips = np.where(hands == self._blank_bit, LONE_BLANK, pips)
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
        # the next round's leader (winner_leads or last_layer_leads; where the next deal decides,
        # _deal names it)
        if self._last_layer_leads:
            self.leader[tables] = self.last_layer[tables]
        else:
            self.leader[tables] = np.where(winner >= 0, winner, self._next.take(self.leader.take(tables)))
        win_side = np.where(winner >= 0, self._side_of.take(np.maximum(winner, 0)), -1)
        winners = self._sides == win_side[:, None]
        match_over = self.match_over.take(tables)
        scoring = ~match_over  # (a match the count ended scores no round)
        if self._remembered:  # an open score writes; else the seat that went out loses what it
            # remembered, more than OPEN_ABOVE opens the score (remembered + this round), the rest
            # is remembered
            opened, remembered = self.opened[tables], self.remembered[tables]
            out = winners & ~blocked[:, None]
            opens = ~opened & ~out & (pips > OPEN_ABOVE)
            gained = np.where(opened, pips, np.where(opens, remembered + pips, 0))
            self.remembered[tables] = np.where(~opened & ~out & ~opens, remembered + pips, 0)
            self.opened[tables] = opened | opens
        elif self._fives:  # the winner's side scores the others' pips, to the nearest 5
            others = np.where(winners, 0, side_pips).sum(axis=1)
            gained = np.where(winners & scoring[:, None], 5 * ((others[:, None] + 2) // 5), 0)
        else:  # every other side adds its pips in hand as penalties
            gained = np.where(~winners & scoring[:, None], side_pips, 0)
        scores = self.scores.take(tables, axis=0) + gained
        self.scores[tables] = scores
        self.match_over[tables] = match_over = match_over | (scores.max(axis=1) >= self._target)
        if self._remembered:  # match_keys (score, fewer remembered points); no partners: a side is its seat
            remembered = self.remembered[tables]
            outcome = self._record(tables, scores + remembered, -scores * _TIE_KEY - remembered)
        else:
            outcome = self._record(tables, scores, self._sign * scores)
        done = np.ones(len(tables), bool) if self._round_episode else match_over
        if self._round_episode:  # the rules' round_keys, signed: (won, fewer round points) or (won, change)
            if self._remembered:
                keys = winners * _TIE_KEY - pips
            else:
                keys = winners * _TIE_KEY + self._sign * (scores - self.start.take(tables, axis=0))
            outcome = self._outcome(keys)
        return self._round_rewards(done, scores - before, outcome)

    def _round_rewards(
        self, done: np.ndarray, gained: np.ndarray, outcome: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What the ended rounds pay: which episodes ended, each seat's reward (the points
        ``gained`` with ``reward="points"``, else the outcome) and each seat's episode outcome
        (``outcome`` per side: the episode's, 0 where the match goes on)."""
        by_seat = outcome[:, self._side_of]
        if self._points:
            return done, (gained * self._reward_scale + 0.0)[:, self._side_of], by_seat
        return done, by_seat, by_seat

    def _record(self, tables: np.ndarray, standing: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Write the records of the rounds just ended at ``tables`` (before the next deal):
        ``standing`` per side, whether the match ended, and then the outcome of ``keys`` (the
        rules' match_keys, signed: larger is better); return that outcome (0: the match goes on)."""
        match_over = self.match_over[tables]
        outcome = np.zeros(keys.shape, np.float64)
        over = np.flatnonzero(match_over)
        if over.size:  # (most rounds end no match: their outcomes are never ranked)
            outcome[over] = self._outcome(keys[over])
        self.round_standing[tables] = standing
        self.round_match_over[tables] = match_over
        self.round_outcome[tables] = outcome
        return outcome

    def _index_deals(self, tables: np.ndarray, order: np.ndarray, dealt: bool = False) -> None:
        """Read the deals ``order`` (int64[K, T]) of ``tables`` for their draws, once a round
        rather than at every draw: ``_dealt_before`` (the tiles dealt before each place) and
        ``_suit_places`` (per value, its tiles' place bits: a seat's forced draws are then a
        lowest set bit); where ``dealt`` (a new round), the hands too."""
        hand_size = self._hand_size if dealt else 0
        suits = self._suit_places if not self._places else self._suit_places[:0]  # (places: not read)
        tiles = self._bit, self._lo, self._hi
        _index_rows(tables, order, *tiles, hand_size, self.hands, self._dealt_before, suits)

    def _outcome(self, keys: np.ndarray) -> np.ndarray:
        """Per side, the rules' outcome of ``keys`` (larger is better): rank k of D pays
        1 - 2(k-1)/(D-1), ties sharing the mean rank (two sides: 1 and -1, or 0 and 0)."""
        if keys.shape[1] == 2:  # (the same floats: +0.0 for a tie, as 1 - 2 * 0.5)
            ahead = np.sign(keys[:, 0] - keys[:, 1])
            return np.stack([ahead, -ahead], axis=1).astype(np.float64)
        better = (keys[:, None, :] > keys[:, :, None]).sum(axis=2)
        tied = (keys[:, None, :] == keys[:, :, None]).sum(axis=2)
        rank = better + (tied + 1) / 2
        return 1.0 - 2.0 * (rank - 1) / (keys.shape[1] - 1)

    def _deal(self, tables: np.ndarray, new_match: np.ndarray) -> None:
        """Deal the next round of ``tables`` (a new episode where ``new_match``) as the scalar
        env does: the rules shuffle the tiles with the table's own Generator (a new episode's
        seeded as ``DominoEnv.reset`` seeds it), the hands are the shuffle's first tiles, a
        hand after another, the boneyard the rest, drawn in that order (``deal_in_order``);
        then the opening, a lot drawn from the same Generator where it is by lot (the
        :class:`~domino_env.vector.dealing.Dealer` draws both)."""
        fresh = tables[new_match]
        n, size, T = self.num_players, self._hand_size, self._T
        if self.redealing:
            order = self.order[tables]
        else:
            seeds = episode_seeds(self._base, self.episodes, tables)
            order = self._dealer.shuffle(tables, new_match, seeds)
        self.order[tables] = order
        self._index_deals(tables, order, dealt=True)
        self.drawn[tables] = n * size
        # The opening (``opening``): a new match's round, or every round where the rules say so,
        # is led by the holder of the first dealt tile of ``opens.order``, which it must lead;
        # with none dealt (or no order) a lot draws the leader from the same Generator. A later
        # round's leader is the one the last round named (``leads_next``), leading any tile.
        leader, required = self.leader[tables], np.full(len(tables), -1, np.int64)
        opening = by_lot = np.flatnonzero(new_match | self._every_round)
        if self._opening_rank is not None and opening.size:
            ranks = self._opening_rank.take(order.take(opening, axis=0)[:, : n * size])
            first = ranks.argmin(axis=1)
            named = ranks.min(axis=1) < T
            at, first = opening[named], first[named]
            required[at] = order.reshape(-1).take(at * T + first)
            leader[at] = first // size
            by_lot = opening[~named]
        if by_lot.size and not self.redealing:  # (redealt: the last leader leads again)
            leader[by_lot] = self._dealer.lots(tables[by_lot])
        self.current[tables] = self.leader[tables] = leader
        self.required[tables] = required
        self.played[tables] = 0
        self.count[tables] = 0
        self.ends[tables] = self._V
        self.doubled[tables] = False
        self.passes[tables] = 0
        self.voids[tables] = 0
        self.scores[fresh] = 0
        self.match_over[fresh] = False
        # (the arms' lengths, the spinner and a multi-tile turn stay at rest where the rules have none)
        if self._lengths:
            self.length[tables] = 0
        if self._spinner is not Spinner.NONE:
            self.spinner[tables] = -1
        if self._continues:
            self.continuing[tables] = False
        if self._remembered:
            self.remembered[fresh] = 0
            self.opened[fresh] = False
        if self._places:
            if self._line is not None:  # an empty line offers nothing
                for part in self._line:
                    part[tables] = 0
            self.places[tables] = 0
            self.doubles_open[tables] = False
            self.used[tables] = 0
            self.metros[fresh] = 0
            self.metro_points[fresh] = 0
        self.start[tables] = self.scores[tables]

    # --- what a seat sees ------------------------------------------------------------------

    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        """The seat to move's observation (none unless ``observing``) and legal actions at every
        table (kept for step)."""
        if self._places:
            legal = self._places_legal(self._line)
            self._line = None
            self._keep_legal(legal)
            mask = self._mask_of(legal)
        else:
            self._mask = self._legal_mask()
            mask = self._mask.copy()
        if not self.observing:
            return np.zeros((self.num_envs, 0), np.float32), mask
        return self._observe(self.current, moving=True), mask

    def _legal_mask(self) -> np.ndarray:
        """bool[B, A]: the legal actions of each table's seat to move (a line game's)."""
        hand = self._flat_hands.take(self._seat_base + self.current)
        fits = hand[:, None] & self._suit.take(self.ends)  # [B, S] (no end: none fit)
        leads = np.flatnonzero(self.count == 0)  # (a lead goes in the east slot: the required tile, else any)
        required, held = self.required.take(leads), hand.take(leads)
        fits[leads, 0] = np.where(required >= 0, held & self._bit.take(np.maximum(required, 0)), held)
        if self._arms_first:  # Cross: while an open arm holds no tile, a seat that can start one must
            unstarted = (self.ends < self._V) & (self.length == 0)
            starts = _or_columns(np.where(unstarted, fits, 0)) != 0
            fits = np.where(starts[:, None] & ~unstarted, 0, fits)
        # The mask as a bit string a row (bit a: action a), unpacked once: the plays
        # (_placement_words), then each double that fits an open end laid face down there (once
        # a spinner is down: a few a table, set one by one), then ``stop`` while the seat is in a
        # multi-tile turn.
        S, W = self._S, self._mask_words
        words = np.zeros((len(hand), W), np.int64)
        self._placement_words(fits, words)
        if self._face_down:
            down = (hand[:, None] & self._double_bit.take(self.ends)) != 0
            cells = np.flatnonzero(down & (self.spinner >= 0)[:, None])  # table * S + slot
            action = S * self._T + self._double_of.take(self.ends.reshape(-1).take(cells)) * S + cells % S
            np.bitwise_or.at(words.reshape(-1), cells // S * W + action // 64, np.left_shift(1, action % 64))
        if self._continues:
            self._put_bits(words, self.continuing, self._stop, 1)
        mask = np.unpackbits(words.view(np.uint8), axis=1, count=self.num_actions, bitorder="little")
        return mask.view(bool)

    def _placement_words(self, fits: np.ndarray, words: np.ndarray) -> None:
        """Set action tile * S + slot in the mask's bit string ``words`` where ``fits`` (int64[B,
        S]: per slot, the tiles that may be laid there; S = 2 or 4) holds the tile: each slot's
        mask spread (bit t to bit S*t), 64 // S tiles a word, the slots' words OR-ed together.
        (Slot-major, [S, B]: each slot's row contiguous, a third faster than [B, S]'s columns.)"""
        per, slots = self._per_word, np.ascontiguousarray(fits.T)
        for w in range(self._words):
            part = (slots >> (per * w)) & ((1 << per) - 1) if self._words > 1 else slots
            part = _spread(part, self._spread_by)
            word = part[0].copy()
            for slot in range(1, self._S):
                word |= part[slot] << slot
            words[:, w] = word

    def _observe(self, seat: np.ndarray, moving: bool) -> np.ndarray:
        """Each table's observation for ``seat`` (int64[B]), as the scalar encoder writes it;
        ``moving``: that seat is the one to move (its phase flags shown). The 0/1 blocks (hand,
        table, ends, voids, phase) are laid in one bit string a row at their places, unpacked
        and cast to float32 once with the whole row; the other blocks are then written over
        their zeros. (Gathers go through ``take`` on flat indices: a third of the cost of fancy
        indexing.)"""
        B, T, V = self.num_envs, self._T, self._V
        layout, put = self._layout, self._put_bits
        words = np.zeros((B, self._obs_words), np.int64)
        hand = self._flat_hands.take(self._seat_base + seat)
        put(words, hand, layout["hand"].start, T)
        put(words, self.played, layout["table"].start, T)
        live = (self._suit.take(self.ends) & ~self.played[:, None]) != 0
        ends = self._slot_bits.take(4 * self.ends + 2 * self.doubled + live)  # [B, S]
        self._put_fields(words, ends, layout["ends"].start, V + 4)
        others = self._others_from.take(seat, axis=0)  # next seat first
        others += self._others_base
        self._put_fields(words, self._flat_voids.take(others), layout["voids"].start, V)
        if moving:  # the phase flags: lead, and continuing in a multi-tile turn (an idle seat's: 0)
            put(words, self.count == 0, layout["phase"].start, 1)
            if self._continues:
                put(words, self.continuing, layout["phase"].start + 1, 1)
        size = self.observation_size
        out = np.unpackbits(words.view(np.uint8), axis=1, count=size, bitorder="little").astype(np.float32)
        out[:, layout["hand_sizes"]] = self._size_value.take(np.bitwise_count(self._flat_hands.take(others)))
        out[:, layout["boneyard"]] = self._stock_value.take(T - self.drawn)[:, None]
        sides = self._sides_from.take(seat, axis=0)
        sides += self._sides_base
        out[:, layout["scores"]] = (
            self._flat_scores.take(sides) * self._score_scale
        )  # (float64, then float32)
        for block in self._blocks:  # the variant observer's blocks, written over their zeros
            getattr(self, f"_block_{block}")(out, layout[block], seat, moving)
        return out

    @staticmethod
    def _put_bits(words: np.ndarray, mask: np.ndarray, offset: int, width: int) -> None:
        """OR ``mask`` (int64 or bool[B], below 2**width, width < 64) into the bit string
        ``words`` (int64[B, W]) at bit ``offset``, across two words where it straddles them."""
        word, at = divmod(offset, 64)
        words[:, word] |= mask << at
        if at + width > 64:
            words[:, word + 1] |= mask >> (64 - at)

    def _put_fields(self, words: np.ndarray, fields: np.ndarray, offset: int, width: int) -> None:
        """:meth:`_put_bits` of the columns of ``fields`` (int64[B, F], each below 2**width),
        one after another from bit ``offset``: as many side by side as fit 63 bits, put at once."""
        F, together = fields.shape[1], 63 // width
        for first in range(0, F, together):
            count = min(together, F - first)
            packed = fields[:, first]
            for k in range(1, count):
                packed = packed | fields[:, first + k] << (k * width)
            self._put_bits(words, packed, offset + first * width, count * width)

    def legal_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What each legal action of the seat to move scores at once, as the rules'
        ``immediate_points`` (All Fives' count; 0 where a lay scores nothing), for the rollouts'
        greedy rule: (table, action, points) int64 arrays, in the order of ``np.nonzero`` of the
        mask the last step showed (a few a table: computed for those only)."""
        if self._mask is None:
            raise ValueError("legal_points() needs dealt tables: call reset() or load() first")
        if self._lay_points == "own":
            raise ValueError(
                f"{self.name} has its own immediate_points, which the chain kernel does not know"
            )
        if self._lay_points == "count":
            return self._points_now()
        rows, actions = self._legal_actions()
        return rows, actions, np.zeros(len(rows), np.int64)

    def _legal_actions(self) -> tuple[np.ndarray, np.ndarray]:
        """(table, action) of every legal action the kept mask shows, in ``np.nonzero``'s order
        (from its flat indices: ``nonzero``'s two index arrays cost several times as much)."""
        assert self._mask is not None
        flat = np.flatnonzero(self._mask)
        rows = flat // self.num_actions
        return rows, flat - rows * self.num_actions

    def _points_now(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All Fives: (table, action, points) for each legal play of the seat to move: the count
        it would make where that is a multiple of 5, else 0."""
        rows, actions = self._legal_actions()  # (a few legal plays a table: computed for those only)
        values = self._end_values()
        at = rows * self._S + self._action_slot.take(actions)
        rest = _sum_columns(values).take(rows) - values.reshape(-1).take(at)  # the count but that end
        outer = self._action_halves.take(actions) - self.ends.reshape(-1).take(at)
        count = rest + outer * self._action_times.take(actions)
        count = np.where(self.count.take(rows) == 0, self._action_pips.take(actions), count)
        return rows, actions, np.where(count % 5 == 0, count, 0)

    def _block_points_now(self, out: np.ndarray, at: slice, seat: np.ndarray, moving: bool) -> None:
        """All Fives' ``points_now``: for the seat to move, the count each legal play would make
        where it is a multiple of 5 (/20), set at those plays only; an idle seat's zeros."""
        if moving:
            rows, actions, points = self._points_now()
            out.reshape(-1)[rows * out.shape[1] + at.start + actions] = points * _POINTS_SCALE

    def _block_arm_started(self, out: np.ndarray, at: slice, seat: np.ndarray, moving: bool) -> None:
        """Cross's ``arm_started``: per arm, it holds a tile beyond the lead."""
        out[:, at] = self.length > 0

    def _per_seat(self, values: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """[B, P]: each table's ``values`` (per seat) from ``seat`` on."""
        at = self._seats_from.take(seat, axis=0)
        at += self._seats_base
        return values.reshape(-1).take(at)

    def _block_remembered(self, out: np.ndarray, at: slice, seat: np.ndarray, moving: bool) -> None:
        """Osel's ``remembered``: each seat's remembered points (/ the target), from ``seat`` on."""
        out[:, at] = self._per_seat(self.remembered, seat) * self._score_scale

    def _block_opened(self, out: np.ndarray, at: slice, seat: np.ndarray, moving: bool) -> None:
        """Osel's ``opened``: each seat's score is open, from ``seat`` on."""
        out[:, at] = self._per_seat(self.opened, seat)

    # --- places: players going out are skipped, live ends, no move may leave none --------------

    def _init_places(self, rules: Any) -> None:
        """The places game's arrays: per seat its place (0: in play), its uncleared Metros and
        their points; per table the slots in use and whether the first double is down."""
        B, n = self.num_envs, self.num_players
        self.places = np.zeros((B, n), np.int64)
        self.metros = np.zeros((B, n), np.int64)
        self.metro_points = np.zeros((B, n), np.int64)
        self.doubles_open = np.zeros(B, bool)
        self.used = np.zeros(B, np.int64)  # slots in use (a new end opens at the first unused)
        self._penalty = int(rules.metro_penalty)
        self._down_base = self._S * self._T  # the first face-down action
        ts = rules.tile_set
        self._lone_zero = ts.bit[ts.ids[(0, 0)]]
        # _pair_tiles[u << V | w mask]: the tiles u-w for each w (not u) in the mask
        V = self._V
        masks = np.arange(1 << V)
        pair_tiles = np.zeros((V, 1 << V), np.int64)
        for u in range(V):
            for w in range(V):
                if w != u:
                    pair_tiles[u] |= np.where((masks >> w) & 1, ts.bit[ts.ids[(min(u, w), max(u, w))]], 0)
        self._pair_tiles = pair_tiles.reshape(-1)
        # value mask -> the tiles carrying those values, their doubles, its lowest and highest value
        has = ((masks[:, None] >> np.arange(V)) & 1).astype(bool)  # [2**V, V]
        self._suits_in = np.bitwise_or.reduce(np.where(has, self._suit[:V], 0), axis=1)
        self._doubles_in = np.bitwise_or.reduce(np.where(has, self._double_bit[:V], 0), axis=1)
        self._low_value = has.argmax(axis=1)  # (no value: 0)
        self._high_value = np.where(masks > 0, V - 1 - has[:, ::-1].argmax(axis=1), 0)

    def _places_line(self) -> _Line:
        """What each table's line offers, whoever holds the tiles (:class:`_Line`), read per
        value rather than per slot: every end showing a value offers the same tiles.

        A placement of tile u-w on an end showing u leaves no live end when the live values
        are u (and w), w's last tile off the table is this one, and no other open end shows
        u with a u-tile left; the first double (face up) when it is u's last tile and u the
        only live value; a double face down when u is the only live value and no other open
        end shows u with a u-tile left; an open double never. So only the lowest and highest
        live values have such tiles, and only while at most two values are live."""
        V, played, doubles_open = self._V, self.played, self.doubles_open
        shown = self._value_bit.take(self.ends)  # (closed and unused ends: 0)
        seen, many = shown[:, 0].copy(), np.zeros(self.num_envs, np.int64)
        for s in range(1, self._S):
            many |= seen & shown[:, s]
            seen |= shown[:, s]
        left = np.bitwise_count(self._suit[:V] & ~played[:, None])  # [B, V] tiles of a value left
        single = (left == 1).astype(np.int64) @ self._value_bit[:V]  # values with one tile left
        live = seen & ((left != 0).astype(np.int64) @ self._value_bit[:V])
        fit = self._suits_in.take(live) & ~played
        count = np.bitwise_count(live)
        lone = count == 1
        # the values w whose last tile u-w leaves no live end: any other (u alone), the other
        # live one (two live values), none (three)
        partner = np.where(lone, -1, np.where(count == 2, live, 0))
        low, high = self._low_value.take(live), self._high_value.take(live)
        # per value u (the low, the high): its bit, the tiles Metro on an end showing it, whether
        # another end showing u stays live, the tiles fine there (a tile u-w Metro on u may be
        # fine on w)
        on = []
        for u in (low, high):
            bit, here = self._value_bit.take(u), self._suit.take(u) & fit
            left_u = np.bitwise_count(here)
            kept = ((many & bit) != 0) & (left_u >= 2)
            tiles = self._pair_tiles.take((u << V) | (single & ~bit & partner))
            tiles |= np.where(~doubles_open & lone & (left_u == 1), self._double_bit.take(u), 0)
            tiles = np.where(kept, 0, tiles)
            on.append((bit, tiles, kept, here & ~tiles))
        (low_bit, low_metro, low_kept, low_fine), (high_bit, high_metro, _, high_fine) = on
        fine = fit & ~(low_metro | high_metro) | low_fine | high_fine
        down = np.where(doubles_open, self._doubles_in.take(live), 0)
        down_metro = np.where(lone & ~low_kept, down, 0)
        return _Line(fit, fine, seen, low_bit, high_bit, low_metro, high_metro, down, down_metro)

    def _places_legal(self, line: _Line | None = None) -> np.ndarray:
        """The legal actions of the seat to move at every table, as flat indices table * A +
        action: a tile in hand fits a live end only; once the first double is down each such
        double face down too; a move that would leave no live end (not the last tile, not an
        open double) only where nothing else fits and the boneyard is empty (else none: the
        seat draws). ``line``: :meth:`_places_line`, if known. (A seat has a few legal moves
        among the 1,210 actions of a double-nine table: they are found from the slots with a
        tile that fits, each unpacked alone, not from a whole unpacked mask.)"""
        T, S, A = self._T, self._S, self.num_actions
        line = self._places_line() if line is None else line
        hand = self._flat_hands.take(self._seat_base + self.current)
        checked = (self.count != 0) & (np.bitwise_count(hand) >= 2)
        metro = hand & (line.low_metro | line.high_metro | line.down_metro)
        drop = checked & (metro != 0) & (((hand & line.fine) != 0) | (self.drawn < T))
        up = self._suit.take(self.ends) & hand[:, None]  # [B, S] (a value with a tile in hand is live)
        dropping = np.flatnonzero(drop)
        if dropping.size:
            shown = self._value_bit.take(self.ends[dropping])
            low, high = line.low[dropping, None], line.high[dropping, None]
            low_metro, high_metro = line.low_metro[dropping, None], line.high_metro[dropping, None]
            up[dropping] &= ~np.where(shown == low, low_metro, np.where(shown == high, high_metro, 0))
        leads = np.flatnonzero(self.count == 0)
        if leads.size:
            required, held = self.required[leads], hand[leads]
            up[leads, 0] = np.where(required >= 0, held & self._bit.take(np.maximum(required, 0)), held)
        cells = np.flatnonzero(up != 0)  # table * S + slot
        bits = np.flatnonzero(_bits(up.reshape(-1).take(cells), 64).view(bool))  # cell * 64 + tile
        legal = [(cells + cells // S * (A - S)).take(bits >> 6) + (bits & 63) * S]
        down = hand & np.where(drop, line.down & ~line.down_metro, line.down)
        rows = np.flatnonzero(down)
        if rows.size:
            ends = self.ends[rows]
            cells = np.flatnonzero(self._double_bit.take(ends) & down[rows, None])  # row * S + slot
            tiles = self._double_of.take(ends.reshape(-1).take(cells))
            legal.append(rows.take(cells // S) * A + self._down_base + tiles * S + cells % S)
        return np.concatenate(legal)

    def _mask_of(self, legal: np.ndarray) -> np.ndarray:
        """bool[B, A]: set at the flat indices ``legal``."""
        mask = np.zeros((self.num_envs, self.num_actions), bool)
        mask.reshape(-1)[legal] = True
        return mask

    def _keep_legal(self, legal: np.ndarray) -> None:
        """Make the kept mask (``_mask``, what the next step checks) the flat indices ``legal``:
        the last ones cleared, these set, rather than a new mask (zeroing the whole of it cost
        a tenth of a step)."""
        if self._mask is None:
            self._mask = np.zeros((self.num_envs, self.num_actions), bool)
        kept = self._mask.reshape(-1)
        kept[self._legal] = False
        kept[legal] = True
        self._legal = legal

    def _skip_out(self, tables: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """The next seat after ``seat`` still holding tiles (else the next seat)."""
        n = self.num_players
        nxt = (seat + 1) % n
        found = np.zeros(len(tables), bool)
        for k in range(1, n):
            other = (seat + k) % n
            holds = (self.hands[tables, other] != 0) & ~found
            nxt = np.where(holds, other, nxt)
            found |= holds
        return nxt

    def _step_places(self, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Info]:
        """A step of the places game (the places rules' lay, turn, draws and game end)."""
        B, n = self.num_envs, self.num_players
        before = self.scores.copy()
        rows = self._rows
        seat, tile, slot, hand = self._take_tiles(action)
        lo, hi, double = self._lo.take(tile), self._hi.take(tile), self._is_double.take(tile)
        face_down = self._lay_down.take(action)
        leading = self.count == 0
        self.played |= self._bit.take(tile)
        self.count += 1
        self.passes[:] = 0
        opened = np.zeros(B, bool)
        lay = np.flatnonzero(~leading)
        if lay.size:
            s, d = slot[lay], double[lay]
            inner = self.ends[lay, s]
            outer = lo[lay] + hi[lay] - inner
            up = ~face_down[lay]
            used_up = (self._suit.take(outer) & ~self.played[lay]) == 0
            self.ends[lay, s] = np.where(up & ~used_up, outer, self._closed)
            self.doubled[lay, s] = d
            opens = up & d & self.doubles_open[lay]
            new_at = lay[opens]
            if new_at.size:
                new = self.used[new_at]
                self.ends[new_at, new] = np.where(used_up[opens], self._closed, outer[opens])
                self.doubled[new_at, new] = True
                self.used[new_at] += 1
                opened[new_at] = True
        leads = np.flatnonzero(leading)
        self._lead(leads, tile, lo, hi, double)
        self.used[leads] = 2
        self.doubles_open |= double
        # (the line as the draws, the passes and the next mask see it: a new deal's rows emptied)
        self._line = line = self._places_line()
        out = hand == 0
        # The game ends: no live end (blocked by an open double, domino-Metro, or a Metro), or
        # a player goes out leaving one player holding tiles (the mole).
        dead = line.fit == 0
        self._next_places(np.flatnonzero(out), seat)  # a player out takes the next place
        maker = np.where(dead & ~out & ~opened, seat, -1)
        cleared = np.where(dead & out & ~opened, seat, -1)
        holding = (self.hands != 0).sum(axis=1)
        over = dead | (out & (holding <= 1))
        # The rest move on: the next seat holding tiles, then draws and passes.
        go = ~over
        self.current = np.where(go, self._skip_out(rows, seat), seat)
        over[self._advance_places(go, line)] = True
        ended = np.flatnonzero(over)
        return self._finish_step(
            ended,
            lambda: self._end_places(ended, maker[ended], cleared[ended], before[ended]),
            np.zeros((B, n), np.float32),
        )

    def _next_places(self, tables: np.ndarray, seat: np.ndarray) -> None:
        """``seat`` (per table) takes the best place still free at ``tables``."""
        if tables.size:
            self.places[tables, seat[tables]] = 1 + (self.places[tables] > 0).sum(axis=1)

    def _advance_places(self, go: np.ndarray, line: _Line) -> np.ndarray:
        """Forced draws and passes where ``go`` until the seat to move has a legal move; the
        tables blocked by passes. The line stays as it is, so the tiles that would give a
        legal move are known: a seat draws up to the first tile with a placement that leaves
        a live end (all at once), and with the boneyard empty any tile that fits will do
        (``line.fine`` and ``line.fit``)."""
        T, fine, fit = self._T, line.fine, line.fit
        hand = self._flat_hands.take(self._seat_base + self.current)
        empty = self.drawn >= T
        ok = ((hand & fit) != 0) & ((np.bitwise_count(hand) < 2) | ((hand & fine) != 0) | empty)
        waiting = go & ~ok
        drawers = np.flatnonzero(waiting & ~empty)
        stuck = [np.flatnonzero(waiting & empty)]
        if drawers.size:
            K = len(drawers)
            start = self.drawn[drawers]
            bits = self._bit.take(self.order[drawers])  # [K, T] the deal's tiles in draw order
            hits = ((bits & fine[drawers, None]) != 0) & (np.arange(T) >= start[:, None])
            first = hits.argmax(axis=1)
            found = hits.reshape(-1).take(np.arange(K) * T + first)
            stop = np.where(found, first + 1, T)
            # the tiles drawn: the deal's tiles before ``stop`` less those before ``start``
            row = drawers * (T + 1)
            taken = self._flat_before.take(row + stop) ^ self._flat_before.take(row + start)
            at = self._seat_base[drawers] + self.current[drawers]
            held = self._flat_hands.take(at) | taken
            self._flat_hands[at] = held
            self.drawn[drawers] = stop
            self._flat_voids[at] = line.shown[drawers]
            stuck.append(drawers[~found & ((held & fit[drawers]) == 0)])
        waiting = np.concatenate(stuck)
        blocked = []
        for _ in range(self.num_players):  # passes: the boneyard is empty, any tile that fits will do
            if not waiting.size:
                break
            self._flat_voids[self._seat_base[waiting] + self.current[waiting]] |= line.shown[waiting]
            self.passes[waiting] += 1
            full = self.passes[waiting] >= np.count_nonzero(self.hands[waiting], axis=1)
            blocked.append(waiting[full])
            waiting = waiting[~full]
            self.current[waiting] = self._skip_out(waiting, self.current[waiting])
            held = self._flat_hands.take(self._seat_base[waiting] + self.current[waiting])
            waiting = waiting[(held & fit[waiting]) == 0]
        return np.concatenate(blocked) if blocked else waiting

    def _end_places(
        self, tables: np.ndarray, maker: np.ndarray, cleared: np.ndarray, before: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The end of the game at ``tables``: the holders take the free places by pips in hand
        (a lone 0-0: 10; equal pips share), the Metro maker the last; penalties, the next
        leader; which episodes ended, each seat's reward and its episode outcome."""
        n, K = self.num_players, len(tables)
        k = np.arange(K)
        places = self.places[tables]
        hands = self.hands[tables]
        seats = np.arange(n)
        is_maker = seats == maker[:, None]
        holders = (places == 0) & ~is_maker
        first_free = 1 + (places > 0).sum(axis=1)
        counts = np.where(hands == self._lone_zero, 10, self._hand_pips(hands))
        fewer = ((counts[:, None, :] < counts[:, :, None]) & holders[:, None, :]).sum(axis=2)
        places = np.where(holders, first_free[:, None] + fewer, places)
        places = np.where(is_maker, n, places)
        self.places[tables] = places
        worst = places.max(axis=1)
        leader = self.leader[tables]
        from_leader = (leader[:, None] + seats) % n
        first_worst = (places[k[:, None], from_leader] == worst[:, None]).argmax(axis=1)
        self.leader[tables] = from_leader[k, first_worst]
        scores, metros, points = self.scores[tables], self.metros[tables], self.metro_points[tables]
        if n == 3:
            clears = (cleared >= 0) & (metros[k, np.maximum(cleared, 0)] > 0)
            c = np.flatnonzero(clears)
            scores[c, cleared[c]] -= points[c, cleared[c]]
            metros[c, cleared[c]] = 0
            points[c, cleared[c]] = 0
        metros += is_maker
        points += is_maker * self._penalty
        scores += np.where(is_maker, self._penalty, (places == worst[:, None]).astype(np.int64))
        self.scores[tables], self.metros[tables], self.metro_points[tables] = scores, metros, points
        self.match_over[tables] |= scores.max(axis=1) >= self._target
        outcome = self._record(tables, scores, -scores)  # (fewer penalties win)
        done = np.ones(K, bool) if self._round_episode else self.match_over[tables]
        if self._round_episode:  # round_keys: the better place
            outcome = self._outcome(-places)
        return self._round_rewards(done, scores - before, outcome)

    def _block_places(self, out: np.ndarray, at: slice, seat: np.ndarray, moving: bool) -> None:
        """``places``: each seat's place / players (0 while in play), from ``seat`` on."""
        out[:, at] = self._per_seat(self.places, seat) * (1.0 / self.num_players)

    def _block_metros(self, out: np.ndarray, at: slice, seat: np.ndarray, moving: bool) -> None:
        """``metros``: each seat's uncleared Metros / the match target, from ``seat`` on."""
        out[:, at] = self._per_seat(self.metros, seat) * self._score_scale

    def _block_doubles_open(self, out: np.ndarray, at: slice, seat: np.ndarray, moving: bool) -> None:
        """``doubles_open``: the first double is down."""
        out[:, at.start] = self.doubles_open
