"""The policy networks: masking, what an action is (action blocks, action traits, the play
outlook), the board network and the legal-actions policy, and how a table shapes them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from domino_env import raw_env
from tests.support.training_helpers import random_masks, tiny_config
from training.model import checkpoint
from training.model.checkpoint import load_model
from training.model.config import ConfigError
from training.model.networks import ActorCritic, Architecture, BoardShape, PlayOutlook, play_outlook_spec
from training.rl.train import Trainer


def test_illegal_actions_get_exactly_zero_probability_and_are_never_sampled() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = ActorCritic(Architecture(20, 12, hidden=[32]))
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
    model = ActorCritic(Architecture(22, 8, hidden=[32], action_blocks=blocks))
    plain = ActorCritic(Architecture(22, 8, hidden=[32]))
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
    model = ActorCritic(Architecture(6, 3, hidden=[16], action_traits=traits))
    obs = torch.from_numpy(np.random.default_rng(3).normal(size=(4, 6)).astype(np.float32))
    with torch.no_grad():
        features = model.trunk(obs)
        assert model.trait_gains is not None
        gains = model.trait_gains(features)
        expected = model.policy(features)
        expected[:, 0] += 0.5 * gains[:, 0] + gains[:, 1]
        expected[:, 1] += gains[:, 0]
        assert torch.allclose(model.logits(obs, features), expected)
    assert model.copy().architecture == model.architecture


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
    model = ActorCritic(Architecture(size, actions, hidden=[16], outlook=spec))
    plain = ActorCritic(Architecture(size, actions, hidden=[16]))
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
    assert model.copy().architecture == model.architecture
    board = raw_env("domino3d")
    assert play_outlook_spec(board.rules, board.observation_layout) is None


def test_board_net_scores_each_action_at_its_anchor_cell() -> None:
    """Action id channel * cells + cell reads the 1x1 policy convolution at (channel, cell)."""
    torch.manual_seed(5)
    planes, size, channels = 3, 4, 8
    board = BoardShape(planes, size, channels)
    model = ActorCritic(Architecture(planes * 16 + 5, 6 * 16, hidden=[16], board=board))
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
    assert model.copy().architecture == model.architecture


def board_model(seed: int, action_planes: int = 0) -> tuple[ActorCritic, torch.Tensor, torch.Tensor]:
    """A small board network (4 planes of 4 x 4, 6 action channels), random observations and
    random masks (a few legal actions a row, at least one), with weights scaled up so that the
    policy is far from uniform."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    board = BoardShape(4, 4, 8, action_planes)
    model = ActorCritic(Architecture(4 * 16 + 5, 6 * 16, hidden=[16], board=board))
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
        ActorCritic(Architecture(4 * 16 + 5, 6 * 16, hidden=[16], board=BoardShape(4, 4, 8, 4)))


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
    assert model.architecture == trainer.model.architecture
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
    assert model.architecture == trainer.model.architecture
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


def test_the_oracle_critic_reads_the_state_and_acting_never_does() -> None:
    torch.manual_seed(0)
    model = ActorCritic(Architecture(12, 6, hidden=[16], state_size=20))
    assert model.value is None and model.critic is not None
    rng = np.random.default_rng(0)
    obs = rng.random((5, 12), dtype=np.float32)
    masks = random_masks(rng, 5, 6)
    states = [rng.random((5, 20), dtype=np.float32) for _ in range(2)]
    acted = []
    for state in (*states, None):
        torch.manual_seed(1)
        acted.append(model.act(obs, masks, state))
    for actions, logprobs, _ in acted[1:]:  # the same actions whatever the state, or none
        np.testing.assert_array_equal(actions, acted[0][0])
        np.testing.assert_array_equal(logprobs, acted[0][1])
    assert not np.allclose(acted[0][2], acted[1][2])  # the values are the critic's of each state
    np.testing.assert_array_equal(acted[2][2], np.zeros(5))  # no state: no value
    assert masks[np.arange(5), model.greedy(obs, masks)].all()  # (greedy takes no state at all)
    # the update's gradient reaches the critic, which the policy's loss alone never does
    policy, value = model.legal(torch.from_numpy(obs), torch.from_numpy(masks), torch.from_numpy(states[0]))
    policy.log_prob(policy.mode()).sum().backward()
    assert all(p.grad is None for p in model.critic.parameters())
    value.sum().backward()
    assert all(p.grad is not None for p in model.critic.parameters())


def test_oracle_critic_trains_and_its_checkpoint_plays_from_observations(tmp_path: Path) -> None:
    trainer = Trainer(tiny_config(tmp_path, "network.oracle_critic=true"))
    env = trainer.collector.envs[0]
    assert trainer.model.state_size == env.state_space.shape[0]
    path = trainer.train(progress=False)
    model, config = load_model(path)
    assert config.network.oracle_critic and model.architecture == trainer.model.architecture
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)
    assert model.greedy(
        observation["observation"][None], observation["action_mask"][None].astype(bool)
    ).shape == (1,)
