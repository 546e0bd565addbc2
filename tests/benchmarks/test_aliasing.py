"""benchmarks/aliasing.py on the tiny table: the projection is a policy that gives each
information state its observation's mean distribution, and the script's row is the table's."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from domino_env.gametree import GameTree
from tests.support.helpers import load_script
from training.eval.exploitability import observe_all

aliasing = load_script("aliasing")


def test_the_projection_averages_each_observations_states_and_stays_a_policy() -> None:
    tree = GameTree.build("classic", preset="tiny")
    observed = observe_all(tree, progress=False)
    rng = np.random.default_rng(0)
    policy = tree.uniform() * rng.uniform(0.1, 1.0, len(tree.actions))
    policy /= np.add.reduceat(policy, tree.starts[:-1])[tree.pair_state]
    projection, observations = aliasing.projected(tree, observed, policy)
    tree.check_policy(projection)  # (a valid policy: each state's probabilities sum to 1)
    rows = np.concatenate([observed.obs, observed.mask], axis=1)
    assert observations == len(np.unique(rows, axis=0)) < tree.size.information_states
    # two states with one observation get one distribution; a state alone keeps its own
    key = {s: rows[k].tobytes() for k, s in enumerate(observed.ids.tolist())}
    states = list(key)
    for a in states:
        here = projection[tree.starts[a] : tree.starts[a + 1]]
        twins = [b for b in states if key[b] == key[a]]
        mean = np.mean([policy[tree.starts[b] : tree.starts[b + 1]] for b in twins], axis=0)
        assert np.allclose(here, mean)


def test_the_script_writes_a_row_per_preset(tmp_path: Path) -> None:
    out = tmp_path / "aliasing.csv"
    assert aliasing.main(["--preset", "tiny", "--iterations", "16", "--out", str(out)]) == 0
    (row,) = list(csv.DictReader(out.open()))
    assert (row["variant"], row["preset"], row["information_states"]) == ("classic", "tiny", "154")
    tree = GameTree.build("classic", preset="tiny")
    assert float(row["tabular_nash_conv"]) == pytest.approx(tree.nash_conv(tree.cfr_plus(16)[0]), abs=1e-12)
    assert 0 < int(row["observations"]) < 154
