"""The whole game tree of one round on a small table, as arrays: every history, every
information state, and exact best responses, NashConv and CFR+ over them, vectorized.

OpenSpiel's ``exploitability.nash_conv`` walks the game through Python callbacks at every
node, which is fine for the ``tiny`` tables and hopeless at a million information states.
Here the tree is walked once, through the rules' own chance points (the deal tile by tile, a
lot, every draw: the chance nodes of :mod:`domino_env.integrations.openspiel`, one to one),
into flat arrays in breadth-first order; a policy is then a vector ``float64[M]``, one
probability per legal (information state, action) pair (a dense states-by-actions table would
take gigabytes on the medium tables), and each pass over the tree is a few numpy operations
per depth::

    tree = GameTree.build("classic", preset="small")
    tree.nash_conv(tree.uniform())                     # exact NashConv of uniform play
    average, curve = tree.cfr_plus(64, marks=[8, 64])  # CFR+'s average policy, its NashConv
    average, curve = tree.external_sampling(4096, marks=[4096], seed=1)  # external-sampling MCCFR

**Information states.** A seat's information state is everything it saw this round, with
perfect recall: every move (public), the tiles dealt or drawn into its own hand, and of the
others' only that a tile was dealt or drawn (a lot's outcome is public). Each node carries,
per seat, a running hash of that sequence (two independent 61-bit polynomial hashes, so two
different sequences share both with a chance far below 10^-15 on the largest table allowed);
two decision nodes are one information state when the seat to move and its hashes agree. It
is the partition of OpenSpiel's ``information_state_string`` (the tests check NashConv equal
to OpenSpiel's on every tiny and small table).

**Layout.** Node ``n`` at depth ``d`` lies in ``levels[d]:levels[d+1]``; its children are the
contiguous nodes ``first[n]:first[n] + count[n]`` of the next depth, in the order of its
legal actions (or chance outcomes). Information states are numbered depth by depth too, so
every pass runs from the leaves up (values) or the root down (reach), one depth at a time
(external-sampling MCCFR's over only the sampled nodes of each depth).

Tables: the line-of-play games whose seats name their own tiles (not Blind, Blind blitz or
3D dominoes), one round (``episode="round"``), at most :data:`MAX_NODES` nodes.
"""

from __future__ import annotations

import os
import threading
import time
from array import array
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from domino_env.registry import preset_options, raw_env, spec
from domino_env.rules.table import DEAL_TILE, DRAW_TILE, LEADER, LOT, SIDE, START

MAX_NODES = 60_000_000  # the largest tree a walk builds (about 13 GB at the peak; All Fives' medium: 20M)
CHANCE, TERMINAL = -1, -2  # ``mover`` of a chance node and of a round's end
_PRIME = (1 << 61) - 1  # the hashes' modulus (a Mersenne prime) and their two multipliers
_MULTIPLIERS = (0x1F3D5B79A2C4E6F1 % _PRIME, 0x2B7E151628AED2A6 % _PRIME)
_KINDS = {name: k + 1 for k, name in enumerate((DEAL_TILE, LOT, DRAW_TILE, START, SIDE, LEADER))}
_PUBLIC = 15  # the seat digit of a chance outcome everybody sees (a lot)
_RECORDS = ("depth", "parent", "action", "mover", "chance", "key_a", "key_b", "ends", "outcomes")

Keys = tuple[tuple[int, int], ...]  # per seat, its two running hashes


class TooLarge(ValueError):
    """The table's tree has more nodes than the walk allows."""


@dataclass(frozen=True)
class TreeSize:
    """What a table's tree holds: the numbers a result on it is quoted with."""

    nodes: int
    histories: int  # terminal histories: whole rounds, deal and moves
    decisions: int  # decision nodes
    information_states: int
    seconds: float  # the time the walk took

    def __str__(self) -> str:
        return (
            f"{self.information_states:,} information states, {self.decisions:,} decision nodes, "
            f"{self.histories:,} histories (walked in {self.seconds:.1f} s)"
        )


@dataclass(frozen=True, eq=False)
class GameTree:
    """One round's game tree as arrays (the module docstring says how they are laid out)."""

    variant: str
    options: dict[str, Any]  # the table's options, a preset resolved
    num_players: int
    num_actions: int
    levels: np.ndarray  # int64[D + 1]
    mover: np.ndarray  # int8[N]: the seat to move, CHANCE or TERMINAL
    parent: np.ndarray  # int64[N]: -1 at the root
    action: np.ndarray  # int64[N]: the action (or chance outcome) on the edge into the node
    chance: np.ndarray  # float64[N]: the chance of that edge (1 after a decision)
    first: np.ndarray  # int64[N]: the first child
    count: np.ndarray  # int64[N]: how many children
    infoset: np.ndarray  # int64[N]: the information state of a decision node, else -1
    pair: np.ndarray  # int64[N]: the (state, action) pair of the move into the node, else -1
    terminals: np.ndarray  # int64[H]: the rounds' ends
    returns: np.ndarray  # float64[H, P]: each seat's outcome there
    keys: np.ndarray  # int64[I, 4]: per information state (depth, seat, its two hashes)
    starts: np.ndarray  # int64[I + 1]: state i's legal (state, action) pairs are starts[i]:starts[i+1]
    actions: np.ndarray  # int64[M]: each pair's action, in increasing order within its state
    size: TreeSize
    _index: dict[tuple[int, ...], int] = field(default_factory=dict, repr=False)

    @property
    def infoset_seat(self) -> np.ndarray:
        """int64[I]: the seat each information state belongs to."""
        return self.keys[:, 1]

    @cached_property
    def pair_state(self) -> np.ndarray:
        """int64[M]: the information state of each pair."""
        return np.repeat(np.arange(len(self.keys)), np.diff(self.starts))

    def legal_actions(self, infoset: int) -> np.ndarray:
        """The legal actions of one information state, in increasing order."""
        return self.actions[self.starts[infoset] : self.starts[infoset + 1]]

    @cached_property
    def _pair_keys(self) -> np.ndarray:
        """int64[M], increasing: each pair as state * A + action."""
        return self.pair_state * self.num_actions + self.actions

    def pairs(self, infosets: ArrayLike, actions: ArrayLike) -> np.ndarray:
        """The pair index of each (information state, action); ValueError if one is illegal."""
        infosets, actions = np.asarray(infosets, np.int64), np.asarray(actions, np.int64)
        flat = self._pair_keys
        wanted = infosets * self.num_actions + actions
        index = np.minimum(np.searchsorted(flat, wanted), len(flat) - 1)
        if not np.array_equal(flat[index], wanted):
            bad = np.flatnonzero(flat[index] != wanted)[0]
            raise ValueError(
                f"action {actions[bad]} is not legal in information state {infosets[bad]}; "
                f"legal: {self.legal_actions(int(infosets[bad])).tolist()}"
            )
        return index

    # --- building ------------------------------------------------------------------------------

    @classmethod
    def build(cls, variant: str, max_nodes: int = MAX_NODES, workers: int = 0, **options: Any) -> GameTree:
        """The tree of one round of ``variant`` with ``options`` (as for ``domino_env.make``, a
        ``preset`` included), walked by ``workers`` processes (0: one per core; the subtrees
        of the deal's first tile shared among them); a table it cannot walk raises ValueError
        (:class:`TooLarge` past ``max_nodes``), saying why."""
        started = time.perf_counter()
        options = preset_options(variant, options)
        rules = _walkable(variant, options)
        deals = rules.num_deals()
        if deals > max_nodes:  # (each deal ends in a node of its own: refused before any walk)
            raise TooLarge(
                f"{variant} with {options}: {deals:,} deals a round, so more than {max_nodes:,} nodes "
                "(the most a walk takes): use a smaller table (preset small or tiny, or a smaller "
                "max_pip or hand_size)"
            )
        walk = _walk_all(variant, options, rules, max_nodes, workers or os.cpu_count() or 1)
        walked_depth = np.frombuffer(walk.depth, np.int64)
        order = np.argsort(walked_depth, kind="stable")  # depth-first -> breadth-first (see below)
        n = len(order)
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n)
        depth = walked_depth[order]
        walked_parent = np.frombuffer(walk.parent, np.int64)[order]
        parent = np.where(walked_parent >= 0, rank[np.maximum(walked_parent, 0)], -1)
        del walked_parent
        # Depth-first, a node's subtree comes before its next sibling's: so at every depth
        # children keep their parents' order, and each parent's children lie together.
        mover = np.frombuffer(walk.mover, np.int8)[order]
        action = np.frombuffer(walk.action, np.int64)[order]
        decided = np.flatnonzero(mover >= 0)
        node_keys = np.stack(
            [
                depth[decided],
                mover[decided].astype(np.int64),
                np.frombuffer(walk.key_a, np.int64)[order[decided]],
                np.frombuffer(walk.key_b, np.int64)[order[decided]],
            ],
            axis=1,
        )
        keys, inverse = np.unique(node_keys, axis=0, return_inverse=True)
        del node_keys
        infoset = np.full(n, -1, np.int64)
        infoset[decided] = inverse.ravel()
        moves = np.arange(1, n)
        moves = moves[mover[parent[moves]] >= 0]  # the nodes a move leads to
        flat = np.unique(infoset[parent[moves]] * rules.num_actions + action[moves])
        pair = np.full(n, -1, np.int64)
        pair[moves] = np.searchsorted(flat, infoset[parent[moves]] * rules.num_actions + action[moves])
        starts = np.searchsorted(flat // rules.num_actions, np.arange(len(keys) + 1))
        return cls(
            variant=variant,
            options=options,
            num_players=rules.num_players,
            num_actions=rules.num_actions,
            levels=np.searchsorted(depth, np.arange(depth[-1] + 2)),
            mover=mover,
            parent=parent,
            action=action,
            chance=np.frombuffer(walk.chance, np.float64)[order],
            first=np.searchsorted(parent[1:], np.arange(n)) + 1,
            count=np.bincount(parent[1:], minlength=n).astype(np.int64),
            infoset=infoset,
            pair=pair,
            terminals=rank[np.frombuffer(walk.ends, np.int64)],
            returns=np.frombuffer(walk.outcomes, np.float64).reshape(-1, rules.num_players).copy(),
            keys=keys,
            starts=starts,
            actions=flat % rules.num_actions,
            size=TreeSize(
                nodes=n,
                histories=len(walk.ends),
                decisions=len(decided),
                information_states=len(keys),
                seconds=time.perf_counter() - started,
            ),
        )

    def positions(self, batch: int = 4096) -> Iterator[tuple[np.ndarray, list[Any]]]:
        """The information states' positions, ``batch`` at a time: their ids, and for each an
        engine state at the first history of it the walk meets (the seat to move is
        ``state.current``). A policy read from an agent or a network is asked there. The walk
        is made again (in one process), so this costs about what :meth:`build` did."""
        if not self._index:
            self._index.update(zip(map(tuple, self.keys.tolist()), range(len(self.keys)), strict=True))
        rules = _walkable(self.variant, dict(self.options))
        seen = np.zeros(len(self.keys), bool)
        ids: list[int] = []
        states: list[Any] = []
        for key, state in _Walk(rules, MAX_NODES, self.variant).decisions():
            infoset = self._index[key]
            if seen[infoset]:
                continue
            seen[infoset] = True
            ids.append(infoset)
            states.append(state.clone())
            if len(ids) == batch:
                yield np.array(ids), states
                ids, states = [], []
        if ids:
            yield np.array(ids), states

    # --- policies: float64[M], a probability per legal (state, action) pair ----------------------

    def uniform(self) -> np.ndarray:
        """Uniform play: every legal action of an information state equally likely."""
        return 1.0 / np.diff(self.starts)[self.pair_state]

    def _state_sums(self, per_pair: np.ndarray) -> np.ndarray:
        """float64[I]: the sum of a per-pair quantity over each state's pairs."""
        return np.add.reduceat(per_pair, self.starts[:-1])

    def check_policy(self, policy: np.ndarray) -> None:
        """A policy is float[M]: a distribution over each information state's legal actions,
        one entry per pair (:attr:`starts`, :attr:`actions`)."""
        want = len(self.actions)
        if np.shape(policy) != (want,):
            raise ValueError(
                f"a policy is float[{want}]: one probability per legal (information state, action) pair, "
                f"got shape {np.shape(policy)}"
            )
        if np.any(policy < 0):
            raise ValueError("a policy gives no action a negative probability")
        if not np.allclose(self._state_sums(policy), 1.0, atol=1e-6):
            raise ValueError("a policy's probabilities sum to 1 over each information state's legal actions")

    @cached_property
    def _moves(self) -> np.ndarray:
        """The nodes a move leads to (not a chance outcome)."""
        return np.flatnonzero(self.pair >= 0)

    def edges(self, policy: np.ndarray) -> np.ndarray:
        """float64[N]: the chance of the edge into each node: the chance outcome's, or the
        policy's probability of the move (1 at the root)."""
        edge = self.chance.copy()
        moves = self._moves
        edge[moves] = policy[self.pair[moves]]
        return edge

    def reach(self, policy: np.ndarray) -> np.ndarray:
        """float64[N, P + 1]: per node, the chance of reaching it through everything but seat
        i's own moves (column i: its counterfactual reach), and through everything (column P)."""
        p = self.num_players
        edge = self.edges(policy)
        reach = np.ones((len(self.mover), p + 1))
        for d in range(1, len(self.levels) - 1):
            nodes = slice(self.levels[d], self.levels[d + 1])
            parent = self.parent[nodes]
            factor = np.repeat(edge[nodes, None], p + 1, axis=1)
            by = self.mover[parent]
            own = np.flatnonzero(by >= 0)
            factor[own, by[own]] = 1.0  # (a seat's own moves are not in its column)
            reach[nodes] = reach[parent] * factor
        return reach

    def _sum_children(self, value: np.ndarray, edge: np.ndarray, d: int) -> bool:
        """Fill ``value`` at the nodes of depth ``d`` that have children: the sum over those
        of their value times their edge's chance. False if depth ``d`` has none."""
        nodes = np.arange(self.levels[d], self.levels[d + 1])
        inner = nodes[self.count[nodes] > 0]
        if not len(inner):
            return False
        kids = slice(self.levels[d + 1], self.levels[d + 2])
        weight = edge[kids] if value.ndim == 1 else edge[kids, None]
        value[inner] = np.add.reduceat(value[kids] * weight, self.first[inner] - self.levels[d + 1], axis=0)
        return True

    def values(self, policy: np.ndarray) -> np.ndarray:
        """float64[P]: each seat's expected outcome when every seat plays ``policy``."""
        return self.reach(policy)[self.terminals, -1] @ self.returns

    def best_response_values(self, policy: np.ndarray, reach: np.ndarray | None = None) -> np.ndarray:
        """float64[P]: what seat i expects by best-responding to the others' ``policy``: its
        own play replaced by the best action at each of its information states, chosen from
        the leaves up (exact, by perfect recall)."""
        reach = self.reach(policy) if reach is None else reach
        edge = self.edges(policy)
        value = np.zeros((len(self.mover), self.num_players))
        value[self.terminals] = self.returns
        for d in range(len(self.levels) - 3, -1, -1):
            below = self.levels[d + 1]
            kids = slice(below, self.levels[d + 2])
            if not self._sum_children(value, edge, d):
                continue
            by = self.mover[self.parent[kids]]
            for seat in range(self.num_players):  # a seat's own nodes: its best action instead
                child = np.flatnonzero(by == seat) + below
                if len(child):
                    best = self._best_pairs(child, reach[self.parent[child], seat] * value[child, seat])
                    chosen = child[best[self.pair[child] - self.pair[child].min()]]
                    value[self.parent[chosen], seat] = value[chosen, seat]
        return value[0]

    def _best_pairs(self, child: np.ndarray, weighted: np.ndarray) -> np.ndarray:
        """For the move nodes ``child`` of one seat at one depth (their states' pairs
        contiguous) and each one's counterfactual value, a flag per pair of that range: the
        state's best action (the lowest where several tie)."""
        pair = self.pair[child]
        base = pair.min()
        gain = np.bincount(pair - base, weighted, pair.max() + 1 - base)
        state = self.pair_state[base : base + len(gain)]
        local = self.starts[state[0] : state[-1] + 1] - base
        top = np.maximum.reduceat(gain, local)
        best = gain == top[state - state[0]]
        flagged = np.flatnonzero(best)
        _, first = np.unique(state[flagged], return_index=True)
        only = np.zeros(len(gain), bool)
        only[flagged[first]] = True
        return only

    def nash_conv(self, policy: np.ndarray) -> float:
        """Exact NashConv: the sum over seats of what a best response to the others gains over
        ``policy`` (0 at a Nash equilibrium)."""
        self.check_policy(policy)
        reach = self.reach(policy)
        best = self.best_response_values(policy, reach)
        return float((best - reach[self.terminals, -1] @ self.returns).sum())

    def expected_decisions(self, policy: np.ndarray) -> float:
        """The mean number of decisions in a round when every seat plays ``policy``."""
        full = self.reach(policy)[:, -1]
        return float(full[self.mover >= 0].sum())

    # --- CFR+ ----------------------------------------------------------------------------------

    def cfr_plus(
        self, iterations: int, marks: Iterable[int] = ()
    ) -> tuple[np.ndarray, list[tuple[int, float]]]:
        """CFR+ (regret matching+, alternating updates, linear averaging: OpenSpiel's
        ``CFRPlusSolver``, the same arithmetic) for ``iterations``; returns its average
        policy and its NashConv after each iteration in ``marks``."""
        wanted = set(marks)
        average, curve = self._normalized(np.zeros(len(self.actions))), []
        for t, average in self.cfr_plus_averages(iterations, wanted | {iterations}):
            if t in wanted:
                curve.append((t, self.nash_conv(average)))
        return average, curve

    def cfr_plus_averages(self, iterations: int, marks: Iterable[int]) -> Iterator[tuple[int, np.ndarray]]:
        """:meth:`cfr_plus`'s run, step by step: after each iteration ``t`` in ``marks`` (up to
        ``iterations``) it yields ``(t, the average policy so far)``, and goes on when asked
        for the next (a caller checkpoints along one run instead of running it again)."""
        regret = np.zeros(len(self.actions))
        total = np.zeros(len(self.actions))
        policy = self.uniform()
        wanted = set(marks)
        for t in range(1, iterations + 1):
            for seat in range(self.num_players):
                gain, played = self._counterfactual_regrets(policy, seat, t)
                regret += gain
                total += played
                np.maximum(regret, 0.0, out=regret)
                policy = self._normalized(regret)
            if t in wanted:
                yield t, self._normalized(total)

    @cached_property
    def _move_seat(self) -> np.ndarray:
        """int8[len(_moves)]: the seat that made each move of :attr:`_moves`."""
        return self.mover[self.parent[self._moves]]

    def _counterfactual_regrets(
        self, policy: np.ndarray, seat: int, weight: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """One exact pass for ``seat`` when everyone plays ``policy``: per pair (float64[M], 0 at
        the others' pairs), ``seat``'s counterfactual regret (sum over the state's histories of
        the others' and chance's reach times the action's value minus the node's), and
        ``weight`` times its own reach times the policy (what CFR+ averages)."""
        edge = self.edges(policy)
        others, own = self._split_reach(edge, seat)
        value = np.zeros(len(self.mover))
        value[self.terminals] = self.returns[:, seat]
        self._expected(edge, value)
        mine = self._moves[self._move_seat == seat]
        above = self.parent[mine]
        pair = self.pair[mine]
        pairs = len(self.actions)
        return (
            np.bincount(pair, others[above] * (value[mine] - value[above]), pairs),
            np.bincount(pair, weight * own[above] * edge[mine], pairs),
        )

    def _split_reach(self, edge: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """Per node, the chance of reaching it through all but ``seat``'s moves, and through
        ``seat``'s moves only."""
        others, own = np.ones(len(edge)), np.ones(len(edge))
        for d in range(1, len(self.levels) - 1):
            nodes = slice(self.levels[d], self.levels[d + 1])
            parent = self.parent[nodes]
            mine = self.mover[parent] == seat
            others[nodes] = others[parent] * np.where(mine, 1.0, edge[nodes])
            own[nodes] = own[parent] * np.where(mine, edge[nodes], 1.0)
        return others, own

    def _expected(self, edge: np.ndarray, value: np.ndarray) -> None:
        """A seat's expected outcome below each node when everyone plays by ``edge``
        (``value``: its outcome at the terminals, the rest filled in place)."""
        for d in range(len(self.levels) - 3, -1, -1):
            self._sum_children(value, edge, d)

    def _normalized(self, weight: np.ndarray) -> np.ndarray:
        """Each state's weights (none negative) made a distribution; uniform where all are 0
        (regret matching of regrets, and the average policy of accumulated ones)."""
        return _shares(weight, self._state_sums(weight)[self.pair_state], self.uniform())

    # --- external-sampling MCCFR ----------------------------------------------------------------

    def external_sampling(
        self, iterations: int, marks: Iterable[int] = (), seed: int = 0
    ) -> tuple[np.ndarray, list[tuple[int, int, float]]]:
        """External-sampling MCCFR (:meth:`external_sampling_averages`) for ``iterations``;
        returns its average policy and, after each iteration in ``marks``, (iteration,
        decision nodes touched so far, NashConv of the average policy)."""
        wanted = set(marks)
        average, curve = self.uniform(), []
        for t, average, touched in self.external_sampling_averages(iterations, wanted | {iterations}, seed):
            if t in wanted:
                curve.append((t, touched, self.nash_conv(average)))
        return average, curve

    def external_sampling_averages(
        self, iterations: int, marks: Iterable[int], seed: int = 0
    ) -> Iterator[tuple[int, np.ndarray, int]]:
        """External-sampling Monte Carlo CFR (Lanctot et al., 2009; the update rules of
        OpenSpiel's ``ExternalSamplingSolver`` with its default, "simple" averaging), step by
        step: after each iteration ``t`` in ``marks`` (up to ``iterations``) it yields ``(t,
        the average policy so far, the decision nodes touched so far)``.

        An iteration is one sampled traversal per seat (:meth:`_sampled_traversal`), in seat
        order, each reading the regret-matching policy of the regrets as the previous one left
        them (alternating updates, as CFR+). Regrets are plain sums (not floored: regret
        matching, not CFR+'s); the average policy is the normalized sum of the current policies
        added at the sampled nodes of the seat after the traverser (OpenSpiel's rule: with two
        seats, the traverser's opponent, whose nodes are reached with the probability of their
        own reach, so unweighted sums estimate the reach-weighted average). The random numbers
        come from ``np.random.default_rng(seed)``: a run is reproducible."""
        rng = np.random.default_rng(seed)
        regret = np.zeros(len(self.actions))
        total = np.zeros(len(self.actions))
        wanted = set(marks)
        touched = 0
        for t in range(1, iterations + 1):
            for seat in range(self.num_players):
                touched += self._sampled_traversal(seat, regret, regret, total, rng)
            if t in wanted:
                yield t, self._normalized(total), touched

    @cached_property
    def _terminal_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The terminal nodes in increasing order, and each one's row of :attr:`returns`."""
        order = np.argsort(self.terminals)
        return self.terminals[order], order

    def _outcomes(self, nodes: np.ndarray, seat: int) -> np.ndarray:
        """``seat``'s outcome at each of the terminal ``nodes``."""
        ends, rows = self._terminal_rows
        return self.returns[rows[np.searchsorted(ends, nodes)], seat]

    def _sampled_traversal(
        self, seat: int, regret: np.ndarray, gain: np.ndarray, total: np.ndarray, rng: np.random.Generator
    ) -> int:
        """One external-sampling traversal for ``seat``, touching only the sampled nodes: from
        the root down, depth by depth, one outcome of each chance node (by its chance) and one
        move of each other seat's node (by the regret-matching policy of ``regret``), every
        move of ``seat``'s; then from the leaves up, each node's sampled value for ``seat`` (at
        its nodes, the policy's mean over its moves) and, added to ``gain`` at its pairs, each
        move's value minus its node's (the sampled counterfactual regret: unbiased, the
        sampling probability cancelling the others' reach). The policy at the sampled nodes of
        the seat after ``seat`` is added to ``total``. Returns the decision nodes touched."""
        after = (seat + 1) % self.num_players
        frontier = np.zeros(1, np.int64)  # the sampled nodes of one depth, in increasing order
        passes: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        touched = 0
        while len(frontier):
            mover = self.mover[frontier]
            touched += int(np.count_nonzero(mover >= 0))
            inner = np.flatnonzero(mover != TERMINAL)
            if not len(inner):
                passes.append((frontier, inner, inner, inner, inner))
                break
            count = self.count[frontier[inner]]
            offsets = np.cumsum(count) - count  # each inner node's children among ``kids``
            kids = np.repeat(self.first[frontier[inner]] - offsets, count) + np.arange(count.sum())
            pair = self.pair[kids]
            moved = pair >= 0
            positive = np.where(moved, np.maximum(regret[pair], 0.0), 0.0)
            sums = np.repeat(np.add.reduceat(positive, offsets), count)
            uniform = 1.0 / np.repeat(count, count)
            chance = np.where(moved, _shares(positive, sums, uniform), self.chance[kids])  # (of each edge)
            by = mover[inner]
            # one child of each node not ``seat``'s, by inverting its cumulative chance
            cumulative = np.cumsum(chance)
            within = cumulative - np.repeat(np.concatenate(([0.0], cumulative))[offsets], count)
            draw = np.repeat(rng.random(len(inner)) * within[offsets + count - 1], count)
            chosen = offsets + np.minimum(np.add.reduceat(within <= draw, offsets), count - 1)
            keep = np.repeat(by == seat, count)
            keep[chosen[by != seat]] = True
            averaged = np.repeat(by == after, count)
            np.add.at(total, pair[averaged], chance[averaged])
            weight = np.where(np.repeat(by == seat, count), chance, 1.0)[keep]
            kept = np.add.reduceat(keep, offsets)
            passes.append((frontier, inner, pair[keep], weight, kept))
            frontier = kids[keep]
        value = np.zeros(0)
        for nodes, inner, pair, weight, kept in reversed(passes):
            here = np.zeros(len(nodes))
            ends = np.flatnonzero(self.mover[nodes] == TERMINAL)
            here[ends] = self._outcomes(nodes[ends], seat)
            if len(inner):
                starts = np.cumsum(kept) - kept
                here[inner] = np.add.reduceat(weight * value, starts)
                mine = np.repeat(self.mover[nodes[inner]] == seat, kept)
                np.add.at(gain, pair[mine], (value - np.repeat(here[inner], kept))[mine])
            value = here
        return touched


def _shares(weight: np.ndarray, total: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Each weight over its state's (or node's) ``total`` where that is positive, else
    ``uniform``: regret matching, and an average policy from its accumulated weights."""
    return np.where(total > 0, weight / np.where(total > 0, total, 1.0), uniform)


# --- the walk ----------------------------------------------------------------------------------


def _walkable(variant: str, options: dict[str, Any]) -> Any:
    """The rules of a table the walk can take, or a ValueError saying why not."""
    env = raw_env(variant, **options)
    rules = env.rules
    if spec(variant).table != "chain" or not rules.seats_name_own_tiles or rules.private_action_kinds:
        raise ValueError(
            f"the game tree walks the line-of-play games whose seats name their own tiles, not {variant}"
        )
    if env.episode != "round":
        raise ValueError(
            f"the game tree is one round: {variant} with {options} plays whole matches; add episode=round"
        )
    return rules


class _Walk:
    """A depth-first walk of one round through the rules' chance points, each node recorded
    in compact arrays (in depth-first order; :meth:`GameTree.build` reorders them)."""

    def __init__(self, rules: Any, max_nodes: int, label: str) -> None:
        self.rules, self.max_nodes, self.label = rules, max_nodes, label
        self.depth, self.parent, self.action = array("q"), array("q"), array("q")
        self.mover, self.chance = array("b"), array("d")
        self.key_a, self.key_b = array("q"), array("q")  # the mover's hashes (0 but at decisions)
        self.ends, self.outcomes = array("q"), array("d")
        self.width = max(rules.num_actions, rules.tile_set.size) + 2  # a token's last digit

    def _token(self, kind: int, seat: int, what: int) -> int:
        return (kind * 16 + seat) * self.width + what + 1

    def _start(self) -> Keys:
        return tuple((seat + 1, seat + 1) for seat in range(self.rules.num_players))

    @staticmethod
    def _extend(keys: Keys, tokens: list[int]) -> Keys:
        m_a, m_b = _MULTIPLIERS
        return tuple(
            ((a * m_a + t) % _PRIME, (b * m_b + t) % _PRIME) for (a, b), t in zip(keys, tokens, strict=True)
        )

    def _after_chance(self, state: Any, child: Any, outcome: int, keys: Keys) -> Keys:
        """What each seat sees of a chance outcome: a tile dealt or drawn into a hand is named
        to that hand's seat only (the others see that it went there); anything else (a lot)
        to all."""
        kind = _KINDS[state.chance]
        seats = len(keys)
        for seat in range(seats):
            if state.hands[seat] != child.hands[seat]:
                tokens = [self._token(kind, seat, outcome if s == seat else -1) for s in range(seats)]
                return self._extend(keys, tokens)
        return self._extend(keys, [self._token(kind, _PUBLIC, outcome)] * seats)

    def _after_move(self, seat: int, move: int, keys: Keys) -> Keys:
        return self._extend(keys, [self._token(0, seat, move)] * len(keys))

    def run(self) -> None:
        self._visit(self.rules.new_match(), -1, 0, -1, 1.0, self._start())

    def run_subtree(self, outcome: int) -> None:
        """Walk only the subtree of the root's chance ``outcome`` (its nodes' parent -1 standing
        for the root, their depths counted from it)."""
        state = self.rules.new_match()
        child = state.clone()
        probability = dict(self.rules.chance_outcomes(state))[outcome]
        self.rules.apply_chance(child, outcome)
        self._visit(
            child, -1, 1, outcome, probability, self._after_chance(state, child, outcome, self._start())
        )

    def arrays(self) -> dict[str, array[Any]]:
        """What the walk recorded (what a worker sends back)."""
        return {name: getattr(self, name) for name in _RECORDS}

    def append(self, part: dict[str, array[Any]]) -> None:
        """Add a subtree walked on its own (:meth:`run_subtree`) below this walk's root."""
        offset = len(self.depth)
        parent = np.frombuffer(part["parent"], np.int64)
        self.parent.frombytes(np.where(parent >= 0, parent + offset, 0).tobytes())
        self.ends.frombytes((np.frombuffer(part["ends"], np.int64) + offset).tobytes())
        for name in _RECORDS:
            if name not in ("parent", "ends"):
                getattr(self, name).extend(part[name])
        if len(self.depth) > self.max_nodes:
            raise self._too_large()

    def _too_large(self) -> TooLarge:
        return TooLarge(
            f"{self.label}: the game tree has more than {self.max_nodes:,} nodes (the most a walk "
            "takes): use a smaller table (preset small or tiny, or a smaller max_pip or hand_size)"
        )

    def _visit(self, state: Any, parent: int, depth: int, action: int, chance: float, keys: Keys) -> None:
        node = len(self.depth)
        if node >= self.max_nodes:
            raise self._too_large()
        self.depth.append(depth)
        self.parent.append(parent)
        self.action.append(action)
        self.chance.append(chance)
        rules = self.rules
        if state.chance is not None:
            self.mover.append(CHANCE)
            self.key_a.append(0)
            self.key_b.append(0)
            for outcome, probability in rules.chance_outcomes(state):
                child = state.clone()
                rules.apply_chance(child, outcome)
                self._visit(
                    child,
                    node,
                    depth + 1,
                    outcome,
                    probability,
                    self._after_chance(state, child, outcome, keys),
                )
            return
        if state.round_over:
            self.mover.append(TERMINAL)
            self.key_a.append(0)
            self.key_b.append(0)
            self.ends.append(node)
            by_side = rules.outcome(rules.round_keys(state))
            self.outcomes.extend(float(by_side[side]) for side in rules.side_of)
            return
        seat = state.current
        self.mover.append(seat)
        self.key_a.append(keys[seat][0])
        self.key_b.append(keys[seat][1])
        for move in sorted(state.legal):
            child = state.clone()
            rules.apply(child, move)
            self._visit(child, node, depth + 1, move, 1.0, self._after_move(seat, move, keys))

    def decisions(self) -> Iterator[tuple[tuple[int, ...], Any]]:
        """Every decision node, depth-first: its key (depth, seat, hashes) and its state."""
        yield from self._decisions(self.rules.new_match(), 0, self._start())

    def _decisions(self, state: Any, depth: int, keys: Keys) -> Iterator[tuple[tuple[int, ...], Any]]:
        rules = self.rules
        if state.chance is not None:
            for outcome, _ in rules.chance_outcomes(state):
                child = state.clone()
                rules.apply_chance(child, outcome)
                yield from self._decisions(child, depth + 1, self._after_chance(state, child, outcome, keys))
            return
        if state.round_over:
            return
        seat = state.current
        yield (depth, seat, *keys[seat]), state
        for move in sorted(state.legal):
            child = state.clone()
            rules.apply(child, move)
            yield from self._decisions(child, depth + 1, self._after_move(seat, move, keys))


def _walk_all(variant: str, options: dict[str, Any], rules: Any, max_nodes: int, workers: int) -> _Walk:
    """The whole tree's walk (``rules``: the table's), in depth-first order; with more than one
    worker, the root's subtrees are walked in processes (each building the rules from
    ``variant`` and ``options``) and put together in order."""
    label = f"{variant} with {options}"
    walk = _Walk(rules, max_nodes, label)
    outcomes = [outcome for outcome, _ in rules.chance_outcomes(rules.new_match())]
    if workers == 1 or len(outcomes) < 2:
        walk.run()
        return walk
    walk.depth.append(0)  # the root: the deal's first tile
    walk.parent.append(-1)
    walk.action.append(-1)
    walk.chance.append(1.0)
    walk.mover.append(CHANCE)
    walk.key_a.append(0)
    walk.key_b.append(0)
    tasks = [(variant, options, outcome, max_nodes, label) for outcome in outcomes]
    processes = min(workers, len(outcomes))
    with ProcessPoolExecutor(processes, initializer=_end_with_parent) as pool:
        for part in pool.map(_walk_subtree, tasks):
            walk.append(part)
    return walk


def _end_with_parent() -> None:
    """A walker's start: a watch that ends it once its parent is gone (the process building the
    tree, killed, say; or, under the forkserver start method, the server, which ends with it)
    rather than walk on for nobody."""
    threading.Thread(target=_watch, args=(os.getppid(),), daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _walk_subtree(task: tuple[str, dict[str, Any], int, int, str]) -> dict[str, array[Any]]:
    """A worker's share of :func:`_walk_all`: one subtree of the root."""
    variant, options, outcome, max_nodes, label = task
    walk = _Walk(raw_env(variant, **options).rules, max_nodes, label)
    walk.run_subtree(outcome)
    return walk.arrays()
