"""The generic PettingZoo AEC environment: turns any rules object into a multi-agent env.

Nothing here knows a particular variant or kind of table. The rules run the game (including
forced draws and passes), an encoder writes observations, and :class:`DominoEnv` adds the RL
interface: spaces, action masks, rewards, episode boundaries. What depends on the kind of
table - its encoder, describing an action, the public state, rendering - is in a small
subclass per engine: :class:`~domino_env.envs.chain.ChainEnv` for the line of play,
:class:`~domino_env.envs.grid.Domino3DEnv` for the grid.

**Global state** (PettingZoo's ``state()`` and ``state_space``, for centralized critics): the
whole table as one float32 vector, never part of any observation. ``state_layout`` names its
blocks (T tiles, P players, O the observation size; seats counted in turn order from the
player to move, so the vector reads alike whoever is to move):

===========  =======  ===================================================================
name         size     meaning
===========  =======  ===================================================================
hands        P*T      1 for each tile in each hand (the player to move first)
stock        T        1 for each tile in the boneyard (a set: its order is chance's)
seat_k       O        the observation of the k-th seat from the player to move (k = 0..P-1),
                      laid out as ``observation_layout``: the layout, scores, hand sizes,
                      voids, phase and variant blocks as each seat knows them
===========  =======  ===================================================================
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from domino_env.core.view import SeatView
from domino_env.observation.chain import block_layout
from domino_env.observation.observer import Observer
from domino_env.render.frame import Sight
from domino_env.render.moves import move_text
from domino_env.rules.table import TableRules
from domino_env.rules.view import seat_view

EPISODES = ("match", "round")
REWARDS = ("outcome", "points")
ILLEGAL_ACTIONS = ("raise", "penalize")

RulesT = TypeVar("RulesT", bound=TableRules)


class Encoder(Protocol):
    """What the environment needs from an observation encoder."""

    size: int
    layout: dict[str, slice]

    def observe(self, state: Any, seat: int) -> np.ndarray:
        """The seat's observation row now, as a new array."""
        ...

    def forget(self) -> None: ...


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


def action_id_of(action: Any) -> int | None:
    """The action id an action stands for: an int, a numpy integer (0-d arrays too) or a float
    equal to one (some libraries pass floats); None for anything else (bools included)."""
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action.item()
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, (float, np.floating)) and float(action).is_integer():
        return int(action)
    return None


def checked_seed(seed: Any) -> int | None:
    """``seed`` as reset takes it: None, or a non-negative int (a numpy integer too, made an int;
    a bool is no seed); anything else a ValueError saying what is allowed (gymnasium's own
    error is no ValueError and names no allowed values)."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)


class DominoEnv(AECEnv, Generic[RulesT]):
    """A domino variant as a PettingZoo AEC environment with action masks.

    Options: ``episode`` ("match" or "round"), ``reward`` ("outcome": +1 win / -1 loss,
    ranks in between, partners share; "points": score changes / match target, signed so
    that more is better), ``render_mode`` (``render_modes``) and ``illegal_action``
    ("raise" a ValueError and change nothing, or "penalize": -1 and the episode ends).
    ``observer`` is the variant's :class:`~domino_env.observation.observer.Observer` class (its
    ``VariantSpec.observer``; None: no variant blocks), built here for the encoder.
    """

    render_modes: ClassVar[tuple[str, ...]] = ("human", "ansi", "rgb_array")
    # The observation encoder of the kind of table (set by each engine's subclass), built from
    # the rules and the observer.
    encoder_class: ClassVar[type]

    def __init__(
        self,
        rules: RulesT,
        episode: str = "match",
        reward: str = "outcome",
        render_mode: str | None = None,
        illegal_action: str = "raise",
        observer: type[Observer] | None = None,
    ) -> None:
        super().__init__()
        self.rules = rules
        self.episode = _choice("episode", episode, EPISODES)
        self.reward_mode = _choice("reward", reward, REWARDS)
        self.illegal_action = _choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        if render_mode is not None:
            _choice("render_mode", render_mode, self.render_modes)
        self.render_mode = render_mode
        self.metadata = {
            "render_modes": list(self.render_modes),
            "name": rules.name,  # the registry adds the version: "<name>_v<N>"
            "is_parallelizable": False,
        }
        n = rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.observer = None if observer is None else observer(rules)
        self.encoder: Encoder = self.encoder_class(rules, self.observer)
        obs_high = rules.observation_high
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, obs_high, (self.encoder.size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (rules.num_actions,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(rules.num_actions) for agent in self.possible_agents}
        tiles = rules.tile_set.size
        seats = [(f"seat_{k}", self.encoder.size) for k in range(n)]
        self._state_layout, size = block_layout([("hands", n * tiles), ("stock", tiles), *seats])
        self.state_space = spaces.Box(0.0, max(1.0, obs_high), (size,), np.float32)
        self._tile_bits = [1 << t for t in range(tiles)]
        self._zeros = dict.fromkeys(self.possible_agents, 0.0)  # copied at reset: cheaper than building
        self._falses = dict.fromkeys(self.possible_agents, False)
        self._zero_mask = np.zeros(rules.num_actions, dtype=np.int8)
        self._zero_mask.setflags(write=False)
        self._mask_snapshot = self._zero_mask
        self._mask_owner = ""
        self._points = self.reward_mode == "points"
        self._reward_scale = (-1.0 if rules.lower_score_wins else 1.0) / rules.match_target
        self.np_random, _ = seeding.np_random(None)
        self.game: Any = None

    # --- PettingZoo API ----------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def observation_layout(self) -> dict[str, slice]:
        """Name -> slice of the flat observation vector (see the encoder's docstring)."""
        return dict(self.encoder.layout)

    @property
    def state_layout(self) -> dict[str, slice]:
        """Name -> slice of the :meth:`state` vector (the module docstring)."""
        return dict(self._state_layout)

    @property
    def round_index(self) -> int:
        """Rounds finished in the match so far (``public_state()["round"]``, without building it)."""
        return int(self._game_in_progress("round_index").round_index)

    @property
    def side_scores(self) -> tuple[int, ...]:
        """Each side's match score (seats: ``rules.side_of``), as ``public_state()`` shows it."""
        return tuple(self._game_in_progress("side_scores").scores)

    def _game_in_progress(self, what: str) -> Any:
        """The game, for ``what`` (a call that reads it); before the first reset() a clear
        ValueError instead of an attribute error from deep inside the engine."""
        if self.game is None:
            raise ValueError(f"{what} needs a game in progress: call reset() first")
        return self.game

    def state(self) -> np.ndarray:
        """The whole table, every hand and the boneyard included (the module docstring): for
        a critic that learns from what no player sees; a new array each call."""
        game = self._game_in_progress("state()")
        n, bits, tiles = len(self.possible_agents), self._tile_bits, len(self._tile_bits)
        out = np.zeros(self.state_space.shape, np.float32)
        order = [(game.current + k) % n for k in range(n)]
        hands = out[self._state_layout["hands"]].reshape(n, tiles)
        for row, seat in enumerate(order):
            hand = game.hands[seat]
            hands[row] = [hand & bit != 0 for bit in bits]
        out[self._state_layout["stock"]][game.stock] = 1.0
        for k, seat in enumerate(order):
            out[self._state_layout[f"seat_{k}"]] = self.encoder.observe(game, seat)
        return out

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        deals = self._read_options(options)  # validate before touching anything
        seed = checked_seed(seed)
        if seed is not None or self.game is None:
            self.np_random, _ = seeding.np_random(seed)
        self.game = self.rules.new_match(deals, self.np_random)
        self.rules.resolve(self.game, self.np_random)
        self.encoder.forget()
        self.agents = self.possible_agents[:]
        self.rewards = self._zeros.copy()
        self._cumulative_rewards = self._zeros.copy()
        self.terminations = self._falses.copy()
        self.truncations = self._falses.copy()
        # Each agent's info while another moves, made once an episode (the mask moves at every step).
        self._idle_infos = {agent: {"action_mask": self._zero_mask} for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = dict(self._idle_infos)
        self._rewarded = False
        self.agent_selection = self.agents[self.game.current]
        self._show_mask()
        if self.render_mode == "human":
            self.render()

    def _read_options(self, options: Mapping[str, Any] | None) -> list[Any]:
        if options is None:
            return []
        if not isinstance(options, Mapping):
            raise ValueError(f"reset options must be a dict (keys deal or deals), got {options!r}")
        unknown = set(options) - {"deal", "deals"}
        if unknown:  # a warning, not an error: PettingZoo's api_test resets with foreign options
            warnings.warn(
                f"ignoring unknown reset option(s) {sorted(unknown)}; known: deal, deals", stacklevel=3
            )
        if "deal" in options and "deals" in options:
            raise ValueError("give either options['deal'] or options['deals'], not both")
        if options.get("deal") is not None:
            return [self.rules.parse_deal(options["deal"])]
        deals = options.get("deals") or []
        if isinstance(deals, Mapping) or not isinstance(deals, (list, tuple)):
            raise ValueError(f"options['deals'] must be a list of deals, got {deals!r}")
        return [self.rules.parse_deal(deal) for deal in deals]

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.game is None:  # (no agent_selection yet)
            self._game_in_progress("last()")
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self.game is None:
            self._game_in_progress("observe()")
        mask = self._mask_snapshot if agent == self.agent_selection else self._zero_mask
        try:
            seat = self._seat[agent]
        except KeyError:
            raise ValueError(f"unknown agent {agent!r}; agents: {', '.join(self.possible_agents)}") from None
        return {"observation": self.encoder.observe(self.game, seat), "action_mask": mask}

    def step(self, action: Any) -> None:
        game = self.game
        if game is None:
            self._game_in_progress("step()")
        agent = self.agent_selection
        action_id = action if type(action) is int else action_id_of(action)
        if action_id is None or action_id not in game.legal:
            if self.terminations[agent] or self.truncations[agent]:  # (a finished game has no legal action)
                self._was_dead_step(action)
            else:
                self._illegal(agent, action)
            return
        if self._rewarded:
            for a in self.agents:
                self.rewards[a] = 0.0
            self._rewarded = False
        self._cumulative_rewards[agent] = 0.0
        before = game.scores[:] if self._points else game.scores
        self.rules.apply(game, action_id)
        if game.round_over:
            if self.episode == "round" or game.match_over:
                self._end_episode(before)
                return
            self._points_reward(before)
            self.rules.start_round(game, self.np_random)
            self.rules.resolve(game, self.np_random)
        elif self._points and game.scores != before:
            self._points_reward(before)
        self.agent_selection = self.agents[game.current]
        self._show_mask()
        if self._rewarded:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _show_mask(self) -> None:
        """Point the mask and the infos at the legal actions of the agent to move."""
        mask = self._zero_mask.copy()
        for a in self.game.legal:
            mask[a] = 1
        self._mask_snapshot = mask
        infos = self.infos
        if self._mask_owner in infos:
            infos[self._mask_owner] = self._idle_infos[self._mask_owner]
        self._mask_owner = owner = self.agent_selection
        infos[owner] = {"action_mask": mask}

    def _points_reward(self, before: list[int]) -> None:
        if not self._points:
            return
        side_of = self.rules.side_of
        for seat, agent in enumerate(self.agents):
            side = side_of[seat]
            self.rewards[agent] += (self.game.scores[side] - before[side]) * self._reward_scale
        self._rewarded = True

    def _end_episode(self, before: list[int]) -> None:
        if self.reward_mode == "points":
            self._points_reward(before)
        else:
            for agent, outcome in zip(self.agents, self.outcomes(), strict=True):
                self.rewards[agent] = outcome
            self._rewarded = True
        self._finish()

    def _finish(self) -> None:
        for agent in self.agents:
            self.terminations[agent] = True
        self.game.legal = []
        self._show_mask()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _illegal(self, agent: str, action: Any) -> None:
        legal = self.game.legal
        if self.illegal_action == "penalize":
            for a in self.agents:
                self.rewards[a] = -1.0 if a == agent else 0.0
            self._cumulative_rewards[agent] = 0.0
            self._rewarded = True
            self._finish()
            self.infos[agent] = {**self.infos[agent], "illegal_action": action}
            return
        action_id = action_id_of(action)
        num_actions = self.rules.num_actions
        if action_id is None or not 0 <= action_id < num_actions:
            what = repr(action)
            why = f"an action is an action id, an int in 0..{num_actions - 1}"
        else:  # the rules say why: which tile, where, what they require
            what = f"{action_id} ({move_text(self.describe_action(action_id))})"
            why = self.rules.illegal_reason(self.game, action_id, agent)
        options = ", ".join(f"{a} ({move_text(self.describe_action(a))})" for a in legal)
        raise ValueError(f"illegal action {what} for {agent}: {why}; legal actions: {options}")

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        self._game_in_progress("render()")
        if self.render_mode == "rgb_array":
            return self.table_image()
        text = self.table_text()
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass

    def restore(self, game: Any, rng_state: dict[str, Any]) -> None:
        """Continue from a saved match (``env.game`` and ``env.np_random.bit_generator.state``
        as taken between two steps), e.g. to resume training exactly. Anything that is not a
        match of this table (its state's kind and players) raises ValueError, leaving the env
        reset to a new match."""
        self.reset()
        fresh = self.game
        if (
            type(game) is not type(fresh)
            or game.num_players != fresh.num_players
            or not 0 <= game.current < fresh.num_players
        ):
            raise ValueError(
                f"not a game in progress of this table ({self.rules.name}, {fresh.num_players} "
                f"players): a {type(game).__name__}"
            )
        self.np_random.bit_generator.state = rng_state
        game.shuffled = True  # (the env's stock decides its draws: a game saved by an older version too)
        self.game = game
        self.encoder.forget()
        self.agent_selection = self.agents[game.current]
        self._show_mask()

    # --- introspection -----------------------------------------------------------------------

    def outcomes(self) -> list[float]:
        """Each seat's outcome reward for the episode as it stands (+1 first ... -1 last, ties
        sharing, partners alike), whatever ``reward`` the env was built with: what ``reward=
        "outcome"`` pays at the end, and what evaluations count."""
        rules, game = self.rules, self.game
        if game is None:
            self._game_in_progress("outcomes()")
        by_side = rules.outcome(rules.round_keys(game) if self.episode == "round" else rules.match_keys(game))
        return [by_side[side] for side in rules.side_of]

    def view(self, seat: int | str) -> SeatView:
        """What ``seat`` (a seat number or an agent name) knows now, as a read-only
        :class:`~domino_env.core.view.SeatView`: the information state search agents sample
        from and players' front ends draw."""
        self._game_in_progress("view()")
        if isinstance(seat, str):
            if seat not in self._seat:
                raise ValueError(f"unknown agent {seat!r}; agents: {', '.join(self.possible_agents)}")
            seat = self._seat[seat]
        return seat_view(self.rules, self.game, seat, self.public_state())

    def table_text(self, names: list[str] | None = None) -> str:
        """The whole table in words, every hand shown (``render_mode="ansi"``'s picture), players
        called ``names`` (default: the agent names)."""
        game = self._game_in_progress("table_text()")
        return self.renderer.render_text(self.rules, game, names or self.possible_agents)

    def table_image(
        self, names: list[str] | None = None, seat: int | str | None = None, reveal: bool = False
    ) -> np.ndarray:
        """The whole table as a picture, a new (H, W, 3) uint8 array of one size all episode
        (``render_mode="rgb_array"``'s frame), players called ``names`` (default: the agent
        names) where the picture names them. Given a ``seat``, drawn as that seat sees it (its
        :meth:`view`): the tiles it cannot name as backs, or with ``reveal`` face up but dimmed
        (marked unseen), and the events as it saw them; a front end shows a person this."""
        self._game_in_progress("table_image()")
        sight = None
        if seat is not None:
            view = self.view(seat)
            sight = Sight(view.seat, view.known_hands, view.events, reveal)
        return self._render_rgb(names or self.possible_agents, sight)

    def seat_text(self, seat: int | str, names: list[str] | None = None) -> str:
        """The table in words as ``seat`` sees it (drawn from its :meth:`view`; no recent events),
        players called ``names`` (default: the agent names): what a person at that seat reads."""
        return self.renderer.seat_text(self.rules, self.view(seat), names or self.possible_agents)

    def event_text(self, event: tuple[Any, ...], names: list[str] | None = None) -> str | None:
        """An event of this table (of a view's ``events``) in words; None for one it leaves
        unsaid (the deal and the round's end, which the scores and the header tell). A draw
        names its tile where the event does (a view's: to the drawer, not to the others)."""
        return self.renderer.event_text(self.rules, event, names or self.possible_agents)

    def legal_moves(self) -> list[dict[str, Any]]:
        """The legal moves of the agent to move, described as by :meth:`describe_action`."""
        return [self.describe_action(a) for a in self._game_in_progress("legal_moves()").legal]

    def describe_action(self, action: Any) -> dict[str, Any]:
        """What an action id means in the current position (the keys depend on the table)."""
        rules = self.rules
        if (
            isinstance(action, bool)
            or not isinstance(action, (int, np.integer))
            or not 0 <= action < rules.num_actions
        ):
            raise ValueError(f"action must be an int in 0..{rules.num_actions - 1}, got {action!r}")
        return self._describe(int(action))

    def immediate_points(self, action: Any) -> int:
        """The points a legal action of the agent to move scores at once (All Fives' count of
        the ends, 3D dominoes' placement), as the rules count them; 0 in games that score none
        during play. Front ends show it beside the move; an action that is not legal now raises."""
        legal = self._game_in_progress("immediate_points()").legal
        if isinstance(action, bool) or action not in legal:
            raise ValueError(
                f"immediate_points() takes a legal action of the agent to move; {action!r} is not one "
                f"(legal: {', '.join(map(str, sorted(legal))) or 'none'})"
            )
        return int(self.rules.immediate_points(self.game, int(action)))

    # --- what the kind of table decides (a subclass per engine) ------------------------------

    def _describe(self, action: int) -> dict[str, Any]:
        """:meth:`describe_action` of a valid action id."""
        raise NotImplementedError

    def public_state(self) -> dict[str, Any]:
        """What everyone at the table can see, in plain Python types."""
        return self._public_state(self._game_in_progress("public_state()"))

    def _public_state(self, game: Any) -> dict[str, Any]:
        """:meth:`public_state` of a game in progress."""
        raise NotImplementedError

    def _render_rgb(self, names: list[str], sight: Sight | None) -> np.ndarray:
        """:meth:`table_image`'s picture (``sight``: drawn as that seat sees it)."""
        raise NotImplementedError
