"""``algorithm: nfsp`` (training/rl/nfsp.py): its memories, its acting by game modes, its DQN
and imitation steps, the trainer's checkpoints and resume, and its refusals."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.support.training_helpers import tiny_config
from training.__main__ import main
from training.model import checkpoint
from training.model.config import ConfigError, load_config
from training.model.networks import ActorCritic, Architecture
from training.rl import nfsp
from training.rl.distributed import RayCollector
from training.rl.ppo import Batch
from training.rl.rollout import LocalCollector
from training.rl.train import Trainer
from training.rl.vector_collect import VectorCollector

TINY_TABLE = {"variant": "classic", "options": "{preset: tiny}"}


# --- config ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (["algorithm=nfsp", "nfsp.anticipatory=1.5"], r"nfsp\.anticipatory must be in \[0, 1\], got 1\.5"),
        (["algorithm=nfsp", "nfsp.epsilon_end=-0.1"], r"nfsp\.epsilon_end must be in \[0, 1\]"),
        (["algorithm=nfsp", "nfsp.reservoir_size=0"], r"nfsp\.reservoir_size must be at least 1, got 0"),
        (["algorithm=nfsp", "nfsp.rl_learning_rate=0"], r"nfsp\.rl_learning_rate must be above 0"),
        (["algorithm=nfsp", "nfsp.min_memory=-1"], r"nfsp\.min_memory must be 0 or more"),
        (["nfsp.anticipatory=0.2"], r"the nfsp settings apply to algorithm=nfsp only.*algorithm is ppo"),
    ],
)
def test_nfsp_settings_are_validated(overrides: list[str], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(None, overrides)


def test_nfsp_is_refused_on_ray_workers_in_one_line_before_ray_is_asked_for() -> None:
    config = tiny_config(None, "algorithm=nfsp", **TINY_TABLE)
    with pytest.raises(ConfigError, match=r"^algorithm=nfsp collects on this machine only.*drop --ray$"):
        RayCollector(config, np.random.default_rng(0), workers=2)


# --- memories -------------------------------------------------------------------------------


def test_the_replay_keeps_the_newest_rows_in_a_circle() -> None:
    replay = nfsp.Replay(5)
    replay.add(x=np.arange(3))
    replay.add(x=np.arange(3, 7))
    assert replay.size == 5 and sorted(replay.columns["x"].tolist()) == [2, 3, 4, 5, 6]
    replay.add(x=np.arange(10, 22))  # more than fit at once: the newest 5
    assert sorted(replay.columns["x"].tolist()) == [17, 18, 19, 20, 21]
    drawn = replay.sample(200, np.random.default_rng(0))["x"]
    assert set(drawn.tolist()) == {17, 18, 19, 20, 21}


def test_the_reservoir_is_a_uniform_sample_of_everything_offered() -> None:
    """Offered 0..99 in uneven chunks into 10 slots, each row is kept with probability 1/10:
    counted over 4,000 reservoirs, each row's share is within 5 standard errors of 0.1, early
    and late rows alike (a memory of the newest rows would keep only 90..99)."""
    rng = np.random.default_rng(1)
    kept = np.zeros(100)
    trials = 4000
    for _ in range(trials):
        reservoir = nfsp.Reservoir(10)
        for chunk in np.split(np.arange(100), [3, 4, 30, 31, 64]):
            reservoir.offer(rng, x=chunk)
        assert reservoir.size == 10 and reservoir.seen == 100
        values = reservoir.columns["x"]
        assert len(set(values.tolist())) == 10  # no row twice
        kept[values] += 1
    share = kept / trials
    error = np.sqrt(0.1 * 0.9 / trials)
    assert np.all(np.abs(share - 0.1) < 5 * error), share
    reservoir = nfsp.Reservoir(4)
    reservoir.offer(rng, x=np.zeros(0, dtype=np.int64))  # nothing offered: nothing changes
    assert (reservoir.size, reservoir.seen) == (0, 0)


def test_the_reservoir_is_algorithm_r_one_row_at_a_time() -> None:
    """Fed the same draws (row ``n`` of the run, 1-based, draws a slot below ``n``), a batch
    offered at once keeps exactly the rows Vitter's algorithm R keeps offering one at a time."""
    rng = np.random.default_rng(3)
    reservoir, plain, seen = nfsp.Reservoir(7), [], 0
    for count in [2, 0, 4, 1, 9, 30, 3, 15, 40]:
        rows = np.arange(seen, seen + count)
        room = max(0, min(count, 7 - len(plain)))
        plain += rows[:room].tolist()
        draws = copy.deepcopy(rng).integers(seen + np.arange(room, count) + 1)  # (offer's own draws)
        for row, slot in zip(rows[room:].tolist(), draws.tolist(), strict=True):
            if slot < 7:
                plain[slot] = row
        reservoir.offer(rng, x=rows)
        seen += count
        assert reservoir.columns["x"][: len(plain)].tolist() == plain


# --- acting ---------------------------------------------------------------------------------


def test_best_response_rows_play_greedily_on_q_and_the_others_sample_the_average_policy() -> None:
    torch.manual_seed(0)
    architecture = Architecture(6, 5, hidden=[8])
    average, q = ActorCritic(architecture), ActorCritic(architecture)
    with torch.no_grad():  # Q prefers action 4 by far; the average policy plays 0 or 1 only
        q.policy.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 0.0, 50.0]))
        average.policy.bias.copy_(torch.tensor([50.0, 50.0, -50.0, -50.0, -50.0]))
    obs = np.zeros((400, 6), dtype=np.float32)
    masks = np.ones((400, 5), dtype=bool)
    modes = np.arange(400) % 2 == 0
    actions, logprobs, _ = nfsp.Player(average, q, epsilon=0.0).act(obs, masks, None, modes)
    assert set(actions[modes].tolist()) == {4} and np.allclose(logprobs[modes], 0.0)
    assert set(actions[~modes].tolist()) == {0, 1}


@pytest.mark.parametrize("collector", ["local", "vector"])
@pytest.mark.parametrize("anticipatory", [0.0, 0.5, 1.0])
def test_collectors_draw_each_seats_mode_per_game_and_the_batch_links_next_decisions(
    collector: str, anticipatory: float
) -> None:
    modes = [f"nfsp.anticipatory={anticipatory}", f"run.collector={collector}"]
    config = tiny_config(None, "algorithm=nfsp", *modes, **TINY_TABLE)
    trainer_rng = np.random.default_rng(3)
    games = (LocalCollector if collector == "local" else VectorCollector)(config, trainer_rng)
    model = ActorCritic(games.architecture)
    learner = nfsp.Learner(config, model, np.random.default_rng(4))
    batch, _ = games.collect(learner.player(model, 0), 64)
    assert batch.best_response is not None and batch.done is not None
    assert batch.next_obs is not None and batch.next_masks is not None and batch.rewards is not None
    share = float(batch.best_response.float().mean())
    if anticipatory in (0.0, 1.0):
        assert share == anticipatory
    else:
        assert 0.2 < share < 0.8
    done = batch.done.numpy()
    # after the episode's end: no next decision; else a real one with a legal action
    assert not batch.next_masks[done].any() and not batch.next_obs[done].any()
    assert batch.next_masks[~done].any(dim=1).all()
    # every reward arrives with the episode's end on this one-round table
    assert not batch.rewards[~done].any()
    assert games.modes is not None
    assert games.state_dict()["modes"].shape == (config.run.num_envs, 2)
    games.close()


def test_a_batch_of_another_algorithm_carries_no_nfsp_columns() -> None:
    config = tiny_config(None, **TINY_TABLE)
    games = LocalCollector(config, np.random.default_rng(0))
    batch, _ = games.collect(ActorCritic(games.architecture), 8)
    assert games.modes is None and batch.best_response is None and batch.next_obs is None


# --- learning -------------------------------------------------------------------------------


def test_one_dqn_step_moves_q_toward_reward_plus_the_best_next_q(tmp_path: Path) -> None:
    """The DQN target is r + max over the next decision's legal actions of the target copy's Q
    (0 after the episode's end): a few steps on one transition bring Q(s, a) to it."""
    config = tiny_config(
        tmp_path,
        "algorithm=nfsp",
        "nfsp.min_memory=1",
        "nfsp.batch_size=1",
        "nfsp.learn_every=1",
        "nfsp.rl_learning_rate=0.01",
        **TINY_TABLE,
    )
    torch.manual_seed(0)
    model = ActorCritic(Architecture(4, 3, hidden=[8]))
    learner = nfsp.Learner(config, model, np.random.default_rng(0))
    with torch.no_grad():  # the target copy values the next decision's actions 1, 5 and 9
        learner.q_target.policy.weight.zero_()
        learner.q_target.policy.bias.copy_(torch.tensor([1.0, 5.0, 9.0]))
    obs = torch.ones(1, 4)
    remember = {
        "obs": obs.numpy(),
        "masks": np.array([[True, True, False]]),
        "actions": np.array([1]),
        "rewards": np.array([0.5], dtype=np.float32),
        "next_obs": np.ones((1, 4), dtype=np.float32),
        "next_masks": np.array([[True, True, False]]),  # the best legal next action is worth 5, not 9
        "done": np.array([False]),
    }
    learner.replay.add(**remember)
    for _ in range(300):
        learner.update(model, torch.optim.Adam(model.parameters()), empty_batch(model))
    q = learner.q.legal(obs, torch.tensor([[True, True, False]]))[0].logit(torch.tensor([1]))
    assert q.item() == pytest.approx(5.5, abs=0.05)


def empty_batch(model: ActorCritic) -> Batch:
    """A rollout with one learner decision and no best-response play: it only triggers a step."""
    size = model.architecture.obs_size
    return Batch(
        obs=torch.ones(1, size),
        masks=torch.tensor([[True, True, False]]),
        actions=torch.tensor([1]),
        logprobs=torch.zeros(1),
        values=torch.zeros(1),
        advantages=torch.zeros(1),
        returns=torch.zeros(1),
        rewards=torch.tensor([0.5]),
        done=torch.tensor([False]),
        next_obs=torch.ones(1, size),
        next_masks=torch.tensor([[True, True, False]]),
        best_response=torch.tensor([False]),
    )


def test_a_short_nfsp_run_trains_both_networks_and_its_checkpoint_evaluates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overrides = ["algorithm=nfsp", "nfsp.min_memory=16", "nfsp.learn_every=8", "nfsp.anticipatory=0.5"]
    overrides += ["run.total_steps=256"]
    trainer = Trainer(tiny_config(tmp_path, *overrides, **TINY_TABLE))
    assert trainer.nfsp is not None
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    q_before = {k: v.clone() for k, v in trainer.nfsp.q.state_dict().items()}
    trainer.train(progress=False)
    assert any(not torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())
    assert any(not torch.equal(q_before[k], v) for k, v in trainer.nfsp.q.state_dict().items())
    assert trainer.nfsp.reservoir.size > 0 and trainer.nfsp.replay.size > trainer.nfsp.reservoir.size
    run = trainer.run_dir
    saved = checkpoint.load(run)
    assert saved["config"].algorithm == "nfsp"
    assert set(saved["nfsp"]) == {"q", "q_target", "q_optimizer", "q_steps"}
    assert main(["evaluate", str(run), "random", "--games", "4", "--no-progress"]) == 0
    capsys.readouterr()
    # a resume brings both networks back (the memories refill from play: the module docstring)
    resumed = Trainer(tiny_config(tmp_path, *overrides, "run.total_steps=320", **TINY_TABLE), resume=run)
    assert resumed.nfsp is not None and resumed.nfsp.q_steps == trainer.nfsp.q_steps > 0
    for ours, theirs in ((trainer.model, resumed.model), (trainer.nfsp.q, resumed.nfsp.q)):
        assert all(torch.equal(v, theirs.state_dict()[k]) for k, v in ours.state_dict().items())
    assert resumed.nfsp.replay.size == 0
    resumed.collector.close()
