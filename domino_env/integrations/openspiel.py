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

* **Chance nodes** are the rules' chance points one to one (``state.chance``,
  ``rules.chance_outcomes`` and ``rules.apply_chance``; the stock is never shuffled here), so
  they cover everything the environment leaves to chance, in the order it happens:
  the deal, one tile at a time (seat 0's hand first, a hand's tiles in id order with the
  chances that keep every hand equally likely, uniform where the order is part of the game:
  Blind's rows; a 3D game then its start tile, the side it lies and who moves first), a leader drawn
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

import random
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - the message is the point
    raise ImportError(
        'domino_env.integrations.openspiel needs OpenSpiel: pip install "domino-env[openspiel]"'
    ) from err

from domino_env.core.tiles import format_tile
from domino_env.envs.base import DominoEnv
from domino_env.registry import preset_options, raw_env, spec
from domino_env.render.moves import move_text
from domino_env.rules.table import DEAL_TILE, LEADER, LOT, SIDE, START
from domino_env.rules.view import seat_view

MAX_ROUNDS = 200  # the bound on a match's rounds behind ``max_game_length`` (never reached in play)
DEALING = frozenset({DEAL_TILE, START, SIDE, LEADER})  # the chance points of a deal under way


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
        the least an exact walk of the game tree must cover (``rules.num_deals``)."""
        return self.rules.num_deals()

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
    """One position: the engine's match state, its chance points the chance nodes."""

    def __init__(self, game: DominoGame) -> None:
        super().__init__(game)
        self._engine = _Engine(game.rules.new_match())  # (waiting on the deal's first tile)
        self._history: list[str] = [""] * game.num_players()  # per seat, the finished rounds as seen
        self._moves: list[tuple[int, int]] = []  # this round's (seat, action), as everyone saw them

    # --- the engine --------------------------------------------------------------------------

    @property
    def _game(self) -> DominoGame:
        game: DominoGame = self.get_game()
        return game

    def _dealing(self) -> bool:
        return self._engine.game.chance in DEALING

    def _settled(self) -> None:
        """After a move or a chance outcome: at a round's end in a match, the next deal begins."""
        state = self._engine.game
        if state.round_over and state.chance is None and not self.is_terminal():
            for seat in range(self._game.num_players()):
                self._history[seat] += self._round_text(seat) + "\n"
            self._moves = []
            self._game.rules.start_round(state)

    # --- what a seat knows -----------------------------------------------------------------

    def _round_text(self, seat: int) -> str:
        """This round as ``seat`` saw it: its hand as it can name it, what only it knows, the
        events, and the moves (an event may not tell them apart: a double laid face down);
        another seat's move of a private kind (``rules.private_action_kinds``: Blind blitz's
        ``arrange``, which tile went where in its row) is named by its kind only."""
        rules = self._game.rules
        view = seat_view(rules, self._engine.game, seat, {})
        kinds, private = rules.action_kind, rules.private_action_kinds
        moves = [(s, a if s == seat or kinds[a] not in private else kinds[a]) for s, a in self._moves]
        known = f"hand {sorted(view.hand)} private {dict(view.private)}"
        return f"{known} events {list(view.events)} moves {moves}"

    def information_state_text(self, seat: int) -> str:
        """Everything ``seat`` has seen this match, with perfect recall (the module docstring)."""
        if self._dealing():
            return f"p{seat} {self._history[seat]}dealing"
        return f"p{seat} {self._history[seat]}{self._round_text(seat)}"

    def observation_vector(self, seat: int) -> np.ndarray:
        """The environment's observation of ``seat`` here (zeros while a deal is under way)."""
        game = self._game
        if self._dealing():
            return np.zeros(game.tensor_size, np.float32)
        encoder = game.env.encoder
        encoder.forget()  # (it follows one game incrementally; this may be any state)
        return np.array(encoder.observe(self._engine.game, seat), dtype=np.float32)

    def env(self) -> DominoEnv[Any]:
        """The game's environment positioned here (a decision or the end), for agents and text:
        ``agent(state.env(), state.env().observe(agent_name))`` acts as in the environment."""
        if self._dealing():
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
        if self.is_chance_node() or self.is_terminal():
            raise ValueError("resample_from_infostate needs a decision: not a chance node nor the end")
        draw = probability_sampler() if callable(probability_sampler) else random.random()
        view = self.env().view(player_id)
        world = self._game.rules.sample_world(self._engine.game, view, random.Random(int(draw * 2**62)))
        world.shuffled = False  # (its draws stay chance nodes)
        other: DominoState = self.clone()
        other._engine = _Engine(world)
        return other

    # --- the OpenSpiel state API -------------------------------------------------------------

    def current_player(self) -> int:
        if self._engine.game.chance is not None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        return int(self._engine.game.current)

    def _legal_actions(self, player: int) -> list[int]:
        if self.is_chance_node() or self.is_terminal() or player != self.current_player():
            return []
        return sorted(self._engine.game.legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        assert self.is_chance_node(), "not a chance node"
        return self._game.rules.chance_outcomes(self._engine.game)

    def _apply_action(self, action: int) -> None:
        rules, state = self._game.rules, self._engine.game
        if state.chance is not None:
            rules.apply_chance(state, action)
        else:
            player = self.current_player()
            legal = self._legal_actions(player)
            if action not in legal:
                raise ValueError(f"illegal action {action} for player {player}; legal: {legal}")
            self._moves.append((player, action))
            rules.apply(state, action)
        self._settled()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            rules = self._game.rules
            kind = self._engine.game.chance
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
        state = self._engine.game
        return bool(state.chance is None and state.round_over and (self._game.by_round or state.match_over))

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._game.num_players()
        rules, state = self._game.rules, self._engine.game
        keys = rules.round_keys(state) if self._game.by_round else rules.match_keys(state)
        by_side = rules.outcome(keys)
        return [float(by_side[side]) for side in rules.side_of]

    def __str__(self) -> str:
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
        if state._dealing():
            return f"p{player} dealing"
        return f"p{player} " + state.env().seat_text(player)


def load_game(variant: str, **options: Any) -> DominoGame:
    """A variant and table (``options`` as for :func:`domino_env.make`, ``preset`` included) as
    an OpenSpiel game; an unknown variant or option raises the environment's ValueError."""
    return DominoGame(variant, options)
