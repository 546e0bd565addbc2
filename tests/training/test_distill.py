"""Search distilled into the policy (``distill``): the label at a decision is the guided
search's own choice there, the update pulls the policy toward it, and the settings refuse what
they cannot do."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

import domino_env
from tests.support.training_helpers import resumed_halfway, tiny_config
from training.__main__ import main
from training.agents.guided import GuidedSearchAgent
from training.model import checkpoint
from training.model.config import ConfigError, load_config
from training.model.networks import ActorCritic
from training.rl.ppo import update
from training.rl.rollout import LocalCollector


def hand_made_position() -> domino_env.DominoEnv:
    """Classic, 2 players, block: seat 0 leads from a hand of sixes and the double blank."""
    env = domino_env.raw_env("classic", draw=False)
    hands = [
        ["6-6", "0-6", "1-6", "2-6", "3-6", "4-6", "0-0"],
        ["0-1", "0-2", "0-3", "0-4", "0-5", "1-1", "1-2"],
    ]
    env.reset(seed=0, options={"deal": {"hands": hands, "leader": 0}})
    return env


def test_the_label_is_the_guided_searchs_choice_at_that_position() -> None:
    config = tiny_config(None, "distill.share=1", "distill.worlds=4", options="{num_players: 2, draw: false}")
    collector = LocalCollector(config, np.random.default_rng(0))
    model = ActorCritic(collector.architecture)
    env = hand_made_position()
    collector.envs[0] = env
    observation = env.observe(env.agent_selection)
    assert int(observation["action_mask"].sum()) > 1  # (a real choice)
    obs = np.zeros((len(collector.envs), collector.obs_size), np.float32)
    masks = np.zeros((len(collector.envs), collector.num_actions), bool)
    obs[0], masks[0] = observation["observation"], observation["action_mask"]
    labels = collector._label(GuidedSearchAgent(model, 4, seed=9), np.array([0]), obs, masks)
    assert labels.tolist() == [GuidedSearchAgent(model, 4, seed=9)(env, observation)]
    assert masks[0, labels[0]]


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_a_rollout_labels_its_share_of_the_learners_decisions(share: float) -> None:
    config = tiny_config(None, f"distill.share={share}", "distill.worlds=2")
    collector = LocalCollector(config, np.random.default_rng(1))
    batch, _ = collector.collect(ActorCritic(collector.architecture), 16)
    if share == 0.0:
        assert batch.targets is None
        return
    assert batch.targets is not None
    labelled = batch.targets >= 0
    assert labelled.all() if share == 1.0 else 0 < int(labelled.sum()) < len(labelled)
    rows = torch.nonzero(labelled).flatten()
    assert batch.masks[rows, batch.targets[rows]].all()  # every label a legal action of its row


def test_the_update_pulls_the_policy_toward_the_labels() -> None:
    """With the PPO terms flat (equal advantages, no entropy bonus), the distill term alone moves
    the policy: toward each row's label with a coefficient, nowhere without one."""
    config = tiny_config(None, "ppo.ent_coef=0", "ppo.target_kl=0")
    collector = LocalCollector(config, np.random.default_rng(2))
    batch, _ = collector.collect(ActorCritic(collector.architecture), 16)
    rows = len(batch.actions)
    rng = np.random.default_rng(3)
    targets = torch.tensor([rng.choice(np.flatnonzero(mask)) for mask in batch.masks.numpy()])
    flat = dataclasses.replace(batch, advantages=torch.zeros(rows), targets=targets)
    for coef, rises in ((1.0, True), (0.0, False)):
        torch.manual_seed(0)
        model = ActorCritic(collector.architecture)
        before = model.legal(flat.obs, flat.masks)[0].log_prob(targets).detach()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(5):
            stats = update(
                model, optimizer, batch=flat, cfg=config.ppo, rng=np.random.default_rng(0), distill_coef=coef
            )
        after = model.legal(flat.obs, flat.masks)[0].log_prob(targets).detach()
        assert stats["distill/labels"] == rows
        if rises:
            assert float((after - before).mean()) > 0.5
        else:
            assert float((after - before).abs().mean()) < 0.05


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (["distill.share=1.5"], r"distill\.share must be in \[0, 1\], got 1\.5"),
        (["distill.worlds=0"], r"distill\.worlds must be at least 1, got 0"),
        (["distill.coef=-1"], r"distill\.coef must be 0 or more"),
        (["distill.share=0.1", "algorithm=dmc"], r"distilled into the update of ppo and mmd only.*is dmc"),
        (["distill.share=0.1", "run.collector=vector"], r"distill\.share needs run\.collector=local"),
    ],
)
def test_distill_settings_are_validated(overrides: list[str], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, overrides)


def test_a_distilling_run_trains_and_its_checkpoint_loads(tmp_path: Path) -> None:
    code = main(
        [
            "train",
            "configs/classic_tiny.yaml",
            "distill.share=0.2",
            "distill.worlds=2",
            "run.total_steps=256",
            "run.num_envs=4",
            "run.rollout_steps=32",
            f"run.out_dir={tmp_path}",
            "--no-progress",
        ]
    )
    assert code == 0
    data = checkpoint.load(tmp_path / "classic-1" / "checkpoints" / "latest.pt")
    assert data["config"].distill.share == 0.2 and data["steps"] >= 256


def test_a_distilling_run_resumes_exactly(tmp_path: Path) -> None:
    """The search's seed comes from the collection's random stream, which the checkpoint keeps."""
    overrides = ["distill.share=0.3", "distill.worlds=2", "run.total_steps=256", "run.checkpoint_every=2"]
    resumed_halfway(tmp_path, overrides, "classic", "{num_players: 2, episode: round}")
