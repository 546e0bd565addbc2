"""RLlib (Ray) support: every variant as a multi-agent env with action masks, and masked PPO.

Needs the ``ray`` extra (``pip install "domino-env[ray]"``). On RLlib's current API stack::

    from domino_env.integrations.rllib import ppo_config

    config = ppo_config("all_fives", {"num_players": 2, "episode": "round"})  # a PPOConfig
    algo = config.build_algo()
    for _ in range(10):
        print(algo.train()["env_runners"]["episode_return_mean"])

* :class:`DominoMultiAgentEnv` is an ``rllib.MultiAgentEnv`` over any variant
  (``env_config = {"variant": ..., **options}``, options as for :func:`domino_env.make`).
  Each observation is a dict ``{"observations": float32 vector, "action_mask": float32 0/1}``
  (the layout RLlib's action-masking examples use), given only to the seat to move.
  Every step reports every seat's reward, so a seat's rewards between two of its decisions
  (the others' moves, the final outcome) are credited to its last action: RLlib's episodes
  keep that action "hanging" until the seat's next observation, which gives the same
  turn-based transitions as ``training/rl/rollout.py``. At the end every seat gets a final
  observation and ``terminated``.
* :func:`register_envs` registers every variant under :func:`env_name` (``domino_<variant>``).
* :class:`MaskedPPOTorchRLModule` is RLlib's default PPO torch module with illegal actions'
  logits replaced by a large negative number (zero probability) when acting and in the loss.
* :func:`ppo_config` puts it together: one shared module (``"shared"``) for every seat (self-play
  with parameter sharing), the masked module, and :class:`MaskedActionCounter`, which checks
  every sampled action against the mask it was sampled under and reports
  ``masked_actions_sampled`` and ``actions_checked`` in ``result["env_runners"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from domino_env.envs.base import DominoEnv
from domino_env.registry import VARIANTS, raw_env
from domino_env.wrappers import LegalDiscrete

OBS = "observations"
MASK = "action_mask"
MASKED_LOGIT = -1e8  # as training.model.networks: exp() of it is exactly 0 next to any legal logit
SHARED = "shared"


def variant_env(variant: str = "all_fives", **options: Any) -> tuple[str, DominoEnv]:
    """An ``env_config``'s variant (All Fives unless named) and its env with the other options."""
    return str(variant), raw_env(str(variant), **options)


class DominoMultiAgentEnv(MultiAgentEnv):
    """A domino variant as an RLlib ``MultiAgentEnv``: only the seat to move observes.

    ``config`` (RLlib's ``env_config``): ``variant`` (default ``"all_fives"``) and any option of
    :func:`domino_env.make`. An illegal action raises the env's ``ValueError`` (or, with
    ``illegal_action="penalize"``, ends the episode with -1 for the offender).
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.variant, self.env = variant_env(**(config or {}))
        super().__init__()
        rules = self.env.rules
        self.possible_agents = list(self.env.possible_agents)
        self.agents = list(self.possible_agents)
        inner = self.env.observation_spaces[self.possible_agents[0]]["observation"]
        assert isinstance(inner, gym.spaces.Box)
        space = gym.spaces.Dict(
            {
                OBS: gym.spaces.Box(inner.low, inner.high, inner.shape, np.float32),
                MASK: gym.spaces.Box(0.0, 1.0, (rules.num_actions,), np.float32),
            }
        )
        # sample() without a mask draws a legal move of the seat to move (RLlib's env check steps with it)
        actions: gym.Space = LegalDiscrete(
            rules.num_actions, lambda: self.env.observe(self.env.agent_selection)[MASK]
        )
        self.observation_spaces: dict[str, gym.Space] = dict.fromkeys(self.possible_agents, space)
        self.action_spaces: dict[str, gym.Space] = dict.fromkeys(self.possible_agents, actions)
        self.observation_space = gym.spaces.Dict(self.observation_spaces)  # RLlib's old-stack attributes
        self.action_space = gym.spaces.Dict(self.action_spaces)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        mover = self.env.agent_selection
        return {mover: self._observe(mover)}, {mover: {}}

    def step(
        self, action_dict: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        env = self.env
        mover = env.agent_selection
        if mover not in action_dict:
            raise ValueError(f"{mover} is to move; got actions for {sorted(action_dict)}")
        env.step(int(action_dict[mover]))
        rewards = {agent: float(env.rewards[agent]) for agent in self.possible_agents}
        if all(env.terminations.values()):
            self.agents = []
            obs = {agent: self._observe(agent) for agent in self.possible_agents}
            terminated = dict.fromkeys(self.possible_agents, True)
            return obs, rewards, {**terminated, "__all__": True}, {"__all__": False}, {a: {} for a in obs}
        mover = env.agent_selection
        return {mover: self._observe(mover)}, rewards, {"__all__": False}, {"__all__": False}, {mover: {}}

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        observation = self.env.observe(agent)
        return {OBS: observation["observation"], MASK: observation["action_mask"].astype(np.float32)}

    def render(self) -> str | np.ndarray | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def env_name(variant: str) -> str:
    """The name :func:`register_envs` gives a variant in RLlib's env registry."""
    return f"domino_{variant}"


def register_envs() -> list[str]:
    """Register every variant with RLlib (``config.environment(env_name(v), env_config=options)``)."""
    names = []
    for variant in VARIANTS:

        def creator(config: Mapping[str, Any], variant: str = variant) -> DominoMultiAgentEnv:
            return DominoMultiAgentEnv({**dict(config or {}), "variant": variant})

        register_env(env_name(variant), creator)
        names.append(env_name(variant))
    return names


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO torch module over ``observations``, with ``action_mask`` applied to
    the logits of every forward pass (acting, inference and the loss)."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space.spaces) != {OBS, MASK}:
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with keys {OBS!r} and {MASK!r}, "
                f"got {observation_space}"
            )
        self._space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS], **kwargs)  # the network sees OBS only

    def setup(self) -> None:
        super().setup()
        self.observation_space = self._space_with_mask  # what connectors and checks see

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
        """(mask, batch with plain observations), leaving the given batch as it was."""
        obs = batch[Columns.OBS]
        if isinstance(obs, Mapping):
            return obs[MASK], {**batch, Columns.OBS: obs[OBS]}
        return batch[MASK], batch

    @staticmethod
    def _masked(output: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
        logits = output[Columns.ACTION_DIST_INPUTS]
        output[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask <= 0, MASKED_LOGIT)
        return output

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        obs = batch[Columns.OBS]
        if isinstance(obs, Mapping):
            batch = {**batch, Columns.OBS: obs[OBS]}
        return super().compute_values(batch, embeddings)


class MaskedActionCounter(RLlibCallback):
    """Checks every sampled action against the mask it was sampled under, in the episode chunks
    each ``sample()`` returns (finished episodes and the pieces of running ones), each once.

    It reads them as they leave the env runner: the learner then appends a bootstrap step to
    every chunk (its last observation and action repeated, outside the loss), and with
    ``num_env_runners=0`` it does so to the very objects the runner keeps for
    ``on_episode_end``'s ``prev_episode_chunks`` - where the repeated action, the tile just
    laid, would read as a masked one. Logs ``actions_checked`` and ``masked_actions_sampled``
    (lifetime sums) to the env runners' metrics: ``result["env_runners"]["masked_actions_sampled"]``
    must stay 0.
    """

    def on_sample_end(self, *, samples: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        checked = masked = 0
        for agent_episode in (a for chunk in samples for a in chunk.agent_episodes.values()):
            steps = len(agent_episode)
            if not steps:
                continue
            observations = agent_episode.get_observations(slice(0, steps))
            actions = np.asarray(agent_episode.get_actions(slice(0, steps))).reshape(-1)
            masks = np.asarray(
                observations[MASK] if isinstance(observations, Mapping) else [o[MASK] for o in observations]
            )
            checked += len(actions)
            masked += int((masks[np.arange(len(actions)), actions] <= 0).sum())
        if metrics_logger is not None:
            metrics_logger.log_value("actions_checked", checked, reduce="lifetime_sum")
            metrics_logger.log_value("masked_actions_sampled", masked, reduce="lifetime_sum")


def module_agent(module: Any) -> Callable[[DominoEnv, dict[str, np.ndarray]], int]:
    """A trained RLlib module (``algo.get_module("shared")``) as a domino agent
    ``agent(env, observation) -> action``: its most probable legal action. Use it with
    ``training.eval.arena.head_to_head``, ``SingleAgentEnv(opponents=...)`` or ``python -m training``'s
    evaluation helpers."""

    def agent(env: DominoEnv, observation: dict[str, np.ndarray]) -> int:
        mask = torch.from_numpy(observation["action_mask"][None].astype(np.float32))
        batch = {Columns.OBS: {OBS: torch.from_numpy(observation["observation"][None]), MASK: mask}}
        with torch.no_grad():
            logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return int(logits.argmax(-1)[0])

    return agent


def module_spec(hidden: Sequence[int] = (256, 256)) -> RLModuleSpec:
    """The masked PPO module with a tanh MLP of ``hidden`` layers (policy and value trunks)."""
    return RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config={"fcnet_hiddens": list(hidden), "fcnet_activation": "tanh"},
    )


def shared_policy(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """Every seat plays the one shared module (self-play with parameter sharing)."""
    return SHARED


def ppo_config(
    variant: str = "all_fives",
    options: Mapping[str, Any] | None = None,
    hidden: Sequence[int] = (256, 256),
    num_env_runners: int = 0,
) -> PPOConfig:
    """RLlib PPO (current API stack) training one masked module shared by every seat.

    ``options`` are the env's (:func:`domino_env.make`); ``num_env_runners`` remote sampling
    actors (0: sample in the driver). Refine the result as any ``PPOConfig`` (``.training(...)``,
    ``.env_runners(...)``, ``.learners(...)``).
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; available: {', '.join(sorted(VARIANTS))}")
    options = dict(options or {})
    if "variant" in options:
        raise ValueError(
            f"give the variant once, as ppo_config's first argument, not also in options ({options})"
        )
    DominoMultiAgentEnv({"variant": variant, **options})  # unknown options fail here, not in a runner
    register_envs()
    return (
        PPOConfig()
        .environment(env_name(variant), env_config=options)
        .multi_agent(policies={SHARED}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED: module_spec(hidden)}))
        .env_runners(num_env_runners=num_env_runners)
        .callbacks(MaskedActionCounter)
    )
