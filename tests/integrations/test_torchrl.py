"""TorchRL integration: the wrapped env's masks and seats, turn-based returns, and a short PPO
run of ``examples/torchrl_ppo.py`` that never samples a masked action."""

from __future__ import annotations

import pytest
import torch

from tests.support.extras import extra, load_example

pytestmark = [
    pytest.mark.torchrl,
    # TorchRL's wrapper builds its specs from our read-only idle mask, and names its tested PettingZoo
    pytest.mark.filterwarnings("ignore:The given NumPy array is not writable:UserWarning"),
    pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning"),
]
extra("torchrl")

from domino_env.integrations.torchrl import (  # noqa: E402 - after the skip
    ACTING_KEY,
    ACTION_KEY,
    GROUP,
    MASK_KEY,
    make_env,
    masked_actor,
    turn_returns,
)


def test_rollout_masks_seats_and_returns() -> None:
    torch.manual_seed(0)
    env = make_env("classic", seed=3, num_players=3, episode="round")
    rollout = env.rollout(120, masked_actor(env, (16,)), break_when_any_done=False)
    acting = rollout[ACTING_KEY]
    assert (acting.sum(-1) == 1).all()  # one seat moves at each step
    legal = rollout[MASK_KEY].gather(-1, rollout[ACTION_KEY].unsqueeze(-1)).squeeze(-1)
    assert legal[acting].all()  # the mover's action is always legal
    decisions = turn_returns(rollout)
    done = rollout["next", "done"].reshape(-1)
    last_end = int(torch.nonzero(done).max())
    assert len(decisions) == int(acting[: last_end + 1].sum())  # decisions of finished episodes only
    # outcome rewards: a decision's return is its seat's result in its round, one of the ranks
    assert set(decisions["return"].tolist()) <= {1.0, 0.0, -1.0}
    assert decisions[GROUP, "action_mask"].gather(-1, decisions[GROUP, "action"].unsqueeze(-1)).all()


def test_torchrl_ppo_example_trains() -> None:
    example = load_example("torchrl_ppo")
    log = example.train(iterations=2, steps=150, epochs=1, hidden=(16,), eval_every=2, eval_games=4)
    assert [line["masked_actions"] for line in log] == [0, 0]
    assert all(line["decisions"] > 50 for line in log)
    assert 0.0 <= log[-1]["win_rate_vs_random"] <= 1.0
