"""Learning: a short training run beats greedy and writes its run folder, a short run on the batched
engine beats search; when a run evaluates."""

from __future__ import annotations

import csv
from pathlib import Path

from domino_env import raw_env
from domino_env.agents import make_agent
from tests.support.training_helpers import ROOT
from training.agents import PolicyAgent
from training.matches import play_match
from training.model.checkpoint import load_model
from training.model.config import load_config
from training.model.networks import ActorCritic
from training.rl.train import Trainer, evaluation_iterations


def test_short_training_run_beats_greedy_and_writes_its_run_folder(tmp_path: Path) -> None:
    """Classic, 2 players, trained on rounds with zero-sum points (~32k decisions, 10 seconds),
    measured on 400 rounds against ``greedy`` on duplicate deals: the trained policy wins most
    (0.68 when this test was written, untrained 0.48); the bar is its 95% interval's low end
    above one half and above the untrained policy's rate."""
    config = load_config(
        None,
        [
            "env.variant=classic",
            "env.options={num_players: 2, episode: round, reward: points}",
            "network.hidden=[64]",
            "run.total_steps=32768",
            "run.num_envs=16",
            "run.rollout_steps=64",
            "run.seed=1",
            "run.reward_scale=10.0",
            "run.checkpoint_every=16",
            "ppo.learning_rate=0.001",
            "ppo.gamma=1.0",
            "eval.every=1000",  # step 0, the log-spaced early iterations and the last
            "eval.games=10",
            "eval.opponents=[random]",
            "eval.episode=match",
        ],
    )
    config.run.out_dir = str(tmp_path)
    trainer = Trainer(config)

    def against_greedy(model: ActorCritic) -> tuple[float, float]:
        env = raw_env("classic", num_players=2, episode="round")
        match = play_match(
            env, PolicyAgent(model), make_agent("greedy", 0, env=env), games=400, seed=0, duplicate=True
        )
        return match.win_rate, match.interval()[0]

    trainer.model.eval()
    untrained, _ = against_greedy(trainer.model)

    final = trainer.train(progress=False)

    folder = tmp_path / config.run_name
    assert final == folder / "checkpoints" / "iter_00032.pt"
    names = {p.name for p in (folder / "checkpoints").iterdir()}
    assert names == {"iter_00016.pt", "iter_00032.pt", "latest.pt"}
    assert any((folder / "tb").iterdir())
    with (folder / "evaluations.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["iteration"] for r in rows] == ["0", "1", "4", "16", "32"]
    assert rows[0]["steps"] == "0" and rows[-1]["steps"] == "32768"
    assert all(0.0 <= float(r["win_rate_vs_random"]) <= 1.0 for r in rows)

    env = raw_env("classic", num_players=2)
    model, saved = load_model(folder / "checkpoints" / "latest.pt", env.encoder.size, env.rules.num_actions)
    assert saved == config
    trained, low = against_greedy(model)
    assert low > max(0.5, untrained), (
        f"trained policy won {trained:.1%} against greedy (untrained {untrained:.1%})"
    )


def test_a_short_run_on_the_batched_engine_beats_search(tmp_path: Path) -> None:
    """The shipped Classic config (match value, pool) on the batched engine for 10 updates of
    512 tables (327,680 decisions, about 16 seconds), then 200 whole matches on duplicate deals
    against ``search``: the policy wins more than half at the interval's low end (64.0% [57.5,
    70.5] with this seed when the test was written; seed 2: 58.5% [52.7, 64.3]), so the
    trainer learns past the search baseline, not only past ``greedy``."""
    config = load_config(
        str(ROOT / "agents" / "classic.yaml"),
        [
            "run.total_steps=327680",
            "run.num_envs=512",
            "run.seed=1",
            "run.collector=vector",
            "run.checkpoint_every=1000",
            "eval.every=0",
        ],
    )
    config.run.out_dir = str(tmp_path)
    trainer = Trainer(config)
    trainer.train(progress=False)
    env = raw_env("classic", num_players=2, episode="match")
    match = play_match(
        env, PolicyAgent(trainer.model), make_agent("search", 0, env=env), games=200, seed=0, duplicate=True
    )
    low, _ = match.interval()
    assert low > 0.5, f"the trained policy won {match.win_rate:.1%} of 200 matches against search"


def test_evaluations_start_at_step_0_and_are_log_spaced_before_the_first_period() -> None:
    assert evaluation_iterations(10, 35) == {0, 1, 4, 10, 20, 30, 35}
    assert evaluation_iterations(40, 100) == {0, 1, 4, 16, 40, 80, 100}
    assert evaluation_iterations(1, 3) == {0, 1, 2, 3}
    assert evaluation_iterations(100, 5) == {0, 1, 4, 5}
    assert evaluation_iterations(0, 35) == set()
