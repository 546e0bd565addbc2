"""What every domino game shares, whatever its table: seats and sides, scores, the ranking.

:class:`TableRules` is the interface :class:`~domino_env.envs.base.DominoEnv` drives - options,
deals, one match's state, applying an action, ranking the sides - and the little code that
is the same for a line of play (:class:`~domino_env.rules.chain.ChainRules`) and a grid
(:class:`~domino_env.variants.domino3d.GridRules`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from domino_env.core.events import DRAW, SCORE
from domino_env.core.state import TableState
from domino_env.core.tiles import DOUBLE_SIX, TileSet, format_tile, mask_of
from domino_env.core.view import SeatView

PLAY = "play"  # the kind of an action that lays a tile
# The kinds of chance point (``state.chance``): a tile dealt, a leader drawn by lot, a tile
# drawn from the stock; 3D dominoes' start tile, the side it lies and who moves first.
DEAL_TILE, LOT, DRAW_TILE, START, SIDE, LEADER = "deal", "lot", "draw", "start", "side", "leader"
# The words of one entry of a variant's ``public_extra`` (its value, the seats' names): a line,
# or None to leave it out.
ExtraWords = Callable[[Any, list[str]], str | None]
LISTED_TILES = 6  # the most tiles an explanation names before "..."


@dataclass(frozen=True)
class TableOptions:
    """The options every table has; a variant's dataclass extends it with its own (the
    registry, the docs and ``make`` read its fields: name, type, default)."""

    num_players: int = 2
    teams: bool = False

    def check(self, name: str) -> None:
        """Refuse a value of the variant's own options (``name`` starts the message); the
        table's (players, partners, set and hand size) the rules check."""


StateT = TypeVar("StateT", bound=TableState)


class TableRules(Generic[StateT]):
    """Seats, sides and ranking; a game's rules subclass it and implement the lifecycle, on
    states of its table's kind (``StateT``: a line of play's State, the grid's GridState)."""

    name: ClassVar[str] = ""
    options_type: ClassVar[type[TableOptions]] = TableOptions  # the variant's options dataclass
    options: TableOptions
    tile_set: TileSet = DOUBLE_SIX  # the kinds of tile (ids, pips) actions and deals name
    player_counts: ClassVar[tuple[int, ...]] = (2, 3, 4)
    teams_allowed: ClassVar[bool] = True
    # Extra blocks whose entry k describes play action k: a policy may feed them straight to
    # its action scores (training's ``network.action_blocks``).
    action_blocks: ClassVar[tuple[str, ...]] = ()
    hand_size: int = 7
    match_target: int = 101  # also the scale of ``reward="points"`` and of the scores block
    lower_score_wins: ClassVar[bool] = True  # penalty scores (Classic) vs points (All Fives)
    names_own_draws: ClassVar[bool] = True  # a player sees the tiles it draws (not in Blind)
    # Every seat can name every tile of its own hand (not in Blind's face-down rows): what an
    # exact solver of a sampled world needs (``domino_env.agents.solver.solvable``).
    seats_name_own_tiles: ClassVar[bool] = True
    # Action kinds whose choice the other seats do not see (Blind blitz's ``arrange``): the
    # OpenSpiel adapter names only their kind in another seat's information state.
    private_action_kinds: ClassVar[frozenset[str]] = frozenset()
    # Per key of the variant's ``public_extra`` (Blitz's ``laid_this_turn`` ...), its words:
    # what a person's table text says of it (``training.apps.play``); a key not here is said plainly.
    extra_words: ClassVar[Mapping[str, ExtraWords]] = {}
    ordered_hands: bool = False  # the order a hand is dealt in is part of the game (Blind's rows)
    # How many Classic-sized rollouts one rollout of this table costs (longer rounds, a grid's
    # placements): the search tiers divide their budgets by it to keep a decision's time.
    rollout_cost: ClassVar[float] = 1.0
    # Which batched kernel (``domino_env.vector.KERNELS``) steps this variant's tables exactly;
    # None: scalar tables behind the vector interface. A subclass inherits it: the kernel's
    # ``supports`` checks the rules it is given.
    batched_kernel: ClassVar[str | None] = None

    # The action table, filled by the subclass: how many, and each action's kind and tile id.
    num_actions: int
    action_kind: Sequence[str]
    action_tile: Sequence[int]  # -1 for actions without a tile

    def __init__(self, **options: Any) -> None:
        self.options = self.options_type(**options)
        num_players, teams = self.options.num_players, self.options.teams
        # (2.0 == 2 and 1 == True: the types are checked, not only the values)
        if (
            isinstance(num_players, bool)
            or not isinstance(num_players, (int, np.integer))
            or (num_players not in self.player_counts)
        ):
            raise ValueError(
                f"{self.name} is played by {', '.join(map(str, self.player_counts))} players, "
                f"not {num_players!r}"
            )
        if not isinstance(teams, (bool, np.bool_)):
            raise ValueError(f"{self.name}: teams must be True or False, got {teams!r}")
        num_players = int(num_players)
        if teams and not self.teams_allowed:
            raise ValueError(f"{self.name}: this variant has no partnerships; teams must be False")
        if teams and num_players != 4:
            raise ValueError(
                f"{self.name}: partners play only with 4 players; with num_players={num_players} "
                "teams must be False"
            )
        self.num_players = num_players
        self.teams = bool(teams)
        self.side_of = [seat % 2 for seat in range(num_players)] if teams else list(range(num_players))
        self.num_sides = 2 if teams else num_players
        self.members = [
            [s for s in range(num_players) if self.side_of[s] == side] for side in range(self.num_sides)
        ]
        self._following = [(seat + 1) % num_players for seat in range(num_players)]
        self.options.check(self.name)

    @property
    def observation_high(self) -> float:
        """The largest value an observation entry can take (the Box's upper bound)."""
        return float(self.tile_set.size)

    # --- the lifecycle the environment drives (each game implements it) ---------------------

    def parse_deal(self, deal: Mapping[str, Any]) -> Any:
        """Validate a fixed deal (reset option ``deal``); raise ValueError saying what is wrong."""
        raise NotImplementedError

    def new_match(self, deals: Sequence[Any] = (), rng: np.random.Generator | None = None) -> StateT:
        """A new match's state: dealt from ``rng`` as the environment deals (:meth:`deal_from`),
        or else waiting on the deal's first chance point."""
        raise NotImplementedError

    def start_round(self, state: StateT, rng: np.random.Generator | None = None) -> None:
        """Begin the next round of a match whose round is over, dealt as :meth:`new_match` deals."""
        raise NotImplementedError

    # --- chance points -----------------------------------------------------------------------

    def num_deals(self) -> int:
        """The different deals of a round, before any draw (hands as sets, or in order where
        the order is part of the game): the least an exact walk of the game tree covers."""
        return self._hand_deals(self.tile_set.size)[0]

    def _hand_deals(self, tiles: int) -> tuple[int, int]:
        """(the ways to deal every hand from ``tiles`` tiles, the tiles left over)."""
        ways = math.perm if self.ordered_hands else math.comb
        deals = 1
        for _ in range(self.num_players):
            deals *= ways(tiles, self.hand_size)
            tiles -= self.hand_size
        return deals, tiles

    def chance_outcomes(self, state: StateT) -> list[tuple[int, float]]:
        """The outcomes of the chance point ``state`` waits on (``state.chance``) and their
        probabilities: tile ids for a deal or a draw, a seat for a lot. Each table lists its
        deal's (:func:`hand_outcomes`); the kinds every table words alike are here."""
        kind = state.chance
        if kind in (LOT, LEADER):
            return uniform(range(self.num_players))
        if kind in (DRAW_TILE, START):
            return uniform(sorted(state.stock))
        if kind == SIDE:
            return uniform((0, 1))
        raise ValueError("the game waits on no chance point: apply a player's action")

    def apply_chance(self, state: StateT, outcome: int) -> None:
        """Apply an outcome of the chance point ``state`` waits on and run on to the next
        decision or chance point."""
        raise NotImplementedError

    def deal_from(self, state: StateT, rng: np.random.Generator) -> None:
        """The environment's deal: the round's tiles shuffled by ``rng`` (drawn from it as
        they always were, so seeded play never changes), dealt at once, the rest left as a
        shuffled stock whose last tile every draw takes; then on to the next decision or chance
        point."""
        raise NotImplementedError

    def resolve(self, state: StateT, rng: np.random.Generator) -> None:
        """Resolve the chance points ``state`` waits on after :meth:`deal_from` as the
        environment does: a lot drawn from ``rng`` (as the rules always drew it), a draw the
        stock's last tile."""
        while state.chance is not None:
            if state.chance == DRAW_TILE:
                self.apply_chance(state, state.stock[-1])
            elif state.chance == LOT:
                self.apply_chance(state, int(rng.integers(self.num_players)))
            else:
                raise ValueError(f"a {state.chance} chance point is the deal's: deal_from resolves it")

    def check_chance(self, state: StateT, outcome: int) -> None:
        """Refuse an outcome the chance point ``state`` waits on does not have."""
        outcomes = [o for o, _ in self.chance_outcomes(state)]
        if outcome not in outcomes:
            raise ValueError(
                f"chance outcome {outcome!r} is not one of this {state.chance} point's: {outcomes}"
            )

    def dealt(self, state: StateT) -> dict[str, Any]:
        """The round's deal whole, as :meth:`parse_deal` reads it (tiles as ``"a-b"``, every
        hand, the boneyard in draw order, the leader and what else the table needs), so that a
        reset with it deals this round again: what a game record keeps. Read it at the round's
        first decision, before a move changes the hands."""
        raise NotImplementedError

    def undrawn(self, state: StateT) -> tuple[list[int], list[int]]:
        """The hands (bitmasks) and the boneyard (tile ids, first drawn first) with the round's
        forced draws so far put back: as dealt, at the round's first decision (3D dominoes'
        first player may draw before it)."""
        hands = list(state.hands)
        drawn = []
        for event in state.events:
            if event[0] == DRAW:
                hands[event[1]] &= ~(1 << event[2])
                drawn.append(event[2])
        return hands, drawn + state.stock[::-1]

    def apply(self, state: StateT, action: int) -> None:
        """Apply a legal action of ``state.current`` and run forced moves to the next decision."""
        raise NotImplementedError

    def round_keys(self, state: StateT) -> list[Any]:
        """Per side, a key where larger is better, for the outcome of one round."""
        raise NotImplementedError

    def read_hands(
        self, hands_in: Any, read: Callable[[Any, str], tuple[int, ...]]
    ) -> list[tuple[int, ...] | None]:
        """A deal's ``hands``: one list of ``hand_size`` tiles per seat (read by ``read``), or
        None for a hand dealt at random; None for all hands at random."""
        n = self.num_players
        hands: list[tuple[int, ...] | None] = [None] * n
        if hands_in is None:
            return hands
        if isinstance(hands_in, (str, bytes)) or not isinstance(hands_in, Sequence) or len(hands_in) != n:
            raise ValueError(f"deal['hands'] must list {n} hands (None for a random one), got {hands_in!r}")
        for seat, hand in enumerate(hands_in):
            if hand is None:
                continue
            ids = read(hand, f"hand {seat}")
            if len(ids) != self.hand_size:
                raise ValueError(
                    f"hand {seat} has {len(ids)} tiles; {self.name} deals {self.hand_size} per player"
                )
            hands[seat] = ids
        return hands

    # --- explaining a refused action -------------------------------------------------------

    def illegal_reason(self, state: StateT, action: int, who: str = "the player") -> str:
        """Why ``action`` (an id in range) is not legal for the seat to move now, in words for
        the environment's error (``who`` names that seat): which tile, where, and what the
        rules require. Each kind of table explains its own moves (the chain and grid rules
        override this); this fallback says what the seat may do instead. Reads, never changes."""
        return f"{self.name} does not offer it now; {who} may {self.legal_summary(state)}"

    def legal_summary(self, state: StateT) -> str:
        """The legal moves of the seat to move in a few words: ``lay 3-4``, ``lay one of 0-1,
        2-3 or stop``, ``draw or stop``."""
        kinds: dict[str, list[int]] = {}
        for a in state.legal:
            tiles = kinds.setdefault(self.action_kind[a], [])
            if self.action_tile[a] >= 0 and self.action_tile[a] not in tiles:
                tiles.append(self.action_tile[a])
        parts = []
        for kind, tiles in kinds.items():
            verb = "lay" if kind == PLAY else kind.replace("_", " ")
            if not tiles:
                parts.append(verb)
            elif len(tiles) == 1:
                parts.append(f"{verb} {self.tile_names_listed(tiles)}")
            else:
                parts.append(f"{verb} one of {self.tile_names_listed(tiles)}")
        return " or ".join(parts) or "do nothing: the game is over"

    def tile_names_listed(self, tiles: Sequence[int]) -> str:
        """Tile ids as ``"0-1, 2-3, 4-4"`` in id order, cut after ``LISTED_TILES`` with ``...``."""
        names = [format_tile(self.tile_set.tiles[t]) for t in sorted(tiles)]
        return ", ".join(names[:LISTED_TILES]) + (", ..." if len(names) > LISTED_TILES else "")

    # --- scores and ranking -----------------------------------------------------------------

    def add_score(self, state: StateT, side: int, points: int, reason: str) -> None:
        if points:
            state.scores[side] += points
            state.events.append((SCORE, side, points, reason))

    def match_keys(self, state: StateT) -> list[Any]:
        """Per side, a key where larger is better, for the match outcome."""
        return [-s if self.lower_score_wins else s for s in state.scores]

    def outcome(self, keys: list[Any]) -> list[float]:
        """Outcome reward per side: rank k of n gets 1 - 2(k-1)/(n-1); ties share the mean rank."""
        n = len(keys)
        rewards = []
        for key in keys:
            better = tied = 0  # plain loops: generator sums cost twice as much
            for other in keys:
                if other > key:
                    better += 1
                elif other == key:
                    tied += 1
            rank = better + (tied + 1) / 2
            rewards.append(1.0 - 2.0 * (rank - 1) / (n - 1))
        return rewards

    # --- baseline and observation hooks -----------------------------------------------------

    def greedy_key(self, state: StateT, action: int) -> tuple[int, ...]:
        """How a greedy player rates a legal action: points it scores now, then tile pips."""
        tile = self.action_tile[action]
        return (self.immediate_points(state, action), self.tile_set.pips[tile] if tile >= 0 else -1)

    def immediate_points(self, state: StateT, action: int) -> int:
        """Hook: points the action scores at once (All Fives' count); 0 by default."""
        return 0

    def action_traits(self) -> np.ndarray:
        """(num_actions, 3) facts about each action id for a policy to share what it learns
        across ids: the laid tile's pips (/ the heaviest), double, face down (never, unless a
        game overrides this); zero for actions that lay no tile."""
        traits = np.zeros((self.num_actions, 3), dtype=np.float32)
        ts = self.tile_set
        tiles = np.asarray(self.action_tile)
        lays = tiles >= 0
        traits[lays, 0] = np.asarray(ts.pips, dtype=np.float32)[tiles[lays]] / max(ts.pips)
        traits[lays, 1] = np.asarray(ts.is_double, dtype=np.float32)[tiles[lays]]
        return traits

    def known_hands(self, state: StateT) -> list[int]:
        """Hook: per seat, the tiles of its own hand it can name (all of them; Blind hides some)."""
        hands: list[int] = state.hands
        return hands

    def known_hand(self, state: StateT, seat: int) -> int:
        """The tiles of its own hand ``seat`` can name."""
        return self.known_hands(state)[seat]

    def describe_event(self, event: tuple[Any, ...], names: list[str]) -> str | None:
        """Hook: one of the variant's own events (``domino_env.core.events``: the kinds every
        table shares are the renderer's) as a line of the game log, ``names`` naming the seats;
        None for an event it does not show (any kind it does not declare, by default)."""
        return None

    # --- what a seat knows (the seat view, ``domino_env.rules.view``) ---------------------------

    @property
    def tiles_in_play(self) -> int:
        """The bitmask of every tile id a game deals (the whole set by default)."""
        return (1 << self.tile_set.size) - 1

    def table_mask(self, state: StateT) -> int:
        """Hook: the tiles on the table (a bitmask of tile ids)."""
        raise NotImplementedError

    def layout(self, state: StateT) -> Any:
        """Hook: the table's engine object (the line of play, the grid), all of it public."""
        raise NotImplementedError

    def public_hands(self, state: StateT) -> list[int]:
        """Hook: per seat, the tiles of its hand that everybody can name (none by default)."""
        return [0] * self.num_players

    def private_view(self, state: StateT, seat: int) -> dict[str, Any]:
        """Hook: what only ``seat`` knows beyond the tiles it can name (nothing by default)."""
        return {}

    # --- hidden information: sampled worlds ------------------------------------------------

    def sample_world(self, game: StateT, view: SeatView, rng: random.Random) -> StateT:
        """A game state consistent with ``view`` (what ``view.seat`` knows), the hidden tiles
        dealt by ``rng``: a clone of ``game`` whose every part that could hold hidden
        information is overwritten from the view and ``rng`` alone (the search agents' worlds,
        OpenSpiel's ``resample_from_infostate``; :mod:`domino_env.agents.search` lists the
        parts). Each seat keeps the tiles the view names in it and the rest of its hand is
        dealt from the unseen tiles shuffled (none in :meth:`sample_bans`, where that can be
        met); the stock is what is left, shuffled (its order decides the world's draws); the
        events are the world's own;
        :meth:`place_hidden` rebuilds what else of the table hides tiles."""
        n = view.num_players
        pool = sorted(view.unseen)  # canonical order first: then only rng decides
        rng.shuffle(pool)
        known = [mask_of(tiles) for tiles in view.known_hands]
        need = [view.hand_sizes[p] - len(view.known_hands[p]) for p in range(n)]
        dealt = _deal(pool, need, self.sample_bans(view))  # per seat, in dealt order
        world = game.clone()
        world.hands = [known[p] | mask_of(dealt[p]) for p in range(n)]
        world.stock = pool  # what is left, in the shuffled order: it decides the world's draws
        world.shuffled = True
        rng.getrandbits(64)  # (once the world's RNG's seed: still drawn, so stored games replay)
        world.events = list(view.events)
        world.last_round_events = list(view.last_round_events)
        self.place_hidden(world, view, dealt, rng)
        # (for a seat not to move the mover's legal actions depend on its hidden tiles: none are
        # listed, and such a world is a snapshot to inspect rather than to play on)
        world.legal = list(view.legal_actions) if view.to_move else []
        return world

    def sample_bans(self, view: SeatView) -> list[int]:
        """Hook: per seat, the tiles a sampled world should not deal it (none by default)."""
        return [0] * view.num_players

    def place_hidden(self, world: StateT, view: SeatView, dealt: list[list[int]], rng: random.Random) -> None:
        """Hook: rebuild from ``view`` whatever else of a sampled ``world`` could hold hidden
        information, ``dealt`` being each seat's tiles it cannot name in dealt order (nothing
        by default)."""


def uniform(outcomes: Iterable[int]) -> list[tuple[int, float]]:
    """Chance outcomes, equally likely."""
    outcomes = list(outcomes)
    return [(o, 1.0 / len(outcomes)) for o in outcomes]


def hand_outcomes(pool: Iterable[int], hand: int, size: int, ordered: bool) -> list[tuple[int, float]]:
    """The next tile dealt into ``hand`` (a bitmask of the tiles it got by chance so far, of
    ``size``) from ``pool`` and its chance. A hand that is a set gets its tiles in id order, the
    lowest of a uniform choice of the tiles it still needs (far fewer deal orders than tile by
    tile, the same hands with the same chances); where the order is part of the game
    (``ordered``: Blind's rows) every tile of the pool is equally likely."""
    if ordered:
        return uniform(sorted(pool))
    undealt = sorted(t for t in pool if t >= hand.bit_length())
    need, left = size - hand.bit_count(), len(undealt)
    ways = math.comb(left, need)
    lowest = undealt[: left - need + 1]  # (a higher tile leaves too few for the rest of the hand)
    return [(t, math.comb(left - i - 1, need - 1) / ways) for i, t in enumerate(lowest)]


def _deal(pool: list[int], need: list[int], banned: list[int]) -> list[list[int]]:
    """Take ``need[p]`` tiles for each seat from the front of ``pool`` (removed from it), none in
    ``banned[p]``: the most constrained seats first; a seat short of allowed tiles swaps them
    in from seats dealt before it (giving each a pool tile it allows), and takes any tile only
    when that fails too."""
    dealt: list[list[int]] = [[] for _ in need]
    done: list[int] = []
    for p in sorted(range(len(need)), key=lambda p: (-banned[p].bit_count(), p)):
        want, ban = need[p], banned[p]
        if not want:
            continue
        take = [t for t in pool if not ban >> t & 1][:want] if ban else pool[:want]
        taken = set(take)
        rest = [t for t in pool if t not in taken]
        for q in done:
            if len(take) == want:
                break
            hand = dealt[q]
            for i, t in enumerate(hand):
                if len(take) == want:
                    break
                if ban >> t & 1:
                    continue
                j = next((j for j, u in enumerate(rest) if not banned[q] >> u & 1), -1)
                if j < 0:
                    break
                hand[i] = rest.pop(j)
                take.append(t)
        if len(take) < want:  # the constraint cannot be met: any tiles
            short = want - len(take)
            take += rest[:short]
            del rest[:short]
        pool[:] = rest
        dealt[p] = take
        done.append(p)
    return dealt
