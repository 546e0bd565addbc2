"""A chain game of places (Domino-Metro's, docs/rules/metro.md): players who empty their hands take
1st, 2nd, ... and are skipped; doubles branch the ends; an end is *live* while a tile carrying its
value is off the table; a move that leaves no live end (a *Metro*) is offered only when nothing
else is, and ends the game with its maker last.

:class:`PlacesRules` holds the rule parts (``seat_after``, ``lay_scoring``, ``placements``, the
game end, its scoring and ranking) that the batched kernel ``"chain"`` recognises by identity;
the variant declares the rest (its set, opening, options, observer, words). ``maker_word``
names a move that leaves no live end in the events (the ending, the place taken, the score).
State: ``state.extra`` has ``places``, ``metros``, ``metro_points``, ``doubles_open``, ``ends``,
``live``, ``many``, ``live_slots``, ``ending``, ``metro_maker``, ``domino_metro`` and ``winner``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

from domino_env.core.line import OPEN, Line
from domino_env.core.state import State
from domino_env.rules.chain import ChainRules

# The places game's own event: ("place", seat, place, how).
PLACE: Final = "place"
Place = tuple[Literal["place"], int, int, str]


def last_place_leads(rules: Any, state: State[Any], winner: int | None) -> int:
    """The game's last place leads the next; tied, the first from this game's leader."""
    n, places = rules.num_players, state.extra.places
    worst = max(places)
    return next(s for s in ((state.leader + k) % n for k in range(n)) if places[s] == worst)


class PlacesRules(ChainRules):
    """The places game's parts (the module docstring); a variant sets ``metro_penalty`` and
    ``maker_word``."""

    leads_next = last_place_leads
    face_down_doubles = True
    metro_penalty: int = 1  # penalty points for a move that leaves no live end
    maker_word: ClassVar[str] = "maker"  # what the events call such a move

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        ts = self.tile_set
        self._suit = ts.suit_mask
        self._is_double = ts.is_double
        self._other = ts.other_half
        self._down = ts.size * self.num_slots  # offset of the face-down play actions
        self._lone_zero = 1 << ts.id_of((0, 0))
        # _pair[y][x | y bits]: the id of tile x-y, indexed by the highest value and a value mask.
        self._pair = [{(1 << x) | (1 << y): ts.ids[(x, y)] for x in range(y)} for y in range(ts.num_values)]

    # --- turn order: players who went out are skipped ---------------------------------------

    def skip_players_out(self, state: State[Any], seat: int) -> int:
        """The next seat still holding tiles (the part ``seat_after``)."""
        n, hands = self.num_players, state.hands
        for k in range(1, n):
            nxt = (seat + k) % n
            if hands[nxt]:
                return nxt
        return (seat + 1) % n

    seat_after = skip_players_out

    def players_in(self, state: State[Any]) -> int:
        return sum(1 for hand in state.hands if hand)

    # --- the mask ------------------------------------------------------------------------------

    def placements(self, state: State[Any]) -> list[int]:
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

    def is_metro_move(self, state: State[Any], action: int) -> bool:
        """Is ``action`` (a placement of the seat to move) a Metro move? For tests and agents."""
        line = state.line
        hand = state.hands[state.current]
        if not line.count or not hand & (hand - 1) or self.action_kind[action] != "play":
            return False
        ex = state.extra
        return self._is_metro(line, action, ex.live, ex.many, ex.doubles_open)

    # --- laying ----------------------------------------------------------------------------

    def score_lay(self, state: State[Any], seat: int, tile: int) -> None:
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
            ex.ending = self.maker_word
            ex.metro_maker = seat
            self.end_round(state, None, blocked=False)

    lay_scoring = score_lay

    def refresh_ends(self, state: State[Any]) -> int:
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

    def went_out(self, state: State[Any], seat: int) -> None:
        self._place(state, seat, self._next_place(state.extra.places), "out")
        if self.players_in(state) <= 1:
            state.extra.ending = "mole"
            self.end_round(state, seat, blocked=False)
        else:
            self.end_turn(state)

    # --- the end of a game ---------------------------------------------------------------------

    def _next_place(self, places: list[int]) -> int:
        return 1 + sum(1 for p in places if p)

    def _place(self, state: State[Any], seat: int, place: int, how: str) -> None:
        state.extra.places[seat] = place
        state.events.append((PLACE, seat, place, how))

    def hand_count(self, hand: int) -> int:
        """Pips in hand as the places are decided: a hand of just ``0-0`` counts 10."""
        return 10 if hand == self._lone_zero else self.tile_set.mask_pips(hand)

    def end_round(self, state: State[Any], winner: int | None, blocked: bool) -> None:
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
            self._place(state, maker, n, self.maker_word)
        firsts = [s for s in range(n) if places[s] == 1]
        ex.winner = firsts[0] if len(firsts) == 1 else None
        super().end_round(state, ex.winner, blocked)

    def blocked_winner(self, state: State[Any], pips: list[int]) -> int | None:
        winner: int | None = state.extra.winner
        return winner

    def score_round(self, state: State[Any], winner: int | None, blocked: bool, pips: list[int]) -> None:
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
                self.add_score(state, seat, self.metro_penalty, self.maker_word)
            elif places[seat] == worst:
                self.add_score(state, seat, 1, "last place")

    # --- ranking -------------------------------------------------------------------------------

    def round_keys(self, state: State[Any]) -> list[Any]:
        return [-p for p in state.extra.places]
