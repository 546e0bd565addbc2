"""OpenSpiel support: any variant and table as a ``pyspiel`` game, so OpenSpiel's algorithms
(CFR, CFR+, MCCFR, ``exploitability.nash_conv``, IS-MCTS, NFSP ...) run on it unchanged.

Needs the ``openspiel`` extra (``pip install "domino-env[openspiel]"``)::

    from open_spiel.python.algorithms import cfr, exploitability
    from domino_env.integrations.openspiel import load_game

    game = load_game("classic", preset="tiny")  # options as for domino_env.make
    solver = cfr.CFRPlusSolver(game)
    for _ in range(100):
        solver.evaluate_and_update_policy()
    print(exploitability.nash_conv(game, solver.average_policy()))

The game is the environment's rules, driven through its engine (OpenSpiel's game/state
split: the rules are the game, the engine's match state the state):

* **Chance nodes** for everything the environment leaves to chance, in the order it happens:
  the deal, one tile at a time (seat 0's hand first, each tile uniform over the tiles not yet
  dealt; a 3D game then its start tile, the side it lies and who moves first), a leader drawn
  by lot where the rules draw one (All Fives, Metro, Blind blitz), and every draw from the
  boneyard when it happens (uniform over the tiles nobody holds and the table lacks). A
  multi-round match deals each round the same way.
* **Players** are the seats (``player_<k>`` is player k); the seat to move is the current player.
  Actions are the environment's action ids, the legal ones those of its action mask.
* **Returns**: the environment's outcome reward at the end (+1 first ... -1 last, ties sharing,
  partners alike; ``episode="round"`` ranks the round), so the game is zero-sum; no reward before.
* **IS-MCTS**: ``resample_from_infostate`` deals what a seat cannot know anew, consistent with
  what it has seen (the search agents' world sampler).
* **Information state** (``information_state_string``): what the seat knows, with perfect
  recall: its hand as far as it can name it, what only it knows (Blind's row) and every event of
  the match as it saw them (a tile drawn by another seat is hidden). Two states that differ only
  in what the seat cannot know give the same string. ``information_state_tensor`` and
  ``observation_tensor`` are the environment's observation vector (``observation_layout``), a
  summary of that history rather than all of it; ``observation_string`` is the table in words as
  the seat sees it (``env.seat_text``).

:meth:`DominoState.env` positions a :class:`~domino_env.envs.base.DominoEnv` at a state, so any
agent of the project (``agent(env, observation)``) can act in an OpenSpiel game.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - the message is the point
    raise ImportError(
        'domino_env.integrations.openspiel needs OpenSpiel: pip install "domino-env[openspiel]"'
    ) from err

from domino_env.core.events import DRAW
from domino_env.core.tiles import format_tile
from domino_env.envs.base import DominoEnv
from domino_env.registry import preset_options, raw_env, spec
from domino_env.render.moves import move_text
from domino_env.rules.view import seat_view

# What a chance node decides (its outcomes are tile ids, a seat, or the side a tile lies).
DEAL, START, SIDE, LEADER, LOT, DRAWN = "deal", "start", "side", "leader", "lot", "draw"
MAX_ROUNDS = 200  # the bound on a match's rounds behind ``max_game_length`` (never reached in play)


class NeedChance(Exception):
    """Raised by :class:`ChanceStream` inside the engine: a random choice chance has not made yet."""

    def __init__(self, outcomes: int) -> None:
        super().__init__(outcomes)
        self.outcomes = outcomes


class ChanceStream:
    """The engine's random stream in an OpenSpiel state: every ``integers(n)`` the rules ask for
    (a leader drawn by lot) is a chance node's outcome, given in order, or :class:`NeedChance`.
    ``shuffle`` leaves the order as it is: the adapter deals every tile itself, so the order of
    a fixed deal's shuffled remainder is never read."""

    def __init__(self, outcomes: list[int]) -> None:
        self.outcomes = outcomes
        self.used = 0

    def integers(self, n: int) -> int:
        if self.used == len(self.outcomes):
            raise NeedChance(int(n))
        value = self.outcomes[self.used]
        self.used += 1
        return value

    def shuffle(self, items: list[Any]) -> None:
        return None

    def __deepcopy__(self, memo: dict[int, Any]) -> ChanceStream:
        return ChanceStream(self.outcomes[:])


class _Engine:
    """The engine's match state, copied by its own cheap ``clone`` when OpenSpiel clones a state."""

    def __init__(self, game: Any) -> None:
        self.game = game

    def __deepcopy__(self, memo: dict[int, Any]) -> _Engine:
        return _Engine(self.game.clone())


class DominoGame(pyspiel.Game):
    """A variant and table as an OpenSpiel game (build it with :func:`load_game`)."""

    def __init__(self, variant: str, options: dict[str, Any]) -> None:
        self.variant = variant
        self.options = preset_options(variant, options)
        self.env: DominoEnv[Any] = raw_env(variant, **self.options)  # observations, agents, text
        self.rules = self.env.rules
        self.grid = spec(variant).table == "grid"
        self.by_round = self.env.episode == "round"
        rules = self.rules
        n = rules.num_players
        tiles = rules.num_tiles if self.grid else rules.tile_set.size
        per_round = 4 * tiles + 4 * n  # decisions: every tile laid, drawn, turned up or arranged once
        game_type = pyspiel.GameType(
            short_name=f"domino_{variant}",
            long_name=f"domino-env {spec(variant).title}",
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
            information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
            utility=pyspiel.GameType.Utility.ZERO_SUM,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=n,
            min_num_players=n,
            provides_information_state_string=True,
            provides_information_state_tensor=True,
            provides_observation_string=True,
            provides_observation_tensor=True,
            parameter_specification={},
        )
        info = pyspiel.GameInfo(
            num_distinct_actions=rules.num_actions,
            # (chance names tiles by id: a 3D game's physical ids run over every set's kinds)
            max_chance_outcomes=max(rules.sets * rules.kind_size if self.grid else tiles, n, 2),
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=per_round * (1 if self.by_round or self.grid else MAX_ROUNDS),
        )
        super().__init__(game_type, info, {})
        self.tensor_size = self.env.encoder.size

    def num_deals(self) -> int:
        """The different deals of a round (hands as sets, or in order where the order is part of
        the game; a 3D game's start tile, its side and the first player too), before any draw:
        the least an exact walk of the game tree must cover."""
        rules = self.rules
        left = rules.num_tiles if self.grid else rules.tile_set.size
        deals = 1
        for _ in range(rules.num_players):
            ways = math.perm if rules.ordered_hands else math.comb
            deals *= ways(left, rules.hand_size)
            left -= rules.hand_size
        if self.grid:
            deals *= left * 2 * rules.num_players
        return deals

    def new_initial_state(self) -> DominoState:
        return DominoState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> DominoObserver:
        if params:
            raise ValueError(f"domino games take no observer parameters, got {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return DominoObserver(self, perfect_recall)

    def __str__(self) -> str:
        options = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return f"domino_{self.variant}({options})"


class DominoState(pyspiel.State):
    """One position: the engine's match state, or the chance choices of a deal under way."""

    def __init__(self, game: DominoGame) -> None:
        super().__init__(game)
        self._engine: _Engine | None = None
        self._dealt: list[int] = []  # this round's tiles dealt so far (seat 0's hand first)
        self._extra: list[int] = []  # a 3D game's start tile, its side, its first player
        self._lots: list[int] = []  # leaders drawn by lot for the operation pending
        self._draws: list[int] = []  # tiles drawn (first first) for the operation pending
        self._pending: tuple[str, int] | None = None  # ("start"|"next"|"act", action) awaiting chance
        self._chance: tuple[str, list[tuple[int, float]]] | None = (DEAL, self._next_tiles(game))
        self._history: list[str] = [""] * game.num_players()  # per seat, the finished rounds as seen
        self._moves: list[tuple[int, int]] = []  # this round's (seat, action), as everyone saw them

    # --- the engine --------------------------------------------------------------------------

    @property
    def _game(self) -> DominoGame:
        game: DominoGame = self.get_game()
        return game

    def _next_tiles(self, game: DominoGame) -> list[tuple[int, float]]:
        """The next tile of the deal and its chance. A hand is a set: its tiles come in id order,
        the lowest of a uniform choice of the tiles it still needs (far fewer deal orders than
        tile by tile, the same hands with the same chances); where the order is part of the game
        (``rules.ordered_hands``: Blind's rows) every undealt tile is equally likely."""
        undealt = self._undealt(game)
        rules = game.rules
        if rules.ordered_hands:
            return uniform(undealt)
        placed = len(self._dealt) % rules.hand_size  # tiles of this hand dealt so far
        if placed:
            undealt = [t for t in undealt if t > self._dealt[-1]]
        need, left = rules.hand_size - placed, len(undealt)
        ways = math.comb(left, need)
        lowest = undealt[: left - need + 1]  # (a higher tile leaves too few for the rest of the hand)
        return [(t, math.comb(left - i - 1, need - 1) / ways) for i, t in enumerate(lowest)]

    def _undealt(self, game: DominoGame) -> list[int]:
        tiles = game.rules.tile_ids if game.grid else range(game.rules.tile_set.size)
        taken = set(self._dealt) | set(self._extra[:1])
        return [t for t in tiles if t not in taken]

    def _deal_dict(self, game: DominoGame) -> dict[str, Any]:
        """The round's deal as chance made it, as ``parse_deal`` reads it: the hands, then the
        boneyard with the draws chance chose for the operation pending first, the rest in id order."""
        rules = game.rules
        size, names = rules.hand_size, rules.tile_set.tiles
        kind = rules.kind_of if game.grid else list(range(rules.tile_set.size))

        def name(t: int) -> str:
            return format_tile(names[kind[t]])

        hands = [[name(t) for t in self._dealt[s * size : (s + 1) * size]] for s in range(rules.num_players)]
        rest = [t for t in self._undealt(game) if t not in self._draws]
        deal: dict[str, Any] = {"hands": hands, "boneyard": [name(t) for t in self._draws + rest]}
        if game.grid:
            start, side, leader = self._extra
            a, b = names[kind[start]]
            deal.update(start=f"{b}-{a}" if side else f"{a}-{b}", leader=leader)
        return deal

    def _run(self, operation: str, action: int = -1) -> None:
        """Run an operation on the engine (``start``: a new match, ``next``: the next round,
        ``act``: a player's action) with the chance outcomes known so far; where it needs one more
        (a lot, a draw), keep the engine as it was and make this node that chance node."""
        game = self._game
        rules = game.rules
        try:
            if operation == "act":
                assert self._engine is not None
                if not self._may_draw(self._engine.game):  # nothing to undo: play it in place
                    rules.apply(self._engine.game, action)
                    self._settled(self._engine.game)
                    return
                trial = self._engine.game.clone()
                trial.rng = ChanceStream(self._lots)
                # the draws chance chose for this action go on top of the stock (popped from the end)
                trial.stock = [t for t in trial.stock if t not in self._draws] + self._draws[::-1]
                stock = len(trial.stock)
                rules.apply(trial, action)
                drawn = stock - len(trial.stock)
                unseen = [t for t in sorted(self._engine.game.stock) if t not in self._draws]
            else:
                deal = rules.parse_deal(self._deal_dict(game))
                if operation == "start":
                    trial = rules.new_match(ChanceStream(self._lots), [deal])
                else:
                    assert self._engine is not None
                    trial = self._engine.game.clone()
                    trial.rng = ChanceStream(self._lots)
                    trial.fixed_deals = [None] * (trial.round_index + 1) + [deal]
                    rules.start_round(trial)
                drawn = sum(1 for event in trial.events if event[0] == DRAW)
                unseen = [t for t in self._undealt(game) if t not in self._draws]
        except NeedChance as need:
            self._pending = (operation, action)
            self._chance = (LOT, uniform(range(need.outcomes)))
            return
        if drawn > len(self._draws):  # it drew a tile chance has not chosen yet: ask chance first
            self._pending = (operation, action)
            self._chance = (DRAWN, uniform(unseen))
            return
        self._engine = _Engine(trial)
        self._settled(trial)

    def _may_draw(self, state: Any) -> bool:
        """Could the next action draw? Not from an empty stock, nor in a game without draws."""
        return bool(state.stock) and getattr(self._game.rules, "draws", True)

    def _settled(self, trial: Any) -> None:
        """The operation is done: no chance pending; at a round's end the next deal begins."""
        rules = self._game.rules
        self._pending, self._lots, self._draws, self._chance = None, [], [], None
        if trial.round_over and not self.is_terminal():  # the next round is dealt by chance
            for seat in range(rules.num_players):
                self._history[seat] += self._round_text(seat) + "\n"
            self._dealt, self._extra, self._moves = [], [], []
            self._chance = (DEAL, self._next_tiles(self._game))

    # --- what a seat knows -----------------------------------------------------------------

    def _round_text(self, seat: int) -> str:
        """This round as ``seat`` saw it: its hand as it can name it, what only it knows, the
        events, and the moves (an event may not tell them apart: a double laid face down);
        another seat's move of a private kind (``rules.private_action_kinds``: Blind blitz's
        ``arrange``, which tile went where in its row) is named by its kind only."""
        assert self._engine is not None
        rules = self._game.rules
        view = seat_view(rules, self._engine.game, seat, {})
        kinds, private = rules.action_kind, rules.private_action_kinds
        moves = [(s, a if s == seat or kinds[a] not in private else kinds[a]) for s, a in self._moves]
        known = f"hand {sorted(view.hand)} private {dict(view.private)}"
        return f"{known} events {list(view.events)} moves {moves}"

    def information_state_text(self, seat: int) -> str:
        """Everything ``seat`` has seen this match, with perfect recall (the module docstring)."""
        if self._engine is None or (self._chance is not None and self._chance[0] == DEAL):
            return f"p{seat} {self._history[seat]}dealing"
        return f"p{seat} {self._history[seat]}{self._round_text(seat)}"

    def observation_vector(self, seat: int) -> np.ndarray:
        """The environment's observation of ``seat`` here (zeros while the first deal is under way)."""
        game = self._game
        if self._engine is None:
            return np.zeros(game.tensor_size, np.float32)
        encoder = game.env.encoder
        encoder.forget()  # (it follows one game incrementally; this may be any state)
        return np.array(encoder.observe(self._engine.game, seat), dtype=np.float32)

    def env(self) -> DominoEnv[Any]:
        """The game's environment positioned here (a decision or the end), for agents and text:
        ``agent(state.env(), state.env().observe(agent_name))`` acts as in the environment."""
        if self._engine is None:
            raise ValueError("the deal is under way: no environment position until it is done")
        env = self._game.env
        env.restore(self._engine.game.clone(), dict(env.np_random.bit_generator.state))
        return env

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None) -> DominoState:
        """A state ``player_id`` cannot tell from this one (IS-MCTS samples them): the tiles it
        cannot name dealt anew, consistent with what it has seen, by the rules' sampler (the
        search agents' too: :meth:`~domino_env.rules.table.TableRules.sample_world`).
        ``probability_sampler`` (OpenSpiel's, a callable giving numbers in [0, 1)) seeds the
        deal; without one it is random."""
        if self._engine is None or self._chance is not None or self.is_terminal():
            raise ValueError("resample_from_infostate needs a decision: not a chance node nor the end")
        draw = probability_sampler() if callable(probability_sampler) else random.random()
        view = self.env().view(player_id)
        world = self._game.rules.sample_world(self._engine.game, view, random.Random(int(draw * 2**62)))
        other: DominoState = self.clone()
        other._engine = _Engine(world)
        return other

    # --- the OpenSpiel state API -------------------------------------------------------------

    def current_player(self) -> int:
        if self._chance is not None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        assert self._engine is not None
        return int(self._engine.game.current)

    def _legal_actions(self, player: int) -> list[int]:
        if self._chance is not None or self.is_terminal() or player != self.current_player():
            return []
        assert self._engine is not None
        return sorted(self._engine.game.legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        assert self._chance is not None, "not a chance node"
        return list(self._chance[1])

    def _apply_action(self, action: int) -> None:
        game = self._game
        if self._chance is None:
            player = self.current_player()
            legal = self._legal_actions(player)
            if action not in legal:
                raise ValueError(f"illegal action {action} for player {player}; legal: {legal}")
            self._moves.append((player, action))
            self._run("act", action)
            return
        kind, chances = self._chance
        outcomes = [o for o, _ in chances]
        if action not in outcomes:
            raise ValueError(f"chance outcome {action} is not one of this {kind} node's: {outcomes}")
        rules = game.rules
        if kind == DEAL:
            self._dealt.append(action)
            if len(self._dealt) < rules.num_players * rules.hand_size:
                self._chance = (DEAL, self._next_tiles(game))
            elif game.grid:
                self._chance = (START, uniform(self._undealt(game)))
            else:
                self._run("start" if self._engine is None else "next")
        elif kind == START:
            self._extra = [action]
            if rules.tile_set.is_double[rules.kind_of[action]]:
                self._extra.append(0)
                self._chance = (LEADER, uniform(range(rules.num_players)))
            else:
                self._chance = (SIDE, uniform([0, 1]))
        elif kind == SIDE:
            self._extra.append(action)
            self._chance = (LEADER, uniform(range(rules.num_players)))
        elif kind == LEADER:
            self._extra.append(action)
            self._run("start")
        else:
            (self._lots if kind == LOT else self._draws).append(action)
            assert self._pending is not None
            self._run(*self._pending)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            rules = self._game.rules
            kind = self._chance[0] if self._chance is not None else DEAL
            if kind in (LOT, LEADER):
                return f"{kind}: player_{action}"
            if kind == SIDE:
                return f"side: {'turned' if action else 'as dealt'}"
            tile = rules.kind_of[action] if self._game.grid else action
            copy = f" (set {action // rules.kind_size + 1})" if self._game.grid and rules.sets > 1 else ""
            return f"{kind}: {format_tile(rules.tile_set.tiles[tile])}{copy}"
        env = self.env()
        return f"player_{player}: {move_text(env.describe_action(action))}"

    def is_terminal(self) -> bool:
        if self._engine is None or self._pending is not None:
            return False
        state = self._engine.game
        return bool(state.round_over and (self._game.by_round or state.match_over))

    def returns(self) -> list[float]:
        if self._engine is None or not self.is_terminal():
            return [0.0] * self._game.num_players()
        rules, state = self._game.rules, self._engine.game
        keys = rules.round_keys(state) if self._game.by_round else rules.match_keys(state)
        by_side = rules.outcome(keys)
        return [float(by_side[side]) for side in rules.side_of]

    def __str__(self) -> str:
        if self._engine is None:
            return f"dealing {self._dealt}"
        return "\n".join(self.information_state_text(seat) for seat in range(self._game.num_players()))


class DominoObserver:
    """OpenSpiel's observer of a domino game: the observation vector as ``tensor``, and the
    perfect-recall information state or the table in words as the string."""

    def __init__(self, game: DominoGame, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(game.tensor_size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: DominoState, player: int) -> None:
        self.tensor[:] = state.observation_vector(player)

    def string_from(self, state: DominoState, player: int) -> str:
        if self.perfect_recall:
            return state.information_state_text(player)
        if state._engine is None:
            return f"p{player} dealing"
        return f"p{player} " + state.env().seat_text(player)


def uniform(outcomes: Iterable[int]) -> list[tuple[int, float]]:
    """Chance outcomes, equally likely."""
    outcomes = list(outcomes)
    return [(o, 1.0 / len(outcomes)) for o in outcomes]


def load_game(variant: str, **options: Any) -> DominoGame:
    """A variant and table (``options`` as for :func:`domino_env.make`, ``preset`` included) as
    an OpenSpiel game; an unknown variant or option raises the environment's ValueError."""
    return DominoGame(variant, options)
