"""The rules of a grid table (3D dominoes): tiles laid on a square grid and on top of each other.

:class:`GridRules` is to the grid what :class:`~domino_env.rules.chain.ChainRules` is to the
line of play. 3D dominoes is its one variant; the rules and every decision are documented in
:mod:`domino_env.variants.domino3d`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

import numpy as np

from domino_env.core.events import DEAL, DRAW, LAY, PASS, ROUND_END
from domino_env.core.grid import RIGHT, Geometry, Grid, geometry
from domino_env.core.state import RoundResult, TableState
from domino_env.core.tiles import format_tile, iter_bits, parse_tile
from domino_env.core.view import SeatView
from domino_env.rules.table import (
    DEAL_TILE,
    DRAW_TILE,
    LEADER,
    PLAY,
    SIDE,
    START,
    TableOptions,
    TableRules,
    hand_outcomes,
)

BOARD_SIZES = range(4, 65)
MAX_SETS = 8


@dataclass(frozen=True)
class GridDeal:
    """A validated fixed deal: physical tile ids (see :class:`GridRules`)."""

    hands: tuple[tuple[int, ...] | None, ...]
    boneyard: tuple[int, ...] | None
    start: int | None
    start_values: tuple[int, int] | None  # (left, right) as written
    leader: int


@dataclass(kw_only=True)
class GridState(TableState):
    """One game of 3D dominoes: the grid, hands (bitmasks of physical tile ids), bazaar (the
    stock); events as in the chain games, but a lay is a :class:`~domino_env.core.events.GridLay`.
    ``round_index`` stays 0: the game is the match."""

    grid: Grid
    on_table: int = 0  # physical tiles on the grid
    round_serial: int = 1  # encoders rebuild their rows when it changes
    fixed_deal: GridDeal | None = None  # the deal's fixed parts (reset option ``deal``)
    start: list[int] = field(default_factory=list)  # dealt at chance points: start tile, side, leader

    _lists = (*TableState._lists, "start")

    def clone(self) -> GridState:
        other = super().clone()
        other.grid = self.grid.clone()
        return other


@cache
def _action_table(cells: int, pair_kind: tuple[int, ...]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """(kind, tile) of every action, shared by all rules of one board size."""
    span = 2 * cells
    return (PLAY,) * (len(pair_kind) * span), tuple(k for k in pair_kind for _ in range(span))


@dataclass(frozen=True)
class GridOptions(TableOptions):
    """The grid's options: the board, stacking, the sets in play, open hands, the hand size."""

    board_size: int = 16
    stacking: bool = True
    no_doubles: bool = False
    sets: int = 1
    open_hands: bool = False
    hand_size: int = 4

    def check(self, name: str) -> None:
        for option in ("stacking", "no_doubles", "open_hands"):
            if not isinstance(getattr(self, option), bool):
                raise ValueError(f"{name}: {option} must be True or False, got {getattr(self, option)!r}")
        _int_option("board_size", self.board_size, BOARD_SIZES)
        _int_option("sets", self.sets, range(1, MAX_SETS + 1))


class GridRules(TableRules[GridState]):
    """The rules of 3D dominoes on a :class:`~domino_env.core.grid.Grid` (the one grid game;
    :mod:`domino_env.variants.domino3d` documents them and registers the variant).

    Tiles are identified by *physical* ids ``copy * 28 + kind`` (``kind`` the double-six id
    of docs/rules/index.md), so hands stay bitmasks with several sets; without extra sets the ids are the
    usual tile ids.
    """

    teams_allowed = False
    lower_score_wins = False
    match_target = 10  # no target: the scale of points rewards and of the scores block
    options_type: ClassVar[type[GridOptions]] = GridOptions
    options: GridOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        num_players, no_doubles = self.num_players, o.no_doubles
        self.board_size, self.sets = int(o.board_size), int(o.sets)
        self.stacking, self.open_hands = o.stacking, o.open_hands
        self.no_doubles = no_doubles
        ts = self.tile_set
        kinds = self.kind_size = ts.size
        self.num_values = values = ts.num_values
        self.kinds_in_play = [k for k in range(kinds) if not (no_doubles and ts.is_double[k])]
        self.tile_ids = [copy * kinds + k for copy in range(self.sets) for k in self.kinds_in_play]
        self.num_tiles = len(self.tile_ids)
        most = (self.num_tiles - 1) // num_players
        self.hand_size = _int_option("hand_size", o.hand_size, range(1, most + 1))
        self.kind_of = [t % kinds for t in range(self.sets * kinds)]
        self.copies = [0] * kinds  # kind -> the physical ids of its copies
        for t in self.tile_ids:
            self.copies[self.kind_of[t]] |= 1 << t
        # pair_bits[t]: the value pairs (bit x * V + y) tile t can show, both ways round
        self.pair_bits = [0] * (self.sets * kinds)
        for t in self.tile_ids:
            a, b = ts.tiles[self.kind_of[t]]
            self.pair_bits[t] = 1 << (a * values + b) | 1 << (b * values + a)
        self.pair_kind = [ts.ids[(min(x, y), max(x, y))] for x in range(values) for y in range(values)]
        self.geometry: Geometry = geometry(self.board_size, values)
        self.cells = self.geometry.cells
        self.num_edges = self.geometry.num_edges
        self.num_actions = values * values * self.num_edges
        self.action_kind, self.action_tile = _action_table(self.cells, tuple(self.pair_kind))
        n = self.board_size
        self.start_edge = RIGHT * self.cells + (n // 2) * n + n // 2 - 1

    @property
    def observation_high(self) -> float:
        return float(max(self.num_tiles, self.tile_set.size))

    # --- actions ------------------------------------------------------------------------------

    def action(self, x: int, y: int, row: int, col: int, direction: int) -> int:
        """The action laying ``x`` on (row, col) and ``y`` right of it (direction 0) or below (1)."""
        edge = direction * self.cells + row * self.board_size + col
        return (x * self.num_values + y) * self.num_edges + edge

    def decode(self, action: int) -> tuple[int, int, int]:
        """(x, y, edge) of an action id."""
        pair, edge = divmod(action, self.num_edges)
        x, y = divmod(pair, self.num_values)
        return x, y, edge

    def describe(self, state: GridState | None, action: int) -> dict[str, Any]:
        """Tile, cells, values, the level it would lie on and what it would score now (None
        where the rules forbid it whoever holds the tile)."""
        x, y, edge = self.decode(action)
        grid = state.grid if state is not None else None
        return {
            "action": action,
            "kind": PLAY,
            "tile": self.tile_set.tiles[self.action_tile[action]],
            "cells": self.geometry.edge_coordinates(edge),
            "values": (x, y),
            "level": None if grid is None else grid.level_of(edge),
            "scores": None if grid is None else grid.points(edge, x, y),
        }

    # --- deals --------------------------------------------------------------------------------

    def parse_deal(self, deal: Mapping[str, Any]) -> GridDeal:
        """Validate ``{"hands", "boneyard", "start", "leader"}`` (each optional)."""
        keys = ("hands", "boneyard", "start", "leader")
        if not isinstance(deal, Mapping):
            raise ValueError(f"a deal must be a dict with keys {', '.join(keys)}, got {deal!r}")
        unknown = set(deal) - set(keys)
        if unknown:
            raise ValueError(f"unknown deal key(s) {sorted(unknown)}; allowed: {', '.join(keys)}")
        n, kinds = self.num_players, self.kind_size
        taken = [0] * kinds  # copies of each kind named so far
        first_seen: dict[int, str] = {}

        def take(tile: Any, where: str) -> int:
            k = self.kind_id(tile)
            name = format_tile(self.tile_set.tiles[k])
            if taken[k] == self.sets:
                times = "twice" if self.sets == 1 else f"more than {self.sets} times (sets={self.sets})"
                raise ValueError(f"tile {name} appears {times} in the deal ({first_seen[k]} and {where})")
            first_seen.setdefault(k, where)
            taken[k] += 1
            return (taken[k] - 1) * kinds + k

        def read(tiles: Any, where: str) -> tuple[int, ...]:
            if isinstance(tiles, (str, bytes)) or not isinstance(tiles, Sequence):
                raise ValueError(f"{where} must be a list of tiles, got {tiles!r}")
            return tuple(take(tile, where) for tile in tiles)

        hands = self.read_hands(deal.get("hands"), read)
        boneyard = None if deal.get("boneyard") is None else read(deal["boneyard"], "the boneyard")
        start = start_values = None
        if deal.get("start") is not None:
            start_values = parse_tile(deal["start"])
            start = take(deal["start"], "the start tile")
        room = self.num_tiles - n * self.hand_size - (start is not None)
        if boneyard is not None and len(boneyard) > room:
            raise ValueError(
                f"the boneyard lists {len(boneyard)} tiles but only {room} are left after the hands"
                + (" and the start tile" if start is not None else "")
            )
        leader = deal.get("leader", 0)
        if leader is None:
            leader = 0
        if isinstance(leader, bool) or not isinstance(leader, (int, np.integer)) or not 0 <= leader < n:
            raise ValueError(f"deal['leader'] must be a seat 0..{n - 1}, got {leader!r}")
        return GridDeal(tuple(hands), boneyard, start, start_values, int(leader))

    def dealt(self, state: GridState) -> dict[str, Any]:
        """The game's deal whole (see :meth:`TableRules.dealt`): hands sorted, the bazaar in
        draw order, the start tile as it lies (left value first) and who moved first."""
        hands, boneyard = self.undrawn(state)
        _, left, right, _, _ = state.grid.placed[0]  # the start tile: the first on the board
        tiles, kind_of = self.tile_set.tiles, self.kind_of
        return {
            "hands": [[format_tile(tile) for tile in self.kinds_in(hand)] for hand in hands],
            "boneyard": [format_tile(tiles[kind_of[t]]) for t in boneyard],
            "start": f"{left}-{right}",
            "leader": state.leader,
        }

    def kind_id(self, tile: Any) -> int:
        """The kind id of a tile written ``(a, b)``, ``[a, b]`` or ``"a-b"``, if it is in play."""
        k = self.tile_set.id_of(tile)
        if k not in self.kinds_in_play:
            name = format_tile(self.tile_set.tiles[k])
            raise ValueError(f"tile {name} is not in play: no_doubles=True removes the doubles")
        return k

    # --- the game -----------------------------------------------------------------------------

    def new_match(self, deals: Sequence[GridDeal] = (), rng: np.random.Generator | None = None) -> GridState:
        spec = deals[0] if deals else None
        state = GridState(
            num_players=self.num_players,
            grid=Grid(self.geometry, self.stacking),
            scores=[0] * self.num_players,
            events=[(DEAL, 0)],
            fixed_deal=spec,
        )
        if rng is not None:
            self.deal_from(state, rng)
            return state
        hands, pool = [0] * self.num_players, set(self.tile_ids)
        if spec is not None:
            hands = [sum(1 << t for t in hand or ()) for hand in spec.hands]
            pool -= {t for hand in spec.hands for t in hand or ()} | set(spec.boneyard or ())
            if spec.start is not None:
                pool.discard(spec.start)
        state.hands = hands
        state.stock = sorted(pool)[::-1]
        self._deal_on(state)
        return state

    def deal_from(self, state: GridState, rng: np.random.Generator) -> None:
        start, values = self._deal(state, state.fixed_deal, rng)
        state.shuffled = True
        self._begin(state, start, values)

    def _begin(self, state: GridState, start: int, values: tuple[int, int]) -> None:
        """The deal is done: the start tile on the board, then the first player's turn."""
        state.chance = None
        action = (values[0] * self.num_values + values[1]) * self.num_edges + self.start_edge
        level, points = state.grid.lay(self.start_edge, values[0], values[1], start)
        state.on_table = 1 << start
        state.events.append((LAY, -1, start, action, level, points))
        state.current = state.leader
        self.advance(state)

    def _deal_on(self, state: GridState) -> None:
        """The deal at chance points: the next one (a hand's tile, the start tile, the side it
        lies unless a double, who moves first), a fixed deal's parts taken as given; then the start."""
        spec, start = state.fixed_deal, state.start
        if any(hand.bit_count() < self.hand_size for hand in state.hands):
            state.chance = DEAL_TILE
            return
        if not start:
            if spec is None or spec.start is None:
                state.chance = START
                return
            start.append(spec.start)
        if len(start) == 1:
            a, b = self.tile_set.tiles[self.kind_of[start[0]]]
            if spec is not None and spec.start_values is not None:
                start.append(int(spec.start_values != (a, b)))
            elif a != b:
                state.chance = SIDE
                return
            else:
                start.append(0)
        if len(start) == 2:
            if spec is None:
                state.chance = LEADER
                return
            start.append(spec.leader)
            state.stock += list(spec.boneyard or ())[::-1]
        tile, side, state.leader = start
        state.start = []  # (only a deal under way holds it)
        a, b = self.tile_set.tiles[self.kind_of[tile]]
        self._begin(state, tile, (b, a) if side else (a, b))

    def num_deals(self) -> int:
        """The hands from the table's tiles, then the start tile, its side and the first player."""
        deals, left = self._hand_deals(self.num_tiles)
        return deals * left * 2 * self.num_players

    def chance_outcomes(self, state: GridState) -> list[tuple[int, float]]:
        if state.chance == DEAL_TILE:
            hand = next(h for h in state.hands if h.bit_count() < self.hand_size)
            return hand_outcomes(state.stock, hand, self.hand_size, False)
        return super().chance_outcomes(state)

    def apply_chance(self, state: GridState, outcome: int) -> None:
        self.check_chance(state, outcome)
        kind = state.chance
        state.chance = None
        if kind == DEAL_TILE:
            state.stock.remove(outcome)
            seat = next(s for s, h in enumerate(state.hands) if h.bit_count() < self.hand_size)
            state.hands[seat] |= 1 << outcome
        elif kind == START:
            state.stock.remove(outcome)
            state.start.append(outcome)
        elif kind in (SIDE, LEADER):
            state.start.append(outcome)
        else:
            seat = state.current
            refilling = state.hands[seat].bit_count() < self.hand_size  # (a forced draw: a full hand)
            state.stock.remove(outcome)
            state.hands[seat] |= 1 << outcome
            state.events.append((DRAW, seat, outcome))
            if refilling:
                self._refill(state, seat)
            else:
                self.advance(state)
            return
        self._deal_on(state)

    def _deal(
        self, state: GridState, spec: GridDeal | None, rng: np.random.Generator
    ) -> tuple[int, tuple[int, int]]:
        """The environment's deal of hands and the bazaar (:meth:`deal_from`); returns the start
        tile and the values it shows (left, right)."""
        order = self.tile_ids[:]
        rng.shuffle(order)
        n, size = self.num_players, self.hand_size
        if spec is None:
            hands = [sum(1 << t for t in order[s * size : (s + 1) * size]) for s in range(n)]
            start, rest = order[n * size], order[n * size + 1 :]
        else:
            fixed = {t for hand in spec.hands if hand for t in hand} | set(spec.boneyard or ())
            if spec.start is not None:
                fixed.add(spec.start)
            rest = [t for t in order if t not in fixed]
            hands = []
            for hand in spec.hands:
                if hand is None:
                    hand, rest = tuple(rest[:size]), rest[size:]
                hands.append(sum(1 << t for t in hand))
            rest = list(spec.boneyard or ()) + rest
            start = spec.start if spec.start is not None else rest.pop(0)
        state.hands = hands
        state.stock = rest[::-1]
        if spec is not None and spec.start_values is not None:
            values = spec.start_values
        else:
            a, b = self.tile_set.tiles[self.kind_of[start]]
            values = (b, a) if rng.random() < 0.5 else (a, b)
        state.leader = spec.leader if spec is not None else int(rng.integers(self.num_players))
        return start, values

    def hand_pairs(self, hand: int) -> int:
        """The value pairs (bit x * V + y) a hand can lay."""
        pairs, pair_bits = 0, self.pair_bits
        while hand:
            low = hand & -hand
            pairs |= pair_bits[low.bit_length() - 1]
            hand ^= low
        return pairs

    def advance(self, state: GridState) -> None:
        """Forced draws and passes until a player can lay a tile or the game ends."""
        grid, stock, events = state.grid, state.stock, state.events
        while True:
            seat = state.current
            pairs = self.hand_pairs(state.hands[seat])
            legal = grid.placements(pairs) if pairs else []
            while not legal and stock:  # only the new tile can fit: the table has not changed
                if not state.shuffled:  # the tile drawn is a chance point
                    state.chance = DRAW_TILE
                    state.legal = []
                    return
                tile = stock.pop()
                state.hands[seat] |= 1 << tile
                events.append((DRAW, seat, tile))
                legal = grid.placements(self.pair_bits[tile])
            if legal:
                state.legal = legal
                return
            events.append((PASS, seat))
            state.passes += 1
            if state.passes >= self.num_players:
                self._end(state)
                return
            state.current = self._following[seat]

    def apply(self, state: GridState, action: int) -> None:
        """Lay a legal tile, score it, refill the hand, and run forced moves to the next decision."""
        pair, edge = divmod(action, self.num_edges)
        seat = state.current
        hand = state.hands[seat]
        mine = hand & self.copies[self.pair_kind[pair]]
        bit = mine & -mine
        tile = bit.bit_length() - 1
        hand ^= bit
        x, y = divmod(pair, self.num_values)
        level, points = state.grid.lay(edge, x, y, tile)
        state.on_table |= bit
        events = state.events
        events.append((LAY, seat, tile, action, level, points))
        if points:
            self.add_score(state, seat, points, "on top" if level > 1 else "both halves touch")
        state.hands[seat] = hand
        self._refill(state, seat)

    def _refill(self, state: GridState, seat: int) -> None:
        """``seat`` draws up to a full hand after its lay (each tile a chance point unless the
        stock is shuffled); then the next player's turn."""
        stock, hand, events = state.stock, state.hands[seat], state.events
        while stock and hand.bit_count() < self.hand_size:
            if not state.shuffled:
                state.hands[seat] = hand
                state.chance = DRAW_TILE
                state.legal = []
                return
            drawn = stock.pop()
            hand |= 1 << drawn
            events.append((DRAW, seat, drawn))
        state.hands[seat] = hand
        state.passes = 0
        state.current = self._following[seat]
        self.advance(state)

    def _end(self, state: GridState) -> None:
        scores = state.scores
        best = max(scores)
        winners = [seat for seat, score in enumerate(scores) if score == best]
        winner = winners[0] if len(winners) == 1 else None
        pips = self.tile_set.pips
        state.result = RoundResult(
            winner=winner,
            blocked=True,
            hand_pips=[sum(pips[self.kind_of[t]] for t in iter_bits(hand)) for hand in state.hands],
            score_change=scores[:],
            next_leader=state.leader,
        )
        state.round_over = state.match_over = True
        state.legal = []
        state.events.append((ROUND_END, -1 if winner is None else winner, True))

    # --- explaining a refused action ------------------------------------------------------------

    def illegal_reason(self, state: GridState, action: int, who: str = "the player") -> str:
        """Why a placement is not legal now (see :meth:`TableRules.illegal_reason`): a tile the
        seat does not hold, a cell off the board, cells of unequal height, halves that do not
        match the values below, or (on the table) touch nothing or touch another value."""
        x, y, edge = self.decode(action)
        kind = self.action_tile[action]
        name = format_tile(self.tile_set.tiles[kind])
        if not state.hands[state.current] & self.copies[kind]:
            gone = " (no_doubles=True removes the doubles)" if kind not in self.kinds_in_play else ""
            return f"{who} holds no {name}{gone}"
        grid, size = state.grid, self.board_size
        (r1, c1), (r2, c2) = self.geometry.edge_coordinates(edge)
        first, second = f"({r1},{c1})", f"({r2},{c2})"
        a, b = self.geometry.edge_cells[edge]
        if a < 0:
            return f"{second} is off the {size}x{size} board"
        ha, hb = grid.height[a], grid.height[b]
        if ha != hb:
            return (
                f"a tile lies on two cells of equal height, and {first} is at height {ha}, "
                f"{second} at height {hb}"
            )
        if ha:
            if not self.stacking:
                return f"{first} and {second} are taken, and stacking=False lays no tile on top"
            return (
                f"a tile on top must show the values below it, and {first} shows {grid.value[a]}, "
                f"{second} shows {grid.value[b]} (it would lay {x} and {y})"
            )
        touch_a, touch_b = grid.adj[a], grid.adj[b]
        if not touch_a and not touch_b:
            return (
                f"neither {first} nor {second} touches a tile: a tile laid on the table must touch "
                "a half of its own value"
            )
        for cell, value, touch in ((first, x, touch_a), (second, y, touch_b)):
            if touch and not touch >> value & 1:
                shown = ", ".join(str(v) for v in range(self.num_values) if touch >> v & 1)
                return f"the {value} on {cell} would touch {shown}: a half may touch only its own value"
        return f"{self.name} does not offer it now; {who} may {self.legal_summary(state)}"

    # --- ranking and hooks --------------------------------------------------------------------

    def round_keys(self, state: GridState) -> list[Any]:
        return self.match_keys(state)

    def immediate_points(self, state: GridState, action: int) -> int:
        x, y, edge = self.decode(action)
        return state.grid.points(edge, x, y) or 0

    @property
    def tiles_in_play(self) -> int:
        """The physical ids of every tile in play (``sets`` copies, doubles unless removed)."""
        return sum(1 << t for t in self.tile_ids)

    def table_mask(self, state: GridState) -> int:
        return state.on_table

    def layout(self, state: GridState) -> Grid:
        return state.grid

    def public_hands(self, state: GridState) -> list[int]:
        """With ``open_hands`` every hand is shown to everybody."""
        return list(state.hands) if self.open_hands else [0] * self.num_players

    def place_hidden(
        self, world: GridState, view: SeatView, dealt: list[list[int]], rng: random.Random
    ) -> None:
        """A deal fixed by the reset option ``deal`` names every hand: a sampled world drops it
        (its deal is over; what it named of the hidden tiles is the world's own now)."""
        world.fixed_deal = None

    def kinds_in(self, hand: int) -> list[tuple[int, int]]:
        """The tiles of a hand (physical ids) as value pairs, sorted: with ``sets > 1`` copies
        of a tile are alike, so which copy a hand holds changes nothing shown."""
        return sorted(self.tile_set.tiles[self.kind_of[t]] for t in iter_bits(hand))


def _int_option(name: str, value: Any, allowed: range) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in allowed:
        raise ValueError(
            f"domino3d: {name} must be an int in {allowed.start}..{allowed.stop - 1}, got {value!r}"
        )
    return int(value)
