"""Blind blitz and Blind (docs/rules/blind_blitz.md, docs/rules/blind.md): dominoes from a face-down row.

Double-six, 2-4 players (4 may play as partners: seats 0+2 against 1+3). 2-3 players get 8
tiles, 4 players 7 (so 12, 4 or no tiles stay in the bazaar). A linear line of play; scoring
and match exactly as Classic (every side but the round's winner adds the pips left in hand;
the match ends at 101, lowest wins). Each seat keeps its tiles face down in a *row*; the turn
works on the rightmost tile.

**Blind blitz** (``blind_blitz``, option ``arrange``):

- *Arrange phase* (``arrange="choose"``, the default): after the deal each player, in seat
  order starting with the round's opener, places its tiles one at a time from right to left:
  one ``arrange`` action per tile (``action_tile`` says which), the first chosen is the
  rightmost; the last tile is placed by the environment. The seat remembers its row.
  ``arrange="dealt"`` skips the phase: rows keep the dealt order (a fixed deal lists each row
  left to right).
- *Opening*: first round the holder of ``0-0`` leads it, else the holder of the tile closest
  to it by pips (ties: lower small half), from wherever it lies in the row; later rounds the
  previous winner leads any tile of its row (as Classic). The opening is a turn of its own.
- *A turn* (blind row): the rightmost tile is turned up for all to see (done by the
  environment). If it fits it must be laid (the agent chooses the end, asked even when there
  is one); then ``turn_up`` (the next rightmost tile) or ``stop``. If it does not fit it goes
  face down to the left end of the row, its identity now known to everybody, and the turn
  ends; if nothing was laid this turn and the bazaar has tiles the player chooses ``draw``
  (one tile, unseen even by the player, to the right end of the row) or ``stop``.
- *Three tiles*: when a row holds exactly three tiles they are turned face up for everybody
  and stay so; from the player's next turn they are an open hand: any fitting tile, several
  a turn (``stop`` after each), the turn ending by itself when nothing more fits. With no
  fitting tile at the start of the turn the player chooses ``draw`` (the tile joins the open
  hand face up, and the turn ends) or ``stop``; with an empty bazaar it passes.
- *Round end*: a player lays its last tile (it wins); or blocked, with Classic's blocked
  scoring (fewest pips wins, team sums; a tie has no winner): no tile held by anyone fits
  any open end and the bazaar is empty, or a full circle of turns (``num_players`` in a row)
  passed with no tile laid and no tile drawn.

**Blind** (``blind``): as Blind blitz, but nobody looked at their tiles: no arrange phase, the
rows keep the dealt order and the seat knows nothing of its own row but what was turned up
in front of everybody. The first round's opener is a random seat, later rounds the previous
winner; it leads the rightmost tile of its row (turned up, then laid by the agent, the only
legal move). After a fitting tile the turn ends (no ``turn_up``): several tiles a turn only
from an open hand. In a fixed deal rows are listed left to right (a deal's ``opening`` must
be the leader's rightmost tile; with the leader's hand left random it is put there).

Decisions (also in docs/rules/blind_blitz.md and blind.md):

- The arrange phase starts with the opener and goes clockwise; each round has one.
- Laying the tile that leaves three in the row reveals them and ends the turn: the three are
  played as an open hand from the next turn (the original rules: "in his next turn he may lay two or three").
- The draw after a miss and the open-hand draw are offered (``draw`` or ``stop``) only when
  the bazaar has tiles; an open-hand draw ends the turn even when the drawn tile fits.
- The blocked test "nothing fits anywhere and the bazaar is empty" is made before every
  decision of the play (turn start, and after each laid tile), with everyone's tiles.
- A turn with no tile laid and none drawn is logged as a ``pass`` event; ``num_players`` of
  them in a row block the round. After a blocked round the next leader is as in Classic.
- Events added: ``("up", seat, tile)`` turned up and fits (a decision follows), ``("miss",
  seat, tile)`` turned up, did not fit and went to the left end, ``("reveal", seat, mask)``
  three turned face up, ``("arrange", seat)`` one more tile placed in a row (which: private).
- The greedy baseline lays its heaviest fitting tile, always turns up the next tile, never
  draws, and arranges its row heaviest first (rightmost).

Observation (seat-relative): the common blocks, where ``hand`` holds only the
tiles of its own hand the seat knows (Blind blitz: its whole row except tiles it drew unseen;
Blind: what was turned up) and ``voids`` stays zero (every such fact is in the blocks below);
then ``rows`` (P x T, the observer first: 1/(k+1) for a tile known to sit k places from the
right end of that player's row; 1 for every tile of an open hand), ``open`` (P: that player
plays an open hand), ``unknown`` (P: tiles of that player the observer cannot name / hand
size), ``up`` (T: the tile turned up and waiting to be laid, shown to the seat to move; the
others see it once laid or sent to the left end, before their next decision) and ``quiet``
(turns in a row with nothing laid or drawn / num_players). Phase flags: ``lead``,
``arrange`` (Blind blitz only), ``continuing`` (``stop`` ends a multi-tile turn), ``draw``
(``draw`` or ``stop``). ``public_state()`` adds ``rows`` (left to right, a tile where
everybody knows it, else None), ``open_hands``, ``turned_up``, ``quiet_turns``,
``arranging`` and ``laid_this_turn``.

Version history:

- ``blind_blitz_v0``: the first release (the rules as in docs/rules/blind_blitz.md).
- ``blind_v0``: the first release (the rules as in docs/rules/blind.md).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar, Final, Literal

import numpy as np

from domino_env.core.events import DRAW, PASS
from domino_env.core.state import State, VariantState
from domino_env.core.tiles import format_tile, iter_bits, mask_of
from domino_env.core.view import SeatView
from domino_env.observation.observer import Blocks, Observer
from domino_env.rules.chain import STOP, DealSpec, LineRules
from domino_env.rules.parts import FEWEST_PIPS_OPENS, Opening
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import DRAW_TILE as DRAW_CHANCE
from domino_env.rules.table import ExtraWords
from domino_env.variants.blitz import laid_words
from domino_env.variants.classic import ClassicOptions

TURN_UP = "turn_up"
DRAW_TILE = "draw"
ARRANGE = "arrange"
ARRANGE_MODES = ("choose", "dealt")

# Blind's own events (``domino_env.core.events`` has the shared kinds): ("up", seat, tile) the
# rightmost tile turned face up for all to see, and it fits; ("miss", seat, tile) turned up, it
# did not fit and went face down to the left end of the row; ("reveal", seat, mask) the last
# three tiles turned face up for good; ("arrange", seat) one more tile placed in a row (which
# one is private: it says nothing).
UP: Final = "up"
MISS: Final = "miss"
REVEAL: Final = "reveal"
ARRANGED: Final = "arrange"
Up = tuple[Literal["up"], int, int]
Miss = tuple[Literal["miss"], int, int]
Reveal = tuple[Literal["reveal"], int, int]
Arranged = tuple[Literal["arrange"], int]


class Mode(IntEnum):
    """Where the round stands (``BlindState.mode``): the row machine's states."""

    INIT = 0  # dealt: the arrange phase or the lead comes next
    ARRANGE = 1  # a seat places its tiles in its row (Blind blitz)
    LEAD = 2  # the round's opening
    START = 3  # a turn begins: turn up the rightmost tile, or play the open hand
    UP = 4  # a tile turned up: laid if it fits, else a miss
    CONT = 5  # a turned-up tile laid (Blind blitz): ``turn_up`` or ``stop``
    MISSED = 6  # a miss with nothing laid: ``draw`` or ``stop``
    OPEN = 7  # an open hand lays any fitting tile
    OPEN_DRAW = 8  # an open hand with nothing to lay: ``draw`` or ``stop``


# The modes the turn loop reads, as module globals: on Python 3.11 ``Mode.START`` is a
# descriptor call, eight times a global's lookup, and the loop reads several a decision.
_ARRANGE, _START, _UP, _CONT, _MISSED, _OPEN, _OPEN_DRAW = (
    Mode.ARRANGE,
    Mode.START,
    Mode.UP,
    Mode.CONT,
    Mode.MISSED,
    Mode.OPEN,
    Mode.OPEN_DRAW,
)
_CHECKS_BLOCKED = (_START, _CONT, _OPEN)  # a blocked round is tested for at a decision of these
_LAYS_ON = (_CONT, _OPEN)  # a laid tile leaves the turn going on
_OFFERS_DRAW = (_MISSED, _OPEN_DRAW)  # ``draw`` or ``stop``


@dataclass(slots=True)
class BlindState(VariantState):
    """The rows and where the round stands."""

    rows: list[list[int]] = field(default_factory=list)  # per seat, its row left to right
    mode: Mode = Mode.INIT
    open: list[bool] = field(default_factory=list)  # per seat: its tiles are face up, an open hand
    seen: list[int] = field(default_factory=list)  # per seat, its tiles everybody can name
    known: list[int] = field(default_factory=list)  # per seat, its tiles it can name itself
    up: int = -1  # the turned-up tile waiting to be laid (of state.current)
    quiet: int = 0  # turns in a row with no tile laid nor drawn
    drew: bool = False
    revealed: bool = False  # the row turned face up during this turn
    left: int = 0  # tiles the arranging seat still has to place


@dataclass(frozen=True)
class BlindBlitzOptions(ClassicOptions):
    """How the rows are arranged; ``draw`` is not an option (a draw is a move of its own)."""

    draw: bool = field(default=True, init=False)
    arrange: str = "choose"  # one of ARRANGE_MODES

    def check(self, name: str) -> None:
        if self.arrange not in ARRANGE_MODES:
            raise ValueError(
                f"{name}: arrange must be one of {', '.join(map(repr, ARRANGE_MODES))}, got {self.arrange!r}"
            )


@dataclass(frozen=True)
class BlindOptions(BlindBlitzOptions):
    """No ``arrange`` option: nobody looked at their tiles, so the rows lie as dealt."""

    arrange: str = field(default="dealt", init=False)


class BlindBlitzRules(LineRules):
    """Blind's own engine: the line, deals and scoring of every line-of-play game (Classic's
    scoring), and a turn loop of its own - the row machine of :class:`Mode`."""

    name = "blind_blitz"
    opens = FEWEST_PIPS_OPENS
    extra_actions: ClassVar[tuple[str, ...]] = (STOP, TURN_UP, DRAW_TILE)
    tile_actions: ClassVar[tuple[str, ...]] = (ARRANGE,)
    phases: ClassVar[tuple[str, ...]] = ("lead", "arrange", "continuing", "draw")
    blind: ClassVar[bool] = False  # Blind: nobody looked at their tiles
    names_own_draws: ClassVar[bool] = False  # a tile drawn goes to the row unseen
    seats_name_own_tiles: ClassVar[bool] = False  # a row hides tiles from its own seat
    private_action_kinds: ClassVar[frozenset[str]] = frozenset((ARRANGE,))  # which tile: the arranger's
    # (the rows are said by training.apps.play's row_lines)
    extra_words: ClassVar[Mapping[str, ExtraWords]] = {"laid_this_turn": laid_words}

    options_type: ClassVar[type[BlindBlitzOptions]] = BlindBlitzOptions
    options: BlindBlitzOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.arrange = arrange = self.options.arrange
        self.ordered_hands = arrange == "dealt"  # the rows lie as dealt
        # _phase_table[mode][laid]: the phase flags (asked at every observation of the seat to move)
        self._phase_table = [[self._phase_flags(mode, laid) for laid in (False, True)] for mode in Mode]
        ids = self.extra_action_id
        self._draw_or_stop = [ids[DRAW_TILE], ids[STOP]]
        self._up_or_stop = [ids[TURN_UP], ids[STOP]] if TURN_UP in ids else []
        self._arrange_base = self.tile_action_base.get(ARRANGE, -1)

    def default_hand_size(self) -> int:
        return 8 if self.num_players < 4 else 7

    def score_round(
        self, state: State[BlindState], winner: int | None, blocked: bool, pips: list[int]
    ) -> None:
        self.pips_as_penalty(state, winner, pips)

    # --- deals ---------------------------------------------------------------------------------

    def parse_deal(self, deal: Mapping[str, Any]) -> DealSpec:
        spec = super().parse_deal(deal)
        if self.blind and spec.opening is not None and spec.leader is not None:
            hand = spec.hands[spec.leader]
            if hand is not None and hand[-1] != spec.opening:
                ts = self.tile_set
                raise ValueError(
                    f"{self.name}: the leader opens with the rightmost tile of its row "
                    f"({format_tile(ts.tiles[hand[-1]])}; rows are listed left to right), "
                    f"not {format_tile(ts.tiles[spec.opening])}"
                )
        return spec

    def dealt_from(
        self, state: State[BlindState], spec: DealSpec | None, order: list[int], rng: np.random.Generator
    ) -> None:
        """Dealt rows keep the dealt order; a random row of a fixed deal is shuffled, and owes
        its leader the opening tile at its right end."""
        if self.arrange != "dealt":
            return
        size, rows = self.hand_size, state.extra.rows
        if spec is None:
            state.extra.rows = [order[i * size : (i + 1) * size] for i in range(self.num_players)]
            return
        for seat, hand in enumerate(state.hands):
            listed = spec.hands[seat]
            if listed is not None:
                rows[seat] = list(listed)
                continue
            tiles = list(iter_bits(hand))
            row = [tiles[i] for i in rng.permutation(len(tiles))]
            if spec.opening is not None and spec.leader == seat and self.blind:
                row.remove(spec.opening)  # a random row owes its leader the opening tile: rightmost
                row.append(spec.opening)
            rows[seat] = row

    def start_round(self, state: State[BlindState], rng: np.random.Generator | None = None) -> None:
        state.extra.rows = [[] for _ in range(self.num_players)]  # (dealt tile by tile at chance points)
        super().start_round(state, rng)

    def deal_tile(self, state: State[BlindState], seat: int, tile: int) -> None:
        """A tile dealt by chance goes to the right end of the seat's row (dealt rows)."""
        super().deal_tile(state, seat, tile)
        if self.arrange == "dealt":
            state.extra.rows[seat].append(tile)

    def dealt_by_chance(self, state: State[BlindState], spec: DealSpec | None) -> None:
        """Dealt at chance points, a fixed deal's rows are as listed, and a random row owes its
        leader the opening tile at its right end."""
        if spec is not None and self.arrange == "dealt":
            rows = state.extra.rows
            for seat, listed in enumerate(spec.hands):
                if listed is not None:
                    rows[seat] = list(listed)
            for seat, owed in self.owed(spec).items():
                rows[seat] += owed

    def dealt(self, state: State[BlindState]) -> dict[str, Any]:
        """The round's deal whole; with dealt rows the hands are the rows left to right, the
        leader's turned-up tile back at its right end."""
        deal = super().dealt(state)
        if self.arrange == "dealt":
            x = state.extra
            rows = [list(row) for row in x.rows]
            if x.up >= 0:
                rows[state.current].append(x.up)
            deal["hands"] = [self.tile_names(row) for row in rows]
        return deal

    def new_extra(self) -> BlindState:
        return BlindState()

    def reset_round_extra(self, state: State[BlindState]) -> None:
        n = self.num_players
        x = state.extra
        x.mode = Mode.INIT
        x.open = [False] * n
        x.seen = [0] * n
        x.known = [0] * n if self.blind else list(state.hands)
        x.up = -1
        x.quiet = 0
        x.drew = x.revealed = False
        x.left = 0

    def known_hands(self, state: State[BlindState]) -> list[int]:
        """Per seat, the tiles of its own hand it can name."""
        known: list[int] = state.extra.known
        return known

    def public_hands(self, state: State[BlindState]) -> list[int]:
        """Per seat, the tiles of its row everybody can name (misses, an open hand, and the
        tile the seat to move has turned up)."""
        x = state.extra
        shown = list(x.seen)
        if x.up >= 0:
            shown[state.current] |= 1 << x.up
        return shown

    def private_view(self, state: State[BlindState], seat: int) -> dict[str, Any]:
        """The seat's own row left to right, as it knows it (None: a tile it cannot name)."""
        known, tiles = state.extra.known[seat], self.tile_set.tiles
        return {"row": [tiles[t] if known >> t & 1 else None for t in state.extra.rows[seat]]}

    # --- the turn loop ---------------------------------------------------------------------------

    def advance(self, state: State[BlindState]) -> None:
        """Run the environment's moves (turning up, misses, forced ends) to the next decision."""
        if state.chance is not None:  # a draw chosen: chance gives the tile first
            return
        x = state.extra
        while True:
            mode = x.mode
            if mode in _CHECKS_BLOCKED and self._dead(state):
                self.end_round(state, None, blocked=True)
                state.legal = []
                return
            seat = state.current
            if mode == _START:
                if x.open[seat]:
                    x.mode = _OPEN
                    continue
                self._turn_up(state, seat)
                mode = _UP  # on with the tile turned up
            if mode == _UP:
                tile = x.up
                if state.line.playable_mask() >> tile & 1:  # (kept by the line: a miss asks no placements)
                    state.events.append((UP, seat, tile))
                    state.legal = state.line.placements(1 << tile)
                    return
                self._miss(state, seat, tile)
                if not state.turn_laid and self.can_draw(state):
                    x.mode = _MISSED
                    state.legal = self._draw_or_stop[:]
                    return
            elif mode == _OPEN:
                plays = state.line.placements(state.hands[seat])
                if plays:
                    if state.turn_laid:
                        plays.append(self._stop)
                    state.legal = plays
                    return
                if not state.turn_laid and self.can_draw(state):
                    x.mode = _OPEN_DRAW
                    state.legal = self._draw_or_stop[:]
                    return
            elif mode == _CONT:
                state.legal = self._up_or_stop[:]
                return
            elif mode in _OFFERS_DRAW:
                state.legal = self._draw_or_stop[:]
                return
            elif mode == _ARRANGE:
                left = x.left
                if left & (left - 1):
                    state.legal = [self._arrange_base + t for t in iter_bits(left)]
                    return
                self._arrange(state, seat, left.bit_length() - 1)  # the last tile: no choice
                continue
            elif mode == Mode.LEAD:
                if self.blind and x.up < 0:
                    self._turn_up(state, seat, lead=True)
                    state.required_lead = x.up
                    state.events.append((UP, seat, x.up))
                state.legal = self.placements(state)
                return
            else:  # Mode.INIT
                if self.arrange == "choose":
                    x.mode = Mode.ARRANGE
                    x.left = state.hands[seat]
                else:
                    x.mode = Mode.LEAD
                continue
            # a miss that offers no draw, or an open hand with nothing to do: the turn ends
            self.end_turn(state)
            if state.round_over:
                state.legal = []
                return

    def _dead(self, state: State[BlindState]) -> bool:
        """Blocked: the bazaar is empty and no tile anyone holds fits any open end. The test runs
        before every decision and mostly between lays (misses, passes): the line keeps its
        playable tiles until the next tile is laid."""
        # (with an empty bazaar every tile off the table is held by someone)
        return not state.stock and not state.line.playable_mask() & ~state.line.played

    def apply_extra(self, state: State[BlindState], seat: int, action: int) -> None:
        kind = self.action_kind[action]
        if kind == STOP:  # end a multi-tile turn, or decline the draw
            self.end_turn(state)
        elif kind == TURN_UP:
            self._turn_up(state, seat)
        elif kind == DRAW_TILE:
            if not state.shuffled:  # the tile drawn is a chance point
                state.chance = DRAW_CHANCE
                state.legal = []
                return
            self.take_drawn(state, seat, state.stock.pop())
        elif kind == ARRANGE:
            self._arrange(state, seat, self.action_tile[action])
        else:
            raise ValueError(f"{self.name} has no {kind!r} action")

    def off_the_row(self, state: State[BlindState], seat: int, tile: int) -> None:
        """A laid tile leaves the row, and what the seats know of it (the part ``lay_scoring``)."""
        x = state.extra
        if x.up == tile:
            x.up = -1  # already off the row
        else:
            x.rows[seat].remove(tile)  # the opening tile, or a tile of an open hand
        x.quiet = 0
        keep = ~(1 << tile)
        x.known[seat] &= keep
        x.seen[seat] &= keep
        self._check_reveal(state, seat)
        if x.mode == _UP and not x.revealed and not self.blind:
            x.mode = _CONT

    lay_scoring = off_the_row

    def lays_on(self, state: State[BlindState], seat: int, tile: int) -> bool:
        """After a tile turned up, or from an open hand, until the last tiles are revealed."""
        mode = state.extra.mode
        return mode in _LAYS_ON and not state.extra.revealed

    continues_turn = lays_on

    def end_turn(self, state: State[BlindState]) -> None:
        x = state.extra
        seat = state.current
        if not state.turn_laid and not x.drew:  # (a tile laid or drawn set quiet to 0)
            x.quiet += 1
            state.events.append((PASS, seat))
        state.turn_laid = 0
        x.drew = x.revealed = False
        x.up = -1
        x.mode = _START
        state.current = self._following[seat]
        if x.quiet >= self.num_players:
            self.end_round(state, None, blocked=True)

    # --- row changes -----------------------------------------------------------------------------

    def _arrange(self, state: State[BlindState], seat: int, tile: int) -> None:
        x = state.extra
        x.rows[seat].insert(0, tile)  # placed from right to left
        x.left &= ~(1 << tile)
        state.events.append((ARRANGED, seat))
        if x.left:
            return
        following = self._following[seat]
        if following == state.leader:
            x.mode = Mode.LEAD
            state.current = state.leader
        else:
            state.current = following
            x.left = state.hands[following]

    def _turn_up(self, state: State[BlindState], seat: int, lead: bool = False) -> None:
        x = state.extra
        tile = x.rows[seat].pop()
        x.up = tile  # logged as "up" when it fits (a decision follows), else as "miss"
        if not lead:
            x.mode = _UP

    def _miss(self, state: State[BlindState], seat: int, tile: int) -> None:
        x = state.extra
        x.rows[seat].insert(0, tile)
        x.up = -1
        bit = 1 << tile
        x.known[seat] |= bit
        x.seen[seat] |= bit
        state.events.append((MISS, seat, tile))

    def take_drawn(self, state: State[BlindState], seat: int, tile: int) -> None:
        """``seat`` chose to draw and got ``tile``: to the right end of its row; the turn ends."""
        x = state.extra
        state.hands[seat] |= 1 << tile
        x.rows[seat].append(tile)  # the right end of a row; an open hand shows it
        if x.open[seat]:
            x.known[seat] |= 1 << tile
            x.seen[seat] |= 1 << tile
        x.drew = True
        x.quiet = 0
        state.events.append((DRAW, seat, tile))
        self._check_reveal(state, seat)
        self.end_turn(state)

    def _check_reveal(self, state: State[BlindState], seat: int) -> None:
        x = state.extra
        if x.open[seat] or len(x.rows[seat]) != 3:
            return
        hand = state.hands[seat]
        x.open[seat] = x.revealed = True
        x.known[seat] = x.seen[seat] = hand
        state.events.append((REVEAL, seat, hand))

    # --- observation -----------------------------------------------------------------------------

    def phase_flags(self, state: State[BlindState]) -> tuple[bool, ...]:
        return self._phase_table[state.extra.mode][state.turn_laid > 0]

    def _phase_flags(self, mode: Mode, laid: bool) -> tuple[bool, ...]:
        """The phase flags in ``mode`` (``laid``: a tile laid this turn), for _phase_table."""
        flags = (
            mode == Mode.LEAD,
            mode == Mode.ARRANGE,
            laid and mode in (Mode.CONT, Mode.OPEN),
            mode in (Mode.MISSED, Mode.OPEN_DRAW),
        )
        return flags if self.tile_actions else (flags[0], *flags[2:])

    def public_extra(self, state: State[BlindState]) -> dict[str, Any]:
        x = state.extra
        tiles = self.tile_set.tiles
        up = x.up
        return {
            "rows": [
                [tiles[t] if seen >> t & 1 else None for t in row]
                for row, seen in zip(x.rows, x.seen, strict=True)
            ],
            "open_hands": list(x.open),
            "turned_up": tiles[up] if up >= 0 else None,
            "quiet_turns": x.quiet,
            "arranging": x.mode == Mode.ARRANGE,
            "laid_this_turn": state.turn_laid,
        }

    def describe_event(self, event: tuple[Any, ...], names: list[str]) -> str | None:
        """Blind's events in words: a tile turned up (and where a miss goes), a row revealed;
        an arranged tile says nothing anybody else may know."""
        kind = event[0]
        if kind not in (UP, MISS, REVEAL):
            return super().describe_event(event, names)
        name, tiles = names[event[1]], self.tile_set.tiles
        if kind == REVEAL:
            shown = " ".join(format_tile(tiles[t]) for t in iter_bits(event[2]))
            return f"{name} turns the last three tiles face up: {shown}"
        turned = f"{name} turns up {format_tile(tiles[event[2]])}"
        return turned if kind == UP else turned + ": no fit, to the left end of the row"

    # --- hidden information: sampled worlds ------------------------------------------------

    def place_hidden(
        self, world: State[BlindState], view: SeatView, dealt: list[list[int]], rng: random.Random
    ) -> None:
        """Rebuild every row from what the seat knows (its own row from ``view.private["row"]``,
        the others' from ``view.public["rows"]``), the places it cannot name filled from that
        seat's ``dealt`` tiles, the rest of them outside the row (not yet arranged); ``known``
        consistent with it; a first-round opening tile the seat cannot name (Blind blitz's
        arrange phase) chosen in the world by the opening rule."""
        super().place_hidden(world, view, dealt, rng)
        ids, seat, x = self.tile_set.ids, view.seat, world.extra
        if not world.line.count and world.required_lead >= 0 and not _known_tile(view, world.required_lead):
            world.required_lead = self._opening_tile(world, dealt, rng)
        listings: Sequence[Sequence[Any]] = [
            view.private["row"] if p == seat else view.public["rows"][p] for p in range(view.num_players)
        ]
        rows = []
        for p, listing in enumerate(listings):
            fill = iter(dealt[p])
            rows.append([ids[t] if t is not None else next(fill) for t in listing])
        x.rows = rows
        x.known = [
            mask_of(view.hand) if p == seat else (x.seen[p] if self.blind else world.hands[p])
            for p in range(view.num_players)
        ]
        if view.public.get("arranging"):
            x.left = world.hands[world.current] & ~mask_of(rows[world.current])

    def _opening_tile(self, world: State[BlindState], dealt: list[list[int]], rng: random.Random) -> int:
        """The first round's opening tile of a world, when the seat cannot name it: the first
        dealt tile in the opening order must be the leader's (the leader is public); a sampled
        holder other than the leader swaps it for one of the leader's dealt tiles."""
        leader, order = world.leader, self._opening_order
        held = 0
        for hand in world.hands:
            held |= hand
        first = next(t for t in order if held >> t & 1)
        holder = next(p for p, hand in enumerate(world.hands) if hand >> first & 1)
        if holder != leader and first in dealt[holder] and dealt[leader]:
            i, j = dealt[holder].index(first), rng.randrange(len(dealt[leader]))
            dealt[holder][i], dealt[leader][j] = dealt[leader][j], first
            world.hands[holder] ^= 1 << first | 1 << dealt[holder][i]
            world.hands[leader] ^= 1 << first | 1 << dealt[holder][i]
            return first
        mine = [t for t in order if world.hands[leader] >> t & 1]
        return mine[0]

    def greedy_key(self, state: State[BlindState], action: int) -> tuple[int, ...]:
        """Greedy lays its heaviest tile, turns up the next one while it may and never draws (a drawn
        tile only adds pips); it arranges its heaviest tiles to be turned up first."""
        kind = self.action_kind[action]
        if kind == TURN_UP:
            return (0, 0)
        if kind == DRAW_TILE:
            return (-1, 0)
        return super().greedy_key(state, action)


def _known_tile(view: SeatView, tile: int) -> bool:
    """Can the seat name where ``tile`` is (in some hand, or on the table)?"""
    return tile in view.table or any(tile in hand for hand in view.known_hands)


class BlindRules(BlindBlitzRules):
    """Blind: nobody looked at their tiles; the rightmost tile opens; one tile a turn from a row."""

    name = "blind"
    opens = Opening("the tile turned up from the leader's row")  # its leader: by lot
    extra_actions = (STOP, DRAW_TILE)
    phases = ("lead", "continuing", "draw")
    blind = True
    tile_actions = ()
    private_action_kinds = frozenset()  # (no arrange phase)
    options_type = BlindOptions


class BlindObserver(Observer):
    """``rows``, ``open``, ``unknown``, ``up`` and ``quiet`` (the module docstring says what they
    hold), each player's entries starting with the observer."""

    rules: BlindBlitzRules

    def __init__(self, rules: BlindBlitzRules) -> None:
        super().__init__(rules)
        n, size = rules.num_players, rules.tile_set.size
        self.blocks = (("rows", n * size), ("open", n), ("unknown", n), ("up", size), ("quiet", 1))
        self._inverse = [0.0] + [1.0 / d for d in range(1, size + 1)]  # inverse[d] = 1/d
        self._unknown_scale = 1.0 / rules.hand_size
        # per observer, the players observer first: (seat, its entry in open and unknown, where
        # its row starts in rows)
        self._seat_order = [[((s + k) % n, k, k * size) for k in range(n)] for s in range(n)]

    def write(self, state: State[BlindState], seat: int, out: Blocks) -> None:
        out.zero()
        x = state.extra
        rows_out, open_out, unknown_out = out["rows"], out["open"], out["unknown"]
        rows, opened, hands, seen = x.rows, x.open, state.hands, x.seen
        inverse, scale = self._inverse, self._unknown_scale
        own = x.known[seat]
        for p, k, base in self._seat_order[seat]:
            mask = seen[p] if k else own  # (k 0: the observer's own row)
            if opened[p]:
                open_out[k] = 1.0
                bits = mask
                while bits:
                    low = bits & -bits
                    rows_out[base + low.bit_length() - 1] = 1.0
                    bits ^= low
            elif mask:  # the tiles it knows lead the row (misses go left, unseen draws right)
                row = rows[p]
                place = len(row)  # counted from the right, from 1
                for t in row:
                    if not mask >> t & 1:
                        break
                    rows_out[base + t] = inverse[place]
                    place -= 1
            unknown = hands[p] & ~mask
            if unknown:
                unknown_out[k] = unknown.bit_count() * scale
        if x.up >= 0 and state.current == seat:
            out["up"][x.up] = 1.0
        if x.quiet:
            out["quiet"][0] = x.quiet / self.rules.num_players


SPECS = (
    VariantSpec(
        name="blind_blitz",
        title="Blind blitz",
        shipped=True,
        rules=BlindBlitzRules,
        table="chain",
        summary="tiles in a face-down row you arranged, turned up one at a time; three left are shown",
        option_help={"arrange": "'choose': each player arranges its row after the deal; 'dealt': as dealt"},
        benchmark_tables=({"num_players": 2}, {"num_players": 4, "teams": True}),
        observer=BlindObserver,
        presets={"tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"}},
        action_names={
            "stop": "end the turn",
            "turn_up": "turn up the next tile",
            "draw": "draw a tile",
            "arrange": "place next in the row",
        },
    ),
    VariantSpec(
        name="blind",
        title="Blind",
        shipped=True,
        rules=BlindRules,
        table="chain",
        summary="as Blind blitz, but nobody looked at their tiles: one tile a turn from the row",
        benchmark_tables=({"num_players": 2}, {"num_players": 4, "teams": True}),
        observer=BlindObserver,
        presets={"tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"}},
        action_names={"stop": "end the turn", "draw": "draw a tile"},
    ),
)
