"""benchmarks/learning_curve.py: the log-spaced points, the exact untrained network, a row per
point and opponent, and a rerun that plays nothing again."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

from tests.support.helpers import load_script
from training.model.config import load_config
from training.rl.train import Trainer

learning_curve = load_script("learning_curve")
ROOT = Path(__file__).resolve().parents[2]


def test_the_points_are_10_times_powers_of_4_and_the_last(tmp_path: Path) -> None:
    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    for i in range(10, 700, 10):
        (folder / f"iter_{i:05d}.pt").touch()
    assert [p.name for p in learning_curve.curve_points(tmp_path / "run")] == [
        "iter_00010.pt",
        "iter_00040.pt",
        "iter_00160.pt",
        "iter_00640.pt",
        "iter_00690.pt",
    ]
    with pytest.raises(SystemExit, match="no checkpoints"):
        learning_curve.curve_points(tmp_path)


def test_a_curve_from_step_0_and_a_rerun_that_plays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(
        ROOT / "configs" / "classic_tiny.yaml",
        ["network.hidden=[16]", "run.num_envs=4", "run.rollout_steps=16", "run.checkpoint_every=1"],
    )
    config.run.total_steps, config.run.out_dir, config.run.name = 12 * 64, str(tmp_path), "tiny"
    trainer = Trainer(config)
    untrained = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.train(progress=False)

    zero = learning_curve.step_zero(tmp_path / "tiny", tmp_path)
    rebuilt = torch.load(zero, weights_only=False)["model"]
    assert all(torch.equal(rebuilt[k], untrained[k]) for k in untrained)

    early = tmp_path / "early.csv"  # some points only, while a run goes on
    argv = [str(tmp_path / "tiny"), "--opponents", "random", "--games", "2", "--final-games", "4"]
    assert learning_curve.main([*argv, "--iterations", "0", "10", "--csv", str(early)]) == 0
    with early.open(newline="") as handle:
        assert [(r["checkpoint"], r["games"]) for r in csv.DictReader(handle)] == [
            ("iter_00010", "2"),
            ("iter_00000", "2"),
        ]
    with pytest.raises(SystemExit, match="no checkpoint at iteration"):
        learning_curve.main([*argv, "--iterations", "13", "--csv", str(early)])

    table = tmp_path / "curve.csv"
    argv += ["--csv", str(table), "--plot", str(tmp_path / "curve.png")]
    assert learning_curve.main(argv) == 0
    with table.open(newline="") as handle:
        rows = {(r["checkpoint"], r["games"]): r for r in csv.DictReader(handle)}
    assert set(rows) == {("iter_00012", "4"), ("iter_00000", "2"), ("iter_00010", "2")}
    assert rows[("iter_00000", "2")]["decisions"] == "0"
    assert rows[("iter_00012", "4")]["decisions"] == str(12 * 64)
    for r in rows.values():
        assert 0 <= float(r["ci_low"]) <= float(r["win_rate"]) <= float(r["ci_high"]) <= 1
    assert (tmp_path / "curve.png").stat().st_size > 0

    before = table.read_text()

    def refuse(*args: object) -> None:
        raise AssertionError("a point was played again")

    monkeypatch.setattr(learning_curve, "play_point", refuse)
    assert learning_curve.main(argv) == 0
    assert table.read_text() == before
