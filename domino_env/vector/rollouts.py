"""Greedy rollouts of many sampled worlds at once on a batched kernel, value for value the
search agents' own.

:func:`domino_env.agents.search.rollout_value` plays one world at a time in Python: the rest
of the round after a candidate action, every seat by the rules' greedy rule, ties broken by a
``random.Random(seed)`` drawn once per world (every action of that world replays the same
stream: common random numbers). :class:`GreedyRollouts` plays every (world, action) row of a
search stage together on the variant's kernel, loaded from the worlds
(:meth:`~domino_env.vector.chain.ChainKernel.load`), and returns the same numbers:

* **the same moves**: the greedy key as an integer per action (the rules' key, recognised by
  identity: :meth:`~domino_env.rules.table.TableRules.greedy_key` with the rules'
  ``immediate_points`` read from the kernel's ``legal_points``, or
  :meth:`~domino_env.rules.chain.ChainRules.doubles_first`), ties in the scalar engine's
  order of legal actions (face up before face down, then by slot, then by tile; ``stop``
  last);
* **the same tie-breaks**: each world's stream of 32-bit words is Python's own
  (``random.Random(seed).getrandbits``), read as ``Random.choice`` reads it
  (``_randbelow``: the top ``k`` bits of a word, again while they are too large), one pointer
  per row;
* **the same value**: ``round_value``'s arithmetic on the kernel's round-end records.

``tests/agents/test_batched_rollouts.py`` checks values and decisions against the scalar
search on every table it batches. Batching pays from a couple of hundred rows (the kernel's
step costs about as much for 32 tables as for 256; at 768 rows Classic rolls out about 3x
faster, All Fives 3.9x, Osel 2.4x): :data:`MIN_ROWS`, measured with ``benchmarks/search_speed.py
--python``. The kernel skips the observations and the next round's shuffle for it
(``observing``, ``redealing``). Domino-Metro's places step is no faster than its Python
rollouts, so it is refused.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from domino_env.registry import rules_options
from domino_env.rules.chain import ChainRules
from domino_env.rules.parts import count_points
from domino_env.rules.places import PlacesRules
from domino_env.rules.table import TableRules
from domino_env.vector.chain import ChainKernel

MIN_ROWS = 192  # the fewest (world, action) rows a batch is faster for (benchmarks/search_speed.py)
_ROW_BUCKET = 64  # kernels are built for a multiple of this many rows (the rest padded), and kept
_WORDS = 64  # 32-bit words of each world's tie-break stream made at first (more if a row needs them)


class GreedyRollouts:
    """Greedy rollouts of a table's sampled worlds in batches (see the module docstring)."""

    def __init__(self, rules: TableRules[Any]) -> None:
        refusal = self.refusal(rules)
        if refusal is not None:
            raise ValueError(f"no batched rollouts for {rules.name}: {refusal}")
        assert isinstance(rules, ChainRules)
        self.rules = rules
        chosen = dataclasses.asdict(rules.options)  # (the table's options the registry takes)
        self._options = {"episode": "round", **{key: chosen[key] for key in rules_options(rules.name)}}
        self._kernels: dict[int, ChainKernel] = {}
        ts, kind = rules.tile_set, type(rules)
        tile = np.asarray(rules.action_tile, np.int64)
        lays = tile >= 0
        pips = np.where(lays, np.asarray([*ts.pips, 0], np.int64)[tile], -1)
        face_down = np.asarray(rules.action_face_down, bool)
        heaviest = int(max(ts.pips))
        # The greedy key as one integer per action, in the rules' tuple order.
        self._points_scale = 0
        if kind.greedy_key is ChainRules.doubles_first:  # (double, pips, face up); stop: lowest
            double = np.where(lays, np.asarray([*ts.is_double, False])[tile], False)
            key = 1 + double * 2 * (heaviest + 1) + pips * 2 + ~face_down
            self._key = np.where(lays, key, 0).astype(np.int64)
        else:  # (immediate points, pips); what lays no tile has pips -1
            self._key = pips + 1
            if kind.immediate_points is not TableRules.immediate_points:
                self._points_scale = heaviest + 2
        # The scalar engine's order of legal actions: face up, then slot, then tile; extras last.
        slot = np.maximum(np.asarray(rules.action_slot, np.int64), 0)
        num_tiles, num_slots = ts.size, rules.num_slots
        rank = np.where(
            lays, face_down * num_slots * num_tiles + slot * num_tiles + tile, 2 * num_slots * num_tiles
        )
        rank = rank + np.arange(len(rank)) * (~lays)  # (extras among themselves: by id)
        self._rank = np.argsort(np.argsort(rank, kind="stable"))  # (each action's place in that order)
        self._max_steps = 4 * ts.size * rules.num_players + 8  # (a round ends long before)
        self._bits = np.array([0] + [n.bit_length() for n in range(1, rules.num_actions + 1)], np.int64)

    @staticmethod
    def refusal(rules: TableRules[Any]) -> str | None:
        """None if the rules' rollouts can be batched, else why not."""
        if getattr(rules, "batched_kernel", None) != "chain":
            return "its rules have no chain kernel"
        kind = type(rules)
        if kind.greedy_key not in (TableRules.greedy_key, ChainRules.doubles_first):
            return "its greedy rule is its own"
        if kind.greedy_key is TableRules.greedy_key and kind.immediate_points not in (
            TableRules.immediate_points,
            count_points,
        ):
            return "its immediate points are its own"
        if isinstance(rules, PlacesRules):
            return "the places game's batched step is no faster than its rollouts in Python"
        return ChainKernel.supports(rules, {"episode": "round"})

    def values(
        self,
        worlds: Sequence[Any],
        seeds: Sequence[int],
        actions: Sequence[int],
        side: int,
        before: Sequence[Sequence[int]],
    ) -> np.ndarray:
        """float64[W, A]: in world ``w`` (a state at the searching seat's decision) after
        ``actions[a]``, the greedy rollout's value to ``side`` (``rollout_value`` with
        ``random.Random(seeds[w])`` and ``before[w]`` the world's standing)."""
        num_worlds, num_actions = len(worlds), len(actions)
        rows = num_worlds * num_actions
        size = -(-rows // _ROW_BUCKET) * _ROW_BUCKET
        kernel = self._kernel(size)
        world_of = np.repeat(np.arange(num_worlds), num_actions)
        games = [worlds[w] for w in world_of.tolist()] + [worlds[0]] * (size - rows)
        first = np.resize(np.asarray(actions, np.int64), size)
        kernel.load(games)
        words = _streams(seeds, _WORDS)
        world_of = np.append(world_of, np.zeros(size - rows, np.int64))
        pointer = np.zeros(size, np.int64)
        standing = np.zeros((size, self.rules.num_sides), np.int64)
        outcome = np.zeros((size, self.rules.num_sides), np.float64)
        over = np.zeros(size, bool)
        finished = np.zeros(size, bool)
        finished[rows:] = True  # (padding: played, never read)
        action = first
        for _ in range(self._max_steps):  # (a round ends long before)
            _obs, mask, _reward, done, _info = kernel.step(action)
            ended = done & ~finished
            if ended.any():
                standing[ended] = kernel.round_standing[ended]
                outcome[ended] = kernel.round_outcome[ended]
                over[ended] = kernel.round_match_over[ended]
                finished |= ended
                if finished.all():
                    break
            action, words = self._greedy(kernel, mask, ~finished, world_of, pointer, words, seeds)
        else:
            raise RuntimeError("a rollout did not end its round")
        return self._round_values(
            standing[:rows], outcome[:rows], over[:rows], world_of[:rows], side, before
        ).reshape(num_worlds, num_actions)

    def _kernel(self, size: int) -> ChainKernel:
        """A kernel of ``size`` tables for this table, built once."""
        kernel = self._kernels.get(size)
        if kernel is None:
            kernel = self._kernels[size] = ChainKernel(self.rules.name, size, **self._options)
            kernel.observing, kernel.redealing = False, True  # (masks only; nobody reads a next round)
        return kernel

    def _greedy(
        self,
        kernel: ChainKernel,
        mask: np.ndarray,
        live: np.ndarray,
        world_of: np.ndarray,
        pointer: np.ndarray,
        words: np.ndarray,
        seeds: Sequence[int],
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each row's greedy move; a ``live`` row with tied best keys draws among them from
        its world's stream, as ``random.Random.choice`` does (finished rows: the first)."""
        if self._points_scale:  # every legal (row, action), row by row (a few a row), and its points
            rows, actions, points = kernel.legal_points()
            key = self._key.take(actions) + points * self._points_scale
        else:
            rows, actions = np.nonzero(mask)
            key = self._key.take(actions)
        starts = np.searchsorted(rows, np.arange(len(mask)))  # (every row has a legal action)
        tie = key == np.maximum.reduceat(key, starts).take(rows)
        counts = np.add.reduceat(tie, starts)
        at = np.flatnonzero(tie)  # the tied best entries, row by row
        first = np.flatnonzero(np.r_[True, rows[at[1:]] != rows[at[:-1]]])
        best = actions.take(at.take(first))  # (the move of a row with one best key)
        ties = np.flatnonzero(counts > 1)
        if not ties.size:
            return best, words
        many = at[counts.take(rows.take(at)) > 1]  # the ties of rows with several, in the scalar order:
        many = many[np.lexsort((self._rank.take(actions.take(many)), rows.take(many)))]
        offset = np.cumsum(counts[ties]) - counts[ties]  # each such row's first in ``many``
        pick = np.zeros(ties.size, np.int64)
        draw = np.flatnonzero(live[ties])
        if draw.size:
            n = counts[ties[draw]]
            shift = 32 - self._bits[n]
            waiting = np.arange(draw.size)
            while waiting.size:
                tables = ties[draw[waiting]]
                if int(pointer[tables].max()) >= words.shape[1]:
                    words = _streams(seeds, 2 * words.shape[1])
                value = words[world_of[tables], pointer[tables]] >> shift[waiting]
                pointer[tables] += 1
                accepted = value < n[waiting]
                pick[draw[waiting[accepted]]] = value[accepted]
                waiting = waiting[~accepted]
        best[ties] = actions.take(many.take(offset + pick))
        return best, words

    def _round_values(
        self,
        standing: np.ndarray,
        outcome: np.ndarray,
        over: np.ndarray,
        world_of: np.ndarray,
        side: int,
        before: Sequence[Sequence[int]],
    ) -> np.ndarray:
        """``round_value`` on every row, in its arithmetic (so the floats are equal)."""
        change = standing - np.asarray(before, np.int64)[world_of]
        others = (change.sum(axis=1) - change[:, side]) / (change.shape[1] - 1)
        value = change[:, side] - others
        if self.rules.lower_score_wins:
            value = -value
        return np.where(over, value + self.rules.match_target * outcome[:, side], value)


def _streams(seeds: Sequence[int], words: int) -> np.ndarray:
    """int64[W, words]: the first ``words`` 32-bit outputs of ``random.Random(seed)`` for each
    seed (``getrandbits`` of many bits fills them low word first)."""
    data = b"".join(
        random.Random(seed).getrandbits(32 * words).to_bytes(4 * words, "little") for seed in seeds
    )
    return np.frombuffer(data, "<u4").reshape(len(seeds), words).astype(np.int64)


__all__ = ["MIN_ROWS", "GreedyRollouts"]
