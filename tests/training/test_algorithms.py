"""``algorithm``: ppo (the default), mmd (magnetic mirror descent: PPO plus a KL pull toward a
magnet policy) and dmc (Deep Monte Carlo: the logits as Q values regressed on episode returns,
epsilon-greedy play). The config's refusals, the magnet term against a hand computation, the
magnet's refreshes, epsilon-greedy acting, Monte Carlo returns, the Q regression, runs that
evaluate, and their exact resumes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import training.rl.train as train_module
from tests.support.training_helpers import acted_batch, resumed_halfway, tiny_config, write
from training.__main__ import main
from training.model import checkpoint
from training.model.config import ConfigError, config_from_dict, load_config
from training.model.networks import ActorCritic, Architecture
from training.rl import dmc
from training.rl.ppo import Batch, policy_magnet, uniform_magnet, update
from training.rl.rollout import LocalCollector, Transitions
from training.rl.train import Trainer
from training.rl.vector_collect import VectorCollector

TINY_TABLE = {"variant": "classic", "options": "{preset: tiny}"}


# --- config ---------------------------------------------------------------------------------


def test_algorithm_defaults_to_ppo_and_an_unknown_one_is_refused_with_the_known_ones() -> None:
    assert load_config(None).algorithm == "ppo"
    assert load_config(None, ["algorithm=mmd"]).algorithm == "mmd"
    with pytest.raises(ConfigError) as err:
        load_config(None, ["algorithm=foo"])
    assert str(err.value) == "unknown algorithm 'foo'; known: ppo, mmd, dmc, nfsp, cfr, mccfr"


def test_cli_refuses_an_unknown_algorithm_with_exit_2_and_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["train", "configs/classic_tiny.yaml", "algorithm=foo"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == "error: unknown algorithm 'foo'; known: ppo, mmd, dmc, nfsp, cfr, mccfr\n"


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (["algorithm=mmd", "mmd.magnet_coef=-0.1"], r"mmd\.magnet_coef must be 0 or more, got -0\.1"),
        (["algorithm=mmd", "mmd.magnet_coef=.nan"], r"mmd\.magnet_coef must be 0 or more"),
        (["algorithm=mmd", "mmd.magnet_every=-1"], r"mmd\.magnet_every must be 0 \(a uniform magnet\)"),
        (["algorithm=mmd", "mmd.magnet_every=2.5"], r"mmd\.magnet_every must be int"),
        (
            ["algorithm=mmd", "mmd.magnet=1"],
            r"unknown key 'mmd\.magnet'; allowed here: magnet_coef, magnet_every",
        ),
        (
            ["mmd.magnet_coef=0.1"],
            r"mmd\.magnet_coef=0\.1: the mmd settings apply to algorithm=mmd only.*algorithm is ppo",
        ),
        (
            ["algorithm=ppo", "mmd.magnet_every=3"],
            r"mmd\.magnet_every=3: the mmd settings apply to algorithm=mmd only",
        ),
    ],
)
def test_mmd_settings_are_validated(overrides: list[str], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, overrides)


def test_mmd_settings_load_from_a_file_and_survive_a_dict_round_trip(tmp_path: Path) -> None:
    path = write(tmp_path, "algorithm: mmd\nmmd:\n  magnet_coef: 0.2\n  magnet_every: 0\n")
    config = load_config(path)
    assert (config.algorithm, config.mmd.magnet_coef, config.mmd.magnet_every) == ("mmd", 0.2, 0)
    assert config_from_dict(config.to_dict()) == config
    # a ppo config written whole (as ship writes one) holds the default mmd section: accepted
    ppo = load_config(None)
    assert config_from_dict(ppo.to_dict()) == ppo
    assert load_config(write(tmp_path, "mmd: {magnet_coef: 0.05, magnet_every: 10}\n", "ppo.yaml")) == ppo


# --- the update's magnet term ---------------------------------------------------------------


def set_logits(model: ActorCritic, logits: list[float]) -> ActorCritic:
    """The model's policy gives these logits to every row (zero weights, the logits as bias)."""
    with torch.no_grad():
        model.policy.weight.zero_()
        model.policy.bias.copy_(torch.tensor(logits))
    return model


def hand_batch(model: ActorCritic, masks: np.ndarray) -> Batch:
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(len(masks), model.architecture.obs_size)).astype(np.float32)
    return acted_batch(obs, masks, model.act(obs, masks), rng)


MASKS = np.array(
    [
        [1, 1, 1, 0, 0],
        [0, 1, 0, 1, 1],
        [1, 0, 0, 0, 1],
        [0, 0, 1, 0, 0],  # one legal action: KL 0
    ],
    dtype=bool,
)
POLICY_LOGITS = [0.5, -1.0, 2.0, 0.0, 1.0]
MAGNET_LOGITS = [-0.3, 1.5, 0.2, -2.0, 0.7]


def by_hand_kl(policy_bias: torch.Tensor, magnet_logits: list[float]) -> torch.Tensor:
    """Mean over the rows of KL(policy || magnet), both softmaxes over each row's legal actions."""
    rows = []
    for legal in torch.from_numpy(MASKS):
        p = torch.softmax(policy_bias[legal], 0)
        q = torch.softmax(torch.tensor(magnet_logits)[legal], 0)
        rows.append((p * (p.log() - q.log())).sum())
    return torch.stack(rows).mean()


def one_step(model: ActorCritic, **magnet: Any) -> dict[str, float]:
    """One epoch, one minibatch, learning rate 0 (the weights stay), no gradient clipping."""
    cfg = tiny_config().ppo
    cfg.update_epochs, cfg.num_minibatches, cfg.max_grad_norm = 1, 1, 1e9
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    return update(
        model, optimizer, batch=hand_batch(model, MASKS), cfg=cfg, rng=np.random.default_rng(0), **magnet
    )


def test_the_magnet_term_is_the_kl_to_the_magnet_over_the_legal_actions() -> None:
    torch.manual_seed(0)
    architecture = Architecture(6, 5, hidden=[8])
    model = set_logits(ActorCritic(architecture), POLICY_LOGITS)
    magnet = set_logits(ActorCritic(architecture), MAGNET_LOGITS).eval()

    plain = one_step(model)
    assert "loss/magnet_kl" not in plain
    plain_grad = model.policy.bias.grad.clone()
    coef = 0.7
    stats = one_step(model, magnet=policy_magnet(magnet), magnet_coef=coef)

    bias = torch.tensor(POLICY_LOGITS, requires_grad=True)
    expected = by_hand_kl(bias, MAGNET_LOGITS)
    assert stats["loss/magnet_kl"] == pytest.approx(expected.item(), rel=1e-5)
    assert expected.item() > 0.1
    # the loss gained coef * KL: the gradient on the logits grew by coef * dKL/dlogits
    (kl_grad,) = torch.autograd.grad(expected, bias)
    assert torch.allclose(model.policy.bias.grad - plain_grad, coef * kl_grad, atol=1e-6)
    assert magnet.policy.bias.grad is None  # the magnet is frozen

    # against itself the pull is nothing
    same = set_logits(ActorCritic(architecture), POLICY_LOGITS)
    assert one_step(model, magnet=policy_magnet(same), magnet_coef=coef)["loss/magnet_kl"] == pytest.approx(
        0.0, abs=1e-6
    )


def test_the_uniform_magnet_is_uniform_over_the_legal_actions(tmp_path: Path) -> None:
    masks = torch.from_numpy(MASKS)
    log_probs = uniform_magnet(torch.zeros(len(MASKS), 6), masks)
    counts = masks.sum(-1)
    assert log_probs.shape == (4, 3)  # LegalPolicy's layout: the widest row's legal actions
    for row, count in enumerate(counts.tolist()):
        assert torch.allclose(log_probs[row, :count].exp(), torch.full((count,), 1.0 / count))
        assert float(log_probs[row, :count].exp().sum()) == pytest.approx(1.0)

    # so the KL to it is log(#legal) minus the policy's entropy
    torch.manual_seed(0)
    model = set_logits(ActorCritic(Architecture(6, 5, hidden=[8])), POLICY_LOGITS)
    stats = one_step(model, magnet=uniform_magnet, magnet_coef=0.5)
    with torch.no_grad():
        entropy = model.legal(torch.zeros(4, 6), masks)[0].entropy()
    expected = (counts.float().log() - entropy).mean()
    assert stats["loss/magnet_kl"] == pytest.approx(float(expected), rel=1e-5)
    assert stats["loss/magnet_kl"] == pytest.approx(float(by_hand_kl(torch.tensor(POLICY_LOGITS), [0.0] * 5)))

    # and an mmd trainer with mmd.magnet_every=0 keeps no magnet model and pulls toward it
    trainer = Trainer(tiny_config(tmp_path, "algorithm=mmd", "mmd.magnet_every=0", **TINY_TABLE))
    try:
        assert trainer.magnet is None and trainer.magnet_policy() is uniform_magnet
    finally:
        trainer.collector.close()


# --- the trainer -------------------------------------------------------------------------------


def test_the_magnet_is_refreshed_every_magnet_every_updates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five iterations with mmd.magnet_every=2: refreshed after updates 2 and 4, when it becomes
    that update's policy; the ppo trainer keeps none and passes none."""
    trainer = Trainer(
        tiny_config(tmp_path, "algorithm=mmd", "mmd.magnet_every=2", "run.total_steps=320", **TINY_TABLE)
    )
    assert trainer.magnet is not None
    start = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    assert all(torch.equal(trainer.magnet.state_dict()[k], v) for k, v in start.items())
    refreshed: list[int] = []
    real_refresh = trainer.refresh_magnet

    def counted() -> None:
        refreshed.append(trainer.iteration)
        real_refresh()

    monkeypatch.setattr(trainer, "refresh_magnet", counted)
    seen: list[dict[str, float]] = []
    real_update = train_module.update

    def spied(*args: Any, **kwargs: Any) -> dict[str, float]:
        assert kwargs["magnet"] is not None and kwargs["magnet_coef"] == 0.05
        seen.append(real_update(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(train_module, "update", spied)
    trainer.train(progress=False)
    assert trainer.iteration == 5 and refreshed == [2, 4]
    assert all("loss/magnet_kl" in stats for stats in seen)  # logged to TensorBoard with the rest
    fourth = checkpoint.load(trainer.run_dir / "checkpoints" / "iter_00004.pt")
    for name, value in trainer.magnet.state_dict().items():
        assert torch.equal(value, fourth["model"][name]), name  # the policy after update 4
        assert torch.equal(fourth["magnet"][name], value)  # saved with the checkpoint
    assert not all(
        torch.equal(v, trainer.model.state_dict()[k]) for k, v in trainer.magnet.state_dict().items()
    )

    ppo = Trainer(tiny_config(tmp_path / "ppo", **TINY_TABLE))
    try:
        assert ppo.magnet is None and ppo.magnet_policy() is None and "magnet" not in ppo.payload()
    finally:
        ppo.collector.close()


def test_a_short_mmd_run_trains_and_its_checkpoint_evaluates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trainer = Trainer(tiny_config(tmp_path, "algorithm=mmd", **TINY_TABLE))
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.train(progress=False)
    assert any(not torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())
    run = trainer.run_dir
    assert checkpoint.load(run)["config"].algorithm == "mmd"
    assert main(["evaluate", str(run), "random", "--games", "4", "--no-progress"]) == 0
    capsys.readouterr()
    # a resume keeps the algorithm
    with pytest.raises(checkpoint.CheckpointError, match="algorithm=mmd; this run has ppo: resume it with"):
        Trainer(tiny_config(tmp_path, **TINY_TABLE), resume=run)


def test_an_mmd_resume_is_exact(tmp_path: Path) -> None:
    """Five iterations straight against three, a checkpoint and two more in a fresh trainer
    (resumed_halfway's pattern): with mmd.magnet_every=2 the checkpoint's magnet is the policy
    after update 2 - neither the starting policy nor the saved one - and update 4 pulls toward
    it, so both runs end with the same weights only if it came back exactly."""
    overrides = ["run.total_steps=320", "algorithm=mmd", "mmd.magnet_every=2", "mmd.magnet_coef=0.5"]
    straight = Trainer(tiny_config(tmp_path / "a", *overrides, **TINY_TABLE))
    straight.train(progress=False)
    third = straight.run_dir / "checkpoints" / "iter_00003.pt"
    saved = checkpoint.load(third)
    second = checkpoint.load(straight.run_dir / "checkpoints" / "iter_00002.pt")
    assert all(torch.equal(saved["magnet"][k], v) for k, v in second["model"].items())
    assert not all(torch.equal(saved["magnet"][k], v) for k, v in saved["model"].items())
    torch.manual_seed(123)  # the resumed trainer must not depend on the process's state
    np.random.seed(123)
    resumed = Trainer(tiny_config(tmp_path / "b", *overrides, **TINY_TABLE), resume=third)
    assert (resumed.iteration, resumed.steps) == (3, 192)
    resumed.train(progress=False)
    assert resumed.iteration == straight.iteration == 5
    assert straight.magnet is not None and resumed.magnet is not None
    for ours, theirs in ((straight.model, resumed.model), (straight.magnet, resumed.magnet)):
        a, b = ours.state_dict(), theirs.state_dict()
        assert a.keys() == b.keys()
        for name in a:
            assert torch.equal(a[name], b[name]), f"{name} differs after resuming"


# --- dmc: config ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (["algorithm=dmc", "dmc.epsilon=1.5"], r"dmc\.epsilon must be in \[0, 1\], got 1\.5"),
        (["algorithm=dmc", "dmc.epsilon=-0.1"], r"dmc\.epsilon must be in \[0, 1\]"),
        (["algorithm=dmc", "dmc.eps=0.1"], r"unknown key 'dmc\.eps'; allowed here: epsilon"),
        (
            ["dmc.epsilon=0.1"],
            r"dmc\.epsilon=0\.1: the dmc settings apply to algorithm=dmc only.*algorithm is ppo",
        ),
        (
            ["algorithm=mmd", "dmc.epsilon=0.2"],
            r"dmc\.epsilon=0\.2: the dmc settings apply to algorithm=dmc only",
        ),
        (
            ["algorithm=dmc", "mmd.magnet_coef=0.1"],
            r"the mmd settings apply to algorithm=mmd only.*algorithm is dmc",
        ),
    ],
)
def test_dmc_settings_are_validated(overrides: list[str], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, overrides)


def test_dmc_settings_load_and_survive_a_dict_round_trip(tmp_path: Path) -> None:
    default = load_config(None, ["algorithm=dmc"])
    assert (default.algorithm, default.dmc.epsilon) == ("dmc", 0.01)  # DouZero's
    config = load_config(write(tmp_path, "algorithm: dmc\ndmc:\n  epsilon: 0.1\n"))
    assert config.dmc.epsilon == 0.1 and config_from_dict(config.to_dict()) == config
    ppo = load_config(None)  # a ppo config written whole holds the default dmc section: accepted
    assert load_config(write(tmp_path, "dmc: {epsilon: 0.01}\n", "ppo.yaml")) == ppo


# --- dmc: epsilon-greedy acting -------------------------------------------------------------


def acting_model(epsilon: float | None) -> ActorCritic:
    torch.manual_seed(0)
    model = set_logits(ActorCritic(Architecture(6, 5, hidden=[8])), POLICY_LOGITS)
    model.epsilon = epsilon
    return model


def test_epsilon_0_plays_the_best_legal_action_with_probability_1() -> None:
    model = acting_model(0.0)
    masks = np.tile(MASKS, (50, 1))
    actions, logprobs, _ = model.act(np.zeros((len(masks), 6), dtype=np.float32), masks)
    best = [max(np.flatnonzero(row), key=lambda a: POLICY_LOGITS[a]) for row in masks]
    assert (
        actions.tolist() == best == model.greedy(np.zeros((len(masks), 6), dtype=np.float32), masks).tolist()
    )
    assert np.all(logprobs == 0.0)
    assert model.copy().epsilon == 0.0  # a pool snapshot plays as the policy does


def test_epsilon_1_plays_uniformly_over_the_legal_actions_and_never_an_illegal_one() -> None:
    model = acting_model(1.0)
    rows = 3000
    masks = np.tile(MASKS[1:2], (rows, 1))  # legal: 1, 3, 4 (4 the best)
    actions, logprobs, _ = model.act(np.zeros((rows, 6), dtype=np.float32), masks)
    counts = np.bincount(actions, minlength=5)
    assert counts[[0, 2]].tolist() == [0, 0]
    assert np.all(np.abs(counts[[1, 3, 4]] / rows - 1 / 3) < 0.04), counts
    assert np.allclose(logprobs, np.log(1 / 3))
    # mixed rows: every action legal in its row; the logprob is the epsilon-greedy policy's
    model.epsilon = 0.5
    masks = np.tile(MASKS, (500, 1))
    actions, logprobs, _ = model.act(np.zeros((len(masks), 6), dtype=np.float32), masks)
    assert masks[np.arange(len(masks)), actions].all()
    legal = masks.sum(1)
    best = np.array([max(np.flatnonzero(row), key=lambda a: POLICY_LOGITS[a]) for row in masks])
    expected = np.where(actions == best, 0.5 + 0.5 / legal, 0.5 / legal)
    assert np.allclose(logprobs, np.log(expected), atol=1e-6)


def test_both_collectors_act_epsilon_greedily() -> None:
    """With dmc.epsilon=0 every learner decision of either collector is the model's greedy one."""
    for kind, collector in (("local", LocalCollector), ("vector", VectorCollector)):
        config = tiny_config(None, "algorithm=dmc", "dmc.epsilon=0", f"run.collector={kind}", **TINY_TABLE)
        made = collector(config, np.random.default_rng(0))
        model = ActorCritic(made.architecture)
        model.epsilon = 0.0
        batch, _ = made.collect(model, 16)
        assert len(batch.actions) > 0
        greedy = model.greedy(batch.obs.numpy(), batch.masks.numpy())
        assert np.array_equal(greedy, batch.actions.numpy()), kind


# --- dmc: Monte Carlo returns and the Q regression ------------------------------------------


def test_monte_carlo_returns_sum_each_seats_rewards_to_the_episodes_end() -> None:
    """Two tables of two seats. Table 0: seat 0, seat 1, seat 0 decide; rewards 0.5 (seat 0) after
    the first move, then (+1, -1) at the end. Table 1: seat 0 decides twice, rewarded 2 in
    between, and the rollout stops before its episode ends: both left out (no return yet)."""
    config = tiny_config(None, "algorithm=dmc")
    chains = Transitions(config, Architecture(3, 4, hidden=[4]), num_envs=2, num_players=2, steps=4)
    obs, masks = np.zeros((1, 3), dtype=np.float32), np.ones((1, 4), dtype=bool)
    acted = (np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.float32), np.zeros(1, dtype=np.float32))

    def decide(table: int, seat: int) -> None:
        chains.add(np.array([table]), np.array([seat]), obs, masks, acted, None)

    decide(0, 0)  # 0
    chains.credit(0, [0.5, 0.0])
    decide(0, 1)  # 1
    decide(1, 0)  # 2
    chains.credit(1, [2.0, 0.0])
    decide(0, 0)  # 3
    decide(1, 0)  # 4 (table 1 goes on past the rollout)
    chains.credit(0, [1.0, -1.0])
    chains.close(0)
    returns, finished = dmc.monte_carlo_returns(
        chains.rewards[:5], successor=chains.successor[:5], done=chains.done[:5]
    )
    assert finished.tolist() == [True, True, False, True, False]
    assert returns[finished].tolist() == [0.5 + 1.0, -1.0, 1.0]
    batch, decisions = chains.batch()
    assert decisions == 5 and batch.returns.tolist() == [1.5, -1.0, 1.0]  # transitions 0, 1 and 3


def test_one_dmc_step_moves_q_toward_the_returns() -> None:
    torch.manual_seed(0)
    model = ActorCritic(Architecture(6, 5, hidden=[8]))
    model.epsilon = 0.3
    batch = hand_batch(model, MASKS)
    batch.returns = torch.tensor([1.0, -1.0, 2.0, 0.5])

    def squared_errors() -> torch.Tensor:
        with torch.no_grad():
            policy, _ = model.legal(batch.obs, batch.masks)
            return (policy.logit(batch.actions) - batch.returns) ** 2

    before = squared_errors()
    cfg = tiny_config().ppo
    cfg.update_epochs, cfg.num_minibatches, cfg.max_grad_norm = 1, 1, 1e9
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    stats = dmc.update(model, optimizer, batch=batch, cfg=cfg, rng=np.random.default_rng(0))
    assert stats["loss/q"] == pytest.approx(float(before.mean()), rel=1e-5)  # mean((Q(s, a) - G)^2)
    assert float(squared_errors().mean()) < float(before.mean())
    # a rollout where no episode finished leaves an empty batch: nothing to learn, nothing logged
    empty = Batch(**{k: v[:0] for k, v in vars(batch).items() if v is not None})
    assert dmc.update(model, optimizer, batch=empty, cfg=cfg, rng=np.random.default_rng(0)) == {}


# --- dmc: the trainer -----------------------------------------------------------------------


def test_a_short_dmc_run_trains_and_its_checkpoint_evaluates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, float]] = []
    real_update = dmc.update

    def spied(*args: Any, **kwargs: Any) -> dict[str, float]:
        seen.append(real_update(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(dmc, "update", spied)
    trainer = Trainer(tiny_config(tmp_path, "algorithm=dmc", "pool.snapshot_every=1", **TINY_TABLE))
    assert trainer.model.epsilon == 0.01
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.train(progress=False)
    assert len(seen) == 2 and all("loss/q" in stats for stats in seen)
    assert any(not torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())
    assert isinstance(trainer.collector, LocalCollector)
    assert [m.epsilon for m in trainer.collector.pool] == [0.01] * len(trainer.collector.pool)
    run = trainer.run_dir
    assert checkpoint.load(run)["config"].algorithm == "dmc"
    assert main(["evaluate", str(run), "random", "--games", "4", "--no-progress"]) == 0
    capsys.readouterr()


def test_a_dmc_resume_is_exact(tmp_path: Path) -> None:
    """Four iterations straight against two, a checkpoint and two more in a fresh trainer."""
    overrides = ["run.total_steps=256", "run.checkpoint_every=2", "algorithm=dmc", "dmc.epsilon=0.2"]
    straight, resumed = resumed_halfway(tmp_path, overrides, **TINY_TABLE)
    assert straight.model.epsilon == resumed.model.epsilon == 0.2
