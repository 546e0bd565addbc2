"""Domino-Metro (docs/rules/metro.md): branching ends, places, and the forbidden Metro.

Double-nine (55 tiles), 2-3 players, 10 tiles each, no teams; the rest is the bazaar. One
tile a turn; a player who cannot lay draws until a tile fits (and lays it) or the bazaar is
empty (then passes).

- **Ends.** The first tile has two ends (a double too). The first double laid in a game is
  always face up and acts like any tile (covers the end, one new end). Every later double
  is laid *open* (face up: the end it covers is replaced by two ends of its value, net +1,
  :meth:`Line.open_end`) or *closed* (face down, shown to all: covers the end, adds none,
  net -1) - two separate actions (``face_down_doubles``). A new end whose value has every
  tile on the table is closed at once (a *terminal tile*). An open end is *live* while a
  tile carrying its value is off the table; ends that are not live count as closed.
- **Metro.** A *Metro move* is a placement, other than an open double and other than the
  player's last tile, that leaves no live end. The mask offers a Metro move only when the
  bazaar is empty and the player has nothing else to lay; a player whose only placements are
  Metro moves draws while the bazaar has tiles. Whoever makes Metro takes the last place and
  the game ends. A move that empties the hand and leaves no live end is *domino-Metro*: the
  best place still free and, with 3 players, every Metro that player made earlier in the
  match is cleared (with their penalty points). An open double is never Metro; if it leaves
  no live end the game is blocked.
- **Places.** Players who empty their hands take 1st, 2nd, ... in that order and are then
  skipped; the game goes on among the rest. It ends when one player still holds tiles (the
  *mole*), at Metro, when no live end is left (even with tiles in the bazaar), or blocked
  (everyone still in passes in a row, bazaar empty). Players still holding tiles then take
  the free places by pips in hand, fewest first (a hand of just ``0-0`` counts 10), the
  Metro maker always last; equal pips share the place ("1, 2, 2": the best place of the
  span). Everyone with the worst place is a loser.
- **Opening.** First game: the holder of the lowest double from ``1-1`` up leads it; none
  dealt: a random player leads any tile. Later games: the first loser in turn order leads
  any tile.
- **Match.** Each loser gets 1 penalty point, a Metro maker ``metro_penalty`` instead
  (default 1; 2 is the original rules' "doubly, by agreement"). The match ends when a player reaches
  ``match_target`` points (default 5); fewest penalties wins, ties share the rank. With
  ``episode="round"`` players are ranked by places.

Decisions (also in docs/rules/metro.md):

- The first double counts as an ordinary tile everywhere: it is never face down, and it is a
  Metro move when its one new end is not live.
- An open double laid as the player's last tile is a plain going out, never domino-Metro
  (an open double is never Metro); if it leaves no live end the game then ends as blocked.
- Domino-Metro with 2 players is just first place (the original rules clear Metros "when three play").
- "First of the losers in turn order" counts from this game's leader. When every player
  still holding tiles ties (or all players tie), they all share the last place and all lose.
- Every new end whose value is used up is closed at once (both ends of an open double too);
  an older end whose value runs out stays open but is not live (``live`` flag 0).
- ``voids`` (common observation block) marks the values a player could not *legally* lay
  on when drawing or passing; a player holding only Metro moves draws too.
- ``RoundResult.winner`` is the sole holder of 1st place (None when shared).
- A block by passes cannot happen: once the bazaar is empty, a tile that keeps an end live
  is in the hand of a player still in the game, who may lay it. So a game is "blocked" only
  by an open double that leaves no live end (``ending="blocked"``, ``RoundResult.blocked``);
  the pass rule is kept as a safety net.
- A Metro by a closed double cannot be forced: whoever may lay a double face down on the
  last live end may also lay it open, which is never Metro, so the closed one stays masked.

Extras: ``public_state()`` adds ``live_ends`` (slot name -> value of each live end),
``places`` (per seat, None until placed), ``penalties`` (per seat), ``metros`` (per seat,
Metros made this match and not cleared), ``doubles_open`` (the first double is down, so
doubles now open or close) and ``ending`` (how the game ended: ``mole``, ``metro``,
``domino_metro`` or ``blocked``).
Observation blocks (seat-relative, the observer first): ``places`` (place / players, 0 while
in play), ``metros`` (uncleared Metros / match target), ``doubles_open`` (1 flag);
penalties are the common ``scores`` block. Events: ``("place", seat, place, how)`` as
players are placed (how: ``out``, ``domino_metro``, ``metro``, ``mole``, ``pips``).

Version history:

- ``metro_v0``: the first release (the rules as in docs/rules/metro.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

import numpy as np

from domino_env.core.line import OPEN, Line
from domino_env.core.state import State, VariantState
from domino_env.core.tiles import DOUBLE_NINE, TileSet
from domino_env.observation.observer import Blocks, Observer
from domino_env.render.words import per_seat_text, value_text
from domino_env.rules.chain import ChainOptions, ChainRules
from domino_env.rules.parts import Opening
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import ExtraWords

# Domino-Metro's own event (``domino_env.core.events`` has the shared kinds): ("place", seat,
# place, how), how one of the keys of PLACE_HOW.
PLACE: Final = "place"
Place = tuple[Literal["place"], int, int, str]
# How a player took its place (a ``place`` event's ``how``), in words.
PLACE_HOW = {
    "out": "went out",
    "domino_metro": "domino-Metro",
    "mole": "the mole, left holding tiles",
    "pips": "by pips in hand",
    "metro": "made a Metro",
}


def places_words(places: list[int | None], names: list[str]) -> str | None:
    """``public_state()["places"]`` in words (``places: P1 1st, P0 2nd``), once any is taken."""
    if not any(places):
        return None
    return "places: " + ", ".join(f"{n} {_ordinal(p)}" for n, p in zip(names, places, strict=True) if p)


def _ordinal(place: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(place, "th")  # (Metro seats 2-3 players)
    return f"{place}{suffix}"


@dataclass(slots=True)
class MetroState(VariantState):
    """Metros of the match, and where the game stands: places, the ends the mask uses, the ending."""

    metros: list[int]  # per seat, Metros made this match and not cleared
    metro_points: list[int]  # per seat, the penalty points they cost
    places: list[int] = field(default_factory=list)  # per seat, 0 while in play
    doubles_open: bool = False  # the first double is on the table
    ends: int = 0  # slots in use (0 .. ends-1): 2 after the lead, +1 per open double
    live: int = 0  # value mask of the live ends
    many: int = 0  # value mask of the values shown by two open ends
    live_slots: list[int] = field(default_factory=list)  # the live ends (only they take a tile)
    ending: str | None = None  # mole, metro, domino_metro or blocked
    metro_maker: int = -1
    domino_metro: int = -1  # who made domino-Metro
    winner: int | None = None  # the sole holder of 1st place


@dataclass(frozen=True)
class MetroOptions(ChainOptions):
    """The Metro penalty and the penalty that ends the match."""

    metro_penalty: int = 1
    match_target: int = 5

    def check(self, name: str) -> None:
        for option in ("metro_penalty", "match_target"):
            value = getattr(self, option)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name}: {option} must be a positive integer, got {value!r}")


def doubles_from_one(tile_set: TileSet) -> list[int]:
    """The doubles from 1-1 up (with none dealt, a lot draws the leader)."""
    return [tile_set.id_of((v, v)) for v in range(1, tile_set.num_values)]


def last_place_leads(rules: MetroRules, state: State[MetroState], winner: int | None) -> int:
    """The game's last place leads the next; tied, the first from this game's leader."""
    n, places = rules.num_players, state.extra.places
    worst = max(places)
    return next(s for s in ((state.leader + k) % n for k in range(n)) if places[s] == worst)


class MetroRules(ChainRules):
    name = "metro"
    opens = Opening("the lowest double dealt after 0-0", doubles_from_one)
    leads_next = last_place_leads
    tile_set = DOUBLE_NINE
    player_counts = (2, 3)
    teams_allowed = False
    # The first tile gives 2 ends, the first double none more, each of the 9 later doubles
    # laid open one more: 11 ends at most (a smaller set: slots_for_set).
    num_slots = 11
    face_down_doubles = True
    hand_size = 10
    match_target = 5
    lower_score_wins = True
    rollout_cost = 2.5  # a round of 10-tile hands from a double-nine set, with Metro moves
    voids_hold_none = False  # a void: could not *legally* lay (a player holding only Metro moves draws)
    extra_words: ClassVar[Mapping[str, ExtraWords]] = {
        "live_ends": lambda ends, _: f"live ends: {value_text(ends)}",
        "places": places_words,
        "penalties": lambda _, __: None,  # the header's scores are the penalties
        "metros": lambda metros, names: (
            f"Metros made: {per_seat_text(metros, names)}" if any(metros) else None
        ),
        "doubles_open": lambda flag, _: (
            "doubles are laid open (two new ends) or face down (closing the end)"
            if flag
            else "the first double is laid as an ordinary tile"
        ),
        "ending": lambda how, _: f"game ended by: {how.replace('_', '-')}" if how else None,
    }

    options_type: ClassVar[type[MetroOptions]] = MetroOptions
    options: MetroOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.metro_penalty = int(self.options.metro_penalty)
        self.match_target = int(self.options.match_target)
        ts = self.tile_set
        self._suit = ts.suit_mask
        self._is_double = ts.is_double
        self._other = ts.other_half
        self._down = ts.size * self.num_slots  # offset of the face-down play actions
        self._lone_zero = 1 << ts.id_of((0, 0))
        # _pair[y][x | y bits]: the id of tile x-y, indexed by the highest value and a value mask.
        self._pair = [{(1 << x) | (1 << y): ts.ids[(x, y)] for x in range(y)} for y in range(ts.num_values)]

    def slots_for_set(self) -> int:
        """2 ends from the first tile, none more from the first double, one more from each of
        the other max_pip doubles laid open."""
        return 2 + self.tile_set.max_pip

    @property
    def observation_high(self) -> float:
        """A last game's Metro penalty may carry a score past the target: scores (/ target) reach
        (target - 1 + metro_penalty) / target, above the tile count when the penalty is large."""
        return max(super().observation_high, (self.match_target - 1 + self.metro_penalty) / self.match_target)

    @property
    def slot_names(self) -> tuple[str, ...]:
        return ("east", "west", *(f"end{i}" for i in range(2, self.num_slots)))

    # --- rounds --------------------------------------------------------------------------------

    def new_extra(self) -> MetroState:
        n = self.num_players
        return MetroState(metros=[0] * n, metro_points=[0] * n)

    def reset_round_extra(self, state: State[MetroState]) -> None:
        ex = state.extra
        ex.places = [0] * self.num_players
        ex.doubles_open = False
        ex.ends = 0
        ex.live = ex.many = 0
        ex.live_slots = []
        ex.ending = None
        ex.metro_maker = -1
        ex.domino_metro = -1
        ex.winner = None

    # --- turn order: players who went out are skipped ---------------------------------------

    def skip_players_out(self, state: State[MetroState], seat: int) -> int:
        """The next seat still holding tiles (the part ``seat_after``)."""
        n, hands = self.num_players, state.hands
        for k in range(1, n):
            nxt = (seat + k) % n
            if hands[nxt]:
                return nxt
        return (seat + 1) % n

    seat_after = skip_players_out

    def players_in(self, state: State[MetroState]) -> int:
        return sum(1 for hand in state.hands if hand)

    # --- the mask ------------------------------------------------------------------------------

    def placements(self, state: State[MetroState]) -> list[int]:
        line = state.line
        if not line.count:
            return super().placements(state)
        hand = state.hands[state.current]
        ex = state.extra
        slots, suit, values = self.num_slots, self._suit, line.value
        plays: list[int] = []
        for s in ex.live_slots:  # a tile in hand fits only a live end
            fits = hand & suit[values[s]]
            while fits:
                low = fits & -fits
                plays.append((low.bit_length() - 1) * slots + s)
                fits ^= low
        if not plays:
            return plays
        doubles_open = ex.doubles_open
        if doubles_open and hand & self.tile_set.doubles_mask:
            is_double, down = self._is_double, self._down
            plays += [a + down for a in plays if is_double[a // slots]]
        if not hand & (hand - 1):
            return plays  # the last tile in hand is never a Metro move
        # A tile touches two values, so some live end survives any move while three values
        # are live, and with two live values x and y only the tile x-y can kill both.
        live, many = ex.live, ex.many
        count = live.bit_count()
        if count >= 3 or (count == 2 and not hand >> self._pair[live.bit_length() - 1][live] & 1):
            return plays
        fine: list[int] = []
        metro: list[int] = []
        for a in plays:
            (metro if self._is_metro(line, a, live, many, doubles_open) else fine).append(a)
        if not metro:
            return plays
        return fine if fine or state.stock else metro

    def _is_metro(self, line: Line, action: int, live: int, many: int, doubles_open: bool) -> bool:
        """Would this placement (not the player's last tile) leave no live end?"""
        face_down = action >= self._down
        tile, slot = self.action_tile[action], self.action_slot[action]
        u = line.value[slot]
        if self._is_double[tile]:
            if doubles_open and not face_down:
                return False  # an open double is never Metro
            w = -1 if face_down else u
        else:
            w = self._other[tile][u]
        # Only values u and w can change: the other live values keep a live end.
        if live & ~(1 << u) & ~(1 << w if w >= 0 else 0):
            return False
        off = ~(line.played | 1 << tile)
        if w >= 0 and self._suit[w] & off:
            return False  # the new end is live
        return not (many >> u & 1 and self._suit[u] & off)  # another end showing u stays live

    def is_metro_move(self, state: State[MetroState], action: int) -> bool:
        """Is ``action`` (a placement of the seat to move) a Metro move? For tests and agents."""
        line = state.line
        hand = state.hands[state.current]
        if not line.count or not hand & (hand - 1) or self.action_kind[action] != "play":
            return False
        ex = state.extra
        return self._is_metro(line, action, ex.live, ex.many, ex.doubles_open)

    # --- laying ----------------------------------------------------------------------------

    def score_lay(self, state: State[MetroState], seat: int, tile: int) -> None:
        """The ends, Metros and places a laid tile changes (the part ``lay_scoring``)."""
        line, ex = state.line, state.extra
        double = self._is_double[tile]
        opened = False
        if line.count == 1:
            ex.ends = 2
        else:
            laid: tuple[Any, ...] = state.events[-1]  # the lay event of this tile
            slot = laid[3]
            if line.state[slot] == OPEN:  # face up (a face-down double is already closed)
                value = line.value[slot]
                used_up = not self._suit[value] & ~line.played
                if double and ex.doubles_open:
                    opened = True
                    new = line.open_end(value)
                    ex.ends = new + 1
                    line.double_end[new] = True
                    if used_up:
                        line.close(new)
                if used_up:
                    line.close(slot)  # a terminal tile
        if double:
            ex.doubles_open = True
        if self.refresh_ends(state):
            return
        places = ex.places
        if opened:  # an open double left no live end: blocked
            if not state.hands[seat]:
                self._place(state, seat, self._next_place(places), "out")
            ex.ending = "blocked"
            self.end_round(state, None, blocked=True)
        elif not state.hands[seat]:
            self._place(state, seat, self._next_place(places), "domino_metro")
            ex.ending = "domino_metro"
            ex.domino_metro = seat
            self.end_round(state, seat, blocked=False)
        else:
            ex.ending = "metro"
            ex.metro_maker = seat
            self.end_round(state, None, blocked=False)

    lay_scoring = score_lay

    def refresh_ends(self, state: State[MetroState]) -> int:
        """Recompute the summary of the ends the mask uses (after every tile laid, or after the
        line was edited by hand); return the mask of values shown by live ends (0: none)."""
        line, ex = state.line, state.extra
        suit, values, status, off = self._suit, line.value, line.state, ~line.played
        live = seen = many = 0
        live_slots = []
        for s in range(ex.ends):  # the slots in use: ends open from slot 0 up
            if status[s] == OPEN:
                bit = 1 << values[s]
                many |= seen & bit
                seen |= bit
                if suit[values[s]] & off:
                    live |= bit
                    live_slots.append(s)
        ex.live, ex.many, ex.live_slots = live, many, live_slots
        return live

    def went_out(self, state: State[MetroState], seat: int) -> None:
        self._place(state, seat, self._next_place(state.extra.places), "out")
        if self.players_in(state) <= 1:
            state.extra.ending = "mole"
            self.end_round(state, seat, blocked=False)
        else:
            self.end_turn(state)

    # --- the end of a game ---------------------------------------------------------------------

    def _next_place(self, places: list[int]) -> int:
        return 1 + sum(1 for p in places if p)

    def _place(self, state: State[MetroState], seat: int, place: int, how: str) -> None:
        state.extra.places[seat] = place
        state.events.append((PLACE, seat, place, how))

    def hand_count(self, hand: int) -> int:
        """Pips in hand as the places are decided: a hand of just ``0-0`` counts 10."""
        return 10 if hand == self._lone_zero else self.tile_set.mask_pips(hand)

    def end_round(self, state: State[MetroState], winner: int | None, blocked: bool) -> None:
        n, ex = self.num_players, state.extra
        places, maker = ex.places, ex.metro_maker
        if ex.ending is None:
            ex.ending = "blocked"
        holders = [s for s in range(n) if not places[s] and s != maker]
        first_free = self._next_place(places)
        counts = {s: self.hand_count(state.hands[s]) for s in holders}
        how = "mole" if ex.ending == "mole" else "pips"
        for s in holders:
            self._place(state, s, first_free + sum(1 for o in holders if counts[o] < counts[s]), how)
        if maker >= 0:
            self._place(state, maker, n, "metro")
        firsts = [s for s in range(n) if places[s] == 1]
        ex.winner = firsts[0] if len(firsts) == 1 else None
        super().end_round(state, ex.winner, blocked)

    def blocked_winner(self, state: State[MetroState], pips: list[int]) -> int | None:
        winner: int | None = state.extra.winner
        return winner

    def score_round(
        self, state: State[MetroState], winner: int | None, blocked: bool, pips: list[int]
    ) -> None:
        ex = state.extra
        places, maker, cleared = ex.places, ex.metro_maker, ex.domino_metro
        if cleared >= 0 and self.num_players == 3 and ex.metros[cleared]:
            self.add_score(state, cleared, -ex.metro_points[cleared], "domino-metro clears metros")
            ex.metros[cleared] = ex.metro_points[cleared] = 0
        worst = max(places)
        for seat in range(self.num_players):
            if seat == maker:
                ex.metros[seat] += 1
                ex.metro_points[seat] += self.metro_penalty
                self.add_score(state, seat, self.metro_penalty, "metro")
            elif places[seat] == worst:
                self.add_score(state, seat, 1, "last place")

    def describe_event(self, event: tuple[Any, ...], names: list[str]) -> str | None:
        """A place taken, and how, in words."""
        if event[0] != PLACE:
            return super().describe_event(event, names)
        _, seat, place, how = event
        return f"{names[seat]} takes place {place} ({PLACE_HOW[how]})"

    # --- ranking -------------------------------------------------------------------------------

    def round_keys(self, state: State[MetroState]) -> list[Any]:
        return [-p for p in state.extra.places]

    # --- observation ---------------------------------------------------------------------------

    def public_extra(self, state: State[MetroState]) -> dict[str, Any]:
        line, ex = state.line, state.extra
        names = self.slot_names
        return {
            "live_ends": {names[s]: line.value[s] for s in range(self.num_slots) if line.is_live(s)},
            "places": [p or None for p in ex.places],
            "penalties": list(state.scores),
            "metros": list(ex.metros),
            "doubles_open": bool(ex.doubles_open),
            "ending": ex.ending,
        }


class MetroObserver(Observer):
    """``places`` (place / players, 0 while in play) and ``metros`` (uncleared Metros / match
    target), the observer first; ``doubles_open`` (1 flag)."""

    def __init__(self, rules: MetroRules) -> None:
        super().__init__(rules)
        n = rules.num_players
        self.blocks = (("places", n), ("metros", n), ("doubles_open", 1))
        self._seat_order = [[(seat + k) % n for k in range(n)] for seat in range(n)]  # observer first

    def write(self, state: State[MetroState], seat: int, out: Blocks) -> None:
        n, ex = self.rules.num_players, state.extra
        places, metros = ex.places, ex.metros
        places_out, metros_out = out["places"], out["metros"]
        scale = 1.0 / self.rules.match_target
        for k, other in enumerate(self._seat_order[seat]):
            places_out[k] = places[other] / n
            metros_out[k] = metros[other] * scale
        out["doubles_open"][0] = ex.doubles_open


SPECS = (
    VariantSpec(
        name="metro",
        title="Domino-Metro",
        shipped=True,
        rules=MetroRules,
        table="chain",
        summary="double-nine, doubles branch the ends, places by going out; never leave no live end (Metro)",
        option_help={
            "metro_penalty": "penalty points for making Metro (2: the original 'doubly, by agreement')",
            "match_target": "penalty points that end the match",
        },
        benchmark_tables=({"num_players": 2}, {"num_players": 3}),
        observer=MetroObserver,
        presets={"tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"}},
    ),
)
