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

The turn order, mask, lay, game end, scoring and ranking are the places game's parts
(:class:`domino_env.rules.places.PlacesRules`), which the batched kernel ``"chain"`` knows by
identity: ``domino_env.vector`` steps Metro tables exactly.

Version history:

- ``metro_v0``: the first release (the rules as in docs/rules/metro.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from domino_env.core.state import State, VariantState
from domino_env.core.tiles import DOUBLE_NINE, TileSet
from domino_env.observation.observer import Blocks, Observer
from domino_env.render.words import per_seat_text, value_text
from domino_env.rules.chain import ChainOptions
from domino_env.rules.parts import Opening
from domino_env.rules.places import PLACE, PlacesRules, last_place_leads
from domino_env.rules.spec import VariantSpec
from domino_env.rules.table import ExtraWords

# How a player took its place (a ``place`` event's ``how``: Domino-Metro's own event, ("place",
# seat, place, how), is ``domino_env.rules.places.PLACE``), in words.
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


class MetroRules(PlacesRules):
    """Domino-Metro's set, opening, options and words; its turn order, placements, lay, game
    end, scoring and ranking are the places game's parts (:class:`PlacesRules`)."""

    name = "metro"
    batched_kernel = "chain"
    opens = Opening("the lowest double dealt after 0-0", doubles_from_one)
    leads_next = last_place_leads
    maker_word = "metro"
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

    def describe_event(self, event: tuple[Any, ...], names: list[str]) -> str | None:
        """A place taken, and how, in words."""
        if event[0] != PLACE:
            return super().describe_event(event, names)
        _, seat, place, how = event
        return f"{names[seat]} takes place {place} ({PLACE_HOW[how]})"

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
        presets={
            "tiny": {"num_players": 2, "max_pip": 2, "hand_size": 2, "episode": "round"},
            "medium": {"num_players": 2, "max_pip": 3, "hand_size": 3, "episode": "round"},
        },
    ),
)
