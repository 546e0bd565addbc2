"""A single-agent Gymnasium view of a domino table, for single-agent RL libraries.

The learner plays one seat; fixed agents (baselines, or callables such as a trained
checkpoint's policy) play the others inside :meth:`SingleAgentEnv.step`, so the learner only
ever sees its own turns. It has ``action_masks()``, which is all sb3-contrib's ``MaskablePPO`` needs::

    from sb3_contrib import MaskablePPO
    from domino_env.wrappers import SingleAgentEnv

    env = SingleAgentEnv("all_fives", opponents="greedy", num_players=2, episode="round")
    model = MaskablePPO("MlpPolicy", env, seed=0).learn(50_000)  # finds env.action_masks() itself
    obs, info = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)

Unlike the AEC environment's dict (``obs["observation"]``, ``obs["action_mask"]``), its
observation is the learner's flat float32 vector alone; the mask is ``info["action_mask"]``
(a bool array, after ``reset`` and every ``step``) and ``env.action_masks()``.
``gymnasium.make("domino_env/AllFives-v0", opponents=["greedy"])`` builds the same env inside
Gymnasium's wrappers, with :class:`ActionMasks` outermost, so ``env.action_masks()`` works
on what ``gymnasium.make`` returns too (and ``env.get_wrapper_attr("action_masks")()``, the
way MaskablePPO asks, under any further wrappers of yours).
"""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from domino_env.agents import AGENTS, SEARCH_NAMES, is_builtin, make_agent
from domino_env.envs.base import DominoEnv, checked_seed
from domino_env.registry import raw_env

AgentFn = Callable[[DominoEnv, dict[str, np.ndarray]], int]
#: A baseline name ("random", "greedy"), an agent callable ``(env, observation) -> action``,
#: or any other name ``domino_env.agents.make_agent`` takes (with the train extra: the path of
#: a checkpoint or a run folder).
AgentSpec = str | os.PathLike[str] | AgentFn


class LegalDiscrete(spaces.Discrete):
    """``Discrete`` whose ``sample()`` without a mask draws a *legal* action.

    Quick random rollouts step with ``action_space.sample()``, and an illegal action raises;
    with a mask or probabilities given it samples as usual. (Gymnasium's ``check_env`` also
    steps with an action it drew *before* a reset, which no mask can make legal: run it on an
    env with ``illegal_action="penalize"``.)
    Pickling drops the link to the env (it would drag the whole table, opponents included,
    into saved models): an unpickled space samples from all actions.
    """

    def __init__(self, n: int, legal: Callable[[], np.ndarray] | None = None) -> None:
        super().__init__(n)
        self._legal = legal

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None and self._legal is not None:
            legal = self._legal().astype(np.int8)
            if legal.any():
                return super().sample(mask=legal)
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_legal"] = None
        return state

    def __deepcopy__(self, memo: dict[int, Any]) -> LegalDiscrete:
        # deepcopy (unlike pickle) keeps the link, pointed at the copied env
        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new


class ActionMasks(gym.Wrapper[np.ndarray, np.int64, np.ndarray, np.int64], gym.utils.RecordConstructorArgs):
    """Passes everything through and adds ``action_masks()``, the legal actions of the env inside.

    Gymnasium 1.x wrappers forward no attribute of the env they wrap, so the ``OrderEnforcing``
    and ``PassiveEnvChecker`` that ``gymnasium.make`` adds hide :meth:`SingleAgentEnv.action_masks`;
    the registered ids put this wrapper outermost (their ``additional_wrappers``), so the env
    ``gymnasium.make`` returns has ``action_masks()`` again. Wrapping it further hides it again:
    ``env.get_wrapper_attr("action_masks")()`` (MaskablePPO's own lookup) reaches it through any
    wrapper.
    """

    def __init__(self, env: gym.Env[np.ndarray, np.int64]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)  # recreatable from env.spec
        gym.Wrapper.__init__(self, env)

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions now (the inner env's ``action_masks()``)."""
        masks: np.ndarray = self.env.get_wrapper_attr("action_masks")()
        return masks


class SingleAgentEnv(gym.Env[np.ndarray, np.int64]):
    """One seat of a domino variant as a ``gymnasium.Env``; fixed agents play the other seats.

    ``opponents`` is one agent spec for every other seat, or a list per seat: either
    ``num_players`` entries with ``None`` at ``seat``, or ``num_players - 1`` entries for the
    other seats in seat order. With ``teams=True`` the learner's partner is played by the
    opponents' agent for that seat unless ``partner`` is given. A name builds a fresh agent
    per seat; a callable is used as given; any other name (a checkpoint path) is loaded once by
    ``domino_env.agents.make_agent`` (the trainer's loader, so ``domino_env`` needs no torch).

    ``reset`` runs the other seats until the learner must act (an episode that ends before
    the learner's first decision, possible in block games, is skipped and counted in
    ``skipped_episodes``; rewards before the first decision are dropped - nobody chose
    anything). ``step`` applies the learner's action and runs the other seats until the
    learner must act again or the episode ends; its reward is everything the learner's seat
    received since its previous action, the final outcome included. A seeded reset also
    reseeds every agent with an ``rng`` (``random.Random``, as the baselines have), so a
    seeded episode is reproducible. ``agents[s]`` is the agent playing seat ``s`` (``None``
    for the learner) and ``aec`` the underlying :class:`~domino_env.envs.base.DominoEnv`.

    Remaining ``options`` go to :func:`domino_env.raw_env` (``num_players``, ``teams``,
    ``episode``, ``reward``, ``illegal_action``, ``render_mode`` ...). An illegal action
    raises the env's ``ValueError`` and changes nothing (``illegal_action="penalize"``
    ends the episode with -1 instead).
    """

    # gymnasium.make checks a render mode against the class's list (every table's modes); an
    # instance has its table's own, and a mode the table lacks is refused by the table
    metadata = {"render_modes": ["ansi", "human", "rgb_array"]}  # noqa: RUF012

    def __init__(
        self,
        variant: str,
        opponents: AgentSpec | Sequence[AgentSpec | None] = "random",
        seat: int = 0,
        partner: AgentSpec | None = None,
        **options: Any,
    ) -> None:
        self.aec: DominoEnv = raw_env(variant, **options)
        rules = self.aec.rules
        n = rules.num_players
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            raise ValueError(f"seat must be an int in 0..{n - 1}, got {seat!r}")
        self.seat = seat
        self.render_mode: str | None = self.aec.render_mode
        self.metadata = {"render_modes": list(self.aec.render_modes)}
        self._me = self.aec.possible_agents[seat]
        self._seats = {agent: i for i, agent in enumerate(self.aec.possible_agents)}
        self.agents: list[AgentFn | None] = self._build_agents(opponents, partner)
        # agents with a random.Random to reseed on seeded resets, each once even if shared
        self._seeded: list[Any] = list(
            {id(a): a for a in self.agents if isinstance(getattr(a, "rng", None), random.Random)}.values()
        )
        space = self.aec.observation_spaces[self._me]["observation"]
        assert isinstance(space, spaces.Box)
        self.observation_space = spaces.Box(space.low, space.high, space.shape, np.float32)
        self.action_space = LegalDiscrete(rules.num_actions, self.action_masks)
        self.skipped_episodes = 0
        self._started = False

    # --- set-up -------------------------------------------------------------------------------

    def _build_agents(
        self, opponents: AgentSpec | Sequence[AgentSpec | None], partner: AgentSpec | None
    ) -> list[AgentFn | None]:
        """The agent of every seat (``None`` at the learner's), from the specs."""
        n, seat = self.aec.rules.num_players, self.seat
        specs: list[AgentSpec | None]
        if isinstance(opponents, (str, os.PathLike)) or callable(opponents):
            specs = [None if s == seat else opponents for s in range(n)]
        elif not isinstance(opponents, Sequence):
            raise ValueError(f"opponents must be an agent or a list of agents, got {opponents!r}")
        else:
            given = list(opponents)
            if len(given) == n:
                if given[seat] is not None:
                    raise ValueError(f"opponents[{seat}] is the learner's seat and must be None")
                specs = given
            elif len(given) == n - 1:
                specs = [*given[:seat], None, *given[seat:]]
            else:
                raise ValueError(
                    f"opponents must be one agent, or a list of {n} (None at seat {seat}) "
                    f"or {n - 1} (the other seats), got {len(given)}"
                )
            missing = [s for s, spec in enumerate(specs) if spec is None and s != seat]
            if missing:
                raise ValueError(f"opponents gives no agent for seat(s) {missing}")
        if partner is not None:
            side_of = self.aec.rules.side_of
            mates = [s for s in range(n) if s != seat and side_of[s] == side_of[seat]]
            if not mates:
                raise ValueError("partner is given but the learner has no partner (use teams=True)")
            for s in mates:
                specs[s] = partner
        loaded: dict[str, AgentFn] = {}
        return [None if spec is None else self._agent(spec, loaded) for spec in specs]

    def _agent(self, spec: AgentSpec, loaded: dict[str, AgentFn]) -> AgentFn:
        if isinstance(spec, str) and is_builtin(spec):  # a baseline, search or search:N
            return make_agent(spec)  # one per seat: independent random streams
        if isinstance(spec, (str, os.PathLike)):
            key = str(spec)
            if key not in loaded:  # a checkpoint is loaded once for every seat it plays
                loaded[key] = make_agent(key, env=self.aec)
            return loaded[key]
        if callable(spec):
            return spec
        raise ValueError(
            f"an agent must be a baseline name ({', '.join(AGENTS)}, {SEARCH_NAMES}), a callable or a path, "
            f"got {spec!r}"
        )

    # --- gymnasium API ------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode (``options`` as for the AEC env: ``deal``/``deals``) and play the
        other seats up to the learner's first decision."""
        super().reset(seed=checked_seed(seed))  # (gymnasium's own error is no ValueError)
        env_seed: int | None = None
        if seed is not None:
            env_seed = int(self.np_random.integers(2**63))
            for agent in self._seeded:
                agent.rng.seed(int(self.np_random.integers(2**63)))
        while True:
            self.aec.reset(seed=env_seed, options=options)
            env_seed = None  # a skipped episode continues the same random stream
            self._play_others()
            if not self.aec.terminations[self._me]:
                break
            self.skipped_episodes += 1
        self._started = True
        return self._observation(), {"action_mask": self.action_masks()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the other seats' moves; the learner's reward since its last move."""
        aec = self.aec
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if aec.terminations[self._me] or aec.truncations[self._me]:
            raise RuntimeError("the episode is over; call reset()")
        if aec.agent_selection != self._me:  # pragma: no cover - reset/step always leave it there
            raise RuntimeError(f"{aec.agent_selection} is to move, not the learner {self._me}")
        aec.step(action)  # an illegal action raises here, before anything changes
        reward = float(aec.rewards[self._me]) + self._play_others()
        return (
            self._observation(),
            reward,
            bool(aec.terminations[self._me]),
            bool(aec.truncations[self._me]),
            {"action_mask": self.action_masks()},
        )

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions now (what MaskablePPO asks for); all False once over."""
        mask = np.zeros(self.aec.rules.num_actions, dtype=bool)
        aec = self.aec
        if self._started and aec.agent_selection == self._me and not aec.terminations[self._me]:
            mask[aec.game.legal] = True
        return mask

    def render(self) -> str | np.ndarray | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    # --- internals ----------------------------------------------------------------------------

    def _play_others(self) -> float:
        """Let the other seats move until the learner must act or the episode ends; the
        learner's rewards meanwhile."""
        aec, me, seats, agents = self.aec, self._me, self._seats, self.agents
        reward = 0.0
        while not aec.terminations[me] and aec.agent_selection != me:
            current = aec.agent_selection
            agent = agents[seats[current]]
            assert agent is not None
            aec.step(agent(aec, aec.observe(current)))
            reward += aec.rewards[me]
        return reward

    def _observation(self) -> np.ndarray:
        return self.aec.encoder.observe(self.aec.game, self.seat)
