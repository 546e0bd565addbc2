"""TorchRL support: any variant as a TorchRL env, a masked policy for it, turn-based returns.

Needs the ``torchrl`` extra (``pip install "domino-env[torchrl]"``)::

    from domino_env.integrations.torchrl import make_env, masked_actor

    env = make_env("all_fives", num_players=2, episode="round")
    actor = masked_actor(env)
    rollout = env.rollout(200, actor, break_when_any_done=False)  # never a masked action

* :func:`make_env` wraps the AEC env with TorchRL's own ``PettingZooWrapper``: every seat in
  one group ``"agents"`` (one network for all, batched over seats), ``("agents", "mask")``
  marks the seat to move and ``("agents", "action_mask")`` its legal actions.
* :func:`masked_actor` is a ``ProbabilisticActor`` with a ``MaskedCategorical`` over an MLP:
  illegal actions have probability 0. :func:`value_net` is the matching ``ValueOperator``.
* :func:`turn_returns` turns a rollout into the decisions of finished episodes and each one's
  undiscounted return: everything the deciding seat receives until the episode ends, including
  rewards that arrive on the other seats' turns. With ``reward="outcome"`` that is the final
  result, so ``return - value`` is a Monte-Carlo advantage for PPO (see
  ``examples/torchrl_ppo.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator

from domino_env.registry import make

GROUP = "agents"
OBS_KEY = (GROUP, "observation", "observation")
MASK_KEY = (GROUP, "action_mask")
ACTING_KEY = (GROUP, "mask")
ACTION_KEY = (GROUP, "action")
LOG_PROB_KEY = (GROUP, "action_log_prob")
VALUE_KEY = (GROUP, "state_value")


def make_env(variant: str = "all_fives", seed: int | None = None, **options: Any) -> PettingZooWrapper:
    """A variant (options as for :func:`domino_env.make`) as a TorchRL env, all seats in one group."""
    return PettingZooWrapper(
        make(variant, **options),
        use_mask=True,  # AEC: one seat moves at a time
        group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
        categorical_actions=True,
        seed=seed,
    )


def _sizes(env: PettingZooWrapper) -> tuple[int, int]:
    obs = env.observation_spec[OBS_KEY].shape[-1]
    actions = env.full_action_spec[ACTION_KEY].space.n
    return int(obs), int(actions)


def masked_actor(env: PettingZooWrapper, hidden: Sequence[int] = (256, 256)) -> ProbabilisticActor:
    """A shared policy for every seat: logits from a tanh MLP, sampled through the action mask."""
    obs, actions = _sizes(env)
    net = MLP(in_features=obs, out_features=actions, num_cells=list(hidden), activation_class=nn.Tanh)
    logits = TensorDictModule(net, in_keys=[OBS_KEY], out_keys=[(GROUP, "logits")])
    return ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": MASK_KEY},
        out_keys=[ACTION_KEY],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=LOG_PROB_KEY,
    )


def value_net(env: PettingZooWrapper, hidden: Sequence[int] = (256, 256)) -> ValueOperator:
    """The state value of each seat's observation (tanh MLP)."""
    obs, _ = _sizes(env)
    net = MLP(in_features=obs, out_features=1, num_cells=list(hidden), activation_class=nn.Tanh)
    return ValueOperator(net, in_keys=[OBS_KEY], out_keys=[VALUE_KEY])


def turn_returns(rollout: TensorDict) -> TensorDict:
    """The decisions of the rollout's finished episodes, flat, each with its ``return``.

    ``rollout`` is ``env.rollout(...)`` over one env (batch ``[T]``, seats ``[T, n]``). A
    decision's return is the sum of the deciding seat's rewards from that step to the end of
    its episode; decisions in an episode still running at the end of the rollout are dropped.
    """
    rewards = rollout["next", GROUP, "reward"][..., 0]  # [T, n]: every seat's reward at each step
    done = rollout["next", "done"].reshape(-1)  # [T]
    steps = len(done)
    to_go = torch.zeros_like(rewards)
    finished = torch.zeros(steps, dtype=torch.bool)
    running = torch.zeros(rewards.shape[1])
    complete = False
    for t in range(steps - 1, -1, -1):
        if done[t]:
            running = torch.zeros_like(running)
            complete = True
        running = running + rewards[t]
        to_go[t] = running
        finished[t] = complete
    t_idx, seat_idx = torch.nonzero(rollout[ACTING_KEY] & finished[:, None], as_tuple=True)
    decisions = rollout[GROUP][t_idx, seat_idx].select(
        ("observation", "observation"), "action_mask", "action", "action_log_prob"
    )
    return TensorDict({GROUP: decisions, "return": to_go[t_idx, seat_idx]}, batch_size=[len(t_idx)])
