"""Every training algorithm learns: on Classic's small table (13,630 information states, uniform
play 0.2686 from a Nash equilibrium) a short run of each ends well below uniform play's exact
NashConv. One seed each, seeded: the runs are deterministic on a machine, and the margins are
those of several seeds measured apart (docs/guides/algorithms.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from domino_env.gametree import GameTree
from training.eval.exploitability import Observed, network_policy, observe_all
from training.model.config import load_config
from training.rl.train import Trainer

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "classic_small.yaml"


@pytest.fixture(scope="module")
def small() -> tuple[GameTree, Observed]:
    tree = GameTree.build("classic", preset="small")
    return tree, observe_all(tree, progress=False)


# (algorithm, decisions): NFSP learns slowest per decision (it is known to: Heinrich and Silver)
BUDGETS = [("ppo", 20_480), ("mmd", 20_480), ("dmc", 20_480), ("nfsp", 102_400)]


@pytest.mark.parametrize(("algorithm", "decisions"), BUDGETS)
def test_a_short_run_ends_well_below_uniform_plays_nash_conv(
    tmp_path: Path, small: tuple[GameTree, Observed], algorithm: str, decisions: int
) -> None:
    tree, observed = small
    uniform = tree.nash_conv(tree.uniform())
    assert uniform == pytest.approx(0.26862, abs=1e-5)
    config = load_config(CONFIG, [f"algorithm={algorithm}", f"run.total_steps={decisions}"])
    config.run.out_dir = str(tmp_path)
    trainer = Trainer(config)
    trainer.train(progress=False)
    # dmc's network gives Q values: it plays (and is measured) by its greedy choice
    policy = network_policy(tree, trainer.model, observed, greedy=algorithm == "dmc")
    assert tree.nash_conv(policy) < 0.6 * uniform
