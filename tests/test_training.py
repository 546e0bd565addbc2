"""The self-play PPO trainer: masking, GAE, turn-based transitions, learning, checkpoints, config, CLI.

Everything runs on tiny configs built here with overrides (``network.hidden=[32]``, a few
environments, a few iterations); the one learning run takes a few seconds of training.
"""

from __future__ import annotations

import copy
import csv
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import training.rollout as rollout
import training.train as train_module
from domino_env import raw_env
from domino_env.agents import make_agent
from domino_env.tiles import format_tile
from training import checkpoint
from training.__main__ import main
from training.agents import PolicyAgent, resolve_agent
from training.arena import head_to_head
from training.checkpoint import CheckpointError, load_model
from training.config import Config, ConfigError, config_from_dict, load_config
from training.networks import ActorCritic, PlayOutlook, play_outlook_spec
from training.ppo import Batch, gae, update
from training.rollout import Collector, EpisodeStats
from training.train import Trainer

ROOT = Path(__file__).resolve().parent.parent
CLASSIC_ROUND = "{num_players: 2, episode: round}"
TINY = [
    "network.hidden=[32]",
    "run.num_envs=4",
    "run.rollout_steps=16",
    "run.total_steps=128",  # two iterations
    "run.checkpoint_every=1",
    "ppo.update_epochs=2",
    "ppo.num_minibatches=2",
    "eval.every=0",
]


def tiny_config(
    out_dir: Path | None = None, *overrides: str, variant: str = "classic", options: str = CLASSIC_ROUND
) -> Config:
    config = load_config(None, [f"env.variant={variant}", f"env.options={options}", *TINY, *overrides])
    if out_dir is not None:  # set directly: a tmp path is not always a plain YAML scalar
        config.run.out_dir = str(out_dir)
    return config


def parameters(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.state_dict().items()}


# --- masking ---------------------------------------------------------------------------------------


def random_masks(rng: np.random.Generator, rows: int, actions: int) -> np.ndarray:
    masks = rng.random((rows, actions)) < 0.2
    masks[np.arange(rows), rng.integers(actions, size=rows)] = True  # at least one legal action
    return masks


def test_illegal_actions_get_exactly_zero_probability_and_are_never_sampled() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = ActorCritic(20, 12, [32])
    with torch.no_grad():  # make every illegal action the most attractive one before masking
        model.policy.bias.copy_(torch.tensor([50.0 if a % 2 else -50.0 for a in range(12)]))
    masks = random_masks(rng, 4000, 12)
    masks[:, 1::2] &= rng.random((4000, 6)) < 0.1  # odd (attractive) actions rarely legal
    masks[np.arange(4000), 0] |= ~masks.any(axis=1)
    obs = rng.normal(size=(4000, 20)).astype(np.float32)

    dist, _ = model.distribution(torch.from_numpy(obs), torch.from_numpy(masks))
    probs = dist.probs.detach().numpy()
    assert np.all(probs[~masks] == 0.0)  # exactly zero, not just small
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)

    actions, logprobs, values = model.act(obs, masks)
    assert masks[np.arange(4000), actions].all()
    assert np.isfinite(logprobs).all() and np.isfinite(values).all()
    for _ in range(5):  # many more samples, same rows
        assert masks[np.arange(4000), model.act(obs, masks)[0]].all()
    assert masks[np.arange(4000), model.greedy(obs, masks)].all()

    single = np.zeros((3, 12), dtype=bool)
    single[[0, 1, 2], [3, 7, 10]] = True
    chosen, logprob, _ = model.act(obs[:3], single)
    assert chosen.tolist() == [3, 7, 10]
    assert np.allclose(logprob, 0.0, atol=1e-6)  # the only legal action has probability 1


def test_action_blocks_add_their_entries_to_the_logits_scaled_by_a_state_gain() -> None:
    """Entry k of an action block moves action k's logit by gain * entry; other actions and a
    model without blocks are untouched."""
    torch.manual_seed(2)
    blocks = [(10, 16), (16, 22)]  # two blocks describing actions 0..5 of 8
    model = ActorCritic(22, 8, [32], blocks)
    plain = ActorCritic(22, 8, [32])
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("gains")})
    obs = torch.from_numpy(np.random.default_rng(2).normal(size=(5, 22)).astype(np.float32))
    with torch.no_grad():
        features = model.trunk(obs)
        gains = model.gains(features)
        expected = plain.policy(features)
        expected[:, :6] += gains[:, :1] * obs[:, 10:16] + gains[:, 1:2] * obs[:, 16:22]
        assert torch.allclose(model.logits(obs, features), expected)
        assert torch.equal(plain.logits(obs, features), plain.policy(features))
    twin = model.copy()
    assert twin.action_blocks == blocks and not twin.training
    assert torch.equal(twin.logits(obs, twin.trunk(obs)), model.logits(obs, model.trunk(obs)))


def test_action_traits_add_a_state_gain_per_trait_to_every_action_with_it() -> None:
    torch.manual_seed(3)
    traits = [[0.5, 1.0], [1.0, 0.0], [0.0, 0.0]]  # three actions, two traits
    model = ActorCritic(6, 3, [16], action_traits=traits)
    obs = torch.from_numpy(np.random.default_rng(3).normal(size=(4, 6)).astype(np.float32))
    with torch.no_grad():
        features = model.trunk(obs)
        assert model.trait_gains is not None
        gains = model.trait_gains(features)
        expected = model.policy(features)
        expected[:, 0] += 0.5 * gains[:, 0] + gains[:, 1]
        expected[:, 1] += gains[:, 0]
        assert torch.allclose(model.logits(obs, features), expected)
    assert model.copy().architecture() == model.architecture()


def test_rules_action_traits_describe_the_laid_tile() -> None:
    rules = raw_env("osel").rules
    traits = rules.action_traits()
    assert traits.shape == (rules.num_actions, 3)
    for action in range(rules.num_actions):
        tile = rules.action_tile[action]
        if tile < 0:
            assert not traits[action].any()
            continue
        a, b = rules.tile_set.tiles[tile]
        expected = [(a + b) / 12, a == b, rules.action_face_down[action]]
        assert np.allclose(traits[action], np.array(expected, dtype=np.float32))


def outlook_by_hand(env: Any, action: int) -> list[float]:
    """PlayOutlook's six facts about a legal play, read from the game state instead."""
    game, rules = env.game, env.rules
    ts, seat = rules.tile_set, game.current
    low, high = ts.tiles[rules.action_tile[action]]
    shown = game.line.value[rules.action_slot[action]]
    hand, following = game.hands[seat], (seat + 1) % rules.num_players
    values = ts.num_values

    def unseen(v: int) -> float:
        return (ts.suit_mask[v] & ~hand & ~game.line.played).bit_count() / values

    def void(v: int) -> float:
        return float(game.voids[following] >> v & 1)

    def kept(v: int) -> float:
        return ((ts.suit_mask[v] & hand).bit_count() - 1) / values

    covered = [unseen(shown), void(shown), kept(shown)]
    if rules.action_face_down[action]:
        return [0.0, 0.0, 0.0, *covered]
    exposed = high if shown == low else low
    return [unseen(exposed), void(exposed), kept(exposed), *covered]


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("classic", {}),
        ("metro", {"num_players": 3}),
        ("osel", {}),
        ("all_fives", {"num_players": 4, "teams": True}),
    ],
)
def test_play_outlook_matches_a_reading_of_the_game_state(variant: str, options: dict[str, Any]) -> None:
    env = raw_env(variant, **options)
    spec = play_outlook_spec(env.rules, env.observation_layout)
    assert spec is not None
    outlook = PlayOutlook(spec)
    rng = np.random.default_rng(4)
    checked = 0
    for seed in range(3):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            facts = outlook(torch.from_numpy(observation["observation"])[None])[0].numpy()
            for action in legal:
                if action < env.rules.num_play_actions and env.game.line.count:
                    assert np.allclose(facts[action], outlook_by_hand(env, action), atol=1e-6), action
                    checked += 1
            env.step(int(rng.choice(legal)))
    assert checked > 100


def test_play_outlook_refuses_plays_numbered_in_another_order() -> None:
    env = raw_env("classic")
    rules = copy.copy(env.rules)
    plays = rules.num_play_actions
    rules.action_tile = [*rules.action_tile[1:plays], rules.action_tile[0], *rules.action_tile[plays:]]
    with pytest.raises(ValueError, match="ordered by face"):
        play_outlook_spec(rules, env.observation_layout)


def test_play_outlook_adds_its_facts_to_the_play_logits_only() -> None:
    torch.manual_seed(5)
    env = raw_env("all_fives")
    spec = play_outlook_spec(env.rules, env.observation_layout)
    assert spec is not None
    size, actions = env.encoder.size, env.rules.num_actions
    model = ActorCritic(size, actions, [16], outlook=spec)
    plain = ActorCritic(size, actions, [16])
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("outlook")})
    env.reset(seed=1)
    for _ in range(4):  # some ends on the table
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    obs = torch.from_numpy(np.stack([env.observe(agent)["observation"] for agent in env.agents]))
    with torch.no_grad():
        features = model.trunk(obs)
        assert model.outlook is not None and model.outlook_gains is not None
        assert model.outlook(obs).abs().sum() > 0
        expected = plain.logits(obs, features)
        plays = env.rules.num_play_actions
        expected[:, :plays] += (model.outlook(obs) * model.outlook_gains(features)[:, None, :]).sum(-1)
        assert torch.allclose(model.logits(obs, features), expected)
    assert model.copy().architecture() == model.architecture()
    board = raw_env("domino3d")
    assert play_outlook_spec(board.rules, board.observation_layout) is None


def test_board_net_scores_each_action_at_its_anchor_cell() -> None:
    """Action id channel * cells + cell reads the 1x1 policy convolution at (channel, cell)."""
    torch.manual_seed(5)
    planes, size, channels = 3, 4, 8
    model = ActorCritic(
        planes * 16 + 5, 6 * 16, [16], board={"planes": planes, "size": size, "channels": channels}
    )
    assert model.board_net is not None and not hasattr(model, "trunk")
    net = model.board_net
    obs = torch.from_numpy(np.random.default_rng(5).normal(size=(2, planes * 16 + 5)).astype(np.float32))
    with torch.no_grad():
        board = obs[:, : planes * 16].reshape(2, planes, size, size)
        cells = net.convs(net.first(board) + net.flat(obs[:, planes * 16 :])[:, :, None, None])
        per_cell = net.policy(cells)  # (batch, channel, row, column)
        logits, value = model.heads(obs)
    assert logits.shape == (2, 96) and value.shape == (2,)
    for action in (0, 17, 95):
        channel, cell = divmod(action, 16)
        assert torch.allclose(logits[:, action], per_cell[:, channel, cell // size, cell % size])
    assert model.copy().architecture() == model.architecture()


def board_model(seed: int, action_planes: int = 0) -> tuple[ActorCritic, torch.Tensor, torch.Tensor]:
    """A small board network (4 planes of 4 x 4, 6 action channels), random observations and
    random masks (a few legal actions a row, at least one), with weights scaled up so that the
    policy is far from uniform."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    board = {"planes": 4, "size": 4, "channels": 8, "action_planes": action_planes}
    model = ActorCritic(4 * 16 + 5, 6 * 16, [16], board=board)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(3.0)
    obs = torch.from_numpy(rng.normal(size=(64, 4 * 16 + 5)).astype(np.float32))
    masks = torch.from_numpy(random_masks(rng, 64, 96) & (rng.random((64, 96)) < 0.3))
    masks[torch.arange(64), torch.from_numpy(rng.integers(96, size=64))] = True
    return model, obs, masks


@pytest.mark.parametrize("action_planes", [0, 2])
def test_the_legal_policy_equals_the_dense_masked_one(action_planes: int) -> None:
    """LegalPolicy (logits of the legal actions only) gives the log-probabilities, entropy,
    greedy action and gradients of the masked softmax over every action id."""
    model, obs, masks = board_model(3, action_planes)
    dense, dense_value = model.distribution(obs, masks)
    legal, value = model.legal(obs, masks)
    torch.testing.assert_close(value, dense_value)
    rows, actions = masks.nonzero(as_tuple=True)
    every = model.heads(obs)[0]
    net = model.board_net
    assert net is not None
    torch.testing.assert_close(net.legal_logits(obs, rows, actions)[0], every[rows, actions])
    for _ in range(3):
        chosen = dense.sample()
        torch.testing.assert_close(legal.log_prob(chosen), dense.log_prob(chosen))
    torch.testing.assert_close(legal.entropy(), dense.entropy())
    assert float(dense.entropy().detach().std()) > 0.1  # far from uniform, rows unlike each other
    assert legal.mode().tolist() == every.masked_fill(~masks, -1e8).argmax(-1).tolist()
    sampled, logprob = legal.sample()
    assert masks[torch.arange(64), sampled].all()
    torch.testing.assert_close(logprob, dense.log_prob(sampled))

    chosen = dense.sample()
    grads = []
    for loss in (
        dense.log_prob(chosen).sum() + dense.entropy().sum(),
        legal.log_prob(chosen).sum() + legal.entropy().sum(),
    ):
        model.zero_grad()
        loss.backward(retain_graph=True)
        grads.append([p.grad.clone() for p in model.parameters() if p.grad is not None])
    assert len(grads[0]) == len(grads[1]) > 0
    for mine, theirs in zip(grads[1], grads[0], strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-5)


def test_action_planes_add_their_cell_to_every_channel_of_their_direction() -> None:
    """Action channel * cells + cell adds plane channel % 2 of the last two board planes at
    its cell, scaled by a state gain; without action planes the logits do not read them."""
    model, obs, _ = board_model(4, action_planes=2)
    net = model.board_net
    assert net is not None and net.gains is not None
    with torch.no_grad():
        x, pooled = net.trunk(obs)
        per_cell = net.policy(x).flatten(2)
        gains = net.gains(pooled)
        logits = model.heads(obs)[0]
    for action in (0, 17, 40, 95):
        channel, cell = divmod(action, 16)
        plane = 2 + channel % 2  # planes 2 and 3 of 4
        expected = per_cell[:, channel, cell] + gains[:, channel % 2] * obs[:, plane * 16 + cell]
        torch.testing.assert_close(logits[:, action], expected)
    with pytest.raises(ValueError, match="do not cycle over 4 planes"):
        board = {"planes": 4, "size": 4, "channels": 8, "action_planes": 4}
        ActorCritic(4 * 16 + 5, 6 * 16, [16], board=board)


def test_a_row_without_legal_actions_is_refused() -> None:
    model, obs, masks = board_model(5)
    masks[3] = False
    with pytest.raises(ValueError, match="every row needs a legal action"):
        model.legal(obs, masks)


def test_the_log_prob_of_an_illegal_action_is_refused() -> None:
    model, obs, masks = board_model(5)
    policy, _ = model.legal(obs, masks)
    actions = masks.int().argmax(1)  # a legal action a row
    assert torch.isfinite(policy.log_prob(actions)).all()
    actions[2] = int((~masks[2]).nonzero()[0])
    with pytest.raises(ValueError, match="not legal"):
        policy.log_prob(actions)


def test_board_channels_train_on_a_board_table_and_are_refused_elsewhere(tmp_path: Path) -> None:
    options = "{num_players: 2, board_size: 8}"
    config = tiny_config(tmp_path, "network.board_channels=4", variant="domino3d", options=options)
    trainer = Trainer(config)
    assert trainer.model.board_net is not None
    assert trainer.model.board_net.action_planes == 2  # points_now, right and down
    model, _ = load_model(trainer.train(progress=False))
    assert model.architecture() == trainer.model.architecture()
    plain = Trainer(
        tiny_config(
            tmp_path / "plain",
            "network.board_channels=4",
            "network.action_blocks=false",
            variant="domino3d",
            options=options,
        )
    )
    assert plain.model.board_net is not None and plain.model.board_net.gains is None
    with pytest.raises(ConfigError, match="board_channels needs a table with a board"):
        Trainer(tiny_config(tmp_path, "network.board_channels=4"))
    with pytest.raises(ConfigError, match="board_channels"):
        tiny_config(tmp_path, "network.board_channels=-1")


def test_all_fives_points_now_is_an_action_block_of_the_trained_model(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, variant="all_fives", options="{num_players: 2}")
    trainer = Trainer(config)
    layout = trainer.collector.envs[0].observation_layout
    assert trainer.model.action_blocks == [(layout["points_now"].start, layout["points_now"].stop)]
    path = trainer.train(progress=False)
    model, _ = load_model(path)
    assert model.action_blocks == trainer.model.action_blocks
    exported, _ = load_model(checkpoint.export(path, tmp_path / "slim.pt"))
    assert exported.action_blocks == trainer.model.action_blocks
    assert model.architecture() == trainer.model.architecture()
    assert model.traits is not None and model.traits.shape == (3, trainer.collector.num_actions)
    off = Trainer(
        tiny_config(
            tmp_path / "off",
            "network.action_blocks=false",
            "network.action_traits=false",
            variant="all_fives",
            options="{}",
        )
    )
    assert off.model.action_blocks == [] and off.model.gains is None and off.model.trait_gains is None


def acted_batch(
    obs: np.ndarray, masks: np.ndarray, acted: tuple[np.ndarray, ...], rng: np.random.Generator
) -> Batch:
    """A batch of what the model did (actions, log-probabilities, values), random advantages and
    returns."""
    actions, logprobs, values = acted
    return Batch(
        obs=torch.from_numpy(obs),
        masks=torch.from_numpy(masks),
        actions=torch.from_numpy(actions),
        logprobs=torch.from_numpy(logprobs),
        values=torch.from_numpy(values),
        advantages=torch.from_numpy(rng.normal(size=len(obs)).astype(np.float32)),
        returns=torch.from_numpy(rng.normal(size=len(obs)).astype(np.float32)),
    )


def test_update_reevaluates_stored_actions_under_the_same_mask() -> None:
    """With a zero learning rate the update's log-probabilities equal the acting ones: ratio 1,
    no KL, nothing clipped. Unmasked re-evaluation would give other log-probabilities."""
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    model = ActorCritic(16, 10, [32])
    with torch.no_grad():
        model.policy.weight.mul_(200.0)  # a peaked policy, so masking matters a lot
    obs = rng.normal(size=(256, 16)).astype(np.float32)
    masks = random_masks(rng, 256, 10)
    actions, logprobs, values = model.act(obs, masks)
    unmasked = model.distribution(torch.from_numpy(obs), torch.ones(256, 10, dtype=torch.bool))[0]
    assert not np.allclose(unmasked.log_prob(torch.from_numpy(actions)).detach().numpy(), logprobs, atol=1e-3)

    batch = acted_batch(obs, masks, (actions, logprobs, values), rng)
    cfg = tiny_config().ppo
    cfg.update_epochs, cfg.num_minibatches = 1, 4
    before = parameters(model)
    stats = update(model, torch.optim.Adam(model.parameters(), lr=0.0), batch, cfg, np.random.default_rng(0))
    assert abs(stats["loss/approx_kl"]) < 1e-6
    assert stats["loss/clip_fraction"] == 0.0
    assert all(torch.equal(before[k], v) for k, v in parameters(model).items())

    # a real update keeps everything finite (masked logits never turn into NaN gradients)
    cfg.update_epochs = 3
    update(model, torch.optim.Adam(model.parameters(), lr=1e-2), batch, cfg, np.random.default_rng(0))
    assert all(torch.isfinite(p).all() for p in model.parameters())
    probs = model.distribution(batch.obs, batch.masks)[0].probs.detach()
    assert torch.all(probs[~batch.masks] == 0.0)


def test_update_splits_any_batch_into_exactly_num_minibatches_per_epoch() -> None:
    """With a pool a batch holds any number of learner decisions: 10 rows in 4 minibatches are
    3+3+2+2, every row once an epoch - never a fifth, tiny minibatch of the remainder."""
    torch.manual_seed(2)
    rng = np.random.default_rng(2)
    model = ActorCritic(8, 5, [16])
    obs = rng.normal(size=(10, 8)).astype(np.float32)
    masks = random_masks(rng, 10, 5)
    batch = acted_batch(obs, masks, model.act(obs, masks), rng)
    cfg = tiny_config().ppo
    cfg.update_epochs, cfg.num_minibatches, cfg.target_kl = 2, 4, 0.0
    seen: list[list[float]] = []
    legal = model.legal

    def recorded(obs: torch.Tensor, masks: torch.Tensor) -> Any:
        seen.append(obs[:, 0].tolist())
        return legal(obs, masks)

    model.legal = recorded  # type: ignore[method-assign]
    update(model, torch.optim.Adam(model.parameters(), lr=1e-3), batch, cfg, np.random.default_rng(0))
    assert [len(rows) for rows in seen] == [3, 3, 2, 2] * 2
    for epoch in (seen[:4], seen[4:]):
        assert sorted(x for rows in epoch for x in rows) == sorted(obs[:, 0].tolist())


# --- GAE -------------------------------------------------------------------------------------------


def test_gae_hand_computed_over_interleaved_seat_chains() -> None:
    """Seat A: 0 -> 2 -> 4 (4 ends the episode); seat B: 1 -> 3 (3 still open: it only lends
    its value to 1, whose estimate stops there)."""
    rewards = np.array([0.0, 0.5, 0.0, 0.0, 1.0], dtype=np.float32)
    values = np.array([0.1, 0.2, 0.3, 0.4, 0.5], dtype=np.float32)
    successor = np.array([2, 3, 4, -1, -1])
    done = np.array([False, False, False, False, True])
    advantages, returns = gae(rewards, values, successor, done, gamma=0.9, lam=0.8)
    # A4: 1 - .5 = .5                         B3: open, no estimate
    # A2: .9*.5 - .3 + .72*.5 = .51           B1: .5 + .9*.4 - .2 = .66
    # A0: .9*.3 - .1 + .72*.51 = .5372
    assert advantages == pytest.approx([0.5372, 0.66, 0.51, 0.0, 0.5], abs=1e-6)
    assert returns == pytest.approx([0.6372, 0.86, 0.81, 0.4, 1.0], abs=1e-6)


def test_gae_with_gamma_and_lambda_one_is_the_monte_carlo_return_along_each_chain() -> None:
    """Each finished transition's return: its chain's rewards up to the episode's end, or up to
    the open transition that ends the chain, plus that one's value."""
    rng = np.random.default_rng(3)
    n = 40
    seats = rng.integers(3, size=n)
    successor, done = np.full(n, -1), np.zeros(n, dtype=bool)
    for i in range(n):
        later = [j for j in range(i + 1, n) if seats[j] == seats[i]]
        if later:
            successor[i] = later[0]
        else:
            done[i] = rng.random() < 0.5  # the others stay open
    rewards = rng.normal(size=n).astype(np.float64)
    values = rng.normal(size=n).astype(np.float64)
    advantages, returns = gae(rewards, values, successor, done, gamma=1.0, lam=1.0)
    for i in range(n):
        if not done[i] and successor[i] < 0:
            assert advantages[i] == 0.0  # open: no estimate
            continue
        total, j = 0.0, i
        while True:
            total += rewards[j]
            if done[j]:
                break
            if successor[successor[j]] < 0 and not done[successor[j]]:
                total += values[successor[j]]  # the open transition's value ends the chain
                break
            j = successor[j]
        assert returns[i] == pytest.approx(total)
        assert advantages[i] == pytest.approx(total - values[i])


# --- turn-based transitions --------------------------------------------------------------------


class ScriptedModel:
    """Stands in for the ActorCritic: plays scripted tiles (the lowest legal action laying
    that tile) and reports a value that identifies the observation (its sum)."""

    def __init__(self, tiles: list[str], slots: int) -> None:
        self.tiles, self.slots, self.calls = list(tiles), slots, 0

    def act(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        assert len(obs) == 1
        tile = self.tiles[self.calls]
        legal = np.flatnonzero(mask[0])
        fitting = [a for a in legal if format_tile(TILES[a // self.slots]) == tile]
        assert fitting, f"{tile} is not playable at decision {self.calls}"
        self.calls += 1
        return np.array([fitting[0]]), np.array([-0.5], dtype=np.float32), obs.sum(axis=1)


TILES = [(a, b) for a in range(7) for b in range(a, 7)]

# Block Classic, 2 players. P0 leads 0-0, P1 plays 0-1, P0 plays 0-2 and then holds nothing
# matching 1, 2 or 3: it passes (the env plays the passes) while P1 lays its six other tiles
# one after another and goes out with 1-3. The -1 for P0 arrives only with P1's last move.
BLOCK_DEAL = {
    "hands": [
        ["0-0", "0-2", "4-4", "5-5", "6-6", "4-5", "5-6"],
        ["0-1", "1-1", "1-2", "2-2", "2-3", "3-3", "1-3"],
    ],
    "leader": 0,
}
BLOCK_SCRIPT = ["0-0", "0-1", "0-2", "1-1", "1-2", "2-2", "2-3", "3-3", "1-3"]
BLOCK_SEATS = [0, 1, 0, 1, 1, 1, 1, 1, 1]


@pytest.fixture
def gae_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, np.ndarray]]:
    """The arrays the Collector hands to gae(), copied, one dict per collect()."""
    calls: list[dict[str, np.ndarray]] = []
    real = rollout.gae

    def spy(rewards, values, successor, done, gamma, lam):  # type: ignore[no-untyped-def]
        calls.append(
            {
                "rewards": rewards.copy(),
                "values": values.copy(),
                "successor": successor.copy(),
                "done": done.copy(),
            }
        )
        return real(rewards, values, successor, done, gamma, lam)

    monkeypatch.setattr(rollout, "gae", spy)
    return calls


def scripted_collector(*overrides: str) -> Collector:
    config = tiny_config(
        None,
        "run.num_envs=1",
        *overrides,
        options="{num_players: 2, episode: round, draw: false}",
    )
    collector = Collector(config, np.random.default_rng(0))
    collector.envs[0].reset(seed=0, options={"deal": BLOCK_DEAL})
    return collector


def test_final_reward_after_the_opponents_move_reaches_the_loser_transition(
    gae_calls: list[dict[str, np.ndarray]],
) -> None:
    collector = scripted_collector("run.zero_sum=false", "run.reward_scale=1.0")
    env = collector.envs[0]
    hand = env.observation_layout["hand"]
    seat_hands = [env.observe(agent)["observation"][hand].copy() for agent in env.possible_agents]
    model = ScriptedModel(BLOCK_SCRIPT, slots=2)

    batch, stats = collector.collect(model, len(BLOCK_SCRIPT))  # type: ignore[arg-type]

    (arrays,) = gae_calls
    assert model.calls == 9 and len(batch.actions) == 9
    # P0: 0 -> 2 (its last decision: done, with the -1 that came after P1 went out)
    # P1: 1 -> 3 -> 4 -> 5 -> 6 -> 7 -> 8 (consecutive decisions while P0 passes; +1 at the end)
    assert arrays["successor"].tolist() == [2, 3, -1, 4, 5, 6, 7, 8, -1]
    assert arrays["done"].tolist() == [False, False, True, False, False, False, False, False, True]
    assert all(BLOCK_SEATS[j] == BLOCK_SEATS[i] for i, j in enumerate(arrays["successor"]) if j >= 0)
    assert arrays["rewards"].tolist() == [0, 0, -1, 0, 0, 0, 0, 0, 1]
    assert stats.self_play == 1 and stats.lengths == [9]
    # each transition holds its own seat's observation (the first one of each seat: full hand)
    assert np.array_equal(batch.obs[0, hand].numpy(), seat_hands[0])
    assert np.array_equal(batch.obs[1, hand].numpy(), seat_hands[1])
    assert all(batch.masks[i, batch.actions[i]] for i in range(9))
    assert [format_tile(TILES[int(a) // 2]) for a in batch.actions] == BLOCK_SCRIPT
    # done transitions are not bootstrapped: the return of P0's last move is exactly -1
    assert batch.returns[2].item() == pytest.approx(-1.0)
    assert batch.returns[8].item() == pytest.approx(1.0)


def test_open_transitions_at_the_rollout_end_lend_their_value_and_stay_out_of_the_batch(
    gae_calls: list[dict[str, np.ndarray]],
) -> None:
    """Stopped before P1's winning move: P0's last move (2) and P1's (7) have no next decision
    yet. Their predecessors' returns end with their values - each its seat's value at a real
    decision, never an idle seat's view - and they themselves are not learned from."""
    collector = scripted_collector("run.zero_sum=false")
    model = ScriptedModel(BLOCK_SCRIPT, slots=2)  # its value of an observation: the sum of it
    batch, stats = collector.collect(model, 8)  # type: ignore[arg-type]

    (arrays,) = gae_calls
    assert stats.decisions == 8
    assert arrays["successor"].tolist() == [2, 3, -1, 4, 5, 6, 7, -1]
    assert not arrays["done"].any() and not arrays["rewards"].any()
    values = arrays["values"]
    assert len(batch.actions) == 6  # all but the open 2 and 7
    assert [format_tile(TILES[int(a) // 2]) for a in batch.actions] == [
        BLOCK_SCRIPT[i] for i in (0, 1, 3, 4, 5, 6)
    ]
    gamma = collector.config.ppo.gamma
    assert batch.returns[0].item() == pytest.approx(gamma * values[2])  # P0's 0-0: on to its 0-2
    assert batch.returns[-1].item() == pytest.approx(gamma * values[7])  # P1's 3-3: on to its 1-3
    assert values[2] != values[7]


def test_zero_sum_and_scale_apply_to_the_final_reward() -> None:
    collector = scripted_collector("run.zero_sum=true", "run.reward_scale=10.0")
    batch, _ = collector.collect(ScriptedModel(BLOCK_SCRIPT, slots=2), 9)  # type: ignore[arg-type]
    # outcome rewards are zero-sum already: only the scale changes them
    assert batch.returns[2].item() == pytest.approx(-10.0)
    assert batch.returns[8].item() == pytest.approx(10.0)


@pytest.mark.parametrize(
    ("variant", "options", "extra"),
    [
        ("classic", "{num_players: 2, episode: round}", ["run.zero_sum=false"]),
        ("all_fives", "{num_players: 3, episode: round, reward: points}", ["run.reward_scale=10.0"]),
    ],
)
def test_rewards_successors_and_done_match_an_independent_replay(
    gae_calls: list[dict[str, np.ndarray]], variant: str, options: str, extra: list[str]
) -> None:
    """Random self-play in 2 lockstep envs: every decision, every reward, every end is logged
    as it happens and the transitions are rebuilt from the log the simple way."""
    config = tiny_config(None, "run.num_envs=2", *extra, variant=variant, options=options)
    collector = Collector(config, np.random.default_rng(5))
    log: list[list[tuple[int, list[float], bool]]] = [[] for _ in collector.envs]
    for e, env in enumerate(collector.envs):
        original = env.step

        def step(action: Any, env: Any = env, original: Any = original, e: int = e) -> None:
            seat = env.possible_agents.index(env.agent_selection)
            original(action)
            rewards = [env.rewards[a] for a in env.possible_agents]
            log[e].append((seat, rewards, all(env.terminations.values())))

        env.step = step  # type: ignore[method-assign]
    torch.manual_seed(0)
    model = ActorCritic(collector.obs_size, collector.num_actions, [32])
    steps = 60
    collector.collect(model, steps)
    (arrays,) = gae_calls

    n, scale = collector.num_players, config.run.reward_scale
    expected_rewards = np.zeros(2 * steps)
    expected_successor = np.full(2 * steps, -1)
    expected_done = np.zeros(2 * steps, dtype=bool)
    for e in range(2):
        pending: dict[int, int] = {}
        for t, (seat, rewards, over) in enumerate(log[e]):
            i = t * 2 + e  # no pool: every env adds one transition per step, env order
            if seat in pending:
                expected_successor[pending[seat]] = i
            pending[seat] = i
            offset = sum(rewards) / n if config.run.zero_sum else 0.0
            for s, j in pending.items():
                expected_rewards[j] += (rewards[s] - offset) * scale
            if over:
                for j in pending.values():
                    expected_done[j] = True
                pending = {}
    assert any(over for e in range(2) for _, _, over in log[e])  # games ended within the rollout
    assert arrays["successor"].tolist() == expected_successor.tolist()
    assert arrays["done"].tolist() == expected_done.tolist()
    assert arrays["rewards"] == pytest.approx(expected_rewards, abs=1e-5)
    if variant == "all_fives":  # points arrive mid-round, and to seats other than the mover
        assert np.count_nonzero(arrays["rewards"][~arrays["done"]]) > 0


def test_pool_snapshots_play_the_other_side_and_are_not_learned_from() -> None:
    config = tiny_config(None, "pool.share=1.0", "pool.size=2")
    collector = Collector(config, np.random.default_rng(2))
    torch.manual_seed(0)
    model = ActorCritic(collector.obs_size, collector.num_actions, [32])
    snapshots = []
    for _ in range(3):
        collector.add_snapshot(model)
        snapshots.append(collector.pool[-1])
        with torch.no_grad():
            model.policy.bias.add_(1.0)
    assert collector.pool == snapshots[1:]  # the newest pool.size kept
    assert collector.pool[-1] is not model
    assert torch.equal(collector.pool[-1].policy.bias, model.policy.bias - 1.0)  # a frozen copy
    assert not collector.pool[-1].training

    learner_seats = opponent_seats = 0
    opponent_calls = 0
    for e, env in enumerate(collector.envs):
        original = env.step

        def step(action: Any, env: Any = env, original: Any = original, e: int = e) -> None:
            nonlocal learner_seats, opponent_seats
            seat = env.possible_agents.index(env.agent_selection)
            opponent = collector.opponent[e]
            if opponent is None or collector.side_of[seat] == collector.learner_side[e]:
                learner_seats += 1
            else:
                opponent_seats += 1
            original(action)

        env.step = step  # type: ignore[method-assign]
    for snapshot in collector.pool:
        act = snapshot.act

        def counted(obs: np.ndarray, mask: np.ndarray, act: Any = act) -> Any:
            nonlocal opponent_calls
            assert len(obs) == 1
            opponent_calls += 1
            return act(obs, mask)

        snapshot.act = counted  # type: ignore[method-assign]
    for e in range(len(collector.envs)):  # new games now draw opponents from the pool
        collector._new_game(e)
    assert all(o in collector.pool for o in collector.opponent)

    batch, stats = collector.collect(model, 60)
    assert learner_seats + opponent_seats == 4 * 60
    # every learner decision is in the batch but the last of each env, still open (one seat learns)
    assert 0 < learner_seats - len(batch.actions) <= len(collector.envs)
    assert opponent_calls == opponent_seats > 0
    assert stats.pool_games > 0 and stats.self_play == 0
    assert 0 <= stats.pool_wins <= stats.pool_games


def test_pool_baselines_play_the_other_side_and_are_not_learned_from() -> None:
    config = tiny_config(None, "pool.share=1.0", "pool.baselines=[greedy]")
    collector = Collector(config, np.random.default_rng(4))
    greedy = collector.baselines["greedy"]
    calls = 0

    def counted(env: Any, observation: dict[str, np.ndarray]) -> int:
        nonlocal calls
        calls += 1
        return greedy(env, observation)

    collector.baselines["greedy"] = counted  # type: ignore[assignment]
    for e in range(len(collector.envs)):
        collector._new_game(e)
    assert all(o is counted for o in collector.opponent)  # no snapshots yet: the baseline plays
    torch.manual_seed(0)
    batch, stats = collector.collect(ActorCritic(collector.obs_size, collector.num_actions, [32]), 40)
    assert calls > 0 and 0 < 4 * 40 - calls - len(batch.actions) <= len(collector.envs)  # (open ones)
    assert stats.pool_games > 0 and stats.self_play == 0


@pytest.mark.parametrize("learner_side", [0, 1])
def test_pool_win_rate_counts_the_learner_sides_first_places(learner_side: int) -> None:
    """With points rewards the last step's reward is a points change, not the result: the pool's
    win count reads the match outcome (checked against an outcome-reward twin of the game)."""
    options = "{num_players: 4, teams: true, episode: match, reward: points}"
    config = tiny_config(None, "pool.share=1.0", "pool.baselines=[random]", options=options)
    collector = Collector(config, np.random.default_rng(7))
    env = collector.envs[0]
    twin = raw_env("classic", num_players=4, teams=True, episode="match", reward="outcome")
    wins = []
    for seed in range(6):
        for e in (env, twin):
            e.reset(seed=seed)
        while not all(env.terminations.values()):
            action = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
            for e in (env, twin):
                e.step(action)
        outcome = twin.rewards[twin.possible_agents[learner_side]]  # the final step gives the outcome
        wins.append(1.0 if outcome == 1.0 else 0.5 if outcome == 0.0 else 0.0)
        stats = EpisodeStats()
        collector.opponent[0], collector.learner_side[0] = collector.baselines["random"], learner_side
        collector._record(0, env, stats)
        assert (stats.pool_games, stats.pool_wins) == (1, wins[-1])
    assert 0.0 < sum(wins) < len(wins)  # both results were seen


# --- learning --------------------------------------------------------------------------------------


def test_short_training_run_beats_random_and_writes_its_run_folder(tmp_path: Path) -> None:
    """All Fives, 2 players, trained on rounds with zero-sum points (~16k decisions), measured
    on 200 whole matches against ``random`` with seats rotated: an untrained policy is a coin
    flip, the trained one wins clearly (about 0.75 when this test was written)."""
    config = load_config(
        None,
        [
            "env.variant=all_fives",
            "env.options={num_players: 2, episode: round, reward: points}",
            "network.hidden=[64]",
            "run.total_steps=16384",
            "run.num_envs=16",
            "run.rollout_steps=32",
            "run.seed=2",
            "run.reward_scale=10.0",
            "run.checkpoint_every=16",
            "ppo.learning_rate=0.003",
            "ppo.anneal_lr=false",
            "eval.every=1000",  # only after the last iteration
            "eval.games=10",
            "eval.opponents=[random]",
            "eval.episode=match",
        ],
    )
    config.run.out_dir = str(tmp_path)
    trainer = Trainer(config)

    def win_rate(model: ActorCritic) -> float:
        opponent = make_agent("random", 0)
        summary = head_to_head("all_fives", PolicyAgent(model), opponent, 200, seed=0, num_players=2)
        return summary.win_rate

    trainer.model.eval()
    untrained = win_rate(trainer.model)
    assert 0.35 < untrained < 0.65

    final = trainer.train(progress=False)

    folder = tmp_path / config.run_name
    assert final == folder / "checkpoints" / "iter_00032.pt"
    names = {p.name for p in (folder / "checkpoints").iterdir()}
    assert names == {"iter_00016.pt", "iter_00032.pt", "latest.pt"}
    assert any((folder / "tb").iterdir())
    with (folder / "evaluations.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["iteration"] for r in rows] == ["32"] and rows[0]["steps"] == "16384"
    assert 0.0 <= float(rows[0]["win_rate_vs_random"]) <= 1.0

    env = raw_env("all_fives", num_players=2)
    model, saved = load_model(folder / "checkpoints" / "latest.pt", env.encoder.size, env.rules.num_actions)
    assert saved == config
    trained = win_rate(model)
    assert trained > 0.6, f"trained policy won {trained:.1%} against random (untrained {untrained:.1%})"


# --- checkpoints -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def classic_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two iterations of tiny self-play on Classic, 2 players: its checkpoints folder."""
    out = tmp_path_factory.mktemp("classic_run")
    trainer = Trainer(tiny_config(out))
    trainer.train(progress=False)
    return trainer.run_dir / "checkpoints"


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path: Path) -> None:
    trainer = Trainer(tiny_config(tmp_path))
    path = trainer.train(progress=False)
    assert path.name == "iter_00002.pt"
    for source in (path, path.parent / "latest.pt"):
        model, config = load_model(source, trainer.collector.obs_size, trainer.collector.num_actions)
        assert config == trainer.config
        assert not model.training
        for name, value in trainer.model.state_dict().items():
            assert torch.equal(model.state_dict()[name], value)
        rng = np.random.default_rng(0)
        obs = torch.from_numpy(rng.normal(size=(50, trainer.collector.obs_size)).astype(np.float32))
        masks = torch.from_numpy(random_masks(rng, 50, trainer.collector.num_actions))
        trainer.model.eval()
        mine, value = trainer.model.distribution(obs, masks)
        theirs, their_value = model.distribution(obs, masks)
        assert torch.equal(mine.probs, theirs.probs) and torch.equal(value, their_value)
    data = checkpoint.load(path)
    assert data["iteration"] == 2 and data["steps"] == 128


def test_resume_is_exact(tmp_path: Path) -> None:
    """Four iterations straight, against two, a checkpoint, and two more in a fresh trainer
    resumed from it: bitwise-identical weights. The pool, annealing and evaluation run too."""
    overrides = [
        "run.total_steps=256",  # four iterations of 4 envs x 16 decisions
        "run.checkpoint_every=2",
        "pool.share=0.5",
        "pool.snapshot_every=1",
        "pool.size=2",
        "pool.baselines=[random, greedy]",  # baselines in the pool, with their random streams
        "eval.every=2",
        "eval.games=2",
        "eval.opponents=[random]",
    ]
    options = "{num_players: 2, episode: round, reward: points}"
    straight = Trainer(tiny_config(tmp_path / "a", *overrides, variant="all_fives", options=options))
    straight.train(progress=False)
    halfway = straight.run_dir / "checkpoints" / "iter_00002.pt"
    assert halfway.exists()

    torch.manual_seed(123)  # the resumed trainer must not depend on the process's state
    np.random.seed(123)
    resumed = Trainer(
        tiny_config(tmp_path / "b", *overrides, variant="all_fives", options=options), resume=halfway
    )
    assert (resumed.iteration, resumed.steps) == (2, 128)
    assert len(resumed.collector.pool) == 2
    resumed.train(progress=False)

    assert resumed.iteration == straight.iteration == 4
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), f"{name} differs after resuming"
    for x, y in zip(straight.collector.pool, resumed.collector.pool, strict=True):
        assert all(torch.equal(p, q) for p, q in zip(x.parameters(), y.parameters(), strict=True))


def test_interrupt_saves_the_last_complete_iteration_and_resumes_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    straight = Trainer(tiny_config(tmp_path / "a", "run.checkpoint_every=10"))
    straight.train(progress=False)

    real_update, calls = train_module.update, []

    def interrupted(*args: Any, **kwargs: Any) -> dict[str, float]:
        calls.append(1)
        if len(calls) == 2:  # Ctrl-C during the second iteration's update
            raise KeyboardInterrupt
        return real_update(*args, **kwargs)

    monkeypatch.setattr(train_module, "update", interrupted)
    first = Trainer(tiny_config(tmp_path / "b", "run.checkpoint_every=10"))
    with pytest.raises(KeyboardInterrupt):
        first.train(progress=False)
    monkeypatch.setattr(train_module, "update", real_update)
    saved = first.run_dir / "checkpoints" / "latest.pt"
    assert (first.run_dir / "checkpoints" / "iter_00001.pt").exists()
    assert checkpoint.load(saved)["iteration"] == 1

    resumed = Trainer(tiny_config(tmp_path / "c", "run.checkpoint_every=10"), resume=saved)
    resumed.train(progress=False)
    for name, value in straight.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], value), name


def test_corrupt_or_foreign_files_are_refused(tmp_path: Path, classic_run: Path) -> None:
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x00not a checkpoint at all" * 10)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((classic_run / "latest.pt").read_bytes()[:2000])
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": [1, 2, 3]}, foreign)
    bad_config = tmp_path / "bad_config.pt"
    data = torch.load(classic_run / "latest.pt", weights_only=False)
    data["config"]["ppo"]["no_such_key"] = 1
    torch.save(data, bad_config)

    cases = [
        (garbage, "cannot be read"),
        (truncated, "cannot be read"),
        (foreign, "not a checkpoint"),
        (bad_config, "no_such_key"),
        (tmp_path / "missing.pt", "does not exist"),
    ]
    for path, words in cases:
        with pytest.raises(CheckpointError, match=words):
            load_model(path)
        with pytest.raises(CheckpointError, match=words):
            Trainer(tiny_config(tmp_path / "out"), resume=path)


def test_checkpoint_for_another_variant_or_table_is_refused(tmp_path: Path, classic_run: Path) -> None:
    path = classic_run / "latest.pt"
    fives = raw_env("all_fives", num_players=2)
    sizes = r"obs_size=\d+, but this environment has \d+ \(variant classic"
    with pytest.raises(CheckpointError, match=sizes):
        load_model(path, fives.encoder.size, fives.rules.num_actions)
    with pytest.raises(CheckpointError, match="classic"):
        resolve_agent(str(path), fives)
    three = raw_env("classic", num_players=3)
    with pytest.raises(CheckpointError, match=r"obs_size=\d+, but this environment has \d+"):
        load_model(path, three.encoder.size, three.rules.num_actions)
    with pytest.raises(CheckpointError, match="obs_size"):
        resolve_agent(str(path), three)
    # resuming a run on another variant or table, or with another network, is refused too
    for config in (
        tiny_config(tmp_path, variant="all_fives", options="{num_players: 2, episode: round}"),
        tiny_config(tmp_path, options="{num_players: 3, episode: round}"),
        tiny_config(tmp_path, "network.hidden=[16]"),
    ):
        with pytest.raises(CheckpointError, match="trained on"):
            Trainer(config, resume=path)


def test_resume_refuses_what_the_saved_games_depend_on_and_damaged_state(
    tmp_path: Path, classic_run: Path
) -> None:
    """Games in progress are saved per env and per pool member: another ``run.num_envs`` or
    ``pool.baselines`` is refused with the value to use, as is a checkpoint whose saved state is
    damaged; the same file then still resumes a run with the right settings."""
    path = classic_run / "latest.pt"
    for override, words in (
        ("run.num_envs=8", r"run\.num_envs=4.*this run has 8: resume it with run\.num_envs=4"),
        ("run.num_envs=2", r"run\.num_envs=4"),
        ("pool.baselines=[random]", r"pool\.baselines=\[\].*resume it with pool\.baselines=\[\]"),
    ):
        with pytest.raises(CheckpointError, match=words):
            Trainer(tiny_config(tmp_path / "out", override), resume=path)
    data = torch.load(path, weights_only=False)
    damaged = {
        "no_optimizer": ({k: v for k, v in data.items() if k != "optimizer"}, r"lacks \['optimizer'\]"),
        "short_games": ({**data, "collector": {**data["collector"], "games": []}}, "damaged.*IndexError"),
        "bad_weights": (
            {**data, "model": {k: v[:1] for k, v in data["model"].items()}},
            "damaged.*RuntimeError",
        ),
    }
    for name, (payload, words) in damaged.items():
        torch.save(payload, tmp_path / f"{name}.pt")
        with pytest.raises(CheckpointError, match=words):
            Trainer(tiny_config(tmp_path / "out"), resume=tmp_path / f"{name}.pt")
    # a changed learning rate is this run's, even without annealing (not the optimizer's saved one)
    trainer = Trainer(
        tiny_config(tmp_path / "out", "ppo.anneal_lr=false", "ppo.learning_rate=0.5"), resume=path
    )
    assert trainer.iteration == 2
    assert trainer.optimizer.param_groups[0]["lr"] == 0.5


def test_a_fresh_run_never_mixes_with_an_earlier_one_in_its_folder(tmp_path: Path) -> None:
    """Training again under the same run name is refused (its checkpoints, logs and evaluations
    would mix with the earlier run's) unless asked to start over, which removes the earlier run."""
    first = Trainer(tiny_config(tmp_path, "eval.every=1", "eval.games=2"))
    first.train(progress=False)
    assert (first.run_dir / "checkpoints" / "iter_00002.pt").is_file()
    with pytest.raises(
        ConfigError, match=r"already holds a run \(checkpoints, tb, evaluations\.csv\).*--overwrite"
    ):
        Trainer(tiny_config(tmp_path))
    assert (first.run_dir / "checkpoints" / "iter_00002.pt").is_file()  # refusing deletes nothing
    (first.run_dir / "notes.txt").write_text("mine")  # not the run's: --overwrite keeps it
    again = Trainer(tiny_config(tmp_path, "run.total_steps=64"), overwrite=True)
    again.train(progress=False)
    assert (first.run_dir / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (again.run_dir / "checkpoints").iterdir()) == ["iter_00001.pt", "latest.pt"]
    assert not (again.run_dir / "evaluations.csv").exists()
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"run\.out_dir: cannot write the run folder"):
        Trainer(tiny_config(blocker))


def test_resume_from_a_run_folder_or_an_earlier_checkpoint(tmp_path: Path) -> None:
    """A run folder resumes from its latest; an earlier checkpoint replays the iterations after it,
    whose evaluation rows are replaced (not repeated) as they are written again."""
    overrides = ("eval.every=1", "eval.games=2", "run.total_steps=192", "ppo.anneal_lr=false")
    run = Trainer(tiny_config(tmp_path, *overrides))
    run.train(progress=False)
    log = run.run_dir / "evaluations.csv"
    assert [row[0] for row in csv.reader(log.open())][1:] == ["1", "2", "3"]
    assert Trainer(tiny_config(tmp_path, *overrides), resume=run.run_dir).iteration == 3
    earlier = Trainer(tiny_config(tmp_path, *overrides), resume=run.run_dir / "checkpoints" / "iter_00001.pt")
    assert [row[0] for row in csv.reader(log.open())][1:] == ["1", "2", "3"]  # nothing lost before work
    earlier.train(progress=False)
    assert [row[0] for row in csv.reader(log.open())][1:] == ["1", "2", "3"]
    with pytest.raises(
        CheckpointError, match=r"\(checkpoint -> this run\): env\.options\.num_players: 2 -> 3"
    ):
        Trainer(tiny_config(tmp_path, options="{num_players: 3, episode: round}"), resume=run.run_dir)
    for changed, kept in (("run.rollout_steps=8", "run.rollout_steps=16"), ("eval.opponents=[greedy]", "")):
        with pytest.raises(CheckpointError, match=re.escape(kept or "eval.opponents=['random', 'greedy']")):
            Trainer(tiny_config(tmp_path, *overrides, changed), resume=run.run_dir)
    with pytest.raises(CheckpointError, match="not a training run folder"):
        Trainer(tiny_config(tmp_path), resume=tmp_path)


def test_a_checkpoint_of_another_run_goes_on_in_a_free_folder_only(tmp_path: Path) -> None:
    """Resuming run a's checkpoint under run b's name starts b from it, unless b's folder holds
    a run: then it is refused (and nothing of either run is touched)."""
    a = Trainer(tiny_config(tmp_path, "run.name=a"))
    a.train(progress=False)
    b = Trainer(tiny_config(tmp_path, "run.name=b", "run.total_steps=64"))
    b.train(progress=False)
    before = sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir())
    with pytest.raises(
        ConfigError, match=r"b already holds another run .* continue it under another run\.name"
    ):
        Trainer(tiny_config(tmp_path, "run.name=b"), resume=tmp_path / "a")
    assert sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir()) == before
    c = Trainer(tiny_config(tmp_path, "run.name=c", "run.total_steps=192"), resume=tmp_path / "a")
    c.train(progress=False)
    assert sorted(p.name for p in (tmp_path / "c" / "checkpoints").iterdir()) == [
        "iter_00003.pt",
        "latest.pt",
    ]
    assert sorted(p.name for p in (tmp_path / "a" / "checkpoints").iterdir()) == [
        "iter_00001.pt",
        "iter_00002.pt",
        "latest.pt",
    ]


def test_weights_only_export_loads_but_cannot_resume(tmp_path: Path, classic_run: Path) -> None:
    slim = checkpoint.export(classic_run / "latest.pt", tmp_path / "slim.pt")
    model, _ = load_model(slim)
    original, _ = load_model(classic_run / "latest.pt")
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), original.parameters(), strict=True))
    with pytest.raises(CheckpointError, match="cannot resume"):
        Trainer(tiny_config(tmp_path / "out"), resume=slim)


def test_rng_states_round_trip() -> None:
    rngs = {"a": np.random.default_rng(1)}
    states = checkpoint.rng_states(rngs)
    first = (torch.rand(3), rngs["a"].random(3))
    rngs["a"].random(5)
    torch.rand(5)
    checkpoint.restore_rngs(states, rngs)
    again = (torch.rand(3), rngs["a"].random(3))
    assert torch.equal(first[0], again[0]) and np.array_equal(first[1], again[1])


# --- configuration ---------------------------------------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_configs_load_and_survive_a_dict_round_trip(path: Path) -> None:
    config = load_config(path)
    assert config_from_dict(config.to_dict()) == config


def test_all_fives_config_and_overrides() -> None:
    config = load_config(
        ROOT / "configs" / "all_fives.yaml",
        ["ppo.learning_rate=0.001", "run.num_envs=8", "network.hidden=[32, 16]", "eval.opponents=[random]"],
    )
    assert config.env.variant == "all_fives" and config.env.options["num_players"] == 2
    assert config.ppo.learning_rate == 0.001 and isinstance(config.ppo.learning_rate, float)
    assert config.run.num_envs == 8 and config.network.hidden == [32, 16]
    assert config.eval.opponents == ["random"]
    assert config.run_name == "all_fives-1"


def test_float_override_in_scientific_notation() -> None:
    """The CLI help and config.py's docstring show ``ppo.learning_rate=1e-3``."""
    assert load_config(None, ["ppo.learning_rate=1e-3"]).ppo.learning_rate == pytest.approx(1e-3)


def test_overriding_one_env_option_keeps_the_others() -> None:
    config = load_config(ROOT / "configs" / "all_fives.yaml", ["env.options.num_players=4"])
    file_options = load_config(ROOT / "configs" / "all_fives.yaml").env.options
    assert config.env.options == {**file_options, "num_players": 4}


def test_unknown_keys_are_named_with_the_allowed_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "ppo:\n  learning_rat: 0.1\n"))
    assert "ppo.learning_rat" in str(err.value)
    assert "learning_rate" in str(err.value) and "gae_lambda" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "optimiser: {lr: 1}\n"))
    assert "optimiser" in str(err.value)
    assert all(section in str(err.value) for section in ("env", "network", "ppo", "pool", "eval", "run"))
    with pytest.raises(ConfigError, match=r"run\.num_env.*num_envs"):
        load_config(None, ["run.num_env=3"])


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("ppo.learning_rate=fast", r"ppo\.learning_rate must be float.*fast"),
        ("run.num_envs=2.5", r"run\.num_envs must be int"),
        ("run.num_envs=true", r"run\.num_envs must be int"),
        ("ppo.anneal_lr=1", r"ppo\.anneal_lr must be bool"),
        ("network.hidden=[32, wide]", r"network\.hidden\[1\] must be int"),
        ("network.hidden=32", r"network\.hidden must be list"),
        ("env.options=4", r"env\.options must be dict"),
        ("ppo=3", r"ppo must be a mapping"),
        ("run.num_envs=0", r"run\.num_envs must be at least 1"),
        ("pool.share=1.5", r"pool\.share must be in \[0, 1\]"),
        ("eval.opponents=[nobody]", r"nobody.*random"),
        ("pool.baselines=[nobody]", r"pool\.baselines.*nobody.*random"),
        ("run.checkpoint_every=0", r"run\.checkpoint_every must be at least 1"),
        ("eval.games=0", r"eval\.games must be at least 1"),
        ("eval.every=-1", r"eval\.every must be 0 \(never\) or more"),
        ("ppo.learning_rate=-1", r"ppo\.learning_rate must be above 0, got -1"),
        ("ppo.max_grad_norm=.nan", r"ppo\.max_grad_norm must be above 0, got nan"),
        ("ppo.clip_coef=-0.2", r"ppo\.clip_coef must be above 0"),
        ("ppo.ent_coef=-0.01", r"ppo\.ent_coef must be 0 or more"),
        ("ppo.target_kl=.inf", r"ppo\.target_kl must be 0 or more, got inf"),
        ("ppo.gamma=-3", r"ppo\.gamma must be in \[0, 1\], got -3"),
        ("ppo.gae_lambda=1.5", r"ppo\.gae_lambda must be in \[0, 1\]"),
        ("run.reward_scale=0", r"run\.reward_scale must be above 0"),
    ],
)
def test_ill_typed_or_senseless_values_are_refused(override: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, [override])


@pytest.mark.parametrize("override", ["ppo.learning_rate", "ppo.learning_rate 0.1", "=3"])
def test_bad_override_syntax(override: str) -> None:
    with pytest.raises(ConfigError, match=r"section\.key=value|unknown key"):
        load_config(None, [override])


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("env.variant=checkers", r"env: .*checkers.*all_fives"),
        ("env.options={num_players: 7}", r"env: .*players.*7"),
        ("env.options={num_players: 2, teams: true}", r"env: .*teams"),
        ("env.options={num_players: 2, episode: forever}", r"env: .*episode.*forever"),
        ("env.options={num_players: 2, colour: red}", r"env: .*colour"),
    ],
)
def test_bad_env_variant_or_option(override: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, [override])


def test_missing_file_invalid_yaml_and_non_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "ppo: [1, 2\nrun: {a: 1}\n"))
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- 1\n- 2\n"))
    assert load_config(write(tmp_path, "")) == Config()  # an empty file is the defaults
    with pytest.raises(ConfigError, match="is a folder; give a YAML file"):
        load_config(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_config(binary)


# --- command line ----------------------------------------------------------------------------------


def test_cli_bad_config_key_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["train", str(ROOT / "configs" / "all_fives.yaml"), "ppo.bogus=1"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error:") and "ppo.bogus" in err and "learning_rate" in err


@pytest.mark.parametrize(
    ("make_args", "words"),
    [
        (lambda tmp: [str(tmp / "missing.yaml")], "does not exist"),
        (lambda tmp: [str(write(tmp, "ppo: [1, 2\nrun: {a: 1}\n"))], "not valid YAML"),
        (lambda tmp: [str(write(tmp, "ppo:\n  clip: 1\n"))], "ppo.clip"),
        (lambda tmp: [str(ROOT / "configs" / "classic.yaml"), "run.seed"], "section.key=value"),
        (lambda tmp: [str(ROOT / "configs" / "classic.yaml"), "env.variant=checkers"], "checkers"),
        (
            lambda tmp: [str(ROOT / "configs" / "classic.yaml"), "--resume", str(write(tmp, "junk", "x.pt"))],
            "cannot be read",
        ),
    ],
    ids=["missing", "yaml", "key", "syntax", "variant", "resume"],
)
def test_cli_setup_errors_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_args: Any, words: str
) -> None:
    code = main(["train", *make_args(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error:") and words in err


def test_cli_module_entry_point_exits_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "training", "train", "configs/all_fives.yaml", "ppo.bogus=1", "--no-progress"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "ppo.bogus" in lines[0]


def test_cli_trains_a_tiny_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path, "env:\n  variant: classic\n  options: {num_players: 2, episode: round}\n")
    overrides = [o for o in TINY if not o.startswith("run.total_steps")]
    code = main(
        [
            "train",
            str(config),
            *overrides,
            "run.total_steps=64",
            "run.name=cli",
            "eval.every=1",
            "eval.games=2",
            f"run.out_dir={tmp_path.as_posix()}",
            "--no-progress",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    checkpoints = tmp_path / "cli" / "checkpoints"
    assert str(checkpoints / "iter_00001.pt") in out  # the final checkpoint is named
    assert {p.name for p in checkpoints.iterdir()} == {"iter_00001.pt", "latest.pt"}
    assert (tmp_path / "cli" / "evaluations.csv").read_text().splitlines()[0].startswith("iteration,steps")


def test_ship_exports_the_agent_with_its_config_and_records_its_win_rates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path, "env:\n  variant: classic\n  options: {num_players: 2, episode: round}\n")
    agents = tmp_path / "agents"
    overrides = [o for o in TINY if not o.startswith("run.total_steps")]
    common = [*overrides, "run.total_steps=64", f"run.out_dir={tmp_path.as_posix()}"]
    args = ["--agents-dir", str(agents), "--games", "6", "--no-progress"]
    (tmp_path / "classic-1" / "checkpoints").mkdir(parents=True)  # a `train` run of the same config
    assert main(["ship", str(config), *common, *args]) == 0
    assert "agents" in capsys.readouterr().out
    assert (tmp_path / "classic-1" / "checkpoints").is_dir()  # left alone: ship trains in its own folder
    assert (tmp_path / "ship-classic-1" / "checkpoints" / "latest.pt").is_file()
    _, trained = load_model(agents / "classic.pt")  # weights only, with the config
    assert trained.env.variant == "classic" and trained.network.hidden == [32]
    assert load_config(str(agents / "classic.yaml")) == trained
    with (agents / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["variant"] for r in rows] == ["classic"]
    assert rows[0]["games"] == "6" and rows[0]["steps"] == "64"
    assert (
        0.0
        <= float(rows[0]["vs_random_low"])
        <= float(rows[0]["vs_random"])
        <= float(rows[0]["vs_random_high"])
    )
    table = (agents / "README.md").read_text()
    assert "| classic |" in table and "vs greedy" in table

    blitz = write(tmp_path, "env:\n  variant: blitz\n  options: {num_players: 2, episode: round}\n")
    assert main(["ship", str(blitz), *common, *args]) == 0
    assert main(["ship", str(config), *common, "run.seed=5", *args]) == 0  # shipped again: replaced
    with (agents / "results.csv").open() as handle:
        assert [r["variant"] for r in csv.DictReader(handle)] == ["blitz", "classic"]
    assert main(["ship", str(tmp_path / "missing.yaml"), *args]) == 2
