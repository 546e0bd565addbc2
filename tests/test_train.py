"""Learning: a short training run beats random and writes its run folder."""

from __future__ import annotations

import csv
from pathlib import Path

from domino_env import raw_env
from domino_env.agents import make_agent
from training.agents import PolicyAgent
from training.arena import head_to_head
from training.checkpoint import load_model
from training.config import load_config
from training.networks import ActorCritic
from training.train import Trainer


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
