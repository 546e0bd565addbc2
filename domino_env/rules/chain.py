"""What every line-of-play game shares, and the chain variants' turn loop.

:class:`LineRules` holds what every line-of-play game shares: options, the action table built
from declared facts, deals and chance points, the round's lifecycle, laying a tile, scoring
and the explanation of a refused action. Its turn loop is a subclass's: :class:`ChainRules`'
draw-and-pass loop here, Blind's row machine in ``domino_env.variants.blind``.

A chain variant subclasses :class:`ChainRules` and declares only what makes it different: its
options dataclass, tile set and slots, and its rule parts (:mod:`domino_env.rules.parts`:
who opens a round, who leads the next, what a laid tile scores, whether a turn goes on, who
moves next), then how a round is scored and when the match ends. The turn loop (forced
draws, passes, blocked rounds) lives here once, with the placements and round scorings more
than one variant (or the batched kernel) knows: :meth:`ChainRules.arms_first`,
:meth:`ChainRules.doubles_face_down`, :meth:`LineRules.pips_to_the_winner`, and
:class:`RememberedPenaltyRules` (penalties remembered until a score opens, with their ranking).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from domino_env.core.events import DEAL, DRAW, LAY, PASS, ROUND_END
from domino_env.core.line import CLOSED, NORTH, OPEN, SOUTH, SPINNER_SLOT_NAMES, UNUSED, Line, Spinner
from domino_env.core.state import RoundResult, State, VariantState
from domino_env.core.tiles import format_tile, iter_bits, mask_of, tile_set_of
from domino_env.core.view import SeatView
from domino_env.rules.parts import (
    LOT_OPENS,
    ContinuesTurn,
    LayScoring,
    LeadsNext,
    Opening,
    SeatAfter,
    winner_leads,
)
from domino_env.rules.table import DEAL_TILE, DRAW_TILE, LOT, PLAY, TableOptions, TableRules, hand_outcomes

STOP = "stop"
MAX_PIPS = range(1, 10)  # the sets a table may use: double-1 up to double-9
BY_LOT = -1  # the leader ``opening`` names where a lot (a chance point) draws it


@dataclass(frozen=True)
class ChainOptions(TableOptions):
    """A line-of-play table's options: a smaller or larger set, another hand size (None: the
    variant's own)."""

    max_pip: int | None = None
    hand_size: int | None = None


@dataclass(frozen=True)
class DealSpec:
    """A validated fixed deal (tile ids); ``None`` parts are dealt at random."""

    hands: tuple[tuple[int, ...] | None, ...]
    boneyard: tuple[int, ...] | None
    leader: int | None
    opening: int | None


class LineRules(TableRules[State]):
    """Rules of a line-of-play game but its turn loop (:meth:`advance`, :meth:`end_turn`,
    :meth:`take_drawn`, :meth:`apply_extra`); subclasses set the class attributes and hooks."""

    num_slots: int = 2  # open ends the action table names (Metro's follows from its set)
    spinner: ClassVar[Spinner] = Spinner.NONE
    face_down_doubles: ClassVar[bool] = False
    extra_actions: ClassVar[tuple[str, ...]] = ()
    # Extra kinds with one action per tile, after the extras (Blind blitz's arrange).
    tile_actions: ClassVar[tuple[str, ...]] = ()
    phases: ClassVar[tuple[str, ...]] = ("lead",)
    draws: bool = True
    # A seat's ``voids`` (values open when it drew or passed) mean it holds no tile of them; a
    # variant where a player may draw or pass holding such a tile (Domino-Metro) says False.
    voids_hold_none: ClassVar[bool] = True
    # The rule parts (domino_env.rules.parts); None: the plain rule, skipped on the hot path.
    opens: ClassVar[Opening] = LOT_OPENS
    leads_next: ClassVar[LeadsNext] = winner_leads
    lay_scoring: ClassVar[LayScoring | None] = None
    continues_turn: ClassVar[ContinuesTurn | None] = None
    action_kind: list[str]
    action_tile: list[int]
    options_type: ClassVar[type[ChainOptions]] = ChainOptions
    options: ChainOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._size_table(self.options.max_pip, self.options.hand_size)
        self._tile_ids = list(range(self.tile_set.size))
        self._build_action_table()
        order = self.opens.order
        self._opening_order = order(self.tile_set) if order is not None else []
        # The optional parts, looked up once (unbound: the rules pickle): the hot path (a call
        # per tile) tests them for None.
        cls = type(self)
        self._lay_scoring = cls.lay_scoring
        self._continues_turn = cls.continues_turn
        self._flags_continuing = len(self.phases) > 1

    # --- the table's size -------------------------------------------------------------------

    def _size_table(self, max_pip: int | None, hand_size: int | None) -> None:
        """The set (double-``max_pip``) and the hand size, the variant's own unless given:
        a smaller table is the same rules on fewer tiles (``preset="tiny"``)."""
        if max_pip is not None:
            if (
                isinstance(max_pip, bool)
                or not isinstance(max_pip, (int, np.integer))
                or max_pip not in MAX_PIPS
            ):
                raise ValueError(
                    f"{self.name}: max_pip must be an int {MAX_PIPS.start}..{MAX_PIPS.stop - 1} "
                    f"(a double-N set), got {max_pip!r}"
                )
            self.tile_set = tile_set_of(int(max_pip))
        size, n = self.tile_set.size, self.num_players
        if hand_size is None:
            hand_size = self.default_hand_size()
        elif (
            isinstance(hand_size, bool)
            or not isinstance(hand_size, (int, np.integer))
            or not 1 <= hand_size <= size // n
        ):
            raise ValueError(
                f"{self.name}: hand_size must be an int 1..{size // n} ({n} players share the "
                f"{size} tiles of a double-{self.tile_set.max_pip} set), got {hand_size!r}"
            )
        self.hand_size = int(hand_size)
        self.num_slots = self.slots_for_set()
        self.check_table()

    def default_hand_size(self) -> int:
        """Hook: tiles dealt to each player when ``hand_size`` is not given."""
        return type(self).hand_size

    def slots_for_set(self) -> int:
        """Hook: the open ends the action table needs with this set (a fixed number by default)."""
        return type(self).num_slots

    def check_table(self) -> None:
        """Hook: refuse a set or hand size the variant's rules cannot be played with."""
        if self.num_players * self.hand_size > self.tile_set.size:
            raise ValueError(
                f"{self.name}: {self.num_players} hands of {self.hand_size} need "
                f"{self.num_players * self.hand_size} tiles; a double-{self.tile_set.max_pip} set has "
                f"{self.tile_set.size}: hand_size can be at most {self.tile_set.size // self.num_players}"
            )

    # --- actions ---------------------------------------------------------------------------

    @property
    def slot_names(self) -> tuple[str, ...]:
        if self.num_slots == 2:
            return ("east", "west")
        if self.num_slots == 4:
            return SPINNER_SLOT_NAMES
        return tuple(f"end{i}" for i in range(self.num_slots))

    def _build_action_table(self) -> None:
        """Action ids: (tile, slot) face up, then (tile, slot) face down, then the extras, then
        each of :attr:`tile_actions` once per tile (``tile_action_base`` its first id)."""
        size, slots = self.tile_set.size, self.num_slots
        faces = 2 if self.face_down_doubles else 1
        plays, extras, per_tile = size * slots * faces, len(self.extra_actions), len(self.tile_actions)
        self.num_play_actions = plays
        others = extras + per_tile * size
        self.num_actions = plays + others
        self.action_kind = (
            [PLAY] * plays
            + list(self.extra_actions)
            + [kind for kind in self.tile_actions for _ in range(size)]
        )
        self.action_tile = (
            [(a // slots) % size for a in range(plays)] + [-1] * extras + list(range(size)) * per_tile
        )
        self.action_slot = [a % slots for a in range(plays)] + [-1] * others
        self.action_face_down = [a >= size * slots for a in range(plays)] + [False] * others
        self.extra_action_id = {name: plays + i for i, name in enumerate(self.extra_actions)}
        self.tile_action_base = {kind: plays + extras + i * size for i, kind in enumerate(self.tile_actions)}
        self._stop = self.extra_action_id.get(STOP, -1)
        # One lookup decodes a play action: (tile, slot, face_down); None for the extras.
        self._plays: list[tuple[int, int, bool] | None] = [
            (self.action_tile[a], self.action_slot[a], self.action_face_down[a])
            if self.action_kind[a] == PLAY
            else None
            for a in range(self.num_actions)
        ]

    def play_action(self, tile: int, slot: int, face_down: bool = False) -> int:
        offset = self.tile_set.size * self.num_slots if face_down else 0
        return offset + tile * self.num_slots + slot

    # --- deals -----------------------------------------------------------------------------

    def parse_deal(self, deal: Mapping[str, Any]) -> DealSpec:
        """Validate a fixed deal written with tiles as ``(a, b)`` or ``"a-b"``."""
        if not isinstance(deal, Mapping):
            raise ValueError(f"a deal must be a dict with keys hands/boneyard/leader/opening, got {deal!r}")
        unknown = set(deal) - {"hands", "boneyard", "leader", "opening"}
        if unknown:
            raise ValueError(
                f"unknown deal key(s) {sorted(unknown)}; allowed: hands, boneyard, leader, opening"
            )
        ts, n = self.tile_set, self.num_players
        seen: dict[int, str] = {}

        def read(tiles: Any, where: str) -> tuple[int, ...]:
            if isinstance(tiles, (str, bytes)) or not isinstance(tiles, Sequence):
                raise ValueError(f"{where} must be a list of tiles, got {tiles!r}")
            ids = []
            for tile in tiles:
                t = ts.id_of(tile)
                if t in seen:
                    raise ValueError(
                        f"tile {format_tile(ts.tiles[t])} appears twice in the deal ({seen[t]} and {where})"
                    )
                seen[t] = where
                ids.append(t)
            return tuple(ids)

        hands = self.read_hands(deal.get("hands"), read)
        boneyard = None
        if deal.get("boneyard") is not None:
            boneyard = read(deal["boneyard"], "the boneyard")
            room = ts.size - n * self.hand_size
            if len(boneyard) > room:
                raise ValueError(
                    f"the boneyard lists {len(boneyard)} tiles but only {room} are left after the hands"
                )
        leader = deal.get("leader")
        if leader is not None and (
            isinstance(leader, bool) or not isinstance(leader, (int, np.integer)) or not 0 <= leader < n
        ):
            raise ValueError(f"deal['leader'] must be a seat 0..{n - 1}, got {leader!r}")
        opening = None
        if deal.get("opening") is not None:
            opening = ts.id_of(deal["opening"])
            holder = next((s for s, h in enumerate(hands) if h is not None and opening in h), None)
            if leader is None:
                if holder is None:
                    raise ValueError("deal['opening'] needs a 'leader' (or a given hand holding that tile)")
                leader = holder
            name = format_tile(ts.tiles[opening])
            if holder is None and opening in seen:
                raise ValueError(f"the opening tile {name} is in the boneyard, not in the leader's hand")
            if holder != leader and (holder is not None or hands[leader] is not None):
                raise ValueError(f"the leader (seat {leader}) does not hold the opening tile {name}")
        return DealSpec(tuple(hands), boneyard, None if leader is None else int(leader), opening)

    def dealt(self, state: State) -> dict[str, Any]:
        """The round's deal whole (see :meth:`TableRules.dealt`): hands in id order, the
        boneyard, the leader, and the tile it must lead when there is one."""
        hands, boneyard = self.undrawn(state)
        deal: dict[str, Any] = {
            "hands": [self.tile_names(iter_bits(hand)) for hand in hands],
            "boneyard": self.tile_names(boneyard),
            "leader": state.leader,
        }
        if state.required_lead >= 0:
            deal["opening"] = format_tile(self.tile_set.tiles[state.required_lead])
        return deal

    def tile_names(self, tiles: Iterable[int]) -> list[str]:
        """Tile ids as ``"a-b"``, in the order given."""
        names = self.tile_set.tiles
        return [format_tile(names[t]) for t in tiles]

    def shuffled_tiles(self, rng: np.random.Generator) -> list[int]:
        """Every tile id in random order: the stream of ``rng.permutation``, at half its cost."""
        order = self._tile_ids[:]
        rng.shuffle(order)
        return order

    def deal_in_order(self, state: State, order: list[int]) -> None:
        """Deal ``order``: hand_size tiles a seat from its front; the rest is the stock, the
        first of them drawn first."""
        n, size, bit = self.num_players, self.hand_size, self.tile_set.bit.__getitem__
        hands = []
        for start in range(0, n * size, size):
            hands.append(sum(map(bit, order[start : start + size])))  # distinct bits: their sum is the mask
        state.hands = hands
        state.stock = order[n * size :][::-1]

    def _deal(self, state: State, spec: DealSpec | None, order: list[int]) -> None:
        """The environment's deal of a round (:meth:`deal_from`) from the shuffled ``order``,
        ``spec`` its fixed parts."""
        if spec is None:
            self.deal_in_order(state, order)
            return
        size = self.hand_size
        fixed = {t for hand in spec.hands if hand for t in hand} | set(spec.boneyard or ())
        rest = [t for t in order if t not in fixed]
        owed = self.owed(spec)
        for (tile,) in owed.values():
            rest.remove(tile)
        hands = []
        for seat, hand in enumerate(spec.hands):
            if hand is None:
                start = owed.get(seat, ())
                take = size - len(start)
                hand, rest = start + tuple(rest[:take]), rest[take:]
            hands.append(mask_of(hand))
        state.hands = hands
        state.stock = (list(spec.boneyard or ()) + rest)[::-1]

    @staticmethod
    def owed(spec: DealSpec) -> dict[int, tuple[int, ...]]:
        """The opening tile a fixed deal owes a leader whose hand is dealt at random."""
        if spec.opening is not None and spec.leader is not None and spec.hands[spec.leader] is None:
            return {spec.leader: (spec.opening,)}
        return {}

    # --- match and round lifecycle ------------------------------------------------------------

    def new_match(self, deals: Sequence[DealSpec] = (), rng: np.random.Generator | None = None) -> State:
        state = State(
            num_players=self.num_players,
            line=Line(self.tile_set, self.num_slots, self.spinner),
            scores=[0] * self.num_sides,
            fixed_deals=list(deals),
            extra=self.new_extra(),
        )
        self.start_round(state, rng)
        return state

    def fixed_deal(self, state: State) -> DealSpec | None:
        """The fixed deal of the round in play, None where it is dealt at random."""
        return state.fixed_deals[state.round_index] if state.round_index < len(state.fixed_deals) else None

    def start_round(self, state: State, rng: np.random.Generator | None = None) -> None:
        """Begin the next round (round 0 on a new match), dealt by :meth:`deal_from` from
        ``rng``, or else tile by tile at chance points (a fixed deal's own tiles in the hands
        already, the rest face down in the stock)."""
        if state.round_over:
            state.round_index += 1
        if state.line.count:  # (a new match's line has no tile yet)
            state.line.reset()
        state.voids = [0] * self.num_players
        state.passes = 0
        state.turn_laid = 0
        state.round_over = False
        state.result = None
        state.round_serial += 1
        state.round_start_scores = state.scores[:]
        state.last_round_events = state.events  # (no longer appended to: shared by clones)
        state.events = [(DEAL, state.round_index)]
        state.legal = []
        state.chance = DEAL_TILE
        if rng is not None:
            self.deal_from(state, rng)
            return
        spec = self.fixed_deal(state)
        hands, pool = [0] * self.num_players, set(self._tile_ids)
        if spec is not None:
            owed = self.owed(spec)
            for seat, hand in enumerate(spec.hands):
                hands[seat] = mask_of(hand or ()) | mask_of(owed.get(seat, ()))
            pool -= set(iter_bits(sum(hands))) | set(spec.boneyard or ())
        state.hands = hands
        state.stock = sorted(pool)[::-1]
        state.shuffled = False
        self._deal_on(state)

    def deal_from(self, state: State, rng: np.random.Generator) -> None:
        spec, order = self.fixed_deal(state), self.shuffled_tiles(rng)
        self._deal(state, spec, order)
        self.dealt_from(state, spec, order, rng)
        state.shuffled = True
        self._dealt_out(state)

    def dealt_from(
        self, state: State, spec: DealSpec | None, order: list[int], rng: np.random.Generator
    ) -> None:
        """Hook: the environment dealt the hands from the shuffled ``order`` (``spec``: the fixed
        parts); before the round's opening. Blind keeps the rows as dealt."""

    def dealt_by_chance(self, state: State, spec: DealSpec | None) -> None:
        """Hook: the last tile was dealt at a chance point; before the round's opening."""

    def _dealing(self, state: State) -> int:
        """The seat the deal's next tile goes to, -1 when every hand is full."""
        size = self.hand_size
        return next((s for s, hand in enumerate(state.hands) if hand.bit_count() < size), -1)

    def _deal_on(self, state: State) -> None:
        """After a tile dealt: the next one, or the round's opening once every hand is full."""
        if self._dealing(state) < 0:
            spec = self.fixed_deal(state)
            if spec is not None and spec.boneyard:  # (its tiles were kept out of the hands)
                state.stock += spec.boneyard[::-1]
            self._dealt_out(state)

    def deal_tile(self, state: State, seat: int, tile: int) -> None:
        """Hook: ``tile`` dealt to ``seat`` by chance (into its hand; Blind: its row too)."""
        state.hands[seat] |= 1 << tile

    def _dealt_out(self, state: State) -> None:
        """The hands are dealt: the round's opening (a leader by lot is a chance point)."""
        spec = self.fixed_deal(state)
        if not state.shuffled:
            self.dealt_by_chance(state, spec)
        state.chance = None
        self.reset_round_extra(state)
        if spec is not None and spec.leader is not None:
            leader, opening = spec.leader, -1 if spec.opening is None else spec.opening
        else:
            leader, opening = self.opening(state)
        if leader == BY_LOT:
            state.chance = LOT
            return
        self._lead(state, leader, opening)

    def _lead(self, state: State, leader: int, opening: int) -> None:
        state.leader = state.current = leader
        state.required_lead = opening
        self.advance(state)

    def opening(self, state: State) -> tuple[int, int]:
        """(leader, tile it must lead or -1 for any) as the variant's :attr:`opens` says;
        ``BY_LOT`` for a leader drawn by lot (a chance point)."""
        if state.round_index and not self.opens.every_round:
            assert state.next_leader is not None
            return state.next_leader, -1
        hands = state.hands
        dealt = sum(hands)  # hands are disjoint: their sum is the tiles dealt
        for tile in self._opening_order:
            if dealt >> tile & 1:
                return next(seat for seat, hand in enumerate(hands) if hand >> tile & 1), tile
        return BY_LOT, -1

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        if state.chance == DEAL_TILE:
            seat = self._dealing(state)
            spec = self.fixed_deal(state)
            owed = mask_of(self.owed(spec).get(seat, ())) if spec is not None else 0
            size = self.hand_size - owed.bit_count()  # (an opening tile owed is not dealt by chance)
            return hand_outcomes(state.stock, state.hands[seat] & ~owed, size, self.ordered_hands)
        return super().chance_outcomes(state)

    def apply_chance(self, state: State, outcome: int) -> None:
        self.check_chance(state, outcome)
        kind = state.chance
        if kind == DEAL_TILE:
            state.stock.remove(outcome)
            self.deal_tile(state, self._dealing(state), outcome)
            self._deal_on(state)
            return
        state.chance = None
        if kind == LOT:
            self._lead(state, outcome, -1)
        else:
            state.stock.remove(outcome)
            self.take_drawn(state, state.current, outcome)
            if state.round_over:
                state.legal = []
            else:
                self.advance(state)

    def new_extra(self) -> VariantState | None:
        """Hook: a new match's variant state (``state.extra``); None for variants without one."""
        return None

    def reset_round_extra(self, state: State) -> None:
        """Hook: reset a variant's per-round state."""

    # --- laying a tile; the turn loop's hooks ----------------------------------------------

    def placements(self, state: State) -> list[int]:
        """Hook: the play actions of the seat to move (every tile that fits an open end)."""
        hand = state.hands[state.current]
        line = state.line
        if not line.count:
            slots = self.num_slots
            if state.required_lead >= 0:
                return [state.required_lead * slots] if hand >> state.required_lead & 1 else []
            return [t * slots for t in iter_bits(hand)]
        return line.placements(hand)

    def arms_first(self, state: State) -> list[int]:
        """A ``placements`` (Cross's): while an open arm holds no tile beyond the lead, a seat
        that can start one must (the plays on such arms only); else :meth:`placements`'s."""
        plays = LineRules.placements(self, state)
        line = state.line
        if line.count and 0 in line.length and plays:
            slots, length, status = self.num_slots, line.length, line.state
            starts = [a for a in plays if not length[a % slots] and status[a % slots] == OPEN]
            if starts:
                return starts
        return plays

    def apply(self, state: State, action: int) -> None:
        """Apply a legal action of ``state.current`` and run forced moves to the next decision."""
        play = self._plays[action]
        if play is not None:
            tile, slot, face_down = play
            self.lay(state, state.current, tile, slot, face_down)
        else:
            self.apply_extra(state, state.current, action)
        if not state.round_over:
            self.advance(state)
        else:
            state.legal = []

    def lay(self, state: State, seat: int, tile: int, slot: int, face_down: bool = False) -> None:
        state.hands[seat] &= ~(1 << tile)
        line = state.line
        if not line.count:
            line.lead(tile)
            end_value = -1
        else:
            end_value = line.attach(tile, slot)
            if face_down:
                line.close(slot)
        state.events.append((LAY, seat, tile, slot, end_value))
        state.passes = 0
        state.turn_laid += 1
        scoring = self._lay_scoring
        if scoring is not None:
            scoring(self, state, seat, tile)
            if state.round_over:
                return
        if not state.hands[seat]:
            self.went_out(state, seat)
        else:
            continues = self._continues_turn
            if continues is None or not continues(self, state, seat, tile):
                self.end_turn(state)

    def went_out(self, state: State, seat: int) -> None:
        """Hook: ``seat`` laid its last tile; by default that ends the round, ``seat`` winning."""
        self.end_round(state, seat, blocked=False)

    def can_draw(self, state: State) -> bool:
        return self.draws and bool(state.stock)

    def advance(self, state: State) -> None:
        """Hook of the turn loop: run the forced moves until someone has a decision or the
        round ends (``state.legal`` the decision's actions)."""
        raise NotImplementedError

    def apply_extra(self, state: State, seat: int, action: int) -> None:
        """Hook of the turn loop: a non-play action (``action_kind`` names it)."""
        raise NotImplementedError

    def end_turn(self, state: State) -> None:
        """Hook of the turn loop: the turn of ``state.current`` ends."""
        raise NotImplementedError

    def take_drawn(self, state: State, seat: int, tile: int) -> None:
        """Hook of the turn loop: ``seat`` drew ``tile`` from the stock."""
        raise NotImplementedError

    # --- explaining a refused action ------------------------------------------------------------

    def illegal_reason(self, state: State, action: int, who: str = "the player") -> str:
        """Why ``action`` is not legal now (see :meth:`TableRules.illegal_reason`): the lead's
        required tile, a tile the seat does not hold, an end that is missing, closed or shows
        another value, a face the rules refuse; else what the variant's own rules leave legal."""
        play = self._plays[action]
        if play is None:
            return self._extra_reason(state, action, who)
        tile, slot, face_down = play
        ts, line, seat = self.tile_set, state.line, state.current
        name = format_tile(ts.tiles[tile])
        if not any(self._plays[a] is not None for a in state.legal):  # another phase: arrange, draw ...
            return f"no tile may be laid now; {who} may {self.legal_summary(state)}"
        required = state.required_lead
        if not line.count and required >= 0 and tile != required:
            return (
                f"the round's first tile must be {format_tile(ts.tiles[required])}, "
                f"{self.opening_reason(state)}"
            )
        nameable = self.known_hand(state, seat) | self.public_hands(state)[seat]
        if not nameable >> tile & 1:
            if nameable == state.hands[seat]:
                return f"{who} holds no {name}"
            return f"{name} is not among the tiles {who} can name in its hand"  # (says nothing hidden)
        if not line.count:
            lead = self.play_action(tile, 0)
            if slot:
                return (
                    f"the round's first tile is laid as the lead (action {lead}), not on an end: "
                    "there is none yet"
                )
            if face_down:
                return f"the round's first tile is laid face up (action {lead})"
            return self._restricted(state, action, f"{name} could lead", who)
        where = self.slot_names[slot]
        end = where if where.startswith("end") else f"the {where} end"  # Metro's: "end4"
        if line.state[slot] == UNUSED:
            return f"the line has no {end.removeprefix('the ')} yet{self._unopened_hint(slot)}"
        if line.state[slot] == CLOSED:
            return f"{end} is closed: nothing more is laid there"
        value = line.value[slot]
        if value not in ts.tiles[tile]:
            return f"{end} shows {value}, and {name} has no {value}"
        if face_down:
            if not ts.is_double[tile]:
                return f"only a double may be laid face down, and {name} is not one"
            if self.play_action(tile, slot) in state.legal:
                return f"here {name} may be laid face up only (action {self.play_action(tile, slot)})"
        elif self.face_down_doubles and self.play_action(tile, slot, face_down=True) in state.legal:
            return f"here {name} may be laid face down only (action {self.play_action(tile, slot, True)})"
        return self._restricted(state, action, f"{name} fits {end} ({value})", who)

    def opening_reason(self, state: State) -> str:
        """Why the round's first tile must be ``state.required_lead``: the words after "must be
        6-6, " - the opening a fixed deal names, else the rule of the variant's :attr:`opens`."""
        fixed = self.fixed_deal(state)
        if isinstance(fixed, DealSpec) and fixed.opening == state.required_lead:
            return "the opening tile the deal names"
        return self.opens.rule

    def _unopened_hint(self, slot: int) -> str:
        """Why a spinner arm is not open yet (empty for other slots)."""
        if slot not in (NORTH, SOUTH) or self.spinner is Spinner.NONE:
            return ""
        if self.spinner is Spinner.AT_ONCE:
            return ": north and south open with the spinner, the first double laid"
        return ": north and south open once the spinner (the first double) has a tile on both sides"

    def _restricted(self, state: State, action: int, fact: str, who: str) -> str:
        """The reason for a placement the plain line allows and the variant's rules refuse: the
        fact, then what is legal instead (one tile only; only arms with no tile yet; the list)."""
        slots, line = self.num_slots, state.line
        plays = [a for a in state.legal if self._plays[a] is not None]
        tiles = {self.action_tile[a] for a in plays}
        if len(tiles) == 1:
            only = format_tile(self.tile_set.tiles[next(iter(tiles))])
            return f"{fact}, but {self.name} does not allow it now: the only tile {who} may lay is {only}"
        arms = sorted({a % slots for a in plays})
        started = line.count and line.length[self.action_slot[action]]
        if started and plays and all(not line.length[s] for s in arms):
            names = ", ".join(self.slot_names[s] for s in arms)
            return (
                f"{fact}, but {self.name} does not allow it now: every legal move starts an arm "
                f"that holds no tile yet ({names})"
            )
        return f"{fact}, but {self.name} does not allow it now; {who} may {self.legal_summary(state)}"

    def _extra_reason(self, state: State, action: int, who: str) -> str:
        """Why an extra action (``stop``, ``draw`` ...) is not legal now."""
        kind, tile = self.action_kind[action], self.action_tile[action]
        words = kind.replace("_", " ")
        offered = [self.action_tile[a] for a in state.legal if self.action_kind[a] == kind]
        if tile >= 0 and offered:  # the move is offered, for other tiles
            name = format_tile(self.tile_set.tiles[tile])
            return f"{name} is not among the tiles {who} may {words} now ({self.tile_names_listed(offered)})"
        laid = "no tile was laid this turn yet, and " if kind == STOP and not state.turn_laid else ""
        return f"{words} is not offered now: {laid}{who} may {self.legal_summary(state)}"

    # --- scoring ------------------------------------------------------------------------------

    def side_pips(self, pips: list[int]) -> list[int]:
        """Pips per side: a team's are its two hands."""
        if not self.teams:
            return pips
        return [pips[0] + pips[2], pips[1] + pips[3]]

    def blocked_winner(self, state: State, pips: list[int]) -> int | None:
        """The seat that wins a blocked round, None on a tie for fewest pips.

        A team wins with the fewest pips in both hands; the partner with fewer pips
        (equal: the first counting from the round's leader) is recorded as the winner.
        """
        by_side = self.side_pips(pips)
        fewest = min(by_side)
        if by_side.count(fewest) > 1:
            return None
        members = self.members[by_side.index(fewest)]
        if len(members) == 1:
            return members[0]
        leader, n = state.leader, self.num_players
        return min(members, key=lambda s: (pips[s], (s - leader) % n))

    def end_round(self, state: State, winner: int | None, blocked: bool) -> None:
        pips = [self.tile_set.mask_pips(h) for h in state.hands]
        if blocked:
            winner = self.blocked_winner(state, pips)
        next_leader = self.leads_next(state, winner)
        self.score_round(state, winner, blocked, pips)
        state.result = RoundResult(
            winner=winner,
            blocked=blocked,
            hand_pips=pips,
            score_change=[
                now - before for now, before in zip(state.scores, state.round_start_scores, strict=True)
            ],
            next_leader=next_leader,
        )
        state.next_leader = next_leader
        state.round_over = True
        state.events.append((ROUND_END, -1 if winner is None else winner, blocked))
        if not state.match_over:
            state.match_over = self.match_finished(state)

    def score_round(self, state: State, winner: int | None, blocked: bool, pips: list[int]) -> None:
        raise NotImplementedError

    def penalties_round(self, state: State, winner: int | None, blocked: bool, pips: list[int]) -> None:
        """A ``score_round`` (Classic's): :meth:`pips_as_penalty`."""
        self.pips_as_penalty(state, winner, pips)

    def pips_to_the_winner(self, state: State, winner: int | None, blocked: bool, pips: list[int]) -> None:
        """A ``score_round`` (All Fives'): the winner's side scores the other sides' pips, to the
        nearest 5; nothing on a blocked tie, or once the match is over (the count ended it)."""
        if winner is None or state.match_over:
            return
        win_side = self.side_of[winner]
        others = sum(p for side, p in enumerate(self.side_pips(pips)) if side != win_side)
        self.add_score(state, win_side, round_to_five(others), "domino" if not blocked else "blocked")

    def pips_as_penalty(self, state: State, winner: int | None, pips: list[int]) -> None:
        """Classic's scoring (Blind's too): every side but the winner's adds its pips in hand."""
        win_side = None if winner is None else self.side_of[winner]
        for side, side_pips in enumerate(self.side_pips(pips)):
            if side != win_side:
                self.add_score(state, side, side_pips, "pips in hand")

    def match_finished(self, state: State) -> bool:
        return max(state.scores) >= self.match_target

    # --- ranking ------------------------------------------------------------------------------

    def round_keys(self, state: State) -> list[Any]:
        """Per side, a key where larger is better: the round's winner first, then by score change."""
        assert state.result is not None
        win_side = None if state.result.winner is None else self.side_of[state.result.winner]
        sign = -1 if self.lower_score_wins else 1
        return [(side == win_side, sign * change) for side, change in enumerate(state.result.score_change)]

    # --- baseline hooks ---------------------------------------------------------------------

    def action_traits(self) -> np.ndarray:
        """(num_actions, 3) facts about each action id for a policy to share what it learns
        across ids: the laid tile's pips (/ the heaviest), double, face down; zero for actions
        that lay no tile."""
        traits = np.zeros((self.num_actions, 3), dtype=np.float32)
        ts = self.tile_set
        heaviest = max(ts.pips)
        for action in range(self.num_play_actions):
            tile = self.action_tile[action]
            traits[action] = (ts.pips[tile] / heaviest, ts.is_double[tile], self.action_face_down[action])
        return traits

    # --- observation hooks --------------------------------------------------------------------

    def phase_flags(self, state: State) -> tuple[bool, ...]:
        """One flag per name in ``phases`` for the seat to move: ``lead`` (the table is empty),
        then ``continuing`` (in a multi-tile turn) for variants that list it."""
        lead = not state.line.count
        return (lead, state.turn_laid > 0) if self._flags_continuing else (lead,)

    def public_extra(self, state: State) -> dict[str, Any]:
        """Hook: variant-specific entries of ``public_state()``."""
        return {}

    def table_mask(self, state: State) -> int:
        return state.line.played

    def layout(self, state: State) -> Line:
        return state.line

    # --- hidden information: sampled worlds ------------------------------------------------

    def sample_bans(self, view: SeatView) -> list[int]:
        """Per seat, the tiles carrying a value it was seen unable to play, where that means it
        holds none (:attr:`voids_hold_none`); not the seat to move's, which may have just
        drawn the tile that fits (its voids hold after it lays)."""
        banned = [0] * view.num_players
        if self.voids_hold_none and view.voids:
            suit = self.tile_set.suit_mask
            for p, values in enumerate(view.voids):
                if p == view.current_player:
                    continue
                for v in range(len(suit)):
                    if values >> v & 1:
                        banned[p] |= suit[v]
        return banned

    def place_hidden(self, world: State, view: SeatView, dealt: list[list[int]], rng: random.Random) -> None:
        """The fixed deals of later rounds are dropped: a world deals them from its own RNG."""
        world.fixed_deals = []


class ChainRules(LineRules):
    """A chain variant's turn loop: a seat lays what fits, else draws (forced) or passes; a
    full circle of passes blocks the round."""

    seat_after: ClassVar[SeatAfter | None] = None  # the rule part; None: the next seat

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._seat_after = type(self).seat_after  # (unbound: the rules pickle)
        # Without a ``stop`` action the default legal_actions adds nothing to the placements.
        self._adds_stop = self._stop >= 0
        if self.face_down_doubles:  # (doubles_face_down's) double_of[v]: the id of the double v-v
            ts = self.tile_set
            self._double_of = [ts.ids[(v, v)] for v in range(ts.num_values)]
            self._face_down = ts.size * self.num_slots  # the first face-down action

    def doubles_face_down(self, state: State) -> list[int]:
        """A ``placements`` (Osel's, with :attr:`face_down_doubles`): the face-up placements,
        plus each double that fits an open end laid face down there (closing it), once the
        spinner is down."""
        moves = LineRules.placements(self, state)
        line = state.line
        if line.spinner_slot >= 0:
            doubles = state.hands[state.current] & self.tile_set.doubles_mask
            if doubles:
                for slot in range(4):
                    if line.state[slot] == OPEN:
                        double = self._double_of[line.value[slot]]
                        if doubles >> double & 1:
                            moves.append(self._face_down + double * 4 + slot)
        return moves

    def doubles_first(self, state: State, action: int) -> tuple[int, ...]:
        """A ``greedy_key`` (Osel's, where a double keeps the turn going): doubles first, then
        the heaviest tile, face up before face down; ``stop`` last."""
        tile = self.action_tile[action]
        if tile < 0:
            return (-1, -1, -1)
        return (self.tile_set.is_double[tile], self.tile_set.pips[tile], not self.action_face_down[action])

    def legal_actions(self, state: State) -> list[int]:
        """Placements of the seat to move, plus ``stop`` while it is in a multi-tile turn."""
        plays = self.placements(state)
        if plays and state.turn_laid and self._stop >= 0:
            plays.append(self._stop)
        return plays

    def apply_extra(self, state: State, seat: int, action: int) -> None:
        """Hook: a non-play action (``action_kind`` names it); ``stop`` ends a multi-tile turn."""
        kind = self.action_kind[action]
        if kind != STOP:
            raise ValueError(f"{self.name} has no {kind!r} action")
        self.end_turn(state)

    def end_turn(self, state: State) -> None:
        state.turn_laid = 0
        seat = state.current
        after = self._seat_after  # (inline: a turn ends at every tile laid)
        state.current = self._following[seat] if after is None else after(self, state, seat)

    def next_seat(self, state: State, seat: int) -> int:
        """Who moves after ``seat``: the next seat, unless the variant's ``seat_after`` says."""
        part = self._seat_after
        return self._following[seat] if part is None else part(self, state, seat)

    def players_in(self, state: State) -> int:
        """Hook: players still in the round; that many passes in a row block it."""
        return self.num_players

    def take_drawn(self, state: State, seat: int, tile: int) -> None:
        """Hook: ``seat`` drew ``tile`` from the stock (forced, before it can lay)."""
        state.hands[seat] |= 1 << tile
        state.voids[seat] = state.line.open_values_mask()
        state.events.append((DRAW, seat, tile))

    def advance(self, state: State) -> None:
        """Run forced draws and passes until someone has a decision or the round ends."""
        while True:
            legal = self.legal_actions(state) if self._adds_stop else self.placements(state)
            if legal:
                state.legal = legal
                return
            if state.turn_laid:  # nothing more fits in a multi-tile turn: it ends by itself
                self.end_turn(state)
                continue
            seat = state.current
            if self.can_draw(state):
                if not state.shuffled:  # the tile drawn is a chance point
                    state.chance = DRAW_TILE
                    state.legal = []
                    return
                self.take_drawn(state, seat, state.stock.pop())
                continue
            state.voids[seat] |= state.line.open_values_mask()
            state.events.append((PASS, seat))
            state.passes += 1
            if state.passes >= self.players_in(state):
                self.end_round(state, None, blocked=True)
                state.legal = []
                return
            state.current = self.next_seat(state, seat)


OPEN_ABOVE = 12  # round points above this open a seat's score (RememberedPenaltyRules)
LONE_BLANK = 10  # a hand of exactly 0-0 counts this much (RememberedPenaltyRules)


class RememberedPenaltyRules(ChainRules):
    """Penalty points remembered until a score opens (Osel's scoring), for individual play.

    A seat's round points are the pips in its hand (a hand of exactly ``0-0``: 10). A seat
    whose score is not open *remembers* 12 or fewer; more opens its score (remembered plus this
    round written), and every later round is written. Going out before opening loses the
    remembered points. A blocked round's winner has the fewest round points (a tie: none); the
    lowest written score wins the match, then fewer remembered points. ``state.extra`` holds
    ``remembered`` and ``opened``, per seat. The batched kernel knows these methods."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._blank = 1 << self.tile_set.ids[(0, 0)]

    def round_points(self, hands: list[int]) -> list[int]:
        """Pips in each hand; a hand of exactly 0-0 counts 10."""
        blank, pips = self._blank, self.tile_set.mask_pips
        return [LONE_BLANK if hand == blank else pips(hand) for hand in hands]

    def blocked_winner(self, state: State, pips: list[int]) -> int | None:
        points = self.round_points(state.hands)
        fewest = min(points)
        seats = [seat for seat, p in enumerate(points) if p == fewest]
        return seats[0] if len(seats) == 1 else None

    def score_round(self, state: State, winner: int | None, blocked: bool, pips: list[int]) -> None:
        remembered, opened = state.extra.remembered, state.extra.opened
        for seat, points in enumerate(self.round_points(state.hands)):
            if opened[seat]:
                self.add_score(state, seat, points, "pips in hand")
            elif seat == winner and not blocked:
                remembered[seat] = 0  # went out before opening: the remembered points are lost
            elif points > OPEN_ABOVE:
                opened[seat] = True
                self.add_score(state, seat, remembered[seat] + points, "score opened")
                remembered[seat] = 0
            else:
                remembered[seat] += points

    def match_keys(self, state: State) -> list[Any]:
        remembered = state.extra.remembered
        return [(-state.scores[s], -remembered[s]) for s in range(self.num_players)]

    def round_keys(self, state: State) -> list[Any]:
        assert state.result is not None
        winner = state.result.winner
        points = self.round_points(state.hands)
        return [(seat == winner, -points[seat]) for seat in range(self.num_players)]


def round_to_five(points: int) -> int:
    """Nearest multiple of five, halves up: 12 -> 10, 13 -> 15."""
    return 5 * ((points + 2) // 5)
