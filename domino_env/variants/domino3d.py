"""3D dominoes (docs/rules/domino3d.md): tiles on a square grid, and on top of each other.

There is no line of play. Tiles lie on an ``board_size`` x ``board_size`` grid (default 16),
each covering two edge-adjacent cells. Double-six (``sets=k``: k shuffled sets;
``no_doubles=True`` removes the doubles), 2-4 players, hands of ``hand_size`` (4); the rest
is the bazaar. A random tile from the bazaar starts the game, lying flat in the middle, and
a random seat moves first.

* **Touch.** A half at level 1 touches the halves at level 1 in the four edge-neighbouring
  cells (a cell of height 1 or more has one, covered or not); the other half of the same
  tile does not count.
* **On the table (level 1)**, on two empty cells: legal when one half touches a half of the
  same value and the other half touches nothing or touches a half of its own value. It
  scores 1 point when both halves touch a half of their own value.
* **On top** (``stacking=True``, the default; ``False`` is "2D dominoes"): on two occupied
  cells of equal height whose top halves show the values laid over them; 1 point. Any
  number of floors.
* **A turn.** A player who can lay must lay one tile; one who cannot draws until a tile
  fits (then lays it) or the bazaar is empty (then passes). After laying, a hand smaller
  than ``hand_size`` is refilled from the bazaar.
* **End.** The bazaar is empty and nobody can move (empty hands included). The most points
  wins; equal points share. ``open_hands=True`` shows every hand to everybody. The game is
  the whole match (``episode="match"`` and ``"round"`` are the same).

Decisions (also in docs/rules/domino3d.md):

* **Actions** are every placement of a tile on the board, oriented: action
  ``(x * 7 + y) * 2C + d * C + cell`` lays a tile showing ``x`` on ``cell`` (``r * N + c``)
  and ``y`` on its neighbour to the right (``d = 0``) or below (``d = 1``); ``N`` is the
  board size and ``C = N * N``. The 49 ordered value pairs give each tile both
  orientations as distinct ids (a double has one). So the mask reshapes to
  ``(7, 7, 2, N, N)``: 25,088 actions at board 16, 100,352 at 32. Placements that would
  leave the board have ids but are never legal. With ``sets > 1`` an action names the
  values, not which copy: the lowest-numbered copy in hand is laid.
* **Touch at higher levels** does not arise: a tile on top needs no touch (the rules ask
  only for matching halves), and every floor of a cell shows the same value, so the value
  map is one per cell. A double laid on top is like any tile: 1 point, on two cells that
  both show its value. A tile on top may bridge two tiles below (the rules ask only for
  two occupied cells of equal height).
* **Opening.** The start tile is laid with its first value on cell
  ``(N // 2, N // 2 - 1)`` and its second on ``(N // 2, N // 2)``. At random it is the
  bazaar's top tile, flipped at random; a fixed deal's ``start: (a, b)`` lays ``a`` on the
  left cell; without ``start``, the deal's first ``boneyard`` tile is the start (flipped at
  random), else a random remaining tile.
* **Fixed deals** (``options={"deal": {...}}``): ``hands`` (``None`` for a random hand),
  ``boneyard`` (draw order, first drawn first; unmentioned tiles follow at random),
  ``start``, ``leader`` (who moves first, default seat 0). With ``sets > 1`` a tile may be
  named up to ``sets`` times.
* **Hands beyond ``hand_size``:** tiles drawn while looking for a fit stay in hand; the
  hand refills only when it is below ``hand_size``, so it may stay larger for a while.
* **Ties** share the win: the outcome reward ranks seats by points, tied seats sharing the
  mean of their ranks (two players tied: 0 each).
* **Points rewards** (``reward="points"``) are points / 10, and the observation's scores
  block is points / 10 too (there is no target score: ``match_target`` is only this scale).
* **Greedy baseline:** a placement that scores, then the heaviest tile (ties at random).
* **Board size** (a deviation from the game: the table is bounded). 16 by default; the edge
  removes a placement the player to move could otherwise make at 35% of decisions with
  random players (22% greedy) on a 16 board, 1.6% (0.2%) on 24 and 0.1% (0.0%) on 32
  (300 games each): use 24 or more to study the game as played on a whole table.

The observation is documented in :mod:`domino_env.observation.grid`; the board engine in
:mod:`domino_env.core.grid`.

Version history:

- ``domino3d_v0``: the first release (the rules as in docs/rules/domino3d.md).
"""

from __future__ import annotations

from domino_env.rules.grid import GridRules
from domino_env.rules.spec import VariantSpec


class Domino3DRules(GridRules):
    """3D dominoes: the grid rules with this module's documentation and defaults."""

    name = "domino3d"
    rollout_cost = 10 / 3  # hundreds of placements a move on the grid


SPECS = (
    VariantSpec(
        name="domino3d",
        title="3D dominoes",
        shipped=True,
        rules=Domino3DRules,
        table="grid",
        summary="tiles on a square grid and on top of each other; a point for each matching placement",
        option_help={
            "board_size": "cells on a side of the square table (4..64)",
            "stacking": "tiles may be laid on top (False: 2D dominoes)",
            "no_doubles": "remove the doubles from the set",
            "sets": "shuffled double-six sets in play (1..8)",
            "open_hands": "every hand is shown to everybody",
            "hand_size": "tiles in a full hand (refilled after each lay)",
        },
        benchmark_tables=({"num_players": 2}, {"num_players": 4}),
    ),
)
